#include "reducer/kernel_map.h"

#include <algorithm>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "reducer/graph_edit.h"
#include "harness/util/strings.h"

namespace aoti {
namespace {

// "aten.relu.default" -> "relu"; "aoti_test.null_deref.default" -> "null_deref".
std::string OperatorName(const std::string& short_target) {
  const size_t first = short_target.find('.');
  if (first == std::string::npos) return short_target;
  const size_t second = short_target.find('.', first + 1);
  return short_target.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
}

// Whether `ops` ("mul_sigmoid") names `op` as whole '_'-separated words.
bool Names(const std::string& ops, const std::string& op) {
  if (op.empty()) return false;
  for (size_t at = ops.find(op); at != std::string::npos; at = ops.find(op, at + 1)) {
    const size_t end = at + op.size();
    const bool starts = at == 0 || ops[at - 1] == '_';
    const bool ends = end == ops.size() || ops[end] == '_';
    if (starts && ends) return true;
  }
  return false;
}

// Ops an exported program keeps that inductor lowers to others (a linear becomes an
// addmm): a kernel named after the right-hand op also names the left-hand ones.
const std::vector<std::pair<std::string, std::vector<std::string>>>& LoweredAs() {
  static const auto* table = new std::vector<std::pair<std::string, std::vector<std::string>>>{
      {"linear", {"addmm", "mm", "bmm"}},
      {"matmul", {"mm", "bmm", "addmm"}},
      {"conv1d", {"convolution"}},
      {"conv2d", {"convolution"}},
      {"conv3d", {"convolution"}},
      {"layer_norm", {"native_layer_norm"}},
      {"softmax", {"_softmax", "amax", "exp", "sum", "div"}},
      {"log_softmax", {"_log_softmax"}},
      {"batch_norm", {"_native_batch_norm_legit_no_training", "native_batch_norm"}},
      {"scaled_dot_product_attention", {"_scaled_dot_product_flash_attention_for_cpu", "bmm", "_softmax"}},
  };
  return *table;
}

bool NamesOperator(const std::string& ops, const std::string& op) {
  if (Names(ops, op)) return true;
  for (const auto& [exported, lowered] : LoweredAs()) {
    if (exported != op) continue;
    for (const auto& l : lowered) {
      if (Names(ops, l)) return true;
    }
  }
  return false;
}

}  // namespace

std::string KernelInCompilerOutput(const std::string& text) {
  // g++ writes "In function 'void k(...)':" (with typographic quotes in a UTF-8 locale),
  // then the errors in it. Take the function named last before the first error.
  static const std::regex in_function(R"(In (?:member )?function (?:‘|')([^‘’'(]*)\()");
  const size_t first_error = text.find("error:");
  const std::string head = first_error == std::string::npos ? text : text.substr(0, first_error);
  std::string kernel;
  for (std::sregex_iterator it(head.begin(), head.end(), in_function), end; it != end; ++it) {
    std::string signature = (*it)[1].str();  // "void cpp_fused_relu_1"
    const size_t space = signature.find_last_of(" *&");
    kernel = space == std::string::npos ? signature : signature.substr(space + 1);
  }
  return kernel;
}

std::string KernelThatDidNotFinish(const std::string& log) {
  static const std::regex launch(R"(\[ (before|after)_launch: ([A-Za-z0-9_:.]+) \])");
  std::vector<std::string> open;  // launched and not finished, in order
  for (std::sregex_iterator it(log.begin(), log.end(), launch), end; it != end; ++it) {
    const std::string name = (*it)[2].str();
    if ((*it)[1].str() == "before") {
      open.push_back(name);
    } else {
      for (auto o = open.rbegin(); o != open.rend(); ++o) {
        if (*o == name) {
          open.erase(std::next(o).base());
          break;
        }
      }
    }
  }
  return open.empty() ? "" : open.back();
}

std::vector<std::string> FinishedKernels(const std::string& log) {
  static const std::regex finished(R"(\[ after_launch: ([A-Za-z0-9_:.]+) \])");
  std::vector<std::string> kernels;
  for (std::sregex_iterator it(log.begin(), log.end(), finished), end; it != end; ++it) kernels.push_back((*it)[1].str());
  return kernels;
}

std::string LastFinishedKernel(const std::string& log) {
  const std::vector<std::string> finished = FinishedKernels(log);
  return finished.empty() ? "" : finished.back();
}

int FinishedLaunches(const std::string& log, const std::string& kernel) {
  const std::vector<std::string> finished = FinishedKernels(log);
  return static_cast<int>(std::count(finished.begin(), finished.end(), kernel));
}

KernelProvenance ParseKernelProvenance(const std::string& json) {
  KernelProvenance provenance;
  if (json.empty()) return provenance;
  try {
    const nlohmann::json record = nlohmann::json::parse(json);
    for (const auto& [kernel, calls] : record.items()) {
      provenance[kernel] = calls.get<std::vector<std::vector<std::string>>>();
    }
  } catch (const nlohmann::json::exception&) {
    return {};
  }
  return provenance;
}

std::vector<size_t> KernelNodes(const Program& program, const KernelProvenance& provenance, const std::string& kernel,
                                int call) {
  std::vector<size_t> nodes;
  const auto it = provenance.find(kernel);
  if (it == provenance.end()) return nodes;
  std::set<std::string> names;
  for (size_t c = 0; c < it->second.size(); ++c) {
    if (call >= 0 && call < static_cast<int>(it->second.size()) && static_cast<int>(c) != call) continue;
    names.insert(it->second[c].begin(), it->second[c].end());
  }
  for (size_t i = 0; i < program.nodes.size(); ++i) {
    if (names.count(program.nodes[i].name)) nodes.push_back(i);
  }
  return nodes;
}

std::vector<size_t> UnprintedCallNodes(const Program& program) {
  std::vector<size_t> nodes;
  for (size_t i = 0; i < program.nodes.size(); ++i) {
    const std::string target = OperatorOf(program.nodes[i]);
    const std::string ns = target.substr(0, target.find('.'));
    // Python operators (sym_size, getitem, ...), ATen and control flow have no unprinted call.
    if (ns == "aten" || ns == "prims" || ns == "_operator" || ns == "builtins" || ns == "operator" ||
        ns == "higher_order" || target.find('.') == std::string::npos) {
      continue;
    }
    nodes.push_back(i);
  }
  return nodes;
}

std::string KernelOperators(const std::string& kernel) {
  std::string k = kernel;
  // Generated kernels: <prefix>_fused_<ops>_<n>.
  const size_t fused = k.find("fused_");
  if (fused != std::string::npos) {
    k = k.substr(fused + 6);
    const size_t last = k.find_last_of('_');
    if (last != std::string::npos && last + 1 < k.size() &&
        k.find_first_not_of("0123456789", last + 1) == std::string::npos) {
      k = k.substr(0, last);
    }
    return k;
  }
  // Calls into ATen through the C shim: aoti_torch_<device>_<op>[_out].
  for (const char* prefix : {"aoti_torch_cpu_", "aoti_torch_cuda_", "aoti_torch_"}) {
    const std::string p = prefix;
    if (k.compare(0, p.size(), p) == 0) {
      k = k.substr(p.size());
      if (EndsWith(k, "_out")) k = k.substr(0, k.size() - 4);
      return k;
    }
  }
  return k;
}

std::vector<size_t> NodesForKernel(const Program& program, const std::string& kernel) {
  std::vector<size_t> nodes;
  const std::string ops = KernelOperators(kernel);
  if (ops.empty()) return nodes;
  for (size_t i = 0; i < program.nodes.size(); ++i) {
    if (NamesOperator(ops, OperatorName(OperatorOf(program.nodes[i])))) nodes.push_back(i);
  }
  return nodes;
}

std::vector<std::pair<std::string, std::string>> KernelPrinterEnv(const std::string& device) {
  if (device.empty() || device == "cpu") return {};
  return {{"CUDA_LAUNCH_BLOCKING", "1"}};
}

}  // namespace aoti
