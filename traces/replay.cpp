#include "traces/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "isa/source.hpp"

namespace smpipe::traces {

namespace {

constexpr int kMaxGroup = 4;  // warps in a warpgroup

bool is_collective(const std::string& op) { return op.rfind("wgmma", 0) == 0; }
// Ops issued by one thread of a warp (`elect { }` in .pipe) when the warp's role runs on all its lanes.
bool is_single_lane(const std::string& op) {
  return op.rfind("tma.", 0) == 0 || op == "arrive.expect_tx" || op == "expect_tx";
}

std::string identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "r_" + out;
  return out;
}

// Events that are the same step of the program in two warps of a warpgroup (time aside).
bool same_step(const HwEvent& a, const HwEvent& b) {
  return a.op == b.op && a.barrier == b.barrier && a.index == b.index && a.phase == b.phase && a.bytes == b.bytes &&
         a.iteration == b.iteration && a.tensor == b.tensor;
}

// A step of a role's program: the event each warp of the group (by position) runs there, -1 = none.
struct Item {
  std::array<int, kMaxGroup> ev{-1, -1, -1, -1};
};

// Merges warp `j`'s events [b, e) into items [ib, ie) of the group's program: a shortest common
// supersequence by longest common subsequence (segments between collective ops are short).
std::vector<Item> merge_segment(const std::vector<Item>& items, const std::vector<const HwWarp*>& group, int j, int b, int e) {
  auto rep = [&](const Item& it) -> const HwEvent& {
    for (int w = 0; w < kMaxGroup; ++w)
      if (it.ev[w] >= 0) return group[w]->events[it.ev[w]];
    throw std::logic_error("empty replay item");
  };
  const auto& ej = group[j]->events;
  std::size_t n = items.size(), m = static_cast<std::size_t>(e - b);
  std::vector<std::uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](std::size_t i, std::size_t k) -> std::uint32_t& { return lcs[i * (m + 1) + k]; };
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t k = m; k-- > 0;)
      at(i, k) = same_step(rep(items[i]), ej[b + k]) ? at(i + 1, k + 1) + 1 : std::max(at(i + 1, k), at(i, k + 1));
  std::vector<Item> out;
  std::size_t i = 0, k = 0;
  while (i < n || k < m) {
    if (i < n && k < m && same_step(rep(items[i]), ej[b + k])) {
      Item it = items[i++];
      it.ev[j] = b + static_cast<int>(k++);
      out.push_back(it);
    } else if (k < m && (i == n || at(i, k + 1) >= at(i + 1, k))) {
      Item it;
      it.ev[j] = b + static_cast<int>(k++);
      out.push_back(it);
    } else {
      out.push_back(items[i++]);
    }
  }
  return out;
}

// The program of one role for one recorded CTA: the warps' events merged into one sequence of steps.
std::vector<Item> merge_group(const std::vector<const HwWarp*>& group, const std::string& where) {
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
      if (!same_step(group[0]->events[anchors[0][a]], group[w]->events[anchors[w][a]]))
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
        seg = merge_segment(seg, group, static_cast<int>(w), b, e);
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
  Generator(const HwTrace& t, const ReplayOptions& o, Replay& r) : t_(t), o_(o), r_(r) {}

  void run() {
    r_.probe_cycles = o_.probe_cycles >= 0 ? o_.probe_cycles : probe_cost(t_);
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

    header(full, grid, slots);
    decls();
    roles(slots);
    line("}");
  }

 private:
  void line(const std::string& s) {
    r_.text += (s.empty() ? std::string() : std::string(indent_ * 2, ' ') + s) + "\n";
    ++line_no_;
  }

  void header(bool full, std::int64_t grid, std::int64_t slots) {
    line(fmt::format("# Replay of the hardware trace {} (smpipe-hwtrace v1), generated by smpipe replay.", t_.path));
    line(fmt::format("# kernel {} {} on {}, {}; {} recorded CTA(s) from CTA {}.", t_.kernel, t_.variant, t_.gpu, t_.date, slots,
                     t_.ctas.front().cta));
    line(fmt::format("# Each warp runs the ops it recorded, in order. `compute cycles={}` stands for each probe record (the", r_.probe_cycles));
    line("# probe's own cost, part of every hardware gap); the first one of a warp also holds the time before its first");
    line("# record, as measured. Everything else is the simulator's.");
    if (full)
      line(fmt::format("# Grid: all {} CTAs; CTA c runs the ops of recorded CTA (c - {}) mod {}.", grid, first_, slots));
    else
      line("# Grid: the recorded CTAs only.");
    line("");
    line(fmt::format("kernel replay_{} grid=({}, 1, 1) cluster=({}, {}, {}) warps={} {{", identifier(t_.kernel.empty() ? "trace" : t_.kernel),
                     r_.ctas, t_.cluster[0], t_.cluster[1], t_.cluster[2], t_.warps));
  }

  void decls() {
    ++indent_;
    for (const auto& b : t_.barriers) {
      if (b.named)
        line(fmt::format("named_barrier {} id={}", b.name, b.named_id));
      else if (b.size)
        line(fmt::format("mbarrier {}[{}] count={}", b.name, *b.size, b.count));
      else
        line(fmt::format("mbarrier {} count={}", b.name, b.count));
    }
    for (const auto& s : t_.smem) line(fmt::format("smem {}[{}] bytes={}", s.name, s.size, s.bytes));
    for (const auto& x : t_.tensors) line(fmt::format("tensor {} dtype={} shape=({})", x.name, x.dtype, fmt::join(x.shape, ", ")));
    --indent_;
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
    if (count == 1)
      line(fmt::format("warp {} {}_w{} {{", first_warp, identifier(w0.role), first_warp));
    else
      line(fmt::format("warpgroup {} {}_wg{} {{", first_warp / kMaxGroup, identifier(w0.role), first_warp / kMaxGroup));
    ++indent_;
    if (slots > 1) line(fmt::format("let slot = ((cta - {}) % {} + {}) % {}", first_, slots, slots, slots));
    for (std::int64_t s = 0; s < slots; ++s) {
      const HwCta& c = t_.ctas[s];
      std::vector<const HwWarp*> group;
      for (int k = 0; k < count; ++k) group.push_back(&c.warps[first_warp + k]);
      std::string where = fmt::format("{}: CTA {} warps {}..{}", t_.path, c.cta, first_warp, first_warp + count - 1);
      std::vector<Item> items = merge_group(group, where);
      if (slots > 1) line(fmt::format("{}if slot == {} {{", s == 0 ? "" : "} else ", s));
      if (slots > 1) ++indent_;
      bool elect_all = w0.lanes == 1;
      if (elect_all) {
        line("elect {");
        ++indent_;
      }
      body(static_cast<int>(s), group, items, !elect_all, first_warp);
      if (elect_all) {
        --indent_;
        line("}");
      }
      if (slots > 1) --indent_;
    }
    if (slots > 1) line("}");
    --indent_;
    line("}");
    --indent_;
  }

  // The statements of one role for one recorded CTA.
  void body(int slot, const std::vector<const HwWarp*>& group, const std::vector<Item>& items, bool elect_single, int first_warp) {
    const int n = static_cast<int>(group.size());
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
          line("}");
        }
        if (!want.empty()) {
          std::vector<std::string> conds;
          for (int w : want) conds.push_back(fmt::format("warp == {}", first_warp + w));
          line(fmt::format("if {} {{", fmt::join(conds, " || ")));
          ++indent_;
        }
        open_subset = want;
      }
      const HwEvent& e = group[sub.front()]->events[items[i].ev[sub.front()]];
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
      line("}");
    }
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
      std::string cycles = fmt::format("{}", before);
      bool differ = false;
      for (int w : sub) differ = differ || started[w] || group[w]->events[recorded.front()->ev[w]].cycle != before;
      if (differ) {
        std::vector<std::string> terms;
        for (int w : sub)
          if (!started[w])
            terms.push_back(fmt::format("(warp == {}) * {}", group[w]->warp, group[w]->events[recorded.front()->ev[w]].cycle));
        cycles = fmt::format("{}", fmt::join(terms, " + "));
      }
      line(fmt::format("compute cycles={}  # the warp's time before its first record (measured)", cycles));
      for (int w : sub) started[w] = true;
    }
    line(fmt::format("compute cycles={}  # probe: {}", r_.probe_cycles, what));
    auto& refs = r_.line_events[line_no_];
    for (const Item* it : recorded)
      for (int w : sub) refs.push_back(EventRef{slot, group[w]->warp, it->ev[w]});
  }

  std::string ref(const std::string& name, const std::optional<std::int64_t>& index) const {
    return index ? fmt::format("{}[{}]", name, *index) : name;
  }

  std::string smem_of(const HwEvent& e) const {
    const HwTensor* x = e.tensor.empty() ? nullptr : t_.tensor(e.tensor);
    return x ? x->smem : "";
  }

  void op(const HwEvent& e, bool elect_single) {
    if (is_end(e.op) || is_marker(e.op) || e.op == "compute") return;  // the record is all there is
    std::string text;
    const std::string& o = e.op;
    if (o == "wait") {
      text = fmt::format("wait {} parity={}", ref(e.barrier, e.index), e.phase.value_or(0));
    } else if (o == "arrive") {
      text = fmt::format("arrive {}", ref(e.barrier, e.index));
    } else if (o == "arrive.expect_tx" || o == "expect_tx") {
      text = fmt::format("{} {} tx={}", o, ref(e.barrier, e.index), e.bytes);
    } else if (o == "tma.load" || o == "tma.store") {
      const HwTensor* x = t_.tensor(e.tensor);
      if (!x) throw isa::InputError(fmt::format("{}: a {} without a tensor", t_.path, o));
      std::string box = fmt::format("box=({})", fmt::join(x->box, ", "));
      std::string sw = x->swizzle > 0 ? fmt::format(" swizzle={}", x->swizzle) : "";
      if (o == "tma.load")
        text = fmt::format("tma.load {} {} dst={} bar={}{}", x->name, box, ref(x->smem, e.index), ref(e.barrier, e.index), sw);
      else
        text = fmt::format("tma.store {} {} src={}{}", x->name, box, ref(x->smem, e.index), sw);
    } else if (o == "tma.commit" || o == "wgmma.fence" || o == "wgmma.commit" || o == "fence.proxy.async") {
      text = o;
    } else if (o == "tma.wait" || o == "tma.wait.read") {
      text = fmt::format("tma.wait {}{}", e.index.value_or(0), o == "tma.wait.read" ? " read" : "");
    } else if (o == "wgmma") {
      if (t_.wgmma_shape.empty()) throw isa::InputError(fmt::format("{}: wgmma events need params.wgmma (shape, per_event)", t_.path));
      text = fmt::format("wgmma {} dtype={} a={} b={} count={}", t_.wgmma_shape, t_.wgmma_dtype, ref(t_.wgmma_a, e.index),
                         ref(t_.wgmma_b, e.index), t_.wgmma_per_event);
    } else if (o == "wgmma.wait") {
      text = fmt::format("wgmma.wait {}", e.index.value_or(0));
    } else if (o == "bar.sync") {
      const HwBarrier* b = t_.barrier(e.barrier);
      text = fmt::format("bar.sync {} threads={}", e.barrier, b ? b->count : 0);
    } else if (o == "ld.shared" || o == "st.shared") {
      std::string s = smem_of(e);
      text = fmt::format("{} bytes={}", o, e.bytes);
      if (!s.empty()) text += fmt::format(" {}={}", o == "ld.shared" ? "src" : "dst", ref(s, e.index));
    } else {
      throw isa::InputError(fmt::format("{}: replay does not know op '{}'", t_.path, o));
    }
    if (elect_single && is_single_lane(o))
      line("elect { " + text + " }");
    else
      line(text);
  }

  const HwTrace& t_;
  const ReplayOptions& o_;
  Replay& r_;
  int indent_ = 0;
  int line_no_ = 0;
  std::int64_t first_ = 0;
};

}  // namespace

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
