#include <catch2/catch.hpp>

#include "support.hpp"

using namespace smpipe;
using test::compile_error;
using test::compile_text;

TEST_CASE("the language.md example compiles to two roles", "[isa]") {
  auto src = isa::load_source(test::examples_dir() + "/mainloop.pipe");
  isa::Program p = isa::compile(isa::parse(src), {});
  REQUIRE(p.roles.size() == 2);
  CHECK(p.roles[0].name == "producer");
  CHECK(p.roles[0].first_warp == 0);
  CHECK(p.roles[0].end_warp == 1);
  CHECK(p.roles[1].first_warp == 4);  // warpgroups 1..3 = warps 4..11
  CHECK(p.roles[1].end_warp == 12);
  CHECK(p.gpu == "h100-sxm");
  CHECK(p.mbarriers[1].count == 256);
  CHECK(p.smems[0].bytes == 16 * 1024);
  CHECK(p.warp_role[1] == -1);  // warps 1..3 have no role
}

TEST_CASE("params: -D overrides a param, consts cannot be overridden, unknown params are named", "[isa]") {
  const char* text = "param STAGES = 4\nconst X = 2\nkernel k warps=1 {\n mbarrier b[STAGES] count=1\n}\n";
  CHECK(compile_text(text, {{"STAGES", 6}}).mbarriers[0].size == 6);
  CHECK(compile_text(text).mbarriers[0].size == 4);
  CHECK_THROWS_WITH(compile_text(text, {{"X", 3}}), Catch::Contains("'X' is a const; only params can be set with -D"));
  CHECK_THROWS_WITH(compile_text(text, {{"STAGE", 3}}), Catch::Contains("has no param 'STAGE' (did you mean 'STAGES'?)"));
}

TEST_CASE("every statement form parses", "[isa]") {
  const char* text = R"(
param N = 8
const M = N * 2 + (3 << 1) - min(4, 5) + max(1, 2, 3) + ceil_div(7, 2)
gpu "h100-sxm"
kernel all grid=(2, 1, 1) cluster=(2, 1, 1) warps=8 smem=1K {
  mbarrier b[2] count=1
  mbarrier late
  smem s[2] bytes=0x100
  tensor T dtype=bf16 shape=(64, 64)
  named_barrier sync id=3
  warps 0..2 a {
    let x = 0; let y = -x + ~x + !x
    for i in 0..N step 2 { if i == 2 { continue } ; if i > 4 { break } }
    while x < 3 { let x = x + 1 }
    if x != 3 { exit } else if x == 3 { compute cycles=1 }
    if warp == 0 { elect { mbarrier.init late count=1 } }
    bar.sync sync threads=64
    test_wait b[0] parity=1 -> done
  }
  warpgroup 1 c {
    bar.sync 3 threads=64
    sleep cycles=warp_in_role + warpgroup + cta + cta_x + cta_y + cta_z + cluster_rank + num_ctas + sm
  }
}
)";
  isa::Program p = compile_text(text);
  CHECK(p.roles.size() == 2);
  CHECK(p.smem_extra == 1024);
  CHECK(p.cluster[0] == 2);
  CHECK(p.named_barriers[0].id == 3);
  CHECK(p.params[0].second == 8);
  CHECK(p.params[1].second == 16 + 6 - 4 + 3 + 4);
  auto r = test::run_text(text);
  CHECK(r.outcome == models::Outcome::kFinished);
}

// Exact messages: position, text, source line and caret.
TEST_CASE("parse errors name file:line:col with the source line and a caret", "[isa]") {
  CHECK(compile_error("kernel k warps=1 {\n  warp 0 a {\n    arrive\n  }\n}\n") ==
        "test.pipe:3:5: error: 'arrive' needs bar=\n      arrive\n      ^");
  CHECK(compile_error("kernel k warps=1 {\n  warp 0 a { wiat x parity=0 }\n}\n") ==
        "test.pipe:2:14: error: unknown op 'wiat' (did you mean 'wait'?)\n    warp 0 a { wiat x parity=0 }\n               ^");
  CHECK(compile_error("param = 3\n") == "test.pipe:1:7: error: expected a name after 'param', found '='\n  param = 3\n        ^");
  CHECK(compile_error("kernel k warps=1 {\n  warp 0 a { compute cycles=(1 }\n}\n") ==
        "test.pipe:2:32: error: expected ')', found '}'\n    warp 0 a { compute cycles=(1 }\n                                 ^");
  CHECK(compile_error("kernel k warps=1 $\n") == "test.pipe:1:18: error: unexpected character '$'\n  kernel k warps=1 $\n                   ^");
  CHECK(compile_error("kernel k warps=1 {\n  mbarrier b count=1\n  warp 0 a { arrive b cuont=3 }\n}\n") ==
        "test.pipe:3:23: error: unknown attribute 'cuont' for 'arrive' (did you mean 'count'?) (attributes: bar, count, cta)\n"
        "    warp 0 a { arrive b cuont=3 }\n                        ^");
  CHECK(compile_error("kernel k warps=1 {\n  warp 0 a { compute cycles=zz }\n}\n") ==
        "test.pipe:2:29: error: unknown name 'zz'\n    warp 0 a { compute cycles=zz }\n                              ^");
  CHECK(compile_error("kernel k warps=1 {\n  warp 0 a { break }\n}\n") ==
        "test.pipe:2:14: error: 'break' outside a loop\n    warp 0 a { break }\n               ^");
}

TEST_CASE("a kernel attribute or a file's gpu line given twice is an error at the second", "[isa]") {
  CHECK(compile_error("kernel k grid=(4,1,1) warps=1 { }\n").empty());
  CHECK(compile_error("kernel k grid=(1,1,1) grid=(4,1,1) { }\n") ==
        "test.pipe:1:23: error: kernel attribute 'grid' given twice\n  kernel k grid=(1,1,1) grid=(4,1,1) { }\n                        ^");
  CHECK_THAT(compile_error("kernel k warps=1 warps=2 { }\n"), Catch::Contains("kernel attribute 'warps' given twice"));
  CHECK(compile_error("gpu h200\nkernel k { }\n").empty());
  CHECK_THAT(compile_error("gpu h100-sxm\ngpu h200\nkernel k { }\n"),
             Catch::Contains("test.pipe:2:5: error: a second 'gpu' line (the first, at line 1, names h100-sxm)"));
}

TEST_CASE("roles: ranges, overlaps and the warp count", "[isa]") {
  CHECK_THAT(compile_error("kernel k warps=4 {\n  warps 0..5 a { }\n}\n"),
             Catch::Contains("role 'a' covers warps 0..5 but the kernel has warps=0..4"));
  CHECK_THAT(compile_error("kernel k warps=8 {\n  warps 0..5 a { }\n  warpgroup 1 b { }\n}\n"),
             Catch::Contains("warp 4 is already in role 'a'"));
  CHECK_THAT(compile_error("kernel k warps=33 { }\n"), Catch::Contains("warps=33 out of range 1..32"));
  CHECK(compile_error("kernel k warps=32 { }\n").empty());
  CHECK_THAT(compile_error("kernel k grid=(3,1,1) cluster=(2,1,1) { }\n"),
             Catch::Contains("grid dimension 0 (3) is not a multiple of the cluster dimension (2)"));
}

TEST_CASE("procs are inlined, see only their parameters, and return results", "[isa]") {
  const char* text = R"(
const N = 3
kernel k warps=1 {
  mbarrier b count=1
  proc twice(x) -> y {
    let y = 2 * x + N
  }
  warp 0 a {
    let y = 100
    twice(5) -> r
    if r != 13 { exit }
    if y != 100 { exit }       # the proc's y is its own
    elect { arrive b }
    wait b parity=0
  }
}
)";
  auto r = test::run_text(text);
  CHECK(r.outcome == models::Outcome::kFinished);
  CHECK(r.stats.ops == 2);  // the arrive and the wait ran: r was 13 and the caller's y untouched
  CHECK_THAT(compile_error("kernel k {\n proc p(a) { q(a) }\n proc q(a) { p(a) }\n warp 0 w { p(1) }\n}\n"),
             Catch::Contains("proc 'p' calls itself"));
  CHECK_THAT(compile_error("kernel k {\n proc p(a) { }\n warp 0 w { p(1, 2) }\n}\n"), Catch::Contains("takes 1 argument(s), 2 given"));
  CHECK_THAT(compile_error("kernel k {\n proc p(a) { let z = caller }\n warp 0 w { let caller = 1\n p(1) }\n}\n"),
             Catch::Contains("unknown name 'caller'"));
}

TEST_CASE("regions, asserts and reports", "[isa]") {
  const char* text = R"(
param T = 4
report tiles = T * 2
assert T > 0, "T must be positive"
kernel k warps=1 {
  warp 0 a {
    region busy { compute cycles=100 }
    compute cycles=50
  }
}
)";
  auto p = compile_text(text);
  REQUIRE(p.reports.size() == 1);
  CHECK(p.reports[0] == std::make_pair(std::string("tiles"), std::int64_t{8}));
  auto r = test::run_text(text);
  CHECK(r.stats.roles[0].regions.at("busy") == 100);
  CHECK_THAT(compile_error("param T = 0\nassert T > 0, \"T must be positive\"\nkernel k { }\n"),
             Catch::Contains("test.pipe:2:1: error: assertion failed: T must be positive"));
  CHECK_THAT(compile_error("kernel k {\n warp 0 a { for i in 0..2 { region r { break } } }\n}\n"),
             Catch::Contains("'break' would leave a region"));
  CHECK_THAT(compile_error("param SM_COUNT = 3\nkernel k { }\n"), Catch::Contains("'SM_COUNT' is predefined"));
  CHECK(compile_text("kernel k grid=(SM_COUNT,1,1) { }\n").grid[0] == 132);
}
