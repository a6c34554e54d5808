#include "isa/program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace smpipe::isa {

std::int64_t Program::smem_bytes() const {
  std::int64_t total = smem_extra;
  for (const auto& s : smems) total += s.bytes * s.size;
  for (const auto& b : mbarriers) total += 8 * b.size;  // one 64-bit object per barrier
  return total;
}

std::uint32_t ElementLayout::decl_of(std::uint32_t flat) const {
  auto it = std::upper_bound(base.begin(), base.end(), flat);
  return static_cast<std::uint32_t>(it - base.begin() - 1);
}

bool OpDesc::signals_barrier(int decl) const {
  const auto& specs = op_spec(kind).attrs;
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i].use == BarrierUse::kSignal && attrs[i].decl == decl) return true;
  return false;
}

bool Program::uses(OpKind kind) const {
  for (const auto& r : roles)
    for (const auto& op : r.ops)
      if (op.kind == kind) return true;
  return false;
}

namespace {

const char* opc_name(Opc o) {
  switch (o) {
    case Opc::kPush: return "push";
    case Opc::kLoad: return "load";
    case Opc::kStore: return "store";
    case Opc::kBuiltin: return "builtin";
    case Opc::kBinary: return "binary";
    case Opc::kUnary: return "unary";
    case Opc::kCall: return "call";
    case Opc::kJump: return "jump";
    case Opc::kJumpIfZero: return "jz";
    case Opc::kOp: return "op";
    case Opc::kExit: return "exit";
    case Opc::kRegionBegin: return "region+";
    case Opc::kRegionEnd: return "region-";
    default: break;  // fused forms are never dumped (the dump shows `code`)
  }
  return "?";
}

}  // namespace

std::string_view bin_op_name(BinOp op) {
  static constexpr std::string_view kNames[] = {"||", "&&", "|", "^", "&", "==", "!=", "<", "<=",
                                                ">",  ">=", "<<", ">>", "+", "-", "*", "/", "%"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(BinOp::kMod) + 1);
  return kNames[static_cast<int>(op)];
}

std::string_view un_op_name(UnOp op) {
  static constexpr std::string_view kNames[] = {"-", "!", "~"};
  return kNames[static_cast<int>(op)];
}

std::string_view builtin_name(Builtin b) {
  static constexpr std::string_view kNames[] = {"warp",  "warp_in_role", "warpgroup",    "cta",      "cta_x",
                                                "cta_y", "cta_z",        "cluster_rank", "num_ctas", "sm",
                                                "sm_ctas_before"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(Builtin::kCount));
  return kNames[static_cast<int>(b)];
}

std::string Program::dump() const {
  std::string out = fmt::format("kernel {} grid=({},{},{}) cluster=({},{},{}) warps={} smem={} bytes\n", kernel_name, grid[0],
                                grid[1], grid[2], cluster[0], cluster[1], cluster[2], warps, smem_bytes());
  for (const auto& [n, v] : params) out += fmt::format("  param {} = {}\n", n, v);
  for (const auto& b : mbarriers)
    out += fmt::format("  mbarrier {}[{}] count={}\n", b.name, b.size, b.count ? std::to_string(*b.count) : "(init in kernel)");
  for (const auto& s : smems) out += fmt::format("  smem {}[{}] bytes={}{}\n", s.name, s.size, s.bytes, s.whole ? " whole" : "");
  for (const auto& t : tensors) out += fmt::format("  tensor {} dtype={} rank={}\n", t.name, t.dtype, t.shape.size());
  for (const auto& n : named_barriers) out += fmt::format("  named_barrier {} id={}\n", n.name, n.id);
  for (const auto& g : globals) out += fmt::format("  global {}[{}] init={}\n", g.name, g.size, g.init);
  for (const auto& r : roles) {
    out += fmt::format("role {} warps {}..{} ({} slots, stack {})\n", r.name, r.first_warp, r.end_warp, r.slot_names.size(),
                       r.max_stack);
    for (std::size_t pc = 0; pc < r.code.size(); ++pc) {
      const Instr& in = r.code[pc];
      std::string arg;
      switch (in.opc) {
        case Opc::kPush: arg = std::to_string(in.imm); break;
        case Opc::kLoad: case Opc::kStore: arg = r.slot_names[in.a]; break;
        case Opc::kBuiltin: arg = std::string(builtin_name(static_cast<Builtin>(in.a))); break;
        case Opc::kBinary: arg = bin_op_name(static_cast<BinOp>(in.sub)); break;
        case Opc::kUnary: arg = un_op_name(static_cast<UnOp>(in.sub)); break;
        case Opc::kCall: arg = fmt::format("{} args={}", in.sub == 0 ? "min" : in.sub == 1 ? "max" : in.sub == 2 ? "ceil_div" : "loop_step", in.a); break;
        case Opc::kJump: case Opc::kJumpIfZero: arg = fmt::format("-> {}", in.a); break;
        case Opc::kOp: {
          const OpDesc& d = r.ops[in.a];
          arg = fmt::format("{}{}", d.text, d.lanes == 1 ? "   [elect]" : "");
          break;
        }
        case Opc::kExit: break;
        case Opc::kRegionBegin: case Opc::kRegionEnd: arg = regions[in.a]; break;
        default: break;
      }
      out += fmt::format("  {:4}  {:<8} {:<40} ; line {}\n", pc, opc_name(in.opc), arg, in.line);
    }
  }
  return out;
}

}  // namespace smpipe::isa
