#include "cli/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "isa/ast.hpp"

namespace smpipe::cli {

std::string resolve_file(const std::string& f) {
  namespace fs = std::filesystem;
  if (fs::exists(f)) return f;
  std::string builtin = models::kernels_dir() + "/" + f + (f.size() > 5 && f.substr(f.size() - 5) == ".pipe" ? "" : ".pipe");
  if (fs::exists(builtin)) return builtin;
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

models::RunOptions run_options(const RunArgs& a, std::uint64_t seed, int jitter_pct) {
  models::RunOptions opt;
  opt.seed = seed;
  opt.jitter_pct = jitter_pct;
  opt.max_cycles = a.max_cycles;
  opt.max_ops = a.max_ops;
  return opt;
}

Loaded load(const RunArgs& a) {
  auto source = isa::load_source(resolve_file(a.file));
  isa::File file = isa::parse(source);
  isa::ParamOverrides overrides;
  for (const auto& d : a.defines) {
    auto [name, value] = isa::parse_define(d);
    overrides[name] = value;
  }
  // The machine comes first: the program may size its grid by SM_COUNT.
  std::string gpu = a.gpu;
  if (gpu.empty() && file.gpu) gpu = file.gpu->first;
  if (gpu.empty()) gpu = "h100-sxm";
  models::Machine machine;
  bool from_program = a.gpu.empty() && file.gpu;
  try {
    machine = models::load_machine(from_program ? program_machine(gpu, source->name) : gpu);
  } catch (const isa::InputError& e) {
    if (from_program) throw isa::InputError(file.gpu->second, e.message());
    throw;
  }
  if (a.clock_mhz > 0) machine = models::at_sm_clock(machine, a.clock_mhz);
  isa::Program program = isa::compile(file, overrides, a.kernel, models::predefined_constants(machine));
  models::check_fits(program, machine);
  return Loaded{std::move(program), std::move(machine)};
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

}  // namespace smpipe::cli
