// Hostile programs: nesting, size, overflow and range limits end in an input error (or a diagnosis at run
// time) naming the place, never a crash, a hang or a wrapped value.
#include <catch2/catch.hpp>

#include <string>

#include "isa/limits.hpp"
#include "isa/ops.hpp"
#include "support.hpp"

using namespace smpipe;
using test::compile_error;
using test::run_text;

namespace {

std::string repeat(const std::string& s, int n) {
  std::string r;
  for (int i = 0; i < n; ++i) r += s;
  return r;
}

// A one-warp kernel whose warp runs `body`.
std::string kernel(const std::string& body, const std::string& decls = "") {
  return "kernel k warps=1 {\n" + decls + "\n warp 0 w {\n" + body + "\n }\n}\n";
}

std::string title(const models::RunResult& r) { return r.diagnosis ? r.diagnosis->title : ""; }

}  // namespace

TEST_CASE("expression nesting is bounded: brackets, unary signs, calls and operator chains", "[isa][limits]") {
  int at = isa::kMaxExprDepth;
  // `cycles=` + N brackets around 1: the bracket levels and the leaf count, so the deepest accepted is at-1.
  auto brackets = [](int n) { return kernel(" compute cycles=" + repeat("(", n) + "1" + repeat(")", n)); };
  CHECK(compile_error(brackets(at - 1)).empty());
  CHECK_THAT(compile_error(brackets(at)), Catch::Contains("nested more than 200 levels deep"));
  CHECK_THAT(compile_error(brackets(20000)), Catch::Contains("test.pipe:4:"));  // no stack overflow, and a position
  auto signs = [](int n) { return kernel(" compute cycles=" + repeat("- -", n / 2) + "1"); };
  CHECK(compile_error(signs(at - 2)).empty());
  CHECK_THAT(compile_error(signs(1000000)), Catch::Contains("nested more than"));
  auto sum = [](int n) { return kernel(" compute cycles=1" + repeat(" + 1", n)); };
  CHECK(compile_error(sum(at - 1)).empty());  // a chain of at-1 operators: depth at
  CHECK_THAT(compile_error(sum(at)), Catch::Contains("nested more than"));
  CHECK_THAT(compile_error(sum(1000000)), Catch::Contains("nested more than"));
  auto calls = [](int n) { return kernel(" compute cycles=" + repeat("max(1, ", n) + "1" + repeat(")", n)); };
  CHECK(compile_error(calls(at / 2 - 2)).empty());
  CHECK_THAT(compile_error(calls(100000)), Catch::Contains("nested more than"));
}

TEST_CASE("block nesting is bounded, else-if chains included", "[isa][limits]") {
  int at = isa::kMaxBlockDepth;
  // the role's own block is one level
  auto ifs = [](int n) { return kernel(repeat("if 1 {\n", n) + " compute cycles=1\n" + repeat("}\n", n)); };
  CHECK(compile_error(ifs(at - 1)).empty());
  CHECK_THAT(compile_error(ifs(at)), Catch::Contains("blocks nested more than 200 levels deep"));
  CHECK_THAT(compile_error(ifs(20000)), Catch::Contains("blocks nested more than"));
  auto chain = [](int n) { return kernel("if 0 { compute cycles=1 }\n" + repeat("else if 0 { compute cycles=1 }\n", n)); };
  CHECK(compile_error(chain(at / 2 - 2)).empty());
  CHECK_THAT(compile_error(chain(100000)), Catch::Contains("blocks nested more than"));
}

TEST_CASE("procs inlined exponentially stop at the op and instruction limits, quickly", "[isa][limits]") {
  auto doubling = [](const std::string& leaf, int levels) {
    std::string s = "kernel k warps=1 {\n proc p0() { " + leaf + " }\n";
    for (int i = 1; i <= levels; ++i) s += fmt::format(" proc p{}() {{ p{}()\n p{}() }}\n", i, i - 1, i - 1);
    return s + fmt::format(" warp 0 w {{ p{}() }}\n}}\n", levels);
  };
  CHECK(compile_error(doubling("compute cycles=1", 10)).empty());  // 1024 ops
  CHECK_THAT(compile_error(doubling("compute cycles=1", 40)), Catch::Contains("more than 262144 ops after procs are inlined"));
  CHECK_THAT(compile_error(doubling("let x = 1", 40)), Catch::Contains("more than 2097152 instructions"));
  // procs inlined inside each other: at most kMaxProcDepth levels
  auto chain = [](int n) {
    std::string s = "kernel k warps=1 {\n proc p0() { compute cycles=1 }\n";
    for (int i = 1; i < n; ++i) s += fmt::format(" proc p{}() {{ p{}() }}\n", i, i - 1);
    return s + fmt::format(" warp 0 w {{ p{}() }}\n}}\n", n - 1);
  };
  CHECK(compile_error(chain(isa::kMaxProcDepth)).empty());
  CHECK_THAT(compile_error(chain(isa::kMaxProcDepth + 1)), Catch::Contains("procs inlined more than 64 levels deep"));
}

TEST_CASE("values given with -D: the 64-bit range with K and M suffixes, never wrapped", "[isa][limits]") {
  CHECK(isa::parse_define("X=9223372036854775807").second == INT64_MAX);
  CHECK(isa::parse_define("X=-9223372036854775808").second == INT64_MIN);
  CHECK(isa::parse_define("X=9007199254740991K").second == 9007199254740991LL * 1024);  // (2^63-1)/1024, rounded down
  CHECK(isa::parse_define("X=-8M").second == -8 * 1024 * 1024);
  CHECK(isa::parse_define("X=0x7fffffffffffffff").second == INT64_MAX);
  for (const char* bad : {"X=9223372036854775808", "X=-9223372036854775809", "X=9007199254740992K", "X=8796093022208M",
                          "X=99999999999999999999", "X=0x8000000000000000"}) {
    INFO(bad);
    CHECK_THROWS_WITH(isa::parse_define(bad), Catch::Contains("outside the 64-bit integer range"));
  }
  CHECK_THROWS_WITH(isa::parse_define("X=12abc"), Catch::Contains("is not an integer"));
  CHECK_THROWS_WITH(isa::parse_define("X=-"), Catch::Contains("is not an integer"));
}

TEST_CASE("grid and cluster dimensions: CUDA's limits, the product never wraps", "[isa][limits]") {
  auto grid = [](const std::string& g, const std::string& c = "(1,1,1)") {
    return compile_error("kernel k grid=" + g + " cluster=" + c + " warps=1 {\n warp 0 w { compute cycles=1 }\n}\n");
  };
  CHECK(grid("(2147483647,1,1)").empty());
  CHECK_THAT(grid("(2147483648,1,1)"), Catch::Contains("grid dimension 0 is 2147483648: CUDA allows at most 2147483647"));
  CHECK(grid("(1,65535,1)").empty());
  CHECK_THAT(grid("(1,65536,1)"), Catch::Contains("CUDA allows at most 65535"));
  CHECK_THAT(grid("(1,1,2097152)"), Catch::Contains("CUDA allows at most 65535"));  // 2^21 cubed wraps to 0 in 64 bits
  CHECK(grid("(32768,65536,1)").size() > 0);
  CHECK(grid("(32768,65535,1)").empty());  // 2147450880 <= 2^31
  CHECK_THAT(grid("(65536,32768,2)"), Catch::Contains("the simulator runs at most 2^31"));
  CHECK_THAT(grid("(64,1,1)", "(32,1,1)"), Catch::Contains("a cluster has at most 16 CTAs"));
}

TEST_CASE("smem and tensor sizes are bounded so their sums never wrap", "[isa][limits]") {
  auto smem = [](const std::string& decl, const std::string& attrs = "") {
    return compile_error("kernel k warps=1" + attrs + " {\n " + decl + "\n warp 0 w { compute cycles=1 }\n}\n");
  };
  CHECK(smem("smem s[2] bytes=16777216").empty());
  CHECK_THAT(smem("smem s[2] bytes=16777217"), Catch::Contains("smem bytes=16777217 out of range 1..16777216"));
  CHECK_THAT(smem("smem s[4096] bytes=2251799813685248"), Catch::Contains("out of range"));  // 2^51 x 4096 = 2^63
  CHECK(smem("smem s bytes=1K", " smem=16777216").empty());
  CHECK_THAT(smem("smem s bytes=1K", " smem=9223372036854775807"), Catch::Contains("smem=9223372036854775807 out of range"));
  CHECK(smem("tensor A dtype=bf16 shape=(4294967296, 32768)").empty());  // 2^48 bytes
  CHECK_THAT(smem("tensor A dtype=bf16 shape=(4294967296, 32769)"), Catch::Contains("larger than 2^48 bytes"));
  CHECK_THAT(smem("tensor A dtype=bf16 shape=(4294967297, 1)"), Catch::Contains("out of range 1..2^32"));
  CHECK_THAT(smem("tensor A dtype=f64 shape=(4294967296, 4294967296, 4294967296)"), Catch::Contains("larger than 2^48"));
}

TEST_CASE("every ranged attribute: both ends pass, one beyond either end fails, the same at compile and run time",
          "[isa][limits]") {
  int ranged = 0;
  for (const isa::OpSpec& spec : isa::all_ops())
    for (const isa::AttrSpec& a : spec.attrs) {
      auto r = isa::value_range(spec.kind, a.attr);
      if (!r) continue;
      ++ranged;
      INFO(spec.name << " " << a.name);
      CHECK(isa::range_error(a.name, r->lo, *r).empty());
      CHECK(isa::range_error(a.name, r->hi, *r).empty());
      CHECK_FALSE(isa::range_error(a.name, r->lo - 1, *r).empty());
      CHECK_FALSE(isa::range_error(a.name, r->hi + 1, *r).empty());
      if (r->multiple > 1) CHECK_FALSE(isa::range_error(a.name, r->lo + r->multiple / 2, *r).empty());
      if (r->pow2 && r->hi / r->lo >= 4) CHECK_FALSE(isa::range_error(a.name, r->lo * 3, *r).empty());
    }
  CHECK(ranged >= 25);
  // compute cycles=: a constant is an input error, the same value at run time is a diagnosis at the op
  std::int64_t most = isa::kMaxOpCycles;
  CHECK(compile_error(kernel(fmt::format(" compute cycles={}", most))).empty());
  CHECK_THAT(compile_error(kernel(fmt::format(" compute cycles={}", most + 1))),
             Catch::Contains("cycles=1099511627777 out of range: must be 0..1099511627776"));
  auto dynamic = [](std::int64_t v) { return kernel(fmt::format(" for i in 0..1 {{\n compute cycles=i + {}\n }}", v)); };
  models::RunOptions far;
  far.max_cycles = most + 10;
  CHECK(run_text(dynamic(most), "h100-sxm", far).outcome == models::Outcome::kFinished);
  auto r = run_text(dynamic(most + 1), "h100-sxm", far);
  REQUIRE(r.outcome == models::Outcome::kUndefined);
  CHECK(title(r) == "value out of range");
  CHECK_THAT(r.diagnosis->message, Catch::Contains("cycles=1099511627777 out of range"));
  // a bulk copy's bytes: a multiple of 16 at run time too
  auto bulk = [](int bytes) {
    return "kernel k warps=1 {\n mbarrier f count=1\n smem s bytes=64K\n warp 0 w {\n elect {\n for i in 0..1 {\n"
           " arrive.expect_tx f tx=" + std::to_string(bytes) + "\n tma.load bytes=i + " + std::to_string(bytes) +
           " dst=s bar=f\n }\n }\n wait f parity=0\n }\n}\n";
  };
  CHECK(run_text(bulk(32)).outcome == models::Outcome::kFinished);
  auto b = run_text(bulk(24));
  REQUIRE(b.outcome == models::Outcome::kUndefined);
  CHECK_THAT(b.diagnosis->message, Catch::Contains("bytes=24 out of range: must be a multiple of 16"));
}

TEST_CASE("a long-running program stops at the work budget, with a report", "[isa][limits]") {
  models::RunOptions small;
  small.max_ops = 1000;
  auto r = run_text("kernel k grid=(4,1,1) warps=4 {\n warps 0..4 w {\n while 1 { compute cycles=1 }\n }\n}\n", "h100-sxm", small);
  REQUIRE(r.outcome == models::Outcome::kWatchdog);
  CHECK_THAT(r.watchdog_reason, Catch::Contains("--max-ops 1000 reached"));
  small.max_ops = 64;  // exactly what the program needs: 4 CTAs x 4 warps x 4 ops
  auto ok = run_text("kernel k grid=(4,1,1) warps=4 {\n warps 0..4 w {\n for i in 0..4 { compute cycles=1 }\n }\n}\n", "h100-sxm", small);
  CHECK(ok.outcome == models::Outcome::kFinished);
  small.max_ops = 63;
  CHECK(run_text("kernel k grid=(4,1,1) warps=4 {\n warps 0..4 w {\n for i in 0..4 { compute cycles=1 }\n }\n}\n", "h100-sxm", small)
            .outcome == models::Outcome::kWatchdog);
}

TEST_CASE("the work budget may stop a run at any op: the watchdog report never reads a released barrier's state",
          "[isa][limits]") {
  // Two warps meet at bar.sync 0 over and over; some budgets stop the run in the cycle a use completed, with
  // the waiters' wake-ups still on their way (found by fuzz_pipe: the report read the op of warp -1).
  const char* text = "kernel k warps=2 {\n warps 0..2 w {\n for k in 0..300000 {\n bar.sync 0\n }\n }\n}\n";
  int released = 0;
  for (std::int64_t budget = 40; budget <= 60; ++budget) {
    INFO(budget);
    models::RunOptions o;
    o.max_ops = budget;
    auto r = run_text(text, "h100-sxm", o);
    REQUIRE(r.outcome == models::Outcome::kWatchdog);
    std::string report = test::problem(r);
    CHECK_THAT(report, Catch::Contains("--max-ops"));
    released += report.find("the warp's wake-up is on its way") != std::string::npos ? 1 : 0;
  }
  CHECK(released > 0);  // the budgets above do hit that moment
}
