#include "models/tma/tma_unit.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/gpu/simulator.hpp"
#include "models/memory/hazards.hpp"
#include "models/memory/l2.hpp"
#include "models/memory/proxy_fence.hpp"
#include "models/memory/transfer.hpp"
#include "models/sync/mbarrier_unit.hpp"
#include "sim/free_list.hpp"

namespace smpipe::models {

using isa::Attr;
using isa::OpKind;

TmaUnit::TmaUnit(Simulator& sim)
    : Unit(sim), cause_wait_read_(sim.cause_id("tma.wait read (bulk store smem)")), cause_wait_(sim.cause_id("tma.wait (bulk store)")) {
  const Machine& m = sim.machine();
  free_.assign(static_cast<std::size_t>(m.sm_count), Cycle(0));
  sm_loaders_.assign(static_cast<std::size_t>(m.sm_count), 0);
  gpc_of_ = m.gpc_of_sms();
  const std::size_t gpcs = m.gpc_count();
  for (std::size_t g = 0; g < gpcs; ++g) {
    small_gpc_.push_back(m.one_tpc_gpc(g) ? 1 : 0);
    large_gpcs_ += !m.one_tpc_gpc(g);
  }
  gpc_loaders_.assign(gpcs, 0);
  barriers_ = std::max<std::uint32_t>(1, sim.program().mbarrier_layout.count);
}

void TmaUnit::cta_started(std::uint32_t slot) {
  sim_.reset_warps(warps_, slot);
  const std::size_t end = (static_cast<std::size_t>(slot) + 1) * barriers_;
  if (stage_until_.size() < end) stage_until_.resize(end, Cycle(0)), stage_pending_.resize(end, 0);
  std::fill(stage_until_.begin() + static_cast<std::ptrdiff_t>(end - barriers_), stage_until_.begin() + static_cast<std::ptrdiff_t>(end), Cycle(0));
  std::fill(stage_pending_.begin() + static_cast<std::ptrdiff_t>(end - barriers_), stage_pending_.begin() + static_cast<std::ptrdiff_t>(end), 0);
  if (slot >= cta_loads_.size()) cta_loads_.resize(slot + 1, 0);
}

void TmaUnit::cta_exiting(std::uint32_t slot) {
  if (!cta_loads_[slot]) return;
  cta_loads_[slot] = 0;
  const auto sm = static_cast<std::size_t>(sim_.cta(slot).sm);
  if (--sm_loaders_[sm] == 0) {
    const int g = gpc_of_[sm];
    --gpc_loaders_[g];
    if (!small_gpc_[g]) --large_loaders_;
  }
}

// CTA `slot` on SM `sm` issues a TMA load: from its first, its SM counts among its GPC's loading SMs (until it exits).
void TmaUnit::count_loader(std::uint32_t slot, std::uint32_t sm) {
  if (cta_loads_[slot]) return;
  cta_loads_[slot] = 1;
  const int g = gpc_of_[sm];
  if (sm_loaders_[sm]++ == 0) {
    ++gpc_loaders_[g];
    if (!small_gpc_[g]) ++large_loaders_;
  }
}

// The latency the GPC adds to a TMA load on SM `sm` issued while another load of its stage is in flight (a stage's
// second box): tma_gpc_latency_cycles for each other SM of its GPC that loads (that runs a CTA that has issued a TMA
// load), at most tma_gpc_latency_max_cycles. A GPC of one TPC in the machine file stands for a TPC of a larger GPC
// that clusters cannot use (docs/simulator.md): its SMs count the mean of the larger GPCs' loading SMs.
Cycle TmaUnit::gpc_latency(std::uint32_t sm) const {
  const int g = gpc_of_[sm];
  const Machine& m = sim_.machine();
  const double others = small_gpc_[g] ? std::round(static_cast<double>(large_loaders_) / static_cast<double>(std::max<std::int64_t>(1, large_gpcs_)))
                                      : static_cast<double>(gpc_loaders_[g] - 1);
  return Cycle(std::llround(std::min(m.tma_gpc_latency_cycles * others, m.tma_gpc_latency_max_cycles)));
}

std::span<const isa::OpKind> TmaUnit::accepted() {
  static constexpr OpKind kOps[] = {OpKind::kTmaLoad, OpKind::kTmaStore, OpKind::kTmaCommit, OpKind::kTmaWait, OpKind::kTmaPrefetch};
  return kOps;
}

void TmaUnit::connect() {
  l2_ = &sim_.find<MemoryHierarchy>();
  mbar_ = &sim_.find<MbarrierUnit>();
  proxy_ = &sim_.find<ProxyFenceUnit>();
  hazards_ = &sim_.find<HazardUnit>();
}

// A load into stage i of an smem array that completes on another element of an mbarrier array of the same length (the
// reports of that barrier's stages name it: mbarrier_unit's stage_mismatch_words).
void TmaUnit::note_stage(const OpContext& ctx, std::uint32_t bar, std::uint32_t dst) {
  const isa::Program& p = sim_.program();
  const std::int32_t sdecl = ctx.attr(Attr::kDst).decl, bdecl = ctx.attr(Attr::kBar).decl;
  if (sdecl < 0 || bdecl < 0) return;
  const auto sd = static_cast<std::uint32_t>(sdecl), bd = static_cast<std::uint32_t>(bdecl);
  const isa::SmemDecl& s = p.smems[sd];
  const isa::MbarrierDecl& b = p.mbarriers[bd];
  if (!s.array || !b.array || s.size != b.size || s.size < 2) [[likely]]
    return;
  if (dst - p.smem_layout.base[sd] == bar - p.mbarrier_layout.base[bd]) [[likely]]
    return;
  mbar_->note_stage_mismatch(ctx.cta_slot(), bar, dst, ctx.warp_id, ctx.op);
}

OpResult TmaUnit::execute(OpContext& ctx) {
  const Machine& m = sim_.machine();
  const isa::OpDesc& d = ctx.desc;
  WarpState& w = warps_[ctx.warp_id];
  Cycle now = sim_.now();
  const Observers& obs = sim_.observers();
  std::int64_t cta_id = ctx.cta().id;
  switch (d.kind) {
    case OpKind::kTmaLoad: {
      std::int64_t bytes = ctx.bytes(Attr::kDst);
      if (bytes <= 0 || bytes % 16 != 0)
        ctx.ub("bad bulk copy size", fmt::format("tma.load of {} bytes: must be a positive multiple of 16", bytes));
      std::uint32_t f = ctx.barrier(Attr::kBar);
      std::uint32_t dst = ctx.smem(Attr::kDst);
      note_stage(ctx, f, dst);
      std::int64_t mask = ctx.present(Attr::kMulticast) ? ctx.value(Attr::kMulticast) : 0;
      Simulator::Targets targets = sim_.multicast_targets(ctx.warp_id, ctx.op, ctx.cta_slot(), mask);
      if (mask != 0) {  // the cluster's CTAs it leaves out (reports of a stuck tx-count there)
        const Cluster& cl = sim_.cluster_of(ctx.cta());
        for (std::size_t r = 0; r < cl.ctas.size(); ++r)
          if (!(mask & (std::int64_t{1} << r))) mbar_->note_left_out(cl.ctas[r], f, ctx.warp_id, ctx.op, mask);
      }
      // bar_cta=R (cta_group::2 loads): the data lands here, the completion on cluster rank R's barrier.
      if (ctx.present(Attr::kBarCta)) {
        if (mask != 0) ctx.ub("bar_cta with multicast", "tma.load: give either multicast= or bar_cta=, not both");
        targets.slot[0] = sim_.peer_cta(ctx.warp, ctx.op, ctx.value(Attr::kBarCta));
      }
      // The box passes through the TMA engine of its SM in order, at tma_bytes_per_cycle; a multicast box through the
      // issuer's and every destination's (on the GPU a multicast stage lands in each SM no sooner than the same bytes
      // loaded there unicast: validation/microbench, group multicast, mcast_alone_* and mcast_split_alone_*).
      const int own_sm = ctx.cta().sm;
      int sms[isa::kMaxClusterSize + 1];
      int engines = 0;
      sms[engines++] = own_sm;
      if (mask != 0)
        for (std::uint32_t t : targets) {
          const int sm_t = sim_.cta(t).sm;
          if (std::find(sms, sms + engines, sm_t) == sms + engines) sms[engines++] = sm_t;
        }
      Cycle start = now + Cycle(m.tma_issue_cycles);
      for (int i = 0; i < engines; ++i) start = sim::max(start, free_[sms[i]]);
      std::int64_t occ = transfer_cycles(bytes, m.tma_bytes_per_cycle);
      for (int i = 0; i < engines; ++i) free_[sms[i]] = start + Cycle(occ);
      busy_ += occ * engines;
      sim_.counters().bytes_loaded += bytes;
      // The latency grows with the SMs of this GPC loading at the same time when the load is a stage's second box
      // (measured: validation/microbench, groups gpc and think). The stage: the barrier the load completes on (in the
      // peer CTA with bar_cta=; the issuer's own with or without multicast).
      const auto sm = static_cast<std::uint32_t>(ctx.cta().sm);
      Cycle latency = sim_.jit(m.tma_load_latency_cycles);
      const std::uint32_t stage = (ctx.present(Attr::kBarCta) ? targets.slot[0] : ctx.cta_slot()) * barriers_ + f;
      Cycle gpc{0};
      if (m.tma_gpc_latency_cycles > 0) {
        count_loader(ctx.cta_slot(), sm);
        if (stage_pending_[stage] > 0 || stage_until_[stage] > now) gpc = gpc_latency(sm);
      }
      latency += gpc;
      ++stage_pending_[stage];
      const std::uint32_t token = sim::take_slot(loads_, free_loads_);
      PendingLoad& load = loads_[token];
      load.issued = now;
      load.engine_done = start + Cycle(occ);
      load.latency = latency;
      load.bytes = bytes;
      load.cta_id = cta_id;
      load.stage = stage;
      load.barrier = f;
      load.count = 0;
      for (std::uint32_t t : targets) {
        Signal s = mbar_->signal_to(t, SignalKind::kCompleteTx, f, bytes, ctx.warp_id, ctx.op);
        // The box lands in CTA t (in this CTA with bar_cta=) and completes with t's barrier phase.
        std::uint32_t lands_in = ctx.present(Attr::kBarCta) ? ctx.cta_slot() : t;
        proxy_->check_async_write(ctx, lands_in, dst);
        s.hb = hazards_->async_access(ctx.warp_id, ctx.op, lands_in, dst, true, HazardUnit::Via::kTmaLoad, t, f);
        if (!obs.empty()) s.token = obs.signal_sent(cta_id, ctx.warp.index, s.cta_id, now.v);
        mbar_->on_its_way(s);
        load.signals[load.count++] = s;
      }
      // The signals go out when the memory says the data is through (at once, or when it comes: processor sharing). A
      // box for more than one CTA is a multicast read for the L2 (a mask of one CTA: a plain load, as CuTe issues for a
      // cluster of one along that operand's mode).
      read_l2(*l2_, ctx, Attr::kTensor, start, start + Cycle(occ), bytes, *this, token, mask != 0 && targets.count > 1, gpc);
      // A multicast load holds its thread longer, per destination CTA beyond the first (measured in the multicast
      // rings: validation/microbench, group multicast, mcast_split_*).
      return ctx.busy(m.tma_issue_cycles + (mask != 0 ? (static_cast<std::int64_t>(targets.count) - 1) * m.tma_multicast_issue_cycles : 0));
    }
    case OpKind::kTmaStore: {
      std::int64_t bytes = ctx.bytes(Attr::kSrc);
      if (bytes <= 0 || bytes % 16 != 0)
        ctx.ub("bad bulk copy size", fmt::format("tma.store of {} bytes: must be a positive multiple of 16", bytes));
      proxy_->check_async_read(ctx, Attr::kSrc);
      w.reads.add(hazards_->async_access(ctx.warp_id, ctx.op, ctx.cta_slot(), ctx.smem(Attr::kSrc), false, HazardUnit::Via::kTmaStore));
      Cycle& engine = free_[ctx.cta().sm];
      Cycle start = sim::max(now + Cycle(m.tma_issue_cycles), engine);
      std::int64_t occ = transfer_cycles(bytes, m.tma_store_bytes_per_cycle);
      engine = start + Cycle(occ);
      busy_ += occ;
      // The engine reads the box out of smem as fast as the L2 takes it: the read is done no sooner than the L2
      // has accepted the box (its queue, and the write-back of dirty blocks it evicts).
      Cycle read = start + Cycle(occ) + sim_.jit(m.tma_store_read_cycles);
      read = sim::max(read, through_l2(*l2_, ctx, Attr::kTensor, start, start + Cycle(occ), bytes, true));
      Cycle write = read + sim_.jit(m.tma_store_latency_cycles);
      w.open_read = sim::max(w.open_read, read);
      w.open_write = sim::max(w.open_write, write);
      ++w.stores;
      w.last_store_op = ctx.op;
      w.last_store_at = now.v;
      sim_.counters().bytes_stored += bytes;
      if (!obs.empty() && obs.wants(cta_id)) {
        std::string label = fmt::format("TMA store {} B", bytes);
        obs.each(cta_id, [&](Observer& o) { o.async_work(cta_id, label, "tma", now.v, write.v); });
      }
      return ctx.busy(m.tma_issue_cycles);
    }
    case OpKind::kTmaCommit:
      // Groups whose writes are complete can no longer be waited on: drop them (bounded memory).
      std::erase_if(w.groups, [&](const auto& g) { return g.second <= now; });
      w.groups.emplace_back(sim::max(w.open_read, now), sim::max(w.open_write, now));
      w.open_read = w.open_write = Cycle(0);
      w.reads.commit();
      w.committed.push_back(w.stores);  // (every commit is a group, an empty one too, as tma.wait counts them)
      if (w.committed.size() > 64) {  // (bounded: the oldest counts as covered)
        w.settled = std::max(w.settled, w.committed.front());
        w.committed.erase(w.committed.begin());
      }
      return ctx.busy(m.op_issue_cycles);
    case OpKind::kTmaWait: {
      std::int64_t n = ctx.wait_count();
      bool read = ctx.value(Attr::kRead) != 0;
      Cycle until = now;
      std::int64_t older = static_cast<std::int64_t>(w.groups.size()) - n;
      for (std::int64_t i = 0; i < older; ++i) until = sim::max(until, read ? w.groups[i].first : w.groups[i].second);
      if (!read && older > 0) w.groups.erase(w.groups.begin(), w.groups.begin() + older);
      if (const std::int64_t covered = static_cast<std::int64_t>(w.committed.size()) - n;
          !read && covered > 0) {
        w.settled = std::max(w.settled, w.committed[static_cast<std::size_t>(covered - 1)]);
        w.committed.erase(w.committed.begin(), w.committed.begin() + covered);
      }
      // Whatever the timing, the stores of every group but the newest n have now read their source.
      w.reads.complete_older(n, [&](HazardUnit::Part p) { hazards_->retire(p, ctx.warp_id); });
      if (until <= now) return ctx.busy(m.op_issue_cycles);
      ctx.block(nullptr, 0, 0, read ? cause_wait_read_ : cause_wait_);
      sim_.wake_at(ctx.warp_id, until);
      return ctx.blocked();
    }
    case OpKind::kTmaPrefetch: return ctx.busy(m.tma_issue_cycles);
    default: return Unit::execute(ctx);
  }
}

void TmaUnit::landed(std::uint32_t token, Cycle through) {
  const PendingLoad& load = loads_[token];
  const Cycle done = sim::max(load.engine_done, through) + load.latency;
  stage_until_[load.stage] = sim::max(stage_until_[load.stage], done);
  --stage_pending_[load.stage];
  for (std::uint32_t i = 0; i < load.count; ++i) mbar_->send(done, load.signals[i]);
  const Observers& obs = sim_.observers();
  if (!obs.empty() && obs.wants(load.cta_id)) {
    std::string label = fmt::format("TMA load {} B -> {}", load.bytes, mbar_->barrier_name(load.barrier));
    obs.each(load.cta_id, [&](Observer& o) { o.async_work(load.cta_id, label, "tma", load.issued.v, done.v); });
  }
  free_loads_.push_back(token);
}

void TmaUnit::add_stats(Stats& s, std::int64_t cycles, std::int64_t sms_used) const {
  std::int64_t late = 0;
  for (const Cycle& f : free_) late += busy_past_end(f.v, cycles);
  s.units.push_back(per_sm_unit("TMA engine", std::max<std::int64_t>(0, busy_ - late), cycles, sms_used));
}

}  // namespace smpipe::models
