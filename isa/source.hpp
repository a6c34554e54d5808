// Source text, positions in it, and the error users see for bad input: `FILE:LINE:COL: error: MESSAGE`,
// then the source line and a caret under the column.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace smpipe::isa {

struct SourceFile {
  std::string name;  // as the user named it (path or built-in model name)
  std::string text;
  std::vector<std::size_t> line_starts;  // offset of the first character of each line

  SourceFile(std::string file_name, std::string contents);
  std::string line_text(int line) const;  // 1-based, without the newline
};

struct SourceLoc {
  const SourceFile* file = nullptr;
  int line = 0;  // 1-based; 0 = no position
  int col = 0;   // 1-based

  std::string str() const;  // "file:line:col"
};

// Bad input: a parse or check error. Carries the position; what() is the full formatted message.
class InputError : public std::runtime_error {
 public:
  InputError(const SourceLoc& loc, const std::string& message);
  InputError(const std::string& message);  // no position (e.g. a bad -D option)
  // The position; its `file` pointer is valid only while the source lives (a catch outside the loader must use
  // file() instead).
  const SourceLoc& loc() const { return loc_; }
  const std::string& file() const { return file_; }  // the source's name ("" when the error has no position)
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string file_;
  std::string message_;
};

// The most bytes smpipe reads from one input file (a program, a machine file, a hardware trace). The largest
// real inputs are hardware traces of a few MB; a program is a few KB.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;
// The most bytes of a .pipe program (the front end holds ~50 bytes of state per source byte).
inline constexpr std::size_t kMaxSourceBytes = std::size_t{4} << 20;

// Reads a whole input file (a program, a machine file, a trace): only a regular file (a FIFO, a device or a directory is refused before it is
// opened, so nothing blocks), at most `max_bytes`. `what` names it in messages ("machine file", ...).
// Throws InputError on anything else.
std::string read_input_file(const std::string& path, const std::string& what, std::size_t max_bytes = kMaxInputBytes);

// Reads a .pipe file into a SourceFile (read_input_file, at most kMaxSourceBytes).
std::shared_ptr<SourceFile> load_source(const std::string& path);

// `s` made safe to print: bytes that are not printable ASCII or valid UTF-8 (control bytes, NUL, stray or
// overlong sequences) are written as \xNN; newlines and tabs too (so a quoted name stays on one line) unless
// `keep_lines` (a whole multi-line message).
std::string printable(const std::string& s, bool keep_lines = false);

}  // namespace smpipe::isa
