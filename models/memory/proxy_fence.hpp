// The generic and async proxies of shared memory (PTX ISA 8.6, proxies; fence.proxy.async): a buffer
// written with st.shared must be fenced by its writer before the async proxy (TMA store, wgmma / umma
// operands, tcgen05.cp) reads it. Tracks, per CTA and smem element, the warps with unfenced writes. The fence
// (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S in SASS) waits until the shared memory has written the warp's st.shared, then
// takes fence_proxy_async_cycles.
#pragma once

#include <vector>

#include "models/gpu/unit.hpp"
#include "models/memory/hazards.hpp"

namespace smpipe::models {

class LsuUnit;

class ProxyFenceUnit : public Unit {
 public:
  using Unit::Unit;
  std::string_view name() const override { return "proxy_fence"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  OpResult execute(OpContext& ctx) override;
  void connect() override;
  void cta_started(std::uint32_t slot) override;

  // The executing warp wrote smem element `flat` through the generic proxy.
  void generic_write(const OpContext& ctx, std::uint32_t flat);
  // The async proxy reads the smem element attribute `a` names (if the op names one): a hazard when a
  // writer whose writes this op is ordered after has not fenced (one it is not ordered after races with it: the
  // race checker's report). `readers`: the warps of a warpgroup's op (default: the executing warp).
  void check_async_read(const OpContext& ctx, isa::Attr a, std::span<const std::uint32_t> readers = {});
  // The async proxy writes smem element `flat` of CTA slot `slot` (a TMA load's box landing there), issued by the
  // executing warp: generic writes ordered before it must be fenced too (PTX ISA, memory consistency across proxies: a
  // st.shared not fenced may land after the TMA's bytes).
  void check_async_write(const OpContext& ctx, std::uint32_t slot, std::uint32_t flat);

 private:
  // The check of both: `verb` "reads" or "writes"; `slot`/`f` the element; `readers` the warps the access is ordered
  // after (the issuing warp, or a warpgroup's).
  void check(const OpContext& ctx, std::uint32_t slot, std::uint32_t f, std::span<const std::uint32_t> readers, const char* verb);
  // Whether a fence on the path covers writer `w`'s stores of element `f` for the accessing warps.
  bool path_fenced(std::uint32_t slot, std::uint32_t f, std::uint32_t w, std::span<const std::uint32_t> readers) const;
  // Whether any of the accessing warps is ordered after warp `warp` reached `clock` (its own).
  bool seen_by(std::span<const std::uint32_t> readers, std::uint32_t warp, std::uint32_t clock) const;
  std::vector<std::vector<std::uint32_t>> dirty_;  // by CTA slot, per smem element: warps with unfenced writes
  std::vector<std::vector<int>> last_;  // by CTA slot, per smem element x 32 warps: the line of its latest st.shared
  // By CTA slot, per smem element x 32 warps: 1 + the writer's own clock (HazardUnit::own_clock) at the fence that
  // covered its latest st.shared of the element; 0 while none did. An access ordered after the write but not after
  // that fence (a fence placed after the release that hands the buffer over) fences nothing for it.
  std::vector<std::vector<std::uint32_t>> fenced_;
  std::vector<std::vector<std::uint32_t>> fenced_mask_;  // by CTA slot, per smem element: warps with fenced_ set
  // A fence by another warp on the path from a writer's stores to the access (PTX ISA, proxy causality: a proxy fence
  // anywhere on the causality path orders them): by CTA slot, per fencing warp, 1 + its own clock at its latest fence
  // (0: none), and per fencing warp x 32 warps how far it was then ordered after each warp (HazardUnit::clock_of): it
  // covers warp x's latest store of an element when that reached the store's clock (a TMA issuer that fences after its
  // acquire), for an access ordered after the fence.
  std::vector<std::vector<std::uint32_t>> fence_at_;
  std::vector<std::vector<std::uint32_t>> fence_snap_;
  // By CTA slot, per smem element x 32 warps: the writer's own clock at its latest st.shared of the element (whether a
  // fencing warp is ordered after that store: HazardUnit::sees, without a walk over the buffer's records).
  std::vector<std::vector<std::uint32_t>> write_clock_;
  std::vector<std::vector<int>> fence_line_;  // by CTA slot, per warp: the line of its latest fence.proxy.async
  HazardUnit* hazards_ = nullptr;
  LsuUnit* lsu_ = nullptr;
};

}  // namespace smpipe::models
