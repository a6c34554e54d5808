// The libFuzzer entry points of one fuzz target (fuzz/CMakeLists.txt compiles this file once per target with
// SMPIPE_FUZZ_ONE = its fuzz_one_* function and, for the JSON targets, SMPIPE_FUZZ_MUTATOR = its mutator).
#include <cstddef>
#include <cstdint>

#include "fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return smpipe::fuzz::SMPIPE_FUZZ_ONE(data, size);
}

#ifdef SMPIPE_FUZZ_MUTATOR
extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  return smpipe::fuzz::SMPIPE_FUZZ_MUTATOR(data, size, max_size, seed, LLVMFuzzerMutate);
}
#endif
