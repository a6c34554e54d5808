// Data hazards on the buffers the pipelines protect: shared-memory buffers and CLC response slots, with
// an exact happens-before relation (vector clocks), not timing. A race is reported when two accesses to
// one buffer, at least one a write, are not ordered by synchronisation, even when the simulated timing
// happens to be benign.
//
// The clocks. Per cluster (the only scope smem and its barriers reach) one vector clock per warp, with a
// component per warp and one per mbarrier. An arrive releases the warp's clock into its barrier (a running
// join: every arrive on an mbarrier is a read-modify-write, so a wait that observes a completion
// synchronises with all earlier arrivals, PTX ISA memory model, release sequences); a phase completion
// ticks the barrier's own component and snapshots the join; a wait or test_wait that observes it acquires
// the snapshot. Named barriers and cluster.sync join their participants' clocks per use.
//
// The accesses. A generic access (ld/st.shared, ldmatrix, clc.query) is an epoch of its warp. An
// asynchronous one (a TMA load or store, cp.async, wgmma and umma operands, tcgen05.cp, a CLC response)
// is "in flight" from its issue until what completes it: the phase of the mbarrier its complete_tx or
// commit lands on (epoch: that barrier's component), or the issuing warp's covering wait (tma.wait,
// cp.async.wait, wgmma.wait: epoch of that warp at the wait). While in flight it is ordered before nothing.
// What a tcgen05 thread issues (umma operand reads and accumulator writes, tcgen05.cp sources) is completed
// by every later umma.commit of the thread, not only the first (each tracks all the thread's earlier
// tcgen05 ops, PTX ISA tcgen05.commit): it is ordered before whoever observes a phase that any of them
// landed in (a "sticky" part, which keeps the epoch of each barrier its commits landed on).
// Units report the accesses and the synchronisation; this unit keeps the clocks and the per-buffer records
// and turns a conflict into a hazard diagnosis naming both ops, the buffer and the synchronisation that is
// missing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/gpu/unit.hpp"

namespace smpipe::models {

class MbarrierUnit;

class HazardUnit : public Unit {
 public:
  // Role `role`'s plain arrives on mbarrier declaration `decl` (the ops that release a buffer there).
  std::vector<const isa::OpDesc*> release_ops(int role, std::uint32_t decl) const;
  using Clock = std::uint32_t;
  using Part = std::uint64_t;  // an asynchronous access or release in flight (0: none)

  // How an access reaches the buffer (the words of the report and of the missing synchronisation).
  enum class Via : std::uint8_t {
    kGeneric, kTmaLoad, kTmaStore, kCpAsync, kWgmma, kUmma, kTmemCp, kClcResponse,
    kTmemMma,  // a tcgen05.mma writing its accumulator in TMEM
    kTmemLd,   // tcgen05.ld / st of a warp (its own 32 lanes)
    kTmemSt
  };

  // The accesses in flight of one waiter's commit groups (bulk groups, cp.async groups, wgmma groups), in
  // commit order, and of the open group: what a `wait N` completes.
  struct Groups {
    // One flat buffer (no allocation once warm): committed group i is parts[ends[i-1], ends[i]) (ends[-1]
    // = 0), the open group parts[ends.back(), end).
    std::vector<Part> parts;
    std::vector<std::uint32_t> ends;
    void add(Part p) {
      if (p != 0) parts.push_back(p);
    }
    void commit() { ends.push_back(static_cast<std::uint32_t>(parts.size())); }
    // Every group but the newest n is complete: f(part) for each of their parts.
    template <class F>
    void complete_older(std::int64_t n, F&& f) {
      std::int64_t older = static_cast<std::int64_t>(ends.size()) - n;
      if (older <= 0) return;
      std::uint32_t cut = ends[static_cast<std::size_t>(older - 1)];
      for (std::uint32_t i = 0; i < cut; ++i) f(parts[i]);
      parts.erase(parts.begin(), parts.begin() + cut);
      ends.erase(ends.begin(), ends.begin() + older);
      for (auto& e : ends) e -= cut;
    }
    template <class F>
    void each(F&& f) const {
      for (Part p : parts) f(p);
    }
  };

  explicit HazardUnit(Simulator& sim);
  std::string_view name() const override { return "hazards"; }
  void connect() override;
  void cta_started(std::uint32_t slot) override;
  // A CTA must not exit before its asynchronous ops are done for it: a TMA load or CLC response into its smem that no
  // warp of it observed (its barrier phase), a TMA store whose source no covering tma.wait released. Undefined
  // behaviour at the op's line, whatever the timing (on another schedule it is still in flight at the exit).
  void cta_exiting(std::uint32_t slot) override;

  // ---- buffers: smem elements, then one CLC response slot per mbarrier element, then TMEM in 8-column
  // chunks (every MMA N is a multiple of 8, so accumulator stages placed N apart never share a chunk) ----
  std::uint32_t clc_slot(std::uint32_t barrier_flat) const { return smem_count_ + barrier_flat; }
  static constexpr std::uint32_t kTmemChunk = 8, kTmemChunks = 64;
  // The buffers of TMEM columns [column, column + width): [first, end), empty when the program names no
  // TMEM address.
  std::pair<std::uint32_t, std::uint32_t> tmem_buffers(std::int64_t column, std::int64_t width) const;
  std::uint32_t tmem_chunk(std::uint32_t buffer) const { return buffer - tmem_base_; }  // 0 .. kTmemChunks - 1
  // A tcgen05.mma's accumulator write to the chunks [first, end) of CTA slot `cta`: in flight until a
  // umma.commit of its thread lands, and then ordered before whoever observes that commit or any later one
  // of the thread (every commit tracks all the thread's earlier tcgen05 ops). One part for all its chunks (a
  // record in each); the caller keeps it (adopting it into each later commit) until the thread's later
  // accumulator writes supersede it chunk by chunk: forget(p, cta, chunk) each time, which returns true
  // when that was its last chunk (the part is gone).
  Part tmem_mma_write(std::uint32_t warp_id, std::uint32_t op, std::uint32_t cta, std::uint32_t first, std::uint32_t end);
  bool forget(Part p, std::uint32_t cta, std::uint32_t buffer);
  // Whether TMEM chunks [first, end) of CTA slot `cta` are still in use for a tcgen05.dealloc by `warp_ids` (one warp,
  // or the two of a cta_group::2 pair): the first access to them none of them is ordered after (an MMA's accumulator
  // write whose commit it has not observed, a tcgen05.ld or st before its wait), in words; empty when none.
  std::string tmem_in_use(std::span<const std::uint32_t> warp_ids, std::uint32_t cta, std::uint32_t first, std::uint32_t end) const;
  // A tcgen05 operand read of smem `buffer` of CTA slot `cta` (umma a= / b=, Via::kUmma; tcgen05.cp src=,
  // Via::kTmemCp) by the elected thread of warp `warp_id`: in flight until a umma.commit of the thread lands,
  // then ordered before whoever observes that commit or any later one of the thread. The caller adopts it into
  // every later commit for as long as live(p): the checker forgets it once a later access of the buffer is
  // ordered after it (or its record is dropped), and nothing it could order is left.
  Part tcgen05_read(std::uint32_t warp_id, std::uint32_t op, std::uint32_t cta, std::uint32_t buffer, Via via);
  bool live(Part p) const { return state(p) != nullptr; }

  // A point in warp `warp_id`'s history: its own clock now; and whether warp `w` is ordered after warp `other` reached
  // such a point (`clock`). Always true with the checker off (--no-hazards).
  Clock own_clock(std::uint32_t warp_id) const { return !off_ ? const_cast<HazardUnit*>(this)->vc_of(warp_id)[comp_of(warp_id)] : 0; }
  // How far warp `w` is ordered after warp `other`'s history (its clock's component of `other`; 0 with the checker off).
  Clock clock_of(std::uint32_t w, std::uint32_t other) const {
    return !off_ ? const_cast<HazardUnit*>(this)->vc_of(w)[comp_of(other)] : 0;
  }
  bool sees(std::uint32_t w, std::uint32_t other, Clock clock) const {
    return off_ || const_cast<HazardUnit*>(this)->vc_of(w)[comp_of(other)] >= clock;
  }
  // Whether warp `warp_id` is ordered after the latest completed phase of mbarrier `bar` of CTA slot `cta` (it observed
  // that phase, or synchronised with a warp that did); false when no phase completed yet, and with the checker off.
  bool after_latest_phase(std::uint32_t warp_id, std::uint32_t cta, std::uint32_t bar);
  bool on() const { return !off_; }
  // A generic access by the executing warp; a hazard (never returns) when it races.
  // `bytes`: what the access moves (0: not known), to tell a read of more than the warp wrote (a hand-off).
  void generic(const OpContext& ctx, std::uint32_t buffer, bool write, std::int64_t bytes = 0);
  // Whether every write of smem `buffer` of CTA slot `cta` by warp `writer` (a warp id) that the checker still
  // keeps is ordered before what the reading warps do now (true when it tracks nothing). The proxy-fence check asks
  // it: a reader not ordered after the write races with it, whatever the fence (the race is the report).
  // A warpgroup's op (readers: its warps) is ordered after what any of them is ordered after.
  bool writes_ordered(std::span<const std::uint32_t> readers, std::uint32_t cta, std::uint32_t buffer, std::uint32_t writer);
  // The buffer an op names through attribute `a`, if it names one (else ~0u).
  static std::uint32_t named(const OpContext& ctx, isa::Attr a);

  // What a unit knows of why responses into CTA slot `slot` may come twice in a phase (two CTAs of a cluster that
  // each multicast a try_cancel): said by a report of a race on that CTA's CLC response instead of a short expect_tx.
  void response_note(std::uint32_t slot, std::string note) {
    if (slot >= response_notes_.size()) response_notes_.resize(slot + 1);
    response_notes_[slot] = std::move(note);
  }

  // An asynchronous access by warp `warp_id` at its op `op` to `buffer` of CTA slot `cta`, checked now
  // against the buffer's records with the warp's clock at issue. `bar_cta`/`bar` (when not ~0u): the
  // mbarrier its completion lands on (two in-flight writes completing on one barrier are parts of one
  // transfer, e.g. multicast halves of a stage, and do not race each other).
  Part async_access(std::uint32_t warp_id, std::uint32_t op, std::uint32_t cta, std::uint32_t buffer, bool write, Via via,
                    std::uint32_t bar_cta = ~0u, std::uint32_t bar = ~0u) {
    return group_access({&warp_id, 1}, op, cta, buffer, write, via, bar_cta, bar);
  }
  // One asynchronous access that several warps issue together (a wgmma of a warpgroup): ordered after what
  // any of them did before.
  Part group_access(std::span<const std::uint32_t> warp_ids, std::uint32_t op, std::uint32_t cta, std::uint32_t buffer, bool write,
                    Via via, std::uint32_t bar_cta = ~0u, std::uint32_t bar = ~0u);
  // A release in flight: the warp's clock now, carried by a signal that lands later (a remote arrive, an
  // async op's completion). Its children are async accesses it completes when it lands.
  Part release(std::uint32_t warp_id);
  void adopt(Part parent, Part child);
  // Part `p` lands on mbarrier `bar` of CTA slot `cta`: its clock joins the barrier's; its access (and its
  // children's) completes with the barrier's current phase.
  void land(Part p, std::uint32_t cta, std::uint32_t bar);
  // The warp's own covering wait completed the access (its epoch becomes the warp's now).
  void retire(Part p, std::uint32_t warp_id);
  // The covering wait of a warpgroup: the access is ordered before what any of these warps does next.
  void retire_any(Part p, std::span<const std::uint32_t> warp_ids);
  // A part that will never land (its target exited): forget it.
  void drop(Part p);

  // ---- synchronisation ----
  // A local arrive: the warp releases its clock into the barrier now.
  void arrive(std::uint32_t warp_id, std::uint32_t cta, std::uint32_t bar);
  void phase_completed(std::uint32_t cta, std::uint32_t bar);
  // A wait or test_wait observed the latest completed phase.
  void acquire(std::uint32_t warp_id, std::uint32_t cta, std::uint32_t bar);
  // mbarrier.init: later uses by other warps must be ordered after it.
  void init(std::uint32_t warp_id, std::uint32_t op, std::uint32_t cta, std::uint32_t bar);
  // A use of a barrier of its own CTA by warp `warp_id` at op `op` (or by an async op it issues): a hazard
  // when not ordered after an in-kernel init by another warp.
  void check_init(std::uint32_t warp_id, std::uint32_t op, std::uint32_t cta, std::uint32_t bar);
  // Named barriers (per CTA, per id) and the cluster barrier: arrivals release, a completed use makes
  // every waiter acquire what all its arrivals released.
  void named_arrive(std::uint32_t warp_id, std::uint32_t cta, int id);
  void named_release(std::uint32_t cta, int id, const std::vector<std::uint32_t>& waiters);
  // Whether warp `warp_id`'s clock orders it after the latest completed use of named barrier `id` of its CTA (true
  // without the checker or before any use completed).
  bool after_named_use(std::uint32_t warp_id, int id);
  // When the warps of CTA slot `slot` that wait on the array of mbarrier element `bar` observed fewer of its completed
  // phases than completed before the CTA exited (`coming`: and one more phase, a signal landing after the exit): the
  // counts and that the roles ran different numbers of iterations, as a sentence ("" otherwise, or without the checker).
  std::string trip_count_words(std::uint32_t slot, std::uint32_t bar, bool coming);
  void cluster_arrive(std::uint32_t warp_id);
  void cluster_release(std::uint32_t cluster_slot, const std::vector<std::uint32_t>& waiters);

  // Global words (flags, counters): a write reaches the L2 carrying `release` (a part from release(), or 0
  // for a relaxed write). A read-modify-write continues the word's release sequence; a store starts a new
  // one (PTX ISA memory model). An acquire that reads the word joins every release of the sequence made
  // by warps of its cluster (ordering through other clusters' warps is not followed).
  void global_write(Part release, std::uint32_t word, bool store);
  void global_acquire(std::uint32_t warp_id, std::uint32_t word);
  // A relaxed read of the word by the warp: what it saw is acquired by the warp's next fence.gpu.
  void global_observe(std::uint32_t warp_id, std::uint32_t word);
  void fence_acquire(std::uint32_t warp_id);
  // A copy of a release in flight (the clock of a fence.gpu, carried by each relaxed write after it).
  Part clone(Part p);

  // Whether the program names any buffer in an op (otherwise only synchronisation is tracked).
  bool tracks_buffers() const { return tracks_; }
  // With RunOptions::hazards off nothing is tracked: every call returns at once (parts are 0); a warning says so.
  void add_warnings(std::vector<std::string>& warnings) const override;

 private:
  static constexpr int kMaxEpochs = isa::kWarpsPerWarpgroup;
  static constexpr std::uint32_t kNone = ~0u;  // no barrier, CTA or buffer
  struct Rec {
    Part part = 0;             // in flight (not ordered before anything) while non-zero and not landed
    bool sticky = false;       // completed by its tcgen05 thread's commits (an accumulator write or an operand
                               // read): any of its part's commits orders it (PartState)
    // Epochs (component, clock): ordered before a clock that covers any of them (one unless a warpgroup's
    // wait completed it: then each of its warps' own).
    std::uint8_t epochs = 1;
    std::uint32_t comp[kMaxEpochs] = {};
    Clock clock[kMaxEpochs] = {};
    std::uint32_t warp = 0;    // who issued it (warp id) and at which op
    std::uint32_t op = 0;
    std::int64_t cta_id = 0;   // the issuer's CTA (report)
    std::uint32_t bar_cta = ~0u, bar = ~0u;  // async: the barrier its completion lands on
    Via via = Via::kGeneric;
    bool write = false;
    bool unwritten = false;    // a read of a buffer nothing had written yet (report)
    bool handoff = false;      // an ld.shared by a warp that wrote none of what other warps' st.shared wrote there
    bool reads_more = false;   // an ld.shared of more bytes than its warp wrote there with st.shared (Buffer::wrote)
    // A hand-off read: the warps (bits by index) whose st.shared it is ordered after and no earlier read of its warp was
    // (Buffer::credited), the writers that handed it this data (0: none known); only their writes are checked against it
    // (several hand-offs that share a buffer, each pair in its own part, do not conflict).
    std::uint64_t suppliers = 0;
    // Such a read: the reader's latest passing wait when that passed a fresh barrier at once (element, op; ~0u: not)
    std::uint32_t skip_bar = ~0u, skip_op = 0;
    std::int64_t done_phase = -1;  // retired by a barrier phase: which (report)
    Clock issue_phase = 0;  // a TMA load or CLC response: the phases of its barrier complete when it was issued (report)
    std::int64_t issued = -1;  // the cycle of the access (report: two issues of one op)
  };
  struct Buffer {
    std::vector<Rec> writes;  // writes not ordered before a later write
    std::vector<Rec> reads;   // reads not ordered before a later access
    bool written = false;     // some write of it was recorded (since its CTA started)
    bool read_since_write = false;  // read since its latest write (or since the start)
    bool refilled = false;          // written again after a read: a ring's stage that came round
    // The warps (a bit per index in the CTA; 63: any beyond) that wrote it with st.shared since its latest write by
    // anything else (a TMA load, a cp.async, an MMA)
    std::uint64_t thread_writers = 0;
    // A hand-off buffer: a warp read what other warps wrote with st.shared, having written none of it (partial sums one
    // warpgroup hands another, a row scale), either ordered after their writes or in a buffer only st.shared ever wrote.
    // Its ld.shared by such readers and st.shared by others are checked against each other from then on (in this CTA).
    bool handoff = false;
    bool async_written = false;  // written by something other than st.shared (a TMA load, a cp.async, an MMA)
    // The bytes each warp (id) wrote with st.shared since then and since its own previous read: a warp that reads more
    // than it wrote reads other warps' parts (a reduction's reducer reading every warp's partial), a hand-off too.
    std::vector<std::pair<std::uint32_t, std::int64_t>> wrote;
    // Hand-off readers: per (reader warp id, writer warp id) the issue cycle of the writer's latest st.shared that a read
    // of the reader was ordered after (Rec::suppliers: the writes newly ordered before a read).
    struct Credit {
      std::uint32_t reader = 0, writer = 0;
      std::int64_t issued = -1;
    };
    std::vector<Credit> credited;
  };
  struct PartState {
    std::uint32_t gen = 0;
    bool live = false;
    std::uint32_t cluster = 0;
    std::uint32_t vc = ~0u;                // row in the clock pool
    std::uint32_t cta = ~0u, buffer = ~0u;  // its access (~0u: a pure release): buffers [buffer, buffer_end)
    std::uint32_t buffer_end = ~0u;
    bool sticky = false;
    // Sticky (a tcgen05 thread's accumulator writes and operand reads): chunks not superseded yet; whether a
    // commit landed (the part stays, for later commits); the epoch of every barrier a commit landed on (the
    // earliest per barrier: a later phase of the same barrier orders nothing more), in landing order. Kept with
    // the part, for all its chunks' records.
    std::uint32_t chunks = 0;
    bool landed = false;
    std::vector<std::pair<std::uint32_t, Clock>> commits;
    std::vector<Part> children;
  };
  struct Domain {  // one cluster
    std::vector<Clock> warps;                // [rank * W + warp][D]
    std::vector<std::vector<Clock>> acc;     // per barrier (rank * NB + flat): running join (lazy)
    std::vector<std::vector<Clock>> snap;    // per barrier: the join at its latest completion
    std::vector<std::vector<Part>> bound;    // per barrier: in-flight accesses its next completion ends
    std::vector<std::vector<Clock>> named;   // per (rank * 16 + id): this use's join
    std::vector<std::vector<Clock>> named_done;  // ... and the join of its latest completed use
    std::vector<Clock> cluster;              // the cluster barrier's join
    std::vector<Clock> init;                 // per barrier: init epoch clock (0: none)
    std::vector<std::int32_t> init_warp;     // per barrier: initialising warp index (-1: none)
    std::vector<std::uint32_t> init_op;
    std::unordered_map<std::uint32_t, std::vector<Clock>> globals;  // per global word: its release sequence's join
  };

  std::uint32_t comp_warp(int rank, int index) const { return static_cast<std::uint32_t>(rank * warps_ + index); }
  std::uint32_t comp_bar(int rank, std::uint32_t flat) const {
    return static_cast<std::uint32_t>(cluster_size_ * warps_ + rank * bars_ + static_cast<int>(flat));
  }
  Domain& domain_of_cta(std::uint32_t cta);
  Clock* vc_of(std::uint32_t warp_id);
  std::uint32_t comp_of(std::uint32_t warp_id) const;
  std::vector<Clock>& row(std::vector<std::vector<Clock>>& rows, std::size_t i);
  static void join(Clock* into, const Clock* from, std::size_t n);
  std::uint32_t barrier_index(std::uint32_t cta, std::uint32_t bar) const;

  PartState* state(Part p);
  const PartState* state(Part p) const { return const_cast<HazardUnit*>(this)->state(p); }
  // A part of cluster slot `cluster` whose clock is a copy of `clock` (which may lie in the pool).
  Part alloc_part(std::uint32_t cluster, const Clock* clock);
  Part new_part(std::uint32_t warp_id);
  void free_part(Part p);
  void complete(Part p, std::span<const std::uint32_t> comps, std::span<const Clock> clocks, std::int64_t phase);
  Rec* find_rec(std::uint32_t cta, std::uint32_t buffer, Part p);

  // A sticky record whose part is gone (its CTA left the slot) is stale: ordered before everything.
  bool landed(const Rec& r) const {
    const PartState* s = r.sticky ? state(r.part) : nullptr;
    return s != nullptr && s->landed;
  }
  bool ordered(const Rec& r, const Clock* vc) const {
    if (r.sticky) {
      const PartState* s = state(r.part);
      if (s == nullptr) return true;
      for (const auto& [comp, clock] : s->commits)
        if (vc[comp] >= clock) return true;
      return false;
    }
    if (r.part != 0) return false;
    for (int i = 0; i < r.epochs; ++i)
      if (vc[r.comp[i]] >= r.clock[i]) return true;
    return false;
  }
  // The asynchronous access of group_access to buffers [first, end) of CTA slot `cta`, one part for all of them
  // (a record in each); sticky: a tcgen05.mma accumulator write (tmem_mma_write).
  Part range_access(std::span<const std::uint32_t> warp_ids, std::uint32_t op, std::uint32_t cta, std::uint32_t first,
                    std::uint32_t end, bool write, Via via, std::uint32_t bar_cta, std::uint32_t bar, bool sticky);
  // Checks an access against the buffer's records and installs it; a hazard at (warp, op) on conflict.
  void access(std::uint32_t cta, std::uint32_t buffer, const Rec& rec, const Clock* vc);
  // A record leaves its buffer: a sticky operand read's part goes with it (its only record).
  void dropped(const Rec& r) {
    if (r.sticky && !r.write) free_part(r.part);
  }
  [[noreturn]] void report(std::uint32_t cta, std::uint32_t buffer, const Rec& prior, const Rec& now, const Clock* vc);
  // Whether a reader whose latest wait passed `skip_bar` at once (parity 1 before phase 0) skipped `writer`'s write: the
  // write completes on that barrier (of the reader's CTA), or, naming none, its writer's role signals that barrier.
  bool skipped_write(std::uint32_t skip_bar, const Rec& reader, const Rec& writer) const;
  // The first write of a buffer, ordered after a read of it by a warp whose wait before that read passed at once on the
  // barrier this write completes on: the read took what nothing had written (a read before the first write).
  [[noreturn]] void report_read_before_first_write(std::uint32_t cta, std::uint32_t buffer, const Rec& reader, const Rec& writer);
  void note_unwritten_read(std::uint32_t cta, std::uint32_t buffer, const Rec& reader);
  std::vector<bool> unwritten_noted_;             // per smem declaration: its unwritten read was noted
  std::vector<std::string> unwritten_warnings_;   // (add_warnings)
  // Whether an element of `buffer`'s smem array was refilled (written after a read) in one CTA's buffers.
  bool ring_turned(std::uint32_t buffer, const std::vector<Buffer>& bufs) const;
  std::uint64_t warp_bit(std::uint32_t warp) const;  // a warp's bit in Buffer::thread_writers
  bool handoff_read(const Buffer& b, const Rec& read) const;  // Rec::handoff of a read of b (kept in b)
  std::string buffer_name(std::uint32_t buffer) const;
  std::string op_words(const Rec& r) const;
  // For a load of CTA slot `slot`'s own warp that no warp observed before the CTA exited: how many phases its barrier
  // array completed and how many of them the CTA's waiting warps observed (the roles' trip counts), as a sentence.
  std::string unobserved_fill_words(std::uint32_t slot, const Rec& r);
  // The warps of CTA slot `slot` (bits by index in the CTA) whose role waits on mbarrier declaration `decl`.
  std::uint64_t waiters_of(std::uint32_t slot, std::uint32_t decl) const;

  std::string missing(std::uint32_t cta, std::uint32_t buffer, const Rec& prior, const Rec& now, const Clock* vc) const;

  bool off_ = false;  // RunOptions::hazards is false
  int warps_ = 0, bars_ = 0, cluster_size_ = 1;
  std::size_t dim_ = 0;
  std::uint32_t smem_count_ = 0;
  std::uint32_t tmem_base_ = 0;  // the first TMEM chunk's buffer index
  std::vector<bool> whole_;      // per smem element: declared `whole` (accesses by threads of different warps conflict)
  bool tracks_ = false;
  bool tracks_tmem_ = false;  // some op names a TMEM address
  bool inits_ = false;  // the program runs mbarrier.init (otherwise no use needs an init check)
  std::vector<Part> completing_;  // scratch: the parts a phase completion ends
  std::vector<Domain> domains_;                // by cluster slot
  std::vector<std::vector<Buffer>> buffers_;   // by CTA slot
  std::vector<Clock> pool_;                    // rows of dim_ clocks
  std::vector<std::uint32_t> pool_free_;
  std::vector<PartState> parts_;
  std::vector<std::vector<Clock>> observed_;  // by warp id: what its relaxed reads saw since its last fence.gpu
  // By warp id: the mbarrier (CTA slot, flat element) its latest wait acquired (reports; ~0u: none).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> last_acquired_;
  // By warp id: the named barrier (CTA slot, id) whose use it waited on last (reports; ~0u: none).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> last_named_;
  const MbarrierUnit* mbar_ = nullptr;       // for reports (the phases and waits it records)
  std::vector<std::string> response_notes_;  // by CTA slot (response_note)
  inline static const std::string kNoNote;
  // A note when one side's latest named-barrier use left out the other side's warp, whose role uses that barrier too.
  std::string named_note(const Rec& prior, const Rec& now) const;
  std::string global_hint(const Rec& prior, const Rec& now) const;
  // A WAR's note when the writer's latest wait returned on a phase that the reader's arrivals, which its role makes on
  // that barrier, were not part of (a count below the arrivals per phase); empty otherwise.
  std::string count_note(const Rec& prior, const Rec& now) const;
  std::string free_pass_again(const Rec& reader, const Rec& writer) const;
  std::string unfilled_release_note(const Rec& now, std::uint32_t cta, std::uint32_t flat,
                                    std::int64_t phase) const;
  // The latest phase of mbarrier element `bf` of CTA slot `bc` warp `warp_id` is ordered after (-1: none).
  std::int64_t observed_phase(std::uint32_t warp_id, std::uint32_t bc, std::uint32_t bf) const;
  // An accumulator write still in flight for a reader that did wait on a barrier: when that barrier's latest phase was
  // completed by a plain arrive, or by a umma.commit the MMA's thread issued before the MMA, the words that say so.
  std::string commit_note(const Rec& prior, const Rec& now) const;
  // A write whose writer waited last on a barrier the roles release: the phase it observed completed without any
  // warp of the buffer's CTA (a count below the CTAs releasing it, or releases sent to other ranks).
  // `reader_role`: the earlier access's role, whose releases are searched when the writer's latest wait was not one
  // (-1: only that wait).
  std::string release_ranks_note(std::uint32_t cta, std::uint32_t buffer, const Rec& now, int reader_role) const;
  // The earlier access's warp did arrive on the barrier the later one waited on, in the phase it observed, but before
  // that access (a release placed before the last use).
  std::string early_release_note(const Rec& prior, const Rec& now) const;
  // A cp.async refill of an element its own warp read since its latest cp.async.wait, with the same op as the other
  // reader: the refill writes the stage being read (a ring index error no barrier fixes).
  std::string refill_note(std::uint32_t cta, std::uint32_t buffer, const Rec& prior, const Rec& now) const;
  // The later access's warp last used a named barrier with bar.arrive (no wait) that the earlier access's warp syncs on:
  // it is ordered after nothing the others did (a writer that must wait for the readers uses bar.sync).
  std::string overlap_note(std::uint32_t cta, const Rec& prior, const Rec& now, const Clock* vc) const;
  std::string handback_note(std::uint32_t cta, std::uint32_t buffer, const Rec& prior, const Rec& now) const;
  std::string arrive_only_note(const Rec& prior, const Rec& now) const;
  // Whether op `op_b` of role `role` lies in the innermost loop that holds op `op_a` (their role's code).
  bool same_loop(int role, std::uint32_t op_a, std::uint32_t op_b) const;
  // A read of never-written TMEM chunk `buffer` by a warp ordered after accumulator writes to other columns: its address
  // names another stage than the one it waited for (empty when that does not hold).
  std::string tmem_stage_note(std::uint32_t cta, std::uint32_t buffer, const Rec& reader) const;
  std::vector<std::uint32_t> parts_free_;
};

}  // namespace smpipe::models
