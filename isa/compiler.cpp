// Binds parameters, checks declarations and ops against the rules of semantics.md that can be decided
// before running, and compiles each role to bytecode.
#include <fmt/format.h>

#include <charconv>

#include <algorithm>
#include <functional>
#include <limits>
#include <set>

#include "isa/ast.hpp"
#include "isa/eval.hpp"
#include "isa/fuse.hpp"
#include "isa/limits.hpp"
#include "isa/pipelines.hpp"
#include "isa/program.hpp"

namespace smpipe::isa {

namespace {


[[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) { throw InputError(loc, msg); }

// The first occurrence of variable `name` in `block`, in source order (a statement's expressions before what it
// assigns): a read (kRead, at `loc`), an assignment (kWrite), or none.
enum class FirstUse : std::uint8_t { kNone, kRead, kWrite };
FirstUse first_use(const Expr& e, const std::string& name, SourceLoc& loc) {
  if (e.kind == Expr::Kind::kName && e.name == name) {
    loc = e.loc;
    return FirstUse::kRead;
  }
  for (const Expr& a : e.args)
    if (FirstUse u = first_use(a, name, loc); u != FirstUse::kNone) return u;
  return FirstUse::kNone;
}
FirstUse first_use(const Block& block, const std::string& name, SourceLoc& loc) {
  for (const Stmt& s : block) {
    for (const Expr& e : s.exprs)
      if (FirstUse u = first_use(e, name, loc); u != FirstUse::kNone) return u;
    for (const Operand& o : s.operands)
      for (const Expr& e : o.values)
        if (FirstUse u = first_use(e, name, loc); u != FirstUse::kNone) return u;
    bool assigns = (s.kind == Stmt::Kind::kLet || s.kind == Stmt::Kind::kFor) && s.name == name;
    for (const auto& r : s.results) assigns = assigns || r.first == name;
    if (assigns) return FirstUse::kWrite;
    for (const Block* b : {&s.body, &s.else_body})
      if (FirstUse u = first_use(*b, name, loc); u != FirstUse::kNone) return u;
  }
  return FirstUse::kNone;
}

// A proc's results must be assigned by its body before they are read: the body sees them from its start (so that a
// `let` in a nested block assigns them), and one never assigned, or read before its first assignment, would give
// the caller 0 or the previous call's value.
void check_results(const Proc& pr) {
  for (const std::string& r : pr.results) {
    SourceLoc at = pr.loc;
    switch (first_use(pr.body, r, at)) {
      case FirstUse::kWrite: break;
      case FirstUse::kRead:
        fail(at, fmt::format("proc '{}' reads its result '{}' before assigning it (`let {} = ...` or `-> {}` first)", pr.name, r, r, r));
      case FirstUse::kNone:
        fail(pr.loc, fmt::format("proc '{}' never assigns its result '{}' (`let {} = ...` or `-> {}` in its body)", pr.name, r, r, r));
    }
  }
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string suggest(std::string_view name, const std::vector<std::string>& candidates) {
  if (name.size() > 64) return "";  // no name that long is a typo of a short one (and the distance costs length^2)
  std::string best;
  std::size_t best_d = 3;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(name, c);
    if (d < best_d && 2 * d <= name.size()) {
      best_d = d;
      best = c;
    }
  }
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

BinOp bin_op(const std::string& op) {
  static const std::vector<std::pair<std::string, BinOp>> table = {
      {"||", BinOp::kOr},   {"&&", BinOp::kAnd}, {"|", BinOp::kBitOr}, {"^", BinOp::kBitXor}, {"&", BinOp::kBitAnd},
      {"==", BinOp::kEq},   {"!=", BinOp::kNe},  {"<", BinOp::kLt},    {"<=", BinOp::kLe},    {">", BinOp::kGt},
      {">=", BinOp::kGe},   {"<<", BinOp::kShl}, {">>", BinOp::kShr},  {"+", BinOp::kAdd},    {"-", BinOp::kSub},
      {"*", BinOp::kMul},   {"/", BinOp::kDiv},  {"%", BinOp::kMod}};
  for (const auto& [s, b] : table)
    if (s == op) return b;
  return BinOp::kAdd;
}

std::optional<std::int64_t> apply_binary(const std::string& op, std::int64_t a, std::int64_t b, const SourceLoc& loc) {
  EvalResult r = eval_binary(bin_op(op), a, b);
  if (!r) fail(loc, fmt::format("{}: {} {} {}", eval_error_text(r.error), a, op, b));
  return *r;
}

UnOp un_op(const std::string& op) { return op == "-" ? UnOp::kNeg : op == "!" ? UnOp::kNot : UnOp::kBitNot; }
CallFn call_fn(const std::string& name) { return name == "min" ? CallFn::kMin : name == "max" ? CallFn::kMax : CallFn::kCeilDiv; }

const std::vector<std::pair<std::string, Builtin>>& builtin_names() {
  static const std::vector<std::pair<std::string, Builtin>> b = [] {
    std::vector<std::pair<std::string, Builtin>> v;
    for (int i = 0; i < static_cast<int>(Builtin::kCount); ++i)
      v.emplace_back(std::string(builtin_name(static_cast<Builtin>(i))), static_cast<Builtin>(i));
    return v;
  }();
  return b;
}

// Shapes that PTX has (semantics.md §5, §6).
struct MmaShape {
  std::int64_t m = 0, n = 0, k = 0;
};
std::optional<MmaShape> parse_mnk(const std::string& s) {
  MmaShape r;
  if (std::sscanf(s.c_str(), "m%ldn%ldk%ld", &r.m, &r.n, &r.k) != 3) return std::nullopt;
  if (fmt::format("m{}n{}k{}", r.m, r.n, r.k) != s) return std::nullopt;
  return r;
}

bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

class Compiler {
 public:
  Compiler(const File& file, const ParamOverrides& overrides, const std::map<std::string, std::int64_t>& predefined)
      : file_(file) {
    for (const auto& [name, value] : predefined) {
      constants_[name] = value;
      predefined_.insert(name);
    }
    bind_definitions(overrides);
  }

  Program compile_kernel(const std::string& wanted) {
    if (!file_.imports.empty())
      fail(file_.imports.front().loc, "an import that was not read (isa::parse reads them)");
    if (file_.kernels.empty()) fail(SourceLoc{file_.source.get(), 1, 1}, "the file declares no kernel");
    for (std::size_t i = 1; i < file_.kernels.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (file_.kernels[i].name == file_.kernels[j].name)
          fail(file_.kernels[i].loc, fmt::format("kernel '{}' is declared twice (first at line {}): --kernel could not tell them apart",
                                                 file_.kernels[i].name, file_.kernels[j].loc.line));
    const Kernel* k = nullptr;
    if (wanted.empty()) {
      if (file_.kernels.size() > 1) {
        std::vector<std::string> names;
        for (const auto& kk : file_.kernels) names.push_back(kk.name);
        fail(file_.kernels[1].loc, fmt::format("the file declares {} kernels ({}); choose one with --kernel",
                                               file_.kernels.size(), fmt::join(names, ", ")));
      }
      k = &file_.kernels[0];
    } else {
      for (const auto& kk : file_.kernels)
        if (kk.name == wanted) k = &kk;
      if (k == nullptr) throw InputError(fmt::format("no kernel named '{}' in {}", wanted, file_.source->name));
    }
    kernel_ = k;
    Program p;
    p.source = file_.source;
    p.imported = file_.imported;
    p.kernel_name = k->name;
    if (file_.gpu) {
      p.gpu = file_.gpu->first;
      p.gpu_loc = file_.gpu->second;
    }
    p.params = param_values_;
    for (const auto& r : file_.reports) p.reports.emplace_back(r.name, const_expr(r.value));
    auto tuple3 = [&](const std::vector<Expr>& v, const SourceLoc& loc, const char* what) {
      std::array<std::int64_t, 3> r{1, 1, 1};
      if (v.size() > 3) fail(loc, fmt::format("{} has at most 3 dimensions", what));
      for (std::size_t i = 0; i < v.size(); ++i) {
        r[i] = const_expr(v[i]);
        if (r[i] < 1) fail(v[i].loc, fmt::format("{} dimensions must be at least 1 (got {})", what, r[i]));
      }
      return r;
    };
    p.grid = tuple3(k->grid, k->grid_loc, "grid");
    p.cluster = tuple3(k->cluster, k->cluster_loc, "cluster");
    // CUDA's grid limits: x up to 2^31-1, y and z up to 65535 (CUDA C++ Programming Guide, technical
    // specifications per compute capability); with them the product below cannot overflow.
    for (int i = 0; i < 3; ++i) {
      std::int64_t most = i == 0 ? std::int64_t{INT32_MAX} : 65535;
      if (p.grid[i] > most) fail(k->grid_loc, fmt::format("grid dimension {} is {}: CUDA allows at most {}", i, p.grid[i], most));
      if (p.cluster[i] > kMaxClusterSize)
        fail(k->cluster_loc, fmt::format("cluster dimension {} is {}: a cluster has at most {} CTAs", i, p.cluster[i], kMaxClusterSize));
    }
    for (int i = 0; i < 3; ++i)
      if (p.grid[i] % p.cluster[i] != 0)
        fail(k->cluster_loc, fmt::format("grid dimension {} ({}) is not a multiple of the cluster dimension ({})", i,
                                         p.grid[i], p.cluster[i]));
    if (p.cluster_size() > kMaxClusterSize)
      fail(k->cluster_loc, fmt::format("cluster of {} CTAs: the most is {}", p.cluster_size(), kMaxClusterSize));
    if (p.num_ctas() > (std::int64_t{1} << 31))
      fail(k->grid_loc, fmt::format("grid of {} CTAs: the simulator runs at most 2^31", p.num_ctas()));
    if (k->warps) {
      std::int64_t w = const_expr(*k->warps);
      if (w < 1 || w > 32) fail(k->warps->loc, fmt::format("warps={} out of range 1..32 (1024 threads per CTA)", w));
      p.warps = static_cast<int>(w);
    }
    if (k->smem) {
      p.smem_extra = const_expr(*k->smem);
      if (p.smem_extra < 0 || p.smem_extra > kMaxSmemBufferBytes)
        fail(k->smem->loc, fmt::format("smem={} out of range 0..{} (16 MiB, more than any GPU's shared memory)", p.smem_extra,
                                       kMaxSmemBufferBytes));
    }
    if (k->regs) {
      p.regs = const_expr(*k->regs);
      if (p.regs < 1 || p.regs > kMaxRegsPerThread)
        fail(k->regs->loc, fmt::format("regs={} out of range 1..{} (registers per thread)", p.regs, kMaxRegsPerThread));
    }
    compile_decls(*k, p);
    std::vector<const Proc*> procs;  // the file's (its imports' included), then the kernel's
    for (const Proc& pr : file_.procs) procs.push_back(&pr);
    for (const Proc& pr : k->procs) procs.push_back(&pr);
    for (const Proc* q : procs) {
      const Proc& pr = *q;
      check_unique(pr.name, pr.loc);
      if (procs_.count(pr.name)) fail(pr.loc, fmt::format("proc '{}' is defined twice", pr.name));
      if (find_op(pr.name)) fail(pr.loc, fmt::format("'{}' is an op name", pr.name));
      procs_[pr.name] = &pr;
    }
    program_ = &p;
    p.warp_role.assign(p.warps, -1);
    for (const Role& r : k->roles) compile_role(r, p);
    p.mbarrier_layout = ElementLayout::of(p.mbarriers);
    p.smem_layout = ElementLayout::of(p.smems);
    p.global_layout = ElementLayout::of(p.globals);
    return p;
  }

 private:
  // ---- parameters and constant expressions ----
  void bind_definitions(const ParamOverrides& overrides) {
    for (const auto& [name, _] : overrides) {
      bool found = false;
      for (const auto& d : file_.definitions) {
        if (d.name != name) continue;
        found = true;
        if (!d.overridable)
          throw InputError(d.loc, fmt::format("'{}' is a const; only params can be set with -D", name));
      }
      if (!found) {
        std::vector<std::string> names;
        for (const auto& d : file_.definitions)
          if (d.overridable) names.push_back(d.name);
        throw InputError(fmt::format("-D {}: {} has no param '{}'{}{}", name, file_.source->name, name,
                                     suggest(name, names),
                                     names.empty() ? "" : fmt::format("; its params: {}", fmt::join(names, ", "))));
      }
    }
    for (const auto& d : file_.definitions) {
      if (predefined_.count(d.name)) fail(d.loc, fmt::format("'{}' is predefined (from the machine) and cannot be redefined", d.name));
      if (constants_.count(d.name)) fail(d.loc, fmt::format("'{}' is defined twice", d.name));
      // A param or const named like a built-in would stand for it in every expression (`param warp = 40`: every warp 40).
      for (const auto& [b, _] : builtin_names())
        if (b == d.name) fail(d.loc, fmt::format("'{}' is a built-in name (a value of each warp); a param or const cannot take it", d.name));
      auto it = overrides.find(d.name);
      std::int64_t v = it != overrides.end() && d.overridable ? it->second : const_expr(d.value);
      constants_[d.name] = v;
      param_values_.emplace_back(d.name, v);
    }
    for (const auto& a : file_.assertions)
      if (const_expr(a.condition) == 0) fail(a.loc, fmt::format("assertion failed: {}", a.message));
  }

  std::int64_t const_expr(const Expr& e) {
    auto v = fold(e);
    if (!v) fail(e.loc, "expected a constant expression (params, consts and numbers only)");
    return *v;
  }

  // Folds an expression whose names are all constants; nullopt if it depends on run-time values.
  std::optional<std::int64_t> fold(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kInt: return e.value;
      case Expr::Kind::kWord: fail(e.loc, fmt::format("'{}' is not a number", e.name));
      case Expr::Kind::kName: {
        auto it = constants_.find(e.name);
        if (it != constants_.end()) return it->second;
        return std::nullopt;
      }
      case Expr::Kind::kIndex: return std::nullopt;
      case Expr::Kind::kUnary: {
        auto a = fold(e.args[0]);
        if (!a) return std::nullopt;
        EvalResult r = eval_unary(un_op(e.name), *a);
        if (!r) fail(e.loc, fmt::format("{}: {}{}", eval_error_text(r.error), e.name, *a));
        return *r;
      }
      case Expr::Kind::kBinary: {
        auto a = fold(e.args[0]);
        auto b = fold(e.args[1]);
        if (!a || !b) return std::nullopt;
        return apply_binary(e.name, *a, *b, e.loc);
      }
      case Expr::Kind::kCall: {
        check_call(e);
        std::vector<std::int64_t> v;
        for (const auto& a : e.args) {
          auto x = fold(a);
          if (!x) return std::nullopt;
          v.push_back(*x);
        }
        EvalResult r = eval_call(call_fn(e.name), v.data(), v.size());
        if (!r) fail(e.loc, eval_error_text(r.error));
        return *r;
      }
    }
    return std::nullopt;
  }

  void check_call(const Expr& e) {
    if (e.name == "min" || e.name == "max") {
      if (e.args.size() < 2) fail(e.loc, fmt::format("{}() takes at least 2 arguments", e.name));
    } else if (e.name == "ceil_div") {
      if (e.args.size() != 2) fail(e.loc, "ceil_div() takes 2 arguments");
    } else {
      fail(e.loc, fmt::format("unknown function '{}' (built-ins: min, max, ceil_div)", e.name));
    }
  }

  // ---- declarations ----
  int decl_size(const Decl& d, std::int64_t max = 4096) {
    if (!d.size) return 1;
    std::int64_t n = const_expr(*d.size);
    if (n < 0 || n > max) fail(d.size->loc, fmt::format("array size {} out of range 0..{}", n, max));
    return static_cast<int>(n);
  }

  void check_unique(const std::string& name, const SourceLoc& loc) {
    if (constants_.count(name)) fail(loc, fmt::format("'{}' is already a param or const", name));
    if (decl_kind_.count(name) || pipelines_.count(name)) fail(loc, fmt::format("'{}' is declared twice", name));
    for (const auto& [b, _] : builtin_names())
      if (b == name) fail(loc, fmt::format("'{}' is a built-in name", name));
  }

  void compile_decls(const Kernel& k, Program& p) {
    for (const Decl& d : k.decls) {
      check_unique(d.name, d.loc);
      switch (d.kind) {
        case Decl::Kind::kMbarrier: {
          MbarrierDecl m{d.name, decl_size(d), d.size.has_value(), std::nullopt, d.loc};
          if (d.count) {
            std::int64_t c = const_expr(*d.count);
            if (c < 1 || c > kMaxArrivalCount)
              fail(d.count->loc, fmt::format("mbarrier count {} out of range 1..{} (PTX mbarrier.init)", c, kMaxArrivalCount));
            m.count = c;
          }
          decl_kind_[d.name] = {AttrType::kBarrier, static_cast<int>(p.mbarriers.size())};
          p.mbarriers.push_back(m);
          break;
        }
        case Decl::Kind::kSmem: {
          SmemDecl s{d.name, decl_size(d), d.size.has_value(), const_expr(*d.count), d.loc, d.whole};
          if (s.bytes < 1 || s.bytes > kMaxSmemBufferBytes)
            fail(d.count->loc, fmt::format("smem bytes={} out of range 1..{} (16 MiB, more than any GPU's shared memory)", s.bytes,
                                           kMaxSmemBufferBytes));
          decl_kind_[d.name] = {AttrType::kSmem, static_cast<int>(p.smems.size())};
          p.smems.push_back(s);
          break;
        }
        case Decl::Kind::kTensor: {
          auto bits = dtype_bits(d.dtype);
          if (!bits) fail(d.loc, fmt::format("unknown dtype '{}'", d.dtype));
          TensorDecl t{d.name, d.dtype, *bits, {}, d.loc};
          if (d.shape.empty() || d.shape.size() > 5)
            fail(d.loc, fmt::format("tensor rank {} out of range 1..5 (cuTensorMapEncodeTiled)", d.shape.size()));
          std::int64_t elements = 1;
          for (const auto& e : d.shape) {
            std::int64_t v = const_expr(e);
            if (v < 1) fail(e.loc, "tensor dimensions must be positive");
            // cuTensorMapEncodeTiled: globalDim[i] <= 2^32
            if (v > (std::int64_t{1} << 32)) fail(e.loc, fmt::format("tensor dimension {} out of range 1..2^32 (cuTensorMapEncodeTiled)", v));
            if (elements > kMaxTensorBytes * 8 / *bits / v)
              fail(e.loc, fmt::format("tensor '{}' is larger than 2^48 bytes (a simulator limit)", d.name));
            elements *= v;
            t.shape.push_back(v);
          }
          if (d.promotion) {
            // cuTensorMapEncodeTiled's CU_TENSOR_MAP_L2_PROMOTION_{NONE, L2_64B, L2_128B, L2_256B}
            const std::int64_t v = const_expr(*d.promotion);
            if (v != 0 && v != 64 && v != 128 && v != 256)
              fail(d.promotion->loc, fmt::format("l2_promotion={} must be 0, 64, 128 or 256 (bytes: CU_TENSOR_MAP_L2_PROMOTION_*)", v));
            t.l2_promotion = static_cast<int>(v);
          }
          decl_kind_[d.name] = {AttrType::kTensor, static_cast<int>(p.tensors.size())};
          p.tensors.push_back(t);
          break;
        }
        case Decl::Kind::kNamedBarrier: {
          std::int64_t id = const_expr(*d.count);
          if (id < 0 || id >= kNamedBarriers)
            fail(d.count->loc, fmt::format("named barrier id {} out of range 0..{}", id, kNamedBarriers - 1));
          decl_kind_[d.name] = {AttrType::kNamedBar, static_cast<int>(p.named_barriers.size())};
          p.named_barriers.push_back(NamedBarrierDecl{d.name, static_cast<int>(id), d.loc});
          break;
        }
        case Decl::Kind::kPipeline: {
          PipelineInfo info = declare_pipeline(d, p.cluster, [&](const Expr& e) { return const_expr(e); });
          for (const auto& b : info.barriers()) {
            check_unique(b.name, d.loc);
            decl_kind_[b.name] = {AttrType::kBarrier, static_cast<int>(p.mbarriers.size())};
            p.mbarriers.push_back(MbarrierDecl{b.name, static_cast<int>(b.size), true, b.count, d.loc});
          }
          pipelines_[d.name] = std::move(info);
          break;
        }
        case Decl::Kind::kGlobal: {
          GlobalDecl g{d.name, decl_size(d, kMaxGlobalWords), d.size.has_value(), d.count ? const_expr(*d.count) : 0, d.loc};
          global_words_ += g.size;
          if (global_words_ > kMaxGlobalWords)
            fail(d.loc, fmt::format("the kernel's global words add up to {}, more than {} (2^20)", global_words_, kMaxGlobalWords));
          decl_kind_[d.name] = {AttrType::kGlobal, static_cast<int>(p.globals.size())};
          p.globals.push_back(g);
          break;
        }
      }
    }
  }

  // ---- roles and statements ----
  struct Scope {
    std::map<std::string, std::uint32_t> vars;
  };
  struct LoopLabels {
    std::vector<std::size_t> breaks, continues;
    int region_depth = 0;
  };

  void compile_role(const Role& r, Program& p) {
    std::int64_t from = const_expr(r.from);
    std::int64_t to = r.to ? const_expr(*r.to) : from + 1;
    bool groups = r.unit == "warpgroup" || r.unit == "warpgroups";
    if (r.unit == "warp" && r.to) fail(r.loc, "use 'warps a..b' for a range of warps");
    if (r.unit == "warpgroup" && r.to) fail(r.loc, "use 'warpgroups a..b' for a range of warpgroups");
    if (to <= from) fail(r.loc, fmt::format("empty range {}..{}", from, to));
    std::int64_t first = groups ? from * 4 : from, end = groups ? to * 4 : to;
    if (first < 0 || end > p.warps)
      fail(r.loc, fmt::format("role '{}' covers warps {}..{} but the kernel has warps=0..{}", r.name, first, end, p.warps));
    for (const auto& other : p.roles)
      if (other.name == r.name) fail(r.loc, fmt::format("role '{}' is declared twice", r.name));
    for (std::int64_t w = first; w < end; ++w)
      if (p.warp_role[w] >= 0)
        fail(r.loc, fmt::format("warp {} is already in role '{}'", w, p.roles[p.warp_role[w]].name));
    RoleCode rc;
    rc.name = r.name;
    rc.first_warp = static_cast<int>(first);
    rc.end_warp = static_cast<int>(end);
    rc.loc = r.loc;
    role_ = &rc;
    scopes_.clear();
    scopes_.emplace_back();
    loops_.clear();
    stack_depth_ = 0;
    compile_block(r.body, 32);
    emit(Opc::kExit, r.loc);
    for (std::int64_t w = first; w < end; ++w) p.warp_role[w] = static_cast<int>(p.roles.size());
    fuse(rc, p);
    p.roles.push_back(std::move(rc));
    role_ = nullptr;
  }

  void emit(Opc opc, const SourceLoc& loc, std::uint32_t a = 0, std::int64_t imm = 0, std::uint8_t sub = 0) {
    if (++instructions_ > kMaxInstructions)
      fail(loc, fmt::format("the kernel compiles to more than {} instructions (procs are inlined at every call: are calls "
                            "nested too often?)", kMaxInstructions));
    const auto col = static_cast<std::uint16_t>(std::clamp(loc.col, 0, 65535));
    role_->code.push_back(Instr{opc, sub, col, a, imm, loc.line, file_index(loc.file)});
    switch (opc) {
      case Opc::kPush: case Opc::kLoad: case Opc::kBuiltin: ++stack_depth_; break;
      case Opc::kStore: case Opc::kJumpIfZero: case Opc::kBinary: --stack_depth_; break;
      case Opc::kCall: stack_depth_ -= static_cast<int>(a) - 1; break;
      default: break;
    }
    role_->max_stack = std::max(role_->max_stack, stack_depth_);
  }
  std::size_t here() const { return role_->code.size(); }
  // Instr::file of a location: 0 the program's own file, i the (i-1)th imported one.
  std::uint16_t file_index(const SourceFile* f) const {
    for (std::size_t i = 0; i < file_.imported.size() && i < 65534; ++i)
      if (file_.imported[i].get() == f) return static_cast<std::uint16_t>(i + 1);
    return 0;
  }
  // Compiles a block whose code is never run, then drops that code (and the jumps it registered).
  void compile_dropped(const Block& b, int lanes) {
    if (b.empty()) return;
    std::size_t code = here();
    std::size_t breaks = loops_.empty() ? 0 : loops_.back().breaks.size();
    std::size_t continues = loops_.empty() ? 0 : loops_.back().continues.size();
    compile_block(b, lanes);
    role_->code.resize(code);
    if (!loops_.empty()) {
      loops_.back().breaks.resize(breaks);
      loops_.back().continues.resize(continues);
    }
  }
  void patch(std::size_t at, std::size_t target) { role_->code[at].a = static_cast<std::uint32_t>(target); }

  std::optional<std::uint32_t> find_var(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->vars.find(name);
      if (f != it->vars.end()) return f->second;
    }
    return std::nullopt;
  }

  std::uint32_t declare_var(const std::string& name, const SourceLoc& loc) {
    if (constants_.count(name)) fail(loc, fmt::format("'{}' is a param or const and cannot be assigned", name));
    if (decl_kind_.count(name)) fail(loc, fmt::format("'{}' is a declaration and cannot be assigned", name));
    for (const auto& [b, _] : builtin_names())
      if (b == name) fail(loc, fmt::format("'{}' is a built-in value and cannot be assigned", name));
    auto slot = static_cast<std::uint32_t>(role_->slot_names.size());
    role_->slot_names.push_back(name);
    scopes_.back().vars[name] = slot;
    return slot;
  }
  // `let x = ...` assigns to a visible variable, or declares it in the current block.
  std::uint32_t assign_target(const std::string& name, const SourceLoc& loc) {
    if (auto s = find_var(name)) return *s;
    return declare_var(name, loc);
  }
  std::uint32_t hidden_slot(const std::string& name) {
    auto slot = static_cast<std::uint32_t>(role_->slot_names.size());
    role_->slot_names.push_back(name);
    return slot;
  }

  void compile_expr(const Expr& e) {
    if (auto v = fold(e)) {
      emit(Opc::kPush, e.loc, 0, *v);
      return;
    }
    switch (e.kind) {
      case Expr::Kind::kName: {
        if (auto s = find_var(e.name)) {
          emit(Opc::kLoad, e.loc, *s);
          return;
        }
        for (const auto& [b, id] : builtin_names()) {
          if (b == e.name) {
            emit(Opc::kBuiltin, e.loc, static_cast<std::uint32_t>(id));
            return;
          }
        }
        if (decl_kind_.count(e.name)) fail(e.loc, fmt::format("'{}' is a declaration, not a value", e.name));
        std::vector<std::string> names;
        for (const auto& [n, _] : constants_) names.push_back(n);
        for (const auto& sc : scopes_)
          for (const auto& [n, _] : sc.vars) names.push_back(n);
        for (const auto& [n, _] : builtin_names()) names.push_back(n);
        fail(e.loc, fmt::format("unknown name '{}'{}", e.name, suggest(e.name, names)));
      }
      case Expr::Kind::kIndex:
        fail(e.loc, fmt::format("'{}[...]' is a reference, not a value", e.name));
      case Expr::Kind::kUnary:
        compile_expr(e.args[0]);
        emit(Opc::kUnary, e.loc, 0, 0,
             static_cast<std::uint8_t>(un_op(e.name)));
        return;
      case Expr::Kind::kBinary:
        compile_expr(e.args[0]);
        compile_expr(e.args[1]);
        emit(Opc::kBinary, e.loc, 0, 0, static_cast<std::uint8_t>(bin_op(e.name)));
        return;
      case Expr::Kind::kCall: {
        check_call(e);
        for (const auto& a : e.args) compile_expr(a);
        CallFn fn = call_fn(e.name);
        emit(Opc::kCall, e.loc, static_cast<std::uint32_t>(e.args.size()), 0, static_cast<std::uint8_t>(fn));
        return;
      }
      default: fail(e.loc, "expected an expression");
    }
  }

  void compile_block(const Block& b, int lanes) {
    scopes_.emplace_back();
    for (const Stmt& s : b) compile_stmt(s, lanes);
    scopes_.pop_back();
  }

  void compile_stmt(const Stmt& s, int lanes) {
    switch (s.kind) {
      case Stmt::Kind::kLet: {
        compile_expr(s.exprs[0]);
        emit(Opc::kStore, s.loc, assign_target(s.name, s.loc));
        return;
      }
      case Stmt::Kind::kFor: {
        scopes_.emplace_back();
        compile_expr(s.exprs[0]);
        std::uint32_t var = declare_var(s.name, s.loc);
        emit(Opc::kStore, s.loc, var);
        std::uint32_t end = hidden_slot(fmt::format("{}.end", s.name));
        compile_expr(s.exprs[1]);
        emit(Opc::kStore, s.loc, end);
        std::optional<std::int64_t> step_const = std::int64_t{1};
        std::uint32_t step = 0;
        if (s.exprs.size() > 2) {
          step_const = fold(s.exprs[2]);
          if (step_const && *step_const <= 0) fail(s.exprs[2].loc, "the loop step must be positive");
          if (!step_const) {
            // Computed at run time: checked once on entry, a step that is not positive is an error at its line
            // (undefined behaviour of the warp, as a division by zero is), not an endless loop.
            step = hidden_slot(fmt::format("{}.step", s.name));
            compile_expr(s.exprs[2]);
            emit(Opc::kCall, s.exprs[2].loc, 1, 0, static_cast<std::uint8_t>(CallFn::kLoopStep));
            emit(Opc::kStore, s.loc, step);
          }
        }
        std::size_t cond = here();
        emit(Opc::kLoad, s.loc, var);
        emit(Opc::kLoad, s.loc, end);
        emit(Opc::kBinary, s.loc, 0, 0, static_cast<std::uint8_t>(BinOp::kLt));
        std::size_t exit_jump = here();
        emit(Opc::kJumpIfZero, s.loc);
        loops_.emplace_back();
        loops_.back().region_depth = region_depth_;
        compile_block(s.body, lanes);
        std::size_t cont = here();
        emit(Opc::kLoad, s.loc, var);
        if (step_const) {
          emit(Opc::kPush, s.loc, 0, *step_const);
        } else {
          emit(Opc::kLoad, s.loc, step);
        }
        emit(Opc::kBinary, s.loc, 0, 0, static_cast<std::uint8_t>(BinOp::kAdd));
        emit(Opc::kStore, s.loc, var);
        emit(Opc::kJump, s.loc, static_cast<std::uint32_t>(cond));
        finish_loop(here(), cont);
        patch(exit_jump, here());
        scopes_.pop_back();
        return;
      }
      case Stmt::Kind::kWhile: {
        std::size_t cond = here();
        compile_expr(s.exprs[0]);
        std::size_t exit_jump = here();
        emit(Opc::kJumpIfZero, s.loc);
        loops_.emplace_back();
        loops_.back().region_depth = region_depth_;
        compile_block(s.body, lanes);
        emit(Opc::kJump, s.loc, static_cast<std::uint32_t>(cond));
        finish_loop(here(), cond);
        patch(exit_jump, here());
        return;
      }
      case Stmt::Kind::kIf: {
        if (auto c = fold(s.exprs[0])) {
          // A condition known when compiling (params, consts): only the branch taken is emitted. The other
          // is still compiled, so its errors are reported and its ops exist, but its code is dropped.
          compile_block(*c ? s.body : s.else_body, lanes);
          compile_dropped(*c ? s.else_body : s.body, lanes);
          return;
        }
        compile_expr(s.exprs[0]);
        std::size_t else_jump = here();
        emit(Opc::kJumpIfZero, s.loc);
        compile_block(s.body, lanes);
        if (s.else_body.empty()) {
          patch(else_jump, here());
        } else {
          std::size_t end_jump = here();
          emit(Opc::kJump, s.loc);
          patch(else_jump, here());
          compile_block(s.else_body, lanes);
          patch(end_jump, here());
        }
        return;
      }
      case Stmt::Kind::kBreak:
      case Stmt::Kind::kContinue:
        if (!loops_.empty() && loops_.back().region_depth != region_depth_)
          fail(s.loc, fmt::format("'{}' would leave a region (regions must end where they are written)",
                                  s.kind == Stmt::Kind::kBreak ? "break" : "continue"));
        if (loops_.empty()) fail(s.loc, fmt::format("'{}' outside a loop", s.kind == Stmt::Kind::kBreak ? "break" : "continue"));
        (s.kind == Stmt::Kind::kBreak ? loops_.back().breaks : loops_.back().continues).push_back(here());
        emit(Opc::kJump, s.loc);
        return;
      case Stmt::Kind::kExit:
        if (region_depth_ > 0) fail(s.loc, "'exit' inside a region (regions must end where they are written)");
        emit(Opc::kExit, s.loc);
        return;
      case Stmt::Kind::kElect:
        compile_block(s.body, 1);
        return;
      case Stmt::Kind::kRegion: {
        auto& names = program_->regions;
        auto it = std::find(names.begin(), names.end(), s.name);
        auto index = static_cast<std::uint32_t>(it - names.begin());
        if (it == names.end()) names.push_back(s.name);
        emit(Opc::kRegionBegin, s.loc, index);
        ++region_depth_;
        compile_block(s.body, lanes);
        --region_depth_;
        emit(Opc::kRegionEnd, s.loc, index);
        return;
      }
      case Stmt::Kind::kOp:
        compile_op(s, lanes);
        return;
      case Stmt::Kind::kCall:
        compile_call(s, lanes);
        return;
    }
  }

  // A proc call is inlined: the arguments are evaluated into fresh variables named like the parameters,
  // and the body sees only those, its own lets, and the file's constants and declarations.
  void compile_call(const Stmt& s, int lanes) {
    auto it = procs_.find(s.name);
    if (it == procs_.end()) {
      std::vector<std::string> names;
      for (const auto& [n, _] : procs_) names.push_back(n);
      fail(s.loc, fmt::format("unknown proc '{}'{}", s.name, suggest(s.name, names)));
    }
    const Proc& pr = *it->second;
    check_results(pr);
    if (s.exprs.size() != pr.params.size())
      fail(s.loc, fmt::format("proc '{}' takes {} argument(s), {} given", pr.name, pr.params.size(), s.exprs.size()));
    if (std::find(proc_stack_.begin(), proc_stack_.end(), pr.name) != proc_stack_.end())
      fail(s.loc, fmt::format("proc '{}' calls itself (procs are inlined: no recursion)", pr.name));
    if (static_cast<int>(proc_stack_.size()) >= kMaxProcDepth)
      fail(s.loc, fmt::format("procs inlined more than {} levels deep", kMaxProcDepth));
    std::vector<std::uint32_t> arg_slots;
    for (std::size_t i = 0; i < s.exprs.size(); ++i) {
      compile_expr(s.exprs[i]);
      std::uint32_t slot = hidden_slot(fmt::format("{}.{}", pr.name, pr.params[i]));
      emit(Opc::kStore, s.loc, slot);
      arg_slots.push_back(slot);
    }
    auto saved_scopes = std::move(scopes_);
    auto saved_loops = std::move(loops_);
    scopes_.clear();
    loops_.clear();
    if (s.results.size() != pr.results.size())
      fail(s.loc, fmt::format("proc '{}' gives {} result(s): write '-> NAME' for each", pr.name, pr.results.size()));
    scopes_.emplace_back();
    for (std::size_t i = 0; i < pr.params.size(); ++i) scopes_.back().vars[pr.params[i]] = arg_slots[i];
    std::vector<std::uint32_t> result_slots;
    for (const auto& r : pr.results) {
      std::uint32_t slot = hidden_slot(fmt::format("{}.{}", pr.name, r));
      scopes_.back().vars[r] = slot;
      result_slots.push_back(slot);
    }
    proc_stack_.push_back(pr.name);
    compile_block(pr.body, lanes);
    proc_stack_.pop_back();
    scopes_ = std::move(saved_scopes);
    loops_ = std::move(saved_loops);
    for (std::size_t i = 0; i < result_slots.size(); ++i) {
      emit(Opc::kLoad, s.loc, result_slots[i]);
      emit(Opc::kStore, s.loc, assign_target(s.results[i].first, s.results[i].second));
    }
  }

  void finish_loop(std::size_t break_target, std::size_t continue_target) {
    for (std::size_t at : loops_.back().breaks) patch(at, break_target);
    for (std::size_t at : loops_.back().continues) patch(at, continue_target);
    loops_.pop_back();
  }

  // ---- ops ----
  static std::string op_text(const Stmt& s) {
    if (!s.text.empty()) return s.text;
    const SourceFile* f = s.loc.file;
    std::string line = f ? f->line_text(s.loc.line) : s.name;
    std::string t = line.substr(std::min<std::size_t>(line.size(), static_cast<std::size_t>(s.loc.col - 1)));
    auto hash = t.find('#');
    if (hash != std::string::npos) t = t.substr(0, hash);
    auto semi = t.find_first_of(";}");
    if (semi != std::string::npos) t = t.substr(0, semi);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.pop_back();
    return t;
  }

  // A pipeline statement (producer_acquire NAME STATE ...) is compiled as the statements it stands for.
  void compile_pipeline_statement(const Stmt& s, int lanes) {
    std::string name = pipeline_named(s);
    auto it = pipelines_.find(name);
    if (it == pipelines_.end()) {
      std::vector<std::string> names;
      for (const auto& [n, _] : pipelines_) names.push_back(n);
      fail(s.operands[0].loc, fmt::format("unknown pipeline '{}'{}", name, suggest(name, names)));
    }
    compile_block(lower_pipeline_statement(s, it->second, op_text(s)), lanes);
  }

  void compile_op(const Stmt& s, int lanes) {
    if (is_pipeline_statement(s.name)) {
      compile_pipeline_statement(s, lanes);
      return;
    }
    if (const OpAlias* alias = find_alias(s.name)) {  // a PTX spelling: the op it stands for (text as written)
      Stmt t = s;
      t.name = alias->op;
      if (!alias->flag.empty()) {
        Operand flag;
        flag.loc = s.loc;
        flag.values.push_back(Expr{Expr::Kind::kName, 0, std::string(alias->flag), {}, s.loc});
        t.operands.push_back(std::move(flag));
      }
      compile_op(t, lanes);
      return;
    }
    auto kind = find_op(s.name);
    if (!kind) {
      std::vector<std::string> names;
      for (const auto& o : all_ops()) names.emplace_back(o.name);
      fail(s.loc, fmt::format("unknown op '{}'{}", s.name, suggest(s.name, names)));
    }
    const OpSpec& spec = op_spec(*kind);
    OpDesc d;
    d.kind = *kind;
    d.lanes = static_cast<std::uint8_t>(lanes);
    d.loc = s.loc;
    d.origin = s.origin;
    d.text = op_text(s);
    d.attrs.resize(spec.attrs.size());
    d.attr_index.fill(-1);
    for (std::size_t i = 0; i < spec.attrs.size(); ++i) d.attr_index[static_cast<int>(spec.attrs[i].attr)] = static_cast<std::int8_t>(i);
    std::vector<const Operand*> given(spec.attrs.size(), nullptr);
    auto attr_index = [&](std::string_view name) -> int {
      for (std::size_t i = 0; i < spec.attrs.size(); ++i)
        if (spec.attrs[i].name == name) return static_cast<int>(i);
      return -1;
    };
    auto attr_list = [&] {
      std::vector<std::string> v;
      for (const auto& a : spec.attrs) v.emplace_back(a.name);
      return v.empty() ? std::string("none") : fmt::format("{}", fmt::join(v, ", "));
    };
    std::size_t next_positional = 0;
    for (const Operand& o : s.operands) {
      int idx = -1;
      if (o.key) {
        idx = attr_index(*o.key);
        if (idx < 0) {
          std::vector<std::string> names;
          for (const auto& a : spec.attrs) names.emplace_back(a.name);
          fail(o.loc, fmt::format("unknown attribute '{}' for '{}'{} (attributes: {})", *o.key, spec.name,
                                  suggest(*o.key, names), attr_list()));
        }
      } else {
        // A bare word naming a flag sets it, wherever it stands.
        const Expr& v = o.values[0];
        if (v.kind == Expr::Kind::kName) {
          int f = attr_index(v.name);
          if (f >= 0 && spec.attrs[f].type == AttrType::kFlag) idx = f;
        }
        while (idx < 0 && next_positional < spec.positional.size()) {
          int p = attr_index(spec.positional[next_positional++]);
          if (given[p] == nullptr && spec.attrs[p].type != AttrType::kFlag) idx = p;
        }
        if (idx < 0) fail(o.loc, fmt::format("unexpected operand for '{}' (attributes: {})", spec.name, attr_list()));
      }
      if (given[idx] != nullptr) fail(o.loc, fmt::format("'{}' given twice", spec.attrs[idx].name));
      given[idx] = &o;
    }
    for (std::size_t i = 0; i < spec.attrs.size(); ++i) {
      const AttrSpec& a = spec.attrs[i];
      AttrSlot& slot = d.attrs[i];
      slot.first = static_cast<std::uint8_t>(d.base_values.size());
      if (given[i] == nullptr) {
        if (a.required) fail(s.loc, fmt::format("'{}' needs {}=", spec.name, a.name));
        d.base_values.push_back(a.default_value);
        slot.length = 1;
        continue;
      }
      slot.present = true;
      bind_attr(d, a, slot, *given[i]);
    }
    if (s.results.size() != static_cast<std::size_t>(spec.results)) {
      if (spec.results == 0) fail(s.loc, fmt::format("'{}' produces no value ('->' not allowed)", spec.name));
      fail(s.loc, fmt::format("'{}' produces {} value(s): write '-> NAME'", spec.name, spec.results));
    }
    check_op(d, spec, s);
    if (d.base_values.size() > kMaxArgValues) throw std::logic_error(fmt::format("'{}' has more argument values than kMaxArgValues", spec.name));
    // Operand values are pushed in slot order; the interpreter pops them back into base_values.
    std::uint32_t index = static_cast<std::uint32_t>(role_->ops.size());
    for (const auto& [name, loc] : s.results) d.result_slots.push_back(assign_target(name, loc));
    if (++ops_ > kMaxOps)
      fail(s.loc, fmt::format("the kernel has more than {} ops after procs are inlined (are calls nested too often?)", kMaxOps));
    role_->ops.push_back(std::move(d));
    for (std::size_t i = 0; i < pending_dynamic_.size(); ++i) compile_expr(*pending_dynamic_[i]);
    stack_depth_ -= static_cast<int>(pending_dynamic_.size());
    pending_dynamic_.clear();
    emit(Opc::kOp, s.loc, index);
  }

  void bind_value(OpDesc& d, const Expr& e) {
    if (auto v = fold(e)) {
      d.base_values.push_back(*v);
    } else {
      d.dynamic_slots.push_back(static_cast<std::uint8_t>(d.base_values.size()));
      d.base_values.push_back(0);
      pending_dynamic_.push_back(&e);
    }
  }

  std::string word_of(const Operand& o, const char* what) {
    const Expr& e = o.values[0];
    if (o.tuple || (e.kind != Expr::Kind::kName && e.kind != Expr::Kind::kWord))
      fail(o.loc, fmt::format("expected {} here", what));
    return e.name;
  }

  void bind_attr(OpDesc& d, const AttrSpec& a, AttrSlot& slot, const Operand& o) {
    slot.length = 1;
    switch (a.type) {
      case AttrType::kInt:
      case AttrType::kFlag:
        if (o.tuple) fail(o.loc, fmt::format("{}= takes one value, not a tuple", a.name));
        if (a.type == AttrType::kFlag && !o.key) {
          d.base_values.push_back(1);
        } else {
          bind_value(d, o.values[0]);
        }
        return;
      case AttrType::kTuple:
        if (o.values.size() > 5) fail(o.loc, fmt::format("{}= has at most 5 dimensions", a.name));
        slot.length = static_cast<std::uint8_t>(o.values.size());
        for (const auto& e : o.values) bind_value(d, e);
        return;
      case AttrType::kShape:
        d.shape = word_of(o, "a shape");
        d.base_values.push_back(0);
        return;
      case AttrType::kDtype:
        d.dtype = word_of(o, "a type name");
        d.base_values.push_back(0);
        return;
      case AttrType::kTensor: {
        std::string name = word_of(o, "a tensor name");
        slot.decl = lookup_decl(name, AttrType::kTensor, o.loc);
        d.base_values.push_back(0);
        return;
      }
      case AttrType::kNamedBar: {
        const Expr& e = o.values[0];
        if (e.kind == Expr::Kind::kName && decl_kind_.count(e.name)) {
          int idx = lookup_decl(e.name, AttrType::kNamedBar, o.loc);
          d.base_values.push_back(program_->named_barriers[idx].id);
          return;
        }
        // A number, or an expression of the warp's variables (as PTX's `bar.sync a` with a register operand: one
        // named barrier per consumer warpgroup, say); a run-time value outside 0..15 is diagnosed where it is used.
        if (auto v = fold(e); v && (*v < 0 || *v >= kNamedBarriers))
          fail(e.loc, fmt::format("named barrier id {} out of range 0..{}", *v, kNamedBarriers - 1));
        bind_value(d, e);
        return;
      }
      case AttrType::kSem: {
        std::string w = word_of(o, "a memory order (relaxed, acquire, release, acq_rel)");
        auto m = mem_order(w);
        if (!m) fail(o.loc, fmt::format("unknown memory order '{}' (relaxed, acquire, release, acq_rel)", w));
        d.base_values.push_back(static_cast<std::int64_t>(*m));
        return;
      }
      case AttrType::kBarrier:
      case AttrType::kSmem:
      case AttrType::kGlobal: {
        const Expr& e = o.values[0];
        if (o.tuple || (e.kind != Expr::Kind::kName && e.kind != Expr::Kind::kIndex))
          fail(o.loc, fmt::format("expected a reference to {} here", decl_what(a.type)));
        slot.decl = lookup_decl(e.name, a.type, e.loc);
        int size = a.type == AttrType::kBarrier ? program_->mbarriers[slot.decl].size
                   : a.type == AttrType::kSmem  ? program_->smems[slot.decl].size
                                                : program_->globals[slot.decl].size;
        bool array = a.type == AttrType::kBarrier ? program_->mbarriers[slot.decl].array
                     : a.type == AttrType::kSmem  ? program_->smems[slot.decl].array
                                                  : program_->globals[slot.decl].array;
        if (e.kind == Expr::Kind::kName) {
          if (array) fail(e.loc, fmt::format("'{}' is an array of {}: write {}[i]", e.name, size, e.name));
          d.base_values.push_back(0);
          return;
        }
        if (auto v = fold(e.args[0])) {
          if (*v < 0 || *v >= size)
            fail(e.args[0].loc, fmt::format("index {} out of range: '{}' has {} elements", *v, e.name, size));
        }
        bind_value(d, e.args[0]);
        return;
      }
    }
  }

  static const char* decl_what(AttrType t) {
    switch (t) {
      case AttrType::kBarrier: return "an mbarrier";
      case AttrType::kSmem: return "an smem buffer";
      case AttrType::kTensor: return "a tensor";
      case AttrType::kNamedBar: return "a named_barrier";
      case AttrType::kGlobal: return "a global word";
      default: return "a declaration";
    }
  }

  int lookup_decl(const std::string& name, AttrType want, const SourceLoc& loc) {
    const auto what = decl_what;
    auto it = decl_kind_.find(name);
    if (it == decl_kind_.end() && pipelines_.count(name)) {
      std::vector<std::string> parts;
      for (const auto& b : pipelines_.at(name).barriers()) parts.push_back(b.name);
      fail(loc, fmt::format("'{}' is a pipeline: name one of its barriers ({})", name, fmt::join(parts, ", ")));
    }
    if (it == decl_kind_.end()) {
      std::vector<std::string> names;
      for (const auto& [n, k] : decl_kind_)
        if (k.first == want) names.push_back(n);
      fail(loc, fmt::format("unknown {} '{}'{}", std::string(what(want)).substr(std::string(what(want)).find(' ') + 1),
                            name, suggest(name, names)));
    }
    if (it->second.first != want) fail(loc, fmt::format("'{}' is {}, not {}", name, what(it->second.first), what(want)));
    return it->second.second;
  }

  std::optional<std::int64_t> const_attr(const OpDesc& d, const OpSpec& spec, std::string_view name, int elem = 0) const {
    for (std::size_t i = 0; i < spec.attrs.size(); ++i) {
      if (spec.attrs[i].name != name) continue;
      std::uint8_t pos = static_cast<std::uint8_t>(d.attrs[i].first + elem);
      if (std::find(d.dynamic_slots.begin(), d.dynamic_slots.end(), pos) != d.dynamic_slots.end()) return std::nullopt;
      return d.base_values[pos];
    }
    return std::nullopt;
  }
  const AttrSlot& attr(const OpDesc& d, const OpSpec& spec, std::string_view name) const {
    for (std::size_t i = 0; i < spec.attrs.size(); ++i)
      if (spec.attrs[i].name == name) return d.attrs[i];
    throw std::logic_error("no such attribute");
  }
  const SourceLoc& attr_loc(const Stmt& s, std::string_view name) const {
    for (const auto& o : s.operands)
      if (o.key && *o.key == name) return o.loc;
    return s.loc;
  }

  // Rules decided before running (semantics.md); run-time values are checked again by the simulator.
  void check_op(OpDesc& d, const OpSpec& spec, const Stmt& s) {
    auto require_elect = [&] {
      if (d.lanes != 1)
        fail(s.loc, fmt::format("'{}' is issued by one thread: put it inside elect {{ }} (32 lanes would issue it 32 times)",
                                spec.name));
    };
    // PTX .sync.aligned instructions: every thread of the warp executes the same one (PTX ISA: ldmatrix, mma,
    // tcgen05.ld/st/wait, tcgen05.relinquish_alloc_permit); inside elect only one lane would.
    auto require_warp = [&](const char* ptx) {
      if (d.lanes != 32)
        fail(s.loc, fmt::format("'{}' is {} (.sync.aligned): every thread of the warp executes it, and inside elect only one "
                                "lane does; put it outside elect",
                                spec.name, ptx));
    };
    switch (d.kind) {
      case OpKind::kMbarrierInit: {
        auto c = const_attr(d, spec, "count");
        if (c && (*c < 1 || *c > kMaxArrivalCount))
          fail(attr_loc(s, "count"), fmt::format("mbarrier count {} out of range 1..{}", *c, kMaxArrivalCount));
        break;
      }
      case OpKind::kArrive: case OpKind::kArriveDrop: case OpKind::kArriveNoComplete: {
        auto c = const_attr(d, spec, "count");
        if (attr(d, spec, "count").present && c && (*c < 1 || *c > kMaxArrivalCount))
          fail(attr_loc(s, "count"), fmt::format("arrive count {} out of range 1..{}", *c, kMaxArrivalCount));
        break;
      }
      case OpKind::kArriveExpectTx: case OpKind::kExpectTx: case OpKind::kCompleteTx: {
        auto tx = const_attr(d, spec, "tx");
        if (tx && (*tx < 0 || *tx > kMaxArrivalCount))
          fail(attr_loc(s, "tx"), fmt::format("tx={} out of range 0..{} (PTX mbarrier tx-count)", *tx, kMaxArrivalCount));
        break;
      }
      case OpKind::kBarSync: case OpKind::kBarArrive: {
        if (d.lanes != 32)
          fail(s.loc, fmt::format("'{}' is .aligned (barrier.{}.aligned): every thread of the warp must execute it, and "
                                  "inside elect only one lane does (PTX ISA, bar/barrier); put it outside elect",
                                  spec.name, d.kind == OpKind::kBarSync ? "sync" : "arrive"));
        auto n = const_attr(d, spec, "threads");
        if (attr(d, spec, "threads").present && n && (*n <= 0 || *n % 32 != 0 || *n > program_->warps * 32))
          fail(attr_loc(s, "threads"),
               fmt::format("threads={} must be a positive multiple of 32, at most the CTA's {} threads", *n, program_->warps * 32));
        break;
      }
      case OpKind::kTmaLoad: case OpKind::kTmaStore: case OpKind::kTmaPrefetch:
        if (d.kind != OpKind::kTmaPrefetch) require_elect();
        check_tma(d, spec, s);
        if (d.kind != OpKind::kTmaPrefetch) check_fits_buffer(d, spec, s, d.kind == OpKind::kTmaLoad ? "dst" : "src");
        break;
      case OpKind::kCpAsync: {
        auto size = const_attr(d, spec, "size");
        if (size && *size != 4 && *size != 8 && *size != 16)
          fail(attr_loc(s, "size"), fmt::format("cp.async size={} must be 4, 8 or 16 bytes", *size));
        check_global_box(d, spec, s, "src");
        check_fits_buffer(d, spec, s, "dst");
        break;
      }
      case OpKind::kLdGlobal: check_global_box(d, spec, s, "src"); break;
      case OpKind::kStGlobal: check_global_box(d, spec, s, "dst"); break;
      case OpKind::kLdShared: case OpKind::kStShared: case OpKind::kLdmatrix: {
        if (d.kind == OpKind::kLdmatrix) require_warp("ldmatrix.sync.aligned");
        auto b = const_attr(d, spec, "bytes");
        d.bytes = b.value_or(-1);
        if (b && *b <= 0) fail(attr_loc(s, "bytes"), "bytes must be positive");
        check_fits_buffer(d, spec, s, d.kind == OpKind::kStShared ? "dst" : "src");
        break;
      }
      case OpKind::kMmaSync: require_warp("mma.sync.aligned"); resolve_shape(d, spec, s); check_mma_sync(d, s); break;
      case OpKind::kWgmma: resolve_shape(d, spec, s); check_wgmma(d, s); [[fallthrough]];
      case OpKind::kWgmmaFence: case OpKind::kWgmmaCommit: case OpKind::kWgmmaWait:
        d.collective = true;
        if (d.kind == OpKind::kWgmmaWait) {
          auto n = const_attr(d, spec, "n");
          if (n && (*n < 0 || *n > 63)) fail(s.loc, fmt::format("wait count {} out of range 0..63", *n));
        }
        if (d.lanes != 32) fail(s.loc, fmt::format("'{}' is warpgroup-collective: it cannot stand inside elect", spec.name));
        break;
      case OpKind::kTmemRelinquish:
        require_warp("tcgen05.relinquish_alloc_permit");
        check_cta_group(d, spec, s);
        break;
      case OpKind::kTmemAlloc: case OpKind::kTmemDealloc: {
        check_cta_group(d, spec, s);
        auto c = const_attr(d, spec, "cols");
        if (c && (!is_pow2(*c) || *c < 32 || *c > 512))
          fail(attr_loc(s, "cols"), fmt::format("tmem cols={} must be a power of 2 in 32..512", *c));
        if (d.lanes != 32) fail(s.loc, fmt::format("'{}' is issued by a whole warp: it cannot stand inside elect", spec.name));
        break;
      }
      case OpKind::kUmma:
        require_elect();
        resolve_shape(d, spec, s);
        check_umma(d, spec, s);
        check_cta_group(d, spec, s);
        break;
      case OpKind::kUmmaCommit: case OpKind::kClcTryCancel: require_elect(); break;
      case OpKind::kTmemCp: require_elect(); check_tmem_cp(d, s); break;
      case OpKind::kTmemLd: case OpKind::kTmemSt:
        require_warp(d.kind == OpKind::kTmemLd ? "tcgen05.ld" : "tcgen05.st");
        check_tmem_ldst(d, s);
        break;
      case OpKind::kTmemWait: {
        require_warp("tcgen05.wait");
        bool ld = attr(d, spec, "ld").present, st = attr(d, spec, "st").present;
        if (ld == st) fail(s.loc, "tmem.wait needs exactly one of 'ld' or 'st'");
        break;
      }
      case OpKind::kTmaWait: case OpKind::kCpAsyncWait: {
        auto n = const_attr(d, spec, "n");
        if (n && (*n < 0 || *n > 63)) fail(s.loc, fmt::format("wait count {} out of range 0..63", *n));
        break;
      }
      case OpKind::kAtomAdd: case OpKind::kAtomExch: case OpKind::kAtomCas: case OpKind::kAtomMax:
        if (d.lanes != 1)
          fail(s.loc, fmt::format("'{}' returns the value before the update: put it inside elect {{ }} (each of 32 lanes would "
                                  "read a different value); use red.add for an update without a result",
                                  spec.name));
        break;
      case OpKind::kRedAdd: {
        auto m = static_cast<MemOrder>(const_attr(d, spec, "sem").value_or(0));
        if (acquires(m)) fail(attr_loc(s, "sem"), "red has no acquire semantics (PTX red: .relaxed or .release)");
        break;
      }
      case OpKind::kSpin: {
        int given = 0;
        for (const char* c : {"eq", "ne", "ge", "gt", "le", "lt"}) given += attr(d, spec, c).present ? 1 : 0;
        if (given != 1) fail(s.loc, "spin needs exactly one condition: eq=, ne=, ge=, gt=, le= or lt=");
        break;
      }
      case OpKind::kGridSync:
        if (d.lanes != 32) fail(s.loc, "grid.sync is a barrier of every thread: it cannot stand inside elect");
        break;
      case OpKind::kCompute: case OpKind::kSleep: {
        auto c = const_attr(d, spec, "cycles");
        if (c && *c < 0) fail(s.loc, "cycles must not be negative");
        break;
      }
      default: break;
    }
    // Every constant against the vocabulary's range (the simulator checks run-time values against the same one).
    for (std::size_t i = 0; i < spec.attrs.size(); ++i) {
      AttrType type = spec.attrs[i].type;
      if (!d.attrs[i].present || (type != AttrType::kInt && type != AttrType::kTuple && type != AttrType::kNamedBar)) continue;
      auto range = value_range(d.kind, spec.attrs[i].attr);
      if (!range) continue;
      for (int e = 0; e < d.attrs[i].length; ++e) {
        auto v = const_attr(d, spec, spec.attrs[i].name, e);
        if (!v) {
          d.ranged_slots.push_back({static_cast<std::uint8_t>(d.attrs[i].first + e), static_cast<std::uint8_t>(i), *range});
          continue;
        }
        std::string msg = range_error(spec.attrs[i].name, *v, *range);
        if (!msg.empty()) fail(attr_loc(s, spec.attrs[i].name), msg);
      }
    }
  }

  // One kernel uses one cta_group: ptxas rejects tcgen05 ops with cta_group::1 and ::2 in one kernel (the LLVM
  // NVPTX tests were split for it, llvm-project PR 162597; CCCL PR 8297). An op without cta_group= is ::1.
  void check_cta_group(const OpDesc& d, const OpSpec& spec, const Stmt& s) {
    auto g = const_attr(d, spec, "cta_group");
    if (!g) fail(attr_loc(s, "cta_group"), "cta_group= must be a constant (1 or 2)");
    if (*g != 1 && *g != 2) fail(attr_loc(s, "cta_group"), fmt::format("cta_group={} must be 1 or 2", *g));
    if (cta_group_ && cta_group_->first != *g)
      fail(attr_loc(s, "cta_group"), fmt::format("cta_group={} here, but the tcgen05 op at line {} uses cta_group={}: one "
                                                 "kernel uses one cta_group (tcgen05.alloc, dealloc, relinquish and mma alike)",
                                                 *g, cta_group_->second, cta_group_->first));
    if (!cta_group_) cta_group_ = std::make_pair(*g, s.loc.line);
  }

  void check_tma(OpDesc& d, const OpSpec& spec, const Stmt& s) {
    const AttrSlot& t = attr(d, spec, "tensor");
    const AttrSlot& box = attr(d, spec, "box");
    static const AttrSlot kAbsent{};
    bool has_bytes = std::any_of(spec.attrs.begin(), spec.attrs.end(), [](const AttrSpec& a) { return a.name == "bytes"; });
    const AttrSlot& bytes = has_bytes ? attr(d, spec, "bytes") : kAbsent;
    if (t.present == bytes.present)
      fail(s.loc, fmt::format("'{}' needs either a tensor with box=(...) or bytes=N", spec.name));
    if (bytes.present) {
      auto b = const_attr(d, spec, "bytes");
      if (b && (*b <= 0 || *b % 16 != 0))
        fail(attr_loc(s, "bytes"), fmt::format("bytes={} must be a positive multiple of 16 (bulk copy size)", *b));
      d.bytes = b.value_or(-1);
      return;
    }
    if (!box.present) fail(s.loc, fmt::format("'{}' of a tensor needs box=(...)", spec.name));
    const TensorDecl& td = program_->tensors[t.decl];
    // A tensor map's global strides (bytes between rows, planes ...) are multiples of 16
    // (cuTensorMapEncodeTiled: globalStrides); the innermost dimension's bytes is the smallest of them.
    if (td.shape.size() > 1 && (td.shape.back() * td.bits) % 128 != 0)
      fail(attr_loc(s, "tensor"), fmt::format("tensor '{}': a row of {} x {} bits is not a multiple of 16 bytes, so its "
                                               "global strides cannot be encoded in a tensor map (cuTensorMapEncodeTiled "
                                               "needs every global stride a multiple of 16 bytes)",
                                               td.name, td.shape.back(), td.bits));
    check_box_rank(d, spec, s, box, td);
    std::int64_t elems = 1;
    for (int i = 0; i < box.length; ++i) {
      auto v = const_attr(d, spec, "box", i);
      if (!v) fail(attr_loc(s, "box"), "box dimensions must be constants (they are fixed in the tensor map)");
      if (*v < 1 || *v > 256)
        fail(attr_loc(s, "box"), fmt::format("box dimension {} = {} out of range 1..256 (cuTensorMapEncodeTiled boxDim)", i, *v));
      elems *= *v;
    }
    // Box dims are listed outermost first as in the language example, box=(rows, cols): the innermost
    // (contiguous) dimension is the last one.
    std::int64_t inner = const_attr(d, spec, "box", box.length - 1).value();
    std::int64_t inner_bits = inner * td.bits;
    if (inner_bits % (16 * 8) != 0)
      fail(attr_loc(s, "box"), fmt::format("inner box dimension {} x {} bits is not a multiple of 16 bytes (cuTensorMapEncodeTiled)",
                                           inner, td.bits));
    auto swz = const_attr(d, spec, "swizzle");
    if (swz && *swz != 0) {
      if (*swz != 32 && *swz != 64 && *swz != 128)
        fail(attr_loc(s, "swizzle"), fmt::format("swizzle={} must be 0, 32, 64 or 128", *swz));
      if (inner_bits / 8 > *swz)
        fail(attr_loc(s, "box"), fmt::format("inner box is {} bytes but the {}B swizzle allows at most {} (cuTensorMapEncodeTiled)",
                                             inner_bits / 8, *swz, *swz));
    }
    d.bytes = elems * td.bits / 8;
  }

  // An op that moves a known number of bytes between shared memory and elsewhere stays inside the buffer element it
  // names: the rest would land in (or be read from) the next element or another buffer, which the program declared for
  // other data and the hazard checker does not watch for this op. Bytes known only at run time are checked when the
  // op runs (OpContext::bytes).
  void check_fits_buffer(const OpDesc& d, const OpSpec& spec, const Stmt& s, std::string_view buffer) {
    const AttrSlot& b = attr(d, spec, buffer);
    if (!b.present || b.decl < 0 || d.bytes < 0) return;
    const SmemDecl& m = program_->smems[static_cast<std::size_t>(b.decl)];
    if (d.bytes <= m.bytes) return;
    const bool writes = buffer == "dst";
    fail(attr_loc(s, buffer),
         fmt::format("'{}' {} {} bytes {} '{}', whose elements are {} bytes: the {} bytes past the element {} (shared memory "
                     "declared for other data); make the buffer at least {} bytes or the op smaller",
                     spec.name, writes ? "writes" : "reads", d.bytes, writes ? "into" : "from", m.name, m.bytes,
                     d.bytes - m.bytes, writes ? "would overwrite the next element or another buffer" : "would come from the next element or another buffer",
                     d.bytes));
  }

  // box=(...) and at=(...) of a TMA op or a global copy: one entry per dimension of the tensor.
  void check_box_rank(const OpDesc& d, const OpSpec& spec, const Stmt& s, const AttrSlot& box, const TensorDecl& td) {
    if (box.length != td.shape.size())
      fail(attr_loc(s, "box"), fmt::format("box has {} dimensions but tensor '{}' has rank {}", box.length, td.name, td.shape.size()));
    const AttrSlot& at = attr(d, spec, "at");
    if (at.present && at.length != td.shape.size())
      fail(attr_loc(s, "at"), fmt::format("at= has {} coordinates but tensor '{}' has rank {}", at.length, td.name, td.shape.size()));
  }

  // cp.async, ld.global, st.global: bytes=N, or box=(...) [at=(...)] of the tensor named by `tensor_attr`, whose
  // bytes it moves (then the L2 sees where: docs/reference.md). Box dimensions are constants.
  void check_global_box(OpDesc& d, const OpSpec& spec, const Stmt& s, std::string_view tensor_attr) {
    // An instruction moves lanes x size bytes, at most 128 of them in one line: at least lanes x size / 128 lines.
    auto size = const_attr(d, spec, "size"), lines = const_attr(d, spec, "lines");
    if (attr(d, spec, "lines").present && size && lines && *lines < lines_needed(d.lanes, *size))
      fail(attr_loc(s, "lines"), lines_error(d.lanes, *size, *lines));
    const AttrSlot& bytes = attr(d, spec, "bytes");
    const AttrSlot& box = attr(d, spec, "box");
    const AttrSlot& t = attr(d, spec, tensor_attr);
    if (bytes.present == box.present)
      fail(s.loc, fmt::format("'{}' needs either bytes=N or box=(...) of its {}= tensor (not both)", spec.name, tensor_attr));
    if (bytes.present) {
      if (attr(d, spec, "at").present) fail(attr_loc(s, "at"), fmt::format("'{}': at= goes with box=, not with bytes=", spec.name));
      auto b = const_attr(d, spec, "bytes");
      d.bytes = b.value_or(-1);
      if (b && *b <= 0) fail(attr_loc(s, "bytes"), "bytes must be positive");
      return;
    }
    if (!t.present) fail(attr_loc(s, "box"), fmt::format("'{}': box= needs the tensor it is a box of ({}=T)", spec.name, tensor_attr));
    const TensorDecl& td = program_->tensors[t.decl];
    check_box_rank(d, spec, s, box, td);
    std::int64_t elems = 1;
    for (int i = 0; i < box.length; ++i) {
      auto v = const_attr(d, spec, "box", i);
      if (!v) fail(attr_loc(s, "box"), "box dimensions must be constants");
      constexpr std::int64_t kGiB = std::int64_t{1} << 30;  // the bytes of one op (ops.cpp's range of bytes=)
      if (*v < 1 || *v > kGiB) fail(attr_loc(s, "box"), fmt::format("box dimension {} = {} out of range 1..{}", i, *v, kGiB));
      // elems x bits is at most 8 GiB here (the box so far is within 1 GiB), so the bound needs no wider type.
      if (*v > (kGiB * 8 + 7) / (elems * td.bits))
        fail(attr_loc(s, "box"), fmt::format("the box moves more than {} bytes (a simulator limit of 1 GiB per op)", kGiB));
      elems *= *v;
    }
    d.bytes = elems * td.bits / 8;
    if (d.bytes <= 0) fail(attr_loc(s, "box"), "the box moves no whole byte");
  }

  // `m=.. n=.. k=..` (constant expressions) is the other way to write a shape word such as m64n128k16.
  void resolve_shape(OpDesc& d, const OpSpec& spec, const Stmt& s) {
    bool word = attr(d, spec, "shape").present;
    bool parts = attr(d, spec, "m").present || attr(d, spec, "n").present || attr(d, spec, "k").present;
    if (word && parts) fail(s.loc, fmt::format("'{}': give the shape either as a word or as m= n= k=, not both", spec.name));
    if (word) return;
    if (!parts) fail(s.loc, fmt::format("'{}' needs a shape (e.g. m64n128k16, or m=64 n=128 k=16)", spec.name));
    std::int64_t v[3];
    const char* names[3] = {"m", "n", "k"};
    for (int i = 0; i < 3; ++i) {
      if (!attr(d, spec, names[i]).present) fail(s.loc, fmt::format("'{}' needs {}= with the other shape parts", spec.name, names[i]));
      auto c = const_attr(d, spec, names[i]);
      if (!c) fail(attr_loc(s, names[i]), fmt::format("{}= must be a constant", names[i]));
      v[i] = *c;
    }
    d.shape = fmt::format("m{}n{}k{}", v[0], v[1], v[2]);
  }

  void check_mma_sync(OpDesc& d, const Stmt& s) {
    auto mnk = parse_mnk(d.shape);
    if (!mnk) fail(s.loc, fmt::format("'{}' is not an mma shape (e.g. m16n8k16)", d.shape));
    auto bits = dtype_bits(d.dtype);
    if (!bits) fail(s.loc, fmt::format("unknown dtype '{}'", d.dtype));
    // PTX 9.7.14 mma.sync m16n8: f16/bf16 k8, k16; tf32 k4, k8; 8-bit (e4m3, e5m2, s8, u8) k16, k32.
    const std::string& t = d.dtype;
    bool b16 = t == "f16" || t == "bf16", tf32 = t == "tf32", b8 = t == "e4m3" || t == "e5m2" || t == "s8" || t == "u8";
    bool ok = mnk->m == 16 && mnk->n == 8 &&
              ((b16 && (mnk->k == 8 || mnk->k == 16)) || (b8 && (mnk->k == 16 || mnk->k == 32)) ||
               (tf32 && (mnk->k == 4 || mnk->k == 8)));
    if (!ok) fail(s.loc, fmt::format("mma.sync has no shape {} for {} (sm80: m16n8k8/k16 f16/bf16, m16n8k16/k32 8-bit, m16n8k4/k8 tf32)", d.shape, d.dtype));
    d.m = mnk->m, d.n = mnk->n, d.k = mnk->k;
    d.operand_bits = *bits;
  }

  void check_wgmma(OpDesc& d, const Stmt& s) {
    auto mnk = parse_mnk(d.shape);
    if (!mnk) fail(s.loc, fmt::format("'{}' is not a wgmma shape (e.g. m64n128k16)", d.shape));
    auto bits = dtype_bits(d.dtype);
    if (!bits) fail(s.loc, fmt::format("unknown dtype '{}'", d.dtype));
    // PTX 9.7.15 wgmma.mma_async .atype/.btype: f16, bf16 (K 16), tf32 (K 8), e4m3, e5m2, s8, u8 (K 32).
    const std::string& t = d.dtype;
    std::int64_t want_k = t == "f16" || t == "bf16" ? 16 : t == "tf32" ? 8 : t == "e4m3" || t == "e5m2" || t == "s8" || t == "u8" ? 32 : 0;
    if (want_k == 0) fail(s.loc, fmt::format("wgmma has no dtype '{}' (f16, bf16, tf32, e4m3, e5m2, s8, u8)", d.dtype));
    if (mnk->m != 64 || mnk->k != want_k || mnk->n < 8 || mnk->n > 256 || mnk->n % 8 != 0)
      fail(s.loc, fmt::format("wgmma has no shape {} for {}: PTX has m64nNk{} with N = 8..256 step 8 (PTX 9.7.15)", d.shape,
                              d.dtype, want_k));
    d.m = mnk->m, d.n = mnk->n, d.k = mnk->k;
    d.operand_bits = *bits;
  }

  void check_umma(OpDesc& d, const OpSpec& spec, const Stmt& s) {
    auto mnk = parse_mnk(d.shape);
    if (!mnk) fail(s.loc, fmt::format("'{}' is not an MMA shape (e.g. m128n256k16)", d.shape));
    auto group = const_attr(d, spec, "cta_group");
    if (!group || (*group != 1 && *group != 2)) fail(attr_loc(s, "cta_group"), "cta_group must be 1 or 2");
    const std::string& kind = d.dtype;
    std::int64_t want_k = 0;
    int bits = 16;
    std::vector<std::int64_t> ms = *group == 1 ? std::vector<std::int64_t>{64, 128} : std::vector<std::int64_t>{128, 256};
    if (kind == "f16") want_k = 16, bits = 16;
    else if (kind == "tf32") want_k = 8, bits = 32;
    else if (kind == "f8f6f4" || kind == "i8") want_k = 32, bits = 8;
    else if (kind == "mxf8f6f4") want_k = 32, bits = 8, ms = *group == 1 ? std::vector<std::int64_t>{128} : std::vector<std::int64_t>{128, 256};
    else if (kind == "mxf4" || kind == "mxf4nvf4") want_k = 64, bits = 4, ms = *group == 1 ? std::vector<std::int64_t>{128} : std::vector<std::int64_t>{128, 256};
    else fail(s.loc, fmt::format("unknown umma kind '{}' (f16, tf32, f8f6f4, i8, mxf8f6f4, mxf4, mxf4nvf4)", kind));
    std::int64_t nstep = *group == 1 ? 8 : 16;
    bool m_ok = std::find(ms.begin(), ms.end(), mnk->m) != ms.end();
    if (!m_ok || mnk->k != want_k || mnk->n < nstep || mnk->n > 256 || mnk->n % nstep != 0)
      fail(s.loc, fmt::format("tcgen05.mma kind::{} cta_group::{} has no shape {} (M in {{{}}}, N {}..256 step {}, K {}; PTX 9.7.16)",
                              kind, *group, d.shape, fmt::join(ms, ","), nstep, nstep, want_k));
    d.m = mnk->m, d.n = mnk->n, d.k = mnk->k;
    d.operand_bits = bits;
  }

  void check_tmem_ldst(OpDesc& d, const Stmt& s) {
    // shape .num: 32x32b.xN -> N regs per thread; 16x64b.xN -> N; 16x128b.xN -> 2N; 16x256b.xN -> 4N; 16x32bx2.xN -> N.
    static const std::vector<std::pair<std::string, int>> bases = {
        {"32x32b", 1}, {"16x64b", 1}, {"16x128b", 2}, {"16x256b", 4}, {"16x32bx2", 1}};
    auto dot = d.shape.find(".x");
    std::string base = d.shape.substr(0, dot);
    int regs_per = 0;
    for (const auto& [b, r] : bases)
      if (b == base) regs_per = r;
    long num = 0;
    if (regs_per == 0 || dot == std::string::npos || std::sscanf(d.shape.c_str() + dot + 2, "%ld", &num) != 1 ||
        !is_pow2(num) || num > 128 || fmt::format("{}.x{}", base, num) != d.shape)
      fail(s.loc, fmt::format("'{}' is not a tcgen05.ld/st shape (32x32b, 16x64b, 16x128b, 16x256b, 16x32bx2 with .x1 .. .x128)",
                              d.shape));
    d.bytes = 32 * 4 * regs_per * num;  // 32 lanes x registers per thread x 4 bytes
  }

  void check_tmem_cp(OpDesc& d, const Stmt& s) {
    // PTX 9.7.16 tcgen05.cp .shape: .128x256b, .4x256b, .128x128b, .64x128b.warpx2::..., .32x128b.warpx4 (the
    // warpx qualifiers say how the rows are broadcast over the warps' lanes; the bytes read are the same).
    static const std::vector<std::pair<std::string, int>> shapes = {
        {"128x256b", 4096}, {"4x256b", 128},          {"128x128b", 2048},      {"64x128b", 1024},
        {"32x128b", 512},   {"64x128b.warpx2", 1024}, {"32x128b.warpx4", 512}};
    for (const auto& [sh, bytes] : shapes)
      if (sh == d.shape) d.bytes = bytes;
    if (d.bytes < 0)
      fail(s.loc, fmt::format("'{}' is not a tcgen05.cp shape (128x256b, 4x256b, 128x128b, 64x128b[.warpx2], 32x128b[.warpx4])",
                              d.shape));
  }

  const File& file_;
  const Kernel* kernel_ = nullptr;
  Program* program_ = nullptr;
  RoleCode* role_ = nullptr;
  std::map<std::string, std::int64_t> constants_;
  std::set<std::string> predefined_;
  std::map<std::string, const Proc*> procs_;
  std::vector<std::string> proc_stack_;
  std::vector<std::pair<std::string, std::int64_t>> param_values_;
  std::map<std::string, std::pair<AttrType, int>> decl_kind_;
  std::map<std::string, PipelineInfo> pipelines_;  // `pipeline` declarations by name
  std::vector<Scope> scopes_;
  std::vector<LoopLabels> loops_;
  std::vector<const Expr*> pending_dynamic_;
  std::optional<std::pair<std::int64_t, int>> cta_group_;  // the cta_group of the kernel's first tcgen05 op, and its line
  std::int64_t global_words_ = 0;          // words of every `global` declaration
  int stack_depth_ = 0;
  int region_depth_ = 0;
  std::int64_t instructions_ = 0;  // emitted so far, all roles
  std::int64_t ops_ = 0;
};

}  // namespace

Program compile(const File& file, const ParamOverrides& overrides, const std::string& kernel_name,
                const std::map<std::string, std::int64_t>& predefined) {
  Compiler c(file, overrides, predefined);
  return c.compile_kernel(kernel_name);
}

std::pair<std::string, std::int64_t> parse_define(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw InputError(fmt::format("-D {}: expected NAME=VALUE", text));
  std::string name = text.substr(0, eq), value = text.substr(eq + 1);
  bool neg = !value.empty() && value[0] == '-';
  std::string digits = neg ? value.substr(1) : value;
  std::int64_t mult = 1;
  if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'M')) {
    mult = digits.back() == 'K' ? 1024 : 1024 * 1024;
    digits.pop_back();
  }
  int base = digits.rfind("0x", 0) == 0 || digits.rfind("0X", 0) == 0 ? 16 : 10;
  if (base == 16) digits = digits.substr(2);
  std::uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (digits.empty() || ec == std::errc::invalid_argument || end != digits.data() + digits.size())
    throw InputError(fmt::format("-D {}: '{}' is not an integer", text, value));
  // the value, sign and K/M included, must be a 64-bit signed integer
  constexpr std::uint64_t kMaxMagnitude = std::uint64_t{1} << 63;  // |INT64_MIN|
  std::uint64_t limit = neg ? kMaxMagnitude : kMaxMagnitude - 1;
  if (ec == std::errc::result_out_of_range || magnitude > limit / static_cast<std::uint64_t>(mult))
    throw InputError(fmt::format("-D {}: '{}' is outside the 64-bit integer range", text, value));
  magnitude *= static_cast<std::uint64_t>(mult);
  std::int64_t v = neg ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
  return {name, v};
}

}  // namespace smpipe::isa
