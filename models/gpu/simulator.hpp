// The simulator proper (private to models/gpu): state of the whole GPU and the event handlers.
#pragma once

#include <string>
#include <vector>

#include "models/gpu/gpu.hpp"

namespace smpipe::models::detail {

// Wait causes known before the run (registered first, in this order); mbarrier causes follow.
enum Cause : std::uint16_t {
  kCauseNone, kCauseClusterSync, kCauseCpAsyncWait, kCauseLdGlobal, kCauseMmaSync, kCauseWgmmaWait, kCauseConvergence,
  kCauseTmaWaitRead, kCauseTmaWait, kCauseTmemAlloc, kCauseTmemWait, kCauseSleep, kCauseNamedBarrier0,
  kCauseFixedCount = kCauseNamedBarrier0 + 16
};

enum EventKind : std::uint32_t {
  kEvLaunch,      // try to launch clusters (target unused)
  kEvWarpStep,    // target = warp id: continue interpreting
  kEvWake,        // target = warp id: a wait is over
  kEvAsync,       // target = async record
};

// Thrown inside the simulator when an op breaks a rule; caught by run() and turned into the result.
struct UndefinedBehaviour {
  Diagnosis diagnosis;
};
// Thrown when a warp loops without time passing (the watchdog for zero-time loops).
struct WatchdogStop {
  std::string reason;
};

class Simulator : public sim::Handler {
 public:
  Simulator(const isa::Program& program, const Machine& machine, const RunOptions& options);
  RunResult run();
  void handle(const sim::Event& event) override;

  // ---- the interpreter (interpret.cpp) ----
  void step(std::uint32_t warp_id);

 private:
  // Runs one op for a warp (interpret.cpp); v holds the op's argument values.
  struct OpResult {
    enum Kind : std::uint8_t { kContinue, kBusy, kBlocked, kExited } kind = kContinue;
    std::int64_t cycles = 0;  // kBusy: cycles until the warp issues again
  };
  // The CTAs a multicast reaches (mask 0: only `cta`); at most 16, a cluster's largest size.
  struct Targets {
    std::uint32_t slot[16];
    std::uint32_t count = 0;
    const std::uint32_t* begin() const { return slot; }
    const std::uint32_t* end() const { return slot + count; }
  };
  Targets multicast_targets(std::uint32_t warp, std::uint32_t op, std::uint32_t cta, std::int64_t mask);
  OpResult exec_op(std::uint32_t warp, std::uint32_t op, const isa::OpDesc& d, std::int64_t* v);
  std::uint32_t flat_barrier(std::uint32_t warp, std::uint32_t op, const isa::OpDesc& d, int attr, const std::int64_t* v);
  std::uint32_t flat_smem(std::uint32_t warp, std::uint32_t op, const isa::OpDesc& d, int attr, const std::int64_t* v);
  void barrier_op(std::uint32_t warp, std::uint32_t op, std::uint32_t cta, std::uint32_t flat, int what, std::int64_t value,
                  bool remote, std::int64_t value2 = 0);
  void check_async_read(std::uint32_t warp, std::uint32_t op, const isa::OpDesc& d, int attr, const std::int64_t* v);
  Cycle l2_transfer(Cycle start, std::int64_t bytes);
  // Occupies the tensor pipe for an MMA; `sms` > 1 when a CTA pair shares the work (cta_group::2).
  Cycle tensor_issue(Warp& w, const isa::OpDesc& d, std::int64_t count, bool whole_sm, int sms = 1);
  // launch and lifecycle
  void try_launch();
  bool place_cluster(std::int64_t cluster_index);
  std::uint32_t create_cta(std::int64_t cta_id, std::int64_t cluster, int rank, int sm);
  void warp_exit(std::uint32_t warp_id);
  void cta_exit(std::uint32_t cta_slot);
  void flush_warp_stats(Warp& w);

  // barriers
  void note_arrival(std::uint32_t cta, std::uint32_t flat, int warp_index);
  void trace_stage(std::uint32_t cta, std::uint32_t flat, bool filled);
  void on_phase_completed(std::uint32_t cta, std::uint32_t flat, const char* by);
  void apply_barrier_result(MBarrier::Result r, std::uint32_t cta, std::uint32_t flat, std::uint32_t warp, std::uint32_t op,
                            std::int64_t count, const char* action);
  void named_arrive(Warp& w, int id, std::int64_t threads, bool wait, std::uint32_t op);
  void check_named_release(std::uint32_t cta, int id);
  void release_named(std::uint32_t cta, int id);
  void check_cluster_release(std::int64_t cluster);
  void block(Warp& w, WaitKind kind, std::uint32_t obj, std::int64_t value, std::uint32_t op, std::uint16_t cause);
  void wake_at(std::uint32_t warp_id, Cycle at);
  void tmem_try_grant(int sm);
  std::uint32_t schedule_async(Cycle at, const Async& a);
  void run_async(std::uint32_t id);

  // helpers
  Cycle now() const { return engine_.now(); }
  Cycle jit(std::int64_t latency);
  std::uint16_t cause_id(const std::string& name);
  std::uint16_t barrier_cause(std::uint32_t decl);
  std::string barrier_name(std::uint32_t cta, std::uint32_t flat) const;
  std::string barrier_state(std::uint32_t cta, std::uint32_t flat) const;
  std::uint32_t barrier_decl(std::uint32_t flat) const;
  [[noreturn]] void ub(std::uint32_t warp, std::uint32_t op, const std::string& title, const std::string& message,
                       bool hazard = false);
  const isa::OpDesc& op_of(const Warp& w, std::uint32_t op) const;
  std::uint32_t peer_cta(const Warp& w, std::uint32_t op, std::int64_t rank);
  std::string warp_label(const Warp& w) const;
  bool traced(std::uint32_t cta) const;

  // deadlock analysis (deadlock.cpp)
  DeadlockReport analyse_stuck(bool watchdog);
  std::string describe_wait(const Warp& w) const;

  void fill_stats(RunResult& r);

  const isa::Program& program_;
  const Machine& machine_;
  RunOptions options_;
  sim::Engine engine_;
  sim::Rng rng_;

  std::vector<std::uint32_t> barrier_base_;  // per mbarrier decl: first flat index
  std::uint32_t barrier_count_ = 0;
  std::vector<std::uint32_t> smem_base_;
  std::uint32_t smem_count_ = 0;

  std::vector<Warp> warps_;
  std::vector<Cta> ctas_;
  std::vector<Sm> sms_;
  std::vector<Cluster> clusters_;  // indexed by cluster index (created on launch)
  std::vector<Async> asyncs_;
  std::vector<std::uint32_t> free_asyncs_;
  std::int64_t num_clusters_ = 0;
  std::int64_t next_cluster_ = 0;  // next cluster to launch (or hand out through CLC)
  std::int64_t live_ctas_ = 0;
  std::int64_t peak_ctas_ = 0;
  bool launch_pending_ = false;
  Cycle l2_free_{0};
  double l2_carry_ = 0;

  std::vector<std::string> causes_;
  std::vector<std::uint16_t> barrier_causes_;
  std::vector<RoleStats> role_stats_;
  std::vector<BarrierStats> barrier_stats_;
  std::int64_t tensor_busy_ = 0, tma_busy_ = 0, lsu_busy_ = 0;
  std::int64_t flops_ = 0, bytes_loaded_ = 0, bytes_stored_ = 0;
  std::int64_t ops_ = 0;
  std::int64_t last_exit_ = 0;
  std::vector<bool> sm_used_;
  std::int64_t ctas_run_ = 0;
  std::uint64_t flow_next_ = 1;
  std::vector<std::string> notes_;
  std::uint32_t tmem_requester_ = ~0u;  // the warp executing tmem.alloc right now (see tmem_try_grant)
  std::vector<bool> noted_decl_;
};

}  // namespace smpipe::models::detail

