#include "harness/dynamic_shapes.h"

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "harness/errors.h"

namespace aoti {
namespace {

// A symbol without an upper bound (torch.export's int_oo) is taken up to this many times
// its sample size.
constexpr int64_t kUnboundedFactor = 2;
constexpr int64_t kUnbounded = int64_t{1} << 40;

bool IsSymbolName(const std::string& s) {
  static const std::regex name(R"([A-Za-z_][A-Za-z0-9_]*)");
  return std::regex_match(s, name);
}

std::vector<std::vector<int64_t>> SizesAt(const ProgramSignature& sig, const std::map<std::string, int64_t>& symbols) {
  std::vector<std::vector<int64_t>> sizes;
  for (const auto& in : sig.user_inputs) {
    std::vector<int64_t> dims;
    for (const auto& d : in.sizes) dims.push_back(d.is_symbolic() ? symbols.at(d.sym) : d.size);
    sizes.push_back(dims);
  }
  return sizes;
}

// Distinct: each symbol a size no other symbol has, as near its sample size as its range
// allows; false when the ranges leave no such choice.
bool Distinct(const std::map<std::string, std::pair<int64_t, int64_t>>& ranges,
              const std::map<std::string, int64_t>& sample, std::map<std::string, int64_t>* out) {
  std::set<int64_t> used;
  for (const auto& [sym, range] : ranges) {
    int64_t pick = -1;
    for (int64_t step = 0; pick < 0 && step <= range.second - range.first; ++step) {
      for (int64_t v : {sample.at(sym) + step, sample.at(sym) - step}) {
        if (v >= range.first && v <= range.second && !used.count(v)) {
          pick = v;
          break;
        }
      }
    }
    if (pick < 0) return false;
    used.insert(pick);
    (*out)[sym] = pick;
  }
  return true;
}

}  // namespace

std::vector<ShapePoint> ShapePoints(const Program& program, const std::vector<at::Tensor>& sample) {
  const ProgramSignature sig = program.Signature();
  std::map<std::string, int64_t> at_sample;
  for (size_t i = 0; i < sig.user_inputs.size() && i < sample.size(); ++i) {
    const auto& in = sig.user_inputs[i];
    for (size_t d = 0; d < in.sizes.size(); ++d) {
      if (!in.sizes[d].is_symbolic()) continue;
      if (!IsSymbolName(in.sizes[d].sym)) {
        throw HarnessError("input " + std::to_string(i) + " '" + in.name + "' dim " + std::to_string(d) + " is " +
                           in.sizes[d].sym + ", an expression of symbols; the dynamic shapes to check are not "
                           "planned for it (list them with aoti_model_test's shapes)");
      }
      if (d < static_cast<size_t>(sample[i].dim())) at_sample.emplace(in.sizes[d].sym, sample[i].size(d));
    }
  }
  if (at_sample.empty()) return {};
  std::map<std::string, std::pair<int64_t, int64_t>> ranges;
  for (const auto& [sym, value] : at_sample) {
    int64_t lo = 1, hi = kUnbounded;
    if (auto it = program.range_constraints.find(sym); it != program.range_constraints.end()) {
      lo = std::max<int64_t>(it->second.min, 1);
      hi = it->second.max;
    }
    if (hi >= kUnbounded) hi = std::max(value * kUnboundedFactor, lo + 1);
    ranges[sym] = {lo, std::max(hi, lo)};
  }
  std::vector<ShapePoint> points;
  std::set<std::map<std::string, int64_t>> seen = {at_sample};  // the sample is checked already
  auto add = [&](const std::string& name, const std::map<std::string, int64_t>& symbols) {
    if (!seen.insert(symbols).second) return;
    points.push_back({name, symbols, SizesAt(sig, symbols)});
  };
  std::map<std::string, int64_t> lo, hi, distinct;
  for (const auto& [sym, range] : ranges) {
    lo[sym] = range.first;
    hi[sym] = range.second;
  }
  add("min", lo);
  add("max", hi);
  if (ranges.size() > 1 && Distinct(ranges, at_sample, &distinct)) add("distinct", distinct);
  return points;
}

std::vector<ShapePoint> ParseShapes(const std::string& text, size_t inputs) {
  std::vector<ShapePoint> out;
  std::set<std::string> names;
  std::stringstream entries(text);
  for (std::string entry; std::getline(entries, entry, ',');) {
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    const std::string name = entry.substr(0, eq);
    static const std::regex valid(R"([A-Za-z0-9_]+)");
    if (eq == std::string::npos || !std::regex_match(name, valid) || !names.insert(name).second) {
      throw HarnessError("shape '" + entry + "': expected NAME=SIZES with a unique NAME of letters, digits and '_' "
                         "(e.g. long=2x64/2x64)");
    }
    ShapePoint p;
    p.name = name;
    std::stringstream per_input(entry.substr(eq + 1) + "/");  // a trailing '/' keeps an empty last input
    std::string sizes;
    while (std::getline(per_input, sizes, '/')) {
      std::vector<int64_t> dims;
      std::stringstream ds(sizes);
      for (std::string d; std::getline(ds, d, 'x');) {
        try {
          size_t used = 0;
          const long long v = std::stoll(d, &used);
          if (used != d.size() || v < 0) throw std::invalid_argument(d);
          dims.push_back(v);
        } catch (const std::exception&) {
          throw HarnessError("shape '" + name + "': '" + sizes + "' is not sizes like 2x64");
        }
      }
      p.sizes.push_back(dims);
    }
    if (p.sizes.size() != inputs) {
      throw HarnessError("shape '" + name + "' gives " + std::to_string(p.sizes.size()) + " inputs' sizes; the "
                         "program takes " + std::to_string(inputs) + " (separate them with '/')");
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<at::Tensor> InputsAt(const ShapePoint& point, const std::vector<at::Tensor>& sample, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < sample.size() && i < point.sizes.size(); ++i) {
    const at::Tensor s = sample[i].detach().cpu();
    const auto sizes = point.sizes[i];
    at::Tensor t;
    if (s.numel() == 0) {
      t = at::zeros(sizes, s.options().device(at::kCPU));
    } else if (s.scalar_type() == at::kBool) {
      const double p = s.to(at::kDouble).mean().item<double>();
      t = at::empty(sizes, at::kDouble).bernoulli_(p, gen).to(at::kBool);
    } else if (s.is_floating_point() || s.is_complex()) {
      // Within the range the sample's values span, in the sample's dtype.
      const at::Tensor real = s.is_complex() ? at::view_as_real(s) : s;
      const double lo = real.min().item<double>(), hi = real.max().item<double>();
      t = (lo == hi ? at::full(sizes, lo, at::kDouble) : at::empty(sizes, at::kDouble).uniform_(lo, hi, gen))
              .to(s.is_complex() ? at::kDouble : s.scalar_type());
      if (s.is_complex()) t = at::complex(t, at::empty(sizes, at::kDouble).uniform_(lo, hi, gen)).to(s.scalar_type());
    } else {
      // Integers (token ids, positions, a 0/1 mask) within the sample's own range.
      const int64_t lo = s.min().item<int64_t>(), hi = s.max().item<int64_t>();
      t = at::randint(lo, hi + 1, sizes, gen, s.options().device(at::kCPU));
    }
    out.push_back(t.to(sample[i].device()));
  }
  return out;
}

}  // namespace aoti
