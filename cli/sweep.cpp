#include "cli/sweep.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/output.hpp"
#include "cli/report_files.hpp"
#include "isa/source.hpp"
#include "models/observe/report.hpp"

namespace smpipe::cli {

namespace {

struct Point {
  std::vector<std::int64_t> values;  // one per axis
  std::string gpu;
};

struct Row {
  std::string status = "invalid";  // finished, deadlock, watchdog, undefined, hazard, invalid
  std::string reason;              // why it did not finish (the diagnosis, the first cause, the input error)
  std::int64_t cycles = 0;
  double clock_mhz = 0;  // the SM clock of the point (each its own: the sustained clock follows its load)
  double time_us = 0, tflops = 0;
  std::string bottleneck, machine;
  int exit = kBadInput;
};

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

std::pair<std::string, std::vector<std::int64_t>> parse_axis(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw isa::InputError(fmt::format("-D '{}': expected NAME=VALUES", text));
  std::string name = text.substr(0, eq), spec = text.substr(eq + 1);
  // a value's error names the argument as typed (`-D STAGES=2,,3: ...`), not the one value taken out of it
  auto value = [&](const std::string& v) {
    if (v.empty()) throw isa::InputError(fmt::format("-D {}: an empty value (VALUES is A,B,C or A..B or A..B:STEP)", isa::printable(text)));
    try {
      return isa::parse_define(name + "=" + v).second;
    } catch (const isa::InputError& e) {
      const std::string& m = e.message();
      const auto colon = m.find(": ");
      throw isa::InputError(fmt::format("-D {}: {}", isa::printable(text), colon == std::string::npos ? m : m.substr(colon + 2)));
    }
  };
  std::vector<std::int64_t> values;
  auto dots = spec.find("..");
  if (dots != std::string::npos) {
    std::string rest = spec.substr(dots + 2);
    auto colon = rest.find(':');
    std::int64_t from = value(spec.substr(0, dots)), to = value(rest.substr(0, colon));
    std::int64_t step = colon == std::string::npos ? 1 : value(rest.substr(colon + 1));
    if (step <= 0) throw isa::InputError(fmt::format("-D {}: the step must be positive", text));
    if (to <= from) throw isa::InputError(fmt::format("-D {}: A..B is half-open (as in the language) and holds no value", text));
    if ((to - from) / step > 100'000) throw isa::InputError(fmt::format("-D {}: more than 100000 values", text));
    for (std::int64_t v = from; v < to; v += step) values.push_back(v);
  } else {
    std::size_t start = 0;
    for (;;) {
      auto comma = spec.find(',', start);
      values.push_back(value(spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return {name, values};
}

namespace {
// A row as text, for the gather of a sweep split over processes.
nlohmann::json row_json(std::size_t i, const Row& r) {
  return {{"i", i}, {"status", r.status}, {"exit", r.exit}, {"cycles", r.cycles}, {"clock_mhz", r.clock_mhz}, {"time_us", r.time_us},
          {"tflops", r.tflops}, {"bottleneck", r.bottleneck}, {"machine", r.machine}, {"reason", r.reason}};
}
}  // namespace

int cmd_sweep(const SweepArgs& a, std::ostream& out, std::ostream& err) {
  const Ranks& rk = ranks();
  const bool root = rk.rank == 0;
  // Output files are claimed before anything runs (a bad path is bad input) and written all or nothing. Split
  // over processes, every rank claims them (so that a bad path stops every rank before the gather, not rank 0
  // alone) and only rank 0 writes them (the others' temporary files go when they return).
  // The inputs first: an output on one of them is refused before anything is claimed (each point's load would only
  // make an invalid row of it).
  protect_input(a.run.file, "program file");
  protect_input(a.run.gpu, "machine file");
  for (const auto& g : a.gpus) protect_input(g, "machine file");
  std::unique_ptr<OutputFile> csv_file, json_file, html_file;
  if (!a.csv.empty()) csv_file = std::make_unique<OutputFile>(a.csv, "CSV file");
  if (!a.json.empty()) json_file = std::make_unique<OutputFile>(a.json, "JSON file");
  if (!a.html.empty()) html_file = std::make_unique<OutputFile>(a.html, "HTML report");
  // The grid: every combination of the axes' values, the first axis slowest; then the machines.
  std::vector<std::string> names;
  std::vector<std::vector<std::int64_t>> axes;
  for (const auto& text : a.axes) {
    auto [name, values] = parse_axis(text);
    if (std::find(names.begin(), names.end(), name) != names.end()) throw isa::InputError(fmt::format("-D {} given twice", name));
    names.push_back(name);
    axes.push_back(values);
  }
  std::vector<std::string> gpus = a.gpus.empty() ? std::vector<std::string>{a.run.gpu} : a.gpus;
  // A machine that does not load is a mistake in the command, not a point that is not valid: refused before the run.
  for (const auto& g : gpus)
    if (!g.empty()) (void)models::load_machine(g);
  // The grid's size before it is built (a product of axes of up to 100000 values each would not fit in memory).
  double size = static_cast<double>(gpus.size());
  for (const auto& axis : axes) size *= static_cast<double>(axis.size());
  if (size > 1'000'000) throw isa::InputError(fmt::format("the grid has {:.0f} points (at most 1000000)", size));
  std::vector<Point> points;
  std::vector<std::size_t> at(axes.size(), 0);
  for (bool more = true; more;) {
    for (const auto& g : gpus) {
      Point p{{}, g};
      for (std::size_t i = 0; i < axes.size(); ++i) p.values.push_back(axes[i][at[i]]);
      points.push_back(p);
    }
    more = false;
    for (std::size_t i = axes.size(); i-- > 0;) {
      if (++at[i] < axes[i].size()) {
        more = true;
        break;
      }
      at[i] = 0;
    }
  }
  for (const auto& g : a.group)
    if (std::find(names.begin(), names.end(), g) == names.end())
      throw isa::InputError(fmt::format("--group {}: not a swept parameter (give it with -D {}=...)", g, g));

  std::vector<Row> rows(points.size());
  // This process's points: all of them, or every size-th from its rank.
  std::vector<std::size_t> mine = rk.share(points.size());
  Progress progress(err, mine.size(), root);
  auto run_point = [&](int k) {
    const std::size_t i = mine[static_cast<std::size_t>(k)];
    const Point& p = points[i];
    Row& row = rows[i];
    RunArgs r = a.run;
    r.gpu = p.gpu;
    for (std::size_t k = 0; k < names.size(); ++k) r.defines.push_back(fmt::format("{}={}", names[k], p.values[k]));
    try {
      Loaded l = load(r);
      models::RunResult res = models::simulate(l.program, l.machine, run_options(r, r.seed, r.jitter));
      row.exit = exit_code(res.outcome);
      row.cycles = res.cycles;
      row.clock_mhz = l.machine.clock_mhz;
      row.machine = res.stats.machine;
      row.time_us = res.stats.time_us;
      row.tflops = res.stats.time_us > 0 ? static_cast<double>(res.stats.flops) / (res.stats.time_us * 1e6) : 0.0;
      row.bottleneck = res.stats.bottleneck;
      switch (res.outcome) {
        case models::Outcome::kFinished: row.status = "finished"; break;
        case models::Outcome::kDeadlock: row.status = "deadlock"; break;
        case models::Outcome::kWatchdog: row.status = "watchdog"; break;
        case models::Outcome::kUndefined: row.status = res.diagnosis && res.diagnosis->hazard ? "hazard" : "undefined"; break;
      }
      if (res.diagnosis) row.reason = res.diagnosis->title;
      else if (!res.deadlock.causes.empty()) row.reason = first_line(res.deadlock.causes.front());
      else if (!res.watchdog_reason.empty()) row.reason = res.watchdog_reason;
    } catch (const isa::InputError& e) {
      row.status = "invalid";
      row.exit = kBadInput;
      row.reason = first_line(e.what());
    }
    progress.step();
  };
  parallel_for(static_cast<int>(mine.size()), a.jobs, run_point);
  progress.clear();
  if (rk.size > 1) {
    // Every rank's rows to rank 0, which goes on as if it had run them all.
    nlohmann::json local = nlohmann::json::array();
    for (std::size_t i : mine) local.push_back(row_json(i, rows[i]));
    std::vector<nlohmann::json> all = rk.gather_json(local);
    if (!root) return kOk;
    for (const auto& j : all) {
      Row& r = rows.at(j.at("i").get<std::size_t>());
      r.status = j.at("status");
      r.exit = j.at("exit");
      r.cycles = j.at("cycles");
      r.clock_mhz = j.at("clock_mhz");
      r.time_us = j.at("time_us");
      r.tflops = j.at("tflops");
      r.bottleneck = j.at("bottleneck");
      r.machine = j.at("machine");
      r.reason = j.at("reason");
    }
  }

  // The table, in grid order.
  std::string head;
  for (const auto& n : names) head += fmt::format("{:>10} ", n);
  bool many_gpus = gpus.size() > 1;
  out << fmt::format("{}{}{:>10} {:>12} {:>5} {:>10} {:>9}  {}\n", head, many_gpus ? fmt::format("{:>10} ", "gpu") : "", "status",
                     "cycles", "MHz", "time_us", "TFLOP/s", "bottleneck or reason");
  int worst = kOk;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Row& r = rows[i];
    std::string vals;
    for (auto v : points[i].values) vals += fmt::format("{:>10} ", v);
    const std::string& gpu = r.machine.empty() ? points[i].gpu : r.machine;
    out << fmt::format("{}{}{:>10} {:>12} {:>5.0f} {:>10.3f} {:>9.1f}  {}\n", vals, many_gpus ? fmt::format("{:>10} ", gpu) : "",
                       r.status, r.cycles, r.clock_mhz, r.time_us, r.tflops, r.status == "finished" ? r.bottleneck : r.reason);
    if (r.exit != kBadInput) worst = std::max(worst, r.exit);
  }
  // The ranking: the fastest finished points of each group (the values of the --group params).
  std::map<std::vector<std::int64_t>, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (rows[i].status != "finished") continue;
    std::vector<std::int64_t> key;
    for (const auto& g : a.group) key.push_back(points[i].values[static_cast<std::size_t>(std::find(names.begin(), names.end(), g) - names.begin())]);
    groups[key].push_back(i);
  }
  std::size_t finished = 0;
  for (auto& [key, members] : groups) {
    finished += members.size();
    // By time: points on other machines, or at their own sustained clock (--clock sustained), differ in clock.
    std::stable_sort(members.begin(), members.end(), [&](std::size_t x, std::size_t y) { return rows[x].time_us < rows[y].time_us; });
    std::string label;
    for (std::size_t k = 0; k < key.size(); ++k) label += fmt::format("{}{}={}", k ? " " : "", a.group[k], key[k]);
    out << fmt::format("\nfastest{}:\n", label.empty() ? "" : " for " + label);
    for (std::size_t k = 0; k < members.size() && k < static_cast<std::size_t>(a.top); ++k) {
      const Point& p = points[members[k]];
      std::string vals;
      for (std::size_t n = 0; n < names.size(); ++n) vals += fmt::format("{}{}={}", n ? " " : "", names[n], p.values[n]);
      out << fmt::format("  {}. {}{}: {} cycles ({:.3f} us)\n", k + 1, vals, many_gpus ? " on " + rows[members[k]].machine : "",
                         rows[members[k]].cycles, rows[members[k]].time_us);
    }
  }
  out << fmt::format("\n{} points: {} finished, {} did not", points.size(), finished, points.size() - finished);
  std::size_t invalid = static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.status == "invalid"; }));
  if (invalid) out << fmt::format(" ({} not valid inputs)", invalid);
  out << "\n";

  if (csv_file)
    csv_file->commit([&](std::ostream& f) {
      for (const auto& n : names) f << csv_field(n) << ",";
      f << "gpu,status,exit,cycles,clock_mhz,time_us,tflops,bottleneck,reason\n";
      for (std::size_t i = 0; i < points.size(); ++i) {
        const Row& r = rows[i];
        for (auto v : points[i].values) f << v << ",";
        f << fmt::format("{},{},{},{},{},{:.3f},{:.3f},{},{}\n", csv_field(r.machine.empty() ? points[i].gpu : r.machine), r.status,
                         r.exit, r.cycles, r.clock_mhz, r.time_us, r.tflops, csv_field(r.bottleneck), csv_field(r.reason));
      }
    });
  if (json_file || html_file) {
    nlohmann::json j = nlohmann::json::array();
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Row& r = rows[i];
      nlohmann::json params = nlohmann::json::object();
      for (std::size_t k = 0; k < names.size(); ++k) params[names[k]] = points[i].values[k];
      j.push_back({{"params", params}, {"gpu", r.machine.empty() ? points[i].gpu : r.machine}, {"status", r.status}, {"exit", r.exit},
                   {"cycles", r.cycles}, {"clock_mhz", r.clock_mhz}, {"time_us", r.time_us}, {"tflops", r.tflops}, {"bottleneck", r.bottleneck},
                   {"reason", r.reason}});
    }
    if (json_file)
      json_file->commit([&](std::ostream& f) { f << json_text({{"schema", kSweepSchema}, {"program", a.run.file}, {"points", j}}) << "\n"; });
    if (html_file) {
      std::string title = a.run.file;
      for (const auto& d : a.run.defines) title += " -D " + d;
      for (const auto& d : a.axes) title += " -D " + d;
      nlohmann::json data = {{"schema", kHtmlSchema}, {"kind", "sweep"}, {"title", title}, {"group_params", a.group},
                             {"swept", names}, {"points", j}};
      html_file->commit([&](std::ostream& f) { f << html_page(data); });
      out << fmt::format("report: {} (open in a browser)\n", a.html);
    }
  }
  return invalid == points.size() ? kBadInput : worst;  // nothing ran: the input is bad
}

}  // namespace smpipe::cli
