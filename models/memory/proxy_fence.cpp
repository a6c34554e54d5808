#include "models/memory/proxy_fence.hpp"

#include <fmt/format.h>

#include "models/gpu/simulator.hpp"

namespace smpipe::models {

std::span<const isa::OpKind> ProxyFenceUnit::accepted() {
  static constexpr isa::OpKind kOps[] = {isa::OpKind::kFenceProxyAsync};
  return kOps;
}

void ProxyFenceUnit::cta_started(std::uint32_t slot) {
  if (slot >= dirty_.size()) dirty_.resize(slot + 1);
  dirty_[slot].assign(sim_.program().smem_layout.count, 0);
}

OpResult ProxyFenceUnit::execute(OpContext& ctx) {
  for (auto& d : dirty_[ctx.cta_slot()]) d &= ~(1u << ctx.warp.index);
  return ctx.busy(sim_.machine().op_issue_cycles);
}

void ProxyFenceUnit::generic_write(const OpContext& ctx, std::uint32_t flat) { dirty_[ctx.cta_slot()][flat] |= 1u << ctx.warp.index; }

void ProxyFenceUnit::check_async_read(const OpContext& ctx, isa::Attr a) {
  const isa::AttrSlot& s = ctx.attr(a);
  if (!s.present || s.decl < 0) return;
  std::uint32_t f = ctx.smem(a);
  std::uint32_t dirty = dirty_[ctx.cta_slot()][f];
  if (dirty == 0) return;
  int writer = __builtin_ctz(dirty);
  const auto& p = sim_.program();
  ctx.ub("missing fence.proxy.async",
         fmt::format("the async proxy reads {} which warp {} wrote with st.shared and did not fence: a race (the TMA or tensor "
                     "core may read stale data). Put fence.proxy.async in the writing warp after its stores and before the "
                     "barrier that orders them",
                     p.smem_layout.element_name(p.smems, f), writer),
         true);
}

}  // namespace smpipe::models
