// Fuses short runs of a role's stack code into single instructions for the interpreter (RoleCode::fast):
// the loads, constants and operator of `(g + k) % STAGES`, a loop's test and jump, an increment. Each
// fused instruction does exactly what its run does (the same checked arithmetic, the same source line
// for an error), so a program runs the same; the dump still shows the unfused code.
#pragma once

#include "isa/program.hpp"

namespace smpipe::isa {

void fuse(RoleCode& role);

}  // namespace smpipe::isa
