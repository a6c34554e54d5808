#include "models/clc/clc_unit.hpp"

#include <fmt/format.h>

#include "models/gpu/simulator.hpp"
#include "models/memory/hazards.hpp"
#include "models/sync/mbarrier_unit.hpp"

namespace smpipe::models {

using isa::Attr;
using isa::OpKind;

std::span<const isa::OpKind> ClcUnit::accepted() {
  static constexpr OpKind kOps[] = {OpKind::kClcTryCancel, OpKind::kClcQuery};
  return kOps;
}

std::string ClcUnit::fits(const isa::OpDesc& op, const Machine& m) {
  if (m.clc_latency_cycles == 0)
    return fmt::format("'{}' needs cluster launch control (sm_100), which {} does not have", op.text, m.name);
  return "";
}

void ClcUnit::connect() {
  mbar_ = &sim_.find<MbarrierUnit>();
  hazards_ = &sim_.find<HazardUnit>();
}

void ClcUnit::cta_started(std::uint32_t slot) {
  if (slot >= ctas_.size()) ctas_.resize(slot + 1);
  ctas_[slot] = CtaState{};
}

OpResult ClcUnit::execute(OpContext& ctx) {
  const Machine& m = sim_.machine();
  CtaState& cs = ctas_[ctx.cta_slot()];
  switch (ctx.desc.kind) {
    case OpKind::kClcTryCancel: {
      if (cs.failure_warp >= 0)
        ctx.ub("try_cancel after an observed failure",
               fmt::format("clusterlaunchcontrol.try_cancel issued after warp {} of this CTA observed a response saying the "
                           "grid is exhausted (query -1): undefined for the whole CTA, not only for the warp that saw it "
                           "(PTX 9.7.13.17); stop the scheduler loop of every warp once a failed response is seen",
                           cs.failure_warp));
      std::uint32_t f = ctx.barrier(Attr::kBar);
      // The cancelled cluster is the next one the hardware would launch; the answer is its first CTA (rank 0).
      std::int64_t first = sim_.clusters_left() ? sim_.cta_id_of(sim_.take_cluster(), 0) : -1;
      std::int64_t all = (std::int64_t{1} << sim_.cluster_of(ctx.cta()).ctas.size()) - 1;
      Simulator::Targets targets = sim_.multicast_targets(ctx.warp_id, ctx.op, ctx.cta_slot(), ctx.value(Attr::kMulticast) ? all : 0);
      Cycle at = sim_.now() + sim_.jit(m.clc_latency_cycles);
      for (std::uint32_t t : targets) {
        if (ctx.value(Attr::kMulticast)) note_issuer(t, ctx);
        Response r{mbar_->signal_to(t, SignalKind::kCompleteTx, f, 16, ctx.warp_id, ctx.op), first};
        mbar_->on_its_way(r.signal);
        // The response is written into CTA t's slot and completes with its barrier's phase.
        r.signal.hb = hazards_->async_access(ctx.warp_id, ctx.op, t, hazards_->clc_slot(f), true, HazardUnit::Via::kClcResponse, t, f);
        sim_.schedule(*this, std::max(at, sim_.now()), sim::Priority::kCompletion, in_flight_.put(r));
      }
      return ctx.busy(m.op_issue_cycles);
    }
    case OpKind::kClcQuery: {
      std::int64_t value = 0;
      bool found = false;
      if (ctx.present(Attr::kBar)) {
        std::uint32_t f = ctx.barrier(Attr::kBar);
        hazards_->generic(ctx, hazards_->clc_slot(f), false);
        for (const auto& [bf, v] : cs.responses)
          if (bf == f) value = v, found = true;
      } else if (cs.any) {
        value = cs.latest;
        found = true;
      }
      if (!found) {
        // A wait on the response's barrier that passed at once (parity 1 on a fresh barrier) is the cause, if there was one.
        const auto [bf, bop] = mbar_->passed_before_phase0(ctx.warp_id);
        const bool skipped = bf != ~0u && ctx.present(Attr::kBar) && bf == ctx.barrier(Attr::kBar);
        ctx.ub("query before a response",
               skipped ? "clc.query reads a try_cancel response that has not landed: " + mbar_->before_phase0_words(ctx.warp_id, bf, bop)
                       : "clc.query reads a try_cancel response that has not landed (wait on its barrier first)");
      }
      if (value < 0 && cs.failure_warp < 0) cs.failure_warp = ctx.warp.index;
      ctx.warp.slots[ctx.desc.result_slots[0]] = value;
      return ctx.busy(m.op_issue_cycles);
    }
    default: return Unit::execute(ctx);
  }
}

// The response lands: written to the CTA's shared memory, then complete_tx(16) on its barrier.
void ClcUnit::complete(std::uint32_t target, std::uint64_t) {
  Response r = in_flight_.take(target);
  const Signal& s = r.signal;
  mbar_->check_alive(s);
  CtaState& cs = ctas_[s.cta];
  bool found = false;
  for (auto& [f, v] : cs.responses)
    if (f == s.barrier) v = r.first, found = true;
  if (!found) cs.responses.emplace_back(s.barrier, r.first);
  cs.latest = r.first;
  cs.any = true;
  mbar_->land(s);
}

// Each multicast response reaches every CTA of the cluster with its own complete_tx: when a second CTA issues one
// too, every CTA's barrier gets two 16-byte responses where a phase expects one. The hazard checker's report of
// the race that follows says so (it names the cause instead of a short expect_tx).
void ClcUnit::note_issuer(std::uint32_t target, const OpContext& ctx) {
  CtaState& t = ctas_[target];
  const std::int64_t me = ctx.cta().id;
  if (t.multicast_from < 0) t.multicast_from = me;
  if (t.multicast_from == me || t.told) return;
  t.told = true;
  hazards_->response_note(
      target, fmt::format("CTA {} receives the multicast try_cancel responses of both CTA {} and CTA {} (line {}): a multicast "
                          "response lands in every CTA of the cluster with its own complete_tx, so with two issuers each CTA's "
                          "barrier gets two 16-byte responses where a phase expects one, and the second counts toward the next "
                          "phase. Only one CTA of the cluster issues the multicast try_cancel (rank 0, as CUTLASS's scheduler "
                          "does); every CTA arms its own barrier with `arrive.expect_tx ... tx=16`",
                          sim_.cta(target).id, t.multicast_from, me, ctx.desc.loc.line));
}

}  // namespace smpipe::models
