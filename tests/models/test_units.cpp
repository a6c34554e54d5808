// The simulator's structure: every op goes to exactly one unit, attributes are read by name, internal
// checks survive release builds, and state follows the CTAs that are resident.
#include <catch2/catch.hpp>

#include "models/gpu/registry.hpp"
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

TEST_CASE("op attributes are found by name; an op has only its own", "[units][isa]") {
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
