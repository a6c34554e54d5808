#include "models/gpu/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <cmath>

#include "isa/fuse.hpp"
#include "models/gpu/registry.hpp"
#include "models/observe/trace_observer.hpp"
#include "sim/free_list.hpp"

namespace smpipe::models {

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
  if (p.regs_per_cta() > m.registers_per_sm)
    throw isa::InputError(fmt::format("kernel {} needs {} registers per CTA ({} warps x {} per thread, allocated per warp in "
                                      "units of {}); {} has {} per SM",
                                      p.kernel_name, p.regs_per_cta(), p.warps, p.regs, isa::kRegAllocUnit, m.name,
                                      m.registers_per_sm));
  if (p.cluster_size() > m.max_cluster_size)
    throw isa::InputError(fmt::format("cluster of {} CTAs; {} allows at most {}", p.cluster_size(), m.name, m.max_cluster_size));
  if (p.cluster_size() > m.sm_count)
    throw isa::InputError(fmt::format("cluster of {} CTAs does not fit on {} SMs", p.cluster_size(), m.sm_count));
  if (!m.gpc_sms.empty()) {
    const std::int64_t largest = *std::max_element(m.gpc_sms.begin(), m.gpc_sms.end());
    if (p.cluster_size() > largest)
      throw isa::InputError(fmt::format("cluster of {} CTAs does not fit in a GPC of {}: a cluster runs on the SMs of one "
                                        "GPC, and the largest has {}",
                                        p.cluster_size(), m.name, largest));
  }
  for (const auto& r : p.roles)
    for (const auto& op : r.ops) {
      std::string why = op_fits(op, m);
      if (!why.empty()) throw where(op.loc, why);
    }
}

RunResult simulate(const isa::Program& program, const Machine& machine, const RunOptions& options) {
  check_fits(program, machine);
  Simulator s(program, machine, options);
  return s.run();
}

Simulator::Simulator(const isa::Program& program, const Machine& machine, const RunOptions& options)
    : program_(program), machine_(machine), options_(options), engine_(*this), rng_(options.seed) {
  causes_.emplace_back("(none)");
  if (options_.trace) own_observers_.push_back(std::make_unique<TraceObserver>(*options_.trace));
  if (options_.op_log) own_observers_.push_back(std::make_unique<OpLogObserver>(*options_.op_log));
  for (auto& o : own_observers_) observers_.add(o.get());
  for (Observer* o : options_.observers) observers_.add(o);
  observed_ = !observers_.empty();
  if (options_.progress) engine_.report_progress(std::uint64_t{1} << 16);
  units_ = make_units(*this, machine_);
  by_op_.assign(static_cast<std::size_t>(isa::OpKind::kCount), nullptr);
  for (std::size_t i = 0; i < units_.size(); ++i) {
    units_[i]->set_index(static_cast<std::int16_t>(i));
    for (isa::OpKind k : units_[i]->ops()) {
      SMPIPE_CHECK(by_op_[static_cast<int>(k)] == nullptr, fmt::format("op '{}' accepted by two units", isa::op_spec(k).name));
      by_op_[static_cast<int>(k)] = units_[i].get();
    }
  }
  for (std::size_t k = 0; k < by_op_.size(); ++k)
    SMPIPE_CHECK(by_op_[k] != nullptr, fmt::format("no unit accepts op '{}'", isa::all_ops()[k].name));
  for (auto& u : units_) u->connect();
  sms_.resize(machine_.sm_count);
  // Each SM's GPC (machines that list them; their SM counts add up to sm_count, a rule of the machine file). A
  // machine without GPCs is one GPC of all its SMs.
  gpc_of_sm_ = machine_.gpc_of_sms();
  gpcs_ = machine_.gpc_count();
  plain_order_ = program_.cluster_size() == 1 ? plain_launch_order(machine_, program_.num_ctas())
                                              : cluster_launch_order(machine_, program_.cluster_size());
  sm_used_.assign(machine_.sm_count, false);
  sm_ctas_.assign(machine_.sm_count, 0);
  num_clusters_ = program_.num_ctas() / program_.cluster_size();
  for (const auto& r : program_.roles) {
    RoleStats rs;
    rs.name = r.name;
    role_stats_.push_back(rs);
    // Each op with run-time values gets its own copy of its constants, where the interpreter writes those values.
    auto& bases = op_values_at_.emplace_back();
    for (const auto& d : r.ops) {
      bases.push_back(static_cast<std::uint32_t>(op_values_.size()));
      if (!d.dynamic_slots.empty()) op_values_.insert(op_values_.end(), d.base_values.begin(), d.base_values.end());
    }
    auto& code = code_.emplace_back(r.fast);
    for (isa::Instr& in : code)
      if (in.opc == isa::Opc::kOp)
        if (const std::int64_t cycles = by_op_[static_cast<int>(r.ops[in.a].kind)]->fixed_busy(r.ops[in.a]); cycles > 0)
          in.opc = isa::Opc::kBusyOp, in.imm = cycles;
  }
}

Simulator::~Simulator() = default;

std::uint16_t Simulator::cause_id(const std::string& name) {
  for (std::size_t i = 0; i < causes_.size(); ++i)
    if (causes_[i] == name) return static_cast<std::uint16_t>(i);
  causes_.push_back(name);
  return static_cast<std::uint16_t>(causes_.size() - 1);
}

Cycle Simulator::jit(std::int64_t latency) {
  if (options_.jitter_pct <= 0 || latency <= 0) return Cycle(latency);
  std::int64_t spread = latency * options_.jitter_pct / 100;
  return Cycle(std::max<std::int64_t>(0, latency + rng_.uniform(-spread, spread)));
}

Cycle Simulator::spread(Cycle start, Cycle done, double share, std::uint64_t key) const {
  if (share <= 0 || done <= start) return done;
  auto width = static_cast<std::int64_t>(std::llround(share * static_cast<double>((done - start).v)));
  sim::Rng draw(options_.seed ^ sim::Rng(key).next());
  return sim::max(start, done + Cycle(draw.uniform(-width, width)));
}

void Simulator::schedule(const Unit& unit, Cycle at, sim::Priority priority, std::uint32_t target, std::uint64_t payload) {
  engine_.schedule(at, priority, kEvFirstUnit + static_cast<std::uint32_t>(unit.index()), target, payload);
}

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
  if (rank < 0) return w.cta;
  const Cluster& cl = cluster_of(ctas_[w.cta]);
  if (rank >= static_cast<std::int64_t>(cl.ctas.size()))
    ub(warp_id(w), op, "bad cluster rank",
       fmt::format("cta={} but the cluster has {} CTAs (ranks 0..{})", rank, cl.ctas.size(), cl.ctas.size() - 1));
  return cl.ctas[rank];
}

Simulator::Targets Simulator::multicast_targets(std::uint32_t warp, std::uint32_t op, std::uint32_t cta, std::int64_t mask) {
  Targets t;
  if (mask == 0) {
    t.slot[t.count++] = cta;
    return t;
  }
  const Cluster& cl = cluster_of(ctas_[cta]);
  if (mask < 0 || mask >= (std::int64_t{1} << cl.ctas.size()))
    ub(warp, op, "bad multicast mask",
       fmt::format("multicast=0x{:x} names CTA ranks outside the cluster of {} CTAs", mask, cl.ctas.size()));
  for (std::size_t r = 0; r < cl.ctas.size(); ++r)
    if (mask & (std::int64_t{1} << r)) t.slot[t.count++] = cl.ctas[r];
  return t;
}

std::int64_t Simulator::cta_id_of(std::int64_t ci, int rank) const {
  // Cluster coordinates -> CTA ids (x fastest), ranks x fastest within the cluster.
  const auto& p = program_;
  std::int64_t ncx = p.grid[0] / p.cluster[0], ncy = p.grid[1] / p.cluster[1];
  std::int64_t cx = ci % ncx, cy = (ci / ncx) % ncy, cz = ci / (ncx * ncy);
  std::int64_t lx = rank % p.cluster[0], ly = (rank / p.cluster[0]) % p.cluster[1], lz = rank / (p.cluster[0] * p.cluster[1]);
  std::int64_t x = cx * p.cluster[0] + lx, y = cy * p.cluster[1] + ly, z = cz * p.cluster[2] + lz;
  return x + y * p.grid[0] + z * p.grid[0] * p.grid[1];
}

// ---- launch ----

// The order in which a plain launch (clusters of 1) of `ctas` CTAs fills idle SMs. On a machine that lists its GPCs,
// the GPU's block scheduler's as measured on the H200 (validation/microbench, group gpc, `gpc_order_*`: the SM of
// each CTA for grids of 24-99; and the H100's `combine` group: at 132 CTAs, CTAs 2j and 2j + 1 share a TPC): first
// the SMs of the GPCs of one TPC (2 SMs); then the TPCs (SMs 2t, 2t + 1 of a GPC) of the larger GPCs, the GPCs in
// turn, one SM of each while the first wave has no more CTAs than they have TPCs, else both SMs of as many TPCs as
// the wave needs (in that turn) and one of the others; then the SMs left, in the same turn. So a grid smaller than the
// GPU spreads evenly over the GPCs and the TPCs, and a full one pairs consecutive CTAs on TPCs. Without GPCs: lowest
// SM first.
std::vector<int> Simulator::plain_launch_order(const Machine& m, std::int64_t ctas) {
  std::vector<int> order;
  if (m.gpc_sms.empty()) {
    for (int s = 0; s < m.sm_count; ++s) order.push_back(s);
    return order;
  }
  std::vector<int> first(m.gpc_sms.size());
  for (std::size_t g = 1; g < m.gpc_sms.size(); ++g) first[g] = first[g - 1] + static_cast<int>(m.gpc_sms[g - 1]);
  std::vector<char> taken(static_cast<std::size_t>(m.sm_count), 0);
  auto take = [&](int s) {
    if (s < m.sm_count && !taken[static_cast<std::size_t>(s)]) taken[static_cast<std::size_t>(s)] = 1, order.push_back(s);
  };
  for (std::size_t g = 0; g < m.gpc_sms.size(); ++g)
    if (m.one_tpc_gpc(g))
      for (int i = 0; i < m.gpc_sms[g]; ++i) take(first[g] + i);
  // The larger GPCs' TPCs in turn (GPC after GPC, a TPC of each at a time): their first SMs.
  // (A GPC of an odd count ends in a TPC of one SM: it has no second SM to double up.)
  std::vector<std::pair<int, bool>> tpcs;  // first SM, whether the TPC has a second
  for (int t = 0;; ++t) {
    bool any = false;
    for (std::size_t g = 0; g < m.gpc_sms.size(); ++g)
      if (!m.one_tpc_gpc(g) && 2 * t < m.gpc_sms[g]) tpcs.emplace_back(first[g] + 2 * t, 2 * t + 1 < m.gpc_sms[g]), any = true;
    if (!any) break;
  }
  const std::int64_t rest = std::min<std::int64_t>(ctas, m.sm_count) - static_cast<std::int64_t>(order.size());
  std::int64_t pairs = std::max<std::int64_t>(0, rest - static_cast<std::int64_t>(tpcs.size()));
  for (const auto& [sm, two] : tpcs) {
    take(sm);
    if (two && pairs > 0) take(sm + 1), --pairs;
  }
  for (const auto& [sm, two] : tpcs)
    if (two) take(sm + 1);
  for (int s = 0; s < m.sm_count; ++s) take(s);  // (any SM not listed: none when the GPCs add up to sm_count)
  return order;
}

// The order in which clusters of `cs` CTAs take idle SMs: the GPCs in turn, each cluster the next cs SMs of its GPC
// (consecutive clusters land in different GPCs), as the H200's block scheduler places them (validation/microbench,
// group gpc, gpc_map_c4 / gpc_map_c8 / gpc_clusters16 in validation/results/h200/smlat/smlat.json: clusters 0-7 of 4
// on eight different GPCs, cluster 8 on the first one's next two TPCs). Without GPCs: SM order.
std::vector<int> Simulator::cluster_launch_order(const Machine& m, std::int64_t cs) {
  std::vector<int> order(static_cast<std::size_t>(m.sm_count));
  std::iota(order.begin(), order.end(), 0);
  if (m.gpc_sms.empty()) return order;
  const std::vector<int> gpc = m.gpc_of_sms();
  std::vector<int> pos(order.size());  // each SM's place within its GPC
  std::vector<int> seen(m.gpc_count(), 0);
  for (std::size_t s = 0; s < order.size(); ++s) pos[s] = seen[static_cast<std::size_t>(gpc[s])]++;
  // Round by round (a round: one cluster on every GPC that holds one more), the GPCs of one TPC first in their round
  // (they hold only clusters of 1 or 2): the H200 put its first four clusters of 2 on SMs 124-131 and the next
  // eight on the eight larger GPCs in turn (validation/results/h200/multicast_gemm6.json, the rows' smids).
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const auto ra = pos[static_cast<std::size_t>(a)] / cs, rb = pos[static_cast<std::size_t>(b)] / cs;
    const int ga = gpc[static_cast<std::size_t>(a)], gb = gpc[static_cast<std::size_t>(b)];
    const bool sa = m.one_tpc_gpc(static_cast<std::size_t>(ga)), sb = m.one_tpc_gpc(static_cast<std::size_t>(gb));
    return ra != rb ? ra < rb : sa != sb ? sa : ga < gb;
  });
  return order;
}

bool Simulator::place_cluster(std::int64_t ci) {
  const auto& p = program_;
  std::int64_t cs = p.cluster_size();
  std::int64_t smem = p.smem_bytes() + machine_.smem_reserved_per_cta;
  // Least-loaded SMs first: the first wave spreads one CTA per SM. On ties, a plain launch follows the block
  // scheduler's order (plain_launch_order); a cluster takes the first cs SMs of one GPC in cluster_launch_order (the
  // first GPC to hold cs SMs that fit; machines without GPCs: any SMs).
  std::vector<int> order = plain_order_;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sms_[a].ctas < sms_[b].ctas; });
  std::vector<std::vector<int>> fits(gpcs_);  // per GPC: the SMs that fit, in order
  const std::vector<int>* chosen_in = nullptr;
  for (int s : order) {
    const SmResources& sm = sms_[s];
    if (sm.ctas + 1 > machine_.max_ctas_per_sm || sm.warps + p.warps > machine_.max_warps_per_sm ||
        sm.smem + smem > machine_.smem_per_sm || sm.regs + p.regs_per_cta() > machine_.registers_per_sm)
      continue;
    std::vector<int>& in = fits[static_cast<std::size_t>(gpc_of_sm_[static_cast<std::size_t>(s)])];
    in.push_back(s);
    if (static_cast<std::int64_t>(in.size()) == cs) {
      chosen_in = &in;
      break;
    }
  }
  if (chosen_in == nullptr) return false;
  const std::vector<int>& chosen = *chosen_in;
  const std::uint32_t cslot = sim::take_slot(clusters_, free_clusters_);
  {
    Cluster& cl = clusters_[cslot];
    cl.index = ci;
    cl.ctas.clear();
    cl.live_warps = 0;
    cl.live_ctas = static_cast<int>(cs);
  }
  for (int rank = 0; rank < cs; ++rank) {
    std::uint32_t slot = create_cta(cta_id_of(ci, rank), ci, cslot, rank, chosen[rank]);
    clusters_[cslot].ctas.push_back(slot);
  }
  Cluster& cl = clusters_[cslot];
  for (std::uint32_t slot : cl.ctas) cl.live_warps += ctas_[slot].live_warps;
  for (auto& u : units_)
    for (std::uint32_t slot : cl.ctas) u->cta_started(slot);
  for (std::uint32_t slot : cl.ctas) {
    const Cta& c = ctas_[slot];
    if (observers_.wants(c.id)) {
      CtaStart start{c.id, c.sm, c.cluster, c.rank, &program_, {}};
      auto layout = isa::ElementLayout::of(program_.mbarriers);
      for (std::uint32_t f = 0; f < layout.count; ++f) start.barrier_names.push_back(layout.element_name(program_.mbarriers, f));
      observers_.each(c.id, [&](Observer& o) { o.cta_started(start); });
    }
  }
  // Start the role warps in warp order, after all CTAs of the cluster exist (remote arrives need them).
  for (std::uint32_t slot : cl.ctas) {
    Cta& c = ctas_[slot];
    for (int i = 0; i < p.warps; ++i)
      if (std::uint32_t id = c.first_warp + static_cast<std::uint32_t>(i); warps_[id].state == WarpState::kReady)
        enqueue(kSteps, now(), id);
  }
  // A CTA none of whose warps has a role (a kernel without roles) has nothing to run: it exits at once.
  for (std::uint32_t slot : std::vector<std::uint32_t>(cl.ctas))
    if (ctas_[slot].live_warps == 0) cta_exit(slot);
  return true;
}

std::uint32_t Simulator::create_cta(std::int64_t cta_id, std::int64_t cluster, std::uint32_t cluster_slot, int rank, int sm_index) {
  const auto& p = program_;
  std::uint32_t slot;
  if (!free_ctas_.empty()) {
    slot = free_ctas_.back();
    free_ctas_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(ctas_.size());
    ctas_.emplace_back();
    warps_.resize(warps_.size() + static_cast<std::size_t>(p.warps));
  }
  Cta& c = ctas_[slot];
  c = Cta{};
  c.id = cta_id;
  c.cluster = cluster;
  c.cluster_slot = cluster_slot;
  c.rank = rank;
  c.sm = sm_index;
  c.launch_seq = ctas_run_;
  c.first_warp = slot * static_cast<std::uint32_t>(p.warps);
  SmResources& sm = sms_[sm_index];
  sm.ctas += 1;
  sm.warps += p.warps;
  sm.smem += p.smem_bytes() + machine_.smem_reserved_per_cta;
  sm.regs += p.regs_per_cta();
  sm_used_[sm_index] = true;
  ++live_ctas_;
  peak_ctas_ = std::max(peak_ctas_, live_ctas_);
  ++ctas_run_;
  std::int64_t gx = p.grid[0], gy = p.grid[1];
  const std::int64_t sm_before = sm_ctas_[sm_index]++;
  for (int i = 0; i < p.warps; ++i) {
    Warp& w = warps_[c.first_warp + i];
    w = Warp{};
    w.cta = slot;
    w.index = i;
    w.role = p.warp_role[i];
    w.started = now();
    using B = isa::Builtin;
    auto set = [&](B b, std::int64_t v) { w.builtins[static_cast<int>(b)] = v; };
    set(B::kWarp, i);
    set(B::kWarpgroup, i / isa::kWarpsPerWarpgroup);
    set(B::kCta, cta_id);
    set(B::kCtaX, cta_id % gx);
    set(B::kCtaY, (cta_id / gx) % gy);
    set(B::kCtaZ, cta_id / (gx * gy));
    set(B::kClusterRank, rank);
    set(B::kNumCtas, p.num_ctas());
    set(B::kSm, sm_index);
    set(B::kSmCtasBefore, sm_before);
    if (w.role < 0) {
      w.state = WarpState::kDone;  // a warp with no role exits at once
      c.exited_warps++;
      continue;
    }
    const auto& rc = p.roles[w.role];
    set(B::kWarpInRole, i - rc.first_warp);
    // The variables, then the expression stack, in one block: the interpreter reads both.
    w.stack_at = static_cast<std::uint32_t>(rc.slot_names.size() + rc.hoisted.size());
    w.slots.assign(w.stack_at + static_cast<std::size_t>(rc.max_stack) + 4, 0);
    for (std::size_t h = 0; h < rc.hoisted.size(); ++h) w.slots[rc.slot_names.size() + h] = isa::evaluate_hoisted(rc.hoisted[h], w.builtins);
    w.waiting.assign(causes_.size() + 8, 0);
    c.live_warps++;
  }
  return slot;
}

void Simulator::try_launch() {
  launch_pending_ = false;
  // CTA launches have a work budget of their own, one per kCtaLaunchOps ops of --max-ops (at least kMinCtaBudget CTAs):
  // a grid of many CTAs that run few ops (or none) stops as a long run of ops does, not after hours.
  const std::int64_t most = std::max(kMinCtaBudget, options_.max_ops / kCtaLaunchOps);
  while (next_cluster_ < num_clusters_) {
    if (ctas_run_ + program_.cluster_size() > most) [[unlikely]]
      throw WatchdogStop{fmt::format("--max-ops {} reached: the grid launched {} CTAs by cycle {} (CTA launches have a "
                                     "budget of their own, one per {} ops of --max-ops and at least {}; a grid larger than "
                                     "the default budget: raise --max-ops)",
                                     options_.max_ops, ctas_run_, now().v, kCtaLaunchOps, kMinCtaBudget)};
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
  progressed();
  Cta& c = ctas_[w.cta];
  if (!observers_.empty()) observers_.each(c.id, [&](Observer& o) { o.warp_exited(c.id, w.index, w.role, now().v); });
  c.live_warps--;
  c.exited_warps++;
  clusters_[c.cluster_slot].live_warps--;
  for (auto& u : units_) u->warp_exited(id);
  if (c.live_warps == 0) cta_exit(w.cta);
}

void Simulator::cta_exit(std::uint32_t slot) {
  for (auto& u : units_) u->cta_exiting(slot);
  Cta& c = ctas_[slot];
  c.exited = true;
  SmResources& sm = sms_[c.sm];
  sm.ctas -= 1;
  sm.warps -= program_.warps;
  sm.smem -= program_.smem_bytes() + machine_.smem_reserved_per_cta;
  sm.regs -= program_.regs_per_cta();
  --live_ctas_;
  if (!observers_.empty()) observers_.each(c.id, [&](Observer& o) { o.cta_exited(c.id, now().v); });
  // The slots of a cluster are reused once all its CTAs exited (peers may still name an exited CTA).
  Cluster& cl = clusters_[c.cluster_slot];
  if (--cl.live_ctas == 0) {
    for (std::uint32_t s : cl.ctas) free_ctas_.push_back(s);
    cl.index = -1;
    free_clusters_.push_back(c.cluster_slot);
  }
  if (next_cluster_ < num_clusters_ && !launch_pending_) {
    launch_pending_ = true;
    engine_.schedule(now() + Cycle(machine_.cta_launch_cycles), sim::Priority::kLaunch, kEvLaunch, 0);
  }
}

// ---- waiting and waking ----

std::string Simulator::describe_wait(const Warp& w) const {
  if (w.state != WarpState::kBlocked) return "nothing (running)";
  if (w.wait_unit == kNoUnit) return causes_[w.wait_cause];
  return units_[w.wait_unit]->describe_wait(w);
}

// A blocked warp's wait is over: its unit and the statistics learn of it, and it is ready to run.
inline void Simulator::end_wait(std::uint32_t id) {
  Warp& w = warps_[id];
  if (w.wait_unit != kNoUnit) units_[w.wait_unit]->woken(id);
  std::int64_t waited = (now() - w.wait_since).v;
  if (w.wait_cause >= w.waiting.size()) w.waiting.resize(w.wait_cause + 8, 0);
  w.waiting[w.wait_cause] += waited;
  if (observed_) {
    std::int64_t cta = ctas_[w.cta].id;
    observers_.each(cta, [&](Observer& o) {
      o.wait_ended(cta, w.index, causes_[w.wait_cause], op_of(w, w.wait_op), w.wait_since.v, waited);
    });
  }
  w.wait_unit = kNoUnit;
  w.state = WarpState::kReady;
}

inline void Simulator::resume(std::uint32_t id) {
  end_wait(id);
  step(id);
}

void Simulator::continue_now(std::uint32_t id) {
  end_wait(id);
  enqueue(kSteps, now(), id);
}

// ---- events ----

std::uint32_t Simulator::new_warp_list() {
  if (free_warp_lists_.empty()) {
    warp_lists_.emplace_back();
    return static_cast<std::uint32_t>(warp_lists_.size() - 1);
  }
  std::uint32_t list = free_warp_lists_.back();
  free_warp_lists_.pop_back();
  warp_lists_[list].clear();
  return list;
}

void Simulator::join(sim::Event& last, const WarpEvents& kind, std::uint32_t warp_id) {
  std::uint32_t list = new_warp_list();
  warp_lists_[list].push_back(last.target);
  warp_lists_[list].push_back(warp_id);
  last.kind = kind.list;
  last.target = 0;
  last.payload = list;
}

void Simulator::enqueue(const WarpEvents& kind, Cycle at, std::span<const std::uint32_t> warp_ids) {
  if (warp_ids.size() == 1) return enqueue(kind, at, warp_ids[0]);
  if (warp_ids.empty()) return;
  // The event scheduled last is of this cycle and priority and still waiting: these warps would run right
  // after its own, so they join it.
  sim::Event* last = engine_.last_pending(at, kind.priority);
  if (last != nullptr && last->kind == kind.single) join(*last, kind, warp_ids[0]), warp_ids = warp_ids.subspan(1);
  if (last != nullptr && last->kind == kind.list) {
    auto& l = warp_lists_[static_cast<std::size_t>(last->payload)];
    l.insert(l.end(), warp_ids.begin(), warp_ids.end());
    return;
  }
  std::uint32_t list = new_warp_list();
  warp_lists_[list].assign(warp_ids.begin(), warp_ids.end());
  engine_.schedule(at, kind.priority, kind.list, 0, list);
}

// The warps of a list continue (or resume) one after the other, as separate events would run them: when
// one of them schedules something that runs before this priority in this cycle, the rest go back to the
// head of the queue and wait for it, where their own events would have waited.
void Simulator::warp_list(const sim::Event& e) {
  auto list = static_cast<std::uint32_t>(e.payload);
  const bool wake = e.kind == kEvWakeList;
  // The list's own storage stays put while its warps run: a warp may add lists (warp_lists_ may move its
  // vectors, which keep their storage) but never adds to this one (only the event scheduled last takes
  // more warps, and this event is no longer pending).
  const std::uint32_t* ids = warp_lists_[list].data();
  const std::size_t n = warp_lists_[list].size();
  for (std::uint32_t i = e.target;;) {
    std::uint32_t w = ids[i];
    if (wake) {
      resume(w);
    } else {
      step(w);
    }
    if (++i == n) {
      free_warp_lists_.push_back(list);
      return;
    }
    if (engine_.due_before(e.priority)) {
      sim::Event rest = e;
      rest.target = i;
      engine_.requeue_front(rest);
      return;
    }
    engine_.count_event();
  }
}

void Simulator::handle(const sim::Event& e) {
  switch (e.kind) {
    case kEvLaunch: try_launch(); break;
    case kEvWarpStep: step(e.target); break;
    case kEvWake: resume(e.target); break;
    case kEvStepList:
    case kEvWakeList: warp_list(e); break;
    default:
      SMPIPE_CHECK(e.kind >= kEvFirstUnit && e.kind - kEvFirstUnit < units_.size(), fmt::format("unknown event kind {}", e.kind));
      units_[e.kind - kEvFirstUnit]->complete(e.target, e.payload);
  }
}

// ---- the run ----

void Simulator::progress(sim::Cycle now) {
  options_.progress(RunOptions::Progress{now.v, ctas_run_ - live_ctas_, program_.num_ctas(), ops_});
}

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
      result.deadlock.limit_stop = true;
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
    result.deadlock.limit_stop = w.limit;
  }
  if (result.outcome == Outcome::kWatchdog) {
    result.deadlock.last_progress = last_progress_;
    for (const auto& u : units_) result.deadlock.tx_in_flight += u->tx_in_flight();
  }
  result.cycles = result.outcome == Outcome::kFinished ? last_exit_ : now().v;
  for (const auto& u : units_) {
    u->add_notes(result.notes);
    u->add_warnings(result.warnings);
  }
  if (observed_) tell_observers_the_end(result);
  fill_stats(result);
  return result;
}

// A run that stopped leaves warps blocked: their waits go to the observers as unfinished, up to the stop, and the
// end with what the report says first (the trace shows the stuck waits and the diagnosis).
void Simulator::tell_observers_the_end(const RunResult& r) {
  std::int64_t stop = now().v;
  if (r.outcome != Outcome::kFinished) {
    for (std::uint32_t slot : slots_in_launch_order()) {
      const Cta& c = ctas_[slot];
      for (std::uint32_t i = c.first_warp; i < c.first_warp + static_cast<std::uint32_t>(program_.warps); ++i) {
        const Warp& w = warps_[i];
        if (w.state != WarpState::kBlocked || w.role < 0) continue;
        observers_.each(c.id, [&](Observer& o) {
          o.wait_unfinished(c.id, w.index, causes_[w.wait_cause], op_of(w, w.wait_op), w.wait_since.v, stop);
        });
      }
    }
  }
  std::string what;
  if (r.outcome == Outcome::kUndefined && r.diagnosis)
    what = fmt::format("{} at {}", r.diagnosis->title, r.diagnosis->loc.file ? r.diagnosis->loc.str() : "?");
  else if (r.outcome == Outcome::kWatchdog)
    what = r.watchdog_reason;
  else if (r.outcome == Outcome::kDeadlock)
    what = r.deadlock.causes.empty() ? fmt::format("{} warp(s) cannot proceed", r.deadlock.warps.size()) : r.deadlock.causes.front();
  observers_.each_observer([&](Observer& o) { o.run_ended(stop, outcome_word(r), what); });
}

std::vector<std::uint32_t> Simulator::slots_in_launch_order() const {
  std::vector<std::uint32_t> slots;
  for (std::uint32_t s = 0; s < ctas_.size(); ++s) slots.push_back(s);
  std::stable_sort(slots.begin(), slots.end(), [&](std::uint32_t a, std::uint32_t b) { return ctas_[a].launch_seq < ctas_[b].launch_seq; });
  return slots;
}

DeadlockReport Simulator::analyse_stuck(bool watchdog) {
  // Stuck warps in launch order, then warp order.
  std::vector<std::uint32_t> stuck;
  for (std::uint32_t slot : slots_in_launch_order())
    for (std::uint32_t i = ctas_[slot].first_warp; i < ctas_[slot].first_warp + static_cast<std::uint32_t>(program_.warps); ++i) {
      const Warp& w = warps_[i];
      if (w.state == WarpState::kDone || w.role < 0) continue;
      if (w.state != WarpState::kBlocked && !watchdog) continue;
      stuck.push_back(i);
    }
  std::vector<int> node_of(warps_.size(), -1);
  for (std::size_t n = 0; n < stuck.size(); ++n) node_of[stuck[n]] = static_cast<int>(n);
  std::vector<StuckNode> nodes(stuck.size());
  // Running warps that spin on a poll (a watchdog stop): copies standing for them, blocked at that poll.
  std::vector<std::pair<std::uint32_t, Warp>> spins;
  if (watchdog)
    for (std::uint32_t id : stuck) {
      const Warp& w = warps_[id];
      // (Only a running warp, or one blocked at a backoff `sleep` between polls: a warp blocked in a unit is
      // where it waits, whatever it polled before.)
      if (w.state == WarpState::kBlocked && w.wait_unit != kNoUnit) continue;
      for (const auto& u : units_) {
        Warp probe;
        if (!u->spinning(w, probe)) continue;
        Warp copy = w;
        copy.wait_unit = probe.wait_unit, copy.wait_obj = probe.wait_obj, copy.wait_value = probe.wait_value;
        copy.wait_op = probe.wait_op, copy.wait_since = probe.wait_since, copy.wait_cause = probe.wait_cause;
        copy.state = WarpState::kBlocked;
        spins.emplace_back(id, std::move(copy));
        break;
      }
    }
  auto spin_of = [&spins](std::uint32_t id) -> const Warp* {
    for (const auto& [i, copy] : spins)
      if (i == id) return &copy;
    return nullptr;
  };
  for (std::size_t n = 0; n < stuck.size(); ++n) {
    const Warp& w = warps_[stuck[n]];
    StuckWarp& s = nodes[n].warp;
    s.cta = ctas_[w.cta].id;
    s.warp = w.index;
    s.role = program_.roles[w.role].name;
    const Warp* spin = spin_of(stuck[n]);
    if (w.state == WarpState::kBlocked && spin == nullptr) {
      const isa::OpDesc& d = op_of(w, w.wait_op);
      s.loc = d.loc;
      s.op_text = d.text;
      s.waits_for = describe_wait(w);
      s.cause = causes_[w.wait_cause];
      s.since = w.wait_since.v;
    } else if (spin != nullptr) {
      // Still running (watchdog), in a loop around a poll that keeps failing: shown as waiting there.
      const isa::OpDesc& d = op_of(w, spin->wait_op);
      s.loc = d.loc;
      s.op_text = d.text;
      s.waits_for = fmt::format("{} (polled with {} in a loop, in vain)",
                                units_[spin->wait_unit]->describe_wait(*spin), isa::op_spec(d.kind).name);
      s.cause = causes_[spin->wait_cause];
      s.since = spin->wait_since.v;
    } else if (w.last_op != ~0u) {
      // Still running (watchdog): show the op it executed last, and what it polls, if anything.
      const isa::OpDesc& d = op_of(w, w.last_op);
      s.loc = d.loc;
      s.op_text = d.text;
      std::string poll = unit_for(d.kind).describe_poll(w, d);
      s.waits_for = poll.empty() ? "nothing: it keeps running" : poll;
      s.since = now().v;
    } else {
      const isa::RoleCode& rc = program_.roles[w.role];
      std::uint32_t done = rc.fast_orig[w.pc];  // the unfused instructions run so far: show the last one's line
      s.loc = program_.loc_of(rc.code[done ? done - 1 : 0]);
      s.waits_for = "nothing: it keeps running (no op executed yet)";
      s.since = now().v;
    }
  }
  for (std::size_t n = 0; n < stuck.size(); ++n) {
    const Warp* spin = spin_of(stuck[n]);
    const Warp& w = spin != nullptr ? *spin : warps_[stuck[n]];
    if (w.state != WarpState::kBlocked || w.wait_unit == kNoUnit) continue;
    WaitExplanation e(nodes[n], node_of, static_cast<int>(n));
    units_[w.wait_unit]->explain_wait(w, e);
  }
  return analyse_wait_graph(nodes, (num_clusters_ - next_cluster_) * program_.cluster_size());
}

// The busiest unit if it is busy most of the time; otherwise the wait that costs the most warp time in the
// role that waits most (latency or synchronisation bound).
static std::string bottleneck_in_words(const Stats& s) {
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
      w.busy -= std::max<std::int64_t>(0, w.busy_until - now().v);  // an op cut by the stop: its time up to it
      flush_warp_stats(w);
      w.state = WarpState::kDone;
    }
  s.kernel = program_.kernel_name;
  s.machine = machine_.name;
  s.clock_mhz = machine_.clock_mhz;
  s.clock_basis = machine_.clock_basis;
  s.cycles = r.cycles;
  s.time_us = static_cast<double>(r.cycles) / machine_.clock_mhz;
  if (r.outcome == Outcome::kFinished) {
    s.launch_us = machine_.launch_overhead_ns / 1000.0;
    s.time_us += s.launch_us;
  }
  s.ctas = ctas_run_;
  s.sms_used = std::count(sm_used_.begin(), sm_used_.end(), true);
  s.ops = ops_;
  s.events = static_cast<std::int64_t>(engine_.events_processed());
  s.flops = counters_.flops;
  s.bytes_loaded = counters_.bytes_loaded;
  s.bytes_stored = counters_.bytes_stored;
  s.roles = role_stats_;
  for (const auto& u : units_) u->add_stats(s, r.cycles, s.sms_used);
  s.bottleneck = bottleneck_in_words(s);
  s.peak_resident_ctas = peak_ctas_;
  s.cta_slots = static_cast<std::int64_t>(ctas_.size());
  s.reports = program_.reports;
}

}  // namespace smpipe::models
