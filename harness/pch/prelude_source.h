// The headers that most of the harness's translation units include, and that cost most of
// their compile time to parse: ATen's operator headers and nlohmann-json. Not gtest, gmock,
// gflags or glog: their inline functions would put symbols of those layers into the core
// libraries (core_layer_test).
// //harness/pch precompiles them once per configuration; every harness target is compiled
// with -include of the result (harness/cc.bzl), so these are parsed once instead of once per
// translation unit. A file still includes what it uses itself: this list is a speed-up, not
// a dependency, and a build with the precompiled header off (--define=aoti_pch=off)
// compiles the same code.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
