// The .pipe vocabulary of fuzz_pipe_tokens and of the dictionary fuzz/pipe.dict: keywords, built-ins, the op
// table's names (isa::all_ops), attribute names, dtypes, shapes, punctuation, identifiers and numbers
// (small ones and ones at the edges of the 64-bit range).
//
// A fuzz_pipe_tokens input is a sequence of token codes: a byte below 0xE0 is a token of the primary table,
// a byte B >= 0xE0 and the byte after it, N, are token (B - 0xE0) * 256 + N of the secondary table (both
// modulo the table's size). Tokens are written separated by spaces; the newline token ends a line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace smpipe::fuzz {

const std::vector<std::string>& primary_tokens();
const std::vector<std::string>& secondary_tokens();

// The .pipe text of a fuzz_pipe_tokens input.
std::string render_tokens(const std::uint8_t* data, std::size_t size);
// A .pipe text as token codes (for seeds): each token of the text as the same token of the tables where
// there is one; other identifiers become v0..v15 (consistently within the text), other numbers the nearest
// number of the primary table. Throws isa::InputError when the text does not lex.
std::vector<std::uint8_t> encode_tokens(const std::string& text);
// The libFuzzer dictionary of fuzz_pipe (fuzz/pipe.dict is this, committed).
std::string pipe_dictionary();

}  // namespace smpipe::fuzz
