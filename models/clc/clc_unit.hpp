// Cluster launch control (sm_100, PTX ISA 9.7.13.17, clusterlaunchcontrol): try_cancel asks the
// scheduler for a cluster that has not launched yet; the 16-byte response lands in shared memory with a
// complete_tx(16) on an mbarrier (in every CTA of the cluster with .multicast); query_cancel reads the
// first CTA id of the cancelled cluster, or says that the grid is exhausted.
#pragma once

#include <utility>
#include <vector>

#include "models/gpu/unit.hpp"
#include "models/sync/mbarrier_unit.hpp"

namespace smpipe::models {

class HazardUnit;

class ClcUnit : public Unit {
 public:
  using Unit::Unit;
  std::string_view name() const override { return "clc"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  void connect() override;
  OpResult execute(OpContext& ctx) override;
  void complete(std::uint32_t target, std::uint64_t payload) override;
  void cta_started(std::uint32_t slot) override;

  static std::string fits(const isa::OpDesc& d, const Machine& m);

 private:
  struct CtaState {
    std::vector<std::pair<std::uint32_t, std::int64_t>> responses;  // barrier flat -> first CTA id (-1: none)
    std::int64_t latest = 0;
    bool any = false;
    int failure_warp = -1;  // a warp of the CTA queried a response saying "exhausted" (PTX: undefined per CTA after it)
    std::int64_t multicast_from = -1;  // the first CTA (id) whose multicast response reached this one
    bool told = false;                 // the hazard checker was told of a second issuer
  };
  void note_issuer(std::uint32_t target, const OpContext& ctx);
  struct Response {
    Signal signal;  // the complete_tx(16) on the target's barrier
    std::int64_t first = -1;
  };
  std::vector<CtaState> ctas_;       // by CTA slot
  EventRecords<Response> in_flight_;
  MbarrierUnit* mbar_ = nullptr;
  HazardUnit* hazards_ = nullptr;
};

}  // namespace smpipe::models
