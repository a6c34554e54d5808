// Tensor memory (sm_100, PTX ISA 9.7.16.7): the per-SM column allocator (tcgen05.alloc / dealloc /
// relinquish_alloc_permit; requests wait in FIFO order until enough aligned columns are free), and the
// asynchronous moves in and out of it (tcgen05.ld / st and their wait, tcgen05.cp from smem).
#pragma once

#include <vector>

#include "models/gpu/unit.hpp"

namespace smpipe::models {

class ProxyFenceUnit;
class HazardUnit;
class TensorUnit;

class TmemUnit : public Unit {
 public:
  explicit TmemUnit(Simulator& sim);
  std::string_view name() const override { return "tmem"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  void connect() override;
  OpResult execute(OpContext& ctx) override;
  void cta_started(std::uint32_t slot) override;
  void cta_exiting(std::uint32_t slot) override;
  std::string describe_wait(const Warp& w) const override;
  void explain_wait(const Warp& w, WaitExplanation& e) const override;

  static std::string fits(const isa::OpDesc& d, const Machine& m);

 private:
  struct Allocation {
    std::int64_t col = 0, cols = 0;
    isa::SourceLoc loc;
  };
  struct CtaState {
    std::vector<Allocation> allocs;
    bool relinquished = false;
    std::uint32_t relinquish_warp = ~0u, relinquish_op = 0;  // the relinquish (warp id, op) and its cycle (reports)
    std::int64_t relinquish_cycle = 0;
    // Every tmem.alloc so far: its warp, op and the warp's own clock then (a relinquish must be ordered after each).
    struct AllocPoint {
      std::uint32_t warp, op, clock;
    };
    std::vector<AllocPoint> alloc_points;
  };
  // A relinquish by warp `warp_id` (and its cta_group::2 peer `peer`) must be ordered after every earlier alloc of the
  // CTA by another warp: else, on another schedule, that alloc would come after it (undefined behaviour).
  void check_relinquish(OpContext& ctx, std::uint32_t slot, std::uint32_t peer = ~0u) const;
  std::string holder_words(std::uint32_t slot) const;
  void relinquish(std::uint32_t slot, std::uint32_t warp_id, std::uint32_t op);
  std::string after_relinquish(std::uint32_t slot, const OpContext& ctx) const;
  struct SmState {
    std::uint16_t used = 0;                 // bitmap of 32-column chunks
    std::vector<std::uint32_t> waiters;     // warp ids, FIFO
  };
  // cta_group::2 (PTX ISA 9.7.16.5): alloc, dealloc and relinquish are performed by one warp in each CTA
  // of the pair together; the first to come waits for the other. A pair's allocation takes the same
  // columns in both CTAs' tensor memory.
  struct Rendezvous {
    std::uint32_t warp = ~0u;  // the warp waiting for its peer (~0u: none)
    isa::OpKind kind = isa::OpKind::kTmemAlloc;
    std::int64_t addr = 0, cols = 0;  // its operands (dealloc: both warps must free the same columns)
  };
  struct PairRequest {
    std::uint32_t warps[2];
    std::int64_t cols;
  };
  struct WarpState {
    Cycle ld_done{0}, st_done{0};
    std::vector<std::uint64_t> ld_parts, st_parts;  // loads / stores in flight until tmem.wait (hazards)
  };
  void try_grant(int sm);
  void try_grant_pairs();
  // The pair's rendezvous record.
  Rendezvous& rendezvous(std::uint32_t slot, std::uint32_t peer);
  OpResult pair_op(OpContext& ctx);
  // Frees columns of CTA slot `slot`; `peer_warp`: the other warp of a cta_group::2 dealloc (what either warp is
  // ordered after, the dealloc is).
  void dealloc(OpContext& ctx, std::uint32_t slot, std::int64_t addr, std::int64_t cols, std::uint32_t peer_warp = ~0u);
  // Undefined behaviour at ctx's op unless columns [col, col + n) of CTA slot `slot` are all allocated by it now.
  void check_allocated(const OpContext& ctx, std::uint32_t slot, std::int64_t col, std::int64_t n) const;
  static constexpr std::uint32_t kPeerWait = 0x80000000u;  // wait_obj flag: waiting for the peer CTA's warp
  static constexpr std::uint32_t kPairWait = 0x40000000u;  // wait_obj flag: a pair allocation waits for columns

  std::vector<SmState> sms_;
  std::vector<CtaState> ctas_;    // by CTA slot
  std::vector<WarpState> warps_;  // by warp id
  std::vector<Rendezvous> rendezvous_;        // by the pair's even-rank CTA slot
  std::vector<PairRequest> pair_waiters_;     // pair allocations waiting for columns, FIFO
  std::uint32_t requester_ = ~0u;  // the warp executing tcgen05.alloc right now (see try_grant)
  ProxyFenceUnit* proxy_ = nullptr;
  HazardUnit* hazards_ = nullptr;
  TensorUnit* tensor_ = nullptr;
  std::uint16_t cause_alloc_, cause_wait_, cause_peer_;
};

}  // namespace smpipe::models
