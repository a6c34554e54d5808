// Tokens of the .pipe language (language.md "Lexical rules").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isa/source.hpp"

namespace smpipe::isa {

enum class Tok : std::uint8_t {
  kIdent,    // [A-Za-z_][A-Za-z0-9_.]*
  kInt,      // decimal or 0x hex, optional K / M suffix
  kWord,     // a number glued to letters, e.g. a shape such as 32x32b.x64 (tmem.ld) or 128x256b
  kString,   // "..."
  kPunct,    // one of ( ) [ ] { } , = ; and operators
  kNewline,  // statement end (also produced for ';')
  kEnd,
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;      // identifier, word, string contents, or punctuation/operator spelling
  std::int64_t value = 0;  // for kInt
  SourceLoc loc;
};

// Splits the whole file into tokens. Throws InputError on an unknown character, a bad number or an
// unterminated string.
std::vector<Token> lex(const SourceFile& file);

}  // namespace smpipe::isa
