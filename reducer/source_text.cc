#include "reducer/source_text.h"

#include <cstdint>
#include <cstdio>
#include <sstream>

#include "harness/util/json_util.h"

namespace aoti {
namespace {

// Utf8Sequence: the length of the valid UTF-8 sequence at text[i] (its code point in *cp),
// or 0 when the byte there does not start one.
size_t Utf8Sequence(const std::string& text, size_t i, uint32_t* cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  uint32_t v = 0, min = 0;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xe0) == 0xc0) {
    n = 2, v = c & 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3, v = c & 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    v = (v << 6) | (byte(i + k) & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

std::string Format(const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

}  // namespace

std::string StringLiteral(const std::string& text, SourceLanguage language) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
      ++i;
      continue;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (language != SourceLanguage::kPython) {
      out += Format("\\%03o", c);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = Utf8Sequence(text, i, &cp);
    if (n == 0) {
      out += Format("\\udc%02x", c);  // Python's surrogateescape form of a lone byte
      ++i;
    } else {
      out += cp < 0x80 ? Format("\\x%02x", cp) : cp <= 0xffff ? Format("\\u%04x", cp) : Format("\\U%08x", cp);
      i += n;
    }
  }
  return out + "\"";
}

std::string CommentLine(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t n = Utf8Sequence(text, i, &cp);
    if (n == 0 || cp < 0x20 || cp == 0x7f || cp == 0x85 || cp == 0x2028 || cp == 0x2029) {
      // Not valid UTF-8, a control character, or a line break some readers honour: escaped
      // byte by byte.
      for (size_t k = 0; k < (n ? n : 1); ++k) out += Format("\\x%02x", static_cast<unsigned char>(text[i + k]));
      i += n ? n : 1;
      continue;
    }
    out.append(text, i, n);
    i += n;
  }
  return out;
}

std::string CommentBlock(const std::string& text, const std::string& prefix) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out += prefix + CommentLine(line) + "\n";
  return out;
}

std::string StarlarkConfigs(const nlohmann::json& configs) {
  std::string out = "{";
  for (const auto& [k, v] : configs.items()) {
    const std::string text =
        v.is_string() ? v.get<std::string>() : JsonText(v);
    out += (out.size() > 1 ? ", " : "") + StringLiteral(k, SourceLanguage::kStarlark) + ": " +
           StringLiteral(text, SourceLanguage::kStarlark);
  }
  return out + "}";
}

}  // namespace aoti
