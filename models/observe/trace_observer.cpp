#include "models/observe/trace_observer.hpp"

#include <fmt/format.h>

namespace smpipe::models {

void TraceObserver::cta_started(const CtaStart& c) {
  const isa::Program& p = *c.program;
  w_.name_process(c.cta, fmt::format("CTA {} (SM {}, cluster {} rank {})", c.cta, c.sm, c.cluster, c.rank));
  for (int i = 0; i < p.warps; ++i)
    if (p.warp_role[i] >= 0) w_.name_thread(c.cta, i, fmt::format("warp {} {}", i, p.roles[p.warp_role[i]].name));
  for (std::size_t f = 0; f < c.barrier_names.size(); ++f)
    w_.name_thread(c.cta, kBarrierTrack + static_cast<std::int64_t>(f), "mbarrier " + c.barrier_names[f]);
  Stages& s = stages_[c.cta];
  s.ready.assign(c.barrier_names.size(), 0);
  s.count.clear();
}

void TraceObserver::cta_exited(std::int64_t cta, std::int64_t) { stages_.erase(cta); }

void TraceObserver::op_busy(std::int64_t cta, int warp, const isa::OpDesc& d, std::int64_t start, std::int64_t cycles) {
  if (cycles <= 0) return;
  w_.slice(cta, warp, std::string(isa::op_spec(d.kind).name), "op", start, cycles,
           fmt::format(R"({{"op":{},"line":{}}})", sim::json_quote(d.text), d.loc.line));
}

void TraceObserver::wait_ended(std::int64_t cta, int warp, std::string_view cause, const isa::OpDesc& d, std::int64_t since,
                               std::int64_t cycles) {
  auto it = woken_.find({cta, warp});
  if (it != woken_.end()) {
    for (const Woken& k : it->second) w_.flow(cta, k.track, k.cycle, cta, warp, k.wake, k.id);
    woken_.erase(it);
  }
  if (cycles <= 0) return;
  w_.slice(cta, warp, "wait: " + std::string(cause), "wait", since, cycles, fmt::format(R"({{"op":{}}})", sim::json_quote(d.text)));
}

void TraceObserver::async_work(std::int64_t cta, const std::string& label, std::string_view category, std::int64_t start,
                               std::int64_t end) {
  w_.async_slice(cta, label, std::string(category).c_str(), next_id_++, start, end);
}

// The arrow of a signal is written when it lands, both ends at once: a signal still in flight when a run stops
// leaves no arrow without an end.
std::uint64_t TraceObserver::signal_sent(std::int64_t from, int warp, std::int64_t to, std::int64_t cycle) {
  if (!w_.wants(to)) return 0;
  std::uint64_t id = next_id_++;
  in_flight_[id] = Sent{from, warp, cycle};
  return id;
}

void TraceObserver::signal_landed(std::uint64_t token, std::int64_t cta, std::uint32_t barrier, std::int64_t cycle) {
  if (token == 0) return;
  auto it = in_flight_.find(token);
  if (it == in_flight_.end()) return;
  // A one-cycle slice where the signal lands, so that the arrow ends on a slice of the barrier's track.
  w_.slice(cta, kBarrierTrack + barrier, "signal lands", "mbarrier", cycle, 1);
  w_.flow(it->second.cta, it->second.warp, it->second.cycle, cta, kBarrierTrack + barrier, cycle, token);
  in_flight_.erase(it);
}

void TraceObserver::wait_unfinished(std::int64_t cta, int warp, std::string_view cause, const isa::OpDesc& d, std::int64_t since,
                                    std::int64_t cycle) {
  woken_.erase({cta, warp});  // woken after the stop: no arrow
  w_.slice(cta, warp, "wait: " + std::string(cause) + " (unfinished)", "wait", since, std::max<std::int64_t>(cycle - since, 1),
           fmt::format(R"({{"op":{},"line":{},"unfinished":true}})", sim::json_quote(d.text), d.loc.line));
}

void TraceObserver::run_ended(std::int64_t cycle, std::string_view outcome, const std::string& what) {
  if (outcome == "finished") return;
  w_.instant(fmt::format("{}: {}", outcome, what), cycle);
}

void TraceObserver::stage_ready(std::int64_t cta, std::uint32_t barrier, std::uint32_t decl, std::string_view decl_name, bool ready,
                                std::int64_t cycle) {
  auto it = stages_.find(cta);
  if (it == stages_.end()) return;
  Stages& s = it->second;
  if (s.ready[barrier] == ready) return;
  s.ready[barrier] = ready;
  std::int32_t& n = s.count[decl];
  n += ready ? 1 : -1;
  w_.counter(cta, "ready stages: " + std::string(decl_name), cycle, n);
}

void TraceObserver::phase_completed(std::int64_t cta, std::uint32_t barrier, const std::string& name, std::int64_t phase,
                                    const char* by, std::span<const int> waiter_warps, std::int64_t wake, std::int64_t cycle) {
  w_.slice(cta, kBarrierTrack + barrier, fmt::format("{} phase {} done", name, phase), "mbarrier", cycle, 1,
           fmt::format(R"({{"by":"{}","waiters":{}}})", by, waiter_warps.size()));
  // The arrows to the waiters are written when each wakes (wait_ended), so that a run stopping before a
  // waiter wakes leaves no arrow without its end.
  for (int warp : waiter_warps) woken_[{cta, warp}].push_back(Woken{next_id_++, kBarrierTrack + barrier, cycle, wake});
}

}  // namespace smpipe::models
