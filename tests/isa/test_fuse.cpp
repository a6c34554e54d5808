// The interpreter runs fused code (isa/fuse.cpp): each fused instruction must do what its run of stack
// instructions does. Checked on the fused forms themselves, and by running programs twice, fused and
// unfused, and comparing the whole result (cycles, statistics, diagnoses, the watchdog's counts).
#include <catch2/catch.hpp>

#include <numeric>

#include "api/load.hpp"
#include "isa/fuse.hpp"
#include "support.hpp"

using namespace smpipe;

namespace {

// The program as the compiler emitted it, run without fusion.
isa::Program unfused(isa::Program p) {
  for (auto& r : p.roles) {
    r.hoisted.clear();
    r.fast = r.code;
    r.fast_orig.resize(r.code.size() + 1);
    std::iota(r.fast_orig.begin(), r.fast_orig.end(), 0u);
  }
  return p;
}

std::string result_json(const isa::Program& p, const models::Machine& m) {
  return models::to_json(models::simulate(p, m, {}), p).dump();
}

void same_run(const isa::Program& p, const models::Machine& m) {
  std::string fused = result_json(p, m);
  std::string plain = result_json(unfused(p), m);
  CHECK(fused == plain);
}

std::size_t count(const isa::RoleCode& r, isa::Opc o) {
  return static_cast<std::size_t>(std::count_if(r.fast.begin(), r.fast.end(), [&](const isa::Instr& in) { return in.opc == o; }));
}

isa::Instr instr(isa::Opc o, std::uint32_t a = 0, std::int64_t imm = 0, isa::BinOp op = isa::BinOp::kAdd) {
  isa::Instr in{o};
  in.a = a;
  in.imm = imm;
  in.sub = static_cast<std::uint8_t>(op);
  return in;
}
// The fast instruction whose run holds code index c.
std::size_t run_of(const isa::RoleCode& r, std::uint32_t c) {
  std::size_t k = 0;
  while (k + 1 < r.fast_orig.size() && r.fast_orig[k + 1] <= c) ++k;
  return k;
}
}  // namespace

TEST_CASE("fused code: each form replaces its run, jumps land on the runs they targeted") {
  auto p = test::compile_text(R"(
kernel k grid=(1,1,1) warps=1 {
  warp 0 w {
    let g = 3
    for k in 0..10 {
      let s = (g + k) % 4
      let t = s * 2 + k
      compute cycles=t + 1
    }
  }
}
)");
  const isa::RoleCode& r = p.roles[0];
  REQUIRE(r.fast_orig.size() == r.fast.size() + 1);
  CHECK(r.fast_orig.front() == 0);
  CHECK(r.fast_orig.back() == r.code.size());
  CHECK(r.fast.size() < r.code.size());
  CHECK(count(r, isa::Opc::kLoadLoadBinJz) == 1);  // the loop test
  CHECK(count(r, isa::Opc::kLoadLoadBin) >= 1);    // g + k
  CHECK(count(r, isa::Opc::kBinImmStore) >= 1);    // % 4 -> s
  CHECK(count(r, isa::Opc::kLoadBinImmStore) == 1);  // k = k + 1
  CHECK(count(r, isa::Opc::kSet) >= 1);            // let g = 3
  // Runs are contiguous and in order; every jump goes to the start of a run that begins at its old target.
  for (std::size_t i = 0; i + 1 < r.fast_orig.size(); ++i) CHECK(r.fast_orig[i] < r.fast_orig[i + 1]);
  for (const isa::Instr& in : r.fast) {
    std::uint32_t to = in.opc == isa::Opc::kLoadLoadBinJz ? static_cast<std::uint32_t>(in.imm)
                       : in.opc == isa::Opc::kJump || in.opc == isa::Opc::kJumpIfZero ? in.a
                                                                                    : ~0u;
    if (to == ~0u) continue;
    REQUIRE(to < r.fast.size());
  }
  for (std::uint32_t c = 0; c < r.code.size(); ++c) {  // each jump lands on the run of its own old target
    const isa::Instr& old = r.code[c];
    if (old.opc != isa::Opc::kJump && old.opc != isa::Opc::kJumpIfZero) continue;
    const isa::Instr& f = r.fast[run_of(r, c)];
    std::uint32_t to = f.opc == isa::Opc::kLoadLoadBinJz ? static_cast<std::uint32_t>(f.imm) : f.a;
    CHECK(r.fast_orig[to] == old.a);
  }
  same_run(p, models::load_machine("h100-sxm"));
}


TEST_CASE("fused code: hand-made code with jump targets inside would-be runs and slots past 16 bits") {
  using isa::Opc;
  isa::Program p;
  p.warps = 1;
  isa::RoleCode r;
  r.slot_names.assign(70002, "s");
  r.code = {
      instr(Opc::kPush, 0, 7),                 // 0
      instr(Opc::kStore, 0),                   // 1
      instr(Opc::kLoad, 0),                    // 2
      instr(Opc::kPush, 0, 3),                 // 3
      instr(Opc::kBinary, 0, 0, isa::BinOp::kMod),  // 4: a jump target right after a push
      instr(Opc::kStore, 1),                   // 5
      instr(Opc::kLoad, 70000),                // 6
      instr(Opc::kLoad, 70001),                // 7: a second slot past 16 bits
      instr(Opc::kBinary, 0, 0, isa::BinOp::kLt),   // 8
      instr(Opc::kJumpIfZero, 12),             // 9
      instr(Opc::kJump, 4),                    // 10
      instr(Opc::kJump, 2),                    // 11
      instr(Opc::kExit),                       // 12
  };
  isa::fuse(r, p);
  REQUIRE(r.fast_orig.size() == r.fast.size() + 1);
  // No run holds a jump target after its first instruction.
  for (std::uint32_t t : {2u, 4u, 12u})
    CHECK(r.fast_orig[run_of(r, t)] == t);
  // `push 3` did not fuse with the `binary %` it precedes (4 is a target); loads of slots past 16 bits
  // did not fuse into a form that keeps the second slot in 16 bits.
  CHECK(r.fast[run_of(r, 3)].opc == Opc::kPush);  // alone: it cannot fuse with the target after it
  for (const isa::Instr& in : r.fast) CHECK(in.opc != Opc::kLoadLoadBin);
  CHECK(std::none_of(r.fast.begin(), r.fast.end(), [](const isa::Instr& in) { return in.opc == Opc::kLoadLoadBinJz; }));
  // Every jump lands on the run that starts at its own old target.
  for (std::uint32_t c = 0; c < r.code.size(); ++c) {
    const isa::Instr& old = r.code[c];
    if (old.opc != Opc::kJump && old.opc != Opc::kJumpIfZero) continue;
    const isa::Instr& f = r.fast[run_of(r, c)];
    std::uint32_t to = f.opc == Opc::kLoadLoadBinJz ? static_cast<std::uint32_t>(f.imm) : f.a;
    INFO("code jump at " << c);
    CHECK(r.fast_orig[to] == old.a);
  }
}

TEST_CASE("fused code: a jump into the middle of a run keeps the run apart") {
  // `while` jumps back to its test, which starts with `load`: the instructions before it do not fuse
  // across it.
  auto p = test::compile_text(R"(
kernel k grid=(1,1,1) warps=1 {
  warp 0 w {
    let i = 0
    let j = 5
    while i < j {
      let i = i + 1
      compute cycles=1
    }
  }
}
)");
  const isa::RoleCode& r = p.roles[0];
  for (std::size_t f = 0; f < r.fast.size(); ++f)
    for (std::uint32_t c = r.fast_orig[f] + 1; c < r.fast_orig[f + 1]; ++c)
      for (const isa::Instr& in : r.code)
        if (in.opc == isa::Opc::kJump || in.opc == isa::Opc::kJumpIfZero) CHECK(in.a != c);
  same_run(p, models::load_machine("h100-sxm"));
}

TEST_CASE("fused code: errors and the watchdog read as without fusion") {
  models::Machine m = models::load_machine("h100-sxm");
  // Division by zero and overflow inside fused forms (load/push/binary/store), with their lines.
  for (const char* body : {"let z = 0\n    let x = 7 % z", "let z = 0\n    for k in 0..3 { let y = (k + 1) / z }",
                           "let big = 9223372036854775807\n    let x = big + 1", "let big = 9223372036854775807\n    let big = big * 2"}) {
    auto p = test::compile_text(fmt::format(R"(
kernel k grid=(1,1,1) warps=1 {{
  warp 0 w {{
    {}
    compute cycles=1
  }}
}}
)",
                                            body));
    auto r = models::simulate(p, m, {});
    CHECK(r.outcome == models::Outcome::kUndefined);
    same_run(p, m);
  }
  // An endless loop that takes no time: stopped after the same number of (unfused) instructions.
  auto p = test::compile_text(R"(
kernel k grid=(1,1,1) warps=1 {
  warp 0 w {
    let i = 0
    while i >= 0 {
      let i = (i + 1) % 3
    }
  }
}
)");
  auto r = models::simulate(p, m, {});
  REQUIRE(r.outcome == models::Outcome::kWatchdog);
  CHECK_THAT(r.watchdog_reason, Catch::Contains("instructions"));
  same_run(p, m);
}

TEST_CASE("fused code: expressions of built-ins are computed once per warp, where they cannot fail") {
  auto p = test::compile_text(R"(
kernel k grid=(4,1,1) cluster=(2,1,1) warps=8 {
  mbarrier bar[4] count=1
  warps 0..8 w {
    for k in 0..6 {
      let rank = ((warp % 4) ^ 1) << 2 | 1
      let peer = cluster_rank / 2 + cta_x % 2
      let far = warp * 4611686018427387904
      compute cycles=rank + peer + 1
    }
  }
}
)");
  const isa::RoleCode& r = p.roles[0];
  // `((warp % 4) ^ 1) << 2 | 1` and `cluster_rank / 2 + cta_x % 2` are hoisted; `warp * 2^62` may overflow
  // (warp can be 2): it stays in the loop.
  CHECK(r.hoisted.size() == 2);
  for (const auto& h : r.hoisted) {
    bool mul = std::any_of(h.begin(), h.end(), [](const isa::Instr& in) {
      return in.opc == isa::Opc::kBinary && in.sub == static_cast<std::uint8_t>(isa::BinOp::kMul);
    });
    CHECK_FALSE(mul);
  }
  std::int64_t builtins[static_cast<int>(isa::Builtin::kCount)] = {};
  builtins[static_cast<int>(isa::Builtin::kWarp)] = 6;
  std::vector<std::int64_t> values;
  for (const auto& h : r.hoisted) values.push_back(isa::evaluate_hoisted(h, builtins));
  CHECK(std::count(values.begin(), values.end(), ((6 % 4) ^ 1) << 2 | 1) == 1);
  // The overflow happens where it did, at its line and cycle (warp 2 reaches it).
  auto fused = models::simulate(p, models::load_machine("h100-sxm"), {});
  CHECK(fused.outcome == models::Outcome::kUndefined);
  same_run(p, models::load_machine("h100-sxm"));
  // A division by a built-in expression that can be zero stays where it is: warp 1 fails at its line.
  auto q = test::compile_text(R"(
kernel k grid=(1,1,1) warps=4 {
  warps 0..4 w {
    compute cycles=10
    let x = 100 / (warp - 1)
    compute cycles=1
  }
}
)");
  for (const auto& h : q.roles[0].hoisted)  // `warp - 1` may be; the division is not
    CHECK(std::none_of(h.begin(), h.end(), [](const isa::Instr& in) {
      return in.opc == isa::Opc::kBinary && in.sub == static_cast<std::uint8_t>(isa::BinOp::kDiv);
    }));
  auto rq = models::simulate(q, models::load_machine("h100-sxm"), {});
  REQUIRE(rq.outcome == models::Outcome::kUndefined);
  CHECK(rq.diagnosis->cycle == 10);
  CHECK(rq.diagnosis->loc.line == 5);
  same_run(q, models::load_machine("h100-sxm"));
}

TEST_CASE("fused code: the built-in models run the same fused and unfused") {
  for (const std::string& name : api::builtin_model_names()) {
    if (name.find("/common/") != std::string::npos) continue;  // imported pieces, not models
    INFO(name);
    isa::ParamOverrides small;
    if (name.rfind("sm90/", 0) == 0 || name.rfind("sm100/", 0) == 0 || name == "sm80/gemm_multistage")
      small = {{"M", 512}, {"N", 512}, {"K", 512}};
    if (name == "sm80/b2b_gemm_smem_accumulator") small = {{"M", 4096}};
    api::Loaded l;
    try {
      l = api::load_program(api::resolve_file(name), small, "", "", 0);
    } catch (const isa::InputError&) {
      continue;  // models written not to compile (catalogue entries that show a compile error)
    }
    same_run(l.program, l.machine);
  }
}
