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

// MarkupEscape: `text` safe inside XML or HTML, in an element or a quoted attribute: & < > " '
// as entities, control characters other than tab, newline and carriage return (which XML
// does not allow) as spaces, and with `escape_newlines` a newline as &#10; (an attribute
// value keeps its line breaks that way; JUnit's failure message is one).
std::string MarkupEscape(std::string_view text, bool escape_newlines = false);

// AbsolutePath: `path` with symbolic links resolved (realpath); the path itself when it
// does not exist, so a message can still name it.
std::string AbsolutePath(const std::string& path);

}  // namespace aoti
