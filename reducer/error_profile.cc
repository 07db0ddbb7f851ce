#include "reducer/error_profile.h"

#include <algorithm>
#include <cmath>

#include <ATen/ATen.h>

namespace aoti {

ErrorProfile MakeErrorProfile(const std::string& where, const std::string& output, size_t index,
                              const at::Tensor& compiled, const at::Tensor& eager, const at::Tensor& fp64,
                              size_t max_points) {
  ErrorProfile p;
  p.where = where;
  p.output = output;
  p.output_index = index;
  p.sizes = compiled.sizes().vec();
  p.numel = compiled.numel();
  p.against_fp64 = fp64.defined();
  const at::Tensor reference = (fp64.defined() ? fp64 : eager).detach().to(at::kCPU, at::kDouble).reshape({-1});
  const at::Tensor c = (compiled.detach().to(at::kCPU, at::kDouble).reshape({-1}) - reference).contiguous();
  const at::Tensor e = (eager.detach().to(at::kCPU, at::kDouble).reshape({-1}) - reference).contiguous();
  const double* cd = c.data_ptr<double>();
  const double* ed = e.data_ptr<double>();
  const int64_t n = c.numel();
  max_points = std::max<size_t>(1, max_points);
  p.bucket = std::max<int64_t>(1, (n + static_cast<int64_t>(max_points) - 1) / static_cast<int64_t>(max_points));
  // The largest |error| of a bucket, with its sign; NaN wins (it is the worst there is).
  auto worst = [](double best, double v) {
    if (std::isnan(best)) return best;
    if (std::isnan(v) || std::fabs(v) > std::fabs(best)) return v;
    return best;
  };
  for (int64_t start = 0; start < n; start += p.bucket) {
    double cw = 0, ew = 0;
    for (int64_t i = start; i < std::min(n, start + p.bucket); ++i) {
      cw = worst(cw, cd[i]);
      ew = worst(ew, ed[i]);
    }
    p.compiled_error.push_back(cw);
    p.eager_error.push_back(ew);
    if (!std::isnan(cw)) p.max_compiled_error = std::max(p.max_compiled_error, std::fabs(cw));
    if (!std::isnan(ew)) p.max_eager_error = std::max(p.max_eager_error, std::fabs(ew));
  }
  return p;
}

std::optional<ErrorProfile> ProfileFirstFailure(const std::string& where, const CheckReport& report,
                                                const std::vector<std::string>& output_names) {
  const auto& compiled = report.outcome.outputs;
  for (size_t i = 0; i < report.comparisons.size(); ++i) {
    if (report.comparisons[i].pass) continue;
    if (i >= compiled.size() || i >= report.eager_outputs.size()) break;
    const at::Tensor& got = compiled[i];
    const at::Tensor& eager = report.eager_outputs[i];
    if (!got.defined() || !eager.defined() || !got.is_floating_point() || got.sizes() != eager.sizes()) continue;
    const at::Tensor fp64 = i < report.fp64_outputs.size() ? report.fp64_outputs[i] : at::Tensor();
    return MakeErrorProfile(where, i < output_names.size() ? output_names[i] : "output " + std::to_string(i), i, got,
                            eager, fp64.defined() && fp64.sizes() == got.sizes() ? fp64 : at::Tensor());
  }
  return std::nullopt;
}

}  // namespace aoti
