// Named barriers (bar.sync / bar.arrive, PTX ISA 9.7.13.1): 16 per CTA, each gathering a thread count
// per use; the last arrival releases the waiters after a latency that grows with the warps gathered.
#pragma once

#include <vector>

#include "models/gpu/unit.hpp"

namespace smpipe::models {

class HazardUnit;

class NamedBarrierUnit : public Unit {
 public:
  explicit NamedBarrierUnit(Simulator& sim);
  std::string_view name() const override { return "named_barrier"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  void connect() override;
  OpResult execute(OpContext& ctx) override;
  void cta_started(std::uint32_t slot) override;
  void warp_exited(std::uint32_t warp_id) override;
  void cta_exiting(std::uint32_t slot) override;
  void add_notes(std::vector<std::string>& notes) const override;
  void add_warnings(std::vector<std::string>& warnings) const override;
  std::string describe_wait(const Warp& w) const override;
  void explain_wait(const Warp& w, WaitExplanation& e) const override;
  // Reports: the warps (indices) whose arrivals completed the latest use of bar `id` in CTA slot `cta`, and its thread
  // count; whether role `role`'s code uses bar `id` (an id computed at run time counts).
  const std::vector<int>& last_use(std::uint32_t cta, int id) const { return ctas_[cta].bar[id].last_arrivers; }
  std::int64_t last_use_threads(std::uint32_t cta, int id) const { return ctas_[cta].bar[id].last_expected; }
  bool role_uses(int role, int id) const;
  const isa::OpDesc* role_use(int role, int id) const;
  // Whether warp `warp_id`'s code reaches a bar.sync or bar.arrive on barrier `id` on some path (isa::may_reach: an id
  // chosen by the warp's built-ins, or behind `if warp ==`, counts for the warps that take it only).
  bool warp_uses(std::uint32_t warp_id, int id) const;
  // A warp's latest named-barrier op: its id, whether it waited (bar.sync) or only arrived (bar.arrive), and the op (for
  // reports: a bar.arrive orders nothing after the other warps' arrivals); id -1 when it used none.
  struct LastUse {
    int id = -1;
    bool wait = false;
    std::uint32_t op = 0;
  };
  LastUse last_use_of(std::uint32_t warp_id) const { return warp_id < last_.size() ? last_[warp_id] : LastUse{}; }

 private:
  struct Barrier {
    std::int64_t expected = -1;  // threads of the current use (-1: not in use)
    std::int64_t arrived = 0;
    std::uint32_t first_op = 0;  // op that opened the use (for reports)
    int first_warp = -1;
    bool all = false;  // a barrier for all threads of the CTA (no thread count): exits release it
    std::vector<std::uint32_t> waiters;  // warp ids
    std::vector<int> arrivers;           // warp indices in the CTA
    std::vector<int> last_arrivers;      // the warps that completed the previous use (deadlock reports)
    std::int64_t last_expected = -1;     // and its thread count
    std::uint32_t last_op = 0;           // and the op and warp index that opened it
    int last_warp = -1;
    std::int64_t uses_done = 0;
  };
  std::vector<std::string> notes_;
  // Named barriers shared by two groups of warps with one count (warnings; once per id, over the run).
  std::vector<std::string> shared_;
  std::uint32_t shared_warned_ = 0;
  std::int64_t unfinished_ = 0;  // uses left unfinished at a CTA's exit (beyond the notes kept)
  struct CtaState {
    Barrier bar[isa::kNamedBarriers];
  };
  void arrive(OpContext& ctx, int id, std::int64_t threads, bool wait);
  void check_release(std::uint32_t cta, int id);
  void release(std::uint32_t cta, int id);

  std::vector<CtaState> ctas_;  // by CTA slot
  std::vector<LastUse> last_;   // by warp id (last_use_of)
  std::uint16_t causes_[isa::kNamedBarriers];
  HazardUnit* hazards_ = nullptr;
  mutable std::uint64_t walk_budget_ = std::uint64_t{1} << 26;  // warp_uses's walks, over the whole run
};

}  // namespace smpipe::models
