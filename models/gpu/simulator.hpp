// The simulator core (models/gpu): launch and placement of CTAs, the run loop and its events, the
// warp interpreter, blocking and waking, and the registry of units that execute the ops. Everything a
// primitive does lives in its unit (models/sync, tma, memory, tensor, tmem, clc, sm); the core offers them
// the services below. See docs/architecture.md.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "isa/eval.hpp"
#include "models/gpu/gpu.hpp"
#include "models/gpu/unit.hpp"
#include "sim/engine.hpp"
#include "sim/rng.hpp"

namespace smpipe::models {

// Thrown inside the simulator when an op breaks a rule; caught by run() and turned into the result.
struct UndefinedBehaviour {
  Diagnosis diagnosis;
};
// Thrown when a warp loops without time passing (the watchdog for zero-time loops).
struct WatchdogStop {
  std::string reason;
  bool limit = true;  // --max-cycles or --max-ops (a budget a larger run may need); false: an op-less endless loop
};

class Simulator : public sim::Handler {
 public:
  Simulator(const isa::Program& program, const Machine& machine, const RunOptions& options);
  ~Simulator() override;
  RunResult run();
  void handle(const sim::Event& event) override;
  void progress(sim::Cycle now) override;

  // ---- services for units ----
  const isa::Program& program() const { return program_; }
  const Machine& machine() const { return machine_; }
  const RunOptions& options() const { return options_; }
  Cycle now() const { return engine_.now(); }
  // Something moved the kernel forward (a barrier phase completed or released, a warp exited): a watchdog stop
  // reports how long ago, to tell a run that needs more time from one that loops without progress.
  void progressed() { last_progress_ = engine_.now().v; }
  // A latency with the run's jitter applied (uniform in +-jitter%).
  Cycle jit(std::int64_t latency);
  // `done`, a time at or after `start`, moved by a uniform draw within +-share of done - start; never before start.
  // The draw is fixed by the run's seed and `key` (what the time belongs to: a box's address), not by the order of
  // the calls: transfers of the same data draw alike.
  Cycle spread(Cycle start, Cycle done, double share, std::uint64_t key) const;
  // Schedules an event of `unit`: its complete(target, payload) runs at `at`.
  void schedule(const Unit& unit, Cycle at, sim::Priority priority, std::uint32_t target, std::uint64_t payload = 0);
  void block(Warp& w, const Unit* owner, std::uint32_t obj, std::int64_t value, std::uint32_t op, std::uint16_t cause) {
    w.state = WarpState::kBlocked;
    w.wait_unit = owner ? owner->index() : kNoUnit;
    w.wait_obj = obj;
    w.wait_value = value;
    w.wait_op = op;
    w.wait_cause = cause;
    w.wait_since = now();
  }
  void wake_at(std::uint32_t warp_id, Cycle at) { enqueue(kWakes, at, warp_id); }
  // Wakes warps at one cycle, in this order: the same run as wake_at for each in turn, done by one event
  // (a barrier's waiters, a warpgroup after a collective op).
  void wake_all(std::span<const std::uint32_t> warp_ids, Cycle at) { enqueue(kWakes, at, warp_ids); }
  // Ends the run with a diagnosis at warp `warp`'s op `op` (warp ~0u: no warp).
  [[noreturn]] void ub(std::uint32_t warp, std::uint32_t op, const std::string& title, const std::string& message,
                       bool hazard = false);
  [[noreturn]] void diagnose(const Diagnosis& d) { throw UndefinedBehaviour{d}; }
  // A unit's op kept its warp busy for `cycles` from cycle `from` (as an op that returns OpResult::kBusy): the
  // observers see it.
  void observe_busy(const Warp& w, const isa::OpDesc& d, std::int64_t from, std::int64_t cycles) {
    if (observed_) observe_op_busy(w, d, from, cycles);
  }
  // A blocked warp's wait ends now and it continues as a warp whose busy op ends now would: at warp-step priority,
  // after the wake-ups of this cycle.
  void continue_now(std::uint32_t warp_id);
  // The id of a wait cause (a name shown in statistics), registered on first use.
  std::uint16_t cause_id(const std::string& name);
  const std::string& cause_name(std::uint16_t id) const { return causes_[id]; }

  Warp& warp(std::uint32_t id) { return warps_[id]; }
  const Warp& warp(std::uint32_t id) const { return warps_[id]; }
  std::uint32_t warp_id(const Warp& w) const { return static_cast<std::uint32_t>(&w - warps_.data()); }
  Cta& cta(std::uint32_t slot) { return ctas_[slot]; }
  const Cta& cta(std::uint32_t slot) const { return ctas_[slot]; }
  std::uint32_t warp_ids() const { return static_cast<std::uint32_t>(warps_.size()); }
  const Cluster& cluster_of(const Cta& c) const { return clusters_[c.cluster_slot]; }
  const Cluster& cluster(std::uint32_t slot) const { return clusters_[slot]; }
  const isa::OpDesc& op_of(const Warp& w, std::uint32_t op) const { return program_.roles[w.role].ops[op]; }
  std::string warp_label(const Warp& w) const;
  // The CTA slot of cluster rank `rank` of warp w's cluster (rank < 0: w's own CTA); a bad rank is UB.
  std::uint32_t peer_cta(const Warp& w, std::uint32_t op, std::int64_t rank);
  // The CTAs a multicast mask reaches (mask 0: only `cta`); at most a cluster's largest size.
  struct Targets {
    std::uint32_t slot[isa::kMaxClusterSize];
    std::uint32_t count = 0;
    const std::uint32_t* begin() const { return slot; }
    const std::uint32_t* end() const { return slot + count; }
  };
  Targets multicast_targets(std::uint32_t warp, std::uint32_t op, std::uint32_t cta, std::int64_t mask);
  // Clusters not launched yet are handed out by launch and by cluster launch control, in order.
  bool clusters_left() const { return next_cluster_ < num_clusters_; }
  // CTAs launched so far, and resident now.
  std::int64_t ctas_started() const { return ctas_run_; }
  std::int64_t live_ctas() const { return live_ctas_; }
  std::int64_t take_cluster() { return next_cluster_++; }
  // The linear id of the CTA of cluster `cluster` with rank `rank` (ranks x fastest within the cluster).
  std::int64_t cta_id_of(std::int64_t cluster, int rank) const;
  // Describes what a blocked warp waits for (the owning unit's words, or the cause of a timed wait).
  std::string describe_wait(const Warp& w) const;
  const Observers& observers() const { return observers_; }
  // Run-wide figures the units add to.
  struct Counters {
    std::int64_t flops = 0, bytes_loaded = 0, bytes_stored = 0;
  };
  Counters& counters() { return counters_; }
  const Counters& counters() const { return counters_; }
  // The unit of type U (the registry builds one of each), for units that work together.
  template <class U>
  U& find() {
    for (auto& u : units_)
      if (auto* p = dynamic_cast<U*>(u.get())) return *p;
    SMPIPE_CHECK(false, "a unit looked for a unit that is not registered");
  }
  Unit& unit_for(isa::OpKind kind) { return *by_op_[static_cast<int>(kind)]; }
  // Per-warp state of a unit (indexed by warp id): grown to hold slot `slot`'s warps, which are reset.
  template <class T>
  void reset_warps(std::vector<T>& per_warp, std::uint32_t slot) const {
    std::size_t first = ctas_[slot].first_warp, end = first + static_cast<std::size_t>(program_.warps);
    if (end > per_warp.size()) per_warp.resize(end);
    std::fill(per_warp.begin() + static_cast<std::ptrdiff_t>(first), per_warp.begin() + static_cast<std::ptrdiff_t>(end), T{});
  }
  // The CTA slots in use, in launch order (reports list CTAs that way; slots are reused out of order).
  std::vector<std::uint32_t> slots_in_launch_order() const;
  void tell_observers_the_end(const RunResult& r);

  // ---- the interpreter (interpret.cpp) ----
  void step(std::uint32_t warp_id);
  void check_ranges(const OpContext& ctx, const std::int64_t* values) const;
  [[noreturn, gnu::cold, gnu::noinline]] void binary_error(const Warp& w, const isa::Instr& in, isa::EvalError error,
                                                          std::int64_t a, std::int64_t b) const;
  static std::string statement_text(const isa::SourceLoc& loc);
  [[noreturn, gnu::cold, gnu::noinline]] void operator_error(const Warp& w, const isa::Instr& in, std::string title,
                                                            std::string message) const;
  [[noreturn, gnu::cold, gnu::noinline]] void unary_error(const Warp& w, const isa::Instr& in, isa::EvalError error,
                                                         std::int64_t a) const;
  [[noreturn, gnu::cold, gnu::noinline]] void call_error(const Warp& w, const isa::Instr& in, const std::int64_t* args) const;
  [[noreturn, gnu::cold, gnu::noinline]] void zero_time_loop(const Warp& w, std::uint64_t executed, const isa::Instr& in) const;
  [[noreturn, gnu::cold, gnu::noinline]] void ops_exhausted() const;
  [[gnu::cold, gnu::noinline]] void observe_op_started(const Warp& w, std::uint32_t op);
  [[gnu::cold, gnu::noinline]] void observe_op_busy(const Warp& w, const isa::OpDesc& d, std::int64_t from, std::int64_t cycles);

 private:
  enum EventKind : std::uint32_t {
    kEvLaunch,    // try to launch clusters (target unused)
    kEvWarpStep,  // target = warp id: continue interpreting
    kEvStepList,  // payload = warp list, target = its first warp not stepped yet: they continue, in turn
    kEvWake,      // target = warp id: a wait is over
    kEvWakeList,  // payload = warp list, target = its first warp not woken yet: their waits are over
    kEvFirstUnit  // kEvFirstUnit + i: an event of units_[i]
  };
  // Warps that continue (kSteps) or end a wait (kWakes) at a cycle: one event per warp would do, but warps
  // scheduled one right after the other for the same cycle share one event, a list run in the same order
  // (most often the four warps of a warpgroup leaving a compute op or a barrier together).
  struct WarpEvents {
    sim::Priority priority;
    std::uint32_t single, list;
  };
  static constexpr WarpEvents kSteps{sim::Priority::kWarpStep, kEvWarpStep, kEvStepList};
  static constexpr WarpEvents kWakes{sim::Priority::kWake, kEvWake, kEvWakeList};
  void enqueue(const WarpEvents& kind, Cycle at, std::span<const std::uint32_t> warp_ids);
  void enqueue(const WarpEvents& kind, Cycle at, std::uint32_t warp_id) {
    sim::Event* last = engine_.last_pending(at, kind.priority);
    if (last != nullptr && last->kind == kind.list) {
      warp_lists_[static_cast<std::size_t>(last->payload)].push_back(warp_id);
    } else if (last != nullptr && last->kind == kind.single) {
      join(*last, kind, warp_id);
    } else {
      engine_.schedule(at, kind.priority, kind.single, warp_id);
    }
  }
  // Turns `last`, a single warp's event, into a list of that warp and `warp_id`.
  void join(sim::Event& last, const WarpEvents& kind, std::uint32_t warp_id);
  std::uint32_t new_warp_list();

  // launch and lifecycle
  void try_launch();
  bool place_cluster(std::int64_t cluster_index);
  static std::vector<int> plain_launch_order(const Machine& m, std::int64_t ctas);
  static std::vector<int> cluster_launch_order(const Machine& m, std::int64_t cs);
  std::uint32_t create_cta(std::int64_t cta_id, std::int64_t cluster, std::uint32_t cluster_slot, int rank, int sm);
  void warp_exit(std::uint32_t warp_id);
  void cta_exit(std::uint32_t cta_slot);
  void flush_warp_stats(Warp& w);
  [[gnu::always_inline]] inline void resume(std::uint32_t warp_id);
  [[gnu::always_inline]] inline void end_wait(std::uint32_t warp_id);

  DeadlockReport analyse_stuck(bool watchdog);
  void fill_stats(RunResult& r);

  const isa::Program& program_;
  const Machine& machine_;
  RunOptions options_;
  sim::Engine engine_;
  sim::Rng rng_;
  Observers observers_;
  bool observed_ = false;  // any observer at all (checked for every op)
  std::vector<std::unique_ptr<Observer>> own_observers_;

  std::vector<std::unique_ptr<Unit>> units_;
  std::vector<Unit*> by_op_;  // per OpKind

  std::vector<Warp> warps_;  // warp id = CTA slot * warps per CTA + warp index
  std::vector<Cta> ctas_;    // by slot
  std::vector<std::uint32_t> free_ctas_;
  std::vector<Cluster> clusters_;  // by slot
  std::vector<std::uint32_t> free_clusters_;
  std::vector<SmResources> sms_;
  std::vector<int> gpc_of_sm_;  // per SM: its GPC (Machine::gpc_sms; all 0 without GPCs)
  std::vector<int> plain_order_;  // the SMs in the order the launch fills them (plain_launch_order; clusters: cluster_launch_order)
  std::size_t gpcs_ = 1;        // GPCs (1 without)
  std::int64_t num_clusters_ = 0;
  std::int64_t next_cluster_ = 0;  // next cluster to launch (or hand out through CLC)
  std::int64_t live_ctas_ = 0;
  std::int64_t peak_ctas_ = 0;
  bool launch_pending_ = false;

  std::vector<std::vector<std::uint32_t>> warp_lists_;  // the warps of kEvStepList / kEvWakeList events (reused)
  std::vector<std::uint32_t> free_warp_lists_;
  void warp_list(const sim::Event& e);

  // The values of ops with run-time values: per op, its constants, the run-time values written over their places
  // by the interpreter before each execution (ops do not nest); op_values_at_[role][op] is where an op's start.
  std::vector<std::int64_t> op_values_;
  std::vector<std::vector<std::uint32_t>> op_values_at_;
  // Per role: the code the interpreter runs, the role's `fast` code with each op that can only keep its warp busy
  // (Unit::fixed_busy) as a kBusyOp of its cycles.
  std::vector<std::vector<isa::Instr>> code_;

  std::vector<std::string> causes_;
  std::vector<RoleStats> role_stats_;
  Counters counters_;
  std::int64_t ops_ = 0;
  std::int64_t last_exit_ = 0;
  std::int64_t last_progress_ = -1;  // -1: nothing yet
  std::vector<bool> sm_used_;
  std::vector<std::int64_t> sm_ctas_;  // per SM: the CTAs of the launch started on it so far (built-in sm_ctas_before)
  std::int64_t ctas_run_ = 0;
};

// ---- OpContext's small members, inline (they run for every op) ----
inline OpContext::OpContext(Simulator& s, std::uint32_t id, Warp& w, std::uint32_t op_index, const isa::OpDesc& d,
                             const std::int64_t* values)
    : sim(s), warp_id(id), warp(w), op(op_index), desc(d), values_(values) {}
inline Cta& OpContext::cta() const { return sim.cta(warp.cta); }
inline Cycle OpContext::now() const { return sim.now(); }
inline void OpContext::block(const Unit* owner, std::uint32_t obj, std::int64_t value, std::uint16_t cause) const {
  sim.block(warp, owner, obj, value, op, cause);
}

}  // namespace smpipe::models
