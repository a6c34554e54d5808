// The built-in kernel models (models/kernels/): they run at their defaults and across a sweep of knobs,
// follow the CUTLASS builder rules, stay under the machine's tensor-core peak, and the known-bad
// configurations of the seed kernels are found by simulation.
#include <catch2/catch.hpp>

#include <functional>
#include <map>

#include "support.hpp"

using namespace smpipe;
using models::Outcome;

namespace {

struct ModelRun {
  isa::Program program;
  models::RunResult result;
  std::string report;
};

isa::Program compile_model(const std::string& name, const isa::ParamOverrides& params, const std::string& machine) {
  auto src = isa::load_source(models::kernels_dir() + "/" + name + ".pipe");
  return isa::compile(isa::parse(src), params, "", models::predefined_constants(models::load_machine(machine)));
}

// `edit` changes the machine before the run (none: as it is); `warm_l2`: the L2 at launch (RunOptions::warm_l2).
ModelRun run_model(const std::string& name, const isa::ParamOverrides& params, const std::string& machine = "h100-sxm",
                   const std::function<void(models::Machine&)>& edit = {}, bool warm_l2 = true) {
  ModelRun m{compile_model(name, params, machine), {}, {}};
  models::RunOptions o;
  o.max_cycles = 50'000'000;
  o.warm_l2 = warm_l2;
  models::Machine mach = models::load_machine(machine);
  if (edit) edit(mach);
  m.result = models::simulate(m.program, mach, o);
  m.report = models::format_problem(m.result);
  return m;
}

std::int64_t value(const isa::Program& p, const std::string& name) {
  for (const auto& [n, v] : p.params)
    if (n == name) return v;
  FAIL("no definition " << name);
  return 0;
}

// The texts of the ops one warp of CTA 0 starts, in order.
struct WarpOps : models::Observer {
  WarpOps(const isa::Program& program, int warp) : p(program), warp(warp) {}
  const isa::Program& p;
  int warp;
  std::vector<std::string> seq;
  bool wants(std::int64_t cta) const override { return cta == 0; }
  void op_started(std::int64_t, int w, int role, std::uint32_t op, std::int64_t) override {
    if (w == warp) seq.push_back(p.roles[static_cast<std::size_t>(role)].ops[op].text);
  }
};

const isa::ParamOverrides kSmall = {{"M", 1024}, {"N", 1024}, {"K", 512}};

isa::ParamOverrides with(isa::ParamOverrides base, const isa::ParamOverrides& extra) {
  for (const auto& [k, v] : extra) base[k] = v;
  return base;
}

}  // namespace

TEST_CASE("sm90 models run at their defaults and stay under the tensor-core peak", "[kernels]") {
  auto m = models::load_machine("h100-sxm");
  double peak = static_cast<double>(m.sm_count) * m.tensor_flops_per_cycle_16bit * m.clock_mhz * 1e6;
  for (const char* name : {"sm90/gemm_tma_ws", "sm90/gemm_tma_ws_cooperative", "sm90/gemm_tma_ws_pingpong"}) {
    DYNAMIC_SECTION(name) {
      auto r = run_model(name, {});
      INFO(r.report);
      REQUIRE(r.result.outcome == Outcome::kFinished);
      CHECK(r.result.stats.flops == 2LL * 8192 * 8192 * 8192);
      double flops_per_s = static_cast<double>(r.result.stats.flops) / (r.result.stats.time_us * 1e-6);
      CHECK(flops_per_s <= peak);
      CHECK(flops_per_s > 0.3 * peak);
    }
  }
}

TEST_CASE("sm90 models run across a sweep of sizes and knobs", "[kernels]") {
  const std::vector<isa::ParamOverrides> sweep = {
      {}, {{"TILE_N", 256}}, {{"TILE_N", 64}}, {{"CLUSTER_M", 2}}, {{"CLUSTER_N", 2}}, {{"C_VOID", 1}},
      {{"REUSE_SMEM_C", 0}}, {{"DELAY_TMA_STORE", 1}, {"REUSE_SMEM_C", 0}}, {{"STAGES", 2}}, {{"EPI_N", 64}},
      {{"RASTER_N", 1}}, {{"M", 1000}, {"N", 3000}, {"K", 296}}, {{"L", 3}}, {{"EPILOGUE", 0}},  // K a multiple of 8 bf16: TMA rows are 16-byte multiples
      {{"TILE_K", 128}}, {{"TILE_K", 128}, {"CLUSTER_M", 2}},
  };
  for (const char* name : {"sm90/gemm_tma_ws", "sm90/gemm_tma_ws_cooperative", "sm90/gemm_tma_ws_pingpong"}) {
    for (std::size_t i = 0; i < sweep.size(); ++i) {
      DYNAMIC_SECTION(name << " variant " << i) {
        auto r = run_model(name, with(kSmall, sweep[i]));
        INFO(r.report);
        CHECK(r.result.outcome == Outcome::kFinished);
        std::int64_t m = value(r.program, "M"), n = value(r.program, "N"), k = value(r.program, "K");
        std::int64_t tm = value(r.program, "TILE_M"), tn = value(r.program, "TILE_N"), tk = value(r.program, "TILE_K");
        std::int64_t l = value(r.program, "L");
        // Every tile is computed exactly once (padded to whole tiles).
        std::int64_t cm = value(r.program, "CLUSTER_M"), cn = value(r.program, "CLUSTER_N");
        std::int64_t tiles_m = (m + tm * cm - 1) / (tm * cm) * cm, tiles_n = (n + tn * cn - 1) / (tn * cn) * cn;
        CHECK(r.result.stats.flops == 2 * tiles_m * tm * tiles_n * tn * ((k + tk - 1) / tk) * tk * l);
      }
    }
  }
}

TEST_CASE("sm90 persistent models size their grid as CUTLASS does: whole clusters in GPCs of at most 18 SMs", "[kernels]") {
  // CUTLASS without max_active_clusters (tile_scheduler_params.h, get_max_cta_occupancy): SM_COUNT / 18 GPCs of
  // 18 - 18 % C CTAs each, plus the SMs left over rounded down to whole clusters. 132 SMs: C = 1, 2: 132 CTAs;
  // C = 4: 7 x 16 + 4 = 116 (not 132); C = 8: 7 x 16 + 0 = 112 (not 128). A large problem, so the tiles do not bound it.
  const isa::ParamOverrides big = {{"M", 8192}, {"N", 8192}, {"K", 128}};
  struct Case {
    int cm, cn;
    std::int64_t ctas;
  };
  for (const char* name : {"sm90/gemm_tma_ws_cooperative", "sm90/gemm_tma_ws_pingpong"}) {
    for (Case c : {Case{1, 1, 132}, Case{2, 1, 132}, Case{1, 2, 132}, Case{2, 2, 116}, Case{4, 1, 116}, Case{4, 2, 112}}) {
      INFO(name << " cluster " << c.cm << "x" << c.cn);
      auto p = compile_model(name, with(big, {{"CLUSTER_M", c.cm}, {"CLUSTER_N", c.cn}}), "h100-sxm");
      CHECK(p.num_ctas() == c.ctas);
      CHECK(value(p, "GRID_CLUSTERS") == c.ctas / (c.cm * c.cn));
    }
    // A problem of fewer cluster tiles than that takes one cluster per tile.
    auto small = compile_model(name, {{"M", 512}, {"N", 256}, {"K", 128}, {"CLUSTER_M", 2}, {"CLUSTER_N", 2}}, "h100-sxm");
    CHECK(small.num_ctas() == 8);  // 512 / (128 x 2) x 256 / (128 x 2) = 2 cluster tiles, 2 clusters of 4
  }
}

TEST_CASE("sm90 models refuse a tile that does not split evenly over the cluster's multicast", "[kernels][diagnosis]") {
  // CuTe splits a multicast TMA box evenly by the multicast count (copy_traits_sm90_tma.hpp): TILE_N over CLUSTER_M,
  // TILE_M over CLUSTER_N. Before this check a 3-CTA cluster ran into a deadlock (its slices' bytes short of tx).
  for (const char* name : {"sm90/gemm_tma_ws", "sm90/gemm_tma_ws_cooperative", "sm90/gemm_tma_ws_pingpong"}) {
    INFO(name);
    CHECK_NOTHROW(compile_model(name, with(kSmall, {{"CLUSTER_M", 2}}), "h100-sxm"));
    CHECK_NOTHROW(compile_model(name, with(kSmall, {{"CLUSTER_N", 2}}), "h100-sxm"));
    CHECK_THROWS_WITH(compile_model(name, with(kSmall, {{"CLUSTER_M", 3}}), "h100-sxm"), Catch::Contains("must split evenly over the cluster"));
    CHECK_THROWS_WITH(compile_model(name, with(kSmall, {{"CLUSTER_N", 3}}), "h100-sxm"), Catch::Contains("must split evenly over the cluster"));
  }
}

TEST_CASE("sm90 builder rules: epilogue defaults and StageCountAutoCarveout", "[kernels]") {
  // kernels.md: 128x128 cooperative, 16-bit C and D: epilogue tile 128x32, StagesC 4, StagesD 2, reuse,
  // no delay, 8 KB per C transaction, 32 KB of epilogue smem.
  auto p = compile_model("sm90/gemm_tma_ws_cooperative", {}, "h100-sxm");
  CHECK(value(p, "EM") == 128);
  CHECK(value(p, "EN") == 32);
  CHECK(value(p, "SC") == 4);
  CHECK(value(p, "SD") == 2);
  CHECK(value(p, "REUSE") == 1);
  CHECK(value(p, "DELAY") == 0);
  CHECK(value(p, "EPI_BYTES") == 8192);
  CHECK(value(p, "EPI_SMEM") - value(p, "SC") * 16 == 32 * 1024);
  // CUTLASS 4.x: stages = (227 KB - round_up(epilogue smem, 128)) / (round_up(A + B stage bytes, 128) + 16)
  CHECK(value(p, "S") == (232448 - (32768 + 64 + 127) / 128 * 128) / (32768 + 16));  // 6
  CHECK(value(p, "S") == 6);
  auto wide = compile_model("sm90/gemm_tma_ws_cooperative", {{"TILE_N", 256}}, "h100-sxm");
  CHECK(value(wide, "S") == 4);  // (232448 - 32896) / 49168
  auto void_c = compile_model("sm90/gemm_tma_ws_cooperative", {{"C_VOID", 1}, {"TILE_N", 256}}, "h100-sxm");
  CHECK(value(void_c, "DELAY") == 1);  // DelayTmaStore when C is void
  CHECK(value(void_c, "REUSE") == 0);
  CHECK(value(void_c, "S") == (232448 - 2 * 8192) / 49168);
  auto pp = compile_model("sm90/gemm_tma_ws_pingpong", {}, "h100-sxm");
  CHECK(value(pp, "EM") == 64);  // pingpong / basic: (min(64, M), 32)
  // The mainloop pipelines' empty barriers get CUTLASS's counts (PipelineTmaAsync::init_barriers).
  CHECK(test::barrier_count(pp, "mainloop.empty") == 128);
  CHECK(test::barrier_count(p, "mainloop.empty") == 256);
  CHECK(test::barrier_count(p, "mainloop.full") == 1);
  CHECK(test::barrier_count(p, "epi_load.full") == 32);
  CHECK(test::barrier_count(p, "epi_load.empty") == 256);
  auto cl = compile_model("sm90/gemm_tma_ws_cooperative", {{"CLUSTER_M", 2}, {"CLUSTER_N", 2}}, "h100-sxm");
  CHECK(test::barrier_count(cl, "mainloop.empty") == (2 + 2 - 1) * 2);  // (cluster_x + cluster_y - 1) * consumer warpgroups
  // Every model's CTA fits the 227 KB a CTA may use.
  for (const auto& prog : {p, wide, void_c, pp, cl}) CHECK(prog.smem_bytes() <= 232448);
}

TEST_CASE("sm90 CTA tiles with K = 128: two 128-byte swizzle atoms per row, loaded into one stage", "[kernels]") {
  // CUTLASS's builder gives a 128x128x128 cooperative tile 3 stages ((232448 - 32896) / (65536 + 16));
  // measured: validation/results/h100/cutlass_gemm.json, coop_128x128x128_1x1_auto, "stages": 3.
  auto p = compile_model("sm90/gemm_tma_ws_cooperative", {{"TILE_K", 128}}, "h100-sxm");
  CHECK(value(p, "S") == 3);
  CHECK(value(p, "TX") == (128 + 128) * 128 * 2);
  // Every stage's bytes arrive on its full barrier (two boxes per operand: a wrong count would hang or
  // overflow the transaction count), each operand byte is loaded once per tile, and the boxes cover A and B
  // exactly: all of both fit in the L2, so from a cold L2 their misses are A's and B's bytes, once each (a box at a
  // wrong or repeated coordinate would miss fewer or other blocks). The same with a 2x1 cluster (B multicast).
  for (const char* name : {"sm90/gemm_tma_ws", "sm90/gemm_tma_ws_cooperative", "sm90/gemm_tma_ws_pingpong"}) {
    for (int cluster_m : {1, 2}) {
      DYNAMIC_SECTION(name << " cluster " << cluster_m << "x1") {
        auto r = run_model(name, with(kSmall, {{"TILE_K", 128}, {"TILE_M", 128}, {"C_VOID", 1}, {"CLUSTER_M", cluster_m}}),
                           "h100-sxm", {}, false);
        INFO(r.report);
        REQUIRE(r.result.outcome == Outcome::kFinished);
        const std::int64_t tn = value(r.program, "TILE_N"), tiles = (1024 / 128) * (1024 / tn);
        // Each CTA loads all of its A tile and its 1 / cluster_m share of the B tile (the rest is multicast to it).
        CHECK(r.result.stats.bytes_loaded == tiles * (512 / 128) * (128 + tn / cluster_m) * 128 * 2);
        CHECK(r.result.stats.l2_miss_bytes == (1024 + 1024) * 512 * 2);
      }
    }
  }
}

TEST_CASE("sm90 cooperative tiles of 384 rows: A's slice in boxes of at most 256 rows", "[kernels]") {
  // A TMA box has at most 256 rows (cuTensorMapEncodeTiled's boxDim); cuBLASLt's nvjet 64x384 tiles (K1's GEMM0,
  // validation/results/h200/k1_ncu_kernels.csv) are 384 rows of A per CTA: two boxes of 192 into one stage.
  CHECK(value(compile_model("sm90/gemm_tma_ws_cooperative", {{"TILE_M", 384}}, "h100-sxm"), "A_BOXES") == 2);
  CHECK(value(compile_model("sm90/gemm_tma_ws_cooperative", {{"TILE_M", 384}, {"CLUSTER_N", 2}}, "h100-sxm"), "A_BOXES") == 1);
  CHECK(value(compile_model("sm90/gemm_tma_ws_cooperative", {{"TILE_M", 256}}, "h100-sxm"), "A_BOXES") == 1);
  // The boxes cover A exactly once (from a cold L2 the misses are A's and B's bytes, once each) and every stage's bytes
  // arrive on its full barrier; with clusters of 4 along M (B multicast, as cuBLASLt's 1x4) and of 2 along N (A's
  // slice of 192 rows multicast: one box).
  const isa::ParamOverrides shape = {{"M", 1536}, {"N", 256}, {"K", 512}, {"TILE_M", 384}, {"TILE_N", 64}, {"C_VOID", 1}};
  for (auto [cm, cn] : {std::pair{1, 1}, std::pair{4, 1}, std::pair{1, 2}}) {
    DYNAMIC_SECTION("cluster " << cm << "x" << cn) {
      auto r = run_model("sm90/gemm_tma_ws_cooperative", with(shape, {{"CLUSTER_M", cm}, {"CLUSTER_N", cn}}), "h100-sxm", {}, false);
      INFO(r.report);
      REQUIRE(r.result.outcome == Outcome::kFinished);
      const std::int64_t tiles = (1536 / 384) * (256 / 64), kblocks = 512 / 64;
      CHECK(r.result.stats.bytes_loaded == tiles * kblocks * (384 / cn + 64 / cm) * 64 * 2);
      CHECK(r.result.stats.l2_miss_bytes == (1536 + 256) * 512 * 2);
    }
  }
  // Two warpgroups of 64-row wgmmas: a tile of 192 rows does not split; 640 rows do not split into equal boxes of at
  // most 256 (3 boxes of 213 would leave a row out and the stage's bytes short).
  CHECK_THROWS_WITH(compile_model("sm90/gemm_tma_ws_cooperative", {{"TILE_M", 192}}, "h100-sxm"),
                    Catch::Contains("TILE_M: a multiple of 128"));
  CHECK_THROWS_WITH(compile_model("sm90/gemm_tma_ws_cooperative", {{"TILE_M", 640}}, "h100-sxm"),
                    Catch::Contains("must split into equal TMA boxes"));
  CHECK_NOTHROW(compile_model("sm90/gemm_tma_ws_cooperative", {{"TILE_M", 512}}, "h100-sxm"));
}

TEST_CASE("sm90 models: a kernel's own instructions stand where they are in the k-block loop", "[kernels]") {
  // 128x128 tiles at 1024x1024x2048: 64 CTAs of one tile each, 32 k-blocks. All instruction costs 0, then 300
  // cycles in one place. With 2 stages the ring is latency-bound: what a k-block does before its loads (load
  // warp) or before its MMAs or its release (consumers) lengthens every round trip of the ring but the first,
  // what it does after them hides under the next stage's load. With 6 stages nothing is on that path.
  isa::ParamOverrides zero = {{"M", 1024}, {"N", 1024}, {"K", 2048}, {"FUSION_CYCLES", 0}, {"TILE_CYCLES", 0},
                              {"SUBTILE_CYCLES", 0}, {"STORE_CYCLES", 0}};
  const char* places[] = {"PRODUCER_ACQUIRE_CYCLES", "PRODUCER_LOAD_CYCLES", "PRODUCER_STAGE_CYCLES",
                          "CONSUMER_ISSUE_CYCLES", "CONSUMER_RELEASE_CYCLES", "CONSUMER_STAGE_CYCLES"};
  for (const char* p : places) zero[p] = 0;
  const std::int64_t kblocks = 2048 / 64, ctas = 64, x = 300;
  // The consumer warps that run a CTA's one tile: both warpgroups in the cooperative kernel, one otherwise.
  const std::pair<const char*, std::int64_t> models[] = {
      {"sm90/gemm_tma_ws_cooperative", 8}, {"sm90/gemm_tma_ws_pingpong", 4}, {"sm90/gemm_tma_ws", 4}};
  // The differences below are exact: without the random spread of the transfers' times (l2_latency_spread,
  // hbm_latency_spread), which two runs of different ops draw differently; and without the GPC's latency for a
  // stage's second box (tma_gpc_latency_cycles), which a B box issued after its A box landed does not pay: this
  // test is about where the instructions stand, the GPC's latency has its own (test_tma.cpp).
  const auto no_spread = [](models::Machine& m) {
    m.l2_latency_spread = m.hbm_latency_spread = 0;
    m.tma_gpc_latency_cycles = m.tma_gpc_latency_max_cycles = 0;
  };
  for (const auto& [name, consumer_warps] : models) {
    for (int stages : {2, 6}) {
      DYNAMIC_SECTION(name << " stages " << stages) {
        auto base = run_model(name, with(zero, {{"STAGES", stages}}), "h100-sxm", no_spread);
        REQUIRE(base.result.outcome == Outcome::kFinished);
        for (const char* p : places) {
          INFO(p);
          auto r = run_model(name, with(zero, {{"STAGES", stages}, {p, x}}), "h100-sxm", no_spread);
          REQUIRE(r.result.outcome == Outcome::kFinished);
          const std::string place = p;
          const bool producer = place.rfind("PRODUCER", 0) == 0;
          // One compute op per k-block in the load warp, per k-block in each consumer warp (the release of every
          // k-block, the wait of every one, the rest of all but the last).
          const std::int64_t per_cta =
              producer ? kblocks : consumer_warps * (place == "CONSUMER_STAGE_CYCLES" ? kblocks - 1 : kblocks);
          CHECK(r.result.stats.ops - base.result.stats.ops == ctas * per_cta);
          const std::int64_t added = r.result.cycles - base.result.cycles;
          const bool on_path = place == "PRODUCER_ACQUIRE_CYCLES" || place == "CONSUMER_ISSUE_CYCLES" ||
                               place == "CONSUMER_RELEASE_CYCLES";
          if (stages == 2 && on_path) {
            CHECK(added >= x * (kblocks - 1));  // every round trip after the first
          } else if (stages == 2 && place == "PRODUCER_LOAD_CYCLES") {
            // between the A and the B box: the A box's transfer (16 KB) hides part of it in every round trip
            CHECK(added >= x * (kblocks - 1) / 2);
            CHECK(added < x * (kblocks - 1));
          } else {
            CHECK(added >= 0);
            CHECK(added <= 2 * x);  // at most the first and the last k-block's (the tile's start and its epilogue)
          }
        }
      }
    }
  }
  // A K = 128 stage is two swizzle atoms per operand (four boxes in the model, one TMA per operand in CUTLASS):
  // the instructions between A and B stand once per k-block.
  auto base = run_model("sm90/gemm_tma_ws_cooperative", with(zero, {{"TILE_K", 128}}));
  auto load = run_model("sm90/gemm_tma_ws_cooperative", with(zero, {{"TILE_K", 128}, {"PRODUCER_LOAD_CYCLES", x}}));
  REQUIRE(load.result.outcome == Outcome::kFinished);
  CHECK(load.result.stats.ops - base.result.stats.ops == ctas * (2048 / 128));
}

TEST_CASE("sm90 models: the CTA's start comes once before every warp's first op, and a cluster's sync after it", "[kernels]") {
  // 64 CTAs of one 128x128 tile each (1024^3): every warp of every CTA starts with PROLOGUE_CYCLES of its own
  // instructions (cta_start.pipe), so with the transfers' random spread off the whole run moves by exactly that; in a
  // 2x1 cluster a cluster.sync follows, and the run moves by the machine's cluster_sync_cycles.
  const isa::ParamOverrides shape = {{"M", 1024}, {"N", 1024}, {"K", 1024}};
  const auto no_spread = [](models::Machine& m) { m.l2_latency_spread = m.hbm_latency_spread = 0; };
  const std::int64_t x = 1000, ctas = 64;
  // The warps that run the start: the load warp, the C-load warp and the consumer warps.
  const std::pair<const char*, std::int64_t> models[] = {
      {"sm90/gemm_tma_ws_cooperative", 10}, {"sm90/gemm_tma_ws_pingpong", 10}, {"sm90/gemm_tma_ws", 6}};
  for (const auto& [name, warps] : models) {
    DYNAMIC_SECTION(name) {
      auto none = run_model(name, with(shape, {{"PROLOGUE_CYCLES", 0}}), "h100-sxm", no_spread);
      auto some = run_model(name, with(shape, {{"PROLOGUE_CYCLES", x}}), "h100-sxm", no_spread);
      REQUIRE(none.result.outcome == Outcome::kFinished);
      REQUIRE(some.result.outcome == Outcome::kFinished);
      CHECK(some.result.cycles - none.result.cycles == x);
      CHECK(some.result.stats.ops - none.result.stats.ops == ctas * warps);
      const isa::ParamOverrides pair = with(shape, {{"PROLOGUE_CYCLES", 0}, {"CLUSTER_M", 2}});
      auto fast = run_model(name, pair, "h100-sxm", [&](models::Machine& m) { no_spread(m); m.cluster_sync_cycles = 0; });
      auto slow = run_model(name, pair, "h100-sxm", [&](models::Machine& m) { no_spread(m); m.cluster_sync_cycles = x; });
      REQUIRE(slow.result.outcome == Outcome::kFinished);
      CHECK(slow.result.cycles - fast.result.cycles == x);
      // Every CTA of a single wave is its SM's first: PROLOGUE_WARM_CYCLES changes nothing.
      auto warm = run_model(name, with(shape, {{"PROLOGUE_CYCLES", x}, {"PROLOGUE_WARM_CYCLES", 3 * x}}), "h100-sxm", no_spread);
      CHECK(warm.result.cycles == some.result.cycles);
      CHECK(warm.result.stats.ops == some.result.stats.ops);
    }
  }
  // 256 CTAs of one tile, one per SM (the register file for the two persistent models, shared memory for the basic
  // one): 132 start on fresh SMs, the other 124 on SMs that ran one before, and only those run PROLOGUE_WARM_CYCLES.
  const isa::ParamOverrides waves = {{"M", 4096}, {"N", 1024}, {"K", 256}, {"PERSISTENT", 0}};
  for (const auto& [name, warps] : models) {
    DYNAMIC_SECTION(name << " in two waves") {
      isa::ParamOverrides p = waves;
      if (std::string(name) == "sm90/gemm_tma_ws") p.erase(p.find("PERSISTENT"));
      auto cold = run_model(name, with(p, {{"PROLOGUE_WARM_CYCLES", 0}}), "h100-sxm", no_spread);
      auto warm = run_model(name, with(p, {{"PROLOGUE_WARM_CYCLES", x}}), "h100-sxm", no_spread);
      REQUIRE(cold.result.outcome == Outcome::kFinished);
      REQUIRE(warm.result.outcome == Outcome::kFinished);
      CHECK(warm.result.stats.ops - cold.result.stats.ops == 124 * warps);
      CHECK(warm.result.cycles > cold.result.cycles);
    }
  }
}

TEST_CASE("sm90 models: where the epilogue acquires the next D buffer", "[kernels]") {
  // CUTLASS acquires right after a subtile's commit when C's smem is reused (the default with a 16-bit C), and
  // before the next subtile's st.shared when it is not (a void C; REUSE_SMEM_C=0); K2 (STORE_ACQUIRE=1) always
  // after the commit.
  struct Case {
    const char* model;
    isa::ParamOverrides params;
    bool after_commit;
  };
  for (const Case& c : std::vector<Case>{{"sm90/gemm_tma_ws_cooperative", {}, true},
                                         {"sm90/gemm_tma_ws_cooperative", {{"C_VOID", 1}}, false},
                                         {"sm90/gemm_tma_ws_cooperative", {{"REUSE_SMEM_C", 0}}, false},
                                         {"sm90/gemm_tma_ws_cooperative", {{"REUSE_SMEM_C", 0}, {"STORE_ACQUIRE", 1}}, true},
                                         {"sm90/gemm_tma_ws_pingpong", {{"C_VOID", 1}}, false},
                                         {"sm90/gemm_tma_ws", {{"REUSE_SMEM_C", 0}}, false}}) {
    isa::ParamOverrides params = c.params;
    params["M"] = 512;
    params["N"] = 512;
    params["K"] = 256;
    std::string knobs;
    for (const auto& [k, v] : c.params) knobs += " " + k + "=" + std::to_string(v);
    INFO(c.model << knobs << ", acquire after the commit: " << c.after_commit);
    auto p = compile_model(c.model, params, "h100-sxm");
    WarpOps o(p, 4);  // the store thread's warp
    models::RunOptions opt;
    opt.observers.push_back(&o);
    REQUIRE(models::simulate(p, models::load_machine("h100-sxm"), opt).outcome == Outcome::kFinished);
    std::size_t acquires = 0, after_commit = 0, before_write = 0;
    for (std::size_t i = 0; i < o.seq.size(); ++i) {
      if (o.seq[i] != "tma.wait SD - 1 read") continue;
      ++acquires;
      if (i > 0 && o.seq[i - 1] == "tma.commit") ++after_commit;
      // before a write: the sync that follows it, then the subtile's st.shared
      if (i + 2 < o.seq.size() && o.seq[i + 2].rfind("st.shared", 0) == 0) ++before_write;
    }
    REQUIRE(acquires > 0);
    if (c.after_commit) {
      CHECK(after_commit == acquires);
      CHECK(before_write == 0);
    } else {
      CHECK(before_write == acquires);  // (with DelayTmaStore a delayed store's commit may come just before)
    }
  }
  CHECK_THROWS_WITH(compile_model("sm90/gemm_tma_ws_cooperative", {{"STORE_ACQUIRE", 0}}, "h100-sxm"),
                    Catch::Contains("STORE_ACQUIRE"));
}

TEST_CASE("known-bad sm90 configurations are found by simulation", "[kernels][diagnosis]") {
  SECTION("transaction bytes that do not match the TMA boxes") {
    auto r = run_model("sm90/gemm_tma_ws_cooperative", with(kSmall, {{"TX_BYTES", 49152}}));
    CHECK(r.result.outcome == Outcome::kDeadlock);
    CHECK_THAT(r.report, Catch::Contains("mainloop.full[0]: all 1 arrivals came but the tx-count is stuck at 16384: 49152 bytes expected, "
                                         "32768 delivered"));
  }
  SECTION("a pingpong pipeline built with the cooperative consumer count") {
    auto r = run_model("sm90/gemm_tma_ws_pingpong", with(kSmall, {{"EMPTY_COUNT", 256}}));
    CHECK(r.result.outcome == Outcome::kDeadlock);
    CHECK_THAT(r.report, Catch::Contains("mainloop.empty[0]: initialised with count 256 but only 128 arrival(s) came in phase 0"));
    CHECK(run_model("sm90/gemm_tma_ws_pingpong", kSmall).result.outcome == Outcome::kFinished);
  }
  SECTION("DelayTmaStore with ReuseSmemC and StagesC <= StagesD hangs; StagesC = StagesD + 1 does not") {
    for (int sc : {2, 1}) {
      auto r = run_model("sm90/gemm_tma_ws_cooperative",
                         with(kSmall, {{"DELAY_TMA_STORE", 1}, {"REUSE_SMEM_C", 1}, {"STAGES_C", sc}, {"STAGES_D", 2}}));
      INFO("StagesC " << sc);
      CHECK(r.result.outcome == Outcome::kDeadlock);
      CHECK_THAT(r.report, Catch::Contains("CTA 0 warp 2 (epilogue_load) -> CTA 0 warp"));
      CHECK_THAT(r.report, Catch::Contains("epi_load.empty[0]: none of the 256 arrivals of phase 0 came"));
    }
    auto ok = run_model("sm90/gemm_tma_ws_cooperative",
                        with(kSmall, {{"DELAY_TMA_STORE", 1}, {"REUSE_SMEM_C", 1}, {"STAGES_C", 3}, {"STAGES_D", 2}}));
    CHECK(ok.result.outcome == Outcome::kFinished);
  }
  SECTION("a stage count that does not fit shared memory is an input error naming the bytes") {
    auto p = compile_model("sm90/gemm_tma_ws_cooperative", {{"STAGES", 5}, {"TILE_N", 256}}, "h100-sxm");
    CHECK_THROWS_WITH(models::check_fits(p, models::load_machine("h100-sxm")),
                      Catch::Contains("needs 278680 bytes of shared memory per CTA (sA 5x16384 + sB 5x32768 + sC 4x8192"));
    auto fits = compile_model("sm90/gemm_tma_ws_cooperative", {{"STAGES", 4}, {"TILE_N", 256}}, "h100-sxm");
    CHECK_NOTHROW(models::check_fits(fits, models::load_machine("h100-sxm")));
  }
  SECTION("a missing producer tail in a cluster") {
    auto bad = run_model("sm90/gemm_tma_ws_cooperative",
                         with(kSmall, {{"CLUSTER_M", 2}, {"EPILOGUE", 0}, {"PRODUCER_TAIL", 0}}));
    CHECK(bad.result.outcome == Outcome::kUndefined);
    CHECK_THAT(bad.report, Catch::Contains("signal to an exited CTA"));
    CHECK_THAT(bad.report, Catch::Contains("producer_tail"));
    CHECK_THAT(bad.report, !Catch::Contains("took part in none"));  // the peer ran the mainloop, only not its tail
    auto good = run_model("sm90/gemm_tma_ws_cooperative", with(kSmall, {{"CLUSTER_M", 2}, {"EPILOGUE", 0}}));
    CHECK(good.result.outcome == Outcome::kFinished);
  }
}

TEST_CASE("sm80 models: multistage and b2b GEMM run and count their FLOPs", "[kernels]") {
  auto ms = run_model("sm80/gemm_multistage", {{"M", 1024}, {"N", 1024}, {"K", 1024}});
  INFO(ms.report);
  REQUIRE(ms.result.outcome == Outcome::kFinished);
  CHECK(ms.result.stats.flops == 2LL * 1024 * 1024 * 1024);
  for (std::int64_t stages : {2, 3, 4}) {
    auto r = run_model("sm80/gemm_multistage", {{"M", 512}, {"N", 512}, {"K", 512}, {"STAGES", stages}});
    CHECK(r.result.outcome == Outcome::kFinished);
  }
  auto b2b = run_model("sm80/b2b_gemm_smem_accumulator", {});  // the reference problem of kernels.md
  INFO(b2b.report);
  REQUIRE(b2b.result.outcome == Outcome::kFinished);
  CHECK(b2b.result.stats.ctas == 81920 / 64);
  CHECK(b2b.result.stats.flops == 2LL * 81920 * 64 * 576 + 2LL * 81920 * 256 * 64);
  const auto& roles = b2b.result.stats.roles;
  REQUIRE(roles.size() == 1);
  for (const char* region : {"gemm0", "epilogue0", "gemm1", "epilogue1"}) CHECK(roles[0].regions.count(region) == 1);
}

TEST_CASE("sm80 models: CUTLASS's multistage k-loop (wait and sync before the last k-group's MMAs)", "[kernels]") {
  for (const char* model : {"sm80/gemm_multistage", "sm80/b2b_gemm_smem_accumulator"}) {
    INFO(model);
    isa::ParamOverrides params = std::string(model) == "sm80/gemm_multistage"
                                     ? isa::ParamOverrides{{"M", 256}, {"N", 256}, {"K", 256}}
                                     : isa::ParamOverrides{{"M", 1024}};
    auto p = compile_model(model, params, "h100-sxm");
    WarpOps o(p, 0);
    models::RunOptions opt;
    opt.observers.push_back(&o);
    REQUIRE(models::simulate(p, models::load_machine("h100-sxm"), opt).outcome == Outcome::kFinished);
    // Each k-tile has two k-groups (TILE_K 32): its first MMA op (even index), then commit, wait and bar.sync,
    // then its second MMA op (odd), the next stage's fragments read after the sync.
    std::vector<std::size_t> mma;
    for (std::size_t i = 0; i < o.seq.size(); ++i)
      if (o.seq[i].rfind("mma.sync", 0) == 0) mma.push_back(i);
    REQUIRE(mma.size() >= 4);
    REQUIRE(mma.size() % 2 == 0);
    for (std::size_t n = 0; n + 1 < mma.size(); n += 2) {
      const auto first = o.seq.begin() + static_cast<std::ptrdiff_t>(mma[n]), second = o.seq.begin() + static_cast<std::ptrdiff_t>(mma[n + 1]);
      CHECK(std::find(first, second, "bar.sync 0") != second);
      CHECK(std::find(first, second, "cp.async.wait STAGES - 2") != second);
    }
    // the drain after each mainloop (GEMM0's after its 36 MMA ops in the b2b model): a wait for every copy after
    // the mainloop's last MMA, then a sync
    std::vector<std::size_t> drains;
    for (std::size_t i = 0; i + 1 < o.seq.size(); ++i)
      if (o.seq[i] == "cp.async.wait 0") {
        drains.push_back(i);
        CHECK(o.seq[i + 1] == "bar.sync 0");
      }
    const bool b2b = std::string(model) != "sm80/gemm_multistage";
    REQUIRE(drains.size() == (b2b ? 2u : 1u));
    CHECK(drains.back() > mma.back());
    if (b2b) CHECK((drains[0] > mma[35] && drains[0] < mma[36]));
  }
  CHECK_THROWS_WITH(compile_model("sm80/gemm_multistage", {{"TILE_K", 16}}, "h100-sxm"), Catch::Contains("two warp k-groups"));
}

TEST_CASE("sm100 block-scaled model: CUTLASS's accumulator stages, CLC throttle and fetch order", "[kernels]") {
  // One accumulator stage when the MMA N is 256, two otherwise (sm100_blockscaled_umma_builder.inl).
  auto acc_stages = [](const isa::Program& p) {
    for (const auto& b : p.mbarriers)
      if (b.name == "acc_full") return b.size;
    FAIL("no acc_full");
    return -1;
  };
  CHECK(acc_stages(compile_model("sm100/gemm_blockscaled_nvfp4", {{"TILE_N", 256}}, "b200")) == 1);
  CHECK(acc_stages(compile_model("sm100/gemm_blockscaled_nvfp4", {{"TILE_N", 128}}, "b200")) == 2);
  CHECK(acc_stages(compile_model("sm100/gemm_blockscaled_nvfp4", {{"TILE_N", 128}, {"ACC_STAGES", 1}}, "b200")) == 1);
  // 2-SM: the leader alone arrives on its full barrier (count 1, both CTAs' bytes); the pair's MMA warps free TMEM
  // after a two-way handshake (the peer MMA warp's 32 threads), or, with one overlapping accumulator stage, after
  // the epilogue warps of both CTAs arrive (256). A wrong count or byte total deadlocks the runs below.
  auto count_of = [](const isa::Program& p, const std::string& name) {
    for (const auto& b : p.mbarriers)
      if (b.name == name) return b.count.value_or(-1);
    FAIL("no " << name);
    return std::int64_t{-1};
  };
  auto two = compile_model("sm100/gemm_blockscaled_nvfp4", {{"CTA_GROUP", 2}}, "b200");
  CHECK(count_of(two, "full") == 1);
  CHECK(count_of(two, "tmem_dealloc") == 32);
  auto two_overlap = compile_model("sm100/gemm_blockscaled_nvfp4", {{"CTA_GROUP", 2}, {"TILE_N", 256}}, "b200");
  CHECK(count_of(two_overlap, "tmem_dealloc") == 256);
  for (const auto& extra : std::vector<isa::ParamOverrides>{{{"CTA_GROUP", 2}, {"TILE_N", 256}}, {{"TILE_N", 256}},
                                                            {{"CTA_GROUP", 2}, {"C_VOID", 0}}}) {
    auto r = run_model("sm100/gemm_blockscaled_nvfp4", extra, "b200");
    INFO(r.report);
    CHECK(r.result.outcome == Outcome::kFinished);
  }
  // The cycles at which CTA 0's warps start their ops, by the op's text.
  struct Starts : models::Observer {
    const isa::Program* p = nullptr;
    std::map<std::string, std::vector<std::int64_t>> by_text;  // "role:op text" -> cycles
    bool wants(std::int64_t cta) const override { return cta == 0; }
    void op_started(std::int64_t, int warp, int role, std::uint32_t op, std::int64_t cycle) override {
      const auto& r = p->roles[static_cast<std::size_t>(role)];
      if (r.name == "epilogue" && warp != 4) return;  // one epilogue warp
      by_text[r.name + ":" + r.ops[op].text].push_back(cycle);
      if (r.name == "epilogue") epilogue.push_back(r.ops[op].text);
      if (r.name == "mma") mma.push_back(r.ops[op].text);
    }
    std::vector<std::string> epilogue;  // warp 4's ops in order
    std::vector<std::string> mma;       // the MMA warp's ops in order
    std::size_t first(const std::string& prefix, std::size_t nth = 0) const {
      for (std::size_t i = 0; i < epilogue.size(); ++i)
        if (epilogue[i].rfind(prefix, 0) == 0 && nth-- == 0) return i;
      return epilogue.size();
    }
    const std::vector<std::int64_t>& at(const std::string& prefix) const {
      for (const auto& [k, v] : by_text)
        if (k.rfind(prefix, 0) == 0) return v;
      FAIL("no op " << prefix);
      return by_text.begin()->second;
    }
  };
  for (int cta_group : {1, 2}) {
    INFO("CTA_GROUP " << cta_group);
    auto p = compile_model("sm100/gemm_blockscaled_nvfp4", {{"CTA_GROUP", cta_group}, {"M", 4096}, {"N", 2048}, {"K", 1024}}, "b200");
    Starts s;
    s.p = &p;
    models::RunOptions o;
    o.observers.push_back(&s);
    REQUIRE(models::simulate(p, models::load_machine("b200"), o).outcome == Outcome::kFinished);
    // The scheduler queries a tile only after the load warp has started as many tiles (the throttle): without
    // it the second query goes out while the first tile's loads are still being issued.
    const auto& queries = s.at("scheduler:clc.try_cancel");
    const auto& started = s.at("load:producer_commit clc_throttle");
    REQUIRE(queries.size() >= 3);
    REQUIRE(started.size() >= queries.size());
    for (std::size_t k = 0; k < queries.size(); ++k) CHECK(queries[k] >= started[k]);
    // The MMA warp reads the next tile's response before its tile's first MMA (not after its last).
    const auto& fetched = s.at("mma:clc.query");
    const auto& commits = s.at("mma:umma.commit acc_full");
    REQUIRE(fetched.size() == commits.size());
    for (std::size_t k = 0; k < commits.size(); ++k) CHECK(fetched[k] < commits[k]);
  }
  // One accumulator stage shared by two tiles (MMA N 256): the next tile's MMAs start while the epilogue still
  // reads the tile before (from the columns the two do not share), and the hazard checker finds no race.
  for (int cta_group : {1, 2}) {
    INFO("CTA_GROUP " << cta_group);
    auto p = compile_model("sm100/gemm_blockscaled_nvfp4",
                           {{"CTA_GROUP", cta_group}, {"TILE_N", 256}, {"M", 8192}, {"N", 4096}, {"K", 512}}, "b200");
    Starts s;
    s.p = &p;
    models::RunOptions o;
    o.observers.push_back(&s);
    auto r = models::simulate(p, models::load_machine("b200"), o);
    INFO(models::format_problem(r));
    REQUIRE(r.outcome == Outcome::kFinished);
    const auto& mmas = s.at("mma:umma ");
    const auto& loads = s.at("epilogue:tmem.ld");
    const std::size_t k_tiles = 512 / 256, subtiles = 256 / 32;
    REQUIRE(mmas.size() > k_tiles);
    REQUIRE(loads.size() >= subtiles);
    CHECK(mmas[k_tiles] < loads[subtiles - 1]);  // tile 1's first MMA before tile 0's last accumulator read
    // ... and the MMA warp waits for the shared stage only after the tile's first stage and its scale factors
    // (with two stages, before them)
    std::size_t tiles = 0, waits_before_mma = 0;
    for (std::size_t i = 0; i < s.mma.size(); ++i) {
      tiles += s.mma[i].rfind("umma.commit acc_full", 0) == 0;
      if (s.mma[i].rfind("wait acc_empty", 0) == 0 && i + 1 < s.mma.size() && s.mma[i + 1].rfind("umma ", 0) == 0) {
        ++waits_before_mma;
        REQUIRE(i >= 2);
        CHECK(s.mma[i - 1].rfind("tmem.cp", 0) == 0);
      }
    }
    REQUIRE(tiles >= 2);
    CHECK(waits_before_mma == tiles);
  }
  // The store of a D subtile acquires the next buffer right after its commit; with a void C (DelayTmaStore) it
  // is issued after the next subtile's accumulator read, with C before it.
  for (int c_void : {1, 0}) {
    INFO("C_VOID " << c_void);
    auto p = compile_model("sm100/gemm_blockscaled_nvfp4", {{"C_VOID", c_void}}, "b200");
    Starts s;
    s.p = &p;
    models::RunOptions o;
    o.observers.push_back(&s);
    REQUIRE(models::simulate(p, models::load_machine("b200"), o).outcome == Outcome::kFinished);
    std::size_t store = s.first("tma.store D"), second_read = s.first("tmem.ld", 1);
    REQUIRE(store < s.epilogue.size());
    REQUIRE(second_read < s.epilogue.size());
    CHECK((store > second_read) == (c_void == 1));
    std::size_t commits = 0;
    for (std::size_t i = 0; i < s.epilogue.size(); ++i)
      if (s.epilogue[i] == "tma.commit") {
        ++commits;
        REQUIRE(i + 1 < s.epilogue.size());
        CHECK(s.epilogue[i + 1] == "tma.wait SD - 1 read");
      }
    CHECK(commits == 2 * (128 / 32));  // CTA 0 takes tiles 0 and 148 of 256: 4 subtiles each
  }
  // With a C (16-bit, ReuseSmemC): 4 C buffers and no D buffers, D written into and stored from its subtile's C
  // buffer; a subtile's C is read before the tile's accumulator; the epilogue-load warp loads after the
  // mainloop load warp's first stages (the load-order barrier).
  {
    auto p = compile_model("sm100/gemm_blockscaled_nvfp4", {{"C_VOID", 0}}, "b200");
    auto size_of = [&](const std::string& name) {
      for (const auto& d : p.smems)
        if (d.name == name) return d.size;
      FAIL("no " << name);
      return -1;
    };
    CHECK(size_of("sC") == 4);
    CHECK(size_of("sD") == 0);
    Starts s;
    s.p = &p;
    models::RunOptions o;
    o.observers.push_back(&s);
    REQUIRE(models::simulate(p, models::load_machine("b200"), o).outcome == Outcome::kFinished);
    CHECK(s.first("ld.shared") < s.first("tmem.ld"));
    CHECK(s.first("tma.store D") < s.epilogue.size());
    CHECK(s.epilogue[s.first("tma.store D")].find("src=sC[buf]") != std::string::npos);
    CHECK(s.at("epilogue_load:tma.load C")[0] >= s.at("load:arrive load_order")[0]);
  }
}

TEST_CASE("sm100 block-scaled model: 1-SM and 2-SM, CLC persistence, TMEM limits", "[kernels]") {
  auto one = run_model("sm100/gemm_blockscaled_nvfp4", {}, "b200");
  INFO(one.report);
  REQUIRE(one.result.outcome == Outcome::kFinished);
  CHECK(one.result.stats.flops == 2LL * 2048 * 2048 * 2048);
  CHECK(one.result.stats.ctas == 148);  // 256 tiles: the CTAs that launched took the rest through CLC
  auto two = run_model("sm100/gemm_blockscaled_nvfp4", {{"CTA_GROUP", 2}}, "b200");
  INFO(two.report);
  REQUIRE(two.result.outcome == Outcome::kFinished);
  CHECK(two.result.stats.flops == 2LL * 2048 * 2048 * 2048);
  for (const auto& extra : std::vector<isa::ParamOverrides>{{{"C_VOID", 0}}, {{"ACC_STAGES", 1}}, {{"SCHED_STAGES", 1}},
                                                            {{"M", 1024}, {"N", 3072}, {"K", 1024}}}) {
    auto r = run_model("sm100/gemm_blockscaled_nvfp4", extra, "b200");
    CHECK(r.result.outcome == Outcome::kFinished);
  }
  // TMEM columns over 512 for the accumulator stages: the model's static check, and the alloc rule.
  CHECK_THROWS_WITH(compile_model("sm100/gemm_blockscaled_nvfp4", {{"ACC_STAGES", 3}, {"TILE_N", 256}}, "b200"),
                    Catch::Contains("assertion failed: the accumulator stages and scale factors need more tensor-memory columns"));
  CHECK_THROWS_WITH(compile_model("sm100/gemm_blockscaled_nvfp4", {{"TMEM_COLS", 1024}}, "b200"),
                    Catch::Contains("tmem cols=1024 must be a power of 2 in 32..512"));
  // Jittered schedules of the 2-SM model neither hang nor break a rule.
  auto p = compile_model("sm100/gemm_blockscaled_nvfp4", {{"CTA_GROUP", 2}, {"M", 1024}, {"N", 1024}}, "b200");
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    models::RunOptions o;
    o.seed = seed;
    o.jitter_pct = 30;
    CHECK(models::simulate(p, models::load_machine("b200"), o).outcome == Outcome::kFinished);
  }
}
