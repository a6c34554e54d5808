// Shared arithmetic of data movement.
#pragma once

#include <cmath>
#include <cstdint>

#include "sim/cycle.hpp"

namespace smpipe::models {

// Cycles to move `bytes` at `per_cycle` bytes per cycle, rounded up.
inline std::int64_t transfer_cycles(std::int64_t bytes, double per_cycle) {
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(bytes) / per_cycle - 1e-9));
}

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A link of fixed bandwidth shared first come first served: a transfer starts when the link is free and
// holds it for its bytes at `per_cycle`; fractions of a cycle carry over to the next transfer.
class BandwidthQueue {
  using Cycle = sim::Cycle;

 public:
  // When `bytes` requested at `start` are through.
  Cycle serve(Cycle start, std::int64_t bytes, double per_cycle) {
    Cycle begin = sim::max(start, free_);
    double cycles = static_cast<double>(bytes) / per_cycle + carry_;
    auto whole = static_cast<std::int64_t>(cycles);
    carry_ = cycles - static_cast<double>(whole);
    free_ = begin + Cycle(whole);
    return free_;
  }

  // When the queue is through with everything it was given.
  Cycle free() const { return free_; }

 private:
  Cycle free_{0};
  double carry_ = 0;  // the fraction of a cycle the last transfer left over
};

}  // namespace smpipe::models
