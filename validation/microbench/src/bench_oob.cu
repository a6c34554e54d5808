// Group "oob": what a TMA box load costs when part or all of the box lies outside the tensor (the rows the
// tensor map does not have: the TMA unit fills them with zeros, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE). A GEMM whose
// N (or M) is smaller than its CTA tile loads such boxes every k-block (CUTLASS 128x256 tiles on N = 128, or a
// 1x2 cluster whose second CTA's tile lies wholly past N). Each case: one thread per CTA loads the same box
// (x = 0, row y0) again and again into a ring of `stages` 32 KB buffers, waiting on a stage's full barrier
// before reusing it; the box's in-bounds rows are L2-resident (warmed by rep 0). Cycles per box = the CTA's
// clock64 span / boxes; with stages = 1 that is a box's latency, with stages = 4 its throughput.
#include <algorithm>
#include <string>
#include <vector>

#include "common.cuh"
#include "tma_util.cuh"

namespace mb {
namespace {

constexpr int kBoxRows = 256;  // 256 rows of 128 B: 32 KB, a CUTLASS 256-wide operand box of one k-block

// The ring's stages are kBoxRows rows apart whatever the box. After the loop, thread 0 checks row 0 and row
// box_rows - 1 of stage 0's box: the pattern where the row is inside the tensor (rows < in_rows counted from y0),
// zero where it is not.
__global__ void k_oob_ring(const __grid_constant__ CUtensorMap map, unsigned long long* cyc, int box_rows, int stages,
                           int y0, int in_rows, int iters, int own_rows, unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t full[8];
  unsigned char* buf = align1024(dyn_raw);
  if (threadIdx.x != 0) return;
  for (int k = 0; k < stages; ++k) mbar_init(smem_u32(&full[k]), 1);
  fence_mbar_init();
  prefetch_tmap(&map);
  const int y = y0 + (own_rows ? static_cast<int>(blockIdx.x) * own_rows : 0);
  const uint32_t bytes = box_rows * kRowBytes, full0 = smem_u32(&full[0]), buf0 = smem_u32(buf);
  unsigned long long t0 = clk();
  bool ok = true;
  int s = 0;
  uint32_t ph = 0;
  for (int i = 0; i < iters && ok; ++i) {
    const uint32_t fb = full0 + 8u * s;
    if (i >= stages) ok = mbar_wait<WAIT_TRY>(fb, ph ^ 1u, err);
    mbar_arrive_expect_tx(fb, bytes);
    tma_load_2d(buf0 + static_cast<uint32_t>(s) * kBoxRows * kRowBytes, &map, 0, y, fb);
    if (++s == stages) s = 0, ph ^= 1u;
  }
  for (int k = 0; k < stages && ok; ++k) {
    ok = mbar_wait<WAIT_TRY>(full0 + 8u * s, ph ^ 1u, err);
    if (++s == stages) s = 0, ph ^= 1u;
  }
  unsigned long long t1 = clk();
  cyc[blockIdx.x] = t1 - t0;
  if (!ok) return;
  unsigned bad = 0;
  for (uint32_t r : {0u, static_cast<uint32_t>(box_rows - 1)}) {
    const uint16_t v = *reinterpret_cast<volatile uint16_t*>(buf + swz128(r, 5));
    const bool inside = static_cast<int>(r) < in_rows;
    if (v != (inside ? pattern(static_cast<uint32_t>(y) + r, 5) : 0)) ++bad;
  }
  if (bad) atomicAdd(&err[ERR_DATA], bad);
}

// Clusters of 2, as a GEMM's 2x1 cluster loads its B operand: each CTA's stage is one 256-row box, its two halves
// loaded by the two CTAs. MC: CTA rank r loads rows y0 + 128 r .. + 127 (128 rows) with .multicast::cluster into both
// CTAs' stage at the half's offset; else each CTA loads the whole 256-row box at y0 itself (unicast). Either way a
// CTA's full barrier takes 32 KB per stage, and a stage is loaded again only when both CTAs have waited on it (each
// arrives on the empty barrier of both; count 2). 4 stages. Thread 0 of each CTA; clock64 span of the ring. own: cluster
// i's box starts 256 i rows further (each cluster its own rows), else every cluster loads the same box.
template <bool MC>
__global__ void k_oob_cluster(const __grid_constant__ CUtensorMap map, const __grid_constant__ CUtensorMap amap,
                              unsigned long long* cyc, int y_first, int in_rows, int iters, int own, long long a_boxes,
                              unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t full[4], empty[4];
  unsigned char* buf = align1024(dyn_raw);
  const uint32_t rank = cluster_ctarank();
  const int y0 = y_first + (own ? static_cast<int>(blockIdx.x / 2) * kBoxRows : 0);  // own: each cluster its own box
  const uint32_t full0 = smem_u32(&full[0]), empty0 = smem_u32(&empty[0]), buf0 = smem_u32(buf);
  if (threadIdx.x == 0) {
    for (int k = 0; k < 4; ++k) {
      mbar_init(full0 + 8u * k, 1);
      mbar_init(empty0 + 8u * k, 2);
    }
    fence_mbar_init();
  }
  cluster_sync_all();
  if (threadIdx.x == 0) {
    prefetch_tmap(&map);
    constexpr uint32_t kB = kBoxRows * kRowBytes, kHalf = kB / 2, kA = kHalf;
    // With a_boxes > 0 a stage also holds an A box of the CTA's own (128 rows, after the B box), walking a_boxes
    // boxes from CTA c's start at c x (a_boxes / grid): a GEMM stage whose A streams from HBM beside its shared B.
    const uint32_t kStage = kB + (a_boxes > 0 ? kA : 0u);
    long long a_idx = a_boxes > 0 ? (static_cast<long long>(blockIdx.x) * (a_boxes / gridDim.x)) % a_boxes : 0;
    auto issue = [&](int s) {
      const uint32_t fb = full0 + 8u * s, dst = buf0 + static_cast<uint32_t>(s) * kStage;
      mbar_arrive_expect_tx(fb, kStage);
      if (a_boxes > 0) {
        tma_load_2d(dst + kB, &amap, 0, static_cast<int>(a_idx * (kBoxRows / 2)), fb);
        if (++a_idx == a_boxes) a_idx = 0;
      }
      if (MC)
        tma_load_2d_mc(dst + rank * kHalf, &map, 0, y0 + static_cast<int>(rank) * (kBoxRows / 2), fb, 0x3);
      else
        tma_load_2d(dst, &map, 0, y0, fb);
    };
    const unsigned long long t0 = clk();
    int issued = 0;
    for (int s = 0; s < 4 && issued < iters; ++s, ++issued) issue(s);
    bool ok = true;
    for (int i = 0; i < iters && ok; ++i) {
      const int s = i % 4;
      const uint32_t ph = static_cast<uint32_t>(i / 4) & 1u;
      ok = mbar_wait<WAIT_TRY>(full0 + 8u * s, ph, err);
      for (uint32_t q = 0; q < 2 && ok; ++q) mbar_arrive_cluster_default(mapa_shared(empty0 + 8u * s, q));
      if (ok && issued < iters) {
        ok = mbar_wait<WAIT_TRY>(empty0 + 8u * s, ph, err);
        if (ok) issue(s), ++issued;
      }
    }
    cyc[blockIdx.x] = clk() - t0;
    if (ok) {
      // The last stage used (iters - 1): row 0 and row 255 of the whole box, the pattern inside, zero outside.
      const unsigned char* st = buf + static_cast<size_t>((iters - 1) % 4) * kStage;  // (its B box)
      unsigned bad = 0;
      for (uint32_t r : {0u, static_cast<uint32_t>(kBoxRows - 1)}) {
        const uint16_t v = *reinterpret_cast<const volatile uint16_t*>(st + (MC ? (r / 128) * kHalf + swz128(r % 128, 5) : swz128(r, 5)));
        if (v != (static_cast<int>(r) < in_rows ? pattern(static_cast<uint32_t>(y0) + r, 5) : 0)) ++bad;
      }
      if (bad) atomicAdd(&err[ERR_DATA], bad);
    }
  }
  __syncwarp();
  cluster_sync_all();  // no CTA exits while its peer may still multicast into it or arrive on its barriers
}

}  // namespace

void bench_tma_oob(Ctx& c) {
  const std::string G = "oob";
  const int dyn = 4 * kBoxRows * kRowBytes + 1024;
  CK(cudaFuncSetAttribute(k_oob_ring, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
  // The source: rows of 64 bf16 with the pattern, enough for every SM's own in-bounds box.
  const long long own_rows = kBoxRows;
  const size_t rows = static_cast<size_t>(c.sm_count) * own_rows + kBoxRows;
  DevBuf<uint16_t> t(rows * kCols);
  fill_pattern(c, t.p, rows);
  // Cases: the tensor's row count (the map's), the box's first row, the rows of the box inside the tensor, the
  // box's rows, the grids it runs at.
  struct Case {
    const char* name;
    long long map_rows;
    int y0, in_rows;
    bool own;  // each CTA its own box (CTA c at y0 + c x 256 rows); else every CTA the same box
    const char* what;
    int box_rows = kBoxRows;
    bool sms_sweep = false;  // also on 2, 8, 16, 33 and 66 CTAs (4 stages)
  };
  const long long all = static_cast<long long>(rows);
  const Case cases[] = {
      {"in_own", all, 0, kBoxRows, true, "every row inside; each CTA its own box"},
      {"in_same", all, 0, kBoxRows, false, "every row inside; every CTA the same box", kBoxRows, true},
      {"out32", kBoxRows - 32, 0, kBoxRows - 32, false, "rows 224..255 outside (a 224-row tensor)"},
      {"quarter_out", 3 * kBoxRows / 4, 0, 3 * kBoxRows / 4, false, "rows 192..255 outside (a 192-row tensor)"},
      {"out96", kBoxRows - 96, 0, kBoxRows - 96, false, "rows 160..255 outside (a 160-row tensor)"},
      {"half", kBoxRows / 2, 0, kBoxRows / 2, false, "rows 128..255 outside (a 128-row tensor): 16 KB read, 16 KB filled"},
      {"out192", 64, 0, 64, false, "rows 64..255 outside (a 64-row tensor)"},
      {"out224", 32, 0, 32, false, "rows 32..255 outside (a 32-row tensor)"},
      {"all_out", kBoxRows / 2, kBoxRows, 0, false, "every row outside (the box starts at row 256 of a 128-row tensor)",
       kBoxRows, true},
      {"all_out_own", kBoxRows / 2, kBoxRows, 0, true,
       "every row outside, each CTA its own rows (CTA c's box at row 256 + 256 c of a 128-row tensor)"},
      {"all_out16", kBoxRows / 2, kBoxRows, 0, false, "every row outside, a 16 KB box (128 rows at row 256 of a 128-row tensor)",
       kBoxRows / 2},
      {"in16", all, 0, kBoxRows / 2, false, "control: a 16 KB box (128 rows), every row inside", kBoxRows / 2},
  };
  const int reps = c.reps(5, 2);
  DevBuf<unsigned long long> cyc(c.sm_count);
  for (const Case& k : cases) {
    const int box_rows = k.box_rows;
    CUtensorMap map = make_map(t.p, static_cast<uint64_t>(k.map_rows), static_cast<uint32_t>(box_rows));
    struct Run {
      int stages, grid;
    };
    std::vector<Run> runs = {{1, 1}, {1, c.sm_count}, {4, 1}, {4, c.sm_count}};
    if (k.sms_sweep)
      for (int g : {2, 8, 16, 33, 66})
        if (g < c.sm_count) runs.push_back({4, g});
    for (const Run& run : runs) {
      const int stages = run.stages, grid = run.grid;
      const int iters = c.quick ? 64 : 512;
      std::vector<double> per_box;
      for (int r = 0; r < reps + 1; ++r) {  // rep 0 warms the L2 (and the tensor map)
        cyc.zero();
        k_oob_ring<<<grid, 32, dyn>>>(map, cyc.p, box_rows, stages, k.y0, k.in_rows, iters,
                                      k.own ? static_cast<int>(own_rows) : 0, c.d_err);
        CK_LAUNCH();
        if (r == 0) continue;
        auto h = cyc.get();
        std::vector<double> v(h.begin(), h.begin() + grid);
        std::sort(v.begin(), v.end());
        per_box.push_back(v[v.size() / 2] / iters);  // the median CTA's cycles per box
      }
      const std::string where = grid == 1 ? "_one_sm" : grid == c.sm_count ? "_all_sms" : "_ctas" + std::to_string(grid);
      const std::string nm = std::string("tma_oob_") + k.name + "_s" + std::to_string(stages) + where;
      const std::string desc =
          std::string("Thread 0 of ") + (grid == 1 ? "one CTA" : "each of " + std::to_string(grid) + " CTAs (one per SM)") +
          " loads a " + std::to_string(box_rows * kRowBytes / 1024) + " KB bf16 box (64 columns x " +
          std::to_string(box_rows) + " rows, 128B swizzle, 256B L2 promotion, zero OOB fill) " + std::to_string(iters) +
          " times into a ring of " + std::to_string(stages) +
          " stage(s), waiting on a stage's full barrier before reusing it: " + k.what +
          ". Cycles per box = the median CTA's clock64 span / boxes, one sample per rep (rep 0, which warms the L2, "
          "dropped). Rows 0 and box_rows - 1 of stage 0 checked: the pattern inside the tensor, zero outside.";
      JObj p;
      p.num("box_rows", box_rows).num("map_rows", static_cast<double>(k.map_rows)).num("first_row", k.y0)
          .num("rows_inside", k.in_rows).num("stages", stages).num("ctas", grid).num("boxes", iters)
          .num("own_box", k.own ? 1 : 0);
      record(c, nm, G, "cycles", per_box, desc, p);
    }
  }
  // Clusters of 2 (a GEMM's 2x1 cluster loading B): multicast halves against each CTA's own whole box, inside, with
  // the second half outside (the 128-row tensor: a 256-wide tile on N = 128) and wholly outside; one cluster and every
  // SM (an even number of CTAs).
  const int dyn_a = 4 * (kBoxRows + kBoxRows / 2) * kRowBytes + 1024;  // stages with an A box too
  CK(cudaFuncSetAttribute(k_oob_cluster<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_a));
  CK(cudaFuncSetAttribute(k_oob_cluster<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_a));
  // The A operand: 128 MB of rows (65536 x 1024 bf16, K2's A at 65536x128x1024), beyond the L2: it streams from HBM.
  const long long a_rows = 1LL << 20;
  DevBuf<uint16_t> abuf(static_cast<size_t>(a_rows) * kCols);
  CK(cudaMemset(abuf.p, 0, static_cast<size_t>(a_rows) * kCols * 2));
  const CUtensorMap amap = make_map(abuf.p, static_cast<uint64_t>(a_rows), static_cast<uint32_t>(kBoxRows / 2));
  struct ClusterCase {
    const char* name;
    long long map_rows;
    int y0, in_rows;
    const char* what;
    bool own = false;
  } ccases[] = {
      {"in", all, 0, kBoxRows, "every row inside, every cluster the same box"},
      {"half", kBoxRows / 2, 0, kBoxRows / 2, "rows 128..255 outside (a 128-row tensor): with multicast, rank 1's half wholly outside"},
      {"all_out", kBoxRows / 2, kBoxRows, 0, "every row outside (the box at row 256 of a 128-row tensor)"},
      {"in_own", all, 0, kBoxRows, "every row inside, each cluster its own box (cluster i at row 256 i)", true},
      {"all_out_own", kBoxRows / 2, kBoxRows, 0, "every row outside, each cluster its own rows (cluster i at row 256 + 256 i)", true},
  };
  for (const ClusterCase& k : ccases)
   for (int with_a = 0; with_a < 2; ++with_a) {
    if (with_a && (k.own || std::string(k.name) == "all_out")) continue;  // the GEMM mix: inside and half outside
    const long long a_boxes = with_a ? a_rows / (kBoxRows / 2) : 0;
    for (int mc = 0; mc < 2; ++mc) {
      CUtensorMap map = make_map(t.p, static_cast<uint64_t>(k.map_rows), static_cast<uint32_t>(mc ? kBoxRows / 2 : kBoxRows));
      for (int grid : {2, c.sm_count - c.sm_count % 2}) {
        const int iters = c.quick ? 64 : 512;
        std::vector<double> per_box;
        for (int r = 0; r < reps + 1; ++r) {
          cyc.zero();
          ClusterLaunch lc(grid, 2, 32, with_a ? dyn_a : dyn);
          if (mc)
            CK(cudaLaunchKernelEx(&lc.cfg, k_oob_cluster<true>, map, amap, cyc.p, k.y0, k.in_rows, iters, k.own ? 1 : 0,
                                  a_boxes, c.d_err));
          else
            CK(cudaLaunchKernelEx(&lc.cfg, k_oob_cluster<false>, map, amap, cyc.p, k.y0, k.in_rows, iters, k.own ? 1 : 0,
                                  a_boxes, c.d_err));
          CK_LAUNCH();
          if (r == 0) continue;
          auto h = cyc.get();
          std::vector<double> v(h.begin(), h.begin() + grid);
          std::sort(v.begin(), v.end());
          per_box.push_back(v[v.size() / 2] / iters);
        }
        const std::string nm = std::string("tma_oob_c2_") + (with_a ? "gemm_" : "") + (mc ? "mc_" : "uc_") + k.name +
                               (grid == 2 ? "_one_cluster" : "_all_sms");
        const std::string desc =
            std::string("Clusters of 2 (") + std::to_string(grid) + " CTAs), thread 0 of each: a ring of 4 stages of one 32 KB " +
            "bf16 box (64 columns x 256 rows, 128B swizzle, zero OOB fill) per CTA, " +
            (mc ? "its two 128-row halves loaded by the two CTAs with .multicast::cluster into both"
                : "each CTA loading its whole box itself (unicast)") +
            "; a stage is reloaded when both CTAs waited on it (remote arrives on an empty barrier of count 2): " + k.what +
            (with_a ? ". Each stage also holds a 16 KB A box of the CTA's own (128 rows), walking a 128 MB tensor (from HBM)"
                    : "") +
            ". Cycles per stage = the median CTA's clock64 span / " + std::to_string(iters) +
            ", rep 0 dropped. Rows 0 and 255 of the last stage checked.";
        JObj p;
        p.num("box_rows", mc ? kBoxRows / 2 : kBoxRows).num("map_rows", static_cast<double>(k.map_rows)).num("first_row", k.y0)
            .num("rows_inside", k.in_rows).num("stages", 4).num("ctas", grid).num("cluster", 2).num("boxes", iters)
            .num("multicast", mc).num("own_box", k.own ? 1 : 0).num("a_box_rows", with_a ? kBoxRows / 2 : 0);
        record(c, nm, G, "cycles", per_box, desc, p);
      }
    }
  }
}

}  // namespace mb
