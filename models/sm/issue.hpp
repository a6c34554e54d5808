// The SM's issue of a warp's own work: `compute` (modelled ALU work: the warp issues for that many
// cycles) and `sleep` (idle time, nanosleep-like). Today a warp's issue never contends with others; an
// SM issue model with per-scheduler contention is the next implementation of this unit.
#pragma once

#include "models/gpu/unit.hpp"

namespace smpipe::models {

class IssueUnit : public Unit {
 public:
  explicit IssueUnit(Simulator& sim);
  std::string_view name() const override { return "sm"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  OpResult execute(OpContext& ctx) override;

 private:
  std::uint16_t cause_sleep_;
};

}  // namespace smpipe::models
