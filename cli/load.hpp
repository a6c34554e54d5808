// What the commands that simulate share: their arguments, loading a program and its machine, the exit
// code of an outcome, and running independent jobs on several threads.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "api/load.hpp"
#include "isa/program.hpp"
#include "models/gpu/gpu.hpp"
#include "models/machine.hpp"

namespace smpipe::cli {

struct RunArgs {
  std::string file;
  std::vector<std::string> defines;
  std::string gpu;
  std::string kernel;
  std::string trace;
  std::int64_t trace_ctas = 8;
  std::string trace_window;  // run --trace-window FROM:TO (cycles)
  std::string html;     // run --html: a self-contained HTML report
  std::string csv_dir;  // run --csv: the summary's tables as CSV files in this folder
  bool json = false;
  std::uint64_t seed = 1;
  int jitter = 0;
  std::int64_t max_cycles = 100'000'000;
  std::int64_t max_ops = models::kDefaultMaxOps;
  double clock_mhz = 0;
  std::string clock_mode;  // --clock: "sustained" (random data; also when empty), "sustained-constant" or "boost"
  bool dump_program = false;
  bool no_hazards = false;  // --no-hazards: skip the data-hazard checker
  std::string l2 = "warm";  // --l2: the L2 at launch, "warm", "cold" or "dirty[:BYTES]" (parse_l2)
  int seeds = 16;
  int jobs = 0;  // check: threads (0: one per core)
};

using api::Loaded;  // a program and its machine (api/load.hpp)

// The program of a.file with a.defines bound, on its machine (a.gpu, the file's `gpu`, or h100-sxm), at the SM
// clock --clock-mhz sets, else --clock's (api::set_clock: by default the sustained clock with random data).
Loaded load(const RunArgs& a);
using api::kLoadProbeOps;
// --l2's value: "warm", "cold", "dirty" (the L2 full of another kernel's stores), "dirty:BYTES" (that many bytes of
// them: a count, or one with a decimal suffix kB, MB, GB or a binary one KiB, MiB, GiB) or "dirty:NAME[,NAME...]" (the
// program's tensors of those names, as the kernel that wrote them leaves them); what the L2 holds at launch as
// RunOptions says it. An input error names the value (load() checks the names against the program).
struct L2Start {
  bool warm = true;
  std::int64_t dirty_bytes = 0;
  std::vector<std::string> dirty_tensors;
};
L2Start parse_l2(const std::string& value);
// The run options of the command line's limits (--max-cycles, --max-ops) with this seed and jitter.
models::RunOptions run_options(const RunArgs& a, std::uint64_t seed, int jitter_pct);
int exit_code(models::Outcome o);
// fn(0) .. fn(n - 1) on `jobs` threads (0: one per core); the first exception is rethrown once all stop.
void parallel_for(int n, int jobs, const std::function<void(int)>& fn);

// Work split over processes (smpipe_mpi under mpirun, cli/mpi_main.cpp): `sweep` points and `check` seeds.
// This process is `rank` of `size` and runs the items i with i % size == rank; `gather` gives rank 0 every
// rank's text, in rank order (the others get nothing back). Rank 0 prints and writes everything, as one
// process would; the others print and write nothing. The default is one process.
struct Ranks {
  int rank = 0, size = 1;
  std::function<std::vector<std::string>(const std::string& mine)> gather;
  // The items of n this process runs.
  std::vector<std::size_t> share(std::size_t n) const {
    std::vector<std::size_t> mine;
    for (std::size_t i = static_cast<std::size_t>(rank); i < n; i += static_cast<std::size_t>(size)) mine.push_back(i);
    return mine;
  }
  // This process's results (a JSON array, one object per item) to rank 0: there every rank's objects, in rank
  // order; elsewhere none.
  std::vector<nlohmann::json> gather_json(const nlohmann::json& mine) const;
};
void set_ranks(Ranks ranks);
const Ranks& ranks();

}  // namespace smpipe::cli
