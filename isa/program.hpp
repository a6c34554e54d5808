// A compiled kernel: declarations with their values bound, and per-role bytecode with a source map.
// The bytecode is a small stack machine over 64-bit integers; pipeline ops are single instructions that
// point at an OpDesc holding the op's constant arguments and where its dynamic ones come from.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/limits.hpp"
#include "isa/ops.hpp"
#include "isa/source.hpp"

namespace smpipe::isa {

struct MbarrierDecl {
  std::string name;
  int size = 1;                        // array length (1 for a scalar)
  bool array = false;                  // declared with [N] (elements are then named name[i])
  std::optional<std::int64_t> count;   // initialised at CTA start with this count when given
  SourceLoc loc;
};

struct SmemDecl {
  std::string name;
  int size = 1;
  bool array = false;
  std::int64_t bytes = 0;  // per element
  SourceLoc loc;
  bool whole = false;  // `whole`: an access by any thread touches the whole element (a value handed between warps)
};

struct TensorDecl {
  std::string name;
  std::string dtype;
  int bits = 16;
  std::vector<std::int64_t> shape;
  SourceLoc loc;
  // Its tensor map's L2 promotion in bytes (cuTensorMapEncodeTiled's CU_TENSOR_MAP_L2_PROMOTION_*): 0 none, 64, 128
  // or 256. A box's miss brings the whole aligned segment of this many bytes of each row it touches into the L2.
  int l2_promotion = 0;
};

// Words in global memory that CTAs synchronise through (flags, counters, locks): 64-bit integers shared by
// the whole grid, `init` at launch.
struct GlobalDecl {
  std::string name;
  int size = 1;
  bool array = false;
  std::int64_t init = 0;
  SourceLoc loc;
};

struct NamedBarrierDecl {
  std::string name;
  int id = 0;
  SourceLoc loc;
};

enum class Builtin : std::uint8_t {
  kWarp, kWarpInRole, kWarpgroup, kCta, kCtaX, kCtaY, kCtaZ, kClusterRank, kNumCtas, kSm, kSmCtasBefore, kCount
};
// The built-in variables by their names in the language, in Builtin order.
std::string_view builtin_name(Builtin b);

enum class Opc : std::uint8_t {
  kPush,        // push imm
  kLoad,        // push slot[a]
  kStore,       // slot[a] = pop
  kBuiltin,     // push builtin a
  kBinary,      // sub = BinOp
  kUnary,       // sub = UnOp
  kCall,        // sub = CallFn, a = argument count
  kJump,        // pc = a
  kJumpIfZero,  // if pop == 0: pc = a
  kOp,          // run ops[a]
  kExit,        // the warp exits
  kRegionBegin, // a = region index: time from here to kRegionEnd counts for the region
  kRegionEnd,
  // Fused forms (isa/fuse.cpp): only in RoleCode::fast, each doing what a short run of the instructions
  // above does. `op` is sub (a BinOp), slots are a and b, constants imm.
  kBinImm,         // push c; binary op          -> top = top op imm
  kBinLoad,        // load s; binary op          -> top = top op slot[a]
  kLoadBinImm,     // load s; push c; binary op  -> push slot[a] op imm
  kLoadLoadBin,    // load s; load t; binary op  -> push slot[a] op slot[b]
  kLoadLoadBinJz,  // ... then jz T               -> if !(slot[a] op slot[b]): pc = imm
  kBinImmStore,    // push c; binary op; store d -> slot[a] = pop op imm
  kLoadBinImmStore,// load s; push c; binary op; store d -> slot[b] = slot[a] op imm
  kSet,            // push c; store d            -> slot[a] = imm
  // Only in the simulator's copy of `fast` (models/gpu/simulator.cpp): op a, which can only keep its warp busy imm
  // cycles (Unit::fixed_busy), taken as that.
  kBusyOp,
};

enum class BinOp : std::uint8_t { kOr, kAnd, kBitOr, kBitXor, kBitAnd, kEq, kNe, kLt, kLe, kGt, kGe, kShl, kShr, kAdd, kSub, kMul, kDiv, kMod };
enum class UnOp : std::uint8_t { kNeg, kNot, kBitNot };
// kLoopStep is no function of the language: the compiler applies it to a `for` step computed at run time (the
// step itself, or an error when it is not positive).
enum class CallFn : std::uint8_t { kMin, kMax, kCeilDiv, kLoopStep };
// The operators as the language writes them (kBitOr is "|"), in enum order.
std::string_view bin_op_name(BinOp op);
std::string_view un_op_name(UnOp op);

struct Instr {
  Opc opc;
  std::uint8_t sub = 0;
  std::uint16_t col = 0;   // source column (1-based, 0: unknown), for run-time errors of an operator or an op
  std::uint32_t a = 0;
  std::int64_t imm = 0;
  std::int32_t line = 0;  // source line, for the source map
  std::uint16_t file = 0;  // and its file: Program::file(0) is the program, 1.. the files it imports
  std::uint16_t b = 0;     // fused forms: a second slot
};

// Where each attribute of an op lives in the argument vector the interpreter builds.
struct AttrSlot {
  bool present = false;
  std::uint8_t first = 0;  // index into OpDesc::base_values
  std::uint8_t length = 0; // 1, or the tuple length
  std::int32_t decl = -1;  // referenced declaration (barrier / smem / tensor) or -1
};

struct OpDesc {
  OpKind kind = OpKind::kCompute;
  std::uint8_t lanes = 32;     // 32, or 1 inside elect
  SourceLoc loc;
  std::string text;            // the op as written (for reports)
  std::vector<AttrSlot> attrs;  // indexed like op_spec(kind).attrs
  std::array<std::int8_t, kAttrCount> attr_index{};  // Attr -> index into attrs; -1: the op has no such attribute
  std::vector<std::int64_t> base_values;     // constant values; dynamic positions filled at run time
  std::vector<std::uint8_t> dynamic_slots;   // positions popped from the stack, in push order
  struct Ranged {
    std::uint8_t pos;    // dynamic position
    std::uint8_t index;  // into attrs
    ValueRange range;    // value_range(kind, its attribute)
  };
  std::vector<Ranged> ranged_slots;  // the dynamic values that have a value_range
  std::vector<std::uint32_t> result_slots;   // variables written by "-> V"
  std::string shape, dtype;                  // shape / dtype words
  // Derived at compile time (where constant):
  std::int64_t bytes = -1;     // data bytes moved (TMA box, cp.async, tmem), -1 if given at run time
  std::int64_t m = 0, n = 0, k = 0;  // MMA shape
  int operand_bits = 16;        // MMA input element width
  bool collective = false;     // warpgroup-collective (wgmma family)
  std::int32_t origin = -1;    // the id its statement had (Stmt::origin): how generated programs find their ops

  // The attribute named `a`, or nullptr when the op has none of that name.
  const AttrSlot* slot(Attr a) const {
    int i = attr_index[static_cast<int>(a)];
    return i < 0 ? nullptr : &attrs[static_cast<std::size_t>(i)];
  }
  // True when the op (or the async work it starts) signals an element of mbarrier declaration `decl`.
  bool signals_barrier(int decl) const;
};

struct RoleCode {
  std::string name;
  int first_warp = 0, end_warp = 0;  // warps [first, end)
  SourceLoc loc;
  std::vector<Instr> code;
  // What the interpreter runs: `code` with short runs fused into one instruction each (isa/fuse.cpp);
  // fast_orig[i] is the index in `code` where fast[i]'s run starts (one more entry: code.size()).
  std::vector<Instr> fast;
  std::vector<std::uint32_t> fast_orig;
  // Expressions of constants and built-ins that `fast` loads from hidden slots (slot_names.size() + i),
  // computed when a warp starts (isa/fuse.hpp).
  std::vector<std::vector<Instr>> hoisted;
  std::vector<OpDesc> ops;
  std::vector<std::string> slot_names;
  int max_stack = 0;
};

// Flat element indices of array declarations (mbarriers or smem buffers): element e of declaration d is
// base[d] + e; a CTA holds `count` elements.
struct ElementLayout {
  std::vector<std::uint32_t> base;
  std::uint32_t count = 0;
  template <class Decl>
  static ElementLayout of(const std::vector<Decl>& decls) {
    ElementLayout l;
    for (const auto& d : decls) {
      l.base.push_back(l.count);
      l.count += static_cast<std::uint32_t>(d.size);
    }
    return l;
  }
  std::uint32_t decl_of(std::uint32_t flat) const;
  // "name" for a scalar, "name[i]" for an array element.
  template <class Decl>
  std::string element_name(const std::vector<Decl>& decls, std::uint32_t flat) const {
    std::uint32_t d = decl_of(flat);
    return decls[d].array ? decls[d].name + "[" + std::to_string(flat - base[d]) + "]" : decls[d].name;
  }
};

struct Program {
  std::shared_ptr<SourceFile> source;
  std::vector<std::shared_ptr<SourceFile>> imported;  // files it imports (locations in them point there)
  std::string kernel_name;
  std::string gpu;  // machine named in the file ("" if none)
  SourceLoc gpu_loc;
  std::array<std::int64_t, 3> grid{1, 1, 1};
  std::array<std::int64_t, 3> cluster{1, 1, 1};
  int warps = 1;
  std::int64_t smem_extra = 0;  // kernel attribute smem= (bytes beyond the declared buffers)
  std::int64_t regs = 0;        // kernel attribute regs=: registers per thread at launch (0: not given, no register limit)
  std::vector<MbarrierDecl> mbarriers;
  std::vector<SmemDecl> smems;
  std::vector<TensorDecl> tensors;
  std::vector<NamedBarrierDecl> named_barriers;
  std::vector<GlobalDecl> globals;
  ElementLayout mbarrier_layout, smem_layout, global_layout;  // flat element indices of mbarriers, smem buffers, global words
  std::vector<RoleCode> roles;
  std::vector<int> warp_role;  // role index per warp, -1 = idle warp
  std::vector<std::pair<std::string, std::int64_t>> params;  // final values, in declaration order
  std::vector<std::string> regions;  // names of `region NAME { }` blocks, indexed by kRegionBegin/End
  std::vector<std::pair<std::string, std::int64_t>> reports;  // `report NAME = EXPR`, in file order

  std::int64_t num_ctas() const { return grid[0] * grid[1] * grid[2]; }
  // The source file of Instr::file: 0 the program, i > 0 imported[i - 1].
  const SourceFile* file(std::uint16_t i) const { return i == 0 || i > imported.size() ? source.get() : imported[i - 1].get(); }
  SourceLoc loc_of(const Instr& in) const { return SourceLoc{file(in.file), in.line, in.col > 0 ? in.col : 1}; }
  std::int64_t cluster_size() const { return cluster[0] * cluster[1] * cluster[2]; }
  std::int64_t smem_bytes() const;  // declared buffers + smem= + 8 bytes per mbarrier
  // The registers a CTA takes from its SM's register file: regs= per thread, allocated per warp in units of
  // kRegAllocUnit (0 without regs=).
  std::int64_t regs_per_cta() const {
    return warps * ((regs * kWarpSize + kRegAllocUnit - 1) / kRegAllocUnit * kRegAllocUnit);
  }
  bool uses(OpKind kind) const;

  std::string dump() const;  // human-readable listing (smpipe run --dump-program)
};

using ParamOverrides = std::map<std::string, std::int64_t>;

// Binds parameters and compiles the kernel (the only one in the file, or the one named). Throws InputError.
struct File;
// `predefined` names constants that the environment provides (the CLI passes SM_COUNT, the machine's SM
// count); a file may use them but not redefine them.
Program compile(const File& file, const ParamOverrides& overrides, const std::string& kernel_name = "",
                const std::map<std::string, std::int64_t>& predefined = {});

// Parses "NAME=VALUE" (VALUE an integer with optional K/M suffix). Throws InputError.
std::pair<std::string, std::int64_t> parse_define(const std::string& text);

}  // namespace smpipe::isa
