#include "api/smpipe.hpp"

#include <fmt/format.h>

#include <cmath>

#include "api/load.hpp"
#include "isa/limits.hpp"
#include "isa/ast.hpp"
#include "models/gpu/gpu.hpp"
#include "models/observe/report.hpp"

namespace smpipe {

struct Simulation::Impl {
  std::string program;
  Options options;
  isa::ParamOverrides params;

  api::Loaded load() const {
    try {
      return api::load_program(program, params, options.gpu, options.kernel, options.clock_mhz);
    } catch (const isa::InputError& e) {
      throw Error(e.what());
    }
  }
};

Simulation::Simulation(std::string program, Options options, const char* installed_data_dir) : impl_(std::make_unique<Impl>()) {
  detail::use_installed_data(installed_data_dir);
  impl_->program = std::move(program);
  impl_->options = std::move(options);
}
Simulation::~Simulation() = default;
Simulation::Simulation(Simulation&&) noexcept = default;
Simulation& Simulation::operator=(Simulation&&) noexcept = default;

Simulation& Simulation::set(const std::string& param, std::int64_t value) {
  impl_->params[param] = value;
  return *this;
}

Simulation& Simulation::options(const Options& o) {
  impl_->options = o;
  return *this;
}

std::map<std::string, std::int64_t> Simulation::params() const {
  api::Loaded l = impl_->load();
  return {l.program.params.begin(), l.program.params.end()};
}

Result Simulation::run() const {
  const Options& o = impl_->options;
  // The command line's ranges (docs/cli.md): the engine relies on them.
  if (o.jitter_pct < 0 || o.jitter_pct > 100) throw Error(fmt::format("jitter_pct={} out of range 0..100", o.jitter_pct));
  if (o.max_cycles < 1 || o.max_cycles > isa::kMaxCycleLimit)
    throw Error(fmt::format("max_cycles={} out of range 1..{}", o.max_cycles, isa::kMaxCycleLimit));
  if (o.max_ops < 0 || o.max_ops > isa::kMaxCycleLimit) throw Error(fmt::format("max_ops={} out of range 0..{}", o.max_ops, isa::kMaxCycleLimit));
  if (o.l2_dirty_bytes < 0) throw Error(fmt::format("l2_dirty_bytes={} is negative", o.l2_dirty_bytes));
  if (o.l2_dirty_bytes > 0 && o.warm_l2) throw Error("l2_dirty_bytes needs warm_l2 false (a dirty start holds none of the tensors)");
  if (!o.l2_dirty_tensors.empty() && o.warm_l2) throw Error("l2_dirty_tensors needs warm_l2 false");
  if (!o.l2_dirty_tensors.empty() && o.l2_dirty_bytes > 0) throw Error("l2_dirty_tensors and l2_dirty_bytes exclude each other");
  if (!std::isfinite(o.clock_mhz) || o.clock_mhz < 0) throw Error(fmt::format("clock_mhz={} is not a clock", o.clock_mhz));
  if (!api::is_clock_mode(o.clock))
    throw Error(fmt::format("clock=\"{}\" is not sustained, sustained-constant or boost", isa::printable(o.clock)));
  if (o.clock_mhz > 0 && !o.clock.empty()) throw Error("clock and clock_mhz exclude each other");
  api::Loaded l = impl_->load();
  models::RunOptions opt;
  opt.seed = impl_->options.seed;
  opt.jitter_pct = impl_->options.jitter_pct;
  opt.max_cycles = impl_->options.max_cycles;
  if (impl_->options.max_ops > 0) opt.max_ops = impl_->options.max_ops;
  opt.warm_l2 = impl_->options.warm_l2;
  opt.l2_dirty_bytes = impl_->options.l2_dirty_bytes;
  opt.l2_dirty_tensors = impl_->options.l2_dirty_tensors;
  try {
    models::check_l2_tensors(l.program, opt.l2_dirty_tensors, "l2_dirty_tensors");
  } catch (const isa::InputError& e) {
    throw Error(e.what());
  }
  if (o.clock_mhz <= 0) {
    try {
      api::set_clock(l, o.clock, opt);
    } catch (const isa::InputError& e) {
      throw Error(e.what());
    }
  }
  models::RunResult r = models::simulate(l.program, l.machine, opt);
  nlohmann::json j = models::to_json(r, l.program);
  Result out;
  switch (r.outcome) {
    case models::Outcome::kFinished: out.outcome = Outcome::kFinished; break;
    case models::Outcome::kDeadlock: out.outcome = Outcome::kDeadlock; break;
    case models::Outcome::kWatchdog: out.outcome = Outcome::kWatchdog; break;
    case models::Outcome::kUndefined:
      out.outcome = r.diagnosis && r.diagnosis->hazard ? Outcome::kHazard : Outcome::kUndefinedBehaviour;
      break;
  }
  out.exit_code = out.outcome == Outcome::kFinished ? 0 : out.outcome == Outcome::kDeadlock || out.outcome == Outcome::kWatchdog ? 2 : 3;
  out.cycles = r.cycles;
  out.time_us = j.value("time_us", 0.0);
  out.tflops = j.value("tflops", 0.0);
  out.clock_mhz = l.machine.clock_mhz;
  out.clock_basis = l.machine.clock_basis;
  out.bottleneck = j.value("bottleneck", "");
  out.summary = models::format_summary(r, l.program);
  out.problem = models::format_problem(r);
  out.json = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  return out;
}

std::string version() { return SMPIPE_VERSION; }

namespace detail {

void use_installed_data(const char* dir) {
  if (dir != nullptr && *dir != '\0') models::set_installed_data_dir(dir);
}

// The data folders' own errors (SMPIPE_KERNELS / SMPIPE_MACHINES set to what is not a folder) as the API's Error.
template <class F>
auto as_api_error(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const isa::InputError& e) {
    throw Error(e.what());
  }
}

std::string models_dir() { return as_api_error([] { return models::kernels_dir(); }); }
std::string machines_dir() { return as_api_error([] { return models::machines_dir(); }); }

std::vector<std::string> builtin_models() {
  const std::string dir = models_dir();
  std::vector<std::string> out;
  for (const auto& n : as_api_error([] { return api::builtin_model_names(); })) {
    try {  // files of procs and constants that models import are not models
      if (!isa::parse(isa::load_source(dir + "/" + n + ".pipe")).kernels.empty()) out.push_back(n);
    } catch (const isa::InputError&) {
      out.push_back(n);  // a model that does not compile (a catalogue entry) is still a model
    }
  }
  return out;
}

std::vector<std::string> builtin_machines() { return as_api_error([] { return models::builtin_machine_names(); }); }

}  // namespace detail
}  // namespace smpipe
