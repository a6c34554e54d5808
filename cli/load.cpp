#include "cli/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "isa/ast.hpp"

namespace smpipe::cli {

models::RunOptions run_options(const RunArgs& a, std::uint64_t seed, int jitter_pct) {
  models::RunOptions opt;
  opt.seed = seed;
  opt.jitter_pct = jitter_pct;
  opt.max_cycles = a.max_cycles;
  opt.max_ops = a.max_ops;
  opt.hazards = !a.no_hazards;
  opt.warm_l2 = a.l2 != "cold";
  return opt;
}

Loaded load(const RunArgs& a) {
  isa::ParamOverrides overrides;
  for (const auto& d : a.defines) {
    auto [name, value] = isa::parse_define(d);
    if (auto it = overrides.find(name); it != overrides.end() && it->second != value)
      throw isa::InputError(fmt::format("-D {} is given twice ({} and {}): which one is meant?", name, it->second, value));
    overrides[name] = value;
  }
  Loaded l = api::load_program(a.file, overrides, a.gpu, a.kernel, a.clock_mhz);
  // The clock: --clock-mhz as given, else --clock's (by default the clock the GPU holds under sustained load with
  // random data: what a kernel gets when it runs for real).
  if (a.clock_mhz <= 0 && !a.dump_program) api::set_clock(l, a.clock_mode, run_options(a, a.seed, 0));
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

// Many simulations in one process, one after another on each thread: each allocates its tables (tens of MB at large
// sizes) and frees them at its end. glibc's allocator would hand the largest blocks back to the kernel (mmap'd
// chunks, the heap's trimmed top) and fault them in again for the next simulation; with threads each such unmap
// also interrupts the other cores (their TLBs). Kept in the allocator instead, they are reused: peak memory is
// unchanged (the same sizes come back), and `check --seeds 16 --jobs 2` of the cooperative model at 2048^3 spends ~40 %
// less system time and 3-10 % less wall time (paired medians, farm-bench, 2-core VM; README "Speed").
void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

void parallel_for(int n, int jobs, const std::function<void(int)>& fn) {
  keep_freed_memory();
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
