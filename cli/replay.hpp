// Replay of a hardware trace through the simulator: the trace read, turned into a program, run at the
// trace's SM clock with the op log on, and the log turned into the replay's terms. Used by `smpipe replay`
// and `smpipe compare` (and the tests).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "isa/program.hpp"
#include "models/gpu/gpu.hpp"
#include "models/machine.hpp"
#include "sim/trace_writer.hpp"
#include "traces/compare.hpp"
#include "traces/hwtrace.hpp"
#include "traces/replay.hpp"

namespace smpipe::cli {

struct ReplayArgs {
  std::string trace_file;
  std::string gpu;
  bool recorded_only = false;
  std::int64_t probe_cycles = -1;
  double clock_mhz = -1;
  std::string emit_pipe;
  std::string own_time;         // a hardware trace of the same kernel whose intervals give its own instructions (--own-time)
  std::string trace;            // replay: Chrome trace of the simulation; compare: the combined trace
  bool json = false;
  std::string csv_dir;          // replay: the run's tables; compare: the comparison's tables (CSV files in this folder)
  std::string html;             // replay: a self-contained HTML report of the replayed run
  std::uint64_t seed = 1;
  std::int64_t max_cycles = 100'000'000;
  std::int64_t max_ops = models::kDefaultMaxOps;
};

struct Replayed {
  traces::HwTrace trace;
  traces::Replay replay;
  isa::Program program;
  models::Machine machine;
  std::string machine_name;
  models::RunResult result;
  std::vector<traces::LoggedOp> log;
  std::unique_ptr<sim::TraceWriter> sim_trace;  // the simulation's own Chrome trace (replay --trace)
};

// The built-in machine for a trace's GPU name (H100 -> h100-sxm, ...). Throws isa::InputError.
std::string machine_for(const traces::HwTrace& trace);

// Throws isa::InputError for a bad trace or one that cannot be replayed. The --emit-pipe file is written
// only once the generated program compiled (a rejected trace leaves none).
Replayed replay(const ReplayArgs& args, bool with_sim_trace);

// The kernel's own instructions between ops, measured in the hardware trace args.own_time by replaying it without
// them: for every kind of interval that ends at an op or marker (not a blocking op's wait), the hardware's mean less
// the replay's, where that is positive (traces::ReplayOptions::own_cycles); and what that trace is. Throws
// isa::InputError when that trace cannot be read or replayed, or its replay does not finish.
struct OwnTime {
  std::map<std::string, std::int64_t> cycles;
  std::string kernel, variant, gpu;  // the measuring trace's
};
OwnTime own_time_of(const ReplayArgs& args);

}  // namespace smpipe::cli
