#include "harness/program/sym_expr.h"

#include <cctype>
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

  std::optional<Term> ParseTerm() {
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

int64_t FloorDivide(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::optional<int64_t> Evaluate(const Term& t, const std::map<std::string, int64_t>& values) {
  if (t.kind == Term::kInt) return t.value;
  if (t.kind == Term::kString) return std::nullopt;
  if (t.kind == Term::kName) {
    auto it = values.find(t.text);
    return it == values.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  if (t.text == "Integer" && t.args.size() == 1) return Evaluate(t.args[0], values);
  if (t.text == "Symbol") {
    if (t.args.empty() || t.args[0].kind != Term::kString) return std::nullopt;
    auto it = values.find(t.args[0].text);
    return it == values.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  std::vector<int64_t> a;
  for (const auto& arg : t.args) {
    const std::optional<int64_t> v = Evaluate(arg, values);
    if (!v) return std::nullopt;
    a.push_back(*v);
  }
  if (a.empty()) return std::nullopt;
  if (t.text == "Add") {
    int64_t r = 0;
    for (int64_t v : a) r += v;
    return r;
  }
  if (t.text == "Mul") {
    int64_t r = 1;
    for (int64_t v : a) r *= v;
    return r;
  }
  if (t.text == "Max" || t.text == "Min") {
    int64_t r = a[0];
    for (int64_t v : a) r = t.text == "Max" ? std::max(r, v) : std::min(r, v);
    return r;
  }
  if (a.size() != 2) return std::nullopt;
  if (t.text == "Pow") {
    if (a[1] < 0) return std::nullopt;
    int64_t r = 1;
    for (int64_t k = 0; k < a[1]; ++k) r *= a[0];
    return r;
  }
  if (a[1] == 0) return std::nullopt;
  if (t.text == "FloorDiv") return FloorDivide(a[0], a[1]);
  if (t.text == "CleanDiv") return a[0] % a[1] == 0 ? std::optional<int64_t>(a[0] / a[1]) : std::nullopt;
  if (t.text == "Mod" || t.text == "PythonMod") return a[0] - FloorDivide(a[0], a[1]) * a[1];
  return std::nullopt;
}

}  // namespace

std::set<std::string> SymbolsIn(const std::string& expr) {
  std::set<std::string> out;
  if (const std::optional<Term> t = Parser(expr).Parse()) Collect(*t, &out);
  return out;
}

std::optional<int64_t> EvaluateSymExpr(const std::string& expr, const std::map<std::string, int64_t>& values) {
  const std::optional<Term> t = Parser(expr).Parse();
  if (!t) return std::nullopt;
  return Evaluate(*t, values);
}

}  // namespace aoti
