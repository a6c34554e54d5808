#include "models/sync/named_barrier.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "isa/reach.hpp"
#include "models/gpu/simulator.hpp"
#include "models/memory/hazards.hpp"

namespace smpipe::models {

using isa::Attr;
using isa::OpKind;

NamedBarrierUnit::NamedBarrierUnit(Simulator& sim) : Unit(sim) {
  for (int id = 0; id < isa::kNamedBarriers; ++id) causes_[id] = sim.cause_id(fmt::format("named barrier {}", id));
}

void NamedBarrierUnit::connect() { hazards_ = &sim_.find<HazardUnit>(); }

std::span<const isa::OpKind> NamedBarrierUnit::accepted() {
  static constexpr OpKind kOps[] = {OpKind::kBarSync, OpKind::kBarArrive};
  return kOps;
}

void NamedBarrierUnit::cta_started(std::uint32_t slot) {
  if (slot >= ctas_.size()) ctas_.resize(slot + 1);
  // The slot's warp ids belong to a new CTA: their latest named-barrier ops are the previous CTA's.
  const Cta& c = sim_.cta(slot);
  for (std::uint32_t w = c.first_warp; w < c.first_warp + static_cast<std::uint32_t>(sim_.program().warps) && w < last_.size(); ++w)
    last_[w] = LastUse{};
  for (Barrier& b : ctas_[slot].bar) {
    b.expected = -1;
    b.arrived = 0;
    b.first_warp = -1;
    b.waiters.clear();
    b.arrivers.clear();
    b.last_arrivers.clear();
    b.uses_done = 0;
  }
}

OpResult NamedBarrierUnit::execute(OpContext& ctx) {
  bool sync = ctx.desc.kind == OpKind::kBarSync;
  arrive(ctx, static_cast<int>(ctx.value(Attr::kId)), ctx.present(Attr::kThreads) ? ctx.value(Attr::kThreads) : -1, sync);
  return sync ? ctx.blocked() : ctx.busy(sim_.machine().op_issue_cycles);
}

void NamedBarrierUnit::arrive(OpContext& ctx, int id, std::int64_t threads, bool wait) {
  Warp& w = ctx.warp;
  if (ctx.warp_id >= last_.size()) last_.resize(ctx.warp_id + 1);
  last_[ctx.warp_id] = {id, wait, ctx.op};
  Barrier& nb = ctas_[w.cta].bar[id];
  bool all = threads < 0;
  if (all) threads = static_cast<std::int64_t>(sim_.program().warps) * isa::kWarpSize;
  if (threads <= 0 || threads % isa::kWarpSize != 0)
    ctx.ub("named barrier thread count", fmt::format("bar {}: threads={} must be a positive multiple of 32", id, threads));
  std::int64_t cta_threads = static_cast<std::int64_t>(sim_.program().warps) * isa::kWarpSize;
  if (threads > cta_threads)
    ctx.ub("named barrier thread count",
           fmt::format("bar {}: threads={} but the CTA has {} threads: the barrier could never complete", id, threads, cta_threads));
  // A warp arrives once per use: a second arrival before the barrier completes would stand in for a warp that
  // has not come (the project's rules for named barriers, PTX bar: arrival is counted per warp).
  if (std::find(nb.arrivers.begin(), nb.arrivers.end(), w.index) != nb.arrivers.end()) {
    const Warp& first = sim_.warp(sim_.cta(w.cta).first_warp + nb.first_warp);
    ctx.ub("named barrier arrival twice",
           fmt::format("bar {}: warp {} arrives a second time in the same use ({} of {} threads arrived, the count set by warp {} at "
                       "{}): its second arrival would count for a warp that has not come. Each warp arrives once per use; a "
                       "warp that must signal twice needs a barrier it waits on in between (bar.sync), or another id",
                       id, w.index, nb.arrived, nb.expected, nb.first_warp, sim_.op_of(first, nb.first_op).loc.str()));
  }
  if (nb.expected < 0) {
    nb.expected = threads;
    nb.all = all;
    nb.first_op = ctx.op;
    nb.first_warp = w.index;
  } else if (nb.expected != threads) {
    const Warp& first = sim_.warp(sim_.cta(w.cta).first_warp + nb.first_warp);
    ctx.ub("mismatched named-barrier counts",
           fmt::format("bar {}: {} threads expected (set by warp {} at {}), {} arrived; warp {} arrives with threads={}: different "
                       "counts in one use of a named barrier are undefined (often two roles share an id by accident)",
                       id, nb.expected, nb.first_warp, sim_.op_of(first, nb.first_op).loc.str(), nb.arrived, w.index, threads));
  }
  // A use whose count differs from the previous use's must come after that use completed, in every arrival: were it not
  // ordered after it, another schedule would let its arrivals meet the previous use's in one (different counts in one use
  // are undefined), which this schedule only avoided by timing.
  if (nb.last_expected >= 0 && threads != nb.last_expected && !hazards_->after_named_use(ctx.warp_id, id)) {
    const Warp& prev = sim_.warp(sim_.cta(w.cta).first_warp + static_cast<std::uint32_t>(nb.last_warp));
    ctx.ub("mismatched named-barrier counts",
           fmt::format("bar {}: warp {} arrives with threads={}, but the previous use of bar {} had threads={} (opened by warp {} at "
                       "{}) and nothing orders this arrival after that use completed: on another schedule their arrivals meet in "
                       "one use with different counts, which is undefined (often two roles share an id by accident: give each "
                       "its own id)",
                       id, w.index, threads, id, nb.last_expected, nb.last_warp, sim_.op_of(prev, nb.last_op).loc.str()));
  }
  // The same count, but a warp that took no part in the previous use and is not ordered after it: a use completes when
  // its count of threads arrived, whoever they are, so two groups that share an id with the same count (two handshakes
  // on one id) pair up only by timing; on another schedule a warp goes on with the other group's arrivals. Legal PTX,
  // and harmless where the groups never overlap: a warning (once per id), not a diagnosis. For a warp that waits
  // (bar.sync) only: warps that only arrive are a count's business (a use left unfinished is a note).
  if (wait && nb.last_expected >= 0 && threads == nb.last_expected && !(shared_warned_ & (1u << id)) &&
      std::find(nb.last_arrivers.begin(), nb.last_arrivers.end(), w.index) == nb.last_arrivers.end() &&
      !hazards_->after_named_use(ctx.warp_id, id)) {
    shared_warned_ |= 1u << id;
    const Warp& prev = sim_.warp(sim_.cta(w.cta).first_warp + static_cast<std::uint32_t>(nb.last_warp));
    shared_.push_back(fmt::format(
        "bar {} is shared by two groups of warps with one count (threads={}): CTA {} warp {} arrived at {} without taking part "
        "in the previous use (opened by warp {} at {}, completed by warps {}), and nothing ordered its arrival after that use "
        "completed. A use completes once {} threads arrived, whoever they are, so on another schedule the two groups' "
        "arrivals meet in one use and a warp goes on before its own partners arrived (two handshakes sharing one id: give "
        "each its own id)",
        id, threads, sim_.cta(w.cta).id, w.index, ctx.desc.loc.str(), nb.last_warp, sim_.op_of(prev, nb.last_op).loc.str(),
        fmt::join(nb.last_arrivers, ", "), threads));
  }
  nb.arrived += isa::kWarpSize;
  nb.arrivers.push_back(w.index);
  hazards_->named_arrive(ctx.warp_id, w.cta, id);
  if (nb.arrived > nb.expected)
    ctx.ub("named barrier overflow", fmt::format("bar {}: {} threads arrived but {} expected", id, nb.arrived, nb.expected));
  if (wait) {
    nb.waiters.push_back(ctx.warp_id);
    ctx.block(this, static_cast<std::uint32_t>(id), threads, causes_[id]);
  }
  check_release(w.cta, id);
}

bool NamedBarrierUnit::role_uses(int role, int id) const { return role_use(role, id) != nullptr; }

// An op of the role's code on barrier `id` (an id computed at run time may be it), a bar.arrive before a bar.sync.
const isa::OpDesc* NamedBarrierUnit::role_use(int role, int id) const {
  if (role < 0) return nullptr;
  const isa::OpDesc* use = nullptr;
  for (const auto& d : sim_.program().roles[static_cast<std::size_t>(role)].ops) {
    if (d.kind != OpKind::kBarSync && d.kind != OpKind::kBarArrive) continue;
    const isa::AttrSlot* s = d.slot(Attr::kId);
    if (s == nullptr) continue;
    const bool dynamic = std::find(d.dynamic_slots.begin(), d.dynamic_slots.end(), s->first) != d.dynamic_slots.end();
    if (!dynamic && d.base_values[s->first] != id) continue;
    if (d.kind == OpKind::kBarArrive) return &d;
    if (use == nullptr) use = &d;
  }
  return use;
}

bool NamedBarrierUnit::warp_uses(std::uint32_t warp_id, int id) const {
  const Warp& w = sim_.warp(warp_id);
  if (w.role < 0) return false;
  const isa::RoleCode& rc = sim_.program().roles[static_cast<std::size_t>(w.role)];
  return isa::may_reach(
      rc, w.builtins,
      [&](std::uint32_t op, std::span<const isa::MaybeValue> values) {
        const isa::OpDesc& d = rc.ops[op];
        if (d.kind != OpKind::kBarSync && d.kind != OpKind::kBarArrive) return false;
        const isa::AttrSlot* s = d.slot(Attr::kId);
        if (s == nullptr) return false;
        const isa::MaybeValue& v = values[s->first];
        return !v.known || v.value == id;
      },
      walk_budget_);
}

void NamedBarrierUnit::check_release(std::uint32_t cta, int id) {
  const Cta& c = sim_.cta(cta);
  Barrier& nb = ctas_[cta].bar[id];
  if (nb.expected < 0) return;
  bool full = nb.arrived >= nb.expected;
  // A barrier for all threads of the CTA (no thread count) waiting only on exited warps is released; one
  // with a thread count still needs that many arrivals (PTX ISA 9.7.8 exit: exiting threads release
  // only "a barrier{.cta} for all threads in the CTA").
  bool only_exited =
      nb.all && c.exited_warps > 0 && !nb.waiters.empty() && static_cast<int>(nb.arrivers.size()) >= c.live_warps;
  if (full || only_exited) release(cta, id);
}

void NamedBarrierUnit::release(std::uint32_t cta, int id) {
  Barrier& nb = ctas_[cta].bar[id];
  const Machine& m = sim_.machine();
  // The release takes longer the more warps the barrier gathers (measured: bar_sync_latency_*warps).
  auto latency =
      m.named_barrier_cycles + static_cast<std::int64_t>(m.named_barrier_cycles_per_warp * static_cast<double>(nb.expected / 32) + 0.5);
  Cycle at = sim_.now() + sim_.jit(latency);
  hazards_->named_release(cta, id, nb.waiters);
  sim_.progressed();
  sim_.wake_all(nb.waiters, at);
  nb.last_arrivers.swap(nb.arrivers);  // kept for deadlock reports (both keep their storage)
  nb.last_expected = nb.expected;
  nb.last_op = nb.first_op;
  nb.last_warp = nb.first_warp;
  nb.uses_done += 1;
  // Reset for the next use, keeping the vectors' storage.
  nb.expected = -1;
  nb.arrived = 0;
  nb.all = false;
  nb.first_warp = -1;
  nb.waiters.clear();
  nb.arrivers.clear();
}

// A use that some warps arrived on and that never completed before the CTA exited: arrivals that belong to
// no completed use (a count smaller than the warps that use the barrier). A note,
// shown with a problem: warpgroups that take turns (FlashAttention-3's scheduler barriers: bar.sync on
// their own, bar.arrive on the other's) leave their last arrive unconsumed in correct programs too.
void NamedBarrierUnit::cta_exiting(std::uint32_t slot) {
  const Cta& c = sim_.cta(slot);
  for (int id = 0; id < isa::kNamedBarriers; ++id) {
    const Barrier& nb = ctas_[slot].bar[id];
    if (nb.arrived == 0) continue;
    if (notes_.size() >= 8) {
      ++unfinished_;
      continue;
    }
    const Warp& first = sim_.warp(c.first_warp + nb.first_warp);
    notes_.push_back(fmt::format("CTA {} exited with a use of bar {} unfinished: {} of {} threads arrived (warps {}; the count "
                                    "set at line {}), after {} completed use(s). Arrivals that complete no use mean the "
                                    "count does not match the warps that use the barrier (or a warp arrived twice in a use)",
                                    c.id, id, nb.arrived, nb.expected, fmt::join(nb.arrivers, ", "),
                                    sim_.op_of(first, nb.first_op).loc.line, nb.uses_done));
  }
}

void NamedBarrierUnit::add_warnings(std::vector<std::string>& warnings) const {
  warnings.insert(warnings.end(), shared_.begin(), shared_.end());
}

void NamedBarrierUnit::add_notes(std::vector<std::string>& notes) const {
  notes.insert(notes.end(), notes_.begin(), notes_.end());
  if (unfinished_ > 0) notes.push_back(fmt::format("... and {} more unfinished named-barrier uses", unfinished_));
}

void NamedBarrierUnit::warp_exited(std::uint32_t warp_id) {
  std::uint32_t cta = sim_.warp(warp_id).cta;
  for (int id = 0; id < isa::kNamedBarriers; ++id)
    if (!ctas_[cta].bar[id].waiters.empty()) check_release(cta, id);
}

std::string NamedBarrierUnit::describe_wait(const Warp& w) const {
  const Barrier& nb = ctas_[w.cta].bar[w.wait_obj];
  if (nb.first_warp < 0) return fmt::format("named barrier {}: its use completed, the warp's wake-up is on its way", w.wait_obj);
  return fmt::format("named barrier {}: {}/{} threads arrived (warps {})", w.wait_obj, nb.arrived, nb.expected,
                     fmt::join(nb.arrivers, ", "));
}

void NamedBarrierUnit::explain_wait(const Warp& w, WaitExplanation& e) const {
  const auto& p = sim_.program();
  const Cta& c = sim_.cta(w.cta);
  const Barrier& nb = ctas_[w.cta].bar[w.wait_obj];
  if (nb.first_warp < 0) {
    // The use the warp waited on completed at this cycle and its wake-up is on its way: the run stopped (a
    // watchdog) between the two. The warp is not stuck.
    e.cause(fmt::format("bar {}: the use it waited on completed (use {}); the run stopped before the warp resumed", w.wait_obj,
                        nb.uses_done));
    return;
  }
  // Edges to the live warps that have not arrived and whose code uses this barrier (every live warp, for a
  // barrier of all the CTA's threads).
  std::vector<int> users;
  for (int i = 0; i < p.warps; ++i) {
    std::uint32_t wid = c.first_warp + i;
    const Warp& x = sim_.warp(wid);
    if (x.role < 0 || x.state == WarpState::kDone) continue;
    if (std::find(nb.arrivers.begin(), nb.arrivers.end(), i) != nb.arrivers.end()) continue;
    if (!nb.all && !role_uses(x.role, static_cast<int>(w.wait_obj))) continue;
    e.waits_on(wid);
    users.push_back(i);
  }
  std::string others;
  for (int i : users) {
    const Warp& x = sim_.warp(c.first_warp + i);
    if (x.state == WarpState::kBlocked && (x.wait_unit != index() || x.wait_obj != w.wait_obj))
      others = role_uses(x.role, static_cast<int>(w.wait_obj))
                   ? fmt::format("; warp {} ({}), which also uses bar {}, waits on {}", i, p.roles[x.role].name, w.wait_obj,
                                 sim_.describe_wait(x))
                   : fmt::format("; warp {} ({}) waits on {}, and its code has no op on bar {}: a barrier without a thread "
                                 "count waits for every live thread of the CTA, this warp's too. Give the warps that meet "
                                 "there a count of their own (`bar.sync {} threads=N`, N their threads; or another id)",
                                 i, p.roles[x.role].name, sim_.describe_wait(x), w.wait_obj, w.wait_obj);
  }
  // Without a thread count, warps that exited count as arrived: say which, so that the numbers add up.
  std::vector<int> exited;
  if (nb.all)
    for (int i = 0; i < p.warps; ++i)
      if (sim_.warp(c.first_warp + i).state == WarpState::kDone) exited.push_back(i);
  const Warp& setter = sim_.warp(c.first_warp + nb.first_warp);
  std::string set_by = nb.all ? "every thread of the CTA: no thread count"
                              : fmt::format("the count set by warp {}'s `{}` at line {}", nb.first_warp,
                                            sim_.op_of(setter, nb.first_op).text, sim_.op_of(setter, nb.first_op).loc.line);
  auto twice = [](const std::vector<int>& v) {
    std::vector<int> dup;
    for (std::size_t i = 0; i < v.size(); ++i)
      if (std::count(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v[i]) == 1) dup.push_back(v[i]);
    return dup;
  };
  std::string why;
  if (!others.empty()) {
    why = others;
  } else {
    why = " and no other live warp will arrive";
    // With a thread count, warps that exited never arrive: those whose code syncs here are the likeliest missing ones.
    // (Not when the previous use completed without any of the warps waiting now: then their arrivals spilled into later
    // uses, said below.)
    bool spilled = nb.uses_done > 0;
    for (int a : nb.arrivers) spilled = spilled && std::find(nb.last_arrivers.begin(), nb.last_arrivers.end(), a) == nb.last_arrivers.end();
    std::vector<int> gone;
    if (!nb.all && !spilled)
      for (int i = 0; i < p.warps; ++i) {
        const Warp& x = sim_.warp(c.first_warp + i);
        if (x.role >= 0 && x.state == WarpState::kDone && warp_uses(c.first_warp + static_cast<std::uint32_t>(i), static_cast<int>(w.wait_obj)))
          gone.push_back(i);
      }
    // Warps whose role's code uses the barrier but that exited without reaching it (their run took no path to it: a
    // loop with no round for them, e.g. a warpgroup with no tile): an arrive meant to happen once sits in that loop.
    std::vector<int> skipped;
    const isa::OpDesc* skipped_op = nullptr;
    if (!nb.all && !spilled && gone.empty())
      for (int i = 0; i < p.warps; ++i) {
        const Warp& x = sim_.warp(c.first_warp + i);
        const isa::OpDesc* use = x.state == WarpState::kDone ? role_use(x.role, static_cast<int>(w.wait_obj)) : nullptr;
        if (use == nullptr) continue;
        skipped.push_back(i);
        if (skipped_op == nullptr || (use->kind == OpKind::kBarArrive && skipped_op->kind != OpKind::kBarArrive)) skipped_op = use;
      }
    if (!skipped.empty() && skipped_op != nullptr)
      why += fmt::format(". Warp(s) {} ({} threads) exited without reaching bar {}, though their role's code uses it (`{}` at "
                         "line {}): their run took no path to it (a loop with no round for them, e.g. a warpgroup with no "
                         "tile). An arrive that must happen once whatever the work, such as the first turn of warpgroups that "
                         "take turns, belongs before that loop",
                         fmt::join(skipped, ", "), 32 * skipped.size(), w.wait_obj, skipped_op->text, skipped_op->loc.line);
    if (!gone.empty())
      why += fmt::format(". Warp(s) {} ({} threads), whose code uses bar {} too, have exited: an exited warp never arrives, "
                         "and with a thread count it does not count as arrived. The warps that meet on a barrier must all "
                         "reach each use (a warp whose loop ran fewer rounds than the others, e.g. warpgroups that split the "
                         "tiles unevenly, leaves them waiting): give the last uses a count of the threads still there, or "
                         "let every warp run the same number of rounds",
                         fmt::join(gone, ", "), 32 * gone.size(), w.wait_obj);
    std::vector<int> now_twice = twice(nb.arrivers), before_twice = twice(nb.last_arrivers);
    if (!now_twice.empty())
      why += fmt::format(". Warp(s) {} arrived twice in this use (a bar.arrive on one path and another bar op on the next, "
                         "before the use completed)",
                         fmt::join(now_twice, ", "));
    if (!before_twice.empty())
      why += fmt::format(". The previous use completed with warp(s) {} arriving twice (warps {}): their extra arrivals "
                         "stood in for warps that then arrived in this use",
                         fmt::join(before_twice, ", "), fmt::join(nb.last_arrivers, ", "));
    else if (nb.uses_done > 0 && gone.empty())
      why += fmt::format(". Either the count is larger than the threads that still come, or earlier uses completed without "
                         "some of the warps that use this barrier and their arrivals spilled into this one (the previous "
                         "use, number {}, completed with warps {})",
                         nb.uses_done, fmt::join(nb.last_arrivers, ", "));
    else if (now_twice.empty() && gone.empty())
      why += ": the thread count is larger than the threads that arrive";
  }
  e.cause(fmt::format("bar {}: {} threads expected ({}), {} arrived (warps {}){}{}", w.wait_obj, nb.expected, set_by, nb.arrived,
                      fmt::join(nb.arrivers, ", "),
                      exited.empty() ? std::string()
                                     : fmt::format(" and {} exited (warps {}: they count as arrived)", 32 * exited.size(),
                                                   fmt::join(exited, ", ")),
                      why));
}

}  // namespace smpipe::models
