#include "isa/reach.hpp"

#include <vector>

#include "isa/eval.hpp"

namespace smpipe::isa {

namespace {

// The values at one instruction along one path (or, once too many paths reached it, all of them joined).
struct State {
  std::vector<MaybeValue> vars, stack;
  std::uint64_t hash = 0;
};

MaybeValue unknown() { return {}; }
MaybeValue known(std::int64_t v) { return {true, v}; }

MaybeValue of(EvalResult r) { return r ? known(*r) : unknown(); }

std::uint64_t hash_of(const State& s) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  for (const auto* v : {&s.vars, &s.stack})
    for (const MaybeValue& m : *v) mix(m.known ? static_cast<std::uint64_t>(m.value) * 2 + 1 : 0);
  mix(s.stack.size());
  return h;
}

bool same(const State& a, const State& b) {
  auto eq = [](const std::vector<MaybeValue>& x, const std::vector<MaybeValue>& y) {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i].known != y[i].known || (x[i].known && x[i].value != y[i].value)) return false;
    return true;
  };
  return a.hash == b.hash && eq(a.vars, b.vars) && eq(a.stack, b.stack);
}

// `into` joined with `from`: a value stays known only where both know it alike. True when `into` changed.
bool join(std::vector<MaybeValue>& into, const std::vector<MaybeValue>& from) {
  bool changed = false;
  for (std::size_t i = 0; i < into.size(); ++i)
    if (into[i].known && (!from[i].known || from[i].value != into[i].value)) {
      into[i] = unknown();
      changed = true;
    }
  return changed;
}

// Each jump target keeps up to this many distinct states (so a loop of known bounds is followed iteration by
// iteration, and a branch on its counter stays exact); beyond, the last one joins every further path. Past
// kMaxKeptValues values kept in all, every target's further paths join its first state.
constexpr std::size_t kPathsPerInstruction = 32;
constexpr std::size_t kMaxKeptValues = std::size_t{1} << 21;

}  // namespace

bool walk_reachable_ops(const RoleCode& role, std::uint32_t pc, std::span<const MaybeValue> vars,
                        std::span<const std::int64_t> builtins,
                        const std::function<bool(std::uint32_t op, std::span<const MaybeValue> values)>& visit,
                        std::uint64_t& budget) {
  const std::vector<Instr>& code = role.code;
  // States are kept only where paths can meet: the start and the targets of jumps; straight code runs in place.
  std::vector<char> target(code.size() + 1, 0);
  for (const Instr& in : code)
    if ((in.opc == Opc::kJump || in.opc == Opc::kJumpIfZero) && in.a < target.size()) target[in.a] = 1;
  if (pc < target.size()) target[pc] = 1;
  std::vector<std::vector<State>> at(code.size());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> work;  // (instruction, state)
  bool gave_up = false;
  std::size_t kept = 0;  // values in all the states kept
  // What a step may cost: false once the budget is spent (the walk gives up).
  auto spend = [&](std::uint64_t cost) {
    if (budget < cost) {
      budget = 0;
      return false;
    }
    budget -= cost;
    return true;
  };
  // The state `s` reaches jump target `to`: walked (again) when it adds to what reached it.
  auto flow = [&](std::uint32_t to, State s) {
    if (to >= code.size()) return;  // past the end: the warp exits
    if (!spend(s.vars.size() + s.stack.size())) {
      gave_up = true;
      return;
    }
    std::vector<State>& states = at[to];
    s.hash = hash_of(s);
    for (const State& t : states)
      if (same(t, s)) return;
    const std::size_t size = s.vars.size() + s.stack.size();
    if (states.empty() || (states.size() < kPathsPerInstruction && kept + size <= kMaxKeptValues)) {
      kept += size;
      states.push_back(std::move(s));
      work.emplace_back(to, static_cast<std::uint32_t>(states.size() - 1));
      return;
    }
    State& t = states.back();
    if (t.stack.size() != s.stack.size()) {
      gave_up = true;  // (the compiler's code never joins different stack depths)
      return;
    }
    bool changed = join(t.vars, s.vars);
    changed = join(t.stack, s.stack) || changed;
    if (changed) {
      t.hash = hash_of(t);
      work.emplace_back(to, static_cast<std::uint32_t>(states.size() - 1));
    }
  };
  {
    State start;
    start.vars.resize(role.slot_names.size());
    for (std::size_t i = 0; i < start.vars.size() && i < vars.size(); ++i) start.vars[i] = vars[i];
    flow(pc, std::move(start));
  }
  std::vector<MaybeValue> values;
  while (!work.empty() && !gave_up) {
    auto [i, which] = work.back();
    work.pop_back();
    State s = at[i][which];
    auto pop = [&]() {
      MaybeValue v = s.stack.back();
      s.stack.pop_back();
      return v;
    };
    auto underflow = [&](std::size_t n) { return s.stack.size() < n; };
    // Straight on from instruction i until a jump, an exit, the end, or the next jump target.
    for (bool go = true; go && !gave_up;) {
      if (i >= code.size()) break;  // past the end: the warp exits
      if (!spend(1)) return true;
      const Instr& in = code[i];
      switch (in.opc) {
        case Opc::kPush: s.stack.push_back(known(in.imm)); break;
        case Opc::kLoad:
          if (in.a >= s.vars.size()) return true;
          s.stack.push_back(s.vars[in.a]);
          break;
        case Opc::kStore:
          if (in.a >= s.vars.size() || underflow(1)) return true;
          s.vars[in.a] = pop();
          break;
        case Opc::kBuiltin: s.stack.push_back(in.a < builtins.size() ? known(builtins[in.a]) : unknown()); break;
        case Opc::kBinary: {
          if (underflow(2)) return true;
          MaybeValue b = pop(), a = pop();
          s.stack.push_back(a.known && b.known ? of(eval_binary(static_cast<BinOp>(in.sub), a.value, b.value)) : unknown());
          break;
        }
        case Opc::kUnary: {
          if (underflow(1)) return true;
          MaybeValue a = pop();
          s.stack.push_back(a.known ? of(eval_unary(static_cast<UnOp>(in.sub), a.value)) : unknown());
          break;
        }
        case Opc::kCall: {
          if (underflow(in.a)) return true;
          std::vector<std::int64_t> args(in.a);
          bool all = true;
          for (std::size_t k = in.a; k-- > 0;) {
            MaybeValue v = pop();
            all = all && v.known;
            args[k] = v.value;
          }
          s.stack.push_back(all ? of(eval_call(static_cast<CallFn>(in.sub), args.data(), args.size())) : unknown());
          break;
        }
        case Opc::kJump:
          flow(in.a, std::move(s));
          go = false;
          continue;
        case Opc::kJumpIfZero: {
          if (underflow(1)) return true;
          MaybeValue c = pop();
          if (!c.known || c.value == 0) flow(in.a, s);
          if (c.known && c.value == 0) {
            go = false;
            continue;
          }
          break;  // (falls through to i + 1)
        }
        case Opc::kOp: {
          if (in.a >= role.ops.size()) return true;
          const OpDesc& d = role.ops[in.a];
          if (underflow(d.dynamic_slots.size())) return true;
          values.assign(d.base_values.size(), MaybeValue{});
          for (std::size_t k = 0; k < d.base_values.size(); ++k) values[k] = known(d.base_values[k]);
          for (auto it = d.dynamic_slots.rbegin(); it != d.dynamic_slots.rend(); ++it) values[*it] = pop();
          if (visit(in.a, values)) return true;
          for (std::uint32_t r : d.result_slots)
            if (r < s.vars.size()) s.vars[r] = unknown();
          break;
        }
        case Opc::kExit:
          go = false;
          continue;
        case Opc::kRegionBegin:
        case Opc::kRegionEnd: break;
        default: return true;  // a fused form (only in RoleCode::fast)
      }
      ++i;
      if (i < code.size() && target[i]) {  // paths meet here: kept and walked from there
        flow(i, std::move(s));
        go = false;
      }
    }
  }
  return gave_up;
}

bool may_reach(const RoleCode& role, std::span<const std::int64_t> builtins,
               const std::function<bool(std::uint32_t op, std::span<const MaybeValue> values)>& match, std::uint64_t& budget) {
  const std::vector<MaybeValue> vars(role.slot_names.size());
  return walk_reachable_ops(role, 0, vars, builtins, match, budget);
}

}  // namespace smpipe::isa
