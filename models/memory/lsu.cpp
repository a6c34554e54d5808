#include "models/memory/lsu.hpp"

#include <fmt/format.h>

#include <cmath>

#include "models/gpu/simulator.hpp"
#include "models/memory/hazards.hpp"
#include "models/memory/l2.hpp"
#include "models/memory/proxy_fence.hpp"
#include "models/memory/transfer.hpp"
#include "models/sync/mbarrier_unit.hpp"

namespace smpipe::models {

using isa::Attr;
using isa::OpKind;

LsuUnit::LsuUnit(Simulator& sim)
    : Unit(sim),
      cause_wait_(sim.cause_id("cp.async.wait")),
      cause_ld_global_(sim.cause_id("ld.global")),
      cause_path_(sim.cause_id("the SM's load/store path")),
      cause_port_(sim.cause_id("the SM's shared memory")) {
  const auto sms = static_cast<std::size_t>(sim.machine().sm_count);
  paths_.resize(sms);
  ports_.resize(sms);
  queue_ops_ = static_cast<std::size_t>(std::max<std::int64_t>(1, sim.machine().smem_store_queue_ops));
  store_queue_.assign(sms * 4 * queue_ops_, Cycle(0));
  queue_next_.assign(sms * 4, 0);
}

std::span<const isa::OpKind> LsuUnit::accepted() {
  static constexpr OpKind kOps[] = {OpKind::kCpAsync,  OpKind::kCpAsyncCommit, OpKind::kCpAsyncWait, OpKind::kCpAsyncArrive,
                                    OpKind::kLdShared, OpKind::kStShared,      OpKind::kLdmatrix,    OpKind::kLdGlobal,
                                    OpKind::kStGlobal};
  return kOps;
}

void LsuUnit::connect() {
  l2_ = &sim_.find<MemoryHierarchy>();
  mbar_ = &sim_.find<MbarrierUnit>();
  proxy_ = &sim_.find<ProxyFenceUnit>();
  hazards_ = &sim_.find<HazardUnit>();
}

void LsuUnit::cta_started(std::uint32_t slot) {
  sim_.reset_warps(warps_, slot);
}

// An op is warp instructions of lanes x size bytes each (size 16 by default; the last one may be short), spread
// over `lines` 128-byte lines each (by default as few as hold them; a short last one over its share of them). A
// load or copy holds the path for its lines, a whole line each whatever it uses of it (a load at least
// lsu_load_min_cycles); a store for its 32-byte sectors, one written in part costing lsu_partial_sector_factor
// whole ones. Measured on the H100 (validation/results/h100/l1.json): loads and copies about one cycle per line
// touched, stores one per whole sector and two per part.
double LsuUnit::occupancy(const OpContext& ctx, std::int64_t bytes) const {
  const Machine& m = sim_.machine();
  const OpKind kind = ctx.desc.kind;
  const bool store = kind == OpKind::kStGlobal;
  const std::int64_t size = ctx.value(Attr::kSize), lanes = ctx.lanes();
  const std::int64_t per_instr = lanes * size;
  const std::int64_t lines = ctx.present(Attr::kLines) ? ctx.value(Attr::kLines) : isa::lines_needed(lanes, size);
  if (lines < isa::lines_needed(lanes, size)) ctx.ub("value out of range", isa::lines_error(lanes, size, lines));
  // One instruction of `b` bytes over `l` lines.
  auto instr = [&](std::int64_t b, std::int64_t l) {
    if (store) {
      // The bytes each line gets (the instruction's spread evenly), as whole sectors and a part of one.
      const std::int64_t line_bytes = b / l, whole = line_bytes / 32, part = line_bytes % 32 != 0 ? 1 : 0;
      return static_cast<double>(l) * (static_cast<double>(whole) + m.lsu_partial_sector_factor * static_cast<double>(part)) *
             (32 / m.lsu_store_bytes_per_cycle);
    }
    const double c = static_cast<double>(l) * (128 / m.lsu_bytes_per_cycle);
    return kind == OpKind::kLdGlobal ? std::max(c, m.lsu_load_min_cycles) : c;
  };
  const std::int64_t full = bytes / per_instr, rest = bytes % per_instr;
  double cycles = static_cast<double>(full) * instr(per_instr, lines);
  if (rest > 0) cycles += instr(rest, std::max(ceil_div(rest, 128), ceil_div(lines * rest, per_instr)));
  return cycles;
}

LsuUnit::Path LsuUnit::through_path(const OpContext& ctx, double cycles) {
  // In ticks of 1/kTicks cycle (one rounding of the op's time; integers from there): the path begins on the op when
  // it is through the ops before it (or at once, when idle since), and has taken it at the first whole cycle its
  // work is done.
  std::int64_t& free = paths_[ctx.cta().sm];
  const std::int64_t issue = (sim_.now().v + sim_.machine().op_issue_cycles) * kTicks;
  const std::int64_t begin = std::max(issue, free);
  free = begin + std::max<std::int64_t>(1, std::llround(cycles * static_cast<double>(kTicks)));
  return Path{Cycle((begin + kTicks - 1) / kTicks), Cycle((free + kTicks - 1) / kTicks), begin == issue};
}

// The shared memory moves smem_bytes_per_cycle for the whole SM (measured: eight warps' stmatrix of a 128x32 bf16
// epilogue subtile, 8 KB, take 64 cycles, validation/results/h200/epilogue.json#epi_stsm_1sm).
LsuUnit::Path LsuUnit::through_port(const OpContext& ctx, std::int64_t bytes) {
  Cycle& free = ports_[ctx.cta().sm];
  const Cycle now = sim_.now();
  const Cycle begin = sim::max(now, free);
  free = begin + Cycle(std::max<std::int64_t>(1, transfer_cycles(bytes, sim_.machine().smem_bytes_per_cycle)));
  return Path{begin, free, begin == now};
}

// Measured on the H200 (validation/results/h200/epilogue_issue.json, epi_issue_*): one warp's stmatrix.x4 are written
// one per 10 cycles; a warp issues up to ~9 of its sub-partition's stores ahead of those written, then one as each is
// taken; four or eight warps' stores go at the SM's 128 bytes per cycle.
OpResult LsuUnit::store_shared(OpContext& ctx, std::int64_t bytes) {
  const Machine& m = sim_.machine();
  WarpState& w = warps_[ctx.warp_id];
  const std::size_t part = static_cast<std::size_t>(ctx.cta().sm) * 4 + static_cast<std::size_t>(ctx.warp.index % 4);
  Cycle* ring = &store_queue_[part * queue_ops_];
  std::uint32_t& next = queue_next_[part];
  Cycle& port = ports_[ctx.cta().sm];
  const Cycle now = sim_.now();
  Cycle entered = now;
  // An op of more instructions than four queues' worth is taken as that many equal ones (the same bytes of the port and
  // of the warp's rate; the queue then holds more of its bytes): an op's work stays bounded whatever its size.
  const std::int64_t most = 4 * static_cast<std::int64_t>(queue_ops_);
  bytes = std::max<std::int64_t>(bytes, 1);
  const std::int64_t instr = std::max(kStoreInstrBytes, ceil_div(bytes, most));
  for (std::int64_t left = bytes; left > 0; left -= instr) {
    const std::int64_t b = std::min(left, instr);
    entered = sim::max(entered, ring[next]);  // the instruction queue_ops_ places earlier has been taken
    // The port serves the SM's accesses in the order they come; a warp's own rate holds back only its own stores (the
    // port goes on with other warps' meanwhile), so it decides when this one leaves the queue and is written.
    const Cycle begin = sim::max(entered, port);
    port = begin + Cycle(std::max<std::int64_t>(1, transfer_cycles(b, m.smem_bytes_per_cycle)));
    const Cycle taken = sim::max(begin, w.smem_free);
    w.smem_free = taken + Cycle(std::max<std::int64_t>(1, transfer_cycles(b, m.smem_warp_store_bytes_per_cycle)));
    w.smem_written = sim::max(w.smem_written, sim::max(port, w.smem_free));
    ring[next] = taken;
    next = static_cast<std::uint32_t>((next + 1) % queue_ops_);
  }
  if (entered == now) return ctx.busy(std::max<std::int64_t>(1, m.op_issue_cycles));
  // The queue was full: waiting on the shared memory until its last instruction entered, then issuing it.
  return wait_then_busy(ctx, kWaitPort, cause_port_, entered, entered + Cycle(m.op_issue_cycles));
}

OpResult LsuUnit::after_stores(OpContext& ctx, std::int64_t own) {
  const Cycle written = warps_[ctx.warp_id].smem_written;
  own = std::max<std::int64_t>(1, own);
  if (written <= sim_.now()) return ctx.busy(own);
  return wait_then_busy(ctx, kWaitWritten, cause_port_, written, written + Cycle(own));
}

OpResult LsuUnit::wait_then_busy(OpContext& ctx, WaitObj obj, std::uint16_t cause, Cycle begin, Cycle end) {
  ctx.block(this, obj, 0, cause);
  sim_.schedule(*this, end, sim::Priority::kCompletion, ctx.warp_id, static_cast<std::uint64_t>(begin.v));
  return ctx.blocked();
}

OpResult LsuUnit::hold_until(OpContext& ctx, const Path& path, bool port) {
  const Cycle now = sim_.now();
  if (path.at_once) return ctx.busy(std::max<std::int64_t>(1, (path.taken - now).v));
  // Behind other warps' ops: waiting on the path until it begins on this one, then busy issuing it.
  return wait_then_busy(ctx, port ? kWaitPort : kWaitPath, port ? cause_port_ : cause_path_, path.begin, path.taken);
}

// A warp whose op waited for the path: its op is taken now. Its own time (from when the path began on it) counts
// as busy, the rest as waiting; it goes on as a warp whose busy op ends now would.
void LsuUnit::complete(std::uint32_t warp_id, std::uint64_t begin) {
  Warp& w = sim_.warp(warp_id);
  const std::int64_t own = sim_.now().v - static_cast<std::int64_t>(begin);
  w.busy += own;
  w.wait_since += Cycle(own);
  sim_.observe_busy(w, sim_.op_of(w, w.wait_op), static_cast<std::int64_t>(begin), own);
  sim_.continue_now(warp_id);
}

std::string LsuUnit::describe_wait(const Warp& w) const {
  switch (w.wait_obj) {
    case kWaitPort: return "the SM's shared memory: other warps' accesses ahead of this one";
    case kWaitWritten: return "the SM's shared memory: fence.proxy.async waits until this warp's st.shared are written";
    default: return "the SM's load/store path: other warps' ops ahead of this one";
  }
}

OpResult LsuUnit::execute(OpContext& ctx) {
  const Machine& m = sim_.machine();
  const isa::OpDesc& d = ctx.desc;
  WarpState& w = warps_[ctx.warp_id];
  Cycle now = sim_.now();
  switch (d.kind) {
    case OpKind::kCpAsync: {
      std::int64_t bytes = ctx.bytes(Attr::kDst);
      if (bytes <= 0) ctx.ub("bad size", fmt::format("cp.async of {} bytes", bytes));
      w.copies.add(hazards_->async_access(ctx.warp_id, ctx.op, ctx.cta_slot(), ctx.smem(Attr::kDst), true, HazardUnit::Via::kCpAsync));
      const double occ = occupancy(ctx, bytes);
      const Path path = through_path(ctx, occ);
      busy_ += occ;
      Cycle done = sim::max(path.taken, through_l2(*l2_, ctx, Attr::kSrc, path.begin, path.taken, bytes, false)) + sim_.jit(m.cp_async_latency_cycles);
      sim_.counters().bytes_loaded += bytes;
      w.open = sim::max(w.open, done);
      w.all = sim::max(w.all, done);
      return hold_until(ctx, path);
    }
    case OpKind::kCpAsyncCommit:
      w.last_commit = now.v;
      w.groups.push_back(sim::max(w.open, now));
      w.open = Cycle(0);
      // A wait names at most 63 newer groups, so the groups beyond 64 are only ever waited for together with
      // the next older one: fold the oldest into it (its completion time included) and keep 64.
      if (w.groups.size() > 64) {
        w.groups[1] = sim::max(w.groups[0], w.groups[1]);
        w.groups.erase(w.groups.begin());
      }
      w.copies.commit();
      return ctx.busy(m.op_issue_cycles);
    case OpKind::kCpAsyncWait: {
      std::int64_t n = ctx.wait_count();
      w.last_wait = LastWait{ctx.op, n, now.v, w.last_commit};
      std::int64_t older = static_cast<std::int64_t>(w.groups.size()) - n;
      Cycle until = now;
      for (std::int64_t i = 0; i < older; ++i) until = sim::max(until, w.groups[i]);
      if (older > 0) w.groups.erase(w.groups.begin(), w.groups.begin() + older);
      w.copies.complete_older(n, [&](HazardUnit::Part p) { hazards_->retire(p, ctx.warp_id); });
      if (until <= now) return ctx.busy(m.op_issue_cycles);
      ctx.block(nullptr, 0, 0, cause_wait_);
      sim_.wake_at(ctx.warp_id, until);
      return ctx.blocked();
    }
    case OpKind::kCpAsyncArrive: {
      std::uint32_t f = ctx.barrier(Attr::kBar);
      std::int64_t lanes = ctx.lanes();
      // Without .noinc the pending count is raised first, so the async arrive leaves it unchanged.
      if (ctx.value(Attr::kNoinc) == 0) mbar_->raise_pending(ctx.cta_slot(), f, lanes, ctx.warp_id, ctx.op);
      Signal s = mbar_->signal_to(ctx.cta_slot(), SignalKind::kArrive, f, lanes, ctx.warp_id, ctx.op);
      auto last = std::find_if(w.arrives.begin(), w.arrives.end(), [&](const LastArrive& a) { return a.flat == f; });
      if (last == w.arrives.end()) last = w.arrives.insert(last, LastArrive{f});
      last->op = ctx.op;
      last->cycle = now.v;
      // The arrive comes when all this warp's earlier copies have landed: it completes them.
      s.hb = hazards_->release(ctx.warp_id);
      w.copies.each([&](HazardUnit::Part p) { hazards_->adopt(s.hb, p); });
      mbar_->send(sim::max(w.all, now), s);
      return ctx.busy(m.mbarrier_arrive_cycles);
    }
    case OpKind::kLdShared:
    case OpKind::kStShared:
    case OpKind::kLdmatrix: {
      isa::Attr buffer = d.kind == OpKind::kStShared ? Attr::kDst : Attr::kSrc;
      std::int64_t bytes = ctx.bytes(buffer);
      if (ctx.present(buffer)) {
        std::uint32_t f = ctx.smem(buffer);
        if (d.kind == OpKind::kStShared) proxy_->generic_write(ctx, f);
        hazards_->generic(ctx, f, d.kind == OpKind::kStShared, bytes);
      }
      if (d.kind == OpKind::kStShared) return store_shared(ctx, bytes);
      return hold_until(ctx, through_port(ctx, bytes), true);
    }
    case OpKind::kLdGlobal:
    case OpKind::kStGlobal: {
      std::int64_t bytes = ctx.bytes();
      const bool store = d.kind == OpKind::kStGlobal;
      const double occ = occupancy(ctx, bytes);
      const Path path = through_path(ctx, occ);
      busy_ += occ;
      const Cycle through = through_l2(*l2_, ctx, store ? Attr::kDst : Attr::kSrc, path.begin, path.taken, bytes, store);
      if (store) {
        sim_.counters().bytes_stored += bytes;
        warps_[ctx.warp_id].global_store_op = ctx.op;
        warps_[ctx.warp_id].global_store_at = sim_.now().v;
        return hold_until(ctx, path);
      }
      sim_.counters().bytes_loaded += bytes;
      ctx.block(nullptr, 0, 0, cause_ld_global_);
      sim_.wake_at(ctx.warp_id, sim::max(path.taken, through) + sim_.jit(m.global_load_latency_cycles));
      return ctx.blocked();
    }
    default: return Unit::execute(ctx);
  }
}

void LsuUnit::add_stats(Stats& s, std::int64_t cycles, std::int64_t sms_used) const {
  std::int64_t late = 0;
  for (std::int64_t p : paths_) late += busy_past_end((p + kTicks - 1) / kTicks, cycles);
  s.units.push_back(per_sm_unit("LSU (cp.async, global)", std::max<std::int64_t>(0, std::llround(busy_) - late), cycles, sms_used));
}

LsuUnit::LastArrive LsuUnit::last_arrive(std::uint32_t warp_id, std::uint32_t flat) const {
  if (warp_id >= warps_.size()) return {};
  for (const LastArrive& a : warps_[warp_id].arrives)
    if (a.flat == flat) return a;
  return {};
}

}  // namespace smpipe::models
