// The SM's issue of a warp's own work: `compute` (modelled ALU work: the warp issues for that many
// cycles) and `sleep` (idle time, nanosleep-like).
//
// A compute op with `share=P` (1..100) uses P % of its warp's SM sub-partition while it runs alone: its
// issue slot and math pipes, whichever bounds its instructions. The compute ops sharing a sub-partition
// whose shares add up to more than 100 % progress together at 100 / (their sum) of their speed, recomputed
// whenever one starts or ends (measured: two issue-bound FFMA warps on one sub-partition issue 0.489 per
// cycle each where one alone issues 0.914; validation/microbench, group `issue`). A warp's sub-partition is
// its index in its CTA mod 4 (the GPU's is the warp's hardware slot). The GPU serves two warps of a
// sub-partition at a time, and favours an issue-bound warp over one bound by a slower pipe (FFMA beside MUFU: 98 %
// and 50 %); the model shares among all, in proportion. Without `share` (0) a compute op
// contends with nothing on its sub-partition.
//
// A compute op with `mma_speed=S` (1..100, default 100) keeps S % of that speed while the SM's tensor pipe
// runs wgmmas (of any warpgroup of the SM: from a batch's first wgmma's start to its last's end, as the tensor
// unit schedules them; it reports each batch here): measured, an always-ready FFMA warp beside a warpgroup's
// wgmmas keeps 0.655 of the 0.914 it issues alone (72 %), a latency-bound chain or an ex2 stream all of its rate
// (group `issue`); a K2 pingpong epilogue's conversion takes 1.39x as long while the other warpgroup's wgmmas
// run (its hardware traces). Not modelled: what ALU work costs the SM's wgmmas (the same microbenchmarks).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/gpu/unit.hpp"

namespace smpipe::models {

class IssueUnit : public Unit {
 public:
  explicit IssueUnit(Simulator& sim);
  std::string_view name() const override { return "sm"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  OpResult execute(OpContext& ctx) override;
  std::int64_t fixed_busy(const isa::OpDesc& d) const override;
  void complete(std::uint32_t index, std::uint64_t gen) override;
  std::string describe_wait(const Warp& w) const override;

 private:
  // Work in fixed point: one cycle of a job's work at full speed is kUnit units (exact integer arithmetic, the same
  // on every platform; a job ends at the first whole cycle its work is done, never before).
  static constexpr std::int64_t kUnit = std::int64_t{1} << 20;
  // A compute op with a share, on its sub-partition.
  struct Job {
    std::uint32_t warp = 0;
    std::int64_t share = 0;
    std::int64_t speed = 100;  // % of its speed kept while the SM's tensor pipe runs wgmmas (mma_speed)
    std::int64_t cycles = 0;  // the op's own
    Cycle start{0};
    std::int64_t left = 0;    // units of work left
  };
  struct SubPartition {
    std::vector<Job> jobs;   // in the order they started
    std::int64_t total = 0;  // the jobs' shares added up
    Cycle since{0};          // when `left` was last brought up to date
    std::uint32_t gen = 0;   // the generation of its completion event (older ones are stale)
    std::uint32_t slow = 0;  // jobs with mma_speed < 100
  };
  // Per SM: when its tensor pipe runs wgmmas, [start, end) in time order (those that ended before every job that reads
  // them was last brought up to date dropped).
  using Spans = std::vector<std::pair<Cycle, Cycle>>;
  OpResult shared_compute(OpContext& ctx, std::int64_t cycles, std::int64_t share, std::int64_t speed);
  // The divisor of a job's speed on its sub-partition: the jobs' shares added up (at least 100) for a job with a share,
  // 100 for one without (it contends with nothing there).
  static std::int64_t shared_total(const SubPartition& s, const Job& j) { return j.share > 0 ? std::max<std::int64_t>(s.total, 100) : 100; }
  // Cycles of [a, b) in which the SM's tensor pipe runs wgmmas.
  std::int64_t busy_in(std::uint32_t sm, Cycle a, Cycle b) const;
  // Units of work job `j` does in [a, b): per cycle kUnit * 100 / shared_total x (its mma_speed % while the pipe runs
  // wgmmas, else 100 %) / 100 (rounded down: a job may end a cycle late, never early).
  std::int64_t progress(const SubPartition& s, const Job& j, std::uint32_t sm, Cycle a, Cycle b) const;
  // Cycles from now until job `j` has done its `left` units at that speed (rounded up).
  std::int64_t cycles_for(const SubPartition& s, const Job& j, std::uint32_t sm) const;
  void advance(std::uint32_t index);     // the jobs' work up to now
  void reschedule(std::uint32_t index);  // one event at the first job's end at the present speed

 public:
  // The tensor unit's report: the SM's tensor pipe runs wgmmas in [start, end) (start at or after the end of every
  // earlier report for the SM). Jobs with mma_speed < 100 on the SM are re-timed.
  void tensor_busy(std::uint32_t sm, Cycle start, Cycle end);
  // Whether compute ops with mma_speed < 100 run on the SM now.
  bool alu_beside(std::uint32_t sm) const;

 private:
  std::uint16_t cause_sleep_, cause_share_, cause_mma_;
  std::vector<SubPartition> parts_;  // per SM x 4
  std::vector<Spans> pipes_;         // per SM
};

}  // namespace smpipe::models
