#include "cli/replay.hpp"

#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "cli/output.hpp"
#include "isa/ast.hpp"
#include "models/observe/report.hpp"

namespace smpipe::cli {

std::string machine_for(const traces::HwTrace& t) {
  std::string name = models::machine_for_gpu(t.gpu);
  if (!name.empty()) return name;
  throw isa::InputError(fmt::format("{}: no built-in machine for GPU '{}': name one with --gpu", t.path, t.gpu));
}

Replayed replay(const ReplayArgs& a, bool with_sim_trace) {
  Replayed r;
  std::unique_ptr<OutputFile> emit;
  if (!a.emit_pipe.empty()) emit = std::make_unique<OutputFile>(a.emit_pipe, "program file");
  protect_input(a.trace_file, "hardware trace");
  r.trace = traces::read_hwtrace(a.trace_file);
  traces::ReplayOptions ro;
  ro.full_grid = !a.recorded_only;
  ro.probe_cycles = a.probe_cycles;
  OwnTime own;
  if (!a.own_time.empty()) {
    own = own_time_of(a);
    ro.own_cycles = own.cycles;
    ro.own_source = a.own_time;
  }
  r.replay = traces::make_replay(r.trace, ro);
  if (!a.own_time.empty()) {
    r.replay.notes.push_back(fmt::format("the kernel's own instructions between ops, measured in {} ({} kind(s) of interval): "
                                         "{} cycles before {} of the recorded warps' events (a `compute` before each; docs/replay.md)",
                                         isa::printable(a.own_time), own.cycles.size(), r.replay.own_charged_cycles,
                                         r.replay.own_charged_events));
    if (own.kernel != r.trace.kernel || own.variant != r.trace.variant || own.gpu != r.trace.gpu)
      r.replay.notes.push_back(fmt::format("the own instructions come from kernel {} {} on {}; this trace is of {} {} on {}",
                                           isa::printable(own.kernel), isa::printable(own.variant), isa::printable(own.gpu),
                                           isa::printable(r.trace.kernel), isa::printable(r.trace.variant),
                                           isa::printable(r.trace.gpu)));
  }
  r.machine_name = a.gpu.empty() ? machine_for(r.trace) : a.gpu;
  r.machine = models::load_machine(r.machine_name);
  double clock = a.clock_mhz >= 0 ? a.clock_mhz : r.trace.sm_clock_mhz;
  if (clock > 0) r.machine = models::at_sm_clock(r.machine, clock);
  // The replay is a syntax tree already: compiled, not parsed.
  r.program = isa::compile(r.replay.file, {}, "", models::predefined_constants(r.machine));
  models::check_fits(r.program, r.machine);
  if (emit) emit->commit([&](std::ostream& f) { f << r.replay.text; });
  models::OpLog log;
  log.first_cta = r.replay.slot_cta.front();
  log.end_cta = r.replay.slot_cta.back() + 1;
  models::RunOptions opt;
  opt.seed = a.seed;
  opt.max_cycles = a.max_cycles;
  opt.max_ops = a.max_ops;
  opt.op_log = &log;
  // A trace cut by its window (or by its tile limit) stops its warps mid-stream: the exit rules do not apply.
  bool cut = r.trace.truncated;
  for (const auto& c : r.trace.ctas)
    for (const auto& w : c.warps) cut = cut || w.window_cut;
  opt.exit_checks = !cut;
  if (with_sim_trace) {
    r.sim_trace = std::make_unique<sim::TraceWriter>(r.machine.clock_mhz, r.replay.slot_cta.back() + 1);
    opt.trace = r.sim_trace.get();
  }
  r.result = models::simulate(r.program, r.machine, opt);
  // Simulated ops are joined to hardware events by the op's origin (the probe record it stands for).
  for (const auto& e : log.entries) {
    bool exit = e.op == models::OpLog::kExit;
    r.log.push_back({e.cta, e.warp, exit ? -1 : r.program.roles[e.role].ops[e.op].origin, exit, e.cycle});
  }
  return r;
}

OwnTime own_time_of(const ReplayArgs& args) {
  ReplayArgs m;  // the measuring replay: the same machine, probe cost, clock rule and limits, nothing written
  m.trace_file = args.own_time;
  m.gpu = args.gpu;
  m.recorded_only = args.recorded_only;
  m.probe_cycles = args.probe_cycles;
  m.clock_mhz = args.clock_mhz;
  m.seed = args.seed;
  m.max_cycles = args.max_cycles;
  m.max_ops = args.max_ops;
  Replayed r = replay(m, false);
  if (r.result.outcome != models::Outcome::kFinished)
    throw isa::InputError(fmt::format("--own-time {}: its replay did not finish, so it measures nothing:\n{}", isa::printable(args.own_time),
                                      models::format_problem(r.result)));
  traces::SimTimes times = traces::sim_times(r.trace, r.replay, r.log);
  traces::Comparison c = traces::compare(r.trace, r.replay, times, r.machine_name, r.result.cycles, r.machine.clock_mhz);
  OwnTime own;
  own.kernel = r.trace.kernel;
  own.variant = r.trace.variant;
  own.gpu = r.trace.gpu;
  // The waits the hardware's `bar.sync.end` records leave in the interval after them are the simulator's to time
  // too (it holds a warp at the barrier itself).
  const std::map<std::string, double> deferred = traces::deferred_barrier_waits(r.trace);
  for (const auto& g : c.intervals) {
    // A blocking op's wait (its kind has no arrow) is the simulator's to time; what a warp does between two events is
    // its own instructions plus what the replay already charges (the probe record, the op's issue).
    if (g.key.find(" -> ") == std::string::npos) continue;
    auto d = deferred.find(g.key);
    const double hw = g.hw_mean - (d == deferred.end() ? 0.0 : d->second);
    const std::int64_t cycles = std::llround(hw - g.sim_mean);
    if (cycles > 0) own.cycles[g.key] = std::min(cycles, traces::kMaxOwnCycles);
  }
  return own;
}

}  // namespace smpipe::cli
