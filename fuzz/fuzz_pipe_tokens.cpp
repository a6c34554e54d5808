// fuzz_pipe_tokens: token-aware .pipe fuzzing. The input bytes pick tokens of the .pipe vocabulary
// (pipe_vocab.hpp), so that byte mutations become token insertions, deletions and replacements and the
// program stays close to the syntax; then the same pipeline as fuzz_pipe.
#include "fuzz/common.hpp"
#include "fuzz/pipe_vocab.hpp"
#include "fuzz/targets.hpp"

namespace smpipe::fuzz {

int fuzz_one_pipe_tokens(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxFuzzInput / 8) return 0;  // a token is up to ~20 bytes of text
  run_pipe_text("fuzz_pipe_tokens", render_tokens(data, size));
  return 0;
}

}  // namespace smpipe::fuzz
