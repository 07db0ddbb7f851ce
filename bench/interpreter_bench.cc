// interpreter_bench: time the C++ interpreter on each program archive given on the
// command line; prints "name<TAB>microseconds per run<TAB>runs" per program.
// bench/interpreter_vs_eager.sh runs it beside Python eager on the corpus.
#include <chrono>
#include <iostream>
#include <string>

#include "harness/util/errors.h"
#include "harness/program/interpreter.h"
#include "harness/archive/pt2_archive.h"

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string path = argv[i];
    std::string name = path.substr(path.find_last_of('/') + 1);
    name = name.substr(0, name.size() - 4);
    try {
      auto archive = aoti::Pt2Archive::Open(path);
      auto interp = aoti::Interpreter::FromArchive(*archive, "model");
      const auto inputs = archive->SampleInputs();
      for (int w = 0; w < 3; ++w) interp->Run(inputs);
      int runs = 0;
      const auto start = Clock::now();
      double elapsed = 0;
      while (elapsed < 0.3 || runs < 20) {
        interp->Run(inputs);
        ++runs;
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      }
      std::cout << name << "\t" << elapsed / runs * 1e6 << "\t" << runs << "\n";
    } catch (const aoti::HarnessError& e) {
      std::cerr << name << ": " << e.what() << "\n";
      status = 1;
    }
  }
  return status;
}
