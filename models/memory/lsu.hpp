// The SM's load/store path: sm80 cp.async (groups, waits, the mbarrier arrive when a warp's copies land),
// shared-memory loads and stores (ld/st.shared, ldmatrix) and global loads and stores. One LSU per SM, which
// cp.async and global loads and stores hold in turn: by the 128-byte lines (loads, copies) or 32-byte sectors
// (stores) each warp instruction touches; global traffic also goes through the memory hierarchy (l2).
#pragma once

#include <vector>

#include "models/gpu/unit.hpp"
#include "models/memory/hazards.hpp"
#include "models/memory/transfer.hpp"

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
  void cta_started(std::uint32_t slot) override;
  void add_stats(Stats& stats, std::int64_t cycles, std::int64_t sms_used) const override;

 private:
  struct WarpState {
    std::vector<Cycle> groups;  // committed cp.async groups: completion
    Cycle open{0}, all{0};      // the open group's completion; all this warp's copies
    // The copies' writes in flight (hazard checks), per committed group and in the open one.
    HazardUnit::Groups copies;
  };
  // The cycles (a fraction too) one warp's cp.async / ld.global / st.global of `bytes` holds the SM's load/store
  // path (docs/reference.md, "The SM's load/store path").
  double occupancy(const OpContext& ctx, std::int64_t bytes) const;
  // The op enters its SM's path, served in order: when the path begins on it (its requests go out to the memory
  // hierarchy from then) and when it has taken all its instructions.
  struct Path {
    Cycle begin, taken;
  };
  Path through_path(const OpContext& ctx, double cycles);
  // The warp goes on once the path has taken the op (`taken`): busy until then if the path was free for it,
  // otherwise waiting on the path.
  OpResult hold_until(OpContext& ctx, Cycle taken, double cycles);

  std::vector<BandwidthQueue> paths_;  // per SM: its load/store path (cycles of work, a fraction carried over)
  std::vector<WarpState> warps_;  // by warp id
  double busy_ = 0;
  MemoryHierarchy* l2_ = nullptr;
  MbarrierUnit* mbar_ = nullptr;
  ProxyFenceUnit* proxy_ = nullptr;
  HazardUnit* hazards_ = nullptr;
  std::uint16_t cause_wait_, cause_ld_global_, cause_path_;
};

}  // namespace smpipe::models
