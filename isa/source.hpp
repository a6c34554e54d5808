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
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string message_;
};

// Reads a file into a SourceFile; throws InputError if it cannot be read.
std::shared_ptr<SourceFile> load_source(const std::string& path);

}  // namespace smpipe::isa
