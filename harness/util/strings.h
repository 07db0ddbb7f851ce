// The small string and path helpers every library of the harness uses, written once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aoti {

bool StartsWith(std::string_view text, std::string_view prefix);
bool EndsWith(std::string_view text, std::string_view suffix);
bool Contains(std::string_view text, std::string_view part);

// JoinInts: {2, 3} -> "2, 3", the form messages use for sizes and indices.
std::string JoinInts(const std::vector<int64_t>& values);

// AbsolutePath: `path` with symbolic links resolved (realpath); the path itself when it
// does not exist, so a message can still name it.
std::string AbsolutePath(const std::string& path);

}  // namespace aoti
