// Compare: a hardware trace and the simulation of its replay, event by event. End-to-end time per recorded
// CTA (and of the kernel when the whole launch was replayed), the per-role busy / wait split side by side,
// the distribution of per-event timing errors, the intervals whose simulated length is furthest from the
// hardware's (where the model's errors come from), and one Chrome trace with both timelines as
// neighbouring tracks.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "traces/hwtrace.hpp"
#include "traces/replay.hpp"

namespace smpipe::traces {

// compare --json: the comparison names its format in "schema" (docs/json.md).
inline constexpr const char* kCompareSchema = "smpipe-compare/1";

// An op start the simulator logged, in the replay program's terms. line 0 = the warp exited.
struct LoggedOp {
  std::int64_t cta = 0;
  int warp = 0;
  int origin = -1;    // the op's origin (Replay::origin_events); -1: not a probe record
  bool exit = false;  // the warp's exit
  std::int64_t cycle = 0;
};

// Simulated times in the hardware trace's shape: cycles since the simulated CTA started (-1: not reached).
struct SimTimes {
  std::vector<std::vector<std::vector<std::int64_t>>> event;  // [slot][warp position][event]
  std::vector<std::vector<std::int64_t>> warp_end;            // [slot][warp position]
  std::vector<std::int64_t> cta_start;                        // [slot]: absolute simulated cycle
};

SimTimes sim_times(const HwTrace& trace, const Replay& replay, const std::vector<LoggedOp>& log);

struct Percentiles {
  std::int64_t n = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

struct CtaSpan {
  std::int64_t cta = 0;
  std::int64_t hw = 0, sim = -1;  // cycles from the CTA's start to its last warp's end (or window end)
};

struct RoleSplit {
  std::string role;
  std::int64_t warps = 0;
  std::int64_t hw_life = 0, hw_wait = 0, sim_life = 0, sim_wait = 0;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> waits;  // "wait full" -> (hw, sim) cycles
};

// Intervals from one event to the next in the same warp, grouped by what the first event is.
struct IntervalGroup {
  std::string key;  // "wait full" (X -> X.end), or the op after which the gap runs ("tma.load A", "wgmma", ...)
  std::int64_t count = 0;
  double hw_mean = 0, sim_mean = 0;
  double abs_error = 0;  // sum over the group of |sim - hw| cycles
};

struct Comparison {
  std::string trace, machine;
  double clock_mhz = 0;  // the simulated SM clock; converts cycles to time
  bool clock_from_trace = false;
  std::int64_t probe_cycles = 0, ctas_launched = 0;
  bool windowed = false;  // truncated trace: spans end at the window's last event, exits not compared
  std::vector<CtaSpan> ctas;
  // The kernel (when the whole launch was replayed): simulated time; the recorded CTAs' span by %globaltimer
  // (first start to last end); the CUDA-event time of the traced launch (it includes the launch overhead).
  double kernel_sim_us = -1, kernel_hw_span_us = -1, kernel_hw_event_us = -1;
  std::int64_t sim_cycles = 0;
  std::int64_t events = 0, missing = 0;  // events compared / events the simulation never reached
  Percentiles event_error;      // |sim - hw| event time, cycles
  Percentiles event_error_pct;  // the same as % of the CTA's hardware span
  Percentiles interval_error;   // |sim - hw| length of each interval, cycles
  std::vector<RoleSplit> roles;
  std::vector<IntervalGroup> intervals;  // largest total error first
  std::vector<std::string> notes;
  std::map<std::string, std::int64_t> own_cycles;  // the kernel's own instructions the replay charged (--own-time), by kind
  std::string own_source;                          // the trace they were measured in ("": none)
};

// `clock_mhz`: the SM clock the simulation ran at.
Comparison compare(const HwTrace& trace, const Replay& replay, const SimTimes& sim, const std::string& machine,
                   std::int64_t sim_cycles, double clock_mhz);
std::string format_comparison(const Comparison& c);
nlohmann::json to_json(const Comparison& c);
// Both timelines in one Chrome trace file: per recorded CTA a process, per warp a hardware track and a
// simulation track next to it; a slice per interval between events.
void write_combined_trace(const HwTrace& trace, const SimTimes& sim, double clock_mhz, std::ostream& out);

}  // namespace smpipe::traces
