#include "models/sync/cluster_barrier.hpp"

#include <fmt/format.h>

#include "models/gpu/simulator.hpp"
#include "models/memory/hazards.hpp"
#include "models/sync/mbarrier_unit.hpp"

namespace smpipe::models {

ClusterBarrierUnit::ClusterBarrierUnit(Simulator& sim) : Unit(sim), cause_(sim.cause_id("cluster.sync")) {}

std::span<const isa::OpKind> ClusterBarrierUnit::accepted() {
  static constexpr isa::OpKind kOps[] = {isa::OpKind::kClusterSync};
  return kOps;
}

void ClusterBarrierUnit::connect() {
  mbar_ = &sim_.find<MbarrierUnit>();
  hazards_ = &sim_.find<HazardUnit>();
}

void ClusterBarrierUnit::cta_started(std::uint32_t slot) {
  const Cta& c = sim_.cta(slot);
  if (c.rank != 0) return;  // one state per cluster, reset by its first CTA
  if (c.cluster_slot >= clusters_.size()) clusters_.resize(c.cluster_slot + 1);
  clusters_[c.cluster_slot].arrived = 0;
  clusters_[c.cluster_slot].waiters.clear();
}

OpResult ClusterBarrierUnit::execute(OpContext& ctx) {
  std::uint32_t cs = ctx.cta().cluster_slot;
  ClusterState& cl = clusters_[cs];
  cl.arrived += 1;
  cl.waiters.push_back(ctx.warp_id);
  hazards_->cluster_arrive(ctx.warp_id);
  ctx.block(this, 0, 0, cause_);
  check_release(cs);
  return ctx.blocked();
}

void ClusterBarrierUnit::check_release(std::uint32_t cs) {
  ClusterState& cl = clusters_[cs];
  if (cl.waiters.empty() || cl.arrived < sim_.cluster(cs).live_warps) return;
  mbar_->cluster_synced(cs);
  hazards_->cluster_release(cs, cl.waiters);
  Cycle at = sim_.now() + sim_.jit(sim_.machine().cluster_sync_cycles);
  sim_.wake_all(cl.waiters, at);
  cl.waiters.clear();
  cl.arrived = 0;
}

void ClusterBarrierUnit::warp_exited(std::uint32_t warp_id) { check_release(sim_.cta(sim_.warp(warp_id).cta).cluster_slot); }

std::string ClusterBarrierUnit::describe_wait(const Warp& w) const {
  const Cta& c = sim_.cta(w.cta);
  return fmt::format("cluster.sync: {} of {} live warps of the cluster arrived", clusters_[c.cluster_slot].arrived,
                     sim_.cluster_of(c).live_warps);
}

void ClusterBarrierUnit::explain_wait(const Warp& w, WaitExplanation& e) const {
  const Cta& c = sim_.cta(w.cta);
  const auto& p = sim_.program();
  // The live warps that are not at the barrier: those whose code has no cluster.sync at all are the likeliest cause.
  std::vector<std::string> never, elsewhere;
  for (std::uint32_t peer : sim_.cluster_of(c).ctas)
    for (int i = 0; i < p.warps; ++i) {
      std::uint32_t wid = sim_.cta(peer).first_warp + i;
      const Warp& x = sim_.warp(wid);
      if (x.wait_unit == index() && x.state == WarpState::kBlocked) continue;
      e.waits_on(wid);
      if (x.role < 0 || x.state == WarpState::kDone) continue;
      bool syncs = false;
      for (const auto& d : p.roles[static_cast<std::size_t>(x.role)].ops) syncs = syncs || d.kind == isa::OpKind::kClusterSync;
      std::vector<std::string>& list = syncs ? elsewhere : never;
      if (list.size() >= 4) continue;
      std::string who = fmt::format("CTA {} warp {} ({})", sim_.cta(peer).id, x.index, p.roles[static_cast<std::size_t>(x.role)].name);
      list.push_back(x.state == WarpState::kBlocked ? fmt::format("{}, waiting for {}", who, sim_.describe_wait(x)) : who);
    }
  std::string why;
  if (!never.empty())
    why = fmt::format(": live warps whose code has no cluster.sync: {}. barrier.cluster has no thread count: every warp of "
                      "every CTA of the cluster that has not exited must arrive, so a cluster.sync inside one role's branch (a "
                      "warp-specialised partition) waits for the other roles forever; put it where every warp runs it (before "
                      "the roles split)",
                      fmt::join(never, "; "));
  else if (!elsewhere.empty())
    why = fmt::format(": live warps not at it: {}", fmt::join(elsewhere, "; "));
  e.cause(fmt::format("cluster.sync in cluster {}: not every live warp of the cluster reaches it{}", c.cluster, why));
}

}  // namespace smpipe::models
