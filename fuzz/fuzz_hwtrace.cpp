// fuzz_hwtrace: arbitrary bytes as an smpipe-hwtrace v1 file (docs/trace-format.md), through what
// `smpipe compare` does: read, replay program, compile, simulate with the op log, map the simulated times back
// to the hardware events, compare, and write every report. Structure-aware: mutate_hwtrace changes values of
// the JSON tree (json_mutator.hpp).
#include <ostream>
#include <streambuf>
#include <string>

#include "fuzz/common.hpp"
#include "fuzz/json_mutator.hpp"
#include "fuzz/targets.hpp"
#include "isa/ast.hpp"
#include "isa/ops.hpp"
#include "models/observe/op_log.hpp"
#include "models/observe/report.hpp"
#include "traces/compare.hpp"
#include "traces/hwtrace.hpp"
#include "traces/replay.hpp"

namespace smpipe::fuzz {

namespace {

void replay_and_compare(const std::string& text, bool full_grid) {
  traces::HwTrace trace = traces::parse_hwtrace(text, "fuzz.hwtrace.json");
  traces::ReplayOptions ro;
  ro.full_grid = full_grid;
  traces::Replay replay = traces::make_replay(trace, ro);
  // As cli::replay, except that an unknown GPU runs on h100-sxm (the CLI would ask for --gpu).
  models::Machine machine = builtin_machine_or_default(models::machine_for_gpu(trace.gpu));
  if (trace.sm_clock_mhz > 0) machine = models::at_sm_clock(machine, trace.sm_clock_mhz);
  isa::Program program = isa::compile(replay.file, {}, "", models::predefined_constants(machine));
  models::check_fits(program, machine);
  if (replay.slot_cta.empty()) fail("fuzz_hwtrace", "make_replay returned no recorded CTA (cli::replay reads slot_cta.front())");
  models::OpLog log;
  log.first_cta = replay.slot_cta.front();
  log.end_cta = replay.slot_cta.back() + 1;
  models::RunOptions opt = small_run_options();
  opt.op_log = &log;
  models::RunResult result = models::simulate(program, machine, opt);
  std::vector<traces::LoggedOp> logged;
  for (const auto& e : log.entries) {
    bool exit = e.op == models::OpLog::kExit;
    if (!exit && (e.role < 0 || static_cast<std::size_t>(e.role) >= program.roles.size() ||
                  e.op >= program.roles[static_cast<std::size_t>(e.role)].ops.size()))
      fail("fuzz_hwtrace", "the op log names an op the program does not have");
    logged.push_back({e.cta, e.warp, exit ? -1 : program.roles[static_cast<std::size_t>(e.role)].ops[e.op].origin, exit, e.cycle});
  }
  NullBuf nb;
  std::ostream null(&nb);
  null << replay.text << models::format_problem(result) << models::to_json(result, program).dump();
  if (result.outcome != models::Outcome::kFinished) return;
  traces::SimTimes times = traces::sim_times(trace, replay, logged);
  traces::Comparison c = traces::compare(trace, replay, times, machine.name, result.cycles, machine.clock_mhz);
  null << traces::format_comparison(c) << traces::to_json(c).dump(2);
  traces::write_combined_trace(trace, times, c.clock_mhz, null);
}

const JsonVocabulary& hwtrace_vocabulary() {
  static const JsonVocabulary v = [] {
    JsonVocabulary v;
    for (const char* op : {"wait", "arrive", "arrive.expect_tx", "expect_tx", "tma.load", "tma.store", "tma.commit",
                           "tma.wait", "tma.wait.read", "wgmma.fence", "wgmma", "wgmma.commit", "wgmma.wait", "bar.sync",
                           "fence.proxy.async", "ld.shared", "st.shared", "compute"}) {
      v.strings.emplace_back(op);
      v.strings.push_back(std::string(op) + ".end");
    }
    for (const isa::OpSpec& s : isa::all_ops()) v.strings.emplace_back(s.name);
    for (const char* w : {"tile", "epilogue", "tail", "exit", "smpipe-hwtrace", "mbarrier", "named", "producer",
                          "consumer", "epilogue_load", "none", "bf16", "f16", "e4m3", "tf32", "fp4", "NVIDIA H100 80GB HBM3",
                          "NVIDIA H200", "NVIDIA B200", "H100", "GeForce", "full", "empty", "c_full", "c_empty",
                          "load_order", "epi", "A", "B", "C", "D", "sA", "sB", "sC", "sD", "k2_gemm"})
      v.strings.emplace_back(w);
    v.keys = {"format", "version", "kernel", "variant", "gpu", "sm_clock_mhz", "date", "command", "params", "barriers",
              "tensors", "smem", "probe", "run", "ctas", "name", "kind", "size", "count", "named_id", "dtype", "shape",
              "box", "swizzle", "smem_size", "bytes", "record_bytes", "slots", "cta_first", "capacity", "tile_limit",
              "truncated", "unwritten", "kernel_ms", "sm_count", "cta", "sm", "clock_start", "clock_end",
              "globaltimer_start", "globaltimer_end", "dropped", "warps", "warp", "role", "lanes", "window_cut", "end",
              "events", "grid", "cluster", "wgmma", "per_event", "a", "b", "M", "N", "K", "tile", "stages",
              "epilogue_tile", "group_m", "l2_promotion"};
    return v;
  }();
  return v;
}

}  // namespace

int fuzz_one_hwtrace(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxFuzzInput) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  // The whole grid (the CLI's default) or only the recorded CTAs (--recorded-only), by the input.
  guarded("fuzz_hwtrace", [&] { replay_and_compare(text, (input_hash(data, size) & 1) == 0); });
  return 0;
}

std::size_t mutate_hwtrace(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed, MutateFn fallback) {
  return mutate_json(data, size, max_size, seed, hwtrace_vocabulary(), fallback);
}

}  // namespace smpipe::fuzz
