// The core's records of what the SMs hold: resident CTAs, their warps (each interpreting its role's
// bytecode) and clusters, and the SM resources that decide where a CTA can be placed. The state of each primitive
// (barriers, bulk groups, tensor memory, ...) lives in its unit, indexed by the same CTA slot and warp id.
//
// Slots are reused: a CTA slot (and the warp ids that belong to it) is freed when every CTA of its cluster
// has exited, so the simulator's memory follows the CTAs that are resident, not the CTAs launched.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/program.hpp"
#include "sim/cycle.hpp"

namespace smpipe::models {

using sim::Cycle;

enum class WarpState : std::uint8_t { kReady, kBlocked, kDone };

inline constexpr std::int16_t kNoUnit = -1;  // a wait that no unit owns: it ends at a known cycle

struct alignas(64) Warp {
  std::uint32_t cta = 0;  // CTA slot
  int index = 0;          // warp index in the CTA
  int role = -1;
  WarpState state = WarpState::kReady;
  std::uint32_t pc = 0;
  // The warp's latest register work (a `compute` op of positive cycles: its op index) since the tensor unit last
  // cleared it, at the warpgroup's wgmma.fence or wgmma (~0u: none): a wgmma after register work and no fence is a
  // warning. (In the padding before `slots`: the record keeps its size.)
  std::uint32_t reg_work = ~0u;
  // (The fields each activation of the warp reads come first, the built-ins last: they share fewer cache lines.)
  std::vector<std::int64_t> slots;  // the role's variables, then (from stack_at) the expression stack
  std::uint32_t stack_at = 0;
  // What the warp waits for: the unit that owns the wait (kNoUnit: a timed wait), the object in that
  // unit (barrier flat index, named barrier id, warpgroup, SM ...) and a value (phase, columns ...).
  std::int16_t wait_unit = kNoUnit;
  std::uint16_t wait_cause = 0;
  std::uint32_t wait_obj = 0;
  std::int64_t wait_value = 0;
  std::uint32_t wait_op = 0;    // op index in the role
  std::uint32_t last_op = ~0u;  // the op executed most recently
  Cycle wait_since{0};
  // statistics
  std::int64_t busy = 0;
  std::int64_t busy_until = 0;  // when the op the warp is issuing ends (a run that stops before counts up to the stop)
  std::int64_t ops = 0;
  std::vector<std::int64_t> waiting;       // by cause id
  Cycle started{0};
  std::vector<std::int64_t> region_start;  // per region: cycle entered (-1 outside)
  std::vector<std::int64_t> region_time;   // per region: cycles spent inside
  std::int64_t builtins[static_cast<int>(isa::Builtin::kCount)] = {};
};

struct Cta {
  std::int64_t id = -1;          // linear CTA index in the grid (-1: slot free)
  std::int64_t cluster = 0;      // cluster index in the grid
  std::uint32_t cluster_slot = 0;
  int rank = 0;
  int sm = 0;
  bool exited = false;
  int live_warps = 0;
  int exited_warps = 0;
  std::uint32_t first_warp = 0;  // warp ids [first_warp, first_warp + warps)
  std::int64_t launch_seq = 0;   // CTAs launched before this one
};

struct Cluster {
  std::int64_t index = -1;          // cluster index in the grid (-1: slot free)
  std::vector<std::uint32_t> ctas;  // CTA slots by rank
  int live_warps = 0;
  int live_ctas = 0;
};

// Placement resources of one SM (what decides whether another CTA fits).
struct SmResources {
  int ctas = 0;
  int warps = 0;
  std::int64_t smem = 0;
  std::int64_t regs = 0;
};

}  // namespace smpipe::models
