#include "models/observe/report.hpp"

#include "models/observe/deadlock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace smpipe::models {

using json = nlohmann::json;

std::string code_of(const std::string& text) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

namespace {

// A summary's name for something to wait on, as an object: {"kind": "mbarrier", "object": "full"} for
// "mbarrier full", {"kind": "named_barrier", "object": "1"} for "named barrier 1", {"kind": "wgmma_wait",
// "object": ""} for "wgmma.wait".
json wait_kind(const std::string& cause) {
  for (const char* prefix : {"mbarrier ", "named barrier "}) {
    std::string p(prefix);
    if (cause.rfind(p, 0) == 0) return {{"kind", code_of(p.substr(0, p.size() - 1))}, {"object", cause.substr(p.size())}};
  }
  return {{"kind", code_of(cause)}, {"object", ""}};
}


double pct(std::int64_t part, std::int64_t whole) { return whole > 0 ? 100.0 * static_cast<double>(part) / whole : 0.0; }

std::vector<std::pair<std::string, std::int64_t>> sorted_waits(const RoleStats& r) {
  std::vector<std::pair<std::string, std::int64_t>> v(r.waiting.begin(), r.waiting.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

// "12.0 KB", "3.4 MB", "1.2 GB" (decimal units, as the GB/s figures).
std::string byte_size(std::int64_t bytes) {
  double b = static_cast<double>(bytes);
  if (b < 1e6) return fmt::format("{:.1f} KB", b / 1e3);
  if (b < 1e9) return fmt::format("{:.1f} MB", b / 1e6);
  return fmt::format("{:.2f} GB", b / 1e9);
}

}  // namespace

std::string format_summary(const RunResult& r, const isa::Program& p) {
  const Stats& s = r.stats;
  std::string out;
  out += fmt::format("kernel {} on {} ({} MHz{}): {}\n", s.kernel, s.machine, s.clock_mhz,
                     s.clock_basis.empty() ? "" : ", " + s.clock_basis, outcome_word(r));
  if (s.launch_us > 0)
    out += fmt::format("  total        {} cycles = {:.3f} us + launch {:.3f} us = {:.3f} us   ({} CTAs on {} SMs, {} ops, {} events)\n",
                       s.cycles, s.time_us - s.launch_us, s.launch_us, s.time_us, s.ctas, s.sms_used, s.ops, s.events);
  else
    out += fmt::format("  total        {} cycles = {:.3f} us   ({} CTAs on {} SMs, {} ops, {} events)\n", s.cycles, s.time_us,
                       s.ctas, s.sms_used, s.ops, s.events);
  if (s.flops > 0 && s.time_us > 0)
    out += fmt::format("  tensor math  {:.1f} TFLOP/s ({} FLOP)\n", static_cast<double>(s.flops) / (s.time_us * 1e6), s.flops);
  if (s.bytes_loaded + s.bytes_stored > 0 && s.time_us > 0)
    out += fmt::format("  data         {:.1f} GB/s loaded, {:.1f} GB/s stored\n",
                       static_cast<double>(s.bytes_loaded) / (s.time_us * 1e3),
                       static_cast<double>(s.bytes_stored) / (s.time_us * 1e3));
  if (s.l2_hit_bytes >= 0 && s.l2_hit_bytes + s.l2_miss_bytes > 0)
    out += fmt::format("  memory       L2 hits {:.1f}% of {} read ({:.1f}% combined with another SM's read); HBM {} ({:.1f} GB/s, "
                       "write-backs included)\n",
                       100.0 * static_cast<double>(s.l2_hit_bytes) / static_cast<double>(s.l2_hit_bytes + s.l2_miss_bytes),
                       byte_size(s.l2_hit_bytes + s.l2_miss_bytes),
                       100.0 * static_cast<double>(std::max<std::int64_t>(0, s.l2_merged_bytes)) / static_cast<double>(s.l2_hit_bytes + s.l2_miss_bytes),
                       byte_size(s.hbm_bytes), static_cast<double>(s.hbm_bytes) / (s.time_us * 1e3));
  if (s.l2_outside_bytes > 0)
    out += fmt::format("  outside      {} of the boxes loaded lie outside their tensors (zero-filled; the L2 answers them "
                       "too)\n",
                       byte_size(s.l2_outside_bytes));
  if (s.l2_footprint_bytes > 0) {
    // With two partitions each keeps a copy: the tensors fit when both copies do.
    const bool fits = s.l2_footprint_bytes * s.l2_copies <= s.l2_capacity_bytes;
    if (s.l2_dirty_start_bytes > 0 && !s.l2_dirty_start_tensors.empty()) {
      std::string names;
      for (const std::string& n : s.l2_dirty_start_tensors) names += (names.empty() ? "" : ", ") + n;
      out += fmt::format("  L2 start     dirty ({} of tensor{} {}, as the kernel that wrote {} leaves {}{}, written back to HBM as "
                         "the launch evicts {}: --l2 dirty:{})\n",
                         byte_size(s.l2_dirty_start_bytes), s.l2_dirty_start_tensors.size() > 1 ? "s" : "", names,
                         s.l2_dirty_start_tensors.size() > 1 ? "them" : "it", s.l2_dirty_start_tensors.size() > 1 ? "them" : "it",
                         s.l2_dirty_capped ? fmt::format(": its last stores, a kernel leaves at most {:.1f} % of the L2 dirty "
                                                         "(l2_dirty_left_share)",
                                                         100 * s.l2_dirty_left_share)
                                           : "",
                         s.l2_dirty_start_tensors.size() > 1 ? "them" : "it", fmt::join(s.l2_dirty_start_tensors, ","));
    } else if (s.l2_dirty_start_bytes > 0)
      out += fmt::format("  L2 start     dirty ({} of another kernel's stores{}, written back to HBM as the launch evicts "
                         "them; none of the tensors' {}: --l2 dirty)\n",
                         byte_size(s.l2_dirty_start_bytes),
                         s.l2_dirty_capped ? fmt::format(": a kernel leaves at most {:.1f} % of the L2 dirty (l2_dirty_left_share)",
                                                         100 * s.l2_dirty_left_share)
                                           : "",
                         byte_size(s.l2_footprint_bytes));
    else
      out += fmt::format("  L2 start     {} (the tensors' {}{} {} the L2's {}{})\n", s.l2_warm ? "warm" : "cold",
                         byte_size(s.l2_footprint_bytes), s.l2_copies > 1 ? ", a copy in each of the two L2 partitions," : "",
                         fits ? "fit in" : "exceed", byte_size(s.l2_capacity_bytes),
                         s.l2_warm ? ", as a previous launch of the kernel leaves them" : fits ? ": --l2 cold" : "");
  }
  if (!s.reports.empty()) {
    std::vector<std::string> parts;
    for (const auto& [name, v] : s.reports) {
      std::string part = fmt::format("{} {}", name, v);
      // Tiles: per SM used and in waves of the CTAs the GPU held at once.
      if (name == "tiles" && s.sms_used > 0 && s.peak_resident_ctas > 0)
        part += fmt::format(" ({:.1f} per SM, {:.2f} waves of {} resident CTAs)", static_cast<double>(v) / s.sms_used,
                            static_cast<double>(v) / s.peak_resident_ctas, s.peak_resident_ctas);
      parts.push_back(part);
    }
    out += fmt::format("  model        {}\n", fmt::join(parts, ", "));
  }
  out += "roles (share of warp lifetime):\n";
  for (const auto& role : s.roles) {
    if (role.warps == 0) continue;
    std::int64_t waited = 0;
    for (const auto& [_, c] : role.waiting) waited += c;
    if (role.lifetime == 0) {  // warps that exited at once, or a run that stopped at cycle 0: no shares to give
      out += fmt::format("  {:<14} {:>4} warps  lifetime 0 cycles\n", role.name, role.warps);
      continue;
    }
    out += fmt::format("  {:<14} {:>4} warps  busy {:5.1f}%  waiting {:5.1f}%  other {:5.1f}%\n", role.name, role.warps,
                       pct(role.busy, role.lifetime), pct(waited, role.lifetime),
                       std::max(0.0, 100.0 - pct(role.busy, role.lifetime) - pct(waited, role.lifetime)));
    for (const auto& [cause, cycles] : sorted_waits(role))
      out += fmt::format("      waiting on {:<34} {:5.1f}%\n", cause, pct(cycles, role.lifetime));
    for (const auto& [region, cycles] : role.regions)
      out += fmt::format("      in region {:<35} {:5.1f}%\n", region, pct(cycles, role.lifetime));
  }
  bool any_barrier = false;
  for (const auto& b : s.barriers) any_barrier = any_barrier || b.phases > 0 || b.waits > 0;
  if (any_barrier) {
    out += "mbarriers:\n";
    for (const auto& b : s.barriers)
      out += fmt::format("  {:<14} {:>8} phases  {:>8} blocking waits  mean {:>8.1f}  max {:>8} cycles\n", b.name, b.phases,
                         b.waits, b.waits ? static_cast<double>(b.wait_cycles) / b.waits : 0.0, b.wait_max);
  }
  out += "units (utilisation over the SMs used):\n";
  for (const auto& u : s.units) out += fmt::format("  {:<24} {:5.1f}%\n", u.name, 100.0 * u.utilisation);
  if (!s.bottleneck.empty() && r.outcome == Outcome::kFinished) out += fmt::format("bottleneck: {}\n", s.bottleneck);
  (void)p;
  return out;
}

static std::string format_notes(const RunResult& r) {
  std::string out;
  for (const auto& n : r.notes) out += fmt::format("note: {}\n", n);
  for (const auto& w : r.warnings) out += fmt::format("warning: {}\n", w);
  return out;
}

std::string format_problem(const RunResult& r) {
  if (r.outcome == Outcome::kFinished) {
    std::string out;
    for (const auto& w : r.warnings) out += fmt::format("warning: {}\n", w);
    return out;
  }
  std::string out;
  if (r.outcome == Outcome::kUndefined && r.diagnosis) {
    const Diagnosis& d = *r.diagnosis;
    out += fmt::format("{}: {}: {}\n", d.loc.file ? d.loc.str() : "<kernel>", d.hazard ? "hazard" : "undefined behaviour",
                       d.title);
    out += fmt::format("  at cycle {}", d.cycle);
    if (d.cta >= 0) out += fmt::format(", CTA {}", d.cta);
    if (d.warp >= 0) out += fmt::format(" warp {} ({})", d.warp, d.role);
    if (!d.op_text.empty()) out += fmt::format(", op `{}`", d.op_text);
    out += fmt::format("\n  {}\n", d.message);
    return out + format_notes(r);
  }
  if (r.outcome == Outcome::kDeadlock || r.outcome == Outcome::kWatchdog) {
    const DeadlockReport& rep = r.deadlock;
    if (r.outcome == Outcome::kDeadlock)
      out += fmt::format("deadlock at cycle {}: no event is left and {} warp(s) cannot proceed\n", r.cycles, rep.warps.size());
    else
      out += fmt::format("watchdog at cycle {}: {}\n", r.cycles, r.watchdog_reason);
    bool progressing = r.outcome == Outcome::kWatchdog && rep.progressing(r.cycles);
    // Every warp left is inside a compute op that shares its sub-partition (a long op in progress, not a loop; a
    // warp merely running could be spinning).
    const bool working = !rep.warps.empty() && std::all_of(rep.warps.begin(), rep.warps.end(), [](const StuckWarp& w) {
      return w.cause == "a shared SM sub-partition";
    });
    if (!progressing && r.outcome == Outcome::kWatchdog && rep.limit_stop && working)
      out += "  no barrier phase completed and no warp exited before the stop, but every warp below is inside an op that "
             "takes time (it computes): the run needs more than the limit. Raise --max-cycles or --max-ops. Where the warps "
             "were:\n";
    else if (progressing)
      out += fmt::format("  the run was still making progress (a barrier phase completed or a warp exited at cycle {}): it did not "
                         "hang, it needs more than the limit. Raise --max-cycles or --max-ops. Where the warps were:\n",
                         rep.last_progress);
    else if (r.outcome == Outcome::kWatchdog && rep.limit_stop && rep.tx_in_flight > 0)
      out += fmt::format("  {} bytes of copies were still on their way to their barriers at the stop: the run was cut short "
                         "while the warps below waited for them (raise --max-cycles or --max-ops). Where the warps were:\n",
                         rep.tx_in_flight);
    else if (r.outcome == Outcome::kWatchdog && rep.limit_stop && rep.last_progress < 0)
      out += "  no barrier phase completed and no warp exited before the stop: the warps below loop without progress\n";
    else if (r.outcome == Outcome::kWatchdog && rep.limit_stop)
      out += fmt::format("  no barrier phase completed and no warp exited after cycle {} ({} cycles before the stop): the warps "
                         "below loop without progress\n",
                         rep.last_progress, r.cycles - rep.last_progress);
    // Warps in the same state (role, op, what they wait for, up to its numbers: the barrier index, the CTA)
    // are listed once, with how many share it: a deadlock usually repeats in every CTA.
    std::vector<std::pair<std::string, std::vector<const StuckWarp*>>> groups;
    for (const auto& w : rep.warps) {
      std::string key = fmt::format("{}|{}|{}|{}", w.role, w.loc.str(), w.op_text, number_shape(w.waits_for));
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
      if (it == groups.end()) {
        groups.emplace_back(key, std::vector<const StuckWarp*>{&w});
      } else {
        it->second.push_back(&w);
      }
    }
    constexpr std::size_t kShownGroups = 24;
    for (std::size_t g = 0; g < groups.size() && g < kShownGroups; ++g) {
      const auto& members = groups[g].second;
      const StuckWarp& w = *members.front();
      out += fmt::format("  CTA {} warp {} ({}) at {}: `{}`\n", w.cta, w.warp, w.role, w.loc.file ? w.loc.str() : "?", w.op_text);
      out += fmt::format("      waits for {} (since cycle {})\n", w.waits_for, w.since);
      if (members.size() > 1) {
        std::set<std::int64_t> ctas;
        for (const auto* m : members) ctas.insert(m->cta);
        std::vector<std::int64_t> some(ctas.begin(), ctas.end());
        std::string list = ctas.size() <= 6 ? fmt::format("{}", fmt::join(some, ", "))
                                            : fmt::format("{}, {}, {} ... {}", some[0], some[1], some[2], some.back());
        if (ctas.size() == 1)
          out += fmt::format("      (and {} more warp(s) in the same state, in 1 CTA(s))\n", members.size() - 1);
        else
          out += fmt::format("      (and {} more warp(s) in the same state, in {} CTA(s): {})\n", members.size() - 1, ctas.size(), list);
      }
    }
    if (groups.size() > kShownGroups)
      out += fmt::format("  ... and {} more groups of stuck warps (smpipe run --json lists every warp)\n", groups.size() - kShownGroups);
    if (!rep.cycles.empty() && !progressing) {
      out += "wait-for cycle(s):\n";
      std::vector<std::string> seen;
      std::size_t repeats = 0;
      for (const auto& cyc : rep.cycles) {
        std::vector<std::string> parts, shape;
        for (int i : cyc) {
          parts.push_back(fmt::format("CTA {} warp {} ({})", rep.warps[i].cta, rep.warps[i].warp, rep.warps[i].role));
          shape.push_back(fmt::format("{}/{}", rep.warps[i].warp, rep.warps[i].role));
        }
        std::string key = fmt::format("{}", fmt::join(shape, ","));
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
          ++repeats;
          continue;
        }
        seen.push_back(key);
        parts.push_back(parts.front());
        out += fmt::format("  {}\n", fmt::join(parts, " -> "));
      }
      if (repeats) out += fmt::format("  (the same cycle in {} more CTA(s))\n", repeats);
    }
    if (!rep.causes.empty() && !progressing) {
      out += "likely cause:\n";
      for (const auto& c : rep.causes) out += fmt::format("  - {}\n", c);
    }
    if (rep.unlaunched_ctas > 0) out += fmt::format("  ({} CTAs of the grid were not launched yet)\n", rep.unlaunched_ctas);
  }
  return out + format_notes(r);
}

nlohmann::json to_json(const RunResult& r, const isa::Program& p) {
  using nlohmann::json;
  const Stats& s = r.stats;
  json j;
  j["schema"] = kRunSchema;
  j["kernel"] = s.kernel;
  j["machine"] = s.machine;
  j["clock_mhz"] = s.clock_mhz;
  if (!s.clock_basis.empty()) j["clock_basis"] = s.clock_basis;
  j["outcome"] = outcome_word(r);
  j["cycles"] = s.cycles;
  j["time_us"] = s.time_us;
  j["launch_us"] = s.launch_us;
  if (s.l2_hit_bytes >= 0) {
    j["l2_hit_bytes"] = s.l2_hit_bytes;
    j["l2_miss_bytes"] = s.l2_miss_bytes;
    j["l2_merged_bytes"] = std::max<std::int64_t>(0, s.l2_merged_bytes);
    if (s.l2_outside_bytes > 0) j["l2_outside_bytes"] = s.l2_outside_bytes;
    j["hbm_bytes"] = s.hbm_bytes;
    j["hbm_read_bytes"] = s.hbm_read_bytes;
  }
  if (s.l2_footprint_bytes >= 0) {
    j["l2_start"] = s.l2_dirty_start_bytes > 0 ? "dirty" : s.l2_warm ? "warm" : "cold";
    j["l2_footprint_bytes"] = s.l2_footprint_bytes;
    if (s.l2_dirty_start_bytes > 0) j["l2_dirty_start_bytes"] = s.l2_dirty_start_bytes;
    if (!s.l2_dirty_start_tensors.empty()) j["l2_dirty_start_tensors"] = s.l2_dirty_start_tensors;
  }
  j["ctas"] = s.ctas;
  j["sms_used"] = s.sms_used;
  j["ops"] = s.ops;
  j["events"] = s.events;
  j["flops"] = s.flops;
  j["tflops"] = s.time_us > 0 ? static_cast<double>(s.flops) / (s.time_us * 1e6) : 0.0;
  j["bytes_loaded"] = s.bytes_loaded;
  j["bytes_stored"] = s.bytes_stored;
  json params = json::object();
  for (const auto& [n, v] : p.params) params[n] = v;
  j["params"] = params;
  json roles = json::array();
  for (const auto& role : s.roles) {
    json waits = json::object();
    for (const auto& [cause, cycles] : role.waiting) waits[cause] = cycles;
    json regions = json::object();
    for (const auto& [name, cycles] : role.regions) regions[name] = cycles;
    json by_kind = json::array();
    for (const auto& [cause, cycles] : role.waiting) {
      json w = wait_kind(cause);
      w["cycles"] = cycles;
      by_kind.push_back(w);
    }
    roles.push_back({{"name", role.name}, {"warps", role.warps}, {"lifetime_cycles", role.lifetime}, {"busy_cycles", role.busy},
                     {"ops", role.ops}, {"waiting_cycles", waits}, {"waits", by_kind}, {"region_cycles", regions}});
  }
  j["roles"] = roles;
  json bars = json::array();
  for (const auto& b : s.barriers) {
    json hist = json::array();  // non-empty buckets: [lo, hi, count], lo <= cycles < hi
    for (std::size_t i = 0; i < b.wait_histogram.size(); ++i)
      if (b.wait_histogram[i] > 0)
        hist.push_back({i == 0 ? 0 : std::int64_t{1} << (i - 1), std::int64_t{1} << i, b.wait_histogram[i]});
    bars.push_back({{"name", b.name}, {"phases", b.phases}, {"blocking_waits", b.waits}, {"wait_cycles", b.wait_cycles},
                    {"wait_max", b.wait_max}, {"wait_histogram", hist}});
  }
  j["mbarriers"] = bars;
  json units = json::array();
  for (const auto& u : s.units) units.push_back({{"name", u.name}, {"busy_cycles", u.busy}, {"utilisation", u.utilisation}});
  j["units"] = units;
  j["bottleneck"] = s.bottleneck;
  j["peak_resident_ctas"] = s.peak_resident_ctas;
  json reports = json::object();
  for (const auto& [name, v] : s.reports) reports[name] = v;
  j["reports"] = reports;
  j["notes"] = r.notes;
  j["warnings"] = r.warnings;
  if (r.diagnosis) {
    const Diagnosis& d = *r.diagnosis;
    j["diagnosis"] = {{"kind", d.hazard ? "hazard" : "undefined_behaviour"},
                      {"code", code_of(d.title)},
                      {"title", d.title},
                      {"message", d.message},
                      {"cycle", d.cycle},
                      {"cta", d.cta},
                      {"warp", d.warp},
                      {"role", d.role},
                      {"location", d.loc.file ? d.loc.str() : ""},
                      {"line", d.loc.line},
                      {"column", d.loc.col},
                      {"op", d.op_text},
                      {"hazard", d.hazard}};
  }
  if (r.outcome == Outcome::kDeadlock || r.outcome == Outcome::kWatchdog) {
    json warps = json::array();
    for (const auto& w : r.deadlock.warps)
      warps.push_back({{"cta", w.cta}, {"warp", w.warp}, {"role", w.role}, {"location", w.loc.file ? w.loc.str() : ""},
                       {"line", w.loc.line}, {"op", w.op_text}, {"waits_for", w.waits_for}, {"since", w.since},
                       {"wait", w.cause.empty() ? json(nullptr) : wait_kind(w.cause)}});
    json cycles = json::array();
    for (const auto& c : r.deadlock.cycles) cycles.push_back(c);
    j["deadlock"] = {{"warps", warps}, {"cycles", cycles}, {"causes", r.deadlock.causes},
                     {"unlaunched_ctas", r.deadlock.unlaunched_ctas}};
    if (!r.watchdog_reason.empty()) {
      j["watchdog"] = r.watchdog_reason;
      j["deadlock"]["last_progress_cycle"] = r.deadlock.last_progress;
      j["deadlock"]["progressing"] = r.deadlock.progressing(r.cycles);
    }
  }
  return j;
}

}  // namespace smpipe::models
