#include "models/memory/proxy_fence.hpp"

#include <fmt/format.h>

#include "models/gpu/simulator.hpp"
#include "models/memory/lsu.hpp"

namespace smpipe::models {

std::span<const isa::OpKind> ProxyFenceUnit::accepted() {
  static constexpr isa::OpKind kOps[] = {isa::OpKind::kFenceProxyAsync};
  return kOps;
}

void ProxyFenceUnit::connect() {
  hazards_ = &sim_.find<HazardUnit>();
  lsu_ = &sim_.find<LsuUnit>();
}

void ProxyFenceUnit::cta_started(std::uint32_t slot) {
  if (slot >= dirty_.size()) dirty_.resize(slot + 1), last_.resize(slot + 1);
  dirty_[slot].assign(sim_.program().smem_layout.count, 0);
  last_[slot].assign(static_cast<std::size_t>(sim_.program().smem_layout.count) * 32, 0);
}

OpResult ProxyFenceUnit::execute(OpContext& ctx) {
  for (auto& d : dirty_[ctx.cta_slot()]) d &= ~(1u << ctx.warp.index);
  return lsu_->after_stores(ctx, sim_.machine().fence_proxy_async_cycles);
}

void ProxyFenceUnit::generic_write(const OpContext& ctx, std::uint32_t flat) {
  dirty_[ctx.cta_slot()][flat] |= 1u << ctx.warp.index;
  last_[ctx.cta_slot()][flat * 32 + static_cast<std::uint32_t>(ctx.warp.index)] = ctx.desc.loc.line;
}

void ProxyFenceUnit::check_async_read(const OpContext& ctx, isa::Attr a, std::span<const std::uint32_t> readers) {
  const isa::AttrSlot& s = ctx.attr(a);
  if (!s.present || s.decl < 0) return;
  std::uint32_t f = ctx.smem(a);
  std::uint32_t dirty = dirty_[ctx.cta_slot()][f];
  if (dirty == 0) return;
  int writer = __builtin_ctz(dirty);
  // A writer whose st.shared this op is not ordered after races with it: the race checker reports that (the
  // missing order, not the fence), when the read is recorded.
  const Cta& cta = ctx.cta();
  for (std::uint32_t left = dirty; left != 0; left &= left - 1) {
    const auto w = static_cast<std::uint32_t>(__builtin_ctz(left));
    const std::uint32_t self = ctx.warp_id;
    if (!hazards_->writes_ordered(readers.empty() ? std::span<const std::uint32_t>(&self, 1) : readers, ctx.cta_slot(), f,
                                  cta.first_warp + w))
      return;
  }
  const auto& p = sim_.program();
  // The writer's latest st.shared of the buffer.
  const int line = last_[ctx.cta_slot()][f * 32 + static_cast<std::uint32_t>(writer)];
  const std::string where = line > 0 ? fmt::format(" (its st.shared at line {})", line) : "";
  ctx.ub("missing fence.proxy.async",
         fmt::format("the async proxy reads {} which warp {} wrote with st.shared{} and did not fence: a race (the TMA or tensor "
                     "core may read stale data). Put fence.proxy.async in the writing warp after its stores and before the "
                     "barrier that orders them",
                     p.smem_layout.element_name(p.smems, f), writer, where),
         true);
}

}  // namespace smpipe::models
