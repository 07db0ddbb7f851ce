#include "harness/program/sym_expr.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <vector>

namespace aoti {
namespace {

// Node: a parsed srepr term: a call (name and arguments), a bare name, an integer or a string.
struct Term {
  enum Kind { kCall, kName, kInt, kString } kind = kName;
  std::string text;          // the function, the name, or the string
  int64_t value = 0;         // kInt
  std::vector<Term> args;    // kCall's positional arguments (keyword arguments dropped)
};

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}
  bool too_deep() const { return too_deep_; }

  std::optional<Term> Parse() {
    std::optional<Term> t = ParseTerm();
    Skip();
    if (!t || at_ != s_.size()) return std::nullopt;
    return t;
  }

 private:
  void Skip() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }

  // ParseTerm nests as the expression does; past kMaxSymExprDepth it refuses (a crafted
  // expression must not exhaust the stack).
  std::optional<Term> ParseTerm() {
    if (depth_ >= kMaxSymExprDepth) {
      too_deep_ = true;
      return std::nullopt;
    }
    ++depth_;
    std::optional<Term> t = ParseTermAt();
    --depth_;
    return t;
  }

  std::optional<Term> ParseTermAt() {
    Skip();
    if (at_ >= s_.size()) return std::nullopt;
    Term t;
    const char c = s_[at_];
    if (c == '\'' || c == '"') {
      const size_t end = s_.find(c, at_ + 1);
      if (end == std::string::npos) return std::nullopt;
      t.kind = Term::kString;
      t.text = s_.substr(at_ + 1, end - at_ - 1);
      at_ = end + 1;
      return t;
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      size_t end = at_ + 1;
      while (end < s_.size() && std::isdigit(static_cast<unsigned char>(s_[end]))) ++end;
      try {
        t.kind = Term::kInt;
        t.value = std::stoll(s_.substr(at_, end - at_));
      } catch (const std::exception&) {
        return std::nullopt;
      }
      at_ = end;
      return t;
    }
    if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '_')) return std::nullopt;
    size_t end = at_;
    while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) ++end;
    t.text = s_.substr(at_, end - at_);
    at_ = end;
    Skip();
    if (at_ >= s_.size() || s_[at_] != '(') return t;
    t.kind = Term::kCall;
    ++at_;
    Skip();
    if (at_ < s_.size() && s_[at_] == ')') {
      ++at_;
      return t;
    }
    while (true) {
      // A keyword argument (integer=True): its value is read and dropped.
      Skip();
      size_t look = at_;
      while (look < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[look])) || s_[look] == '_')) ++look;
      const bool keyword = look > at_ && look < s_.size() && s_[look] == '=';
      if (keyword) at_ = look + 1;
      std::optional<Term> arg = ParseTerm();
      if (!arg) return std::nullopt;
      if (!keyword) t.args.push_back(std::move(*arg));
      Skip();
      if (at_ < s_.size() && s_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < s_.size() && s_[at_] == ')') {
        ++at_;
        return t;
      }
      return std::nullopt;
    }
  }

  const std::string& s_;
  size_t at_ = 0;
  int depth_ = 0;
  bool too_deep_ = false;
};

void Collect(const Term& t, std::set<std::string>* out) {
  if (t.kind == Term::kName) out->insert(t.text);
  if (t.kind != Term::kCall) return;
  if (t.text == "Symbol" && !t.args.empty() && t.args[0].kind == Term::kString) {
    out->insert(t.args[0].text);
    return;
  }
  for (const auto& a : t.args) Collect(a, out);
}

// Each step of an evaluation, checked: nullopt (and `why`) where its value does not fit in
// 64 bits or is not defined.
class Evaluator {
 public:
  Evaluator(const std::map<std::string, int64_t>& values, std::string* why) : values_(values), why_(why) {}

  std::optional<int64_t> Evaluate(const Term& t) {
    if (t.kind == Term::kInt) return t.value;
    if (t.kind == Term::kString) return std::nullopt;
    if (t.kind == Term::kName) return Bound(t.text);
    if (t.text == "Integer" && t.args.size() == 1) return Evaluate(t.args[0]);
    if (t.text == "Symbol") {
      if (t.args.empty() || t.args[0].kind != Term::kString) return std::nullopt;
      return Bound(t.args[0].text);
    }
    std::vector<int64_t> a;
    for (const auto& arg : t.args) {
      const std::optional<int64_t> v = Evaluate(arg);
      if (!v) return std::nullopt;
      a.push_back(*v);
    }
    if (a.empty()) return std::nullopt;
    const std::string& f = t.text;
    if (f == "Add" || f == "Mul") {
      int64_t r = f == "Add" ? 0 : 1;
      for (int64_t v : a) {
        if (f == "Add" ? __builtin_add_overflow(r, v, &r) : __builtin_mul_overflow(r, v, &r)) {
          return Fail(f + " overflows 64 bits", a);
        }
      }
      return r;
    }
    if (f == "Max" || f == "Min") {
      int64_t r = a[0];
      for (int64_t v : a) r = f == "Max" ? std::max(r, v) : std::min(r, v);
      return r;
    }
    if (a.size() != 2) return std::nullopt;
    if (f == "Pow") return Pow(a);
    if (f != "FloorDiv" && f != "CleanDiv" && f != "Mod" && f != "PythonMod") return std::nullopt;
    if (a[1] == 0) return Fail(f + " by zero", a);
    // INT64_MIN / -1 does not fit (and the CPU traps on it): the quotient is refused, the
    // remainder is 0.
    if (a[1] == -1) {
      if (f == "Mod" || f == "PythonMod") return 0;
      if (a[0] == INT64_MIN) return Fail(f + " overflows 64 bits", a);
      return -a[0];
    }
    const int64_t q = a[0] / a[1], rem = a[0] % a[1];
    const bool signs_differ = rem != 0 && ((rem < 0) != (a[1] < 0));
    if (f == "FloorDiv") return signs_differ ? q - 1 : q;  // q - 1 >= INT64_MIN: |q| < |a[0]| here
    if (f == "CleanDiv") return rem == 0 ? std::optional<int64_t>(q) : std::nullopt;
    return signs_differ ? rem + a[1] : rem;  // Python's sign: the divisor's; rem and a[1] differ in sign
  }

 private:
  std::optional<int64_t> Bound(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }

  // Pow by squaring: at most 64 steps whatever the exponent.
  std::optional<int64_t> Pow(const std::vector<int64_t>& a) {
    int64_t base = a[0], exponent = a[1], r = 1;
    if (exponent < 0) return Fail("Pow with a negative exponent is not an integer", a);
    if (base == 0 || base == 1) return exponent == 0 ? 1 : base;
    if (base == -1) return exponent % 2 == 0 ? 1 : -1;
    while (exponent > 0) {
      if ((exponent & 1) && __builtin_mul_overflow(r, base, &r)) return Fail("Pow overflows 64 bits", a);
      exponent >>= 1;
      if (exponent > 0 && __builtin_mul_overflow(base, base, &base)) return Fail("Pow overflows 64 bits", a);
    }
    return r;
  }

  std::optional<int64_t> Fail(const std::string& what, const std::vector<int64_t>& a) {
    if (why_ != nullptr && why_->empty()) {
      std::string args;
      for (int64_t v : a) args += (args.empty() ? "" : ", ") + std::to_string(v);
      *why_ = what + " (" + args + ")";
    }
    return std::nullopt;
  }

  const std::map<std::string, int64_t>& values_;
  std::string* why_;
};

}  // namespace

std::set<std::string> SymbolsIn(const std::string& expr) {
  std::set<std::string> out;
  if (const std::optional<Term> t = Parser(expr).Parse()) Collect(*t, &out);
  return out;
}

std::optional<int64_t> EvaluateSymExpr(const std::string& expr, const std::map<std::string, int64_t>& values,
                                       std::string* why) {
  Parser parser(expr);
  const std::optional<Term> t = parser.Parse();
  if (!t) {
    if (why != nullptr && parser.too_deep()) {
      *why = "the expression nests deeper than " + std::to_string(kMaxSymExprDepth) + " calls";
    }
    return std::nullopt;
  }
  std::string reason;
  const std::optional<int64_t> v = Evaluator(values, &reason).Evaluate(*t);
  if (!v && why != nullptr && !reason.empty()) *why = reason + " in " + expr.substr(0, 200);
  return v;
}

}  // namespace aoti
