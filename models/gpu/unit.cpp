#include "models/gpu/unit.hpp"

#include <fmt/format.h>

#include "models/gpu/simulator.hpp"

namespace smpipe::models {


std::string OpContext::fmt_missing(isa::Attr a) const {
  return fmt::format("op '{}' read attribute '{}', which it does not have", isa::op_spec(desc.kind).name, isa::attr_name(a));
}

namespace {
// The flat index of element i of an array declaration (mbarrier or smem), or "" and the error.
template <class Decl>
std::int64_t checked_index(const Decl& decl, std::int64_t i, std::string& error) {
  if (i >= 0 && i < decl.size) return i;
  error = decl.size == 0 ? fmt::format("{}[{}]: '{}' has no elements", decl.name, i, decl.name)
                         : fmt::format("{}[{}]: index out of range 0..{}", decl.name, i, decl.size - 1);
  return -1;
}
}  // namespace

std::uint32_t OpContext::barrier(isa::Attr a) const {
  const isa::AttrSlot& s = attr(a);
  const auto& decl = sim.program().mbarriers[s.decl];
  std::int64_t i = values_[s.first];
  if (i < 0 || i >= decl.size) [[unlikely]] {
    std::string error;
    checked_index(decl, i, error);
    ub("index out of range", error);
  }
  return sim.program().mbarrier_layout.base[s.decl] + static_cast<std::uint32_t>(i);
}

std::uint32_t OpContext::smem(isa::Attr a) const {
  const isa::AttrSlot& s = attr(a);
  const auto& decl = sim.program().smems[s.decl];
  std::int64_t i = values_[s.first];
  if (i < 0 || i >= decl.size) [[unlikely]] {
    std::string error;
    checked_index(decl, i, error);
    ub("index out of range", error);
  }
  return sim.program().smem_layout.base[s.decl] + static_cast<std::uint32_t>(i);
}

void OpContext::ub(const std::string& title, const std::string& message, bool hazard) const {
  sim.ub(warp_id, op, title, message, hazard);
}

OpResult Unit::execute(OpContext& ctx) {
  SMPIPE_CHECK(false, fmt::format("unit {} got op '{}', which it does not accept", name(), ctx.desc.text));
}

}  // namespace smpipe::models
