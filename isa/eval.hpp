// The semantics of the language's operators and built-in functions, written once: the compiler folds
// constant expressions with them and the interpreter evaluates run-time ones with them.
#pragma once

#include <cstdint>

#include "isa/program.hpp"

namespace smpipe::isa {

// Why an operation has no value: the caller reports it where it happened (the compiler as an input
// error, the interpreter as undefined behaviour at the op's line).
enum class EvalError : std::uint8_t { kNone, kDivByZero, kOverflow, kCeilDiv, kLoopStep };

inline const char* eval_error_text(EvalError e) {
  switch (e) {
    case EvalError::kNone: break;
    case EvalError::kDivByZero: return "division by zero";
    case EvalError::kOverflow: return "integer overflow (the result is outside the signed 64-bit range)";
    case EvalError::kCeilDiv: return "ceil_div by a value that is not positive";
    case EvalError::kLoopStep: return "the loop step must be positive";
  }
  return "";
}

// A value, or why there is none. Arithmetic is checked: a result outside the signed 64-bit range is an
// error, never a wrapped value.
struct EvalResult {
  std::int64_t value = 0;
  EvalError error = EvalError::kNone;
  EvalResult(std::int64_t v) : value(v) {}  // NOLINT: a value converts implicitly
  EvalResult(EvalError e) : error(e) {}     // NOLINT
  explicit operator bool() const { return error == EvalError::kNone; }
  std::int64_t operator*() const { return value; }
};

inline EvalResult eval_binary(BinOp op, std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
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
    case BinOp::kAdd:
      if (__builtin_add_overflow(a, b, &r)) return EvalError::kOverflow;
      return r;
    case BinOp::kSub:
      if (__builtin_sub_overflow(a, b, &r)) return EvalError::kOverflow;
      return r;
    case BinOp::kMul:
      if (__builtin_mul_overflow(a, b, &r)) return EvalError::kOverflow;
      return r;
    case BinOp::kDiv:
      if (b == 0) return EvalError::kDivByZero;
      if (a == INT64_MIN && b == -1) return EvalError::kOverflow;
      return a / b;
    case BinOp::kMod:
      if (b == 0) return EvalError::kDivByZero;
      if (b == -1) return 0;  // INT64_MIN % -1 traps on x86; the remainder is 0 for every a
      return a % b;
  }
  return EvalError::kOverflow;
}

inline EvalResult eval_unary(UnOp op, std::int64_t a) {
  switch (op) {
    case UnOp::kNeg:
      if (a == INT64_MIN) return EvalError::kOverflow;
      return -a;
    case UnOp::kNot: return a == 0 ? 1 : 0;
    case UnOp::kBitNot: return ~a;
  }
  return a;
}

// min / max of n >= 1 values; ceil_div(a, b) with b > 0 (rounds towards +infinity, for negative a too); a loop
// step s > 0 (kLoopStep: s itself).
inline EvalResult eval_call(CallFn fn, const std::int64_t* args, std::size_t n) {
  std::int64_t r = args[0];
  switch (fn) {
    case CallFn::kMin:
      for (std::size_t i = 1; i < n; ++i) r = args[i] < r ? args[i] : r;
      return r;
    case CallFn::kMax:
      for (std::size_t i = 1; i < n; ++i) r = args[i] > r ? args[i] : r;
      return r;
    case CallFn::kCeilDiv:
      if (args[1] <= 0) return EvalError::kCeilDiv;
      return args[0] / args[1] + (args[0] % args[1] > 0 ? 1 : 0);
    case CallFn::kLoopStep:
      if (args[0] <= 0) return EvalError::kLoopStep;
      return args[0];
  }
  return EvalError::kOverflow;
}

}  // namespace smpipe::isa
