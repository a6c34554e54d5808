// The SM's TMA engine (cp.async.bulk.tensor, PTX ISA 9.7.9.25): bulk tensor loads that complete_tx on an
// mbarrier (in every CTA of a multicast mask, or on a peer's barrier with bar_cta=), bulk tensor stores
// grouped in bulk groups (commit_group / wait_group, with .read waiting only until the source smem was
// read), and L2 prefetches. One engine per SM, occupied by the bytes it moves.
#pragma once

#include <utility>
#include <vector>

#include "isa/limits.hpp"
#include "models/gpu/unit.hpp"
#include "models/memory/hazards.hpp"
#include "models/memory/l2.hpp"
#include "models/sync/mbarrier_unit.hpp"

namespace smpipe::models {

class ProxyFenceUnit;

class TmaUnit : public Unit, private Landing {
 public:
  explicit TmaUnit(Simulator& sim);
  std::string_view name() const override { return "tma"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  void connect() override;
  OpResult execute(OpContext& ctx) override;
  void cta_started(std::uint32_t slot) override;
  void add_stats(Stats& stats, std::int64_t cycles, std::int64_t sms_used) const override;

 private:
  struct WarpState {
    std::vector<std::pair<Cycle, Cycle>> groups;  // committed bulk store groups: (smem read done, writes done)
    Cycle open_read{0}, open_write{0};            // the open group's
    // The stores' source reads in flight, per committed group and in the open one (hazard checks); these
    // complete only by a covering wait, whatever the timing.
    HazardUnit::Groups reads;
  };

  // A load whose data is on its way through the memory: what it signals when it lands (landed()).
  struct PendingLoad {
    Cycle issued, engine_done, latency;  // issue, the engine done with its bytes, the latency after the memory
    std::int64_t bytes = 0, cta_id = 0;
    std::uint32_t barrier = 0, count = 0;
    Signal signals[isa::kMaxClusterSize];  // complete_tx of each CTA it lands in
  };
  void landed(std::uint32_t token, Cycle done) override;

  std::vector<PendingLoad> loads_;  // by token
  std::vector<std::uint32_t> free_loads_;
  std::vector<Cycle> free_;       // per SM: the engine is free from
  std::vector<WarpState> warps_;  // by warp id
  std::int64_t busy_ = 0;
  MemoryHierarchy* l2_ = nullptr;
  MbarrierUnit* mbar_ = nullptr;
  ProxyFenceUnit* proxy_ = nullptr;
  HazardUnit* hazards_ = nullptr;
  std::uint16_t cause_wait_read_, cause_wait_;
};

}  // namespace smpipe::models
