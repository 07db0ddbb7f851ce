// SourceText: text that comes from a package (a node name, a model name, a torch version,
// an environment value, a path) written into generated source: repro.py (Python),
// repro_test.cc (C++) and BUILD.bazel (Starlark). One helper for each place it can go, so
// that no byte of it can end a comment or a string early, or make the file unreadable.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace aoti {

enum class SourceLanguage { kPython, kCpp, kStarlark };

// StringLiteral: `text` as a double-quoted string literal of `language` that reads back as
// the same bytes. Printable ASCII is written as it is (less the quote and the backslash,
// escaped); everything else is escaped:
//   Python:   \n \r \t, \xNN below 0x80, \uXXXX / \UXXXXXXXX for UTF-8 sequences, and
//             \udcNN for a byte that is not valid UTF-8 (os.fsencode gives the byte back);
//   C++, Starlark: \n \r \t, and every other byte as a three-digit octal escape (Bazel
//             reads BUILD files byte for byte, so the bytes come back as they were).
std::string StringLiteral(const std::string& text, SourceLanguage language);

// StarlarkConfigs: inductor configs (a JSON object) as aoti_package's `inductor_configs`
// dict: {"key": "value", ...}, a string value as it is, any other as its JSON text (a
// string that is not valid UTF-8 written with U+FFFD where the bad bytes were).
std::string StarlarkConfigs(const nlohmann::json& configs);

// CommentLine: `text` made safe for one line of a comment in any of the three: control
// characters (a lone carriage return among them) and bytes that are not valid UTF-8 are
// shown escaped (\xNN); valid UTF-8 other than the Unicode line and paragraph separators
// stays as it is.
std::string CommentLine(const std::string& text);

// CommentBlock: each line of `text` as a comment line, `prefix` ("# ", "// ") before it.
std::string CommentBlock(const std::string& text, const std::string& prefix);

}  // namespace aoti
