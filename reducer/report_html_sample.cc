#include "reducer/report_html_sample.h"

#include <ATen/ATen.h>

#include "harness/archive/pt2_archive.h"
#include "reducer/graph_edit.h"

namespace aoti {

ReduceResult SampleReductionForReport() {
  ReduceResult r;
  auto archive = Pt2Archive::Open(kSampleReportPackage);
  r.original = Program::Parse(archive->ProgramJson("model"), kSampleReportPackage);
  std::vector<bool> keep(r.original.nodes.size(), false);
  size_t culprit = 0;
  for (size_t i = 0; i < r.original.nodes.size(); ++i) {
    if (r.original.nodes[i].target.find("relu") != std::string::npos) {
      culprit = i;
      break;
    }
  }
  keep[culprit] = true;
  r.minimal = KeepNodes(r.original, keep, OutputMode::kLast);
  r.culprit = r.culprit_path = r.original.nodes[culprit].name;
  r.failure_class = "accuracy";
  r.message = "model: 1 of 1 outputs differ from eager under fp64 accuracy <script>alert(1)</script>\n"
              "  output 0 'relu' (float32[8, 32]): 32 / 256 elements differ";
  r.inductor_configs_json = "{\"cpp.inject_relu_bug_TESTING_ONLY\": \"accuracy\"}";
  r.nodes_before = r.original.nodes.size();
  r.nodes_after = r.minimal.nodes.size();
  r.compiles = 2;
  r.runs = 4;
  r.seconds = 41.5;
  r.compile_seconds = 20.25;
  r.final_recheck_failed_again = true;
  r.log = {{"localize_first", "node '" + r.culprit + "' diverges on its own inputs", r.nodes_before, 1, 1, 30.0,
            r.culprit}};
  // An [8, 32] output: the compiled model drifts in row 5 only, eager is off by rounding.
  at::manual_seed(0);
  const at::Tensor fp64 = at::randn({8, 32}, at::kDouble);
  const at::Tensor eager = (fp64 + at::randn({8, 32}, at::kDouble) * 1e-7).to(at::kFloat);
  at::Tensor compiled = eager.clone();
  compiled.select(0, 5).add_(1.0);
  r.error_profiles.push_back(MakeErrorProfile("the original", "relu", 0, compiled, eager, fp64));
  r.error_profiles.push_back(MakeErrorProfile("the repro", "relu", 0, compiled, eager, fp64, 64));
  return r;
}

}  // namespace aoti
