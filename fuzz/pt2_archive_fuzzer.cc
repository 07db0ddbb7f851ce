// The .pt2 archive reader, from the zip container up: records, models, the manifest, the
// program JSON, AOTI metadata, the recorded tensors and the weights of every model.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "fuzz/fuzz_util.h"
#include "harness/program/program.h"
#include "harness/program/program_state.h"
#include "harness/archive/pt2_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader takes a path: an in-memory file, no disk.
  static const int fd = ::memfd_create("fuzz.pt2", 0);
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  aoti::Refusable([&] {
    auto archive = aoti::Pt2Archive::Open(path);
    for (const auto& model : archive->ModelNames()) {
      aoti::Refusable([&] { (void)aoti::Program::Parse(archive->ProgramJson(model), path); });
      aoti::Refusable([&] { (void)archive->AotiMetadata(model); });
      aoti::Refusable([&] { (void)aoti::LoadProgramState(*archive, model); });
    }
    if (archive->Manifest()) {
      aoti::Refusable([&] { (void)archive->SampleInputs(); });
      aoti::Refusable([&] { (void)archive->RecordedEagerOutputs(); });
    }
  });
  return 0;
}
