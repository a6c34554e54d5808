// The warp interpreter: runs a warp's bytecode until an op takes time or blocks. Expressions use the
// operator semantics of isa/eval.hpp; each op goes to the unit that accepts it (models/gpu/unit.hpp).
#include <fmt/format.h>

#include <array>

#include "isa/eval.hpp"
#include "models/gpu/simulator.hpp"

namespace smpipe::models {

// A value known only at run time is checked against the range the compiler checks a constant against.
void Simulator::check_ranges(const OpContext& ctx, const std::int64_t* values) const {
  for (const auto& r : ctx.desc.ranged_slots) {
    if (isa::in_range(values[r.pos], r.range)) [[likely]]
      continue;
    const isa::AttrSpec& a = isa::op_spec(ctx.desc.kind).attrs[r.index];
    ctx.ub(a.attr == isa::Attr::kN ? "bad wait count" : "value out of range", isa::range_error(a.name, values[r.pos], r.range));
  }
}

// An operator without a value (division by zero, overflow): undefined behaviour at its line.
void Simulator::binary_error(const Warp& w, const isa::Instr& in, isa::EvalError error, std::int64_t a, std::int64_t b) const {
  const bool div = error == isa::EvalError::kDivByZero;
  operator_error(w, in, div ? "division by zero" : "integer overflow",
                 div ? fmt::format("{} divides by zero at line {}", warp_label(w), in.line)
                     : fmt::format("{}: {} at line {} (operands {} and {})", warp_label(w), isa::eval_error_text(error), in.line, a, b));
}

// The source line of an expression's error, trimmed: what reports show as its op (`let y = x / n`).
std::string Simulator::statement_text(const isa::SourceLoc& loc) {
  if (loc.file == nullptr || loc.line <= 0)
    return {};
  const std::string line = loc.file->line_text(loc.line);
  const auto first = line.find_first_not_of(" \t");
  if (first == std::string::npos)
    return {};
  auto last = line.find_last_not_of(" \t\r");
  const auto hash = line.find('#', first);
  if (hash != std::string::npos)
    last = hash == first ? first : line.find_last_not_of(" \t", hash - 1);
  return line.substr(first, last - first + 1);
}

// Undefined behaviour of warp `w` at the instruction `in` of its code.
void Simulator::operator_error(const Warp& w, const isa::Instr& in, std::string title, std::string message) const {
  Diagnosis d;
  d.title = std::move(title);
  d.message = std::move(message);
  d.cycle = now().v;
  d.cta = ctas_[w.cta].id;
  d.warp = w.index;
  d.role = program_.roles[w.role].name;
  d.loc = program_.loc_of(in);
  d.op_text = statement_text(d.loc);
  throw UndefinedBehaviour{d};
}

// ---- the interpreter's rare paths, kept out of its loop ----

void Simulator::zero_time_loop(const Warp& w, std::uint64_t executed, const isa::Instr& in) const {
  throw WatchdogStop{fmt::format("{} executed {} instructions at cycle {} without any op taking time (the most a warp "
                                 "may run between two ops): an endless loop, or a loop of only arithmetic too long to "
                                 "simulate, around {}:{}",
                                 warp_label(w), executed, now().v, program_.file(in.file)->name, in.line),
                     false};
}

void Simulator::ops_exhausted() const {
  throw WatchdogStop{fmt::format("--max-ops {} reached: the warps executed that many ops by cycle {} (a program that "
                                 "loops forever, or a run larger than the default work budget: raise --max-ops)",
                                 options_.max_ops, now().v)};
}

void Simulator::unary_error(const Warp& w, const isa::Instr& in, isa::EvalError error, std::int64_t a) const {
  operator_error(w, in, "integer overflow",
                 fmt::format("{}: {} at line {} (negating {})", warp_label(w), isa::eval_error_text(error), in.line, a));
}

void Simulator::call_error(const Warp& w, const isa::Instr& in, const std::int64_t* args) const {
  if (static_cast<isa::CallFn>(in.sub) == isa::CallFn::kLoopStep)
    operator_error(w, in, "loop step not positive",
                   fmt::format("{}: the step of the for loop at line {} is {}: {} (a step computed at run time is checked "
                               "when the loop starts)",
                               warp_label(w), in.line, args[0], isa::eval_error_text(isa::EvalError::kLoopStep)));
  // ceil_div: reported without the warp's CTA and warp, as before (the message names them).
  Diagnosis d;
  d.title = "ceil_div by a value that is not positive";
  d.message = fmt::format("{}: ceil_div({}, {}) at line {}", warp_label(w), args[0], args[1], in.line);
  d.cycle = now().v;
  d.loc = program_.loc_of(in);
  d.op_text = statement_text(d.loc);
  throw UndefinedBehaviour{d};
}

void Simulator::observe_op_started(const Warp& w, std::uint32_t op) {
  std::int64_t cta = ctas_[w.cta].id;
  observers_.each(cta, [&](Observer& o) { o.op_started(cta, w.index, w.role, op, now().v); });
}

void Simulator::observe_op_busy(const Warp& w, const isa::OpDesc& d, std::int64_t from, std::int64_t cycles) {
  std::int64_t cta = ctas_[w.cta].id;
  observers_.each(cta, [&](Observer& o) { o.op_busy(cta, w.index, d, from, cycles); });
}

// (The dispatch takes label addresses, a GCC and Clang extension that -Wpedantic names.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
void Simulator::step(std::uint32_t id) {
  Warp& w = warps_[id];
  if (w.state != WarpState::kReady) return;
  const isa::RoleCode& rc = program_.roles[w.role];
  const isa::Instr* code = code_[static_cast<std::size_t>(w.role)].data();
  const std::uint32_t* orig = rc.fast_orig.data();
  std::int64_t* slots = w.slots.data();
  std::int64_t* st = slots + w.stack_at;
  int sp = 0;
  // The pc lives in a register while the warp runs; w.pc is written back before anything that may look at it (an
  // op, an exit, a diagnosis).
  std::uint32_t pc = w.pc;
  // The watchdog on loops that take no time counts the instructions run, a straight run at a time (each
  // jump adds the run that ended at it) and checks them on backward jumps, the only way to loop. It counts
  // the unfused instructions (RoleCode::code), so fusing changes no count.
  std::uint64_t executed = 0;
  std::uint32_t run_start = pc;
  auto jump_to = [&](std::uint32_t to, const isa::Instr& in) __attribute__((always_inline)) {
    executed += orig[pc] - orig[run_start];
    bool backward = to < pc;
    pc = to;
    run_start = to;
    if (backward && executed > static_cast<std::uint64_t>(options_.max_instructions_without_time)) [[unlikely]] {
      w.pc = pc;
      zero_time_loop(w, executed, in);
    }
  };
  // An operator of the program: the checked arithmetic of isa/eval.hpp, its error reported at the line.
  auto binary = [&](const isa::Instr& in, std::int64_t a, std::int64_t b) __attribute__((always_inline)) {
    isa::EvalResult r = isa::eval_binary(static_cast<isa::BinOp>(in.sub), a, b);
    if (!r) [[unlikely]] {
      w.pc = pc;
      binary_error(w, in, r.error, a, b);
    }
    return *r;
  };
  // Dispatch: each instruction jumps straight to the next one's code through a table of label addresses (GCC's and
  // Clang's labels as values), one indirect jump per instruction kind rather than one shared by all (`switch`).
  static const void* const kDispatch[] = {&&op_kPush, &&op_kLoad, &&op_kStore, &&op_kBuiltin, &&op_kBinary, &&op_kUnary, &&op_kCall, &&op_kJump, &&op_kJumpIfZero, &&op_kOp, &&op_kExit, &&op_kRegionBegin, &&op_kRegionEnd, &&op_kBinImm, &&op_kBinLoad, &&op_kLoadBinImm, &&op_kLoadLoadBin, &&op_kLoadLoadBinJz, &&op_kBinImmStore, &&op_kLoadBinImmStore, &&op_kSet, &&op_kBusyOp};
  static_assert(std::size(kDispatch) == static_cast<std::size_t>(isa::Opc::kBusyOp) + 1, "one label per Opc");
  const isa::Instr* in;
#define SMPIPE_NEXT()                                        \
  do {                                                      \
    in = &code[pc++];                                       \
    goto* kDispatch[static_cast<std::size_t>(in->opc)];     \
  } while (0)
  SMPIPE_NEXT();
    op_kPush: st[sp++] = in->imm; SMPIPE_NEXT();
    op_kLoad: st[sp++] = slots[in->a]; SMPIPE_NEXT();
    op_kStore: slots[in->a] = st[--sp]; SMPIPE_NEXT();
    op_kBuiltin: st[sp++] = w.builtins[in->a]; SMPIPE_NEXT();
    op_kBinary: {
      std::int64_t b = st[--sp];
      st[sp - 1] = binary(*in, st[sp - 1], b);
      SMPIPE_NEXT();
    }
    op_kBinImm: st[sp - 1] = binary(*in, st[sp - 1], in->imm); SMPIPE_NEXT();
    op_kBinLoad: st[sp - 1] = binary(*in, st[sp - 1], slots[in->a]); SMPIPE_NEXT();
    op_kLoadBinImm: st[sp] = binary(*in, slots[in->a], in->imm), ++sp; SMPIPE_NEXT();
    op_kLoadLoadBin: st[sp] = binary(*in, slots[in->a], slots[in->b]), ++sp; SMPIPE_NEXT();
    op_kLoadLoadBinJz:
      if (binary(*in, slots[in->a], slots[in->b]) == 0) jump_to(static_cast<std::uint32_t>(in->imm), *in);
      SMPIPE_NEXT();
    op_kBinImmStore: slots[in->a] = binary(*in, st[--sp], in->imm); SMPIPE_NEXT();
    op_kLoadBinImmStore: slots[in->b] = binary(*in, slots[in->a], in->imm); SMPIPE_NEXT();
    op_kSet: slots[in->a] = in->imm; SMPIPE_NEXT();
    op_kUnary: {
      isa::EvalResult r = isa::eval_unary(static_cast<isa::UnOp>(in->sub), st[sp - 1]);
      if (!r) [[unlikely]] {
        w.pc = pc;
        unary_error(w, *in, r.error, st[sp - 1]);
      }
      st[sp - 1] = *r;
      SMPIPE_NEXT();
    }
    op_kCall: {
      sp -= static_cast<int>(in->a);
      std::int64_t* args = st + sp;
      isa::EvalResult r = isa::eval_call(static_cast<isa::CallFn>(in->sub), args, in->a);
      if (!r) [[unlikely]] {
        w.pc = pc;
        call_error(w, *in, args);
      }
      st[sp++] = *r;
      SMPIPE_NEXT();
    }
    op_kJump: jump_to(in->a, *in); SMPIPE_NEXT();
    op_kJumpIfZero:
      if (st[--sp] == 0) jump_to(in->a, *in);
      SMPIPE_NEXT();
    op_kOp: {
      w.pc = pc;
      const isa::OpDesc& d = rc.ops[in->a];
      if (observed_) [[unlikely]]
        observe_op_started(w, in->a);
      // The op's values: its constants as compiled, with the run-time ones (popped) in their places (in the
      // op's own copy of its constants); an op whose values are all constants reads them where they are.
      const std::int64_t* values = d.base_values.data();
      if (!d.dynamic_slots.empty()) {
        std::int64_t* v = op_values_.data() + op_values_at_[static_cast<std::size_t>(w.role)][in->a];
        for (auto it = d.dynamic_slots.rbegin(); it != d.dynamic_slots.rend(); ++it) v[*it] = st[--sp];
        values = v;
      }
      // (last_op first: a --max-ops stop names this op, which it counted but does not run)
      w.last_op = in->a;
      ++w.ops;
      if (++ops_ > options_.max_ops) [[unlikely]]
        ops_exhausted();
      OpContext ctx(*this, id, w, in->a, d, values);
      if (!d.ranged_slots.empty()) check_ranges(ctx, values);
      OpResult r = by_op_[static_cast<int>(d.kind)]->execute(ctx);
      if (r.kind == OpResult::kContinue) {
        pc = w.pc;  // (units do not move it; read back all the same)
        SMPIPE_NEXT();
      }
      if (r.kind == OpResult::kBusy) {
        w.busy += r.cycles;
        w.busy_until = now().v + r.cycles;
        if (observed_) [[unlikely]]
          observe_op_busy(w, d, now().v, r.cycles);
        enqueue(kSteps, now() + Cycle(r.cycles), id);
      }
      return;  // kBusy / kBlocked / kExited
    }
    op_kBusyOp: {
      // An op that can only keep its warp busy (Unit::fixed_busy): what op_kOp does for it, without its unit.
      w.pc = pc;
      const isa::OpDesc& d = rc.ops[in->a];
      if (observed_) [[unlikely]]
        observe_op_started(w, in->a);
      w.last_op = in->a;
      w.reg_work = in->a;  // (only compute ops are fixed_busy: register work, for the tensor unit's wgmma.fence check)
      ++w.ops;
      if (++ops_ > options_.max_ops) [[unlikely]]
        ops_exhausted();
      w.busy += in->imm;
      w.busy_until = now().v + in->imm;
      if (observed_) [[unlikely]]
        observe_op_busy(w, d, now().v, in->imm);
      enqueue(kSteps, now() + Cycle(in->imm), id);
      return;
    }
    op_kExit:
      w.pc = pc;
      warp_exit(id);
      return;
    op_kRegionBegin:
      if (w.region_start.empty()) {
        w.region_start.assign(program_.regions.size(), -1);
        w.region_time.assign(program_.regions.size(), 0);
      }
      w.region_start[in->a] = now().v;
      SMPIPE_NEXT();
    op_kRegionEnd:
      w.region_time[in->a] += now().v - w.region_start[in->a];
      w.region_start[in->a] = -1;
      SMPIPE_NEXT();
#undef SMPIPE_NEXT
}
#pragma GCC diagnostic pop

}  // namespace smpipe::models
