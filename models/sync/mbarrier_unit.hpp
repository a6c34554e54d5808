// The mbarrier unit: the ops on mbarrier objects (init, inval, arrive and its forms, expect_tx /
// complete_tx, wait / test_wait, fence.mbarrier_init), the per-CTA barrier state (MBarrier, PTX ISA
// 9.7.13.15), waking the warps that wait on a phase, and the signals other units send to barriers
// (a TMA's complete_tx, a commit's arrive, a remote arrive), which land through this unit's events.
#pragma once

#include <functional>
#include <limits>
#include <vector>

#include "models/gpu/unit.hpp"
#include "models/sync/mbarrier.hpp"

namespace smpipe::models {

// A change to a barrier, done now (apply) or when it lands (send): arrivals, tx-count moves.
enum class SignalKind : std::uint8_t { kArrive, kArriveDrop, kExpectTx, kCompleteTx, kArriveExpectTx, kArriveNoComplete };
const char* signal_name(SignalKind k);

struct Signal {
  SignalKind kind = SignalKind::kArrive;
  std::uint32_t cta = 0;       // target CTA slot
  std::int64_t cta_id = 0;     // its linear id (a slot reused by a later CTA no longer matches)
  std::uint32_t barrier = 0;   // flat index
  std::int64_t value = 0;      // count or bytes
  std::int64_t value2 = 0;     // arrive.expect_tx: the arrivals after the bytes
  std::uint32_t warp = 0;      // issuer (its warp id; the slot may hold a later CTA when the signal lands)
  std::int64_t from_cta = 0;   // the issuer's CTA id when it sent the signal
  std::uint32_t op = 0;        // issuer's op index
  std::uint64_t token = 0;     // observers' token (Observers::signal_sent)
  std::uint64_t hb = 0;        // what it releases when it lands (HazardUnit::Part; 0: nothing)
};

class HazardUnit;

class MbarrierUnit : public Unit {
 public:
  explicit MbarrierUnit(Simulator& sim);
  std::string_view name() const override { return "mbarrier"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  void connect() override;
  OpResult execute(OpContext& ctx) override;
  void complete(std::uint32_t target, std::uint64_t payload) override;
  void cta_started(std::uint32_t slot) override;
  void warp_exited(std::uint32_t warp_id) override;
  void cta_exiting(std::uint32_t slot) override;
  void woken(std::uint32_t warp_id) override;
  std::string describe_wait(const Warp& w) const override;
  void explain_wait(const Warp& w, WaitExplanation& e) const override;
  static bool reaches(const isa::OpDesc& d, int from, int to);
  std::string describe_poll(const Warp& w, const isa::OpDesc& d) const override;
  bool spinning(const Warp& w, Warp& spin) const override;
  void add_stats(Stats& stats, std::int64_t cycles, std::int64_t sms_used) const override;
  void add_notes(std::vector<std::string>& notes) const override { notes.insert(notes.end(), notes_.begin(), notes_.end()); }
  void add_warnings(std::vector<std::string>& warnings) const override;

  // ---- for other units ----
  // Reports: the warps (by index, a bit each) whose arrivals completed element `flat`'s latest phase in CTA slot `cta`,
  // its declaration and its count.
  // The warps whose arrivals made the latest completed phase of element `flat` of CTA slot `cta`: bit i for warp i of that
  // CTA, bit 32 + i for warp i of a peer CTA of its cluster (remote arrives; a cluster of two has one peer).
  std::uint64_t last_phase_arrivers(std::uint32_t cta, std::uint32_t flat) const { return ctas_[cta].last_arrive_mask[flat]; }
  // The same for phase `phase`, while it is one of the kPhaseMasks latest completed (else 0).
  std::uint64_t phase_arrivers(std::uint32_t cta, std::uint32_t flat, std::int64_t phase) const;
  // Every warp that arrived in the current phase or one of the kPhaseMasks latest completed (same bits).
  std::uint64_t recent_arrivers(std::uint32_t cta, std::uint32_t flat) const;
  // The cluster ranks whose warps arrived in phase `phase` (one of the kPhaseMasks latest completed, else 0), and in the
  // current phase or any of those: bit r for rank r.
  std::uint32_t phase_arriver_ranks(std::uint32_t cta, std::uint32_t flat, std::int64_t phase) const;
  std::uint32_t recent_arriver_ranks(std::uint32_t cta, std::uint32_t flat) const;
  std::vector<std::int64_t> rank_ids(std::uint32_t cta, std::uint32_t ranks) const;  // the ids of the CTAs of cta's cluster in ranks
  // Those warps in words: "4,5,6,7", "4,5 and the peer CTA's 4,5".
  static std::string arrivers_words(std::uint64_t mask);
  // Whether warp `warp_id`'s code arrives on element `flat` (of any CTA) on some path: walked from its role's start with
  // its built-ins known and its variables not (isa/reach.hpp: `if warp == 4` closes the path for the other warps, an
  // index computed from the warp's own built-ins picks its element); true when the walk cannot tell.
  bool arrives_on(std::uint32_t warp_id, std::uint32_t flat) const;
  // Whether warp `warp_id`'s code reaches, on some path (walked as arrives_on), an op that signals the barrier of element
  // `flat` (an arrive, a commit, a TMA copy's complete_tx ...), any element of it, in any CTA: a warp whose only such op
  // lies in a dead branch (`if FIXED { ... }` with FIXED 0) or behind a guard it fails signals nothing.
  bool may_signal(std::uint32_t warp_id, std::uint32_t flat) const;
  // Whether some warp of role `role` in the cluster of CTA slot `cta` may_signal (answers kept in `known`, one per role,
  // -1 not asked yet).
  bool role_may_signal(int role, std::uint32_t cta, std::uint32_t flat, std::vector<std::int8_t>& known) const;
  // Whether some op of the program brings bytes (a TMA copy, a CLC response, a thread's complete_tx) to element `flat`
  // of CTA slot `cta` (its bar=, bar_cta= or multicast mask may name other CTAs' only).
  bool bytes_can_reach(std::uint32_t cta, std::uint32_t flat) const;
  // Whether some warp of CTA slot `slot`'s cluster (live ones only, with `live_only`) arrives_on element `flat`.
  bool cluster_arrives_on(std::uint32_t slot, std::uint32_t flat, bool live_only) const;
  // The walk of arrives_on and may_signal: whether warp `warp_id` may reach an op with `kind_ok(op)` whose signalled
  // barrier attribute names element `flat`.
  // With `any_element`, an op that signals any element of the barrier.
  bool reaches_signal(std::uint32_t warp_id, std::uint32_t flat, const std::function<bool(const isa::OpDesc&)>& kind_ok,
                      bool any_element = false) const;
  std::uint32_t decl_of(std::uint32_t flat) const { return decl_[flat]; }
  // The arrival that completed the latest phase of element `flat` of CTA slot `cta`: (warp id, op); ~0u: none yet.
  std::pair<std::uint32_t, std::uint32_t> last_phase_signal(std::uint32_t cta, std::uint32_t flat) const {
    return ctas_[cta].phase_signal[flat];
  }
  std::int64_t count_of(std::uint32_t cta, std::uint32_t flat) const { return ctas_[cta].barriers[flat].expected(); }
  // Whether no wait observed phase `phase` of element `flat` of CTA slot `cta` yet: it has not completed, or
  // it is the latest completed phase and unobserved (earlier phases: not known, false).
  bool unobserved(std::uint32_t cta, std::uint32_t flat, std::int64_t phase) const {
    const std::int64_t completed = ctas_[cta].barriers[flat].phase();
    return phase >= completed || (phase == completed - 1 && !ctas_[cta].observed[flat]);
  }
  // Reports: when warp `warp_id`'s latest passing wait (or test_wait that returned 1) passed a barrier that had completed
  // no phase, with parity 1 (the phase before phase 0, which counts as complete: it returns at once), that barrier
  // element and the wait's op (~0u: it did not); and the words that say so.
  std::pair<std::uint32_t, std::uint32_t> passed_before_phase0(std::uint32_t warp_id) const;
  std::string before_phase0_words(std::uint32_t warp_id, std::uint32_t flat, std::uint32_t op) const;
  // A multicast TMA load by warp `warp_id` (op `op`) completing on element `flat` with mask `mask` that leaves CTA slot
  // `slot` of its cluster out (reports: a stuck tx-count in that CTA names it).
  void note_left_out(std::uint32_t slot, std::uint32_t flat, std::uint32_t warp_id, std::uint32_t op, std::int64_t mask);
  // A TMA load by warp `warp_id` (op `op`) into element `dst` of an smem array that completes on element `flat` of an
  // mbarrier array of the same length at another index (sA[1] with bar=full[0]): legal, but a ring's stages usually
  // pair buffer i with barrier i. Kept per CTA (a few): reports of that barrier's stages name it.
  void note_stage_mismatch(std::uint32_t slot, std::uint32_t flat, std::uint32_t dst, std::uint32_t warp_id, std::uint32_t op);
  // The words for element `flat`'s reports: the loads that named it for another stage's buffer, or that loaded into
  // its stage's buffer but named another element of it ("" when none did).
  std::string stage_mismatch_words(std::uint32_t slot, std::uint32_t flat) const;
  // A signal that lands at `at` (never earlier than now).
  void send(Cycle at, const Signal& s);
  // A complete_tx signal made now that lands later (a TMA copy's, a CLC response's, a thread's on a peer's barrier):
  // its bytes count as on their way until it lands (tx_in_flight).
  void on_its_way(const Signal& s);
  // Bytes of complete_tx signals (TMA copies, CLC responses) issued and not landed yet, over the live CTAs (a run stopped
  // by a limit with transfers on their way was cut short, not stuck on a byte count).
  std::int64_t tx_in_flight() const override;
  // A signal applied now, by warp `s.warp` at its op `s.op` (target checked to be alive).
  void land(const Signal& s);
  // Diagnoses a signal whose target CTA has exited (its slot may hold a later CTA by now).
  void check_alive(const Signal& s);
  // A signal for slot `cta` (its current CTA); a use of the warp's own CTA's barrier must be ordered after
  // its in-kernel init.
  Signal signal_to(std::uint32_t cta, SignalKind kind, std::uint32_t barrier, std::int64_t value, std::uint32_t warp,
                   std::uint32_t op) const;
  // cp.async.mbarrier.arrive without .noinc: pending += count now, the arrive lands later.
  void raise_pending(std::uint32_t cta, std::uint32_t barrier, std::int64_t count, std::uint32_t warp, std::uint32_t op);
  std::string barrier_name(std::uint32_t flat) const;
  // A cluster barrier completed in cluster slot `cluster`: inits fenced with fence.mbarrier_init before it
  // are now visible to every CTA of the cluster.
  void cluster_synced(std::uint32_t cluster);

 private:
  // Whether peers of the cluster may signal a barrier yet (PTX ISA 9.7.13.15.4 mbarrier.init and 9.7.12.4
  // fence.mbarrier_init: an init is made visible to the cluster by fence.mbarrier_init.release.cluster in
  // the initialising thread, then a cluster barrier; CUTLASS: fence_barrier_init() then cluster_sync()).
  enum class InitVisibility : std::uint8_t {
    kCluster,  // declared with count= (initialised before the kernel starts), or published
    kLocal,    // mbarrier.init, not fenced yet
    kFenced,   // fenced by its initialising thread, not yet followed by a cluster barrier
  };
  struct CtaBarriers {
    std::vector<MBarrier> barriers;  // flat: layout base[decl] + element
    std::vector<std::vector<std::uint32_t>> waiters;
    std::vector<Cycle> last_complete;
    // Which warps arrived in the current and the previous phase: consecutive phases completed by disjoint
    // sets of warps usually mean more arrivals per phase than the barrier's count (reported as a note).
    std::vector<std::uint64_t> arrive_mask, last_arrive_mask;  // (last_phase_arrivers)
    std::vector<std::uint64_t> phase_masks;  // [flat * kPhaseMasks + phase % kPhaseMasks]: completed phases' arrivers
    // The same by the arriving warps' cluster ranks (bit r: a warp of rank r arrived): which CTAs released a phase.
    std::vector<std::uint32_t> arrive_ranks, phase_ranks;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> last_signal;  // the latest arrival's warp id and op (~0u: none)
    std::vector<std::pair<std::uint32_t, std::uint32_t>> phase_signal;  // the same at the previous phase's completion
    // Multicast TMA loads of the cluster completing on an element of this barrier kind whose mask left this CTA out,
    // since the element's latest completion here (a few per element: reports of a stuck tx-count).
    struct LeftOut {
      std::uint32_t flat, warp, op;
      std::int64_t mask;
    };
    std::vector<LeftOut> left_out;
    struct Mismatch {
      std::uint32_t flat, dst, warp, op;
    };
    std::vector<Mismatch> mismatches;  // note_stage_mismatch
    std::vector<std::uint32_t> passed_waits;  // waits on the element that returned (for deadlock hints)
    std::vector<std::int64_t> tx_in_flight;  // bytes of complete_tx signals on their way to the element (on_its_way, land)
    std::vector<char> free_pass;              // a wait on the element returned before its phase 0 (parity 1; deadlock hints)
    std::vector<std::uint32_t> test_passes;   // test_waits on the element that returned 1 (the same)
    // Whether a wait or test_wait observed the latest completed phase (or warps were blocked on it).
    std::vector<std::uint8_t> observed;
    std::vector<InitVisibility> visibility;
    std::vector<std::int32_t> init_warp;  // warp index that ran the latest mbarrier.init
    std::vector<std::uint32_t> init_op;   // and its op (for the report)
    // Per (warp index, barrier): the phase whose completion the warp's last passing `wait` returned on
    // (-1: none), and that wait's op: a later wait returning on the same completion is stale.
    std::vector<std::int64_t> consumed;
    std::vector<std::uint32_t> consumed_op;
    // Per (warp index, barrier declaration): where the warp's first passing `wait` on the declaration
    // returned (its element * 2 + the phase's parity, plus 1; 0: none yet), so that warpgroups counting a
    // ring from the same place can be told apart from warpgroups that share its stages (same_start_words).
    std::vector<std::uint32_t> first_wait;
    // Per (warp index, barrier): when the warp's latest passing wait on it was its second free pass there
    // (parity 1 before phase 0), the op of the first; ~0u otherwise.
    std::vector<std::uint32_t> free_again;
    // Barriers invalidated after a life of phases (a few per CTA): by which op, after how many phases, and
    // which op of each warp (by index) had returned on them last (~0u: none), for the report of a use after
    // the re-init.
    struct Inval {
      std::uint32_t flat, warp, op;
      std::int64_t phases;
      std::vector<std::uint32_t> used_op;
    };
    std::vector<Inval> invals;
    // Per (warp index, barrier): the op of the warp's latest arrival; and arrivals of a warp that already
    // arrived in the same phase (a few per CTA; `phase` -1 until the phase completes), for the reports of a
    // phase completed early.
    std::vector<std::uint32_t> arrive_op;
    struct Twice {
      std::uint32_t flat;
      std::int64_t phase;
      int warp;
      std::uint32_t first_op, second_op;
    };
    std::vector<Twice> twice;
    struct Stale {
      int warp;  // warp index
      std::uint32_t op, before_op, flat;
      std::int64_t phase;
    };
    std::vector<Stale> stale;  // waits that returned on a completion already consumed (judged at CTA exit)
  };
  void note_consumed(std::uint32_t warp_id, std::uint32_t op, std::uint32_t flat, std::int64_t phase);
  std::string stale_warning(std::uint32_t slot, const CtaBarriers::Stale& st, bool stopped) const;
  std::vector<std::string> warnings_;
  std::int64_t stale_waits_ = 0;
  std::vector<std::int64_t> exit_cycle_;  // by warp id: when it exited (-1: alive), for deadlock reports
  // By warp id: the barrier (flat) and op of its latest passing wait when that passed before phase 0 (~0u: it did not).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> before_phase0_;
  // By warp id: its latest test_wait that returned 0, while no wait or test_wait of it passed since (flat
  // ~0u: none), the phase it waits for and since when it polls so (for a watchdog report of a spin loop).
  struct Poll {
    std::uint32_t flat = ~0u, op = 0;
    std::int64_t phase = 0, since = 0;
  };
  std::vector<Poll> polls_;
  static constexpr std::int64_t kNoPhase =
      std::numeric_limits<std::int64_t>::min();  // consumed: no wait returned yet
  void note_pass(std::uint32_t warp_id, std::uint32_t op, std::uint32_t flat, bool before_phase0);
  std::string left_out_words(std::uint32_t slot, std::uint32_t flat, bool commits, std::int64_t least) const;
  std::string tx_only_words(std::uint32_t cta, std::uint32_t flat) const;
  std::string exited_words(const Signal& s) const;
  std::string trip_words(const Signal& s) const;  // HazardUnit::trip_count_words for an own signal to the exited CTA
  std::string arrivals_astray(std::uint32_t slot, std::uint32_t flat) const;
  std::string unwaited_sibling_words(const Warp& w) const;
  std::string signalled_only_there(std::uint32_t slot, std::uint32_t flat) const;
  std::string element_skipped(std::uint32_t slot, std::uint32_t flat) const;
  std::string latest_arrival(std::uint32_t slot, std::uint32_t flat) const;
  std::string op_words(std::uint32_t warp_id, std::uint32_t op, bool with_cta) const;
  std::string same_start_words(const Warp& w) const;
  bool other_warpgroup_consumed(const Warp& w) const;
  std::string skipped_release_words(std::uint32_t cta, std::uint32_t flat, const Warp& x) const;

 public:
  // For a report of phase `phase` of element `flat` of CTA slot `cta` completed without some warps: the warps
  // that arrived twice in it, and through which ops ("" if none did).
  std::string twice_words(std::uint32_t cta, std::uint32_t flat, std::int64_t phase) const;
  // When warp `warp_id`'s latest passing wait on an element of barrier declaration `decl` returned at once on
  // it, fresh (parity 1 before phase 0), for the second time: the words that say so ("" otherwise).
  std::string free_pass_again_words(std::uint32_t warp_id, std::uint32_t decl) const;
  // For a use by warp `warp_id`'s op `op` of element `flat` that its latest init is not ordered before: when
  // that init followed an mbarrier.inval of a barrier this op had waited on, the words that say the inval
  // came too soon.
  std::string reinit_words(std::uint32_t warp_id, std::uint32_t op, std::uint32_t flat) const;

 private:
  std::string arrived_twice_words(std::uint32_t cta, std::uint32_t flat, std::uint32_t warp, std::uint32_t op) const;
  void check_visible(const Signal& s);
  // PTX ISA mbarrier.test_wait/try_wait: each phase must be observed by a successful test_wait/try_wait before an arrive
  // of the next phase.
  void check_observed(std::uint32_t cta, std::uint32_t flat, std::uint32_t warp, std::uint32_t op, const char* action);

  void apply(const Signal& s, const char* action);
  void note_arrival(std::uint32_t cta, std::uint32_t flat, std::uint32_t warp_id, std::uint32_t op);
  void on_phase_completed(std::uint32_t cta, std::uint32_t flat, const char* by);
  void apply_result(MBarrier::Result r, std::uint32_t cta, std::uint32_t flat, std::uint32_t warp, std::uint32_t op,
                    std::int64_t count, const char* action);
  [[gnu::cold, gnu::noinline]] void bad_result(MBarrier::Result r, std::uint32_t cta, std::uint32_t flat, std::uint32_t warp,
                                               std::uint32_t op, std::int64_t count, const char* action);
  std::string state_text(std::uint32_t cta, std::uint32_t flat) const;
  std::uint16_t cause_of(std::uint32_t flat) const { return causes_[decl_[flat]]; }
  const isa::ElementLayout& layout() const;

  std::vector<CtaBarriers> ctas_;  // by CTA slot
  static constexpr std::int64_t kPhaseMasks = 4;
  std::pair<std::uint32_t, std::uint32_t> overflow_prev_{~0u, 0};  // an overflowing arrival's previous one (its report)
  mutable std::uint64_t walk_budget_ = std::uint64_t{1} << 26;     // arrives_on's walks, over the whole run
  EventRecords<Signal> signals_;   // in flight, by event target
  std::vector<std::uint16_t> causes_;  // per declaration
  std::vector<std::uint32_t> decl_;    // per flat element: its declaration
  std::vector<BarrierStats> stats_;    // per declaration
  std::vector<bool> noted_decl_;
  std::vector<std::string> notes_;
  std::vector<Cycle> remote_sent_;  // per warp id: when its latest remote signal lands (program order)
  HazardUnit* hazards_ = nullptr;
};

}  // namespace smpipe::models
