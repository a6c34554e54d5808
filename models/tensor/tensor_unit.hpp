// The tensor cores: sm80 mma.sync (per warp, on its SM sub-partition), sm90 wgmma (warpgroup-collective,
// asynchronous, committed in groups and waited on with wait_group; PTX ISA 9.7.15) and sm100 tcgen05.mma
// (one thread issues for the CTA or the CTA pair; completion signalled through tcgen05.commit on an
// mbarrier; PTX ISA 9.7.16). The SM's tensor pipe is occupied by the FLOP at the machine's rate.
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "models/gpu/unit.hpp"
#include "models/memory/hazards.hpp"

namespace smpipe::models {

class MbarrierUnit;
class ProxyFenceUnit;
class IssueUnit;

class TensorUnit : public Unit {
 public:
  explicit TensorUnit(Simulator& sim);
  std::string_view name() const override { return "tensor"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  void connect() override;
  OpResult execute(OpContext& ctx) override;
  void cta_started(std::uint32_t slot) override;
  void warp_exited(std::uint32_t warp_id) override;
  std::string describe_wait(const Warp& w) const override;
  void explain_wait(const Warp& w, WaitExplanation& e) const override;
  void add_stats(Stats& stats, std::int64_t cycles, std::int64_t sms_used) const override;
  void add_warnings(std::vector<std::string>& warnings) const override;

  // The tcgen05 async ops of one thread (the warp's elected lane): all complete at `done`; its
  // tcgen05.cp copies at `cp_done` (tcgen05.mma is ordered after them, PTX ISA 9.7.16.6).
  struct Tcgen05Thread {
    Cycle done{0}, cp_done{0};
    // smem operand reads (umma a= / b=, tcgen05.cp src=; hazards): (CTA slot, part), each adopted by every
    // later commit (each tracks all the thread's earlier tcgen05 ops) while the checker keeps it; a
    // cta_group::2 MMA reads the operands of both CTAs of the pair.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> reads;
    // Accumulator writes (hazards): the latest part per TMEM chunk of each CTA slot written (its own, and its
    // pair peer's for cta_group::2), and the distinct parts among them (CTA slot, part), each adopted by every
    // commit.
    std::vector<std::pair<std::uint32_t, std::array<std::uint64_t, HazardUnit::kTmemChunks>>> d_writes;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> d_parts;
  };
  Tcgen05Thread& tcgen05(std::uint32_t warp_id) { return threads_[warp_id]; }
  // Undefined behaviour at ctx's op unless TMEM columns [col, col + n) of CTA slot `cta` are all allocated by that
  // CTA now: the TMEM unit, which owns the allocations (and uses this unit), sets it when it connects.
  std::function<void(const OpContext& ctx, std::uint32_t cta, std::int64_t col, std::int64_t n)> check_tmem_columns;

  static std::string fits(const isa::OpDesc& d, const Machine& m);

  // A warpgroup's latest wgmma.wait (reports): its op (in the role), N, and the cycle it completed; op ~0u: none yet.
  struct LastWait {
    std::uint32_t op = ~0u;
    std::int64_t n = 0;
    std::int64_t cycle = -1;
  };
  LastWait last_wait(std::uint32_t cta, int warpgroup) const {
    return cta < warpgroups_.size() && warpgroup < static_cast<int>(warpgroups_[cta].size()) ? warpgroups_[cta][warpgroup].last_wait
                                                                                            : LastWait{};
  }

 private:
  struct Warpgroup {
    int arrived = 0;
    std::uint32_t op = 0;
    std::vector<std::uint32_t> waiting;
    std::vector<Cycle> groups;  // committed wgmma groups: completion
    Cycle open_done{0};
    bool open_nonempty = false;
    // Whether the warpgroup has executed a wgmma.fence (PTX ISA: one must precede its first wgmma.mma_async).
    bool fenced = false;
    // Its latest wgmma (op index in the role; ~0u: none yet): register work after it needs a fence before the next.
    std::uint32_t last_wgmma = ~0u;
    // The operand reads in flight (hazard checks): (warp id, part), per committed group and in the open one.
    HazardUnit::Groups reads;
    LastWait last_wait;
  };
  OpResult warpgroup_op(OpContext& ctx);
  OpResult umma(OpContext& ctx);
  OpResult umma_commit(OpContext& ctx);
  // Occupies the tensor pipe for an MMA; `sms` > 1 when a CTA pair shares the work (cta_group::2).
  Cycle issue(const OpContext& ctx, std::int64_t count, bool whole_sm, int sms = 1);
  // A warpgroup issues `count` wgmmas one after another: each costs its issue cycles and waits while the
  // SM's queue is full (wgmma_queue_depth wgmmas waiting behind the one the pipe works on). Returns when
  // the pipe is done with the last; `issued`: when the warpgroup has issued the last.
  Cycle issue_wgmma(const OpContext& ctx, std::int64_t count, Cycle& issued);
  // A wgmma (not the warpgroup's first) after register work of a warp of its warpgroup with no wgmma.fence in between
  // (Warp::reg_work): a warning, once per wgmma op.
  void check_register_work(const OpContext& ctx, const Warpgroup& wg, int wg_index);

  std::vector<std::array<Cycle, 4>> pipe_free_;          // per SM, per sub-partition
  // Per SM: the pipe's start cycles of its last wgmma_queue_depth wgmmas (a ring; queue_head_: the oldest).
  std::vector<Cycle> queue_starts_;
  std::vector<std::uint32_t> queue_head_;
  std::vector<std::vector<Warpgroup>> warpgroups_;       // by CTA slot
  std::vector<Tcgen05Thread> threads_;                   // by warp id
  std::vector<std::pair<int, std::uint32_t>> fence_warned_;  // (role, wgmma op) warned of register work unfenced
  std::vector<std::string> warnings_;                        // (add_warnings)
  std::vector<int> whole_role_;  // per warpgroup index: the role all four of its warps run (-1: none)
  std::int64_t busy_ = 0;                                // sub-partition cycles
  MbarrierUnit* mbar_ = nullptr;
  ProxyFenceUnit* proxy_ = nullptr;
  HazardUnit* hazards_ = nullptr;
  IssueUnit* issue_ = nullptr;  // told when the SM's pipe runs wgmmas (compute ops with mma_speed)
  bool alu_beside_ = false;      // the program has compute ops that give mma_speed
  std::uint16_t cause_mma_sync_, cause_wgmma_wait_, cause_convergence_, cause_wgmma_issue_;
};

}  // namespace smpipe::models
