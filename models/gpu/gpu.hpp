// The GPU model: SMs holding CTAs, warps interpreting their role's bytecode, and the units they use
// (mbarriers, named barriers, TMA engine, tensor pipe, TMEM allocator, CLC, memory). Built from a
// compiled Program and a Machine; driven by sim::Engine. See DESIGN.md "Key mechanisms".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "isa/program.hpp"
#include "models/gpu/diagnosis.hpp"
#include "models/machine.hpp"
#include "models/observe/stats.hpp"
#include "models/sync/mbarrier.hpp"
#include "sim/engine.hpp"
#include "sim/rng.hpp"

namespace smpipe::sim {
class TraceWriter;
}  // namespace smpipe::sim

namespace smpipe::models {

using sim::TraceWriter;

// The start cycle of every op that warps of chosen CTAs execute, in execution order (smpipe compare sets
// simulated times beside hardware ones with it). Entries with op == kExit mark a warp's exit.
struct OpLog {
  static constexpr std::uint32_t kExit = ~0u;
  struct Entry {
    std::int64_t cta = 0;   // linear CTA id
    std::int32_t warp = 0;  // warp index in the CTA
    std::int32_t role = 0;  // role index in the Program
    std::uint32_t op = 0;   // op index in the role's RoleCode::ops, or kExit
    std::int64_t cycle = 0;
  };
  std::int64_t first_cta = 0, end_cta = 0;  // CTAs [first_cta, end_cta) are logged
  std::vector<Entry> entries;
  bool wants(std::int64_t cta) const { return cta >= first_cta && cta < end_cta; }
};

struct RunOptions {
  std::uint64_t seed = 1;
  int jitter_pct = 0;                      // latencies drawn uniformly in +-PCT%
  std::int64_t max_cycles = 100'000'000;   // watchdog
  std::int64_t max_instructions_without_time = 1'000'000;  // a warp looping without any op taking time
  TraceWriter* trace = nullptr;
  OpLog* op_log = nullptr;
};

struct RunResult {
  Outcome outcome = Outcome::kFinished;
  std::int64_t cycles = 0;
  std::optional<Diagnosis> diagnosis;  // kUndefined
  DeadlockReport deadlock;             // kDeadlock / kWatchdog
  std::string watchdog_reason;
  std::vector<std::string> notes;  // suspicious patterns seen during the run (reported with a problem)
  Stats stats;
};

// Throws isa::InputError when the program cannot run on the machine at all (a CTA that does not fit,
// tcgen05 ops on a machine without tensor memory, ...).
void check_fits(const isa::Program& program, const Machine& machine);

RunResult simulate(const isa::Program& program, const Machine& machine, const RunOptions& options);

// ---- internals shared by gpu.cpp, interpret.cpp and deadlock.cpp ----
namespace detail {

using sim::Cycle;

enum class WaitKind : std::uint8_t {
  kNone, kBarrier, kNamedBarrier, kCollective, kClusterSync, kTmemAlloc, kTimed,
};

enum class WarpState : std::uint8_t { kReady, kBlocked, kDone };

struct Warp {
  std::uint32_t cta = 0;        // CTA slot
  int index = 0;                // warp index in the CTA
  int role = -1;
  WarpState state = WarpState::kReady;
  std::uint32_t pc = 0;
  std::vector<std::int64_t> slots;
  std::vector<std::int64_t> stack;
  std::int64_t builtins[static_cast<int>(isa::Builtin::kCount)] = {};
  // what the warp waits for
  WaitKind wait = WaitKind::kNone;
  std::uint32_t wait_obj = 0;      // barrier flat index / named barrier id / ...
  std::int64_t wait_value = 0;     // phase waited on / columns requested / ...
  std::uint32_t wait_op = 0;       // op index in the role
  std::uint32_t last_op = ~0u;     // the op executed most recently
  std::uint16_t wait_cause = 0;
  Cycle wait_since{0};
  Cycle started{0};
  // per-thread async state (the warp stands for its lanes, or the elected one)
  std::vector<std::pair<Cycle, Cycle>> bulk_groups;  // committed TMA store groups: (smem read done, writes done)
  Cycle bulk_open_read{0}, bulk_open_write{0};
  std::vector<Cycle> cp_groups;   // committed cp.async groups: completion
  Cycle cp_open{0}, cp_all{0};
  Cycle tc_done{0};               // all tcgen05 async ops issued so far complete
  Cycle tc_cp_done{0};
  Cycle tmem_ld_done{0}, tmem_st_done{0};
  bool clc_failure_seen = false;
  // statistics
  std::int64_t busy = 0;
  std::int64_t ops = 0;
  std::vector<std::int64_t> waiting;  // by cause id
  std::vector<std::int64_t> region_start;  // per region: cycle entered (-1 outside)
  std::vector<std::int64_t> region_time;   // per region: cycles spent inside
};

struct NamedBarrier {
  std::int64_t expected = -1;  // threads of the current use (-1: not in use)
  std::int64_t arrived = 0;
  std::uint32_t first_op = 0;  // op that opened the use (for reports)
  int first_warp = -1;
  std::vector<std::uint32_t> waiters;  // warp ids
  std::vector<int> arrivers;           // warp indices in the CTA
};

struct WarpgroupState {
  int arrived = 0;
  std::uint32_t op = 0;
  std::vector<std::uint32_t> waiting;
  std::vector<Cycle> groups;  // committed wgmma groups: completion
  Cycle open_done{0};
  bool open_nonempty = false;
};

struct TmemAlloc {
  std::int64_t col = 0, cols = 0;
  isa::SourceLoc loc;
};

struct Cta {
  std::int64_t id = 0;   // linear CTA index in the grid
  std::int64_t cluster = 0;
  int rank = 0;
  int sm = 0;
  bool exited = false;
  int live_warps = 0;
  int exited_warps = 0;
  std::uint32_t first_warp = 0;  // warp ids [first_warp, first_warp + warps)
  std::vector<MBarrier> barriers;  // flat: barrier_base[decl] + element
  std::vector<std::vector<std::uint32_t>> barrier_waiters;
  std::vector<Cycle> barrier_last_complete;
  // Which warps arrived in the current and the previous phase: consecutive phases completed by disjoint
  // sets of warps usually mean more arrivals per phase than the barrier's count (reported as a note).
  std::vector<std::uint32_t> arrive_mask, last_arrive_mask;
  // Stage occupancy for the trace's counters: an element is "ready" from its phase completion until the
  // next arrival on it (a full stage not yet re-armed, a released slot not yet re-acquired).
  std::vector<std::uint8_t> ready;
  std::vector<std::uint32_t> passed_waits;  // waits on the element that returned (for deadlock hints)
  std::vector<std::int32_t> ready_count;  // per mbarrier declaration
  NamedBarrier named[16];
  std::vector<WarpgroupState> warpgroups;
  std::vector<TmemAlloc> tmem;
  bool relinquished = false;
  std::vector<std::pair<std::uint32_t, std::int64_t>> clc_responses;  // barrier flat -> value
  std::int64_t clc_latest = 0;
  bool clc_any = false;
  std::vector<std::uint32_t> smem_dirty;  // per smem element: warps with generic writes not yet fenced
};

struct Sm {
  int ctas = 0;
  int warps = 0;
  std::int64_t smem = 0;
  Cycle tma_free{0};
  Cycle lsu_free{0};
  Cycle pipe_free[4] = {};
  std::uint16_t tmem_used = 0;  // bitmap of 32-column chunks
  std::vector<std::uint32_t> tmem_waiters;  // warp ids, FIFO
};

struct Cluster {
  std::vector<std::uint32_t> ctas;  // CTA slots by rank
  int live_warps = 0;
  int sync_arrived = 0;
  std::vector<std::uint32_t> sync_waiters;
};

enum class AsyncKind : std::uint8_t { kArrive, kArriveDrop, kExpectTx, kCompleteTx, kClcResponse, kArriveExpectTx };

struct Async {
  AsyncKind kind = AsyncKind::kArrive;
  std::uint32_t cta = 0;
  std::uint32_t barrier = 0;
  std::int64_t value = 0;
  std::int64_t value2 = 0;
  std::uint32_t warp = 0;  // issuer
  std::uint32_t op = 0;    // issuer's op index
  std::uint64_t flow = 0;  // trace flow id (0: none)
};

}  // namespace detail

}  // namespace smpipe::models
