// The SM's load/store path: sm80 cp.async (groups, waits, the mbarrier arrive when a warp's copies land),
// shared-memory loads and stores (ld/st.shared, ldmatrix) and global loads and stores. One LSU per SM, which
// cp.async and global loads and stores hold in turn: by the 128-byte lines (loads, copies) or 32-byte sectors
// (stores) each warp instruction touches; global traffic also goes through the memory hierarchy (l2).
#pragma once

#include <vector>

#include "models/gpu/unit.hpp"
#include "models/memory/hazards.hpp"

namespace smpipe::models {

class MemoryHierarchy;
class MbarrierUnit;
class ProxyFenceUnit;

class LsuUnit : public Unit {
 public:
  explicit LsuUnit(Simulator& sim);
  std::string_view name() const override { return "lsu"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  void connect() override;
  OpResult execute(OpContext& ctx) override;
  void complete(std::uint32_t warp_id, std::uint64_t begin) override;
  // fence.proxy.async: the warp waits until the shared memory has written every st.shared it issued (a wait on "the
  // SM's shared memory"), then is busy `own` cycles.
  OpResult after_stores(OpContext& ctx, std::int64_t own);
  std::string describe_wait(const Warp& w) const override;
  void cta_started(std::uint32_t slot) override;
  // A warp's latest cp.async.wait (reports): its op (in the role), N, the cycle it ran, and the cycle of the warp's latest
  // cp.async.commit before it (-1: none); op ~0u: no wait yet.
  struct LastWait {
    std::uint32_t op = ~0u;
    std::int64_t n = 0;
    std::int64_t cycle = -1;
    std::int64_t committed = -1;
  };
  LastWait last_wait(std::uint32_t warp_id) const { return warp_id < warps_.size() ? warps_[warp_id].last_wait : LastWait{}; }
  // A warp's latest cp.async.arrive on barrier element `flat` of its CTA (the op, the cycle; op ~0u: none).
  struct LastArrive {
    std::uint32_t flat = ~0u;
    std::uint32_t op = ~0u;
    std::int64_t cycle = -1;
  };
  LastArrive last_arrive(std::uint32_t warp_id, std::uint32_t flat) const;
  // A warp's latest st.global: the op (~0u: none) and the cycle it issued.
  std::pair<std::uint32_t, std::int64_t> last_global_store(std::uint32_t warp_id) const {
    if (warp_id >= warps_.size()) return {~0u, -1};
    return {warps_[warp_id].global_store_op, warps_[warp_id].global_store_at};
  }
  void add_stats(Stats& stats, std::int64_t cycles, std::int64_t sms_used) const override;

 private:
  struct WarpState {
    std::vector<Cycle> groups;  // committed cp.async groups: completion
    Cycle open{0}, all{0};      // the open group's completion; all this warp's copies
    // The copies' writes in flight (hazard checks), per committed group and in the open one.
    HazardUnit::Groups copies;
    // Its st.shared: when its own store rate lets the next one begin, and when the last one is written.
    Cycle smem_free{0}, smem_written{0};
    LastWait last_wait;
    std::int64_t last_commit = -1;
    std::vector<LastArrive> arrives;  // its latest cp.async.arrive per barrier element
    std::uint32_t global_store_op = ~0u;  // its latest st.global (the op; ~0u: none) and when it issued
    std::int64_t global_store_at = -1;
  };
  // The cycles (a fraction too) one warp's cp.async / ld.global / st.global of `bytes` holds the SM's load/store
  // path (docs/reference.md, "The SM's load/store path").
  double occupancy(const OpContext& ctx, std::int64_t bytes) const;
  // The op enters its SM's path, served in order: when the path begins on it (its requests go out to the memory
  // hierarchy from then), when it has taken all its instructions, and whether it began at once (the path was free).
  struct Path {
    Cycle begin, taken;
    bool at_once = false;
  };
  Path through_path(const OpContext& ctx, double cycles);
  // The warp goes on once the path has taken the op: busy until then if the path began on it at once, otherwise
  // waiting on the path until it began and busy from then (complete()). `port`: the SM's shared memory instead.
  OpResult hold_until(OpContext& ctx, const Path& path, bool port = false);
  // What a warp blocked on this unit waits for (its wait_obj).
  enum WaitObj : std::uint32_t { kWaitPath = 0, kWaitPort = 1, kWaitWritten = 2 };
  // The warp waits on `obj` (for `cause`) until `begin`, then is busy until `end` (complete()).
  OpResult wait_then_busy(OpContext& ctx, WaitObj obj, std::uint16_t cause, Cycle begin, Cycle end);
  // A shared-memory access of `bytes` (ld.shared, st.shared, ldmatrix) enters its SM's shared memory port, served in
  // order at smem_bytes_per_cycle: the SM's warps share it.
  Path through_port(const OpContext& ctx, std::int64_t bytes);
  // A st.shared of `bytes`: its instructions (kStoreInstrBytes each, the last one short; at most 4 x
  // smem_store_queue_ops, larger ones beyond that) enter the store queue of the
  // warp's sub-partition, each when the one smem_store_queue_ops places earlier has been taken by the shared memory; the
  // warp goes on once its last has entered. Each takes its bytes of the port in the order they come and is taken from
  // the queue when the warp's own store rate (smem_warp_store_bytes_per_cycle) lets it; written when both are through.
  OpResult store_shared(OpContext& ctx, std::int64_t bytes);
  static constexpr std::int64_t kStoreInstrBytes = 512;  // a warp's stmatrix.x4 or st.shared.v4 (16 bytes per thread)


  static constexpr std::int64_t kTicks = 4096;  // a path's time is kept in 1/kTicks cycles
  std::vector<std::int64_t> paths_;  // per SM: when its load/store path is through what it was given (ticks)
  std::vector<Cycle> ports_;         // per SM: when its shared memory port is through what it was given
  // Per SM sub-partition (SM x 4 + warp index mod 4): when the port took each of its last smem_store_queue_ops store
  // instructions (a ring; `queue_next_`: the oldest), in the order they entered.
  std::vector<Cycle> store_queue_;
  std::vector<std::uint32_t> queue_next_;
  std::size_t queue_ops_ = 1;
  std::vector<WarpState> warps_;  // by warp id
  double busy_ = 0;
  MemoryHierarchy* l2_ = nullptr;
  MbarrierUnit* mbar_ = nullptr;
  ProxyFenceUnit* proxy_ = nullptr;
  HazardUnit* hazards_ = nullptr;
  std::uint16_t cause_wait_, cause_ld_global_, cause_path_, cause_port_;
};

}  // namespace smpipe::models
