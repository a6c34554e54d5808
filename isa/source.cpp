#include "isa/source.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace smpipe::isa {

SourceFile::SourceFile(std::string file_name, std::string contents)
    : name(std::move(file_name)), text(std::move(contents)) {
  // A UTF-8 byte-order mark (some Windows editors write one) is no part of the program: dropped, as compilers do.
  if (text.starts_with("\xef\xbb\xbf")) text.erase(0, 3);
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
  // printable: what() is read as a C string, so a NUL byte in the message would cut it short
  if (loc.file == nullptr || loc.line == 0) return fmt::format("error: {}", printable(message, true));
  std::string raw = loc.file->line_text(loc.line);
  if (raw.size() > 400) raw.resize(400);  // a line of a generated or hostile file: its start is enough
  std::string line = printable(raw, true);
  // the caret sits under the column as printed: the column counts bytes (as Clang's do), the caret one place per
  // character shown (a UTF-8 sequence is one, a byte shown as \xNN four)
  std::string before = printable(raw.substr(0, std::min(raw.size(), static_cast<std::size_t>(std::max(loc.col - 1, 0)))), true);
  std::string caret;
  for (char c : before)
    if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) caret += c == '\t' ? '\t' : ' ';
  return fmt::format("{}: error: {}\n  {}\n  {}^", printable(loc.str()), printable(message, true), line, caret);
}

InputError::InputError(const SourceLoc& loc, const std::string& message)
    : std::runtime_error(format_error(loc, message)), loc_(loc), file_(loc.file ? loc.file->name : ""), message_(message) {}

InputError::InputError(const std::string& message)
    : std::runtime_error(fmt::format("error: {}", printable(message, true))), message_(message) {}

std::string read_input_file(const std::string& path, const std::string& what, std::size_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw InputError(fmt::format("cannot read {} '{}': no such file", what, printable(path)));
  if (!fs::is_regular_file(st))
    throw InputError(fmt::format("cannot read {} '{}': not a regular file (a FIFO, device or directory is refused)", what,
                                 printable(path)));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read {} '{}'", what, printable(path)));
  std::string text;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes)
      throw InputError(fmt::format("{} '{}' is larger than {} MB, the most smpipe reads", what, printable(path), max_bytes >> 20));
  }
  if (in.bad()) throw InputError(fmt::format("cannot read {} '{}': read error", what, printable(path)));
  return text;
}

std::shared_ptr<SourceFile> load_source(const std::string& path) {
  return std::make_shared<SourceFile>(path, read_input_file(path, "program", kMaxSourceBytes));
}

std::string printable(const std::string& s, bool keep_lines) {
  std::string r;
  r.reserve(s.size());
  auto hex = [&](unsigned char c) { r += fmt::format("\\x{:02x}", c); };
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if ((c >= 0x20 && c < 0x7f) || (keep_lines && (c == '\n' || c == '\t'))) {
      r += static_cast<char>(c);
      ++i;
      continue;
    }
    // a well-formed UTF-8 sequence of 2-4 bytes (no overlong forms, no surrogates, at most U+10FFFF) is kept
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool ok = n > 0 && i + static_cast<std::size_t>(n) <= s.size();
    for (int k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (ok) {
      auto c1 = static_cast<unsigned char>(s[i + 1]);
      if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90)) ok = false;
    }
    if (!ok) {
      hex(c);
      ++i;
      continue;
    }
    r.append(s, i, static_cast<std::size_t>(n));
    i += static_cast<std::size_t>(n);
  }
  return r;
}

}  // namespace smpipe::isa
