#include "cli/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "isa/ast.hpp"

namespace smpipe::cli {

models::RunOptions run_options(const RunArgs& a, std::uint64_t seed, int jitter_pct) {
  models::RunOptions opt;
  opt.seed = seed;
  opt.jitter_pct = jitter_pct;
  opt.max_cycles = a.max_cycles;
  opt.max_ops = a.max_ops;
  opt.hazards = !a.no_hazards;
  return opt;
}

Loaded load(const RunArgs& a) {
  isa::ParamOverrides overrides;
  for (const auto& d : a.defines) {
    auto [name, value] = isa::parse_define(d);
    overrides[name] = value;
  }
  Loaded l = api::load_program(a.file, overrides, a.gpu, a.kernel, a.clock_mhz);
  if (a.clock_mode.empty() || a.dump_program) return l;
  const models::Machine nominal = l.machine;
  const bool random = a.clock_mode == "sustained";
  // A machine whose clock under load was not measured on that GPU says so (the H200 borrows the H100's; the
  // B200's is its nominal clock).
  auto src = nominal.sources.find("load_clock_mhz");
  const bool estimated = src != nominal.sources.end() && src->second.rfind("estimate:", 0) == 0;
  const std::string under_load = estimated ? "sustained under load (estimated)" : "sustained under load";
  double busy = 0;
  if (random) {
    // The GPU-wide share of the tensor pipe's capacity the kernel uses, from a run at the load clock: without
    // jitter, so that the clock depends on the program and the machine alone (a check's seeds, and the rerun
    // of one of them, all get the same clock).
    l.machine = models::at_sm_clock(nominal, std::round(models::sustained_clock_mhz(nominal, 0, false)));
    models::RunOptions first = run_options(a, a.seed, 0);
    first.hazards = false;
    models::RunResult r = models::simulate(l.program, l.machine, first);
    for (const auto& u : r.stats.units)
      if (u.name == "tensor pipe")
        busy = u.utilisation * static_cast<double>(r.stats.sms_used) / static_cast<double>(std::max<std::int64_t>(1, nominal.sm_count));
  }
  const double mhz = std::round(models::sustained_clock_mhz(nominal, busy, random));
  const std::string basis = random ? fmt::format("{}, random data, tensor pipe {:.0f}% busy", under_load, 100 * std::clamp(busy, 0.0, 1.0))
                                   : under_load + ", constant data";
  l.machine = models::at_sm_clock(nominal, mhz);
  l.machine.clock_basis = basis;
  return l;
}

int exit_code(models::Outcome o) {
  switch (o) {
    case models::Outcome::kFinished: return kOk;
    case models::Outcome::kDeadlock:
    case models::Outcome::kWatchdog: return kDeadlock;
    case models::Outcome::kUndefined: return kUndefined;
  }
  return kInternal;
}

void parallel_for(int n, int jobs, const std::function<void(int)>& fn) {
  if (jobs <= 0) jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::min(jobs, n);
  if (jobs <= 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> workers;
  for (int t = 0; t < jobs; ++t)
    workers.emplace_back([&] {
      for (int i; (i = next.fetch_add(1)) < n;) {
        try {
          fn(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
          next = n;  // hand out nothing more
        }
      }
    });
  for (auto& w : workers) w.join();
  if (error) std::rethrow_exception(error);
}

namespace {
Ranks& the_ranks() {
  static Ranks r;
  return r;
}
}  // namespace

void set_ranks(Ranks r) { the_ranks() = std::move(r); }

std::vector<nlohmann::json> Ranks::gather_json(const nlohmann::json& mine) const {
  std::vector<nlohmann::json> all;
  for (const std::string& text : gather(mine.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)))
    for (const auto& j : nlohmann::json::parse(text)) all.push_back(j);
  return all;
}
const Ranks& ranks() { return the_ranks(); }

}  // namespace smpipe::cli
