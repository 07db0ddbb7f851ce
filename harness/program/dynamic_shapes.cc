#include "harness/program/dynamic_shapes.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/accumulate.h>

#include "harness/util/errors.h"
#include "harness/program/sym_expr.h"

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

// SizesAt: each input's sizes at the point; false when a derived dimension comes out
// negative or cannot be evaluated there.
bool SizesAt(const ProgramSignature& sig, const std::map<std::string, int64_t>& symbols,
             std::vector<std::vector<int64_t>>* sizes) {
  for (const auto& in : sig.user_inputs) {
    std::vector<int64_t> dims;
    for (const auto& d : in.sizes) {
      // A plain symbol's value, or a derived dimension's expression (2*s0) evaluated.
      const std::optional<int64_t> v = d.is_symbolic() ? EvaluateSymExpr(d.sym, symbols) : std::optional<int64_t>(d.size);
      if (!v || *v < 0) return false;
      dims.push_back(*v);
    }
    sizes->push_back(dims);
  }
  return true;
}

// SolveForSample: the value of the one unbound symbol of `expr` that gives the sample's
// size (a derived dimension, 2*s0 = 16: s0 = 8), the least such; nullopt when none up to
// the sample size (derived dimensions are affine in their root: the root is no larger).
std::optional<int64_t> SolveForSample(const std::string& expr, const std::string& sym,
                                      const std::map<std::string, int64_t>& bound, int64_t sample) {
  std::map<std::string, int64_t> values = bound;
  for (int64_t v = 0; v <= std::max<int64_t>(sample, 1) + 1; ++v) {
    values[sym] = v;
    if (EvaluateSymExpr(expr, values) == sample) return v;
  }
  return std::nullopt;
}

int64_t InputBytes(const std::vector<std::vector<int64_t>>& sizes, const std::vector<at::Tensor>& sample) {
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size() && i < sample.size(); ++i) {
    int64_t n = static_cast<int64_t>(sample[i].element_size());
    for (int64_t d : sizes[i]) n = d > 0 && n > std::numeric_limits<int64_t>::max() / d ? std::numeric_limits<int64_t>::max() : n * d;
    total = n > std::numeric_limits<int64_t>::max() - total ? std::numeric_limits<int64_t>::max() : total + n;
  }
  return total;
}

std::string MiB(int64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

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

std::vector<ShapePoint> ShapePoints(const Program& program, const std::vector<at::Tensor>& sample,
                                    int64_t max_input_bytes) {
  const ProgramSignature sig = program.Signature();
  // The symbols the sample binds: plain symbols directly, then a symbol seen only inside
  // derived dimensions (2*s0) solved from the sample's size there.
  std::map<std::string, int64_t> at_sample;
  struct Derived {
    size_t input, dim;
    std::string expr;
    int64_t size;
  };
  std::vector<Derived> derived;
  for (size_t i = 0; i < sig.user_inputs.size() && i < sample.size(); ++i) {
    const auto& in = sig.user_inputs[i];
    for (size_t d = 0; d < in.sizes.size() && d < static_cast<size_t>(sample[i].dim()); ++d) {
      if (!in.sizes[d].is_symbolic()) continue;
      if (IsSymbolName(in.sizes[d].sym)) {
        at_sample.emplace(in.sizes[d].sym, sample[i].size(d));
      } else {
        derived.push_back({i, d, in.sizes[d].sym, sample[i].size(d)});
      }
    }
  }
  for (const Derived& e : derived) {
    std::vector<std::string> unbound;
    for (const auto& sym : SymbolsIn(e.expr)) {
      if (!at_sample.count(sym)) unbound.push_back(sym);
    }
    const std::string where = "input " + std::to_string(e.input) + " '" + sig.user_inputs[e.input].name + "' dim " +
                              std::to_string(e.dim) + " is " + e.expr;
    std::optional<int64_t> root;
    if (unbound.size() == 1) root = SolveForSample(e.expr, unbound[0], at_sample, e.size);
    if (unbound.size() > 1 || (unbound.size() == 1 && !root)) {
      throw HarnessError(where + ", an expression of symbols no other dimension binds; the dynamic shapes to check "
                         "are not planned for it (list them with aoti_model_test's shapes)");
    }
    if (root) at_sample[unbound[0]] = *root;
    if (const std::optional<int64_t> size = EvaluateSymExpr(e.expr, at_sample); size != e.size) {
      throw HarnessError(where + ", " + std::to_string(size.value_or(-1)) +
                         " with the sample's symbols, but the sample's size there is " + std::to_string(e.size));
    }
  }
  if (at_sample.empty()) return {};
  std::map<std::string, std::pair<int64_t, int64_t>> ranges;
  std::map<std::string, std::string> unbounded;  // symbol -> what its upper end is
  for (const auto& [sym, value] : at_sample) {
    int64_t lo = 1, hi = kUnbounded;
    if (auto it = program.range_constraints.find(sym); it != program.range_constraints.end()) {
      lo = std::max<int64_t>(it->second.min, 1);
      hi = it->second.max;
    }
    if (hi >= kUnbounded) {
      hi = std::max(value * kUnboundedFactor, lo + 1);
      unbounded[sym] = sym + " has no upper bound: taken at twice its sample size (" + std::to_string(hi) + ")";
    }
    ranges[sym] = {lo, std::max(hi, lo)};
  }
  std::vector<ShapePoint> points;
  std::set<std::map<std::string, int64_t>> seen = {at_sample};  // the sample is checked already
  auto add = [&](const std::string& name, const std::map<std::string, int64_t>& symbols, const std::string& what) {
    if (!seen.insert(symbols).second) return;
    ShapePoint p{name, symbols, {}, what};
    if (SizesAt(sig, symbols, &p.sizes)) points.push_back(std::move(p));
  };
  std::map<std::string, int64_t> lo, hi, distinct;
  for (const auto& [sym, range] : ranges) {
    lo[sym] = range.first;
    hi[sym] = range.second;
  }
  add("min", lo, "every symbol at its minimum");
  // The upper point: every symbol at its declared maximum ("max"); a symbol with none at
  // twice its sample, and inputs that would take more than max_input_bytes scaled down
  // toward the sample until they fit ("large", saying which).
  std::vector<std::string> said;
  for (const auto& [sym, why] : unbounded) said.push_back(why);
  std::vector<std::vector<int64_t>> sizes;
  const int64_t bytes = SizesAt(sig, hi, &sizes) ? InputBytes(sizes, sample) : 0;
  if (bytes > max_input_bytes) {
    // The fraction of the way from the sample to the max that fits, by bisection.
    double good = 0, bad = 1;
    auto at_fraction = [&](double f) {
      std::map<std::string, int64_t> m;
      for (const auto& [sym, v] : at_sample) {
        m[sym] = v + static_cast<int64_t>(static_cast<double>(std::max(hi[sym], v) - v) * f);
      }
      return m;
    };
    for (int i = 0; i < 64; ++i) {
      const double mid = (good + bad) / 2;
      std::vector<std::vector<int64_t>> s;
      if (SizesAt(sig, at_fraction(mid), &s) && InputBytes(s, sample) <= max_input_bytes) good = mid; else bad = mid;
    }
    const std::map<std::string, int64_t> capped = at_fraction(good);
    for (const auto& [sym, v] : capped) {
      if (v < hi[sym]) {
        said.push_back(sym + " capped at " + std::to_string(v) + " of its " +
                       (unbounded.count(sym) ? "twice-the-sample " : "declared max ") + std::to_string(hi[sym]));
      }
    }
    said.push_back("the inputs at the max would take " + MiB(bytes) + ", over the cap of " + MiB(max_input_bytes));
    hi = capped;
  }
  std::string what = "every symbol at its declared maximum";
  if (!said.empty()) {
    what.clear();
    for (const auto& w : said) what += (what.empty() ? "" : "; ") + w;
  }
  add(said.empty() ? "max" : "large", hi, what);
  if (ranges.size() > 1 && Distinct(ranges, at_sample, &distinct)) add("distinct", distinct, "no two symbols of one size");
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

// CountsUp: an integer sample whose every row counts up by one along its last dimension
// (positions, a range), of at least two elements there.
bool CountsUp(const at::Tensor& s) {
  if (s.dim() == 0 || s.size(-1) < 2) return false;
  const at::Tensor steps = s.narrow(-1, 1, s.size(-1) - 1) - s.narrow(-1, 0, s.size(-1) - 1);
  return steps.eq(1).all().item<bool>();
}

std::string InputName(size_t i) { return "user input " + std::to_string(i); }

// MakeOffsets: `count` per-bag offsets into `n` ids: 0 first, rising, at most n (the last
// n where include_last).
at::Tensor MakeOffsets(int64_t count, int64_t n, bool include_last, const at::Tensor& s, at::Generator& gen,
                       const std::string& what) {
  if (count == 0) return at::empty({0}, s.options());
  if (include_last && count == 1 && n != 0) {
    throw InputsCannotBeMade(what + " must start at 0 and end at the ids' count " + std::to_string(n) +
                             " in one value (include_last_offset)");
  }
  at::Tensor t = std::get<0>(at::randint(0, n + 1, {count}, gen, s.options()).sort());
  t.index_put_({0}, 0);
  if (include_last) t.index_put_({count - 1}, n);
  return t;
}

std::vector<at::Tensor> InputsAt(const ShapePoint& point, const std::vector<at::Tensor>& sample, uint64_t seed,
                                 const std::vector<InputRole>& roles) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < sample.size() && i < point.sizes.size(); ++i) {
    const at::Tensor s = sample[i].detach().cpu();
    const auto sizes = point.sizes[i];
    const InputRole role = i < roles.size() ? roles[i] : InputRole{};
    const std::string what = InputName(i) + " (" + role.why + ")";
    at::Tensor t;
    if (role.kind == InputRole::Kind::kOffsets && sizes.size() == 1) {
      int64_t n = 1;
      for (const auto& d : role.ids_sizes) {
        const auto v = EvaluateDim(d, point.symbols);
        if (!v) throw InputsCannotBeMade(what + ": the ids' size " + d.sym + " cannot be evaluated at this point");
        n *= *v;
      }
      t = MakeOffsets(sizes[0], n, role.include_last, s, gen, what);
    } else if (s.numel() == 0) {
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
      // Integers (token ids, positions, a 0/1 mask) within the sample's own range, and
      // below the size they index where an operator indexes with them.
      int64_t lo = s.min().item<int64_t>(), hi = s.max().item<int64_t>();
      std::optional<int64_t> bound;
      if (role.kind == InputRole::Kind::kIndex) {
        bound = EvaluateDim(role.bound, point.symbols);
        if (!bound) throw InputsCannotBeMade(what + ": the size it indexes cannot be evaluated at this point");
        if (*bound <= 0 && c10::multiply_integers(sizes) > 0) {
          throw InputsCannotBeMade(what + " indexes a dimension of size " + std::to_string(*bound) + " at this point");
        }
        if (lo >= 0) {
          hi = std::min(hi, *bound - 1);
          if (lo > hi) lo = 0;
        }
      }
      const int64_t start = s.flatten()[0].item<int64_t>();
      const bool positions = CountsUp(s) && !sizes.empty() && (!bound || start < 0 || start + sizes.back() <= *bound);
      if (positions) {
        // Positions: a count from the sample's first value, at the new length.
        t = (at::arange(sizes.back(), s.options()) + start).expand(sizes).contiguous();
      } else {
        t = at::randint(lo, hi + 1, sizes, gen, s.options().device(at::kCPU));
      }
    }
    out.push_back(t.to(sample[i].device()));
  }
  return out;
}

}  // namespace aoti
