// The GPU model's entry points: simulate a compiled Program on a Machine. The simulator core and its
// units are in models/gpu/simulator.hpp and the unit rooms (docs/architecture.md).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "isa/program.hpp"
#include "models/machine.hpp"
#include "models/observe/observer.hpp"
#include "models/observe/op_log.hpp"
#include "models/observe/result.hpp"

namespace smpipe::sim {
class TraceWriter;
}  // namespace smpipe::sim

namespace smpipe::models {

using sim::TraceWriter;

inline constexpr std::int64_t kDefaultMaxOps = std::int64_t{1} << 28;
// CTA launches have a budget of their own, one per kCtaLaunchOps ops of --max-ops (a launch costs the simulator about as
// much as that many ops): by default at most 2^24 CTAs per run; a smaller --max-ops still lets kMinCtaBudget CTAs run.
inline constexpr std::int64_t kCtaLaunchOps = 16;
inline constexpr std::int64_t kMinCtaBudget = std::int64_t{1} << 16;

struct RunOptions {
  std::uint64_t seed = 1;
  int jitter_pct = 0;                      // latencies drawn uniformly in +-PCT%
  std::int64_t max_cycles = 100'000'000;   // watchdog on simulated time (at most isa::kMaxCycleLimit)
  // Watchdog on work: ops executed by all warps together. The default, 2^28, is ~10x what the largest built-in
  // model needs at 8192^3 (28 M ops) and about 25 s of simulation on one core.
  std::int64_t max_ops = kDefaultMaxOps;
  std::int64_t max_instructions_without_time = 1'000'000;  // a warp looping without any op taking time
  // The data-hazard checker (models/memory/hazards.hpp): races on shared memory, TMEM and CLC responses, and
  // barrier inits not ordered before their uses. Off, a run takes the same time and finds none of them.
  bool hazards = true;
  // A CTA must not exit before its async ops are done for it (the hazard checker's exit rule). A replay of a trace cut
  // by its window turns it off: its warps stop mid-stream, with loads and stores the hardware finished later.
  bool exit_checks = true;
  // What the L2 holds at launch (cache_hbm): warm, every block of the program's tensors when they all fit in it (what a
  // previous launch of the same kernel leaves, as in a benchmark's back-to-back launches); cold, nothing.
  bool warm_l2 = true;
  // And, with warm_l2 false, blocks of another kernel's stores it holds dirty (what a kernel that left this many bytes
  // dirty leaves: they are written back to HBM as this launch's blocks evict them); at most the machine's
  // l2_dirty_left_share of the L2; 0: none.
  std::int64_t l2_dirty_bytes = 0;
  // Or, with warm_l2 false, the blocks of these tensors of the program held dirty, as the kernel that wrote them leaves
  // them (its output is this launch's input): in the order named, the last blocks of their rows, at most
  // l2_dirty_left_share of the L2; each in one partition. Names the program does not declare: an input error.
  std::vector<std::string> l2_dirty_tensors;
  TraceWriter* trace = nullptr;            // the Chrome trace (an observer the run adds)
  OpLog* op_log = nullptr;                 // the op log (an observer the run adds)
  std::vector<Observer*> observers;        // further observers, called after those two
  // Called now and then during the run (about every 2^16 events) with how far it got; for a progress line.
  struct Progress {
    std::int64_t cycle = 0, ctas_done = 0, ctas = 0, ops = 0;
  };
  std::function<void(const Progress&)> progress;
};

// An input error (isa::InputError, led by `option`) unless every name is a tensor the program declares
// (RunOptions::l2_dirty_tensors).
void check_l2_tensors(const isa::Program& program, const std::vector<std::string>& names, const std::string& option);

// Throws isa::InputError when the program cannot run on the machine at all (a CTA that does not fit,
// tcgen05 ops on a machine without tensor memory, ...).
void check_fits(const isa::Program& program, const Machine& machine);

RunResult simulate(const isa::Program& program, const Machine& machine, const RunOptions& options);

}  // namespace smpipe::models
