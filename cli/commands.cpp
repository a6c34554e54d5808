#include "cli/commands.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

#include "isa/ast.hpp"
#include "isa/limits.hpp"
#include "isa/program.hpp"
#include "models/gpu/gpu.hpp"
#include "models/machine.hpp"
#include "models/observe/report.hpp"
#include "sim/trace_writer.hpp"
#include "traces/compare.hpp"
#include "traces/hwtrace.hpp"
#include "traces/replay.hpp"
#include "api/load.hpp"
#include "cli/load.hpp"
#include "cli/output.hpp"
#include "cli/report_files.hpp"
#include "cli/sweep.hpp"
#include "cli/replay.hpp"

namespace smpipe::cli {

namespace {



// --seed: an unsigned 64-bit integer, written in decimal (CLI11 alone would take -1 as 2^64-1).
CLI::Validator seed_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        std::uint64_t v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return "a seed is an integer in 0.." + std::to_string(UINT64_MAX);
        return {};
      },
      "UINT64");
}

// An integer in lo..hi (--jitter, --max-cycles, ...): CLI11's range check alone reads 1.5 as a number in range and
// then fails to convert it with a message about the range.
CLI::Validator int_range(std::int64_t lo, std::int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        // (spaces around it and a leading '+' are taken, as CLI11's own conversion takes them)
        const auto first = s.find_first_not_of(" \t"), last = s.find_last_not_of(" \t");
        std::string t = first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
        if (t.size() > 1 && t[0] == '+' && t[1] != '-') t.erase(0, 1);
        std::int64_t v = 0;
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (t.empty() || end != t.data() + t.size() || ec == std::errc::invalid_argument)
          return fmt::format("must be an integer from {} to {} (given '{}': not an integer)", lo, hi, isa::printable(s));
        if (ec != std::errc() || v < lo || v > hi) return fmt::format("must be an integer from {} to {} (given {})", lo, hi, isa::printable(s));
        s = t;  // what the option's conversion then reads
        return {};
      },
      fmt::format("INT in {}..{}", lo, hi));
}

// A finite number above 0 (--clock-mhz, --seeds, ...) or at least 0: CLI11's own checks name a range up to the largest
// double, which reads as if the value given were inside it (and NaN and infinity compare false with every bound).
CLI::Validator bound_check(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& s) -> std::string {
        double v = 0;
        try {
          std::size_t used = 0;
          v = std::stod(s, &used);
          if (used != s.size()) return "'" + s + "' is not a number";
        } catch (const std::exception&) {
          return "'" + s + "' is not a number";
        }
        if (!std::isfinite(v)) return "'" + s + "' is not a finite number";
        if (allow_zero ? v >= 0 : v > 0) return std::string();
        return "must be " + std::string(allow_zero ? "0 or more" : "more than 0") + " (given " + s + ")";
      },
      allow_zero ? "NONNEGATIVE" : "POSITIVE");
}

// --trace-window FROM:TO, in cycles, FROM < TO. Throws isa::InputError.
std::pair<std::int64_t, std::int64_t> parse_trace_window(const std::string& text) {
  auto colon = text.find(':');
  auto number = [&](std::string_view s, std::int64_t& v) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size() && v >= 0;
  };
  std::int64_t from = 0, to = 0;
  if (colon == std::string::npos || !number(std::string_view(text).substr(0, colon), from) ||
      !number(std::string_view(text).substr(colon + 1), to) || from >= to)
    throw isa::InputError(fmt::format("--trace-window {}: expected FROM:TO, cycles with 0 <= FROM < TO", isa::printable(text)));
  return {from, to};
}

// --csv DIR: one output file per table, claimed before anything runs (a folder that does not exist is bad input).
using CsvFiles = std::vector<std::pair<std::string, std::unique_ptr<OutputFile>>>;
CsvFiles claim_csv(const std::string& dir, const std::vector<std::string>& names) {
  CsvFiles files;
  if (dir.empty()) return files;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw isa::InputError(fmt::format("--csv {}: not a folder (give an existing folder for the CSV tables)", dir));
  for (const auto& name : names)
    files.emplace_back(name, std::make_unique<OutputFile>((std::filesystem::path(dir) / name).string(), "CSV file"));
  return files;
}

void add_limit_options(CLI::App& app, std::uint64_t& seed, std::int64_t& max_cycles, std::int64_t& max_ops) {
  app.add_option("--seed", seed, "random seed (of --jitter and of the machine's spread of transfer times)")->check(seed_check());
  app.add_option("--max-cycles", max_cycles, "watchdog: stop after this many simulated cycles")
      ->transform(int_range(1, isa::kMaxCycleLimit));
  app.add_option("--max-ops", max_ops, fmt::format("watchdog on work: stop after the warps executed this many ops, or launched one "
                                                   "CTA per {} of them (default {})",
                                                   models::kCtaLaunchOps, models::kDefaultMaxOps))
      ->transform(int_range(1, std::int64_t{1} << 62));
}

void add_run_options(CLI::App& app, RunArgs& a) {
  app.add_option("file", a.file, "a .pipe file, or a built-in model name (see `smpipe models`)")->required();
  app.add_option("-D", a.defines, "set a param: -D NAME=VALUE (repeatable)")->allow_extra_args(false);
  app.add_option("--gpu", a.gpu, "machine description: a built-in name (h100-sxm, h200, b200) or a .json file");
  app.add_option("--kernel", a.kernel, "which kernel of the file to run (when it has several)");
  add_limit_options(app, a.seed, a.max_cycles, a.max_ops);
  app.add_option("--jitter", a.jitter, "vary every latency uniformly by +-PCT percent")->transform(int_range(0, 100));
  auto* mhz = app.add_option("--clock-mhz", a.clock_mhz,
                              "run the machine at this SM clock (e.g. a power-capped GPU); the L2 keeps its bytes per second")
                  ->check(bound_check(false));
  app.add_option("--clock", a.clock_mode,
                 "sustained (the default): the SM clock the GPU holds under load with random data (lower the busier its "
                 "tensor pipe: a first run measures it); sustained-constant: with zero or constant data; boost: the "
                 "machine file's nominal (boost) clock")
      ->check(CLI::IsMember({"sustained", "sustained-constant", "boost"}))
      ->excludes(mhz);
  app.add_option("--l2", a.l2,
                 "the L2 at launch: warm (the default: holding the program's tensors when they fit in it, as a previous "
                 "launch of the kernel leaves them, as in back-to-back benchmark launches), cold (empty: the first launch, or "
                 "after a flush) or dirty[:BYTES] (none of the tensors, but BYTES of another kernel's stores held dirty, written "
                 "back to HBM as the launch evicts them: after a kernel that left that much dirty; at most the machine's "
                 "l2_dirty_left_share of the L2, which `dirty` alone holds) or dirty:TENSOR[,TENSOR...] (the program's tensors "
                 "of those names held dirty, as the kernel that wrote them leaves them: a launch that reads the previous "
                 "one's output; their last blocks, at most l2_dirty_left_share of the L2)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            try {
              parse_l2(s);
            } catch (const isa::InputError& e) {
              return e.what();
            }
            return std::string();
          },
          "warm|cold|dirty[:BYTES|:TENSOR,...]"));
  app.add_flag("--no-hazards", a.no_hazards,
               "skip the data-hazard checker (races on smem, TMEM, CLC responses; barrier-init order): the same timing, "
               "16-37 % faster; a warning says so");
}

int cmd_run(const RunArgs& a, std::ostream& out, std::ostream& err) {
  Loaded l = load(a);
  if (a.dump_program) {
    out << l.program.dump();
    return kOk;
  }
  models::RunOptions opt = run_options(a, a.seed, a.jitter);
  // --trace-window FROM:TO: only what happens in those cycles.
  std::optional<std::pair<std::int64_t, std::int64_t>> window;
  if (!a.trace_window.empty()) window = parse_trace_window(a.trace_window);
  // The trace is streamed to its file as the run goes (bounded memory, whatever the run's length); --html keeps
  // CTA 0's first events of it for the report's timeline, or keeps them alone when there is no --trace.
  std::unique_ptr<OutputFile> trace_file, html_file;
  if (!a.trace.empty()) trace_file = std::make_unique<OutputFile>(a.trace, "trace file");
  if (!a.html.empty()) html_file = std::make_unique<OutputFile>(a.html, "HTML report");
  std::unique_ptr<sim::TraceWriter> trace;
  if (trace_file || html_file) {
    trace = std::make_unique<sim::TraceWriter>(l.machine.clock_mhz, trace_file ? a.trace_ctas : 1);
    std::size_t keep = html_file ? kHtmlTimelineEvents : 0;
    if (trace_file)
      trace->stream_to([f = trace_file.get()](std::string_view s) { f->append(s); }, keep);
    else
      trace->stream_to([](std::string_view) {}, keep);
    if (window) trace->set_window(window->first, window->second);
    opt.trace = trace.get();
  }
  CsvFiles csv_files = claim_csv(a.csv_dir, csv_table_names());  // --csv DIR: the summary's tables
  // On a terminal, a run that takes more than a second shows how far it got on stderr (then erases it).
  bool shown = false;
  if (interactive(err)) {
    auto begin = std::chrono::steady_clock::now();
    double last = 0;
    opt.progress = [&, begin, last](const models::RunOptions::Progress& p) mutable {
      double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      if (spent < 1.0 || spent - last < 0.25) return;
      last = spent;
      shown = true;
      err << fmt::format("\r  simulating: cycle {}, {} of {} CTAs done, {} ops ({:.0f} s)   ", p.cycle, p.ctas_done, p.ctas, p.ops, spent)
          << std::flush;
    };
  }
  models::RunResult r = models::simulate(l.program, l.machine, opt);
  if (shown) err << "\r\033[K" << std::flush;
  nlohmann::json run_json;
  if (a.json || html_file || !csv_files.empty()) run_json = models::to_json(r, l.program);
  if (a.json) {
    out << json_text(run_json) << "\n";
  } else {
    out << models::format_summary(r, l.program);
    std::string problem = models::format_problem(r);
    if (!problem.empty()) out << "\n" << problem;
  }
  if (html_file) {
    std::string title = a.file;
    for (const auto& d : a.defines) title += " -D " + d;
    const sim::TraceWriter* tl = !trace_file || a.trace_ctas > 0 ? trace.get() : nullptr;
    html_file->commit([&](std::ostream& f) { f << html_page(html_run_data(run_json, tl, title)); });
    if (!a.json) out << fmt::format("report: {} (open in a browser)\n", a.html);
  }
  for (auto& [name, file] : csv_files) file->commit([&](std::ostream& f) { f << csv_table(run_json, name); });
  if (!csv_files.empty() && !a.json) out << fmt::format("tables: {} ({})\n", a.csv_dir, fmt::join(csv_table_names(), ", "));
  if (trace_file) {
    trace_file->commit([&](std::ostream& f) { trace->write(f); });
    if (!a.json) {
      out << fmt::format("trace: {} ({} events; open in https://ui.perfetto.dev)\n", a.trace, trace->size());
      if (trace->dropped())
        out << fmt::format("note: the trace stopped at {} MB: {} later events were left out (fewer --trace-ctas keep it "
                           "whole)\n", sim::TraceWriter::kDefaultMaxBytes >> 20, trace->dropped());
    }
  }
  (void)err;
  return exit_code(r.outcome);
}

int cmd_check(const RunArgs& a, std::ostream& out, std::ostream& err) {
  Loaded l = load(a);
  const Ranks& rk = ranks();
  int jitter = a.jitter >= 0 ? a.jitter : 20;  // -1: --jitter not given (an explicit 0 is kept)
  // What each schedule came to; runs are independent (a Simulator shares nothing but the read-only program
  // and machine), so they run on `jobs` threads and are reported in seed order: the output does not
  // depend on the number of threads.
  struct Seen {
    int code = kOk;
    std::int64_t cycles = 0;
    std::string what, problem, warning;
  };
  std::vector<Seen> seen(static_cast<std::size_t>(a.seeds));
  // This process's seeds: all, or every size-th from its rank under mpirun.
  std::vector<std::size_t> mine = rk.share(seen.size());
  Progress progress(err, mine.size(), rk.rank == 0);
  auto run_seed = [&](int k) {
    std::size_t i = mine[static_cast<std::size_t>(k)];
    models::RunResult r = models::simulate(l.program, l.machine, run_options(a, a.seed + static_cast<std::uint64_t>(i), jitter));
    Seen& s = seen[i];
    progress.step();
    s.code = exit_code(r.outcome);
    s.cycles = r.cycles;
    if (s.code == kOk) {
      if (!r.warnings.empty()) s.warning = r.warnings.front();
      return;
    }
    s.what = r.outcome == models::Outcome::kUndefined && r.diagnosis
                 ? fmt::format("{}: {}", r.diagnosis->hazard ? "hazard" : "undefined behaviour", r.diagnosis->title)
             : r.outcome == models::Outcome::kDeadlock ? "deadlock"
                                                       : "watchdog";
    s.problem = models::format_problem(r);
  };
  parallel_for(static_cast<int>(mine.size()), a.jobs, run_seed);
  progress.clear();
  if (rk.size > 1) {
    // Every rank's schedules to rank 0, which reports as if it had run them all.
    nlohmann::json local = nlohmann::json::array();
    for (std::size_t i : mine) {
      const Seen& s = seen[i];
      local.push_back({{"i", i}, {"code", s.code}, {"cycles", s.cycles}, {"what", s.what}, {"problem", s.problem}, {"warning", s.warning}});
    }
    std::vector<nlohmann::json> all = rk.gather_json(local);
    if (rk.rank != 0) return kOk;
    for (const auto& j : all) {
      Seen& s = seen.at(j.at("i").get<std::size_t>());
      s.code = j.at("code");
      s.cycles = j.at("cycles");
      s.what = j.at("what");
      s.problem = j.at("problem");
      s.warning = j.at("warning");
    }
  }
  if (a.json) {
    // One object for the whole check: a row per schedule, the first failure's full run JSON (docs/json.md).
    nlohmann::json runs = nlohmann::json::array();
    nlohmann::json first;
    int worst = kOk, failed = 0;
    for (int i = 0; i < a.seeds; ++i) {
      const Seen& s = seen[static_cast<std::size_t>(i)];
      std::uint64_t seed = a.seed + static_cast<std::uint64_t>(i);
      runs.push_back({{"seed", seed}, {"exit", s.code}, {"cycles", s.cycles}, {"problem", s.what}, {"warning", s.warning}});
      if (s.code != kOk) {
        ++failed;
        worst = std::max(worst, s.code);
        if (first.is_null()) {  // the first failure's full run, run again (a seed gives the same run): no JSON kept per seed
          first = models::to_json(models::simulate(l.program, l.machine, run_options(a, seed, jitter)), l.program);
        }
      }
    }
    nlohmann::json j{{"schema", kCheckSchema}, {"program", a.file}, {"seeds", a.seeds}, {"first_seed", a.seed},
                     {"jitter_pct", jitter}, {"clock_mhz", l.machine.clock_mhz}, {"finished", a.seeds - failed}, {"failed", failed},
                     {"exit", worst}, {"runs", runs}, {"first_failure", first}};
    if (!l.machine.clock_basis.empty()) j["clock_basis"] = l.machine.clock_basis;
    out << json_text(j) << "\n";
    return worst;
  }
  int worst = kOk;
  int failures = 0, warned = 0;
  std::string first_report, first_warning;
  std::int64_t min_cycles = -1, max_cycles = 0;
  std::string options;
  for (const auto& d : a.defines) options += " -D " + d;
  if (!a.gpu.empty()) options += " --gpu " + a.gpu;
  if (!a.kernel.empty()) options += " --kernel " + a.kernel;
  if (a.clock_mhz > 0) options += fmt::format(" --clock-mhz {}", a.clock_mhz);
  if (!a.clock_mode.empty()) options += " --clock " + a.clock_mode;
  if (a.no_hazards) options += " --no-hazards";
  if (a.l2 != RunArgs{}.l2) options += " --l2 " + a.l2;
  // The limits too: they end a run, and bound the first run that sets the sustained clock.
  if (a.max_cycles != RunArgs{}.max_cycles) options += fmt::format(" --max-cycles {}", a.max_cycles);
  if (a.max_ops != RunArgs{}.max_ops) options += fmt::format(" --max-ops {}", a.max_ops);
  for (int i = 0; i < a.seeds; ++i) {
    const Seen& s = seen[static_cast<std::size_t>(i)];
    std::uint64_t seed = a.seed + static_cast<std::uint64_t>(i);
    if (s.code == kOk) {
      min_cycles = min_cycles < 0 ? s.cycles : std::min(min_cycles, s.cycles);
      max_cycles = std::max(max_cycles, s.cycles);
      if (!s.warning.empty()) {
        ++warned;
        if (first_warning.empty()) first_warning = fmt::format("seed {}: warning: {}\n", seed, s.warning);
      }
      continue;
    }
    ++failures;
    worst = std::max(worst, s.code);
    out << fmt::format("seed {}: {} at cycle {} (rerun: smpipe run {}{} --seed {} --jitter {})\n", seed, s.what, s.cycles,
                       a.file, options, seed, jitter);
    if (first_report.empty()) first_report = s.problem;
  }
  out << fmt::format("{} schedules with --jitter {}: {} finished, {} failed", a.seeds, jitter, a.seeds - failures, failures);
  // The cycles are at the run's SM clock: the summary says which (as a run's first line does).
  if (min_cycles >= 0)
    out << fmt::format("; finished runs took {}..{} cycles at {} MHz{}", min_cycles, max_cycles, l.machine.clock_mhz,
                       l.machine.clock_basis.empty() ? "" : " (" + l.machine.clock_basis + ")");
  if (warned > 0) out << fmt::format("; {} finished with warnings", warned);
  out << "\n";
  if (!first_warning.empty()) out << first_warning;
  if (!first_report.empty()) out << "\nfirst failure:\n" << first_report;
  return worst;
}

void add_replay_options(CLI::App& app, ReplayArgs& a) {
  app.add_option("trace_file", a.trace_file, "a hardware trace (smpipe-hwtrace v1, docs/trace-format.md)")->required();
  app.add_option("--gpu", a.gpu, "machine description (default: from the trace's GPU name)");
  app.add_flag("--recorded-only", a.recorded_only,
               "launch only the recorded CTAs (default: the whole grid, unrecorded CTAs running copies of recorded ones)");
  app.add_option("--probe-cycles", a.probe_cycles, "cycles per probe record (default: the trace's smallest event gap)")
      ->check(bound_check(true));
  app.add_option("--clock-mhz", a.clock_mhz,
                 "SM clock to simulate at (default: the trace's measured clock; 0: the machine file's)")
      ->check(bound_check(true));
  app.add_option("--emit-pipe", a.emit_pipe, "write the generated .pipe program to this file");
  app.add_option("--own-time", a.own_time,
                 "a hardware trace of the same kernel: charge each warp the kernel's own instructions between ops, as measured "
                 "there (per kind of interval: its hardware mean less its replay's)");
  add_limit_options(app, a.seed, a.max_cycles, a.max_ops);
}

int cmd_replay(const ReplayArgs& a, std::ostream& out) {
  std::unique_ptr<OutputFile> trace_file;
  if (!a.trace.empty()) trace_file = std::make_unique<OutputFile>(a.trace, "trace file");
  CsvFiles csv_files = claim_csv(a.csv_dir, csv_table_names());
  std::unique_ptr<OutputFile> html_file;
  if (!a.html.empty()) html_file = std::make_unique<OutputFile>(a.html, "HTML report");
  Replayed r = replay(a, !a.trace.empty() || html_file);  // the report's timeline comes from the replay's trace
  nlohmann::json run_json;
  if (a.json || !csv_files.empty() || html_file) run_json = models::to_json(r.result, r.program);
  if (a.json) {
    out << json_text(run_json) << "\n";
  } else {
    out << fmt::format("replay of {}: {} CTA(s) launched, {} recorded, {} cycles per probe record\n", r.trace.path, r.replay.ctas,
                       r.trace.ctas.size(), r.replay.probe_cycles);
    for (const auto& n : r.replay.notes) out << "note: " << n << "\n";
    out << models::format_summary(r.result, r.program);
    std::string problem = models::format_problem(r.result);
    if (!problem.empty()) out << "\n" << problem;
  }
  for (auto& [name, file] : csv_files) file->commit([&](std::ostream& f) { f << csv_table(run_json, name); });
  if (html_file) {
    html_file->commit([&](std::ostream& f) { f << html_page(html_run_data(run_json, r.sim_trace.get(), "replay of " + a.trace_file)); });
    if (!a.json) out << fmt::format("report: {} (open in a browser)\n", a.html);
  }
  if (trace_file) trace_file->commit([&](std::ostream& f) { r.sim_trace->write(f); });
  return exit_code(r.result.outcome);
}

int cmd_compare(const ReplayArgs& a, std::ostream& out) {
  std::unique_ptr<OutputFile> trace_file;
  if (!a.trace.empty()) trace_file = std::make_unique<OutputFile>(a.trace, "trace file");
  CsvFiles csv_files = claim_csv(a.csv_dir, compare_csv_table_names());
  Replayed r = replay(a, false);
  if (r.result.outcome != models::Outcome::kFinished) {
    std::string problem = fmt::format("the replay of {} did not finish:\n", r.trace.path) + models::format_problem(r.result);
    if (a.json)
      out << json_text({{"schema", traces::kCompareSchema}, {"outcome", "replay-failed"}, {"exit", exit_code(r.result.outcome)},
                        {"error", {{"file", r.trace.path}, {"line", 0}, {"column", 0}, {"message", problem}}}})
          << "\n";
    else
      out << problem;
    return exit_code(r.result.outcome);
  }
  traces::SimTimes times = traces::sim_times(r.trace, r.replay, r.log);
  traces::Comparison c = traces::compare(r.trace, r.replay, times, r.machine_name, r.result.cycles, r.machine.clock_mhz);
  nlohmann::json cj = traces::to_json(c);
  if (a.json)
    out << json_text(cj) << "\n";
  else
    out << traces::format_comparison(c);
  for (auto& [name, file] : csv_files) file->commit([&](std::ostream& f) { f << compare_csv_table(cj, name); });
  if (trace_file) {
    trace_file->commit([&](std::ostream& f) { traces::write_combined_trace(r.trace, times, c.clock_mhz, f); });
    if (!a.json) out << fmt::format("\ncombined trace: {} (hardware and simulated tracks per warp; open in https://ui.perfetto.dev)\n", a.trace);
  }
  return kOk;
}

int cmd_models(std::ostream& out) {
  (void)models::machines_dir();  // SMPIPE_MACHINES pointing nowhere: an error before anything is listed
  std::vector<std::string> names = api::builtin_model_names();
  out << "built-in models (smpipe run NAME), from " << models::kernels_dir() << ":\n";
  for (const auto& n : names) {
    auto source = isa::load_source(models::kernels_dir() + "/" + n + ".pipe");
    std::string params;
    try {
      isa::File f = isa::parse(source);
      if (f.kernels.empty()) continue;  // a file of procs and constants that models import (sm90/common/...)
      models::Machine m = models::load_machine(f.gpu ? f.gpu->first : "h100-sxm");
      isa::Program p = isa::compile(f, {}, "", models::predefined_constants(m));
      for (const auto& d : f.definitions) {
        if (!d.overridable) continue;
        for (const auto& [name, v] : p.params)
          if (name == d.name) params += fmt::format(" {}={}", name, v);
      }
    } catch (const isa::InputError&) {
      params = " (does not compile)";
    }
    out << fmt::format("  {:<40}{}\n", n, params);
  }
  out << "machines (--gpu NAME): " << fmt::format("{}", fmt::join(models::builtin_machine_names(), ", ")) << ", from "
      << models::machines_dir() << "\n";
  return kOk;
}

}  // namespace

int main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  begin_command();  // (the inputs an output may not overwrite are this command's)
  CLI::App app{"smpipe: a cycle-approximate simulator of NVIDIA SM asynchronous pipelines"};
  app.set_version_flag("--version", std::string("smpipe ") + SMPIPE_VERSION);
  app.require_subcommand(1);
  RunArgs run_args, check_args;
  check_args.jitter = -1;  // check's default is 20 %, applied only when --jitter is not given
  CLI::App* run = app.add_subcommand("run", "simulate a kernel: summary, --json, --trace; exit 0/1/2/3/4");
  add_run_options(*run, run_args);
  run->add_option("--trace", run_args.trace, "write a Chrome trace-event file (open in ui.perfetto.dev)");
  auto* trace_ctas = run->add_option("--trace-ctas", run_args.trace_ctas, "record the first N CTAs in the trace (default 8; 0: none, the trace "
                                                       "holds the run's metadata only)")
      ->transform(int_range(0, std::int64_t{1} << 31));
  auto* trace_window =
      run->add_option("--trace-window", run_args.trace_window, "record only cycles FROM:TO in the trace (and the HTML timeline)");
  run->add_flag("--json", run_args.json, "print the results as JSON");
  run->add_flag("--dump-program", run_args.dump_program, "print the compiled bytecode and stop");
  run->add_option("--html", run_args.html, "write a self-contained HTML report (summary, waits, barriers, units, CTA 0's timeline)");
  run->add_option("--csv", run_args.csv_dir, "write the summary's tables as CSV files into this folder");
  CLI::App* check = app.add_subcommand("check", "run many jittered schedules and report any that hangs or breaks a rule");
  add_run_options(*check, check_args);
  check->add_flag("--json", check_args.json, "print the results as JSON (docs/json.md)");
  check->add_option("--seeds", check_args.seeds, "number of schedules (seeds SEED, SEED+1, ...; at most 1000000: more in calls with --seed)")
      ->transform(int_range(1, 1'000'000));
  check->add_option("--jobs", check_args.jobs, "schedules run at once (default: one per core; the output does not depend on it)")
      ->transform(int_range(1, 4096));
  SweepArgs sweep_args;
  CLI::App* sweep = app.add_subcommand("sweep", "run a program over a grid of params (and machines) on all cores: table, ranking, CSV, JSON");
  add_run_options(*sweep, sweep_args.run);
  sweep->add_option("--group", sweep_args.group, "rank each group of these swept params on its own (e.g. --group M,N,K)")
      ->delimiter(',');
  sweep->add_option("--csv", sweep_args.csv, "write one row per point to this CSV file");
  sweep->add_option("--html", sweep_args.html, "write a self-contained HTML report: a chart of the configs per group, every point");
  sweep->add_option("--json", sweep_args.json, "write one object per point to this JSON file");
  sweep->add_option("--jobs", sweep_args.jobs, "points run at once (default: one per core)")->transform(int_range(1, 4096));
  sweep->add_option("--top", sweep_args.top, "points listed per group in the ranking (default 5)")->transform(int_range(1, 1'000'000));
  ReplayArgs replay_args, compare_args;
  CLI::App* rep = app.add_subcommand("replay", "simulate what a hardware trace's warps did (smpipe-hwtrace v1)");
  add_replay_options(*rep, replay_args);
  rep->add_option("--trace", replay_args.trace, "write a Chrome trace of the simulation");
  rep->add_flag("--json", replay_args.json, "print the results as JSON");
  rep->add_option("--csv", replay_args.csv_dir, "write the summary's tables as CSV files into this folder");
  rep->add_option("--html", replay_args.html, "write a self-contained HTML report of the replayed run");
  CLI::App* cmp = app.add_subcommand("compare", "replay a hardware trace and compare the simulation with it, event by event");
  add_replay_options(*cmp, compare_args);
  cmp->add_option("--trace", compare_args.trace, "write one Chrome trace with hardware and simulated tracks side by side");
  cmp->add_flag("--json", compare_args.json, "print the comparison as JSON");
  cmp->add_option("--csv", compare_args.csv_dir, "write the comparison's tables (CTAs, roles, waits, intervals, errors) as CSV files into this folder");
  CLI::App* list = app.add_subcommand("models", "list the built-in models and machines");
  (void)list;
  // No command at all: the usage with the commands (to stderr, exit 1), as `smpipe --help` prints it.
  if (argc <= 1) {
    err << app.help();
    return kBadInput;
  }
  // A first word that names no command (CLI11 would only say that a command is required).
  if (argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* c : app.get_subcommands({})) names.push_back(c->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      err << "smpipe: unknown command '" << isa::printable(argv[1]) << "' (the commands: " << fmt::format("{}", fmt::join(names, ", "))
          << "; smpipe --help)\n";
      return kBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e, out, err);
    if (code == 0) return kOk;
    // A bad option of a command asked for --json: the error as a JSON object too (docs/json.md), as for bad input.
    std::string command = argc > 1 ? argv[1] : "";
    bool json = false;
    for (int i = 2; i < argc; ++i) json = json || std::string(argv[i]) == "--json";
    if (json && (command == "run" || command == "check" || command == "replay" || command == "compare"))
      out << json_text({{"schema", command == "check" ? kCheckSchema : command == "compare" ? traces::kCompareSchema : models::kRunSchema},
                        {"outcome", "input-error"},
                        {"exit", kBadInput},
                        {"error", {{"file", ""}, {"line", 0}, {"column", 0}, {"message", isa::printable(e.what())}}}})
          << "\n";
    return kBadInput;
  }
  try {
    if (run->parsed()) {
      // options that shape an output nobody asked for would be ignored without a word
      if (trace_ctas->count() > 0 && run_args.trace.empty())
        throw isa::InputError("--trace-ctas chooses the CTAs of the trace: give --trace FILE too (the HTML report's timeline is CTA 0's)");
      if (trace_window->count() > 0 && run_args.trace.empty() && run_args.html.empty())
        throw isa::InputError("--trace-window chooses the cycles of the trace and of the HTML timeline: give --trace FILE or --html FILE too");
      return cmd_run(run_args, out, err);
    }
    if (check->parsed()) return cmd_check(check_args, out, err);
    if (sweep->parsed()) {
      // -D with several values (V1,V2 or A..B[:S]) is an axis; with one, a fixed param. --gpu may list machines.
      std::vector<std::string> fixed;
      for (const auto& d : sweep_args.run.defines)
        (d.find(',') != std::string::npos || d.find("..") != std::string::npos ? sweep_args.axes : fixed).push_back(d);
      sweep_args.run.defines = fixed;
      for (std::size_t start = 0; !sweep_args.run.gpu.empty();) {
        auto comma = sweep_args.run.gpu.find(',', start);
        sweep_args.gpus.push_back(sweep_args.run.gpu.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      if (sweep_args.gpus.size() == 1) sweep_args.run.gpu = sweep_args.gpus.front(), sweep_args.gpus.clear();
      return cmd_sweep(sweep_args, out, err);
    }
    if (rep->parsed()) return cmd_replay(replay_args, out);
    if (cmp->parsed()) return cmd_compare(compare_args, out);
    return cmd_models(out);
  } catch (const isa::InputError& e) {
    err << isa::printable(e.what(), true) << "\n";
    // With --json the error is also one JSON object on stdout, so that a tool reading it needs no other parser.
    if (run_args.json || check_args.json || replay_args.json || compare_args.json) {
      const isa::SourceLoc& loc = e.loc();
      out << json_text({{"schema", check->parsed() ? kCheckSchema : cmp->parsed() ? traces::kCompareSchema : models::kRunSchema},
                        {"outcome", "input-error"},
                        {"exit", kBadInput},
                        {"error", {{"file", isa::printable(e.file())},
                                   {"line", loc.line},
                                   {"column", loc.col},
                                   {"message", isa::printable(e.message())}}}})
          << "\n";
    }
    return kBadInput;
  } catch (const OutputError& e) {
    err << "error: " << isa::printable(e.what(), true) << "\n";
    return kOutputError;
  } catch (const std::exception& e) {
    err << "internal error: " << isa::printable(e.what(), true) << "\n";
    return kInternal;
  }
}

}  // namespace smpipe::cli
