#include "api/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "isa/ast.hpp"
#include "models/gpu/gpu.hpp"
#include "sim/check.hpp"

namespace smpipe::api {

std::string resolve_file(const std::string& f) {
  namespace fs = std::filesystem;
  std::error_code ec;  // a name too long or a folder that cannot be searched: not there
  if (fs::exists(f, ec)) return f;
  std::string builtin = models::kernels_dir() + "/" + f + (f.size() > 5 && f.substr(f.size() - 5) == ".pipe" ? "" : ".pipe");
  if (fs::exists(builtin, ec)) return builtin;
  throw isa::InputError(fmt::format("no file '{}' and no built-in model of that name (see `smpipe models`)", f));
}

std::string program_machine(const std::string& gpu, const std::string& program_path) {
  namespace fs = std::filesystem;
  bool json = gpu.size() > 5 && gpu.compare(gpu.size() - 5, 5, ".json") == 0;
  // A program names a built-in machine or a machine file beside itself, by its bare name: it cannot make smpipe
  // open other files (an absolute path, ../, a subfolder). The command line's --gpu may name any file.
  if (gpu.empty() || gpu.find('/') != std::string::npos || gpu.find('\\') != std::string::npos || gpu[0] == '.')
    throw isa::InputError(fmt::format("a program names a built-in machine, or a machine file by its bare name found beside the "
                                      "program ('{}' is a path: give it with --gpu instead)", isa::printable(gpu)));
  if (!json) return gpu;
  return (fs::path(program_path).parent_path() / gpu).string();
}

Loaded load_program(const std::string& file_name, const isa::ParamOverrides& overrides, const std::string& gpu_given,
                    const std::string& kernel, double clock_mhz) {
  auto source = isa::load_source(resolve_file(file_name));
  isa::File file = isa::parse(source);
  // The machine comes first: the program may size its grid by SM_COUNT.
  std::string gpu = gpu_given;
  if (gpu.empty() && file.gpu) gpu = file.gpu->first;
  if (gpu.empty()) gpu = "h100-sxm";
  models::Machine machine;
  bool from_program = gpu_given.empty() && file.gpu;
  try {
    machine = models::load_machine(from_program ? program_machine(gpu, source->name) : gpu);
  } catch (const isa::InputError& e) {
    if (from_program) throw isa::InputError(file.gpu->second, e.message());
    throw;
  }
  if (clock_mhz > 0) machine = models::at_sm_clock(machine, clock_mhz);
  isa::Program program = isa::compile(file, overrides, kernel, models::predefined_constants(machine));
  models::check_fits(program, machine);
  return Loaded{std::move(program), std::move(machine)};
}

bool is_clock_mode(const std::string& mode) {
  return mode.empty() || mode == "sustained" || mode == "sustained-constant" || mode == "boost";
}

void set_clock(Loaded& l, const std::string& mode, models::RunOptions first) {
  SMPIPE_CHECK(is_clock_mode(mode), "set_clock: not a clock mode");
  if (mode == "boost") {
    l.machine.clock_basis = "boost clock";
    return;
  }
  const models::Machine nominal = l.machine;
  const bool random = mode != "sustained-constant";
  // A machine whose clock under load was not measured on that GPU says so (the H200 borrows the H100's; the
  // B200's is its nominal clock).
  auto src = nominal.sources.find("load_clock_mhz");
  const bool estimated = src != nominal.sources.end() && src->second.rfind("estimate:", 0) == 0;
  const std::string under_load = estimated ? "sustained under load (estimated)" : "sustained under load";
  // With random data the clock depends on the load only when the two clocks under load differ below the
  // machine's own clock (not so for the B200, whose clocks under load are its nominal clock): only then a first run.
  const bool depends = random && models::sustained_clock_mhz(nominal, 0, true) != models::sustained_clock_mhz(nominal, 1, true);
  double busy = 0;
  if (depends) {
    l.machine = models::at_sm_clock(nominal, std::round(models::sustained_clock_mhz(nominal, 0, false)));
    first.jitter_pct = 0;
    first.hazards = false;
    first.max_ops = std::min(first.max_ops, kLoadProbeOps);
    // Nothing of the caller's sees it: no trace, op log, observers or progress line.
    first.trace = nullptr;
    first.op_log = nullptr;
    first.observers.clear();
    first.progress = nullptr;
    models::RunResult r = models::simulate(l.program, l.machine, first);
    for (const auto& u : r.stats.units)
      if (u.name == "tensor pipe")
        busy = u.utilisation * static_cast<double>(r.stats.sms_used) / static_cast<double>(std::max<std::int64_t>(1, nominal.sm_count));
  }
  const double mhz = std::round(models::sustained_clock_mhz(nominal, busy, random));
  l.machine = models::at_sm_clock(nominal, mhz);
  l.machine.clock_basis = depends  ? fmt::format("{}, random data, tensor pipe {:.0f}% busy", under_load, 100 * std::clamp(busy, 0.0, 1.0))
                          : random ? under_load + ", random data"
                                   : under_load + ", constant data";
}

std::vector<std::string> builtin_model_names() {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(models::kernels_dir(), ec); it != fs::recursive_directory_iterator(); ++it)
    if (it->path().extension() == ".pipe")
      names.push_back(fs::relative(it->path(), models::kernels_dir()).replace_extension("").string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace smpipe::api
