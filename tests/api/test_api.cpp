// The C++ API (api/smpipe.hpp): the same runs as the command line, params set and read back, bad input as
// smpipe::Error with the command line's message.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "api/smpipe.hpp"
#include "support.hpp"

TEST_CASE("the API runs a model as `smpipe run` does", "[api]") {
  smpipe::Simulation sim("examples/mainloop");
  smpipe::Result r = sim.run();
  auto cli = smpipe::test::run_cli({"run", "examples/mainloop"});
  auto cli_json = smpipe::test::run_cli({"run", "examples/mainloop", "--json"});
  CHECK(r.outcome == smpipe::Outcome::kFinished);
  CHECK(r.exit_code == 0);
  CHECK(r.summary == cli.out);  // a clean finish: the summary is all it prints
  CHECK(r.problem.empty());
  CHECK(nlohmann::json::parse(r.json) == nlohmann::json::parse(cli_json.out));
  CHECK(r.cycles == nlohmann::json::parse(r.json)["cycles"].get<std::int64_t>());
  // The default clock is the command line's: sustained under load with random data.
  CHECK(r.clock_mhz == nlohmann::json::parse(cli_json.out)["clock_mhz"].get<double>());
  CHECK(r.clock_mhz < 1980.0);
  CHECK_THAT(r.clock_basis, Catch::StartsWith("sustained under load, random data"));
  CHECK(r.time_us > 0);
  CHECK_THAT(r.bottleneck, Catch::Contains("bound"));
  // The same inputs give the same result, byte for byte.
  CHECK(sim.run().json == r.json);
}

TEST_CASE("the API sets params, reads them back, and takes options", "[api]") {
  smpipe::Simulation sim("examples/mainloop");
  CHECK(sim.params().at("STAGES") == 4);
  sim.set("STAGES", 6).set("KTILES", 8);
  auto p = sim.params();
  CHECK(p.at("STAGES") == 6);
  CHECK(p.at("KTILES") == 8);
  auto cli = smpipe::test::run_cli({"run", "examples/mainloop", "-D", "STAGES=6", "-D", "KTILES=8", "--gpu", "h200", "--json"});
  smpipe::Result r = sim.options({.gpu = "h200"}).run();
  CHECK(nlohmann::json::parse(r.json) == nlohmann::json::parse(cli.out));
  CHECK(nlohmann::json::parse(r.json)["machine"] == "h200");
  smpipe::Result slow = sim.options({.gpu = "h200", .clock_mhz = 990}).run();
  CHECK(slow.clock_mhz == 990.0);
  CHECK(slow.clock_basis.empty());
  // The clock modes, as --clock.
  for (std::string mode : {"boost", "sustained-constant", "sustained"}) {
    auto c = smpipe::test::run_cli({"run", "examples/mainloop", "-D", "STAGES=6", "-D", "KTILES=8", "--gpu", "h200", "--clock", mode, "--json"});
    smpipe::Result m = sim.options({.gpu = "h200", .clock = mode}).run();
    CHECK(nlohmann::json::parse(m.json) == nlohmann::json::parse(c.out));
  }
  // The L2 at launch, as --l2 (a tile whose tensors fit: warm and cold differ).
  smpipe::Simulation tile("tutorial/03_warp_specialized");
  tile.set("M", 128).set("N", 128);
  std::int64_t cycles[2] = {};
  for (bool warm : {true, false}) {
    auto c = smpipe::test::run_cli({"run", "tutorial/03_warp_specialized", "-D", "M=128", "-D", "N=128", "--clock", "boost", "--l2",
                                    warm ? "warm" : "cold", "--json"});
    smpipe::Result t = tile.options({.clock = "boost", .warm_l2 = warm}).run();
    CHECK(nlohmann::json::parse(t.json) == nlohmann::json::parse(c.out));
    CHECK(nlohmann::json::parse(t.json)["l2_start"] == (warm ? "warm" : "cold"));
    cycles[warm ? 0 : 1] = t.cycles;
  }
  CHECK(cycles[0] < cycles[1]);
  // A dirty start, as --l2 dirty:BYTES; it needs warm_l2 false.
  {
    auto c = smpipe::test::run_cli({"run", "tutorial/03_warp_specialized", "-D", "M=128", "-D", "N=128", "--clock", "boost", "--l2",
                                    "dirty:4MiB", "--json"});
    smpipe::Result t = tile.options({.clock = "boost", .warm_l2 = false, .l2_dirty_bytes = 4 << 20}).run();
    CHECK(nlohmann::json::parse(t.json) == nlohmann::json::parse(c.out));
    CHECK(nlohmann::json::parse(t.json)["l2_start"] == "dirty");
    CHECK_THROWS_WITH(tile.options({.clock = "boost", .l2_dirty_bytes = 4 << 20}).run(), Catch::Contains("needs warm_l2 false"));
    CHECK_THROWS_WITH(tile.options({.clock = "boost", .warm_l2 = false, .l2_dirty_bytes = -1}).run(), Catch::Contains("negative"));
  }
  // The program's own tensors held dirty, as --l2 dirty:A; warm_l2 false, not with l2_dirty_bytes, names it declares.
  {
    auto c = smpipe::test::run_cli({"run", "tutorial/03_warp_specialized", "-D", "M=128", "-D", "N=128", "--clock", "boost", "--l2",
                                    "dirty:A", "--json"});
    smpipe::Result t = tile.options({.clock = "boost", .warm_l2 = false, .l2_dirty_tensors = {"A"}}).run();
    CHECK(nlohmann::json::parse(t.json) == nlohmann::json::parse(c.out));
    CHECK(nlohmann::json::parse(t.json)["l2_dirty_start_tensors"] == nlohmann::json::array({"A"}));
    CHECK_THROWS_WITH(tile.options({.clock = "boost", .l2_dirty_tensors = {"A"}}).run(), Catch::Contains("needs warm_l2 false"));
    CHECK_THROWS_WITH(tile.options({.clock = "boost", .warm_l2 = false, .l2_dirty_bytes = 1, .l2_dirty_tensors = {"A"}}).run(),
                      Catch::Contains("exclude each other"));
    CHECK_THROWS_WITH(tile.options({.clock = "boost", .warm_l2 = false, .l2_dirty_tensors = {"Z"}}).run(),
                      Catch::Contains("l2_dirty_tensors: the program declares no tensor Z"));
    CHECK_THROWS_WITH(tile.options({.clock = "boost", .warm_l2 = false, .l2_dirty_tensors = {"A", "A"}}).run(),
                      Catch::Contains("l2_dirty_tensors: tensor A is named twice"));
  }
  CHECK(sim.options({.gpu = "h200", .clock = "boost"}).run().clock_mhz == 1980.0);
  CHECK(sim.options({.gpu = "h200", .clock = "boost"}).run().clock_basis == "boost clock");
  // The first run that sets the sustained clock has no jitter: any seed and jitter get the same clock.
  double plain = sim.options({.gpu = "h200"}).run().clock_mhz;
  CHECK(sim.options({.gpu = "h200", .seed = 7, .jitter_pct = 30}).run().clock_mhz == plain);
  // A deadlock and a hazard come back as outcomes with the report, not as exceptions.
  smpipe::Result dl = smpipe::Simulation("examples/deadlock_producer_start_phase").run();
  CHECK(dl.outcome == smpipe::Outcome::kDeadlock);
  CHECK(dl.exit_code == 2);
  CHECK_THAT(dl.problem, Catch::Contains("deadlock at cycle"));
  smpipe::Result hz = smpipe::Simulation("examples/hazard_wgmma_before_tma").run();
  CHECK(hz.outcome == smpipe::Outcome::kHazard);
  CHECK(hz.exit_code == 3);
  smpipe::Result ub = smpipe::Simulation("examples/ub_double_init").run();
  CHECK(ub.outcome == smpipe::Outcome::kUndefinedBehaviour);
  smpipe::Result wd = smpipe::Simulation("examples/watchdog_livelock", {.max_cycles = 20000}).run();
  CHECK(wd.outcome == smpipe::Outcome::kWatchdog);
}

TEST_CASE("the API reports bad input as smpipe::Error with the command line's message", "[api]") {
  auto message = [](smpipe::Simulation s) -> std::string {
    try {
      s.run();
    } catch (const smpipe::Error& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(message(smpipe::Simulation("no/such/model")), Catch::Contains("no built-in model of that name"));
  CHECK_THAT(message(std::move(smpipe::Simulation("examples/mainloop").set("NOPE", 1))), Catch::Contains("NOPE"));
  CHECK_THAT(message(smpipe::Simulation("examples/mainloop", {.gpu = "a100"})), Catch::Contains("a100"));
  CHECK_THAT(message(smpipe::Simulation("examples/mainloop", {.clock = "turbo"})), Catch::Contains("turbo"));
  CHECK_THAT(message(smpipe::Simulation("examples/mainloop", {.clock_mhz = 1500, .clock = "boost"})), Catch::Contains("exclude"));
  CHECK_THROWS_AS(smpipe::Simulation("no/such/model").params(), smpipe::Error);
}

TEST_CASE("the API lists the built-in models and machines", "[api]") {
  auto models = smpipe::builtin_models();
  CHECK(std::find(models.begin(), models.end(), "sm90/gemm_tma_ws_cooperative") != models.end());
  CHECK(std::find(models.begin(), models.end(), "sm90/common/loads") == models.end());  // imported, not a model
  auto machines = smpipe::builtin_machines();
  CHECK(std::find(machines.begin(), machines.end(), "b200") != machines.end());
  CHECK(smpipe::version() == SMPIPE_VERSION);
  // A data folder variable that names no folder is smpipe::Error, not an internal type.
  for (const char* var : {"SMPIPE_MACHINES", "SMPIPE_KERNELS"}) {
    INFO(var);
    const char* old = std::getenv(var);
    const std::string saved = old ? old : "";
    ::setenv(var, "/nonexistent/smpipe-data", 1);
    std::string what;
    try {
      if (std::string(var) == "SMPIPE_MACHINES") (void)smpipe::builtin_machines(); else (void)smpipe::builtin_models();
    } catch (const smpipe::Error& e) {
      what = e.what();
    }
    if (old) ::setenv(var, saved.c_str(), 1); else ::unsetenv(var);
    CHECK_THAT(what, Catch::Contains(std::string(var) + " is set to '/nonexistent/smpipe-data', which is not a folder"));
  }
}

TEST_CASE("the API checks its options' ranges and turns any bad file name into smpipe::Error", "[api]") {
  auto message = [](const smpipe::Options& o) -> std::string {
    try {
      smpipe::Simulation("examples/mainloop", o).run();
    } catch (const smpipe::Error& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(message({.jitter_pct = 101}), Catch::Contains("jitter_pct=101"));
  CHECK_THAT(message({.max_cycles = 0}), Catch::Contains("max_cycles=0"));
  CHECK_THAT(message({.max_cycles = (std::int64_t{1} << 62) + 1}), Catch::Contains("out of range"));
  CHECK_THAT(message({.clock_mhz = -5}), Catch::Contains("clock_mhz"));
  CHECK(message({.jitter_pct = 100, .max_cycles = 1000}).empty());  // the bounds themselves are fine
  // A name longer than any path: not found, not a filesystem exception.
  CHECK_THROWS_AS(smpipe::Simulation(std::string(5000, 'x')).run(), smpipe::Error);
  CHECK(smpipe::models_dir().size() > 0);
}
