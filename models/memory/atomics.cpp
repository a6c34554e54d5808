#include "models/memory/atomics.hpp"

#include <fmt/format.h>

#include <cmath>

#include "isa/reach.hpp"
#include "models/gpu/simulator.hpp"
#include "models/memory/lsu.hpp"
#include "models/tma/tma_unit.hpp"

namespace smpipe::models {

using isa::Attr;
using isa::OpKind;

namespace {
bool is_write(OpKind k) {
  switch (k) {
    case OpKind::kAtomAdd: case OpKind::kAtomExch: case OpKind::kAtomCas: case OpKind::kAtomMax: case OpKind::kRedAdd:
    case OpKind::kStRelease: case OpKind::kStRelaxed:
      return true;
    default: return false;
  }
}
bool returns_value(OpKind k) {
  switch (k) {
    case OpKind::kAtomAdd: case OpKind::kAtomExch: case OpKind::kAtomCas: case OpKind::kAtomMax: case OpKind::kLdAcquire:
    case OpKind::kLdRelaxed:
      return true;
    default: return false;
  }
}
}  // namespace

AtomicsUnit::AtomicsUnit(Simulator& sim)
    : Unit(sim),
      cause_spin_(sim.cause_id("spin on a global word")),
      cause_atom_(sim.cause_id("atomic")),
      cause_load_(sim.cause_id("ld.acquire / ld.relaxed")),
      cause_grid_(sim.cause_id("grid.sync")) {
  const isa::Program& p = sim.program();
  words_.resize(p.global_layout.count);
  for (std::size_t d = 0; d < p.globals.size(); ++d)
    std::fill_n(words_.begin() + p.global_layout.base[d], p.globals[d].size, p.globals[d].init);
  writers_.resize(words_.size());
  writes_in_flight_.assign(words_.size(), 0);
  uses_grid_sync_ = p.uses(OpKind::kGridSync);
  cta_barrier_ = static_cast<std::int64_t>(static_cast<double>(sim.machine().named_barrier_cycles) +
                                           sim.machine().named_barrier_cycles_per_warp * p.warps);
  writes_decl_.assign(p.globals.size(), false);
  acquired_decl_.assign(p.globals.size(), false);
  role_writes_.assign(p.roles.size(), std::vector<bool>(p.globals.size(), false));
  role_reads_.assign(p.roles.size(), std::vector<bool>(p.globals.size(), false));
  for (std::size_t r = 0; r < p.roles.size(); ++r)
    for (const isa::OpDesc& d : p.roles[r].ops) {
      if (is_write(d.kind)) {
        int decl = d.slot(Attr::kAddr)->decl;
        role_writes_[r][decl] = true;
        writes_decl_[decl] = true;
      }
      if (returns_value(d.kind) || d.kind == OpKind::kSpin) role_reads_[r][static_cast<std::size_t>(d.slot(Attr::kAddr)->decl)] = true;
      // (an atom whose sem= is computed at run time counts as acquiring)
      const isa::AttrSlot* sem = d.slot(Attr::kSem);
      const bool sem_dynamic = sem != nullptr && std::find(d.dynamic_slots.begin(), d.dynamic_slots.end(), sem->first) != d.dynamic_slots.end();
      if (d.kind == OpKind::kSpin || d.kind == OpKind::kLdAcquire ||
          (returns_value(d.kind) && sem != nullptr &&
           (sem_dynamic || isa::acquires(static_cast<isa::MemOrder>(d.base_values[sem->first])))))
        acquired_decl_[static_cast<std::size_t>(d.slot(Attr::kAddr)->decl)] = true;
    }
}

std::string AtomicsUnit::shared_word(int writer_role, int reader_role) const {
  if (writer_role < 0 || reader_role < 0) return "";
  const isa::Program& p = sim_.program();
  for (std::size_t d = 0; d < p.globals.size(); ++d)
    if (role_writes_[static_cast<std::size_t>(writer_role)][d] && role_reads_[static_cast<std::size_t>(reader_role)][d]) return p.globals[d].name;
  return "";
}

std::span<const isa::OpKind> AtomicsUnit::accepted() {
  static constexpr OpKind kOps[] = {OpKind::kAtomAdd,   OpKind::kAtomExch, OpKind::kAtomCas,   OpKind::kAtomMax,
                                    OpKind::kRedAdd,    OpKind::kLdAcquire, OpKind::kLdRelaxed, OpKind::kStRelease,
                                    OpKind::kStRelaxed, OpKind::kSpin,     OpKind::kFenceGpu,  OpKind::kGridSync};
  return kOps;
}

void AtomicsUnit::connect() {
  hazards_ = &sim_.find<HazardUnit>();
  lsu_ = &sim_.find<LsuUnit>();
  tma_ = &sim_.find<TmaUnit>();
}

// A release by a warp whose TMA stores (cp.async.bulk) have only been waited for with `.read`: `.read` waits
// until their source smem was read, not until their writes to global memory are complete (PTX ISA
// cp.async.bulk.wait_group), so the release does not order those writes for an acquirer that goes on to read
// them (a stream-K or split-K flag after its partials). A warning: the flag may publish something else.
void AtomicsUnit::check_unfinished_stores(const OpContext& ctx) {
  const std::uint32_t store = tma_->unfinished_store(ctx.warp_id);
  if (store == ~0u || unfinished_.size() >= 8) return;
  const isa::OpDesc* d = &sim_.op_of(ctx.warp, ctx.op);
  for (const auto& u : unfinished_)
    if (u.first == d) return;
  const isa::OpDesc& st = sim_.op_of(ctx.warp, store);
  unfinished_.emplace_back(
      d, fmt::format("{}: release before the TMA stores' global writes are complete: CTA {} warp {} "
                     "makes `{}` while its `{}` (line {}) has been waited for only with `tma.wait N read` "
                     "(or not at all), which waits until the store has read its smem source, not until "
                     "its writes to global memory are done (PTX ISA cp.async.bulk.wait_group.read). The "
                     "release does not order those writes: a warp that acquires the flag and reads the "
                     "stored data may read it before it lands. Wait with `tma.wait 0` (no `read`) before "
                     "the release, as a stream-K or split-K partial's publisher must",
                     d->loc.str(), ctx.cta().id, ctx.warp.index, d->text, st.text, st.loc.line));
}

// A relaxed write of a word that some op acquires (a turn, a flag), while a warp of the writer's CTA has written global
// data (st.global, tma.store) since the CTA's latest release: nothing releases that data, so the warp that acquires the
// word may read it stale (PTX memory model: an acquire synchronises only with a release).
void AtomicsUnit::check_relaxed_publish(const OpContext& ctx) {
  const isa::Program& p = sim_.program();
  const std::uint32_t word = ctx.global(Attr::kAddr);
  if (!acquired_decl_[static_cast<std::size_t>(p.global_layout.decl_of(word))] || unfinished_.size() >= 8) return;
  const isa::OpDesc* d = &sim_.op_of(ctx.warp, ctx.op);
  for (const auto& u : unfinished_)
    if (u.first == d) return;
  const Cta& c = ctx.cta();
  for (std::uint32_t wid = c.first_warp; wid < c.first_warp + static_cast<std::uint32_t>(p.warps); ++wid) {
    const std::int64_t since = wid < released_at_.size() ? released_at_[wid] : 0;
    auto [op, at] = lsu_->last_global_store(wid);
    if (op == ~0u || at < since) std::tie(op, at) = tma_->last_store(wid);
    if (op == ~0u || at < since) continue;
    const Warp& x = sim_.warp(wid);
    const isa::OpDesc& st = sim_.op_of(x, op);
    unfinished_.emplace_back(
        d, fmt::format("{}: a relaxed write publishes global data without a release: CTA {} warp {} makes `{}`, which "
                       "other warps acquire ({}), after CTA {} warp {}'s `{}` (line {}, cycle {}) with no release since "
                       "(no st.release, atom with sem=release or acq_rel, or fence.gpu in the CTA): a warp that acquires "
                       "the new value synchronises with nothing and may read that data stale. Make it `st.release` (or "
                       "put `fence.gpu` before it; with the CTA's other warps' writes, after the barrier that orders them)",
                       d->loc.str(), c.id, ctx.warp.index, d->text, word_name(word), c.id, x.index, st.text,
                       st.loc.line, at));
    return;
  }
}

// A release (fence.gpu, or a release op) by a warp: taken to cover the global writes of every warp of its CTA (a
// barrier before it makes it cumulative over them; without one the warning above stays silent, a miss, not a false one).
void AtomicsUnit::released(const OpContext& ctx) {
  const Cta& c = ctx.cta();
  const std::uint32_t end = c.first_warp + static_cast<std::uint32_t>(sim_.program().warps);
  if (end > released_at_.size()) released_at_.resize(end, 0);
  std::fill(released_at_.begin() + c.first_warp, released_at_.begin() + end, sim_.now().v + 1);
}

void AtomicsUnit::add_warnings(std::vector<std::string>& warnings) const {
  for (const auto& u : unfinished_) warnings.push_back(u.second);
}

void AtomicsUnit::cta_started(std::uint32_t slot) {
  sim_.reset_warps(spins_, slot);
  sim_.reset_warps(last_word_, slot);
  sim_.reset_warps(fence_, slot);  // the hazard unit drops the parts of a cluster that is gone
  sim_.reset_warps(released_at_, slot);
  if (slot >= pending_writes_.size()) pending_writes_.resize(slot + 1);
  pending_writes_[slot].clear();
  if (slot >= grid_ctas_.size()) grid_ctas_.resize(slot + 1);
  grid_ctas_[slot] = GridCta{};
}

void AtomicsUnit::cta_exiting(std::uint32_t slot) {
  if (!uses_grid_sync_) return;
  ++grid_exited_count_;
  if (grid_exited_.size() < 8) grid_exited_.push_back(sim_.cta(slot).id);
}

bool AtomicsUnit::holds(Cond c, std::int64_t v, std::int64_t x) {
  switch (c) {
    case Cond::kEq: return v == x;
    case Cond::kNe: return v != x;
    case Cond::kGe: return v >= x;
    case Cond::kGt: return v > x;
    case Cond::kLe: return v <= x;
    case Cond::kLt: return v < x;
  }
  return false;
}

std::string AtomicsUnit::word_name(std::uint32_t word) const {
  const isa::Program& p = sim_.program();
  return p.global_layout.element_name(p.globals, word);
}

std::string AtomicsUnit::cond_words(Cond c, std::int64_t x) const {
  static constexpr const char* kOps[] = {"==", "!=", ">=", ">", "<=", "<"};
  return fmt::format("{} {}", kOps[static_cast<int>(c)], x);
}

Cycle AtomicsUnit::half(std::int64_t round_trip) { return Cycle(round_trip / 2); }

Cycle AtomicsUnit::next_poll(Cycle first, std::int64_t period, Cycle now) {
  std::int64_t k = (now - first).v <= 0 ? 0 : ((now - first).v + period - 1) / period;
  return first + Cycle(k * period);
}

OpResult AtomicsUnit::execute(OpContext& ctx) {
  const Machine& m = sim_.machine();
  const isa::OpDesc& d = ctx.desc;
  bool hb = hazards_->tracks_buffers();
  if (d.kind == OpKind::kGridSync) {
    GridCta& g = grid_ctas_[ctx.cta_slot()];
    g.arrived += 1;
    hazards_->cluster_arrive(ctx.warp_id);
    ctx.block(this, 0, 0, cause_grid_);
    if (g.arrived >= ctx.cta().live_warps && master_alive(ctx.cta_slot())) grid_cta_ready(ctx.cta_slot());
    return ctx.blocked();
  }
  if (d.kind == OpKind::kFenceGpu) {
    released(ctx);
    // What the warp's relaxed reads saw is acquired; its relaxed writes after this carry its clock now.
    if (hb) {
      hazards_->fence_acquire(ctx.warp_id);
      hazards_->drop(fence_[ctx.warp_id]);
      fence_[ctx.warp_id] = hazards_->release(ctx.warp_id);
    }
    // As fence.acq_rel.cta and fence.proxy.async (MEMBAR in SASS), it waits for the warp's st.shared to be written
    // (measured: validation/results/h200/epilogue_issue2.json, epi_issue_membar_*).
    return lsu_->after_stores(ctx, m.fence_cycles);
  }
  const Warp& w = ctx.warp;
  Request r;
  r.kind = d.kind;
  r.word = ctx.global(Attr::kAddr);
  r.warp = ctx.warp_id;
  r.op = ctx.op;
  r.cta_id = ctx.cta().id;
  r.warp_index = w.index;
  r.role = w.role;
  r.lanes = static_cast<int>(ctx.lanes());
  // 64-bit words wrap on overflow, as the hardware's do.
  if (d.slot(Attr::kVal) != nullptr)
    r.val = static_cast<std::int64_t>(static_cast<std::uint64_t>(ctx.value(Attr::kVal)) *
                                      static_cast<std::uint64_t>(d.kind == OpKind::kRedAdd ? ctx.lanes() : 1));
  if (d.kind == OpKind::kAtomCas) r.cmp = ctx.value(Attr::kCmp);
  if (d.slot(Attr::kSem) != nullptr) r.order = static_cast<isa::MemOrder>(ctx.value(Attr::kSem));
  if (d.kind == OpKind::kLdAcquire) r.order = isa::MemOrder::kAcquire;
  if (d.kind == OpKind::kStRelease) r.order = isa::MemOrder::kRelease;
  bool fence_release = isa::releases(r.order);  // a release op starts with its own fence
  if (fence_release && is_write(d.kind)) check_unfinished_stores(ctx);
  if (fence_release) released(ctx);
  // (not a compare-and-swap, nor any op that acquires: taking a lock publishes nothing)
  else if (is_write(d.kind) && d.kind != OpKind::kAtomCas && !isa::acquires(r.order)) check_relaxed_publish(ctx);
  if (hb && is_write(d.kind)) r.release = fence_release ? hazards_->release(ctx.warp_id) : hazards_->clone(fence_[ctx.warp_id]);
  Cycle now = sim_.now();
  Cycle depart = now + Cycle(fence_release ? m.release_issue_cycles : 0);
  switch (d.kind) {
    case OpKind::kSpin: {
      Spin& s = spins_[ctx.warp_id];
      static constexpr Attr kConds[] = {Attr::kEq, Attr::kNe, Attr::kGe, Attr::kGt, Attr::kLe, Attr::kLt};
      for (int i = 0; i < 6; ++i)
        if (ctx.present(kConds[i])) s.cond = static_cast<Cond>(i), s.value = ctx.value(kConds[i]);
      s.active = true;
      s.word = r.word;
      // (The value now counts unless a write of this CTA is still on its way: the first poll comes after it.)
      s.hold(after_writes(ctx.cta_slot(), r.word) <= now && holds(s.cond, words_[r.word], s.value), words_[r.word], now.v);
      s.missed_at = -1;
      s.period = std::max<std::int64_t>(1, sim_.jit(m.spin_poll_cycles).v);
      s.load = std::max<std::int64_t>(1, sim_.jit(m.acquire_load_latency_cycles).v);
      s.first_poll = sim::max(now + half(s.load), after_writes(ctx.cta_slot(), r.word));
      s.poll_pending = true;
      last_word_[ctx.warp_id] = r.word;
      spinners_[r.word].push_back(ctx.warp_id);
      sim_.schedule(*this, s.first_poll, sim::Priority::kCompletion, ctx.warp_id, kPoll);
      ctx.block(this, r.word, 0, cause_spin_);
      return ctx.blocked();
    }
    case OpKind::kLdAcquire: case OpKind::kLdRelaxed: {
      Cycle rt = sim_.jit(m.acquire_load_latency_cycles);
      r.back = now + rt;
      last_word_[ctx.warp_id] = r.word;
      send(r, now + half(rt.v));
      ctx.block(this, r.word, 0, cause_load_);
      return ctx.blocked();
    }
    case OpKind::kStRelease: case OpKind::kStRelaxed: case OpKind::kRedAdd: {
      Cycle rt = sim_.jit(m.atomic_latency_cycles);
      send(r, depart + half(rt.v));
      return ctx.busy(fence_release ? m.release_issue_cycles : m.atomic_issue_cycles);
    }
    default: {  // atom.*: the warp waits for the value before the update
      Cycle rt = sim_.jit(m.atomic_latency_cycles);
      last_word_[ctx.warp_id] = r.word;
      r.back = depart + rt;
      send(r, depart + half(rt.v));
      ctx.block(this, r.word, 0, cause_atom_);
      return ctx.blocked();
    }
  }
}

Cycle AtomicsUnit::after_writes(std::uint32_t slot, std::uint32_t word) const {
  for (const auto& [x, at] : pending_writes_[slot])
    if (x == word) return at;
  return Cycle(0);
}

void AtomicsUnit::send(const Request& r, Cycle at) {
  std::uint32_t slot = sim_.warp(r.warp).cta;
  at = sim::max(at, after_writes(slot, r.word));
  if (is_write(r.kind)) {
    ++writes_in_flight_[r.word];
    auto& pending = pending_writes_[slot];
    std::erase_if(pending, [&](const auto& e) { return e.second < sim_.now(); });  // landed already
    auto it = std::find_if(pending.begin(), pending.end(), [&](const auto& e) { return e.first == r.word; });
    if (it == pending.end()) {
      pending.emplace_back(r.word, at);
    } else {
      it->second = sim::max(it->second, at);
    }
  }
  sim_.schedule(*this, at, sim::Priority::kCompletion, in_flight_.put(r), kArrive);
}

void AtomicsUnit::complete(std::uint32_t target, std::uint64_t payload) {
  switch (payload) {
    case kArrive: arrive(target); return;
    case kApply: apply(in_flight_.take(target)); return;
    case kPoll: poll(target); return;
    case kGridArrive: grid_arrive(target); return;
    case kGridApply: grid_counted(target); return;
    default: SMPIPE_CHECK(false, "unknown atomics event");
  }
}

// The request reaches the L2: loads are served at once; atomics and stores of one word are applied one
// after another, in the order they arrive (a warp's lanes at once).
void AtomicsUnit::arrive(std::uint32_t record) {
  Request r = in_flight_.take(record);
  if (r.kind == OpKind::kLdAcquire || r.kind == OpKind::kLdRelaxed) {
    apply(r);
    return;
  }
  double& busy = busy_until_[r.word];
  double start = std::max(static_cast<double>(sim_.now().v), busy);
  busy = start + r.lanes / sim_.machine().atomic_same_address_per_cycle;
  Cycle at(static_cast<std::int64_t>(std::ceil(start)));
  if (at <= sim_.now()) {
    apply(r);
  } else {
    sim_.schedule(*this, at, sim::Priority::kCompletion, in_flight_.put(r), kApply);
  }
}

// The request is applied at the L2: the word changes (or is read) now.
void AtomicsUnit::apply(const Request& r) {
  std::int64_t& w = words_[r.word];
  std::int64_t before = w;
  auto wrap_add = [](std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  };
  bool wrote = is_write(r.kind);
  if (wrote) --writes_in_flight_[r.word];
  switch (r.kind) {
    case OpKind::kAtomAdd: case OpKind::kRedAdd: w = wrap_add(w, r.val); break;
    case OpKind::kAtomExch: case OpKind::kStRelease: case OpKind::kStRelaxed: w = r.val; break;
    case OpKind::kAtomCas:
      wrote = w == r.cmp;  // a failed compare-and-swap writes nothing
      if (wrote) w = r.val;
      break;
    case OpKind::kAtomMax: w = std::max(w, r.val); break;
    default: break;
  }
  bool hb = hazards_->tracks_buffers();
  if (wrote) note_erase(r);
  if (wrote) {
    bool store = r.kind == OpKind::kStRelease || r.kind == OpKind::kStRelaxed;
    if (hb) hazards_->global_write(r.release, r.word, store);
    writers_[r.word] = Writer{r.cta_id, sim_.warp(r.warp).cta, r.warp_index, r.role, r.op, sim_.now().v};
  } else if (hb) {
    hazards_->drop(r.release);
  }
  if (returns_value(r.kind)) {
    last_read_[r.warp] = {r.word, sim_.now().v};
    Warp& x = sim_.warp(r.warp);
    x.slots[sim_.op_of(x, r.op).result_slots[0]] = before;
    if (hb) {
      if (isa::acquires(r.order)) {
        hazards_->global_acquire(r.warp, r.word);
      } else {
        hazards_->global_observe(r.warp, r.word);  // a later fence.gpu acquires it
      }
    }
    sim_.wake_at(r.warp, sim::max(r.back, sim_.now()));
  }
  if (wrote && w != before) changed(r.word);
}

// Word `word` changed: each warp spinning on it whose condition now holds sees it at its next poll.
void AtomicsUnit::changed(std::uint32_t word) {
  auto it = spinners_.find(word);
  if (it == spinners_.end()) return;
  Cycle now = sim_.now();
  for (std::uint32_t wid : it->second) {
    Spin& s = spins_[wid];
    bool holds_now = holds(s.cond, words_[word], s.value);
    if (now < s.first_poll && writers_[word].slot == sim_.warp(wid).cta) {
      // A write of the spinner's own CTA before its first poll, which is ordered after it: where the spin starts from.
      s.hold(holds_now, words_[word], now.v);
    } else if (holds_now && !s.held) {
      s.hold(true, words_[word], now.v);
    } else if (!holds_now && s.held) {  // met, and taken back before a poll saw it
      s.held = false;
      s.missed_value = s.held_value;
      s.missed_from = s.held_from;
      s.missed_at = now.v;
      s.missed_to = words_[word];
      s.missed_by = writers_[word];
    }
    if (s.poll_pending || !holds_now) continue;
    s.poll_pending = true;
    sim_.schedule(*this, next_poll(s.first_poll, s.period, now), sim::Priority::kCompletion, wid, kPoll);
  }
}

void AtomicsUnit::poll(std::uint32_t wid) {
  Spin& s = spins_[wid];
  s.poll_pending = false;
  s.held = false;
  if (!s.active || !holds(s.cond, words_[s.word], s.value)) return;
  s.active = false;
  last_read_[wid] = {s.word, sim_.now().v};  // (the poll that saw the condition hold)
  auto& list = spinners_[s.word];
  list.erase(std::find(list.begin(), list.end(), wid));
  if (list.empty()) spinners_.erase(s.word);
  if (hazards_->tracks_buffers()) hazards_->global_acquire(wid, s.word);
  sim_.wake_at(wid, sim_.now() + Cycle(s.load - s.load / 2));
}

// ---- grid.sync ----

// Every live warp of CTA `slot` is at grid.sync: after the CTA barrier, one thread adds 1 to the counter.
void AtomicsUnit::grid_cta_ready(std::uint32_t slot) {
  const Machine& m = sim_.machine();
  GridCta& g = grid_ctas_[slot];
  if (g.counted) return;
  g.counted = true;
  // CTA barrier, then one thread: a fence (__threadfence), the atomic on the counter, polls of the counter.
  g.rt = sim_.jit(m.atomic_latency_cycles);
  g.period = std::max<std::int64_t>(1, sim_.jit(m.spin_poll_cycles).v);
  g.load = std::max<std::int64_t>(1, sim_.jit(m.acquire_load_latency_cycles).v);
  sim_.schedule(*this, sim_.now() + Cycle(cta_barrier_ + m.fence_cycles) + half(g.rt.v), sim::Priority::kCompletion, slot,
                kGridArrive);
}

// A CTA's atomic reaches the counter: applied after the ones that arrived before it.
void AtomicsUnit::grid_arrive(std::uint32_t slot) {
  double start = std::max(static_cast<double>(sim_.now().v), grid_counter_busy_);
  grid_counter_busy_ = start + 1 / sim_.machine().atomic_same_address_per_cycle;
  Cycle at(static_cast<std::int64_t>(std::ceil(start)));
  GridCta& g = grid_ctas_[slot];
  g.first_poll = at + Cycle(g.rt.v - g.rt.v / 2) + half(g.load);  // the atomic returns, then the thread polls
  if (at <= sim_.now()) {
    grid_counted(slot);
  } else {
    sim_.schedule(*this, at, sim::Priority::kCompletion, slot, kGridApply);
  }
}

void AtomicsUnit::grid_counted(std::uint32_t slot) {
  grid_waiting_slots_.push_back(slot);
  if (++grid_counted_ < sim_.program().num_ctas()) return;
  // The last CTA arrived: every CTA sees the count at its next poll, then passes its CTA barrier.
  const Machine& m = sim_.machine();
  Cycle now = sim_.now();
  std::vector<std::vector<std::uint32_t>> by_cluster;
  std::vector<std::uint32_t> cluster_slots;
  for (std::uint32_t s : grid_waiting_slots_) {
    GridCta& g = grid_ctas_[s];
    Cycle seen = next_poll(g.first_poll, g.period, now) + Cycle(g.load - g.load / 2);
    const Cta& c = sim_.cta(s);
    std::size_t ci = std::find(cluster_slots.begin(), cluster_slots.end(), c.cluster_slot) - cluster_slots.begin();
    if (ci == cluster_slots.size()) cluster_slots.push_back(c.cluster_slot), by_cluster.emplace_back();
    for (int i = 0; i < sim_.program().warps; ++i) {
      std::uint32_t wid = c.first_warp + i;
      const Warp& x = sim_.warp(wid);
      if (x.state == WarpState::kBlocked && x.wait_unit == index()) {
        by_cluster[ci].push_back(wid);
        sim_.wake_at(wid, seen + Cycle(m.fence_cycles + cta_barrier_));  // a fence, then the CTA barrier
      }
    }
    g = GridCta{};
  }
  for (std::size_t i = 0; i < cluster_slots.size(); ++i) hazards_->cluster_release(cluster_slots[i], by_cluster[i]);
  grid_waiting_slots_.clear();
  grid_counted_ = 0;
}

void AtomicsUnit::warp_exited(std::uint32_t warp_id) {
  std::uint32_t slot = sim_.warp(warp_id).cta;
  const GridCta& g = grid_ctas_[slot];
  if (g.arrived > 0 && g.arrived >= sim_.cta(slot).live_warps && master_alive(slot)) grid_cta_ready(slot);
}

// Cooperative groups' grid barrier is signalled by thread (0,0,0) of each CTA (its sync_grids: the CTA barrier, then
// that thread alone does the atomic and the spin): a CTA whose warp 0 exited never arrives.
bool AtomicsUnit::master_alive(std::uint32_t slot) const {
  return sim_.warp(sim_.cta(slot).first_warp).state != WarpState::kDone;
}

// ---- reports ----

std::string AtomicsUnit::describe_wait(const Warp& w) const {
  const isa::OpDesc& d = sim_.op_of(w, w.wait_op);
  if (d.kind == OpKind::kGridSync) {
    const GridCta& g = grid_ctas_[w.cta];
    return fmt::format("grid.sync: {} of {} CTAs of the grid arrived; {} of this CTA's {} live warps are here", grid_counted_,
                       sim_.program().num_ctas(), g.arrived, sim_.cta(w.cta).live_warps);
  }
  std::uint32_t word = w.wait_obj;
  if (d.kind == OpKind::kSpin) {
    const Spin& s = spins_[sim_.warp_id(w)];
    return fmt::format("spins on {} until it is {} (now {}; {})", word_name(word), cond_words(s.cond, s.value), words_[word],
                       last_write(word));
  }
  return fmt::format("{} of {} (now {}; {})", d.kind == OpKind::kLdAcquire || d.kind == OpKind::kLdRelaxed ? "a load" : "an atomic",
                     word_name(word), words_[word], last_write(word));
}

// Who wrote the word's value last; a writer whose CTA has exited is said to have (a lock taken and never released,
// a flag its only resetter left set: the warps still running are all that can change the word).
std::string AtomicsUnit::last_write(std::uint32_t word) const {
  const Writer& wr = writers_[word];
  if (wr.cycle < 0) return "never written";
  const Cta& c = sim_.cta(wr.slot);
  return fmt::format("last written at cycle {} by CTA {} warp {}, line {}{}", wr.cycle, wr.cta, wr.warp,
                     sim_.program().roles[wr.role].ops[wr.op].loc.line,
                     c.id != wr.cta || c.exited ? fmt::format(", and CTA {} has exited", wr.cta) : "");
}

AtomicsUnit::Writes AtomicsUnit::may_write(std::uint32_t warp_id, std::uint32_t word) const {
  const isa::Program& p = sim_.program();
  const Warp& w = sim_.warp(warp_id);
  if (w.role < 0 || w.state == WarpState::kDone) return Writes::kNo;
  int decl = static_cast<int>(p.global_layout.decl_of(word));
  if (!role_writes_[static_cast<std::size_t>(w.role)][static_cast<std::size_t>(decl)]) return Writes::kNo;
  if (warp_id >= reach_.size()) reach_.resize(warp_id + 1);
  Reach& r = reach_[warp_id];
  if (r.ops != w.ops || r.pc != w.pc) {
    const isa::RoleCode& rc = p.roles[static_cast<std::size_t>(w.role)];
    r = Reach{w.pc, w.ops, false, {}};
    // The variables as they are, but the results of the warp's latest op: one it waits on (an atom's old value, a
    // tmem.alloc's address) has not written them yet.
    std::vector<isa::MaybeValue> vars(rc.slot_names.size());
    for (std::size_t i = 0; i < vars.size() && i < w.slots.size(); ++i) vars[i] = {true, w.slots[i]};
    if (w.last_op < rc.ops.size())
      for (std::uint32_t slot : rc.ops[w.last_op].result_slots)
        if (slot < vars.size()) vars[slot] = {};
    auto add = [&](int decl_written, std::int64_t element) {
      std::pair<int, std::int64_t> entry{decl_written, element};
      if (std::find(r.writes.begin(), r.writes.end(), entry) == r.writes.end()) r.writes.push_back(entry);
    };
    r.any = isa::walk_reachable_ops(rc, rc.fast_orig[w.pc], vars, w.builtins,
                                    [&](std::uint32_t op, std::span<const isa::MaybeValue> values) {
                                      const isa::OpDesc& d = rc.ops[op];
                                      if (!is_write(d.kind)) return false;
                                      const isa::AttrSlot* a = d.slot(Attr::kAddr);
                                      const isa::MaybeValue& v = values[a->first];
                                      add(a->decl, v.known ? v.value : -1);
                                      return false;
                                    },
                                    walk_budget_);
    // The latest op itself: it may not have run (a --max-ops stop comes after the interpreter counted it) or its write
    // may not have landed (an atom the warp waits on).
    if (w.last_op < rc.ops.size() && is_write(rc.ops[w.last_op].kind)) add(rc.ops[w.last_op].slot(Attr::kAddr)->decl, -1);
  }
  if (r.any) return Writes::kMaybe;
  std::int64_t element = word - p.global_layout.base[static_cast<std::size_t>(decl)];
  Writes best = Writes::kNo;
  for (const auto& [d, i] : r.writes)
    if (d == decl && i == element) return Writes::kThis;
    else if (d == decl && i < 0) best = Writes::kMaybe;
  return best;
}

bool AtomicsUnit::write_in_flight(std::uint32_t word) const { return writes_in_flight_[word] > 0; }

std::string AtomicsUnit::written_elements(std::uint32_t word) const {
  const isa::Program& p = sim_.program();
  std::uint32_t decl = p.global_layout.decl_of(word);
  const auto& g = p.globals[decl];
  if (!g.array || writers_[word].cycle >= 0) return "";
  std::vector<std::string> written;
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < g.size; ++i)
    if (writers_[p.global_layout.base[decl] + static_cast<std::uint32_t>(i)].cycle >= 0 && ++count <= 8)
      written.push_back(std::to_string(i));
  if (count == 0) return "";
  return fmt::format("; of {}[0..{}], {}{} {} written, {} never", g.name, g.size - 1, fmt::join(written, ", "),
                     count > 8 ? fmt::format(" and {} more", count - 8) : "", count == 1 ? "was" : "were", word_name(word));
}

void AtomicsUnit::explain_wait(const Warp& w, WaitExplanation& e) const {
  const isa::Program& p = sim_.program();
  const isa::OpDesc& d = sim_.op_of(w, w.wait_op);
  std::int64_t unlaunched = sim_.clusters_left() ? p.num_ctas() - sim_.ctas_started() : 0;
  std::string residency =
      unlaunched > 0
          ? fmt::format("{} of the grid's {} CTAs have not started: the GPU held {} CTAs at once and every one of them now "
                        "waits, so no SM frees up for the rest",
                        unlaunched, p.num_ctas(), sim_.live_ctas())
          : "";
  if (d.kind == OpKind::kGridSync) {
    int missing = 0;
    std::string example;
    for (std::uint32_t slot : sim_.slots_in_launch_order()) {
      const Cta& c = sim_.cta(slot);
      if (c.id < 0 || c.exited) continue;
      for (int i = 0; i < p.warps; ++i) {
        std::uint32_t wid = c.first_warp + i;
        const Warp& x = sim_.warp(wid);
        bool at_grid_sync = x.state == WarpState::kBlocked && x.wait_unit == index() && sim_.op_of(x, x.wait_op).kind == OpKind::kGridSync;
        if (x.state == WarpState::kDone || x.role < 0 || at_grid_sync) continue;
        e.waits_on(wid);
        if (++missing == 1)
          example = fmt::format("CTA {} warp {} ({}) {}", c.id, x.index, p.roles[x.role].name,
                                x.state == WarpState::kBlocked ? "waits for " + sim_.describe_wait(x) : "still runs");
      }
    }
    if (missing > 0)
      e.cause(fmt::format("grid.sync: {} live warp(s) of the grid have not reached it; {}", missing, example));
    // CTAs whose every live warp is here but whose warp 0 exited: nobody arrives for them.
    std::vector<std::string> masterless;
    for (std::uint32_t slot : sim_.slots_in_launch_order()) {
      const Cta& c = sim_.cta(slot);
      if (c.id < 0 || c.exited || master_alive(slot) || grid_ctas_[slot].arrived == 0) continue;
      if (masterless.size() < 4) masterless.push_back(fmt::format("CTA {}", c.id));
    }
    if (!masterless.empty())
      e.cause(fmt::format("grid.sync: warp 0 of {} exited before it, and cooperative groups' grid barrier is signalled by "
                          "thread 0 of each CTA (sync_grids: only that thread does the atomic arrive and the spin), so those "
                          "CTAs never arrive: warp 0 must reach every grid.sync (every thread of the grid calls it)",
                          fmt::join(masterless, ", ")));
    if (unlaunched > 0)
      e.cause(fmt::format("grid.sync waits for every CTA of the grid, but {}. A grid-wide barrier needs all CTAs resident at "
                          "once: cudaLaunchCooperativeKernel refuses such a grid (cudaErrorCooperativeLaunchTooLarge); size "
                          "the grid to what fits (SM_COUNT x CTAs per SM) and loop over the work",
                          residency));
    if (grid_exited_count_ > 0)
      e.cause(fmt::format("{} CTA(s) exited ({}{}), so they never reach this grid.sync: every CTA must call grid.sync the same "
                          "number of times",
                          grid_exited_count_, fmt::join(grid_exited_, ", "),
                          grid_exited_count_ > static_cast<std::int64_t>(grid_exited_.size()) ? " ..." : ""));
    return;
  }
  if (d.kind != OpKind::kSpin) return;  // a load or an atom in flight ends by itself (a watchdog stop)
  std::uint32_t word = w.wait_obj;
  const Spin& s = spins_[sim_.warp_id(w)];
  int decl = static_cast<int>(p.global_layout.decl_of(word));
  // Wait-for edges go to the live warps whose code can still write the word from where they stand (isa/reach.hpp: a
  // warp of the role that `if warp == 0` keeps from the write, or whose loop has ended, is not one): in the spinner's
  // CTA, and in every CTA for a word that is not an array element or for a writer whose write names this element. (A
  // write whose index is known only when it runs gets no edge from another CTA; blocked ones are named in the causes.)
  const std::uint32_t me = sim_.warp_id(w);
  int live_writers = 0;
  bool self_writes = may_write(me, word) != Writes::kNo;
  bool scalar = !p.globals[decl].array;
  std::vector<std::string> elsewhere;  // blocked writers in other CTAs, when the word is an array element (no edges)
  int here_writers = 0;                // live writers in the spinner's CTA besides itself (they get edges)
  std::vector<std::string> spinning;   // writers stopped at a spin on this same word, before their write (up to 4)
  int spinners_writing = 0;            // how many
  bool spinner_accepts = false;        // one of them accepts the value now (a watchdog stop before its poll)
  for (std::uint32_t slot : sim_.slots_in_launch_order()) {
    const Cta& c = sim_.cta(slot);
    if (c.id < 0 || c.exited) continue;
    for (int i = 0; i < p.warps; ++i) {
      std::uint32_t wid = c.first_warp + i;
      const Warp& x = sim_.warp(wid);
      Writes writes = may_write(wid, word);
      if (writes == Writes::kNo) continue;
      ++live_writers;
      const bool spins_here = x.state == WarpState::kBlocked && x.wait_unit == index() &&
                              sim_.op_of(x, x.wait_op).kind == OpKind::kSpin && spins_[wid].word == word;
      if (spins_here && holds(spins_[wid].cond, words_[word], spins_[wid].value)) spinner_accepts = true;  // (a poll to come)
      if (spins_here && ++spinners_writing <= 4)
        spinning.push_back(fmt::format("CTA {} warp {} (until {})", c.id, i, cond_words(spins_[wid].cond, spins_[wid].value)));
      if (wid != me && slot == w.cta) ++here_writers;
      if (wid != me && (scalar || slot == w.cta || writes == Writes::kThis)) e.waits_on(wid);
      // (Warps stopped at the spinner's own spin on the same word are in its state, not in its way: not named. One at
      // that spin on another element is: it waits for its own word, and when the spinner's warp writes that word after
      // this spin, the two wait for each other's later writes.)
      const bool same_spin = x.role == w.role && x.wait_op == w.wait_op &&
                             (x.wait_unit != index() || spins_[wid].word == word);
      if (!scalar && slot != w.cta && x.state == WarpState::kBlocked && elsewhere.size() < 2 && !same_spin) {
        std::string entry = fmt::format("CTA {} warp {} ({}) waits at line {} for {}", c.id, i, p.roles[x.role].name,
                                        sim_.op_of(x, x.wait_op).loc.line, sim_.describe_wait(x));
        if (x.wait_unit == index() && sim_.op_of(x, x.wait_op).kind == OpKind::kSpin && may_write(me, spins_[wid].word) != Writes::kNo)
          entry += fmt::format(", which this warp's code writes after its own spin: each waits for a write the other "
                               "makes later (a cycle of turns: the order in which the CTAs take their turns must be one "
                               "that all of them follow, e.g. every CTA's split 0 before any split 1)");
        elsewhere.push_back(std::move(entry));
      }
    }
  }
  std::string what = fmt::format("{} {} (it is {})", word_name(word), cond_words(s.cond, s.value), words_[word]);
  // (arrivals erased on this word, or on one the spinning warp's role reads: a grid barrier's count beside its generation)
  const bool erased_here =
      erase_ && (erase_->word == word ||
                 role_reads_[static_cast<std::size_t>(w.role)][static_cast<std::size_t>(p.global_layout.decl_of(erase_->word))]);
  if (erased_here) e.lead_cause(erase_words());
  // A spinner on this word (the earliest) whose condition held and was taken back by a write before its next poll: it
  // can never see that moment again. Every spinner of the word names it (first: the others' causes follow from it).
  const Spin* missed = nullptr;
  std::uint32_t missed_wid = 0;
  if (auto it = spinners_.find(word); it != spinners_.end())
    for (std::uint32_t wid : it->second) {
      const Spin& o = spins_[wid];
      if (o.missed_at >= 0 && (!missed || o.missed_at < missed->missed_at || (o.missed_at == missed->missed_at && wid < missed_wid)))
        missed = &o, missed_wid = wid;
    }
  if (missed) {
    const Writer& by = missed->missed_by;
    const Warp& mw = sim_.warp(missed_wid);
    e.cause(fmt::format("CTA {} warp {}'s spin for {} {} missed it: {} was {} from cycle {} (which the condition accepts), but at "
                        "cycle {} CTA {} warp {}'s `{}` at line {} made it {} before that warp's next poll. A write that "
                        "takes the value back (a reset of a counter, a decrement) races with the warps still polling: they "
                        "need not have seen it yet (a grid barrier that resets its count: count generations instead, e.g. "
                        "wait for (round + 1) x CTAs, or reset only once every CTA has left the spin)",
                        sim_.cta(mw.cta).id, mw.index, word_name(word), cond_words(missed->cond, missed->value), word_name(word),
                        missed->missed_value, missed->missed_from, missed->missed_at, by.cta, by.warp,
                        by.role >= 0 ? p.roles[by.role].ops[by.op].text : "?", by.role >= 0 ? p.roles[by.role].ops[by.op].loc.line : 0,
                        missed->missed_to));
  }
  if (!writes_decl_[decl]) {
    e.cause(fmt::format("no op of the kernel writes {}: the spin for {} never ends", p.globals[decl].name, what));
  } else if (unlaunched > 0) {
    e.cause(fmt::format("the spin for {} may wait on a CTA that never started: {}. A CTA may only wait for CTAs that are "
                        "resident with it or finished (stream-K and split-K fix-ups wait on earlier tiles only; a "
                        "persistent grid no larger than what fits)",
                        what, residency));
  } else if (write_in_flight(word)) {
    // (a watchdog stop: a write of the word is on its way to the L2; nothing to blame yet)
  } else if (live_writers == 0) {
    e.cause(fmt::format("no live warp can still write {}: the warps whose code writes {} have exited, or their code from "
                        "where they stand does not reach such a write (a branch on the warp, an index, a loop that has ended), "
                        "and {} did not happen{}",
                        word_name(word), p.globals[decl].name, what, written_elements(word)));
  } else if (live_writers == 1 && self_writes) {
    e.cause(fmt::format("no live warp but the spinning one has code that writes {}: nothing else can end the spin for {}",
                        p.globals[decl].name, what));
  } else if (spinners_writing == live_writers && !spinner_accepts) {
    e.cause(fmt::format("{} can only be written by warps that spin on it themselves, each before its write: {}{}; it is {}, "
                        "which none of their conditions accepts, so none of them gets to its write{}",
                        word_name(word), fmt::join(spinning, ", "),
                        live_writers > static_cast<int>(spinning.size())
                            ? fmt::format(" and {} more", live_writers - static_cast<int>(spinning.size()))
                            : "",
                        words_[word], missed || erased_here ? "" : " (a turn or count off by one?)"));
  } else if (!elsewhere.empty() && here_writers == 0) {
    // Which element another CTA's warp writes is known only when it runs: no edge is drawn, but the blocked ones
    // are named (a writer that waits for the spinner's CTA closes a cycle the graph cannot see).
    e.cause(fmt::format("the spin for {} waits for a write by another CTA, and warps of other CTAs whose code writes {} are "
                        "blocked: {}",
                        what, p.globals[decl].name, fmt::join(elsewhere, "; ")));
  }
}

// A write of a word: a read-modify-write joins the word's list; a plain store (or an exchange) that overwrites RMWs made
// by other CTAs after the storer's own latest RMW of the word erased them (a counter reset after the release that let
// others add to it again).
void AtomicsUnit::note_erase(const Request& r) {
  const Rmw me{r.cta_id, r.warp, r.warp_index, r.role, r.op, sim_.now().v};
  const bool store = r.kind == OpKind::kStRelease || r.kind == OpKind::kStRelaxed || r.kind == OpKind::kAtomExch;
  if (isa::releases(r.order)) last_release_[r.warp] = me;
  if (!store) {
    std::vector<Rmw>& list = rmws_[r.word];
    // (the latest ones count: the storer's own is among the last; the oldest half goes when the list is full)
    if (list.size() >= kMaxRmws) list.erase(list.begin(), list.begin() + kMaxRmws / 2);
    list.push_back(me);
    return;
  }
  auto it = rmws_.find(r.word);
  if (it == rmws_.end()) return;
  std::vector<Rmw> list = std::move(it->second);
  rmws_.erase(it);
  if (erase_) return;
  auto own = std::find_if(list.rbegin(), list.rend(), [&](const Rmw& x) { return x.warp == r.warp && x.cta == r.cta_id; });
  if (own == list.rend()) return;
  // Only what the storer had not seen: RMWs after its own and after its latest read of the word (a spin that saw the
  // count complete, then a reset, erases nothing it did not count).
  std::int64_t seen = own->cycle;
  if (auto rd = last_read_.find(r.warp); rd != last_read_.end() && rd->second.first == r.word && rd->second.second >= 0)
    seen = std::max(seen, rd->second.second);
  Erase e{r.word, me, *own, {}, 0, {}};
  for (auto x = own.base(); x != list.end(); ++x)
    if (x->cta != r.cta_id && x->cycle > seen && e.erased++ == 0) e.first = *x;
  if (e.erased == 0) return;
  if (auto rel = last_release_.find(r.warp); rel != last_release_.end() && rel->second.cta == r.cta_id &&
                                              rel->second.cycle >= own->cycle && rel->second.op != r.op)
    e.release = rel->second;
  erase_ = e;
}

std::string AtomicsUnit::erase_words() const {
  if (!erase_) return "";
  const isa::Program& p = sim_.program();
  const Erase& e = *erase_;
  auto op = [&](const Rmw& x) {
    return x.role >= 0 ? fmt::format("`{}` (line {}, cycle {})", p.roles[x.role].ops[x.op].text, p.roles[x.role].ops[x.op].loc.line,
                                     x.cycle)
                       : fmt::format("op (cycle {})", x.cycle);
  };
  std::string release = e.release.cta >= 0 ? fmt::format(". Its {} came before the reset and let them go on: reset first, then "
                                                         "release",
                                                         op(e.release))
                                           : ": a reset must come before whatever lets the others add again";
  return fmt::format("{}: CTA {} warp {}'s {} overwrote {} read-modify-write(s) that other CTAs made after its own {}, the "
                     "first CTA {} warp {}'s {}: those arrivals are lost, so a count that waits for them is never reached{}",
                     word_name(e.word), e.store.cta, e.store.warp_index, op(e.store), e.erased, op(e.own), e.first.cta,
                     e.first.warp_index, op(e.first), release);
}

std::string AtomicsUnit::describe_poll(const Warp& w, const isa::OpDesc& d) const {
  if (!returns_value(d.kind)) return "";  // a load or an atom that a loop repeats
  std::uint32_t word = last_word_[sim_.warp_id(w)];
  return fmt::format("polls {} with {} (it is {}; {})", word_name(word), isa::op_spec(d.kind).name, words_[word], last_write(word));
}

}  // namespace smpipe::models
