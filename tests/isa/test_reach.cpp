// The walk of the ops a warp may still reach (isa/reach.hpp): a branch on a known value takes one side, on an unknown
// value both; variables start at the warp's values, followed path by path (up to 32 per instruction, then joined); op
// results are unknown.
#include <catch2/catch.hpp>

#include <array>
#include <set>

#include "isa/reach.hpp"
#include "support.hpp"

using namespace smpipe;

namespace {

struct Reached {
  std::set<int> lines;  // source lines of the ops reached
  std::vector<isa::MaybeValue> last_values;  // of the last `st.relaxed` reached
  std::set<std::int64_t> indices;            // the known indices (addr=) of the `st.relaxed` ops reached
  bool unknown_index = false;                // and whether one was not known
  bool gave_up = false;
};

// Walks role 0 of `p` from its first instruction (or `pc`) with these variable values and `warp` (the other built-ins 0).
Reached walk(const isa::Program& p, std::int64_t warp, std::vector<std::int64_t> values = {}, std::uint32_t pc = 0,
             std::uint64_t budget = 1u << 24, std::vector<std::size_t> unknown = {}) {
  const isa::RoleCode& r = p.roles[0];
  std::array<std::int64_t, static_cast<int>(isa::Builtin::kCount)> builtins{};
  builtins[static_cast<int>(isa::Builtin::kWarp)] = warp;
  values.resize(r.slot_names.size(), 0);
  std::vector<isa::MaybeValue> vars;
  for (std::int64_t v : values) vars.push_back({true, v});
  for (std::size_t i : unknown) vars[i] = {};
  Reached out;
  out.gave_up = isa::walk_reachable_ops(
      r, pc, vars, builtins,
      [&](std::uint32_t op, std::span<const isa::MaybeValue> values) {
        out.lines.insert(r.ops[op].loc.line);
        if (r.ops[op].kind == isa::OpKind::kStRelaxed) {
          out.last_values.assign(values.begin(), values.end());
          const isa::MaybeValue& i = values[r.ops[op].slot(isa::Attr::kAddr)->first];
          if (i.known) out.indices.insert(i.value);
          else out.unknown_index = true;
        }
        return false;
      },
      budget);
  return out;
}

// The first instruction of `line` in the role's stack code (code.size() when none is).
std::uint32_t first_pc_of_line(const isa::RoleCode& r, int line) {
  std::uint32_t pc = 0;
  while (pc < r.code.size() && r.code[pc].line != line) ++pc;
  return pc;
}

}  // namespace

TEST_CASE("reach: a branch on the warp's index is taken on its known side only") {
  auto p = test::compile_text(R"(kernel k warps=4 {
  global f
  warps 0..4 w {
    compute cycles=10
    if warp == 0 { elect { st.relaxed f val=1 } }
    compute cycles=20
  }
}
)");
  CHECK(walk(p, 0).lines == std::set<int>{4, 5, 6});
  CHECK(walk(p, 1).lines == std::set<int>{4, 6});
  CHECK(walk(p, 3).lines == std::set<int>{4, 6});
}

TEST_CASE("reach: variables start at the warp's values, and a loop that has ended reaches nothing of its body") {
  auto p = test::compile_text(R"(kernel k warps=1 {
  global f[8]
  warp 0 w {
    let i = 0
    while i < 3 {
      st.relaxed f[i + 4] val=1
      let i = i + 1
    }
    compute cycles=5
  }
}
)");
  const isa::RoleCode& r = p.roles[0];
  // From the loop's test with i = 3 (the loop is over): only the compute after it.
  std::uint32_t test_pc = first_pc_of_line(r, 5);
  REQUIRE(test_pc < r.code.size());
  std::vector<std::int64_t> vars(r.slot_names.size(), 0);
  auto slot = [&](const std::string& n) {
    return static_cast<std::size_t>(std::find(r.slot_names.begin(), r.slot_names.end(), n) - r.slot_names.begin());
  };
  vars[slot("i")] = 3;
  CHECK(walk(p, 0, vars, test_pc).lines == std::set<int>{9});
  // With i = 2 the body runs once more: its store is reached with index 2 + 4 only.
  vars[slot("i")] = 2;
  auto once = walk(p, 0, vars, test_pc);
  CHECK(once.lines == std::set<int>{6, 9});
  CHECK(once.indices == std::set<std::int64_t>{6});
  CHECK_FALSE(once.unknown_index);
  // From the start (i = 0): the loop is followed iteration by iteration, each index known.
  auto all = walk(p, 0);
  CHECK(all.lines == std::set<int>{6, 9});
  CHECK(all.indices == std::set<std::int64_t>{4, 5, 6});
  CHECK_FALSE(all.unknown_index);
  CHECK_FALSE(all.gave_up);
}

TEST_CASE("reach: a loop longer than the paths kept per instruction joins its values (the index may be any), and ends") {
  auto p = test::compile_text(R"(kernel k warps=1 {
  global f[200]
  warp 0 w {
    for i in 0..100 { st.relaxed f[i] val=1 }
    compute cycles=5
  }
}
)");
  auto r = walk(p, 0);
  CHECK(r.lines == std::set<int>{4, 5});
  CHECK(r.unknown_index);
  CHECK(r.indices.count(0) == 1);
  CHECK(r.indices.count(99) == 0);
  CHECK_FALSE(r.gave_up);
}

TEST_CASE("reach: an index of constants and built-ins is known, an op's result is not") {
  auto p = test::compile_text(R"(kernel k warps=2 {
  global f[4]
  global c
  warps 0..2 w {
    st.relaxed f[warp + 2] val=1
  }
}
)");
  auto r = walk(p, 1);
  const isa::OpDesc& st = p.roles[0].ops[0];
  REQUIRE(r.last_values.size() == st.base_values.size());
  CHECK(r.last_values[st.slot(isa::Attr::kAddr)->first].known);
  CHECK(r.last_values[st.slot(isa::Attr::kAddr)->first].value == 3);
  auto q = test::compile_text(R"(kernel k warps=1 {
  global f[4]
  global c
  warp 0 w {
    let i = 0
    elect { atom.add c val=1 -> i }
    if i == 7 { compute cycles=3 }
    st.relaxed f[i % 4] val=1
  }
}
)");
  auto u = walk(q, 0);
  CHECK(u.lines == std::set<int>{6, 7, 8});  // i unknown: both sides of the branch
  const isa::OpDesc& st2 = q.roles[0].ops.back();
  CHECK_FALSE(u.last_values[st2.slot(isa::Attr::kAddr)->first].known);
}

TEST_CASE("reach: a walk past its budget gives up (the caller then assumes anything is reachable)") {
  auto p = test::compile_text(R"(kernel k warps=1 {
  global f
  warp 0 w {
    for i in 0..100 { compute cycles=1 }
    st.relaxed f val=1
  }
}
)");
  CHECK_FALSE(walk(p, 0).gave_up);
  CHECK(walk(p, 0, {}, 0, 30).gave_up);
}

TEST_CASE("reach: a variable given as unknown takes both sides of its branch") {
  auto p = test::compile_text(R"(kernel k warps=1 {
  global f
  warp 0 w {
    let t = -1
    if t >= 0 { st.relaxed f val=1 }
    compute cycles=5
  }
}
)");
  const isa::RoleCode& r = p.roles[0];
  // From the `if` (t = -1 known): the store is not reached; with t unknown (a tmem.alloc's result still to come) it is.
  std::uint32_t if_pc = first_pc_of_line(r, 5);
  REQUIRE(if_pc < r.code.size());
  std::vector<std::int64_t> vals(r.slot_names.size(), -1);
  CHECK(walk(p, 0, vals, if_pc).lines == std::set<int>{6});
  CHECK(walk(p, 0, vals, if_pc, 1u << 24, {0}).lines == std::set<int>{5, 6});
}
