#include "isa/fuse.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "isa/eval.hpp"
#include "isa/limits.hpp"

namespace smpipe::isa {

namespace {

using i128 = __int128;
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min(), kMax = std::numeric_limits<std::int64_t>::max();

bool slot16(std::uint32_t s) { return s <= std::numeric_limits<std::uint16_t>::max(); }
bool fits(i128 v) { return v >= kMin && v <= kMax; }

// A value on the stack while scanning: whether it comes from constants and built-ins only with operators
// that cannot fail (pure), the range it lies in, and where its code starts.
struct Val {
  bool pure = false;
  std::int64_t lo = kMin, hi = kMax;
  std::uint32_t start = 0;
};

// The smallest 2^k - 1 >= v (v >= 0).
std::int64_t mask_above(std::int64_t v) {
  std::uint64_t m = 0;
  while (m < static_cast<std::uint64_t>(v)) m = (m << 1) | 1;
  return static_cast<std::int64_t>(m);
}

// The range of `a op b`, if the operator cannot fail on any values of the ranges.
std::optional<std::pair<std::int64_t, std::int64_t>> binary_range(BinOp op, const Val& a, const Val& b) {
  auto range = [](i128 lo, i128 hi) -> std::optional<std::pair<std::int64_t, std::int64_t>> {
    if (!fits(lo) || !fits(hi)) return std::nullopt;  // may overflow: not hoisted
    return std::pair{static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi)};
  };
  const bool nonneg = a.lo >= 0 && b.lo >= 0;
  switch (op) {
    case BinOp::kOr: case BinOp::kAnd: case BinOp::kEq: case BinOp::kNe:
    case BinOp::kLt: case BinOp::kLe: case BinOp::kGt: case BinOp::kGe: return std::pair<std::int64_t, std::int64_t>{0, 1};
    case BinOp::kBitAnd:
      if (nonneg) return std::pair<std::int64_t, std::int64_t>{0, std::min(a.hi, b.hi)};
      return std::pair{kMin, kMax};
    case BinOp::kBitOr: case BinOp::kBitXor:
      if (nonneg) return std::pair<std::int64_t, std::int64_t>{0, mask_above(std::max(a.hi, b.hi))};
      return std::pair{kMin, kMax};
    case BinOp::kShl:
      if (a.lo >= 0 && b.lo >= 0 && b.hi <= 62 && (i128{a.hi} << b.hi) <= kMax)
        return std::pair<std::int64_t, std::int64_t>{a.lo << b.lo, a.hi << b.hi};
      return std::pair{kMin, kMax};  // never fails (a count outside 0..63 gives 0)
    case BinOp::kShr:
      if (a.lo >= 0) return std::pair<std::int64_t, std::int64_t>{0, a.hi};
      return std::pair{kMin, kMax};
    case BinOp::kAdd: return range(i128{a.lo} + b.lo, i128{a.hi} + b.hi);
    case BinOp::kSub: return range(i128{a.lo} - b.hi, i128{a.hi} - b.lo);
    case BinOp::kMul: {
      i128 p[] = {i128{a.lo} * b.lo, i128{a.lo} * b.hi, i128{a.hi} * b.lo, i128{a.hi} * b.hi};
      return range(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
    }
    case BinOp::kDiv:
      if (b.lo > 0) return range(std::min(i128{a.lo} / b.lo, i128{a.lo} / b.hi), std::max(i128{a.hi} / b.lo, i128{a.hi} / b.hi));
      return std::nullopt;
    case BinOp::kMod:
      if (b.lo > 0) return a.lo >= 0 ? std::pair<std::int64_t, std::int64_t>{0, std::min(a.hi, b.hi - 1)}
                                     : std::pair<std::int64_t, std::int64_t>{-(b.hi - 1), b.hi - 1};
      return std::nullopt;
  }
  return std::nullopt;
}

// The values each built-in can take in this program.
std::pair<std::int64_t, std::int64_t> builtin_range(Builtin b, const Program& p) {
  const std::int64_t ctas = p.grid[0] * p.grid[1] * p.grid[2];
  switch (b) {
    case Builtin::kWarp: case Builtin::kWarpInRole: return {0, p.warps - 1};
    case Builtin::kWarpgroup: return {0, (p.warps - 1) / kWarpsPerWarpgroup};
    case Builtin::kCta: return {0, ctas - 1};
    case Builtin::kCtaX: return {0, p.grid[0] - 1};
    case Builtin::kCtaY: return {0, p.grid[1] - 1};
    case Builtin::kCtaZ: return {0, p.grid[2] - 1};
    case Builtin::kClusterRank: return {0, p.cluster[0] * p.cluster[1] * p.cluster[2] - 1};
    case Builtin::kNumCtas: return {ctas, ctas};
    case Builtin::kSmCtasBefore: return {0, ctas - 1};
    case Builtin::kSm: case Builtin::kCount: break;
  }
  return {0, kMax};  // the SM index: its range depends on the machine, unknown here
}

// One instruction of the code the interpreter runs, before fusing: an instruction of `code`, or the load of a
// hoisted expression standing for code[orig, next item's orig).
struct Item {
  Instr in;
  std::uint32_t orig;
};

// Replaces pure expressions with loads of hidden slots; records their code in role.hoisted.
std::vector<Item> hoist(RoleCode& role, const Program& p, const std::vector<bool>& target) {
  const std::vector<Instr>& code = role.code;
  const std::size_t n = code.size();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;  // [start, end) hoisted
  std::vector<Val> st;
  bool ok = true;
  auto pop = [&](std::size_t k) {
    if (st.size() < k) {
      ok = false;  // unexpected stack shape: hoist nothing in this role
      st.clear();
      return std::vector<Val>{};
    }
    std::vector<Val> v(st.end() - static_cast<std::ptrdiff_t>(k), st.end());
    st.resize(st.size() - k);
    return v;
  };
  // Values consumed where the result is not pure: the worthwhile ones (two instructions or more) are hoisted.
  auto consumed = [&](const std::vector<Val>& vals, std::uint32_t end) {
    for (std::size_t i = 0; i < vals.size(); ++i) {
      std::uint32_t e = i + 1 < vals.size() ? vals[i + 1].start : end;
      if (vals[i].pure && e - vals[i].start >= 2) ranges.emplace_back(vals[i].start, e);
    }
  };
  for (std::uint32_t i = 0; i < n && ok; ++i) {
    const Instr& in = code[i];
    if (target[i])
      for (Val& v : st) v.pure = false;  // code may jump here: nothing before it is part of an expression after it
    switch (in.opc) {
      case Opc::kPush: st.push_back({true, in.imm, in.imm, i}); break;
      case Opc::kBuiltin: {
        auto [lo, hi] = builtin_range(static_cast<Builtin>(in.a), p);
        st.push_back({true, lo, hi, i});
        break;
      }
      case Opc::kLoad: st.push_back({false, kMin, kMax, i}); break;
      case Opc::kBinary: {
        auto v = pop(2);
        if (!ok) break;
        auto r = v[0].pure && v[1].pure ? binary_range(static_cast<BinOp>(in.sub), v[0], v[1]) : std::nullopt;
        if (r) {
          st.push_back({true, r->first, r->second, v[0].start});
        } else {
          consumed(v, i);
          st.push_back({false, kMin, kMax, v[0].start});
        }
        break;
      }
      case Opc::kUnary: {
        auto v = pop(1);
        if (!ok) break;
        const Val& a = v[0];
        std::optional<std::pair<std::int64_t, std::int64_t>> r;
        if (a.pure) {
          switch (static_cast<UnOp>(in.sub)) {
            case UnOp::kNot: r = std::pair<std::int64_t, std::int64_t>{0, 1}; break;
            case UnOp::kBitNot: r = std::pair<std::int64_t, std::int64_t>{~a.hi, ~a.lo}; break;
            case UnOp::kNeg: if (a.lo > kMin) r = std::pair<std::int64_t, std::int64_t>{-a.hi, -a.lo}; break;
          }
        }
        if (r) {
          st.push_back({true, r->first, r->second, a.start});
        } else {
          consumed(v, i);
          st.push_back({false, kMin, kMax, a.start});
        }
        break;
      }
      case Opc::kCall: {
        auto v = pop(in.a);
        if (!ok || v.empty()) break;
        // ceil_div and a loop step may fail: never hoisted (their error belongs at their line, in the loop).
        CallFn fn = static_cast<CallFn>(in.sub);
        bool pure = (fn == CallFn::kMin || fn == CallFn::kMax) && std::all_of(v.begin(), v.end(), [](const Val& x) { return x.pure; });
        if (pure) {
          Val r{true, v[0].lo, v[0].hi, v[0].start};
          for (const Val& x : v) {
            bool min = static_cast<CallFn>(in.sub) == CallFn::kMin;
            r.lo = min ? std::min(r.lo, x.lo) : std::max(r.lo, x.lo);
            r.hi = min ? std::min(r.hi, x.hi) : std::max(r.hi, x.hi);
          }
          st.push_back(r);
        } else {
          consumed(v, i);
          st.push_back({false, kMin, kMax, v[0].start});
        }
        break;
      }
      case Opc::kStore: case Opc::kJumpIfZero: consumed(pop(1), i); break;
      case Opc::kOp: consumed(pop(role.ops[in.a].dynamic_slots.size()), i); break;
      default:  // jumps, exit, regions: the compiler leaves the stack empty between statements
        if (!st.empty()) ok = false;  // it did not: hoist nothing in this role rather than guess
        break;
    }
  }
  if (!ok) ranges.clear();
  std::sort(ranges.begin(), ranges.end());
  // Items: each hoisted range becomes a load of its hidden slot (one slot per distinct expression).
  std::map<std::vector<std::tuple<int, int, std::uint32_t, std::int64_t>>, std::uint32_t> slot_of;
  std::vector<Item> items;
  std::size_t r = 0;
  for (std::uint32_t i = 0; i < n;) {
    if (r < ranges.size() && ranges[r].first == i) {
      auto [s, e] = ranges[r++];
      std::vector<std::tuple<int, int, std::uint32_t, std::int64_t>> key;
      for (std::uint32_t k = s; k < e; ++k) key.emplace_back(static_cast<int>(code[k].opc), code[k].sub, code[k].a, code[k].imm);
      auto [it, fresh] = slot_of.emplace(key, static_cast<std::uint32_t>(role.slot_names.size() + role.hoisted.size()));
      if (fresh) role.hoisted.emplace_back(code.begin() + s, code.begin() + e);
      Instr load = code[e - 1];
      load.opc = Opc::kLoad;
      load.a = it->second;
      load.imm = 0;
      load.sub = 0;
      items.push_back({load, s});
      i = e;
      continue;
    }
    items.push_back({code[i], i});
    ++i;
  }
  return items;
}

}  // namespace

std::int64_t evaluate_hoisted(const std::vector<Instr>& code, const std::int64_t* builtins) {
  std::vector<std::int64_t> st;
  for (const Instr& in : code) {
    EvalResult r = 0;
    switch (in.opc) {
      case Opc::kPush: st.push_back(in.imm); continue;
      case Opc::kBuiltin: st.push_back(builtins[in.a]); continue;
      case Opc::kBinary: {
        std::int64_t b = st.back();
        st.pop_back();
        r = eval_binary(static_cast<BinOp>(in.sub), st.back(), b);
        st.pop_back();
        break;
      }
      case Opc::kUnary:
        r = eval_unary(static_cast<UnOp>(in.sub), st.back());
        st.pop_back();
        break;
      case Opc::kCall:
        r = eval_call(static_cast<CallFn>(in.sub), st.data() + st.size() - in.a, in.a);
        st.resize(st.size() - in.a);
        break;
      default: throw std::logic_error("a hoisted expression holds an instruction that is not pure");
    }
    if (!r) throw std::logic_error("a hoisted expression failed (its operand ranges said it could not)");
    st.push_back(*r);
  }
  if (st.size() != 1) throw std::logic_error("a hoisted expression does not give one value");
  return st.back();
}

void fuse(RoleCode& role, const Program& program) {
  const std::size_t n = role.code.size();
  // A run may start at a jump target but not contain one after its first instruction.
  std::vector<bool> target(n + 1, false);
  for (const Instr& in : role.code)
    if ((in.opc == Opc::kJump || in.opc == Opc::kJumpIfZero) && in.a <= n) target[in.a] = true;
  role.hoisted.clear();
  std::vector<Item> items = hoist(role, program, target);
  const std::size_t m = items.size();
  auto is = [&](std::size_t i, Opc o) { return i < m && items[i].in.opc == o && !target[items[i].orig]; };

  std::vector<Instr> fast;
  std::vector<std::uint32_t> orig;
  std::vector<std::uint32_t> at(n + 1, 0);  // code index (of a run's first instruction) -> fast index
  for (std::size_t i = 0; i < m;) {
    const Instr& c0 = items[i].in;
    auto in = [&](std::size_t k) -> const Instr& { return items[i + k].in; };
    Instr f = c0;
    std::size_t len = 1;
    if (c0.opc == Opc::kLoad && is(i + 1, Opc::kLoad) && is(i + 2, Opc::kBinary) && slot16(in(1).a)) {
      // load a; load b; binary op [; jz T]
      f = in(2);
      f.a = c0.a;
      f.b = static_cast<std::uint16_t>(in(1).a);
      if (is(i + 3, Opc::kJumpIfZero)) {
        f.opc = Opc::kLoadLoadBinJz;
        f.imm = in(3).a;  // a code index, mapped below
        len = 4;
      } else {
        f.opc = Opc::kLoadLoadBin;
        len = 3;
      }
    } else if (c0.opc == Opc::kLoad && is(i + 1, Opc::kPush) && is(i + 2, Opc::kBinary)) {
      // load a; push c; binary op [; store d]
      f = in(2);
      f.a = c0.a;
      f.imm = in(1).imm;
      if (is(i + 3, Opc::kStore) && slot16(in(3).a)) {
        f.opc = Opc::kLoadBinImmStore;
        f.b = static_cast<std::uint16_t>(in(3).a);
        len = 4;
      } else {
        f.opc = Opc::kLoadBinImm;
        len = 3;
      }
    } else if (c0.opc == Opc::kPush && is(i + 1, Opc::kBinary)) {
      // push c; binary op [; store d]
      f = in(1);
      f.imm = c0.imm;
      if (is(i + 2, Opc::kStore)) {
        f.opc = Opc::kBinImmStore;
        f.a = in(2).a;
        len = 3;
      } else {
        f.opc = Opc::kBinImm;
        len = 2;
      }
    } else if (c0.opc == Opc::kLoad && is(i + 1, Opc::kBinary)) {
      f = in(1);
      f.opc = Opc::kBinLoad;
      f.a = c0.a;
      len = 2;
    } else if (c0.opc == Opc::kPush && is(i + 1, Opc::kStore)) {
      f = in(1);
      f.opc = Opc::kSet;
      f.imm = c0.imm;
      len = 2;
    }
    at[items[i].orig] = static_cast<std::uint32_t>(fast.size());
    fast.push_back(f);
    orig.push_back(items[i].orig);
    i += len;
  }
  at[n] = static_cast<std::uint32_t>(fast.size());
  orig.push_back(static_cast<std::uint32_t>(n));
  for (Instr& f : fast) {
    if (f.opc == Opc::kJump || f.opc == Opc::kJumpIfZero) f.a = at[f.a];
    if (f.opc == Opc::kLoadLoadBinJz) f.imm = at[static_cast<std::size_t>(f.imm)];
  }
  role.fast = std::move(fast);
  role.fast_orig = std::move(orig);
}

}  // namespace smpipe::isa
