#include "models/gpu/registry.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/gpu/simulator.hpp"

namespace smpipe::models {

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
