// The memory behind the SMs (L2 and HBM) as a unit with implementations chosen in the machine file
// (section "l2", key "impl"). Units that move data to or from global memory ask it when a transfer that
// can start at `start` is done.
#pragma once

#include "models/gpu/unit.hpp"

namespace smpipe::models {

class MemoryHierarchy : public Unit {
 public:
  using Unit::Unit;
  std::string_view name() const override { return "l2"; }
  // When `bytes` moved between the SMs and global memory, issued at `start`, are through.
  virtual Cycle transfer(Cycle start, std::int64_t bytes) = 0;
};

// "single_queue": the whole GPU's L2 bandwidth as one shared queue, first come first served, no addresses,
// no latency of its own (the issuing unit adds its measured latency). First-order: it cannot tell hits
// from misses, nor near from far L2 partitions.
class SingleQueueL2 : public MemoryHierarchy {
 public:
  using MemoryHierarchy::MemoryHierarchy;
  Cycle transfer(Cycle start, std::int64_t bytes) override;
  void add_stats(Stats& stats, std::int64_t cycles, std::int64_t sms_used) const override;

 private:
  Cycle free_{0};
  double carry_ = 0;  // the fraction of a cycle the last transfer left over
};

}  // namespace smpipe::models
