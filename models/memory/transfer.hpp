// Shared arithmetic of data movement.
#pragma once

#include <cmath>
#include <cstdint>

namespace smpipe::models {

// Cycles to move `bytes` at `per_cycle` bytes per cycle, rounded up.
inline std::int64_t transfer_cycles(std::int64_t bytes, double per_cycle) {
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(bytes) / per_cycle - 1e-9));
}

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace smpipe::models
