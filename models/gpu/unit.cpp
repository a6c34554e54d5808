#include "models/gpu/unit.hpp"

#include <fmt/format.h>

#include "models/gpu/simulator.hpp"

namespace smpipe::models {


std::string OpContext::fmt_missing(isa::Attr a) const {
  return fmt::format("op '{}' read attribute '{}', which it does not have", isa::op_spec(desc.kind).name, isa::attr_name(a));
}

namespace {
// Why index i is not an element of an array declaration (mbarrier or smem).
template <class Decl>
std::string index_error(const Decl& decl, std::int64_t i) {
  return decl.size == 0 ? fmt::format("{}[{}]: '{}' has no elements", decl.name, i, decl.name)
                        : fmt::format("{}[{}]: index out of range 0..{}", decl.name, i, decl.size - 1);
}
}  // namespace

template <class Decl>
std::uint32_t OpContext::element(isa::Attr a, const std::vector<Decl>& decls, const isa::ElementLayout& layout) const {
  const isa::AttrSlot& s = attr(a);
  const Decl& decl = decls[s.decl];
  std::int64_t i = values_[s.first];
  if (i < 0 || i >= decl.size) [[unlikely]]
    ub("index out of range", index_error(decl, i));
  return layout.base[s.decl] + static_cast<std::uint32_t>(i);
}

std::uint32_t OpContext::barrier(isa::Attr a) const {
  return element(a, sim.program().mbarriers, sim.program().mbarrier_layout);
}

std::uint32_t OpContext::smem(isa::Attr a) const { return element(a, sim.program().smems, sim.program().smem_layout); }

std::int64_t OpContext::bytes(isa::Attr buffer) const {
  if (desc.bytes >= 0) return desc.bytes;
  const std::int64_t b = value(isa::Attr::kBytes);
  const isa::AttrSlot& slot = attr(buffer);
  if (!slot.present || slot.decl < 0) return b;
  const isa::SmemDecl& m = sim.program().smems[static_cast<std::size_t>(slot.decl)];
  if (b > m.bytes)
    ub("access past its buffer",
       fmt::format("'{}' {} {} bytes {} '{}', whose elements are {} bytes: the {} bytes past the element are shared memory "
                   "declared for other data",
                   desc.text, buffer == isa::Attr::kDst ? "writes" : "reads", b, buffer == isa::Attr::kDst ? "into" : "from",
                   m.name, m.bytes, b - m.bytes));
  return b;
}

std::uint32_t OpContext::global(isa::Attr a) const { return element(a, sim.program().globals, sim.program().global_layout); }

std::uint32_t OpContext::pair_peer() const {
  const Cta& c = cta();
  const Cluster& cl = sim.cluster_of(c);
  auto peer = static_cast<std::size_t>(c.rank ^ 1);
  if (peer >= cl.ctas.size())
    ub("cta_group::2 without a peer CTA",
       fmt::format("'{}' with cta_group=2 needs the CTA pair (cluster ranks 2k and 2k+1), but cluster rank {} has no peer in a "
                   "cluster of {} CTA(s)",
                   desc.text, c.rank, cl.ctas.size()));
  return cl.ctas[peer];
}

std::int64_t OpContext::wait_count() const {
  std::int64_t n = value(isa::Attr::kN);
  if (n < 0 || n > 63) ub("bad wait count", fmt::format("'{}': n={} is out of range 0..63", desc.text, n));
  return n;
}

void OpContext::ub(const std::string& title, const std::string& message, bool hazard) const {
  sim.ub(warp_id, op, title, message, hazard);
}

OpResult Unit::execute(OpContext& ctx) {
  SMPIPE_CHECK(false, fmt::format("unit {} got op '{}', which it does not accept", name(), ctx.desc.text));
}

}  // namespace smpipe::models
