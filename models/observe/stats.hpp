// What a run measured: per-role busy/wait split, per-barrier phases and waits, unit utilisation.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace smpipe::models {

struct RoleStats {
  std::string name;
  std::int64_t warps = 0;      // warp instances that ran this role (over all CTAs)
  std::int64_t lifetime = 0;   // sum over those warps of (exit - start) cycles
  std::int64_t busy = 0;       // cycles issuing ops
  std::int64_t ops = 0;        // pipeline ops executed
  std::map<std::string, std::int64_t> waiting;  // cause -> cycles
  std::map<std::string, std::int64_t> regions;  // `region` name -> cycles spent inside (all warps)
};

struct BarrierStats {
  std::string name;
  std::int64_t phases = 0;       // phases completed (all elements, all CTAs)
  std::int64_t waits = 0;        // waits that blocked
  std::int64_t wait_cycles = 0;  // total blocked cycles
  std::int64_t wait_max = 0;
  // Blocking waits by length: bucket 0 counts waits of 0 cycles, bucket b > 0 those of [2^(b-1), 2^b).
  std::array<std::int64_t, 64> wait_histogram{};
  void add_wait(std::int64_t cycles) {
    wait_cycles += cycles;
    wait_max = std::max(wait_max, cycles);
    wait_histogram[cycles <= 0 ? 0 : static_cast<std::size_t>(std::bit_width(static_cast<std::uint64_t>(cycles)))] += 1;
  }
};

struct UnitStats {
  std::string name;
  std::int64_t busy = 0;  // unit-cycles busy
  double utilisation = 0;  // busy / (capacity over the run)
};

// Utilisation is busy time within the run, [0, cycles): a unit books its pipe when work is issued, and a run
// that stopped early (deadlock, watchdog, undefined behaviour), or whose warps exited while async work was
// still in flight, has booked time past its end. A pipe free from `free_at` was busy, at most, that long past
// `end` (its queue serves in order).
inline std::int64_t busy_past_end(std::int64_t free_at, std::int64_t end) { return std::max<std::int64_t>(0, free_at - end); }

// A unit with `lanes` parallel pipes on every SM used, busy `busy` pipe-cycles over a run of `cycles`.
inline UnitStats per_sm_unit(std::string name, std::int64_t busy, std::int64_t cycles, std::int64_t sms_used, int lanes = 1) {
  double cap = static_cast<double>(std::max<std::int64_t>(cycles, 1)) * static_cast<double>(std::max<std::int64_t>(sms_used, 1));
  return UnitStats{std::move(name), busy / lanes, static_cast<double>(busy) / (lanes * cap)};
}

struct Stats {
  std::string kernel;
  std::string machine;
  double clock_mhz = 0;
  std::string clock_basis;  // how clock_mhz was chosen (Machine::clock_basis; empty with --clock-mhz)
  std::int64_t cycles = 0;
  double time_us = 0;  // end to end: the SMs' span (cycles at the clock) plus launch_us
  std::int64_t ctas = 0;
  std::int64_t sms_used = 0;
  std::int64_t ops = 0;
  std::int64_t events = 0;
  std::int64_t flops = 0;
  std::int64_t bytes_loaded = 0;
  std::int64_t bytes_stored = 0;
  double launch_us = 0;  // the launch's fixed cost (machine launch_overhead_ns), in time_us
  // The memory hierarchy's split, where it has addresses (l2 cache_hbm); -1: not modelled.
  std::int64_t l2_hit_bytes = -1, l2_miss_bytes = -1, hbm_bytes = -1;
  std::int64_t hbm_read_bytes = -1;  // of hbm_bytes: the reads (misses and what their L2 promotion brings); the rest write-backs
  std::int64_t l2_merged_bytes = -1;  // of the hits: reads combined with a read of another SM of their group (TPC) in flight
  std::int64_t l2_outside_bytes = 0;  // box bytes read outside their tensor (zero-filled), when they cost the L2
  // The L2 at launch (cache_hbm): the bytes of the program's tensors, in whole L2 blocks, against its capacity, and
  // whether it started warm (holding all of them: RunOptions::warm_l2 and they fit) or cold; footprint -1: not modelled.
  std::int64_t l2_footprint_bytes = -1, l2_capacity_bytes = 0;
  std::int64_t l2_copies = 1;  // the L2 partitions that each keep a copy of the tensors (l2_partitions)
  bool l2_warm = false;
  std::int64_t l2_dirty_start_bytes = 0;  // another kernel's stores the L2 held dirty at launch (RunOptions::l2_dirty_bytes)
  bool l2_dirty_capped = false;  // ... fewer than asked: at most l2_dirty_left_share of the L2 is left dirty
  std::vector<std::string> l2_dirty_start_tensors;  // ... of the program's tensors of these names (RunOptions::l2_dirty_tensors)
  double l2_dirty_left_share = 1;
  std::vector<RoleStats> roles;
  std::vector<BarrierStats> barriers;
  std::vector<UnitStats> units;
  std::string bottleneck;  // in words
  std::int64_t peak_resident_ctas = 0;
  std::int64_t cta_slots = 0;  // CTA records the simulator held at most (reused once a cluster exits); not printed
  std::vector<std::pair<std::string, std::int64_t>> reports;  // the program's `report` figures
};

}  // namespace smpipe::models
