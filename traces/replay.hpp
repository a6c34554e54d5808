// Replay: a hardware trace turned into a program that does what the traced warps did, op for op, with
// their barrier, stage and buffer identities, so that the simulator can run it and its times can be set
// beside the hardware's (traces/compare.hpp). docs/replay.md explains the rules.
//
// The program is built directly as a syntax tree (compiled like any program, never parsed); its .pipe text
// is written beside it, line for line, so that reports and --emit-pipe can show where an op stands. Each
// probe record is an op whose `origin` indexes the hardware events it stands for.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "isa/ast.hpp"
#include "traces/hwtrace.hpp"

namespace smpipe::traces {

struct ReplayOptions {
  // true: launch the kernel's whole grid (params.grid); CTAs that were not recorded run a copy of a recorded
  // CTA's ops (CTA c runs recorded CTA (c - first) mod slots), so the memory system sees the grid's load.
  // false: launch only the recorded CTAs.
  bool full_grid = true;
  // Cycles each probe record costs its warp (the probe's own time, part of every hardware gap), at most
  // kMaxProbeCycles. -1: the trace's smallest gap between two consecutive events of one warp.
  std::int64_t probe_cycles = -1;
  // The kernel's own instructions between its ops, which the trace's op vocabulary does not hold: cycles a warp
  // spends before an event, by the kind of the interval that ends at it (interval_kind, "arrive empty -> wait"; never
  // a blocking op's wait). Each becomes a `compute` before the event's record. Empty: none (the replay charges the
  // probe records alone). own_source names where they were measured (the program's comments and notes).
  std::map<std::string, std::int64_t> own_cycles;
  std::string own_source;
};

// One hardware event: ctas[slot].warps[warp_pos].events[event].
struct EventRef {
  int slot = 0;
  int warp_pos = 0;
  int event = 0;
};

struct Replay {
  isa::File file;                       // the program (compile it with isa::compile)
  std::string text;                     // the same program as .pipe text (file.source holds it)
  std::string source_name;              // name for messages: "TRACE (replay)"
  std::int64_t probe_cycles = 0;        // used
  std::int64_t ctas = 0;                // CTAs launched
  std::vector<std::int64_t> slot_cta;   // simulated CTA id of each recorded CTA (by slot)
  // Each probe record is a `compute` op with origin i: origin_events[i] are the hardware events it stands
  // for (one per warp that runs it; two per warp for the fused pairs).
  std::vector<std::vector<EventRef>> origin_events;
  std::vector<std::string> notes;       // what the replay could not reproduce exactly
  std::map<std::string, std::int64_t> own_cycles;  // the kernel's own instructions it charged (ReplayOptions::own_cycles)
  std::string own_source;
  // What they came to on the recorded CTAs: the warps' events with a `compute` of them before, and its cycles, summed
  // over those events.
  std::int64_t own_charged_events = 0, own_charged_cycles = 0;
};

// Bounds on what a replay may cost, checked before anything is built or run (docs/replay.md, "Limits"):
// - the launched CTAs times the events of the recorded CTA each one runs (the full grid of a 2^31-CTA params.grid
//   would run for hours): the committed traces need 2.5 million at most;
inline constexpr std::int64_t kMaxReplayRecords = std::int64_t{1} << 24;
// - the comparisons the merging of warpgroups' warps may make in all (a longest common subsequence of two event
//   sequences between wgmma ops: n x m each); the committed traces need ~10^5;
inline constexpr std::int64_t kMaxAlignCells = std::int64_t{1} << 28;
// - the cycles of one probe record (--probe-cycles).
inline constexpr std::int64_t kMaxProbeCycles = 1000000;
// Up to this many cells, an alignment keeps its whole table; beyond, every ~sqrt(n)-th row of it (the same
// result, in ~2 sqrt(n) rows of memory, in about twice the time).
inline constexpr std::int64_t kAlignFullTableCells = std::int64_t{1} << 22;

// Throws isa::InputError for a trace or options beyond the bounds above, or that the replay cannot reproduce.
Replay make_replay(const HwTrace& trace, const ReplayOptions& options);

// The merge of two sequences of step ids by longest common subsequence, as the replay merges the warps of a
// warpgroup: pairs (i, k) in order, i an index into `a` or -1, k into `b` or -1, each index once; equal steps
// are matched as early as possible, and where the alignment may go either way b's step comes first. Returns
// nothing when it would need more than `cells_left` comparisons (common leading steps are free); else takes
// what it used from `cells_left`.
std::optional<std::vector<std::pair<std::int32_t, std::int32_t>>> align_steps(const std::vector<std::int32_t>& a,
                                                                             const std::vector<std::int32_t>& b,
                                                                             std::int64_t& cells_left,
                                                                             std::int64_t full_table_cells = kAlignFullTableCells);

// The smallest gap between two consecutive events of one warp (0-cycle gaps of fused records excluded).
std::int64_t probe_cost(const HwTrace& trace);

// At most this many cycles of the kernel's own instructions before one event (ReplayOptions::own_cycles).
inline constexpr std::int64_t kMaxOwnCycles = 1000000;

}  // namespace smpipe::traces
