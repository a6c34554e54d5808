#include "models/tensor/tensor_unit.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/gpu/simulator.hpp"
#include "models/memory/hazards.hpp"
#include "models/memory/proxy_fence.hpp"
#include "models/memory/transfer.hpp"
#include "models/sm/issue.hpp"
#include "models/sync/mbarrier_unit.hpp"

namespace smpipe::models {

using isa::Attr;
using isa::OpKind;

TensorUnit::TensorUnit(Simulator& sim)
    : Unit(sim),
      cause_mma_sync_(sim.cause_id("mma.sync")),
      cause_wgmma_wait_(sim.cause_id("wgmma.wait")),
      cause_convergence_(sim.cause_id("warpgroup convergence")),
      cause_wgmma_issue_(sim.cause_id("wgmma issue")) {
  pipe_free_.assign(static_cast<std::size_t>(sim.machine().sm_count), {});
  std::int64_t depth = std::max<std::int64_t>(0, sim.machine().wgmma_queue_depth);
  queue_starts_.assign(static_cast<std::size_t>(sim.machine().sm_count * depth), Cycle(0));
  queue_head_.assign(static_cast<std::size_t>(sim.machine().sm_count), 0);
  const auto& p = sim.program();
  // Only a program with compute ops that give mma_speed needs the pipe's busy spans (and their wgmmas' extra cycles).
  for (const auto& role : p.roles)
    for (const isa::OpDesc& op : role.ops)
      if (op.kind == OpKind::kCompute && op.slot(Attr::kMmaSpeed) && op.slot(Attr::kMmaSpeed)->present) alu_beside_ = true;
  for (int first = 0; first < p.warps; first += isa::kWarpsPerWarpgroup) {
    int role = first + isa::kWarpsPerWarpgroup <= p.warps ? p.warp_role[first] : -1;
    for (int i = 1; i < isa::kWarpsPerWarpgroup && role >= 0; ++i)
      if (p.warp_role[first + i] != role) role = -1;
    whole_role_.push_back(role);
  }
}

std::span<const isa::OpKind> TensorUnit::accepted() {
  static constexpr OpKind kOps[] = {OpKind::kMmaSync,     OpKind::kWgmmaFence, OpKind::kWgmma,     OpKind::kWgmmaCommit,
                                    OpKind::kWgmmaWait,   OpKind::kUmma,       OpKind::kUmmaCommit};
  return kOps;
}

std::string TensorUnit::fits(const isa::OpDesc& op, const Machine& m) {
  using K = OpKind;
  if ((op.kind == K::kUmma || op.kind == K::kUmmaCommit) && m.tmem_columns == 0)
    return fmt::format("'{}' needs tensor memory (tcgen05, sm_100), which {} does not have; try --gpu b200", op.text, m.name);
  bool wg = op.kind == K::kWgmma || op.kind == K::kWgmmaFence || op.kind == K::kWgmmaCommit || op.kind == K::kWgmmaWait;
  if (wg && m.has_wgmma == 0) return fmt::format("'{}' is sm_90a only; {} has no wgmma (use umma)", op.text, m.name);
  if ((op.kind == K::kWgmma || op.kind == K::kMmaSync || op.kind == K::kUmma) && m.tensor_rate(op.operand_bits, op.dtype == "tf32") == 0)
    return fmt::format("{} has no tensor-core rate for {}-bit operands ('{}')", m.name, op.operand_bits, op.text);
  return "";
}

void TensorUnit::connect() {
  mbar_ = &sim_.find<MbarrierUnit>();
  proxy_ = &sim_.find<ProxyFenceUnit>();
  hazards_ = &sim_.find<HazardUnit>();
  issue_ = &sim_.find<IssueUnit>();
}

void TensorUnit::cta_started(std::uint32_t slot) {
  if (slot >= warpgroups_.size()) warpgroups_.resize(slot + 1);
  int warps = sim_.program().warps;
  warpgroups_[slot].assign(static_cast<std::size_t>((warps + isa::kWarpsPerWarpgroup - 1) / isa::kWarpsPerWarpgroup), Warpgroup{});
  sim_.reset_warps(threads_, slot);
}

Cycle TensorUnit::issue(const OpContext& ctx, std::int64_t count, bool whole_sm, int sms) {
  const Machine& m = sim_.machine();
  const isa::OpDesc& d = ctx.desc;
  auto& pipe = pipe_free_[ctx.cta().sm];
  std::int64_t flops = 2 * d.m * d.n * d.k * count;
  sim_.counters().flops += flops;
  flops /= sms;  // this SM's share
  std::int64_t rate = m.tensor_rate(d.operand_bits, d.dtype == "tf32");
  if (whole_sm) {
    // wgmma / tcgen05.mma use the tensor cores of all four SM sub-partitions.
    std::int64_t occ = ceil_div(flops, rate);
    Cycle start = sim_.now();
    for (const Cycle& c : pipe) start = sim::max(start, c);
    for (Cycle& c : pipe) c = start + Cycle(occ);
    busy_ += 4 * occ;
    return start + Cycle(occ);
  }
  // mma.sync runs on the warp's own sub-partition: a quarter of the SM's mma.sync rate (scaled from the
  // 16-bit rate by the operand width like the wgmma rates).
  std::int64_t sync_rate =
      std::max<std::int64_t>(1, m.mma_sync_flops_per_cycle_16bit * rate / std::max<std::int64_t>(1, m.tensor_flops_per_cycle_16bit));
  std::int64_t occ = ceil_div(flops * 4, sync_rate);
  Cycle& sub = pipe[ctx.warp.index % 4];
  Cycle start = sim::max(sim_.now(), sub);
  sub = start + Cycle(occ);
  busy_ += occ;
  return sub;
}

Cycle TensorUnit::issue_wgmma(const OpContext& ctx, std::int64_t count, Cycle& issued) {
  const Machine& m = sim_.machine();
  const isa::OpDesc& d = ctx.desc;
  const std::uint32_t sm = ctx.cta().sm;
  auto& pipe = pipe_free_[sm];
  std::int64_t flops = 2 * d.m * d.n * d.k;
  sim_.counters().flops += flops * count;
  // wgmma uses the tensor cores of all four SM sub-partitions, one wgmma after another.
  std::int64_t occ = ceil_div(flops, m.tensor_rate(d.operand_bits, d.dtype == "tf32"));
  // ALU work beside the wgmmas (compute ops with mma_speed < 100 running on the SM when the batch issues) takes
  // something of every sub-partition: each wgmma holds the pipe longer.
  if (alu_beside_ && m.wgmma_beside_alu_cycles > 0 && issue_->alu_beside(sm)) occ += m.wgmma_beside_alu_cycles;
  std::int64_t cost = d.n > 128 ? m.wgmma_issue_cycles_n256 : m.wgmma_issue_cycles;
  const auto depth = static_cast<std::uint32_t>(std::max<std::int64_t>(0, m.wgmma_queue_depth));
  Cycle free = sim_.now();
  for (const Cycle& c : pipe) free = sim::max(free, c);
  Cycle t = sim_.now();
  Cycle first{0};
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint32_t& head = queue_head_[sm];
    Cycle* ring = depth ? &queue_starts_[static_cast<std::size_t>(sm) * depth] : nullptr;
    if (ring) t = sim::max(t, ring[head]);  // the wgmma `depth` places earlier must have started
    t += Cycle(std::max<std::int64_t>(1, cost));
    Cycle start = sim::max(t, free);
    if (i == 0) first = start;
    free = start + Cycle(occ);
    if (ring) {
      ring[head] = start;
      head = (head + 1) % depth;
    }
  }
  for (Cycle& c : pipe) c = free;
  busy_ += 4 * occ * count;
  if (alu_beside_ && count > 0) issue_->tensor_busy(sm, first, free);  // ALU work with mma_speed < 100 slows meanwhile
  issued = t;
  return free;
}

OpResult TensorUnit::execute(OpContext& ctx) {
  const Machine& m = sim_.machine();
  switch (ctx.desc.kind) {
    case OpKind::kMmaSync: {
      std::int64_t count = ctx.value(Attr::kCount);
      if (count < 1) ctx.ub("bad count", fmt::format("count={} must be positive", count));
      Cycle done = issue(ctx, count, false) + sim_.jit(m.mma_sync_latency_cycles);
      ctx.block(nullptr, 0, 0, cause_mma_sync_);
      sim_.wake_at(ctx.warp_id, done);
      return ctx.blocked();
    }
    case OpKind::kWgmmaFence:
    case OpKind::kWgmma:
    case OpKind::kWgmmaCommit:
    case OpKind::kWgmmaWait: return warpgroup_op(ctx);
    case OpKind::kUmma: return umma(ctx);
    case OpKind::kUmmaCommit: return umma_commit(ctx);
    default: return Unit::execute(ctx);
  }
}

// Warpgroup-collective (.sync.aligned): the four warps of the warpgroup meet here.
OpResult TensorUnit::warpgroup_op(OpContext& ctx) {
  const Machine& m = sim_.machine();
  const auto& p = sim_.program();
  const isa::OpDesc& d = ctx.desc;
  Warp& w = ctx.warp;
  int wg_index = w.index / isa::kWarpsPerWarpgroup;
  Warpgroup& wg = warpgroups_[w.cta][wg_index];
  for (int i = 0; i < isa::kWarpsPerWarpgroup && whole_role_[wg_index] != w.role; ++i) {
    int wi = wg_index * isa::kWarpsPerWarpgroup + i;
    if (wi >= p.warps || p.warp_role[wi] != w.role)
      ctx.ub("wgmma outside a whole warpgroup",
             fmt::format("'{}' is warpgroup-collective: warps {}..{} must all run it, but warp {} {}", d.text, wg_index * 4,
                         wg_index * 4 + 3, wi,
                         wi >= p.warps           ? "does not exist"
                         : p.warp_role[wi] < 0 ? "has no role"
                                               : fmt::format("runs role '{}'", p.roles[p.warp_role[wi]].name)));
  }
  if (wg.arrived == 0) {
    wg.op = ctx.op;
  } else if (wg.op != ctx.op) {
    const isa::OpDesc& first = sim_.op_of(w, wg.op);
    ctx.ub("warpgroup divergence",
           fmt::format("warps of warpgroup {} reach different warpgroup ops: '{}' (line {}) and '{}' (line {}); wgmma ops are "
                       ".aligned: all four warps must execute the same one",
                       wg_index, first.text, first.loc.line, d.text, d.loc.line));
  }
  wg.arrived += 1;
  wg.waiting.push_back(ctx.warp_id);
  // A wgmma's warps wait for each other and then for its issue (the pipe's queue): counted as the issue.
  ctx.block(this, static_cast<std::uint32_t>(wg_index), 0,
            d.kind == OpKind::kWgmmaWait ? cause_wgmma_wait_ : d.kind == OpKind::kWgmma ? cause_wgmma_issue_ : cause_convergence_);
  if (wg.arrived < isa::kWarpsPerWarpgroup) return ctx.blocked();
  Cycle now = sim_.now();
  Cycle resume = now + Cycle(m.op_issue_cycles);
  if (d.kind == OpKind::kWgmmaFence) {
    wg.fenced = true;
    for (std::uint32_t id : wg.waiting) sim_.warp(id).reg_work = ~0u;
  } else if (d.kind == OpKind::kWgmma) {
    // PTX ISA (wgmma.fence): the warps of a warpgroup must execute wgmma.fence before its first wgmma.mma_async (it
    // orders their earlier register accesses before the wgmma's). Registers are not modelled: a later wgmma is
    // checked only against the warps' register work (compute ops) since the previous one, a warning.
    if (!wg.fenced)
      ctx.ub("wgmma without wgmma.fence",
             fmt::format("warpgroup {} issues '{}' (line {}) without a wgmma.fence before it: PTX requires the warpgroup to execute "
                         "wgmma.fence before its first wgmma.mma_async (and after touching the registers a wgmma uses)",
                         wg_index, d.text, d.loc.line));
    if (wg.last_wgmma != ~0u) check_register_work(ctx, wg, wg_index);
    for (std::uint32_t id : wg.waiting) sim_.warp(id).reg_work = ~0u;
    wg.last_wgmma = ctx.op;
    proxy_->check_async_read(ctx, Attr::kA, wg.waiting);
    proxy_->check_async_read(ctx, Attr::kB, wg.waiting);
    // One MMA of the warpgroup reads the operands until a covering wgmma.wait (of any of its warps).
    for (isa::Attr a : {Attr::kA, Attr::kB})
      wg.reads.add(hazards_->group_access(wg.waiting, ctx.op, ctx.cta_slot(), HazardUnit::named(ctx, a), false, HazardUnit::Via::kWgmma));
    std::int64_t count = ctx.value(Attr::kCount);
    if (count < 1) ctx.ub("bad count", fmt::format("count={} must be positive", count));
    Cycle issued;
    Cycle done = issue_wgmma(ctx, count, issued) + sim_.jit(m.wgmma_latency_cycles);
    wg.open_done = sim::max(wg.open_done, done);
    wg.open_nonempty = true;
    resume = issued;
    std::int64_t cta_id = ctx.cta().id;
    if (!sim_.observers().empty() && sim_.observers().wants(cta_id)) {
      std::string label = fmt::format("wgmma {} x{} (wg {})", d.shape, count, wg_index);
      sim_.observers().each(cta_id, [&](Observer& o) { o.async_work(cta_id, label, "mma", now.v, done.v); });
    }
  } else if (d.kind == OpKind::kWgmmaCommit) {
    wg.groups.push_back(wg.open_nonempty ? wg.open_done : now);
    wg.open_nonempty = false;
    wg.open_done = Cycle(0);
    wg.reads.commit();
  } else if (d.kind == OpKind::kWgmmaWait) {
    std::int64_t n = ctx.wait_count();
    std::int64_t older = static_cast<std::int64_t>(wg.groups.size()) - n;
    for (std::int64_t i = 0; i < older; ++i) resume = sim::max(resume, wg.groups[i]);
    if (older > 0) wg.groups.erase(wg.groups.begin(), wg.groups.begin() + older);
    wg.reads.complete_older(n, [&](HazardUnit::Part p) { hazards_->retire_any(p, wg.waiting); });
    wg.last_wait = LastWait{ctx.op, n, now.v};
  }
  sim_.wake_all(wg.waiting, resume);
  wg.waiting.clear();
  wg.arrived = 0;
  return ctx.blocked();
}

// PTX ISA (wgmma.fence): a wgmma.fence must come between a register access by a thread of the warpgroup and a
// wgmma.mma_async that uses the same registers (its accumulator or A fragment), as CUTLASS's mainloops and FA3 issue one
// (warpgroup_arrive) at each k-block. A compute op is register work (an FA3 softmax or rescale of the accumulator) but
// does not say which registers it touches: work on other registers needs no fence, so this is a warning, not a stop.
// Work before the warpgroup's first wgmma is left to the first-wgmma rule (a prologue's set-up).
void TensorUnit::check_register_work(const OpContext& ctx, const Warpgroup& wg, int wg_index) {
  const Warp& issuer = ctx.warp;
  const std::pair<int, std::uint32_t> site{issuer.role, ctx.op};
  if (std::find(fence_warned_.begin(), fence_warned_.end(), site) != fence_warned_.end()) return;
  const Cta& cta = ctx.cta();
  for (int i = 0; i < isa::kWarpsPerWarpgroup; ++i) {
    const Warp& w = sim_.warp(cta.first_warp + static_cast<std::uint32_t>(wg_index * isa::kWarpsPerWarpgroup + i));
    if (w.reg_work == ~0u) continue;
    fence_warned_.push_back(site);
    const isa::OpDesc& work = sim_.op_of(w, w.reg_work);
    warnings_.push_back(fmt::format(
        "{}: wgmma after register work without wgmma.fence: warp {} (warpgroup {} of CTA {}) ran '{}' (line {}) after the "
        "warpgroup's wgmma at line {}, and the warpgroup issues '{}' (line {}) with no wgmma.fence after that work. PTX "
        "requires a wgmma.fence between a warp's access of registers a wgmma.mma_async uses (its accumulator or A "
        "fragment) and that wgmma; a compute op does not say which registers it touches, so this is harmless only if the "
        "work leaves the wgmma's registers alone (a softmax or rescale of the accumulator does not): put a wgmma.fence "
        "after the register work, before the wgmma, as CUTLASS does at each k-block",
        ctx.desc.loc.str(), w.index, wg_index, cta.id, work.text, work.loc.line, sim_.op_of(w, wg.last_wgmma).loc.line,
        ctx.desc.text, ctx.desc.loc.line));
    return;
  }
}

void TensorUnit::add_warnings(std::vector<std::string>& warnings) const {
  warnings.insert(warnings.end(), warnings_.begin(), warnings_.end());
}

OpResult TensorUnit::umma(OpContext& ctx) {
  const Machine& m = sim_.machine();
  const isa::OpDesc& d = ctx.desc;
  proxy_->check_async_read(ctx, Attr::kA);
  proxy_->check_async_read(ctx, Attr::kB);
  std::int64_t count = ctx.value(Attr::kCount);
  if (count < 1) ctx.ub("bad count", fmt::format("count={} must be positive", count));
  const Cta& cta = ctx.cta();
  Tcgen05Thread& t = threads_[ctx.warp_id];
  // cta_group::2: the CTA pair is cluster ranks 2k and 2k+1 (PTX ISA 9.7.16).
  bool two = ctx.value(Attr::kCtaGroup) == 2;
  std::uint32_t pair[2] = {ctx.cta_slot(), two ? ctx.pair_peer() : ctx.cta_slot()};
  int ctas = two ? 2 : 1;
  for (int c = 0; c < ctas; ++c)
    for (isa::Attr a : {Attr::kA, Attr::kB})
      if (std::uint64_t part = hazards_->tcgen05_read(ctx.warp_id, ctx.op, pair[c], HazardUnit::named(ctx, a), HazardUnit::Via::kUmma))
        t.reads.emplace_back(pair[c], part);
  // The accumulator's TMEM columns (tmem=, in this CTA, and in the peer's for cta_group::2): N from the column
  // part of the address, allocated in each CTA.
  if (ctx.present(Attr::kTmem)) {
    if (check_tmem_columns)
      for (int c = 0; c < ctas; ++c) check_tmem_columns(ctx, pair[c], ctx.value(Attr::kTmem) & 0xffff, d.n);
    auto [first, end] = hazards_->tmem_buffers(ctx.value(Attr::kTmem) & 0xffff, d.n);
    for (int c = 0; c < ctas; ++c) {
      std::uint64_t part = hazards_->tmem_mma_write(ctx.warp_id, ctx.op, pair[c], first, end);
      if (part == 0) continue;
      auto it = std::find_if(t.d_writes.begin(), t.d_writes.end(), [&](const auto& e) { return e.first == pair[c]; });
      if (it == t.d_writes.end()) it = t.d_writes.insert(it, {pair[c], {}});
      for (std::uint32_t b = first; b < end; ++b) {
        std::uint64_t& latest = it->second[hazards_->tmem_chunk(b)];
        // The thread's newer write to the chunk orders after the older one, which is gone once it has no chunk left.
        if (latest != 0 && hazards_->forget(latest, pair[c], b))
          std::erase_if(t.d_parts, [&](const auto& e) { return e.second == latest; });
        latest = part;
      }
      t.d_parts.emplace_back(pair[c], part);
    }
  }
  // Ordered after this thread's earlier tcgen05.cp (scale factors) (semantics.md §6).
  for (Cycle& c : pipe_free_[cta.sm]) c = sim::max(c, t.cp_done);
  Cycle end;
  if (two) {
    // cta_group::2: one MMA for the CTA pair; each SM of the pair computes half of M.
    end = issue(ctx, count, true, 2);
    for (Cycle& c : pipe_free_[sim_.cta(pair[1]).sm]) c = sim::max(c, end);
  } else {
    end = issue(ctx, count, true);
  }
  Cycle done = end + sim_.jit(m.umma_latency_cycles);
  t.done = sim::max(t.done, done);
  if (!sim_.observers().empty() && sim_.observers().wants(cta.id)) {
    std::string label = fmt::format("umma {} x{}", d.shape, count);
    Cycle now = sim_.now();
    sim_.observers().each(cta.id, [&](Observer& o) { o.async_work(cta.id, label, "mma", now.v, done.v); });
  }
  return ctx.busy(m.op_issue_cycles);
}

OpResult TensorUnit::umma_commit(OpContext& ctx) {
  const Machine& m = sim_.machine();
  std::uint32_t f = ctx.barrier(Attr::kBar);
  const std::int64_t mask = ctx.value(Attr::kMulticast);
  Simulator::Targets targets = sim_.multicast_targets(ctx.warp_id, ctx.op, ctx.cta_slot(), mask);
  if (mask != 0) {  // the cluster's CTAs it leaves out (reports of a count never reached there)
    const Cluster& cl = sim_.cluster_of(ctx.cta());
    for (std::size_t r = 0; r < cl.ctas.size(); ++r)
      if (!(mask & (std::int64_t{1} << r))) mbar_->note_left_out(cl.ctas[r], f, ctx.warp_id, ctx.op, mask);
  }
  Tcgen05Thread& t = threads_[ctx.warp_id];
  Cycle now = sim_.now();
  Cycle at = sim::max(sim::max(t.done, t.cp_done), now);
  std::int64_t cta_id = ctx.cta().id;
  // Operand reads the checker no longer needs (a later access of their buffer is ordered after them) are done.
  std::erase_if(t.reads, [&](const auto& e) { return !hazards_->live(e.second); });
  for (std::uint32_t target : targets) {
    Signal s = mbar_->signal_to(target, SignalKind::kArrive, f, 1, ctx.warp_id, ctx.op);
    // The arrive releases, and completes this thread's operand reads and accumulator writes.
    s.hb = hazards_->release(ctx.warp_id);
    // Operand reads and accumulator writes, whatever CTA they touch, complete with every signal of the commit
    // (its arrive is performed once all the thread's earlier tcgen05 ops are done, PTX ISA tcgen05.commit; a
    // multicast commit arrives in each CTA of its mask after them all), and with every later commit too.
    for (const auto& [cta, part] : t.reads) hazards_->adopt(s.hb, part);
    for (const auto& [cta, part] : t.d_parts) hazards_->adopt(s.hb, part);
    if (!sim_.observers().empty()) s.token = sim_.observers().signal_sent(cta_id, ctx.warp.index, s.cta_id, now.v);
    mbar_->send(target == ctx.cta_slot() ? at : at + sim_.jit(m.remote_arrive_cycles), s);
  }
  return ctx.busy(m.op_issue_cycles);
}

void TensorUnit::warp_exited(std::uint32_t warp_id) {
  const Warp& w = sim_.warp(warp_id);
  // A warpgroup-collective op waiting for this warp can never complete (.aligned).
  const Warpgroup& wg = warpgroups_[w.cta][w.index / isa::kWarpsPerWarpgroup];
  if (wg.arrived == 0) return;
  std::uint32_t waiter = wg.waiting.front();
  sim_.ub(waiter, wg.op, "warpgroup op without all its warps",
          fmt::format("'{}' is warpgroup-collective (.sync.aligned) but warp {} of warpgroup {} exited (line {}) while warps "
                      "of its warpgroup wait there",
                      sim_.op_of(sim_.warp(waiter), wg.op).text, w.index, w.index / 4,
                      sim_.program().roles[w.role].fast[w.pc ? w.pc - 1 : 0].line));
}

std::string TensorUnit::describe_wait(const Warp& w) const {
  const Warpgroup& wg = warpgroups_[w.cta][w.wait_obj];
  return fmt::format("the other warps of warpgroup {} to reach this warpgroup op ({} of 4 arrived)", w.wait_obj, wg.arrived);
}

void TensorUnit::explain_wait(const Warp& w, WaitExplanation& e) const {
  const Cta& c = sim_.cta(w.cta);
  for (int i = 0; i < isa::kWarpsPerWarpgroup; ++i) {
    std::uint32_t wid = c.first_warp + w.wait_obj * isa::kWarpsPerWarpgroup + i;
    if (sim_.warp(wid).wait_unit != index()) e.waits_on(wid);
  }
  e.cause(fmt::format("warpgroup {} of CTA {}: some warps wait at a warpgroup-collective op that the others do not reach", w.wait_obj,
                      c.id));
}

void TensorUnit::add_stats(Stats& s, std::int64_t cycles, std::int64_t sms_used) const {
  std::int64_t late = 0;
  for (const auto& sm : pipe_free_)
    for (const Cycle& f : sm) late += busy_past_end(f.v, cycles);
  // four sub-partition pipes
  s.units.push_back(per_sm_unit("tensor pipe", std::max<std::int64_t>(0, busy_ - late), cycles, sms_used, 4));
}

}  // namespace smpipe::models
