// The warp interpreter: runs a warp's bytecode until an op takes time or blocks, and the semantics of
// every op (semantics.md). Attribute positions follow the op table in isa/ops.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/gpu/simulator.hpp"
#include "sim/trace_writer.hpp"

namespace smpipe::models::detail {

using isa::OpKind;

namespace {
enum BarrierAction { kActArrive, kActArriveDrop, kActExpectTx, kActCompleteTx, kActArriveNoComplete, kActArriveExpectTx };
const char* action_name(int a) {
  static const char* names[] = {"arrive", "arrive.drop", "expect_tx", "complete_tx", "arrive.noComplete", "arrive.expect_tx"};
  return names[a];
}
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
// Cycles to move `bytes` at `per_cycle` bytes per cycle, rounded up.
std::int64_t transfer_cycles(std::int64_t bytes, double per_cycle) {
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(bytes) / per_cycle - 1e-9));
}
}  // namespace

void Simulator::step(std::uint32_t id) {
  Warp& w = warps_[id];
  if (w.state != WarpState::kReady) return;
  const isa::RoleCode& rc = program_.roles[w.role];
  const isa::Instr* code = rc.code.data();
  std::int64_t* st = w.stack.data();
  std::int64_t* slots = w.slots.data();
  int sp = 0;
  std::uint64_t executed = 0;
  for (;;) {
    const isa::Instr& in = code[w.pc++];
    switch (in.opc) {
      case isa::Opc::kPush: st[sp++] = in.imm; break;
      case isa::Opc::kLoad: st[sp++] = slots[in.a]; break;
      case isa::Opc::kStore: slots[in.a] = st[--sp]; break;
      case isa::Opc::kBuiltin: st[sp++] = w.builtins[in.a]; break;
      case isa::Opc::kBinary: {
        std::int64_t b = st[--sp];
        std::int64_t& a = st[sp - 1];
        switch (static_cast<isa::BinOp>(in.sub)) {
          case isa::BinOp::kOr: a = (a || b) ? 1 : 0; break;
          case isa::BinOp::kAnd: a = (a && b) ? 1 : 0; break;
          case isa::BinOp::kBitOr: a |= b; break;
          case isa::BinOp::kBitXor: a ^= b; break;
          case isa::BinOp::kBitAnd: a &= b; break;
          case isa::BinOp::kEq: a = a == b; break;
          case isa::BinOp::kNe: a = a != b; break;
          case isa::BinOp::kLt: a = a < b; break;
          case isa::BinOp::kLe: a = a <= b; break;
          case isa::BinOp::kGt: a = a > b; break;
          case isa::BinOp::kGe: a = a >= b; break;
          case isa::BinOp::kShl: a = (b < 0 || b > 63) ? 0 : static_cast<std::int64_t>(static_cast<std::uint64_t>(a) << b); break;
          case isa::BinOp::kShr: a = (b < 0 || b > 63) ? (a < 0 ? -1 : 0) : a >> b; break;
          case isa::BinOp::kAdd: a += b; break;
          case isa::BinOp::kSub: a -= b; break;
          case isa::BinOp::kMul: a *= b; break;
          case isa::BinOp::kDiv:
          case isa::BinOp::kMod: {
            if (b == 0) {
              Diagnosis d;
              d.title = "division by zero";
              d.message = fmt::format("{} divides by zero at line {}", warp_label(w), in.line);
              d.cycle = now().v;
              d.cta = ctas_[w.cta].id;
              d.warp = w.index;
              d.role = rc.name;
              d.loc = isa::SourceLoc{program_.source.get(), in.line, 1};
              throw UndefinedBehaviour{d};
            }
            a = static_cast<isa::BinOp>(in.sub) == isa::BinOp::kDiv ? a / b : a % b;
            break;
          }
        }
        break;
      }
      case isa::Opc::kUnary: {
        std::int64_t& a = st[sp - 1];
        a = in.sub == 0 ? -a : in.sub == 1 ? (a == 0 ? 1 : 0) : ~a;
        break;
      }
      case isa::Opc::kCall: {
        sp -= static_cast<int>(in.a);
        std::int64_t* args = st + sp;
        std::int64_t r = args[0];
        if (in.sub == 0) {
          for (std::uint32_t i = 1; i < in.a; ++i) r = std::min(r, args[i]);
        } else if (in.sub == 1) {
          for (std::uint32_t i = 1; i < in.a; ++i) r = std::max(r, args[i]);
        } else {
          if (args[1] <= 0) {
            Diagnosis d;
            d.title = "ceil_div by a value that is not positive";
            d.message = fmt::format("{}: ceil_div({}, {}) at line {}", warp_label(w), args[0], args[1], in.line);
            d.cycle = now().v;
            d.loc = isa::SourceLoc{program_.source.get(), in.line, 1};
            throw UndefinedBehaviour{d};
          }
          r = ceil_div(args[0], args[1]);
        }
        st[sp++] = r;
        break;
      }
      case isa::Opc::kJump: w.pc = in.a; break;
      case isa::Opc::kJumpIfZero:
        if (st[--sp] == 0) w.pc = in.a;
        break;
      case isa::Opc::kOp: {
        const isa::OpDesc& d = rc.ops[in.a];
        if (options_.op_log && options_.op_log->wants(ctas_[w.cta].id))
          options_.op_log->entries.push_back({ctas_[w.cta].id, w.index, w.role, in.a, now().v});
        std::int64_t v[48];
        std::copy(d.base_values.begin(), d.base_values.end(), v);
        for (auto it = d.dynamic_slots.rbegin(); it != d.dynamic_slots.rend(); ++it) v[*it] = st[--sp];
        ++w.ops;
        ++ops_;
        w.last_op = in.a;
        OpResult r = exec_op(id, in.a, d, v);
        if (r.kind == OpResult::kContinue) break;
        if (r.kind == OpResult::kBusy) {
          w.busy += r.cycles;
          if (traced(w.cta) && r.cycles > 0)
            options_.trace->slice(ctas_[w.cta].id, w.index, std::string(isa::op_spec(d.kind).name), "op", now().v, r.cycles,
                                  fmt::format(R"({{"op":{},"line":{}}})", sim::json_quote(d.text), d.loc.line));
          engine_.schedule(now() + Cycle(r.cycles), sim::Priority::kWarpStep, kEvWarpStep, id);
        }
        return;  // kBusy / kBlocked / kExited
      }
      case isa::Opc::kExit: warp_exit(id); return;
      case isa::Opc::kRegionBegin:
        if (w.region_start.empty()) {
          w.region_start.assign(program_.regions.size(), -1);
          w.region_time.assign(program_.regions.size(), 0);
        }
        w.region_start[in.a] = now().v;
        break;
      case isa::Opc::kRegionEnd:
        w.region_time[in.a] += now().v - w.region_start[in.a];
        w.region_start[in.a] = -1;
        break;
    }
    if (++executed > static_cast<std::uint64_t>(options_.max_instructions_without_time))
      throw WatchdogStop{fmt::format("{} executed {} instructions at cycle {} without any op taking time: an endless loop "
                                     "around line {}",
                                     warp_label(w), executed, now().v, in.line)};
  }
}

namespace {
// The flat index of element v[attr] of an array declaration (mbarrier or smem), or a diagnosis.
template <class Decl>
std::int64_t checked_index(const Decl& decl, std::int64_t i, std::string& error) {
  if (i >= 0 && i < decl.size) return i;
  error = decl.size == 0 ? fmt::format("{}[{}]: '{}' has no elements", decl.name, i, decl.name)
                         : fmt::format("{}[{}]: index out of range 0..{}", decl.name, i, decl.size - 1);
  return -1;
}
}  // namespace

std::uint32_t Simulator::flat_barrier(std::uint32_t warp, std::uint32_t op, const isa::OpDesc& d, int attr,
                                      const std::int64_t* v) {
  const isa::AttrSlot& s = d.attrs[attr];
  std::string error;
  std::int64_t i = checked_index(program_.mbarriers[s.decl], v[s.first], error);
  if (i < 0) ub(warp, op, "index out of range", error);
  return barrier_base_[s.decl] + static_cast<std::uint32_t>(i);
}

std::uint32_t Simulator::flat_smem(std::uint32_t warp, std::uint32_t op, const isa::OpDesc& d, int attr, const std::int64_t* v) {
  const isa::AttrSlot& s = d.attrs[attr];
  std::string error;
  std::int64_t i = checked_index(program_.smems[s.decl], v[s.first], error);
  if (i < 0) ub(warp, op, "index out of range", error);
  return smem_base_[s.decl] + static_cast<std::uint32_t>(i);
}

// Async-proxy reads of smem (TMA store, wgmma/umma operands, tcgen05.cp) must follow a
// fence.proxy.async by every warp that wrote the buffer through the generic proxy (semantics.md §3).
void Simulator::check_async_read(std::uint32_t warp, std::uint32_t op, const isa::OpDesc& d, int attr, const std::int64_t* v) {
  if (!d.attrs[attr].present || d.attrs[attr].decl < 0) return;
  std::uint32_t f = flat_smem(warp, op, d, attr, v);
  std::uint32_t dirty = ctas_[warps_[warp].cta].smem_dirty[f];
  if (dirty == 0) return;
  int writer = __builtin_ctz(dirty);
  const auto& decl = program_.smems[d.attrs[attr].decl];
  std::string name = !decl.array ? decl.name : fmt::format("{}[{}]", decl.name, f - smem_base_[d.attrs[attr].decl]);
  ub(warp, op, "missing fence.proxy.async",
     fmt::format("the async proxy reads {} which warp {} wrote with st.shared and did not fence: a race (the TMA or tensor "
                 "core may read stale data). Put fence.proxy.async in the writing warp after its stores and before the "
                 "barrier that orders them",
                 name, writer),
     true);
}

Cycle Simulator::l2_transfer(Cycle start, std::int64_t bytes) {
  // Whole-GPU L2 bandwidth as one shared queue (first-order; the memory-system issue refines it).
  Cycle begin = sim::max(start, l2_free_);
  double cycles = static_cast<double>(bytes) / machine_.l2_bytes_per_cycle + l2_carry_;
  auto whole = static_cast<std::int64_t>(cycles);
  l2_carry_ = cycles - static_cast<double>(whole);
  l2_free_ = begin + Cycle(whole);
  return l2_free_;
}

Cycle Simulator::tensor_issue(Warp& w, const isa::OpDesc& d, std::int64_t count, bool whole_sm, int sms) {
  Sm& sm = sms_[ctas_[w.cta].sm];
  std::int64_t flops = 2 * d.m * d.n * d.k * count;
  flops_ += flops;
  flops /= sms;  // this SM's share
  std::int64_t rate = machine_.tensor_rate(d.operand_bits, d.dtype == "tf32");
  if (whole_sm) {
    // wgmma / tcgen05.mma use the tensor cores of all four SM sub-partitions.
    std::int64_t occ = ceil_div(flops, rate);
    Cycle start = now();
    for (const Cycle& c : sm.pipe_free) start = sim::max(start, c);
    for (Cycle& c : sm.pipe_free) c = start + Cycle(occ);
    tensor_busy_ += 4 * occ;
    return start + Cycle(occ);
  }
  // mma.sync runs on the warp's own sub-partition: a quarter of the SM's mma.sync rate (scaled from the
  // 16-bit rate by the operand width like the wgmma rates).
  std::int64_t sync_rate = std::max<std::int64_t>(
      1, machine_.mma_sync_flops_per_cycle_16bit * rate / std::max<std::int64_t>(1, machine_.tensor_flops_per_cycle_16bit));
  std::int64_t occ = ceil_div(flops * 4, sync_rate);
  Cycle& pipe = sm.pipe_free[w.index % 4];
  Cycle start = sim::max(now(), pipe);
  pipe = start + Cycle(occ);
  tensor_busy_ += occ;
  return pipe;
}

// `value` is the count or the bytes; for arrive.expect_tx, `value2` is the arrival count (the bytes are
// expected first, then the arrivals: one atomic op, also when it lands remotely).
void Simulator::barrier_op(std::uint32_t warp, std::uint32_t op, std::uint32_t cta, std::uint32_t flat, int what,
                           std::int64_t value, bool remote, std::int64_t value2) {
  if (remote) {
    Async a;
    a.kind = what == kActArrive           ? AsyncKind::kArrive
             : what == kActArriveDrop     ? AsyncKind::kArriveDrop
             : what == kActExpectTx       ? AsyncKind::kExpectTx
             : what == kActArriveExpectTx ? AsyncKind::kArriveExpectTx
                                          : AsyncKind::kCompleteTx;
    a.cta = cta;
    a.barrier = flat;
    a.value = value;
    a.value2 = value2;
    a.warp = warp;
    a.op = op;
    schedule_async(now() + jit(machine_.remote_arrive_cycles), a);
    return;
  }
  if (what == kActArriveExpectTx) {
    barrier_op(warp, op, cta, flat, kActExpectTx, value, false);
    barrier_op(warp, op, cta, flat, kActArrive, value2, false);
    return;
  }
  Cta& c = ctas_[cta];
  MBarrier& b = c.barriers[flat];
  MBarrier::Result r = MBarrier::Result::kOk;
  switch (what) {
    case kActArrive: r = b.arrive(value); break;
    case kActArriveDrop: r = b.arrive_drop(value); break;
    case kActExpectTx: r = b.expect_tx(value); break;
    case kActCompleteTx: r = b.complete_tx(value); break;
    case kActArriveNoComplete: r = b.arrive_no_complete(value); break;
  }
  if (what != kActExpectTx && what != kActCompleteTx) note_arrival(cta, flat, warps_[warp].index);
  apply_barrier_result(r, cta, flat, warp, op, value, action_name(what));
}

Simulator::Targets Simulator::multicast_targets(std::uint32_t warp, std::uint32_t op, std::uint32_t cta, std::int64_t mask) {
  Targets t;
  if (mask == 0) {
    t.slot[t.count++] = cta;
    return t;
  }
  const Cluster& cl = clusters_[ctas_[cta].cluster];
  if (mask < 0 || mask >= (std::int64_t{1} << cl.ctas.size()))
    ub(warp, op, "bad multicast mask",
       fmt::format("multicast=0x{:x} names CTA ranks outside the cluster of {} CTAs", mask, cl.ctas.size()));
  for (std::size_t r = 0; r < cl.ctas.size(); ++r)
    if (mask & (std::int64_t{1} << r)) t.slot[t.count++] = cl.ctas[r];
  return t;
}

Simulator::OpResult Simulator::exec_op(std::uint32_t id, std::uint32_t op, const isa::OpDesc& d, std::int64_t* v) {
  Warp& w = warps_[id];
  Cta& cta = ctas_[w.cta];
  const Machine& m = machine_;
  auto val = [&](int attr) { return v[d.attrs[attr].first]; };
  auto present = [&](int attr) { return d.attrs[attr].present; };
  auto busy = [](std::int64_t c) { return OpResult{OpResult::kBusy, c}; };
  const OpResult blocked{OpResult::kBlocked, 0};
  std::int64_t lanes = d.lanes;

  switch (d.kind) {
    // ---- mbarrier ----
    case OpKind::kMbarrierInit: {
      std::uint32_t f = flat_barrier(id, op, d, 0, v);
      apply_barrier_result(cta.barriers[f].init(val(1)), w.cta, f, id, op, val(1), "mbarrier.init");
      return busy(m.mbarrier_arrive_cycles);
    }
    case OpKind::kMbarrierInval: {
      std::uint32_t f = flat_barrier(id, op, d, 0, v);
      if (!cta.barrier_waiters[f].empty())
        ub(id, op, "inval with waiters", fmt::format("mbarrier.inval of {} while {} warp(s) wait on it", barrier_name(w.cta, f),
                                                     cta.barrier_waiters[f].size()));
      apply_barrier_result(cta.barriers[f].inval(), w.cta, f, id, op, 0, "mbarrier.inval");
      return busy(m.mbarrier_arrive_cycles);
    }
    case OpKind::kArrive:
    case OpKind::kArriveDrop:
    case OpKind::kArriveNoComplete: {
      std::uint32_t f = flat_barrier(id, op, d, 0, v);
      std::int64_t count = present(1) ? val(1) : lanes;
      if (present(1) && lanes == 32) count *= 32;  // every lane arrives with count
      bool has_cta = d.kind != OpKind::kArriveNoComplete && present(2);
      std::uint32_t target = has_cta ? peer_cta(w, op, val(2)) : w.cta;
      int what = d.kind == OpKind::kArrive ? kActArrive : d.kind == OpKind::kArriveDrop ? kActArriveDrop : kActArriveNoComplete;
      barrier_op(id, op, target, f, what, count, target != w.cta);
      return busy(m.mbarrier_arrive_cycles);
    }
    case OpKind::kArriveExpectTx:
    case OpKind::kExpectTx:
    case OpKind::kCompleteTx: {
      std::uint32_t f = flat_barrier(id, op, d, 0, v);
      std::uint32_t target = present(2) ? peer_cta(w, op, val(2)) : w.cta;
      std::int64_t tx = val(1) * lanes;
      if (val(1) < 0) ub(id, op, "tx-count out of range", fmt::format("tx={} is negative", val(1)));
      bool remote = target != w.cta;
      int what = d.kind == OpKind::kCompleteTx ? kActCompleteTx : d.kind == OpKind::kExpectTx ? kActExpectTx : kActArriveExpectTx;
      barrier_op(id, op, target, f, what, tx, remote, lanes);
      return busy(m.mbarrier_arrive_cycles);
    }
    case OpKind::kWait:
    case OpKind::kTestWait: {
      std::uint32_t f = flat_barrier(id, op, d, 0, v);
      if (d.kind == OpKind::kWait && present(2) && peer_cta(w, op, val(2)) != w.cta)
        ub(id, op, "wait on a remote barrier",
           fmt::format("wait on {} of cluster rank {}: waits are only legal on the CTA's own barriers (PTX mbarrier.try_wait "
                       "takes a shared::cta address)",
                       barrier_name(w.cta, f), val(2)));
      MBarrier& b = cta.barriers[f];
      if (!b.valid())
        ub(id, op, "barrier used before init",
           fmt::format("{} on {}, which was never initialised (mbarrier.init) or was invalidated",
                       d.kind == OpKind::kWait ? "wait" : "test_wait", barrier_name(w.cta, f)));
      std::int64_t parity = val(1);
      if (parity != 0 && parity != 1) ub(id, op, "bad parity", fmt::format("parity={} must be 0 or 1", parity));
      bool done = b.test_parity(parity);
      // A completion becomes visible to observers mbarrier_wake_cycles after it happens, the same delay a
      // blocked waiter sees (measured: an arrive followed by a wait in the same warp takes 117-177 cycles).
      Cycle visible_at = cta.barrier_last_complete[f] + Cycle(m.mbarrier_wake_cycles);
      bool visible = !done || now() >= visible_at;
      if (d.kind == OpKind::kTestWait) {
        w.slots[d.result_slots[0]] = done && visible ? 1 : 0;
        return busy(m.mbarrier_test_wait_cycles);
      }
      if (done && visible) {
        cta.passed_waits[f] += 1;
        return busy(m.mbarrier_test_wait_cycles);
      }
      if (done) {  // completed, not visible yet: resume when it is (no further completion is involved)
        cta.passed_waits[f] += 1;
        block(w, WaitKind::kTimed, 0, 0, op, barrier_cause(barrier_decl(f)));
        wake_at(id, visible_at);
        return blocked;
      }
      std::uint32_t decl = barrier_decl(f);
      barrier_stats_[decl].waits += 1;
      cta.barrier_waiters[f].push_back(id);
      block(w, WaitKind::kBarrier, f, b.phase(), op, barrier_cause(decl));
      return blocked;
    }
    // ---- named barriers, cluster barrier, fences ----
    case OpKind::kBarSync:
    case OpKind::kBarArrive:
      named_arrive(w, static_cast<int>(val(0)), present(1) ? val(1) : -1, d.kind == OpKind::kBarSync, op);
      return d.kind == OpKind::kBarSync ? blocked : busy(m.op_issue_cycles);
    case OpKind::kClusterSync: {
      Cluster& cl = clusters_[cta.cluster];
      cl.sync_arrived += 1;
      cl.sync_waiters.push_back(id);
      block(w, WaitKind::kClusterSync, 0, 0, op, kCauseClusterSync);
      check_cluster_release(cta.cluster);
      return blocked;
    }
    case OpKind::kFenceProxyAsync:
      for (auto& dirty : cta.smem_dirty) dirty &= ~(1u << w.index);
      return busy(m.op_issue_cycles);
    case OpKind::kFenceMbarrierInit:
      return busy(m.op_issue_cycles);
    // ---- TMA ----
    case OpKind::kTmaLoad: {
      std::int64_t bytes = d.bytes >= 0 ? d.bytes : val(3);
      if (bytes <= 0 || bytes % 16 != 0)
        ub(id, op, "bad bulk copy size", fmt::format("tma.load of {} bytes: must be a positive multiple of 16", bytes));
      std::uint32_t f = flat_barrier(id, op, d, 5, v);
      flat_smem(id, op, d, 4, v);
      Sm& sm = sms_[cta.sm];
      Cycle start = sim::max(now() + Cycle(m.tma_issue_cycles), sm.tma_free);
      std::int64_t occ = transfer_cycles(bytes, m.tma_bytes_per_cycle);
      sm.tma_free = start + Cycle(occ);
      tma_busy_ += occ;
      Cycle done = sim::max(start + Cycle(occ), l2_transfer(start, bytes)) + jit(m.tma_load_latency_cycles);
      bytes_loaded_ += bytes;
      std::int64_t mask = present(6) ? val(6) : 0;
      Targets targets = multicast_targets(id, op, w.cta, mask);
      // bar_cta=R (cta_group::2 loads): the data lands here, the completion on cluster rank R's barrier.
      if (present(8)) {
        if (mask != 0) ub(id, op, "bar_cta with multicast", "tma.load: give either multicast= or bar_cta=, not both");
        targets.slot[0] = peer_cta(w, op, val(8));
      }
      bool trace = traced(w.cta);
      for (std::uint32_t t : targets) {
        Async a;
        a.kind = AsyncKind::kCompleteTx;
        a.cta = t;
        a.barrier = f;
        a.value = bytes;
        a.warp = id;
        a.op = op;
        if (trace && traced(t)) {
          a.flow = flow_next_++;
          options_.trace->flow(cta.id, w.index, a.flow, now().v, true);
        }
        schedule_async(done, a);
      }
      if (trace)
        options_.trace->async_slice(cta.id, fmt::format("TMA load {} B -> {}", bytes, barrier_name(w.cta, f)), "tma",
                                    flow_next_++, now().v, done.v);
      return busy(m.tma_issue_cycles);
    }
    case OpKind::kTmaStore: {
      std::int64_t bytes = d.bytes >= 0 ? d.bytes : val(3);
      if (bytes <= 0 || bytes % 16 != 0)
        ub(id, op, "bad bulk copy size", fmt::format("tma.store of {} bytes: must be a positive multiple of 16", bytes));
      check_async_read(id, op, d, 4, v);
      Sm& sm = sms_[cta.sm];
      Cycle start = sim::max(now() + Cycle(m.tma_issue_cycles), sm.tma_free);
      std::int64_t occ = transfer_cycles(bytes, m.tma_store_bytes_per_cycle);
      sm.tma_free = start + Cycle(occ);
      tma_busy_ += occ;
      Cycle read = start + Cycle(occ) + jit(m.tma_store_read_cycles);
      Cycle write = sim::max(read, l2_transfer(start, bytes)) + jit(m.tma_store_latency_cycles);
      w.bulk_open_read = sim::max(w.bulk_open_read, read);
      w.bulk_open_write = sim::max(w.bulk_open_write, write);
      bytes_stored_ += bytes;
      if (traced(w.cta))
        options_.trace->async_slice(cta.id, fmt::format("TMA store {} B", bytes), "tma", flow_next_++, now().v, write.v);
      return busy(m.tma_issue_cycles);
    }
    case OpKind::kTmaCommit: {
      // Groups whose writes are complete can no longer be waited on: drop them (bounded memory).
      std::erase_if(w.bulk_groups, [&](const auto& g) { return g.second <= now(); });
      w.bulk_groups.emplace_back(sim::max(w.bulk_open_read, now()), sim::max(w.bulk_open_write, now()));
      w.bulk_open_read = w.bulk_open_write = Cycle(0);
      return busy(m.op_issue_cycles);
    }
    case OpKind::kTmaWait: {
      std::int64_t n = val(0);
      bool read = val(1) != 0;
      Cycle until = now();
      std::int64_t older = static_cast<std::int64_t>(w.bulk_groups.size()) - n;
      for (std::int64_t i = 0; i < older; ++i)
        until = sim::max(until, read ? w.bulk_groups[i].first : w.bulk_groups[i].second);
      if (!read && older > 0) w.bulk_groups.erase(w.bulk_groups.begin(), w.bulk_groups.begin() + older);
      if (until <= now()) return busy(m.op_issue_cycles);
      block(w, WaitKind::kTimed, 0, 0, op, read ? kCauseTmaWaitRead : kCauseTmaWait);
      wake_at(id, until);
      return blocked;
    }
    case OpKind::kTmaPrefetch:
      return busy(m.tma_issue_cycles);
    // ---- cp.async ----
    case OpKind::kCpAsync: {
      std::int64_t bytes = d.bytes >= 0 ? d.bytes : val(0);
      if (bytes <= 0) ub(id, op, "bad size", fmt::format("cp.async of {} bytes", bytes));
      flat_smem(id, op, d, 1, v);
      Sm& sm = sms_[cta.sm];
      Cycle start = sim::max(now() + Cycle(m.op_issue_cycles), sm.lsu_free);
      std::int64_t occ = transfer_cycles(bytes, m.lsu_bytes_per_cycle);
      sm.lsu_free = start + Cycle(occ);
      lsu_busy_ += occ;
      Cycle done = sim::max(start + Cycle(occ), l2_transfer(start, bytes)) + jit(m.cp_async_latency_cycles);
      bytes_loaded_ += bytes;
      w.cp_open = sim::max(w.cp_open, done);
      w.cp_all = sim::max(w.cp_all, done);
      return busy(m.op_issue_cycles);
    }
    case OpKind::kCpAsyncCommit:
      w.cp_groups.push_back(sim::max(w.cp_open, now()));
      w.cp_open = Cycle(0);
      if (w.cp_groups.size() > 64) w.cp_groups.erase(w.cp_groups.begin());  // long complete: a wait would not see them
      return busy(m.op_issue_cycles);
    case OpKind::kCpAsyncWait: {
      std::int64_t older = static_cast<std::int64_t>(w.cp_groups.size()) - val(0);
      Cycle until = now();
      for (std::int64_t i = 0; i < older; ++i) until = sim::max(until, w.cp_groups[i]);
      if (older > 0) w.cp_groups.erase(w.cp_groups.begin(), w.cp_groups.begin() + older);
      if (until <= now()) return busy(m.op_issue_cycles);
      block(w, WaitKind::kTimed, 0, 0, op, kCauseCpAsyncWait);
      wake_at(id, until);
      return blocked;
    }
    case OpKind::kCpAsyncArrive: {
      std::uint32_t f = flat_barrier(id, op, d, 0, v);
      bool noinc = val(1) != 0;
      if (!noinc) {
        // Without .noinc the pending count is raised first, so the async arrive leaves it unchanged.
        MBarrier::Result r = cta.barriers[f].raise_pending(lanes);
        apply_barrier_result(r, w.cta, f, id, op, lanes, "cp.async.mbarrier.arrive");
      }
      Async a;
      a.kind = AsyncKind::kArrive;
      a.cta = w.cta;
      a.barrier = f;
      a.value = lanes;
      a.warp = id;
      a.op = op;
      schedule_async(sim::max(w.cp_all, now()), a);
      return busy(m.mbarrier_arrive_cycles);
    }
    // ---- generic memory traffic ----
    case OpKind::kLdShared:
    case OpKind::kStShared:
    case OpKind::kLdmatrix: {
      std::int64_t bytes = d.bytes >= 0 ? d.bytes : val(0);
      if (present(1)) {
        std::uint32_t f = flat_smem(id, op, d, 1, v);
        if (d.kind == OpKind::kStShared) cta.smem_dirty[f] |= 1u << w.index;
      }
      return busy(std::max<std::int64_t>(1, transfer_cycles(bytes, m.smem_bytes_per_cycle)));
    }
    case OpKind::kLdGlobal:
    case OpKind::kStGlobal: {
      std::int64_t bytes = d.bytes >= 0 ? d.bytes : val(0);
      Sm& sm = sms_[cta.sm];
      Cycle start = sim::max(now() + Cycle(m.op_issue_cycles), sm.lsu_free);
      std::int64_t occ = transfer_cycles(bytes, m.lsu_bytes_per_cycle);
      sm.lsu_free = start + Cycle(occ);
      lsu_busy_ += occ;
      Cycle done = sim::max(start + Cycle(occ), l2_transfer(start, bytes));
      if (d.kind == OpKind::kStGlobal) {
        bytes_stored_ += bytes;
        return busy(m.op_issue_cycles);
      }
      bytes_loaded_ += bytes;
      block(w, WaitKind::kTimed, 0, 0, op, kCauseLdGlobal);
      wake_at(id, done + jit(m.global_load_latency_cycles));
      return blocked;
    }
    // ---- tensor cores ----
    case OpKind::kMmaSync: {
      std::int64_t count = val(2);
      if (count < 1) ub(id, op, "bad count", fmt::format("count={} must be positive", count));
      Cycle done = tensor_issue(w, d, count, false) + jit(m.mma_sync_latency_cycles);
      block(w, WaitKind::kTimed, 0, 0, op, kCauseMmaSync);
      wake_at(id, done);
      return blocked;
    }
    case OpKind::kWgmmaFence:
    case OpKind::kWgmma:
    case OpKind::kWgmmaCommit:
    case OpKind::kWgmmaWait: {
      // Warpgroup-collective (.sync.aligned): the four warps of the warpgroup meet here.
      int wg_index = w.index / 4;
      WarpgroupState& wg = cta.warpgroups[wg_index];
      for (int i = 0; i < 4; ++i) {
        int wi = wg_index * 4 + i;
        if (wi >= program_.warps || program_.warp_role[wi] != w.role)
          ub(id, op, "wgmma outside a whole warpgroup",
             fmt::format("'{}' is warpgroup-collective: warps {}..{} must all run it, but warp {} {}", d.text, wg_index * 4,
                         wg_index * 4 + 3, wi,
                         wi >= program_.warps ? "does not exist"
                         : program_.warp_role[wi] < 0
                             ? "has no role"
                             : fmt::format("runs role '{}'", program_.roles[program_.warp_role[wi]].name)));
      }
      if (wg.arrived == 0) {
        wg.op = op;
      } else if (wg.op != op) {
        ub(id, op, "warpgroup divergence",
           fmt::format("warps of warpgroup {} reach different warpgroup ops: '{}' (line {}) and '{}' (line {}); wgmma ops are "
                       ".aligned: all four warps must execute the same one",
                       wg_index, op_of(w, wg.op).text, op_of(w, wg.op).loc.line, d.text, d.loc.line));
      }
      wg.arrived += 1;
      wg.waiting.push_back(id);
      std::uint16_t cause = d.kind == OpKind::kWgmmaWait ? kCauseWgmmaWait : kCauseConvergence;
      block(w, WaitKind::kCollective, static_cast<std::uint32_t>(wg_index), 0, op, cause);
      if (wg.arrived < 4) return blocked;
      Cycle resume = now() + Cycle(m.op_issue_cycles);
      if (d.kind == OpKind::kWgmma) {
        check_async_read(id, op, d, 2, v);
        check_async_read(id, op, d, 3, v);
        std::int64_t count = val(4);
        if (count < 1) ub(id, op, "bad count", fmt::format("count={} must be positive", count));
        Cycle done = tensor_issue(w, d, count, true) + jit(m.wgmma_latency_cycles);
        wg.open_done = sim::max(wg.open_done, done);
        wg.open_nonempty = true;
        resume = now() + Cycle(m.op_issue_cycles * count);
        if (traced(w.cta))
          options_.trace->async_slice(cta.id, fmt::format("wgmma {} x{} (wg {})", d.shape, count, wg_index), "mma",
                                      flow_next_++, now().v, done.v);
      } else if (d.kind == OpKind::kWgmmaCommit) {
        wg.groups.push_back(wg.open_nonempty ? wg.open_done : now());
        wg.open_nonempty = false;
        wg.open_done = Cycle(0);
      } else if (d.kind == OpKind::kWgmmaWait) {
        std::int64_t older = static_cast<std::int64_t>(wg.groups.size()) - val(0);
        for (std::int64_t i = 0; i < older; ++i) resume = sim::max(resume, wg.groups[i]);
        if (older > 0) wg.groups.erase(wg.groups.begin(), wg.groups.begin() + older);
      }
      for (std::uint32_t wid : wg.waiting) wake_at(wid, resume);
      wg.waiting.clear();
      wg.arrived = 0;
      return blocked;
    }
    // ---- tensor memory and tcgen05 ----
    case OpKind::kTmemAlloc: {
      std::int64_t cols = val(0);
      if (cols < 32 || cols > 512 || (cols & (cols - 1)) != 0)
        ub(id, op, "bad TMEM column count", fmt::format("tmem.alloc cols={}: must be a power of 2 in 32..512", cols));
      if (cta.relinquished)
        ub(id, op, "alloc after relinquish",
           fmt::format("tmem.alloc after this CTA executed tmem.relinquish (tcgen05.relinquish_alloc_permit): illegal"));
      Sm& sm = sms_[cta.sm];
      sm.tmem_waiters.push_back(id);
      block(w, WaitKind::kTmemAlloc, static_cast<std::uint32_t>(cta.sm), cols, op, kCauseTmemAlloc);
      tmem_requester_ = id;
      tmem_try_grant(cta.sm);
      tmem_requester_ = ~0u;
      if (w.state == WarpState::kReady) return busy(m.tmem_alloc_cycles);  // granted at once
      return blocked;
    }
    case OpKind::kTmemDealloc: {
      std::int64_t addr = val(0) & 0xFFFF, cols = val(1);
      auto it = std::find_if(cta.tmem.begin(), cta.tmem.end(), [&](const TmemAlloc& a) { return a.col == addr; });
      if (it == cta.tmem.end() || it->cols != cols)
        ub(id, op, "dealloc of unallocated TMEM",
           fmt::format("tmem.dealloc of {} columns at column {}, which this CTA did not allocate{}", cols, addr,
                       it == cta.tmem.end() ? "" : fmt::format(" (it allocated {} columns there)", it->cols)));
      Sm& sm = sms_[cta.sm];
      std::int64_t chunks = cols / 32, start = addr / 32;
      sm.tmem_used &= static_cast<std::uint16_t>(~(((1u << chunks) - 1) << start));
      cta.tmem.erase(it);
      tmem_try_grant(cta.sm);
      return busy(m.tmem_alloc_cycles);
    }
    case OpKind::kTmemRelinquish:
      cta.relinquished = true;
      return busy(m.op_issue_cycles);
    case OpKind::kUmma: {
      check_async_read(id, op, d, 2, v);
      check_async_read(id, op, d, 3, v);
      std::int64_t count = val(4);
      if (count < 1) ub(id, op, "bad count", fmt::format("count={} must be positive", count));
      Sm& sm = sms_[cta.sm];
      // Ordered after this thread's earlier tcgen05.cp (scale factors) (semantics.md §6).
      for (Cycle& c : sm.pipe_free) c = sim::max(c, w.tc_cp_done);
      std::int64_t group = val(5);
      Cycle end;
      if (group == 2) {
        // cta_group::2: one MMA for the CTA pair; each SM of the pair computes half of M.
        end = tensor_issue(w, d, count, true, 2);
        const Cluster& cl = clusters_[cta.cluster];
        std::uint32_t peer = cl.ctas.size() > 1 ? cl.ctas[cta.rank ^ 1] : w.cta;
        Sm& psm = sms_[ctas_[peer].sm];
        for (Cycle& c : psm.pipe_free) c = sim::max(c, end);
      } else {
        end = tensor_issue(w, d, count, true);
      }
      Cycle done = end + jit(m.umma_latency_cycles);
      w.tc_done = sim::max(w.tc_done, done);
      if (traced(w.cta))
        options_.trace->async_slice(cta.id, fmt::format("umma {} x{}", d.shape, count), "mma", flow_next_++, now().v, done.v);
      return busy(m.op_issue_cycles);
    }
    case OpKind::kUmmaCommit: {
      std::uint32_t f = flat_barrier(id, op, d, 0, v);
      std::int64_t mask = val(1);
      Targets targets = multicast_targets(id, op, w.cta, mask);
      Cycle at = sim::max(sim::max(w.tc_done, w.tc_cp_done), now());
      for (std::uint32_t t : targets) {
        Async a;
        a.kind = AsyncKind::kArrive;
        a.cta = t;
        a.barrier = f;
        a.value = 1;
        a.warp = id;
        a.op = op;
        if (traced(w.cta) && traced(t)) {
          a.flow = flow_next_++;
          options_.trace->flow(cta.id, w.index, a.flow, now().v, true);
        }
        schedule_async(t == w.cta ? at : at + jit(m.remote_arrive_cycles), a);
      }
      return busy(m.op_issue_cycles);
    }
    case OpKind::kTmemLd:
    case OpKind::kTmemSt: {
      Cycle& done = d.kind == OpKind::kTmemLd ? w.tmem_ld_done : w.tmem_st_done;
      done = sim::max(done, now()) + Cycle(ceil_div(m.tmem_ld_cycles * d.bytes, 4096));
      return busy(m.op_issue_cycles);
    }
    case OpKind::kTmemWait: {
      Cycle until = val(0) ? w.tmem_ld_done : w.tmem_st_done;
      if (until <= now()) return busy(m.op_issue_cycles);
      block(w, WaitKind::kTimed, 0, 0, op, kCauseTmemWait);
      wake_at(id, until);
      return blocked;
    }
    case OpKind::kTmemCp: {
      check_async_read(id, op, d, 1, v);
      Cycle start = sim::max(now(), w.tc_cp_done);
      w.tc_cp_done = start + Cycle(ceil_div(m.tmem_cp_cycles * d.bytes, 4096));
      w.tc_done = sim::max(w.tc_done, w.tc_cp_done);
      return busy(m.op_issue_cycles);
    }
    // ---- cluster launch control ----
    case OpKind::kClcTryCancel: {
      if (w.clc_failure_seen)
        ub(id, op, "try_cancel after an observed failure",
           "clusterlaunchcontrol.try_cancel issued after this warp observed a response saying the grid is exhausted "
           "(query -1): undefined (PTX 9.7.13.17)");
      std::uint32_t f = flat_barrier(id, op, d, 0, v);
      std::int64_t first = -1;
      if (next_cluster_ < num_clusters_) {
        // The cancelled cluster is the next one the hardware would launch; its first CTA (rank 0) id.
        std::int64_t ci = next_cluster_++;
        const auto& p = program_;
        std::int64_t ncx = p.grid[0] / p.cluster[0], ncy = p.grid[1] / p.cluster[1];
        std::int64_t cx = ci % ncx, cy = (ci / ncx) % ncy, cz = ci / (ncx * ncy);
        first = cx * p.cluster[0] + cy * p.cluster[1] * p.grid[0] + cz * p.cluster[2] * p.grid[0] * p.grid[1];
      }
      Targets targets = multicast_targets(id, op, w.cta, val(1) ? (std::int64_t{1} << clusters_[cta.cluster].ctas.size()) - 1 : 0);
      Cycle at = now() + jit(m.clc_latency_cycles);
      for (std::uint32_t t : targets) {
        Async a;
        a.kind = AsyncKind::kClcResponse;
        a.cta = t;
        a.barrier = f;
        a.value = 16;  // complete_tx of the 16-byte response
        a.value2 = first;
        a.warp = id;
        a.op = op;
        schedule_async(at, a);
      }
      return busy(m.op_issue_cycles);
    }
    case OpKind::kClcQuery: {
      std::int64_t value = 0;
      bool found = false;
      if (present(0)) {
        std::uint32_t f = flat_barrier(id, op, d, 0, v);
        for (const auto& [bf, val2] : cta.clc_responses)
          if (bf == f) value = val2, found = true;
      } else if (cta.clc_any) {
        value = cta.clc_latest;
        found = true;
      }
      if (!found)
        ub(id, op, "query before a response",
           "clc.query reads a try_cancel response that has not landed (wait on its barrier first)");
      if (value < 0) w.clc_failure_seen = true;
      w.slots[d.result_slots[0]] = value;
      return busy(m.op_issue_cycles);
    }
    // ---- time ----
    case OpKind::kCompute:
      if (val(0) < 0) ub(id, op, "negative cycles", fmt::format("compute cycles={}", val(0)));
      return val(0) == 0 ? OpResult{} : busy(val(0));
    case OpKind::kSleep:
      if (val(0) < 0) ub(id, op, "negative cycles", fmt::format("sleep cycles={}", val(0)));
      if (val(0) == 0) return OpResult{};
      block(w, WaitKind::kTimed, 0, 0, op, kCauseSleep);
      wake_at(id, now() + Cycle(val(0)));
      return blocked;
    case OpKind::kCount: break;
  }
  return OpResult{};
}

}  // namespace smpipe::models::detail
