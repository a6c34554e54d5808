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
#include <string>
#include <vector>

#include "isa/ast.hpp"
#include "traces/hwtrace.hpp"

namespace smpipe::traces {

struct ReplayOptions {
  // true: launch the kernel's whole grid (params.grid); CTAs that were not recorded run a copy of a recorded
  // CTA's ops (CTA c runs recorded CTA (c - first) mod slots), so the memory system sees the grid's load.
  // false: launch only the recorded CTAs.
  bool full_grid = true;
  // Cycles each probe record costs its warp (the probe's own time, part of every hardware gap).
  // -1: the trace's smallest gap between two consecutive events of one warp.
  std::int64_t probe_cycles = -1;
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
};

Replay make_replay(const HwTrace& trace, const ReplayOptions& options);

// The smallest gap between two consecutive events of one warp (0-cycle gaps of fused records excluded).
std::int64_t probe_cost(const HwTrace& trace);

}  // namespace smpipe::traces
