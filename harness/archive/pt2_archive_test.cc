// Pt2Archive and CompiledModel on real packages and on broken files: every bad input
// is a HarnessError whose message names the file and what was expected.
#include "harness/archive/pt2_archive.h"

#include <cstdio>
#include <fstream>
#include <iterator>

#include <ATen/TensorOperators.h>
#include <ATen/ops/zeros.h>
#include <caffe2/serialize/inline_container.h>
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/runner/compiled_model.h"
#include "harness/util/errors.h"
#include "harness/program/program_signature.h"

DEFINE_string(compiled, "", "a compiled mlp package");
DEFINE_string(export_only, "", "an export-only mlp package");
DEFINE_string(compile_error, "", "an mlp package whose AOTI compile failed");

namespace aoti {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TmpPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

// OpenError returns the HarnessError message of opening `path`, or fails the test.
std::string OpenError(const std::string& path) {
  try {
    Pt2Archive::Open(path);
  } catch (const HarnessError& e) {
    return e.what();
  }
  ADD_FAILURE() << "opening " << path << " did not throw";
  return "";
}

// WriteZip writes a pt2-style zip archive holding `records`.
void WriteZip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& records) {
  caffe2::serialize::PyTorchStreamWriter writer(path);
  for (const auto& [name, data] : records) writer.writeRecord(name, data.data(), data.size());
  writer.writeEndOfFile();
}

TEST(Pt2ArchiveErrors, MissingFile) {
  const std::string path = TmpPath("does_not_exist.pt2");
  EXPECT_THAT(OpenError(path), AllOf(HasSubstr(path), HasSubstr("no such file")));
}

TEST(Pt2ArchiveErrors, Directory) {
  const std::string path = TmpPath("");
  EXPECT_THAT(OpenError(path), AllOf(HasSubstr(path), HasSubstr("not a regular file")));
}

TEST(Pt2ArchiveErrors, EmptyFile) {
  const std::string path = TmpPath("empty.pt2");
  WriteFile(path, "");
  EXPECT_THAT(OpenError(path), AllOf(HasSubstr(path), HasSubstr("empty file")));
}

TEST(Pt2ArchiveErrors, NotAZip) {
  const std::string path = TmpPath("not_a_zip.pt2");
  WriteFile(path, "def make_model(): pass\n");
  EXPECT_THAT(OpenError(path), AllOf(HasSubstr(path), HasSubstr("not a zip archive")));
}

TEST(Pt2ArchiveErrors, Truncated) {
  const std::string data = ReadFile(FLAGS_compiled);
  ASSERT_GT(data.size(), 1000u);
  for (size_t keep : {data.size() / 2, data.size() - 10}) {
    SCOPED_TRACE("kept " + std::to_string(keep) + " of " + std::to_string(data.size()) + " bytes");
    const std::string path = TmpPath("truncated.pt2");
    WriteFile(path, data.substr(0, keep));
    EXPECT_THAT(OpenError(path), AllOf(HasSubstr(path), HasSubstr("truncated or corrupt")));
  }
}

TEST(Pt2ArchiveErrors, WrongArchiveFormat) {
  const std::string path = TmpPath("wrong_format.pt2");
  WriteZip(path, {{"archive_format", "torchscript"}});
  EXPECT_THAT(OpenError(path), AllOf(HasSubstr(path), HasSubstr("expected 'pt2'")));
}

TEST(Pt2ArchiveErrors, ModelNotInArchive) {
  auto archive = Pt2Archive::Open(FLAGS_compiled);
  try {
    archive->RequireModel("resnet");
    FAIL() << "RequireModel(\"resnet\") did not throw";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(FLAGS_compiled), HasSubstr("no model 'resnet'"),
                                HasSubstr("models: 'model'")));
  }
}

TEST(Pt2ArchiveErrors, EmptyArchiveHasNoModels) {
  const std::string path = TmpPath("no_models.pt2");
  WriteZip(path, {{"archive_format", "pt2"}});
  auto archive = Pt2Archive::Open(path);
  EXPECT_TRUE(archive->ModelNames().empty());
  try {
    CompiledModel::Load(*archive, "model");
    FAIL() << "loading from an archive without models did not throw";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("no models at all")));
  }
}

TEST(Pt2ArchiveErrors, ProgramWithoutCompiledModel) {
  const std::string path = TmpPath("program_only.pt2");
  WriteZip(path, {{"archive_format", "pt2"}, {"models/model.json", "{}"}});
  auto archive = Pt2Archive::Open(path);
  try {
    CompiledModel::Load(*archive, "model");
    FAIL() << "loading a program-only archive did not throw";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("has no compiled model"),
                                HasSubstr("data/aotinductor/model/")));
  }
}

TEST(Pt2ArchiveErrors, ExportOnlyPackageSaysSo) {
  auto archive = Pt2Archive::Open(FLAGS_export_only);
  EXPECT_TRUE(archive->HasProgram("model"));
  EXPECT_FALSE(archive->HasCompiledModel("model"));
  try {
    CompiledModel::Load(*archive, "model");
    FAIL() << "loading an export-only package did not throw";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(FLAGS_export_only), HasSubstr("export_only")));
  }
}

TEST(Pt2ArchiveErrors, CompileErrorIsReportedWithTheCompilersError) {
  auto archive = Pt2Archive::Open(FLAGS_compile_error);
  ASSERT_TRUE(archive->Manifest().has_value());
  EXPECT_EQ(archive->Manifest()->compile.status, "error");
  try {
    CompiledModel::Load(*archive, "model");
    FAIL() << "loading a package whose compile failed did not throw";
  } catch (const AotiCompileError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("AOTI compile failed"), HasSubstr("error:"),
                                HasSubstr("compile error!")));
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("no such file")));
  }
  // The program and inputs are still there for the reducer.
  EXPECT_TRUE(archive->HasProgram("model"));
  EXPECT_EQ(archive->SampleInputs().size(), 1u);
}

TEST(Pt2ArchiveErrors, CorruptManifest) {
  const std::string path = TmpPath("bad_manifest.pt2");
  WriteZip(path, {{"archive_format", "pt2"}, {"extra/aoti_harness/package.json", "{not json"}});
  EXPECT_THAT(OpenError(path), AllOf(HasSubstr(path), HasSubstr("not valid JSON")));
}

TEST(Pt2ArchiveErrors, SchemaVersionFromTheFuture) {
  try {
    ParseProgramSignature(R"({"schema_version": {"major": 99, "minor": 0}})", "future.pt2");
    FAIL() << "schema 99.0 was accepted";
  } catch (const HarnessError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("future.pt2"), HasSubstr("99.0 is not supported")));
  }
}

TEST(Pt2Archive, ReadsACompiledPackage) {
  auto archive = Pt2Archive::Open(FLAGS_compiled);
  EXPECT_THAT(archive->ModelNames(), ElementsAre("model"));
  EXPECT_THAT(archive->Records(), Contains("models/model.json"));
  EXPECT_THAT(archive->Records(), Contains("data/sample_inputs/model.pt"));
  const auto metadata = archive->AotiMetadata("model");
  ASSERT_TRUE(metadata.count("AOTI_DEVICE_KEY"));
  EXPECT_EQ(metadata.at("AOTI_DEVICE_KEY"), "cpu");
  EXPECT_TRUE(metadata.count("AOTI_CPU_ISA"));
  const auto& manifest = *archive->Manifest();
  EXPECT_EQ(manifest.compile.status, "ok");
  EXPECT_EQ(manifest.torch_version.substr(0, 6), "2.13.0");
  const auto inputs = archive->SampleInputs();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].sizes(), (std::vector<int64_t>{8, 32}));
  EXPECT_EQ(inputs[0].scalar_type(), c10::ScalarType::Float);

  const auto sig = ParseProgramSignature(archive->ProgramJson("model"), archive->path());
  EXPECT_EQ(sig.schema_version.major, kSupportedSchemaMajor);
  ASSERT_EQ(sig.user_inputs.size(), 1u);
  EXPECT_EQ(sig.user_inputs[0].name, "x");
  EXPECT_EQ(sig.user_inputs[0].dtype, c10::ScalarType::Float);
  ASSERT_EQ(sig.user_inputs[0].sizes.size(), 2u);
  EXPECT_EQ(sig.user_inputs[0].sizes[1].size, 32);
  EXPECT_THAT(sig.parameters, ElementsAre("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
                                          "fc3.weight", "fc3.bias"));
  EXPECT_THAT(sig.user_outputs, ElementsAre("log_softmax"));
}

TEST(CompiledModel, RunsAndMatchesRecordedEager) {
  auto archive = Pt2Archive::Open(FLAGS_compiled);
  auto model = CompiledModel::Load(*archive, "model");
  EXPECT_EQ(model->metadata().at("AOTI_DEVICE_KEY"), "cpu");
  const auto out = model->Run(archive->SampleInputs());
  const auto eager = archive->RecordedEagerOutputs();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(eager.size(), 1u);
  EXPECT_EQ(out[0].sizes(), (std::vector<int64_t>{8, 10}));
  EXPECT_LT((out[0] - eager[0]).abs().max().item<double>(), 1e-4);
}

TEST(CompiledModel, WrongInputShapeIsARunErrorNotACrash) {
  auto archive = Pt2Archive::Open(FLAGS_compiled);
  auto model = CompiledModel::Load(*archive, "model");
  try {
    model->Run({at::zeros({3, 5})});
    FAIL() << "running on a [3, 5] input instead of [8, 32] did not throw";
  } catch (const AotiRunError& e) {
    // The C ABI reports a generic failure; the generated code's stderr names the call.
    EXPECT_THAT(e.what(), AllOf(HasSubstr(FLAGS_compiled), HasSubstr("the compiled model raised")));
    EXPECT_THAT(e.stderr_text(), HasSubstr("API call failed"));
  }
}

}  // namespace
}  // namespace aoti
