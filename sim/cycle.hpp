// Simulated time: an integer count of SM clock cycles, as a strong type so that cycles never mix with
// byte counts or indices by accident.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace smpipe::sim {

struct Cycle {
  std::int64_t v = 0;

  constexpr Cycle() = default;
  constexpr explicit Cycle(std::int64_t value) : v(value) {}
  static constexpr Cycle max() { return Cycle(std::numeric_limits<std::int64_t>::max()); }

  constexpr auto operator<=>(const Cycle&) const = default;
  constexpr Cycle operator+(Cycle o) const { return Cycle(v + o.v); }
  constexpr Cycle operator-(Cycle o) const { return Cycle(v - o.v); }
  constexpr Cycle& operator+=(Cycle o) {
    v += o.v;
    return *this;
  }
};

constexpr Cycle max(Cycle a, Cycle b) { return a < b ? b : a; }
constexpr Cycle min(Cycle a, Cycle b) { return b < a ? b : a; }

}  // namespace smpipe::sim
