// What a warp can still do: the ops its code may reach from where it stands, with the values of its variables and
// built-ins as they are now (a deadlock report asks which warps can still write a word another warp spins on, so
// that a warp whose path to the write is closed by `if warp == 0`, a loop that has ended or an index that differs
// is not taken for a writer).
//
// The walk runs the role's stack code (RoleCode::code) with values that are known or not: the warp's built-ins and
// its variables' values at the start are known; an operator of known operands is known (isa/eval.hpp; one that
// would fail is not); an op's results are not known. A branch on a known value takes one side, on an unknown one
// both. Each jump target keeps the distinct states of up to 32 paths (a loop of known bounds is followed iteration
// by iteration); further paths join into one state, known where they agree. So every op a run of the warp can
// reach is visited (with the values it may have where they are known), and some it cannot may be too.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "isa/program.hpp"

namespace smpipe::isa {

struct MaybeValue {
  bool known = false;
  std::int64_t value = 0;
};

// Walks `role`'s code from index `pc` of RoleCode::code (with an empty expression stack: a warp between ops) with
// these variable values (RoleCode::slot_names order; known or not) and built-in values (Builtin order). For each op
// reached, visit(op index into RoleCode::ops, its values in OpDesc::base_values order); a visit that returns true ends
// the walk, and walk returns true. Returns false when no visit did. An instruction the walk cannot follow (a stack that
// does not match) ends it as a visit would, and so does running out of `budget` (each instruction walked costs the
// number of values it copies, about the variables' count, so that a report's walks stay bounded in time whatever the
// program): the caller must then assume any op is reachable. The states kept are bounded too (at most 2 M values).
bool walk_reachable_ops(const RoleCode& role, std::uint32_t pc, std::span<const MaybeValue> vars,
                        std::span<const std::int64_t> builtins,
                        const std::function<bool(std::uint32_t op, std::span<const MaybeValue> values)>& visit,
                        std::uint64_t& budget);

// Whether a warp running `role` from its start (its built-ins known, no variable known) may reach an op for which
// `match(op, values)` holds: every path a run of that warp may take is walked (a `warp ==` guard or a dead branch closes
// paths). True as well when the walk cannot tell.
bool may_reach(const RoleCode& role, std::span<const std::int64_t> builtins,
               const std::function<bool(std::uint32_t op, std::span<const MaybeValue> values)>& match, std::uint64_t& budget);

}  // namespace smpipe::isa
