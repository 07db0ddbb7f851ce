// Checked reads of numbers from outside JSON (archives, manifests, case files). nlohmann's
// get<int64_t>() on a float such as 1e72 is undefined behaviour (found by the fuzzers);
// these refuse anything but an integer in range, with a HarnessError naming `what`.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/util/errors.h"

namespace aoti {

inline int64_t JsonInt(const nlohmann::json& j, const std::string& what,
                       int64_t lo = std::numeric_limits<int64_t>::min(),
                       int64_t hi = std::numeric_limits<int64_t>::max()) {
  if (j.is_number_unsigned()) {
    if (j.get<uint64_t>() > static_cast<uint64_t>(hi)) {
      throw HarnessError(what + ": " + j.dump() + " is out of range (at most " + std::to_string(hi) + ")");
    }
    const int64_t v = static_cast<int64_t>(j.get<uint64_t>());
    if (v < lo) throw HarnessError(what + ": " + j.dump() + " is out of range (at least " + std::to_string(lo) + ")");
    return v;
  }
  if (!j.is_number_integer()) throw HarnessError(what + ": expected an integer, got " + j.dump().substr(0, 80));
  const int64_t v = j.get<int64_t>();
  if (v < lo || v > hi) {
    throw HarnessError(what + ": " + std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
  }
  return v;
}

inline int JsonInt32(const nlohmann::json& j, const std::string& what) {
  return static_cast<int>(JsonInt(j, what, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

inline std::vector<int64_t> JsonInts(const nlohmann::json& j, const std::string& what) {
  if (!j.is_array()) throw HarnessError(what + ": expected a list of integers, got " + j.dump().substr(0, 80));
  std::vector<int64_t> out;
  out.reserve(j.size());
  for (const auto& v : j) out.push_back(JsonInt(v, what));
  return out;
}

// JsonText: j as text; a string that is not valid UTF-8 (a path, an environment value) is
// written with U+FFFD where the bad bytes were instead of throwing.
inline std::string JsonText(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

inline double JsonDouble(const nlohmann::json& j, const std::string& what) {
  if (!j.is_number()) throw HarnessError(what + ": expected a number, got " + j.dump().substr(0, 80));
  return j.get<double>();
}

}  // namespace aoti
