// localize_first_bench: the cost of localize_first's float64 references, before and after
// the weights are promoted once. For each program archive on the command line, every node
// of the program alone (KeepNodes, as localize_first cuts it) is run by the interpreter in
// float64 on the values eager computed for its inputs, twice over the program:
//   per node: each fp64 Interpreter promotes the whole model's weights itself (before);
//   once:     the weights are promoted once (PromoteStateToFp64) and shared (after).
// Prints one line per program: nodes judged, the model's weights in MB, seconds per node
// each way and their ratio. Both ways run here, one after the other, on the same inputs.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "harness/util/errors.h"
#include "harness/program/interpreter.h"
#include "harness/program/program_state.h"
#include "harness/archive/pt2_archive.h"
#include "reducer/graph_edit.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

}  // namespace

int main(int argc, char** argv) {
  int status = 0;
  std::printf("| program | nodes | weights (MB) | fp64 reference per node, promoting per node (ms) | promoting once (ms) | ratio |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (int a = 1; a < argc; ++a) {
    const std::string path = argv[a];
    try {
      auto archive = aoti::Pt2Archive::Open(path);
      const std::string model = archive->ResolveModelName("");
      const aoti::Program program = aoti::Program::Parse(archive->ProgramJson(model), path);
      const aoti::ProgramState weights = aoti::LoadProgramState(*archive, model);
      double mb = 0;
      for (const auto& [name, t] : weights.weights) mb += t.numel() * t.element_size() / 1e6;
      for (const auto& [name, t] : weights.constants) mb += t.numel() * t.element_size() / 1e6;
      // Every value eager computes, by name (as the reducer keeps them).
      std::map<std::string, at::Tensor> values;
      const auto inputs = archive->SampleInputs();
      const auto names = aoti::UserInputNames(program);
      for (size_t i = 0; i < names.size() && i < inputs.size(); ++i) values[names[i]] = inputs[i];
      aoti::RunOptions keep;
      keep.observer = [&](const aoti::Node&, const std::string& name, const c10::IValue& v) {
        if (v.isTensor()) values[name] = v.toTensor();
      };
      aoti::Interpreter(program, weights).Run(inputs, keep);
      // Each node alone, with its inputs.
      std::vector<std::pair<aoti::Program, std::vector<at::Tensor>>> alone;
      for (size_t i = 0; i < program.nodes.size(); ++i) {
        std::vector<bool> only(program.nodes.size(), false);
        only[i] = true;
        aoti::Program p;
        try {
          p = aoti::KeepNodes(program, only, aoti::OutputMode::kLast);
        } catch (const std::exception&) {
          continue;
        }
        if (p.output_specs.empty()) continue;
        std::vector<at::Tensor> in;
        bool all = true;
        for (const auto& n : aoti::UserInputNames(p)) {
          auto it = values.find(n);
          if (it == values.end()) { all = false; break; }
          in.push_back(it->second);
        }
        if (all) alone.emplace_back(std::move(p), std::move(in));
      }
      aoti::InterpreterOptions o64;
      o64.fp64 = true;
      auto run_all = [&](const aoti::ProgramState* shared) {
        const auto start = Clock::now();
        const aoti::ProgramState promoted = shared ? aoti::PromoteStateToFp64(*shared) : aoti::ProgramState{};
        size_t ran = 0;
        for (const auto& [p, in] : alone) {
          try {
            aoti::Interpreter(p, shared ? promoted : weights, o64).RunTensors(in);
            ++ran;
          } catch (const aoti::HarnessError&) {
          }
        }
        return std::make_pair(Seconds(start), ran);
      };
      const auto [before, ran_before] = run_all(nullptr);
      const auto [after, ran_after] = run_all(&weights);
      if (ran_before != ran_after) throw aoti::HarnessError("the two ways ran different nodes");
      const std::string name = path.substr(path.find_last_of('/') + 1);
      std::printf("| %s | %zu | %.1f | %.2f | %.2f | %.1fx |\n", name.c_str(), ran_before, mb,
                  1e3 * before / std::max<size_t>(ran_before, 1), 1e3 * after / std::max<size_t>(ran_after, 1),
                  before / std::max(after, 1e-9));
    } catch (const std::exception& e) {
      std::cerr << path << ": " << e.what() << "\n";
      status = 1;
    }
  }
  return status;
}
