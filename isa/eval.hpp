// The semantics of the language's operators and built-in functions, written once: the compiler folds
// constant expressions with them and the interpreter evaluates run-time ones with them.
#pragma once

#include <cstdint>
#include <optional>

#include "isa/program.hpp"

namespace smpipe::isa {

// nullopt: division or modulo by zero (the caller reports it where it happened).
inline std::optional<std::int64_t> eval_binary(BinOp op, std::int64_t a, std::int64_t b) {
  switch (op) {
    case BinOp::kOr: return (a || b) ? 1 : 0;
    case BinOp::kAnd: return (a && b) ? 1 : 0;
    case BinOp::kBitOr: return a | b;
    case BinOp::kBitXor: return a ^ b;
    case BinOp::kBitAnd: return a & b;
    case BinOp::kEq: return a == b;
    case BinOp::kNe: return a != b;
    case BinOp::kLt: return a < b;
    case BinOp::kLe: return a <= b;
    case BinOp::kGt: return a > b;
    case BinOp::kGe: return a >= b;
    // Shifts by a count outside 0..63 give what shifting one bit at a time would: 0, or the sign.
    case BinOp::kShl: return (b < 0 || b > 63) ? 0 : static_cast<std::int64_t>(static_cast<std::uint64_t>(a) << b);
    case BinOp::kShr: return (b < 0 || b > 63) ? (a < 0 ? -1 : 0) : a >> b;
    case BinOp::kAdd: return a + b;
    case BinOp::kSub: return a - b;
    case BinOp::kMul: return a * b;
    case BinOp::kDiv:
      if (b == 0) return std::nullopt;
      return a / b;
    case BinOp::kMod:
      if (b == 0) return std::nullopt;
      return a % b;
  }
  return std::nullopt;
}

inline std::int64_t eval_unary(UnOp op, std::int64_t a) {
  switch (op) {
    case UnOp::kNeg: return -a;
    case UnOp::kNot: return a == 0 ? 1 : 0;
    case UnOp::kBitNot: return ~a;
  }
  return a;
}

// min / max of n >= 1 values; ceil_div(a, b) with b > 0 (nullopt otherwise: the caller reports it).
inline std::optional<std::int64_t> eval_call(CallFn fn, const std::int64_t* args, std::size_t n) {
  std::int64_t r = args[0];
  switch (fn) {
    case CallFn::kMin:
      for (std::size_t i = 1; i < n; ++i) r = args[i] < r ? args[i] : r;
      return r;
    case CallFn::kMax:
      for (std::size_t i = 1; i < n; ++i) r = args[i] > r ? args[i] : r;
      return r;
    case CallFn::kCeilDiv:
      if (args[1] <= 0) return std::nullopt;
      return (args[0] + args[1] - 1) / args[1];
  }
  return std::nullopt;
}

}  // namespace smpipe::isa
