// The fuzz targets (docs/fuzzing.md) as plain functions, so that the libFuzzer binaries (libfuzzer_main.cpp,
// built with clang when SMPIPE_FUZZ is ON) and the regression runner of the normal build (regress.cpp, any
// compiler, no libFuzzer) run the same code on an input.
//
// Each fuzz_one_* takes arbitrary bytes and returns 0. Rejection of bad input (isa::InputError) is the
// expected outcome; any other exception escaping the library, a broken invariant or a sanitizer report
// aborts the process, which is how libFuzzer (and the regression test) see a failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace smpipe::fuzz {

// Inputs larger than this are ignored (the real inputs are a few KB; larger ones only slow the fuzzer down).
inline constexpr std::size_t kMaxFuzzInput = std::size_t{64} << 10;

// Simulation limits of every target: small enough that one input runs in well under a second.
inline constexpr std::int64_t kMaxCycles = 200'000;
inline constexpr std::int64_t kMaxOps = 200'000;
inline constexpr std::int64_t kMaxInstructionsWithoutTime = 100'000;

// bytes -> .pipe text -> parse -> compile (each kernel) -> check_fits -> simulate -> reports.
int fuzz_one_pipe(const std::uint8_t* data, std::size_t size);
// bytes -> tokens of the .pipe vocabulary (pipe_vocab.hpp) -> the same as fuzz_one_pipe.
int fuzz_one_pipe_tokens(const std::uint8_t* data, std::size_t size);
// bytes -> smpipe-hwtrace v1 JSON -> parse_hwtrace -> make_replay -> compile -> simulate -> compare.
int fuzz_one_hwtrace(const std::uint8_t* data, std::size_t size);
// bytes -> machine file JSON -> parse_machine -> built-in example programs compiled and simulated on it.
int fuzz_one_machine(const std::uint8_t* data, std::size_t size);

// libFuzzer's LLVMFuzzerMutate (or a stand-in in the regression runner).
using MutateFn = std::size_t (*)(std::uint8_t* data, std::size_t size, std::size_t max_size);

// Structure-aware mutators of the JSON targets (json_mutator.hpp): mutate one value of the JSON tree when the
// input parses as JSON, else fall back to `fallback`.
std::size_t mutate_hwtrace(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed, MutateFn fallback);
std::size_t mutate_machine(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed, MutateFn fallback);

struct Target {
  const char* name;  // "fuzz_pipe": the binary, the corpus and the tests/fuzz_regressions/ folder
  int (*one)(const std::uint8_t*, std::size_t);
};
const std::vector<Target>& targets();

}  // namespace smpipe::fuzz
