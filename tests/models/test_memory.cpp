// The memory hierarchy with addresses (models/memory/l2 cache_hbm, block_cache): LRU contents against a
// reference, hits and misses of tensor boxes, HBM traffic and write-backs, boxes outside their tensor,
// the SMs' fair share of the L2; the launch cost in a run's time; the sm90 models' tile orders.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <list>
#include <map>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/gpu/simulator.hpp"
#include "models/memory/block_cache.hpp"
#include "models/memory/transfer.hpp"
#include "support.hpp"

using namespace smpipe;
using models::Outcome;
using test::problem;
using test::run_text;

TEST_CASE("memory: the block cache keeps the most recently used blocks, like a reference LRU list", "[memory]") {
  for (std::int64_t cap : {1, 3, 64, 1000}) {
    models::BlockCache c(cap);
    std::list<std::pair<std::uint64_t, bool>> ref;  // front: most recent; (key, dirty)
    std::mt19937_64 rng(static_cast<std::uint64_t>(cap));
    for (int i = 0; i < 20000; ++i) {
      // Keys from a range a little larger than the capacity, so there are hits and evictions; some far apart.
      std::uint64_t key = rng() % static_cast<std::uint64_t>(cap + cap / 2 + 2);
      if (rng() % 7 == 0) key += 1ULL << 40;
      bool write = rng() % 5 == 0;
      auto it = std::find_if(ref.begin(), ref.end(), [&](const auto& e) { return e.first == key; });
      bool hit = it != ref.end();
      bool evicted = false, evicted_dirty = false;
      if (hit) {
        bool dirty = it->second || write;
        ref.erase(it);
        ref.emplace_front(key, dirty);
      } else {
        if (static_cast<std::int64_t>(ref.size()) == cap) {
          evicted = true;
          evicted_dirty = ref.back().second;
          ref.pop_back();
        }
        ref.emplace_front(key, write);
      }
      models::BlockCache::Touch t = c.touch(key, write);
      REQUIRE(t.hit == hit);
      REQUIRE(t.evicted == evicted);
      REQUIRE(t.evicted_dirty == evicted_dirty);
      REQUIRE(c.size() == static_cast<std::int64_t>(ref.size()));
    }
    for (const auto& [key, dirty] : ref) CHECK(c.contains(key));
  }
}

namespace {
// The tests of the cache's mechanics start from an empty L2 (--l2 cold); the warm start has tests of its own.
models::RunOptions cold() {
  models::RunOptions o;
  o.warm_l2 = false;
  return o;
}
models::RunResult run_cold(const std::string& text) { return run_text(text, "h100-sxm", cold()); }

// A program run on the H100 machine changed by `edit` (none: as it is, but for the spread of its transfers' times,
// l2_latency_spread and hbm_latency_spread: the tests of exact timings below check the queues; the spread has a
// test of its own).
// `observer`, when given, watches the run.
models::RunResult run_edited(const std::string& text, const std::function<void(models::Machine&)>& edit,
                             models::Observer* observer = nullptr) {
  models::Machine m = models::load_machine("h100-sxm");
  m.l2_latency_spread = m.hbm_latency_spread = 0;
  if (edit) edit(m);
  models::RunOptions o = cold();
  if (observer != nullptr) o.observers.push_back(observer);
  return models::simulate(test::compile_text(text, {}, "test.pipe", "h100-sxm"), m, o);
}

// One warp of one CTA loads (or stores) boxes of a 2-D bf16 tensor; returns the run.
models::RunResult boxes(const std::string& body, const std::string& tensor = "tensor T dtype=bf16 shape=(4096, 64)",
                        int ctas = 1, const std::function<void(models::Machine&)>& edit = {},
                        models::Observer* observer = nullptr) {
  std::string text = fmt::format(R"(
kernel k grid=({},1,1) warps=1 {{
  mbarrier full count=1
  smem s bytes=16384
  {}
  warp 0 w {{
    elect {{
{}
    }}
  }}
}}
)",
                                 ctas, tensor, body);
  return run_edited(text, edit, observer);
}
}  // namespace

TEST_CASE("memory: a box read twice misses once, HBM moves the missed bytes and its latency adds to the box's time through "
          "the SM, boxes outside the tensor move nothing", "[memory]") {
  const char* once = R"(
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(0, 0) dst=s bar=full
      wait full parity=0)";
  const char* twice = R"(
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(0, 0) dst=s bar=full
      wait full parity=0
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(0, 0) dst=s bar=full
      wait full parity=1)";
  auto a = boxes(once), b = boxes(twice);
  INFO(problem(a) << problem(b));
  REQUIRE(a.outcome == Outcome::kFinished);
  REQUIRE(b.outcome == Outcome::kFinished);
  CHECK(a.stats.l2_miss_bytes == 16384);
  CHECK(a.stats.l2_hit_bytes == 0);
  CHECK(a.stats.hbm_bytes == 16384);
  CHECK(b.stats.l2_miss_bytes == 16384);
  CHECK(b.stats.l2_hit_bytes == 16384);
  CHECK(b.stats.hbm_bytes == 16384);
  // The miss's data arrive hbm_latency_cycles after the SM sent the box's last request (its engine's time for the
  // box, here longer than HBM's for the missed bytes) where the hit's come with the engine: the second load's wait is
  // shorter by HBM's latency, whatever the box's size (the GPU's tma_load_latency_hbm_* - tma_load_latency_l2_*).
  models::Machine m = models::load_machine("h100-sxm");
  std::int64_t first = a.cycles, second = b.cycles - a.cycles;
  REQUIRE(16384 / m.hbm_bytes_per_cycle < 16384 / m.tma_bytes_per_cycle);
  CHECK(first - second == m.hbm_latency_cycles);
  const std::string small_once = R"(
      arrive.expect_tx full tx=1024
      tma.load T box=(8, 64) at=(0, 0) dst=s bar=full
      wait full parity=0)";
  const std::string small_twice = small_once + R"(
      arrive.expect_tx full tx=1024
      tma.load T box=(8, 64) at=(0, 0) dst=s bar=full
      wait full parity=1)";
  auto sa = boxes(small_once), sb = boxes(small_twice);
  REQUIRE(sb.outcome == Outcome::kFinished);
  CHECK(sa.cycles - (sb.cycles - sa.cycles) == m.hbm_latency_cycles);
  // HBM slower than the engine: the latency adds to HBM's own time for the bytes instead.
  const auto slow_hbm = [](models::Machine& x) { x.hbm_bytes_per_cycle = 16; };
  auto sa2 = boxes(once, "tensor T dtype=bf16 shape=(4096, 64)", 1, slow_hbm);
  auto sb2 = boxes(twice, "tensor T dtype=bf16 shape=(4096, 64)", 1, slow_hbm);
  REQUIRE(sb2.outcome == Outcome::kFinished);
  const double engine = 16384 / m.tma_bytes_per_cycle, hbm = m.hbm_latency_cycles + 16384.0 / 16;
  CHECK(static_cast<double>(sa2.cycles - (sb2.cycles - sa2.cycles)) == Approx(hbm - engine).margin(2));

  // Half the box below the last row: only the rows inside move (TMA fills the rest with zeros).
  auto c = boxes(R"(
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(4032, 0) dst=s bar=full
      wait full parity=0)");
  INFO(problem(c));
  REQUIRE(c.outcome == Outcome::kFinished);
  CHECK(c.stats.l2_miss_bytes == 64 * 128);
  CHECK(c.stats.bytes_loaded == 16384);  // the SM's engine still writes the whole box
  // Entirely outside: no memory traffic at all.
  auto d = boxes(R"(
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(5000, 0) dst=s bar=full
      wait full parity=0)");
  REQUIRE(d.outcome == Outcome::kFinished);
  CHECK(d.stats.l2_miss_bytes + d.stats.l2_hit_bytes == 0);
}

namespace {
// Every CTA's one thread loads the 32 KB box (256 rows x 64 bf16) at row `y0` (plus 256 x its CTA index with `own`)
// of a tensor of `rows` rows `iters` times through a ring of 4 stages (the microbenchmark group oob's k_oob_ring).
models::RunResult oob_ring(int ctas, std::int64_t rows, std::int64_t y0, int iters, bool own = false,
                           const std::function<void(models::Machine&)>& edit = {}) {
  const std::string text = fmt::format(R"(
kernel k grid=({0},1,1) warps=1 {{
  mbarrier full[4] count=1
  smem buf[4] bytes=32768
  tensor T dtype=bf16 shape=({1}, 64)
  warp 0 w {{
    elect {{
      for i in 0..{3} {{
        let s = i % 4
        if i >= 4 {{ wait full[s] parity=((i / 4) & 1) ^ 1 }}
        arrive.expect_tx full[s] tx=32768
        tma.load T box=(256, 64) at=({2} + {4} * cta * 256, 0) dst=buf[s] bar=full[s] swizzle=128
      }}
      for k in {3}..{3} + 4 {{ wait full[k % 4] parity=((k / 4) & 1) ^ 1 }}
    }}
  }}
}}
)",
                                       ctas, rows, y0, iters, own ? 1 : 0);
  return run_edited(text, edit);
}

// Cycles per box in the steady state: the difference of 128 and 256 boxes per CTA.
double oob_per_box(int ctas, std::int64_t rows, std::int64_t y0, bool own = false,
                   const std::function<void(models::Machine&)>& edit = {}) {
  auto a = oob_ring(ctas, rows, y0, 128, own, edit), b = oob_ring(ctas, rows, y0, 256, own, edit);
  REQUIRE(a.outcome == Outcome::kFinished);
  REQUIRE(b.outcome == Outcome::kFinished);
  return static_cast<double>(b.cycles - a.cycles) / 128.0;
}
}  // namespace

TEST_CASE("memory: the L2 answers the parts of boxes outside their tensor at l2_oob_bytes_per_cycle when every SM loads "
          "them, one SM alone loads them as fast as inside, and the rate counts only the bytes outside",
          "[memory]") {
  const models::Machine m = models::load_machine("h100-sxm");
  REQUIRE(m.l2_oob_bytes_per_cycle > 0);
  const std::int64_t inside_rows = 132 * 256 + 256;
  // Counted: a box wholly outside, half outside, inside; the engine still writes every byte of the box.
  auto all_out = oob_ring(1, 128, 256, 16);
  auto half = oob_ring(1, 128, 0, 16);
  auto inside = oob_ring(1, inside_rows, 0, 16);
  REQUIRE(all_out.outcome == Outcome::kFinished);
  CHECK(all_out.stats.l2_outside_bytes == 16 * 32768);
  CHECK(half.stats.l2_outside_bytes == 16 * 16384);
  CHECK(inside.stats.l2_outside_bytes == 0);
  CHECK(all_out.stats.bytes_loaded == 16 * 32768);
  // A box before the tensor's first row (negative coordinates) and one past its last column count the same way.
  auto before = boxes(R"(
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(-32, 0) dst=s bar=full
      wait full parity=0)");
  REQUIRE(before.outcome == Outcome::kFinished);
  CHECK(before.stats.l2_outside_bytes == 32 * 128);
  auto right = boxes(R"(
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(0, 48) dst=s bar=full
      wait full parity=0)");
  REQUIRE(right.outcome == Outcome::kFinished);
  CHECK(right.stats.l2_outside_bytes == 128 * 48 * 2);
  // The LSU's reads with a box (ld.global, cp.async) are not TMA loads: their parts outside cost nothing (not measured).
  auto lsu = boxes(R"(
      ld.global src=T box=(128, 64) at=(4032, 0)
      cp.async dst=s src=T box=(128, 64) at=(4032, 0)
      cp.async.commit
      cp.async.wait 0)");
  INFO(problem(lsu));
  REQUIRE(lsu.outcome == Outcome::kFinished);
  CHECK(lsu.stats.l2_miss_bytes == 64 * 128);  // (the rows inside: read once, then hit)
  CHECK(lsu.stats.l2_outside_bytes == 0);

  // One SM: the box wholly outside takes its engine's time, as inside.
  const double one_out = oob_per_box(1, 128, 256), one_in = oob_per_box(1, inside_rows, 0);
  CHECK(one_out == Approx(one_in).margin(1));
  CHECK(one_in == Approx(32768 / m.tma_bytes_per_cycle).margin(2));
  // Every SM: 132 boxes outside per l2_oob_bytes_per_cycle, at each CTA's own coordinates as at the same ones.
  const double all = oob_per_box(132, 128, 256);
  CHECK(all == Approx(132 * 32768 / m.l2_oob_bytes_per_cycle).epsilon(0.01));
  CHECK(oob_per_box(132, 128, 256, true) == Approx(all).epsilon(0.01));
  // Half the rate: twice the time; the rate off (0): as fast as one SM alone.
  CHECK(oob_per_box(132, 128, 256, false, [](models::Machine& x) { x.l2_oob_bytes_per_cycle /= 2; }) ==
        Approx(2 * all).epsilon(0.01));
  CHECK(oob_per_box(132, 128, 256, false, [](models::Machine& x) { x.l2_oob_bytes_per_cycle = 0; }) ==
        Approx(one_in).margin(2));
  // Half the box outside: the rows inside hit (the same box on every SM) and cost the L2 their own bytes beside it.
  const double half_all = oob_per_box(132, 128, 0);
  const double half_outside_alone = 132 * 16384 / m.l2_oob_bytes_per_cycle;
  CHECK(half_all >= half_outside_alone - 1);
  CHECK(half_all < all);
}

TEST_CASE("memory: a dirty start holds another kernel's stores, at most l2_dirty_left_share of the L2, written back as "
          "the launch evicts them",
          "[memory]") {
  // N loads of one 4 KB block each (32 rows x 128 bytes of T), all in flight at once (HBM's queue bounds them), none
  // read twice.
  auto kernel = [](int n) {
    return fmt::format(R"(
kernel k warps=1 {{
  mbarrier full count=1
  smem s[{0}] bytes=4096
  tensor T dtype=bf16 shape=(8192, 64)
  warp 0 w {{
    elect {{
      arrive.expect_tx full tx={0} * 4096
      for i in 0..{0} {{ tma.load T box=(32, 64) at=(i * 32, 0) dst=s[i] bar=full }}
      wait full parity=0
    }}
  }}
}}
)",
                       n);
  };
  models::Machine m = models::load_machine("h100-sxm");
  m.l2_latency_spread = m.hbm_latency_spread = 0;
  m.l2_partitions = 1;
  m.l2_capacity_bytes = 32 * 4096;  // 32 blocks
  m.l2_dirty_left_share = 0.25;     // at most 8 of them left dirty
  m.hbm_bytes_per_cycle = 16;       // HBM, not the SM's TMA engine, bounds the reads
  m.hbm_turnaround = 0;
  constexpr std::int64_t kBlock = 4096;
  auto run = [&](int n, std::int64_t dirty) {
    models::RunOptions o;
    o.warm_l2 = false;
    o.l2_dirty_bytes = dirty;
    return models::simulate(test::compile_text(kernel(n), {}, "dirty.pipe", "h100-sxm"), m, o);
  };
  // 48 blocks read: more than the L2 holds, so every dirty block is evicted and written back.
  auto cold = run(48, 0), dirty = run(48, 4 * kBlock), full = run(48, 8 * kBlock), over = run(48, 8 * kBlock + 1);
  for (const auto* r : {&cold, &dirty, &full, &over}) {
    INFO(problem(*r));
    REQUIRE(r->outcome == Outcome::kFinished);
    CHECK(r->stats.hbm_read_bytes == 48 * kBlock);
    CHECK_FALSE(r->stats.l2_warm);
  }
  CHECK(cold.stats.l2_dirty_start_bytes == 0);
  CHECK(cold.stats.hbm_bytes == 48 * kBlock);
  CHECK(dirty.stats.l2_dirty_start_bytes == 4 * kBlock);
  CHECK(dirty.stats.hbm_bytes == 52 * kBlock);
  CHECK_FALSE(dirty.stats.l2_dirty_capped);
  // The boundary: 8 blocks are the most left dirty; a byte more asks for a 9th, which is not held.
  CHECK(full.stats.l2_dirty_start_bytes == 8 * kBlock);
  CHECK_FALSE(full.stats.l2_dirty_capped);
  CHECK(over.stats.l2_dirty_start_bytes == 8 * kBlock);
  CHECK(over.stats.l2_dirty_capped);
  CHECK(over.stats.hbm_bytes == 56 * kBlock);
  // The write-backs take HBM's time from the reads: the launch takes longer by about their bytes at HBM's rate.
  REQUIRE(cold.cycles > 48 * kBlock / 16);
  CHECK(dirty.cycles - cold.cycles == Approx(4 * kBlock / 16).epsilon(0.05));
  CHECK(full.cycles - cold.cycles == Approx(8 * kBlock / 16).epsilon(0.05));
  CHECK(over.cycles == full.cycles);
  // Nothing is written back while nothing is evicted: 24 blocks read beside 8 dirty fit in 32 ...
  auto few_cold = run(24, 0), few_dirty = run(24, 8 * kBlock);
  CHECK(few_dirty.stats.hbm_bytes == 24 * kBlock);
  CHECK(few_dirty.cycles == few_cold.cycles);
  // ... and 25 do not: the least recent dirty block goes, written back.
  CHECK(run(25, 8 * kBlock).stats.hbm_bytes == 26 * kBlock);
  // The JSON and the summary say so.
  const isa::Program program = test::compile_text(kernel(48), {}, "dirty.pipe", "h100-sxm");
  const auto j = models::to_json(over, program);
  CHECK(j["l2_start"] == "dirty");
  CHECK(j["l2_dirty_start_bytes"] == 8 * kBlock);
  CHECK(models::to_json(cold, program)["l2_start"] == "cold");
  CHECK_THAT(models::format_summary(over, program),
             Catch::Contains("L2 start     dirty (32.8 KB of another kernel's stores: a kernel leaves at most 25.0 % of the L2 "
                             "dirty (l2_dirty_left_share)"));
  CHECK_THAT(models::format_summary(dirty, program), Catch::Contains("L2 start     dirty (16.4 KB of another kernel's stores, "
                                                                     "written back"));
}

TEST_CASE("memory: a dirty start of named tensors holds their last blocks as the kernel that wrote them leaves them, at "
          "most l2_dirty_left_share of the L2, found by this launch and written back as it evicts them",
          "[memory]") {
  // Loads of `n` 4 KB blocks of T (8192 x 64 bf16: 256 row blocks of 32 rows x 128 bytes, one column block) from row
  // block `from` on, all in flight at once; S (`s_rows` x 64) is declared, not read.
  auto kernel = [](int n, int from, int s_rows) {
    return fmt::format(R"(
kernel k warps=1 {{
  mbarrier full count=1
  smem s[{0}] bytes=4096
  tensor T dtype=bf16 shape=(8192, 64)
  tensor S dtype=bf16 shape=({2}, 64)
  warp 0 w {{
    elect {{
      arrive.expect_tx full tx={0} * 4096
      for i in 0..{0} {{ tma.load T box=(32, 64) at=(({1} + i) * 32, 0) dst=s[i] bar=full }}
      wait full parity=0
    }}
  }}
}}
)",
                       n, from, s_rows);
  };
  models::Machine m = models::load_machine("h100-sxm");
  m.l2_latency_spread = m.hbm_latency_spread = 0;
  m.l2_partitions = 1;
  m.l2_capacity_bytes = 32 * 4096;  // 32 blocks
  m.l2_dirty_left_share = 0.25;     // at most 8 of them left dirty
  m.hbm_bytes_per_cycle = 16;
  m.hbm_turnaround = 0;
  constexpr std::int64_t kBlock = 4096;
  auto run = [&](int n, int from, std::vector<std::string> dirty, int s_rows = 128) {
    models::RunOptions o;
    o.warm_l2 = false;
    o.l2_dirty_tensors = std::move(dirty);
    auto r = models::simulate(test::compile_text(kernel(n, from, s_rows), {}, "dirty.pipe", "h100-sxm"), m, o);
    INFO(problem(r));
    REQUIRE(r.outcome == Outcome::kFinished);
    return r;
  };
  // T's last 8 blocks (row blocks 248-255) are held: read, they all hit; nothing is evicted, nothing written back.
  auto last = run(8, 248, {"T"});
  CHECK(last.stats.l2_dirty_start_bytes == 8 * kBlock);
  CHECK(last.stats.l2_dirty_capped);  // (T has 256 blocks)
  CHECK(last.stats.l2_dirty_start_tensors == std::vector<std::string>{"T"});
  CHECK(last.stats.hbm_read_bytes == 0);
  CHECK(last.stats.hbm_bytes == 0);
  CHECK(last.cycles < run(8, 248, {}).cycles);
  // The boundary: from row block 247 the first misses (not held), the other 7 hit; 240-247 all miss.
  CHECK(run(8, 247, {"T"}).stats.hbm_read_bytes == kBlock);
  CHECK(run(8, 240, {"T"}).stats.hbm_read_bytes == 8 * kBlock);
  // 48 other blocks: the 8 held are evicted and written back (dirty), beside the 48 read.
  auto other = run(48, 0, {"T"});
  CHECK(other.stats.hbm_read_bytes == 48 * kBlock);
  CHECK(other.stats.hbm_bytes == 56 * kBlock);
  CHECK(run(48, 0, {}).stats.hbm_bytes == 48 * kBlock);
  // A tensor of 8 blocks is held whole, not capped; one of 9 loses its first.
  auto s8 = run(1, 0, {"S"}, 256), s9 = run(1, 0, {"S"}, 288);
  CHECK(s8.stats.l2_dirty_start_bytes == 8 * kBlock);
  CHECK_FALSE(s8.stats.l2_dirty_capped);
  CHECK(s9.stats.l2_dirty_start_bytes == 8 * kBlock);
  CHECK(s9.stats.l2_dirty_capped);
  // In the order named, the last named kept first: S (4 blocks) after T leaves room for T's last 4 (252-255) ...
  CHECK(run(4, 252, {"T", "S"}).stats.hbm_read_bytes == 0);
  CHECK(run(4, 248, {"T", "S"}).stats.hbm_read_bytes == 4 * kBlock);
  // ... and T after S takes all 8 places (248-255), S none.
  CHECK(run(8, 248, {"S", "T"}).stats.hbm_read_bytes == 0);
  // With two partitions each block is held once, in either; an SM finds it in the other too (every one hits).
  m.l2_partitions = 2;
  m.l2_capacity_bytes = 64 * 4096;
  m.l2_dirty_left_share = 0.125;
  auto two = run(8, 248, {"T"});
  CHECK(two.stats.l2_dirty_start_bytes == 8 * kBlock);
  CHECK(two.stats.hbm_read_bytes == 0);
  // The summary and the JSON say so.
  const isa::Program program = test::compile_text(kernel(8, 248, 128), {}, "dirty.pipe", "h100-sxm");
  CHECK_THAT(models::format_summary(last, program),
             Catch::Contains("L2 start     dirty (32.8 KB of tensor T, as the kernel that wrote it leaves it: its last stores, a "
                             "kernel leaves at most 25.0 % of the L2 dirty (l2_dirty_left_share), written back to HBM as the "
                             "launch evicts it: --l2 dirty:T)"));
  const auto j = models::to_json(last, program);
  CHECK(j["l2_start"] == "dirty");
  CHECK(j["l2_dirty_start_tensors"] == nlohmann::json::array({"T"}));
  // Names the program does not declare are an input error that lists those it does.
  models::check_l2_tensors(program, {"S", "T"}, "--l2 dirty:S,T");
  try {
    models::check_l2_tensors(program, {"T", "X"}, "--l2 dirty:T,X");
    FAIL("no error");
  } catch (const isa::InputError& e) {
    CHECK_THAT(std::string(e.what()), Catch::EndsWith("--l2 dirty:T,X: the program declares no tensor X (its tensors: T, S)"));
  }
}

TEST_CASE("memory: the L2 starts warm with every block of the tensors the code names when they all fit, else cold",
          "[memory]") {
  // One load of a 16 KB box of T (4096 x 64 bf16: 128 blocks of 32 rows x 128 bytes, 512 KB).
  const std::string load = R"(
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(0, 0) dst=s bar=full
      wait full parity=0)";
  const std::string kernel = fmt::format(R"(
kernel k warps=1 {{
  mbarrier full count=1
  smem s bytes=16384
  tensor T dtype=bf16 shape=(4096, 64)
  warp 0 w {{
    elect {{
{}
    }}
  }}
}}
)",
                                         load);
  models::Machine h100 = models::load_machine("h100-sxm");
  h100.l2_latency_spread = h100.hbm_latency_spread = 0;
  auto run = [&](const std::string& text, std::int64_t capacity_blocks, bool warm, std::int64_t partitions = 1) {
    models::Machine m = h100;
    m.l2_partitions = partitions;
    if (capacity_blocks > 0) m.l2_capacity_bytes = capacity_blocks * 32 * 128;
    models::RunOptions o;
    o.warm_l2 = warm;
    return models::simulate(test::compile_text(text, {}, "warm.pipe", "h100-sxm"), m, o);
  };
  auto warm = run(kernel, 0, true), cold = run(kernel, 0, false);
  INFO(problem(warm) << problem(cold));
  REQUIRE(warm.outcome == Outcome::kFinished);
  REQUIRE(cold.outcome == Outcome::kFinished);
  CHECK(warm.stats.l2_warm);
  CHECK_FALSE(cold.stats.l2_warm);
  CHECK(warm.stats.l2_footprint_bytes == 512 * 1024);
  CHECK(cold.stats.l2_footprint_bytes == 512 * 1024);
  CHECK(warm.stats.l2_miss_bytes == 0);
  CHECK(warm.stats.l2_hit_bytes == 16384);
  CHECK(warm.stats.hbm_bytes == 0);
  CHECK(cold.stats.l2_miss_bytes == 16384);
  // Warm, the load is a hit from the start: it ends sooner by HBM's latency, which a miss adds to the SM's engine time
  // (longer here than HBM's for the box: as a second load of a box in a cold L2, the test of hits and misses above).
  REQUIRE(16384 / h100.hbm_bytes_per_cycle < 16384 / h100.tma_bytes_per_cycle);
  CHECK(cold.cycles - warm.cycles == h100.hbm_latency_cycles);

  // The boundary: T's 128 blocks in an L2 of exactly 128 start warm; in one of 127 they do not fit, and it starts cold.
  auto fits = run(kernel, 128, true), over = run(kernel, 127, true);
  CHECK(fits.stats.l2_warm);
  CHECK(fits.stats.l2_miss_bytes == 0);
  CHECK_FALSE(over.stats.l2_warm);
  CHECK(over.stats.l2_miss_bytes == 16384);
  // With two L2 partitions (l2_partitions 2) a previous launch leaves a copy in each: 256 blocks hold both, 255 do not.
  auto fits2 = run(kernel, 256, true, 2), over2 = run(kernel, 255, true, 2);
  CHECK(fits2.stats.l2_warm);
  CHECK(fits2.stats.l2_miss_bytes == 0);
  CHECK_FALSE(over2.stats.l2_warm);
  CHECK(over2.stats.l2_miss_bytes == 16384);

  // Only the tensors the code names count: U (64 MB) named in a branch dropped at compile time does not; named in
  // a branch decided at run time (never taken) it does, and T and U together exceed the L2 (50 MB).
  auto with_u = [&](const std::string& cond) {
    return fmt::format(R"(
param USE_U = 0
kernel k warps=1 {{
  mbarrier full count=1
  smem s bytes=16384
  tensor T dtype=bf16 shape=(4096, 64)
  tensor U dtype=bf16 shape=(524288, 64)
  warp 0 w {{
    elect {{
{}
      if {} {{
        arrive.expect_tx full tx=16384
        tma.load U box=(128, 64) at=(0, 0) dst=s bar=full
        wait full parity=1
      }}
    }}
  }}
}}
)",
                       load, cond);
  };
  auto dropped = run(with_u("USE_U"), 0, true), live = run(with_u("warp == 7"), 0, true);
  INFO(problem(dropped) << problem(live));
  REQUIRE(dropped.outcome == Outcome::kFinished);
  REQUIRE(live.outcome == Outcome::kFinished);
  CHECK(dropped.stats.l2_warm);
  CHECK(dropped.stats.l2_footprint_bytes == 512 * 1024);
  CHECK(dropped.stats.l2_miss_bytes == 0);
  CHECK_FALSE(live.stats.l2_warm);
  CHECK(live.stats.l2_footprint_bytes == 512 * 1024 + 64 * 1024 * 1024);
  CHECK(live.stats.l2_miss_bytes == 16384);

  // Every block is there: the last row block of T, a three-dimensional tensor's last outer index (its leading
  // dimensions flatten into rows), the same tensor read by ld.global with a box; a tensor only prefetched, or named
  // without a box, does not count.
  const std::string more = R"(
kernel k warps=1 {
  mbarrier full count=1
  smem s bytes=16384
  tensor T dtype=bf16 shape=(4096, 64)
  tensor V dtype=bf16 shape=(8, 512, 64)
  tensor P dtype=bf16 shape=(1048576, 64)
  tensor Q dtype=bf16 shape=(1048576, 64)
  warp 0 w {
    elect {
      tma.prefetch P box=(128, 64) at=(0, 0)
      arrive.expect_tx full tx=32768
      tma.load T box=(128, 64) at=(3968, 0) dst=s bar=full
      tma.load V box=(1, 128, 64) at=(7, 384, 0) dst=s bar=full
      wait full parity=0
    }
    ld.global src=T box=(128, 64) at=(2048, 0)
    ld.global bytes=512 src=Q
  }
}
)";
  auto all = run(more, 0, true), none = run(more, 0, false);
  INFO(problem(all) << problem(none));
  REQUIRE(all.outcome == Outcome::kFinished);
  REQUIRE(none.outcome == Outcome::kFinished);
  CHECK(all.stats.l2_warm);
  CHECK(all.stats.l2_footprint_bytes == 512 * 1024 + 512 * 1024);  // T and V (8 x 512 rows of 128 bytes)
  CHECK(all.stats.l2_miss_bytes == 0);
  CHECK(all.stats.l2_hit_bytes == 3 * 16384 + 512);  // (Q's 512 bytes without an address count as hits either way)
  CHECK(none.stats.l2_miss_bytes == 3 * 16384);
}

TEST_CASE("memory: a block's parts come from HBM once each: boxes narrower than a block miss on their own half rows", "[memory]") {
  // T's rows are 128 bytes (one block wide); the block holds 32 rows. Two boxes of the two 64-byte halves of the
  // same 32 rows both miss (each brings its half), then the whole block hits.
  auto halves = boxes(R"(
      arrive.expect_tx full tx=2048
      tma.load T box=(32, 32) at=(0, 0) dst=s bar=full
      wait full parity=0
      arrive.expect_tx full tx=2048
      tma.load T box=(32, 32) at=(0, 32) dst=s bar=full
      wait full parity=1
      arrive.expect_tx full tx=4096
      tma.load T box=(32, 64) at=(0, 0) dst=s bar=full
      wait full parity=0)");
  INFO(problem(halves));
  REQUIRE(halves.outcome == Outcome::kFinished);
  CHECK(halves.stats.l2_miss_bytes == 4096);
  CHECK(halves.stats.hbm_bytes == 4096);
  CHECK(halves.stats.l2_hit_bytes == 4096);
  // Rows: the first 16 rows of the block, then all 32: the second box misses on its 16 new rows only.
  auto rows = boxes(R"(
      arrive.expect_tx full tx=2048
      tma.load T box=(16, 64) at=(0, 0) dst=s bar=full
      wait full parity=0
      arrive.expect_tx full tx=4096
      tma.load T box=(32, 64) at=(0, 0) dst=s bar=full
      wait full parity=1)");
  INFO(problem(rows));
  REQUIRE(rows.outcome == Outcome::kFinished);
  CHECK(rows.stats.l2_miss_bytes == 4096);
  CHECK(rows.stats.l2_hit_bytes == 2048);
  // The same half twice: the second read hits.
  auto again = boxes(R"(
      arrive.expect_tx full tx=2048
      tma.load T box=(32, 32) at=(0, 32) dst=s bar=full
      wait full parity=0
      arrive.expect_tx full tx=2048
      tma.load T box=(32, 32) at=(0, 32) dst=s bar=full
      wait full parity=1)");
  REQUIRE(again.outcome == Outcome::kFinished);
  CHECK(again.stats.l2_miss_bytes == 2048);
  CHECK(again.stats.l2_hit_bytes == 2048);
}

TEST_CASE("memory: a read of parts the L2 holds does not wait for other parts of the block still coming from HBM", "[memory]") {
  // The low halves of block 0 are read and held; then a load of the high halves of block 0 (or, in the
  // reference run, of another block) is issued and, while it is in flight, the low halves are read again on a
  // second barrier. That read hits without waiting for the other fetch, so both runs take the same time; a read
  // of the high halves themselves waits for them (region `again`: the second read, issue to wait).
  auto run = [](int other_row, int again_col) {
    std::string text = fmt::format(R"(
kernel k grid=(1,1,1) warps=1 {{
  mbarrier a count=1
  mbarrier b count=1
  smem sa bytes=2048
  smem sb bytes=2048
  tensor T dtype=bf16 shape=(4096, 64)
  warp 0 w {{
    elect {{
      arrive.expect_tx a tx=2048
      tma.load T box=(32, 32) at=(0, 0) dst=sa bar=a
      wait a parity=0
      arrive.expect_tx a tx=2048
      tma.load T box=(32, 32) at=({}, 32) dst=sa bar=a
      region again {{
        arrive.expect_tx b tx=2048
        tma.load T box=(32, 32) at=(0, {}) dst=sb bar=b
        wait b parity=0
      }}
      wait a parity=1
    }}
  }}
}}
)",
                                   other_row, again_col);
    return run_cold(text);
  };
  auto same_block = run(0, 0), other_block = run(64, 0), needs_it = run(0, 32);
  INFO(problem(same_block) << problem(other_block) << problem(needs_it));
  REQUIRE(same_block.outcome == Outcome::kFinished);
  REQUIRE(other_block.outcome == Outcome::kFinished);
  REQUIRE(needs_it.outcome == Outcome::kFinished);
  CHECK(same_block.stats.l2_hit_bytes == 2048);
  auto again = [](const models::RunResult& r) { return r.stats.roles.at(0).regions.at("again"); };
  CHECK(again(same_block) == again(other_block));
  // The read of the halves in flight waits for their HBM fetch: longer by about the HBM latency.
  models::Machine m = models::load_machine("h100-sxm");
  CHECK(again(needs_it) > again(same_block) + m.hbm_latency_cycles / 2);
}

TEST_CASE("memory: a box far larger than its tensor touches only the tensor", "[memory]") {
  // A 3-D tensor of 2 x 2 rows of 128 bytes; a box of 2^28 planes: only the tensor's 2 planes are visited (the
  // op takes no longer than one of 2 planes), and only their bytes move.
  std::string big = R"(
kernel k grid=(1,1,1) warps=1 {
  smem s bytes=1K
  tensor T dtype=bf16 shape=(2, 2, 64)
  warp 0 w {
    ld.global src=T box=(268435456, 1, 1) at=(0, 0, 0)
  }
}
)";
  auto r = run_cold(big);
  INFO(problem(r));
  REQUIRE(r.outcome == Outcome::kFinished);
  CHECK(r.stats.l2_miss_bytes == 2 * 2);
  CHECK(r.stats.bytes_loaded == 268435456LL * 2);
}

TEST_CASE("memory: cp.async / ld.global / st.global with a box reach the L2 at their address, without one they count as hits", "[memory]") {
  // A warp copies its quarter of a 64 x 64 f16 tile (rows of 128 bytes) with cp.async, twice over: the first
  // pass misses, the second hits; then it stores a box and loads it back (a hit: the store allocated it).
  std::string text = R"(
kernel k grid=(1,1,1) warps=4 {
  smem s bytes=8K
  tensor A dtype=f16 shape=(64, 64)
  tensor D dtype=f16 shape=(64, 64)
  warps 0..4 w {
    for p in 0..2 {
      cp.async dst=s src=A box=(16, 64) at=(warp * 16, 0)
      cp.async.commit
      cp.async.wait 0
    }
    st.global dst=D box=(16, 64) at=(warp * 16, 0)
    ld.global src=D box=(16, 64) at=(warp * 16, 0)
  }
}
)";
  auto r = run_cold(text);
  INFO(problem(r));
  REQUIRE(r.outcome == Outcome::kFinished);
  CHECK(r.stats.bytes_loaded == 2 * 8192 + 8192);
  CHECK(r.stats.bytes_stored == 8192);
  CHECK(r.stats.l2_miss_bytes == 8192);
  CHECK(r.stats.hbm_bytes == 8192);
  CHECK(r.stats.hbm_read_bytes == 8192);
  CHECK(r.stats.l2_hit_bytes == 8192 + 8192);
  // The same copies given as bytes: no address, every byte a hit, nothing from HBM.
  std::string plain = R"(
kernel k grid=(1,1,1) warps=4 {
  smem s bytes=8K
  warps 0..4 w {
    for p in 0..2 {
      cp.async bytes=2048 dst=s
      cp.async.commit
      cp.async.wait 0
    }
  }
}
)";
  auto q = run_cold(plain);
  REQUIRE(q.outcome == Outcome::kFinished);
  CHECK(q.stats.l2_miss_bytes == 0);
  CHECK(q.stats.hbm_bytes == 0);
  CHECK(q.stats.l2_hit_bytes == 2 * 8192);
  // The miss costs the copy HBM's latency: the addressed run's first pass is the slower one.
  CHECK(r.cycles > q.cycles);
}

TEST_CASE("memory: a cp.async box that misses takes HBM's latency longer than the same box hitting, after its own time "
          "on the load/store path", "[memory]") {
  // One warp copies an 8 KB box once or twice: the second copy hits. The first takes hbm_latency_cycles longer, the
  // latency added to the warp's time on the SM's load/store path (which here exceeds HBM's time for the bytes).
  const auto copies = [](int passes) {
    return run_edited(fmt::format(R"(
kernel k grid=(1,1,1) warps=1 {{
  smem s bytes=8K
  tensor A dtype=f16 shape=(64, 64)
  warp 0 w {{
    for p in 0..{} {{
      cp.async dst=s src=A box=(64, 64) at=(0, 0)
      cp.async.commit
      cp.async.wait 0
    }}
  }}
}}
)",
                                  passes),
                      {});
  };
  auto once = copies(1), twice = copies(2);
  INFO(problem(once) << problem(twice));
  REQUIRE(twice.outcome == Outcome::kFinished);
  CHECK(twice.stats.l2_hit_bytes == 8192);
  const models::Machine m = models::load_machine("h100-sxm");
  CHECK(once.cycles - (twice.cycles - once.cycles) == m.hbm_latency_cycles);
}

TEST_CASE("memory: a tensor's l2_promotion brings the whole aligned segment of each row a miss touches into the L2",
          "[memory]") {
  // Two boxes side by side in rows of 256 bytes: the first at columns [0, W), the second at [W, 2W).
  const auto side_by_side = [](int promotion, int w) {
    return run_edited(fmt::format(R"(
kernel k grid=(1,1,1) warps=1 {{
  mbarrier full count=1
  smem s bytes=16384
  tensor T dtype=bf16 shape=(4096, 128) l2_promotion={0}
  warp 0 w {{
    elect {{
      arrive.expect_tx full tx={2}
      tma.load T box=(128, {1}) at=(0, 0) dst=s bar=full
      wait full parity=0
      arrive.expect_tx full tx={2}
      tma.load T box=(128, {1}) at=(0, {1}) dst=s bar=full
      wait full parity=1
    }}
  }}
}}
)",
                                  promotion, w, 128 * w * 2),
                      {});
  };
  for (int w : {32, 64}) {
    const std::int64_t box = 128 * w * 2;
    INFO("box columns " << w);
    // None (and 64: the model's finest part is a 64-byte half row): each box brings only its own bytes.
    for (int promotion : {0, 64}) {
      auto r = side_by_side(promotion, w);
      REQUIRE(r.outcome == Outcome::kFinished);
      CHECK(r.stats.l2_miss_bytes == 2 * box);
      CHECK(r.stats.l2_hit_bytes == 0);
      CHECK(r.stats.hbm_bytes == 2 * box);
      CHECK(r.stats.hbm_read_bytes == 2 * box);
    }
    // 128: a miss brings both halves of each 128-byte segment: a 64-byte-wide box brings its neighbour, which hits.
    auto r128 = side_by_side(128, w);
    REQUIRE(r128.outcome == Outcome::kFinished);
    CHECK(r128.stats.l2_hit_bytes == (w == 32 ? box : 0));
    CHECK(r128.stats.hbm_bytes == 2 * box);  // the same bytes from HBM, once each: the second box's came with the first
    // 256: the whole 256-byte row comes with the first box: the second hits whatever its width.
    auto r256 = side_by_side(256, w);
    REQUIRE(r256.outcome == Outcome::kFinished);
    CHECK(r256.stats.l2_miss_bytes == box);
    CHECK(r256.stats.l2_hit_bytes == box);
    CHECK(r256.stats.hbm_bytes == 128 * 256);
    // HBM's reads are the miss and what it brought, more than the bytes that missed (Nsight Compute's dram__bytes_read)
    CHECK(r256.stats.hbm_read_bytes == 128 * 256);
    CHECK(r256.stats.hbm_read_bytes > r256.stats.l2_miss_bytes);
    CHECK(r256.cycles < side_by_side(0, w).cycles);
  }
  // The same box `loads` times (each waited for) from a tensor of `cols` bf16 columns with promotion `promotion`.
  const auto same_box = [](int cols, int promotion, int box_cols, int at_col, int loads) {
    std::string body;
    for (int i = 0; i < loads; ++i)
      body += fmt::format("      arrive.expect_tx full tx={0}\n      tma.load T box=(128, {1}) at=(0, {2}) dst=s bar=full\n"
                          "      wait full parity={3}\n",
                          128 * box_cols * 2, box_cols, at_col, i & 1);
    return run_edited(fmt::format(R"(
kernel k grid=(1,1,1) warps=1 {{
  mbarrier full count=1
  smem s bytes=32768
  tensor T dtype=bf16 shape=(4096, {}) l2_promotion={}
  warp 0 w {{
    elect {{
{}    }}
  }}
}}
)",
                                  cols, promotion, body),
                      {});
  };
  // The segment stays inside the tensor: rows of 192 bytes hold one aligned 128-byte segment and a 64-byte rest.
  auto edge = same_box(96, 256, 64, 0, 1);
  REQUIRE(edge.outcome == Outcome::kFinished);
  CHECK(edge.stats.hbm_bytes == 128 * 192);
  // 128 with a row that ends inside the box's own block: its missing half is not there to bring.
  auto short_row = same_box(96, 128, 32, 64, 1);
  REQUIRE(short_row.outcome == Outcome::kFinished);
  CHECK(short_row.stats.hbm_bytes == 128 * 64);
  // 256 with a box 256 bytes wide: it reads both blocks of the segment itself; nothing more comes, all of it misses
  // once.
  auto wide = same_box(256, 256, 128, 0, 2);
  REQUIRE(wide.outcome == Outcome::kFinished);
  CHECK(wide.stats.l2_miss_bytes == 32768);
  CHECK(wide.stats.l2_hit_bytes == 32768);
  CHECK(wide.stats.hbm_bytes == 32768);
}

TEST_CASE("memory: parts a box's promotion brings are coming until the box is done: a read of them waits", "[memory]") {
  // 256-byte promotion: the first box (columns 0-63) brings columns 64-127 too. A second box of those columns issued
  // right behind it, before the first landed, hits but waits for the data still coming from HBM: it lands no sooner
  // than the first.
  auto r = run_edited(R"(
kernel k grid=(1,1,1) warps=1 {
  mbarrier a count=1
  mbarrier b count=1
  smem s[2] bytes=16384
  tensor T dtype=bf16 shape=(4096, 128) l2_promotion=256
  warp 0 w {
    elect {
      arrive.expect_tx a tx=16384
      tma.load T box=(128, 64) at=(0, 0) dst=s[0] bar=a
      arrive.expect_tx b tx=16384
      tma.load T box=(128, 64) at=(0, 64) dst=s[1] bar=b
      wait b parity=0
      compute cycles=5000
      wait a parity=0
    }
  }
}
)",
                      {});
  INFO(problem(r));
  REQUIRE(r.outcome == Outcome::kFinished);
  CHECK(r.stats.l2_hit_bytes == 16384);
  CHECK(r.stats.hbm_bytes == 32768);
  // The second box ends no sooner than HBM's latency after the first box's transfer (a hit that did not wait would
  // end ~one latency sooner), then the warp works 5000 cycles.
  const models::Machine m = models::load_machine("h100-sxm");
  CHECK(r.cycles >= 5000 + m.hbm_latency_cycles + static_cast<std::int64_t>(16384 / m.tma_bytes_per_cycle));
}

// `ctas` CTAs of one warp each walk the first `region_bytes` of a tensor of 128-byte rows twice, in 32 KB boxes (256 rows).
static std::string walk_twice(std::int64_t region_bytes, int ctas) {
  const std::int64_t rows = region_bytes / 128;
  return fmt::format(R"(
kernel k grid=({},1,1) warps=1 {{
  mbarrier full count=1
  smem s bytes=32768
  tensor T dtype=bf16 shape=({}, 64)
  warp 0 w {{
    elect {{
      let g = 0
      for p in 0..2 {{
        for b in 0..{} {{
          arrive.expect_tx full tx=32768
          tma.load T box=(256, 64) at=(b * 256, 0) dst=s bar=full
          wait full parity=g & 1
          let g = g + 1
        }}
      }}
    }}
  }}
}}
)",
                     ctas, rows, rows / 256);
}

TEST_CASE("memory: a footprint beyond the L2 capacity misses again, a small one hits", "[memory]") {
  models::Machine m = models::load_machine("h100-sxm");
  // Rows of 128 bytes: a box of 256 rows is 32 KB. Walk a region twice: within the capacity the second
  // pass hits; a region of twice the capacity misses on the second pass too (LRU).
  auto pass = [&](std::int64_t region_bytes) {
    return run_cold(walk_twice(region_bytes, 1));
  };
  auto small = pass(m.l2_capacity_bytes / 2);
  auto big = pass(m.l2_capacity_bytes * 2);
  INFO(problem(small) << problem(big));
  REQUIRE(small.outcome == Outcome::kFinished);
  REQUIRE(big.outcome == Outcome::kFinished);
  CHECK(small.stats.l2_miss_bytes == m.l2_capacity_bytes / 2);
  CHECK(small.stats.l2_hit_bytes == m.l2_capacity_bytes / 2);
  CHECK(big.stats.l2_miss_bytes == 2 * 2 * m.l2_capacity_bytes);
  CHECK(big.stats.l2_hit_bytes == 0);
}

TEST_CASE("memory: stores allocate dirty blocks without reading HBM, evicting them writes them back", "[memory]") {
  models::Machine m = models::load_machine("h100-sxm");
  std::int64_t rows = 2 * m.l2_capacity_bytes / 128;  // twice the L2
  std::string text = fmt::format(R"(
kernel k grid=(1,1,1) warps=1 {{
  smem s bytes=32768
  tensor D dtype=bf16 shape=({}, 64)
  warp 0 w {{
    elect {{
      for b in 0..{} {{
        tma.store D box=(256, 64) at=(b * 256, 0) src=s
        tma.commit
        tma.wait 4 read
      }}
      tma.wait 0
    }}
  }}
}}
)",
                                 rows, rows / 256);
  auto r = run_cold(text);
  INFO(problem(r));
  REQUIRE(r.outcome == Outcome::kFinished);
  CHECK(r.stats.l2_miss_bytes == 0);
  CHECK(r.stats.l2_hit_bytes == 0);
  // The first half was evicted by the second: written back, in 4 KB blocks; HBM read nothing.
  CHECK(r.stats.hbm_bytes == m.l2_capacity_bytes);
  CHECK(r.stats.hbm_read_bytes == 0);
}

TEST_CASE("memory: SMs share the L2 round robin: a transfer takes longer while more SMs move data", "[memory]") {
  // Every CTA loads its own 32 KB box (all misses, the same HBM traffic per CTA); with more CTAs loading at
  // once each gets a smaller share of the L2 and HBM, so the run takes longer.
  auto run = [&](int ctas) {
    return boxes(R"(
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(cta * 128, 0) dst=s bar=full
      wait full parity=0)",
                 "tensor T dtype=bf16 shape=(65536, 64)", ctas);
  };
  auto one = run(1), many = run(132);
  REQUIRE(one.outcome == Outcome::kFinished);
  REQUIRE(many.outcome == Outcome::kFinished);
  models::Machine m = models::load_machine("h100-sxm");
  // 132 x 16 KB through the shared L2: at least the bytes over the GPU-wide bandwidth longer than alone.
  CHECK(many.cycles >= one.cycles + static_cast<std::int64_t>(131 * 16384 / m.l2_bytes_per_cycle));
}

namespace {
// The H100 without combining between CTAs beyond their TPC (l2_combine_near_share, l2_combine_far_share).
void tpc_only(models::Machine& m) { m.l2_combine_near_share = m.l2_combine_far_share = 0; }

// Each CTA's first TMA load: (issued, done).
class LoadSpans : public models::Observer {
 public:
  bool wants(std::int64_t) const override { return true; }
  void async_work(std::int64_t cta, const std::string&, std::string_view category, std::int64_t start, std::int64_t end) override {
    if (category == "tma") spans.try_emplace(cta, start, end);
  }
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> spans;
};

// The bytes of a 16 KB box (four 4 KB blocks) with which CTA `later`'s read joins CTA `first`'s at `share`: per
// block, that share of the first read's requests still outstanding when the later one reaches the L2. The first
// read's requests leave evenly from its start at the L2 (tma_issue_cycles after the load's issue) until its data is
// there (tma_load_latency_cycles before the load is done).
std::int64_t joined(const models::Machine& m, const LoadSpans& t, std::int64_t first, std::int64_t later, double share = 1) {
  const auto [issued, done] = t.spans.at(first);
  const std::int64_t span = done - issued - m.tma_issue_cycles - m.tma_load_latency_cycles;
  const std::int64_t lag = t.spans.at(later).first - issued;
  REQUIRE(span > 0);
  REQUIRE(lag >= 0);
  const double left = std::clamp(static_cast<double>(span - lag) / static_cast<double>(span), 0.0, 1.0);
  return 4 * static_cast<std::int64_t>(std::llround(4096 * (share * left)));
}

// Checks that CTA `second`'s read of the box CTA `first` read joined it at the near or the far share (joined).
void check_pair_share(const models::Machine& m, const models::RunResult& r, const LoadSpans& t, int first, int second,
                      bool near) {
  INFO(problem(r));
  REQUIRE(r.outcome == Outcome::kFinished);
  const double share = near ? m.l2_combine_near_share : m.l2_combine_far_share;
  const std::int64_t merged = joined(m, t, first, second, share);
  CHECK(r.stats.l2_merged_bytes == merged);
  CHECK(merged > 4 * static_cast<std::int64_t>(4096 * share * 0.9));
  CHECK(merged <= 4 * std::llround(4096 * share));
}

// `ctas` CTAs read the same 16 KB box, CTA c `delay` x c cycles after CTA 0, on a machine without combining between
// CTAs beyond their TPC, changed by `edit`, watched by `spans` when given. A plain launch on the H100 fills SMs
// 124-131 first (the GPCs of one TPC: Simulator::plain_launch_order), so CTAs 2j and 2j + 1 (j < 4) share a TPC.
models::RunResult same_box(int ctas, int delay, const std::function<void(models::Machine&)>& edit = {},
                           LoadSpans* spans = nullptr) {
  return boxes(fmt::format(R"(
      compute cycles=1 + cta * {}
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(0, 0) dst=s bar=full
      wait full parity=0)",
                           delay),
               "tensor T dtype=bf16 shape=(4096, 64)", ctas,
               [&](models::Machine& m) {
                 tpc_only(m);
                 if (edit) edit(m);
               },
               spans);
}

// CTAs `first` and `second` read the same 16 KB box (four 4 KB blocks), `second` `delay` cycles after `first`; the
// other CTAs read boxes of their own. On the H100 as measured, changed by `edit`, watched by `spans`.
models::RunResult pair_of(int first, int second, int delay, const std::function<void(models::Machine&)>& edit = {},
                          LoadSpans* spans = nullptr) {
  return boxes(fmt::format(R"(
      compute cycles=1 + (cta == {0}) * {1}
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=((cta != {2} && cta != {0}) * (cta + 1) * 128, 0) dst=s bar=full
      wait full parity=0)",
                           second, delay, first),
               "tensor T dtype=bf16 shape=(8192, 64)", second + 1, edit, spans);
}
// CTAs 0 and `distance`.
models::RunResult pair_box(int distance, int delay, const std::function<void(models::Machine&)>& edit = {},
                           LoadSpans* spans = nullptr) {
  return pair_of(0, distance, delay, edit, spans);
}
}  // namespace

namespace {
// An L2 of 64 bytes per cycle, far below what the TMA engines move (16 KB in ~150 cycles), so that its share alone sets
// a load's time; HBM without cost (a miss is the L2's work of a hit), no combining but within a TPC when `tpc` is set;
// l2_processor_sharing as given.
std::function<void(models::Machine&)> slow_l2(bool sharing, bool tpc = false) {
  return [=](models::Machine& m) {
    m.l2_bytes_per_cycle = 64;
    m.hbm_bytes_per_cycle = 1e6;
    m.hbm_latency_cycles = 0;
    m.l2_miss_lookups = 1;
    m.l2_combine_sms = tpc ? 2 : 1;
    m.l2_combine_near_share = m.l2_combine_far_share = 0;
    m.l2_processor_sharing = sharing ? 1 : 0;
  };
}

// `ctas` CTAs each load a 16 KB box, CTA c `delay` x c cycles after CTA 0; CTAs in `same` (a bit per CTA) read
// the box at row 0, the others a box of their own. Each CTA's load: (issued, done).
std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> shared_loads(int ctas, int delay, bool sharing, unsigned same = 0,
                                                                           bool tpc = false) {
  LoadSpans spans;
  auto r = boxes(fmt::format(R"(
      compute cycles=1 + cta * {}
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(((({} >> cta) & 1) == 0) * (cta + 1) * 128, 0) dst=s bar=full
      wait full parity=0)",
                             delay, same),
                 "tensor T dtype=bf16 shape=(8192, 64)", ctas, slow_l2(sharing, tpc), &spans);
  REQUIRE(r.outcome == Outcome::kFinished);
  REQUIRE(static_cast<int>(spans.spans.size()) == ctas);
  return spans.spans;
}
}  // namespace

TEST_CASE("memory: with l2_processor_sharing the SMs with reads in flight share the L2 equally at every moment: reads "
          "that start together end together, one that starts later slows one in flight",
          "[memory]") {
  models::Machine m = models::load_machine("h100-sxm");
  const std::int64_t before = m.tma_issue_cycles, after = m.tma_load_latency_cycles;  // around the L2's part
  SECTION("four reads of 16 KB that start together end together, after 4 x 16 KB of the L2's time") {
    auto ps = shared_loads(4, 0, true);
    for (const auto& [cta, span] : ps) {
      CHECK(span.first == ps.at(0).first);
      CHECK(span.second - span.first == before + 4 * 16384 / 64 + after);
    }
    // A read's share fixed when it starts (0): the first gets the whole L2 (256 cycles), the last a quarter of it.
    auto fixed = shared_loads(4, 0, false);
    for (std::int64_t c = 0; c < 4; ++c) CHECK(fixed.at(c).second - fixed.at(c).first == before + (c + 1) * 16384 / 64 + after);
  }
  SECTION("a read that starts 128 cycles into another shares the L2 from then on: both take 384 cycles") {
    // Alone for 128 cycles the first moves 8 KB; the two then get 32 bytes per cycle each until the first is through
    // (256 cycles more: 384 in all); the second, with 8 KB left, then has the L2 alone (128 cycles: 384 in all).
    auto ps = shared_loads(2, 128, true);
    CHECK(ps.at(1).first - ps.at(0).first == 128);
    CHECK(ps.at(0).second - ps.at(0).first == before + 384 + after);
    CHECK(ps.at(1).second - ps.at(1).first == before + 384 + after);
    // Fixed when it starts: the first alone (256), the second at half the L2 (512).
    auto fixed = shared_loads(2, 128, false);
    CHECK(fixed.at(0).second - fixed.at(0).first == before + 256 + after);
    CHECK(fixed.at(1).second - fixed.at(1).first == before + 512 + after);
  }
  SECTION("a read that joins another's requests ends when that read does, as the sharing makes it") {
    // CTAs 0 and 1 (one TPC) read the same box at once, CTA 1's requests all with CTA 0's; CTA 2 reads a box of its
    // own: CTA 0's read and CTA 2's share the L2 (512 cycles each) and CTA 1 gets its data with CTA 0's, though
    // when it joined, CTA 0's read had the L2 to itself.
    auto ps = shared_loads(3, 0, true, 0b011, true);
    CHECK(ps.at(0).second - ps.at(0).first == before + 512 + after);
    CHECK(ps.at(1).second == ps.at(0).second);
    CHECK(ps.at(2).second - ps.at(2).first == before + 512 + after);
  }
}

TEST_CASE("memory: a read of a block another SM of its TPC has in flight reaches the L2 with what of it is still "
          "outstanding, other readers look it up themselves and wait for the data in flight, without a second HBM read, "
          "after the fill they hit", "[memory]") {
  models::Machine m = models::load_machine("h100-sxm");
  REQUIRE(m.l2_combine_sms == 2);
  auto alone = same_box(1, 10);
  // Eight CTAs 10 cycles apart, all while CTA 0's fetch is in flight (it takes at least the HBM latency):
  // CTAs 1, 3, 5, 7 combine with the read of their TPC's other SM for the share of it still outstanding; CTAs 2, 4,
  // 6 are L2 lookups of their own that wait for CTA 0's data.
  LoadSpans t8;
  auto together = same_box(8, 10, {}, &t8);
  INFO(problem(together));
  REQUIRE(together.outcome == Outcome::kFinished);
  CHECK(together.stats.l2_miss_bytes == 16384);
  const std::int64_t tpc_joins = joined(m, t8, 0, 1) + joined(m, t8, 2, 3) + joined(m, t8, 4, 5) + joined(m, t8, 6, 7);
  CHECK(together.stats.l2_merged_bytes == tpc_joins);
  CHECK(tpc_joins > 4 * 16384 * 9 / 10);  // 10 cycles of a read that takes over the HBM latency
  CHECK(tpc_joins < 4 * 16384);
  CHECK(together.stats.l2_hit_bytes == 7 * 16384);  // combined reads count as hits, and so does the rest of them
  CHECK(together.stats.hbm_bytes == 16384);
  // All of them finish when the first read's data arrives (plus their own start offsets and three lookups).
  CHECK(together.cycles <= alone.cycles + 7 * 10 + 3 * 16384 / static_cast<std::int64_t>(m.l2_bytes_per_cycle) + 5);
  // One SM per group: nothing combines; eight: every reader combines with the first.
  auto none = same_box(8, 10, [](models::Machine& x) { x.l2_combine_sms = 1; });
  LoadSpans t_all;
  // (Without GPCs a plain launch fills SMs 0-7, one group of 8; with the H100's, it starts with SMs 124-131.)
  auto all = same_box(8, 10, [](models::Machine& x) { x.l2_combine_sms = 8, x.gpc_sms.clear(); }, &t_all);
  CHECK(none.stats.l2_merged_bytes == 0);
  CHECK(none.stats.hbm_bytes == 16384);
  std::int64_t all_joins = 0;
  for (int c = 1; c < 8; ++c) all_joins += joined(m, t_all, 0, c);
  CHECK(all.stats.l2_merged_bytes == all_joins);
  CHECK(all.stats.l2_hit_bytes == 7 * 16384);
  // The share joined fades as the second read comes later: all of it in the same cycle, less and less after.
  // The window: the TPC's second SM combines when it starts at most l2_combine_window_cycles after the first,
  // not later, even while the first read's data is still coming from HBM (then it waits for that data).
  REQUIRE(m.l2_combine_window_cycles > 0);
  REQUIRE(m.l2_combine_window_cycles + 1 < m.hbm_latency_cycles);
  const int window = static_cast<int>(m.l2_combine_window_cycles);
  std::int64_t before = 16384 + 1;
  for (int lag : {0, 1, window / 2, window}) {
    CAPTURE(lag);
    LoadSpans t;
    auto r = same_box(2, lag, {}, &t);
    CHECK(r.stats.l2_merged_bytes == joined(m, t, 0, 1));
    CHECK(r.stats.l2_merged_bytes < before);
    CHECK(r.stats.l2_merged_bytes > 16384 / 2);  // the window ends well before the first read's data comes
    CHECK(r.stats.l2_hit_bytes == 16384);
    CHECK(r.stats.hbm_bytes == 16384);
    if (lag == 0) CHECK(r.stats.l2_merged_bytes == 16384);
    before = r.stats.l2_merged_bytes;
  }
  auto outside = same_box(2, window + 1);
  CHECK(outside.stats.l2_merged_bytes == 0);
  CHECK(outside.stats.l2_hit_bytes == 16384);
  CHECK(outside.stats.hbm_bytes == 16384);
  // A window of 0: reads of the same cycle still combine.
  auto same_cycle = same_box(2, 0, [](models::Machine& x) { x.l2_combine_window_cycles = 0; });
  CHECK(same_cycle.stats.l2_merged_bytes == 16384);
  // Readers that come after the fill completed hit: they take L2 bandwidth and do not combine.
  auto later = same_box(8, static_cast<int>(2 * alone.cycles));
  REQUIRE(later.outcome == Outcome::kFinished);
  CHECK(later.stats.l2_miss_bytes == 16384);
  CHECK(later.stats.l2_merged_bytes == 0);
  CHECK(later.stats.l2_hit_bytes == 7 * 16384);
  CHECK(later.stats.hbm_bytes == 16384);
}

TEST_CASE("memory: an SM does not combine with its own read, a lookup of a block still coming from HBM waits for it", "[memory]") {
  // One CTA reads the same box twice at once (two stages): the second read is no combined read of the first
  // (the same SM), but a lookup that waits for the data the first one is fetching.
  auto twice = boxes(R"(
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(0, 0) dst=s bar=full
      tma.load T box=(128, 64) at=(0, 0) dst=s bar=full
      wait full parity=0)");
  INFO(problem(twice));
  REQUIRE(twice.outcome == Outcome::kFinished);
  CHECK(twice.stats.l2_merged_bytes == 0);
  CHECK(twice.stats.l2_miss_bytes == 16384);
  CHECK(twice.stats.l2_hit_bytes == 16384);
  CHECK(twice.stats.hbm_bytes == 16384);
  // CTA 2 (another TPC than CTA 0) reads CTA 0's box 20 cycles later, then computes a long time; CTA 1 reads a
  // box of its own. CTA 2's lookup waits for the HBM data CTA 0's read is fetching: a longer HBM latency
  // delays the end of the run by as much.
  std::string text = R"(
kernel k grid=(3,1,1) warps=1 {
  mbarrier full count=1
  smem s bytes=16384
  tensor T dtype=bf16 shape=(4096, 64)
  warp 0 w {
    elect {
      compute cycles=1 + (cta == 2) * 20
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=((cta == 1) * 1024, 0) dst=s bar=full
      wait full parity=0
      if cta == 2 { compute cycles=20000 }
    }
  }
}
)";
  auto run = [&](std::int64_t extra) {
    return run_edited(text, [&](models::Machine& m) {
      tpc_only(m);
      m.hbm_latency_cycles += extra;
    });
  };
  auto base = run(0), slow = run(3000);
  REQUIRE(base.outcome == Outcome::kFinished);
  CHECK(base.stats.l2_merged_bytes == 0);
  CHECK(base.stats.hbm_bytes == 2 * 16384);  // CTA 0's box once, CTA 1's box
  CHECK(slow.cycles - base.cycles >= 3000);
}

TEST_CASE("memory: in a launch of clusters the CTAs on SMs of one GPC combine at the near share, others at the far "
          "share whatever their place in launch order",
          "[memory]") {
  // validation/results/h200/clusteredge: clusters of 2 and 4 launched one after another, pairs of CTAs reading the same
  // boxes: other clusters 0.15-0.26 of the second reader's requests at 2-16 CTAs apart (in one aligned block of 16 or
  // not), the other TPC of a cluster of 4 0.61, clusters 8 apart (one GPC) 0.43.
  const models::Machine m = models::load_machine("h100-sxm");
  REQUIRE(m.l2_combine_near_share > m.l2_combine_far_share);
  REQUIRE(m.l2_combine_block_ctas > 4);
  // CTAs `first` and `second` of a grid of clusters of `c` read the same 16 KB box, `second` 10 cycles later; the
  // others read boxes of their own.
  auto pair = [](int c, int first, int second, LoadSpans* spans) {
    const int grid = (second / c + 1) * c;
    const std::string text = fmt::format(R"(
kernel k grid=({0},1,1) cluster=({1},1,1) warps=1 {{
  mbarrier full count=1
  smem s bytes=16384
  tensor T dtype=bf16 shape=(8192, 64)
  warp 0 w {{
    elect {{
      compute cycles=1 + (cta == {3}) * 10
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=((cta != {2} && cta != {3}) * (cta + 1) * 128, 0) dst=s bar=full
      wait full parity=0
    }}
  }}
}}
)",
                                         grid, c, first, second);
    return run_edited(text, {}, spans);
  };
  struct Case {
    int cluster, first, second;
    bool near;
  };
  // Clusters of 2: CTAs 0 and 2 (clusters 0 and 1: two GPCs, one block of 16 CTAs) far. Clusters of 4: CTAs 0 and 2
  // (one cluster, its two TPCs) near; 0 and 4 (clusters 0 and 1) far; 0 and 32 (clusters 0 and 8: the H100's eight
  // GPCs that hold four take clusters in turn, so cluster 8 is on GPC 0 again) near, beyond any block of 16.
  for (const Case& k : {Case{2, 0, 2, false}, Case{4, 0, 2, true}, Case{4, 0, 4, false}, Case{4, 0, 32, true}}) {
    CAPTURE(k.cluster, k.first, k.second);
    LoadSpans t;
    check_pair_share(m, pair(k.cluster, k.first, k.second, &t), t, k.first, k.second, k.near);
  }
}

TEST_CASE("memory: a read of a block another CTA has in flight reaches the L2 with what of it is still outstanding for "
          "a share of its bytes, near when the two CTAs lie in one aligned block of consecutive CTAs", "[memory]") {
  models::Machine m = models::load_machine("h100-sxm");
  REQUIRE(m.l2_combine_block_ctas >= 4);
  REQUIRE(m.l2_combine_near_share > m.l2_combine_far_share);
  REQUIRE(m.l2_combine_far_share > 0);
  const int block = static_cast<int>(m.l2_combine_block_ctas);
  // Pairs (first, second): in one block near, across a block's edge far, whatever their distance: (B - 1, B + 1) is
  // far and (B, B + 2) near, both 2 apart.
  struct Pair {
    int first, second;
    bool near;
  };
  for (const Pair& p : {Pair{0, 2, true}, Pair{0, block - 1, true}, Pair{0, block, false}, Pair{0, block + 8, false},
                        Pair{block - 1, block + 1, false}, Pair{block, block + 2, true}}) {
    CAPTURE(p.first, p.second);
    LoadSpans t;
    auto r = pair_of(p.first, p.second, 10, {}, &t);
    check_pair_share(m, r, t, p.first, p.second, p.near);
    // The rest of the second read is a lookup of its own, waiting for the first's data: no second HBM read.
    CHECK(r.stats.l2_hit_bytes == 16384);
    CHECK(r.stats.hbm_bytes == static_cast<std::int64_t>(p.second) * 16384);  // the shared box once, the others' own
  }
  // A TPC's second SM (CTA 1) joins what is outstanding of its whole read; shares 0: nothing combines; a far share
  // of 0 leaves the near one.
  LoadSpans t1, t2;
  auto tpc = pair_box(1, 10, {}, &t1);
  CHECK(tpc.stats.l2_merged_bytes == joined(m, t1, 0, 1));
  CHECK(pair_box(2, 10, tpc_only).stats.l2_merged_bytes == 0);
  auto no_far = [](models::Machine& x) { x.l2_combine_far_share = 0; };
  auto near_only = pair_box(2, 10, no_far, &t2);
  CHECK(near_only.stats.l2_merged_bytes == joined(m, t2, 0, 2, m.l2_combine_near_share));
  CHECK(pair_box(block, 10, no_far).stats.l2_merged_bytes == 0);
  // The joined share is done when the first read is: CTA 2 joins all of CTA 0's read (share 1), then computes long
  // enough to end the run last; with HBM 3000 cycles slower its data, and the run, come that much later.
  LoadSpans t_fast;
  auto joiner = [&](std::int64_t extra, LoadSpans* spans = nullptr) {
    return boxes(R"(
      compute cycles=1 + (cta == 2) * 10
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=((cta == 1) * 1024, 0) dst=s bar=full
      wait full parity=0
      if cta == 2 { compute cycles=20000 })",
                 "tensor T dtype=bf16 shape=(8192, 64)", 3, [extra](models::Machine& x) {
                   x.l2_combine_near_share = 1;
                   x.hbm_latency_cycles += extra;
                 },
                 spans);
  };
  auto fast = joiner(0, &t_fast), slow = joiner(3000);
  INFO(problem(fast));
  REQUIRE(fast.outcome == Outcome::kFinished);
  CHECK(fast.stats.l2_merged_bytes == joined(m, t_fast, 0, 2));
  CHECK(slow.cycles - fast.cycles >= 3000);
  // The window: at most l2_combine_window_cycles after the first read, not later, while its data is still coming.
  REQUIRE(m.l2_combine_window_cycles + 1 < m.hbm_latency_cycles);
  LoadSpans t_window;
  auto at_window = pair_box(2, static_cast<int>(m.l2_combine_window_cycles), {}, &t_window);
  CHECK(at_window.stats.l2_merged_bytes == joined(m, t_window, 0, 2, m.l2_combine_near_share));
  CHECK(at_window.stats.l2_merged_bytes > 0);
  auto late = pair_box(2, static_cast<int>(m.l2_combine_window_cycles) + 1);
  CHECK(late.stats.l2_merged_bytes == 0);
  CHECK(late.stats.l2_hit_bytes == 16384);
  // A CTA never joins its own read (the same box twice at once: see above). A read that joined another CTA's for a
  // share is not one others join, but a later reader's share is near when any CTA on the read is in its block: CTAs 0,
  // B + 4 and B + 8 read the box 5 cycles apart (the others their own boxes); the last joins the first's read at the
  // near share (CTA B + 4 is on it), and at the far share when CTA B + 4 reads a box of its own instead.
  REQUIRE((block + 8) * 5 < m.l2_combine_window_cycles);
  for (bool middle : {true, false}) {
    CAPTURE(middle);
    LoadSpans t3;
    auto three = boxes(fmt::format(R"(
      compute cycles=1 + cta * 5
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=((cta != 0 && cta != {0} && (cta != {1} || {2} == 0)) * cta * 128, 0) dst=s bar=full
      wait full parity=0)",
                                   block + 8, block + 4, middle ? 1 : 0),
                       "tensor T dtype=bf16 shape=(8192, 64)", block + 9, {}, &t3);
    INFO(problem(three));
    REQUIRE(three.outcome == Outcome::kFinished);
    CHECK(three.stats.l2_merged_bytes ==
          (middle ? joined(m, t3, 0, block + 4, m.l2_combine_far_share) + joined(m, t3, 0, block + 8, m.l2_combine_near_share)
                  : joined(m, t3, 0, block + 8, m.l2_combine_far_share)));
  }
  // The joiner ring: CTA 0 reads the box, then the CTAs of `on` one after the other (10 cycles apart), then `last` (no
  // TPC combining; the other CTAs read boxes of their own).
  auto chain = [&](const std::vector<int>& on, int last, int ctas, LoadSpans* spans) {
    std::string readers = "cta == 0 || cta == " + std::to_string(last), order = "0";
    for (std::size_t j = 0; j < on.size(); ++j) {
      readers += " || cta == " + std::to_string(on[j]);
      order += fmt::format(" + (cta == {}) * {}", on[j], 10 * (j + 1));
    }
    return boxes(fmt::format(R"(
      compute cycles=1 + {1} + (cta == {2}) * 100
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=((({0}) == 0) * cta * 128, 0) dst=s bar=full
      wait full parity=0)",
                             readers, order, last),
                 "tensor T dtype=bf16 shape=(16384, 64)", ctas, [](models::Machine& x) { x.l2_combine_sms = 1; }, spans);
  };
  REQUIRE(block == 16);  // the blocks: CTAs 16-31, 48-63, 64-79, ...
  REQUIRE(100 < m.l2_combine_window_cycles);
  // The read keeps its last kJoiners (8) joiners: after CTA 30 (block 1, far from CTA 0) come CTAs 64, 66, ..., 78
  // (block 4; 9 joiners); then CTA 79 joins at the near share, while CTA 20, in a block only with CTA 30 (dropped for the
  // ninth), at the far share.
  const std::vector<int> nine{30, 64, 66, 68, 70, 72, 74, 76, 78};
  for (int last : {79, 20}) {
    CAPTURE(last);
    LoadSpans t4;
    auto many = chain(nine, last, 80, &t4);
    INFO(problem(many));
    REQUIRE(many.outcome == Outcome::kFinished);
    std::int64_t expect = joined(m, t4, 0, last, last == 20 ? m.l2_combine_far_share : m.l2_combine_near_share);
    for (int c : nine) expect += joined(m, t4, 0, c, c <= 64 ? m.l2_combine_far_share : m.l2_combine_near_share);
    CHECK(many.stats.l2_merged_bytes == expect);
  }
  // ... and keeps the 8th-last: CTAs 30, 50, 70, 90, 110, 120, 130 and 131 (8 joiners, each in a block of its own
  // but the last two); CTA 20, in a block only with CTA 30 (the oldest of the 8), joins at the near share.
  const std::vector<int> eight{30, 50, 70, 90, 110, 120, 130, 131};
  LoadSpans t5;
  auto kept = chain(eight, 20, 132, &t5);
  INFO(problem(kept));
  REQUIRE(kept.outcome == Outcome::kFinished);
  std::int64_t expect = joined(m, t5, 0, 20, m.l2_combine_near_share);
  for (int c : eight) expect += joined(m, t5, 0, c, c == 131 ? m.l2_combine_near_share : m.l2_combine_far_share);
  CHECK(kept.stats.l2_merged_bytes == expect);
  // A read joins only a read that brings every part it needs: CTAs 0 and 2 (and, for the TPC, 0 and 1) read the
  // two 64-byte halves of the same rows: nothing combines and both halves come from HBM.
  for (int second : {1, 2}) {
    CAPTURE(second);
    auto halves = boxes(fmt::format(R"(
      compute cycles=1 + (cta == {0}) * 10
      arrive.expect_tx full tx=8192
      tma.load T box=(128, 32) at=((cta != 0 && cta != {0}) * cta * 128, (cta == {0}) * 32) dst=s bar=full
      wait full parity=0)",
                                    second),
                        "tensor T dtype=bf16 shape=(8192, 64)", 3);
    INFO(problem(halves));
    REQUIRE(halves.outcome == Outcome::kFinished);
    CHECK(halves.stats.l2_merged_bytes == 0);
    CHECK(halves.stats.hbm_bytes == 3 * 8192);
  }
}

namespace {
// Every TMA load's time from issue to done (the async work the TMA unit reports), in issue order.
class LoadTimes : public models::Observer {
 public:
  bool wants(std::int64_t) const override { return true; }
  void async_work(std::int64_t, const std::string&, std::string_view category, std::int64_t start, std::int64_t end) override {
    if (category == "tma") times.push_back(end - start);
  }
  std::vector<std::int64_t> times;
};

// The loaded-latency microbenchmark (validation/microbench/src/bench_hierarchy.cu, hier_loaded_latency_*): one CTA
// per SM keeps 4 loads of 32 KB boxes in flight, 64 in all, from HBM (its own part of a 2 GiB tensor, every load a
// miss) or from the L2 (an 8 MiB tensor that all of them read, from their own places: hits but for the first reads);
// the times of all their loads, sorted.
std::vector<double> loaded_latency(bool hbm, const models::Machine& m, std::uint64_t seed) {
  std::string text = fmt::format(R"(
const TROWS = {0} * (2048M / 128) + (1 - {0}) * (8M / 128)
kernel ring grid=(132,1,1) warps=1 {{
  mbarrier full[4] count=1
  smem buf[4] bytes=32768
  tensor T dtype=bf16 shape=(TROWS, 64)
  warp 0 w {{
    elect {{
      let row = {0} * cta * (TROWS / 132) + (1 - {0}) * ((cta * 37 * 256) % TROWS)
      for i in 0..64 + (1 - {0}) * 256 {{
        let s = i % 4
        if i >= 4 {{ wait full[s] parity=((i / 4) & 1) ^ 1 }}
        arrive.expect_tx full[s] tx=32768
        tma.load T box=(256, 64) at=((row + i * 256) % TROWS, 0) dst=buf[s] bar=full[s] swizzle=128
      }}
      for i in 0..4 {{ wait full[i] parity=(((60 + (1 - {0}) * 256 + i) / 4) & 1) }}
    }}
  }}
}}
)",
                                 hbm ? 1 : 0);
  LoadTimes t;
  models::RunOptions o;
  o.seed = seed;
  o.observers.push_back(&t);
  models::RunResult r = models::simulate(test::compile_text(text, {}, "ring.pipe", "h100-sxm"), m, o);
  REQUIRE(r.outcome == Outcome::kFinished);
  REQUIRE(t.times.size() == 132 * static_cast<std::size_t>(hbm ? 64 : 320));
  std::vector<double> out(t.times.begin(), t.times.end());
  std::sort(out.begin(), out.end());
  return out;
}

double quantile(const std::vector<double>& sorted, double q) { return sorted[static_cast<std::size_t>(q * (sorted.size() - 1) + 0.5)]; }
}  // namespace

TEST_CASE("memory: with l2_latency_spread / hbm_latency_spread a transfer's time under load varies within +-that share of "
          "its queues' time, as the GPU's loaded latency does (HBM's on by default, the L2's off)", "[memory]") {
  // The GPU's loaded latency of 32 KB boxes, 4 in flight on every SM (validation/results/h100/hierarchy.json), and the
  // spread of a uniform draw with the same p10-p90 width (make_machines.py's derivation).
  std::ifstream f(std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h100/hierarchy.json");
  nlohmann::json run = nlohmann::json::parse(f);
  auto gpu = [&](const std::string& name) {
    for (const auto& r : run["measurements"])
      if (r["name"] == name) return std::array<double, 3>{r["p10"].get<double>(), r["median"].get<double>(), r["p90"].get<double>()};
    FAIL("no " << name);
    return std::array<double, 3>{};
  };
  const auto l2 = gpu("hier_loaded_latency_l2_box32KB_d4"), hbm_gpu = gpu("hier_loaded_latency_hbm_box32KB_d4");
  models::Machine flat = models::load_machine("h100-sxm");
  CHECK(flat.l2_latency_spread == 0);  // not applied by default (docs/simulator.md)
  // HBM's is, as measured (make_machines.py's derivation, rounded to the machine file's two digits).
  CHECK(flat.hbm_latency_spread == Approx(std::round((hbm_gpu[2] - hbm_gpu[0]) / hbm_gpu[1] / 1.6 * 100) / 100));
  flat.hbm_latency_spread = 0;
  // The spread was derived with a read's share of the L2 fixed when it starts (l2_processor_sharing 0), where the
  // queues give every box of this ring the same time; with processor sharing it is not derived (docs/simulator.md).
  flat.l2_processor_sharing = 0;
  models::Machine m = flat;
  m.l2_latency_spread = (l2[2] - l2[0]) / l2[1] / 1.6;
  m.hbm_latency_spread = (hbm_gpu[2] - hbm_gpu[0]) / hbm_gpu[1] / 1.6;
  for (bool hbm : {true, false}) {
    INFO((hbm ? "HBM" : "L2"));
    // Without the spread the queues give every load of the steady state about the same time.
    auto t0 = loaded_latency(hbm, flat, 1);
    CHECK(quantile(t0, 0.9) - quantile(t0, 0.1) <= 0.02 * quantile(t0, 0.5));
    // With it, p10, median and p90 within 10 % of the GPU's.
    auto t = loaded_latency(hbm, m, 1);
    auto g = hbm ? hbm_gpu : l2;
    CHECK(quantile(t, 0.1) == Approx(g[0]).epsilon(0.10));
    CHECK(quantile(t, 0.5) == Approx(g[1]).epsilon(0.10));
    CHECK(quantile(t, 0.9) == Approx(g[2]).epsilon(0.10));
    // Drawn from the run's seed: the same seed gives the same times, another seed others.
    CHECK(loaded_latency(hbm, m, 1) == t);
    CHECK(loaded_latency(hbm, m, 2) != t);
  }
}

TEST_CASE("memory: a spread time stays within +-share of its span from issue, reaches both ends, never precedes the issue",
          "[memory]") {
  isa::Program p = test::compile_text("kernel k grid=(1,1,1) warps=1 { warp 0 w { compute cycles=1 } }", {}, "k.pipe", "h100-sxm");
  models::Machine m = models::load_machine("h100-sxm");
  models::Simulator sim(p, m, {});
  using sim::Cycle;
  std::int64_t lo = 1 << 30, hi = 0;
  for (std::uint64_t key = 0; key < 4000; ++key) {
    std::int64_t t = sim.spread(Cycle(100), Cycle(1100), 0.3, key).v;
    lo = std::min(lo, t), hi = std::max(hi, t);
  }
  CHECK(lo == 800);   // 1100 - 0.3 x 1000
  CHECK(hi == 1400);  // 1100 + 0.3 x 1000
  // The draw belongs to the key (and the seed), not to the order of the calls.
  CHECK(sim.spread(Cycle(100), Cycle(1100), 0.3, 7) == sim.spread(Cycle(100), Cycle(1100), 0.3, 7));
  CHECK(sim.spread(Cycle(100), Cycle(1100), 0, 7).v == 1100);
  CHECK(sim.spread(Cycle(100), Cycle(100), 0.5, 7).v == 100);
  // A share above 1 (beyond the machine parameters' range) would reach before the issue: held at it.
  std::int64_t earliest = 1 << 30;
  for (std::uint64_t key = 0; key < 1000; ++key) earliest = std::min(earliest, sim.spread(Cycle(100), Cycle(200), 1.5, key).v);
  CHECK(earliest == 100);
}

TEST_CASE("memory: a byte read from HBM takes l2_miss_lookups bytes of the L2's bandwidth, a byte that hits one", "[memory]") {
  // 132 CTAs read their own boxes from HBM (all misses), then the same boxes again (all hits). With HBM made
  // fast, the L2 sets the time of the misses; its busy time counts each missed byte l2_miss_lookups times.
  // A second run with the misses only: the L2 bounds it, so it takes that much longer.
  std::string text = R"(
kernel k grid=(132,1,1) warps=1 {
  mbarrier full[2] count=1
  smem s bytes=16384
  tensor T dtype=bf16 shape=(65536, 64)
  warp 0 w {
    elect {
      for i in 0..2 {
        arrive.expect_tx full[i] tx=16384
        tma.load T box=(128, 64) at=(cta * 128, 0) dst=s bar=full[i]
        wait full[i] parity=0
      }
    }
  }
}
)";
  struct Out {
    std::int64_t busy, missed, cycles;
  };
  auto busy = [&](double lookups) {
    // (HBM as fast as can be and without latency: the L2's queue sets the pace.)
    auto r = run_edited(text, [&](models::Machine& m) { m.hbm_bytes_per_cycle = 1e6, m.hbm_latency_cycles = 0, m.l2_miss_lookups = lookups; });
    REQUIRE(r.outcome == Outcome::kFinished);
    for (const auto& u : r.stats.units)
      if (u.name == "L2 bandwidth (whole GPU)") return Out{u.busy, r.stats.l2_miss_bytes, r.cycles};
    FAIL("no L2 unit in the stats");
    return Out{0, 0, 0};
  };
  Out one = busy(1.0), more = busy(1.7);
  REQUIRE(one.missed == 132 * 16384);
  REQUIRE(more.missed == one.missed);
  // Hits cost the same in both; the misses 0.7 x their bytes more (within a cycle of rounding), and the run,
  // bound by the L2 while the misses go through it, takes most of that longer.
  models::Machine m = models::load_machine("h100-sxm");
  double extra = 0.7 * static_cast<double>(one.missed) / m.l2_bytes_per_cycle;
  CHECK(std::abs(static_cast<double>(more.busy - one.busy) - extra) <= 2.0);
  auto misses_only = [&](double lookups) {
    std::string once = text;
    once.replace(once.find("for i in 0..2"), 13, "for i in 0..1");
    auto r = run_edited(once, [&](models::Machine& m) { m.hbm_bytes_per_cycle = 1e6, m.hbm_latency_cycles = 0, m.l2_miss_lookups = lookups; });
    REQUIRE(r.outcome == Outcome::kFinished);
    return r.cycles;
  };
  CHECK(static_cast<double>(misses_only(1.7) - misses_only(1.0)) >= 0.8 * extra);
}

namespace {
// The store-ring microbenchmark (validation/microbench/src/bench_hier_store.cu, hier_store_bw_*_box32KB_d2): `ctas`
// CTAs (one per SM) store n boxes of 32 KB each from two smem buffers (tma.wait 1 read before a buffer's reuse), to
// a region of their own of `region` boxes (n: every box new; 4: the same 128 KB rewritten, L2-resident).
std::string store_ring(int ctas, int n, int region) {
  return fmt::format(R"(
kernel ring grid=({0},1,1) warps=1 {{
  smem out[2] bytes=32768
  tensor D dtype=bf16 shape=({0} * {2} * 256, 64)
  warp 0 w {{
    elect {{
      for i in 0..{1} {{
        tma.wait 1 read
        tma.store D box=(256, 64) at=((cta * {2} + i % {2}) * 256, 0) src=out[i % 2] swizzle=128
        tma.commit
      }}
      tma.wait 0
    }}
  }}
}}
)",
                     ctas, n, region);
}

// GB/s of a finished store ring of `ctas` x n boxes at the machine's clock.
double store_gbs(const models::RunResult& r, int ctas, int n, const models::Machine& m) {
  REQUIRE(r.outcome == Outcome::kFinished);
  return static_cast<double>(ctas) * n * 32768 / (static_cast<double>(r.cycles) / m.clock_mhz) / 1000;
}

double measured_gbs(const std::string& file, const std::string& name) {
  std::ifstream f(std::string(SMPIPE_SOURCE_DIR) + "/validation/results/" + file);
  nlohmann::json run = nlohmann::json::parse(f);
  for (const auto& r : run["measurements"])
    if (r["name"] == name) return r["median"].get<double>();
  FAIL("no " << name << " in " << file);
  return 0;
}
}  // namespace

TEST_CASE("memory: the L2 takes all SMs' TMA stores at l2_store_bytes_per_cycle and a stored byte costs l2_store_cost "
          "of its read bandwidth - the store's smem read waits until the L2 takes it - at the rates the GPUs measured", "[memory]") {
  models::Machine m = models::load_machine("h100-sxm");
  REQUIRE(m.l2_store_bytes_per_cycle < m.l2_bytes_per_cycle / m.l2_store_cost);
  const int n = 64;
  auto ring = [&](int ctas, const std::function<void(models::Machine&)>& edit) { return run_edited(store_ring(ctas, n, 4), edit); };
  // All SMs, stores alone: the L2's store rate sets the time (the engines alone would go 2x faster): the H100's rate.
  auto full = ring(132, nullptr);
  double gbs = store_gbs(full, 132, n, m);
  CHECK(gbs == Approx(measured_gbs("h100/store.json", "hier_store_bw_l2_box32KB_d2_read_gbs")).epsilon(0.05));
  CHECK(gbs == Approx(m.l2_store_bytes_per_cycle * m.clock_mhz / 1000).epsilon(0.02));
  // Without that bound the stores' share of the read bandwidth is the next one: l2_bytes_per_cycle / l2_store_cost.
  auto shared = ring(132, [](models::Machine& x) { x.l2_store_bytes_per_cycle = 1e6; });
  CHECK(store_gbs(shared, 132, n, m) == Approx(m.l2_bytes_per_cycle / m.l2_store_cost * m.clock_mhz / 1000).epsilon(0.02));
  // One SM: its engine (tma_store_bytes_per_cycle) is the bound, the L2's store parameters change nothing.
  auto one = ring(1, nullptr);
  CHECK(one.cycles == ring(1, [](models::Machine& x) { x.l2_store_bytes_per_cycle = 1e6, x.l2_store_cost = 0; }).cycles);
  CHECK(store_gbs(one, 1, n, m) == Approx(measured_gbs("h100/store.json", "hier_store_bw_l2_box32KB_d2_1sm_read_gbs")).epsilon(0.05));
  // The rate is a GPU-wide bytes per second: at another SM clock the bytes per cycle follow.
  CHECK(models::at_sm_clock(m, m.clock_mhz / 2).l2_store_bytes_per_cycle == Approx(2 * m.l2_store_bytes_per_cycle));
}

TEST_CASE("memory: the L2 delivers every SM's copy of combined reads at most at l2_delivery_bytes_per_cycle: all SMs "
          "walking the same boxes land at the H100's rate, SMs reading their own boxes are not bound by it", "[memory]") {
  // tma_load_bw_pipe_l2_all_sms_box32KB_shared*: a producer and a consumer warp per CTA, 6 stages of 32 KB, CTA k walking
  // the boxes of a 16 MiB L2-resident tensor from box (k mod G) x (boxes / G).
  auto walk = [](int groups, const std::function<void(models::Machine&)>& edit) {
    std::string text = fmt::format(R"(
kernel k grid=(132,1,1) warps=2 {{
  mbarrier full[6] count=1
  mbarrier empty[6] count=1
  smem buf[6] bytes=32768
  tensor T dtype=bf16 shape=(131072, 64)
  warp 0 p {{
    elect {{
      let first = (cta % {0}) * (512 / {0})
      for i in 0..512 {{
        let s = i % 6
        if i >= 6 {{ wait empty[s] parity=((i / 6) & 1) ^ 1 }}
        arrive.expect_tx full[s] tx=32768
        tma.load T box=(256, 64) at=(((first + i) % 512) * 256, 0) dst=buf[s] bar=full[s] swizzle=128
      }}
    }}
    bar.sync 0
  }}
  warp 1 c {{
    for i in 0..512 {{
      let s = i % 6
      wait full[s] parity=(i / 6) & 1
      elect {{ arrive empty[s] }}
    }}
    bar.sync 0
  }}
}}
)",
                                   groups);
    models::Machine m = models::load_machine("h100-sxm");
    if (edit) edit(m);
    auto r = models::simulate(test::compile_text(text, {}, "test.pipe", "h100-sxm"), m, models::RunOptions{});
    REQUIRE(r.outcome == Outcome::kFinished);
    return r;
  };
  const models::Machine m = models::load_machine("h100-sxm");
  REQUIRE(m.l2_delivery_bytes_per_cycle > 2 * m.l2_bytes_per_cycle);
  auto gbs = [&](const models::RunResult& r) { return 132.0 * 512 * 32768 / (static_cast<double>(r.cycles) / m.clock_mhz) / 1000; };
  auto delivery = [](const models::RunResult& r) -> const models::UnitStats* {
    for (const auto& u : r.stats.units)
      if (u.name == "L2 delivery to the SMs (whole GPU)") return &u;
    return nullptr;
  };
  // Every CTA walks the same boxes: their requests combine, the delivery sets the pace, at the GPU's rate.
  auto same = walk(1, nullptr);
  CHECK(same.stats.l2_merged_bytes > 132LL * 512 * 32768 / 2);
  CHECK(gbs(same) == Approx(m.l2_delivery_bytes_per_cycle * m.clock_mhz / 1000).epsilon(0.02));
  CHECK(gbs(same) == Approx(measured_gbs("h100/l2_sharing.json", "tma_load_bw_pipe_l2_all_sms_box32KB_shared1")).epsilon(0.03));
  REQUIRE(delivery(same) != nullptr);
  CHECK(delivery(same)->utilisation > 0.97);
  CHECK(same.stats.bottleneck.find("L2 delivery") != std::string::npos);
  // Where the requests combine further (every read joining the one in flight in full), the bound holds the walk at
  // the same rate; without it the walk lands far faster.
  auto full_share = [](models::Machine& x) { x.l2_combine_near_share = x.l2_combine_far_share = 1; };
  auto full = walk(1, full_share);
  CHECK(full.stats.l2_merged_bytes > same.stats.l2_merged_bytes);
  CHECK(gbs(full) == Approx(m.l2_delivery_bytes_per_cycle * m.clock_mhz / 1000).epsilon(0.02));
  REQUIRE(delivery(full) != nullptr);
  CHECK(delivery(full)->utilisation > 0.97);
  auto unbound = walk(1, [&](models::Machine& x) {
    full_share(x);
    x.l2_delivery_bytes_per_cycle = 0;
  });
  CHECK(gbs(unbound) > 1.2 * gbs(full));
  CHECK(delivery(unbound) == nullptr);
  // Each CTA its own boxes at a time (132 groups): nothing combines, the L2's own bandwidth binds first, the bound
  // changes nothing and has no line.
  auto own = walk(132, nullptr);
  CHECK(own.stats.l2_merged_bytes == 0);
  CHECK(own.cycles == walk(132, [](models::Machine& x) { x.l2_delivery_bytes_per_cycle = 0; }).cycles);
  CHECK(delivery(own) == nullptr);
  CHECK(gbs(own) < 0.5 * gbs(same));
  // A GPU-wide rate in bytes per second: at another SM clock the bytes per cycle follow.
  CHECK(models::at_sm_clock(m, m.clock_mhz / 2).l2_delivery_bytes_per_cycle == Approx(2 * m.l2_delivery_bytes_per_cycle));
}

TEST_CASE("memory: loads and stores side by side share the L2 (a stored byte takes l2_store_cost bytes of its read "
          "bandwidth): the H200's L2-resident mix", "[memory]") {
  // hier_store_mixed_l2_coupled_box32KB: one thread per CTA keeps 4 loads of 32 KB in flight over the first 4 boxes
  // of its slice and after each load stores 32 KB to 128 KB of its own region (2 smem buffers, tma.wait 1 read).
  const int n = 128;
  std::string text = fmt::format(R"(
kernel mix grid=(132,1,1) warps=1 {{
  mbarrier full[4] count=1
  smem buf[4] bytes=32768
  smem out[2] bytes=32768
  tensor T dtype=bf16 shape=(132 * 1024, 64)
  tensor D dtype=bf16 shape=(132 * 1024, 64)
  warp 0 w {{
    elect {{
      for i in 0..4 {{
        arrive.expect_tx full[i] tx=32768
        tma.load T box=(256, 64) at=((cta * 4 + i) * 256, 0) dst=buf[i] bar=full[i] swizzle=128
      }}
      for i in 0..{0} {{
        let s = i % 4
        wait full[s] parity=(i / 4) & 1
        if i + 4 < {0} {{
          arrive.expect_tx full[s] tx=32768
          tma.load T box=(256, 64) at=((cta * 4 + s) * 256, 0) dst=buf[s] bar=full[s] swizzle=128
        }}
        tma.wait 1 read
        tma.store D box=(256, 64) at=((cta * 4 + i % 4) * 256, 0) src=out[i % 2] swizzle=128
        tma.commit
      }}
      tma.wait 0
    }}
  }}
}}
)",
                                 n);
  auto run = [&](double cost) {
    models::Machine m = models::load_machine("h200");
    m.l2_latency_spread = m.hbm_latency_spread = 0;
    m.l2_store_cost = cost;
    auto r = models::simulate(test::compile_text(text, {}, "mix.pipe", "h200"), m, {});
    REQUIRE(r.outcome == Outcome::kFinished);
    return 2.0 * 132 * n * 32768 / (static_cast<double>(r.cycles) / m.clock_mhz) / 1000;
  };
  models::Machine m = models::load_machine("h200");
  double gpu = measured_gbs("h200/store.json", "hier_store_mixed_l2_coupled_box32KB_total_gbs");
  CHECK(run(m.l2_store_cost) == Approx(gpu).epsilon(0.05));
  // Stores free of the read bandwidth (0) or as costly as alone (read rate / store rate): both miss the mix by far.
  CHECK(run(0) > 1.15 * gpu);
  CHECK(run(m.l2_bytes_per_cycle / m.l2_store_bytes_per_cycle) < 0.87 * gpu);
}

TEST_CASE("memory: a byte HBM moves while part of its recent traffic goes the other way costs 1 + hbm_turnaround x that "
          "share: a stream one way costs nothing more, a 1:1 mix of loads and write-backs moves HBM's rate / (1 + t / 2), "
          "the mixes the GPUs measured", "[memory]") {
  // The cross-check twin of hier_store_mixed[_l2]_coupled_box32KB: every SM keeps 4 loads of 32 KB in flight and stores
  // 32 KB after each; WRAP 1024: every load misses and, beyond the L2's capacity, every store's block evicts a dirty
  // one (reads and write-backs 1:1 through HBM).
  std::ifstream f(std::string(SMPIPE_SOURCE_DIR) + "/validation/calibration/crosscheck/tma_load_store.pipe");
  std::stringstream text;
  text << f.rdbuf();
  const int iters = 512;
  auto mixed = [&](const std::string& gpu, double turnaround) {
    models::Machine m = models::load_machine(gpu);
    m.l2_latency_spread = m.hbm_latency_spread = 0;
    m.hbm_turnaround = turnaround;
    auto r = models::simulate(test::compile_text(text.str(), {{"ITERS", iters}, {"WRAP", 1024}}, "mix.pipe", gpu), m, cold());
    REQUIRE(r.outcome == Outcome::kFinished);
    return r;
  };
  for (const char* gpu : {"h100-sxm", "h200"}) {
    INFO(gpu);
    models::Machine m = models::load_machine(gpu);
    REQUIRE(m.hbm_turnaround > 0);
    auto free_mix = mixed(gpu, 0), mix = mixed(gpu, m.hbm_turnaround), dear = mixed(gpu, 2 * m.hbm_turnaround);
    // (About the same bytes: what a store evicts depends a little on the timing.)
    REQUIRE(static_cast<double>(free_mix.stats.hbm_bytes) == Approx(static_cast<double>(mix.stats.hbm_bytes)).epsilon(0.001));
    // The same bytes take longer, the more a turnaround costs: the mix runs at HBM's rate / (1 + t / 2) once HBM-bound.
    CHECK(mix.cycles > free_mix.cycles);
    CHECK(dear.cycles > mix.cycles);
    double ratio = static_cast<double>(dear.cycles) / static_cast<double>(mix.cycles);
    CHECK(ratio == Approx((1 + m.hbm_turnaround) / (1 + m.hbm_turnaround / 2)).epsilon(0.03));
    // The "HBM bandwidth" unit counts the turnarounds as busy time: HBM bounds the mix either way, as busy as without.
    auto hbm_busy = [](const models::RunResult& r) {
      for (const auto& u : r.stats.units)
        if (u.name == "HBM bandwidth") return u.utilisation;
      return -1.0;
    };
    CHECK(hbm_busy(mix) == Approx(hbm_busy(free_mix)).epsilon(0.02));
    CHECK(hbm_busy(mix) > 0.9);
    // At the machine's own t the mix's total is the GPU's (the figure t is derived from: a check of the derivation).
    double total = 2.0 * 132 * iters * 32768 / (static_cast<double>(mix.cycles) / m.clock_mhz) / 1000;
    std::string file = std::string(gpu == std::string("h200") ? "h200" : "h100") + "/store.json";
    CHECK(total == Approx(measured_gbs(file, "hier_store_mixed_coupled_box32KB_total_gbs")).epsilon(0.05));
  }
  // One way only, no turnaround: the HBM load ring (every read a miss) and the store ring beyond the L2 (every store
  // evicts a dirty block: write-backs only) take the same cycles whatever hbm_turnaround is.
  models::Machine h100 = models::load_machine("h100-sxm");
  auto stores = [&](double t) { return run_edited(store_ring(132, 256, 256), [&](models::Machine& x) { x.hbm_turnaround = t; }); };
  REQUIRE(stores(0).stats.hbm_bytes > 0);
  CHECK(stores(0).cycles == stores(h100.hbm_turnaround).cycles);
  CHECK(stores(0).cycles == stores(3).cycles);
  auto loads = [&](double t) {
    return boxes(R"(
      for i in 0..64 {
        arrive.expect_tx full tx=16384
        tma.load T box=(128, 64) at=(i * 128, 0) dst=s bar=full swizzle=128
        wait full parity=i & 1
      })",
                 "tensor T dtype=bf16 shape=(8192, 64)", 132, [&](models::Machine& x) { x.hbm_turnaround = t; });
  };
  REQUIRE(loads(0).stats.l2_miss_bytes > 0);
  CHECK(loads(0).cycles == loads(3).cycles);
}

TEST_CASE("memory: a box that evicts a dirty block waits for its write-back: stores beyond the L2's capacity go at "
          "HBM's rate, as the H100's did", "[memory]") {
  models::Machine m = models::load_machine("h100-sxm");
  // 132 x 256 boxes of 32 KB: 1.1 GB, 22x the L2; after the first 50 MB every store evicts a dirty block.
  const int n = 256;
  std::string text = store_ring(132, n, n);
  auto r = run_edited(text, nullptr);
  double gbs = store_gbs(r, 132, n, m);
  CHECK(r.stats.hbm_bytes >= 132LL * n * 32768 - m.l2_capacity_bytes);
  CHECK(gbs == Approx(measured_gbs("h100/store.json", "hier_store_bw_hbm_box32KB_d2_read_gbs")).epsilon(0.05));
  CHECK(gbs <= 1.02 * m.hbm_bytes_per_cycle * m.clock_mhz / 1000 * static_cast<double>(132LL * n * 32768) /
                   static_cast<double>(132LL * n * 32768 - m.l2_capacity_bytes));
  // With HBM made fast the write-backs hold nothing up: the same stores go at the L2's rate for stores.
  auto fast = run_edited(text, [](models::Machine& x) { x.hbm_bytes_per_cycle = 1e6; });
  CHECK(store_gbs(fast, 132, n, m) == Approx(m.l2_store_bytes_per_cycle * m.clock_mhz / 1000).epsilon(0.05));
  CHECK(store_gbs(fast, 132, n, m) > 1.15 * gbs);
}

TEST_CASE("launch: a finished run's time is its cycles at the clock plus the machine's launch cost", "[memory]") {
  models::Machine m = models::load_machine("h100-sxm");
  REQUIRE(m.launch_overhead_ns > 0);
  auto r = boxes(R"(
      arrive.expect_tx full tx=16384
      tma.load T box=(128, 64) at=(0, 0) dst=s bar=full
      wait full parity=0)");
  REQUIRE(r.outcome == Outcome::kFinished);
  CHECK(r.stats.launch_us == Approx(m.launch_overhead_ns / 1000));
  CHECK(r.stats.time_us == Approx(static_cast<double>(r.cycles) / m.clock_mhz + m.launch_overhead_ns / 1000));
  // A run that did not finish has no launch cost added (its time is where it stopped).
  auto d = boxes(R"(
      wait full parity=0)");
  REQUIRE(d.outcome == Outcome::kDeadlock);
  CHECK(d.stats.launch_us == 0);
}

TEST_CASE("sm90 models: the tile orders (CUTLASS's heuristic, K2's groups) visit the tiles as specified", "[memory]") {
  // The order changes which boxes are read together, so the L2 hit bytes tell orders apart. K2's grouped
  // order with groups of one row is the walk along N; with groups of every row, the walk along M; CUTLASS's
  // heuristic walks along N on a square grid of tiles and along M when there are more N tiles.
  auto run = [](std::vector<std::pair<std::string, std::int64_t>> defs) {
    isa::ParamOverrides o;
    for (auto& [k, v] : defs) o[k] = v;
    o["M"] = 4096;
    o["K"] = 4096;  // A and B are 32 MB each (64 MB with N = 8192): the order decides what the L2 still holds
    o["BETA_ZERO"] = 1;
    if (!o.count("N")) o["N"] = 4096;
    std::string path = models::kernels_dir() + "/sm90/gemm_tma_ws_cooperative.pipe";
    auto src = isa::load_source(path);
    isa::Program p = isa::compile(isa::parse(src), o, "", models::predefined_constants(models::load_machine("h100-sxm")));
    return models::simulate(p, models::load_machine("h100-sxm"), {});
  };
  auto along_n = run({{"RASTER_N", 1}}), along_m = run({{"RASTER_N", 0}});
  auto g1 = run({{"GROUP_M", 1}}), gall = run({{"GROUP_M", 32}}), heuristic = run({});
  REQUIRE(along_n.outcome == Outcome::kFinished);
  CHECK(g1.cycles == along_n.cycles);
  CHECK(g1.stats.l2_hit_bytes == along_n.stats.l2_hit_bytes);
  CHECK(gall.cycles == along_m.cycles);
  CHECK(heuristic.cycles == along_n.cycles);  // 32 x 32 tiles: a tie walks along N
  auto wide = run({{"N", 8192}}), wide_m = run({{"N", 8192}, {"RASTER_N", 0}}), wide_n = run({{"N", 8192}, {"RASTER_N", 1}});
  CHECK(wide.cycles == wide_m.cycles);        // 32 x 64 tiles: more N tiles walk along M
  CHECK(wide.stats.l2_hit_bytes == wide_m.stats.l2_hit_bytes);
  CHECK(wide_n.stats.l2_hit_bytes != wide_m.stats.l2_hit_bytes);
}

// ---- The SM's load/store path: what a warp instruction holds it for (docs/reference.md, "The SM's load/store path")

namespace {
// 16 warps of one CTA, each issuing 64 ops of kind `op` (8 instructions each: a load's warp waits for its data, as
// the microbenchmark's warps do every 8 loads), `size` bytes per thread over `lines` lines: the SM's cycles per
// warp instruction.
double lsu_cycles_per_instr(const std::string& op, int size, int lines, int warps = 16) {
  const std::string body = op == "cp.async" ? fmt::format("cp.async bytes={} dst=s size={} lines={}\n cp.async.commit\n cp.async.wait 1", 8 * 32 * size, size, lines)
                                            : fmt::format("{} bytes={} size={} lines={}", op, 8 * 32 * size, size, lines);
  models::RunResult r = run_text(fmt::format(
      "kernel k warps={} {{\n smem s bytes=64K\n warps 0..{} w {{ for i in 0..64 {{ {} }} }}\n}}\n", warps, warps, body));
  REQUIRE(r.outcome == Outcome::kFinished);
  return static_cast<double>(r.cycles) / (64.0 * 8 * warps);
}

double l1_median(const std::string& name) {
  std::ifstream f(std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h100/l1.json");
  nlohmann::json run = nlohmann::json::parse(f);
  for (const auto& m : run["measurements"])
    if (m["name"] == name) return m["median"].get<double>();
  FAIL("no " << name);
  return 0;
}
}  // namespace

TEST_CASE("lsu: loads, copies and stores hold the SM's load/store path for the lines and sectors they touch, as the H100 measured",
          "[memory][lsu][timing]") {
  // The patterns of validation/results/h100/l1.json with 16 warps, from the L2, against the parameters derived
  // from four of them (lsu_bytes_per_cycle from the coalesced cp.async benchmark, lsu_load_min_cycles from the
  // one-line L1-hit loads, lsu_store_bytes_per_cycle and lsu_partial_sector_factor from l1_st128_lines4 and
  // l1_st32_lines8, which are left out). Not here: ld.global.v2 over 2 lines (GPU 3.92, the model's floor 3.1:
  // -21 %), and 8-warp loads of 1-4 lines, which the GPU's latency bounds more than the model's (6.5 against 4.9).
  struct Case {
    const char* gpu;
    const char* op;
    int size, lines;
    double tolerance;
  };
  const Case cases[] = {
      {"l1_ld32_l2_lines1_warps16", "ld.global", 4, 1, 0.1},     {"l1_ld32_l2_lines2_warps16", "ld.global", 4, 2, 0.15},
      {"l1_ld32_l2_lines4_warps16", "ld.global", 4, 4, 0.1},     {"l1_ld64_l2_lines4_warps16", "ld.global", 8, 4, 0.1},
      {"l1_ld128_l2_lines4_warps16", "ld.global", 16, 4, 0.1},
      {"l1_ld32_l2_lines8_warps16", "ld.global", 4, 8, 0.1},     {"l1_ld32_l2_lines32_warps16", "ld.global", 4, 32, 0.1},
      {"l1_ld64_l2_lines8_warps16", "ld.global", 8, 8, 0.1},     {"l1_ld64_l2_lines32_warps16", "ld.global", 8, 32, 0.1},
      {"l1_ld128_l2_lines8_warps16", "ld.global", 16, 8, 0.1},   {"l1_ld128_l2_lines16_warps16", "ld.global", 16, 16, 0.1},
      {"l1_ld128_l2_lines32_warps16", "ld.global", 16, 32, 0.1}, {"l1_cp16_lines4_warps16", "cp.async", 16, 4, 0.1},
      {"l1_cp16_lines8_warps16", "cp.async", 16, 8, 0.1},        {"l1_cp16_lines16_warps16", "cp.async", 16, 16, 0.1},
      {"l1_cp16_lines32_warps16", "cp.async", 16, 32, 0.1},      {"l1_st32_lines1_warps16", "st.global", 4, 1, 0.1},
      {"l1_st32_lines2_warps16", "st.global", 4, 2, 0.1},        {"l1_st32_lines32_warps16", "st.global", 4, 32, 0.1},
      {"l1_st64_lines2_warps16", "st.global", 8, 2, 0.1},        {"l1_st64_lines4_warps16", "st.global", 8, 4, 0.1},
      {"l1_st64_lines32_warps16", "st.global", 8, 32, 0.1},      {"l1_st128_lines8_warps16", "st.global", 16, 8, 0.1},
      {"l1_ld32_l1hit_lines8_warps16", "ld.global", 4, 8, 0.1},  {"l1_ld32_l1hit_lines32_warps16", "ld.global", 4, 32, 0.1},
      {"l1_st128_lines32_warps16", "st.global", 16, 32, 0.1},
      // One whole sector per line: the GPU takes about 20 % longer than a cycle per sector (documented).
      {"l1_st32_lines4_warps16", "st.global", 4, 4, 0.2},        {"l1_st64_lines8_warps16", "st.global", 8, 8, 0.2},
  };
  for (const Case& c : cases) {
    INFO(c.gpu);
    const double gpu = l1_median(c.gpu), model = lsu_cycles_per_instr(c.op, c.size, c.lines);
    INFO("GPU " << gpu << " cycles per instruction, model " << model);
    CHECK(std::abs(model / gpu - 1) <= c.tolerance);
  }
}

TEST_CASE("lsu: the path's parameters are what the committed measurements give", "[memory][lsu][machine]") {
  auto m = models::load_machine("h100-sxm");
  CHECK(m.lsu_store_bytes_per_cycle == Approx(512 / l1_median("l1_st128_lines4_warps16")).epsilon(1e-4));
  CHECK(m.lsu_partial_sector_factor ==
        Approx(l1_median("l1_st32_lines8_warps16") / 8 / (l1_median("l1_st128_lines4_warps16") / 16)).margin(0.005));
  CHECK(m.lsu_load_min_cycles == Approx(l1_median("l1_ld32_l1hit_lines1_warps16")).margin(0.0005));
}

TEST_CASE("lsu: an instruction inside elect is one thread's, a short last instruction costs its share", "[memory][lsu][timing]") {
  auto cycles = [](const std::string& op) {
    models::RunResult r = run_text(fmt::format("kernel k warps=1 {{\n warp 0 w {{ {} }}\n}}\n", op));
    REQUIRE(r.outcome == Outcome::kFinished);
    return r.cycles;
  };
  // One thread's 16 bytes touch one line: lines=1 is valid inside elect, not for a whole warp.
  CHECK_NOTHROW(test::compile_text("kernel k warps=1 { warp 0 w { elect { ld.global bytes=16 size=16 lines=1 } } }"));
  CHECK_THROWS_WITH(test::compile_text("kernel k warps=1 { warp 0 w { ld.global bytes=16 size=16 lines=1 } }"),
                    Catch::Matchers::Contains("lines=1 with size=16: one instruction of 32 threads"));
  // A thread's 4-byte store writes part of one sector: less than a warp's instruction over 4 whole sectors.
  CHECK(cycles("elect { st.global bytes=4 size=4 }") < cycles("st.global bytes=128 size=4"));
  // 128 bytes of 16-byte loads are a quarter of an instruction: one line, not four.
  CHECK(cycles("ld.global bytes=128 size=16 lines=4") == cycles("ld.global bytes=128 size=4 lines=1"));
}

TEST_CASE("lsu: ld.shared, st.shared and ldmatrix share their SM's shared memory port, in the order they come",
          "[memory][lsu][timing]") {
  // W warps of each CTA, each `op` of 1 KB once, then exit: the last warp is through the port at W x 1 KB /
  // smem_bytes_per_cycle (the H200's epi_stsm_1sm: eight warps' 8 KB in 64.06 cycles), a warp alone in 1 KB's time.
  // (A load holds its warp until the port has served it; a store does not: the next test.)
  const auto m = models::load_machine("h100-sxm");
  const std::int64_t one = static_cast<std::int64_t>(std::ceil(1024 / m.smem_bytes_per_cycle));
  auto run = [](const std::string& op, int warps, int ctas) {
    models::RunResult r = run_text(fmt::format("kernel k grid=({},1,1) warps={} {{\n smem s bytes=8K\n warps 0..{} w {{ {} }}\n}}\n",
                                               ctas, warps, warps, op));
    REQUIRE(r.outcome == Outcome::kFinished);
    return r;
  };
  for (const char* op : {"ld.shared bytes=1K", "ldmatrix bytes=1K src=s"}) {
    INFO(op);
    CHECK(run(op, 1, 1).cycles == one);
    CHECK(run(op, 8, 1).cycles == 8 * one);
    // Two CTAs on two SMs: each SM's port is its own.
    CHECK(run(op, 8, 2).cycles == 8 * one);
  }
  // The three kinds queue together: the store takes the port first, and the loads behind it wait on the port (a
  // cause of their own); the store's warp does not.
  models::RunResult mixed = run_text(
      "kernel k warps=3 {\n smem s bytes=8K\n warp 0 a { st.shared bytes=1K }\n warp 1 b { ld.shared bytes=1K }\n"
      " warp 2 c { ldmatrix bytes=1K src=s }\n}\n");
  REQUIRE(mixed.outcome == Outcome::kFinished);
  CHECK(mixed.cycles == 3 * one);
  std::int64_t waited = 0;
  for (const auto& role : mixed.stats.roles)
    if (auto it = role.waiting.find("the SM's shared memory"); it != role.waiting.end()) waited += it->second;
  CHECK(waited == one + 2 * one);  // warp b waits one op's time, warp c two
}

TEST_CASE("lsu: st.shared goes on while its sub-partition's store queue has room, and fence.proxy.async waits for the writes",
          "[memory][lsu][timing]") {
  // W warps each issue N stores of 512 bytes (a stmatrix.x4), then, with `fence`, fence.proxy.async. The figures are
  // the run's cycles less those of the same warps issuing nothing (as the H200's epi_issue_* rows,
  // validation/results/h200/epilogue_issue.json).
  auto cycles = [](int warps, int n, bool fence, const std::function<void(models::Machine&)>& edit = {}) {
    std::string body = fmt::format("for i in 0..{} {{ st.shared bytes=512 }}{}", n, fence ? "\n fence.proxy.async" : "");
    std::string text = fmt::format("kernel k warps={} {{\n smem s bytes=32K\n warps 0..{} w {{\n {}\n }}\n}}\n", warps, warps, body);
    auto run = [&](const std::string& t) {
      models::RunResult r = run_edited(t, edit);
      REQUIRE(r.outcome == Outcome::kFinished);
      return r.cycles;
    };
    return run(text) - run(fmt::format("kernel k warps={} {{\n warps 0..{} w {{ }}\n}}\n", warps, warps));
  };
  const auto m = models::load_machine("h100-sxm");
  const std::int64_t per_op = static_cast<std::int64_t>(std::ceil(512 / m.smem_warp_store_bytes_per_cycle));  // 10
  const std::int64_t per_port = static_cast<std::int64_t>(std::ceil(512 / m.smem_bytes_per_cycle));          // 4
  const std::int64_t q = m.smem_store_queue_ops, issue = m.op_issue_cycles;
  REQUIRE(per_op > per_port);
  REQUIRE(q > 1);
  // One warp: its stores are written at its own rate, and the fence waits for the last, then takes its own time.
  CHECK(cycles(1, 8, true) == 8 * per_op + m.fence_proxy_async_cycles);
  CHECK(cycles(1, 0, true) == m.fence_proxy_async_cycles);  // nothing to wait for
  // Without the fence the warp does not wait for its writes: up to q stores ahead of those taken, each an issue.
  CHECK(cycles(1, static_cast<int>(q), false) == q * issue);
  // Far more: each further store enters the queue as the one q places earlier is taken (one per per_op cycles).
  // (the last, the 64th, enters when the (64 - q)th is taken, at (63 - q) x per_op).
  CHECK(cycles(1, 64, false) == (63 - q) * per_op + issue);
  // The queue's size decides it (both sides: one more, one less).
  CHECK(cycles(1, 64, false, [&](models::Machine& mm) { mm.smem_store_queue_ops = q + 1; }) == (62 - q) * per_op + issue);
  CHECK(cycles(1, 64, false, [&](models::Machine& mm) { mm.smem_store_queue_ops = q - 1; }) == (64 - q) * per_op + issue);
  // Four warps (one per sub-partition) and eight (two each): the SM's port bounds them, and the fence waits for the
  // warp's own writes: the last warp's are done when the port has taken them all.
  CHECK(cycles(4, 64, true) == 4 * 64 * per_port + (per_op - per_port) + m.fence_proxy_async_cycles);
  CHECK(cycles(8, 64, true) == 8 * 64 * per_port + (per_op - per_port) + m.fence_proxy_async_cycles);
  // Two warps of one sub-partition (0 and 4) share its queue: their stores issue later than those of two warps on
  // two sub-partitions (0 and 1), which the port serves at the same rate.
  auto pair = [&](int second) {
    std::string text = fmt::format(
        "kernel k warps=8 {{\n smem s bytes=32K\n warp 0 a {{ for i in 0..64 {{ st.shared bytes=512 }} }}\n"
        " warp {} b {{ for i in 0..64 {{ st.shared bytes=512 }} }}\n}}\n", second);
    models::RunResult r = run_edited(text, {});
    REQUIRE(r.outcome == Outcome::kFinished);
    return r.cycles;
  };
  CHECK(pair(4) > pair(1) + 10 * per_port);
  // A barrier does not wait for the stores before it; the fence does (the H200's epi_stsm_bars_* against
  // epi_stsm_fence_bars_*): eight warps store 1 KB each and meet at a named barrier, with and without the fence.
  auto barrier = [&](const std::string& before) {
    models::RunResult r = run_edited(fmt::format("kernel k warps=8 {{\n smem s bytes=32K\n warps 0..8 w {{\n {}\n"
                                                 " bar.sync 1 threads=256\n }}\n}}\n", before), {});
    REQUIRE(r.outcome == Outcome::kFinished);
    return r.cycles;
  };
  const std::int64_t alone = barrier("");
  CHECK(barrier("st.shared bytes=1K") == alone + issue);
  // With the fence: the last warp's writes are through the port after 8 KB of it (its own rate adds at most its two
  // stores' time), then the fence's own time.
  // One op of 1 GiB (taken as 4 x smem_store_queue_ops equal instructions, so that its work is bounded) is written at
  // the warp's rate as 2 M stores of 512 bytes would be (within a cycle per instruction of rounding).
  {
    models::RunResult big = run_edited("kernel k warps=1 {\n warp 0 w {\n st.shared bytes=1073741824\n fence.proxy.async\n }\n}\n", {});
    REQUIRE(big.outcome == Outcome::kFinished);
    const double want = 1073741824.0 / m.smem_warp_store_bytes_per_cycle + static_cast<double>(m.fence_proxy_async_cycles);
    CHECK(std::abs(static_cast<double>(big.cycles - run_edited("kernel k warps=1 {\n warp 0 w { }\n}\n", {}).cycles) - want) <= 4.0 * static_cast<double>(q));
  }
  // fence.gpu (fence.acq_rel.gpu, MEMBAR in SASS as the CTA-scope fence the H200 measures) waits for them too.
  {
    auto gpu_fence = [&](int n) {
      models::RunResult r = run_edited(fmt::format("kernel k warps=1 {{\n smem s bytes=32K\n warp 0 w {{\n for i in 0..{} {{ "
                                                   "st.shared bytes=512 }}\n fence.gpu\n }}\n}}\n", n), {});
      REQUIRE(r.outcome == Outcome::kFinished);
      return r.cycles;
    };
    CHECK(gpu_fence(8) - gpu_fence(0) == 8 * per_op);
  }
  const std::int64_t fenced = barrier("st.shared bytes=1K\n fence.proxy.async") - alone;
  CHECK(fenced >= 16 * per_port + m.fence_proxy_async_cycles);
  CHECK(fenced <= 16 * per_port + 2 * per_op + m.fence_proxy_async_cycles + issue);
}

TEST_CASE("lsu: without size= and lines= an op moves whole lines (loads, copies) or whole sectors (stores)", "[memory][lsu][timing]") {
  auto cycles = [](const std::string& op) {
    models::RunResult r = run_text(fmt::format("kernel k warps=1 {{\n smem s bytes=64K\n warp 0 w {{ {} }}\n}}\n", op));
    REQUIRE(r.outcome == Outcome::kFinished);
    return r.cycles;
  };
  // The default is 16 bytes per thread over as few lines as hold them: the same time as size=16 spelled out, for
  // small ops too (whole instructions, the load's floor).
  CHECK(cycles("ld.global bytes=16384") == cycles("ld.global bytes=16384 size=16"));
  CHECK(cycles("ld.global bytes=4") == cycles("ld.global bytes=4 size=16"));
  CHECK(cycles("st.global bytes=4") == cycles("st.global bytes=4 size=16 lines=4"));
  CHECK(cycles("ld.global bytes=16384") == cycles("ld.global bytes=16384 size=16 lines=4"));
  CHECK(cycles("cp.async bytes=16384 dst=s\n cp.async.commit\n cp.async.wait 0") ==
        cycles("cp.async bytes=16384 dst=s size=16 lines=4\n cp.async.commit\n cp.async.wait 0"));
  CHECK(cycles("st.global bytes=16384") == cycles("st.global bytes=16384 size=16 lines=4"));
  // Spread wider, the same bytes take longer: loads by their lines, stores by their sectors written in part.
  CHECK(cycles("ld.global bytes=16384 size=16 lines=8") > cycles("ld.global bytes=16384 size=16 lines=4"));
  auto m = models::load_machine("h100-sxm");
  // 4 bytes per thread: over 4 lines, 32 bytes each (whole sectors, 4 per instruction); over 8 lines, 16 bytes
  // each (8 sectors in part, 2 x 8 = 16 sector times): 128 instructions of 4 against 16 sector times.
  const std::int64_t whole = cycles("st.global bytes=16384 size=4 lines=4") - m.op_issue_cycles;
  const std::int64_t part = cycles("st.global bytes=16384 size=4 lines=8") - m.op_issue_cycles;
  CHECK(std::abs(static_cast<double>(whole) - 128 * 4 * 32 / m.lsu_store_bytes_per_cycle) <= 2);
  CHECK(std::abs(static_cast<double>(part) - 128 * 8 * m.lsu_partial_sector_factor * 32 / m.lsu_store_bytes_per_cycle) <= 2);
}

TEST_CASE("lsu: the warps of one SM take turns on its load/store path, CTAs on other SMs do not wait for it",
          "[memory][lsu][timing]") {
  // One warp alone, then two at once with the same store: the second goes on once the path has taken both.
  auto run = [](int warps) {
    return run_text(fmt::format("kernel k warps={} {{\n warps 0..{} w {{ st.global bytes=65536 }}\n}}\n", warps, warps));
  };
  models::RunResult one = run(1), two = run(2);
  REQUIRE(one.outcome == Outcome::kFinished);
  REQUIRE(two.outcome == Outcome::kFinished);
  auto m = models::load_machine("h100-sxm");
  const double own = 65536 / m.lsu_store_bytes_per_cycle;
  CHECK(std::abs(static_cast<double>(one.cycles) - own) <= m.op_issue_cycles + 2);
  CHECK(std::abs(static_cast<double>(two.cycles) - 2 * own) <= m.op_issue_cycles + 2);
  // Alone, the warp issues its stores (busy); behind another warp's, it waits on the path until the path begins on
  // its own, then is busy for its own time: both warps busy `own`, one of them waiting `own` besides.
  REQUIRE(one.stats.roles.size() == 1);
  CHECK(one.stats.roles[0].waiting.count("the SM's load/store path") == 0);
  CHECK(std::abs(static_cast<double>(one.stats.roles[0].busy) - own) <= m.op_issue_cycles + 2);
  REQUIRE(two.stats.roles.size() == 1);
  CHECK(std::abs(static_cast<double>(two.stats.roles[0].busy) - 2 * own) <= 2 * m.op_issue_cycles + 4);
  CHECK(std::abs(static_cast<double>(two.stats.roles[0].waiting["the SM's load/store path"]) - own) <= 2 * m.op_issue_cycles + 4);
  // The split moves smoothly with the queueing: one cycle behind, one cycle of waiting.
  auto late = [](int d) {
    return run_text(fmt::format("kernel k warps=2 {{\n warp 0 a {{ st.global bytes=65536 }}\n warp 1 b {{ sleep cycles={}\n "
                                "st.global bytes=65536 }}\n}}\n",
                                d));
  };
  const std::int64_t d = static_cast<std::int64_t>(own) - 1;  // the path is through warp a's stores one cycle after b comes
  models::RunResult r = late(static_cast<int>(d));
  REQUIRE(r.stats.roles.size() == 2);
  CHECK(r.stats.roles[1].waiting["the SM's load/store path"] <= m.op_issue_cycles + 3);
  CHECK(std::abs(static_cast<double>(r.stats.roles[1].busy) - own) <= m.op_issue_cycles + 2);
  // Two CTAs on different SMs do not share: each its own path.
  models::RunResult apart = run_text("kernel k grid=(2,1,1) warps=1 {\n warp 0 w { st.global bytes=65536 }\n}\n");
  CHECK(apart.cycles == one.cycles);
}

TEST_CASE("lsu: lines= is at least what one instruction's bytes need, checked as written and as computed", "[memory][lsu][isa]") {
  // size=16: 512 bytes per instruction, at least 4 lines; size=4: 128 bytes, 1 line at least.
  CHECK_THROWS_WITH(test::compile_text("kernel k warps=1 { warp 0 w { ld.global bytes=512 size=16 lines=3 } }"),
                    Catch::Matchers::Contains("lines=3 with size=16"));
  CHECK_NOTHROW(test::compile_text("kernel k warps=1 { warp 0 w { ld.global bytes=512 size=16 lines=4 } }"));
  CHECK_NOTHROW(test::compile_text("kernel k warps=1 { warp 0 w { st.global bytes=128 size=4 lines=32 } }"));
  CHECK_THROWS_WITH(test::compile_text("kernel k warps=1 { warp 0 w { st.global bytes=128 size=4 lines=33 } }"),
                    Catch::Matchers::Contains("lines=33 out of range"));
  CHECK_THROWS_WITH(test::compile_text("kernel k warps=1 { warp 0 w { st.global bytes=128 size=2 } }"),
                    Catch::Matchers::Contains("size=2 out of range"));
  CHECK_THROWS_WITH(test::compile_text("kernel k warps=1 { smem s bytes=1K\n warp 0 w { cp.async bytes=512 dst=s lines=2 } }"),
                    Catch::Matchers::Contains("lines=2 with size=16"));
  // A value known only at run time: the same rule, as undefined behaviour at the op.
  models::RunResult r = run_text("kernel k warps=1 { warp 0 w { let l = 2\n ld.global bytes=512 size=16 lines=l } }");
  CHECK(r.outcome == Outcome::kUndefined);
  REQUIRE(r.diagnosis.has_value());
  CHECK(r.diagnosis->message.find("lines=2 with size=16") != std::string::npos);
  CHECK(run_text("kernel k warps=1 { warp 0 w { let l = 4\n ld.global bytes=512 size=16 lines=l } }").outcome == Outcome::kFinished);
}

namespace {
// Where each CTA of a run starts (its SM).
class CtaSms : public models::Observer {
 public:
  bool wants(std::int64_t) const override { return true; }
  void cta_started(const models::CtaStart& c) override { sm[c.cta] = c.sm; }
  std::map<std::int64_t, int> sm;
};

// A measurement's `smids` parameter (the SM of each CTA, comma-separated) as numbers.
std::vector<int> smid_list(const nlohmann::json& measurement) {
  std::vector<int> ids;
  std::stringstream list(measurement.at("params").at("smids").get<std::string>());
  for (std::string id; std::getline(list, id, ',');) ids.push_back(std::stoi(id));
  return ids;
}

std::map<std::int64_t, int> placed(const std::string& gpu, int grid, int cluster, const std::function<void(models::Machine&)>& edit = {}) {
  models::Machine m = models::load_machine(gpu);
  if (edit) edit(m);
  CtaSms sms;
  models::RunOptions o;
  o.observers.push_back(&sms);
  const std::string text = fmt::format("kernel k grid=({},1,1) cluster=({},1,1) warps=1 {{ warp 0 w {{ compute cycles=1000 }} }}", grid, cluster);
  auto r = models::simulate(test::compile_text(text, {}, "test.pipe", gpu), m, o);
  REQUIRE(r.outcome == Outcome::kFinished);
  return sms.sm;
}
}  // namespace

TEST_CASE("launch: a plain launch fills the SMs as the GPU's block scheduler does (the one-TPC GPCs, then the TPCs of "
          "the GPCs in turn: one SM of each while the first wave fits, both SMs of as many as it needs), and clusters "
          "take the GPCs in turn, each the next SMs of its GPC",
          "[memory]") {
  // The H200's GPCs in the machine file: 18, 18, 16, 16, 16, 16, 16, 8 SMs (62 TPCs), then four of one TPC
  // (SMs 124-131).
  const int firsts[] = {0, 18, 36, 52, 68, 84, 100, 116};  // each larger GPC's first SM
  SECTION("a grid of 41: SMs 124-131, then one SM of a TPC of each GPC in turn; no TPC of theirs holds two") {
    const auto part = placed("h200", 41, 1);
    REQUIRE(part.size() == 41);
    for (int c = 0; c < 8; ++c) CHECK(part.at(c) == 124 + c);
    for (int g = 0; g < 8; ++g) CHECK(part.at(8 + g) == firsts[g]);
    for (int g = 0; g < 8; ++g) CHECK(part.at(16 + g) == firsts[g] + 2);  // the GPCs' second TPCs
    std::map<int, int> per_gpc;
    std::set<int> tpcs;
    for (const auto& [cta, sm] : part) {
      if (sm < 124) CHECK(tpcs.insert(sm / 2).second);
      if (sm < 124) per_gpc[sm < 36 ? sm / 18 : sm < 116 ? 2 + (sm - 36) / 16 : 7]++;
    }
    REQUIRE(per_gpc.size() == 8);
    for (const auto& [g, n] : per_gpc) CHECK((n == 4 || n == 5));  // evenly: 33 over 8
  }
  SECTION("a full grid (132): both SMs of every TPC, consecutive CTAs on one TPC, the GPCs in turn") {
    const auto full = placed("h200", 132, 1);
    REQUIRE(full.size() == 132);
    for (int c = 0; c < 8; ++c) CHECK(full.at(c) == 124 + c);
    for (int g = 0; g < 8; ++g) {
      CHECK(full.at(8 + 2 * g) == firsts[g]);
      CHECK(full.at(9 + 2 * g) == firsts[g] + 1);
    }
    std::set<int> used;
    for (int c = 0; c < 132; ++c) used.insert(full.at(c));
    CHECK(used.size() == 132);
    for (int c = 0; c < 132; c += 2) CHECK(full.at(c) / 2 == full.at(c + 1) / 2);
  }
  SECTION("between: 8 + 62 + 10 CTAs: the first 10 TPCs in turn get both SMs, the other 52 one") {
    const auto mid = placed("h200", 80, 1);
    std::map<int, int> per_tpc;
    for (const auto& [cta, sm] : mid) per_tpc[sm / 2]++;
    int doubled = 0;
    for (const auto& [tpc, n] : per_tpc) doubled += n == 2 && tpc < 62;
    CHECK(per_tpc.size() == 62 + 4);
    CHECK(doubled == 10);
    CHECK(mid.at(8) == 0);
    CHECK(mid.at(9) == 1);
    CHECK(mid.at(10) == 18);
    // The doubled TPCs: each larger GPC's first (in GPC order), then the second TPCs of GPCs 0 and 1.
    std::set<int> two;
    for (const auto& [tpc, n] : per_tpc)
      if (n == 2 && tpc < 62) two.insert(2 * tpc);
    CHECK(two == std::set<int>{0, 18, 36, 52, 68, 84, 100, 116, 2, 20});
  }
  SECTION("GPCs of an odd count: their last TPC has one SM, which is never doubled up; every SM is used once") {
    const auto odd = [](models::Machine& m) { m.gpc_sms = {3, 5, 124}; };
    // 67 TPCs (first SMs 0, 2; 3, 5, 7; 8, 10, ..., 130), two of them of one SM (2 and 7): a grid of 67 + 5 doubles
    // up five TPCs of two SMs.
    const auto g72 = placed("h200", 72, 1, odd);
    std::map<int, int> per_tpc;
    for (const auto& [cta, sm] : g72) per_tpc[sm < 3 ? sm / 2 : sm < 8 ? 10 + (sm - 3) / 2 : 20 + (sm - 8) / 2]++;
    CHECK(std::count_if(per_tpc.begin(), per_tpc.end(), [](const auto& e) { return e.second == 2; }) == 5);
    std::set<int> used;
    for (const auto& [cta, sm] : placed("h200", 132, 1, odd)) used.insert(sm);
    CHECK(used.size() == 132);
  }
  SECTION("clusters take the GPCs in turn, each cluster the next SMs of its GPC; without GPCs the lowest SMs first") {
    // Clusters of 4: the eight GPCs that hold four (the one-TPC GPCs cannot) in turn, then the first GPC's next two
    // TPCs, as the H200 placed them (gpc_map_c4 below).
    const auto quads = placed("h200", 40, 4);
    for (int k = 0; k < 8; ++k)
      for (int r = 0; r < 4; ++r) CHECK(quads.at(4 * k + r) == firsts[k] + r);
    for (int r = 0; r < 4; ++r) CHECK(quads.at(32 + r) == 4 + r);
    // Clusters of 2: the one-TPC GPCs (SMs 124-131) first, then the eight larger GPCs in turn, then again from the
    // first (its second TPC).
    const auto pairs = placed("h200", 26, 2);
    const int pair_firsts[] = {124, 126, 128, 130, 0, 18, 36, 52, 68, 84, 100, 116, 2};
    for (int k = 0; k < 13; ++k) CHECK(pairs.at(2 * k) == pair_firsts[k]);
    CHECK(pairs.at(1) == 125);
    CHECK(pairs.at(9) == 1);
    const auto flat = placed("h200", 10, 1, [](models::Machine& m) { m.gpc_sms.clear(); });
    for (int c = 0; c < 10; ++c) CHECK(flat.at(c) == c);
    const auto flat_pairs = placed("h200", 8, 2, [](models::Machine& m) { m.gpc_sms.clear(); });
    for (int c = 0; c < 8; ++c) CHECK(flat_pairs.at(c) == c);
  }
  SECTION("the H200's clusters of 4 and 8: consecutive clusters in different GPCs until every GPC that holds one has one") {
    // validation/results/h200/smlat/smlat.json (group gpc): the SMs of every cluster of as many clusters of C as fit
    // (gpc_map_c4, gpc_map_c8) and of one cluster of 16 per GPC that holds 16 (gpc_clusters16: each run of 16 SM ids
    // is one GPC). A GPC is known by the run of 16 its SMs lie in (the SMs in none: the smaller GPCs, by TPC). Per
    // C, the clusters before the first that shares a GPC with an earlier one, GPU and model.
    std::ifstream f(std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h200/smlat/smlat.json");
    REQUIRE(f.good());
    const auto doc = nlohmann::json::parse(f);
    std::map<std::string, std::vector<int>> ids;
    for (const auto& m : doc.at("measurements")) {
      const std::string name = m.at("name");
      if ((name.rfind("gpc_map_c", 0) != 0 && name.rfind("gpc_clusters16_", 0) != 0) || name.size() < 3 ||
          name.compare(name.size() - 3, 3, "_bw") != 0)
        continue;
      ids[name.substr(0, name.find("_pair"))] = smid_list(m);
    }
    REQUIRE(ids.count("gpc_clusters16") == 1);
    std::map<int, int> gpc_of;  // GPU SM id -> GPC (runs of 16; other SMs: 100 + their TPC)
    for (std::size_t i = 0; i < ids["gpc_clusters16"].size(); ++i) gpc_of[ids["gpc_clusters16"][i]] = static_cast<int>(i / 16);
    auto gpu_gpc = [&](int sm) { return gpc_of.count(sm) ? gpc_of[sm] : 100 + sm / 2; };
    auto distinct_run = [](const std::vector<int>& gpcs) {  // clusters before the first repeat of a GPC
      std::set<int> seen;
      int n = 0;
      for (int g : gpcs) {
        if (!seen.insert(g).second) break;
        ++n;
      }
      return n;
    };
    const models::Machine h200 = models::load_machine("h200");
    const auto model_gpc = h200.gpc_of_sms();
    for (int c : {4, 8}) {
      const auto& gpu = ids["gpc_map_c" + std::to_string(c)];
      REQUIRE(gpu.size() >= static_cast<std::size_t>(4 * c));
      std::vector<int> gpu_gpcs, model_gpcs;
      for (std::size_t k = 0; k + c <= gpu.size(); k += c) gpu_gpcs.push_back(gpu_gpc(gpu[k]));
      const auto model = placed("h200", static_cast<int>(gpu.size()), c);
      for (std::size_t k = 0; k < gpu.size(); k += c) model_gpcs.push_back(model_gpc[static_cast<std::size_t>(model.at(static_cast<std::int64_t>(k)))]);
      INFO("clusters of " << c);
      CHECK(distinct_run(model_gpcs) == distinct_run(gpu_gpcs));
      CHECK(distinct_run(model_gpcs) >= 7);  // not GPC after GPC: the old rule put clusters 0-3 of 4 in GPC 0
      // Every GPC's clusters sit on its SMs in order: the model's cluster k + (that run) continues cluster k's GPC.
      const auto n = static_cast<std::size_t>(distinct_run(model_gpcs));
      REQUIRE(n < model_gpcs.size());
      REQUIRE(n < gpu_gpcs.size());
      CHECK(model_gpcs[n] == model_gpcs[0]);
      CHECK(gpu_gpcs[n] == gpu_gpcs[0]);
    }
  }
  SECTION("the H200's clusters of 2: the first four on SMs 124-131, the next eight on eight GPCs, the next back on the "
          "GPC of the fifth") {
    // validation/results/h200/multicast_gemm6.json: 60 clusters of 2 (the SM ids in CTA order). Among SMs 0-63 a TPC t
    // lies in GPC t mod 8 (gpc_map_c8 above); the GPU put clusters 4-19 there.
    std::ifstream f(std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h200/multicast_gemm6.json");
    REQUIRE(f.good());
    const auto doc = nlohmann::json::parse(f);
    std::vector<int> gpu;
    for (const auto& m : doc.at("measurements")) {
      const std::string name = m.at("name");
      if (name.find("_c2_ctas120_") == std::string::npos || !m.at("params").contains("smids")) continue;
      gpu = smid_list(m);
      break;
    }
    REQUIRE(gpu.size() == 120);
    for (int k = 0; k < 4; ++k) CHECK(gpu[static_cast<std::size_t>(2 * k)] >= 124);
    std::set<int> gpu_gpcs;
    for (int k = 4; k < 12; ++k) {
      REQUIRE(gpu[static_cast<std::size_t>(2 * k)] < 64);
      gpu_gpcs.insert(gpu[static_cast<std::size_t>(2 * k)] / 2 % 8);
    }
    CHECK(gpu_gpcs.size() == 8);
    CHECK(gpu[24] / 2 % 8 == gpu[8] / 2 % 8);
    // The model: the same, in its own SM numbering (SMs 124-131 are its one-TPC GPCs there too).
    const models::Machine h200 = models::load_machine("h200");
    const auto model_gpc = h200.gpc_of_sms();
    const auto model = placed("h200", 120, 2);
    for (int k = 0; k < 4; ++k) CHECK(model.at(2 * k) >= 124);
    std::set<int> model_gpcs;
    for (int k = 4; k < 12; ++k) model_gpcs.insert(model_gpc[static_cast<std::size_t>(model.at(2 * k))]);
    CHECK(model_gpcs.size() == 8);
    CHECK(model_gpc[static_cast<std::size_t>(model.at(24))] == model_gpc[static_cast<std::size_t>(model.at(8))]);
  }
}

TEST_CASE("launch: the plain-launch placement doubles up as many TPCs as the H200's block scheduler did for grids of "
          "24 to 132 CTAs, and a full grid puts CTAs 2j and 2j + 1 on one TPC",
          "[memory]") {
  // validation/results/h200/gpc_order_full.json: the SM of every CTA of plain launches of K one-CTA-per-SM CTAs. The
  // GPU's SM ids pair into TPCs (2t, 2t + 1), as the model's do; which ids lie in which GPC differs, so what is
  // compared is how many TPCs hold two CTAs and, for the full grid, which CTAs share one.
  std::ifstream f(std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h200/gpc_order_full.json");
  REQUIRE(f.good());
  const auto doc = nlohmann::json::parse(f);
  int grids = 0;
  for (const auto& m : doc.at("measurements")) {
    const std::string name = m.at("name");
    if (name.rfind("gpc_order_", 0) != 0 || name.find("_latency") == std::string::npos) continue;
    const int k = m.at("params").at("ctas");
    const std::vector<int> gpu = smid_list(m);
    REQUIRE(static_cast<int>(gpu.size()) == k);
    const auto model = placed("h200", k, 1);
    auto doubled = [](const std::vector<int>& sms) {
      std::map<int, int> per_tpc;
      for (int s : sms) per_tpc[s / 2]++;
      return std::count_if(per_tpc.begin(), per_tpc.end(), [](const auto& e) { return e.second == 2; });
    };
    std::vector<int> ours;
    for (int c = 0; c < k; ++c) ours.push_back(model.at(c));
    CAPTURE(k);
    CHECK(doubled(ours) == doubled(gpu));
    if (k == 132)
      for (int c = 0; c < k; c += 2) {
        CHECK(gpu[c] / 2 == gpu[c + 1] / 2);
        CHECK(ours[c] / 2 == ours[c + 1] / 2);
      }
    ++grids;
  }
  CHECK(grids == 8);
}

namespace {
// Every TMA load of each CTA: (issued, done), in issue order.
class AllLoads : public models::Observer {
 public:
  bool wants(std::int64_t) const override { return true; }
  void async_work(std::int64_t cta, const std::string&, std::string_view category, std::int64_t start, std::int64_t end) override {
    if (category == "tma") spans[cta].emplace_back(start, end);
  }
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> spans;
};

// A GEMM stage on the H200 (two 16 KB boxes on one barrier, 1 + `gap` cycles after the first's issue ends) in every
// CTA for which `loads` holds, after 1 + `before` cycles; then 1 + `after` cycles of compute (`loads`, `before` and
// `after`: expressions of cta). grid x cluster CTAs; the machine without the spread of the transfers' times, changed
// by `edit`; the L2 warm (the tensor held) or, with `warm` false, cold (every box misses).
AllLoads stage_loads(int grid, int cluster, const std::string& loads, const std::string& before, int gap, const std::string& after,
                     const std::function<void(models::Machine&)>& edit = {}, bool warm = true) {
  models::Machine m = models::load_machine("h200");
  m.l2_latency_spread = m.hbm_latency_spread = 0;
  if (edit) edit(m);
  AllLoads seen;
  models::RunOptions o;
  o.warm_l2 = warm;
  o.observers.push_back(&seen);
  const std::string text = fmt::format(R"(
kernel k grid=({0},1,1) cluster=({1},1,1) warps=1 {{
  mbarrier full count=1
  smem a bytes=16384
  smem b bytes=16384
  tensor T dtype=bf16 shape=(65536, 64)
  warp 0 w {{
    elect {{
      if {2} {{
        compute cycles=1 + {3}
        arrive.expect_tx full tx=32768
        tma.load T box=(128, 64) at=(cta * 256, 0) dst=a bar=full
        compute cycles=1 + {4}
        tma.load T box=(128, 64) at=(cta * 256 + 128, 0) dst=b bar=full
        wait full parity=0
      }}
      compute cycles=1 + {5}
    }}
  }}
}}
)",
                                       grid, cluster, loads, before, gap, after);
  auto r = models::simulate(test::compile_text(text, {}, "test.pipe", "h200"), m, o);
  REQUIRE(r.outcome == Outcome::kFinished);
  return seen;
}

void no_gpc_latency(models::Machine& m) { m.tma_gpc_latency_cycles = m.tma_gpc_latency_max_cycles = 0; }

// What the GPC adds to CTA `cta`'s box `box` (0: A, 1: B): its time against the same run without the GPC's latency.
std::int64_t added(const AllLoads& with, const AllLoads& without, std::int64_t cta, int box) {
  const auto& a = with.spans.at(cta).at(static_cast<std::size_t>(box));
  const auto& b = without.spans.at(cta).at(static_cast<std::size_t>(box));
  REQUIRE(a.first == b.first);
  return a.second - b.second;
}
}  // namespace

TEST_CASE("tma: a stage's second box issued while its first is in flight waits tma_gpc_latency_cycles for each other "
          "SM of its GPC that loads, at most tma_gpc_latency_max_cycles, and a lone box or a box issued after the "
          "first landed does not",
          "[memory]") {
  const models::Machine h200 = models::load_machine("h200");
  REQUIRE(h200.tma_gpc_latency_cycles > 0);
  const double d = h200.tma_gpc_latency_cycles, cap = h200.tma_gpc_latency_max_cycles;
  REQUIRE(d * 7 < cap);   // 8 SMs: below the most
  REQUIRE(d * 15 > cap);  // 16 SMs: the most
  SECTION("one cluster of n CTAs in one GPC: the B box of each waits min(d x (n - 1), max) (nothing in a GPC of one "
          "TPC); the A box nothing") {
    for (int n : {1, 2, 8, 16}) {
      CAPTURE(n);
      auto with = stage_loads(n, n, "1", "0", 0, "0");
      auto without = stage_loads(n, n, "1", "0", 0, "0", no_gpc_latency);
      // A lone cluster of 2 goes to a GPC of one TPC (as the H200's first clusters of 2 go to SMs 124-131), whose
      // SMs count the larger GPCs' mean of loading SMs: none load there, so it waits nothing.
      const double expect = n == 2 ? 0.0 : std::min(d * (n - 1), cap);
      for (std::int64_t c = 0; c < n; ++c) {
        CHECK(added(with, without, c, 0) == 0);
        CHECK(added(with, without, c, 1) == std::llround(expect));
      }
    }
  }
  SECTION("a B box issued after its A box landed waits nothing; one issued just before it lands waits") {
    auto lone = stage_loads(8, 8, "1", "0", 0, "0", no_gpc_latency);
    const auto [a_issued, a_done] = lone.spans.at(0).at(0);
    // The B box issues 1 + gap cycles after the A box's issue (tma_issue_cycles) ends.
    const int lands = static_cast<int>(a_done - a_issued - h200.tma_issue_cycles - 1);
    for (int gap : {lands, lands + 1, lands + 10}) {  // (at `lands` the B box issues as the A box lands)
      CAPTURE(gap);
      CHECK(added(stage_loads(8, 8, "1", "0", gap, "0"), stage_loads(8, 8, "1", "0", gap, "0", no_gpc_latency), 0, 1) == 0);
    }
    for (int gap : {lands - 1, lands - 10}) {
      CAPTURE(gap);
      CHECK(added(stage_loads(8, 8, "1", "0", gap, "0"), stage_loads(8, 8, "1", "0", gap, "0", no_gpc_latency), 0, 1) ==
            std::llround(d * 7));
    }
  }
  SECTION("only SMs whose CTAs have issued a TMA load count, and only while those CTAs run") {
    // CTA 0 loads its stage at cycle ~20,000; CTAs 1-7 of its cluster load at once, then stay past it or exit.
    const std::string late0 = "(cta == 0) * 20000";
    CHECK(added(stage_loads(8, 8, "1", late0, 0, "(cta != 0) * 40000"),
                stage_loads(8, 8, "1", late0, 0, "(cta != 0) * 40000", no_gpc_latency), 0, 1) == std::llround(d * 7));
    CHECK(added(stage_loads(8, 8, "1", late0, 0, "0"), stage_loads(8, 8, "1", late0, 0, "0", no_gpc_latency), 0, 1) == 0);
    // CTAs 1-7 run past it but never load.
    CHECK(added(stage_loads(8, 8, "cta == 0", "0", 0, "(cta != 0) * 40000"),
                stage_loads(8, 8, "cta == 0", "0", 0, "(cta != 0) * 40000", no_gpc_latency), 0, 1) == 0);
  }
  SECTION("an SM of a GPC of one TPC counts the mean of the larger GPCs' loading SMs (as one SM more in an average GPC)") {
    // A plain launch of 24: CTAs 0-7 on the one-TPC GPCs (SMs 124-131), two CTAs on each of the eight larger GPCs.
    // CTAs 0 and 8 load after the others have.
    const std::string later = "(cta == 0 || cta == 8) * 500";
    auto with = stage_loads(24, 1, "1", later, 0, "20000");
    auto without = stage_loads(24, 1, "1", later, 0, "20000", no_gpc_latency);
    CHECK(added(with, without, 0, 1) == std::llround(d * 2));  // SM 124: 16 SMs of the larger GPCs load, 2 a GPC
    CHECK(added(with, without, 8, 1) == std::llround(d * 1));  // SM 0: CTA 16 on SM 2 loads in its GPC
    // The mean rounded: 10 SMs over 8 GPCs (1.25) count 1, 12 (1.5) count 2.
    for (const auto& [grid, others] : {std::pair{18, 1}, std::pair{20, 2}}) {
      CAPTURE(grid);
      CHECK(added(stage_loads(grid, 1, "1", "(cta == 0) * 500", 0, "20000"),
                  stage_loads(grid, 1, "1", "(cta == 0) * 500", 0, "20000", no_gpc_latency), 0, 1) == std::llround(d * others));
    }
  }
  SECTION("with processor sharing (the memory tells a load's landing later) the same") {
    const auto sharing = [](models::Machine& m) { m.l2_processor_sharing = 1; };
    auto with = stage_loads(8, 8, "1", "0", 0, "0", sharing);
    auto without = stage_loads(8, 8, "1", "0", 0, "0", [&](models::Machine& m) { sharing(m), no_gpc_latency(m); });
    for (std::int64_t c = 0; c < 8; ++c) {
      CHECK(added(with, without, c, 0) == 0);
      CHECK(added(with, without, c, 1) == std::llround(d * 7));
    }
  }
  SECTION("either parameter at 0 turns it off") {
    auto off = stage_loads(16, 16, "1", "0", 0, "0", no_gpc_latency);
    CHECK(off.spans == stage_loads(16, 16, "1", "0", 0, "0", [](models::Machine& m) { m.tma_gpc_latency_cycles = 0; }).spans);
    CHECK(off.spans == stage_loads(16, 16, "1", "0", 0, "0", [](models::Machine& m) { m.tma_gpc_latency_max_cycles = 0; }).spans);
    CHECK(off.spans != stage_loads(16, 16, "1", "0", 0, "0").spans);
  }
}

namespace {
// HBM's latency under load as one level: `cycles` at any share of HBM's time from 0.001 up (0: none).
std::function<void(models::Machine&)> loaded_hbm(double cycles, const std::function<void(models::Machine&)>& also = {}) {
  return [=](models::Machine& m) {
    m.hbm_loaded_utilisation.clear(), m.hbm_loaded_cycles.clear();
    if (cycles > 0) m.hbm_loaded_utilisation = {0.001}, m.hbm_loaded_cycles = {cycles};
    if (also) also(m);
  };
}
// When CTA `cta`'s box `box` landed.
std::int64_t landed(const AllLoads& r, std::int64_t cta, int box) { return r.spans.at(cta).at(static_cast<std::size_t>(box)).second; }
}  // namespace

TEST_CASE("machine: HBM's latency under load is linear between its knots and from (0, 0), the last knot's beyond them",
          "[memory][machine]") {
  models::Machine m;
  CHECK(m.hbm_loaded_latency(0.5) == 0);  // no knots: none
  m.hbm_loaded_utilisation = {0.25, 0.5, 0.75};
  m.hbm_loaded_cycles = {100, 300, 400};
  CHECK(m.hbm_loaded_latency(0) == 0);
  CHECK(m.hbm_loaded_latency(-1) == 0);
  CHECK(m.hbm_loaded_latency(0.125) == Approx(50));
  CHECK(m.hbm_loaded_latency(0.25) == Approx(100));
  CHECK(m.hbm_loaded_latency(std::nextafter(0.25, 1.0)) == Approx(100));
  CHECK(m.hbm_loaded_latency(0.375) == Approx(200));
  CHECK(m.hbm_loaded_latency(0.5) == Approx(300));
  CHECK(m.hbm_loaded_latency(0.625) == Approx(350));
  CHECK(m.hbm_loaded_latency(0.75) == Approx(400));
  CHECK(m.hbm_loaded_latency(0.76) == Approx(400));
  CHECK(m.hbm_loaded_latency(5) == Approx(400));
  // The built-in Hopper machines carry the H200's measured curve: rising, every knot a share of at most 1.
  for (const char* name : {"h100-sxm", "h200"}) {
    const models::Machine h = models::load_machine(name);
    CAPTURE(name);
    REQUIRE(h.hbm_loaded_utilisation.size() >= 4);
    CHECK(h.hbm_loaded_utilisation.back() <= 1);
    CHECK(std::is_sorted(h.hbm_loaded_cycles.begin(), h.hbm_loaded_cycles.end()));
    CHECK_THAT(h.hbm_loaded_source, Catch::Contains("loadlat_smooth"));
  }
  CHECK(models::load_machine("b200").hbm_loaded_utilisation.empty());
}

TEST_CASE("memory: a miss waits HBM's latency under load at the share of HBM's time its recent traffic took, less the delay "
          "its turn in the HBM queue and its GPC already give it (the first miss of a run none)",
          "[memory]") {
  SECTION("one level: CTA 0's box (nothing before it) lands as without; every other CTA's C later, or its queue's delay "
          "D if longer (HBM at 16 bytes a cycle: each A box waits for those before it)") {
    const auto slow = [](models::Machine& m) { m.hbm_bytes_per_cycle = 16, no_gpc_latency(m); };
    const auto without = stage_loads(8, 8, "1", "0", 0, "0", loaded_hbm(0, slow), false);
    const std::int64_t alone = landed(without, 0, 0);
    for (double c : {1.0, 1500.0, 2600.0, 20000.0}) {
      CAPTURE(c);
      const auto with = stage_loads(8, 8, "1", "0", 0, "0", loaded_hbm(c, slow), false);
      CHECK(landed(with, 0, 0) == alone);
      for (std::int64_t k = 1; k < 8; ++k) {
        CAPTURE(k);
        const std::int64_t d = landed(without, k, 0) - alone;  // its queue's delay (the same box alone lands at `alone`)
        REQUIRE(d > 0);
        CHECK(landed(with, k, 0) == alone + std::max(d, static_cast<std::int64_t>(c)));
      }
    }
  }
  SECTION("a stage's B box: its GPC's latency is part of the loaded latency, not added to it") {
    const auto with = stage_loads(8, 8, "1", "0", 0, "0", loaded_hbm(3000), false);
    const auto no_gpc = stage_loads(8, 8, "1", "0", 0, "0", loaded_hbm(3000, no_gpc_latency), false);
    const auto none = stage_loads(8, 8, "1", "0", 0, "0", loaded_hbm(0), false);
    const auto none_no_gpc = stage_loads(8, 8, "1", "0", 0, "0", loaded_hbm(0, no_gpc_latency), false);
    for (std::int64_t k = 0; k < 8; ++k) {
      CAPTURE(k);
      CHECK(landed(none, k, 1) - landed(none_no_gpc, k, 1) == std::llround(models::load_machine("h200").tma_gpc_latency_cycles * 7));
      CHECK(landed(with, k, 1) == landed(no_gpc, k, 1));
      CHECK(landed(with, k, 1) > landed(none, k, 1));
    }
  }
  SECTION("cp.async misses (the LSU's path, not measured) wait nothing more, but count in HBM's load") {
    const std::string copies = R"(
kernel k grid=(1,1,1) warps=1 {
  smem s bytes=8K
  tensor A dtype=f16 shape=(4096, 64)
  warp 0 w {
    for p in 0..8 {
      cp.async dst=s src=A box=(64, 64) at=(p * 64, 0)
      cp.async.commit
      cp.async.wait 0
    }
  }
}
)";
    const auto none = run_edited(copies, loaded_hbm(0)), with = run_edited(copies, loaded_hbm(3000));
    REQUIRE(with.outcome == Outcome::kFinished);
    CHECK(with.stats.l2_miss_bytes == 8 * 8192);
    CHECK(with.cycles == none.cycles);
  }
  SECTION("hits wait nothing more (the L2 warm)") {
    CHECK(stage_loads(8, 8, "1", "0", 0, "0", loaded_hbm(3000), true).spans == stage_loads(8, 8, "1", "0", 0, "0", loaded_hbm(0), true).spans);
  }
  SECTION("the share: HBM's cost of the transfers started in the last window (an HBM read's latency alone), over the "
          "window's bytes at hbm_bytes_per_cycle") {
    // CTA 0 loads a stage; CTA 1 its own `later` cycles after. Linear through (1, L): CTA 1's A box waits L x its share.
    const models::Machine h200 = models::load_machine("h200");
    const std::int64_t window = h200.tma_load_latency_cycles + h200.hbm_latency_cycles;
    auto extra = [&](double level, double rate, int later) {
      const auto curve = [=](models::Machine& m) {
        no_gpc_latency(m);
        m.hbm_bytes_per_cycle = rate;
        m.hbm_loaded_utilisation = {1.0}, m.hbm_loaded_cycles = {level};
      };
      const auto flat = [=](models::Machine& m) { no_gpc_latency(m), m.hbm_bytes_per_cycle = rate; };
      const std::string before = fmt::format("(cta == 1) * {}", later);
      return landed(stage_loads(2, 1, "1", before, 0, "0", curve, false), 1, 0) -
             landed(stage_loads(2, 1, "1", before, 0, "0", flat, false), 1, 0);
    };
    // 400 cycles after CTA 0's 32 KB, which HBM (128 bytes a cycle) is through with by then, in the same window: a share
    // of 32768 / (window x rate).
    const double rate = 128;
    REQUIRE(window > 500);
    const double share = 32768.0 / (static_cast<double>(window) * rate);
    REQUIRE(share < 1);
    // (The box lands no sooner than its other floors allow, which the smaller extras do not all pass: compared in pairs.)
    CHECK(extra(1000, rate, 400) > 0);
    CHECK(extra(3000, rate, 400) - extra(2000, rate, 400) == std::llround(3000 * share) - std::llround(2000 * share));
    CHECK(extra(3000, 2 * rate, 400) - extra(2000, 2 * rate, 400) == std::llround(3000 * share / 2) - std::llround(2000 * share / 2));
    // Two windows later nothing is recent.
    CHECK(extra(1000, rate, static_cast<int>(2 * window) + 2000) == 0);
  }
}


namespace {
// AllLoads (every CTA's TMA transfers) with every CTA's tma.load ops too: (busy start, cycles), in issue order.
class TmaOps : public AllLoads {
 public:
  void op_busy(std::int64_t cta, int, const isa::OpDesc& d, std::int64_t start, std::int64_t cycles) override {
    if (d.kind == isa::OpKind::kTmaLoad) busy[cta].emplace_back(start, cycles);
  }
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> busy;
};

// One cluster of `c` CTAs alone on the H200 (no spread of transfer times). `issues` (an expression of cluster_rank and
// j) says whether rank cluster_rank issues box j of the stage (j < c, 16 KB boxes, each to buffer j on full) with
// multicast=`mask` (an expression of j; 0: unicast); `gets` (of cluster_rank) whether the rank expects the stage (tx:
// `boxes` boxes) and waits for it.
TmaOps cluster_loads(int c, const std::string& issues, const std::string& mask, const std::string& gets, int boxes) {
  models::Machine m = models::load_machine("h200");
  m.l2_latency_spread = m.hbm_latency_spread = 0;
  TmaOps seen;
  models::RunOptions o;
  o.observers.push_back(&seen);
  const std::string text = fmt::format(R"(
kernel k grid=({0},1,1) cluster=({0},1,1) warps=1 {{
  mbarrier full count=1
  smem buf[{0}] bytes=16384
  tensor T dtype=bf16 shape=(65536, 64)
  warp 0 w {{
    elect {{ if {3} {{ arrive.expect_tx full tx=16384 * {4} }} }}
    cluster.sync
    elect {{
      for j in 0..{0} {{
        if {1} {{ tma.load T box=(128, 64) at=(j * 128, 0) dst=buf[j] bar=full multicast={2} }}
      }}
    }}
    if {3} {{ wait full parity=0 }}
    cluster.sync
  }}
}}
)",
                                       c, issues, mask, gets, boxes);
  auto r = models::simulate(test::compile_text(text, {}, "test.pipe", "h200"), m, o);
  REQUIRE(r.outcome == Outcome::kFinished);
  return seen;
}
}  // namespace

TEST_CASE("tma: a multicast load holds its thread tma_multicast_issue_cycles longer per destination CTA beyond the "
          "first, a unicast load or a mask of one CTA (the issuer's or another) not",
          "[memory][tma]") {
  const models::Machine h200 = models::load_machine("h200");
  REQUIRE(h200.tma_multicast_issue_cycles > 0);
  const std::int64_t issue = h200.tma_issue_cycles, extra = h200.tma_multicast_issue_cycles;
  // Rank 0 loads box 0 with the mask; every CTA the mask reaches (rank 0 for mask 0) expects one box.
  for (const auto& [mask, cycles] : {std::pair{0, issue}, std::pair{1, issue}, std::pair{2, issue}, std::pair{3, issue + extra},
                                     std::pair{5, issue + extra}, std::pair{7, issue + 2 * extra}, std::pair{15, issue + 3 * extra}}) {
    CAPTURE(mask);
    const std::string gets = mask == 0 ? "cluster_rank == 0" : fmt::format("({} / (1 << cluster_rank)) % 2 == 1", mask);
    auto seen = cluster_loads(4, "cluster_rank == 0 && j == 0", std::to_string(mask), gets, 1);
    REQUIRE(seen.busy.at(0).size() == 1);
    CHECK(seen.busy.at(0)[0].second == cycles);
  }
}

TEST_CASE("tma: a multicast box passes through the TMA engine of every SM it lands in: a multicast stage lands no "
          "sooner than the same boxes loaded unicast by each CTA",
          "[memory][tma]") {
  const models::Machine h200 = models::load_machine("h200");
  const std::int64_t occ = models::transfer_cycles(16384, h200.tma_bytes_per_cycle);
  for (int c : {2, 4}) {
    CAPTURE(c);
    // A stage of c boxes in every CTA: each CTA loads all c itself, or rank r loads box r for the whole cluster.
    auto uni = cluster_loads(c, "1", "0", "1", c);
    auto multi = cluster_loads(c, "j == cluster_rank", fmt::format("(1 << {}) - 1", c), "1", c);
    // When the stage has landed in CTA k: its own boxes (unicast), or every rank's box (multicast: each lands in all).
    const auto done = [](const TmaOps& s, std::int64_t k, bool all) {
      std::int64_t last = 0;
      for (const auto& [cta, spans] : s.spans)
        if (all || cta == k)
          for (const auto& [from, to] : spans) last = std::max(last, to);
      return last;
    };
    for (std::int64_t cta = 0; cta < c; ++cta) {
      CAPTURE(cta);
      REQUIRE(multi.spans.at(cta).size() == 1);
      REQUIRE(uni.spans.at(cta).size() == static_cast<std::size_t>(c));
      const std::int64_t issued = multi.spans.at(cta)[0].first;
      REQUIRE(issued == uni.spans.at(cta)[0].first);
      // Each SM's engine passes all c boxes before the last lands (then the load's latency), as with unicast loads;
      // the two differ by no more than a share of one box's engine time per box (the L2 reads each box once rather
      // than c times).
      CHECK(done(multi, cta, true) - issued >= c * occ + h200.tma_load_latency_cycles);
      CHECK(std::abs(done(multi, cta, true) - done(uni, cta, false)) <= (c - 1) * occ / 2);
    }
  }
}

namespace {
// `clusters` clusters of 2 on the H200 (warm L2, no spread of transfer times), every CTA waiting for one stage of two
// 16 KB boxes, loaded all at once: box j by rank j for both CTAs (multicast) or by each CTA itself (unicast). shared:
// every cluster's box j is rows [128 j, 128 j + 128) of T; else each cluster's (multicast) or each CTA's (unicast) own.
// The run's result: its L2 statistics.
models::RunResult pair_loads(int clusters, bool multicast, bool shared, const std::function<void(models::Machine&)>& edit = {}) {
  models::Machine m = models::load_machine("h200");
  m.l2_latency_spread = m.hbm_latency_spread = 0;
  if (edit) edit(m);
  const std::string text = fmt::format(R"(
kernel k grid=({0},1,1) cluster=(2,1,1) warps=1 {{
  mbarrier full count=1
  smem buf[2] bytes=16384
  tensor T dtype=bf16 shape=(65536, 64)
  warp 0 w {{
    elect {{ arrive.expect_tx full tx=32768 }}
    cluster.sync
    elect {{
      for j in 0..2 {{
        if {1} {{
          if j == cluster_rank {{ tma.load T box=(128, 64) at=(({2} * (cta / 2) * 2 + j) * 128, 0) dst=buf[j] bar=full multicast=3 }}
        }} else {{
          tma.load T box=(128, 64) at=(({2} * cta * 2 + j) * 128, 0) dst=buf[j] bar=full
        }}
      }}
    }}
    wait full parity=0
    cluster.sync
  }}
}}
)",
                                       2 * clusters, multicast ? 1 : 0, shared ? 0 : 1);
  auto r = models::simulate(test::compile_text(text, {}, "test.pipe", "h200"), m, {});
  REQUIRE(r.outcome == Outcome::kFinished);
  return r;
}

std::int64_t l2_busy(const models::RunResult& r) {
  for (const auto& u : r.stats.units)
    if (u.name == "L2 bandwidth (whole GPU)") return u.busy;
  FAIL("no L2 line in the run's statistics");
  return 0;
}
}  // namespace

TEST_CASE("l2: a byte a multicast load reads costs the L2 l2_multicast_read_cost bytes of a unicast read, a unicast "
          "load's byte one",
          "[memory][l2]") {
  const models::Machine h200 = models::load_machine("h200");
  REQUIRE(h200.l2_multicast_read_cost > 1);
  const auto cost = [](double c) { return [c](models::Machine& m) { m.l2_multicast_read_cost = c; }; };
  // 60 clusters, each reading its own boxes (nothing combines), all hits: 60 x 32 KB read once (multicast) or twice.
  const std::int64_t one = l2_busy(pair_loads(60, true, false, cost(1)));
  CHECK(one == Approx(60 * 32768 / h200.l2_bytes_per_cycle).epsilon(0.01));
  CHECK(l2_busy(pair_loads(60, true, false, cost(2))) == Approx(2 * one).epsilon(0.01));
  CHECK(l2_busy(pair_loads(60, true, false, cost(1.5))) == Approx(1.5 * one).epsilon(0.01));
  CHECK(l2_busy(pair_loads(60, true, false)) == Approx(h200.l2_multicast_read_cost * one).epsilon(0.01));
  // Unicast reads: the parameter does not apply (each CTA reads its own 32 KB).
  const std::int64_t uni = l2_busy(pair_loads(60, false, false, cost(1)));
  CHECK(uni == Approx(2 * one).epsilon(0.01));
  CHECK(l2_busy(pair_loads(60, false, false, cost(2))) == uni);
}

TEST_CASE("l2: a multicast read neither joins nor is joined by other SMs' reads of the same data in flight, unicast "
          "reads of it are",
          "[memory][l2]") {
  const models::Machine h200 = models::load_machine("h200");
  // 60 clusters read the same two boxes at once. Unicast: the CTAs' reads combine (merged bytes, less L2 work than
  // 120 x 32 KB); multicast: none does, every cluster's read costs the L2 its bytes at the multicast cost.
  const models::RunResult uni = pair_loads(60, false, true), multi = pair_loads(60, true, true);
  CHECK(uni.stats.l2_merged_bytes > 0);
  CHECK(l2_busy(uni) < 0.9 * 120 * 32768 / h200.l2_bytes_per_cycle);
  CHECK(multi.stats.l2_merged_bytes == 0);
  CHECK(l2_busy(multi) == Approx(60 * 32768 * h200.l2_multicast_read_cost / h200.l2_bytes_per_cycle).epsilon(0.01));
  // The same clusters reading their own boxes: the same L2 work (sharing saves a multicast read nothing).
  CHECK(l2_busy(multi) == l2_busy(pair_loads(60, true, false)));
  // With l2_multicast_combines 1 the multicast reads of the same boxes combine as unicast ones do.
  const models::RunResult joined = pair_loads(60, true, true, [](models::Machine& m) { m.l2_multicast_combines = 1; });
  CHECK(joined.stats.l2_merged_bytes > 0);
  CHECK(l2_busy(joined) < l2_busy(multi));
}

TEST_CASE("l2: a unicast read does not join a multicast read of the same data in flight (l2_multicast_combines 0), "
          "it does with 1",
          "[memory][l2]") {
  // Cluster 0 multicasts boxes 0 and 1 to its two CTAs; CTA 2 (rank 0 of cluster 1) loads the same boxes unicast at
  // the same time; CTA 3 loads nothing. The only read that could join another is CTA 2's.
  const auto run = [](std::int64_t combines) {
    models::Machine m = models::load_machine("h200");
    m.l2_latency_spread = m.hbm_latency_spread = 0;
    m.l2_multicast_combines = combines;
    const std::string text = R"(
kernel k grid=(4,1,1) cluster=(2,1,1) warps=1 {
  mbarrier full count=1
  smem buf[2] bytes=16384
  tensor T dtype=bf16 shape=(65536, 64)
  warp 0 w {
    if cta < 3 { elect { arrive.expect_tx full tx=32768 } }
    cluster.sync
    elect {
      for j in 0..2 {
        if cta < 2 {
          if j == cluster_rank { tma.load T box=(128, 64) at=(j * 128, 0) dst=buf[j] bar=full multicast=3 }
        }
        if cta == 2 { tma.load T box=(128, 64) at=(j * 128, 0) dst=buf[j] bar=full }
      }
    }
    if cta < 3 { wait full parity=0 }
    cluster.sync
  }
}
)";
    auto r = models::simulate(test::compile_text(text, {}, "test.pipe", "h200"), m, {});
    REQUIRE(r.outcome == Outcome::kFinished);
    return r.stats.l2_merged_bytes;
  };
  CHECK(run(0) == 0);
  CHECK(run(1) > 0);
}

TEST_CASE("l2: a multicast mask of one CTA is a plain load for the L2 (no multicast cost, it combines)", "[memory][l2]") {
  // Every CTA loads the same two boxes with multicast=(1 << cluster_rank): itself only.
  models::Machine m = models::load_machine("h200");
  m.l2_latency_spread = m.hbm_latency_spread = 0;
  m.l2_multicast_read_cost = 2;
  const auto run = [&](const std::string& mask) {
    const std::string text = fmt::format(R"(
kernel k grid=(120,1,1) cluster=(2,1,1) warps=1 {{
  mbarrier full count=1
  smem buf[2] bytes=16384
  tensor T dtype=bf16 shape=(65536, 64)
  warp 0 w {{
    elect {{
      arrive.expect_tx full tx=32768
      for j in 0..2 {{ tma.load T box=(128, 64) at=(j * 128, 0) dst=buf[j] bar=full multicast={} }}
    }}
    wait full parity=0
    cluster.sync
  }}
}}
)",
                                         mask);
    auto r = models::simulate(test::compile_text(text, {}, "test.pipe", "h200"), m, {});
    REQUIRE(r.outcome == Outcome::kFinished);
    return r;
  };
  const models::RunResult self = run("1 << cluster_rank"), plain = run("0");
  CHECK(l2_busy(self) == l2_busy(plain));
  CHECK(self.stats.l2_merged_bytes == plain.stats.l2_merged_bytes);
  CHECK(self.stats.l2_merged_bytes > 0);
}

TEST_CASE("l2: with two partitions a block both halves of the GPU read takes its room twice and the other partition's "
          "copy is read instead of HBM, and a block one half reads takes it once",
          "[memory][l2]") {
  // CTAs walk a region of T twice in 32 KB boxes; the L2 holds 64 blocks (256 KB), combining off, two GPCs of 66 SMs
  // (a plain launch of two CTAs places them in different GPCs: one per partition).
  auto walk = [](std::int64_t region_bytes, int ctas, std::int64_t partitions) {
    return run_edited(walk_twice(region_bytes, ctas), [&](models::Machine& m) {
      m.l2_capacity_bytes = 64 * 32 * 128;
      m.l2_combine_sms = 1;
      m.l2_combine_near_share = m.l2_combine_far_share = 0;
      m.gpc_sms = {66, 66};
      m.l2_partitions = partitions;
    });
  };
  const std::int64_t capacity = 64 * 32 * 128;
  // Two CTAs, one per half, read 3/4 of the L2 twice. One L2: the blocks fit, each is read from HBM once. Two
  // partitions: the second reader of a block takes it from the other partition (no HBM), but both copies need 1.5x the
  // room, so the second pass misses again.
  const std::int64_t region = capacity * 3 / 4;
  auto one = walk(region, 2, 1), two = walk(region, 2, 2);
  INFO(problem(one) << problem(two));
  REQUIRE(one.outcome == Outcome::kFinished);
  REQUIRE(two.outcome == Outcome::kFinished);
  CHECK(one.stats.l2_miss_bytes == region);
  CHECK(one.stats.l2_hit_bytes == 3 * region);
  CHECK(two.stats.l2_miss_bytes == 2 * region);
  CHECK(two.stats.l2_hit_bytes == 2 * region);
  // A quarter of the L2: both copies fit; every block is read from HBM once, the other half's first read of it comes
  // from the other partition.
  auto small = walk(capacity / 4, 2, 2);
  REQUIRE(small.outcome == Outcome::kFinished);
  CHECK(small.stats.l2_miss_bytes == capacity / 4);
  CHECK(small.stats.l2_hit_bytes == 3 * capacity / 4);
  // One CTA (one half) reading 3/4 of the L2 takes one copy: it fits, as with one L2.
  auto alone1 = walk(region, 1, 1), alone2 = walk(region, 1, 2);
  REQUIRE(alone2.outcome == Outcome::kFinished);
  CHECK(alone2.stats.l2_miss_bytes == region);
  CHECK(alone2.stats.l2_hit_bytes == region);
  CHECK(alone2.cycles == alone1.cycles);
}
