#include "models/gpu/registry.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/clc/clc_unit.hpp"
#include "models/gpu/simulator.hpp"
#include "models/memory/l2.hpp"
#include "models/memory/lsu.hpp"
#include "models/memory/proxy_fence.hpp"
#include "models/sm/issue.hpp"
#include "models/sync/cluster_barrier.hpp"
#include "models/sync/mbarrier_unit.hpp"
#include "models/sync/named_barrier.hpp"
#include "models/tensor/tensor_unit.hpp"
#include "models/tma/tma_unit.hpp"
#include "models/tmem/tmem_unit.hpp"

namespace smpipe::models {

namespace {
template <class U>
std::unique_ptr<Unit> make(Simulator& sim) {
  return std::make_unique<U>(sim);
}
std::string fits_anywhere(const isa::OpDesc&, const Machine&) { return ""; }
std::span<const isa::OpKind> no_ops() { return {}; }
}  // namespace

// The order is the order of the units' statistics and of their hooks (warp_exited, cta_started ...).
const std::vector<UnitKind>& unit_registry() {
  static const std::vector<UnitKind> r = {
      {"sm", "basic", IssueUnit::accepted, make<IssueUnit>, fits_anywhere},
      {"tensor", "basic", TensorUnit::accepted, make<TensorUnit>, TensorUnit::fits},
      {"mbarrier", "basic", MbarrierUnit::accepted, make<MbarrierUnit>, fits_anywhere},
      {"named_barrier", "basic", NamedBarrierUnit::accepted, make<NamedBarrierUnit>, fits_anywhere},
      {"cluster_barrier", "basic", ClusterBarrierUnit::accepted, make<ClusterBarrierUnit>, fits_anywhere},
      {"proxy_fence", "basic", ProxyFenceUnit::accepted, make<ProxyFenceUnit>, fits_anywhere},
      {"tma", "basic", TmaUnit::accepted, make<TmaUnit>, fits_anywhere},
      {"lsu", "basic", LsuUnit::accepted, make<LsuUnit>, fits_anywhere},
      {"l2", "single_queue", no_ops, make<SingleQueueL2>, fits_anywhere},
      {"tmem", "basic", TmemUnit::accepted, make<TmemUnit>, TmemUnit::fits},
      {"clc", "basic", ClcUnit::accepted, make<ClcUnit>, ClcUnit::fits},
  };
  return r;
}

namespace {
const UnitKind& chosen(std::string_view unit, const Machine& m) {
  auto it = m.impls.find(std::string(unit));
  const UnitKind* first = nullptr;
  std::vector<std::string> names;
  for (const UnitKind& k : unit_registry()) {
    if (k.unit != unit) continue;
    if (first == nullptr) first = &k;
    names.emplace_back(k.impl);
    if (it != m.impls.end() && it->second == k.impl) return k;
  }
  SMPIPE_CHECK(first != nullptr, fmt::format("unit '{}' is not registered", unit));
  if (it == m.impls.end()) return *first;
  throw isa::InputError(fmt::format("{}: unit '{}' has no implementation '{}' (known: {})", m.path, unit, it->second,
                                    fmt::join(names, ", ")));
}

// The sections in registry order, each once.
std::vector<std::string_view> sections() {
  std::vector<std::string_view> v;
  for (const UnitKind& k : unit_registry())
    if (std::find(v.begin(), v.end(), k.unit) == v.end()) v.push_back(k.unit);
  return v;
}
}  // namespace

std::vector<std::unique_ptr<Unit>> make_units(Simulator& sim, const Machine& machine) {
  std::vector<std::unique_ptr<Unit>> units;
  for (std::string_view s : sections()) units.push_back(chosen(s, machine).make(sim));
  return units;
}

std::string op_fits(const isa::OpDesc& d, const Machine& m) {
  for (std::string_view s : sections()) {
    const UnitKind& k = chosen(s, m);
    for (isa::OpKind kind : k.ops())
      if (kind == d.kind) return k.fits(d, m);
  }
  return "";
}

}  // namespace smpipe::models
