#include "isa/lexer.hpp"

#include <fmt/format.h>

#include <cctype>
#include <limits>

namespace smpipe::isa {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// Two-character operators first, so that "<=" is not read as "<" "=".
constexpr const char* kTwoCharOps[] = {"..", "->", "||", "&&", "==", "!=", "<=", ">=", "<<", ">>"};
constexpr const char kOneCharOps[] = "()[]{},=+-*/%<>!~&|^";

}  // namespace

// The message for a byte no token starts with: the character itself when it is printable ASCII or a whole UTF-8
// sequence (with its code point: names and operators are ASCII), else the byte in hex (a NUL byte would cut the
// message short).
std::string unexpected_character(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c >= 0x20 && c < 0x7f) return fmt::format("unexpected character '{}'", static_cast<char>(c));
  const int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  std::uint32_t cp = n == 2 ? c & 0x1fu : n == 3 ? c & 0x0fu : c & 0x07u;
  bool ok = n > 0 && i + static_cast<std::size_t>(n) <= s.size();
  for (int k = 1; ok && k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
    ok = (b & 0xc0) == 0x80;
    cp = (cp << 6) | (b & 0x3fu);
  }
  // (no overlong forms, no surrogates, nothing past U+10FFFF)
  ok = ok && !(n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) && !(n == 4 && (cp < 0x10000 || cp > 0x10ffff));
  if (ok)
    return fmt::format("unexpected character '{}' (U+{:04X}): names and operators are ASCII", s.substr(i, static_cast<std::size_t>(n)), cp);
  return fmt::format("unexpected byte \\x{:02x}", c);
}

std::vector<Token> lex(const SourceFile& file) {
  const std::string& s = file.text;
  std::vector<Token> out;
  int line = 1;
  std::size_t line_start = 0;
  std::size_t i = 0;
  auto loc_at = [&](std::size_t pos) {
    return SourceLoc{&file, line, static_cast<int>(pos - line_start) + 1};
  };
  auto push_newline = [&](std::size_t pos, const char* text) {
    if (!out.empty() && out.back().kind == Tok::kNewline) return;  // collapse blank lines
    out.push_back(Token{Tok::kNewline, text, 0, loc_at(pos)});
  };

  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      push_newline(i, "\\n");
      ++i;
      ++line;
      line_start = i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == ';') {
      push_newline(i, ";");
      ++i;
      continue;
    }
    SourceLoc loc = loc_at(i);
    if (ident_start(c)) {
      std::size_t b = i;
      while (i < s.size() && ident_char(s[i])) ++i;
      // A trailing ".." belongs to a range, not to the identifier: `0..N` / `k..STAGES`.
      std::string text = s.substr(b, i - b);
      auto dots = text.find("..");
      if (dots != std::string::npos) {
        i = b + dots;
        text = text.substr(0, dots);
      }
      out.push_back(Token{Tok::kIdent, text, 0, loc});
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t b = i;
      bool hex = c == '0' && i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X') && i + 2 < s.size() &&
                 std::isxdigit(static_cast<unsigned char>(s[i + 2]));
      if (hex) i += 2;
      while (i < s.size() && (hex ? std::isxdigit(static_cast<unsigned char>(s[i]))
                                  : std::isdigit(static_cast<unsigned char>(s[i]))))
        ++i;
      std::string digits = s.substr(b, i - b);
      std::int64_t mult = 1;
      std::size_t suffix_end = i;
      if (i < s.size() && (s[i] == 'K' || s[i] == 'M')) {
        mult = s[i] == 'K' ? 1024 : 1024 * 1024;
        suffix_end = i + 1;
      }
      // A number glued to more letters is a word (a shape such as 32x32b.x64), unless it is "1..N".
      std::size_t j = suffix_end;
      bool word = j < s.size() && ident_char(s[j]) && !(s[j] == '.' && j + 1 < s.size() && s[j + 1] == '.');
      if (word) {
        while (j < s.size() && ident_char(s[j]) && !(s[j] == '.' && j + 1 < s.size() && s[j + 1] == '.')) ++j;
        out.push_back(Token{Tok::kWord, s.substr(b, j - b), 0, loc});
        i = j;
        continue;
      }
      i = suffix_end;
      unsigned long long v = 0;
      try {
        v = std::stoull(hex ? digits.substr(2) : digits, nullptr, hex ? 16 : 10);
      } catch (const std::exception&) {
        throw InputError(loc, fmt::format("integer '{}' does not fit in 64 bits", digits));
      }
      if (v > static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max() / mult))
        throw InputError(loc, fmt::format("integer '{}' does not fit in 64 bits", s.substr(b, i - b)));
      out.push_back(Token{Tok::kInt, s.substr(b, i - b), static_cast<std::int64_t>(v) * mult, loc});
      continue;
    }
    if (c == '"') {
      std::size_t b = ++i;
      while (i < s.size() && s[i] != '"' && s[i] != '\n') ++i;
      if (i >= s.size() || s[i] != '"') throw InputError(loc, "unterminated string");
      out.push_back(Token{Tok::kString, s.substr(b, i - b), 0, loc});
      ++i;
      continue;
    }
    bool matched = false;
    for (const char* op : kTwoCharOps) {
      if (s.compare(i, 2, op) == 0) {
        out.push_back(Token{Tok::kPunct, op, 0, loc});
        i += 2;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    for (const char* p = kOneCharOps; *p; ++p) {
      if (c == *p) {
        out.push_back(Token{Tok::kPunct, std::string(1, c), 0, loc});
        ++i;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    throw InputError(loc, unexpected_character(s, i));
  }
  push_newline(i, "\\n");
  out.push_back(Token{Tok::kEnd, "", 0, loc_at(i)});
  return out;
}

}  // namespace smpipe::isa
