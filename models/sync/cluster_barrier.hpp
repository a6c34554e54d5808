// The cluster barrier (cluster.sync: barrier.cluster.arrive + wait, PTX ISA 9.7.13.2): every live warp of
// the cluster arrives; exited warps count as arrived.
#pragma once

#include <vector>

#include "models/gpu/unit.hpp"

namespace smpipe::models {

class HazardUnit;

class MbarrierUnit;

class ClusterBarrierUnit : public Unit {
 public:
  explicit ClusterBarrierUnit(Simulator& sim);
  std::string_view name() const override { return "cluster_barrier"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  OpResult execute(OpContext& ctx) override;
  void cta_started(std::uint32_t slot) override;
  void warp_exited(std::uint32_t warp_id) override;
  std::string describe_wait(const Warp& w) const override;
  void explain_wait(const Warp& w, WaitExplanation& e) const override;

 private:
  struct ClusterState {
    int arrived = 0;
    std::vector<std::uint32_t> waiters;
  };
  void check_release(std::uint32_t cluster_slot);
  void connect() override;

  std::vector<ClusterState> clusters_;  // by cluster slot
  std::uint16_t cause_;
  MbarrierUnit* mbar_ = nullptr;
  HazardUnit* hazards_ = nullptr;
};

}  // namespace smpipe::models
