#include "models/tmem/tmem_unit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "models/gpu/simulator.hpp"
#include "models/memory/hazards.hpp"
#include "models/memory/proxy_fence.hpp"
#include "models/memory/transfer.hpp"
#include "models/tensor/tensor_unit.hpp"

namespace smpipe::models {

using isa::Attr;
using isa::OpKind;

TmemUnit::TmemUnit(Simulator& sim)
    : Unit(sim),
      cause_alloc_(sim.cause_id("tmem.alloc")),
      cause_wait_(sim.cause_id("tmem.wait")),
      cause_peer_(sim.cause_id("tcgen05 cta_group::2 peer")) {
  sms_.resize(static_cast<std::size_t>(sim.machine().sm_count));
}

std::span<const isa::OpKind> TmemUnit::accepted() {
  static constexpr OpKind kOps[] = {OpKind::kTmemAlloc, OpKind::kTmemDealloc, OpKind::kTmemRelinquish, OpKind::kTmemLd,
                                    OpKind::kTmemSt,    OpKind::kTmemWait,    OpKind::kTmemCp};
  return kOps;
}

std::string TmemUnit::fits(const isa::OpDesc& op, const Machine& m) {
  if (m.tmem_columns == 0)
    return fmt::format("'{}' needs tensor memory (tcgen05, sm_100), which {} does not have; try --gpu b200", op.text, m.name);
  return "";
}

void TmemUnit::connect() {
  proxy_ = &sim_.find<ProxyFenceUnit>();
  tensor_ = &sim_.find<TensorUnit>();
  hazards_ = &sim_.find<HazardUnit>();
  tensor_->check_tmem_columns = [this](const OpContext& ctx, std::uint32_t slot, std::int64_t col, std::int64_t n) {
    check_allocated(ctx, slot, col, n);
  };
}

// PTX ISA (Tensor Memory Allocation and Management): tcgen05 ops may access only tensor memory that the CTA
// allocated and has not freed; anything else is undefined. Allocations are whole aligned blocks: walk them.
void TmemUnit::check_allocated(const OpContext& ctx, std::uint32_t slot, std::int64_t col, std::int64_t n) const {
  const std::vector<Allocation>& allocs = ctas_[slot].allocs;
  for (std::int64_t c = col; c < col + n;) {
    auto it = std::find_if(allocs.begin(), allocs.end(), [&](const Allocation& a) { return a.col <= c && c < a.col + a.cols; });
    if (it != allocs.end()) {
      c = it->col + it->cols;
      continue;
    }
    std::string held;
    for (const Allocation& a : allocs)
      held += fmt::format("{}columns {}..{} (allocated at line {})", held.empty() ? "" : ", ", a.col, a.col + a.cols - 1, a.loc.line);
    const char* who = slot == ctx.cta_slot() ? "this CTA" : "the peer CTA";
    ctx.ub("access to unallocated TMEM",
           fmt::format("'{}' accesses tensor-memory columns {}..{} of {}, and column {} is not allocated: {} {}. A tcgen05 "
                       "op may access only columns its CTA allocated with tmem.alloc and has not freed with tmem.dealloc "
                       "(the column is the low 16 bits of the address; an MMA's accumulator spans N columns)",
                       ctx.desc.text, col, col + n - 1, who, c, who,
                       held.empty() ? "holds no tensor memory now (none allocated yet, or all freed)" : "holds " + held));
  }
}

void TmemUnit::check_relinquish(OpContext& ctx, std::uint32_t slot, std::uint32_t peer) const {
  for (const CtaState::AllocPoint& a : ctas_[slot].alloc_points) {
    if (a.warp == ctx.warp_id || a.warp == peer) continue;
    if (hazards_->sees(ctx.warp_id, a.warp, a.clock) || (peer != ~0u && hazards_->sees(peer, a.warp, a.clock))) continue;
    const Warp& aw = sim_.warp(a.warp);
    ctx.ub("relinquish not ordered after an alloc",
           fmt::format("tmem.relinquish is not ordered after warp {}'s '{}' (line {}): nothing orders them (an arrive of warp "
                       "{} after its alloc that this warp waits on, or a bar.sync both use), so on another schedule the "
                       "relinquish comes first and that alloc is illegal (alloc after relinquish)",
                       aw.index, sim_.op_of(aw, a.op).text, sim_.op_of(aw, a.op).loc.line, aw.index));
  }
}

void TmemUnit::cta_started(std::uint32_t slot) {
  if (slot >= ctas_.size()) ctas_.resize(slot + 1);
  ctas_[slot].allocs.clear();
  ctas_[slot].relinquished = false;
  ctas_[slot].alloc_points.clear();
  sim_.reset_warps(warps_, slot);
  if (slot >= rendezvous_.size()) rendezvous_.resize(slot + 1);
  rendezvous_[slot] = Rendezvous{};
}

void TmemUnit::cta_exiting(std::uint32_t slot) {
  const CtaState& c = ctas_[slot];
  if (c.allocs.empty()) return;
  const Allocation& a = c.allocs.front();
  std::int64_t id = sim_.cta(slot).id;
  Diagnosis d;
  d.title = "TMEM leak";
  d.message = fmt::format("CTA {} exits holding {} tensor-memory columns (allocated at {}): every tcgen05.alloc must be "
                          "freed with tcgen05.dealloc before the CTA exits",
                          id, a.cols, a.loc.str());
  d.cycle = sim_.now().v;
  d.cta = id;
  d.loc = a.loc;
  sim_.diagnose(d);
}

OpResult TmemUnit::execute(OpContext& ctx) {
  const Machine& m = sim_.machine();
  const isa::OpDesc& d = ctx.desc;
  Cta& cta = ctx.cta();
  CtaState& cs = ctas_[ctx.cta_slot()];
  WarpState& ws = warps_[ctx.warp_id];
  Cycle now = sim_.now();
  const isa::AttrSlot* group = d.slot(Attr::kCtaGroup);
  if (group != nullptr && ctx.value(Attr::kCtaGroup) == 2) return pair_op(ctx);
  switch (d.kind) {
    case OpKind::kTmemAlloc: {
      std::int64_t cols = ctx.value(Attr::kCols);
      if (cols < 32 || cols > 512 || (cols & (cols - 1)) != 0)
        ctx.ub("bad TMEM column count", fmt::format("tmem.alloc cols={}: must be a power of 2 in 32..512", cols));
      if (cs.relinquished) ctx.ub("alloc after relinquish", after_relinquish(ctx.cta_slot(), ctx));
      cs.alloc_points.push_back({ctx.warp_id, ctx.op, hazards_->own_clock(ctx.warp_id)});
      sms_[cta.sm].waiters.push_back(ctx.warp_id);
      ctx.block(this, static_cast<std::uint32_t>(cta.sm), cols, cause_alloc_);
      requester_ = ctx.warp_id;
      try_grant(cta.sm);
      requester_ = ~0u;
      if (ctx.warp.state == models::WarpState::kReady) return ctx.busy(m.tmem_alloc_cycles);  // granted at once
      return ctx.blocked();
    }
    case OpKind::kTmemDealloc:
      dealloc(ctx, ctx.cta_slot(), ctx.value(Attr::kAddr) & 0xFFFF, ctx.value(Attr::kCols));
      try_grant(cta.sm);
      return ctx.busy(m.tmem_alloc_cycles);
    case OpKind::kTmemRelinquish:
      check_relinquish(ctx, ctx.cta_slot());
      relinquish(ctx.cta_slot(), ctx.warp_id, ctx.op);
      return ctx.busy(m.op_issue_cycles);
    case OpKind::kTmemLd:
    case OpKind::kTmemSt: {
      bool ld = d.kind == OpKind::kTmemLd;
      Cycle& done = ld ? ws.ld_done : ws.st_done;
      done = sim::max(done, now) + Cycle(ceil_div(m.tmem_ld_cycles * d.bytes, 4096));
      if (ctx.present(Attr::kTmem)) {
        // Columns: 32 bits per register per thread; a 16-lane shape spreads a warp's registers over twice the columns.
        std::int64_t cols = d.bytes / (isa::kWarpSize * 4) * (d.shape[0] == '1' ? 2 : 1);
        check_allocated(ctx, ctx.cta_slot(), ctx.value(Attr::kTmem) & 0xffff, cols);
        auto [first, end] = hazards_->tmem_buffers(ctx.value(Attr::kTmem) & 0xffff, cols);
        for (std::uint32_t b = first; b < end; ++b)
          (ld ? ws.ld_parts : ws.st_parts)
              .push_back(hazards_->async_access(ctx.warp_id, ctx.op, ctx.cta_slot(), b, !ld,
                                                ld ? HazardUnit::Via::kTmemLd : HazardUnit::Via::kTmemSt));
      }
      return ctx.busy(m.op_issue_cycles);
    }
    case OpKind::kTmemWait: {
      std::vector<std::uint64_t>& parts = ctx.value(Attr::kLd) ? ws.ld_parts : ws.st_parts;
      for (std::uint64_t p : parts) hazards_->retire(p, ctx.warp_id);
      parts.clear();
      Cycle until = ctx.value(Attr::kLd) ? ws.ld_done : ws.st_done;
      if (until <= now) return ctx.busy(m.op_issue_cycles);
      ctx.block(nullptr, 0, 0, cause_wait_);
      sim_.wake_at(ctx.warp_id, until);
      return ctx.blocked();
    }
    case OpKind::kTmemCp: {
      proxy_->check_async_read(ctx, Attr::kSrc);
      TensorUnit::Tcgen05Thread& t = tensor_->tcgen05(ctx.warp_id);
      if (std::uint64_t part = hazards_->tcgen05_read(ctx.warp_id, ctx.op, ctx.cta_slot(), HazardUnit::named(ctx, Attr::kSrc),
                                                      HazardUnit::Via::kTmemCp))
        t.reads.emplace_back(ctx.cta_slot(), part);
      Cycle start = sim::max(now, t.cp_done);
      t.cp_done = start + Cycle(ceil_div(m.tmem_cp_cycles * d.bytes, 4096));
      t.done = sim::max(t.done, t.cp_done);
      return ctx.busy(m.op_issue_cycles);
    }
    default: return Unit::execute(ctx);
  }
}

void TmemUnit::dealloc(OpContext& ctx, std::uint32_t slot, std::int64_t addr, std::int64_t cols, std::uint32_t peer_warp) {
  CtaState& cs = ctas_[slot];
  auto it = std::find_if(cs.allocs.begin(), cs.allocs.end(), [&](const Allocation& a) { return a.col == addr; });
  if (it == cs.allocs.end() || it->cols != cols)
    ctx.ub("dealloc of unallocated TMEM",
           fmt::format("tmem.dealloc of {} columns at column {}, which {} did not allocate{}", cols, addr,
                       slot == ctx.cta_slot() ? "this CTA" : "the peer CTA",
                       it == cs.allocs.end() ? "" : fmt::format(" (it allocated {} columns there)", it->cols)));
  // The columns must be idle for this warp: an MMA still writing them, or a tcgen05.ld/st not yet waited for, would
  // touch columns the CTA no longer holds (the access-to-unallocated-TMEM rule, at the dealloc).
  auto [first, end] = hazards_->tmem_buffers(addr, cols);
  const std::uint32_t both[2] = {ctx.warp_id, peer_warp};
  if (std::string busy = hazards_->tmem_in_use({both, peer_warp == ~0u ? 1u : 2u}, slot, first, end); !busy.empty())
    ctx.ub("dealloc of TMEM still in use",
           fmt::format("tmem.dealloc of columns {}..{} while {}", addr, addr + cols - 1, busy));
  std::int64_t chunks = cols / 32, start = addr / 32;
  sms_[sim_.cta(slot).sm].used &= static_cast<std::uint16_t>(~(((1u << chunks) - 1) << start));
  cs.allocs.erase(it);
}

TmemUnit::Rendezvous& TmemUnit::rendezvous(std::uint32_t slot, std::uint32_t peer) {
  return rendezvous_[sim_.cta(slot).rank % 2 == 0 ? slot : peer];
}

// A cta_group::2 alloc, dealloc or relinquish: the first warp of the pair waits for the second; then the
// operation is done for both CTAs.
OpResult TmemUnit::pair_op(OpContext& ctx) {
  const Machine& m = sim_.machine();
  const isa::OpDesc& d = ctx.desc;
  std::uint32_t peer = ctx.pair_peer();
  Rendezvous& rv = rendezvous(ctx.cta_slot(), peer);
  if (d.kind == OpKind::kTmemAlloc) {
    std::int64_t cols = ctx.value(Attr::kCols);
    if (cols < 32 || cols > 512 || (cols & (cols - 1)) != 0)
      ctx.ub("bad TMEM column count", fmt::format("tmem.alloc cols={}: must be a power of 2 in 32..512", cols));
    if (ctas_[ctx.cta_slot()].relinquished) ctx.ub("alloc after relinquish", after_relinquish(ctx.cta_slot(), ctx));
  }
  if (rv.warp == ~0u || sim_.warp(rv.warp).cta == ctx.cta_slot()) {
    if (rv.warp != ~0u)
      ctx.ub("cta_group::2 op issued twice by one CTA",
             fmt::format("'{}': warp {} of this CTA already waits in a cta_group::2 tcgen05 op for the peer CTA; one warp of "
                         "each CTA of the pair performs it",
                         d.text, sim_.warp(rv.warp).index));
    std::int64_t cols = d.kind == OpKind::kTmemRelinquish ? 0 : ctx.value(Attr::kCols);
    std::int64_t addr = d.kind == OpKind::kTmemDealloc ? ctx.value(Attr::kAddr) & 0xFFFF : 0;
    rv = Rendezvous{ctx.warp_id, d.kind, addr, cols};
    ctx.block(this, kPeerWait | peer, cols, cause_peer_);
    return ctx.blocked();
  }
  std::uint32_t first = rv.warp;
  Warp& fw = sim_.warp(first);
  const isa::OpDesc& fd = sim_.op_of(fw, fw.wait_op);
  std::int64_t cols = d.kind == OpKind::kTmemRelinquish ? 0 : ctx.value(Attr::kCols);
  std::int64_t addr = d.kind == OpKind::kTmemDealloc ? ctx.value(Attr::kAddr) & 0xFFFF : 0;
  if (rv.kind != d.kind || rv.cols != cols || rv.addr != addr)
    ctx.ub("cta_group::2 peers disagree",
           fmt::format("'{}' meets '{}' of the peer CTA (warp {}, line {}): the two warps of a cta_group::2 tcgen05 op must "
                       "perform the same operation",
                       d.text, fd.text, fw.index, fd.loc.line));
  rv = Rendezvous{};
  switch (d.kind) {
    case OpKind::kTmemAlloc: {
      // Both warps now wait for the columns.
      fw.wait_obj = kPairWait | static_cast<std::uint32_t>(sim_.cta(fw.cta).sm);
      fw.wait_cause = cause_alloc_;
      pair_waiters_.push_back(PairRequest{{first, ctx.warp_id}, ctx.value(Attr::kCols)});
      ctx.block(this, kPairWait | static_cast<std::uint32_t>(ctx.cta().sm), ctx.value(Attr::kCols), cause_alloc_);
      requester_ = ctx.warp_id;
      try_grant_pairs();
      requester_ = ~0u;
      if (ctx.warp.state == models::WarpState::kReady) return ctx.busy(m.tmem_alloc_cycles);
      return ctx.blocked();
    }
    case OpKind::kTmemDealloc: {
      std::int64_t cols = ctx.value(Attr::kCols);
      dealloc(ctx, ctx.cta_slot(), ctx.value(Attr::kAddr) & 0xFFFF, cols, first);
      dealloc(ctx, fw.cta, ctx.value(Attr::kAddr) & 0xFFFF, cols, first);
      sim_.wake_at(first, sim_.now() + Cycle(m.tmem_alloc_cycles));
      try_grant_pairs();
      return ctx.busy(m.tmem_alloc_cycles);
    }
    default:  // relinquish
      check_relinquish(ctx, ctx.cta_slot(), first);
      check_relinquish(ctx, fw.cta, first);
      relinquish(ctx.cta_slot(), ctx.warp_id, ctx.op);
      relinquish(fw.cta, first, fw.wait_op);
      sim_.wake_at(first, sim_.now() + Cycle(m.op_issue_cycles));
      return ctx.busy(m.op_issue_cycles);
  }
}

// Pair allocations, in FIFO order per SM: the same aligned columns must be free in both CTAs' SMs; a
// request waits behind earlier ones on either of its SMs, not behind requests on other SMs.
void TmemUnit::try_grant_pairs() {
  const Machine& m = sim_.machine();
  std::vector<int> blocked;  // SMs with an earlier request still waiting
  for (std::size_t i = 0; i < pair_waiters_.size();) {
    const PairRequest& req = pair_waiters_[i];
    std::int64_t chunks = req.cols / 32, total = m.tmem_columns / 32, found = -1;
    int sm[2] = {sim_.cta(sim_.warp(req.warps[0]).cta).sm, sim_.cta(sim_.warp(req.warps[1]).cta).sm};
    bool behind = std::find(blocked.begin(), blocked.end(), sm[0]) != blocked.end() ||
                  std::find(blocked.begin(), blocked.end(), sm[1]) != blocked.end();
    for (std::int64_t start = 0; !behind && start + chunks <= total && found < 0; start += chunks) {
      auto mask = static_cast<std::uint16_t>(((1u << chunks) - 1) << start);
      if ((sms_[sm[0]].used & mask) == 0 && (sms_[sm[1]].used & mask) == 0) found = start;
    }
    if (found < 0) {
      blocked.push_back(sm[0]);
      blocked.push_back(sm[1]);
      ++i;
      continue;
    }
    PairRequest r = req;
    pair_waiters_.erase(pair_waiters_.begin() + static_cast<std::ptrdiff_t>(i));
    for (int i = 0; i < 2; ++i) {
      sms_[sm[i]].used |= static_cast<std::uint16_t>(((1u << chunks) - 1) << found);
      Warp& w = sim_.warp(r.warps[i]);
      const isa::OpDesc& d = sim_.op_of(w, w.wait_op);
      ctas_[w.cta].allocs.push_back(Allocation{found * 32, r.cols, d.loc});
      if (!d.result_slots.empty()) w.slots[d.result_slots[0]] = found * 32;
      if (r.warps[i] == requester_) {
        w.state = models::WarpState::kReady;
        w.wait_unit = kNoUnit;
      } else {
        sim_.wake_at(r.warps[i], sim_.now() + Cycle(m.tmem_alloc_cycles));
      }
    }
  }
}

void TmemUnit::try_grant(int sm_index) {
  SmState& sm = sms_[sm_index];
  const Machine& m = sim_.machine();
  while (!sm.waiters.empty()) {
    std::uint32_t wid = sm.waiters.front();
    Warp& w = sim_.warp(wid);
    std::int64_t chunks = w.wait_value / 32;
    std::int64_t total = m.tmem_columns / 32;
    std::int64_t found = -1;
    for (std::int64_t start = 0; start + chunks <= total; start += chunks) {  // aligned to its size
      std::uint16_t mask = static_cast<std::uint16_t>(((1u << chunks) - 1) << start);
      if ((sm.used & mask) == 0) {
        found = start;
        break;
      }
    }
    if (found < 0) return;  // FIFO: later requests wait behind the first
    sm.used |= static_cast<std::uint16_t>(((1u << chunks) - 1) << found);
    sm.waiters.erase(sm.waiters.begin());
    const isa::OpDesc& d = sim_.op_of(w, w.wait_op);
    ctas_[w.cta].allocs.push_back(Allocation{found * 32, w.wait_value, d.loc});
    if (!d.result_slots.empty()) w.slots[d.result_slots[0]] = found * 32;  // address: lane 0 << 16 | column
    if (wid == requester_) {
      // Granted to the warp asking right now: no wait; execute charges the allocation as busy time.
      w.state = models::WarpState::kReady;
      w.wait_unit = kNoUnit;
      continue;
    }
    sim_.wake_at(wid, sim_.now() + Cycle(m.tmem_alloc_cycles));
  }
}

std::string TmemUnit::describe_wait(const Warp& w) const {
  if (w.wait_obj & kPeerWait) {
    const Cta& peer = sim_.cta(w.wait_obj & ~kPeerWait);
    return fmt::format("'{}' (cta_group::2) waits for a warp of the peer CTA {} to perform it too",
                       sim_.op_of(w, w.wait_op).text, peer.id);
  }
  if (w.wait_obj & kPairWait)
    return fmt::format("tmem.alloc of {} columns (cta_group::2): the same columns must be free on both SMs of the pair (SM {})",
                       w.wait_value, w.wait_obj & ~kPairWait);
  const SmState& sm = sms_[w.wait_obj];
  int used = __builtin_popcount(sm.used) * 32;
  return fmt::format("tmem.alloc of {} columns on SM {}: {} of {} columns are held", w.wait_value, w.wait_obj, used,
                     sim_.machine().tmem_columns);
}

void TmemUnit::explain_wait(const Warp& w, WaitExplanation& e) const {
  if (w.wait_obj & kPeerWait) {
    std::uint32_t slot = w.wait_obj & ~kPeerWait;
    const Cta& peer = sim_.cta(slot);
    for (int i = 0; i < sim_.program().warps; ++i) e.waits_on(peer.first_warp + i);
    e.cause(fmt::format("'{}' with cta_group=2 is performed by one warp in each CTA of the pair together (PTX ISA 9.7.16.5), "
                        "and no warp of the peer CTA {} {}",
                        sim_.op_of(w, w.wait_op).text, peer.id,
                        peer.exited ? "did it before that CTA exited" : "reached it"));
    return;
  }
  if (w.wait_obj & kPairWait) {
    // A pair allocation: the same columns must be free on both SMs of the pair.
    const Cluster& cl = sim_.cluster_of(sim_.cta(w.cta));
    std::uint32_t peer = cl.ctas[static_cast<std::size_t>(sim_.cta(w.cta).rank ^ 1)];
    int sms[2] = {sim_.cta(w.cta).sm, sim_.cta(peer).sm};
    std::int64_t held[2] = {0, 0};
    std::vector<std::string> who;
    for (std::uint32_t ci : sim_.slots_in_launch_order()) {
      const Cta& o = sim_.cta(ci);
      if (o.exited || ci >= ctas_.size() || ctas_[ci].allocs.empty()) continue;
      for (int k = 0; k < 2; ++k) {
        if (o.sm != sms[k]) continue;
        for (const auto& a : ctas_[ci].allocs) held[k] += a.cols;
        for (int i = 0; i < sim_.program().warps; ++i) e.waits_on(o.first_warp + i);
        if (who.size() < 2) who.push_back(holder_words(ci));
      }
    }
    e.cause(fmt::format("tmem.alloc of {} columns with cta_group=2 needs the same columns free on SM {} ({} held) and SM {} ({} "
                        "held), {} columns per SM{}{}",
                        w.wait_value, sms[0], held[0], sms[1], held[1], sim_.machine().tmem_columns, who.empty() ? "" : ": ",
                        fmt::join(who, "; ")));
    return;
  }
  std::int64_t holders = 0;
  std::vector<std::string> who;
  for (std::uint32_t ci : sim_.slots_in_launch_order()) {
    const Cta& o = sim_.cta(ci);
    if (o.exited || o.sm != static_cast<int>(w.wait_obj) || ci >= ctas_.size() || ctas_[ci].allocs.empty()) continue;
    for (const auto& a : ctas_[ci].allocs) holders += a.cols;
    for (int i = 0; i < sim_.program().warps; ++i) e.waits_on(o.first_warp + i);
    if (who.size() < 2) who.push_back(holder_words(ci));
  }
  e.cause(fmt::format("tmem.alloc of {} columns on SM {}: {} columns are held by CTAs that do not free them "
                      "({} columns per SM){}{}",
                      w.wait_value, w.wait_obj, holders, sim_.machine().tmem_columns, who.empty() ? "" : ": ",
                      fmt::join(who, "; ")));
}

void TmemUnit::relinquish(std::uint32_t slot, std::uint32_t warp_id, std::uint32_t op) {
  CtaState& cs = ctas_[slot];
  if (cs.relinquished) return;  // the first one is the one an alloc comes after
  cs.relinquished = true;
  cs.relinquish_warp = warp_id;
  cs.relinquish_op = op;
  cs.relinquish_cycle = sim_.now().v;
}

// An alloc after the CTA's relinquish: which relinquish, and what would order the two (PTX ISA tcgen05.alloc: an
// alloc after relinquish_alloc_permit is illegal).
std::string TmemUnit::after_relinquish(std::uint32_t slot, const OpContext& ctx) const {
  const CtaState& cs = ctas_[slot];
  const Warp& r = sim_.warp(cs.relinquish_warp);
  const isa::OpDesc& d = sim_.op_of(r, cs.relinquish_op);
  if (cs.relinquish_warp == ctx.warp_id)
    return fmt::format("tmem.alloc after this warp's own `{}` at line {} (tcgen05.relinquish_alloc_permit: no alloc of the "
                       "CTA may follow it): relinquish after the last alloc",
                       d.text, d.loc.line);
  return fmt::format("tmem.alloc after warp {}{}'s `{}` at line {} (cycle {}; tcgen05.relinquish_alloc_permit: no alloc of "
                     "the CTA may follow it): nothing ordered this alloc before that relinquish. The relinquishing warp "
                     "must wait for every alloc of the CTA (the allocating warp arrives on a barrier it waits on after its "
                     "alloc, or both reach a bar.sync)",
                     r.index, r.cta == ctx.warp.cta ? "" : fmt::format(" of CTA {}", sim_.cta(r.cta).id), d.text, d.loc.line,
                     cs.relinquish_cycle);
}

// A CTA that holds columns, for a cause: how many, where it took them, and what keeps it from freeing them (its
// first warp that waits, and on what).
std::string TmemUnit::holder_words(std::uint32_t slot) const {
  const Cta& o = sim_.cta(slot);
  std::int64_t cols = 0;
  for (const auto& a : ctas_[slot].allocs) cols += a.cols;
  std::string waits = "none of its warps waits";
  for (int i = 0; i < sim_.program().warps; ++i) {
    const Warp& x = sim_.warp(o.first_warp + static_cast<std::uint32_t>(i));
    if (x.state != models::WarpState::kBlocked) continue;
    const isa::OpDesc& d = sim_.op_of(x, x.wait_op);
    waits = fmt::format("its warp {} waits at line {} (`{}`) for {}", i, d.loc.line, d.text, sim_.describe_wait(x));
    break;
  }
  return fmt::format("CTA {} holds {} (tmem.alloc at line {}), and {}", o.id, cols, ctas_[slot].allocs.front().loc.line,
                     waits);
}

}  // namespace smpipe::models
