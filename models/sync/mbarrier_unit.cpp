#include "models/sync/mbarrier_unit.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "isa/reach.hpp"
#include "models/gpu/simulator.hpp"
#include "models/memory/hazards.hpp"

namespace smpipe::models {

using isa::Attr;
using isa::OpKind;

const char* signal_name(SignalKind k) {
  switch (k) {
    case SignalKind::kArrive: return "arrive";
    case SignalKind::kArriveDrop: return "arrive.drop";
    case SignalKind::kExpectTx: return "expect_tx";
    case SignalKind::kCompleteTx: return "complete_tx";
    case SignalKind::kArriveExpectTx: return "arrive.expect_tx";
    case SignalKind::kArriveNoComplete: return "arrive.noComplete";
  }
  return "?";
}

MbarrierUnit::MbarrierUnit(Simulator& sim) : Unit(sim) {
  const auto& p = sim.program();
  for (const auto& b : p.mbarriers) {
    causes_.push_back(sim.cause_id("mbarrier " + b.name));
    stats_.push_back(BarrierStats{b.name});
  }
  noted_decl_.assign(p.mbarriers.size(), false);
  for (std::uint32_t f = 0; f < p.mbarrier_layout.count; ++f) decl_.push_back(p.mbarrier_layout.decl_of(f));
}

void MbarrierUnit::connect() { hazards_ = &sim_.find<HazardUnit>(); }

std::span<const isa::OpKind> MbarrierUnit::accepted() {
  static constexpr OpKind kOps[] = {OpKind::kMbarrierInit, OpKind::kMbarrierInval, OpKind::kArrive, OpKind::kArriveExpectTx,
                                    OpKind::kArriveNoComplete, OpKind::kExpectTx, OpKind::kCompleteTx, OpKind::kArriveDrop,
                                    OpKind::kWait, OpKind::kTestWait, OpKind::kFenceMbarrierInit};
  return kOps;
}

const isa::ElementLayout& MbarrierUnit::layout() const { return sim_.program().mbarrier_layout; }

std::string MbarrierUnit::barrier_name(std::uint32_t flat) const {
  return layout().element_name(sim_.program().mbarriers, flat);
}

std::string MbarrierUnit::state_text(std::uint32_t cta, std::uint32_t flat) const {
  const MBarrier& b = ctas_[cta].barriers[flat];
  if (!b.valid()) return "not initialised";
  return fmt::format("phase {} (parity {}), pending {}/{}, tx {}", b.phase(), b.phase() & 1, b.pending(), b.expected(), b.tx());
}

void MbarrierUnit::warp_exited(std::uint32_t warp_id) { exit_cycle_[warp_id] = sim_.now().v; }

void MbarrierUnit::cta_started(std::uint32_t slot) {
  if (slot >= ctas_.size()) ctas_.resize(slot + 1);
  CtaBarriers& c = ctas_[slot];
  const auto& p = sim_.program();
  std::uint32_t n = layout().count;
  c.barriers.assign(n, MBarrier{});
  c.waiters.resize(n);
  for (auto& w : c.waiters) w.clear();
  c.last_complete.assign(n, Cycle(-(std::int64_t{1} << 40)));  // no completion yet
  c.arrive_mask.assign(n, 0);
  c.last_arrive_mask.assign(n, 0);
  c.phase_masks.assign(static_cast<std::size_t>(n * kPhaseMasks), 0);
  c.arrive_ranks.assign(n, 0);
  c.phase_ranks.assign(static_cast<std::size_t>(n * kPhaseMasks), 0);
  c.last_signal.assign(n, {~0u, 0});
  c.phase_signal.assign(n, {~0u, 0});
  c.passed_waits.assign(n, 0);
  c.tx_in_flight.assign(n, 0);
  c.free_pass.assign(n, 0);
  c.test_passes.assign(n, 0);
  c.consumed.assign(static_cast<std::size_t>(p.warps) * n, kNoPhase);
  c.free_again.assign(static_cast<std::size_t>(p.warps) * n, ~0u);
  c.invals.clear();
  c.consumed_op.assign(static_cast<std::size_t>(p.warps) * n, 0);
  c.first_wait.assign(static_cast<std::size_t>(p.warps) * p.mbarriers.size(), 0);
  c.arrive_op.assign(static_cast<std::size_t>(p.warps) * n, 0);
  c.twice.clear();
  c.stale.clear();
  c.left_out.clear();
  c.mismatches.clear();
  c.observed.assign(n, 1);
  sim_.reset_warps(exit_cycle_, slot);
  sim_.reset_warps(before_phase0_, slot);
  sim_.reset_warps(polls_, slot);
  for (int i = 0; i < p.warps; ++i) {
    exit_cycle_[sim_.cta(slot).first_warp + i] = -1;
    before_phase0_[sim_.cta(slot).first_warp + i] = {~0u, 0};
  }
  c.visibility.assign(n, InitVisibility::kCluster);
  c.init_warp.assign(n, -1);
  c.init_op.assign(n, 0);
  sim_.reset_warps(remote_sent_, slot);
  for (std::size_t d = 0; d < p.mbarriers.size(); ++d)
    if (p.mbarriers[d].count)
      for (int e = 0; e < p.mbarriers[d].size; ++e) c.barriers[layout().base[d] + e].init(*p.mbarriers[d].count);
}

Signal MbarrierUnit::signal_to(std::uint32_t cta, SignalKind kind, std::uint32_t barrier, std::int64_t value, std::uint32_t warp,
                               std::uint32_t op) const {
  if (sim_.warp(warp).cta == cta) hazards_->check_init(warp, op, cta, barrier);
  Signal s;
  s.kind = kind;
  s.cta = cta;
  s.cta_id = sim_.cta(cta).id;
  s.barrier = barrier;
  s.value = value;
  s.warp = warp;
  s.from_cta = sim_.cta(sim_.warp(warp).cta).id;
  s.op = op;
  return s;
}

void MbarrierUnit::on_its_way(const Signal& s) {
  if (s.kind == SignalKind::kCompleteTx && s.cta < ctas_.size() && s.barrier < ctas_[s.cta].tx_in_flight.size())
    ctas_[s.cta].tx_in_flight[s.barrier] += s.value;
}

// ---- signals ----

namespace {
bool is_wait(const isa::OpDesc& o) { return o.kind == isa::OpKind::kWait || o.kind == isa::OpKind::kTestWait; }
// A wait or test_wait on an element of mbarrier declaration `decl`.
bool waits_on(const isa::OpDesc& o, std::uint32_t decl) {
  const isa::AttrSlot* s = o.slot(isa::Attr::kBar);
  return is_wait(o) && s != nullptr && s->decl == static_cast<int>(decl);
}

// One change of one kind (arrive.expect_tx is two: the caller applies its parts).
MBarrier::Result change(MBarrier& b, SignalKind kind, std::int64_t value) {
  switch (kind) {
    case SignalKind::kArrive: return b.arrive(value);
    case SignalKind::kArriveDrop: return b.arrive_drop(value);
    case SignalKind::kExpectTx: return b.expect_tx(value);
    case SignalKind::kCompleteTx: return b.complete_tx(value);
    case SignalKind::kArriveNoComplete: return b.arrive_no_complete(value);
    case SignalKind::kArriveExpectTx: break;
  }
  SMPIPE_CHECK(false, "arrive.expect_tx is applied as its two parts");
}
}  // namespace

void MbarrierUnit::send(Cycle at, const Signal& s) {
  sim_.schedule(*this, std::max(at, sim_.now()), sim::Priority::kCompletion, signals_.put(s));
}

void MbarrierUnit::complete(std::uint32_t target, std::uint64_t) { land(signals_.take(target)); }

std::int64_t MbarrierUnit::tx_in_flight() const {
  std::int64_t bytes = 0;
  for (std::uint32_t slot = 0; slot < ctas_.size(); ++slot)
    if (!sim_.cta(slot).exited)
      for (std::int64_t b : ctas_[slot].tx_in_flight) bytes += b;
  return bytes;
}

// When the target CTA of a peer's copy exited (its slot is kept while its cluster runs): when, and how far its barrier had
// got; a CTA that took part in none of it left before the pipeline started (an early `exit`).
std::string MbarrierUnit::exited_words(const Signal& s) const {
  const Cta& c = sim_.cta(s.cta);
  // Only for a copy's bytes landing there (data meant for the CTA); a release (remote arrive) after its exit is the
  // missing producer tail said above.
  if (c.id != s.cta_id || s.kind != SignalKind::kCompleteTx) return "";
  std::int64_t last = -1;
  for (int i = 0; i < sim_.program().warps; ++i) last = std::max(last, exit_cycle_[c.first_warp + static_cast<std::uint32_t>(i)]);
  if (last < 0) return "";
  const std::int64_t phases = ctas_[s.cta].barriers[s.barrier].phase();
  // None of its elements of that barrier array completed a phase there: the CTA took part in none of it.
  const auto& p = sim_.program();
  const std::uint32_t decl = decl_[s.barrier], base = p.mbarrier_layout.base[decl];
  bool none = true;
  for (std::uint32_t f = base; f < base + static_cast<std::uint32_t>(p.mbarriers[decl].size); ++f)
    none = none && ctas_[s.cta].barriers[f].phase() == 0;
  return fmt::format(". CTA {} exited at cycle {} (its last warp), after {} phase(s) of {} completed there{}", s.cta_id, last,
                     phases, barrier_name(s.barrier),
                     none ? ": it took part in none of its peers' pipeline. A CTA with nothing of its own to do (no tile, "
                                   "an early `exit`) must still run the cluster's mainloop while peers multicast into it and "
                                   "wait for its releases, or they must leave it out of their masks and counts"
                                 : "");
}

std::string MbarrierUnit::trip_words(const Signal& s) const {
  // (The exited CTA's slot still holds its barriers and clocks unless a later CTA took it.)
  const Cta& c = sim_.cta(s.cta);
  if (c.id != s.cta_id) return "";
  std::string words = hazards_->trip_count_words(s.cta, s.barrier, true);
  return words.empty() ? "" : ". " + words;
}

void MbarrierUnit::check_alive(const Signal& s) {
  const Cta& c = sim_.cta(s.cta);
  if (!c.exited && c.id == s.cta_id) return;
  // Named by who sent it: the issuer's own CTA may have exited since, and its slot hold a later CTA.
  const auto& p = sim_.program();
  int index = sim_.warp(s.warp).index;
  int role = p.warp_role[index];
  const isa::OpDesc& op = p.roles[role].ops[s.op];
  Diagnosis d;
  d.title = "signal to an exited CTA";
  // Its own CTA's signal (a copy or commit still in flight at exit) or a cluster peer's.
  const bool own = s.from_cta == s.cta_id;
  d.message = fmt::format("{}({}) from CTA {} warp {} ({}) lands on {} of CTA {}, which has already exited: {}",
                          signal_name(s.kind), s.value, s.from_cta, index, p.roles[role].name, barrier_name(s.barrier), s.cta_id,
                          own ? fmt::format("the CTA exited while its own op at line {} was still in flight; a CTA must wait for "
                                            "what it issued (here: a wait on {}) before it exits{}",
                                            op.loc.line, barrier_name(s.barrier), trip_words(s))
                              : fmt::format("a CTA must not exit while cluster peers may still signal its barriers (CUTLASS "
                                            "producer_tail waits on every empty barrier before exiting); if CTA {} has such a "
                                            "tail, the CTAs of the cluster ran different numbers of iterations: CTA {} signalled "
                                            "more phases than CTA {} waited for (the CTAs of a cluster must walk the same tiles "
                                            "and k-blocks){}",
                                            s.cta_id, s.from_cta, s.cta_id, exited_words(s)));
  d.cycle = sim_.now().v;
  d.cta = s.from_cta;
  d.warp = index;
  d.role = p.roles[role].name;
  d.loc = op.loc;
  d.op_text = op.text;
  sim_.diagnose(d);
}

void MbarrierUnit::check_visible(const Signal& s) {
  const CtaBarriers& c = ctas_[s.cta];
  InitVisibility v = c.visibility[s.barrier];
  if (v == InitVisibility::kCluster) return;
  const auto& p = sim_.program();
  const Cta& target = sim_.cta(s.cta);
  int init_warp = c.init_warp[s.barrier];
  const isa::OpDesc& init = p.roles[p.warp_role[init_warp]].ops[c.init_op[s.barrier]];
  sim_.ub(s.warp, s.op, "barrier init not visible to the cluster",
          fmt::format("{}({}) from CTA {} lands on {} of CTA {}, which warp {} initialised with mbarrier.init at {}{}: peers may "
                      "signal a barrier only after its init is visible to the cluster. Put fence.mbarrier_init in the "
                      "initialising thread after its inits, then cluster.sync, before any peer arrives or multicasts to it "
                      "(CUTLASS: fence_barrier_init() then cluster_sync())",
                      signal_name(s.kind), s.value, s.from_cta, barrier_name(s.barrier), target.id, init_warp, init.loc.str(),
                      v == InitVisibility::kLocal ? " and did not fence (fence.mbarrier_init)"
                                                  : " and fenced, but no cluster.sync followed the fence yet"),
          true);
}

void MbarrierUnit::check_observed(std::uint32_t cta, std::uint32_t flat, std::uint32_t warp, std::uint32_t op, const char* action) {
  const CtaBarriers& c = ctas_[cta];
  const MBarrier& b = c.barriers[flat];
  if (c.observed[flat] || !b.valid() || b.phase() == 0) return;
  std::int64_t id = sim_.cta(cta).id;
  std::string where = id == sim_.cta(sim_.warp(warp).cta).id ? "" : fmt::format(" of CTA {}", id);
  // A count below the arrivals per round completes phases faster than the rounds go (the waiter misses some): when the
  // phase before completed without some of the CTA's warps whose code arrives on this barrier, say so.
  std::string count;
  if (where.empty() && c.last_arrive_mask[flat] != 0) {
    const auto& p = sim_.program();
    const std::uint64_t mask = c.last_arrive_mask[flat];
    std::vector<int> out;
    for (int i = 0; i < p.warps && i < 32; ++i) {
      if (mask & (std::uint64_t{1} << i)) continue;
      if (arrives_on(sim_.cta(cta).first_warp + static_cast<std::uint32_t>(i), flat)) out.push_back(i);
    }
    if (!out.empty())
      count = fmt::format(". Or its count is below the arrivals per round: phase {} completed with the arrivals of warps {} "
                          "alone (count {}), while warp(s) {} arrive on {} too (their code reaches an arrive on it); if "
                          "each of them arrives once per round, "
                          "the phases run ahead of the rounds and a waiter misses one (the count must cover every warp that "
                          "arrives per round)",
                          b.phase() - 1, arrivers_words(mask), b.expected(), fmt::join(out, ","), barrier_name(flat));
  } else if (!where.empty()) {
    // A remote arrive (a 2-SM pair's peer releasing the leader's stage) into a phase after one that completed without any
    // arrival of the arriver's CTA: the count covers this CTA's arrivals alone.
    const std::uint32_t ranks = phase_arriver_ranks(cta, flat, b.phase() - 1);
    const int rank = sim_.cta(sim_.warp(warp).cta).rank;
    if (ranks != 0 && (ranks >> (rank & 31) & 1) == 0)
      count = fmt::format(". Or its count is below the arrivals per round: phase {} completed with the arrivals of CTA(s) "
                          "{} alone (count {}), while CTA {} arrives on it too (this arrive); if each CTA arrives once per "
                          "round, the count must cover the arrivals of every CTA (CUTLASS's 2-SM accumulator pipeline counts "
                          "size(AtomThrShapeMNK) x NumEpilogueThreads, sm100_gemm_tma_warpspecialized.hpp)",
                          b.phase() - 1, fmt::join(rank_ids(cta, ranks), ","), b.expected(), sim_.cta(sim_.warp(warp).cta).id);
  }
  const std::string rule = fmt::format("{} on {}{} in phase {}, but no wait or test_wait observed the completion of phase {}: "
                                       "a barrier whose phase completed must be waited on (a successful test_wait/try_wait) "
                                       "before it is used again for an arrive of the next phase (CUDA C++ Programming Guide, "
                                       "asynchronous barrier rules; a parity wait can name only the current or the "
                                       "immediately preceding phase, PTX mbarrier.test_wait)",
                                       action, barrier_name(flat), where, b.phase(), b.phase() - 1);
  if (std::string twice = arrived_twice_words(cta, flat, warp, op); !twice.empty())
    sim_.ub(warp, op, "arrive before the previous phase was observed", rule + ". Here " + twice);
  sim_.ub(warp, op, "arrive before the previous phase was observed",
          fmt::format("{}. Usually the arriving side runs a phase ahead (its own wait uses the wrong parity or is missing), or "
                      "no one waits on this barrier{}",
                      rule, count));
}

// The same warps released the barrier's previous phase through another op of their role, and now arrive again before
// anyone observed it: two ops of one round arrive on one barrier (a release meant for a sibling pipeline's barrier,
// FA3's V stage released on K's). Names the sibling barriers of the same shape that are waited on and never arrived on.
std::string MbarrierUnit::arrived_twice_words(std::uint32_t cta, std::uint32_t flat, std::uint32_t warp, std::uint32_t op) const {
  const CtaBarriers& c = ctas_[cta];
  const Warp& w = sim_.warp(warp);
  auto [pw, pop] = c.phase_signal[flat];
  if (w.cta != cta || w.index >= 32 || pw == ~0u || pop == op || (c.last_arrive_mask[flat] >> w.index & 1) == 0) return "";
  const Warp& prev = sim_.warp(pw);
  if (prev.role != w.role || prev.cta != cta) return "";
  // Both ops on this warp's own paths (warps of a role that arrive through different ops, each its own, are not this).
  const isa::OpDesc* before_op = &sim_.op_of(prev, pop);
  if (!reaches_signal(warp, flat, [&](const isa::OpDesc& d) { return &d == before_op; }, false)) return "";
  const auto& p = sim_.program();
  const MBarrier& b = c.barriers[flat];
  const std::uint32_t decl = decl_[flat];
  std::string sibling;
  for (std::uint32_t d = 0; d < p.mbarriers.size(); ++d) {
    if (d == decl || p.mbarriers[d].size != p.mbarriers[decl].size) continue;
    const isa::OpDesc* wait = nullptr;
    // Signalled on some path a warp of the cluster takes (an op in a branch no warp reaches does not count).
    bool signalled = false;
    for (std::uint32_t peer : sim_.cluster_of(sim_.cta(cta)).ctas)
      for (int i = 0; i < p.warps && !signalled; ++i)
        signalled = may_signal(sim_.cta(peer).first_warp + static_cast<std::uint32_t>(i), p.mbarrier_layout.base[d]);
    for (const auto& r : p.roles)
      for (const auto& o : r.ops)
        if (wait == nullptr && waits_on(o, d)) wait = &o;
    if (wait != nullptr && !signalled)
      sibling += fmt::format(". {} is waited on (`{}` at line {}) but no op a warp reaches arrives on it: does `{}` (line {}) mean {}?",
                             p.mbarriers[d].name, wait->text, wait->loc.line, sim_.op_of(w, op).text, sim_.op_of(w, op).loc.line,
                             p.mbarriers[d].name);
  }
  const isa::OpDesc& before = *before_op;
  const isa::OpDesc& now = sim_.op_of(w, op);
  return fmt::format("warp {} ({}) arrives on {} in phase {} through `{}` at line {}, and phase {} completed with the arrivals "
                     "of warps {}, the latest through another op, `{}` at line {}, and no wait observed it in between: two ops of "
                     "the role arrive on this barrier, and when both run in one round the phases run ahead of the rounds (a "
                     "wait on it misses one){}",
                     w.index, p.roles[w.role].name, barrier_name(flat), b.phase(), now.text, now.loc.line, b.phase() - 1,
                     arrivers_words(c.last_arrive_mask[flat]), before.text, before.loc.line, sibling);
}

void MbarrierUnit::cluster_synced(std::uint32_t cluster) {
  for (std::uint32_t slot : sim_.cluster(cluster).ctas)
    for (InitVisibility& v : ctas_[slot].visibility)
      if (v == InitVisibility::kFenced) v = InitVisibility::kCluster;
}

void MbarrierUnit::land(const Signal& s) {
  if (s.kind == SignalKind::kCompleteTx && s.cta < ctas_.size() && s.barrier < ctas_[s.cta].tx_in_flight.size()) {
    std::int64_t& f = ctas_[s.cta].tx_in_flight[s.barrier];
    f = std::max<std::int64_t>(0, f - s.value);  // (0 when the slot was reset for a later CTA meanwhile)
  }
  check_alive(s);
  if (s.from_cta != s.cta_id) check_visible(s);
  if (s.token != 0 && !sim_.observers().empty())
    sim_.observers().each(s.cta_id, [&](Observer& o) { o.signal_landed(s.token, s.cta_id, s.barrier, sim_.now().v); });
  if (s.hb != 0) hazards_->land(s.hb, s.cta, s.barrier);
  if (s.kind != SignalKind::kExpectTx && s.kind != SignalKind::kCompleteTx) check_observed(s.cta, s.barrier, s.warp, s.op, signal_name(s.kind));
  MBarrier& b = ctas_[s.cta].barriers[s.barrier];
  const auto prev = ctas_[s.cta].last_signal[s.barrier];
  MBarrier::Result r;
  if (s.kind == SignalKind::kArriveExpectTx) {
    // One atomic op: expect the bytes, then arrive (value2 arrivals).
    r = b.expect_tx(s.value);
    if (r == MBarrier::Result::kOk) {
      note_arrival(s.cta, s.barrier, s.warp, s.op);
      r = b.arrive(s.value2);
    }
  } else {
    r = change(b, s.kind, s.value);
  }
  if (r == MBarrier::Result::kArrivalOverflow) overflow_prev_ = prev;  // (its report)
  if (s.kind == SignalKind::kArrive || s.kind == SignalKind::kArriveDrop) note_arrival(s.cta, s.barrier, s.warp, s.op);
  apply_result(r, s.cta, s.barrier, s.warp, s.op, s.value, signal_name(s.kind));
}

// A signal of the executing warp on its own CTA's barrier, applied at once. arrive.expect_tx is the
// expect_tx followed by the arrive (value2 arrivals).
void MbarrierUnit::apply(const Signal& s, const char* action) {
  if (s.kind == SignalKind::kArriveExpectTx) {
    Signal a = s;
    a.kind = SignalKind::kExpectTx;
    apply(a, signal_name(a.kind));
    a.kind = SignalKind::kArrive;
    a.value = s.value2;
    apply(a, signal_name(a.kind));
    return;
  }
  if (s.kind != SignalKind::kExpectTx && s.kind != SignalKind::kCompleteTx) check_observed(s.cta, s.barrier, s.warp, s.op, action);
  MBarrier::Result r = change(ctas_[s.cta].barriers[s.barrier], s.kind, s.value);
  if (r == MBarrier::Result::kArrivalOverflow) overflow_prev_ = ctas_[s.cta].last_signal[s.barrier];  // (its report)
  if (s.kind != SignalKind::kExpectTx && s.kind != SignalKind::kCompleteTx) note_arrival(s.cta, s.barrier, s.warp, s.op);
  apply_result(r, s.cta, s.barrier, s.warp, s.op, s.value, action);
}

void MbarrierUnit::raise_pending(std::uint32_t cta, std::uint32_t barrier, std::int64_t count, std::uint32_t warp, std::uint32_t op) {
  MBarrier::Result r = ctas_[cta].barriers[barrier].raise_pending(count);
  apply_result(r, cta, barrier, warp, op, count, "cp.async.mbarrier.arrive");
}

void MbarrierUnit::note_arrival(std::uint32_t cta, std::uint32_t flat, std::uint32_t warp_id, std::uint32_t op) {
  CtaBarriers& c = ctas_[cta];
  const Warp& w = sim_.warp(warp_id);
  const int warp_index = w.index;
  c.last_signal[flat] = {warp_id, op};
  if (!sim_.observers().empty()) {
    std::int64_t id = sim_.cta(cta).id;
    std::uint32_t decl = decl_[flat];
    sim_.observers().each(id, [&](Observer& o) { o.stage_ready(id, flat, decl, sim_.program().mbarriers[decl].name, false, sim_.now().v); });
  }
  if (warp_index >= 0 && warp_index < 32) {
    const std::uint64_t bit = std::uint64_t{1} << (warp_index + (w.cta == cta ? 0 : 32));
    if (w.cta == cta) {
      std::uint32_t& last = c.arrive_op[static_cast<std::size_t>(warp_index) * layout().count + flat];
      if ((c.arrive_mask[flat] & bit) && c.twice.size() < 16 &&
          std::none_of(c.twice.begin(), c.twice.end(),
                       [&](const auto& t) { return t.flat == flat && t.phase < 0 && t.warp == warp_index; }))
        c.twice.push_back({flat, -1, warp_index, last, op});
      last = op;
    }
    c.arrive_mask[flat] |= bit;
  }
  c.arrive_ranks[flat] |= std::uint32_t{1} << (sim_.cta(w.cta).rank & 31);
}

void MbarrierUnit::on_phase_completed(std::uint32_t cta, std::uint32_t flat, const char* by) {
  CtaBarriers& c = ctas_[cta];
  std::int64_t id = sim_.cta(cta).id;
  std::uint32_t decl = decl_[flat];
  // The note below is for arrivals of two warp sets that race each other. A set whose latest arrival is ordered after
  // the phase before (pingpong's warpgroups releasing a stage on alternate tiles: the second waited on the stage's
  // refill, which came after the first's release) takes turns with the first, and is not noted; with the hazard
  // checker off nothing is known of that order, and nothing is noted.
  // (This note keeps one bit per warp index, a peer's warp i counted as warp i, as it did before the masks told the
  // CTAs apart; the masks themselves keep both.)
  const std::uint64_t mask64 = c.arrive_mask[flat], last64 = c.last_arrive_mask[flat];
  const std::uint64_t mask = (mask64 | (mask64 >> 32)) & 0xffffffffu, last = (last64 | (last64 >> 32)) & 0xffffffffu;
  bool racing = mask && last && (mask & last) == 0 && !noted_decl_[decl] && c.last_signal[flat].first != ~0u &&
                hazards_->on() && !hazards_->after_latest_phase(c.last_signal[flat].first, cta, flat);
  hazards_->phase_completed(cta, flat);
  stats_[decl].phases += 1;
  sim_.progressed();
  c.last_complete[flat] = sim_.now();
  if (!c.left_out.empty()) std::erase_if(c.left_out, [&](const CtaBarriers::LeftOut& l) { return l.flat == flat; });
  if (racing) {
    noted_decl_[decl] = true;
    // The ops of the two phases' latest arrivals (a umma.commit aimed at this barrier instead of its partner shows here).
    auto [pw, pop] = c.phase_signal[flat];
    auto [lw, lop] = c.last_signal[flat];
    std::string ops = pw != ~0u && lw != ~0u ? fmt::format(": {}, then {}", op_words(pw, pop, false), op_words(lw, lop, false)) : "";
    notes_.push_back(fmt::format(
        "{} of CTA {}: phases {} and {} completed back to back (cycle {}) by arrivals of different warps ({} then {}{}): "
        "if those warps arrive in the same loop iteration, more threads arrive per phase than its count {}",
        barrier_name(flat), id, c.barriers[flat].phase() - 2, c.barriers[flat].phase() - 1, sim_.now().v, arrivers_words(last),
        arrivers_words(mask), ops, c.barriers[flat].expected()));
  }
  c.phase_signal[flat] = c.last_signal[flat];
  for (auto& t : c.twice)
    if (t.flat == flat && t.phase < 0) t.phase = c.barriers[flat].phase() - 1;
  // (Only the latest phases of the element are asked about: older records make room.)
  std::erase_if(c.twice, [&](const auto& t) {
    return t.flat == flat && t.phase >= 0 && t.phase < c.barriers[flat].phase() - kPhaseMasks;
  });
  c.last_arrive_mask[flat] = mask64;
  c.phase_masks[flat * kPhaseMasks + (c.barriers[flat].phase() - 1) % kPhaseMasks] = mask64;
  c.arrive_mask[flat] = 0;
  c.phase_ranks[flat * kPhaseMasks + (c.barriers[flat].phase() - 1) % kPhaseMasks] = c.arrive_ranks[flat];
  c.arrive_ranks[flat] = 0;
  Cycle now = sim_.now();
  Cycle wake = now + sim_.jit(sim_.machine().mbarrier_wake_cycles);
  auto& waiters = c.waiters[flat];
  c.observed[flat] = waiters.empty() ? 0 : 1;  // blocked waiters observe it when they resume
  sim_.wake_all(waiters, std::max(wake, now));
  if (!sim_.observers().empty() && sim_.observers().wants(id)) {
    std::vector<int> warps;
    for (std::uint32_t w : waiters) warps.push_back(sim_.warp(w).index);
    std::string name = barrier_name(flat);
    std::int64_t phase = c.barriers[flat].phase() - 1;
    sim_.observers().each(id, [&](Observer& o) {
      o.stage_ready(id, flat, decl, sim_.program().mbarriers[decl].name, true, now.v);
      o.phase_completed(id, flat, name, phase, by, warps, wake.v, now.v);
    });
  }
  waiters.clear();
}

void MbarrierUnit::apply_result(MBarrier::Result r, std::uint32_t cta, std::uint32_t flat, std::uint32_t warp, std::uint32_t op,
                                std::int64_t count, const char* action) {
  using R = MBarrier::Result;
  if (r == R::kOk) return;
  if (r == R::kPhaseCompleted) {
    on_phase_completed(cta, flat, action);
    return;
  }
  bad_result(r, cta, flat, warp, op, count, action);
}

// The undefined behaviour a signal's result names (kept out of apply_result, which every signal passes through).
void MbarrierUnit::bad_result(MBarrier::Result r, std::uint32_t cta, std::uint32_t flat, std::uint32_t warp, std::uint32_t op,
                              std::int64_t count, const char* action) {
  using R = MBarrier::Result;
  const MBarrier& b = ctas_[cta].barriers[flat];
  std::string name = barrier_name(flat);
  std::int64_t id = sim_.cta(cta).id;
  std::string where = id == sim_.cta(sim_.warp(warp).cta).id ? "" : fmt::format(" of CTA {}", id);
  // An op outside `elect` counts for the warp's 32 lanes: say so when the count the error names is that multiple.
  const isa::OpDesc& desc = sim_.op_of(sim_.warp(warp), op);
  const bool arrives = desc.kind == isa::OpKind::kArrive || desc.kind == isa::OpKind::kArriveExpectTx ||
                       desc.kind == isa::OpKind::kExpectTx || desc.kind == isa::OpKind::kArriveNoComplete ||
                       desc.kind == isa::OpKind::kArriveDrop;
  const std::string lanes = arrives && desc.lanes == 32 && count % 32 == 0 && count > 0
                                ? fmt::format(" ('{}' runs in all 32 lanes of the warp, outside `elect`: 32 x {}; one "
                                              "thread's op goes inside `elect`)",
                                              desc.text, count / 32)
                                : "";
  switch (r) {
    case R::kNotInitialised:
      sim_.ub(warp, op, "barrier used before init",
              fmt::format("{} on {}{}, which was never initialised (mbarrier.init) or was invalidated", action, name, where));
    case R::kAlreadyValid:
      sim_.ub(warp, op, "double init",
              fmt::format("mbarrier.init of {}{}, which is already initialised ({}); invalidate it first (mbarrier.inval)", name,
                          where, state_text(cta, flat)));
    case R::kBadCount:
      sim_.ub(warp, op, "count out of range",
              fmt::format("{} on {} with count {} (valid 1..{})", action, name, count, isa::kMaxArrivalCount));
    case R::kArrivalOverflow: {
      std::string hint;
      if (b.arrivals_last_phase() > 0)
        hint = fmt::format("; the previous phase also completed by arrivals, so more than {} arrivals come per phase", b.expected());
      if (b.pending() == 0 && b.tx() > 0 && !bytes_can_reach(cta, flat)) {
        // All the arrivals came but the bytes did not: the phase waits for its tx-count, so the next arrival overflows.
        hint += fmt::format(". The phase has all its arrivals but cannot complete: its tx-count is stuck at {} ({} bytes "
                            "expected, {} delivered in this phase) and no copy of any role completes bytes on this CTA's {}, "
                            "so every arrival after it overflows. A copy's bar= (and bar_cta=, in a cluster) must name the "
                            "barrier whose `arrive.expect_tx` counts its bytes (a 2-SM pair's loads complete on the leader's "
                            "barrier, so only the leader expects them)",
                            b.tx(), b.tx_expected_this_phase(), b.tx_completed_this_phase(), name);
      } else if (b.arrivals_this_phase() > 0 && overflow_prev_ == std::pair{warp, op}) {
        // The same op of the same warp arrived twice in one phase: a ring that came back to this stage before the stage's
        // phase completed (two iterations mapped to one stage), the wait before it having passed without a new phase.
        const Warp& w = sim_.warp(warp);
        auto [wflat, wop] = passed_before_phase0(warp);
        const bool ring = sim_.program().mbarriers[decl_[flat]].array;
        hint += fmt::format(". Warp {}'s previous '{}' (line {}) already arrived in this phase: the op ran twice on {} before "
                            "its phase completed, {}{}",
                            w.index, desc.text, desc.loc.line, name,
                            ring ? "so two iterations picked the same stage before its phase completed (a stage index or "
                                   "phase counter that repeats: one that restarts or does not advance, or `i & (STAGES - 1)` "
                                   "with STAGES not a power of two)"
                                 : "a loop arriving faster than the phases complete (the wait before it passed without a new "
                                   "phase, or the count is below the arrivals per phase)",
                            wflat == ~0u ? std::string()
                                         : fmt::format("; its wait '{}' (line {}) returned at once on {}, which had completed no "
                                                       "phase (parity 1 before phase 0)",
                                                       sim_.op_of(w, wop).text, sim_.op_of(w, wop).loc.line, barrier_name(wflat)));
      }
      sim_.ub(warp, op, "arrival overflow",
              fmt::format("{}({}) on {}{} with only {} arrivals pending: {} arrivals on a barrier initialised with count {} in "
                          "phase {}{}{}",
                          action, count, name, where, b.pending(), b.arrivals_this_phase() + count, b.expected(), b.phase(), hint,
                          lanes));
    }
    case R::kTxOutOfRange:
      sim_.ub(warp, op, "tx-count out of range",
              fmt::format("{}({}) on {}{} would move the tx-count from {} outside -(2^20-1)..2^20-1{}", action, count, name, where,
                          b.tx(), lanes));
    case R::kDropToZero:
      sim_.ub(warp, op, "arrive.drop to zero",
              fmt::format("arrive.drop({}) on {}{} would lower the expected count from {} to {}", count, name, where, b.expected(),
                          b.expected() - count));
    case R::kNoCompleteWouldComplete:
      sim_.ub(warp, op, "arrive.noComplete completes the phase",
              fmt::format("arrive.noComplete({}) on {}{} would complete phase {} ({} pending, tx {})", count, name, where, b.phase(),
                          b.pending(), b.tx()));
    default: break;
  }
}

// ---- ops ----

OpResult MbarrierUnit::execute(OpContext& ctx) {
  const Machine& m = sim_.machine();
  Warp& w = ctx.warp;
  std::uint32_t cta = w.cta;
  CtaBarriers& c = ctas_[cta];
  const isa::OpDesc& d = ctx.desc;
  std::int64_t lanes = ctx.lanes();
  // A signal of this warp: applied now on its own CTA's barrier, landing later on a peer's.
  auto signal = [&](std::uint32_t target, std::uint32_t f, SignalKind kind, std::int64_t value, std::int64_t value2 = 0) {
    Signal s = signal_to(target, kind, f, value, ctx.warp_id, ctx.op);
    s.value2 = value2;
    // Arrivals release (expect_tx and complete_tx by a thread are relaxed: PTX ISA 9.7.13.15).
    bool releases = kind != SignalKind::kExpectTx && kind != SignalKind::kCompleteTx;
    if (target != cta) {
      if (releases) s.hb = hazards_->release(ctx.warp_id);
      // One thread's remote signals land in its program order, whatever their jitter (an arrive must not
      // overtake the expect_tx issued before it).
      Cycle at = sim::max(sim_.now() + sim_.jit(m.remote_arrive_cycles), remote_sent_[ctx.warp_id]);
      remote_sent_[ctx.warp_id] = at;
      on_its_way(s);
      send(at, s);
    } else {
      if (releases) hazards_->arrive(ctx.warp_id, cta, f);
      apply(s, signal_name(kind));
    }
  };
  switch (d.kind) {
    case OpKind::kMbarrierInit: {
      std::uint32_t f = ctx.barrier(Attr::kBar);
      apply_result(c.barriers[f].init(ctx.value(Attr::kCount)), cta, f, ctx.warp_id, ctx.op, ctx.value(Attr::kCount), "mbarrier.init");
      c.visibility[f] = InitVisibility::kLocal;
      hazards_->init(ctx.warp_id, ctx.op, cta, f);
      c.init_warp[f] = w.index;
      c.init_op[f] = ctx.op;
      for (int i = 0; i < sim_.program().warps; ++i) {
        c.consumed[static_cast<std::size_t>(i) * layout().count + f] = kNoPhase;
        c.free_again[static_cast<std::size_t>(i) * layout().count + f] = ~0u;
      }
      for (std::uint32_t id = sim_.cta(cta).first_warp;
           id < sim_.cta(cta).first_warp + static_cast<std::uint32_t>(sim_.program().warps); ++id)
        if (polls_[id].flat == f) polls_[id].flat = ~0u;
      std::erase_if(c.stale, [&](const CtaBarriers::Stale& st) { return st.flat == f; });
      return ctx.busy(m.mbarrier_arrive_cycles);
    }
    case OpKind::kMbarrierInval: {
      std::uint32_t f = ctx.barrier(Attr::kBar);
      if (!c.waiters[f].empty())
        ctx.ub("inval with waiters",
               fmt::format("mbarrier.inval of {} while {} warp(s) wait on it", barrier_name(f), c.waiters[f].size()));
      if (c.barriers[f].valid() && c.barriers[f].phase() > 0 && c.invals.size() < 8) {
        CtaBarriers::Inval inv{f, ctx.warp_id, ctx.op, c.barriers[f].phase(), {}};
        for (int i = 0; i < sim_.program().warps; ++i) {
          const std::size_t k = static_cast<std::size_t>(i) * layout().count + f;
          inv.used_op.push_back(c.consumed[k] == kNoPhase ? ~0u : c.consumed_op[k]);
        }
        std::erase_if(c.invals, [&](const CtaBarriers::Inval& x) { return x.flat == f; });
        c.invals.push_back(std::move(inv));
      }
      apply_result(c.barriers[f].inval(), cta, f, ctx.warp_id, ctx.op, 0, "mbarrier.inval");
      return ctx.busy(m.mbarrier_arrive_cycles);
    }
    case OpKind::kArrive:
    case OpKind::kArriveDrop:
    case OpKind::kArriveNoComplete: {
      std::uint32_t f = ctx.barrier(Attr::kBar);
      bool has_count = ctx.present(Attr::kCount);
      std::int64_t count = has_count ? ctx.value(Attr::kCount) : lanes;
      if (has_count && lanes == isa::kWarpSize) count *= isa::kWarpSize;  // every lane arrives with count
      bool has_cta = d.kind != OpKind::kArriveNoComplete && ctx.present(Attr::kCta);
      std::uint32_t target = has_cta ? sim_.peer_cta(w, ctx.op, ctx.value(Attr::kCta)) : cta;
      SignalKind kind = d.kind == OpKind::kArrive       ? SignalKind::kArrive
                        : d.kind == OpKind::kArriveDrop ? SignalKind::kArriveDrop
                                                        : SignalKind::kArriveNoComplete;
      signal(target, f, kind, count);
      return ctx.busy(m.mbarrier_arrive_cycles);
    }
    case OpKind::kArriveExpectTx:
    case OpKind::kExpectTx:
    case OpKind::kCompleteTx: {
      std::uint32_t f = ctx.barrier(Attr::kBar);
      std::uint32_t target = ctx.present(Attr::kCta) ? sim_.peer_cta(w, ctx.op, ctx.value(Attr::kCta)) : cta;
      std::int64_t tx = ctx.value(Attr::kTx) * lanes;
      if (ctx.value(Attr::kTx) < 0) ctx.ub("tx-count out of range", fmt::format("tx={} is negative", ctx.value(Attr::kTx)));
      SignalKind kind = d.kind == OpKind::kCompleteTx ? SignalKind::kCompleteTx
                        : d.kind == OpKind::kExpectTx ? SignalKind::kExpectTx
                                                      : SignalKind::kArriveExpectTx;
      signal(target, f, kind, tx, lanes);
      return ctx.busy(m.mbarrier_arrive_cycles);
    }
    case OpKind::kWait:
    case OpKind::kTestWait: {
      std::uint32_t f = ctx.barrier(Attr::kBar);
      if (d.kind == OpKind::kWait && ctx.present(Attr::kCta) && sim_.peer_cta(w, ctx.op, ctx.value(Attr::kCta)) != cta)
        ctx.ub("wait on a remote barrier",
               fmt::format("wait on {} of cluster rank {}: waits are only legal on the CTA's own barriers (PTX mbarrier.try_wait "
                           "takes a shared::cta address)",
                           barrier_name(f), ctx.value(Attr::kCta)));
      MBarrier& b = c.barriers[f];
      if (!b.valid())
        ctx.ub("barrier used before init",
               fmt::format("{} on {}, which was never initialised (mbarrier.init) or was invalidated",
                           d.kind == OpKind::kWait ? "wait" : "test_wait", barrier_name(f)));
      hazards_->check_init(ctx.warp_id, ctx.op, cta, f);
      // The operand's parity is what counts (PTX: phaseParity is the parity of the phase; an integer's low bit).
      std::int64_t parity = ctx.value(Attr::kParity) & 1;
      bool done = b.test_parity(parity);
      // A completion becomes visible to observers mbarrier_wake_cycles after it happens, the same delay a
      // blocked waiter sees (measured: an arrive followed by a wait in the same warp takes 117-177 cycles).
      Cycle visible_at = c.last_complete[f] + Cycle(m.mbarrier_wake_cycles);
      bool visible = !done || sim_.now() >= visible_at;
      if (d.kind == OpKind::kTestWait) {
        w.slots[d.result_slots[0]] = done && visible ? 1 : 0;
        if (done && visible) {
          hazards_->acquire(ctx.warp_id, cta, f);
          c.observed[f] = 1;
          c.test_passes[f] += 1;
          note_pass(ctx.warp_id, ctx.op, f, b.phase() == 0);
        } else {
          const std::int64_t awaited = done ? b.phase() - 1 : b.phase();
          Poll& poll = polls_[ctx.warp_id];
          if (poll.flat != f || poll.phase != awaited) poll = Poll{f, ctx.op, awaited, sim_.now().v};
        }
        return ctx.busy(m.mbarrier_test_wait_cycles);
      }
      if (done && visible) {
        c.passed_waits[f] += 1;
        if (b.phase() == 0) c.free_pass[f] = 1;
        c.observed[f] = 1;
        hazards_->acquire(ctx.warp_id, cta, f);
        // The completion it returns on: the latest phase with the waited parity.
        note_consumed(ctx.warp_id, ctx.op, f, ((b.phase() - 1) & 1) == parity ? b.phase() - 1 : b.phase() - 2);
        note_pass(ctx.warp_id, ctx.op, f, b.phase() == 0);
        return ctx.busy(m.mbarrier_test_wait_cycles);
      }
      if (done) {
        // Completed, not visible yet: resume when it is; if the next phase completes meanwhile, that is a
        // phase overrun too (woken checks it).
        c.observed[f] = 1;
        stats_[decl_[f]].waits += 1;  // it blocks (and is counted in wait_cycles when it wakes)
        ctx.block(this, f, b.phase() - 1, cause_of(f));
        sim_.wake_at(ctx.warp_id, visible_at);
        return ctx.blocked();
      }
      stats_[decl_[f]].waits += 1;
      c.waiters[f].push_back(ctx.warp_id);
      ctx.block(this, f, b.phase(), cause_of(f));
      return ctx.blocked();
    }
    case OpKind::kFenceMbarrierInit:
      // Releases this thread's earlier inits to the cluster; a cluster barrier then makes them visible.
      for (std::size_t f = 0; f < c.visibility.size(); ++f)
        if (c.visibility[f] == InitVisibility::kLocal && c.init_warp[f] == w.index) c.visibility[f] = InitVisibility::kFenced;
      return ctx.busy(m.op_issue_cycles);
    default: return Unit::execute(ctx);
  }
}

// ---- waking and deadlock reports ----

void MbarrierUnit::woken(std::uint32_t id) {
  const Warp& w = sim_.warp(id);
  CtaBarriers& c = ctas_[w.cta];
  const MBarrier& b = c.barriers[w.wait_obj];
  if (b.phase() > w.wait_value + 1) {
    sim_.ub(id, w.wait_op, "phase overrun",
            fmt::format("{} waited for phase {} of {} to complete; before it observed that completion, phase {} completed too "
                        "(now {}): the waited parity is current again, so on hardware this wait would block for another "
                        "phase, often forever. Usually more arrivals come per phase than the barrier's count, or a producer "
                        "runs two phases ahead",
                        sim_.warp_label(w), w.wait_value, barrier_name(w.wait_obj), w.wait_value + 1, state_text(w.cta, w.wait_obj)));
  }
  c.passed_waits[w.wait_obj] += 1;
  hazards_->acquire(id, w.cta, w.wait_obj);
  if (sim_.op_of(w, w.wait_op).kind == OpKind::kWait) note_consumed(id, w.wait_op, w.wait_obj, w.wait_value);
  note_pass(id, w.wait_op, w.wait_obj, false);  // woken by a completion: a phase did complete
  stats_[decl_[w.wait_obj]].add_wait((sim_.now() - w.wait_since).v);
}

// A wait that passes at once on a barrier with no completed phase (it waited with parity 1) waited for nothing: kept
// for the hazard reports (a consumer that starts at the producer's parity reads before the first load lands).
void MbarrierUnit::note_pass(std::uint32_t warp_id, std::uint32_t op, std::uint32_t flat, bool before_phase0) {
  before_phase0_[warp_id] = before_phase0 ? std::pair{flat, op} : std::pair{~0u, 0u};
  polls_[warp_id].flat = ~0u;
}

void MbarrierUnit::note_left_out(std::uint32_t slot, std::uint32_t flat, std::uint32_t warp_id, std::uint32_t op,
                                 std::int64_t mask) {
  // One record per (op, issuing warp): a 2-D cluster leaves each CTA out of several loads legitimately (the other row's
  // A slices, the other column's B slices), and a wrong mask must still find room.
  auto& v = ctas_[slot].left_out;
  std::size_t here = 0;
  for (const auto& l : v) {
    if (l.flat != flat) continue;
    if (l.warp == warp_id && l.op == op) return;
    ++here;
  }
  if (here < 8) v.push_back({flat, warp_id, op, mask});
}

std::uint64_t MbarrierUnit::phase_arrivers(std::uint32_t cta, std::uint32_t flat, std::int64_t phase) const {
  const CtaBarriers& c = ctas_[cta];
  const std::int64_t completed = c.barriers[flat].phase();  // phases 0 .. completed - 1 are complete
  if (phase < 0 || phase >= completed || phase < completed - kPhaseMasks) return 0;
  return c.phase_masks[flat * kPhaseMasks + phase % kPhaseMasks];
}

bool MbarrierUnit::reaches_signal(std::uint32_t warp_id, std::uint32_t flat,
                                  const std::function<bool(const isa::OpDesc&)>& kind_ok, bool any_element) const {
  const Warp& w = sim_.warp(warp_id);
  if (w.role < 0) return false;
  const auto& p = sim_.program();
  const isa::RoleCode& rc = p.roles[static_cast<std::size_t>(w.role)];
  const int decl = static_cast<int>(decl_[flat]);
  const std::int64_t element = flat - p.mbarrier_layout.base[static_cast<std::size_t>(decl)];
  return isa::may_reach(
      rc, w.builtins,
      [&](std::uint32_t op, std::span<const isa::MaybeValue> values) {
        const isa::OpDesc& d = rc.ops[op];
        if (!kind_ok(d)) return false;
        const auto& specs = isa::op_spec(d.kind).attrs;
        for (std::size_t i = 0; i < specs.size(); ++i)
          if (specs[i].use == isa::BarrierUse::kSignal && d.attrs[i].present && d.attrs[i].decl == decl) {
            const isa::MaybeValue& v = values[d.attrs[i].first];
            if (any_element || !v.known || v.value == element) return true;
          }
        return false;
      },
      walk_budget_);
}

bool MbarrierUnit::arrives_on(std::uint32_t warp_id, std::uint32_t flat) const {
  using K = isa::OpKind;
  return reaches_signal(warp_id, flat, [](const isa::OpDesc& d) {
    return d.kind == K::kArrive || d.kind == K::kArriveExpectTx || d.kind == K::kArriveNoComplete || d.kind == K::kArriveDrop ||
           d.kind == K::kUmmaCommit || d.kind == K::kCpAsyncArrive;
  });
}

bool MbarrierUnit::may_signal(std::uint32_t warp_id, std::uint32_t flat) const {
  const int decl = static_cast<int>(decl_[flat]);
  return reaches_signal(warp_id, flat, [&](const isa::OpDesc& d) { return d.signals_barrier(decl); }, true);
}

bool MbarrierUnit::role_may_signal(int role, std::uint32_t cta, std::uint32_t flat, std::vector<std::int8_t>& known) const {
  std::int8_t& k = known[static_cast<std::size_t>(role)];
  if (k < 0) {
    k = 0;
    const auto& p = sim_.program();
    for (std::uint32_t peer : sim_.cluster_of(sim_.cta(cta)).ctas)
      for (int i = 0; i < p.warps && k == 0; ++i) {
        const std::uint32_t wid = sim_.cta(peer).first_warp + static_cast<std::uint32_t>(i);
        if (sim_.warp(wid).role == role && may_signal(wid, flat)) k = 1;
      }
  }
  return k == 1;
}

bool MbarrierUnit::bytes_can_reach(std::uint32_t cta, std::uint32_t flat) const {
  const int decl = static_cast<int>(decl_[flat]);
  const int rank = sim_.cta(cta).rank, ranks = static_cast<int>(sim_.program().cluster_size());
  for (const auto& r : sim_.program().roles)
    for (const auto& d : r.ops)
      if ((d.kind == isa::OpKind::kTmaLoad || d.kind == isa::OpKind::kClcTryCancel || d.kind == isa::OpKind::kCompleteTx) &&
          d.signals_barrier(decl))
        for (int from = 0; from < ranks; ++from)
          if (reaches(d, from, rank)) return true;
  return false;
}

bool MbarrierUnit::cluster_arrives_on(std::uint32_t slot, std::uint32_t flat, bool live_only) const {
  for (std::uint32_t peer : sim_.cluster_of(sim_.cta(slot)).ctas)
    for (int i = 0; i < sim_.program().warps; ++i) {
      const std::uint32_t id = sim_.cta(peer).first_warp + static_cast<std::uint32_t>(i);
      if ((!live_only || sim_.warp(id).state != WarpState::kDone) && arrives_on(id, flat)) return true;
    }
  return false;
}

std::uint64_t MbarrierUnit::recent_arrivers(std::uint32_t cta, std::uint32_t flat) const {
  const CtaBarriers& c = ctas_[cta];
  std::uint64_t m = c.arrive_mask[flat];
  for (std::int64_t i = 0; i < kPhaseMasks; ++i) m |= c.phase_masks[flat * kPhaseMasks + i];
  return m;
}

std::uint32_t MbarrierUnit::phase_arriver_ranks(std::uint32_t cta, std::uint32_t flat, std::int64_t phase) const {
  const CtaBarriers& c = ctas_[cta];
  const std::int64_t completed = c.barriers[flat].phase();
  if (phase < 0 || phase >= completed || phase < completed - kPhaseMasks) return 0;
  return c.phase_ranks[flat * kPhaseMasks + phase % kPhaseMasks];
}

std::uint32_t MbarrierUnit::recent_arriver_ranks(std::uint32_t cta, std::uint32_t flat) const {
  const CtaBarriers& c = ctas_[cta];
  std::uint32_t m = c.arrive_ranks[flat];
  for (std::int64_t i = 0; i < kPhaseMasks; ++i) m |= c.phase_ranks[flat * kPhaseMasks + i];
  return m;
}

std::vector<std::int64_t> MbarrierUnit::rank_ids(std::uint32_t cta, std::uint32_t ranks) const {
  std::vector<std::int64_t> ids;
  for (std::uint32_t peer : sim_.cluster_of(sim_.cta(cta)).ctas)
    if (ranks >> (sim_.cta(peer).rank & 31) & 1) ids.push_back(sim_.cta(peer).id);
  return ids;
}

std::string MbarrierUnit::arrivers_words(std::uint64_t mask) {
  std::vector<int> own, peer;
  for (int i = 0; i < 64; ++i)
    if (mask & (std::uint64_t{1} << i)) (i < 32 ? own : peer).push_back(i % 32);
  if (peer.empty()) return fmt::format("{}", fmt::join(own, ","));
  if (own.empty()) return fmt::format("{} of the peer CTA", fmt::join(peer, ","));
  return fmt::format("{} and the peer CTA's {}", fmt::join(own, ","), fmt::join(peer, ","));
}

void MbarrierUnit::note_stage_mismatch(std::uint32_t slot, std::uint32_t flat, std::uint32_t dst, std::uint32_t warp_id,
                                       std::uint32_t op) {
  auto& v = ctas_[slot].mismatches;
  for (const auto& m : v)
    if (m.flat == flat && m.dst == dst && m.op == op) return;
  if (v.size() < 8) v.push_back({flat, dst, warp_id, op});
}

std::string MbarrierUnit::stage_mismatch_words(std::uint32_t slot, std::uint32_t flat) const {
  if (slot >= ctas_.size()) return "";
  const auto& p = sim_.program();
  const isa::ElementLayout& bl = p.mbarrier_layout;
  const std::uint32_t decl = bl.decl_of(flat), index = flat - bl.base[decl];
  // Per op: its first such load, and how many more it made.
  std::vector<std::pair<const CtaBarriers::Mismatch*, int>> ops;
  // (Recorded under the issuing CTA: a peer's multicast loads are with the peer.)
  for (std::uint32_t peer : sim_.cluster_of(sim_.cta(slot)).ctas)
    for (const auto& m : ctas_[peer].mismatches) {
      const std::uint32_t sd = p.smem_layout.decl_of(m.dst);
      if (m.flat != flat && !(bl.decl_of(m.flat) == decl && m.dst - p.smem_layout.base[sd] == index)) continue;
      auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& o) { return o.first->warp == m.warp && o.first->op == m.op; });
      if (it == ops.end()) ops.emplace_back(&m, 0);
      else ++it->second;
    }
  if (ops.empty()) return "";
  std::vector<std::string> said;
  for (const auto& [m, more] : ops) {
    const isa::OpDesc& d = sim_.op_of(sim_.warp(m->warp), m->op);
    said.push_back(fmt::format("'{}' (line {}) loaded into {} but completes on {}{}", d.text, d.loc.line,
                               p.smem_layout.element_name(p.smems, m->dst), barrier_name(m->flat),
                               more > 0 ? fmt::format(" (and {} more such load{})", more, more > 1 ? "s" : "") : ""));
  }
  return fmt::format(". Note: {}: does each load name its own stage's barrier (bar=)?", fmt::join(said, "; "));
}

std::pair<std::uint32_t, std::uint32_t> MbarrierUnit::passed_before_phase0(std::uint32_t warp_id) const {
  return warp_id < before_phase0_.size() ? before_phase0_[warp_id] : std::pair{~0u, 0u};
}

std::string MbarrierUnit::free_pass_again_words(std::uint32_t warp_id, std::uint32_t decl) const {
  const Warp& w = sim_.warp(warp_id);
  const CtaBarriers& c = ctas_[w.cta];
  const auto& p = sim_.program();
  const std::uint32_t base = layout().base[decl];
  for (std::uint32_t flat = base; flat < base + static_cast<std::uint32_t>(p.mbarriers[decl].size); ++flat) {
    const std::size_t i = static_cast<std::size_t>(w.index) * layout().count + flat;
    if (c.free_again[i] == ~0u) continue;
    const isa::OpDesc& d = sim_.op_of(w, c.consumed_op[i]);
    return fmt::format(
        "warp {}'s latest wait on {}, `{}` at line {}, returned at once, for the second time: {} had completed no "
        "phase (parity 1 names the phase before phase 0, which counts as complete), as at its earlier wait on it at "
        "line {}. It waited for nothing and went on. The index it waits on repeats while its parity moves on (an "
        "index from another counter than the parity's, e.g. the tile's number rather than the warp's own count of "
        "tiles): a stage's index and parity come from one counter, i % STAGES and (i / STAGES) & 1, as the other "
        "side's do",
        w.index, barrier_name(flat), d.text, d.loc.line, barrier_name(flat),
        sim_.op_of(w, c.free_again[i]).loc.line);
  }
  return "";
}

std::string MbarrierUnit::reinit_words(std::uint32_t warp_id, std::uint32_t op, std::uint32_t flat) const {
  const Warp& w = sim_.warp(warp_id);
  for (const auto& inv : ctas_[w.cta].invals) {
    if (inv.flat != flat || static_cast<std::size_t>(w.index) >= inv.used_op.size() ||
        inv.used_op[static_cast<std::size_t>(w.index)] != op)
      continue;
    const Warp& by = sim_.warp(inv.warp);
    const isa::OpDesc& d = sim_.op_of(by, inv.op);
    return fmt::format(
        "{} is a barrier that warp {} invalidated (`{}` at line {}) after {} phase(s) and initialised again; "
        "this op of warp {} (line {}) had waited on the old barrier before, and still counts on it here: the "
        "inval came before warp {} was done with the old barrier. A synchronisation after the new init does "
        "not fix that: every warp that uses the old barrier must be done with it (its last wait returned, "
        "then a bar.sync of all its users) before the inval",
        barrier_name(flat), by.index, d.text, d.loc.line, inv.phases, w.index, sim_.op_of(w, op).loc.line,
        w.index);
  }
  return "";
}

std::string MbarrierUnit::before_phase0_words(std::uint32_t warp_id, std::uint32_t flat, std::uint32_t op) const {
  const Warp& w = sim_.warp(warp_id);
  const isa::OpDesc& d = sim_.op_of(w, op);
  return fmt::format("warp {}'s `{}` at line {} returned at once on {}, which had completed no phase: parity 1 on a fresh "
                     "barrier names the phase before phase 0, which counts as complete (PTX mbarrier.test_wait.parity), so "
                     "it waited for nothing. A consumer's first wait on a full barrier uses parity 0 (a producer's first "
                     "wait on an empty one, parity 1); in a ring of several stages the parity flips once per round of the "
                     "ring, (k / STAGES) & 1, not with every k",
                     w.index, d.text, d.loc.line, barrier_name(flat));
}

// A `wait` that returns on a completion the same warp's earlier `wait` already returned on did not wait for
// anything new: its parity is stale (a stage or phase counter that restarted, e.g. on a tile with no
// k-iterations, or did not advance). Legal PTX, so a warning, not a diagnosis.
void MbarrierUnit::note_consumed(std::uint32_t warp_id, std::uint32_t op, std::uint32_t flat, std::int64_t phase) {
  const Warp& w = sim_.warp(warp_id);
  CtaBarriers& c = ctas_[w.cta];
  std::size_t i = static_cast<std::size_t>(w.index) * layout().count + flat;
  // Judged when the CTA exits: re-waiting the completion of a barrier that never completes again (a
  // one-shot "Q loaded" barrier waited in every iteration) is fine; one that went on to later phases
  // means the wait should have waited for one of them.
  if (phase >= 0 && c.consumed[i] == phase && c.stale.size() < 64) c.stale.push_back(CtaBarriers::Stale{w.index, op, c.consumed_op[i], flat, phase});
  // A second free pass (parity 1 on the element before its phase 0) by the same warp: it waited for nothing
  // twice.
  c.free_again[i] = phase == -1 && c.consumed[i] == -1 ? c.consumed_op[i] : ~0u;
  c.consumed[i] = phase;
  c.consumed_op[i] = op;
  std::uint32_t& first =
      c.first_wait[static_cast<std::size_t>(w.index) * sim_.program().mbarriers.size() + decl_[flat]];
  if (first == 0) first = flat * 2 + static_cast<std::uint32_t>(phase & 1) + 1;
}

std::string MbarrierUnit::twice_words(std::uint32_t cta, std::uint32_t flat, std::int64_t phase) const {
  const CtaBarriers& c = ctas_[cta];
  const Cta& ct = sim_.cta(cta);
  // Grouped by the pair of ops (the four warps of a warpgroup alike).
  std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, std::vector<int>>> by_ops;
  for (const auto& t : c.twice) {
    if (t.flat != flat || t.phase != phase) continue;
    auto key = std::pair{t.first_op, t.second_op};
    auto it = std::find_if(by_ops.begin(), by_ops.end(), [&](const auto& g) { return g.first == key; });
    if (it == by_ops.end()) it = by_ops.insert(by_ops.end(), {key, {}});
    it->second.push_back(t.warp);
  }
  if (by_ops.empty()) return "";
  std::vector<std::string> said;
  bool drop = false;
  for (const auto& [ops, warps] : by_ops) {
    const Warp& x = sim_.warp(ct.first_warp + static_cast<std::uint32_t>(warps.front()));
    const isa::OpDesc& a = sim_.op_of(x, ops.first);
    const isa::OpDesc& b = sim_.op_of(x, ops.second);
    drop = drop || a.kind == isa::OpKind::kArriveDrop || b.kind == isa::OpKind::kArriveDrop;
    said.push_back(fmt::format("warp{} {} arrived twice, through `{}` at line {}, then `{}` at line {}",
                               warps.size() > 1 ? "s" : "", fmt::join(warps, ","), a.text, a.loc.line, b.text,
                               b.loc.line));
  }
  return fmt::format(
      ": in that phase {}{}", fmt::join(said, "; "),
      drop ? ". An arrive.drop is an arrival in the phase it lands in (and lowers the count of the phases "
             "after it): a warp that already arrived in a phase may drop only once that phase has completed "
             "(wait for its completion first)"
           : ". Each arrival counts: two of one warp in a phase stand in for another warp's");
}

// Whether a warp of `w`'s role outside its warpgroup returned last on another phase of the element `w` waits
// on than `w` did (warpgroups that take turns on a ring's stages, whose waits on an element go two phases at
// a time; warpgroups that share every stage return on the same phases).
bool MbarrierUnit::other_warpgroup_consumed(const Warp& w) const {
  const CtaBarriers& c = ctas_[w.cta];
  const Cta& cta = sim_.cta(w.cta);
  for (int i = 0; i < sim_.program().warps; ++i) {
    if (i / 4 == w.index / 4 || sim_.warp(cta.first_warp + static_cast<std::uint32_t>(i)).role != w.role)
      continue;
    const std::int64_t other = c.consumed[static_cast<std::size_t>(i) * layout().count + w.wait_obj];
    if (other != kNoPhase &&
        other != c.consumed[static_cast<std::size_t>(w.index) * layout().count + w.wait_obj])
      return true;
  }
  return false;
}

// For a warp waiting one phase ahead of a completion nobody observed: another warpgroup of its role whose
// first wait on the same barrier array returned at the same element with the same parity, while on the
// elements both warpgroups have waited on since they returned on different phases (they take turns on the
// ring's stages, as a pingpong kernel's consumers do; warpgroups that share every stage return on the same
// phases). Then both count the ring from the same place, and the second one reads the first one's stages: the
// words that say so ("" otherwise).
std::string MbarrierUnit::same_start_words(const Warp& w) const {
  const auto& p = sim_.program();
  const CtaBarriers& c = ctas_[w.cta];
  const Cta& cta = sim_.cta(w.cta);
  const std::size_t decls = p.mbarriers.size(), n = layout().count;
  const std::uint32_t decl = decl_[w.wait_obj];
  auto first = [&](int index) { return c.first_wait[static_cast<std::size_t>(index) * decls + decl]; };
  if (first(w.index) == 0 || w.role < 0) return "";
  const int own = w.index / 4;
  for (int g = 0; g * 4 < p.warps; ++g) {
    if (g == own) continue;
    const int x = g * 4;
    if (sim_.warp(cta.first_warp + static_cast<std::uint32_t>(x)).role != w.role ||
        first(x) != first(w.index))
      continue;
    int both = 0;
    bool same = false;
    const std::uint32_t base = layout().base[decl];
    for (std::uint32_t e = 0; e < static_cast<std::uint32_t>(p.mbarriers[decl].size); ++e) {
      std::int64_t a = c.consumed[static_cast<std::size_t>(w.index) * n + base + e];
      std::int64_t b = c.consumed[static_cast<std::size_t>(x) * n + base + e];
      if (a < 0 || b < 0) continue;
      ++both;
      same = same || a == b;
    }
    if (same || both < 2) continue;
    const std::uint32_t at = first(x) - 1;
    return fmt::format(
        "warpgroups {} and {} ({}) both began waiting on {} with parity {}, and have since returned on different "
        "phases of its ring's stages, as warpgroups that take turns on tiles do: they count the ring from the same "
        "place, so the one that runs second reads stages the other's k-blocks filled and skips completions meant for "
        "it. In a pingpong kernel the second consumer warpgroup's pipeline state starts after the first's k-blocks, "
        "and each warpgroup's state skips the other's k-blocks after every tile (CUTLASS's sm90 pingpong kernel "
        "advances the consumer state by the tile's k-tile count; unless each tile's k-blocks are a multiple of twice "
        "the stages, where both start alike by design)",
        std::min(own, g), std::max(own, g), p.roles[w.role].name, barrier_name(at / 2), at % 2);
  }
  return "";
}

// A stale wait's warning, when the barrier went on to complete a later phase (else empty; with `stopped`, the run
// stopped while the CTA ran: the wait is named all the same, as possibly stale).
std::string MbarrierUnit::stale_warning(std::uint32_t slot, const CtaBarriers::Stale& st, bool stopped) const {
  const CtaBarriers& c = ctas_[slot];
  const Warp& w = sim_.warp(sim_.cta(slot).first_warp + static_cast<std::uint32_t>(st.warp));
  if (c.barriers[st.flat].phase() <= st.phase + 1) {  // nothing completed after it
    if (!stopped) return "";
    return fmt::format("{}: the wait at line {} returned on the completion of phase {} of {}, which its wait at line {} had "
                       "already returned on; the run stopped before {} completed another phase: if this wait meant the next "
                       "one, its parity is stale (a stage or phase counter that restarted or did not advance, e.g. a "
                       "per-tile counter when the k-loop is not a multiple of the stages)",
                       sim_.warp_label(w), sim_.op_of(w, st.op).loc.line, st.phase, barrier_name(st.flat),
                       sim_.op_of(w, st.before_op).loc.line, barrier_name(st.flat));
  }
  return fmt::format("{}: the wait at line {} returned on the completion of phase {} of {}, which its wait at line {} had "
                     "already returned on, although {} went on to complete phase {}: it waited for nothing new (a stale "
                     "parity: a stage or phase counter that restarted or did not advance, e.g. on a tile without k-iterations)",
                     sim_.warp_label(w), sim_.op_of(w, st.op).loc.line, st.phase, barrier_name(st.flat),
                     sim_.op_of(w, st.before_op).loc.line, barrier_name(st.flat), c.barriers[st.flat].phase() - 1);
}

void MbarrierUnit::cta_exiting(std::uint32_t slot) {
  CtaBarriers& c = ctas_[slot];
  for (const CtaBarriers::Stale& st : c.stale) {
    std::string text = stale_warning(slot, st, false);
    if (text.empty()) continue;
    if (warnings_.size() >= 8) {
      ++stale_waits_;
      continue;
    }
    warnings_.push_back(std::move(text));
  }
  c.stale.clear();
}

void MbarrierUnit::add_warnings(std::vector<std::string>& warnings) const {
  warnings.insert(warnings.end(), warnings_.begin(), warnings_.end());
  // CTAs still running when the run stopped (a deadlock, a diagnosis, a limit): their stale waits so far, judged the
  // same way (a stale wait is often what led to the stop).
  // Warps of one CTA with the same stale wait (the four warps of a warpgroup, say) are one warning.
  std::size_t more = stale_waits_, kept = warnings_.size();
  for (std::uint32_t slot : sim_.slots_in_launch_order()) {
    const auto& stale = ctas_[slot].stale;
    for (std::size_t i = 0; i < stale.size(); ++i) {
      const CtaBarriers::Stale& st = stale[i];
      auto same = [&](const CtaBarriers::Stale& o) { return o.op == st.op && o.flat == st.flat && o.phase == st.phase; };
      if (std::any_of(stale.begin(), stale.begin() + static_cast<std::ptrdiff_t>(i), same)) continue;
      std::string text = stale_warning(slot, st, true);
      if (text.empty()) continue;
      if (kept >= 8) {
        ++more;
        continue;
      }
      const auto alike = std::count_if(stale.begin() + static_cast<std::ptrdiff_t>(i) + 1, stale.end(), same);
      if (alike > 0) text += fmt::format(" (and {} more warps of the CTA alike)", alike);
      warnings.push_back(std::move(text));
      ++kept;
    }
  }
  if (more > 0) warnings.push_back(fmt::format("... and {} more stale waits", more));
}

std::string MbarrierUnit::describe_wait(const Warp& w) const {
  const MBarrier& b = ctas_[w.cta].barriers[w.wait_obj];
  std::int64_t parity = w.wait_value & 1;
  return fmt::format("mbarrier {} to complete phase {} (waits with parity {}); barrier now: {}", barrier_name(w.wait_obj),
                     w.wait_value, parity, state_text(w.cta, w.wait_obj)) +
         (b.tx_expected_this_phase() || b.tx_completed_this_phase()
              ? fmt::format(", {} bytes expected / {} delivered this phase", b.tx_expected_this_phase(), b.tx_completed_this_phase())
              : "");
}

std::string MbarrierUnit::describe_poll(const Warp& w, const isa::OpDesc& d) const {
  if (d.kind != OpKind::kTestWait && d.kind != OpKind::kWait) return "";
  const isa::AttrSlot* bar = d.slot(Attr::kBar);
  if (bar == nullptr || bar->decl < 0) return "";
  std::vector<std::string> states;
  for (int e = 0; e < sim_.program().mbarriers[bar->decl].size; ++e) {
    std::uint32_t f = layout().base[bar->decl] + e;
    states.push_back(fmt::format("{}: {}", barrier_name(f), state_text(w.cta, f)));
  }
  return fmt::format("nothing: it polls mbarrier {}", fmt::join(states, "; "));
}

bool MbarrierUnit::spinning(const Warp& w, Warp& spin) const {
  const std::uint32_t id = sim_.cta(w.cta).first_warp + static_cast<std::uint32_t>(w.index);
  if (id >= polls_.size() || polls_[id].flat == ~0u) return false;
  const Poll& poll = polls_[id];
  // (Still waiting for that phase: once it completed, the warp's next poll returns on it.)
  if (ctas_[w.cta].barriers[poll.flat].phase() > poll.phase) return false;
  spin.wait_unit = index();
  spin.wait_obj = poll.flat;
  spin.wait_value = poll.phase;
  spin.wait_op = poll.op;
  spin.wait_since = Cycle(poll.since);
  spin.wait_cause = cause_of(poll.flat);
  return true;
}

// Whether op `d` of a warp in cluster rank `from` can signal the barrier of rank `to`, as far as its constant
// targets tell (cta=, bar_cta=, a multicast mask); a target computed at run time may be any rank.
bool MbarrierUnit::reaches(const isa::OpDesc& d, int from, int to) {
  auto constant = [&](isa::Attr a, std::int64_t& v) {
    const isa::AttrSlot* s = d.slot(a);
    if (s == nullptr || !s->present) return false;
    if (std::find(d.dynamic_slots.begin(), d.dynamic_slots.end(), s->first) != d.dynamic_slots.end()) {
      v = -2;  // dynamic
      return true;
    }
    v = d.base_values[s->first];
    return true;
  };
  std::int64_t v = 0;
  if (constant(isa::Attr::kBarCta, v) || constant(isa::Attr::kCta, v)) return v == -2 || v == to;
  if (constant(isa::Attr::kMulticast, v)) {
    if (v == -2) return true;
    if (d.kind == isa::OpKind::kClcTryCancel) return v != 0 || from == to;  // a flag: every CTA of the cluster
    return v == 0 ? from == to : ((v >> to) & 1) != 0;
  }
  return from == to;
}

// The multicast ops of the cluster in this phase that signal element `flat` but left CTA slot `slot` out: TMA
// loads (their bytes), or with `commits` tcgen05 commits (their arrivals), when at least `least` CTAs issued
// such ops ("" if not).
std::string MbarrierUnit::left_out_words(std::uint32_t slot, std::uint32_t flat, bool commits,
                                         std::int64_t least) const {
  // Grouped by op: the op once, then each issuing CTA with its mask.
  std::vector<std::pair<const isa::OpDesc*, std::vector<std::string>>> ops;
  std::vector<std::uint32_t> issuers;
  for (const auto& l : ctas_[slot].left_out) {
    if (l.flat != flat) continue;
    const Warp& x = sim_.warp(l.warp);
    const isa::OpDesc* d = &sim_.op_of(x, l.op);
    if ((d->kind == isa::OpKind::kUmmaCommit) != commits) continue;
    auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& o) { return o.first == d; });
    if (it == ops.end()) it = ops.insert(ops.end(), {d, {}});
    it->second.push_back(fmt::format("CTA {} with mask 0x{:x}", sim_.cta(x.cta).id, l.mask));
    if (std::find(issuers.begin(), issuers.end(), x.cta) == issuers.end()) issuers.push_back(x.cta);
  }
  if (ops.empty() || static_cast<std::int64_t>(issuers.size()) < least) return "";
  std::vector<std::string> v;
  for (const auto& [d, by] : ops) v.push_back(fmt::format("`{}` at line {} ({})", d->text, d->loc.line, fmt::join(by, ", ")));
  if (commits)
    return fmt::format(
        ". Multicast commits of the cluster that arrive on {} left this CTA (rank {}) out in this phase: {}. If "
        "this CTA's stage waits for them too (a stage that another CTA's multicast load also fills is free "
        "only when every CTA's MMA is done with it), their multicast mask must name rank {}",
        barrier_name(flat), sim_.cta(slot).rank, fmt::join(v, "; "), sim_.cta(slot).rank);
  return fmt::format(". Multicast loads of the cluster that signal {} left this CTA (rank {}) out in this phase: "
                     "{}. If one of them should bring this CTA its bytes, its multicast mask is wrong",
                     barrier_name(flat), sim_.cta(slot).rank, fmt::join(v, "; "));
}

// When no warp of the cluster can reach an op that arrives on element `flat` (by its code: a dead branch or `if warp ==`
// closes paths) but ops signal it (expect_tx, a TMA's or a CLC response's complete_tx: they move the tx-count only), the
// words that say so; "" otherwise.
std::string MbarrierUnit::tx_only_words(std::uint32_t cta, std::uint32_t flat) const {
  using K = isa::OpKind;
  const auto& p = sim_.program();
  const int decl = static_cast<int>(decl_[flat]);
  std::vector<std::string> ops;
  for (const auto& r : p.roles)
    for (const auto& d : r.ops)
      if (d.signals_barrier(decl) && (d.kind == K::kExpectTx || d.kind == K::kTmaLoad || d.kind == K::kClcTryCancel)) {
        std::string t = fmt::format("'{}' (line {})", d.text, d.loc.line);
        if (ops.size() < 3 && std::find(ops.begin(), ops.end(), t) == ops.end()) ops.push_back(t);
      }
  if (ops.empty()) return "";
  if (cluster_arrives_on(cta, flat, false)) return "";
  return fmt::format("the ops that signal it ({}) move its tx-count only: `expect_tx` sets the bytes without arriving, and a "
                     "copy's complete_tx brings them. Its count needs arrivals: `arrive.expect_tx` (expect and arrive in one "
                     "op, as CUTLASS's producer_acquire does) or an `arrive`",
                     fmt::join(ops, ", "));
}

void MbarrierUnit::explain_wait(const Warp& w, WaitExplanation& e) const {
  const auto& p = sim_.program();
  const Cta& c = sim_.cta(w.cta);
  int decl = static_cast<int>(decl_[w.wait_obj]);
  std::vector<std::uint32_t> signalers;
  std::vector<std::string> exited;  // warps that could signal it but exited
  std::vector<std::string> exited_when;  // the same, with the cycle each exited at
  std::size_t exited_all = 0;
  std::vector<std::int8_t> role_signals(p.roles.size(), -1);  // role_may_signal's answers, per role (-1: not asked yet)
  for (std::uint32_t peer : sim_.cluster_of(c).ctas) {
    const Cta& pc = sim_.cta(peer);
    for (int i = 0; i < p.warps; ++i) {
      std::uint32_t wid = pc.first_warp + i;
      const Warp& x = sim_.warp(wid);
      if (x.role < 0) continue;
      bool sig = false;
      for (const auto& d : p.roles[x.role].ops) sig = sig || (d.signals_barrier(decl) && reaches(d, pc.rank, c.rank));
      // (and some warp of its role can reach an op that signals the barrier, whatever its element or CTA: one in a dead
      // branch, or behind a guard that every warp of the role fails, signals nothing; a warp that skips it while others of
      // its role reach it still counts, as one that left)
      if (!sig || !role_may_signal(x.role, w.cta, w.wait_obj, role_signals)) continue;
      if (x.state != WarpState::kDone) {
        signalers.push_back(wid);
      } else {
        ++exited_all;
        if (exited.size() < 4) {
          exited.push_back(fmt::format("CTA {} warp {} ({})", pc.id, x.index, p.roles[x.role].name));
          exited_when.push_back(fmt::format("{} at cycle {}", exited.back(), exit_cycle_[wid]));
        }
      }
      e.waits_on(wid);
    }
  }
  const MBarrier& b = ctas_[w.cta].barriers[w.wait_obj];
  std::string name = barrier_name(w.wait_obj);
  // The phase before the awaited one completed and no wait observed it: a parity one phase ahead skipped it.
  if (b.phase() >= 1 && w.wait_value == b.phase() && !ctas_[w.cta].observed[w.wait_obj]) {
    const std::string head =
        fmt::format("{}: phase {} completed (cycle {}) and no wait observed it, while {} waits for phase {} (parity {})", name,
                    b.phase() - 1, ctas_[w.cta].last_complete[w.wait_obj].v, sim_.warp_label(w), b.phase(), b.phase() & 1);
    const std::size_t i = static_cast<std::size_t>(w.index) * layout().count + w.wait_obj;
    if (std::string turns = same_start_words(w); !turns.empty())
      e.lead_cause(fmt::format("{}: {}", head, turns));
    else if (std::string sibling = unwaited_sibling_words(w); !sibling.empty())
      e.lead_cause(fmt::format("{}: {}", head, sibling));
    else if (ctas_[w.cta].consumed[i] == b.phase() - 2 && !other_warpgroup_consumed(w))
      // The warp's previous wait on this element returned on the phase before the skipped one: its own waits on the
      // element jumped a phase (its stage counter restarted, e.g. per tile, while the producer's ran on).
      e.lead_cause(fmt::format(
          "{}; its previous wait on {} (`{}` at line {}) {}, so its waits skipped phase {}: the stage index and parity "
          "it waits with do not follow the ring one k-block at a time. A stage counter that restarts (e.g. each tile, "
          "when the k-blocks per tile are not a multiple of the stages) while the producer's runs on, or a parity one "
          "phase ahead; the producer and its consumers must count the ring's k-blocks alike across tiles (CUTLASS "
          "keeps one pipeline state for the whole persistent loop)",
          head, name, sim_.op_of(w, ctas_[w.cta].consumed_op[i]).text, sim_.op_of(w, ctas_[w.cta].consumed_op[i]).loc.line,
          b.phase() >= 2 ? fmt::format("returned on phase {}", b.phase() - 2)
                         : std::string("passed at once before its phase 0 (parity 1 on a fresh barrier)"),
          b.phase() - 1));
    else
      e.cause(fmt::format("{}: if it meant phase {}'s completion, its parity is one phase ahead (that wait would use "
                          "parity {}); a parity that flips before its stage's phase does skips a completion",
                          head, b.phase() - 1, (b.phase() - 1) & 1));
  }
  if (b.pending() == 0 && b.tx() > 0 && ctas_[w.cta].tx_in_flight[w.wait_obj] >= b.tx()) {
    // (A run stopped by a limit: the missing bytes are on their way.)
    e.cause(fmt::format("{}: all {} arrivals came and {} of the {} bytes expected in this phase are still on their way (copies "
                        "in flight when the run stopped: it was cut short, the bytes are not missing)",
                        name, b.expected(), ctas_[w.cta].tx_in_flight[w.wait_obj], b.tx_expected_this_phase()));
  } else if (b.pending() == 0 && b.tx() != 0) {
    // Peers whose TMA copies can deliver into this CTA (multicast, bar_cta): where are they?
    std::vector<std::string> peers;
    for (std::uint32_t peer : sim_.cluster_of(c).ctas) {
      const Cta& pc = sim_.cta(peer);
      if (peer == w.cta) continue;
      // Its warps whose code loads into this barrier: exited (when), or waiting (on what).
      std::vector<std::string> states;
      for (int i = 0; i < p.warps; ++i) {
        std::uint32_t wid = pc.first_warp + i;
        const Warp& x = sim_.warp(wid);
        if (x.role < 0) continue;
        bool loads = false;
        for (const auto& d : p.roles[x.role].ops)
          loads = loads || (d.kind == isa::OpKind::kTmaLoad && d.signals_barrier(decl) && reaches(d, pc.rank, c.rank));
        if (!loads) continue;
        if (x.state == WarpState::kDone)
          states.push_back(fmt::format("warp {} exited at cycle {}", x.index, exit_cycle_[wid]));
        else if (x.state == WarpState::kBlocked)
          states.push_back(fmt::format("warp {} waits for {}", x.index, sim_.describe_wait(x)));
      }
      if (!states.empty()) peers.push_back(fmt::format("CTA {} (rank {}): {}", pc.id, pc.rank, fmt::join(states, ", ")));
    }
    // The ops that set the expected bytes (a pipeline's producer_acquire takes them from the pipeline's tx=).
    std::vector<std::string> expecters;
    bool from_pipeline = false;
    for (const auto& r : p.roles)
      for (const auto& d : r.ops)
        if ((d.kind == isa::OpKind::kArriveExpectTx || d.kind == isa::OpKind::kExpectTx) && d.signals_barrier(decl) &&
            expecters.size() < 3) {
          std::string t = fmt::format("'{}' (line {})", d.text, d.loc.line);
          if (std::find(expecters.begin(), expecters.end(), t) == expecters.end()) expecters.push_back(t);
          from_pipeline = from_pipeline || d.text.rfind("producer_", 0) == 0;
        }
    e.cause(fmt::format(
        "{}: all {} arrivals came but the tx-count is stuck at {}: {} bytes expected, {} delivered in "
        "this phase. The transaction bytes do not match what the TMA copies deliver (check {} against the "
        "boxes, and multicast peers){}{}",
        name, b.expected(), b.tx(), b.tx_expected_this_phase(), b.tx_completed_this_phase(),
        expecters.empty()
            ? std::string("arrive.expect_tx tx=")
            : fmt::format("the tx= of {}{}", fmt::join(expecters, ", "),
                          from_pipeline ? " (a pipeline statement's comes from its pipeline's tx=)" : ""),
        peers.empty()
            ? ""
            : fmt::format(". Peers whose multicast copies may land here: {}", fmt::join(peers, "; ")),
        left_out_words(w.cta, w.wait_obj, false, 1) + stage_mismatch_words(w.cta, w.wait_obj)));
  } else if (std::string only_tx = b.pending() > 0 ? tx_only_words(w.cta, w.wait_obj) : ""; !only_tx.empty()) {
    e.cause(fmt::format("{}: phase {} needs {} more arrival(s), but no warp's code reaches an op that arrives on it: {}", name,
                        b.phase(), b.pending(), only_tx));
  } else if (signalers.empty() && exited.empty()) {
    // Ops that do signal the barrier, but of other CTAs only (their bar_cta= or multicast mask leaves this one out).
    // (Those some warp of the cluster can reach; the others, in a dead branch or behind guards, are named apart.)
    std::vector<std::string> elsewhere, unreached;
    for (const auto& r : p.roles)
      for (const auto& d : r.ops) {
        if (!d.signals_barrier(decl)) continue;
        bool reached = false;
        for (std::uint32_t peer : sim_.cluster_of(c).ctas)
          for (int i = 0; i < p.warps && !reached; ++i) {
            const std::uint32_t wid = sim_.cta(peer).first_warp + static_cast<std::uint32_t>(i);
            const Warp& x = sim_.warp(wid);
            reached = x.role >= 0 && &p.roles[static_cast<std::size_t>(x.role)] == &r &&
                      reaches_signal(wid, w.wait_obj, [&](const isa::OpDesc& o) { return &o == &d; }, true);
          }
        auto& into = reached ? elsewhere : unreached;
        std::string t = fmt::format("'{}' (line {})", d.text, d.loc.line);
        if (into.size() < 3 && std::find(into.begin(), into.end(), t) == into.end()) into.push_back(t);
      }
    if (elsewhere.empty() && !unreached.empty())
      e.cause(fmt::format("{}: phase {} needs {} more arrival(s) but no warp's code reaches an op that signals {}: {} {} on a "
                          "path no warp takes (a branch on a constant, or a guard that no warp of the role passes)",
                          name, b.phase(), b.pending(), p.mbarriers[decl].name, fmt::join(unreached, ", "),
                          unreached.size() == 1 ? "lies" : "lie"));
    else if (elsewhere.empty())
      e.cause(fmt::format("{}: phase {} needs {} more arrival(s) but no op of any role arrives on {} (or signals it through a "
                          "TMA, commit or cp.async.arrive): nothing can ever complete it",
                          name, b.phase(), b.pending(), p.mbarriers[decl].name));
    else
      e.cause(fmt::format("{}: phase {} needs {} more arrival(s) but the ops that signal {} reach other CTAs only, not this "
                          "one (cluster rank {}): {}. Their multicast mask or bar_cta= leaves rank {} out",
                          name, b.phase(), b.pending(), p.mbarriers[decl].name, c.rank, fmt::join(elsewhere, ", "), c.rank));
  } else if (signalers.empty()) {
    const std::string astray = arrivals_astray(w.cta, w.wait_obj), there = signalled_only_there(w.cta, w.wait_obj),
                      skipped = element_skipped(w.cta, w.wait_obj);
    e.cause(fmt::format("{}: phase {} needs {} more arrival(s) ({} came in this phase) but every warp that signals {} has "
                        "exited: {}{}",
                        name, b.phase(), b.pending(), b.arrivals_this_phase(), p.mbarriers[decl].name, fmt::join(exited, ", "),
                        !astray.empty() ? ". " + astray
                        : !there.empty()   ? there
                        : !skipped.empty() ? skipped
                                           : std::string(". They left the loop that arrives before this phase's arrivals (a "
                                                       "trip count that differs between the roles?)")));
  } else if (b.phase() == 0 && b.arrivals_this_phase() == 0 && b.tx() == 0 && ctas_[w.cta].passed_waits[w.wait_obj] == 0) {
    // Not two sides each waiting for the other's first arrive when a peer's barrier did complete, by an op that
    // reaches the peer only, or when the array's other elements got their arrivals.
    const std::string there = signalled_only_there(w.cta, w.wait_obj) + element_skipped(w.cta, w.wait_obj);
    // Other elements of the array had a wait pass before their phase 0, with parity 1, at once (a producer's first waits on
    // its free stages), while this first wait on this element asks for parity 0.
    std::vector<std::string> passed;
    if (p.mbarriers[decl].array && (w.wait_value & 1) == 0) {
      const std::uint32_t base = layout().base[static_cast<std::size_t>(decl)], n = static_cast<std::uint32_t>(p.mbarriers[decl].size);
      for (std::uint32_t f = base; f < base + n; ++f)
        if (f != w.wait_obj && ctas_[w.cta].free_pass[f] && passed.size() < 4)
          passed.push_back(barrier_name(f));
    }
    if (!there.empty())
      e.cause(fmt::format("{}: none of the {} arrivals of phase 0 came{}", name, b.expected(), there));
    else if (!passed.empty())
      e.cause(fmt::format("{}: {} waits for its phase 0 (parity 0), while the first waits on {} passed at once with parity 1, "
                          "before those completed a phase, as a producer's first waits on free stages do: its parity flipped "
                          "before the ring came back to its first stage (in a ring of STAGES stages the parity is "
                          "(k / STAGES) & 1, flipping when the index wraps to 0, not when it reaches the last stage)",
                          name, sim_.warp_label(w), fmt::join(passed, ", ")));
    else
      e.never_started(fmt::format("{} (role {} waits with parity {})", name, p.roles[w.role].name, w.wait_value & 1));
  } else if (b.arrivals_this_phase() == 0 && b.pending() > 0) {
    // Nothing arrived yet in this phase: say what the warps that would arrive are waiting for.
    std::vector<std::string> blocked_on;
    for (std::uint32_t wid : signalers) {
      const Warp& x = sim_.warp(wid);
      if (x.state != WarpState::kBlocked) continue;
      std::string d = fmt::format("{} ({})", p.roles[x.role].name, sim_.describe_wait(x));
      if (std::find(blocked_on.begin(), blocked_on.end(), d) == blocked_on.end()) blocked_on.push_back(d);
      if (blocked_on.size() >= 3) break;
    }
    for (std::uint32_t wid : signalers)
      if (std::string skipped = skipped_release_words(w.cta, w.wait_obj, sim_.warp(wid)); !skipped.empty()) {
        e.lead_cause(fmt::format("{}: none of the {} arrivals of phase {} came: {}", name, b.expected(),
                                 b.phase(), skipped));
        break;
      }
    // (A commit that signals only the peer's element names the mistake: that cause leads, ahead of the symptoms it causes,
    // such as a stage's bytes that never came because the peer's producer waits on this.)
    if (!blocked_on.empty()) {
      const std::string only_there = signalled_only_there(w.cta, w.wait_obj);
      std::string text = fmt::format("{}: none of the {} arrivals of phase {} came; the warps that arrive on it are blocked: "
                                     "{}{}{}",
                                     name, b.expected(), b.phase(), fmt::join(blocked_on, "; "), only_there,
                                     element_skipped(w.cta, w.wait_obj));
      if (only_there.empty()) e.cause(std::move(text));
      else e.lead_cause(std::move(text));
    }
  } else if (b.arrivals_this_phase() > 0 && !exited.empty()) {
    // Some signallers still run, some exited: an early exit (a guard that skips a warp's loop) takes its arrivals.
    const std::string astray = arrivals_astray(w.cta, w.wait_obj);
    e.cause(fmt::format("{}: initialised with count {} but only {} arrival(s) came in phase {} ({} missing), and {} warp(s) "
                        "whose code arrives on {} exited: {}{}. A warp that leaves before its arrivals (an early exit or a "
                        "shorter loop) takes them from every later phase{}",
                        name, b.expected(), b.arrivals_this_phase(), b.phase(), b.pending(), exited_all,
                        p.mbarriers[decl].name, fmt::join(exited_when, ", "), exited_all > exited_when.size() ? ", ..." : "",
                        astray.empty() ? "" : ". Or: " + astray));
  } else if (const std::int64_t raised = b.raised_this_phase(); b.arrivals_this_phase() > 0 && raised > 0) {
    // cp.async.mbarrier.arrive without .noinc raises the pending count by one before its own arrival (PTX ISA
    // cp.async.mbarrier.arrive): such arrivals never bring a phase closer.
    e.cause(fmt::format("{}: {} arrival(s) came in phase {}, but {} were added to its pending count on the way (count {}, {} "
                        "still pending; the latest arrival by {}): a `cp.async.arrive` without `noinc` raises the pending "
                        "count by one before it arrives, so its arrival cancels out. Use `cp.async.arrive ... noinc` (the "
                        "count then includes those arrivals, as CUTLASS's sm80 pipeline counts its producer threads), or "
                        "keep the increment and leave them out of the count",
                        name, b.arrivals_this_phase(), b.phase(), raised, b.expected(), b.pending(),
                        latest_arrival(w.cta, w.wait_obj)));
  } else if (b.arrivals_this_phase() > 0) {
    const std::string astray = arrivals_astray(w.cta, w.wait_obj);
    // Multicast commits of the cluster that left this CTA out (their mask), else the count or the arrivals astray.
    const std::string commits_left_out = left_out_words(w.cta, w.wait_obj, true, b.pending());
    const std::string why =
        !commits_left_out.empty() ? commits_left_out + (astray.empty() ? "" : ". Or: " + astray)
        : !astray.empty()         ? ". " + astray
                                  : ". If every warp that arrives per phase already did, the count is larger than the threads "
                                    "that arrive";
    e.cause(fmt::format("{}: initialised with count {} but only {} arrival(s) came in phase {} ({} missing; the latest by {}){}",
                        name, b.expected(), b.arrivals_this_phase(), b.phase(), b.pending(), latest_arrival(w.cta, w.wait_obj),
                        why));
  }
}

// A signalling op, for a cause: "[CTA c ]warp w's `text` at line l".
std::string MbarrierUnit::op_words(std::uint32_t warp_id, std::uint32_t op, bool with_cta) const {
  const Warp& x = sim_.warp(warp_id);
  const isa::OpDesc& d = sim_.op_of(x, op);
  return fmt::format("{}warp {}'s `{}` at line {}", with_cta ? fmt::format("CTA {} ", sim_.cta(x.cta).id) : "", x.index, d.text,
                     d.loc.line);
}

// The op of the element's latest arrival, for a cause ("warp 1's `umma.commit acc_empty` at line 35").
std::string MbarrierUnit::latest_arrival(std::uint32_t slot, std::uint32_t flat) const {
  const auto [wid, op] = ctas_[slot].last_signal[flat];
  return wid == ~0u ? "none" : op_words(wid, op, sim_.warp(wid).cta != slot);
}

// An element of a barrier array that never got an arrival while its siblings completed phases: the op that arrives
// on the array (its latest arrival on a sibling named) never reaches this index (an index or a condition that skips it,
// e.g. `arrive empty[s - 1]` under `if s > 0` at a ring's wrap).
std::string MbarrierUnit::element_skipped(std::uint32_t slot, std::uint32_t flat) const {
  const auto& p = sim_.program();
  const std::uint32_t decl = decl_[flat];
  const CtaBarriers& c = ctas_[slot];
  if (!p.mbarriers[decl].array || c.last_signal[flat].first != ~0u) return "";
  const std::uint32_t base = layout().base[decl], n = static_cast<std::uint32_t>(p.mbarriers[decl].size);
  std::vector<std::string> done;
  std::uint32_t by = ~0u;
  for (std::uint32_t f = base; f < base + n; ++f) {
    if (f == flat || c.last_signal[f].first == ~0u || c.barriers[f].phase() == 0) continue;
    done.push_back(fmt::format("{} ({} phase(s))", barrier_name(f), c.barriers[f].phase()));
    by = f;
  }
  if (done.empty()) return "";
  const auto [wid, op] = c.last_signal[by];
  const Warp& x = sim_.warp(wid);
  // Only when that warp went past this element: it exited, waits on this element itself, or waits for a phase after
  // the first (it went round its ring). A warp blocked before reaching the element is not evidence of a skip.
  const bool past = x.state == WarpState::kDone ||
                    (x.state == WarpState::kBlocked && x.wait_unit == index() && (x.wait_obj == flat || x.wait_value >= 1));
  if (!past) return "";
  // Not while a live warp's code does reach an arrive on this element (another warpgroup's turn that has not come).
  if (cluster_arrives_on(slot, flat, true)) return "";
  return fmt::format(". {} never got an arrival in this CTA while {} completed phases; the latest arrival on {} was {}: the "
                     "index it arrives on, or the condition around it, never reaches {}",
                     barrier_name(flat), fmt::join(done, ", "), barrier_name(by), op_words(wid, op, false), barrier_name(flat));
}

// Warp `x`, whose code arrives on element `flat` (a release), is blocked waiting for the next phase of a
// barrier of another array, of the same length, at the same index (the stage's 'full'), whose phase equal to
// this element's current one it did return on: it consumed the stage and went back to wait for its next fill
// without releasing it (a path around its arrive: a `continue` for a skipped block). The words that say so
// ("" otherwise).
std::string MbarrierUnit::skipped_release_words(std::uint32_t cta, std::uint32_t flat, const Warp& x) const {
  if (x.state != WarpState::kBlocked || x.wait_unit != index() || x.cta != cta || x.role < 0 || x.index >= 32)
    return "";
  const auto& p = sim_.program();
  const std::uint32_t f = x.wait_obj, df = decl_[f], de = decl_[flat];
  if (df == de || p.mbarriers[df].size != p.mbarriers[de].size ||
      f - layout().base[df] != flat - layout().base[de])
    return "";
  const CtaBarriers& c = ctas_[cta];
  const std::size_t i = static_cast<std::size_t>(x.index) * layout().count + f;
  const std::int64_t phase = c.barriers[flat].phase();
  // (And it did release the element's previous phase: a warp whose releases come late by design, after its
  // next wait, as a delayed release does, never released the element before its first such wait.)
  // Or, before the element's first phase, it has released another element of the array since (a release that names
  // the stage just issued on instead of the one before: `arrive empty[c]` for `empty[(k - 1) % S]`).
  constexpr std::uint32_t kNoElement = ~0u;
  auto released_sibling = [&]() -> std::uint32_t {
    const std::uint32_t base = layout().base[de], n = static_cast<std::uint32_t>(p.mbarriers[de].size);
    for (std::uint32_t e = base; e < base + n; ++e)
      if (e != flat && (recent_arrivers(cta, e) >> (x.index & 31) & 1) != 0) return e;
    return kNoElement;
  };
  const std::uint32_t sibling = phase >= 1 ? kNoElement : released_sibling();
  if (c.consumed[i] != phase || x.wait_value != phase + 1 ||
      (phase >= 1 ? (phase_arrivers(cta, flat, phase - 1) >> (x.index & 31) & 1) == 0 : sibling == kNoElement))
    return "";
  std::vector<std::string> arrives;
  for (const isa::OpDesc* d : hazards_->release_ops(x.role, de))
    arrives.push_back(fmt::format("`{}` at line {}", d->text, d->loc.line));
  const std::string head = fmt::format(
      "{} returned on phase {} of {} (`{}` at line {}) and now waits for its phase {}, without arriving on {} in between",
      sim_.warp_label(x), phase, barrier_name(f), sim_.op_of(x, c.consumed_op[i]).text,
      sim_.op_of(x, c.consumed_op[i]).loc.line, phase + 1, barrier_name(flat));
  const std::string ops = arrives.empty() ? "" : fmt::format(" ({})", fmt::join(arrives, ", "));
  if (sibling != kNoElement)
    return fmt::format("{}, while it did arrive on {}: its release{} names another stage than the one it consumed. A release "
                       "after `wgmma.wait 1` frees the previous k-block's stage ((k - 1) % STAGES, as CUTLASS's "
                       "consumer_release does), not the one just issued on",
                       head, barrier_name(sibling), ops);
  return fmt::format("{}: it consumed the stage and went back for its next fill without releasing it. A path from that wait "
                     "around its release{} (a `continue` or a branch for a skipped or masked block) leaves the stage held: "
                     "every stage a consumer waited for is released, also one whose work it skips",
                     head, ops);
}

// A barrier of the same shape as the one warp w waits on, signalled by as many ops (a sibling ring: FA3's V beside K),
// that the kernel waits on in fewer places than this one, while w's role waits on this one in more than one: one of
// those waits likely names the wrong barrier (V's stage waited on K's full barrier).
std::string MbarrierUnit::unwaited_sibling_words(const Warp& w) const {
  const auto& p = sim_.program();
  const std::uint32_t decl = decl_[w.wait_obj];
  // (waits, signalling ops) on declaration d in the whole kernel
  auto uses = [&](std::uint32_t d) {
    std::pair<int, int> n{0, 0};
    for (const auto& r : p.roles)
      for (const auto& o : r.ops) {
        n.first += waits_on(o, d) ? 1 : 0;
        n.second += !is_wait(o) && o.signals_barrier(static_cast<int>(d)) ? 1 : 0;
      }
    return n;
  };
  int own = 0;
  for (const auto& o : p.roles[w.role].ops) own += waits_on(o, decl) ? 1 : 0;
  if (own < 2) return "";
  const auto [waits, signals] = uses(decl);
  for (std::uint32_t d = 0; d < p.mbarriers.size(); ++d) {
    if (d == decl || p.mbarriers[d].size != p.mbarriers[decl].size) continue;
    const auto [their_waits, their_signals] = uses(d);
    if (their_signals != signals || their_signals == 0 || their_waits >= waits) continue;
    const isa::OpDesc& mine = sim_.op_of(w, w.wait_op);
    return fmt::format("{} and {} are filled alike ({} ops signal each), but the kernel waits on {} in {} places and on {} in "
                       "{}: does `{}` (line {}) mean {}? (a wait on the wrong barrier observes only every other phase of it)",
                       p.mbarriers[decl].name, p.mbarriers[d].name, signals, p.mbarriers[decl].name, waits,
                       p.mbarriers[d].name, their_waits, mine.text, mine.loc.line, p.mbarriers[d].name);
  }
  return "";
}

// This CTA's element never completed a phase while a peer's did, by a umma.commit that signals the peer's own barrier
// only (no multicast reaching this rank): a 2-SM pair's leader committing to its own empty barrier and not its peer's.
std::string MbarrierUnit::signalled_only_there(std::uint32_t slot, std::uint32_t flat) const {
  const Cta& c = sim_.cta(slot);
  if (sim_.program().cluster_size() <= 1 || ctas_[slot].barriers[flat].phase() != 0) return "";
  for (std::uint32_t peer : sim_.cluster_of(c).ctas) {
    const CtaBarriers& pc = ctas_[peer];
    const auto [wid, op] = pc.last_signal[flat];
    if (peer == slot || pc.barriers[flat].phase() == 0 || wid == ~0u) continue;
    const Warp& x = sim_.warp(wid);
    const isa::OpDesc& d = sim_.op_of(x, op);
    const Cta& from = sim_.cta(x.cta);
    // Only a tcgen05 commit: one thread of a pair issues it for both CTAs; a barrier each CTA's own warps signal is
    // symmetric, and a peer that ran further is no evidence.
    if (d.kind != isa::OpKind::kUmmaCommit || reaches(d, from.rank, c.rank)) continue;
    return fmt::format(". In CTA {} (rank {}), {} completed {} phase(s), the latest arrival by {}, which signals rank {} only: "
                       "if it should signal this CTA's {} too, it needs a multicast mask that names rank {} (a 2-SM pair's "
                       "commit: multicast=0x3)",
                       sim_.cta(peer).id, sim_.cta(peer).rank, barrier_name(flat), pc.barriers[flat].phase(),
                       op_words(wid, op, true), sim_.cta(peer).rank, barrier_name(flat), c.rank);
  }
  return "";
}

// Arrivals that went to the same element in a peer CTA of the cluster, where no warp waits on it: a release meant for
// this CTA's barrier (a 2-SM pair's epilogue handing the accumulator back to the leader) that lacks `cta=`.
std::string MbarrierUnit::arrivals_astray(std::uint32_t slot, std::uint32_t flat) const {
  const Cta& c = sim_.cta(slot);
  if (sim_.program().cluster_size() <= 1) return "";
  for (std::uint32_t peer : sim_.cluster_of(c).ctas) {
    if (peer == slot) continue;
    const CtaBarriers& pc = ctas_[peer];
    const MBarrier& pb = pc.barriers[flat];
    const std::int64_t came = pb.arrivals_this_phase() + pb.phase() * pb.expected();
    if (came == 0 || pc.passed_waits[flat] > 0 || pc.test_passes[flat] > 0 || !pc.waiters[flat].empty()) continue;
    return fmt::format("CTA {} (rank {})'s own {} has had {} arrival(s) (phase {}, {} pending) and no warp of that CTA "
                       "waits on it: if its warps' arrivals are meant for this CTA's {}, each must name this CTA (`arrive "
                       "... cta={}`, a remote arrive); a local arrive counts on the arriving CTA's own barrier",
                       sim_.cta(peer).id, sim_.cta(peer).rank, barrier_name(flat), came, pb.phase(), pb.pending(),
                       barrier_name(flat), c.rank);
  }
  return "";
}

void MbarrierUnit::add_stats(Stats& s, std::int64_t, std::int64_t) const { s.barriers = stats_; }

}  // namespace smpipe::models
