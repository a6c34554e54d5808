// The unit registry: every unit the simulator can build, by the name of its section in the machine file
// and the name of its implementation. A Simulator builds one unit per section, the implementation the
// machine file names (or the first one registered), and routes each op kind to the unit that accepts it.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isa/program.hpp"
#include "models/machine.hpp"

namespace smpipe::models {

class Simulator;
class Unit;

struct UnitKind {
  std::string_view unit;  // machine-file section
  std::string_view impl;  // implementation name
  std::span<const isa::OpKind> (*ops)();  // the ops it accepts
  std::unique_ptr<Unit> (*make)(Simulator&);
  // "" if the machine can run op `d`; otherwise why not (only for the ops the unit accepts).
  std::string (*fits)(const isa::OpDesc& d, const Machine& m);
};

// Every unit, defined in models/units.cpp (the one file that knows them all); the order is the order of
// their statistics and hooks (warp_exited, cta_started ...).
const std::vector<UnitKind>& unit_registry();

// One unit per section, as the machine chooses. Throws isa::InputError for an implementation that does
// not exist.
std::vector<std::unique_ptr<Unit>> make_units(Simulator& sim, const Machine& machine);

// Why the machine cannot run op `d` ("" if it can).
std::string op_fits(const isa::OpDesc& d, const Machine& m);

}  // namespace smpipe::models
