// The SM's load/store path: sm80 cp.async (groups, waits, the mbarrier arrive when a warp's copies land),
// shared-memory loads and stores (ld/st.shared, ldmatrix) and global loads and stores. One LSU per SM,
// occupied by the bytes it moves; global traffic also goes through the memory hierarchy (l2).
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
  void cta_started(std::uint32_t slot) override;
  void add_stats(Stats& stats, std::int64_t cycles, std::int64_t sms_used) const override;

 private:
  struct WarpState {
    std::vector<Cycle> groups;  // committed cp.async groups: completion
    Cycle open{0}, all{0};      // the open group's completion; all this warp's copies
    // The copies' writes in flight (hazard checks), per committed group and in the open one.
    HazardUnit::Groups copies;
  };
  std::vector<Cycle> free_;       // per SM: the LSU is free from
  std::vector<WarpState> warps_;  // by warp id
  std::int64_t busy_ = 0;
  MemoryHierarchy* l2_ = nullptr;
  MbarrierUnit* mbar_ = nullptr;
  ProxyFenceUnit* proxy_ = nullptr;
  HazardUnit* hazards_ = nullptr;
  std::uint16_t cause_wait_, cause_ld_global_;
};

}  // namespace smpipe::models
