#include "models/memory/l2.hpp"

#include "models/gpu/simulator.hpp"

namespace smpipe::models {

Cycle SingleQueueL2::transfer(Cycle start, std::int64_t bytes) {
  Cycle begin = sim::max(start, free_);
  double cycles = static_cast<double>(bytes) / sim_.machine().l2_bytes_per_cycle + carry_;
  auto whole = static_cast<std::int64_t>(cycles);
  carry_ = cycles - static_cast<double>(whole);
  free_ = begin + Cycle(whole);
  return free_;
}

void SingleQueueL2::add_stats(Stats& s, std::int64_t cycles, std::int64_t) const {
  double per_cycle = sim_.machine().l2_bytes_per_cycle;
  double bytes = static_cast<double>(sim_.counters().bytes_loaded + sim_.counters().bytes_stored);
  s.units.push_back(UnitStats{"L2 bandwidth (whole GPU)", static_cast<std::int64_t>(bytes / per_cycle),
                              bytes / (per_cycle * static_cast<double>(std::max<std::int64_t>(cycles, 1)))});
}

}  // namespace smpipe::models
