// A small, portable, seeded random number generator (SplitMix64). The standard library's distributions
// are implementation-defined, so the simulator draws only through this class: the same seed gives the
// same numbers on every platform and compiler.
#pragma once

#include <cstdint>

namespace smpipe::sim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  // Uniform integer in [lo, hi] (inclusive). Modulo bias is below 2^-40 for the small ranges used here.
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<std::int64_t>(next() % span);
  }

 private:
  std::uint64_t state_;
};

}  // namespace smpipe::sim
