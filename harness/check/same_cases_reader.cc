#include "harness/check/same_cases_reader.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "harness/archive/tensor_io.h"

namespace aoti {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<SameCase> ReadSameCases(const std::string& prefix) {
  const std::string blob = ReadFile(prefix + ".bin");
  const auto doc = nlohmann::json::parse(ReadFile(prefix + ".json"));
  auto tensor = [&](const nlohmann::json& r) {
    if (r.is_null()) return at::Tensor();
    TensorRecord rec;
    rec.dtype = ScalarTypeFromName(r.at("dtype").get<std::string>(), "case");
    rec.sizes = r.at("sizes").get<std::vector<int64_t>>();
    return ReadRawTensor(rec, blob.substr(r.at("offset").get<size_t>(), r.at("bytes").get<size_t>()), "case");
  };
  std::vector<SameCase> out;
  for (const auto& c : doc.at("cases")) {
    SameCase s{tensor(c.at("ref")), tensor(c.at("res")), tensor(c.at("fp64")), c.at("tol").get<double>(),
               c.at("ignore_non_fp").get<bool>(), c.at("same").get<bool>(), {}};
    if (const auto it = c.find("repro"); it != c.end()) s.repro = it->get<std::map<std::string, std::string>>();
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace aoti
