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
  // A warp's latest tma.store: the op and the cycle it issued (-1: none).
  std::pair<std::uint32_t, std::int64_t> last_store(std::uint32_t warp_id) const {
    if (warp_id >= warps_.size()) return {~0u, -1};
    return {warps_[warp_id].last_store_op, warps_[warp_id].last_store_at};
  }
  // The op of warp `warp_id`'s latest tma.store whose global writes no `tma.wait` without `read` has covered
  // yet (in program order; ~0u: none): a release the warp makes now does not order them.
  std::uint32_t unfinished_store(std::uint32_t warp_id) const {
    if (warp_id >= warps_.size()) return ~0u;
    const WarpState& w = warps_[warp_id];
    return w.stores > w.settled ? w.last_store_op : ~0u;
  }

 private:
  struct WarpState {
    std::vector<std::pair<Cycle, Cycle>> groups;  // committed bulk store groups: (smem read done, writes done)
    Cycle open_read{0}, open_write{0};            // the open group's
    // The stores' source reads in flight, per committed group and in the open one (hazard checks); these
    // complete only by a covering wait, whatever the timing.
    HazardUnit::Groups reads;
    // Program order, whatever the timing: the stores issued, those a wait without .read covered (their global
    // writes are then complete for the warp), and each committed group's newest store not covered yet (a few:
    // older ones count as covered), for unfinished_store.
    std::uint64_t stores = 0, settled = 0;
    std::uint32_t last_store_op = 0;
    std::int64_t last_store_at = -1;  // when its latest tma.store issued (-1: none)
    std::vector<std::uint64_t> committed;
  };
  void note_stage(const OpContext& ctx, std::uint32_t bar, std::uint32_t dst);

  // A load whose data is on its way through the memory: what it signals when it lands (landed()).
  struct PendingLoad {
    Cycle issued, engine_done, latency;  // issue, the engine done with its bytes, the latency after the memory
    std::int64_t bytes = 0, cta_id = 0;
    std::uint32_t stage = 0;  // its index in stage_until_
    std::uint32_t barrier = 0, count = 0;
    Signal signals[isa::kMaxClusterSize];  // complete_tx of each CTA it lands in
  };
  void landed(std::uint32_t token, Cycle done) override;
  void cta_exiting(std::uint32_t slot) override;

  std::vector<PendingLoad> loads_;  // by token
  std::vector<std::uint32_t> free_loads_;
  std::vector<Cycle> free_;       // per SM: the engine is free from
  // The GPC's path to the L2 (tma_gpc_latency_cycles): each SM's GPC and whether the GPC is one TPC (2 SMs or
  // fewer); per CTA slot, whether it has issued a TMA load; per SM, its resident CTAs that have; per GPC, its SMs
  // with such a CTA (the SMs loading in it); those of the larger GPCs, and how many such GPCs there are.
  std::vector<int> gpc_of_;
  std::vector<char> small_gpc_;
  std::vector<char> cta_loads_;
  std::vector<int> sm_loaders_;
  std::vector<std::int64_t> gpc_loaders_;
  std::int64_t large_loaders_ = 0, large_gpcs_ = 0;
  // Per CTA slot and barrier: until when a TMA load of the CTA that completes on the barrier is in flight (the last
  // landing known), and its loads whose landing the memory has not told yet (processor sharing).
  std::vector<Cycle> stage_until_;
  std::vector<std::uint32_t> stage_pending_;
  std::uint32_t barriers_ = 0;
  void count_loader(std::uint32_t slot, std::uint32_t sm);
  Cycle gpc_latency(std::uint32_t sm) const;
  std::vector<WarpState> warps_;  // by warp id
  std::int64_t busy_ = 0;
  MemoryHierarchy* l2_ = nullptr;
  MbarrierUnit* mbar_ = nullptr;
  ProxyFenceUnit* proxy_ = nullptr;
  HazardUnit* hazards_ = nullptr;
  std::uint16_t cause_wait_read_, cause_wait_;
};

}  // namespace smpipe::models
