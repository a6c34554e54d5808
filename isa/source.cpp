#include "isa/source.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace smpipe::isa {

SourceFile::SourceFile(std::string file_name, std::string contents)
    : name(std::move(file_name)), text(std::move(contents)) {
  line_starts.push_back(0);
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') line_starts.push_back(i + 1);
}

std::string SourceFile::line_text(int line) const {
  if (line < 1 || static_cast<std::size_t>(line) > line_starts.size()) return {};
  std::size_t begin = line_starts[line - 1];
  std::size_t end = text.find('\n', begin);
  if (end == std::string::npos) end = text.size();
  std::string s = text.substr(begin, end - begin);
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

std::string SourceLoc::str() const {
  if (file == nullptr) return "<input>";
  return fmt::format("{}:{}:{}", file->name, line, col);
}

static std::string format_error(const SourceLoc& loc, const std::string& message) {
  if (loc.file == nullptr || loc.line == 0) return fmt::format("error: {}", message);
  std::string line = loc.file->line_text(loc.line);
  std::string caret(static_cast<std::size_t>(std::max(loc.col - 1, 0)), ' ');
  for (std::size_t i = 0; i < caret.size() && i < line.size(); ++i)
    if (line[i] == '\t') caret[i] = '\t';
  return fmt::format("{}: error: {}\n  {}\n  {}^", loc.str(), message, line, caret);
}

InputError::InputError(const SourceLoc& loc, const std::string& message)
    : std::runtime_error(format_error(loc, message)), loc_(loc), message_(message) {}

InputError::InputError(const std::string& message)
    : std::runtime_error(fmt::format("error: {}", message)), message_(message) {}

std::shared_ptr<SourceFile> load_source(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read '{}'", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::make_shared<SourceFile>(path, ss.str());
}

}  // namespace smpipe::isa
