// fuzz_pipe: arbitrary bytes as a .pipe program, through the whole front end and the simulator
// (docs/fuzzing.md). The dictionary fuzz/pipe.dict (pipe_vocab.hpp) helps libFuzzer find the words.
#include <string>

#include "fuzz/common.hpp"
#include "fuzz/targets.hpp"

namespace smpipe::fuzz {

int fuzz_one_pipe(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxFuzzInput) return 0;
  run_pipe_text("fuzz_pipe", std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}

}  // namespace smpipe::fuzz
