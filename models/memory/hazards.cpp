#include "models/memory/hazards.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "models/gpu/simulator.hpp"
#include "models/sync/mbarrier_unit.hpp"

namespace smpipe::models {

namespace {
constexpr std::size_t kMaxRecords = 256;  // unordered accesses kept per buffer and kind (bounded memory)
}  // namespace

HazardUnit::HazardUnit(Simulator& sim) : Unit(sim), off_(!sim.options().hazards) {
  const isa::Program& p = sim.program();
  warps_ = p.warps;
  bars_ = static_cast<int>(p.mbarrier_layout.count);
  cluster_size_ = static_cast<int>(p.cluster_size());
  // Rounded up to whole 32-byte vectors: a join is then a loop of whole vectors (the extra components stay 0).
  dim_ = (static_cast<std::size_t>(cluster_size_) * static_cast<std::size_t>(warps_ + bars_) + 7) / 8 * 8;
  smem_count_ = p.smem_layout.count;
  tmem_base_ = smem_count_ + static_cast<std::uint32_t>(bars_);
  whole_.assign(smem_count_, false);
  for (std::size_t d = 0; d < p.smems.size(); ++d)
    for (int e = 0; e < p.smems[d].size; ++e) whole_[p.smem_layout.base[d] + static_cast<std::uint32_t>(e)] = p.smems[d].whole;
  for (const auto& role : p.roles)
    for (const auto& d : role.ops) {
      const isa::AttrSlot* t = d.slot(isa::Attr::kTmem);
      if (t != nullptr && t->present) tracks_ = tracks_tmem_ = true;
      if (d.kind == isa::OpKind::kClcTryCancel || d.kind == isa::OpKind::kClcQuery) tracks_ = true;
      if (d.kind == isa::OpKind::kMbarrierInit) inits_ = !off_;
      for (const isa::AttrSpec& a : isa::op_spec(d.kind).attrs) {
        const isa::AttrSlot* s = d.slot(a.attr);
        if (a.type == isa::AttrType::kSmem && s != nullptr && s->decl >= 0) tracks_ = true;
      }
    }
  if (off_) tracks_ = tracks_tmem_ = false;
}

// ---- clocks ----

// The hottest loop of the checker (every arrive, wait and warpgroup access joins a clock of one component
// per warp and per mbarrier of the cluster): compiled for AVX2 as well as the baseline, picked at load time
// by the CPU (GCC function multiversioning); both give the same values.
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__)
#define SMPIPE_AVX2_CLONES [[gnu::target_clones("avx2", "default")]]
#else
#define SMPIPE_AVX2_CLONES  // other processors and object formats: the one portable version
#endif
SMPIPE_AVX2_CLONES void HazardUnit::join(Clock* into, const Clock* from, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 8)
    for (std::size_t j = 0; j < 8; ++j) into[i + j] = std::max(into[i + j], from[i + j]);
}

std::vector<HazardUnit::Clock>& HazardUnit::row(std::vector<std::vector<Clock>>& rows, std::size_t i) {
  if (rows[i].size() != dim_) rows[i].assign(dim_, 0);
  return rows[i];
}

HazardUnit::Domain& HazardUnit::domain_of_cta(std::uint32_t cta) { return domains_[sim_.cta(cta).cluster_slot]; }

HazardUnit::Clock* HazardUnit::vc_of(std::uint32_t warp_id) {
  const Warp& w = sim_.warp(warp_id);
  const Cta& c = sim_.cta(w.cta);
  return domains_[c.cluster_slot].warps.data() + comp_warp(c.rank, w.index) * dim_;
}

std::uint32_t HazardUnit::comp_of(std::uint32_t warp_id) const {
  const Warp& w = sim_.warp(warp_id);
  return comp_warp(sim_.cta(w.cta).rank, w.index);
}

std::uint32_t HazardUnit::barrier_index(std::uint32_t cta, std::uint32_t bar) const {
  return static_cast<std::uint32_t>(sim_.cta(cta).rank * bars_) + bar;
}

void HazardUnit::connect() { mbar_ = &sim_.find<MbarrierUnit>(); }

void HazardUnit::cta_started(std::uint32_t slot) {
  if (slot < response_notes_.size()) response_notes_[slot].clear();
  if (off_) return;
  const Cta& c = sim_.cta(slot);
  if (slot >= buffers_.size()) buffers_.resize(slot + 1);
  // Cleared, not reallocated: the slot's next CTA reuses the record vectors' storage.
  buffers_[slot].resize(tracks_ ? tmem_base_ + (tracks_tmem_ ? kTmemChunks : 0) : 0);
  for (Buffer& b : buffers_[slot]) {
    b.writes.clear();
    b.reads.clear();
    b.written = false;
    b.read_since_write = false;
    b.refilled = false;
    b.thread_writers = 0;
    b.handoff = false;
    b.async_written = false;
    b.wrote.clear();
    b.credited.clear();
  }
  for (std::uint32_t w = c.first_warp; w < c.first_warp + static_cast<std::uint32_t>(warps_) && w < observed_.size(); ++w)
    observed_[w].clear();
  // (the reports' latest waits of the slot's warps were the previous CTA's)
  for (std::uint32_t w = c.first_warp; w < c.first_warp + static_cast<std::uint32_t>(warps_) && w < last_acquired_.size(); ++w)
    last_acquired_[w] = {kNone, kNone};
  if (c.rank != 0) return;  // one domain per cluster, reset by its first CTA
  if (c.cluster_slot >= domains_.size()) domains_.resize(c.cluster_slot + 1);
  Domain& d = domains_[c.cluster_slot];
  std::size_t nw = static_cast<std::size_t>(cluster_size_ * warps_), nb = static_cast<std::size_t>(cluster_size_ * bars_);
  d.warps.assign(nw * dim_, 0);
  for (std::size_t i = 0; i < nw; ++i) d.warps[i * dim_ + i] = 1;  // each warp's own epoch starts at 1
  d.acc.resize(nb);
  d.snap.resize(nb);
  d.bound.resize(nb);
  for (std::size_t i = 0; i < nb; ++i) {
    d.acc[i].clear();
    d.snap[i].clear();
    d.bound[i].clear();
  }
  d.named.resize(static_cast<std::size_t>(cluster_size_ * isa::kNamedBarriers));
  for (auto& r : d.named) r.clear();
  d.named_done.resize(d.named.size());
  for (auto& r : d.named_done) r.clear();
  d.cluster.assign(dim_, 0);
  d.init.assign(nb, 0);
  d.init_warp.assign(nb, -1);
  d.init_op.assign(nb, 0);
  d.globals.clear();
  // Parts of the cluster that ran in this slot before are gone with it.
  for (std::size_t i = 0; i < parts_.size(); ++i)
    if (parts_[i].live && parts_[i].cluster == c.cluster_slot) free_part((Part{parts_[i].gen} << 32) | i);
}

void HazardUnit::cta_exiting(std::uint32_t slot) {
  if (!tracks_ || slot >= buffers_.size() || !sim_.options().exit_checks) return;
  const Cta& c = sim_.cta(slot);
  auto observed = [&](const Rec& r) {
    for (int i = 0; i < warps_; ++i)
      if (ordered(r, vc_of(c.first_warp + static_cast<std::uint32_t>(i)))) return true;
    return false;
  };
  for (std::uint32_t b = 0; b < buffers_[slot].size(); ++b) {
    for (const Rec& r : buffers_[slot][b].writes)
      if ((r.via == Via::kTmaLoad || r.via == Via::kClcResponse) && r.part == 0 && !observed(r))
        sim_.ub(r.warp, r.op, "CTA exited before its async op was observed",
                fmt::format("CTA {} exits, but no warp of it observed the completion of {} into {} (a wait on {} for the phase it "
                            "lands in): on another schedule it still writes the CTA's shared memory after the exit. {}",
                            c.id, op_words(r), buffer_name(b),
                            r.bar == kNone ? std::string("its barrier") : sim_.program().mbarrier_layout.element_name(sim_.program().mbarriers, r.bar),
                            sim_.warp(r.warp).cta == slot
                                ? unobserved_fill_words(slot, r)
                                : fmt::format("A cluster peer (CTA {}) multicast it here: every CTA of the cluster must consume "
                                              "the stages its peers send it (they ran different numbers of iterations: the CTAs "
                                              "of a cluster must walk the same tiles and k-blocks)",
                                              sim_.cta(sim_.warp(r.warp).cta).id)));
    for (const Rec& r : buffers_[slot][b].reads)
      if (r.via == Via::kTmaStore && r.part != 0 && state(r.part) != nullptr)
        sim_.ub(r.warp, r.op, "CTA exited before its async op was observed",
                fmt::format("CTA {} exits, but {} may still read {}: no `tma.wait N read` covering its bulk group (after a "
                            "`tma.commit`) came before the exit; wait for the stores' reads before exiting (CUTLASS's "
                            "store tail: tma_store_wait<0>)",
                            c.id, op_words(r), buffer_name(b)));
  }
}

// ---- parts in flight ----

HazardUnit::PartState* HazardUnit::state(Part p) {
  if (p == 0) return nullptr;
  std::size_t i = static_cast<std::uint32_t>(p);
  if (i >= parts_.size() || !parts_[i].live || parts_[i].gen != static_cast<std::uint32_t>(p >> 32)) return nullptr;
  return &parts_[i];
}

HazardUnit::Part HazardUnit::alloc_part(std::uint32_t cluster, const Clock* clock) {
  std::uint32_t i;
  if (parts_free_.empty()) {
    i = static_cast<std::uint32_t>(parts_.size());
    parts_.emplace_back();
  } else {
    i = parts_free_.back();
    parts_free_.pop_back();
  }
  std::uint32_t vc;
  if (pool_free_.empty()) {
    vc = static_cast<std::uint32_t>(pool_.size() / std::max<std::size_t>(dim_, 1));
    std::ptrdiff_t at = clock - pool_.data();
    bool in_pool = clock >= pool_.data() && clock < pool_.data() + pool_.size();
    pool_.resize(pool_.size() + dim_);
    if (in_pool) clock = pool_.data() + at;  // the pool moved
  } else {
    vc = pool_free_.back();
    pool_free_.pop_back();
  }
  std::copy(clock, clock + dim_, pool_.data() + static_cast<std::size_t>(vc) * dim_);
  PartState& s = parts_[i];
  s.gen += 1;
  s.live = true;
  s.cluster = cluster;
  s.vc = vc;
  s.cta = s.buffer = s.buffer_end = kNone;
  s.sticky = false;
  s.chunks = 0;
  s.landed = false;
  s.commits.clear();
  s.children.clear();
  return (Part{s.gen} << 32) | i;
}

HazardUnit::Part HazardUnit::new_part(std::uint32_t warp_id) {
  if (off_) return 0;
  Clock* vc = vc_of(warp_id);
  Part p = alloc_part(sim_.cta(sim_.warp(warp_id).cta).cluster_slot, vc);
  vc[comp_of(warp_id)] += 1;  // what the warp does next is not part of this release
  return p;
}

void HazardUnit::free_part(Part p) {
  PartState* s = state(p);
  if (s == nullptr) return;
  s->live = false;
  pool_free_.push_back(s->vc);
  parts_free_.push_back(static_cast<std::uint32_t>(p));
}

HazardUnit::Part HazardUnit::release(std::uint32_t warp_id) { return new_part(warp_id); }

void HazardUnit::adopt(Part parent, Part child) {
  PartState* s = state(parent);
  if (s != nullptr && state(child) != nullptr) s->children.push_back(child);
}

HazardUnit::Rec* HazardUnit::find_rec(std::uint32_t cta, std::uint32_t buffer, Part p) {
  if (cta >= buffers_.size() || buffer >= buffers_[cta].size()) return nullptr;
  Buffer& b = buffers_[cta][buffer];
  for (Rec& r : b.writes)
    if (r.part == p) return &r;
  for (Rec& r : b.reads)
    if (r.part == p) return &r;
  return nullptr;
}

void HazardUnit::complete(Part p, std::span<const std::uint32_t> comps, std::span<const Clock> clocks, std::int64_t phase) {
  PartState* s = state(p);
  if (s == nullptr) return;
  if (s->sticky) {
    // An accumulator write or an operand read of a tcgen05 thread: this commit (and every later one of the
    // thread) orders it, in every chunk.
    s->landed = true;
    for (std::size_t i = 0; i < comps.size(); ++i)
      if (std::none_of(s->commits.begin(), s->commits.end(), [&](const auto& e) { return e.first == comps[i]; }))
        s->commits.emplace_back(comps[i], clocks[i]);
    return;
  }
  if (s->buffer != kNone)
    for (std::uint32_t b = s->buffer; b < s->buffer_end; ++b)
      if (Rec* r = find_rec(s->cta, b, p)) {
        r->part = 0;
        r->epochs = static_cast<std::uint8_t>(std::min<std::size_t>(comps.size(), kMaxEpochs));
        for (int i = 0; i < r->epochs; ++i) r->comp[i] = comps[i], r->clock[i] = clocks[i];
        r->done_phase = phase;
      }
  // The children complete too. The part's state stays where it is meanwhile (completing allocates no part),
  // and its children vector keeps its storage for the slot's next part.
  free_part(p);
  for (std::size_t k = 0; k < s->children.size(); ++k) complete(s->children[k], comps, clocks, phase);
  s->children.clear();
}

void HazardUnit::land(Part p, std::uint32_t cta, std::uint32_t bar) {
  PartState* s = state(p);
  if (s == nullptr) return;
  Domain& d = domain_of_cta(cta);
  std::uint32_t bi = barrier_index(cta, bar);
  join(row(d.acc, bi).data(), pool_.data() + s->vc * dim_, dim_);
  if (s->buffer == kNone && s->children.empty()) {
    free_part(p);
    return;
  }
  d.bound[bi].push_back(p);
}

void HazardUnit::retire(Part p, std::uint32_t warp_id) { retire_any(p, {&warp_id, 1}); }

void HazardUnit::retire_any(Part p, std::span<const std::uint32_t> warp_ids) {
  if (state(p) == nullptr) return;
  std::uint32_t comps[kMaxEpochs];
  Clock clocks[kMaxEpochs];
  std::size_t n = std::min<std::size_t>(warp_ids.size(), kMaxEpochs);
  for (std::size_t i = 0; i < n; ++i) {
    comps[i] = comp_of(warp_ids[i]);
    clocks[i] = vc_of(warp_ids[i])[comps[i]];
  }
  complete(p, {comps, n}, {clocks, n}, -1);
}

void HazardUnit::drop(Part p) { free_part(p); }

std::pair<std::uint32_t, std::uint32_t> HazardUnit::tmem_buffers(std::int64_t column, std::int64_t width) const {
  if (!tracks_tmem_ || width <= 0) return {0, 0};
  std::int64_t first = std::clamp<std::int64_t>(column / kTmemChunk, 0, kTmemChunks);
  std::int64_t end = std::clamp<std::int64_t>((column + width + kTmemChunk - 1) / kTmemChunk, first, kTmemChunks);
  return {tmem_base_ + static_cast<std::uint32_t>(first), tmem_base_ + static_cast<std::uint32_t>(end)};
}

HazardUnit::Part HazardUnit::tmem_mma_write(std::uint32_t warp_id, std::uint32_t op, std::uint32_t cta, std::uint32_t first,
                                            std::uint32_t end) {
  if (first >= end) return 0;
  return range_access({&warp_id, 1}, op, cta, first, end, true, Via::kTmemMma, kNone, kNone, true);
}

HazardUnit::Part HazardUnit::tcgen05_read(std::uint32_t warp_id, std::uint32_t op, std::uint32_t cta, std::uint32_t buffer,
                                          Via via) {
  if (buffer == kNone) return 0;
  return range_access({&warp_id, 1}, op, cta, buffer, buffer + 1, false, via, kNone, kNone, true);
}

bool HazardUnit::forget(Part p, std::uint32_t cta, std::uint32_t buffer) {
  PartState* s = state(p);
  if (s == nullptr) return true;
  if (cta < buffers_.size() && buffer < buffers_[cta].size())
    std::erase_if(buffers_[cta][buffer].writes, [&](const Rec& r) { return r.part == p; });
  if (--s->chunks > 0) return false;
  free_part(p);
  return true;
}

// ---- mbarriers ----

void HazardUnit::arrive(std::uint32_t warp_id, std::uint32_t cta, std::uint32_t bar) {
  if (off_) return;
  Domain& d = domain_of_cta(cta);
  Clock* vc = vc_of(warp_id);
  join(row(d.acc, barrier_index(cta, bar)).data(), vc, dim_);
  vc[comp_of(warp_id)] += 1;
}

void HazardUnit::phase_completed(std::uint32_t cta, std::uint32_t bar) {
  if (off_) return;
  Domain& d = domain_of_cta(cta);
  std::uint32_t bi = barrier_index(cta, bar);
  std::uint32_t comp = comp_bar(sim_.cta(cta).rank, bar);
  std::vector<Clock>& acc = row(d.acc, bi);
  acc[comp] += 1;
  d.snap[bi] = acc;
  if (d.bound[bi].empty()) return;
  completing_.swap(d.bound[bi]);  // both keep their storage
  d.bound[bi].clear();
  Clock clock = acc[comp];
  for (Part p : completing_) complete(p, {&comp, 1}, {&clock, 1}, static_cast<std::int64_t>(clock) - 1);
  completing_.clear();
}

bool HazardUnit::after_latest_phase(std::uint32_t warp_id, std::uint32_t cta, std::uint32_t bar) {
  if (off_) return false;
  Domain& d = domain_of_cta(cta);
  std::uint32_t comp = comp_bar(sim_.cta(cta).rank, bar);
  Clock completed = row(d.acc, barrier_index(cta, bar))[comp];
  return completed > 0 && vc_of(warp_id)[comp] >= completed;
}

void HazardUnit::acquire(std::uint32_t warp_id, std::uint32_t cta, std::uint32_t bar) {
  if (off_) return;
  if (warp_id >= last_acquired_.size()) last_acquired_.resize(warp_id + 1, {kNone, kNone});
  last_acquired_[warp_id] = {cta, bar};
  Domain& d = domain_of_cta(cta);
  const std::vector<Clock>& snap = d.snap[barrier_index(cta, bar)];
  if (snap.size() == dim_) join(vc_of(warp_id), snap.data(), dim_);
}

void HazardUnit::init(std::uint32_t warp_id, std::uint32_t op, std::uint32_t cta, std::uint32_t bar) {
  if (off_) return;
  Domain& d = domain_of_cta(cta);
  std::uint32_t bi = barrier_index(cta, bar);
  const Warp& w = sim_.warp(warp_id);
  d.init[bi] = vc_of(warp_id)[comp_of(warp_id)];
  d.init_warp[bi] = w.index;
  d.init_op[bi] = op;
}

void HazardUnit::check_init(std::uint32_t warp_id, std::uint32_t op, std::uint32_t cta, std::uint32_t bar) {
  const Warp& w = sim_.warp(warp_id);
  if (!inits_ || cta != w.cta) return;  // peers: the init must be visible to the cluster (mbarrier unit)
  Domain& d = domain_of_cta(cta);
  std::uint32_t bi = barrier_index(cta, bar);
  int iw = d.init_warp[bi];
  if (iw < 0 || iw == w.index) return;
  const Cta& c = sim_.cta(cta);
  if (vc_of(warp_id)[comp_warp(c.rank, iw)] >= d.init[bi]) return;
  const auto& p = sim_.program();
  const isa::OpDesc& init = sim_.op_of(sim_.warp(c.first_warp + iw), d.init_op[bi]);
  if (std::string reinit = mbar_->reinit_words(warp_id, op, bar); !reinit.empty())
    sim_.ub(warp_id, op, "barrier init not ordered before its use",
            fmt::format("warp {} uses {} (at {}), which warp {} initialised again with mbarrier.init at {}, but nothing "
                        "orders that init before this use: {}",
                        w.index, p.mbarrier_layout.element_name(p.mbarriers, bar),
                        sim_.op_of(w, op).loc.str(), iw, init.loc.str(), reinit),
            true);
  sim_.ub(warp_id, op, "barrier init not ordered before its use",
         fmt::format("warp {} uses {} (at {}), which warp {} initialised with mbarrier.init at {}, but nothing orders that init "
                     "before this use: the other threads (and the TMA or tensor cores they start) may see the barrier "
                     "uninitialised. After the inits, synchronise the CTA (bar.sync 0, i.e. __syncthreads) before any other "
                     "warp uses the barrier (CUTLASS: fence_barrier_init(), then __syncthreads or cluster_sync)",
                     w.index, p.mbarrier_layout.element_name(p.mbarriers, bar), sim_.op_of(w, op).loc.str(), iw, init.loc.str()),
         true);
}

// ---- named barriers and the cluster barrier ----

void HazardUnit::named_arrive(std::uint32_t warp_id, std::uint32_t cta, int id) {
  if (off_) return;
  Domain& d = domain_of_cta(cta);
  Clock* vc = vc_of(warp_id);
  join(row(d.named, static_cast<std::size_t>(sim_.cta(cta).rank * isa::kNamedBarriers + id)).data(), vc, dim_);
  vc[comp_of(warp_id)] += 1;
}

void HazardUnit::named_release(std::uint32_t cta, int id, const std::vector<std::uint32_t>& waiters) {
  if (off_) return;
  Domain& d = domain_of_cta(cta);
  const auto i = static_cast<std::size_t>(sim_.cta(cta).rank * isa::kNamedBarriers + id);
  std::vector<Clock>& acc = row(d.named, i);
  for (std::uint32_t w : waiters) {
    join(vc_of(w), acc.data(), dim_);
    if (w >= last_named_.size()) last_named_.resize(w + 1, {kNone, kNone});
    last_named_[w] = {cta, static_cast<std::uint32_t>(id)};
  }
  // The completed use's join stays (after_named_use); the next use starts from nothing.
  d.named_done[i].swap(acc);
  acc.assign(dim_, 0);
}

bool HazardUnit::after_named_use(std::uint32_t warp_id, int id) {
  if (off_) return true;
  const Warp& w = sim_.warp(warp_id);
  Domain& d = domain_of_cta(w.cta);
  const std::vector<Clock>& done = d.named_done[static_cast<std::size_t>(sim_.cta(w.cta).rank * isa::kNamedBarriers + id)];
  if (done.size() != dim_) return true;
  const Clock* vc = vc_of(warp_id);
  for (std::size_t k = 0; k < dim_; ++k)
    if (done[k] > vc[k]) return false;
  return true;
}

void HazardUnit::cluster_arrive(std::uint32_t warp_id) {
  if (off_) return;
  Domain& d = domain_of_cta(sim_.warp(warp_id).cta);
  Clock* vc = vc_of(warp_id);
  join(d.cluster.data(), vc, dim_);
  vc[comp_of(warp_id)] += 1;
}

void HazardUnit::cluster_release(std::uint32_t cluster_slot, const std::vector<std::uint32_t>& waiters) {
  if (off_) return;
  Domain& d = domains_[cluster_slot];
  for (std::uint32_t w : waiters) join(vc_of(w), d.cluster.data(), dim_);
  std::fill(d.cluster.begin(), d.cluster.end(), 0);
}

void HazardUnit::global_write(Part release, std::uint32_t word, bool store) {
  if (off_) return;
  if (store)
    for (Domain& d : domains_) d.globals.erase(word);
  PartState* s = state(release);
  if (s == nullptr) return;
  std::vector<Clock>& acc = domains_[s->cluster].globals[word];
  if (acc.size() != dim_) acc.assign(dim_, 0);
  join(acc.data(), pool_.data() + s->vc * dim_, dim_);
  free_part(release);
}

void HazardUnit::global_observe(std::uint32_t warp_id, std::uint32_t word) {
  if (off_) return;
  Domain& d = domain_of_cta(sim_.warp(warp_id).cta);
  auto it = d.globals.find(word);
  if (it == d.globals.end()) return;
  if (warp_id >= observed_.size()) observed_.resize(warp_id + 1);
  if (observed_[warp_id].size() != dim_) observed_[warp_id].assign(dim_, 0);
  join(observed_[warp_id].data(), it->second.data(), dim_);
}

void HazardUnit::fence_acquire(std::uint32_t warp_id) {
  if (off_) return;
  if (warp_id >= observed_.size() || observed_[warp_id].size() != dim_) return;
  join(vc_of(warp_id), observed_[warp_id].data(), dim_);
  observed_[warp_id].clear();
}

HazardUnit::Part HazardUnit::clone(Part p) {
  PartState* s = state(p);
  if (s == nullptr) return 0;
  return alloc_part(s->cluster, pool_.data() + static_cast<std::size_t>(s->vc) * dim_);
}

void HazardUnit::global_acquire(std::uint32_t warp_id, std::uint32_t word) {
  if (off_) return;
  Domain& d = domain_of_cta(sim_.warp(warp_id).cta);
  auto it = d.globals.find(word);
  if (it != d.globals.end()) join(vc_of(warp_id), it->second.data(), dim_);
}

// ---- accesses ----

std::uint32_t HazardUnit::named(const OpContext& ctx, isa::Attr a) {
  const isa::AttrSlot* s = ctx.desc.slot(a);
  if (s == nullptr || !s->present || s->decl < 0) return kNone;
  return ctx.smem(a);
}

void HazardUnit::generic(const OpContext& ctx, std::uint32_t buffer, bool write, std::int64_t bytes) {
  if (buffer == kNone || !tracks_) return;
  Rec r;
  if (bytes > 0 && buffer < smem_count_) {
    auto& wrote = buffers_[ctx.cta_slot()][buffer].wrote;
    auto mine = std::find_if(wrote.begin(), wrote.end(), [&](const auto& x) { return x.first == ctx.warp_id; });
    if (write) {
      if (mine == wrote.end()) wrote.emplace_back(ctx.warp_id, bytes);
      else mine->second += bytes;
    } else if (mine != wrote.end()) {
      // (what it wrote since its previous read: a reducer that adds its own partial each round reads more each round)
      r.reads_more = bytes > mine->second;
      mine->second = 0;
    }
  }
  r.comp[0] = comp_of(ctx.warp_id);
  Clock* vc = vc_of(ctx.warp_id);
  r.clock[0] = vc[r.comp[0]];
  r.warp = ctx.warp_id;
  r.op = ctx.op;
  r.cta_id = ctx.cta().id;
  r.write = write;
  r.issued = sim_.now().v;
  access(ctx.cta_slot(), buffer, r, vc);
}

bool HazardUnit::writes_ordered(std::span<const std::uint32_t> readers, std::uint32_t cta, std::uint32_t buffer,
                                std::uint32_t writer) {
  if (!tracks_ || buffer == kNone) return true;
  for (const Rec& w : buffers_[cta][buffer].writes)
    if (w.warp == writer &&
        std::none_of(readers.begin(), readers.end(), [&](std::uint32_t r) { return ordered(w, vc_of(r)); }))
      return false;
  return true;
}

HazardUnit::Part HazardUnit::group_access(std::span<const std::uint32_t> warp_ids, std::uint32_t op, std::uint32_t cta,
                                          std::uint32_t buffer, bool write, Via via, std::uint32_t bar_cta, std::uint32_t bar) {
  if (buffer == kNone) return 0;
  return range_access(warp_ids, op, cta, buffer, buffer + 1, write, via, bar_cta, bar, false);
}

HazardUnit::Part HazardUnit::range_access(std::span<const std::uint32_t> warp_ids, std::uint32_t op, std::uint32_t cta,
                                          std::uint32_t first, std::uint32_t end, bool write, Via via, std::uint32_t bar_cta,
                                          std::uint32_t bar, bool sticky) {
  if (!tracks_ || warp_ids.empty()) return 0;
  // The part's clock: the join of every issuing warp's, each of which moves on.
  Part p = new_part(warp_ids[0]);
  Clock* vc = pool_.data() + state(p)->vc * dim_;
  for (std::size_t i = 1; i < warp_ids.size(); ++i) {
    Clock* w = vc_of(warp_ids[i]);
    join(vc, w, dim_);
    w[comp_of(warp_ids[i])] += 1;
  }
  PartState& s = *state(p);
  s.cta = cta;
  s.buffer = first;
  s.buffer_end = end;
  s.sticky = sticky;
  s.chunks = end - first;
  Rec r;
  r.part = p;
  r.sticky = sticky;
  r.warp = warp_ids.back();
  r.op = op;
  r.cta_id = sim_.cta(sim_.warp(warp_ids[0]).cta).id;
  r.bar_cta = bar_cta;
  r.bar = bar;
  r.via = via;
  r.write = write;
  r.issued = sim_.now().v;
  if ((via == Via::kTmaLoad || via == Via::kClcResponse) && bar != kNone && bar_cta != kNone)
    r.issue_phase = row(domain_of_cta(bar_cta).acc, barrier_index(bar_cta, bar))[comp_bar(sim_.cta(bar_cta).rank, bar)];
  for (std::uint32_t b = first; b < end; ++b) access(cta, b, r, vc);
  return p;
}

void HazardUnit::access(std::uint32_t cta, std::uint32_t buffer, const Rec& rec, const Clock* vc) {
  Buffer& b = buffers_[cta][buffer];
  // Which unordered pairs are hazards: every pair with a side the TMA or the tensor cores perform (they
  // move whole buffers), except the parts of one transfer in flight (writes completing on the same
  // barrier: boxes of one stage, multicast halves). Accesses by threads (ld/st.shared, ldmatrix, cp.async)
  // mostly are not: the language names buffers, not offsets, and threads touch disjoint fragments of one
  // buffer; generic reads of a buffer that cp.async copies may still be writing are.
  auto thread_level = [](const Rec& r) {
    return r.via == Via::kGeneric || r.via == Via::kCpAsync || r.via == Via::kTmemLd || r.via == Via::kTmemSt;
  };
  // A warp reaches the 32 TMEM lanes of its index modulo 4: loads and stores of warps in different lane
  // quarters touch different data; warps w and w + 4 share lanes.
  auto tmem_thread = [](const Rec& r) { return r.via == Via::kTmemLd || r.via == Via::kTmemSt; };
  bool whole = buffer < smem_count_ && whole_[buffer];
  // A hand-off buffer (Buffer::handoff): the ld.shared of a warp that wrote none of it and other warps' st.shared
  // are checked against each other. A warp that writes its own fragment and reads it back, or reads what a TMA load
  // brought while another warp writes its own part (CUTLASS's epilogue reusing C's buffer for D), is no such reader.
  const bool handoff = handoff_read(b, rec);
  std::uint64_t suppliers = 0;
  if (handoff) {
    // The writers that handed this read its data: st.shared of other warps ordered before it that no earlier read of
    // its warp was ordered after.
    for (const Rec& w : b.writes) {
      if (w.via != Via::kGeneric || w.warp == rec.warp || !ordered(w, vc)) continue;
      auto c = std::find_if(b.credited.begin(), b.credited.end(), [&](const Buffer::Credit& x) {
        return x.reader == rec.warp && x.writer == w.warp;
      });
      if (c == b.credited.end()) c = b.credited.insert(c, Buffer::Credit{rec.warp, w.warp});
      if (c->issued >= w.issued) continue;
      c->issued = w.issued;
      suppliers |= warp_bit(w.warp);
    }
    b.handoff = b.handoff || !b.async_written || suppliers != 0;
  }
  auto reads_others = [&](const Rec& read, const Rec& write) {
    const std::uint64_t from = &read == &rec ? suppliers : read.suppliers;
    return b.handoff && write.via == Via::kGeneric && write.write && read.warp != write.warp &&
           (&read == &rec ? handoff : read.handoff) && (from == 0 || (from & warp_bit(write.warp)) != 0);
  };
  auto conflicts = [&](const Rec& prior) {
    if (tmem_thread(prior) && tmem_thread(rec))
      return (rec.write || prior.write) && sim_.warp(prior.warp).index % isa::kWarpsPerWarpgroup ==
                                               sim_.warp(rec.warp).index % isa::kWarpsPerWarpgroup;
    if (thread_level(prior) && thread_level(rec) && !whole) {
      // Threads: only a generic read of what a cp.async may still be writing (ldmatrix of a tile the warps
      // copied together, or a warp's own copy before its wait) is a hazard; writes of fragments are not.
      bool read_of_copy = (!rec.write && prior.via == Via::kCpAsync) || (!prior.write && rec.via == Via::kCpAsync);
      if (!read_of_copy && !reads_others(prior, rec) && !reads_others(rec, prior)) return false;
    }
    // One thread's tcgen05.mma ops run in issue order: their accumulator writes do not race each other.
    if (prior.via == Via::kTmemMma && rec.via == Via::kTmemMma && prior.warp == rec.warp) return false;
    return !(rec.write && prior.write && rec.part != 0 && prior.part != 0 && rec.bar != kNone && prior.bar == rec.bar &&
             prior.bar_cta == rec.bar_cta);
  };
  for (const Rec& w : b.writes)
    if (!ordered(w, vc) && conflicts(w)) report(cta, buffer, w, rec, vc);
  if (rec.write)
    for (const Rec& r : b.reads)
      if (!ordered(r, vc) && conflicts(r)) report(cta, buffer, r, rec, vc);
  // The first write, ordered after a read of what nothing had written by a warp whose wait before it passed at once, on
  // a fresh barrier with parity 1, on the barrier this write completes on (a write that names its barrier: a TMA load's
  // bar=): that read took the buffer's garbage.
  if (rec.write && !b.written)
    for (const Rec& r : b.reads)
      if (r.unwritten && r.skip_bar != kNone && rec.bar != kNone && conflicts(r) && skipped_write(r.skip_bar, r, rec))
        report_read_before_first_write(cta, buffer, r, rec);
  // An access ordered before this one of the same kind needs no record any more: whatever is ordered
  // after this one is ordered after it too. The others stay (unordered, but not in conflict).
  std::vector<Rec>& same = rec.write ? b.writes : b.reads;
  auto done = [&](const Rec& r) {
    if (!ordered(r, vc)) return false;
    dropped(r);
    return true;
  };
  std::erase_if(same, done);
  if (rec.write) std::erase_if(b.reads, done);
  if (same.size() >= kMaxRecords) {
    dropped(same.front());
    same.erase(same.begin());
  }
  same.push_back(rec);
  same.back().handoff = handoff;
  same.back().suppliers = suppliers;
  if (!rec.write && !b.written) {
    Rec& r = same.back();
    r.unwritten = true;
    std::tie(r.skip_bar, r.skip_op) = mbar_->passed_before_phase0(rec.warp);
    // A read of a stage of a ring that has turned over (another element was refilled after it was read) while this
    // one was never written: the refills skip this stage (a refill of the stage being read), a warning. Not any
    // unwritten read: CUTLASS's sm80 mainloop reads the next stage's fragments after the last k-tile, unused, when there
    // are fewer k-tiles than stages; and a model may leave out the loads of a buffer it only reads. A read behind a wait
    // that passed a fresh barrier at once is told when its first write comes (above: that names the parity).
    if (r.skip_bar == kNone && buffer < smem_count_ && ring_turned(buffer, buffers_[cta])) note_unwritten_read(cta, buffer, r);
  }
  // (branch-free: every access passes here)
  b.refilled = b.refilled | (rec.write & b.read_since_write);
  b.read_since_write = !rec.write;
  b.written = b.written | rec.write;
  if (rec.write) b.thread_writers = rec.via == Via::kGeneric ? b.thread_writers | warp_bit(rec.warp) : 0;
  if (rec.write && rec.via != Via::kGeneric) {
    // (a TMA load, a cp.async, an MMA: what the buffer holds now comes from it; a hand-off starts anew)
    b.wrote.clear();
    b.credited.clear();
    b.handoff = false;
  }
  b.async_written = b.async_written | (rec.write & (rec.via != Via::kGeneric));
}

bool HazardUnit::handoff_read(const Buffer& b, const Rec& read) const {
  return !read.write && read.via == Via::kGeneric && b.thread_writers != 0 &&
         (read.reads_more || (b.thread_writers & warp_bit(read.warp)) == 0);
}

std::uint64_t HazardUnit::warp_bit(std::uint32_t warp) const {
  return std::uint64_t{1} << std::min<std::uint32_t>(sim_.warp(warp).index, 63);
}

bool HazardUnit::ring_turned(std::uint32_t buffer, const std::vector<Buffer>& bufs) const {
  const auto& p = sim_.program();
  const std::uint32_t decl = p.smem_layout.decl_of(buffer);
  if (!p.smems[decl].array) return false;
  const std::uint32_t first = p.smem_layout.base[decl];
  for (std::uint32_t e = first; e < first + static_cast<std::uint32_t>(p.smems[decl].size); ++e)
    if (bufs[e].refilled) return true;
  return false;
}

void HazardUnit::add_warnings(std::vector<std::string>& warnings) const {
  warnings.insert(warnings.end(), unwritten_warnings_.begin(), unwritten_warnings_.end());
  if (off_)
    warnings.push_back("data-hazard checks were off (--no-hazards): races on shared memory, TMEM and CLC responses, and "
                       "barrier inits not ordered before their uses, were not looked for (the timing is the same)");
}

}  // namespace smpipe::models
