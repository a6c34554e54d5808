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
// contends with nothing. Not modelled: what ALU work costs the SM's wgmmas (the same microbenchmarks).
#pragma once

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
    std::int64_t cycles = 0;  // the op's own
    Cycle start{0};
    std::int64_t left = 0;    // units of work left
  };
  struct SubPartition {
    std::vector<Job> jobs;   // in the order they started
    std::int64_t total = 0;  // the jobs' shares added up
    Cycle since{0};          // when `left` was last brought up to date
    std::uint32_t gen = 0;   // the generation of its completion event (older ones are stale)
  };
  OpResult shared_compute(OpContext& ctx, std::int64_t cycles, std::int64_t share);
  // Units of work a job does in `dt` cycles at the sub-partition's speed (all of its jobs alike): kUnit per cycle at
  // 100 % or less, kUnit * 100 / total above (rounded down: a job may end a cycle late, never early).
  static std::int64_t progress(const SubPartition& s, std::int64_t dt);
  // Cycles until `left` units are done at that speed (rounded up).
  static std::int64_t cycles_for(const SubPartition& s, std::int64_t left);
  void advance(SubPartition& s);         // the jobs' work up to now
  void reschedule(std::uint32_t index);  // one event at the first job's end at the present speed

  std::uint16_t cause_sleep_, cause_share_;
  std::vector<SubPartition> parts_;  // per SM x 4
};

}  // namespace smpipe::models
