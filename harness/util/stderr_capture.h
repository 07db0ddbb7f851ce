// StderrCapture: while alive, file descriptor 2 goes to a temporary file; Text() returns
// what was written so far, and the destructor restores stderr and echoes the text to it,
// so nothing is lost. AOTI's generated code reports the real cause of a runtime error only
// on stderr ("Error: ..."), while the exception says "API call failed"; this recovers it.
#pragma once

#include <string>

namespace aoti {

class StderrCapture {
 public:
  StderrCapture();
  ~StderrCapture();
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  // Text: everything written to stderr since construction.
  std::string Text() const;

 private:
  int saved_fd_ = -1;
  int capture_fd_ = -1;
};

// LastLines: the last max_lines lines of text, to keep a long stderr readable in a
// failure message (the full text is kept where it came from).
std::string LastLines(const std::string& text, size_t max_lines);

}  // namespace aoti
