#include "cli/replay.hpp"

#include <fmt/format.h>

#include <memory>

#include "cli/output.hpp"
#include "isa/ast.hpp"

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
  r.trace = traces::read_hwtrace(a.trace_file);
  traces::ReplayOptions ro;
  ro.full_grid = !a.recorded_only;
  ro.probe_cycles = a.probe_cycles;
  r.replay = traces::make_replay(r.trace, ro);
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

}  // namespace smpipe::cli
