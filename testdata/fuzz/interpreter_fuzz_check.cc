// interpreter_fuzz_check: the C++ interpreter against Python, bit for bit, on the random
// programs gen_programs.py writes.
//
//   interpreter_fuzz_check --dir DIR [--keep_failures DIR]
//
// For each DIR/pNNNN.pt2 it runs the program with the interpreter on the package's
// recorded inputs and compares every output with DIR/pNNNN.expected (the exported program
// run by Python): dtype, sizes and every byte of the values (so NaN payloads and signed
// zeros count). An interpreter error counts as a mismatch. It prints one line per
// mismatch (with the model file, its own repro), a table of the operators it ran, and a
// summary; exit status 1 when any program mismatches.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include "harness/util/errors.h"
#include "harness/program/interpreter.h"
#include "harness/util/logging.h"
#include "harness/program/program.h"
#include "harness/archive/pt2_archive.h"
#include "harness/archive/tensor_bundle.h"
#include "harness/archive/tensor_io.h"

DEFINE_string(dir, "", "Directory written by gen_programs.py (pNNNN.pt2 and pNNNN.expected/).");
DEFINE_string(keep_failures, "", "Copy the model file of each mismatching program here.");
DEFINE_string(dump_values, "",
              "Write every tensor value each program produces to DIR/<program>/ (a tensor bundle, with "
              "names.json giving each value's graph name), to find the first node that differs.");

namespace fs = std::filesystem;

namespace {

std::string Bytes(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

// Why `got` is not bit-identical to `want`, or "" when it is.
std::string Difference(const at::Tensor& got, const at::Tensor& want) {
  if (got.scalar_type() != want.scalar_type() || got.sizes() != want.sizes()) {
    return "got " + aoti::DescribeTensor(got) + ", expected " + aoti::DescribeTensor(want);
  }
  if (Bytes(got) == Bytes(want)) return "";
  // Where they differ: the first differing element, as values and as bits.
  const at::Tensor g = got.contiguous().reshape(-1), w = want.contiguous().reshape(-1);
  const std::string gb = Bytes(g), wb = Bytes(w);
  const size_t width = g.element_size();
  int64_t differing = 0, first = -1;
  for (int64_t i = 0; i < g.numel(); ++i) {
    if (std::memcmp(gb.data() + i * width, wb.data() + i * width, width) != 0) {
      ++differing;
      if (first < 0) first = i;
    }
  }
  std::ostringstream os;
  os << differing << " of " << g.numel() << " elements differ; first at flat index " << first << ": got "
     << g[first].item() << ", expected " << w[first].item() << " (bits";
  for (const std::string* b : {&gb, &wb}) {
    os << " 0x";
    for (size_t j = width; j-- > 0;) {
      os << std::hex << std::setw(2) << std::setfill('0')
         << static_cast<int>(static_cast<unsigned char>((*b)[first * width + j]));
    }
    os << std::dec;
  }
  os << ")";
  return os.str();
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage("interpreter_fuzz_check --dir DIR: the interpreter against Python on fuzz programs");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  aoti::InitLogging(argv[0], FLAGS_v);
  if (FLAGS_dir.empty() || !fs::is_directory(FLAGS_dir)) {
    std::cerr << "--dir '" << FLAGS_dir << "': expected the directory gen_programs.py wrote\n";
    return 2;
  }
  at::set_num_threads(1);  // as gen_programs.py ran Python: reductions split the same way

  std::vector<fs::path> programs;
  for (const auto& entry : fs::directory_iterator(FLAGS_dir)) {
    if (entry.path().extension() == ".pt2") programs.push_back(entry.path());
  }
  std::sort(programs.begin(), programs.end());
  if (programs.empty()) {
    std::cerr << FLAGS_dir << ": holds no .pt2 programs\n";
    return 2;
  }

  std::map<std::string, int> op_counts;
  int mismatches = 0, nodes = 0, outputs = 0;
  for (size_t k = 0; k < programs.size(); ++k) {
    const fs::path& pt2 = programs[k];
    const std::string stem = pt2.stem().string();
    const fs::path model_file = pt2.parent_path() / (stem + ".py");
    std::string failure;
    try {
      auto archive = aoti::Pt2Archive::Open(pt2.string());
      const aoti::Program program = aoti::Program::Parse(archive->ProgramJson("model"), pt2.string());
      for (const auto& n : program.nodes) ++op_counts[n.target];
      nodes += static_cast<int>(program.nodes.size());
      auto interp = aoti::Interpreter::FromArchive(*archive, "model");
      std::vector<at::Tensor> got;
      if (FLAGS_dump_values.empty()) {
        got = interp->RunTensors(archive->SampleInputs());
      } else {
        std::vector<at::Tensor> values;
        nlohmann::json names = nlohmann::json::array();
        aoti::RunOptions run;
        run.observer = [&](const aoti::Node&, const std::string& name, const c10::IValue& v) {
          if (!v.isTensor()) return;
          values.push_back(aoti::CopyOf(v.toTensor()));
          names.push_back(name);
        };
        for (const auto& [fqn, t] : interp->state().weights) {
          values.push_back(aoti::CopyOf(t));
          names.push_back("state:" + fqn);
        }
        for (const auto& v : interp->Run(archive->SampleInputs(), run).outputs) got.push_back(v.toTensor());
        const fs::path dump = fs::path(FLAGS_dump_values) / stem;
        fs::create_directories(dump);
        aoti::WriteTensorBundle(dump.string(), values);
        aoti::WriteTextFile((dump / "names.json").string(), names.dump());
      }
      const auto want = aoti::ReadTensorBundle((pt2.parent_path() / (stem + ".expected")).string());
      outputs += static_cast<int>(want.size());
      if (got.size() != want.size()) {
        failure = std::to_string(got.size()) + " outputs, expected " + std::to_string(want.size());
      }
      for (size_t i = 0; failure.empty() && i < got.size(); ++i) {
        const std::string d = Difference(got[i], want[i]);
        if (!d.empty()) failure = "output " + std::to_string(i) + ": " + d;
      }
    } catch (const aoti::HarnessError& e) {
      failure = std::string("interpreter error: ") + e.what();
    } catch (const c10::Error& e) {
      failure = std::string("operator error: ") + e.what_without_backtrace();
    }
    if (!failure.empty()) {
      ++mismatches;
      std::cout << "MISMATCH " << model_file.string() << ": " << failure << "\n";
      if (!FLAGS_keep_failures.empty()) {
        std::error_code ec;
        fs::create_directories(FLAGS_keep_failures, ec);
        fs::copy_file(model_file, fs::path(FLAGS_keep_failures) / model_file.filename(),
                      fs::copy_options::overwrite_existing, ec);
      }
    }
    if ((k + 1) % 100 == 0) LOG(INFO) << (k + 1) << "/" << programs.size() << " programs checked";
  }

  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [op, n] : op_counts) by_count.emplace_back(n, op);
  std::sort(by_count.rbegin(), by_count.rend());
  std::cout << "\noperators run (" << op_counts.size() << " distinct):\n";
  for (const auto& [n, op] : by_count) std::cout << "  " << std::setw(6) << n << "  " << op << "\n";
  std::cout << "\nfuzz: " << programs.size() << " programs, " << nodes << " nodes, " << outputs
            << " outputs compared bit for bit, " << mismatches << " mismatches\n";
  return mismatches ? 1 : 0;
}
