#include "harness/util/strings.h"

#include <limits.h>
#include <stdlib.h>

#include <sstream>

namespace aoti {

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool Contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::string JoinInts(const std::vector<int64_t>& values) {
  std::ostringstream os;
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  return os.str();
}

std::string MarkupEscape(std::string_view text, bool escape_newlines) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\n': out += escape_newlines ? "&#10;" : "\n"; break;
      case '\t':
      case '\r': out += c; break;
      default: out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
  return out;
}

std::string AbsolutePath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

}  // namespace aoti
