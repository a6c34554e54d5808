#include "traces/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>

#include "isa/source.hpp"

namespace smpipe::traces {

namespace {

constexpr int kMaxGroup = 4;  // warps in a warpgroup

bool is_collective(const std::string& op) { return op.rfind("wgmma", 0) == 0; }
// Ops issued by one thread of a warp (`elect { }` in .pipe) when the warp's role runs on all its lanes.
bool is_single_lane(const std::string& op) {
  return op.rfind("tma.", 0) == 0 || op == "arrive.expect_tx" || op == "expect_tx";
}

// A name for the program made of free text (the kernel's name): letters, digits and '_' only, at most 64.
std::string identifier(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 64)) out += (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out = "r_" + out;
  return out;
}

// Where K2's boxes lie (kernel "k2_gemm", a 1-D grid of single CTAs and the params of a GEMM; docs/replay.md, "Box
// coordinates"). Its persistent scheduler gives CTA u the tiles u, u + U, u + 2U, ... (U CTAs in the grid) and maps
// tile t to (m-block, n-block) in raster groups of `group` m-blocks, m fastest inside a group
// (validation/kernels/src/k2_gemm.cuh, tile_coords); the traced (probe) build takes params.group_m as the group (its
// constexpr GROUP_M), <= 0 one group of all rows. The probe build refuses clusters, so a trace of clusters is not placed.
struct K2Layout {
  HwGemm g;
  std::int64_t n_mrow = 0, n_nblk = 0, n_tiles = 0, group = 0;
};

// The names the layout's program uses (a trace whose declarations take one of them is not placed).
constexpr std::array<const char*, 6> kLayoutNames{"unit", "tile", "tile_r", "tile_rows", "tm", "tn"};

// K2's layout of `t`, or why its boxes stay at their tensors' origins ("" when it is not a K2 trace with a GEMM's params).
std::optional<K2Layout> k2_layout(const HwTrace& t, std::string& why) {
  if (t.kernel != "k2_gemm" || !t.gemm) return std::nullopt;
  if (t.grid[0] <= 0 || t.grid[1] != 1 || t.grid[2] != 1 || t.cluster[0] != 1 || t.cluster[1] != 1 || t.cluster[2] != 1) {
    why = "a grid of single CTAs along x (params.grid, params.cluster)";
    return std::nullopt;
  }
  for (const char* n : {"A", "B"}) {
    const HwTensor* x = t.tensor(n);
    if (!x || x->shape.size() != 2) {
      why = "two-dimensional tensors A and B";
      return std::nullopt;
    }
  }
  for (const char* n : kLayoutNames)
    if (t.barrier(n) || t.tensor(n) || t.smem_buffer(n)) {
      why = fmt::format("the name '{}' free (the trace declares it)", n);
      return std::nullopt;
    }
  K2Layout l;
  l.g = *t.gemm;
  l.n_mrow = (l.g.m + l.g.bm - 1) / l.g.bm;
  l.n_nblk = (l.g.n + l.g.bn - 1) / l.g.bn;
  const std::int64_t k_blocks = (l.g.k + l.g.bk - 1) / l.g.bk;
  // every coordinate a box takes, a tile's first row or column plus less than a tile, is a TMA coordinate (32 bits)
  if (l.n_mrow * l.g.bm > INT32_MAX + std::int64_t{1} || l.n_nblk * l.g.bn > INT32_MAX + std::int64_t{1} ||
      k_blocks * l.g.bk > INT32_MAX + std::int64_t{1}) {
    why = "tiles whose coordinates fit in 32 bits (params M, N, K and tile)";
    return std::nullopt;
  }
  l.n_tiles = l.n_mrow * l.n_nblk;
  l.group = l.g.group_m <= 0 ? l.n_mrow : std::min(l.n_mrow, l.g.group_m);
  return l;
}

// An expression as .pipe text, parenthesised only where the operators' precedence needs it.
std::string expr_text(const isa::Expr& e, int outer = 0, bool right = false) {
  switch (e.kind) {
    case isa::Expr::Kind::kInt: return std::to_string(e.value);
    case isa::Expr::Kind::kName: return e.name;
    case isa::Expr::Kind::kCall: {
      std::vector<std::string> args;
      for (const auto& a : e.args) args.push_back(expr_text(a));
      return fmt::format("{}({})", e.name, fmt::join(args, ", "));
    }
    case isa::Expr::Kind::kBinary: {
      const int p = e.name == "+" || e.name == "-" ? 1 : 2;  // the generator's operators: + - * / %
      std::string s = fmt::format("{} {} {}", expr_text(e.args[0], p, false), e.name, expr_text(e.args[1], p, true));
      return p < outer || (p == outer && right) ? "(" + s + ")" : s;
    }
    default: return "?";
  }
}

// A step of a role's program: the event each warp of the group (by position) runs there, -1 = none.
struct Item {
  std::array<int, kMaxGroup> ev{-1, -1, -1, -1};
};

// The warps' events as step ids: two events have the same id when they are the same step of the program
// (time aside): op, barrier, index, phase, bytes, iteration and tensor all equal.
std::vector<std::vector<std::int32_t>> step_ids(const std::vector<const HwWarp*>& group) {
  using Key = std::tuple<const std::string&, const std::string&, const std::optional<std::int64_t>&, const std::optional<int>&,
                         const std::int64_t&, const std::optional<std::int64_t>&, const std::string&>;
  auto key = [](const HwEvent& e) { return Key(e.op, e.barrier, e.index, e.phase, e.bytes, e.iteration, e.tensor); };
  auto less = [&](const HwEvent* x, const HwEvent* y) { return key(*x) < key(*y); };
  std::map<const HwEvent*, std::int32_t, decltype(less)> ids(less);
  std::vector<std::vector<std::int32_t>> out(group.size());
  for (std::size_t w = 0; w < group.size(); ++w)
    for (const HwEvent& e : group[w]->events)
      out[w].push_back(ids.try_emplace(&e, static_cast<std::int32_t>(ids.size())).first->second);
  return out;
}

// Merges warp `j`'s events [b, e) into the items of the group's program: a shortest common supersequence by
// longest common subsequence (align_steps). Throws when the replay's comparison budget is spent.
std::vector<Item> merge_segment(const std::vector<Item>& items, const std::vector<std::vector<std::int32_t>>& ids, int j, int b, int e,
                                std::int64_t& cells_left, const std::string& where) {
  std::vector<std::int32_t> a, c(ids[j].begin() + b, ids[j].begin() + e);
  a.reserve(items.size());
  for (const Item& it : items) {
    int w = 0;
    while (it.ev[w] < 0) ++w;
    a.push_back(ids[w][it.ev[w]]);
  }
  auto merged = align_steps(a, c, cells_left);
  if (!merged)
    throw isa::InputError(fmt::format("{}: the warps' events between two wgmma ops ({} and {} steps) differ too much to be merged "
                                      "into one warpgroup program within the replay's {} comparisons (the four warps of a "
                                      "warpgroup run nearly the same ops)",
                                      where, a.size(), c.size(), kMaxAlignCells));
  std::vector<Item> out;
  out.reserve(merged->size());
  for (auto [i, k] : *merged) {
    Item it = i >= 0 ? items[i] : Item{};
    if (k >= 0) it.ev[j] = b + k;
    out.push_back(it);
  }
  return out;
}

// The program of one role for one recorded CTA: the warps' events merged into one sequence of steps.
std::vector<Item> merge_group(const std::vector<const HwWarp*>& group, const std::string& where, std::int64_t& cells_left) {
  const std::vector<std::vector<std::int32_t>> ids = step_ids(group);
  // Collective events split every warp's sequence into segments; they must agree across the group.
  std::vector<std::vector<int>> anchors(group.size());
  for (std::size_t w = 0; w < group.size(); ++w)
    for (int k = 0; k < static_cast<int>(group[w]->events.size()); ++k)
      if (is_collective(group[w]->events[k].op)) anchors[w].push_back(k);
  for (std::size_t w = 1; w < group.size(); ++w) {
    if (anchors[w].size() != anchors[0].size())
      throw isa::InputError(fmt::format("{}: warps {} and {} of one warpgroup record {} and {} wgmma ops; warpgroup-collective "
                                        "ops must be the same in all four warps",
                                        where, group[0]->warp, group[w]->warp, anchors[0].size(), anchors[w].size()));
    for (std::size_t a = 0; a < anchors[0].size(); ++a)
      if (ids[0][anchors[0][a]] != ids[w][anchors[w][a]])
        throw isa::InputError(fmt::format("{}: warp {} event {} ('{}') and warp {} event {} ('{}') are the same warpgroup-collective "
                                          "step but differ",
                                          where, group[0]->warp, anchors[0][a], group[0]->events[anchors[0][a]].op, group[w]->warp,
                                          anchors[w][a], group[w]->events[anchors[w][a]].op));
  }
  std::vector<Item> out;
  std::size_t segments = anchors[0].size() + 1;
  for (std::size_t s = 0; s < segments; ++s) {
    std::vector<Item> seg;
    for (std::size_t w = 0; w < group.size(); ++w) {
      int b = s == 0 ? 0 : anchors[w][s - 1] + 1;
      int e = s < anchors[w].size() ? anchors[w][s] : static_cast<int>(group[w]->events.size());
      if (w == 0) {
        for (int k = b; k < e; ++k) {
          Item it;
          it.ev[0] = k;
          seg.push_back(it);
        }
      } else {
        seg = merge_segment(seg, ids, static_cast<int>(w), b, e, cells_left, where);
      }
    }
    out.insert(out.end(), seg.begin(), seg.end());
    if (s < anchors[0].size()) {
      Item it;
      for (std::size_t w = 0; w < group.size(); ++w) it.ev[w] = anchors[w][s];
      out.push_back(it);
    }
  }
  return out;
}

class Generator {
 public:
  Generator(const HwTrace& t, const ReplayOptions& o, Replay& r)
      : t_(t), o_(o), r_(r), layout_(k2_layout(t, no_layout_)), src_(std::make_shared<isa::SourceFile>(r.source_name, "")) {}

  void run() {
    if (o_.probe_cycles < -1 || o_.probe_cycles > kMaxProbeCycles)
      throw isa::InputError(fmt::format("{} cycles per probe record is not in 0..{}", o_.probe_cycles, kMaxProbeCycles));
    r_.probe_cycles = o_.probe_cycles >= 0 ? o_.probe_cycles : probe_cost(t_);
    r_.own_cycles = o_.own_cycles;
    r_.own_source = o_.own_source;
    for (const auto& [kind, cycles] : o_.own_cycles)
      if (cycles < 0 || cycles > kMaxOwnCycles)
        throw isa::InputError(fmt::format("{} cycles of the kernel's own instructions before '{}' is not in 0..{}", cycles,
                                          isa::printable(kind), kMaxOwnCycles));
    const std::int64_t first = t_.ctas.front().cta;
    for (std::size_t s = 0; s < t_.ctas.size(); ++s)
      if (t_.ctas[s].cta != first + static_cast<std::int64_t>(s))
        throw isa::InputError(fmt::format("{}: the recorded CTAs must be consecutive ids (ctas[{}] is CTA {}, expected {})", t_.path, s,
                                          t_.ctas[s].cta, first + static_cast<std::int64_t>(s)));
    const std::int64_t slots = static_cast<std::int64_t>(t_.ctas.size());
    std::int64_t grid = t_.grid[0] * std::max<std::int64_t>(1, t_.grid[1]) * std::max<std::int64_t>(1, t_.grid[2]);
    bool full = o_.full_grid && grid > 0;
    if (o_.full_grid && grid <= 0) r_.notes.push_back("the trace has no params.grid: only the recorded CTAs are launched");
    if (full && (t_.grid[1] > 1 || t_.grid[2] > 1 || first + slots > grid))
      throw isa::InputError(fmt::format("{}: the full-grid replay needs a 1-D grid holding the recorded CTAs (params.grid {}x{}x{})",
                                        t_.path, t_.grid[0], t_.grid[1], t_.grid[2]));
    r_.ctas = full ? grid : slots;
    // What the run will cost: each launched CTA runs the events of one recorded CTA (at most ceil(ctas / slots)
    // CTAs run each recorded one).
    std::int64_t events = 0, most = 0;
    for (const auto& c : t_.ctas) {
      std::int64_t e = 0;
      for (const auto& w : c.warps) e += static_cast<std::int64_t>(w.events.size());
      events += e;
      most = std::max(most, e);
    }
    const std::int64_t per_slot = r_.ctas / slots, records = per_slot * events + (r_.ctas % slots) * most;
    if (records > kMaxReplayRecords)
      throw isa::InputError(fmt::format("{}: replaying {} CTAs (params.grid {}x{}x{}) of the {} recorded ones would simulate {} probe "
                                        "records, more than the {} a replay may (use --recorded-only to launch the recorded CTAs alone)",
                                        t_.path, r_.ctas, t_.grid[0], t_.grid[1], t_.grid[2], slots, records, kMaxReplayRecords));
    first_ = full ? first : 0;
    for (std::int64_t s = 0; s < slots; ++s) r_.slot_cta.push_back(first_ + s);
    if (t_.truncated)
      r_.notes.push_back(fmt::format("the trace is truncated (each warp recorded its first {} tiles): the replay runs that window "
                                     "only, and the warps' exits are not compared",
                                     t_.tile_limit));
    for (const auto& c : t_.ctas)
      for (const auto& w : c.warps)
        if (w.dropped > 0)
          r_.notes.push_back(fmt::format("CTA {} warp {} dropped {} records: its replay stops early and may hang its partners", c.cta,
                                         w.warp, w.dropped));

    if (!no_layout_.empty())
      r_.notes.push_back(fmt::format("the K2 trace's boxes stay at their tensors' origins: placing them where K2 put them needs {}",
                                     no_layout_));
    header(full, grid, slots);
    decls();
    roles(slots);
    line("}");
    // The text is complete: the positions of the tree's nodes point into it.
    *src_ = isa::SourceFile(r_.source_name, r_.text);
    r_.file.source = src_;
  }

 private:
  // ---- the syntax tree, built beside the text: a node made just before line() stands on that line ----
  isa::SourceLoc at(int col_offset = 0) const { return isa::SourceLoc{src_.get(), line_no_ + 1, indent_ * 2 + 1 + col_offset}; }
  static isa::Expr num(std::int64_t v, const isa::SourceLoc& loc) {
    isa::Expr e;
    e.kind = isa::Expr::Kind::kInt;
    e.value = v;
    e.loc = loc;
    return e;
  }
  static isa::Expr name(const std::string& n, const isa::SourceLoc& loc) {
    isa::Expr e;
    e.kind = isa::Expr::Kind::kName;
    e.name = n;
    e.loc = loc;
    return e;
  }
  // A binary operator, or (kCall) a function of two arguments.
  static isa::Expr bin(const char* op, isa::Expr a, isa::Expr b, isa::Expr::Kind kind = isa::Expr::Kind::kBinary) {
    isa::Expr e;
    e.kind = kind;
    e.name = op;
    e.loc = a.loc;
    e.args.push_back(std::move(a));
    e.args.push_back(std::move(b));
    return e;
  }
  static isa::Expr element(const std::string& n, const std::optional<std::int64_t>& index, const isa::SourceLoc& loc) {
    if (!index) return name(n, loc);
    isa::Expr e = name(n, loc);
    e.kind = isa::Expr::Kind::kIndex;
    e.args.push_back(num(*index, loc));
    return e;
  }
  static isa::Operand operand(std::optional<std::string> key, isa::Expr value) {
    isa::Operand o;
    o.loc = value.loc;
    o.key = std::move(key);
    o.values.push_back(std::move(value));
    return o;
  }
  static isa::Operand tuple(const std::string& key, const std::vector<std::int64_t>& values, const isa::SourceLoc& loc) {
    isa::Operand o;
    o.loc = loc;
    o.key = key;
    o.tuple = true;
    for (std::int64_t v : values) o.values.push_back(num(v, loc));
    return o;
  }
  static isa::Stmt stmt(isa::Stmt::Kind kind, const isa::SourceLoc& loc) {
    isa::Stmt st;
    st.kind = kind;
    st.loc = loc;
    return st;
  }
  // Appends to the innermost open block; returns the statement (valid until that block grows again).
  isa::Stmt& add(isa::Stmt st) {
    blocks_.back()->push_back(std::move(st));
    return blocks_.back()->back();
  }

  void line(const std::string& s) {
    r_.text += (s.empty() ? std::string() : std::string(indent_ * 2, ' ') + s) + "\n";
    ++line_no_;
  }

  void header(bool full, std::int64_t grid, std::int64_t slots) {
    // Text from the trace stands in comments only, each on its line (isa::printable: no newline can end one).
    line(fmt::format("# Replay of the hardware trace {} (smpipe-hwtrace v1), generated by smpipe replay.", isa::printable(t_.path)));
    line(fmt::format("# kernel {} {} on {}, {}; {} recorded CTA(s) from CTA {}.", isa::printable(t_.kernel), isa::printable(t_.variant),
                     isa::printable(t_.gpu), isa::printable(t_.date), slots, t_.ctas.front().cta));
    line(fmt::format("# Each warp runs the ops it recorded, in order. `compute cycles={}` stands for each probe record (the", r_.probe_cycles));
    line("# probe's own cost, part of every hardware gap); the first one of a warp also holds the time before its first");
    if (o_.own_cycles.empty()) {
      line("# record, as measured. Everything else is the simulator's.");
    } else {
      line("# record, as measured. Each `compute` marked \"own\" is the kernel's own instructions before an event, by the kind");
      line(fmt::format("# of the interval that ends there, as measured in {} (its hardware mean less its replay's).",
                       isa::printable(o_.own_source)));
      line("# Everything else is the simulator's.");
    }
    if (full)
      line(fmt::format("# Grid: all {} CTAs; CTA c runs the ops of recorded CTA (c - {}) mod {}.", grid, first_, slots));
    else
      line("# Grid: the recorded CTAs only.");
    line("");
    isa::Kernel k;
    k.name = "replay_" + identifier(t_.kernel.empty() ? "trace" : t_.kernel);
    k.loc = k.grid_loc = k.cluster_loc = at();
    k.grid = {num(r_.ctas, k.loc), num(1, k.loc), num(1, k.loc)};
    k.cluster = {num(t_.cluster[0], k.loc), num(t_.cluster[1], k.loc), num(t_.cluster[2], k.loc)};
    k.warps = num(t_.warps, k.loc);
    r_.file.kernels.push_back(std::move(k));
    line(fmt::format("kernel {} grid=({}, 1, 1) cluster=({}, {}, {}) warps={} {{", r_.file.kernels.back().name, r_.ctas, t_.cluster[0],
                     t_.cluster[1], t_.cluster[2], t_.warps));
  }

  void decls() {
    ++indent_;
    auto& decls = r_.file.kernels.back().decls;
    auto decl = [&](isa::Decl::Kind kind, const std::string& n) -> isa::Decl& {
      isa::Decl d;
      d.kind = kind;
      d.name = n;
      d.loc = at();
      decls.push_back(std::move(d));
      return decls.back();
    };
    for (const auto& b : t_.barriers) {
      if (b.named) {
        decl(isa::Decl::Kind::kNamedBarrier, b.name).count = num(b.named_id, at());
        line(fmt::format("named_barrier {} id={}", b.name, b.named_id));
        continue;
      }
      isa::Decl& d = decl(isa::Decl::Kind::kMbarrier, b.name);
      d.count = num(b.count, at());
      if (b.size) d.size = num(*b.size, at());
      if (b.size)
        line(fmt::format("mbarrier {}[{}] count={}", b.name, *b.size, b.count));
      else
        line(fmt::format("mbarrier {} count={}", b.name, b.count));
    }
    for (const auto& s : t_.smem) {
      isa::Decl& d = decl(isa::Decl::Kind::kSmem, s.name);
      d.size = num(s.size, at());
      d.count = num(s.bytes, at());
      line(fmt::format("smem {}[{}] bytes={}", s.name, s.size, s.bytes));
    }
    for (const auto& x : t_.tensors) {
      isa::Decl& d = decl(isa::Decl::Kind::kTensor, x.name);
      d.dtype = x.dtype;
      for (std::int64_t v : x.shape) d.shape.push_back(num(v, at()));
      const int promotion = promotion_of(x);
      if (promotion > 0) d.promotion = num(promotion, at());
      line(fmt::format("tensor {} dtype={} shape=({}){}", x.name, x.dtype, fmt::join(x.shape, ", "),
                       promotion > 0 ? fmt::format(" l2_promotion={}", promotion) : ""));
    }
    --indent_;
  }

  // The L2 promotion of a tensor's boxes: the trace's, else K2's (its tensor maps have asked for 256 bytes since its
  // first version: validation/kernels/src/k2_main.cu, make_map), else none.
  int promotion_of(const HwTensor& x) const {
    if (x.l2_promotion >= 0) return x.l2_promotion;
    return t_.kernel == "k2_gemm" ? 256 : 0;
  }

  // A `let` statement on its own line.
  void let(const std::string& var, isa::Expr value, const std::string& comment = "") {
    isa::Stmt st = stmt(isa::Stmt::Kind::kLet, at());
    st.name = var;
    std::string text = fmt::format("let {} = {}", var, expr_text(value));
    st.exprs.push_back(std::move(value));
    add(std::move(st));
    line(comment.empty() ? text : text + "  # " + comment);
  }

  // Whether any recorded warp of warps first..first+count-1 moves a TMA box.
  bool moves_boxes(int first_warp, int count) const {
    for (const auto& c : t_.ctas)
      for (int k = 0; k < count; ++k)
        for (const auto& e : c.warps[first_warp + k].events)
          if (e.op == "tma.load" || e.op == "tma.store") return true;
    return false;
  }

  // K2's box coordinates, at the top of a role that moves boxes: the CTA whose tiles this one takes (the scheduler's
  // unit), and the m- and n-block of its current tile (set at each `tile` marker).
  void layout_prologue() {
    // The CTA this one stands for: itself in a full-grid replay, recorded CTA first + s for the s-th launched alone.
    const std::int64_t offset = t_.ctas.front().cta - first_;
    const isa::SourceLoc l = at();
    let("unit", offset == 0 ? name("cta", l) : bin("+", name("cta", l), num(offset, l)), "the CTA K2's scheduler hands tiles to");
    for (const char* v : {"tile", "tile_r", "tile_rows", "tm", "tn"}) let(v, num(0, at()));
  }

  // At recorded tile T of the CTA U being written: this CTA's tile of the same rank in its sequence,
  // T - U + unit (modulo the tiles, for a CTA that has fewer tiles than the recorded one), and its blocks.
  void layout_tile(std::int64_t tile) {
    const K2Layout& k = *layout_;
    if (tile < 0 || tile >= k.n_tiles)
      throw isa::InputError(fmt::format("{}: CTA {}: a `tile` marker of tile {}, not one of the problem's {} tiles (params M, N, tile, "
                                        "cluster): the replay cannot place its boxes",
                                        t_.path, t_.ctas[static_cast<std::size_t>(slot_)].cta, tile, k.n_tiles));
    const std::int64_t u = t_.ctas[static_cast<std::size_t>(slot_)].cta, pg = k.group * k.n_nblk;
    const isa::SourceLoc l = at();
    isa::Expr rank = tile == u ? name("unit", l) : bin("+", num(tile - u, l), name("unit", l));
    let("tile", bin("%", std::move(rank), num(k.n_tiles, l)),
        fmt::format("tile {} of recorded CTA {}: this CTA's tile of that rank", tile, t_.ctas[static_cast<std::size_t>(slot_)].cta));
    let("tile_r", bin("%", name("tile", at()), num(pg, at())));
    const isa::SourceLoc r = at();
    let("tile_rows", bin("min", num(k.group, r), bin("-", num(k.n_mrow, r), bin("*", bin("/", name("tile", r), num(pg, r)), num(k.group, r))),
                         isa::Expr::Kind::kCall));
    const isa::SourceLoc m = at();
    isa::Expr row = bin("+", bin("*", bin("/", name("tile", m), num(pg, m)), num(k.group, m)), bin("%", name("tile_r", m), name("tile_rows", m)));
    let("tm", std::move(row), "m-block");
    let("tn", bin("/", name("tile_r", at()), name("tile_rows", at())), "n-block");
  }

  // The coordinates (rows, columns) of K2's box for event e of tensor x: A and B at k-block `iteration` of the tile,
  // C and D at its subtile `iteration` (n outer, m inner); nothing for another tensor or without an iteration.
  std::optional<std::array<isa::Expr, 2>> layout_at(const HwEvent& e, const HwTensor& x, const isa::SourceLoc& l) const {
    if (!layout_ || !e.iteration || x.shape.size() != 2) return std::nullopt;
    const K2Layout& k = *layout_;
    const std::int64_t i = *e.iteration;
    // A load of A or B is of a k-block, a C load or D store of a subtile of the tile: any other iteration is not a box
    // of the problem (and its coordinates would leave the tensor's 32-bit range).
    const bool operand = x.name == "A" || x.name == "B";
    const std::int64_t n = operand ? (k.g.k + k.g.bk - 1) / k.g.bk : (k.g.bm / k.g.em) * (k.g.bn / k.g.en);
    if ((operand || x.name == "C" || x.name == "D") && (i < 0 || i >= n))
      throw isa::InputError(fmt::format("{}: CTA {}: a {} of {} at iteration {}, not one of the tile's {} {}: the replay cannot place "
                                        "its box",
                                        t_.path, t_.ctas[static_cast<std::size_t>(slot_)].cta, e.op, x.name, i, n,
                                        operand ? "k-blocks" : "subtiles"));
    if (x.name == "A") return std::array{bin("*", name("tm", l), num(k.g.bm, l)), num(i * k.g.bk, l)};
    if (x.name == "B") return std::array{bin("*", name("tn", l), num(k.g.bn, l)), num(i * k.g.bk, l)};
    if (x.name == "C" || x.name == "D") {
      const std::int64_t ms = k.g.bm / k.g.em;
      auto plus = [&](isa::Expr a, std::int64_t c) { return c == 0 ? a : bin("+", std::move(a), num(c, l)); };
      return std::array{plus(bin("*", name("tm", l), num(k.g.bm, l)), i % ms * k.g.em),
                        plus(bin("*", name("tn", l), num(k.g.bn, l)), i / ms * k.g.en)};
    }
    return std::nullopt;
  }

  // Roles: a warpgroup whose warps issue warpgroup-collective ops is one role; every other warp is its own.
  void roles(std::int64_t slots) {
    std::vector<bool> collective(t_.warps, false);
    for (const auto& c : t_.ctas) {
      if (static_cast<int>(c.warps.size()) != t_.warps)
        throw isa::InputError(fmt::format("{}: CTA {} records {} warps, params.warps is {}", t_.path, c.cta, c.warps.size(), t_.warps));
      for (std::size_t w = 0; w < c.warps.size(); ++w) {
        if (c.warps[w].warp != static_cast<int>(w))
          throw isa::InputError(fmt::format("{}: CTA {}: warps must be listed in warp order", t_.path, c.cta));
        for (const auto& e : c.warps[w].events)
          if (is_collective(e.op)) collective[w] = true;
      }
    }
    for (int w = 0; w < t_.warps;) {
      int g = w / kMaxGroup;
      bool group = false;
      for (int k = g * kMaxGroup; k < std::min(t_.warps, (g + 1) * kMaxGroup); ++k) group = group || collective[k];
      if (group && w % kMaxGroup == 0 && w + kMaxGroup <= t_.warps) {
        role(w, kMaxGroup, slots);
        w += kMaxGroup;
      } else if (group) {
        throw isa::InputError(fmt::format("{}: warp {} issues wgmma ops but its warpgroup is not complete", t_.path, w));
      } else {
        role(w, 1, slots);
        w += 1;
      }
    }
  }

  void role(int first_warp, int count, std::int64_t slots) {
    const HwWarp& w0 = t_.ctas.front().warps[first_warp];
    for (const auto& c : t_.ctas)
      for (int k = 0; k < count; ++k)
        if (c.warps[first_warp + k].role != w0.role || c.warps[first_warp + k].lanes != w0.lanes)
          throw isa::InputError(fmt::format("{}: warps {}..{} are replayed as one warpgroup but differ in role or lanes (CTA {} warp {})",
                                            t_.path, first_warp, first_warp + count - 1, c.cta, first_warp + k));
    if (count > 1 && w0.lanes != 32)
      throw isa::InputError(fmt::format("{}: warpgroup {} issues wgmma on {} lane(s); warpgroup ops need whole warps", t_.path,
                                        first_warp / kMaxGroup, w0.lanes));
    ++indent_;
    line("");
    isa::Role role;
    role.unit = count == 1 ? "warp" : "warpgroup";
    role.loc = at();
    role.from = num(count == 1 ? first_warp : first_warp / kMaxGroup, role.loc);
    role.name = count == 1 ? fmt::format("{}_w{}", identifier(w0.role), first_warp)
                           : fmt::format("{}_wg{}", identifier(w0.role), first_warp / kMaxGroup);
    auto& roles = r_.file.kernels.back().roles;
    roles.push_back(std::move(role));
    blocks_ = {&roles.back().body};
    line(fmt::format("{} {} {} {{", roles.back().unit, count == 1 ? first_warp : first_warp / kMaxGroup, roles.back().name));
    ++indent_;
    if (slots > 1) {
      isa::Stmt let = stmt(isa::Stmt::Kind::kLet, at());
      let.name = "slot";
      isa::SourceLoc l = let.loc;
      let.exprs.push_back(bin("%", bin("+", bin("%", bin("-", name("cta", l), num(first_, l)), num(slots, l)), num(slots, l)), num(slots, l)));
      add(std::move(let));
      line(fmt::format("let slot = ((cta - {}) % {} + {}) % {}", first_, slots, slots, slots));
    }
    role_moves_boxes_ = layout_ && moves_boxes(first_warp, count);
    if (role_moves_boxes_) layout_prologue();
    isa::Stmt* branch = nullptr;  // the `if slot == s` of the previous recorded CTA
    for (std::int64_t s = 0; s < slots; ++s) {
      const HwCta& c = t_.ctas[s];
      std::vector<const HwWarp*> group;
      for (int k = 0; k < count; ++k) group.push_back(&c.warps[first_warp + k]);
      std::string where = fmt::format("{}: CTA {} warps {}..{}", t_.path, c.cta, first_warp, first_warp + count - 1);
      std::vector<Item> items = merge_group(group, where, align_cells_left_);
      if (slots > 1) {
        isa::Stmt cond = stmt(isa::Stmt::Kind::kIf, at(s == 0 ? 0 : 7));  // "} else if"
        cond.exprs.push_back(bin("==", name("slot", cond.loc), num(s, cond.loc)));
        if (branch == nullptr) {
          branch = &add(std::move(cond));
        } else {
          blocks_.pop_back();
          branch->else_body.push_back(std::move(cond));
          branch = &branch->else_body.back();
        }
        blocks_.push_back(&branch->body);
        line(fmt::format("{}if slot == {} {{", s == 0 ? "" : "} else ", s));
      }
      if (slots > 1) ++indent_;
      bool elect_all = w0.lanes == 1;
      if (elect_all) {
        blocks_.push_back(&add(stmt(isa::Stmt::Kind::kElect, at())).body);
        line("elect {");
        ++indent_;
      }
      body(static_cast<int>(s), group, items, !elect_all, first_warp);
      if (elect_all) {
        --indent_;
        blocks_.pop_back();
        line("}");
      }
      if (slots > 1) --indent_;
    }
    if (slots > 1) {
      blocks_.pop_back();
      line("}");
    }
    blocks_.clear();
    --indent_;
    line("}");
    --indent_;
  }

  // The statements of one role for one recorded CTA.
  void body(int slot, const std::vector<const HwWarp*>& group, const std::vector<Item>& items, bool elect_single, int first_warp) {
    const int n = static_cast<int>(group.size());
    slot_ = slot;
    auto subset = [&](const Item& it) {
      std::vector<int> s;
      for (int w = 0; w < n; ++w)
        if (it.ev[w] >= 0) s.push_back(w);
      return s;
    };
    std::vector<int> open_subset;  // the warps of the `if warp == ..` block we are in (empty: all)
    std::vector<int> all;
    for (int w = 0; w < n; ++w) all.push_back(w);
    std::vector<bool> started(n, false);
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::vector<int> sub = subset(items[i]);
      std::vector<int> want = sub == all ? std::vector<int>{} : sub;
      if (want != open_subset) {
        if (!open_subset.empty()) {
          --indent_;
          blocks_.pop_back();
          line("}");
        }
        if (!want.empty()) {
          std::vector<std::string> conds;
          isa::Stmt cond = stmt(isa::Stmt::Kind::kIf, at());
          std::optional<isa::Expr> e;
          for (int w : want) {
            conds.push_back(fmt::format("warp == {}", first_warp + w));
            isa::Expr c = bin("==", name("warp", cond.loc), num(first_warp + w, cond.loc));
            e = e ? bin("||", std::move(*e), std::move(c)) : std::move(c);
          }
          cond.exprs.push_back(std::move(*e));
          blocks_.push_back(&add(std::move(cond)).body);
          line(fmt::format("if {} {{", fmt::join(conds, " || ")));
          ++indent_;
        }
        open_subset = want;
      }
      const HwEvent& e = group[sub.front()]->events[items[i].ev[sub.front()]];
      own(group, sub, items[i]);
      // The fused probe records: one record for (wgmma.fence, wgmma) before both, and for (wgmma.commit,
      // wgmma.wait) between the two (docs/trace-format.md "Timing details").
      bool pair = false;
      if (i + 1 < items.size() && subset(items[i + 1]) == sub) {
        const HwEvent& f = group[sub.front()]->events[items[i + 1].ev[sub.front()]];
        pair = ((e.op == "wgmma.fence" && f.op == "wgmma") || (e.op == "wgmma.commit" && f.op == "wgmma.wait"));
        for (int w : sub)
          pair = pair && group[w]->events[items[i].ev[w]].cycle == group[w]->events[items[i + 1].ev[w]].cycle;
      }
      std::vector<const Item*> recorded{&items[i]};
      if (pair) recorded.push_back(&items[i + 1]);
      if (pair && e.op == "wgmma.commit") {
        op(e, elect_single);
        record(slot, group, sub, recorded, started);
        op(group[sub.front()]->events[items[i + 1].ev[sub.front()]], elect_single);
      } else {
        record(slot, group, sub, recorded, started);
        op(e, elect_single);
        if (pair) op(group[sub.front()]->events[items[i + 1].ev[sub.front()]], elect_single);
      }
      if (pair) ++i;
    }
    if (!open_subset.empty()) {
      --indent_;
      blocks_.pop_back();
      line("}");
    }
  }

  // The kernel's own instructions before the event of `item` (ReplayOptions::own_cycles), for each warp of `sub` by the
  // kind of its interval that ends there: a `compute` (one value, or one per warp where the warps' intervals differ).
  void own(const std::vector<const HwWarp*>& group, const std::vector<int>& sub, const Item& item) {
    if (o_.own_cycles.empty()) return;
    std::vector<std::pair<int, std::int64_t>> cycles;  // (warp, cycles)
    std::vector<std::string> kinds;
    for (int w : sub) {
      const int k = item.ev[w];
      std::int64_t c = 0;
      if (k > 0 && !is_end(group[w]->events[k].op)) {
        std::string kind = interval_kind(group[w]->events[k - 1], group[w]->events[k]);
        auto it = o_.own_cycles.find(kind);
        if (it != o_.own_cycles.end()) c = it->second;
        if (c > 0 && std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
      }
      cycles.emplace_back(group[w]->warp, c);
    }
    bool same = true;
    std::vector<std::pair<int, std::int64_t>> terms;  // the warps that spend any
    for (const auto& [w, c] : cycles) {
      same = same && c == cycles.front().second;
      if (c > 0) {
        terms.emplace_back(w, c);
        ++r_.own_charged_events, r_.own_charged_cycles += c;
      }
    }
    if (!terms.empty()) measured_compute(terms, same, fmt::format("own: {}", fmt::join(kinds, "; ")));
  }

  // A `compute` of measured cycles, which may differ by warp: `terms` (warp, cycles), one number when `uniform` (every
  // warp of the statement spends terms' first value), else their sum of (warp == w) * cycles (the others spend none).
  void measured_compute(const std::vector<std::pair<int, std::int64_t>>& terms, bool uniform, const std::string& comment) {
    isa::SourceLoc l = at();
    if (uniform) {
      compute(num(terms.front().second, l), -1);
      line(fmt::format("compute cycles={}  # {}", terms.front().second, comment));
      return;
    }
    std::vector<std::string> text;
    std::optional<isa::Expr> sum;
    for (const auto& [w, c] : terms) {
      text.push_back(fmt::format("(warp == {}) * {}", w, c));
      isa::Expr term = bin("*", bin("==", name("warp", l), num(w, l)), num(c, l));
      sum = sum ? bin("+", std::move(*sum), std::move(term)) : std::move(term);
    }
    compute(std::move(*sum), -1);
    line(fmt::format("compute cycles={}  # {}", fmt::join(text, " + "), comment));
  }

  // The probe record: a `compute` whose line stands for the events `recorded` of the warps `sub`. A warp's
  // first record also holds the time before it (the kernel's prologue, not in the trace).
  void record(int slot, const std::vector<const HwWarp*>& group, const std::vector<int>& sub, const std::vector<const Item*>& recorded,
              std::vector<bool>& started) {
    const HwEvent& e = group[sub.front()]->events[recorded.front()->ev[sub.front()]];
    bool first = false;
    std::int64_t before = 0;
    for (int w : sub)
      if (!started[w]) {
        first = true;
        before = std::max(before, group[w]->events[recorded.front()->ev[w]].cycle);
      }
    std::string what = e.op;
    if (recorded.size() > 1) what += " + " + group[sub.front()]->events[recorded[1]->ev[sub.front()]].op;
    if (!e.barrier.empty()) what += " " + e.barrier + (e.index ? fmt::format("[{}]", *e.index) : "");
    if (e.iteration) what += fmt::format(" (it {})", *e.iteration);
    if (first) {
      // Each warp's own prologue: the cycles before its first record, as measured (not part of any event).
      std::vector<std::pair<int, std::int64_t>> terms;
      bool differ = false;
      for (int w : sub) {
        const std::int64_t c = group[w]->events[recorded.front()->ev[w]].cycle;
        differ = differ || started[w] || c != before;
        if (!started[w]) terms.emplace_back(group[w]->warp, c);
      }
      measured_compute(terms, !differ, "the warp's time before its first record (measured)");
      for (int w : sub) started[w] = true;
    }
    compute(num(r_.probe_cycles, at()), static_cast<std::int32_t>(r_.origin_events.size()));
    line(fmt::format("compute cycles={}  # probe: {}", r_.probe_cycles, what));
    auto& refs = r_.origin_events.emplace_back();
    for (const Item* it : recorded)
      for (int w : sub) refs.push_back(EventRef{slot, group[w]->warp, it->ev[w]});
  }

  void compute(isa::Expr cycles, std::int32_t origin) {
    isa::Stmt c = stmt(isa::Stmt::Kind::kOp, at());
    c.name = "compute";
    c.operands.push_back(operand("cycles", std::move(cycles)));
    c.origin = origin;
    add(std::move(c));
  }

  std::string ref(const std::string& name, const std::optional<std::int64_t>& index) const {
    return index ? fmt::format("{}[{}]", name, *index) : name;
  }

  std::string smem_of(const HwEvent& e) const {
    const HwTensor* x = e.tensor.empty() ? nullptr : t_.tensor(e.tensor);
    return x ? x->smem : "";
  }

  void op(const HwEvent& e, bool elect_single) {
    if (e.op == "tile" && e.iteration && layout_ && role_moves_boxes_) layout_tile(*e.iteration);
    if (is_end(e.op) || is_marker(e.op) || e.op == "compute") return;  // the record is all there is
    const std::string& o = e.op;
    bool elect = elect_single && is_single_lane(o);
    isa::Stmt st = stmt(isa::Stmt::Kind::kOp, at(elect ? 8 : 0));  // "elect { "
    st.name = o;
    const isa::SourceLoc& l = st.loc;
    auto bare = [&](isa::Expr v) { st.operands.push_back(operand(std::nullopt, std::move(v))); };
    auto key = [&](const char* k, isa::Expr v) { st.operands.push_back(operand(std::string(k), std::move(v))); };
    std::string text;
    if (o == "wait") {
      text = fmt::format("wait {} parity={}", ref(e.barrier, e.index), e.phase.value_or(0));
      bare(element(e.barrier, e.index, l));
      key("parity", num(e.phase.value_or(0), l));
    } else if (o == "arrive") {
      text = fmt::format("arrive {}", ref(e.barrier, e.index));
      bare(element(e.barrier, e.index, l));
    } else if (o == "arrive.expect_tx" || o == "expect_tx") {
      text = fmt::format("{} {} tx={}", o, ref(e.barrier, e.index), e.bytes);
      bare(element(e.barrier, e.index, l));
      key("tx", num(e.bytes, l));
    } else if (o == "tma.load" || o == "tma.store") {
      const HwTensor* x = t_.tensor(e.tensor);
      if (!x) throw isa::InputError(fmt::format("{}: a {} without a tensor", t_.path, o));
      std::string box = fmt::format("box=({})", fmt::join(x->box, ", "));
      std::string sw = x->swizzle > 0 ? fmt::format(" swizzle={}", x->swizzle) : "";
      bare(name(x->name, l));
      st.operands.push_back(tuple("box", x->box, l));
      if (auto xy = layout_at(e, *x, l)) {
        box += fmt::format(" at=({}, {})", expr_text((*xy)[0]), expr_text((*xy)[1]));
        isa::Operand o;
        o.loc = l;
        o.key = "at";
        o.tuple = true;
        for (auto& v : *xy) o.values.push_back(std::move(v));
        st.operands.push_back(std::move(o));
      }
      if (o == "tma.load") {
        text = fmt::format("tma.load {} {} dst={} bar={}{}", x->name, box, ref(x->smem, e.index), ref(e.barrier, e.index), sw);
        key("dst", element(x->smem, e.index, l));
        key("bar", element(e.barrier, e.index, l));
      } else {
        text = fmt::format("tma.store {} {} src={}{}", x->name, box, ref(x->smem, e.index), sw);
        key("src", element(x->smem, e.index, l));
      }
      if (x->swizzle > 0) key("swizzle", num(x->swizzle, l));
    } else if (o == "tma.commit" || o == "wgmma.fence" || o == "wgmma.commit" || o == "fence.proxy.async") {
      text = o;
    } else if (o == "tma.wait" || o == "tma.wait.read") {
      text = fmt::format("tma.wait {}{}", e.index.value_or(0), o == "tma.wait.read" ? " read" : "");
      st.name = "tma.wait";
      bare(num(e.index.value_or(0), l));
      if (o == "tma.wait.read") bare(name("read", l));
    } else if (o == "wgmma") {
      if (t_.wgmma_shape.empty()) throw isa::InputError(fmt::format("{}: wgmma events need params.wgmma (shape, per_event)", t_.path));
      text = fmt::format("wgmma {} dtype={} a={} b={} count={}", t_.wgmma_shape, t_.wgmma_dtype, ref(t_.wgmma_a, e.index),
                         ref(t_.wgmma_b, e.index), t_.wgmma_per_event);
      bare(name(t_.wgmma_shape, l));
      key("dtype", name(t_.wgmma_dtype, l));
      key("a", element(t_.wgmma_a, e.index, l));
      key("b", element(t_.wgmma_b, e.index, l));
      key("count", num(t_.wgmma_per_event, l));
    } else if (o == "wgmma.wait") {
      text = fmt::format("wgmma.wait {}", e.index.value_or(0));
      bare(num(e.index.value_or(0), l));
    } else if (o == "bar.sync") {
      const HwBarrier* b = t_.barrier(e.barrier);
      text = fmt::format("bar.sync {} threads={}", e.barrier, b ? b->count : 0);
      bare(name(e.barrier, l));
      key("threads", num(b ? b->count : 0, l));
    } else if (o == "ld.shared" || o == "st.shared") {
      std::string s = smem_of(e);
      text = fmt::format("{} bytes={}", o, e.bytes);
      key("bytes", num(e.bytes, l));
      if (!s.empty()) {
        text += fmt::format(" {}={}", o == "ld.shared" ? "src" : "dst", ref(s, e.index));
        key(o == "ld.shared" ? "src" : "dst", element(s, e.index, l));
      }
    } else {
      throw isa::InputError(fmt::format("{}: replay does not know op '{}'", t_.path, o));
    }
    if (elect) {
      isa::Stmt& block = add(stmt(isa::Stmt::Kind::kElect, at()));
      block.body.push_back(std::move(st));
      line("elect { " + text + " }");
    } else {
      add(std::move(st));
      line(text);
    }
  }

  const HwTrace& t_;
  const ReplayOptions& o_;
  Replay& r_;
  std::string no_layout_;            // why a K2 trace's boxes are not placed ("" if they are, or it is not one)
  std::optional<K2Layout> layout_;  // K2's box coordinates (absent: every box at the tensor's origin)
  std::int64_t slot_ = 0;           // the recorded CTA whose events are being written
  bool role_moves_boxes_ = false;   // the role being written moves boxes (and has the layout's variables)
  int indent_ = 0;
  int line_no_ = 0;
  std::int64_t first_ = 0;
  std::int64_t align_cells_left_ = kMaxAlignCells;  // comparisons the warpgroups' merging may still make
  std::shared_ptr<isa::SourceFile> src_;  // the text the tree's positions point into (filled in at the end)
  std::vector<isa::Block*> blocks_;       // the open blocks of the role being written, innermost last
};

}  // namespace

namespace {

// The rows of the table L(r, c) = the longest common subsequence of x[r..) and y[c..) (suffixes of two step
// sequences after `p` common leading steps; r, c counted from p), for a walk that visits rows in increasing
// order and asks for rows r and r + 1 together. Small tables are kept whole; larger ones as every
// step-th row (step ~ sqrt(rows)), each block of rows recomputed from the checkpoint below it when the
// walk enters it: memory (2 sqrt(rows) + 3) rows, time twice the table's.
class SuffixLcsRows {
 public:
  SuffixLcsRows(const std::vector<std::int32_t>& x, const std::vector<std::int32_t>& y, std::size_t p, std::int64_t full_table_cells)
      : x_(x), y_(y), p_(p), rows_(x.size() - p), width_(y.size() - p + 1) {
    whole_ = static_cast<std::int64_t>(rows_ + 1) * static_cast<std::int64_t>(width_) <= full_table_cells;
    step_ = whole_ || rows_ == 0 ? std::max<std::size_t>(rows_, 1)
                                 : static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(rows_))));
    blocks_ = (rows_ + step_ - 1) / step_;
    if (whole_) {
      marks_.assign((rows_ + 1) * width_, 0);
      for (std::size_t r = rows_; r-- > 0;) fill(&marks_[r * width_], &marks_[(r + 1) * width_], r);
      return;
    }
    marks_.assign((blocks_ + 1) * width_, 0);  // row j * step_ (j < blocks_) and the last row, rows_ (j = blocks_: zeros)
    block_.assign((step_ + 1) * width_, 0);
    std::vector<std::uint32_t> below(width_, 0), row(width_, 0);
    for (std::size_t r = rows_; r-- > 0;) {
      fill(row.data(), below.data(), r);
      if (r % step_ == 0) std::copy(row.begin(), row.end(), mark(r / step_));
      std::swap(row, below);
    }
  }

  // Row r (0 <= r <= rows).
  const std::uint32_t* row(std::size_t r) {
    if (whole_) return &marks_[r * width_];
    if (loaded_ != kNone && r >= loaded_ * step_ && r <= std::min(loaded_ * step_ + step_, rows_))
      return &block_[(r - loaded_ * step_) * width_];
    if (r == rows_) return mark(blocks_);
    std::size_t j = r / step_, first = j * step_, last = std::min(first + step_, rows_);  // the block: rows first..last
    const std::uint32_t* end = last == rows_ ? mark(blocks_) : mark(last / step_);
    std::copy(end, end + width_, &block_[(last - first) * width_]);
    for (std::size_t q = last; q-- > first;) fill(&block_[(q - first) * width_], &block_[(q - first + 1) * width_], q);
    loaded_ = j;
    return &block_[(r - first) * width_];
  }

 private:
  static constexpr std::size_t kNone = SIZE_MAX;
  // Row r from row r + 1.
  void fill(std::uint32_t* row, const std::uint32_t* below, std::size_t r) const {
    const std::int32_t xr = x_[p_ + r];
    row[width_ - 1] = 0;
    for (std::size_t c = width_ - 1; c-- > 0;) row[c] = xr == y_[p_ + c] ? below[c + 1] + 1 : std::max(below[c], row[c + 1]);
  }
  std::uint32_t* mark(std::size_t j) { return &marks_[j * width_]; }

  const std::vector<std::int32_t>& x_;
  const std::vector<std::int32_t>& y_;
  std::size_t p_, rows_, width_;
  bool whole_ = false;
  std::size_t step_ = 1, blocks_ = 0, loaded_ = kNone;
  std::vector<std::uint32_t> marks_, block_;
};

}  // namespace

std::optional<std::vector<std::pair<std::int32_t, std::int32_t>>> align_steps(const std::vector<std::int32_t>& a,
                                                                             const std::vector<std::int32_t>& b,
                                                                             std::int64_t& cells_left, std::int64_t full_table_cells) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::pair<std::int32_t, std::int32_t>> out;
  out.reserve(n + m);
  // Common leading steps: the walk below matches them one by one whatever the table says.
  std::size_t p = 0;
  for (; p < n && p < m && a[p] == b[p]; ++p) out.emplace_back(static_cast<std::int32_t>(p), static_cast<std::int32_t>(p));
  const auto cells = static_cast<std::int64_t>(n - p) * static_cast<std::int64_t>(m - p);
  if (cells > cells_left) return std::nullopt;
  cells_left -= cells;
  // L(i, k) = the longest common subsequence of a[i..n) and b[k..m). Its rows run along the longer sequence
  // (memory goes with the shorter one): L(i, k) = T(i, k) with T's rows along a, or T(k, i) along b.
  const bool along_b = m > n;
  SuffixLcsRows table(along_b ? b : a, along_b ? a : b, p, full_table_cells);
  // The walk: match equal steps; else take b's step when that keeps the longest common subsequence, else a's.
  std::size_t i = p, k = p;
  while (i < n || k < m) {
    if (i < n && k < m && a[i] == b[k]) {
      out.emplace_back(static_cast<std::int32_t>(i++), static_cast<std::int32_t>(k++));
      continue;
    }
    bool take_b = k < m && i == n;
    if (k < m && i < n) {
      std::uint32_t right, down;  // L(i, k + 1), L(i + 1, k); the lower table row first
      if (along_b) {
        down = table.row(k - p)[i + 1 - p];
        right = table.row(k + 1 - p)[i - p];
      } else {
        right = table.row(i - p)[k + 1 - p];
        down = table.row(i + 1 - p)[k - p];
      }
      take_b = right >= down;
    }
    if (take_b)
      out.emplace_back(-1, static_cast<std::int32_t>(k++));
    else
      out.emplace_back(static_cast<std::int32_t>(i++), -1);
  }
  return out;
}

std::int64_t probe_cost(const HwTrace& trace) {
  std::int64_t best = -1;
  for (const auto& c : trace.ctas)
    for (const auto& w : c.warps)
      for (std::size_t k = 1; k < w.events.size(); ++k) {
        std::int64_t gap = w.events[k].cycle - w.events[k - 1].cycle;
        if (gap > 0 && (best < 0 || gap < best)) best = gap;
      }
  return best < 0 ? 0 : best;
}

Replay make_replay(const HwTrace& trace, const ReplayOptions& options) {
  Replay r;
  r.source_name = trace.path + " (replay)";
  Generator(trace, options, r).run();
  return r;
}

}  // namespace smpipe::traces
