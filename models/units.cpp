// The units smpipe has: every implementation of every section of a machine file, in the order of their
// statistics and hooks. The top room of models/: it alone includes every unit (docs/architecture.md).
#include "models/clc/clc_unit.hpp"
#include "models/gpu/registry.hpp"
#include "models/gpu/simulator.hpp"
#include "models/memory/atomics.hpp"
#include "models/memory/hazards.hpp"
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

const std::vector<UnitKind>& unit_registry() {
  static const std::vector<UnitKind> r = {
      {"sm", "basic", IssueUnit::accepted, make<IssueUnit>, fits_anywhere},
      {"hazards", "happens_before", no_ops, make<HazardUnit>, fits_anywhere},
      {"tensor", "basic", TensorUnit::accepted, make<TensorUnit>, TensorUnit::fits},
      {"mbarrier", "basic", MbarrierUnit::accepted, make<MbarrierUnit>, fits_anywhere},
      {"named_barrier", "basic", NamedBarrierUnit::accepted, make<NamedBarrierUnit>, fits_anywhere},
      {"cluster_barrier", "basic", ClusterBarrierUnit::accepted, make<ClusterBarrierUnit>, fits_anywhere},
      {"proxy_fence", "basic", ProxyFenceUnit::accepted, make<ProxyFenceUnit>, fits_anywhere},
      {"tma", "basic", TmaUnit::accepted, make<TmaUnit>, fits_anywhere},
      {"lsu", "basic", LsuUnit::accepted, make<LsuUnit>, fits_anywhere},
      {"l2", "single_queue", no_ops, make<SingleQueueL2>, fits_anywhere},
      {"l2", "cache_hbm", no_ops, make<CachedL2>, fits_anywhere},
      {"tmem", "basic", TmemUnit::accepted, make<TmemUnit>, TmemUnit::fits},
      {"clc", "basic", ClcUnit::accepted, make<ClcUnit>, ClcUnit::fits},
      {"atomics", "l2_serial", AtomicsUnit::accepted, make<AtomicsUnit>, fits_anywhere},
  };
  return r;
}

std::vector<UnitChoice> known_units() {
  std::vector<UnitChoice> v;
  for (const UnitKind& k : unit_registry()) v.push_back(UnitChoice{k.unit, k.impl});
  return v;
}

}  // namespace smpipe::models
