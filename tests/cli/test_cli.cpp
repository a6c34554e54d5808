// The command line: exit codes, golden summaries, determinism, check --seeds, --json, --trace, --clock.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unistd.h>

#include "cli/report_files.hpp"
#include "cli/sweep.hpp"
#include "models/machine.hpp"
#include "support.hpp"

using namespace smpipe;
using test::run_cli;

namespace {
std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
// An empty folder of this name under the temporary directory.
std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}
std::vector<std::string> file_lines(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}
std::string example(const std::string& name) { return test::examples_dir() + "/" + name + ".pipe"; }

// Golden files hold the output with the example directory replaced by "EXAMPLES"; SMPIPE_UPDATE_GOLDEN=1
// rewrites them.
void check_golden(const std::string& name, std::string actual) {
  for (std::size_t p; (p = actual.find(test::examples_dir())) != std::string::npos;)
    actual.replace(p, test::examples_dir().size(), "EXAMPLES");
  std::string path = std::string(SMPIPE_TESTS_DIR) + "/golden/" + name;
  if (std::getenv("SMPIPE_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << actual;
  INFO("golden file " << path << " (SMPIPE_UPDATE_GOLDEN=1 rewrites it)");
  CHECK(read_file(path) == actual);
}
}  // namespace

TEST_CASE("golden summaries of the example programs", "[cli][golden]") {
  for (const char* name : {"mainloop", "cluster_multicast", "sm80_cp_async", "sm100_umma_clc", "deadlock_producer_start_phase",
                           "deadlock_tx_mismatch", "ub_arrival_overflow"}) {
    DYNAMIC_SECTION(name) {
      auto r = run_cli({"run", example(name)});
      check_golden(std::string(name) + ".txt", r.out);
    }
  }
}

TEST_CASE("exit codes: 0 finished, 1 bad input, 2 deadlock, 3 undefined behaviour", "[cli]") {
  CHECK(run_cli({"run", example("mainloop")}).code == 0);
  CHECK(run_cli({"run", example("deadlock_tx_mismatch")}).code == 2);
  CHECK(run_cli({"run", example("ub_double_init")}).code == 3);
  auto missing = run_cli({"run", "no/such/file.pipe"});
  CHECK(missing.code == 1);
  CHECK_THAT(missing.err, Catch::Contains("no file 'no/such/file.pipe'"));
  auto bad_define = run_cli({"run", example("mainloop"), "-D", "STAGES=x"});
  CHECK(bad_define.code == 1);
  CHECK_THAT(bad_define.err, Catch::Contains("-D STAGES=x: 'x' is not an integer"));
  auto bad_gpu = run_cli({"run", example("mainloop"), "--gpu", "h300"});
  CHECK(bad_gpu.code == 1);
  CHECK(run_cli({"run"}).code == 1);
  CHECK(run_cli({"frobnicate"}).code == 1);
  CHECK(run_cli({"--version"}).code == 0);
  auto help = run_cli({"run", "--help"});
  CHECK(help.code == 0);
  CHECK_THAT(help.out, Catch::Contains("--jitter"));
}

TEST_CASE("run: -D changes a param and --dump-program prints the bytecode", "[cli]") {
  auto four = run_cli({"run", example("mainloop"), "--json"});
  auto eight = run_cli({"run", example("mainloop"), "--json", "-D", "KTILES=64"});
  auto j4 = nlohmann::json::parse(four.out), j8 = nlohmann::json::parse(eight.out);
  CHECK(j8["params"]["KTILES"] == 64);
  CHECK(j8["flops"].get<std::int64_t>() == 2 * j4["flops"].get<std::int64_t>());
  auto dump = run_cli({"run", example("mainloop"), "--dump-program"});
  CHECK_THAT(dump.out, Catch::Contains("role consumer warps 4..12"));
  CHECK_THAT(dump.out, Catch::Contains("op       wait full[s] parity=(k / STAGES) & 1"));
}

TEST_CASE("the same inputs and seed give byte-identical outputs", "[cli][determinism]") {
  namespace fs = std::filesystem;
  std::string t1 = (fs::temp_directory_path() / "smpipe_det1.json").string();
  std::string t2 = (fs::temp_directory_path() / "smpipe_det2.json").string();
  for (const char* name : {"cluster_multicast", "sm100_umma_clc"}) {
    auto a = run_cli({"run", example(name), "--jitter", "25", "--seed", "9", "--trace", t1});
    auto b = run_cli({"run", example(name), "--jitter", "25", "--seed", "9", "--trace", t2});
    CHECK(a.out.substr(0, a.out.find("trace:")) == b.out.substr(0, b.out.find("trace:")));
    std::string ta = read_file(t1), tb = read_file(t2);
    CHECK(ta.size() > 1000);
    CHECK(ta == tb);
    auto ja = run_cli({"run", example(name), "--jitter", "25", "--seed", "9", "--json"});
    auto jb = run_cli({"run", example(name), "--jitter", "25", "--seed", "9", "--json"});
    CHECK(ja.out == jb.out);
  }
}

TEST_CASE("run: --trace writes Chrome trace events with warp tracks, async slices, flows and barrier tracks", "[cli][trace]") {
  std::string path = (std::filesystem::temp_directory_path() / "smpipe_trace.json").string();
  auto r = run_cli({"run", example("mainloop"), "--trace", path});
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(read_file(path));
  std::map<std::string, int> phases;
  bool warp_track = false, tma = false;
  for (const auto& e : j["traceEvents"]) {
    phases[e["ph"].get<std::string>()]++;
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "warp 4 consumer") warp_track = true;
    if (e["ph"] == "b" && e["cat"] == "tma") tma = true;
  }
  CHECK(warp_track);
  CHECK(tma);
  CHECK(phases["X"] > 100);
  CHECK(phases["s"] > 0);
  CHECK(phases["s"] == phases["f"]);
  CHECK(phases["C"] > 10);  // stage-occupancy counters
}

TEST_CASE("check --seeds reports schedules that break a rule, with the seed to rerun", "[cli][check]") {
  // A waiter that is woken by the first of two quick completions: whether the second lands before it
  // resumes depends on the jittered latencies.
  // The second arrive lands 4 cycles after the nominal wake-up: fine without jitter, an overrun when the
  // jittered wake-up comes later than that.
  auto m = models::load_machine("h100-sxm");
  std::int64_t gap = m.mbarrier_wake_cycles - m.mbarrier_arrive_cycles + 4;
  std::string path = (std::filesystem::temp_directory_path() / "smpipe_race.pipe").string();
  std::ofstream(path) << "kernel race warps=2 {\n mbarrier b count=32\n warp 0 s { compute cycles=100\n arrive b\n"
                         " compute cycles=" << gap << "\n arrive b }\n warp 1 w { wait b parity=0 }\n}\n";
  auto plain = run_cli({"run", path});
  CHECK(plain.code == 0);
  auto r = run_cli({"check", path, "--seeds", "40", "--jitter", "50"});
  CHECK(r.code == 3);
  CHECK_THAT(r.out, Catch::Contains("undefined behaviour: phase overrun"));
  CHECK_THAT(r.out, Catch::Contains("--jitter 50)"));
  CHECK_THAT(r.out, Catch::Contains("40 schedules with --jitter 50"));
  auto clean = run_cli({"check", example("mainloop"), "--seeds", "5"});
  CHECK(clean.code == 0);
  CHECK_THAT(clean.out, Catch::Contains("5 schedules with --jitter 20: 5 finished, 0 failed"));
}

TEST_CASE("smpipe models lists the built-in models and machines", "[cli]") {
  auto r = run_cli({"models"});
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("examples/mainloop"));
  CHECK_THAT(r.out, Catch::Contains("STAGES=4"));
  CHECK_THAT(r.out, Catch::Contains("h100-sxm"));
  CHECK(run_cli({"run", "examples/mainloop"}).code == 0);
}

TEST_CASE("check runs its schedules on several threads with the same output as on one", "[cli]") {
  for (const char* model : {"examples/hazard_wgmma_before_tma", "examples/cluster_multicast"}) {
    auto one = test::run_cli({"check", model, "--seeds", "12", "--jobs", "1"});
    auto three = test::run_cli({"check", model, "--seeds", "12", "--jobs", "3"});
    auto all = test::run_cli({"check", model, "--seeds", "12"});
    INFO(model);
    CHECK(one.code == three.code);
    CHECK(one.out == three.out);
    CHECK(one.out == all.out);
  }
}

TEST_CASE("sweep: a grid of params on several threads, invalid points as rows, a ranking, CSV and JSON", "[cli][sweep]") {
  CHECK(cli::parse_axis("STAGES=2..5").second == std::vector<std::int64_t>{2, 3, 4});  // half-open, as in the language
  CHECK(cli::parse_axis("N=1K..4K:1K").second == std::vector<std::int64_t>{1024, 2048, 3072});
  CHECK(cli::parse_axis("T=64,128,256").second == std::vector<std::int64_t>{64, 128, 256});
  CHECK_THROWS(cli::parse_axis("T=5..5"));
  CHECK_THROWS(cli::parse_axis("T=1..9:0"));
  std::string csv = (std::filesystem::temp_directory_path() / "smpipe_sweep_test.csv").string();
  std::vector<std::string> args = {"sweep", "examples/mainloop", "-D", "STAGES=1,4,40", "-D", "KTILES=8..25:8", "--group", "KTILES",
                                   "--csv", csv};
  auto one = test::run_cli([&] { auto v = args; v.insert(v.end(), {"--jobs", "1"}); return v; }());
  auto two = test::run_cli([&] { auto v = args; v.insert(v.end(), {"--jobs", "2"}); return v; }());
  INFO(one.out << one.err);
  CHECK(one.code == 0);
  CHECK(one.out == two.out);
  CHECK(one.out.find("fastest for KTILES=8:") != std::string::npos);
  CHECK(one.out.find("9 points: 6 finished, 3 did not (3 not valid inputs)") != std::string::npos);
  CHECK(one.out.find("shared memory") != std::string::npos);  // STAGES=40 does not fit: a row with its reason
  std::ifstream f(csv);
  std::string line;
  int lines = 0;
  while (std::getline(f, line)) ++lines;
  CHECK(lines == 10);  // header + 9 points
  // At most 1000000 points, told from the axes' sizes before the grid is built (10^10 points would not fit in memory):
  // 1001 x 1000 and 100000 x 100000 are refused at once (the 9 points above run).
  auto over = test::run_cli({"sweep", "examples/mainloop", "-D", "STAGES=0..1001", "-D", "KTILES=0..1000"});
  CHECK(over.code == 1);
  CHECK(over.err.find("the grid has 1001000 points (at most 1000000)") != std::string::npos);
  auto huge = test::run_cli({"sweep", "examples/mainloop", "-D", "STAGES=0..100000", "-D", "KTILES=0..100000"});
  CHECK(huge.code == 1);
  CHECK(huge.err.find("the grid has 10000000000 points (at most 1000000)") != std::string::npos);
  // check --seeds: 1 .. 1000000.
  auto seeds = test::run_cli({"check", "examples/mainloop", "--seeds", "1000001"});
  CHECK(seeds.code == 1);
  CHECK(seeds.err.find("--seeds") != std::string::npos);
  CHECK(test::run_cli({"check", "examples/mainloop", "--seeds", "1"}).code == 0);
  // A point that deadlocks is a row too, and sets the exit status.
  auto dead = test::run_cli({"sweep", "examples/deadlock_producer_start_phase", "-D", "STAGES=2,4"});
  CHECK(dead.code == 2);
  CHECK(dead.out.find("deadlock") != std::string::npos);
}

TEST_CASE("sweep: each point's SM clock in the table, the CSV and the JSON, as `run` chooses it", "[cli][sweep][clock]") {
  auto dir = fresh_dir("smpipe_sweep_clock_test");
  const std::string csv = (dir / "s.csv").string(), json = (dir / "s.json").string();
  // Two stage counts of the cooperative model: different loads of the tensor pipe, so different sustained clocks.
  const std::vector<std::string> shape = {"-D", "M=1024", "-D", "N=1024", "-D", "K=1024"};
  std::vector<std::string> args = {"sweep", "sm90/gemm_tma_ws_cooperative", "-D", "STAGES=2,4", "--csv", csv, "--json", json};
  args.insert(args.end(), shape.begin(), shape.end());
  auto s = test::run_cli(args);
  INFO(s.out << s.err);
  REQUIRE(s.code == 0);
  CHECK(s.out.find(" MHz ") != std::string::npos);
  nlohmann::json j;
  {
    std::ifstream in(json);
    j = nlohmann::json::parse(in);
  }
  auto lines = file_lines(csv);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].find(",cycles,clock_mhz,time_us,") != std::string::npos);
  std::set<double> clocks;
  for (std::size_t i = 0; i < 2; ++i) {
    std::vector<std::string> run = {"run", "sm90/gemm_tma_ws_cooperative", "-D", i == 0 ? "STAGES=2" : "STAGES=4", "--json"};
    run.insert(run.end(), shape.begin(), shape.end());
    double clock = nlohmann::json::parse(test::run_cli(run).out)["clock_mhz"].get<double>();
    CHECK(j["points"][i]["clock_mhz"].get<double>() == clock);
    CHECK(lines[i + 1].find(fmt::format(",{},", clock)) != std::string::npos);
    clocks.insert(clock);
  }
  CHECK(clocks.size() == 2);
  // --clock boost: every point at the machine file's clock.
  args.push_back("--clock");
  args.push_back("boost");
  REQUIRE(test::run_cli(args).code == 0);
  {
    std::ifstream in(json);
    j = nlohmann::json::parse(in);
  }
  for (const auto& p : j["points"]) CHECK(p["clock_mhz"].get<double>() == 1980.0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("summary: no unit is busier than 100 % when work was booked past the run's end", "[cli][summary]") {
  // A warpgroup issues eight wgmmas and exits without waiting: the MMAs run on past its exit.
  const char* unwaited = R"(kernel k warps=4 {
  smem a bytes=16K
  warpgroup 0 m {
    wgmma.fence
    wgmma m64n256k16 dtype=bf16 a=a b=a count=8
    wgmma.commit
  }
}
)";
  auto r = test::run_text(unwaited);
  REQUIRE(r.outcome == models::Outcome::kFinished);
  const models::UnitStats* pipe = nullptr;
  for (const auto& u : r.stats.units)
    if (u.name == "tensor pipe") pipe = &u;
  REQUIRE(pipe != nullptr);
  CHECK(pipe->utilisation <= 1.0);  // was 4.6: every booked MMA over the 228 cycles the warps lived
  CHECK(pipe->utilisation > 0.5);   // the pipe was busy from the first wgmma to the end
  // A model stopped by the watchdog while its loads and MMAs are in flight.
  models::RunOptions o;
  o.max_cycles = 20000;
  auto stopped = test::run_text(
      "param K = 64\nkernel k warps=8 {\n mbarrier full[2] count=1\n mbarrier empty[2] count=128\n smem s[2] bytes=32K\n"
      " tensor A dtype=bf16 shape=(4096, 4096)\n warp 0 p { elect { for k in 0..K {\n  wait empty[k % 2] parity=((k / 2) & 1) ^ 1\n"
      "  arrive.expect_tx full[k % 2] tx=32K\n  tma.load A box=(256, 64) at=(0, k * 64) dst=s[k % 2] bar=full[k % 2] } } }\n"
      " warpgroup 1 c { for k in 0..K {\n  wait full[k % 2] parity=(k / 2) & 1\n  wgmma.fence\n"
      "  wgmma m64n256k16 dtype=bf16 a=s[k % 2] b=s[k % 2] count=32\n  wgmma.commit\n  wgmma.wait 0\n  arrive empty[k % 2] } }\n}\n",
      "h100-sxm", o);
  REQUIRE(stopped.outcome == models::Outcome::kWatchdog);
  for (const auto& u : stopped.stats.units) {
    INFO(u.name);
    CHECK(u.utilisation <= 1.0);
  }
}

TEST_CASE("watchdog: a run cut short while progressing is told apart from one that loops without progress", "[cli][summary]") {
  // Progressing: a long pipeline stopped by --max-cycles in the middle.
  auto long_run = test::run_cli({"run", test::examples_dir() + "/mainloop.pipe", "-D", "KTILES=4096", "--max-cycles", "50000"});
  CHECK(long_run.code == cli::kDeadlock);
  CHECK_THAT(long_run.out, Catch::Contains("the run was still making progress"));
  CHECK_THAT(long_run.out, !Catch::Contains("likely cause"));
  auto json = nlohmann::json::parse(
      test::run_cli({"run", test::examples_dir() + "/mainloop.pipe", "-D", "KTILES=4096", "--max-cycles", "50000", "--json"}).out);
  CHECK(json["deadlock"]["progressing"] == true);
  CHECK(json["deadlock"]["last_progress_cycle"].get<std::int64_t>() > 45000);
  // Not progressing: a test_wait loop that nothing completes; analysed as a deadlock.
  auto spin = test::run_cli({"run", test::examples_dir() + "/watchdog_livelock.pipe", "--max-cycles", "50000"});
  CHECK(spin.code == cli::kDeadlock);
  CHECK_THAT(spin.out, Catch::Contains("no barrier phase completed and no warp exited before the stop"));
  CHECK_THAT(spin.out, !Catch::Contains("still making progress"));
  CHECK_THAT(spin.out, !Catch::Contains("inside an op that takes time"));
  // Warps inside compute ops that share their sub-partitions, stopped before any ends: long ops, not a loop.
  models::RunOptions short_run;
  short_run.max_cycles = 5000;
  auto sharing = test::run_text("kernel k warps=2 {\n warps 0..2 w { compute cycles=1000000 share=80 }\n}\n", "h100-sxm", short_run);
  REQUIRE(sharing.outcome == models::Outcome::kWatchdog);
  CHECK_THAT(models::format_problem(sharing), Catch::Contains("every warp below is inside an op that takes time") &&
                                                  !Catch::Contains("loop without progress"));
  // An op-less endless loop is stuck even if another warp just exited: not judged by progress.
  models::RunOptions o;
  auto loop = test::run_text("kernel k warps=2 {\n warp 0 a { compute cycles=100 }\n warp 1 b { compute cycles=105\n"
                             " let x = 0\n while 1 { let x = x + 1 } }\n}\n", "h100-sxm", o);
  REQUIRE(loop.outcome == models::Outcome::kWatchdog);
  CHECK_THAT(loop.watchdog_reason, Catch::Contains("without any op taking time"));
  CHECK_FALSE(loop.deadlock.progressing(loop.cycles));
  CHECK_THAT(models::format_problem(loop), !Catch::Contains("still making progress"));
  // A --max-ops stop before anything progressed is not progress at cycle 0.
  o.max_ops = 3;
  auto early = test::run_text("kernel k warps=1 {\n warp 0 a { for i in 0..10 { compute cycles=0 } }\n}\n", "h100-sxm", o);
  REQUIRE(early.outcome == models::Outcome::kWatchdog);
  CHECK_FALSE(early.deadlock.progressing(early.cycles));
  CHECK(early.deadlock.last_progress == -1);
}

TEST_CASE("progress: a long run reports how far it got, and the run is the same with or without it", "[cli][summary]") {
  isa::Program p = test::compile_text(
      "kernel k grid=(600,1,1) warps=32 {\n warps 0..32 w { for i in 0..100 { compute cycles=10 } }\n}\n");
  models::Machine m = models::load_machine("h100-sxm");
  models::RunOptions quiet;
  models::RunOptions told;
  std::vector<models::RunOptions::Progress> seen;
  told.progress = [&](const models::RunOptions::Progress& pr) { seen.push_back(pr); };
  auto a = models::simulate(p, m, quiet);
  auto b = models::simulate(p, m, told);
  REQUIRE(a.outcome == models::Outcome::kFinished);
  CHECK(b.cycles == a.cycles);
  CHECK(b.stats.events == a.stats.events);
  CHECK(models::format_summary(a, p) == models::format_summary(b, p));
  // 600 CTAs x 32 warps x 100 ops: about 2 M events, so a report about every 65536 of them; at most 264 CTAs
  // of 32 warps are resident at once, so CTAs finish before the end.
  REQUIRE(seen.size() >= 10);
  for (std::size_t i = 1; i < seen.size(); ++i) {
    CHECK(seen[i].cycle >= seen[i - 1].cycle);
    CHECK(seen[i].ops >= seen[i - 1].ops);
    CHECK(seen[i].ctas_done >= seen[i - 1].ctas_done);
  }
  CHECK(seen.back().ctas == 600);
  CHECK(seen.back().ops <= b.stats.ops);
  CHECK(seen.back().ctas_done > 0);  // two waves: the first finished before the end
}

TEST_CASE("check: --jitter 0 is kept (no jitter), without --jitter the default is 20 %", "[cli][check]") {
  // The seeds also draw the machine's spread of HBM times (hbm_latency_spread, on in the built-in machines): on the
  // H100 without it, --jitter 0 gives every seed the same run.
  auto path = std::filesystem::temp_directory_path() / fmt::format("smpipe_nospread_{}.json", ::getpid());
  {
    std::ifstream in(models::machines_dir() + "/h100-sxm.json");
    nlohmann::json m = nlohmann::json::parse(in);
    m["units"]["l2"]["params"]["hbm_latency_spread"]["value"] = 0;
    std::ofstream(path) << m.dump();
  }
  auto zero = run_cli({"check", "examples/mainloop", "--seeds", "3", "--jitter", "0", "--clock", "boost", "--gpu", path.string()});
  CHECK_THAT(zero.out, Catch::Contains("3 schedules with --jitter 0: 3 finished, 0 failed; finished runs took 18261..18261 cycles at 1980 MHz (boost clock)"));
  auto dflt = run_cli({"check", "examples/mainloop", "--seeds", "3", "--clock", "boost", "--gpu", path.string()});
  CHECK_THAT(dflt.out, Catch::Contains("3 schedules with --jitter 20"));
  CHECK_THAT(dflt.out, !Catch::Contains("took 18256..18256"));
  std::filesystem::remove(path);
}

TEST_CASE("summary: a role's busy and waiting time never exceed its lifetime, also when the run stops mid-op", "[cli][summary]") {
  models::RunOptions o;
  o.max_cycles = 500;
  auto r = test::run_text("kernel k warps=2 {\n mbarrier b count=1\n warp 0 w { compute cycles=1000 }\n warp 1 v { wait b parity=0 }\n}\n",
                          "h100-sxm", o);
  REQUIRE(r.outcome == models::Outcome::kWatchdog);
  for (const auto& role : r.stats.roles) {
    std::int64_t waited = 0;
    for (const auto& [_, c] : role.waiting) waited += c;
    INFO(role.name << ": busy " << role.busy << ", waiting " << waited << ", lifetime " << role.lifetime);
    CHECK(role.busy + waited <= role.lifetime);
  }
  CHECK(r.stats.roles[0].busy == r.stats.roles[0].lifetime);  // the compute ran from 0 to the stop
}

TEST_CASE("run --csv writes the summary's tables, which add up to what --json says", "[cli][csv]") {
  auto dir = fresh_dir("smpipe_csv_test");
  auto r = run_cli({"run", "examples/mainloop", "--csv", dir.string(), "--json"});
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  auto rows = [&](const std::string& name) { return file_lines(dir / name); };
  for (const auto& name : cli::csv_table_names()) CHECK(std::filesystem::exists(dir / name));
  auto roles = rows("roles.csv");
  REQUIRE(roles.size() == 1 + j["roles"].size());
  CHECK(roles[0] == "role,warps,lifetime_cycles,busy_cycles,waiting_cycles,other_cycles,ops,busy_pct,waiting_pct,other_pct");
  CHECK(roles[1].rfind(fmt::format("producer,1,{},{},", j["roles"][0]["lifetime_cycles"].get<std::int64_t>(),
                                   j["roles"][0]["busy_cycles"].get<std::int64_t>()), 0) == 0);
  auto bars = rows("mbarriers.csv");
  REQUIRE(bars.size() == 1 + j["mbarriers"].size());
  CHECK(bars[1].rfind(fmt::format("full,{},{},{},", j["mbarriers"][0]["phases"].get<std::int64_t>(),
                                  j["mbarriers"][0]["blocking_waits"].get<std::int64_t>(),
                                  j["mbarriers"][0]["wait_cycles"].get<std::int64_t>()), 0) == 0);
  // The histogram's rows count every blocking wait once.
  std::int64_t waits = 0;
  for (const auto& l : rows("mbarrier_waits.csv"))
    if (l.rfind("full,", 0) == 0) waits += std::stoll(l.substr(l.rfind(',') + 1));
  CHECK(waits == j["mbarriers"][0]["blocking_waits"].get<std::int64_t>());
  CHECK(rows("units.csv").size() == 1 + j["units"].size());
  CHECK(rows("waits.csv").size() > 2);
  // A field with a comma is quoted (the LSU's name).
  CHECK(read_file((dir / "units.csv").string()).find("\"LSU (cp.async, global)\"") != std::string::npos);
  // A folder that does not exist is bad input, before anything runs.
  auto bad = run_cli({"run", "examples/mainloop", "--csv", (dir / "nope").string()});
  CHECK(bad.code == 1);
  CHECK_THAT(bad.err, Catch::Contains("not a folder"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the HTML report embeds the run's JSON and CTA 0's timeline, and no data can end its script", "[cli][html]") {
  auto path = std::filesystem::temp_directory_path() / "smpipe_html_test.html";
  auto r = run_cli({"run", "examples/deadlock_producer_start_phase", "--html", path.string()});
  CHECK(r.code == 2);
  std::string page = read_file(path.string());
  CHECK(page.find("/*@SMPIPE_DATA@*/") == std::string::npos);  // the data replaced the placeholder
  CHECK_THAT(page, Catch::Contains("\"schema\":\"smpipe-html/1\""));
  CHECK_THAT(page, Catch::Contains("\"outcome\":\"deadlock\""));
  CHECK_THAT(page, Catch::Contains("(unfinished)"));  // the stuck waits are on the timeline
  // Text that would end the script is escaped: the page has as many </script> as the template.
  std::size_t template_ends = 0, page_ends = 0;
  std::string tmpl = cli::html_page(nlohmann::json::object());
  for (std::size_t p = 0; (p = tmpl.find("</script>", p)) != std::string::npos; ++p) ++template_ends;
  std::string hostile = cli::html_page({{"title", "</script><script>alert(1)</script>"}});
  for (std::size_t p = 0; (p = hostile.find("</script>", p)) != std::string::npos; ++p) ++page_ends;
  CHECK(page_ends == template_ends);
  CHECK_THAT(hostile, Catch::Contains("\\u003c/script>\\u003cscript>alert(1)\\u003c/script>"));
  // The timeline keeps CTA 0 only, however many CTAs --trace records.
  auto both = run_cli({"run", "examples/cluster_multicast", "--html", path.string(), "--trace",
                       (std::filesystem::temp_directory_path() / "smpipe_html_test.json").string()});
  CHECK(both.code == 0);
  page = read_file(path.string());
  auto start = page.find("const DATA = ") + 13;
  auto end = page.find(";\n", start);
  auto data = nlohmann::json::parse(page.substr(start, end - start));
  REQUIRE(data["timeline"]["events"].size() > 10);
  for (const auto& e : data["timeline"]["events"]) CHECK(e.value("pid", 0) == 0);
  std::filesystem::remove(path);
}

TEST_CASE("compare --csv writes the comparison's tables from its JSON", "[cli][csv]") {
  auto dir = fresh_dir("smpipe_compare_csv_test");
  std::string trace = std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h100/k2_trace_2048x2048x2048.json";
  auto r = run_cli({"compare", trace, "--json", "--csv", dir.string()});
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  auto lines = [&](const std::string& name) { return file_lines(dir / name); };
  CHECK(lines("ctas.csv").size() == 1 + j["ctas"].size());
  CHECK(lines("intervals.csv").size() == 1 + j["intervals"].size());
  CHECK(lines("roles.csv").size() == 1 + j["roles"].size());
  auto errors = lines("event_errors.csv");
  REQUIRE(errors.size() == 4);
  CHECK(errors[1].rfind(fmt::format("abs_error_cycles,{},", j["events"]["abs_error_cycles"]["n"].get<std::int64_t>()), 0) == 0);
  // replay --csv: the run's tables.
  auto rep = run_cli({"replay", trace, "--csv", dir.string()});
  CHECK(rep.code == 0);
  CHECK(lines("units.csv").size() > 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("run with the sustained clock: a first run measures the tensor pipe's load, the run is at the clock it gives", "[cli][clock]") {
  const std::string model = "sm90/gemm_tma_ws_cooperative";
  const std::vector<std::string> shape = {"-D", "M=1024", "-D", "N=1024", "-D", "K=1024"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", model, "--json"};
    args.insert(args.end(), shape.begin(), shape.end());
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = test::run_cli(args);
    REQUIRE(r.code == cli::kOk);
    return nlohmann::json::parse(r.out);
  };
  models::Machine m = models::load_machine("h100-sxm");
  // Constant data: the load clock, no first run needed; the same result as --clock-mhz at that clock.
  auto constant = run({"--clock", "sustained-constant"});
  CHECK(constant["clock_mhz"].get<double>() == m.load_clock_mhz);
  CHECK(constant["clock_basis"] == "sustained under load, constant data");
  auto at_load = run({"--clock-mhz", std::to_string(static_cast<int>(m.load_clock_mhz))});
  CHECK(constant["cycles"] == at_load["cycles"]);
  CHECK_FALSE(at_load.contains("clock_basis"));
  // Random data: the tensor pipe's GPU-wide share at the load clock sets the clock.
  double busy = 0;
  for (const auto& u : at_load["units"])
    if (u["name"] == "tensor pipe") busy = u["utilisation"].get<double>() * at_load["sms_used"].get<double>() / m.sm_count;
  REQUIRE(busy > 0.05);
  auto random = run({"--clock", "sustained"});
  double want = std::round(models::sustained_clock_mhz(m, busy, true));
  CHECK(random["clock_mhz"].get<double>() == want);
  CHECK(want < m.load_clock_mhz);
  CHECK(random["cycles"] == run({"--clock-mhz", std::to_string(static_cast<int>(want))})["cycles"]);
  CHECK_THAT(random["clock_basis"].get<std::string>(), Catch::StartsWith("sustained under load, random data, tensor pipe "));
  // The summary says which clock it assumed.
  auto text = test::run_cli({"run", test::examples_dir() + "/mainloop.pipe", "--clock", "sustained-constant"});
  CHECK_THAT(text.out, Catch::StartsWith("kernel mainloop on h100-sxm (1806 MHz, sustained under load, constant data): finished"));
  CHECK_THAT(test::run_cli({"run", test::examples_dir() + "/mainloop.pipe", "--clock", "boost"}).out,
             Catch::StartsWith("kernel mainloop on h100-sxm (1980 MHz, boost clock): "));
  CHECK_THAT(test::run_cli({"run", test::examples_dir() + "/mainloop.pipe", "--clock-mhz", "1500"}).out,
             Catch::StartsWith("kernel mainloop on h100-sxm (1500 MHz): "));
  // The default is the sustained clock with random data.
  CHECK(run({})["clock_mhz"] == random["clock_mhz"]);
  CHECK(run({})["cycles"] == random["cycles"]);
  CHECK(run({"--clock", "boost"})["clock_mhz"].get<double>() == m.clock_mhz);
  // --clock and --clock-mhz together, or another mode, are bad input.
  CHECK(test::run_cli({"run", test::examples_dir() + "/mainloop.pipe", "--clock", "sustained", "--clock-mhz", "1500"}).code == cli::kBadInput);
  CHECK(test::run_cli({"run", test::examples_dir() + "/mainloop.pipe", "--clock", "turbo"}).code == cli::kBadInput);
}

TEST_CASE("run --l2: warm by default (the tensors fit), cold on request, and the summary and the JSON say which", "[cli]") {
  const std::vector<std::string> args = {"run", "sm90/gemm_tma_ws_cooperative", "-D", "M=1024", "-D", "N=1024", "-D", "K=1024",
                                         "--clock", "boost", "--no-hazards"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = args;
    all.insert(all.end(), extra.begin(), extra.end());
    auto r = test::run_cli(all);
    INFO(r.err);
    REQUIRE(r.code == cli::kOk);
    return r.out;
  };
  auto warm = nlohmann::json::parse(run({"--json"})), cold = nlohmann::json::parse(run({"--json", "--l2", "cold"}));
  CHECK(warm["l2_start"] == "warm");
  CHECK(cold["l2_start"] == "cold");
  CHECK(nlohmann::json::parse(run({"--json", "--l2", "warm"})) == warm);
  // A, B, C and D (1024 x 1024 bf16, 2 MB each): all four are named (C is loaded: beta != 0 by default); with
  // BETA_ZERO=1 C's loads are dropped at compile time, and C does not count.
  CHECK(warm["l2_footprint_bytes"] == 4 * 2 * 1024 * 1024);
  CHECK(nlohmann::json::parse(run({"--json", "-D", "BETA_ZERO=1"}))["l2_footprint_bytes"] == 3 * 2 * 1024 * 1024);
  CHECK(warm["l2_miss_bytes"] == 0);
  CHECK(warm["hbm_bytes"] == 0);
  CHECK(cold["l2_miss_bytes"].get<std::int64_t>() > 0);
  CHECK(warm["cycles"].get<std::int64_t>() < cold["cycles"].get<std::int64_t>());
  CHECK_THAT(run({}), Catch::Contains("  L2 start     warm (the tensors' 8.4 MB, a copy in each of the two L2 partitions, fit in the L2's 52.4 MB, as a previous launch"));
  CHECK_THAT(run({"--l2", "cold"}), Catch::Contains("  L2 start     cold (the tensors' 8.4 MB, a copy in each of the two L2 partitions, fit in the L2's 52.4 MB: --l2 cold)"));
  CHECK(test::run_cli({"run", test::examples_dir() + "/mainloop.pipe", "--l2", "lukewarm"}).code == cli::kBadInput);
  // dirty[:BYTES]: none of the tensors, but another kernel's stores, written back as the launch evicts them (a 4096^3
  // GEMM's 100 MB evict every one): at most l2_dirty_left_share of the L2.
  auto with = [&](const std::string& l2) {
    auto r = test::run_cli({"run", "sm90/gemm_tma_ws_cooperative", "-D", "M=4096", "-D", "N=4096", "-D", "K=4096", "--clock",
                            "boost", "--no-hazards", "--json", "--l2", l2});
    INFO(r.err);
    REQUIRE(r.code == cli::kOk);
    return nlohmann::json::parse(r.out);
  };
  const auto big_cold = with("cold"), mib8 = with("dirty:8MiB"), all = with("dirty"), mb8 = with("dirty:8MB");
  CHECK(big_cold["l2_start"] == "cold");
  CHECK(mib8["l2_start"] == "dirty");
  CHECK(mib8["l2_dirty_start_bytes"] == 8 << 20);
  CHECK(mb8["l2_dirty_start_bytes"] == 8'003'584);  // 8,000,000 bytes in whole 4 KB blocks
  // Every dirty block written back, beside the GEMM's own D (a little more of D goes too: the dirty blocks took room).
  const std::int64_t back = mib8["hbm_bytes"].get<std::int64_t>() - mib8["hbm_read_bytes"].get<std::int64_t>() -
                            (big_cold["hbm_bytes"].get<std::int64_t>() - big_cold["hbm_read_bytes"].get<std::int64_t>());
  CHECK(back >= 8 << 20);
  CHECK(back < (8 << 20) + (1 << 20));
  const models::Machine h100 = models::load_machine("h100-sxm");
  const auto most = static_cast<std::int64_t>(h100.l2_dirty_left_share * static_cast<double>(h100.l2_capacity_bytes / 4096)) * 4096;
  CHECK(all["l2_dirty_start_bytes"] == most);
  CHECK(with("dirty:1GiB")["l2_dirty_start_bytes"] == most);
  CHECK(big_cold["cycles"].get<std::int64_t>() < mib8["cycles"].get<std::int64_t>());
  CHECK(mib8["cycles"].get<std::int64_t>() < all["cycles"].get<std::int64_t>());
  for (const std::string bad : {"dirty:", "dirty:0", "dirty:-5", "dirty:12XB", "dirty:1.5MB", "dirt", "dirty:9999999999999999"}) {
    auto r = test::run_cli({"run", test::examples_dir() + "/mainloop.pipe", "--l2", bad});
    INFO(bad);
    CHECK(r.code == cli::kBadInput);
    CHECK_THAT(r.err, Catch::Contains("expected warm, cold, dirty, dirty:BYTES (e.g. dirty:42MB) or dirty:TENSOR"));
  }
  // dirty:TENSOR[,TENSOR...]: the program's own tensors held dirty (a launch reading the previous one's output).
  const auto a_held = with("dirty:A");
  CHECK(a_held["l2_start"] == "dirty");
  CHECK(a_held["l2_dirty_start_tensors"] == nlohmann::json::array({"A"}));
  CHECK(a_held["l2_dirty_start_bytes"] == std::min<std::int64_t>(4096 * 4096 * 2, most));
  // (At 4096^3 the held rows of A, its last, are evicted before the tiles that read them start: no fewer HBM reads.
  // At 1024^3 everything fits: A, 2 MiB, is read from the L2, not HBM, and not written back.)
  auto small = [&](const std::string& l2) {
    auto r = test::run_cli({"run", "sm90/gemm_tma_ws_cooperative", "-D", "M=1024", "-D", "N=1024", "-D", "K=1024", "--clock",
                            "boost", "--no-hazards", "--json", "--l2", l2});
    REQUIRE(r.code == cli::kOk);
    return nlohmann::json::parse(r.out);
  };
  const auto small_cold = small("cold"), small_a = small("dirty:A");
  CHECK(small_a["hbm_read_bytes"].get<std::int64_t>() == small_cold["hbm_read_bytes"].get<std::int64_t>() - 2 * 1024 * 1024);
  CHECK(small_a["hbm_bytes"].get<std::int64_t>() == small_a["hbm_read_bytes"].get<std::int64_t>());
  CHECK(with("dirty:B,A")["l2_dirty_start_tensors"] == nlohmann::json::array({"B", "A"}));
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {"dirty:Q", "the program declares no tensor Q (its tensors: A, B, C, D)"},
           {"dirty:A,Q", "the program declares no tensor Q"},
           {"dirty:A,A", "tensor A is named twice"},
           {"dirty:A,", "expected warm, cold"},
           {"dirty:A,,B", "expected warm, cold"},
           {"dirty:A-B", "expected warm, cold"},
           {"dirty:1A", "expected warm, cold"}}) {
    auto r = test::run_cli({"run", "sm90/gemm_tma_ws_cooperative", "--l2", bad});
    INFO(bad << ": " << r.err);
    CHECK(r.code == cli::kBadInput);
    CHECK_THAT(r.err, Catch::Contains(says));
  }
  // sweep takes the option too: each point as `run` gives it.
  auto dir = fresh_dir("smpipe_sweep_l2_test");
  const std::string json = (dir / "s.json").string();
  auto sweep_cycles = [&](const std::string& l2) {
    auto s = test::run_cli({"sweep", "sm90/gemm_tma_ws_cooperative", "-D", "M=1024", "-D", "N=1024", "-D", "K=1024", "--clock",
                            "boost", "--no-hazards", "--l2", l2, "--json", json});
    INFO(s.out << s.err);
    REQUIRE(s.code == 0);
    std::ifstream in(json);
    return nlohmann::json::parse(in)["points"][0]["cycles"].get<std::int64_t>();
  };
  CHECK(sweep_cycles("warm") == warm["cycles"].get<std::int64_t>());
  CHECK(sweep_cycles("cold") == cold["cycles"].get<std::int64_t>());
  CHECK(sweep_cycles("dirty") == nlohmann::json::parse(run({"--json", "--l2", "dirty"}))["cycles"].get<std::int64_t>());
  std::filesystem::remove_all(dir);
}

TEST_CASE("the sustained clock of a long run: the tensor pipe's load over the first run's first kLoadProbeOps ops", "[cli][clock]") {
  // 2048x2048x4096 runs about 1.4 M ops: the first run stops at 1 M, and its share of the tensor pipe (not the
  // whole run's) sets the clock.
  const std::vector<std::string> args = {"run", "sm90/gemm_tma_ws_cooperative", "-D", "M=2048", "-D", "N=2048", "-D", "K=4096", "--json"};
  models::Machine m = models::load_machine("h100-sxm");
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = args;
    all.insert(all.end(), extra.begin(), extra.end());
    auto r = test::run_cli(all);
    INFO(r.err);
    REQUIRE((r.code == cli::kOk || r.code == cli::kDeadlock));
    return nlohmann::json::parse(r.out);
  };
  auto busy_of = [&](const nlohmann::json& j) {
    for (const auto& u : j["units"])
      if (u["name"] == "tensor pipe") return u["utilisation"].get<double>() * j["sms_used"].get<double>() / m.sm_count;
    return 0.0;
  };
  const std::string load = std::to_string(static_cast<int>(m.load_clock_mhz));
  auto whole = with({"--clock-mhz", load, "--no-hazards"});
  REQUIRE(whole["ops"].get<std::int64_t>() > cli::kLoadProbeOps);
  auto probe = with({"--clock-mhz", load, "--no-hazards", "--max-ops", std::to_string(cli::kLoadProbeOps)});
  CHECK(probe["outcome"] == "watchdog");
  double from_probe = std::round(models::sustained_clock_mhz(m, busy_of(probe), true));
  double from_whole = std::round(models::sustained_clock_mhz(m, busy_of(whole), true));
  REQUIRE(from_probe != from_whole);  // else this test could not tell the two apart
  CHECK(with({})["clock_mhz"].get<double>() == from_probe);
  CHECK(std::abs(busy_of(probe) - busy_of(whole)) < 0.05);
  // A smaller --max-ops bounds the first run too.
  auto short_probe = with({"--clock-mhz", load, "--no-hazards", "--max-ops", "50000"});
  double from_short = std::round(models::sustained_clock_mhz(m, busy_of(short_probe), true));
  REQUIRE(from_short != from_probe);
  CHECK(with({"--max-ops", "50000"})["clock_mhz"].get<double>() == from_short);
  // A check's rerun line repeats the limits (they bound the first run as well as the run).
  auto check = test::run_cli({"check", "sm90/gemm_tma_ws_cooperative", "-D", "M=2048", "-D", "N=2048", "-D", "K=4096", "--seeds", "1",
                              "--max-ops", "50000", "--max-cycles", "900000"});
  CHECK(check.code == cli::kDeadlock);
  CHECK_THAT(check.out, Catch::Contains(" --max-cycles 900000 --max-ops 50000"));
}

TEST_CASE("the sustained clock of a machine whose clocks under load do not differ: no first run, no load in its basis", "[cli][clock]") {
  models::Machine b = models::load_machine("b200");
  REQUIRE(models::sustained_clock_mhz(b, 0, true) == models::sustained_clock_mhz(b, 1, true));
  auto r = test::run_cli({"run", test::examples_dir() + "/sm100_umma_clc.pipe", "--json"});
  REQUIRE(r.code == cli::kOk);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["clock_mhz"].get<double>() == b.clock_mhz);
  CHECK(j["clock_basis"] == "sustained under load (estimated), random data");
  auto boost = nlohmann::json::parse(test::run_cli({"run", test::examples_dir() + "/sm100_umma_clc.pipe", "--json", "--clock", "boost"}).out);
  CHECK(boost["cycles"] == j["cycles"]);
}

TEST_CASE("the sustained clock does not depend on a run's seed or jitter, check's rerun line and sweep's ranking follow it", "[cli][clock]") {
  const std::string ex = test::examples_dir();
  auto clock_of = [](const test::CliResult& r) {
    REQUIRE(r.code == cli::kOk);
    return nlohmann::json::parse(r.out)["clock_mhz"].get<double>();
  };
  // The first run that measures the load is without jitter: a check's seeds and the rerun of one get one clock.
  std::vector<std::string> coop = {"run", "sm90/gemm_tma_ws_cooperative", "-D", "M=1024", "-D", "N=1024", "-D", "K=1024",
                                   "--clock", "sustained", "--json"};
  double plain = clock_of(test::run_cli(coop));
  coop.insert(coop.end(), {"--seed", "7", "--jitter", "30"});
  CHECK(clock_of(test::run_cli(coop)) == plain);
  // check says the clock of its schedules (text and JSON): the run's.
  auto checked = test::run_cli({"check", "sm90/gemm_tma_ws_cooperative", "-D", "M=1024", "-D", "N=1024", "-D", "K=1024", "--seeds", "2", "--json"});
  REQUIRE(checked.code == cli::kOk);
  CHECK(nlohmann::json::parse(checked.out)["clock_mhz"].get<double>() == plain);
  CHECK_THAT(test::run_cli({"check", "sm90/gemm_tma_ws_cooperative", "-D", "M=1024", "-D", "N=1024", "-D", "K=1024", "--seeds", "2"}).out,
             Catch::Contains(fmt::format(" cycles at {} MHz (sustained under load, random data, tensor pipe ", plain)));
  // check: the rerun line repeats the clock option.
  auto check = test::run_cli({"check", ex + "/hazard_wgmma_before_tma.pipe", "--seeds", "1", "--clock", "sustained-constant"});
  CHECK(check.code == cli::kUndefined);
  CHECK_THAT(check.out, Catch::Contains("--seed 1 --jitter 20") && Catch::Contains(" --clock sustained-constant"));
  // sweep ranks by time: a machine at half the clock takes no more cycles (its L2 is faster per cycle) but more time.
  nlohmann::json slow;
  {
    std::ifstream in(models::machines_dir() + "/h100-sxm.json");
    slow = nlohmann::json::parse(in);
  }
  slow["name"] = "h100-half-clock";
  slow["units"]["sm"]["params"]["clock_mhz"]["value"] = 990;
  auto path = (std::filesystem::temp_directory_path() / "smpipe_half_clock.json").string();
  std::ofstream(path) << slow.dump();
  // At the machine files' own clocks (990 and 1980 MHz).
  auto sweep = test::run_cli({"sweep", ex + "/mainloop.pipe", "-D", "STAGES=4", "--gpu", path + ",h100-sxm", "--clock", "boost"});
  INFO(sweep.out << sweep.err);
  REQUIRE(sweep.code == cli::kOk);
  auto first = sweep.out.find("  1. ");
  REQUIRE(first != std::string::npos);
  CHECK(sweep.out.substr(first, sweep.out.find('\n', first) - first).find("on h100-sxm:") != std::string::npos);
  auto half = test::run_cli({"run", ex + "/mainloop.pipe", "-D", "STAGES=4", "--gpu", path, "--json", "--clock", "boost"});
  auto full = test::run_cli({"run", ex + "/mainloop.pipe", "-D", "STAGES=4", "--json", "--clock", "boost"});
  CHECK(nlohmann::json::parse(half.out)["cycles"].get<std::int64_t>() <= nlohmann::json::parse(full.out)["cycles"].get<std::int64_t>());
}

TEST_CASE("cli: the summary says how many bytes of the boxes loaded lie outside their tensors, and only when some do",
          "[cli]") {
  // N = 128 with 256-wide tiles: every B box is half outside (128 of 256 rows); N = 256: none. (beta = 0: no C loads,
  // whose subtiles past N would lie outside too.)
  auto over = run_cli({"run", "sm90/gemm_tma_ws_cooperative", "-D", "M=512", "-D", "N=128", "-D", "K=256", "-D", "TILE_N=256",
                       "-D", "BETA_ZERO=1"});
  auto fits = run_cli({"run", "sm90/gemm_tma_ws_cooperative", "-D", "M=512", "-D", "N=256", "-D", "K=256", "-D", "TILE_N=256",
                       "-D", "BETA_ZERO=1"});
  INFO(over.out << over.err);
  REQUIRE(over.code == cli::kOk);
  REQUIRE(fits.code == cli::kOk);
  // 4 CTA tiles x 4 k-blocks x 128 rows x 128 bytes outside = 256 KB
  CHECK_THAT(over.out, Catch::Contains("outside      262.1 KB of the boxes loaded lie outside their tensors"));
  CHECK(fits.out.find("lie outside their tensors") == std::string::npos);
  auto j = nlohmann::json::parse(run_cli({"run", "sm90/gemm_tma_ws_cooperative", "-D", "M=512", "-D", "N=128", "-D", "K=256",
                                          "-D", "TILE_N=256", "-D", "BETA_ZERO=1", "--json"}).out);
  CHECK(j["l2_outside_bytes"] == 4 * 4 * 128 * 128);
}

TEST_CASE("an output file that is an input or another output is refused before the run", "[cli][output]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "smpipe_output_clash";
  fs::create_directories(dir);
  const std::string prog = (dir / "prog.pipe").string();
  std::filesystem::copy_file(example("mainloop"), prog, fs::copy_options::overwrite_existing);
  std::string before;
  {
    std::ifstream f(prog);
    before.assign(std::istreambuf_iterator<char>(f), {});
  }
  // --trace naming the program itself (also through another spelling of the path): refused, the program intact.
  for (const std::string& out : {prog, (dir / "." / "prog.pipe").string()}) {
    auto r = run_cli({"run", prog, "--trace", out});
    CHECK(r.code == 1);
    CHECK(r.err.find("cannot write trace file '" + out + "': it is the program file this command reads: the output would "
                     "overwrite it") != std::string::npos);
  }
  std::string after;
  {
    std::ifstream f(prog);
    after.assign(std::istreambuf_iterator<char>(f), {});
  }
  CHECK(after == before);
  // Two outputs on one file: refused; on two files: both written.
  const std::string same = (dir / "same.json").string();
  auto both = run_cli({"run", prog, "--trace", same, "--html", same});
  CHECK(both.code == 1);
  CHECK(both.err.find("cannot write HTML report '" + same + "': the trace file is written to the same file") != std::string::npos);
  // sweep: its CSV on the program is refused before any point runs (each point's load would only make an invalid row).
  auto sweep = run_cli({"sweep", prog, "-D", "STAGES=2,3", "--csv", prog});
  CHECK(sweep.code == 1);
  CHECK(sweep.err.find("the program file '" + prog + "' is also given as the CSV file") == std::string::npos);
  CHECK(sweep.err.find("cannot write CSV file '" + prog + "': it is the program file this command reads") != std::string::npos);
  {
    std::ifstream f(prog);
    std::string now(std::istreambuf_iterator<char>(f), {});
    CHECK(now == before);
  }
  auto apart = run_cli({"run", prog, "--trace", (dir / "t.json").string(), "--html", (dir / "r.html").string()});
  CHECK(apart.code == 0);
  CHECK(fs::exists(dir / "t.json"));
  CHECK(fs::exists(dir / "r.html"));
  fs::remove_all(dir);
}

TEST_CASE("a run cut short by --max-cycles while copies are in flight says so, not that their bytes are missing", "[cli][watchdog]") {
  // The mainloop example stopped at cycle 1000: its second box of stage 0 is on its way. The report says bytes were
  // still in flight and the run was cut short; the cause on full[0] says the missing bytes are on their way, not that
  // the expect_tx does not match the boxes (which a real mismatch, deadlock_tx_mismatch, still gets).
  auto cut = run_cli({"run", example("mainloop"), "--max-cycles", "1000"});
  CHECK(cut.code == 2);
  CHECK(cut.out.find("bytes of copies were still on their way to their barriers at the stop: the run was cut short") !=
        std::string::npos);
  CHECK(cut.out.find("full[0]: all 1 arrivals came and 16384 of the 32768 bytes expected in this phase are still on their way") !=
        std::string::npos);
  CHECK(cut.out.find("The transaction bytes do not match") == std::string::npos);
  CHECK(cut.out.find("loop without progress") == std::string::npos);
  auto mismatch = run_cli({"run", example("deadlock_tx_mismatch")});
  CHECK(mismatch.code == 2);
  CHECK(mismatch.out.find("The transaction bytes do not match what the TMA copies deliver") != std::string::npos);
  CHECK(mismatch.out.find("still on their way") == std::string::npos);
}
