#include "models/memory/proxy_fence.hpp"

#include <fmt/format.h>

#include <algorithm>

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
  if (slot >= dirty_.size())
    dirty_.resize(slot + 1), last_.resize(slot + 1), fenced_.resize(slot + 1), fenced_mask_.resize(slot + 1),
        fence_line_.resize(slot + 1), fence_at_.resize(slot + 1), fence_snap_.resize(slot + 1), write_clock_.resize(slot + 1);
  const auto n = static_cast<std::size_t>(sim_.program().smem_layout.count);
  dirty_[slot].assign(n, 0);
  last_[slot].assign(n * 32, 0);
  fenced_[slot].assign(n * 32, 0);
  fenced_mask_[slot].assign(n, 0);
  fence_line_[slot].assign(32, 0);
  fence_at_[slot].assign(32, 0);
  fence_snap_[slot].assign(32 * 32, 0);
  write_clock_[slot].assign(n * 32, 0);
}

OpResult ProxyFenceUnit::execute(OpContext& ctx) {
  const std::uint32_t bit = 1u << ctx.warp.index, slot = ctx.cta_slot();
  const auto w = static_cast<std::size_t>(ctx.warp.index);
  const std::uint32_t now = hazards_->own_clock(ctx.warp_id) + 1;
  auto& dirty = dirty_[slot];
  for (std::size_t f = 0; f < dirty.size(); ++f)
    if (dirty[f] & bit) {
      dirty[f] &= ~bit;
      fenced_[slot][f * 32 + w] = now;
      fenced_mask_[slot][f] |= bit;
    }
  // How far this warp is ordered after each warp of its CTA: the stores its fence lies on the path of.
  const Cta& cta = ctx.cta();
  const int warps = std::min(sim_.program().warps, 32);
  fence_at_[slot][w] = now;
  for (int x = 0; x < warps; ++x)
    fence_snap_[slot][w * 32 + static_cast<std::size_t>(x)] = hazards_->clock_of(ctx.warp_id, cta.first_warp + static_cast<std::uint32_t>(x));
  fence_line_[slot][w] = ctx.desc.loc.line;
  return lsu_->after_stores(ctx, sim_.machine().fence_proxy_async_cycles);
}

void ProxyFenceUnit::generic_write(const OpContext& ctx, std::uint32_t flat) {
  dirty_[ctx.cta_slot()][flat] |= 1u << ctx.warp.index;
  last_[ctx.cta_slot()][flat * 32 + static_cast<std::uint32_t>(ctx.warp.index)] = ctx.desc.loc.line;
  fenced_[ctx.cta_slot()][flat * 32 + static_cast<std::uint32_t>(ctx.warp.index)] = 0;
  fenced_mask_[ctx.cta_slot()][flat] &= ~(1u << ctx.warp.index);
  write_clock_[ctx.cta_slot()][flat * 32 + static_cast<std::uint32_t>(ctx.warp.index)] = hazards_->own_clock(ctx.warp_id);
}

void ProxyFenceUnit::check_async_read(const OpContext& ctx, isa::Attr a, std::span<const std::uint32_t> readers) {
  const isa::AttrSlot& s = ctx.attr(a);
  if (!s.present || s.decl < 0) return;
  const std::uint32_t slot = ctx.cta_slot(), f = ctx.smem(a);
  if ((dirty_[slot][f] | fenced_mask_[slot][f]) == 0) [[likely]]
    return;  // no st.shared of the element since the CTA started
  const std::uint32_t self = ctx.warp_id;
  check(ctx, slot, f, readers.empty() ? std::span<const std::uint32_t>(&self, 1) : readers, "reads");
}

void ProxyFenceUnit::check_async_write(const OpContext& ctx, std::uint32_t slot, std::uint32_t flat) {
  if ((dirty_[slot][flat] | fenced_mask_[slot][flat]) == 0) [[likely]]
    return;
  const std::uint32_t self = ctx.warp_id;
  check(ctx, slot, flat, std::span<const std::uint32_t>(&self, 1), "writes");
}

void ProxyFenceUnit::check(const OpContext& ctx, std::uint32_t slot, std::uint32_t f, std::span<const std::uint32_t> readers,
                           const char* verb) {
  const Cta& cta = sim_.cta(slot);
  const auto& p = sim_.program();
  auto buf = [&] {
    return p.smem_layout.element_name(p.smems, f) + (slot == ctx.cta_slot() ? "" : fmt::format(" of CTA {}", cta.id));
  };
  // Unfenced writers, less those a fence on the path covers.
  std::uint32_t dirty = 0;
  for (std::uint32_t left = dirty_[slot][f]; left != 0; left &= left - 1) {
    const auto x = static_cast<std::uint32_t>(__builtin_ctz(left));
    if (!path_fenced(slot, f, x, readers)) dirty |= 1u << x;
  }
  if (dirty != 0) {
    // A writer whose st.shared this op is not ordered after races with it: the race checker reports that (the
    // missing order, not the fence), when the access is recorded.
    for (std::uint32_t left = dirty; left != 0; left &= left - 1)
      if (!hazards_->writes_ordered(readers, slot, f, cta.first_warp + static_cast<std::uint32_t>(__builtin_ctz(left)))) return;
    const int writer = __builtin_ctz(dirty);
    // The writer's latest st.shared of the buffer.
    const int line = last_[slot][f * 32 + static_cast<std::uint32_t>(writer)];
    const std::string where = line > 0 ? fmt::format(" (its st.shared at line {})", line) : "";
    ctx.ub("missing fence.proxy.async",
           fmt::format("the async proxy {} {} which warp {} wrote with st.shared{} and did not fence: a race (the TMA or tensor "
                       "core may {}). Put fence.proxy.async in the writing warp after its stores and before the "
                       "barrier that orders them",
                       verb, buf(), writer, where,
                       verb[0] == 'r' ? "read stale data" : "write first and the generic stores land over its bytes"),
           true);
  }
  // Fenced, but after the release that orders this access: the fence orders the stores before what the warp does after
  // it, not before the arrive (or bar.sync) that came first.
  for (std::uint32_t left = fenced_mask_[slot][f]; left != 0; left &= left - 1) {
    const int w = __builtin_ctz(left);
    const std::uint32_t at = fenced_[slot][f * 32 + static_cast<std::uint32_t>(w)];
    const std::uint32_t writer = cta.first_warp + static_cast<std::uint32_t>(w);
    if (!hazards_->writes_ordered(readers, slot, f, writer)) continue;  // a race: the race checker's report
    if (seen_by(readers, writer, at - 1)) continue;
    if (path_fenced(slot, f, static_cast<std::uint32_t>(w), readers)) continue;
    const int line = last_[slot][f * 32 + static_cast<std::uint32_t>(w)];
    ctx.ub("missing fence.proxy.async",
           fmt::format("the async proxy {} {} which warp {} wrote with st.shared (line {}) and fenced with fence.proxy.async "
                       "(line {}) only after the release that orders this access: a fence orders the warp's stores before "
                       "what it does after the fence, not before an arrive or bar.sync that came first. Put the fence "
                       "between the stores and the barrier that hands the buffer over",
                       verb, buf(), w, line, fence_line_[slot][static_cast<std::size_t>(w)]),
           true);
  }
}

bool ProxyFenceUnit::seen_by(std::span<const std::uint32_t> readers, std::uint32_t warp, std::uint32_t clock) const {
  return std::any_of(readers.begin(), readers.end(), [&](std::uint32_t r) { return hazards_->sees(r, warp, clock); });
}

bool ProxyFenceUnit::path_fenced(std::uint32_t slot, std::uint32_t f, std::uint32_t w, std::span<const std::uint32_t> readers) const {
  const Cta& cta = sim_.cta(slot);
  const std::uint32_t stored = write_clock_[slot][f * 32 + w];
  for (std::uint32_t by = 0; by < 32; ++by) {
    const std::uint32_t at = fence_at_[slot][by];
    if (at == 0 || by == w || fence_snap_[slot][by * 32 + w] < stored) continue;
    if (seen_by(readers, cta.first_warp + by, at - 1)) return true;
  }
  return false;
}

}  // namespace smpipe::models
