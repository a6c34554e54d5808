#include "cli/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <exception>
#include <filesystem>
#include <limits>
#include <mutex>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/output.hpp"
#include "isa/ast.hpp"
#include "isa/source.hpp"

namespace smpipe::cli {

L2Start parse_l2(const std::string& value) {
  if (value == "warm") return {true, 0, {}};
  if (value == "cold") return {false, 0, {}};
  if (value == "dirty") return {false, std::numeric_limits<std::int64_t>::max(), {}};  // (the model holds at most its capacity)
  const std::string bad =
      fmt::format("--l2 {}: expected warm, cold, dirty, dirty:BYTES (e.g. dirty:42MB) or dirty:TENSOR[,TENSOR...] (e.g. dirty:A)",
                  isa::printable(value));
  if (value.rfind("dirty:", 0) != 0) throw isa::InputError(bad);
  const std::string n = value.substr(6);
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!n.empty() && letter(n[0])) {
    // Tensor names, as the language spells identifiers, separated by commas; each once.
    L2Start l2{false, 0, {}};
    std::size_t at = 0;
    while (true) {
      const std::size_t end = std::min(n.find(',', at), n.size());
      const std::string name = n.substr(at, end - at);
      const bool ident = !name.empty() && letter(name[0]) &&
                         std::all_of(name.begin(), name.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
      if (!ident) throw isa::InputError(bad);
      if (std::find(l2.dirty_tensors.begin(), l2.dirty_tensors.end(), name) != l2.dirty_tensors.end())
        throw isa::InputError(fmt::format("--l2 {}: tensor {} is named twice", isa::printable(value), name));
      l2.dirty_tensors.push_back(name);
      if (end == n.size()) return l2;
      at = end + 1;
    }
  }
  std::size_t digits = 0;
  while (digits < n.size() && n[digits] >= '0' && n[digits] <= '9') ++digits;
  if (digits == 0 || digits > 15) throw isa::InputError(bad);
  static const std::pair<const char*, std::int64_t> kUnits[] = {
      {"", 1}, {"kB", 1000}, {"MB", 1000'000}, {"GB", 1000'000'000}, {"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}};
  for (const auto& [suffix, scale] : kUnits)
    if (n.substr(digits) == suffix) {
      const std::int64_t bytes = std::stoll(n.substr(0, digits));
      if (bytes <= 0 || bytes > (std::int64_t{1} << 50) / scale) throw isa::InputError(bad + ": between 1 byte and 1 PiB");
      return {false, bytes * scale, {}};
    }
  throw isa::InputError(bad);
}

models::RunOptions run_options(const RunArgs& a, std::uint64_t seed, int jitter_pct) {
  models::RunOptions opt;
  opt.seed = seed;
  opt.jitter_pct = jitter_pct;
  opt.max_cycles = a.max_cycles;
  opt.max_ops = a.max_ops;
  opt.hazards = !a.no_hazards;
  const L2Start l2 = parse_l2(a.l2);
  opt.warm_l2 = l2.warm;
  opt.l2_dirty_bytes = l2.dirty_bytes;
  opt.l2_dirty_tensors = l2.dirty_tensors;
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
  protect_input(a.file, "program file");
  protect_input(a.gpu, "machine file");
  Loaded l = api::load_program(a.file, overrides, a.gpu, a.kernel, a.clock_mhz);
  models::check_l2_tensors(l.program, parse_l2(a.l2).dirty_tensors, "--l2 " + a.l2);
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
