// The code the interpreter runs (RoleCode::fast), made from a role's stack code in two steps, neither of
// which changes what a program does:
// - Hoisting: an expression of constants and built-ins only (`warp % 4 ^ c`, `cluster_rank / 2`) has one
//   value for a warp's whole life. Where the operators cannot fail for any value the built-ins can take
//   (interval arithmetic over their ranges: no overflow, no division by zero), it is computed once when the
//   warp starts, into a hidden slot (RoleCode::hoisted), and the code loads it.
// - Fusing: short runs such as the operands and operator of `(g + k) % STAGES`, a loop's test and jump, or an
//   increment become one instruction each, with the same checked arithmetic and the same source line in an
//   error.
// fast_orig maps the result back to the instructions of `code` it stands for, so the zero-time-loop watchdog
// counts exactly what the stack code would; `--dump-program` shows `code`.
#pragma once

#include "isa/program.hpp"

namespace smpipe::isa {

void fuse(RoleCode& role, const Program& program);

// The value of a hoisted expression for a warp with these built-in values.
std::int64_t evaluate_hoisted(const std::vector<Instr>& code, const std::int64_t* builtins);

}  // namespace smpipe::isa
