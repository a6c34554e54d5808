#include "models/gpu/gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>

#include "models/gpu/simulator.hpp"
#include "sim/trace_writer.hpp"

namespace smpipe::models {

using namespace detail;

void check_fits(const isa::Program& p, const Machine& m) {
  auto where = [&](const isa::SourceLoc& loc, const std::string& msg) {
    return loc.file ? isa::InputError(loc, msg) : isa::InputError(msg);
  };
  std::int64_t smem = p.smem_bytes();
  if (smem > m.smem_per_cta_max)
    throw isa::InputError(fmt::format(
        "kernel {} needs {} bytes of shared memory per CTA ({}), but {} allows at most {} bytes per CTA", p.kernel_name, smem,
        [&] {
          std::vector<std::string> parts;
          for (const auto& s : p.smems) parts.push_back(fmt::format("{} {}x{}", s.name, s.size, s.bytes));
          if (p.smem_extra) parts.push_back(fmt::format("smem= {}", p.smem_extra));
          if (!p.mbarriers.empty()) parts.push_back("mbarriers");
          return fmt::format("{}", fmt::join(parts, " + "));
        }(),
        m.name, m.smem_per_cta_max));
  if (p.warps > m.max_warps_per_sm)
    throw isa::InputError(fmt::format("kernel {} has {} warps per CTA; {} holds at most {} per SM", p.kernel_name, p.warps,
                                      m.name, m.max_warps_per_sm));
  if (p.cluster_size() > m.max_cluster_size)
    throw isa::InputError(fmt::format("cluster of {} CTAs; {} allows at most {}", p.cluster_size(), m.name, m.max_cluster_size));
  if (p.cluster_size() > m.sm_count)
    throw isa::InputError(fmt::format("cluster of {} CTAs does not fit on {} SMs", p.cluster_size(), m.sm_count));
  for (const auto& r : p.roles) {
    for (const auto& op : r.ops) {
      using K = isa::OpKind;
      bool tcgen05 = op.kind == K::kUmma || op.kind == K::kUmmaCommit || op.kind == K::kTmemAlloc || op.kind == K::kTmemDealloc ||
                     op.kind == K::kTmemRelinquish || op.kind == K::kTmemLd || op.kind == K::kTmemSt ||
                     op.kind == K::kTmemWait || op.kind == K::kTmemCp;
      if (tcgen05 && m.tmem_columns == 0)
        throw where(op.loc, fmt::format("'{}' needs tensor memory (tcgen05, sm_100), which {} does not have; try --gpu b200",
                                        op.text, m.name));
      if ((op.kind == K::kClcTryCancel || op.kind == K::kClcQuery) && m.clc_latency_cycles == 0)
        throw where(op.loc, fmt::format("'{}' needs cluster launch control (sm_100), which {} does not have", op.text, m.name));
      bool wg = op.kind == K::kWgmma || op.kind == K::kWgmmaFence || op.kind == K::kWgmmaCommit || op.kind == K::kWgmmaWait;
      if (wg && m.has_wgmma == 0)
        throw where(op.loc, fmt::format("'{}' is sm_90a only; {} has no wgmma (use umma)", op.text, m.name));
      if ((op.kind == K::kWgmma || op.kind == K::kMmaSync || op.kind == K::kUmma) &&
          m.tensor_rate(op.operand_bits, op.dtype == "tf32") == 0)
        throw where(op.loc, fmt::format("{} has no tensor-core rate for {}-bit operands ('{}')", m.name, op.operand_bits, op.text));
    }
  }
}

RunResult simulate(const isa::Program& program, const Machine& machine, const RunOptions& options) {
  check_fits(program, machine);
  Simulator s(program, machine, options);
  return s.run();
}

namespace detail {

Simulator::Simulator(const isa::Program& program, const Machine& machine, const RunOptions& options)
    : program_(program), machine_(machine), options_(options), engine_(*this), rng_(options.seed) {
  for (const auto& b : program_.mbarriers) {
    barrier_base_.push_back(barrier_count_);
    barrier_count_ += static_cast<std::uint32_t>(b.size);
  }
  for (const auto& s : program_.smems) {
    smem_base_.push_back(smem_count_);
    smem_count_ += static_cast<std::uint32_t>(s.size);
  }
  sms_.resize(machine_.sm_count);
  sm_used_.assign(machine_.sm_count, false);
  num_clusters_ = program_.num_ctas() / program_.cluster_size();
  for (const char* c : {"(none)", "cluster.sync", "cp.async.wait", "ld.global", "mma.sync", "wgmma.wait",
                        "warpgroup convergence", "tma.wait read (bulk store smem)", "tma.wait (bulk store)", "tmem.alloc",
                        "tmem.wait", "sleep"})
    causes_.emplace_back(c);
  for (int id = 0; id < 16; ++id) causes_.push_back(fmt::format("named barrier {}", id));
  for (std::size_t d = 0; d < program_.mbarriers.size(); ++d)
    barrier_causes_.push_back(cause_id("mbarrier " + program_.mbarriers[d].name));
  for (const auto& r : program_.roles) {
    RoleStats rs;
    rs.name = r.name;
    role_stats_.push_back(rs);
  }
  for (const auto& b : program_.mbarriers) barrier_stats_.push_back(BarrierStats{b.name, 0, 0, 0, 0});
  noted_decl_.assign(program_.mbarriers.size(), false);
}

void Simulator::trace_stage(std::uint32_t cta, std::uint32_t flat, bool ready) {
  Cta& c = ctas_[cta];
  if (c.ready[flat] == ready || !traced(cta)) return;
  c.ready[flat] = ready;
  std::uint32_t decl = barrier_decl(flat);
  c.ready_count[decl] += ready ? 1 : -1;
  options_.trace->counter(c.id, "ready stages: " + program_.mbarriers[decl].name, now().v, c.ready_count[decl]);
}

void Simulator::note_arrival(std::uint32_t cta, std::uint32_t flat, int warp_index) {
  Cta& c = ctas_[cta];
  trace_stage(cta, flat, false);
  if (warp_index >= 0 && warp_index < 32) c.arrive_mask[flat] |= 1u << warp_index;
}

std::uint16_t Simulator::cause_id(const std::string& name) {
  for (std::size_t i = 0; i < causes_.size(); ++i)
    if (causes_[i] == name) return static_cast<std::uint16_t>(i);
  causes_.push_back(name);
  return static_cast<std::uint16_t>(causes_.size() - 1);
}

std::uint16_t Simulator::barrier_cause(std::uint32_t decl) { return barrier_causes_[decl]; }

Cycle Simulator::jit(std::int64_t latency) {
  if (options_.jitter_pct <= 0 || latency <= 0) return Cycle(latency);
  std::int64_t spread = latency * options_.jitter_pct / 100;
  return Cycle(std::max<std::int64_t>(0, latency + rng_.uniform(-spread, spread)));
}

bool Simulator::traced(std::uint32_t cta) const { return options_.trace && options_.trace->wants(ctas_[cta].id); }

std::uint32_t Simulator::barrier_decl(std::uint32_t flat) const {
  auto it = std::upper_bound(barrier_base_.begin(), barrier_base_.end(), flat);
  return static_cast<std::uint32_t>(it - barrier_base_.begin() - 1);
}

std::string Simulator::barrier_name(std::uint32_t, std::uint32_t flat) const {
  std::uint32_t d = barrier_decl(flat);
  const auto& decl = program_.mbarriers[d];
  if (!decl.array) return decl.name;
  return fmt::format("{}[{}]", decl.name, flat - barrier_base_[d]);
}

std::string Simulator::barrier_state(std::uint32_t cta, std::uint32_t flat) const {
  const MBarrier& b = ctas_[cta].barriers[flat];
  if (!b.valid()) return "not initialised";
  return fmt::format("phase {} (parity {}), pending {}/{}, tx {}", b.phase(), b.phase() & 1, b.pending(), b.expected(), b.tx());
}

const isa::OpDesc& Simulator::op_of(const Warp& w, std::uint32_t op) const { return program_.roles[w.role].ops[op]; }

std::string Simulator::warp_label(const Warp& w) const {
  return fmt::format("CTA {} warp {} ({})", ctas_[w.cta].id, w.index, w.role >= 0 ? program_.roles[w.role].name : "idle");
}

void Simulator::ub(std::uint32_t warp, std::uint32_t op, const std::string& title, const std::string& message, bool hazard) {
  Diagnosis d;
  d.title = title;
  d.message = message;
  d.cycle = now().v;
  d.hazard = hazard;
  if (warp < warps_.size()) {
    const Warp& w = warps_[warp];
    d.cta = ctas_[w.cta].id;
    d.warp = w.index;
    if (w.role >= 0) {
      d.role = program_.roles[w.role].name;
      const isa::OpDesc& o = op_of(w, op);
      d.loc = o.loc;
      d.op_text = o.text;
    }
  }
  throw UndefinedBehaviour{d};
}

std::uint32_t Simulator::peer_cta(const Warp& w, std::uint32_t op, std::int64_t rank) {
  const Cta& c = ctas_[w.cta];
  if (rank < 0) return w.cta;
  const Cluster& cl = clusters_[c.cluster];
  if (rank >= static_cast<std::int64_t>(cl.ctas.size()))
    ub(static_cast<std::uint32_t>(&w - warps_.data()), op, "bad cluster rank",
       fmt::format("cta={} but the cluster has {} CTAs (ranks 0..{})", rank, cl.ctas.size(), cl.ctas.size() - 1));
  return cl.ctas[rank];
}

// ---- launch ----

bool Simulator::place_cluster(std::int64_t ci) {
  const auto& p = program_;
  std::int64_t cs = p.cluster_size();
  std::int64_t smem = p.smem_bytes() + machine_.smem_reserved_per_cta;
  std::vector<int> chosen;
  // Least-loaded SMs first, lowest index on ties: the first wave spreads one CTA per SM.
  std::vector<int> order(sms_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sms_[a].ctas < sms_[b].ctas; });
  for (int s : order) {
    const Sm& sm = sms_[s];
    if (sm.ctas + 1 > machine_.max_ctas_per_sm || sm.warps + p.warps > machine_.max_warps_per_sm ||
        sm.smem + smem > machine_.smem_per_sm)
      continue;
    chosen.push_back(s);
    if (static_cast<std::int64_t>(chosen.size()) == cs) break;
  }
  if (static_cast<std::int64_t>(chosen.size()) < cs) return false;
  // Cluster coordinates -> CTA ids (x fastest), ranks x fastest within the cluster.
  std::int64_t ncx = p.grid[0] / p.cluster[0], ncy = p.grid[1] / p.cluster[1];
  std::int64_t cx = ci % ncx, cy = (ci / ncx) % ncy, cz = ci / (ncx * ncy);
  if (static_cast<std::int64_t>(clusters_.size()) <= ci) clusters_.resize(ci + 1);
  Cluster& cl = clusters_[ci];
  for (int rank = 0; rank < cs; ++rank) {
    std::int64_t lx = rank % p.cluster[0], ly = (rank / p.cluster[0]) % p.cluster[1], lz = rank / (p.cluster[0] * p.cluster[1]);
    std::int64_t x = cx * p.cluster[0] + lx, y = cy * p.cluster[1] + ly, z = cz * p.cluster[2] + lz;
    std::int64_t id = x + y * p.grid[0] + z * p.grid[0] * p.grid[1];
    cl.ctas.push_back(create_cta(id, ci, rank, chosen[rank]));
  }
  for (std::uint32_t slot : cl.ctas) cl.live_warps += ctas_[slot].live_warps;
  // Start the role warps in warp order, after all CTAs of the cluster exist (remote arrives need them).
  for (std::uint32_t slot : cl.ctas) {
    Cta& c = ctas_[slot];
    for (int i = 0; i < p.warps; ++i)
      if (warps_[c.first_warp + i].state == WarpState::kReady)
        engine_.schedule(now(), sim::Priority::kWarpStep, kEvWarpStep, c.first_warp + i);
  }
  return true;
}

std::uint32_t Simulator::create_cta(std::int64_t cta_id, std::int64_t cluster, int rank, int sm_index) {
  const auto& p = program_;
  auto slot = static_cast<std::uint32_t>(ctas_.size());
  ctas_.emplace_back();
  Cta& c = ctas_.back();
  c.id = cta_id;
  c.cluster = cluster;
  c.rank = rank;
  c.sm = sm_index;
  c.barriers.resize(barrier_count_);
  c.barrier_waiters.resize(barrier_count_);
  c.barrier_last_complete.assign(barrier_count_, Cycle(-(std::int64_t{1} << 40)));  // no completion yet
  c.arrive_mask.assign(barrier_count_, 0);
  c.ready.assign(barrier_count_, 0);
  c.passed_waits.assign(barrier_count_, 0);
  c.ready_count.assign(p.mbarriers.size(), 0);
  c.last_arrive_mask.assign(barrier_count_, 0);
  for (std::size_t d = 0; d < p.mbarriers.size(); ++d)
    if (p.mbarriers[d].count)
      for (int e = 0; e < p.mbarriers[d].size; ++e) c.barriers[barrier_base_[d] + e].init(*p.mbarriers[d].count);
  c.warpgroups.resize((p.warps + 3) / 4);
  c.smem_dirty.assign(smem_count_, 0);
  Sm& sm = sms_[sm_index];
  sm.ctas += 1;
  sm.warps += p.warps;
  sm.smem += p.smem_bytes() + machine_.smem_reserved_per_cta;
  sm_used_[sm_index] = true;
  ++live_ctas_;
  peak_ctas_ = std::max(peak_ctas_, live_ctas_);
  ++ctas_run_;
  c.first_warp = static_cast<std::uint32_t>(warps_.size());
  std::int64_t gx = p.grid[0], gy = p.grid[1];
  for (int i = 0; i < p.warps; ++i) {
    warps_.emplace_back();
    Warp& w = warps_.back();
    w.cta = slot;
    w.index = i;
    w.role = p.warp_role[i];
    w.started = now();
    using B = isa::Builtin;
    auto set = [&](B b, std::int64_t v) { w.builtins[static_cast<int>(b)] = v; };
    set(B::kWarp, i);
    set(B::kWarpgroup, i / 4);
    set(B::kCta, cta_id);
    set(B::kCtaX, cta_id % gx);
    set(B::kCtaY, (cta_id / gx) % gy);
    set(B::kCtaZ, cta_id / (gx * gy));
    set(B::kClusterRank, rank);
    set(B::kNumCtas, p.num_ctas());
    set(B::kSm, sm_index);
    if (w.role < 0) {
      w.state = WarpState::kDone;  // a warp with no role exits at once
      c.exited_warps++;
      continue;
    }
    const auto& rc = p.roles[w.role];
    set(B::kWarpInRole, i - rc.first_warp);
    w.slots.assign(rc.slot_names.size(), 0);
    w.stack.assign(static_cast<std::size_t>(rc.max_stack) + 4, 0);
    w.waiting.assign(causes_.size() + 8, 0);
    c.live_warps++;
  }
  if (options_.trace && options_.trace->wants(cta_id)) {
    options_.trace->name_process(cta_id, fmt::format("CTA {} (SM {}, cluster {} rank {})", cta_id, sm_index, cluster, rank));
    for (int i = 0; i < p.warps; ++i)
      if (p.warp_role[i] >= 0)
        options_.trace->name_thread(cta_id, i, fmt::format("warp {} {}", i, p.roles[p.warp_role[i]].name));
    for (std::uint32_t f = 0; f < barrier_count_; ++f)
      options_.trace->name_thread(cta_id, 1000 + f, "mbarrier " + barrier_name(slot, f));
  }
  return slot;
}

void Simulator::try_launch() {
  launch_pending_ = false;
  while (next_cluster_ < num_clusters_) {
    if (!place_cluster(next_cluster_)) break;
    ++next_cluster_;
  }
}

void Simulator::flush_warp_stats(Warp& w) {
  RoleStats& r = role_stats_[w.role];
  r.warps += 1;
  r.lifetime += (now() - w.started).v;
  r.busy += w.busy;
  r.ops += w.ops;
  for (std::size_t i = 1; i < w.waiting.size() && i < causes_.size(); ++i)
    if (w.waiting[i]) r.waiting[causes_[i]] += w.waiting[i];
  for (std::size_t i = 0; i < w.region_time.size(); ++i) {
    std::int64_t t = w.region_time[i] + (w.region_start[i] >= 0 ? now().v - w.region_start[i] : 0);
    if (t) r.regions[program_.regions[i]] += t;
  }
}

void Simulator::warp_exit(std::uint32_t id) {
  Warp& w = warps_[id];
  w.state = WarpState::kDone;
  flush_warp_stats(w);
  w.slots.clear();
  w.slots.shrink_to_fit();
  last_exit_ = std::max(last_exit_, now().v);
  Cta& c = ctas_[w.cta];
  if (options_.op_log && options_.op_log->wants(c.id))
    options_.op_log->entries.push_back({c.id, w.index, w.role, OpLog::kExit, now().v});
  c.live_warps--;
  c.exited_warps++;
  Cluster& cl = clusters_[c.cluster];
  cl.live_warps--;
  // A warpgroup-collective op waiting for this warp can never complete (.aligned).
  WarpgroupState& wg = c.warpgroups[w.index / 4];
  if (wg.arrived > 0) {
    std::uint32_t waiter = wg.waiting.front();
    ub(waiter, wg.op, "warpgroup op without all its warps",
       fmt::format("'{}' is warpgroup-collective (.sync.aligned) but warp {} of warpgroup {} exited (line {}) while warps "
                   "of its warpgroup wait there",
                   op_of(warps_[waiter], wg.op).text, w.index, w.index / 4,
                   program_.roles[w.role].code[w.pc ? w.pc - 1 : 0].line));
  }
  for (int id2 = 0; id2 < 16; ++id2)
    if (!c.named[id2].waiters.empty()) check_named_release(w.cta, id2);
  check_cluster_release(c.cluster);
  if (c.live_warps == 0) cta_exit(w.cta);
}

void Simulator::cta_exit(std::uint32_t slot) {
  Cta& c = ctas_[slot];
  if (!c.tmem.empty()) {
    const TmemAlloc& a = c.tmem.front();
    Diagnosis d;
    d.title = "TMEM leak";
    d.message = fmt::format("CTA {} exits holding {} tensor-memory columns (allocated at {}): every tcgen05.alloc must be "
                            "freed with tcgen05.dealloc before the CTA exits",
                            c.id, a.cols, a.loc.str());
    d.cycle = now().v;
    d.cta = c.id;
    d.loc = a.loc;
    throw UndefinedBehaviour{d};
  }
  c.exited = true;
  Sm& sm = sms_[c.sm];
  sm.ctas -= 1;
  sm.warps -= program_.warps;
  sm.smem -= program_.smem_bytes() + machine_.smem_reserved_per_cta;
  --live_ctas_;
  if (next_cluster_ < num_clusters_ && !launch_pending_) {
    launch_pending_ = true;
    engine_.schedule(now() + Cycle(machine_.cta_launch_cycles), sim::Priority::kLaunch, kEvLaunch, 0);
  }
}

// ---- waiting and waking ----

void Simulator::block(Warp& w, WaitKind kind, std::uint32_t obj, std::int64_t value, std::uint32_t op, std::uint16_t cause) {
  w.state = WarpState::kBlocked;
  w.wait = kind;
  w.wait_obj = obj;
  w.wait_value = value;
  w.wait_op = op;
  w.wait_cause = cause;
  w.wait_since = now();
}

void Simulator::wake_at(std::uint32_t warp_id, Cycle at) {
  engine_.schedule(at, sim::Priority::kWake, kEvWake, warp_id);
}

void Simulator::on_phase_completed(std::uint32_t cta, std::uint32_t flat, const char* by) {
  Cta& c = ctas_[cta];
  std::uint32_t decl = barrier_decl(flat);
  barrier_stats_[decl].phases += 1;
  c.barrier_last_complete[flat] = now();
  std::uint32_t mask = c.arrive_mask[flat], last = c.last_arrive_mask[flat];
  if (mask && last && (mask & last) == 0 && !noted_decl_[decl]) {
    noted_decl_[decl] = true;
    auto warps_of = [](std::uint32_t m) {
      std::vector<int> v;
      for (int i = 0; i < 32; ++i)
        if (m & (1u << i)) v.push_back(i);
      return fmt::format("{}", fmt::join(v, ","));
    };
    notes_.push_back(fmt::format(
        "{} of CTA {}: phases {} and {} completed back to back (cycle {}) by arrivals of different warps ({} then {}): "
        "if those warps arrive in the same loop iteration, more threads arrive per phase than its count {}",
        barrier_name(cta, flat), c.id, c.barriers[flat].phase() - 2, c.barriers[flat].phase() - 1, now().v, warps_of(last),
        warps_of(mask), c.barriers[flat].expected()));
  }
  c.last_arrive_mask[flat] = mask;
  c.arrive_mask[flat] = 0;
  Cycle wake = now() + jit(machine_.mbarrier_wake_cycles);
  auto& waiters = c.barrier_waiters[flat];
  for (std::uint32_t w : waiters) wake_at(w, std::max(wake, now()));
  bool trace = traced(cta);
  if (trace) {
    trace_stage(cta, flat, true);
    auto* t = options_.trace;
    std::uint64_t flow = flow_next_++;
    t->slice(c.id, 1000 + flat, fmt::format("{} phase {} done", barrier_name(cta, flat), c.barriers[flat].phase() - 1),
             "mbarrier", now().v, 1, fmt::format(R"({{"by":"{}","waiters":{}}})", by, waiters.size()));
    for (std::uint32_t w : waiters) {
      t->flow(c.id, 1000 + flat, flow, now().v, true);
      t->flow(c.id, warps_[w].index, flow, wake.v, false);
      flow = flow_next_++;
    }
  }
  waiters.clear();
}

void Simulator::apply_barrier_result(MBarrier::Result r, std::uint32_t cta, std::uint32_t flat, std::uint32_t warp,
                                     std::uint32_t op, std::int64_t count, const char* action) {
  using R = MBarrier::Result;
  if (r == R::kOk) return;
  if (r == R::kPhaseCompleted) {
    on_phase_completed(cta, flat, action);
    return;
  }
  const Cta& c = ctas_[cta];
  const MBarrier& b = c.barriers[flat];
  std::string name = barrier_name(cta, flat);
  std::string where = c.id == ctas_[warps_[warp].cta].id ? "" : fmt::format(" of CTA {}", c.id);
  switch (r) {
    case R::kNotInitialised:
      ub(warp, op, "barrier used before init",
         fmt::format("{} on {}{}, which was never initialised (mbarrier.init) or was invalidated", action, name, where));
    case R::kAlreadyValid:
      ub(warp, op, "double init",
         fmt::format("mbarrier.init of {}{}, which is already initialised ({}); invalidate it first (mbarrier.inval)", name, where,
                     barrier_state(cta, flat)));
    case R::kBadCount:
      ub(warp, op, "count out of range", fmt::format("{} on {} with count {} (valid 1..{})", action, name, count, MBarrier::kMaxCount));
    case R::kArrivalOverflow: {
      std::string hint;
      if (b.arrivals_last_phase() > 0)
        hint = fmt::format("; the previous phase also completed by arrivals, so more than {} arrivals come per phase", b.expected());
      ub(warp, op, "arrival overflow",
         fmt::format("{}({}) on {}{} with only {} arrivals pending: {} arrivals on a barrier initialised with count {} in phase {}{}",
                     action, count, name, where, b.pending(), b.arrivals_this_phase() + count, b.expected(), b.phase(), hint));
    }
    case R::kTxOutOfRange:
      ub(warp, op, "tx-count out of range",
         fmt::format("{}({}) on {}{} would move the tx-count from {} outside -(2^20-1)..2^20-1", action, count, name, where, b.tx()));
    case R::kDropToZero:
      ub(warp, op, "arrive.drop to zero",
         fmt::format("arrive.drop({}) on {}{} would lower the expected count from {} to {}", count, name, where, b.expected(),
                     b.expected() - count));
    case R::kNoCompleteWouldComplete:
      ub(warp, op, "arrive.noComplete completes the phase",
         fmt::format("arrive.noComplete({}) on {}{} would complete phase {} ({} pending, tx {})", count, name, where, b.phase(),
                     b.pending(), b.tx()));
    default: break;
  }
}

std::uint32_t Simulator::schedule_async(Cycle at, const Async& a) {
  std::uint32_t id;
  if (!free_asyncs_.empty()) {
    id = free_asyncs_.back();
    free_asyncs_.pop_back();
    asyncs_[id] = a;
  } else {
    id = static_cast<std::uint32_t>(asyncs_.size());
    asyncs_.push_back(a);
  }
  engine_.schedule(std::max(at, now()), sim::Priority::kCompletion, kEvAsync, id);
  return id;
}

void Simulator::run_async(std::uint32_t id) {
  Async a = asyncs_[id];
  free_asyncs_.push_back(id);
  Cta& c = ctas_[a.cta];
  const char* action = a.kind == AsyncKind::kArrive           ? "arrive"
                       : a.kind == AsyncKind::kArriveDrop     ? "arrive.drop"
                       : a.kind == AsyncKind::kExpectTx       ? "expect_tx"
                       : a.kind == AsyncKind::kArriveExpectTx ? "arrive.expect_tx"
                                                              : "complete_tx";
  if (c.exited) {
    const Warp& w = warps_[a.warp];
    ub(a.warp, a.op, "signal to an exited CTA",
       fmt::format("{}({}) from {} lands on {} of CTA {}, which has already exited: a CTA must not exit while cluster peers "
                   "may still signal its barriers (CUTLASS producer_tail waits on every empty barrier before exiting)",
                   action, a.value, warp_label(w), barrier_name(a.cta, a.barrier), c.id));
  }
  MBarrier& b = c.barriers[a.barrier];
  if (a.kind == AsyncKind::kClcResponse) {
    bool found = false;
    for (auto& [f, v] : c.clc_responses)
      if (f == a.barrier) v = a.value2, found = true;
    if (!found) c.clc_responses.emplace_back(a.barrier, a.value2);
    c.clc_latest = a.value2;
    c.clc_any = true;
    action = "complete_tx";
  }
  if (a.flow && traced(a.cta)) options_.trace->flow(c.id, 1000 + a.barrier, a.flow, now().v, false);
  MBarrier::Result r;
  switch (a.kind) {
    case AsyncKind::kArrive: r = b.arrive(a.value); break;
    case AsyncKind::kArriveDrop: r = b.arrive_drop(a.value); break;
    case AsyncKind::kExpectTx: r = b.expect_tx(a.value); break;
    case AsyncKind::kArriveExpectTx:
      // One atomic op: expect the bytes, then arrive (value2 arrivals).
      r = b.expect_tx(a.value);
      if (r == MBarrier::Result::kOk) {
        note_arrival(a.cta, a.barrier, warps_[a.warp].index);
        r = b.arrive(a.value2);
      }
      break;
    default: r = b.complete_tx(a.value); break;
  }
  if (a.kind == AsyncKind::kArrive || a.kind == AsyncKind::kArriveDrop) note_arrival(a.cta, a.barrier, warps_[a.warp].index);
  apply_barrier_result(r, a.cta, a.barrier, a.warp, a.op, a.value, action);
}

// ---- named barriers and cluster barrier ----

void Simulator::named_arrive(Warp& w, int id, std::int64_t threads, bool wait, std::uint32_t op) {
  auto wid = static_cast<std::uint32_t>(&w - warps_.data());
  Cta& c = ctas_[w.cta];
  NamedBarrier& nb = c.named[id];
  if (threads < 0) threads = static_cast<std::int64_t>(program_.warps) * 32;
  if (threads <= 0 || threads % 32 != 0)
    ub(wid, op, "named barrier thread count", fmt::format("bar {}: threads={} must be a positive multiple of 32", id, threads));
  if (nb.expected < 0) {
    nb.expected = threads;
    nb.first_op = op;
    nb.first_warp = w.index;
  } else if (nb.expected != threads) {
    const Warp& first = warps_[c.first_warp + nb.first_warp];
    ub(wid, op, "mismatched named-barrier counts",
       fmt::format("bar {}: {} threads expected (set by warp {} at {}), {} arrived; warp {} arrives with threads={}: different "
                   "counts in one use of a named barrier are undefined (often two roles share an id by accident)",
                   id, nb.expected, nb.first_warp, op_of(first, nb.first_op).loc.str(), nb.arrived, w.index, threads));
  }
  nb.arrived += 32;
  nb.arrivers.push_back(w.index);
  if (nb.arrived > nb.expected)
    ub(wid, op, "named barrier overflow", fmt::format("bar {}: {} threads arrived but {} expected", id, nb.arrived, nb.expected));
  if (wait) {
    nb.waiters.push_back(wid);
    block(w, WaitKind::kNamedBarrier, static_cast<std::uint32_t>(id), threads, op, static_cast<std::uint16_t>(kCauseNamedBarrier0 + id));
  }
  check_named_release(w.cta, id);
}

void Simulator::check_named_release(std::uint32_t cta, int id) {
  Cta& c = ctas_[cta];
  NamedBarrier& nb = c.named[id];
  if (nb.expected < 0) return;
  bool full = nb.arrived >= nb.expected;
  // A barrier waiting only on exited warps is released (semantics.md §2).
  bool only_exited = c.exited_warps > 0 && !nb.waiters.empty() && static_cast<int>(nb.arrivers.size()) >= c.live_warps;
  if (full || only_exited) release_named(cta, id);
}

void Simulator::release_named(std::uint32_t cta, int id) {
  NamedBarrier& nb = ctas_[cta].named[id];
  // The release takes longer the more warps the barrier gathers (measured: bar_sync_latency_*warps).
  auto latency = machine_.named_barrier_cycles +
                 static_cast<std::int64_t>(machine_.named_barrier_cycles_per_warp * static_cast<double>(nb.expected / 32) + 0.5);
  Cycle at = now() + jit(latency);
  for (std::uint32_t w : nb.waiters) wake_at(w, at);
  // Reset for the next use, keeping the vectors' storage.
  nb.expected = -1;
  nb.arrived = 0;
  nb.first_warp = -1;
  nb.waiters.clear();
  nb.arrivers.clear();
}

void Simulator::check_cluster_release(std::int64_t ci) {
  Cluster& cl = clusters_[ci];
  if (cl.sync_waiters.empty() || cl.sync_arrived < cl.live_warps) return;
  Cycle at = now() + jit(machine_.cluster_sync_cycles);
  for (std::uint32_t w : cl.sync_waiters) wake_at(w, at);
  cl.sync_waiters.clear();
  cl.sync_arrived = 0;
}

// ---- TMEM allocator ----

void Simulator::tmem_try_grant(int sm_index) {
  Sm& sm = sms_[sm_index];
  while (!sm.tmem_waiters.empty()) {
    std::uint32_t wid = sm.tmem_waiters.front();
    Warp& w = warps_[wid];
    std::int64_t chunks = w.wait_value / 32;
    std::int64_t total = machine_.tmem_columns / 32;
    std::int64_t found = -1;
    for (std::int64_t start = 0; start + chunks <= total; start += chunks) {  // aligned to its size
      std::uint16_t mask = static_cast<std::uint16_t>(((1u << chunks) - 1) << start);
      if ((sm.tmem_used & mask) == 0) {
        found = start;
        break;
      }
    }
    if (found < 0) return;  // FIFO: later requests wait behind the first
    sm.tmem_used |= static_cast<std::uint16_t>(((1u << chunks) - 1) << found);
    sm.tmem_waiters.erase(sm.tmem_waiters.begin());
    const isa::OpDesc& d = op_of(w, w.wait_op);
    ctas_[w.cta].tmem.push_back(TmemAlloc{found * 32, w.wait_value, d.loc});
    if (!d.result_slots.empty()) w.slots[d.result_slots[0]] = found * 32;  // address: lane 0 << 16 | column
    if (wid == tmem_requester_) {
      // Granted to the warp asking right now: no wait; exec_op charges the allocation as busy time.
      w.state = WarpState::kReady;
      w.wait = WaitKind::kNone;
      continue;
    }
    wake_at(wid, now() + Cycle(machine_.tmem_alloc_cycles));
  }
}

// ---- events ----

void Simulator::handle(const sim::Event& e) {
  switch (e.kind) {
    case kEvLaunch: try_launch(); break;
    case kEvWarpStep: step(e.target); break;
    case kEvWake: {
      Warp& w = warps_[e.target];
      if (w.wait == WaitKind::kBarrier) {
        const MBarrier& b = ctas_[w.cta].barriers[w.wait_obj];
        if (b.phase() > w.wait_value + 1) {
          ub(e.target, w.wait_op, "phase overrun",
             fmt::format("{} waited for phase {} of {} to complete; before it observed that completion, phase {} completed too "
                         "(now {}): the waited parity is current again, so on hardware this wait would block for another "
                         "phase, often forever. Usually more arrivals come per phase than the barrier's count, or a producer "
                         "runs two phases ahead",
                         warp_label(w), w.wait_value, barrier_name(w.cta, w.wait_obj), w.wait_value + 1,
                         barrier_state(w.cta, w.wait_obj)));
        }
        ctas_[w.cta].passed_waits[w.wait_obj] += 1;
        BarrierStats& bs = barrier_stats_[barrier_decl(w.wait_obj)];
        std::int64_t waited = (now() - w.wait_since).v;
        bs.wait_cycles += waited;
        bs.wait_max = std::max(bs.wait_max, waited);
      }
      std::int64_t waited = (now() - w.wait_since).v;
      if (w.wait_cause >= w.waiting.size()) w.waiting.resize(w.wait_cause + 8, 0);
      w.waiting[w.wait_cause] += waited;
      if (traced(w.cta) && waited > 0)
        options_.trace->slice(ctas_[w.cta].id, w.index, "wait: " + causes_[w.wait_cause], "wait", w.wait_since.v, waited,
                              fmt::format(R"({{"op":{}}})", sim::json_quote(op_of(w, w.wait_op).text)));
      w.wait = WaitKind::kNone;
      w.state = WarpState::kReady;
      step(e.target);
      break;
    }
    case kEvAsync: run_async(e.target); break;
    default: assert(false && "unknown event kind");
  }
}

// ---- the run ----

RunResult Simulator::run() {
  RunResult result;
  engine_.schedule(Cycle(0), sim::Priority::kLaunch, kEvLaunch, 0);
  try {
    auto stop = engine_.run(Cycle(options_.max_cycles));
    bool all_done = next_cluster_ >= num_clusters_ && live_ctas_ == 0;
    if (stop == sim::Engine::StopReason::kCycleLimit) {
      result.outcome = Outcome::kWatchdog;
      result.watchdog_reason = fmt::format("--max-cycles {} reached with {} CTAs still running", options_.max_cycles, live_ctas_);
      result.deadlock = analyse_stuck(true);
    } else if (!all_done) {
      result.outcome = Outcome::kDeadlock;
      result.deadlock = analyse_stuck(false);
    }
  } catch (UndefinedBehaviour& u) {
    result.outcome = Outcome::kUndefined;
    result.diagnosis = u.diagnosis;
  } catch (const WatchdogStop& w) {
    result.outcome = Outcome::kWatchdog;
    result.watchdog_reason = w.reason;
    result.deadlock = analyse_stuck(true);
  }
  result.cycles = result.outcome == Outcome::kFinished ? last_exit_ : now().v;
  result.notes = notes_;
  fill_stats(result);
  return result;
}

// The busiest unit if it is busy most of the time; otherwise the wait that costs the most warp time in the
// role that waits most (latency or synchronisation bound).
std::string bottleneck_in_words(const Stats& s) {
  const UnitStats* top = nullptr;
  for (const auto& u : s.units)
    if (top == nullptr || u.utilisation > top->utilisation) top = &u;
  if (top != nullptr && top->utilisation >= 0.7)
    return fmt::format("{} ({:.0f}% busy): the run is bound by it", top->name, 100 * top->utilisation);
  std::string role, cause;
  std::int64_t worst = 0;
  for (const auto& r : s.roles)
    for (const auto& [c, cycles] : r.waiting)
      if (cycles > worst) worst = cycles, role = r.name, cause = c;
  if (worst == 0) return "none: warps are busy issuing";
  return fmt::format("no unit is saturated (busiest: {} {:.0f}%); role {} spends most time waiting on {}: latency or "
                     "synchronisation bound",
                     top ? top->name : "-", top ? 100 * top->utilisation : 0.0, role, cause);
}

void Simulator::fill_stats(RunResult& r) {
  Stats& s = r.stats;
  // Warps still alive (deadlock, watchdog, diagnosis) contribute what they did so far.
  for (auto& w : warps_)
    if (w.state != WarpState::kDone && w.role >= 0) {
      if (w.state == WarpState::kBlocked) {
        if (w.wait_cause >= w.waiting.size()) w.waiting.resize(w.wait_cause + 8, 0);
        w.waiting[w.wait_cause] += (now() - w.wait_since).v;
        w.wait_since = now();
      }
      flush_warp_stats(w);
      w.state = WarpState::kDone;
    }
  s.kernel = program_.kernel_name;
  s.machine = machine_.name;
  s.clock_mhz = machine_.clock_mhz;
  s.cycles = r.cycles;
  s.time_us = static_cast<double>(r.cycles) / machine_.clock_mhz;
  s.ctas = ctas_run_;
  s.sms_used = std::count(sm_used_.begin(), sm_used_.end(), true);
  s.ops = ops_;
  s.events = static_cast<std::int64_t>(engine_.events_processed());
  s.flops = flops_;
  s.bytes_loaded = bytes_loaded_;
  s.bytes_stored = bytes_stored_;
  s.roles = role_stats_;
  s.barriers = barrier_stats_;
  double cap = static_cast<double>(std::max<std::int64_t>(r.cycles, 1)) * static_cast<double>(std::max<std::int64_t>(s.sms_used, 1));
  s.units = {
      UnitStats{"tensor pipe", tensor_busy_ / 4, static_cast<double>(tensor_busy_) / (4.0 * cap)},
      UnitStats{"TMA engine", tma_busy_, static_cast<double>(tma_busy_) / cap},
      UnitStats{"LSU (cp.async, global)", lsu_busy_, static_cast<double>(lsu_busy_) / cap},
      UnitStats{"L2 bandwidth (whole GPU)",
                static_cast<std::int64_t>(static_cast<double>(bytes_loaded_ + bytes_stored_) / machine_.l2_bytes_per_cycle),
                static_cast<double>(bytes_loaded_ + bytes_stored_) /
                    (machine_.l2_bytes_per_cycle * static_cast<double>(std::max<std::int64_t>(r.cycles, 1)))},
  };
  s.bottleneck = bottleneck_in_words(s);
  s.peak_resident_ctas = peak_ctas_;
  s.reports = program_.reports;
}

}  // namespace detail
}  // namespace smpipe::models
