// The simulator's structure: every op goes to exactly one unit, attributes are read by name, internal
// checks survive release builds, and state follows the CTAs that are resident.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "models/gpu/registry.hpp"
#include "models/gpu/simulator.hpp"
#include "sim/check.hpp"
#include "sim/engine.hpp"
#include "support.hpp"

using namespace smpipe;
using models::Outcome;

TEST_CASE("every op kind is accepted by exactly one unit of each section's implementations", "[units]") {
  const auto& registry = models::unit_registry();
  for (std::size_t k = 0; k < static_cast<std::size_t>(isa::OpKind::kCount); ++k) {
    INFO(isa::all_ops()[k].name);
    std::vector<std::string_view> sections;
    for (const auto& u : registry)
      for (isa::OpKind kind : u.ops())
        if (static_cast<std::size_t>(kind) == k && std::find(sections.begin(), sections.end(), u.unit) == sections.end())
          sections.push_back(u.unit);
    CHECK(sections.size() == 1);
  }
}

TEST_CASE("op attributes are found by name, an op has only its own", "[units][isa]") {
  auto p = test::compile_text(R"(
kernel k warps=1 {
  mbarrier b count=1
  smem s bytes=1024
  tensor A dtype=bf16 shape=(64, 64)
  warp 0 w { elect { arrive.expect_tx b tx=1024
                     tma.load A box=(32, 16) at=(0, 0) dst=s bar=b multicast=0 } 
             wait b parity=0 }
}
)");
  const auto& ops = p.roles[0].ops;
  REQUIRE(ops.size() == 3);
  const isa::OpDesc& expect = ops[0];
  REQUIRE(expect.slot(isa::Attr::kTx) != nullptr);
  CHECK(expect.base_values[expect.slot(isa::Attr::kTx)->first] == 1024);
  CHECK(expect.slot(isa::Attr::kParity) == nullptr);
  const isa::OpDesc& load = ops[1];
  REQUIRE(load.slot(isa::Attr::kBar) != nullptr);
  CHECK(load.slot(isa::Attr::kMulticast)->present);
  CHECK_FALSE(load.slot(isa::Attr::kBarCta)->present);
  CHECK(load.signals_barrier(0));         // tma.load's complete_tx signals b
  CHECK_FALSE(ops[2].signals_barrier(0));  // a wait does not
  CHECK(expect.signals_barrier(0));        // arrive.expect_tx arrives
  CHECK(isa::op_spec(isa::OpKind::kExpectTx).attrs[0].use == isa::BarrierUse::kSignal);  // expect_tx moves the tx-count
  CHECK(isa::attr_name(isa::Attr::kBarCta) == "bar_cta");
}

TEST_CASE("internal checks stay in release builds: scheduling in the past is an internal error", "[units][sim]") {
  struct Nop : sim::Handler {
    void handle(const sim::Event&) override {}
  } nop;
  sim::Engine e(nop);
  e.schedule(sim::Cycle(10), sim::Priority::kWarpStep, 0, 0);
  e.run(sim::Cycle(100));
  CHECK_NOTHROW(e.schedule(sim::Cycle(10), sim::Priority::kWarpStep, 0, 0));  // now is 10: not the past
  CHECK_THROWS_AS(e.schedule(sim::Cycle(9), sim::Priority::kWarpStep, 0, 0), sim::InternalError);
  CHECK_THROWS_WITH(e.schedule(sim::Cycle(9), sim::Priority::kWarpStep, 0, 0), Catch::Contains("scheduled in the past"));
}

TEST_CASE("CTA state is reused: the simulator holds as many CTAs as were resident at once", "[units]") {
  // 2000 CTAs of 16 warps (4 per SM: 528 resident on 132 SMs), each waiting on its barrier a while: four waves.
  const char* text = R"(
kernel k grid=(2000, 1, 1) warps=16 {
  mbarrier b count=32
  warp 0 w { compute cycles=500
             arrive b
             wait b parity=0 }
}
)";
  auto r = test::run_text(text);
  REQUIRE(r.outcome == Outcome::kFinished);
  CHECK(r.stats.ctas == 2000);
  CHECK(r.stats.cta_slots == r.stats.peak_resident_ctas);
  CHECK(r.stats.cta_slots < 2000);
}

TEST_CASE("sm_ctas_before counts the CTAs of the launch that started on the CTA's SM before it", "[units][isa]") {
  // One CTA per SM (its shared memory): with 132 CTAs every CTA is its SM's first, with 264 each SM runs two in turn.
  auto kernel = [](int ctas, const std::string& cycles) {
    return fmt::format(R"(
kernel k grid=({}, 1, 1) warps=1 {{
  smem s bytes=200000
  warp 0 w {{ sleep cycles={} }}
}}
)",
                       ctas, cycles);
  };
  auto cycles = [&](int ctas, const std::string& c) {
    auto r = test::run_text(kernel(ctas, c));
    REQUIRE(r.outcome == Outcome::kFinished);
    return r.cycles;
  };
  const std::string counted = "10 + 5000 * sm_ctas_before";
  CHECK(cycles(132, counted) == cycles(132, "10"));          // every CTA the first of its SM: 0
  CHECK(cycles(264, counted) == cycles(264, "10") + 5000);  // each SM's second CTA: 1
  CHECK(cycles(396, counted) == cycles(396, "10") + 15000);  // and third: 2 (0 + 1 + 2 turns of 5000)
}

TEST_CASE("regs= places CTAs by the register file: per warp in units of 256, both sides of the SM's 65536", "[units][isa]") {
  auto kernel = [](int warps, const std::string& regs) {
    return fmt::format(R"(
kernel k grid=(396, 1, 1) warps={} {} {{
  warp 0 w {{ sleep cycles=1000 }}
}}
)",
                       warps, regs);
  };
  auto peak = [&](int warps, const std::string& regs) {
    auto r = test::run_text(kernel(warps, regs));
    REQUIRE(r.outcome == Outcome::kFinished);
    return r.stats.peak_resident_ctas;
  };
  CHECK(peak(8, "") == 396);          // no regs=: warps and CTAs allow all three CTAs per SM at once
  CHECK(peak(8, "regs=128") == 264);  // 8 x 32 x 128 = 32768 per CTA: exactly two fit 65536
  CHECK(peak(8, "regs=129") == 132);  // 129 rounds up to 136 per thread (4352 per warp): 34816, one fits
  CHECK(peak(4, "regs=255") == 264);  // 255 -> 8160 per warp, 32640 per CTA: two
  // A CTA that needs more than the register file cannot run anywhere; exactly the register file can.
  CHECK_NOTHROW(test::run_text(kernel(32, "regs=64")));
  try {
    test::run_text(kernel(32, "regs=65"));
    FAIL("a CTA larger than the register file was accepted");
  } catch (const isa::InputError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("needs 73728 registers per CTA (32 warps x 65 per thread") &&
                                          Catch::Contains("65536 per SM"));
  }
  // regs= is 1..255 registers per thread (PTX's limit), an error at its place otherwise.
  CHECK(test::compile_error(kernel(4, "regs=255")).empty());
  CHECK(test::compile_error(kernel(4, "regs=1")).empty());
  CHECK_THAT(test::compile_error(kernel(4, "regs=256")), Catch::Contains("test.pipe:2:") && Catch::Contains("regs=256 out of range 1..255"));
  CHECK_THAT(test::compile_error(kernel(4, "regs=0")), Catch::Contains("regs=0 out of range 1..255"));
}

TEST_CASE("a peer's signal to a CTA that left the cluster's pipeline at once says it took part in none of it",
          "[units][tma][cluster]") {
  // Rank 0 multicasts a stage into both CTAs; rank 1, with nothing of its own, exits at once: the complete_tx that lands
  // there names when it exited and that none of its barrier's phases completed. Staying to consume the stage is the fix.
  auto prog = [](bool leave) {
    return fmt::format(R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=1 {{
  mbarrier full count=1
  smem s bytes=8K
  tensor B dtype=bf16 shape=(256, 256)
  warp 0 p {{
    {}
    elect {{ arrive.expect_tx full tx=4K }}
    if cluster_rank == 0 {{ elect {{ tma.load B box=(32, 64) at=(0, 0) dst=s bar=full multicast=0x3 }} }}
    wait full parity=0
  }}
}}
)",
                       leave ? "if cluster_rank == 1 { exit }" : "");
  };
  CHECK(test::run_text(prog(false)).outcome == Outcome::kFinished);
  auto r = test::run_text(prog(true));
  REQUIRE(r.outcome == Outcome::kUndefined);
  CHECK(r.diagnosis->title == "signal to an exited CTA");
  CHECK_THAT(r.diagnosis->message, Catch::Contains("CTA 1 exited at cycle 0 (its last warp), after 0 phase(s) of full completed "
                                                   "there: it took part in none of its peers' pipeline"));
  // A CTA that ran the first stage of a ring and left before the second did take part: not said.
  auto part = test::run_text(R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=1 {
  mbarrier full[2] count=1
  smem s[2] bytes=8K
  tensor B dtype=bf16 shape=(256, 256)
  warp 0 p {
    for i in 0..2 {
      if cluster_rank == 1 && i == 1 { exit }
      elect { arrive.expect_tx full[i] tx=4K }
      if cluster_rank == 0 { elect { tma.load B box=(32, 64) at=(0, 0) dst=s[i] bar=full[i] multicast=0x3 } }
      wait full[i] parity=0
    }
  }
}
)");
  REQUIRE(part.outcome == Outcome::kUndefined);
  CHECK(part.diagnosis->title == "signal to an exited CTA");
  CHECK_THAT(part.diagnosis->message, Catch::Contains("after 0 phase(s) of full[1] completed there") &&
                                          !Catch::Contains("took part in none"));
  // Arrivals of two CTAs' warps with the same index completing consecutive phases of a count-1 barrier (turns taken
  // across the pair): a finished run, with no note (as before the arrival masks told the CTAs apart).
  auto turns = test::run_text("kernel k grid=(2,1,1) cluster=(2,1,1) warps=2 {\n mbarrier b count=1\n"
                              " warp 0 sig { if cluster_rank == 0 { elect { arrive b } }\n"
                              " if cluster_rank == 1 { sleep cycles=2000\n elect { arrive b cta=0 } } }\n"
                              " warp 1 waiter { if cluster_rank == 0 { wait b parity=0\n wait b parity=1 } }\n}\n");
  REQUIRE(turns.outcome == Outcome::kFinished);
  CHECK(turns.notes.empty());
}

TEST_CASE("a signal to a CTA that exited is diagnosed, and named by its sender, after the slot was reused", "[units][tma]") {
  // 2000 CTAs of 32 warps: 264 resident. CTA 264 (the second wave) starts a TMA load and exits without
  // waiting; its slot is reused by a later CTA before the load lands.
  const char* text = R"(
kernel k grid=(2000, 1, 1) warps=32 {
  mbarrier b count=1
  smem s bytes=65536
  tensor A dtype=bf16 shape=(4096, 4096)
  warp 0 w { if cta >= 264 { elect { arrive.expect_tx b tx=65536
                                    tma.load A box=(256, 128) at=(0, 0) dst=s bar=b } } }
}
)";
  auto r = test::run_text(text);
  REQUIRE(r.outcome == Outcome::kUndefined);
  CHECK(r.diagnosis->title == "signal to an exited CTA");
  CHECK(r.diagnosis->cta == 264);
  CHECK_THAT(r.diagnosis->message, Catch::StartsWith("complete_tx(65536) from CTA 264 warp 0 (w) lands on b of CTA 264"));
  // Its own load (not a cluster peer's signal): the message says so, with the op's line and the barrier to wait on.
  CHECK_THAT(r.diagnosis->message, Catch::Contains("the CTA exited while its own op at line 7 was still in flight") &&
                                       Catch::Contains("a wait on b") && !Catch::Contains("cluster peers"));
  // Waiting for the load before exiting is the fix.
  std::string fixed = text;
  fixed.replace(fixed.find("bar=b } }"), 9, "bar=b }\n wait b parity=0 }");
  CHECK(test::run_text(fixed).outcome == Outcome::kFinished);
}

TEST_CASE("unit implementations are chosen by the machine file", "[units][machine]") {
  models::Machine m = models::load_machine("h100-sxm");
  CHECK(m.impls.at("l2") == "cache_hbm");
  m.impls["l2"] = "nonesuch";
  auto p = test::compile_text("kernel k warps=1 { warp 0 w { compute cycles=1 } }");
  CHECK_THROWS_WITH(models::simulate(p, m, {}), Catch::Contains("unit 'l2' has no implementation 'nonesuch'"));
}

namespace {
using test::problem;
using test::run_text;

double wgmma_issue_measurement(const std::string& name, nlohmann::json* params = nullptr) {
  std::ifstream f(std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h100/wgmma_issue.json");
  REQUIRE(f.good());
  nlohmann::json j = nlohmann::json::parse(f);
  for (const auto& meas : j["measurements"])
    if (meas["name"] == name) {
      if (params) *params = meas["params"];
      return meas["median"];
    }
  FAIL("no measurement " << name);
  return 0;
}
}  // namespace

TEST_CASE("tensor: a warpgroup's wgmma issue stalls when the pipe's queue is full, as on the H100", "[tensor][timing]") {
  // One warpgroup issues k back-to-back wgmmas; the run ends when it has issued the last (its warps exit),
  // so cycles(k) - cycles(1) is when wgmma k-1 issued relative to wgmma 0: the H100's issue timeline
  // (validation/results/h100/wgmma_issue.json). The machine's three parameters come from other numbers of
  // that run (the unstalled k-loop issue cost and the stall point at N = 256), so N = 128 and the shape of
  // the whole timeline are held out.
  for (int n : {128, 256}) {
    nlohmann::json params;
    wgmma_issue_measurement(fmt::format("wgmma_issue_timeline_n{}_1wg", n), &params);
    std::vector<double> hw = params["wg0_issue_offset_median"];
    auto issued = [&](int k) {
      auto r = run_text(fmt::format("kernel k warps=4 {{\n smem a bytes=2048\n smem b bytes={}\n warpgroup 0 c {{\n wgmma.fence\n"
                                    " wgmma m64n{}k16 dtype=bf16 a=a b=b count={}\n }}\n}}\n",
                                    n * 32, n, k));
      REQUIRE(r.outcome == Outcome::kFinished);
      return static_cast<double>(r.cycles);
    };
    double first = issued(1);
    for (int k = 2; k <= 16; ++k) {
      double sim = issued(k) - first;
      INFO("N " << n << ": wgmma " << k - 1 << " issued at +" << sim << " cycles, H100 +" << hw[static_cast<std::size_t>(k - 1)]);
      // The timeline reads the clock after every wgmma (up to 3 cycles each, the k-loop's issue cost does not
      // include it): that much per stamp, plus 5 %.
      CHECK(std::abs(sim - hw[static_cast<std::size_t>(k - 1)]) <= 0.05 * hw[static_cast<std::size_t>(k - 1)] + 3.0 * (k - 1));
    }
  }
}

TEST_CASE("tensor: two warpgroups in a CUTLASS k-loop spend the k-block issuing, not waiting, as on the H100", "[tensor][timing]") {
  // CUTLASS's mainloop with K_PIPE_MMAS = 1: per k-block 4 wgmmas, commit, wait for the previous group.
  // With two warpgroups the pipe is saturated: the issue stalls and the wait returns at once.
  auto r = run_text(R"(
kernel k warps=8 {
  smem a bytes=4096
  smem b bytes=16384
  warpgroups 0..2 c {
    wgmma.fence
    for kb in 0..16 {
      wgmma m64n256k16 dtype=bf16 a=a b=b count=4
      wgmma.commit
      wgmma.wait n=1
    }
    wgmma.wait n=0
  }
}
)");
  INFO(problem(r));
  REQUIRE(r.outcome == Outcome::kFinished);
  double period = wgmma_issue_measurement("wgmma_issue_kblock_period_n256_2wg");
  double sim = static_cast<double>(r.cycles) / 16;
  INFO("simulated k-block " << sim << " cycles, H100 " << period);
  CHECK(std::abs(sim - period) / period < 0.08);
  // The time goes into issuing: the wgmma.wait blocks little.
  REQUIRE(r.stats.roles.size() == 1);
  const auto& role = r.stats.roles[0];
  auto waited = role.waiting.count("wgmma.wait") ? role.waiting.at("wgmma.wait") : 0;
  INFO("wgmma.wait " << waited << " of " << role.lifetime << " warp cycles");
  CHECK(static_cast<double>(waited) < 0.10 * static_cast<double>(role.lifetime));
}

namespace {
// A measurement of the `issue` microbenchmark group: its median, or one of its params.
double issue_measurement(const std::string& name, const char* param = nullptr) {
  std::ifstream f(std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h100/issue.json");
  REQUIRE(f.good());
  nlohmann::json j = nlohmann::json::parse(f);
  for (const auto& meas : j["measurements"])
    if (meas["name"] == name) return param ? meas["params"][param] : meas["median"];
  FAIL("no measurement " << name);
  return 0;
}

// Warps a (index 0) and b (index 4: the same sub-partition) compute 1000 cycles with shares SA and SB, b after
// DELAY cycles of sleep; c (index 1: another sub-partition) computes 1000 cycles with share 100.
models::RunResult shared(int sa, int sb, int delay = 0) {
  return run_text(fmt::format(R"(kernel k warps=8 {{
  warp 0 a {{ compute cycles=1000 share={} }}
  warp 4 b {{ if {} > 0 {{ sleep cycles={} }}
             compute cycles=1000 share={} }}
  warp 1 c {{ compute cycles=1000 share=100 }}
}})",
                              sa, delay, delay, sb));
}
}  // namespace

TEST_CASE("sm: compute ops share their sub-partition above 100 % and only then, at 100 / sum of their speed", "[sm][timing]") {
  // Both sides of the boundary: 50 + 50 run as alone, 60 + 60 at 100/120 (1000 -> 1200 cycles).
  models::RunResult at = shared(50, 50), above = shared(60, 60), none = shared(0, 0);
  REQUIRE(at.outcome == Outcome::kFinished);
  REQUIRE(above.outcome == Outcome::kFinished);
  CHECK(none.cycles == 1000);
  CHECK(at.cycles == 1000);
  CHECK(above.cycles == 1200);
  // The op's own cycles are busy, what the sharing adds is a wait; warp c, on another sub-partition, shares nothing.
  CHECK(above.stats.roles[0].busy == 1000);
  CHECK(above.stats.roles[0].waiting.at("a shared SM sub-partition") == 200);
  CHECK(above.stats.roles[2].lifetime == 1000);
  CHECK(above.stats.roles[2].waiting.count("a shared SM sub-partition") == 0);
  // Without a share (0, the default) a compute op takes its cycles and waits for nothing.
  CHECK(none.stats.roles[0].waiting.count("a shared SM sub-partition") == 0);
}

TEST_CASE("sm: a shared op ends at the first whole cycle its work is done, just above 100 % too", "[sm][timing]") {
  auto two = [](int cycles, int sa, int sb) {
    return run_text(fmt::format("kernel k warps=8 {{\n warp 0 a {{ compute cycles={0} share={1} }}\n warp 4 b {{ compute "
                                "cycles={0} share={2} }}\n}}",
                                cycles, sa, sb))
        .cycles;
  };
  CHECK(two(7, 60, 60) == 9);         // 8.4 cycles of time: the 9th
  CHECK(two(1000, 50, 51) == 1010);   // 101 %: 1000 * 1.01
  CHECK(two(1000, 50, 50) == 1000);
}

TEST_CASE("sm: warps share a sub-partition by their index mod 4, across the CTAs of one SM", "[sm][timing]") {
  // Warp 2 is on another sub-partition than warp 0: no sharing.
  CHECK(run_text("kernel k warps=4 {\n warp 0 a { compute cycles=1000 share=100 }\n warp 2 b { compute cycles=1000 share=100 }\n}")
            .cycles == 1000);
  // 133 one-warp CTAs on 132 SMs: two CTAs on one SM, their warps 0 on one sub-partition.
  auto grid = [](int ctas) {
    return run_text(fmt::format("kernel k grid=({},1,1) warps=1 {{ warp 0 a {{ compute cycles=1000 share=100 }} }}", ctas)).cycles;
  };
  CHECK(grid(132) == 1000);
  CHECK(grid(133) == 2000);
}

TEST_CASE("sm: a run that stops during a shared op counts its time once, as the wait", "[sm][timing]") {
  models::RunOptions o;
  o.max_cycles = 500;
  // (Warp c's sleep moves time on to cycle 450; the shared ops would end at 1200.)
  models::RunResult r = run_text("kernel k warps=8 {\n warp 0 a { compute cycles=1000 share=60 }\n warp 4 b { compute cycles=1000 "
                                 "share=60 }\n warp 1 c { sleep cycles=450\n sleep cycles=450 }\n}",
                                 "h100-sxm", o);
  REQUIRE(r.outcome == Outcome::kWatchdog);
  const auto& a = r.stats.roles[0];
  std::int64_t waiting = 0;
  for (const auto& [cause, cycles] : a.waiting) waiting += cycles;
  CHECK(a.lifetime == 450);
  CHECK(a.busy + waiting <= a.lifetime);
  CHECK(a.waiting.at("a shared SM sub-partition") == a.lifetime);
  CHECK(models::format_problem(r).find("computes (share 60 %)") != std::string::npos);
}

TEST_CASE("sm: the shared speed follows the ops that start and end on the sub-partition", "[sm][timing]") {
  // a alone for 500 cycles, then a and b at half speed until a's other 500 are done (at 1500), then b alone.
  models::RunResult r = shared(100, 100, 500);
  REQUIRE(r.outcome == Outcome::kFinished);
  CHECK(r.stats.roles[0].lifetime == 1500);
  CHECK(r.cycles == 2000);
  CHECK(r.stats.roles[1].waiting.at("a shared SM sub-partition") == 500);
}

TEST_CASE("sm: two issue-bound warps on one sub-partition issue what the H100 measured", "[sm][timing]") {
  // One FFMA warp alone issues 0.914 per cycle (issue_ffma_c8_w1), 94 % of what a sub-partition issues with four
  // such warps (3.907 per SM, issue_ffma_c8_w16): its share. The model with that share on two warps of one
  // sub-partition (100/188 of their speed) against the H100's two per sub-partition (issue_ffma_c8_w8: 0.489 each).
  const double alone = issue_measurement("issue_ffma_c8_w1", "warp_ipc_median");
  const double peak = issue_measurement("issue_ffma_c8_w16") / 4;  // SM-wide instructions per cycle, 4 sub-partitions
  const double two = issue_measurement("issue_ffma_c8_w8", "warp_ipc_median");
  const int share = static_cast<int>(std::lround(100 * alone / peak));
  REQUIRE(share == 94);
  models::RunResult r = shared(share, share);
  REQUIRE(r.outcome == Outcome::kFinished);
  const double model_two = alone * 1000.0 / static_cast<double>(r.cycles);
  CHECK(std::abs(model_two / two - 1) < 0.02);
}

TEST_CASE("sm: a compute op's share is a percentage, checked as written and as computed", "[sm][isa]") {
  CHECK_THROWS_WITH(test::compile_text("kernel k warps=1 { warp 0 w { compute cycles=10 share=101 } }"),
                    Catch::Matchers::Contains("share=101 out of range"));
  CHECK_NOTHROW(test::compile_text("kernel k warps=1 { warp 0 w { compute cycles=10 share=100 } }"));
  models::RunResult r = run_text("kernel k warps=1 { warp 0 w { let s = 0\n for i in 0..2 { compute cycles=10 share=s - 1\n let s = 50 } } }");
  CHECK(r.outcome == Outcome::kUndefined);
  REQUIRE(r.diagnosis.has_value());
  CHECK(r.diagnosis->message.find("share=-1 out of range") != std::string::npos);
}

namespace {
// Warp 0 computes WORK cycles with mma_speed=S after SLEEP cycles; warpgroup 1 issues 4 wgmma m64n256k16 (bf16) at
// once and waits for them.
models::RunResult beside(int work, int speed, int sleep = 0) {
  return run_text(fmt::format(R"(kernel k warps=8 {{
  smem a bytes=2048
  smem b bytes=8192
  warp 0 alu {{ if {2} > 0 {{ sleep cycles={2} }}
               if {0} > 0 {{ compute cycles={0} mma_speed={1} }} }}
  warpgroup 1 mma {{ wgmma.fence
                    wgmma m64n256k16 dtype=bf16 a=a b=b count=4
                    wgmma.commit
                    wgmma.wait n=0 }}
}})",
                              work, speed, sleep));
}
std::int64_t h100_tensor(const char* name) {
  std::ifstream f(std::string(SMPIPE_SOURCE_DIR) + "/models/machines/h100-sxm.json");
  REQUIRE(f.good());
  return nlohmann::json::parse(f)["units"]["tensor"]["params"][name]["value"].get<std::int64_t>();
}
}  // namespace

TEST_CASE("sm: ALU work with mma_speed slows while the SM's tensor pipe runs wgmmas, and the wgmmas pay for it", "[sm][tensor][timing]") {
  // The pipe holds 4 wgmmas of 2 x 64 x 256 x 16 FLOP at the machine's rate, each wgmma_beside_alu_cycles longer when
  // it issues while the ALU op runs: the op, 1000 cycles alone, does S % of its work per cycle while the pipe runs.
  const std::int64_t occ = (2 * 64 * 256 * 16 + h100_tensor("tensor_flops_per_cycle_16bit") - 1) / h100_tensor("tensor_flops_per_cycle_16bit");
  const std::int64_t extra = h100_tensor("wgmma_beside_alu_cycles");
  REQUIRE(extra == 42);
  models::RunResult alone = beside(0, 100), full = beside(1000, 100), half = beside(1000, 50), slow = beside(1000, 74);
  for (const auto* r : {&alone, &full, &half, &slow}) REQUIRE(r->outcome == Outcome::kFinished);
  const auto& mma_alone = alone.stats.roles[1];
  // mma_speed=100 (the default) changes nothing, on either side.
  CHECK(full.stats.roles[0].lifetime == 1000);
  CHECK(full.stats.roles[1].lifetime == mma_alone.lifetime);
  // Below 100 the wgmmas, issued while the op runs, take `extra` cycles each more ...
  // (a role's lifetime adds up its 4 warps')
  CHECK(half.stats.roles[1].lifetime == mma_alone.lifetime + 4 * 4 * extra);
  CHECK(slow.stats.roles[1].lifetime == mma_alone.lifetime + 4 * 4 * extra);
  // ... and the op loses (100 - S) % of every cycle the pipe runs within it: 1000 + busy x (100 - S) / S... exactly,
  // the busy span P lies inside the op, so it ends at 1000 + P x (100 - S) / 100 (rounded up).
  const std::int64_t busy = 4 * (occ + extra);
  CHECK(half.stats.roles[0].lifetime == 1000 + (busy * 50 + 99) / 100);
  CHECK(slow.stats.roles[0].lifetime == 1000 + (busy * 26 + 99) / 100);
  // What the slowing adds is a wait of its own cause; the op's cycles stay busy.
  CHECK(half.stats.roles[0].busy == 1000);
  CHECK(half.stats.roles[0].waiting.at("ALU work beside wgmmas") == (busy * 50 + 99) / 100);
}

TEST_CASE("sm: mma_speed only acts where the op and the pipe's wgmmas overlap in time", "[sm][tensor][timing]") {
  models::RunResult alone = beside(0, 100);
  REQUIRE(alone.outcome == Outcome::kFinished);
  // An op that ends before the wgmmas issue (they issue after the fence, a few cycles in) slows neither.
  models::RunResult before = beside(1, 50);
  REQUIRE(before.outcome == Outcome::kFinished);
  CHECK(before.stats.roles[0].lifetime == 1);
  CHECK(before.stats.roles[1].lifetime == alone.stats.roles[1].lifetime);
  // An op that starts after the pipe is done runs at full speed (a role's lifetime adds up its 4 warps').
  const std::int64_t mma_end = alone.stats.roles[1].lifetime / 4;
  models::RunResult after = beside(500, 10, static_cast<int>(mma_end) + 10);
  REQUIRE(after.outcome == Outcome::kFinished);
  CHECK(after.stats.roles[0].lifetime == mma_end + 10 + 500);
  CHECK(after.stats.roles[1].lifetime == alone.stats.roles[1].lifetime);
  // An op that starts while the pipe runs is slowed for the rest of the pipe's span, but the wgmmas, issued before it,
  // keep their time (the wgmmas' side is decided when they issue).
  models::RunResult during = beside(1000, 50, 100);
  REQUIRE(during.outcome == Outcome::kFinished);
  CHECK(during.stats.roles[1].lifetime == alone.stats.roles[1].lifetime);
  // The pipe runs the 4 wgmmas from s0 (the first's start: after the fence and its issue cost, 1..40 cycles in)
  // to s0 + 4 x occ; the op, from cycle 100, loses half of each cycle of that left.
  const std::int64_t occ = (2 * 64 * 256 * 16 + h100_tensor("tensor_flops_per_cycle_16bit") - 1) / h100_tensor("tensor_flops_per_cycle_16bit");
  CHECK(during.stats.roles[0].lifetime >= 1100 + (4 * occ + 1 - 100) / 2);
  CHECK(during.stats.roles[0].lifetime <= 1100 + (4 * occ + 40 - 100 + 1) / 2);
}

TEST_CASE("sm: an op with mma_speed already running is re-timed when wgmmas issue beside it", "[sm][tensor][timing]") {
  // The ALU op starts first; the warpgroup issues its wgmmas 100 cycles later, twice, while the op runs on the SM's
  // only busy sub-partition (the re-timing must find it however few sub-partitions have had work, before the first
  // batch's span is forgotten).
  const std::int64_t occ = (2 * 64 * 256 * 16 + h100_tensor("tensor_flops_per_cycle_16bit") - 1) / h100_tensor("tensor_flops_per_cycle_16bit");
  const std::int64_t extra = h100_tensor("wgmma_beside_alu_cycles");
  for (int warp : {0, 3}) {
    INFO("ALU warp " << warp);
    models::RunResult r = run_text(fmt::format(R"(kernel k warps=8 {{
  smem a bytes=2048
  smem b bytes=8192
  warp {} alu {{ compute cycles=3000 mma_speed=50 }}
  warpgroup 1 mma {{ for i in 0..2 {{
                      sleep cycles=100
                      wgmma.fence
                      wgmma m64n256k16 dtype=bf16 a=a b=b count=4
                      wgmma.commit
                      wgmma.wait n=0
                    }} }}
}})",
                                               warp));
    REQUIRE(r.outcome == Outcome::kFinished);
    // Two batches, both inside the op (the second issues after the first has ended): each slows it.
    const std::int64_t busy = 2 * 4 * (occ + extra);
    CHECK(r.stats.roles[0].lifetime == 3000 + (busy * 50 + 99) / 100);
  }
}

TEST_CASE("sm: mma_speed and share are separate: an op without a share contends with nothing on its sub-partition", "[sm][tensor][timing]") {
  // Warps 0, 4 and 8 share sub-partition 0; no wgmmas run. The two ops with share 80 share it (1000 -> 1600 cycles);
  // the op with only mma_speed is not slowed by them.
  models::RunResult r = run_text(R"(kernel k warps=12 {
  warp 0 alu { compute cycles=1000 mma_speed=50 }
  warp 4 a { compute cycles=1000 share=80 }
  warp 8 b { compute cycles=1000 share=80 }
})");
  REQUIRE(r.outcome == Outcome::kFinished);
  CHECK(r.stats.roles[0].lifetime == 1000);
  CHECK(r.stats.roles[1].lifetime == 1600);
  CHECK(r.stats.roles[2].lifetime == 1600);
  CHECK(r.stats.roles[0].waiting.count("ALU work beside wgmmas") == 0);
  // With a share as well, both apply: share 100 alone is full speed, then 50 % while the pipe runs.
  const std::int64_t occ = (2 * 64 * 256 * 16 + h100_tensor("tensor_flops_per_cycle_16bit") - 1) / h100_tensor("tensor_flops_per_cycle_16bit");
  const std::int64_t busy = 4 * (occ + h100_tensor("wgmma_beside_alu_cycles"));
  models::RunResult both = run_text(R"(kernel k warps=8 {
  smem a bytes=2048
  smem b bytes=8192
  warp 0 alu { compute cycles=1000 share=100 mma_speed=50 }
  warpgroup 1 mma { wgmma.fence
                    wgmma m64n256k16 dtype=bf16 a=a b=b count=4
                    wgmma.commit
                    wgmma.wait n=0 }
})");
  REQUIRE(both.outcome == Outcome::kFinished);
  CHECK(both.stats.roles[0].lifetime == 1000 + (busy * 50 + 99) / 100);
  CHECK(both.stats.roles[0].waiting.at("a shared SM sub-partition") == (busy * 50 + 99) / 100);
}

TEST_CASE("sm: a compute op's mma_speed is a percentage of 1 to 100", "[sm][isa]") {
  CHECK_THROWS_WITH(test::compile_text("kernel k warps=1 { warp 0 w { compute cycles=10 mma_speed=0 } }"),
                    Catch::Matchers::Contains("mma_speed=0 out of range"));
  CHECK_THROWS_WITH(test::compile_text("kernel k warps=1 { warp 0 w { compute cycles=10 mma_speed=101 } }"),
                    Catch::Matchers::Contains("mma_speed=101 out of range"));
  CHECK_NOTHROW(test::compile_text("kernel k warps=1 { warp 0 w { compute cycles=10 mma_speed=1 } }"));
  models::RunResult r = run_text("kernel k warps=1 { warp 0 w { let s = 50\n for i in 0..2 { compute cycles=10 mma_speed=s * 3 } } }");
  CHECK(r.outcome == Outcome::kUndefined);
  REQUIRE(r.diagnosis.has_value());
  CHECK(r.diagnosis->message.find("mma_speed=150 out of range") != std::string::npos);
}

TEST_CASE("sm: in the softmax pingpong example, warpgroups in step lose more to shared sub-partitions than warpgroups taking turns", "[sm][timing][examples]") {
  auto cycles = [](int pingpong, int share) {
    auto r = test::run_cli({"run", "examples/softmax_pingpong", "-D", fmt::format("PINGPONG={}", pingpong), "-D",
                            fmt::format("SHARE={}", share), "-D", "SOFTMAX=1600", "--clock", "boost", "--json"});
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out)["cycles"].get<std::int64_t>();
  };
  const std::int64_t step0 = cycles(0, 0), step90 = cycles(0, 90), turns0 = cycles(1, 0), turns90 = cycles(1, 90);
  // In step, the two warpgroups' softmaxes overlap: with share 90 each they take longer.
  CHECK(step90 > step0 * 11 / 10);
  // Taking turns, one warpgroup's softmax overlaps the other's GEMMs: faster than in step, shares or not.
  CHECK(turns0 < step0);
  CHECK(turns90 < step90);
  // The shares cost the turns less than the warpgroups in step (their softmaxes overlap less).
  CHECK(turns90 - turns0 < step90 - step0);
  // Without a barrier the SM's wgmma queue staggers the warpgroups as well as the turns do (the example says so).
  CHECK(cycles(2, 90) <= turns90);
}

TEST_CASE("sm: only a compute op that can do nothing but keep its warp busy skips its unit (Unit::fixed_busy)", "[sm][units]") {
  isa::Program p = test::compile_text(R"(kernel k warps=1 {
  warp 0 w {
    let c = 5
    compute cycles=7
    compute cycles=0
    compute cycles=7 share=1
    compute cycles=7 share=0
    compute cycles=7 mma_speed=100
    compute cycles=7 mma_speed=99
    compute cycles=c
    sleep cycles=7
  }
})");
  models::Machine m = models::load_machine("h100-sxm");
  models::RunOptions o;
  models::Simulator sim(p, m, o);
  const auto& ops = p.roles[0].ops;
  REQUIRE(ops.size() == 8);
  auto fixed = [&](std::size_t i) { return sim.unit_for(ops[i].kind).fixed_busy(ops[i]); };
  CHECK(fixed(0) == 7);  // constant cycles, no share, full speed
  CHECK(fixed(1) == 0);  // 0 cycles: the op takes no time (execute says continue)
  CHECK(fixed(2) == 0);  // a share: the sub-partition's other ops decide its speed
  CHECK(fixed(3) == 7);
  CHECK(fixed(4) == 7);
  CHECK(fixed(5) == 0);  // slower beside wgmmas
  CHECK(fixed(6) == 0);  // cycles known only at run time (checked there)
  CHECK(fixed(7) == 0);  // sleep blocks its warp
  // The run is the one execute gives: 7 + 7 + 7 + 7 + 7 / 0.99 (alone: full speed) + 5 + 7.
  models::RunResult r = sim.run();
  REQUIRE(r.outcome == Outcome::kFinished);
  CHECK(r.cycles == 7 + 7 + 7 + 7 + 7 + 5 + 7);
  CHECK(r.stats.roles[0].busy == 7 + 7 + 7 + 7 + 7 + 5);
  // Such ops count towards --max-ops as every op does: the third stops the run when it is about to issue.
  models::RunOptions two;
  two.max_ops = 2;
  models::RunResult stopped =
      test::run_text("kernel k warps=1 { warp 0 w { compute cycles=7\n compute cycles=7\n compute cycles=7 } }", "h100-sxm", two);
  CHECK(stopped.outcome == Outcome::kWatchdog);
  CHECK(stopped.cycles == 14);
  CHECK(stopped.watchdog_reason.find("--max-ops 2 reached") != std::string::npos);
}
