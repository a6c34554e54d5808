#include "traces/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "sim/trace_writer.hpp"

namespace smpipe::traces {

namespace {


Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  p.n = static_cast<std::int64_t>(v.size());
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))]; };
  p.p50 = at(0.5);
  p.p90 = at(0.9);
  p.p99 = at(0.99);
  p.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  p.mean = sum / static_cast<double>(v.size());
  return p;
}

nlohmann::json to_json(const Percentiles& p) {
  return {{"n", p.n}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"max", p.max}, {"mean", p.mean}};
}

// The events of a warp that are compared: all of them, except a truncated warp's `exit` (it happened after
// the recorded window, where the replay has nothing).
std::size_t compared_events(const HwTrace& t, const HwWarp& w) {
  std::size_t n = w.events.size();
  if ((t.truncated || w.window_cut) && n > 0 && w.events.back().op == "exit") --n;
  return n;
}

std::string pct(double sim, double hw) { return hw > 0 ? fmt::format("{:+.1f}%", 100.0 * (sim - hw) / hw) : "n/a"; }

}  // namespace

SimTimes sim_times(const HwTrace& trace, const Replay& replay, const std::vector<LoggedOp>& log) {
  SimTimes s;
  const std::size_t slots = trace.ctas.size();
  s.event.resize(slots);
  s.warp_end.resize(slots);
  s.cta_start.assign(slots, -1);
  std::unordered_map<std::int64_t, std::size_t> slot_of;
  for (std::size_t i = 0; i < slots; ++i) {
    slot_of[replay.slot_cta[i]] = i;
    for (const auto& w : trace.ctas[i].warps) s.event[i].emplace_back(w.events.size(), -1);
    s.warp_end[i].assign(trace.ctas[i].warps.size(), -1);
  }
  for (const auto& e : log) {
    auto it = slot_of.find(e.cta);
    if (it == slot_of.end()) continue;
    std::int64_t& start = s.cta_start[it->second];
    if (start < 0 || e.cycle < start) start = e.cycle;
  }
  for (const auto& e : log) {
    auto it = slot_of.find(e.cta);
    if (it == slot_of.end()) continue;
    std::size_t slot = it->second;
    std::int64_t rel = e.cycle - s.cta_start[slot];
    if (e.warp < 0 || static_cast<std::size_t>(e.warp) >= s.warp_end[slot].size()) continue;
    if (e.exit) {
      s.warp_end[slot][e.warp] = rel;
      continue;
    }
    if (e.origin < 0 || static_cast<std::size_t>(e.origin) >= replay.origin_events.size()) continue;
    for (const EventRef& r : replay.origin_events[e.origin])
      if (r.slot == static_cast<int>(slot) && r.warp_pos == e.warp) s.event[slot][e.warp][r.event] = rel;
  }
  return s;
}

Comparison compare(const HwTrace& t, const Replay& replay, const SimTimes& sim, const std::string& machine, std::int64_t sim_cycles,
                   double clock_mhz) {
  Comparison c;
  c.trace = t.path;
  c.machine = machine;
  c.clock_mhz = clock_mhz;
  c.clock_from_trace = t.sm_clock_mhz > 0 && std::fabs(t.sm_clock_mhz - clock_mhz) < 0.05;
  c.probe_cycles = replay.probe_cycles;
  c.ctas_launched = replay.ctas;
  c.windowed = t.truncated;
  c.sim_cycles = sim_cycles;
  c.notes = replay.notes;
  c.own_cycles = replay.own_cycles;
  c.own_source = replay.own_source;
  if (t.sm_clock_mhz <= 0) c.notes.push_back("the trace has no measured SM clock: the simulation ran at the machine's");

  std::vector<double> ev_err, ev_pct, iv_err;
  std::map<std::string, IntervalGroup> groups;
  std::map<std::string, RoleSplit> roles;
  std::vector<std::string> role_order;
  for (std::size_t s = 0; s < t.ctas.size(); ++s) {
    const HwCta& cta = t.ctas[s];
    CtaSpan span;
    span.cta = cta.cta;
    bool sim_complete = true;
    for (std::size_t w = 0; w < cta.warps.size(); ++w) {
      const HwWarp& hw = cta.warps[w];
      const auto& st = sim.event[s][w];
      std::size_t n = compared_events(t, hw);
      if (c.windowed) {
        if (n > 0) {
          span.hw = std::max(span.hw, hw.events[n - 1].cycle);
          if (st[n - 1] < 0) sim_complete = false;
          span.sim = std::max(span.sim, st[n - 1]);
        }
      } else {
        span.hw = std::max(span.hw, hw.end);
        if (sim.warp_end[s][w] < 0) sim_complete = false;
        span.sim = std::max(span.sim, sim.warp_end[s][w]);
      }
      if (!roles.count(hw.role)) role_order.push_back(hw.role);
      RoleSplit& role = roles[hw.role];
      role.role = hw.role;
      role.warps++;
      std::int64_t hw_last = n > 0 ? hw.events[n - 1].cycle : 0, sim_last = n > 0 ? st[n - 1] : 0;
      if (!c.windowed) {
        hw_last = hw.end;
        sim_last = sim.warp_end[s][w];
      }
      role.hw_life += hw_last;
      role.sim_life += std::max<std::int64_t>(sim_last, 0);
      for (std::size_t k = 0; k < n; ++k) {
        const HwEvent& e = hw.events[k];
        if (st[k] < 0) {
          c.missing++;
          continue;
        }
        c.events++;
        double err = std::fabs(static_cast<double>(st[k] - e.cycle));
        ev_err.push_back(err);
        if (k + 1 >= n || st[k + 1] < 0) continue;
        const HwEvent& f = hw.events[k + 1];
        std::int64_t hw_len = f.cycle - e.cycle, sim_len = st[k + 1] - st[k];
        std::string key = interval_kind(e, f);
        IntervalGroup& g = groups[key];
        g.key = key;
        g.count++;
        g.hw_mean += static_cast<double>(hw_len);
        g.sim_mean += static_cast<double>(sim_len);
        g.abs_error += std::fabs(static_cast<double>(sim_len - hw_len));
        iv_err.push_back(std::fabs(static_cast<double>(sim_len - hw_len)));
        if (is_end(f.op)) {
          role.hw_wait += hw_len;
          role.sim_wait += sim_len;
          auto& wv = role.waits[event_label(e, false)];
          wv.first += hw_len;
          wv.second += sim_len;
        }
      }
    }
    if (!sim_complete) span.sim = -1;
    for (std::size_t w = 0; w < cta.warps.size(); ++w) {
      std::size_t n = compared_events(t, cta.warps[w]);
      for (std::size_t k = 0; k < n; ++k)
        if (sim.event[s][w][k] >= 0 && span.hw > 0)
          ev_pct.push_back(100.0 * std::fabs(static_cast<double>(sim.event[s][w][k] - cta.warps[w].events[k].cycle)) /
                           static_cast<double>(span.hw));
    }
    c.ctas.push_back(span);
  }
  c.event_error = percentiles(ev_err);
  c.event_error_pct = percentiles(ev_pct);
  c.interval_error = percentiles(iv_err);
  for (const auto& r : role_order) c.roles.push_back(roles[r]);
  for (auto& [k, g] : groups) {
    g.hw_mean /= static_cast<double>(g.count);
    g.sim_mean /= static_cast<double>(g.count);
    c.intervals.push_back(g);
  }
  std::stable_sort(c.intervals.begin(), c.intervals.end(),
                   [](const IntervalGroup& a, const IntervalGroup& b) { return a.abs_error > b.abs_error; });
  std::int64_t grid = t.grid[0] * std::max<std::int64_t>(1, t.grid[1]) * std::max<std::int64_t>(1, t.grid[2]);
  if (!t.truncated && replay.ctas == grid) {
    c.kernel_sim_us = static_cast<double>(sim_cycles) / c.clock_mhz;
    std::int64_t first = t.ctas.front().globaltimer_start, last = t.ctas.front().globaltimer_end;
    for (const auto& cta : t.ctas) {
      first = std::min(first, cta.globaltimer_start);
      last = std::max(last, cta.globaltimer_end);
    }
    c.kernel_hw_span_us = static_cast<double>(last - first) / 1000.0;
    if (t.kernel_ms > 0) c.kernel_hw_event_us = t.kernel_ms * 1000.0;
  }
  return c;
}

std::string format_comparison(const Comparison& c) {
  std::string o;
  o += fmt::format("compare: {} vs smpipe on {} (replay: {} CTA(s) launched, {} recorded; {} cycles per probe record)\n", c.trace,
                   c.machine, c.ctas_launched, c.ctas.size(), c.probe_cycles);
  o += fmt::format("cycles are SM cycles; the simulation runs at {:.1f} MHz{}\n", c.clock_mhz,
                   c.clock_from_trace ? " (the trace's measured SM clock)" : "");
  for (const auto& n : c.notes) o += "note: " + n + "\n";
  o += fmt::format("\nend to end, per recorded CTA ({}):\n", c.windowed ? "cycles from its start to the last event of the recorded window"
                                                                         : "cycles from its start to its last warp's exit");
  o += fmt::format("  {:>6} {:>10} {:>10} {:>8}\n", "CTA", "hardware", "simulated", "error");
  double hw_sum = 0, sim_sum = 0;
  for (const auto& s : c.ctas) {
    o += fmt::format("  {:>6} {:>10} {:>10} {:>8}\n", s.cta, s.hw, s.sim < 0 ? std::string("-") : fmt::format("{}", s.sim),
                     s.sim < 0 ? std::string("n/a") : pct(static_cast<double>(s.sim), static_cast<double>(s.hw)));
    hw_sum += static_cast<double>(s.hw);
    sim_sum += static_cast<double>(std::max<std::int64_t>(s.sim, 0));
  }
  o += fmt::format("  {:>6} {:>10.0f} {:>10.0f} {:>8}\n", "mean", hw_sum / static_cast<double>(c.ctas.size()),
                   sim_sum / static_cast<double>(c.ctas.size()), pct(sim_sum, hw_sum));
  if (c.kernel_sim_us > 0) {
    o += fmt::format("  kernel: simulated {:.2f} us ({} cycles, every CTA); hardware: the recorded CTAs ran {:.2f} us (%globaltimer): {}\n",
                     c.kernel_sim_us, c.sim_cycles, c.kernel_hw_span_us, pct(c.kernel_sim_us, c.kernel_hw_span_us));
    if (c.kernel_hw_event_us > 0)
      o += fmt::format("          the traced launch took {:.2f} us by CUDA events (launch overhead and the probe's fixed cost included)\n",
                       c.kernel_hw_event_us);
  } else
    o += "  kernel: not compared (the trace is a window of the launch, or only the recorded CTAs were replayed)\n";

  o += fmt::format("\nevents: {} compared{}\n", c.events, c.missing ? fmt::format(", {} never reached in the simulation", c.missing) : "");
  o += fmt::format("  |sim - hw| event time, cycles:   p50 {:.0f}  p90 {:.0f}  p99 {:.0f}  max {:.0f}\n", c.event_error.p50,
                   c.event_error.p90, c.event_error.p99, c.event_error.max);
  o += fmt::format("  the same, % of the CTA's span:   p50 {:.1f}  p90 {:.1f}  p99 {:.1f}  max {:.1f}\n", c.event_error_pct.p50,
                   c.event_error_pct.p90, c.event_error_pct.p99, c.event_error_pct.max);
  o += fmt::format("  |sim - hw| interval length (event to next event of the warp), cycles: p50 {:.0f}  p90 {:.0f}  p99 {:.0f}  max {:.0f}\n",
                   c.interval_error.p50, c.interval_error.p90, c.interval_error.p99, c.interval_error.max);

  o += "\nper role (recorded CTAs; life = start to exit or window end; wait = blocking ops, X to X.end):\n";
  o += fmt::format("  {:<16} {:>5} {:>10} {:>7} {:>10} {:>7}\n", "role", "warps", "hw life", "hw wait", "sim life", "sim wait");
  for (const auto& r : c.roles) {
    auto share = [](std::int64_t w, std::int64_t l) { return l > 0 ? fmt::format("{:.0f}%", 100.0 * static_cast<double>(w) / static_cast<double>(l)) : std::string("-"); };
    o += fmt::format("  {:<16} {:>5} {:>10} {:>7} {:>10} {:>7}\n", r.role, r.warps, r.hw_life / std::max<std::int64_t>(r.warps, 1),
                     share(r.hw_wait, r.hw_life), r.sim_life / std::max<std::int64_t>(r.warps, 1), share(r.sim_wait, r.sim_life));
    for (const auto& [k, v] : r.waits)
      o += fmt::format("    {:<26} hw {:>5.0f}  sim {:>5.0f} cycles per warp\n", k, static_cast<double>(v.first) / static_cast<double>(r.warps),
                       static_cast<double>(v.second) / static_cast<double>(r.warps));
  }

  o += "\nintervals by kind, largest total |sim - hw| first (where the model's errors come from):\n";
  double total = 0;
  for (const auto& g : c.intervals) total += g.abs_error;
  o += fmt::format("  {:<40} {:>6} {:>9} {:>9} {:>9} {:>7}\n", "interval", "n", "hw mean", "sim mean", "error", "share");
  for (std::size_t i = 0; i < c.intervals.size() && i < 12; ++i) {
    const auto& g = c.intervals[i];
    o += fmt::format("  {:<40} {:>6} {:>9.0f} {:>9.0f} {:>+9.0f} {:>6.1f}%\n", g.key, g.count, g.hw_mean, g.sim_mean, g.sim_mean - g.hw_mean,
                     total > 0 ? 100.0 * g.abs_error / total : 0.0);
  }
  return o;
}

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json j;
  j["schema"] = kCompareSchema;
  j["trace"] = c.trace;
  j["machine"] = c.machine;
  j["clock_mhz"] = c.clock_mhz;
  j["probe_cycles"] = c.probe_cycles;
  j["ctas_launched"] = c.ctas_launched;
  j["windowed"] = c.windowed;
  j["notes"] = c.notes;
  if (!c.own_source.empty()) j["own_time"] = {{"source", c.own_source}, {"cycles", c.own_cycles}};
  j["ctas"] = nlohmann::json::array();
  for (const auto& s : c.ctas) j["ctas"].push_back({{"cta", s.cta}, {"hw_cycles", s.hw}, {"sim_cycles", s.sim}});
  if (c.kernel_sim_us > 0)
    j["kernel"] = {{"sim_us", c.kernel_sim_us}, {"sim_cycles", c.sim_cycles}, {"hw_recorded_span_us", c.kernel_hw_span_us},
                   {"hw_cuda_event_us", c.kernel_hw_event_us}};
  j["events"] = {{"compared", c.events}, {"missing", c.missing}, {"abs_error_cycles", to_json(c.event_error)},
                 {"abs_error_pct_of_span", to_json(c.event_error_pct)}, {"interval_abs_error_cycles", to_json(c.interval_error)}};
  j["roles"] = nlohmann::json::array();
  for (const auto& r : c.roles) {
    nlohmann::json waits = nlohmann::json::object();
    for (const auto& [k, v] : r.waits) waits[k] = {{"hw", v.first}, {"sim", v.second}};
    j["roles"].push_back({{"role", r.role}, {"warps", r.warps}, {"hw_life", r.hw_life}, {"hw_wait", r.hw_wait},
                          {"sim_life", r.sim_life}, {"sim_wait", r.sim_wait}, {"waits", waits}});
  }
  j["intervals"] = nlohmann::json::array();
  for (const auto& g : c.intervals)
    j["intervals"].push_back(
        {{"key", g.key}, {"count", g.count}, {"hw_mean", g.hw_mean}, {"sim_mean", g.sim_mean}, {"abs_error", g.abs_error}});
  return j;
}

void write_combined_trace(const HwTrace& t, const SimTimes& sim, double clock_mhz, std::ostream& out) {
  sim::TraceWriter w(clock_mhz, static_cast<std::int64_t>(t.ctas.size()));
  for (std::size_t s = 0; s < t.ctas.size(); ++s) {
    const HwCta& cta = t.ctas[s];
    auto pid = static_cast<std::int64_t>(s);
    w.name_process(pid, fmt::format("CTA {} (hardware on SM {}, and simulated)", cta.cta, cta.sm));
    for (std::size_t k = 0; k < cta.warps.size(); ++k) {
      const HwWarp& hw = cta.warps[k];
      for (int side = 0; side < 2; ++side) {
        auto tid = static_cast<std::int64_t>(2 * k + side);
        w.name_thread(pid, tid, fmt::format("w{} {} ({})", hw.warp, hw.role, side == 0 ? "hw" : "sim"));
        const auto& st = sim.event[s][k];
        auto at = [&](std::size_t e) { return side == 0 ? hw.events[e].cycle : st[e]; };
        std::int64_t end = side == 0 ? hw.end : sim.warp_end[s][k];
        if (!hw.events.empty() && at(0) > 0) w.slice(pid, tid, "prologue", side == 0 ? "hw" : "sim", 0, at(0));
        for (std::size_t e = 0; e < hw.events.size(); ++e) {
          std::int64_t a = at(e);
          if (a < 0) break;
          std::int64_t b = e + 1 < hw.events.size() ? at(e + 1) : end;
          if (b < a) b = a;
          const HwEvent& ev = hw.events[e];
          std::string name = event_label(ev, true);
          if (is_end(ev.op)) {
            HwEvent blocking = ev;
            blocking.op.resize(ev.op.size() - 4);
            name = "after " + event_label(blocking, true);
          }
          w.slice(pid, tid, name, side == 0 ? "hw" : "sim", a, b - a,
                  fmt::format(R"({{"event":{},"hw_cycle":{},"sim_cycle":{}}})", e, hw.events[e].cycle, st[e]));
        }
      }
    }
  }
  w.write(out);
}

}  // namespace smpipe::traces
