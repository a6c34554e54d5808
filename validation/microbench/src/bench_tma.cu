// TMA (cp.async.bulk.tensor) microbenchmarks: load latency vs box size (L2 / HBM), issue cost,
// sustained bandwidth of one SM and of all SMs, store latency (wait_group.read 0 and wait_group 0).
#include <algorithm>

#include "common.cuh"
#include "tma_util.cuh"

namespace mb {
namespace {

constexpr int kWarm = 16;

__global__ void k_fill_pattern(uint16_t* t, size_t rows) {
  size_t n = rows * kCols;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    t[i] = pattern(static_cast<uint32_t>(i / kCols), static_cast<uint32_t>(i % kCols));
}

// Latency of one TMA load: t0; arrive.expect_tx(bytes); cp.async.bulk.tensor.2d; try_wait loop; t1.
// Rep i loads rows [row0 + i*row_step, +box_rows) (mod rows_total). Also records the issue cost
// (t after the cp.async.bulk.tensor instruction - t0). After each rep, four elements are checked.
__global__ void k_tma_load_lat(const __grid_constant__ CUtensorMap map, unsigned long long* out,
                               unsigned long long* out_issue, int n, int box_rows, int row0, int row_step,
                               int rows_total, unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t bar;
  unsigned char* buf = align1024(dyn_raw);
  if (threadIdx.x != 0) return;
  const uint32_t b = smem_u32(&bar), dst = smem_u32(buf);
  mbar_init(b, 1);
  fence_mbar_init();
  prefetch_tmap(&map);
  const uint32_t bytes = box_rows * kRowBytes;
  unsigned bad = 0;
  for (int i = 0; i < n; ++i) {
    const int y = static_cast<int>((row0 + static_cast<long long>(i) * row_step) % rows_total);
    unsigned long long t0 = clk();
    mbar_arrive_expect_tx(b, bytes);
    tma_load_2d(dst, &map, 0, y, b);
    unsigned long long ti = clk();
    bool ok = mbar_wait<WAIT_TRY>(b, i & 1, err);
    unsigned long long t1 = clk();
    out[i] = t1 - t0;
    out_issue[i] = ti - t0;
    if (!ok) break;
    const uint32_t rs[2] = {0u, static_cast<uint32_t>(box_rows - 1)};
    const uint32_t cs[2] = {0u, 61u};
    for (uint32_t r : rs)
      for (uint32_t cc : cs) {
        uint16_t v = *reinterpret_cast<volatile uint16_t*>(buf + swz128(r, cc));
        if (v != pattern(y + r, cc)) ++bad;
      }
    fence_proxy_async_smem();  // generic reads above before the next async-proxy write
  }
  if (bad) atomicAdd(&err[ERR_DATA], bad);
}

// Sustained load bandwidth: thread 0 of each CTA keeps `stages` box loads in flight in a smem ring
// (full barriers only; nobody consumes the data). CTA k walks boxes starting at box k*boxes_per_cta
// (mod nboxes, a power of two; every box is whole and in bounds). If trace != nullptr, CTA 0 records per iteration
// [clock before the stage wait, after it, after the TMA issue].
// V (diagnostic variants of the producer's own stage wait + re-arm): 0 = try_wait (acquire) +
// arrive.expect_tx (release); 1 = both .relaxed; 2 = test_wait spin + arrive.expect_tx; 3 = as 0, the loads with an
// L2::cache_hint policy of createpolicy.fractional.L2::evict_first (fraction 1.0).
template <int V>
__global__ void k_tma_load_bw(const __grid_constant__ CUtensorMap map, unsigned long long* cyc,
                              unsigned long long* gt0, unsigned long long* gt1, int stages, int box_rows, int bytes,
                              int iters, long long boxes_per_cta, long long nboxes, unsigned long long* trace,
                              unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t full[32];
  unsigned char* buf = align1024(dyn_raw);
  if (threadIdx.x != 0) return;
  for (int k = 0; k < stages; ++k) mbar_init(smem_u32(&full[k]), 1);
  fence_mbar_init();
  prefetch_tmap(&map);
  if (blockIdx.x != 0) trace = nullptr;
  uint64_t policy = 0;  // V == 3: the loads' lines are the L2's first to evict
  if (V == 3) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  const uint32_t mask = static_cast<uint32_t>(nboxes - 1);
  uint32_t bidx = static_cast<uint32_t>(blockIdx.x * boxes_per_cta) & mask;
  const uint32_t full0 = smem_u32(&full[0]), buf0 = smem_u32(buf);
  unsigned long long g0 = gtime(), t0 = clk();
  bool ok = true, first = true;
  int s = 0;
  uint32_t ph = 0;  // parity of the current pass over the ring (flips when s wraps), as CUTLASS PipelineState
  for (int i = 0; i < iters && ok; ++i) {
    const uint32_t fb = full0 + 8u * s;
    unsigned long long ta = trace ? clk() : 0;
    if (!first) ok = mbar_wait<V == 1 ? WAIT_TRY_RELAXED : V == 2 ? WAIT_TEST : WAIT_TRY>(fb, ph ^ 1u, err);
    unsigned long long tb = trace ? clk() : 0;
    if (V == 1)
      mbar_arrive_expect_tx_relaxed(fb, bytes);
    else
      mbar_arrive_expect_tx(fb, bytes);
    if (V == 3)
      tma_load_2d_hint(buf0 + static_cast<uint32_t>(s) * bytes, &map, 0, static_cast<int>(bidx) * box_rows, fb, policy);
    else
      tma_load_2d(buf0 + static_cast<uint32_t>(s) * bytes, &map, 0, static_cast<int>(bidx) * box_rows, fb);
    if (trace) {
      unsigned long long tc = clk();
      trace[3 * i] = ta;
      trace[3 * i + 1] = tb;
      trace[3 * i + 2] = tc;
    }
    bidx = (bidx + 1) & mask;
    if (++s == stages) {
      s = 0;
      ph ^= 1u;
      first = false;
    }
  }
  // drain: the next `stages` ring positions hold the last `stages` loads (iters >= stages)
  for (int k = 0; k < stages && ok; ++k) {
    ok = mbar_wait<WAIT_TRY>(full0 + 8u * s, ph ^ 1u, err);
    if (++s == stages) {
      s = 0;
      ph ^= 1u;
    }
  }
  unsigned long long t1 = clk(), g1 = gtime();
  cyc[blockIdx.x] = t1 - t0;
  gt0[blockIdx.x] = g0;
  gt1[blockIdx.x] = g1;
}

// CUTLASS-style producer/consumer ring in one CTA: warp 0 lane 0 = producer (waits empty[s], then
// arrive.expect_tx(full[s]) + TMA load), warp 1 = consumer (all lanes wait full[s]; lane 0 arrives on
// empty[s]; data not read). Count-1 barriers. CTA k walks boxes from k*boxes_per_cta (mod nboxes, 2^n); with
// groups > 0 from (k mod groups)*boxes_per_cta, so that CTAs k, k+groups, ... read the same boxes at about the
// same time (as the CTAs of one GEMM tile row read the same A tiles); with consecutive, from (k / groups) *
// boxes_per_cta (CTAs k with the same k / groups read the same boxes).
__global__ void k_tma_pipe(const __grid_constant__ CUtensorMap map, unsigned long long* cyc, unsigned long long* gt0,
                           unsigned long long* gt1, int stages, int box_rows, int bytes, int iters,
                           long long boxes_per_cta, long long nboxes, unsigned* err, int groups = 0,
                           int consecutive = 0) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t full[32], empty[32];
  unsigned char* buf = align1024(dyn_raw);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), 1);
    }
    fence_mbar_init();
    prefetch_tmap(&map);
  }
  __syncthreads();
  unsigned long long g0 = gtime(), t0 = clk();
  const uint32_t full0 = smem_u32(&full[0]), empty0 = smem_u32(&empty[0]), buf0 = smem_u32(buf);
  if (warp == 0 && lane == 0) {
    const uint32_t mask = static_cast<uint32_t>(nboxes - 1);
    // (consecutive: groups of `groups` consecutive CTAs, CTA k starting at box (k / groups) * boxes_per_cta)
    const long long start = groups <= 0   ? static_cast<long long>(blockIdx.x)
                            : consecutive ? static_cast<long long>(blockIdx.x / groups)
                                          : static_cast<long long>(blockIdx.x % groups);
    uint32_t bidx = static_cast<uint32_t>(start * boxes_per_cta) & mask;
    bool ok = true, first = true;
    int s = 0;
    uint32_t ph = 0;
    for (int i = 0; i < iters && ok; ++i) {
      if (!first) ok = mbar_wait<WAIT_TRY>(empty0 + 8u * s, ph ^ 1u, err);
      const uint32_t fb = full0 + 8u * s;
      mbar_arrive_expect_tx(fb, bytes);
      tma_load_2d(buf0 + static_cast<uint32_t>(s) * bytes, &map, 0, static_cast<int>(bidx) * box_rows, fb);
      bidx = (bidx + 1) & mask;
      if (++s == stages) {
        s = 0;
        ph ^= 1u;
        first = false;
      }
    }
  } else if (warp == 1) {
    int s = 0;
    uint32_t ph = 0;
    for (int i = 0; i < iters; ++i) {
      bool ok = mbar_wait<WAIT_TRY>(full0 + 8u * s, ph, err);
      if (lane == 0) mbar_arrive(empty0 + 8u * s);
      __syncwarp();
      if (!ok) break;
      if (++s == stages) {
        s = 0;
        ph ^= 1u;
      }
    }
  }
  __syncthreads();
  unsigned long long t1 = clk(), g1 = gtime();
  if (threadIdx.x == 0) {
    cyc[blockIdx.x] = t1 - t0;
    gt0[blockIdx.x] = g0;
    gt1[blockIdx.x] = g1;
  }
}

// Burst: thread 0 issues N box loads back to back (each its own barrier and buffer), then waits for them
// in order. Pass 0 warms L2; pass 1 is recorded: issue[k] = clock after the k-th issue - t0,
// done[k] = clock when the k-th barrier's wait returned - t0.
__global__ void k_tma_burst(const __grid_constant__ CUtensorMap map, unsigned long long* issue, unsigned long long* done,
                            int nb, int box_rows, int bytes, unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t bars[64];
  unsigned char* buf = align1024(dyn_raw);
  if (threadIdx.x != 0) return;
  for (int k = 0; k < nb; ++k) mbar_init(smem_u32(&bars[k]), 1);
  fence_mbar_init();
  prefetch_tmap(&map);
  for (int pass = 0; pass < 2; ++pass) {
    unsigned long long t0 = clk();
    for (int k = 0; k < nb; ++k) {
      const uint32_t b = smem_u32(&bars[k]);
      mbar_arrive_expect_tx(b, bytes);
      tma_load_2d(smem_u32(buf + static_cast<size_t>(k) * bytes), &map, 0, k * box_rows, b);
      if (pass) issue[k] = clk() - t0;
    }
    for (int k = 0; k < nb; ++k) {
      bool ok = mbar_wait<WAIT_TRY>(smem_u32(&bars[k]), pass, err);
      if (pass) done[k] = clk() - t0;
      if (!ok) return;
    }
  }
}

// Several producer warps (lane 0 of each) each run their own ring of `stages` boxes (as k_tma_load_bw,
// without the trace), all in one CTA: does the per-SM rate scale with the number of issuing threads?
__global__ void k_tma_multi(const __grid_constant__ CUtensorMap map, unsigned long long* cyc, int stages, int box_rows,
                            int bytes, int iters, long long nboxes, unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t full[8][32];
  unsigned char* buf = align1024(dyn_raw);
  const int w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  if ((threadIdx.x & 31) == 0) {
    for (int s = 0; s < stages; ++s) mbar_init(smem_u32(&full[w][s]), 1);
    fence_mbar_init();
    prefetch_tmap(&map);
  }
  __syncthreads();
  unsigned long long t0 = clk();
  if ((threadIdx.x & 31) == 0) {
    const uint32_t buf0 = smem_u32(buf + static_cast<size_t>(w) * stages * bytes), full0 = smem_u32(&full[w][0]);
    const uint32_t mask = static_cast<uint32_t>(nboxes - 1);
    uint32_t bidx = static_cast<uint32_t>(w * 977) & mask;
    bool ok = true, first = true;
    int s = 0;
    uint32_t ph = 0;
    for (int i = 0; i < iters && ok; ++i) {
      const uint32_t fb = full0 + 8u * s;
      if (!first) ok = mbar_wait<WAIT_TRY>(fb, ph ^ 1u, err);
      mbar_arrive_expect_tx(fb, bytes);
      tma_load_2d(buf0 + static_cast<uint32_t>(s) * bytes, &map, 0, static_cast<int>(bidx) * box_rows, fb);
      bidx = (bidx + 1) & mask;
      if (++s == stages) {
        s = 0;
        ph ^= 1u;
        first = false;
      }
    }
    for (int k = 0; k < stages && ok; ++k) {
      ok = mbar_wait<WAIT_TRY>(full0 + 8u * s, ph ^ 1u, err);
      if (++s == stages) {
        s = 0;
        ph ^= 1u;
      }
    }
  }
  __syncthreads();
  unsigned long long t1 = clk();
  if (threadIdx.x == 0) cyc[0] = t1 - t0;
  (void)nw;
}

// TMA store latency: t0; cp.async.bulk.tensor.2d.global.shared::cta (one box); commit_group;
// wait_group.read 0 (full=0) or wait_group 0 (full=1); t1. Rep i writes rows (i*box_rows) mod rows_total
// of a small (L2-resident) tensor. The smem box holds pattern(r, col) for r in [0, box_rows).
__global__ void k_tma_store_lat(const __grid_constant__ CUtensorMap map, unsigned long long* out, int n,
                                int box_rows, int rows_total, int full) {
  extern __shared__ unsigned char dyn_raw[];
  unsigned char* buf = align1024(dyn_raw);
  for (int e = threadIdx.x; e < box_rows * kCols; e += blockDim.x) {
    uint32_t r = e / kCols, cc = e % kCols;
    *reinterpret_cast<uint16_t*>(buf + swz128(r, cc)) = pattern(r, cc);
  }
  fence_proxy_async_smem();  // make the generic-proxy smem writes visible to the TMA (async proxy)
  __syncthreads();
  if (threadIdx.x != 0) return;
  prefetch_tmap(&map);
  const uint32_t src = smem_u32(buf);
  for (int i = 0; i < n; ++i) {
    const int y = static_cast<int>((static_cast<long long>(i) * box_rows) % rows_total);
    unsigned long long t0 = clk();
    tma_store_2d(&map, 0, y, src);
    bulk_commit();
    if (full)
      bulk_wait0();
    else
      bulk_wait_read0();
    unsigned long long t1 = clk();
    out[i] = t1 - t0;
  }
  bulk_wait0();
}

}  // namespace

// GB/s of `bytes` delivered by a grid of `ctas` CTAs that recorded their %globaltimer at their start (g0) and end (g1):
// over the first CTA's start to the last one's end.
double grid_gbs(DevBuf<unsigned long long>& g0, DevBuf<unsigned long long>& g1, int ctas, double bytes) {
  auto h0 = g0.get(), h1 = g1.get();
  unsigned long long mn = ~0ull, mx = 0;
  for (int k = 0; k < ctas; ++k) {
    mn = std::min(mn, h0[k]);
    mx = std::max(mx, h1[k]);
  }
  return bytes / double(mx - mn);  // bytes/ns = GB/s
}

void fill_pattern(Ctx& c, uint16_t* t, size_t rows) {
  k_fill_pattern<<<c.sm_count * 8, 256>>>(t, rows);
  CK_LAUNCH();
}

void bench_tma(Ctx& c) {
  const std::string G = "tma";
  const int n = c.reps(1000, 64) + kWarm;
  const int box_list[6] = {8, 16, 32, 64, 128, 256};  // rows of 128 B: 1 KB .. 32 KB
  const size_t big_rows = (size_t(1) << 30) / kRowBytes;  // 1 GiB tensor (>> 50 MB L2): 8M rows
  const int l2_rows = (4 << 20) / kRowBytes;              // first 4 MiB of it: the L2-resident tensor

  DevBuf<uint16_t> big(big_rows * kCols);
  k_fill_pattern<<<c.sm_count * 8, 256>>>(big.p, big_rows);
  CK_LAUNCH();

  const int dyn_lat = 32 * 1024 + 1024;
  CK(cudaFuncSetAttribute(k_tma_load_lat, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_lat));
  DevBuf<unsigned long long> out(n), out_issue(n);

  // --- load latency vs box size, L2-resident (same box every rep) and HBM (fresh boxes after a flush)
  for (int where = 0; where < 2; ++where) {
    for (int bi = 0; bi < 6; ++bi) {
      const int br = box_list[bi];
      const int kb = br * kRowBytes / 1024;
      CUtensorMap map = make_map(big.p, where == 0 ? l2_rows : big_rows, br);
      int row0 = 0, step = 0, rows_total = l2_rows;
      if (where == 1) {
        row0 = bi * (1 << 20);  // each size walks its own 128 MiB slice, so nothing is re-read
        step = br;
        rows_total = static_cast<int>(big_rows);
        flush_l2(c);
      }
      out.zero();
      out_issue.zero();
      k_tma_load_lat<<<1, 32, dyn_lat>>>(map, out.p, out_issue.p, n, br, row0, step, rows_total, c.d_err);
      CK_LAUNCH();
      std::string nm = std::string("tma_load_latency_") + (where ? "hbm_" : "l2_") + std::to_string(kb) + "KB";
      std::string desc =
          std::string("One thread: t0=clock64; mbarrier.arrive.expect_tx(bytes); cp.async.bulk.tensor.2d (bf16 box ") +
          std::to_string(kCols) + "x" + std::to_string(br) + ", 128B swizzle, L2 promotion 256B); "
          "try_wait.parity loop until the barrier phase completes; t1=clock64. " +
          (where ? "HBM: L2 flushed (128 MiB read/write) before the series; each rep loads the next, never-read "
                   "box of a 1 GiB tensor (sequential walk; a TLB miss every 2 MiB may show in p90/max)."
                 : "L2: every rep loads the same box (L2 hit after the first; TMA does not allocate in L1).") +
          " Loaded data checked (4 elements per rep).";
      JObj params;
      params.num("box_bytes", br * kRowBytes).num("box_rows", br).num("box_cols_bf16", kCols).str("source",
                                                                                                  where ? "hbm" : "l2");
      auto lat = to_samples(out.get(), kWarm);
      auto iss = to_samples(out_issue.get(), kWarm);
      if (record(c, nm, G, "cycles", lat, desc, params) && bi == 0 && where == 0) {
        c.res->add("tma_load_issue_cost", G, "cycles", iss,
                   "From the L2 1 KB latency run: cycles from t0 to the clock read right after the "
                   "cp.async.bulk.tensor instruction (includes mbarrier.arrive.expect_tx and one clock read). "
                   "Issue cost seen by the issuing thread, not completion.",
                   JObj().num("box_bytes", 1024));
      }
    }
  }

  // --- sustained load bandwidth: one SM and all SMs, HBM and L2
  {
    struct BwCfg {
      int box_rows, stages;
    } bws[] = {{256, 6}, {64, 24}};
    const int dyn_bw = 192 * 1024 + 1024;
    CK(cudaFuncSetAttribute(k_tma_load_bw<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_bw));
    CK(cudaFuncSetAttribute(k_tma_load_bw<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_bw));
    CK(cudaFuncSetAttribute(k_tma_load_bw<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_bw));
    CK(cudaFuncSetAttribute(k_tma_pipe, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_bw));
    const int reps = c.reps(7, 2);
    DevBuf<unsigned long long> cyc(c.sm_count), g0(c.sm_count), g1(c.sm_count);
    for (int kind = 0; kind < 2; ++kind)  // 0 = single-thread ring, 1 = producer/consumer pipeline
    for (auto& bw : bws) {
      const int bytes = bw.box_rows * kRowBytes;
      for (int where = 0; where < 2; ++where) {        // 0 = HBM (1 GiB tensor), 1 = L2 (4 MiB tensor)
        for (int all = 0; all < 2; ++all) {            // 0 = one CTA, 1 = one CTA per SM
          const int grid = all ? c.sm_count : 1;
          // L2 source: 4 MiB for one CTA; 16 MiB for all SMs so that concurrent CTAs read different boxes
          const long long rows_total = where == 0 ? (long long)big_rows : (all ? 4ll * l2_rows : l2_rows);
          const long long nboxes = rows_total / bw.box_rows;
          const long long boxes_per_cta = std::max<long long>(1, nboxes / grid);
          // bytes per CTA: HBM all-SM: its 1/132 slice (~7.8 MiB); one SM: 32 MiB; L2: 16 / 32 MiB.
          long long per_cta = where == 0 ? (all ? boxes_per_cta * bytes : (32ll << 20))
                                         : (all ? (16ll << 20) : (32ll << 20));
          if (c.quick) per_cta /= 4;
          const int iters = static_cast<int>(per_cta / bytes);
          CUtensorMap map = make_map(big.p, rows_total, bw.box_rows);
          std::vector<double> gbs, bpc;
          for (int r = 0; r < reps + 1; ++r) {  // rep 0 is a warm-up
            if (where == 0) flush_l2(c);
            if (kind == 0)
              k_tma_load_bw<0><<<grid, 32, dyn_bw>>>(map, cyc.p, g0.p, g1.p, bw.stages, bw.box_rows, bytes, iters,
                                                     boxes_per_cta, nboxes, nullptr, c.d_err);
            else
              k_tma_pipe<<<grid, 64, dyn_bw>>>(map, cyc.p, g0.p, g1.p, bw.stages, bw.box_rows, bytes, iters,
                                               boxes_per_cta, nboxes, c.d_err);
            CK_LAUNCH();
            auto hc = cyc.get(), h0 = g0.get(), h1 = g1.get();
            unsigned long long mn = ~0ull, mx = 0, cmax = 0;
            for (int k = 0; k < grid; ++k) {
              mn = std::min(mn, h0[k]);
              mx = std::max(mx, h1[k]);
              cmax = std::max(cmax, hc[k]);
            }
            double total = double(iters) * bytes * grid;
            if (r > 0) {
              gbs.push_back(total / double(mx - mn));  // bytes/ns = GB/s
              bpc.push_back(double(iters) * bytes / double(cmax));
            }
          }
          std::string sfx = std::string(where == 0 ? "hbm" : "l2") + (all ? "_all_sms" : "_one_sm") + "_box" +
                            std::to_string(bytes / 1024) + "KB";
          const std::string who = all ? "each of 132 CTAs (1 per SM)" : "one CTA";
          std::string desc = (kind == 0 ? "Thread 0 of " + who + " keeps " + std::to_string(bw.stages) +
                                              " TMA box loads (" + std::to_string(bytes / 1024) +
                                              " KB each) in flight in a smem ring: it waits on the full barrier of the "
                                              "stage it reuses, then arrive.expect_tx + TMA (no consumer; this "
                                              "pattern is issue-bound, see tma_ring_trace_*). "
                                        : "CUTLASS-style pipeline in " + who + ": producer lane waits empty[s], "
                                              "arrive.expect_tx(full[s]) + TMA; a consumer warp waits full[s] and "
                                              "arrives empty[s] (data not read). " + std::to_string(bw.stages) +
                                              " stages of " + std::to_string(bytes / 1024) + " KB. ") +
                             (where == 0 ? "Source: 1 GiB tensor, each CTA its own slice, L2 flushed before each rep."
                                         : all ? "Source: 16 MiB tensor re-read (L2 hits after the warm-up rep); CTA k "
                                                 "starts at box k*(boxes/132), so concurrent CTAs read different boxes."
                                               : "Source: 4 MiB tensor re-read (L2 hits).") +
                             " GB/s = bytes / (last CTA end - first CTA start) by %globaltimer.";
          JObj p;
          p.num("box_bytes", bytes).num("stages", bw.stages).num("ctas", grid).num("bytes_per_cta",
                                                                                   double(iters) * bytes);
          const std::string nm = std::string(kind == 0 ? "tma_load_bw_ring_" : "tma_load_bw_pipe_") + sfx;
          if (record(c, nm, G, "GB/s", gbs, desc, p) && !all)
            c.res->add(nm + "_bytes_per_cycle", G, "bytes/cycle", bpc,
                       "Same run as " + nm + ": bytes / clock64 cycles of the CTA.", p);
        }
      }
    }
  }

  // --- all-SM L2 bandwidth when CTAs read the same boxes (GEMM-like sharing): 32 KB boxes, 6 stages, the
  // producer/consumer pipeline, 16 MiB L2-resident tensor; CTAs in `groups` groups, each group walking the
  // same boxes from its own start (groups = 1: every CTA reads the same box at about the same time).
  {
    const int box_rows = 256, stages = 6, bytes = box_rows * kRowBytes, dyn_bw = 192 * 1024 + 1024;
    const long long rows_total = 4ll * l2_rows, nboxes = rows_total / box_rows;
    long long per_cta = 16ll << 20;
    if (c.quick) per_cta /= 4;
    const int iters = static_cast<int>(per_cta / bytes);
    CUtensorMap map = make_map(big.p, rows_total, box_rows);
    DevBuf<unsigned long long> cyc(c.sm_count), g0(c.sm_count), g1(c.sm_count);
    const int reps = c.reps(7, 2);
    for (int groups : {1, 4, 16}) {
      std::vector<double> gbs;
      for (int r = 0; r < reps + 1; ++r) {
        k_tma_pipe<<<c.sm_count, 64, dyn_bw>>>(map, cyc.p, g0.p, g1.p, stages, box_rows, bytes, iters, nboxes / groups, nboxes,
                                               c.d_err, groups);
        CK_LAUNCH();
        if (r > 0) gbs.push_back(grid_gbs(g0, g1, c.sm_count, double(iters) * bytes * c.sm_count));
      }
      JObj p;
      p.num("box_bytes", bytes).num("stages", stages).num("ctas", c.sm_count).num("groups", groups).num("bytes_per_cta",
                                                                                                       double(iters) * bytes);
      record(c, "tma_load_bw_pipe_l2_all_sms_box32KB_shared" + std::to_string(groups), G, "GB/s", gbs,
             "As tma_load_bw_pipe_l2_all_sms_box32KB (CUTLASS-style pipeline, 6 stages of 32 KB, one CTA per SM, 16 MiB "
             "L2-resident tensor), but the CTAs form " + std::to_string(groups) +
                 " group(s): CTA k starts at box (k mod groups) * (boxes / groups), so the CTAs of a group read the same "
                 "boxes at about the same time (GEMM-like sharing; groups = 1: all CTAs read the same box). GB/s = all "
                 "bytes delivered / (last CTA end - first CTA start) by %globaltimer.",
             p);
    }
  }

  // --- one-SM ring diagnostics (L2 source): stage-count sweep, box shape, and a per-iteration trace
  {
    struct Sw {
      int box_rows, cols, stages;
      bool swz;
      int v;  // 0-2: k_tma_load_bw<v> (single-thread ring variants), 3: k_tma_pipe
    } sws[] = {
        {256, 64, 1, true, 0},  {256, 64, 2, true, 0},   {256, 64, 3, true, 0},  {256, 64, 4, true, 0},
        {64, 64, 1, true, 0},   {64, 64, 2, true, 0},    {64, 64, 4, true, 0},   {64, 64, 8, true, 0},
        {64, 64, 16, true, 0},  {128, 64, 12, true, 0},  {32, 64, 32, true, 0},  {8, 64, 32, true, 0},
        {64, 256, 6, false, 0}, {16, 256, 24, false, 0}, {256, 64, 6, false, 0},
        {64, 64, 8, true, 1},   {64, 64, 8, true, 2},    {64, 64, 8, true, 3},   {64, 64, 24, true, 3},
        {256, 64, 6, true, 3},  {128, 64, 12, true, 3},  {32, 64, 32, true, 3},  {8, 64, 32, true, 3},
        {256, 64, 2, true, 3},  {256, 64, 4, true, 3},   {64, 64, 2, true, 3},   {64, 64, 4, true, 3},
    };
    const char* vname[4] = {"ring", "ring_relaxed", "ring_testwait", "pipe"};
    const int dyn_bw = 192 * 1024 + 1024;
    DevBuf<unsigned long long> cyc(1), g0(1), g1(1);
    for (auto& w : sws) {
      const int bytes = w.box_rows * w.cols * 2;
      const long long rows_total = (4ll << 20) / (w.cols * 2);  // 4 MiB tensor: L2 hits
      const long long nboxes = rows_total / w.box_rows;
      const int iters = static_cast<int>((c.quick ? (4ll << 20) : (16ll << 20)) / bytes);
      CUtensorMap map = make_map(big.p, rows_total, w.box_rows, w.cols, w.swz);
      std::vector<double> bpc;
      for (int r = 0; r < (c.quick ? 2 : 4); ++r) {
        if (w.v == 0)
          k_tma_load_bw<0><<<1, 32, dyn_bw>>>(map, cyc.p, g0.p, g1.p, w.stages, w.box_rows, bytes, iters, 1, nboxes,
                                              nullptr, c.d_err);
        else if (w.v == 1)
          k_tma_load_bw<1><<<1, 32, dyn_bw>>>(map, cyc.p, g0.p, g1.p, w.stages, w.box_rows, bytes, iters, 1, nboxes,
                                              nullptr, c.d_err);
        else if (w.v == 2)
          k_tma_load_bw<2><<<1, 32, dyn_bw>>>(map, cyc.p, g0.p, g1.p, w.stages, w.box_rows, bytes, iters, 1, nboxes,
                                              nullptr, c.d_err);
        else
          k_tma_pipe<<<1, 64, dyn_bw>>>(map, cyc.p, g0.p, g1.p, w.stages, w.box_rows, bytes, iters, 1, nboxes, c.d_err);
        CK_LAUNCH();
        if (r > 0) bpc.push_back(double(iters) * bytes / double(cyc.get()[0]));
      }
      std::string nm = std::string("tma_load_bw_sweep_") + vname[w.v] + "_l2_one_sm_box" + std::to_string(w.cols) + "x" +
                       std::to_string(w.box_rows) + (w.swz ? "_swz128" : "_noswz") + "_s" + std::to_string(w.stages);
      const char* vdesc[4] = {
          "single-thread ring (as tma_load_bw_ring_*: try_wait on the stage's own full barrier, then "
          "arrive.expect_tx + TMA)",
          "single-thread ring with mbarrier.try_wait.parity.relaxed and mbarrier.arrive.expect_tx.relaxed",
          "single-thread ring waiting with a test_wait spin",
          "producer/consumer pipeline (as tma_load_bw_pipe_*)"};
      record(c, nm, G, "bytes/cycle", bpc,
             std::string("Diagnostic sweep, one CTA, ") + vdesc[w.v] + ": box " + std::to_string(w.cols) +
                 " bf16 x " + std::to_string(w.box_rows) + " rows (" + std::to_string(bytes) + " B), " +
                 (w.swz ? "128B swizzle" : "no swizzle") + ", " + std::to_string(w.stages) +
                 " stages in flight, 4 MiB L2-resident source. bytes / clock64 cycles.",
             JObj().num("box_bytes", bytes).num("box_cols", w.cols).num("box_rows", w.box_rows).num("stages", w.stages)
                 .boolean("swizzle128", w.swz).str("variant", vname[w.v]));
    }
    // trace of the 32 KB x 6-stage ring
    {
      const int br = 256, stages = 6, bytes = br * kRowBytes, iters = 96;
      CUtensorMap map = make_map(big.p, l2_rows, br);
      DevBuf<unsigned long long> tr(3 * iters);
      k_tma_load_bw<0><<<1, 32, dyn_bw>>>(map, cyc.p, g0.p, g1.p, stages, br, bytes, iters, 1, l2_rows / br, tr.p,
                                       c.d_err);
      CK_LAUNCH();
      auto h = tr.get();
      std::vector<double> wait, issue, interval;
      for (int i = 16; i < iters; ++i) {
        wait.push_back(double(h[3 * i + 1] - h[3 * i]));
        issue.push_back(double(h[3 * i + 2] - h[3 * i + 1]));
        interval.push_back(double(h[3 * i + 2] - h[3 * (i - 1) + 2]));
      }
      JObj p;
      p.num("box_bytes", bytes).num("stages", stages).str("source", "l2");
      if (record(c, "tma_ring_trace_stage_wait", G, "cycles", wait,
                 "Trace of one-SM ring (32 KB boxes, 6 stages, L2 source), iterations 16..95: cycles the producer "
                 "thread spends in the full-barrier wait of the stage it is about to reuse.",
                 p)) {
        c.res->add("tma_ring_trace_issue", G, "cycles", issue,
                   "Same trace: cycles from the wait's return to after the cp.async.bulk.tensor issue (expect_tx "
                   "arrive + TMA issue, incl. a clock read).",
                   p);
        c.res->add("tma_ring_trace_interval", G, "cycles", interval,
                   "Same trace: cycles between consecutive TMA issues (steady-state per-box service interval).", p);
      }
    }
  }

  // --- burst issue / completion timeline (L2 source)
  {
    struct Bu {
      int box_rows, nb;
    } bus[] = {{256, 6}, {64, 24}, {8, 48}};
    const int dyn = 192 * 1024 + 1024;
    CK(cudaFuncSetAttribute(k_tma_burst, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
    DevBuf<unsigned long long> iss(64), dn(64);
    for (auto& b : bus) {
      const int bytes = b.box_rows * kRowBytes;
      CUtensorMap map = make_map(big.p, l2_rows, b.box_rows);
      std::vector<double> iss_all, done_all, iss_int, done_int;
      for (int r = 0; r < (c.quick ? 2 : 8); ++r) {
        k_tma_burst<<<1, 32, dyn>>>(map, iss.p, dn.p, b.nb, b.box_rows, bytes, c.d_err);
        CK_LAUNCH();
        auto hi = iss.get(), hd = dn.get();
        iss_all.push_back(double(hi[b.nb - 1]));
        done_all.push_back(double(hd[b.nb - 1]));
        for (int k = 1; k < b.nb; ++k) {
          iss_int.push_back(double(hi[k] - hi[k - 1]));
          done_int.push_back(double(hd[k] - hd[k - 1]));
        }
      }
      const std::string tag = "tma_burst_" + std::to_string(bytes / 1024) + "KBx" + std::to_string(b.nb);
      JObj p;
      p.num("box_bytes", bytes).num("boxes", b.nb).str("source", "l2");
      const std::string base = "One thread issues " + std::to_string(b.nb) + " TMA loads of " +
                               std::to_string(bytes / 1024) + " KB back to back (own barrier and buffer each, L2-"
                               "resident source, second pass of two), then waits for them in order. ";
      if (record(c, tag + "_issue_all", G, "cycles", iss_all, base + "Value: cycles from t0 to after the last issue.",
                 p)) {
        c.res->add(tag + "_complete_all", G, "cycles", done_all, base + "Value: cycles from t0 until the last barrier "
                   "completed (all data landed).", p);
        c.res->add(tag + "_issue_interval", G, "cycles", iss_int, base + "Value: cycles between consecutive issues.", p);
        c.res->add(tag + "_complete_interval", G, "cycles", done_int,
                   base + "Value: cycles between consecutive completions (observed in order).", p);
      }
    }
  }
  // --- several producer warps in one CTA (L2 source, 8 KB and 1 KB boxes)
  {
    struct Mu {
      int box_rows, stages, warps;
    } mus[] = {{64, 4, 1}, {64, 4, 2}, {64, 4, 4}, {64, 4, 6}, {8, 8, 1}, {8, 8, 4}};
    const int dyn = 192 * 1024 + 1024;
    CK(cudaFuncSetAttribute(k_tma_multi, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
    DevBuf<unsigned long long> cyc(1);
    for (auto& m : mus) {
      const int bytes = m.box_rows * kRowBytes;
      const long long nboxes = l2_rows / m.box_rows;
      const int iters = static_cast<int>((c.quick ? (1ll << 20) : (4ll << 20)) / bytes);
      CUtensorMap map = make_map(big.p, l2_rows, m.box_rows);
      std::vector<double> bpc;
      for (int r = 0; r < (c.quick ? 2 : 4); ++r) {
        k_tma_multi<<<1, 32 * m.warps, dyn>>>(map, cyc.p, m.stages, m.box_rows, bytes, iters, nboxes, c.d_err);
        CK_LAUNCH();
        if (r > 0) bpc.push_back(double(iters) * bytes * m.warps / double(cyc.get()[0]));
      }
      record(c, "tma_load_bw_multi_producer_l2_box" + std::to_string(bytes / 1024) + "KB_" + std::to_string(m.warps) +
                    "warps",
             G, "bytes/cycle", bpc,
             "One CTA; " + std::to_string(m.warps) + " producer warp(s), lane 0 of each runs its own " +
                 std::to_string(m.stages) + "-stage ring of " + std::to_string(bytes / 1024) +
                 " KB TMA loads (L2-resident 4 MiB source). SM-wide bytes / clock64 cycles.",
             JObj().num("box_bytes", bytes).num("stages_per_warp", m.stages).num("producer_warps", m.warps));
    }
  }

  // --- store latency
  {
    const int st_rows = (1 << 20) / kRowBytes;  // 1 MiB destination tensor: stays in L2
    DevBuf<uint16_t> dstt(static_cast<size_t>(st_rows) * kCols);
    CK(cudaFuncSetAttribute(k_tma_store_lat, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_lat));
    for (int full = 0; full < 2; ++full) {
      for (int bi = 0; bi < 6; ++bi) {
        const int br = box_list[bi];
        const int kb = br * kRowBytes / 1024;
        CK(cudaMemset(dstt.p, 0xFF, dstt.n * sizeof(uint16_t)));
        CUtensorMap map = make_map(dstt.p, st_rows, br);
        out.zero();
        k_tma_store_lat<<<1, 128, dyn_lat>>>(map, out.p, n, br, st_rows, full);
        CK_LAUNCH();
        // verify the rows written (rows [0, min(n*br, st_rows)) hold pattern(row % br, col))
        auto h = dstt.get();
        long long rows_written = std::min<long long>(static_cast<long long>(n) * br, st_rows);
        unsigned bad = 0;
        for (long long r = 0; r < rows_written; r += 7)
          for (int cc = 0; cc < kCols; cc += 5)
            if (h[r * kCols + cc] != pattern(static_cast<uint32_t>(r % br), cc)) ++bad;
        std::string nm =
            std::string("tma_store_latency_") + (full ? "wait_group0_" : "wait_group_read0_") + std::to_string(kb) + "KB";
        std::string desc = std::string("One thread: t0; cp.async.bulk.tensor.2d.global.shared::cta.bulk_group (box 64x") +
                           std::to_string(br) + " bf16, 128B swizzle) to a 1 MiB (L2-resident) tensor; "
                           "cp.async.bulk.commit_group; " +
                           (full ? "cp.async.bulk.wait_group 0 (writes complete/visible)"
                                 : "cp.async.bulk.wait_group.read 0 (smem source read, may be reused)") +
                           "; t1. Written data verified on the host.";
        if (bad) {
          c.take_err();
          c.res->fail(nm, "store data mismatch: " + std::to_string(bad));
          continue;
        }
        record(c, nm, G, "cycles", to_samples(out.get(), kWarm), desc,
               JObj().num("box_bytes", br * kRowBytes).num("box_rows", br).str("wait", full ? "wait_group 0"
                                                                                              : "wait_group.read 0"));
      }
    }
  }
}


// The sharing degree (group "sharing", tma_sharing_*): every SM walks the boxes of a 16 MiB L2-resident tensor with the
// CUTLASS-style pipeline (6 stages of 32 KB, 16 MiB per CTA; --quick 4), the CTAs that start at the same box reading
// the same boxes at about the same time: CTAs k mod G (mod{G}: G groups, the readers of a box G apart in launch
// order) or k / G (consec{G}: groups of G consecutive CTAs). Run it under Nsight Compute for the L2 requests per
// delivered byte (validation/microbench/tools/ncu_sharing.py); GB/s = all bytes / (last CTA end - first CTA start).
void bench_tma_sharing(Ctx& c) {
  const std::string G = "sharing";
  const int box_rows = 256, stages = 6, bytes = box_rows * kRowBytes, dyn_bw = 192 * 1024 + 1024;
  const long long rows_total = (16ll << 20) / kRowBytes, nboxes = rows_total / box_rows;
  DevBuf<uint16_t> t(static_cast<size_t>(rows_total) * kCols);
  fill_pattern(c, t.p, static_cast<size_t>(rows_total));
  CK(cudaFuncSetAttribute(k_tma_pipe, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_bw));
  long long per_cta = 16ll << 20;
  if (c.quick) per_cta /= 4;
  const int iters = static_cast<int>(per_cta / bytes);
  CUtensorMap map = make_map(t.p, rows_total, box_rows);
  DevBuf<unsigned long long> cyc(c.sm_count), g0(c.sm_count), g1(c.sm_count);
  const int reps = c.reps(7, 2);
  struct Case {
    int groups;
    bool consecutive;
  };
  std::vector<Case> cases;
  for (int g : {1, 2, 3, 4, 6, 8, 12, 16, 24, 33, 66, 132}) cases.push_back({g, false});
  for (int g : {2, 4, 8, 16, 33}) cases.push_back({g, true});
  for (const Case& k : cases) {
    // Distinct starts: G for k mod G, ceil(ctas / G) for groups of G consecutive CTAs.
    const int starts = k.consecutive ? (c.sm_count + k.groups - 1) / k.groups : k.groups;
    std::vector<double> gbs;
    for (int r = 0; r < reps + 1; ++r) {
      k_tma_pipe<<<c.sm_count, 64, dyn_bw>>>(map, cyc.p, g0.p, g1.p, stages, box_rows, bytes, iters, nboxes / starts, nboxes,
                                             c.d_err, k.groups, k.consecutive ? 1 : 0);
      CK_LAUNCH();
      if (r > 0) gbs.push_back(grid_gbs(g0, g1, c.sm_count, double(iters) * bytes * c.sm_count));
    }
    JObj p;
    p.num("box_bytes", bytes).num("stages", stages).num("ctas", c.sm_count).num("groups", k.groups)
        .num("consecutive", k.consecutive ? 1 : 0).num("bytes_per_cta", double(iters) * bytes).num("launches", reps + 1);
    const std::string name = std::string("tma_sharing_") + (k.consecutive ? "consec" : "mod") + std::to_string(k.groups) + "_bw";
    record(c, name, G, "GB/s", gbs,
           std::string("Every SM (one CTA each) walks the 32 KB boxes of a 16 MiB L2-resident tensor with the CUTLASS-style "
                       "pipeline (6 stages), ") +
               (k.consecutive ? "CTA k from box (k / " + std::to_string(k.groups) + ") x (boxes / " + std::to_string(starts) +
                                    "): groups of " + std::to_string(k.groups) + " consecutive CTAs read the same boxes"
                              : "CTA k from box (k mod " + std::to_string(k.groups) + ") x (boxes / " + std::to_string(k.groups) +
                                    "): CTAs " + std::to_string(k.groups) + " apart in launch order read the same boxes") +
               " at about the same time. GB/s = all bytes delivered / (last CTA end - first CTA start) by %globaltimer; "
               "params.launches: launches of k_tma_pipe (the first a warm-up) for Nsight Compute's counters.",
           p);
  }
}

// Group "dirtystart": what another kernel's stores, left dirty in the L2, cost a streaming read that follows. Before each
// timed read: flush_l2 (the L2 then holds clean lines of another buffer), then X MiB of a third buffer written (X = 0:
// nothing), by cudaMemset, by a kernel's st.global stores (k_fill_pattern) or by TMA stores (k_tma_store_fill), which
// leaves up to X MiB of dirty lines;
// then every SM (one CTA each) streams its own 1 MiB of a 256 MiB tensor through a 6-stage ring of 32 KB TMA boxes
// (k_tma_load_bw, as tma_load_bw_ring_hbm_all_sms_box32KB): 132 MiB read from HBM, which evicts the whole L2. If the
// read's misses evict the dirty lines and HBM writes them back while it reads, the read takes about X MiB / HBM's rate
// longer. The memset's dirt is read once with the loads' default policy and once with an L2::evict_first hint (what a
// GEMM's streamed operand may carry: its own lines then go first, the dirty ones may stay), and once read by 16 SMs
// only (8.25 MiB each). Every rep takes all
// conditions in turn (drift cancels in the differences). Recorded per condition: the read's span by %globaltimer (first
// CTA start to last CTA end) and the CUDA events around its launch, and the span less that of X = 0 in the same rep.
// The dirtystart group's TMA stores: thread 0 of each CTA stores one smem box (box_rows x 128 bytes, written once) to
// boxes k, k + grid, ... of `boxes` (cp.async.bulk.tensor.2d stores, one bulk group, waited for at the end).
__global__ void k_tma_store_fill(const __grid_constant__ CUtensorMap map, long long boxes, int box_rows) {
  extern __shared__ unsigned char dyn_raw[];
  unsigned char* buf = align1024(dyn_raw);
  for (int i = threadIdx.x; i < box_rows * kRowBytes / 4; i += blockDim.x) reinterpret_cast<uint32_t*>(buf)[i] = i;
  fence_proxy_async_smem();
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (long long b = blockIdx.x; b < boxes; b += gridDim.x) tma_store_2d(&map, 0, static_cast<int>(b * box_rows), smem_u32(buf));
  bulk_commit();
  bulk_wait0();
}

void bench_dirty_start(Ctx& c) {
  const std::string G = "dirtystart";
  const int box_rows = 256, stages = 6, bytes = box_rows * kRowBytes, dyn_bw = 192 * 1024 + 1024;
  const long long rows_total = (256ll << 20) / kRowBytes, nboxes = rows_total / box_rows;
  const int iters = static_cast<int>((1ll << 20) / bytes);  // 1 MiB per CTA
  DevBuf<uint16_t> t(static_cast<size_t>(rows_total) * kCols);
  k_fill_pattern<<<c.sm_count * 8, 256>>>(t.p, static_cast<size_t>(rows_total));
  CK_LAUNCH();
  DevBuf<uint16_t> dirty((256ull << 20) / sizeof(uint16_t));
  CUtensorMap map = make_map(t.p, static_cast<uint64_t>(rows_total), box_rows);
  CK(cudaFuncSetAttribute(k_tma_load_bw<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_bw));
  CK(cudaFuncSetAttribute(k_tma_load_bw<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_bw));
  DevBuf<unsigned long long> cyc(c.sm_count), g0(c.sm_count), g1(c.sm_count);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const int mib[] = {0, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 64, 96};
  constexpr int kX = sizeof(mib) / sizeof(mib[0]);
  // The variants: {how the dirt is written (0 memset, 1 a kernel's st.global stores, 2 TMA stores), the read's policy
  // (0 default, 1 evict_first), the reading CTAs (0: one per SM; 16: the same 132 MiB read by 16 SMs, 8.25 MiB each,
  // at about half of HBM's rate: whether write-backs cost a read that leaves HBM time to spare)}.
  constexpr int kV = 5;
  const int variants[kV][3] = {{0, 0, 0}, {0, 1, 0}, {1, 0, 0}, {2, 0, 0}, {0, 0, 16}};
  const char* names[kV] = {"normal", "evict_first", "stores", "tmastores", "slack16"};
  CUtensorMap dirty_map = make_map(dirty.p, (256ull << 20) / kRowBytes, box_rows);
  CK(cudaFuncSetAttribute(k_tma_store_fill, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes + 1024));
  const int reps = c.reps(15, 3);
  std::vector<double> span[kV][kX], event[kV][kX], extra[kV][kX];
  unsigned char v = 0;
  for (int r = 0; r <= reps; ++r)  // rep 0 warms up
    for (int h = 0; h < kV; ++h)
      for (int x = 0; x < kX; ++x) {
        flush_l2(c);
        if (mib[x] > 0) {
          if (variants[h][0] == 0)
            CK(cudaMemset(dirty.p, ++v, static_cast<size_t>(mib[x]) << 20));
          else if (variants[h][0] == 1)
            k_fill_pattern<<<c.sm_count * 8, 256>>>(dirty.p, (static_cast<size_t>(mib[x]) << 20) / kRowBytes);
          else
            k_tma_store_fill<<<c.sm_count, 128, bytes + 1024>>>(dirty_map, (static_cast<long long>(mib[x]) << 20) / bytes, box_rows);
        }
        CK(cudaEventRecord(e0));
        const int grid = variants[h][2] > 0 ? variants[h][2] : c.sm_count;
        const int its = iters * c.sm_count / grid;  // the same bytes in all
        const long long per = nboxes / grid;
        if (variants[h][1] == 0)
          k_tma_load_bw<0><<<grid, 32, dyn_bw>>>(map, cyc.p, g0.p, g1.p, stages, box_rows, bytes, its, per, nboxes, nullptr,
                                                 c.d_err);
        else
          k_tma_load_bw<3><<<grid, 32, dyn_bw>>>(map, cyc.p, g0.p, g1.p, stages, box_rows, bytes, its, per, nboxes, nullptr,
                                                 c.d_err);
        CK(cudaEventRecord(e1));
        CK_LAUNCH();
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        auto h0 = g0.get(), h1 = g1.get();
        const unsigned long long mn = *std::min_element(h0.begin(), h0.begin() + grid),
                                 mx = *std::max_element(h1.begin(), h1.begin() + grid);
        if (r == 0) continue;
        span[h][x].push_back(double(mx - mn) / 1000.0);
        event[h][x].push_back(1000.0 * ms);
        extra[h][x].push_back(span[h][x].back() - span[h][0].back());
      }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  const double read_mib = double(iters) * bytes * c.sm_count / (1 << 20);
  for (int h = 0; h < kV; ++h)
    for (int x = 0; x < kX; ++x) {
      const std::string base = std::string("dirtystart_") + names[h] + "_" + std::to_string(mib[x]) + "MiB";
      const std::string what = "flush_l2, then " + std::to_string(mib[x]) + " MiB of another buffer written (dirty lines) by " +
                               (variants[h][0] == 2   ? "TMA stores of 32 KB boxes, one CTA per SM (k_tma_store_fill)"
                                : variants[h][0] == 1 ? "a kernel's st.global stores (k_fill_pattern)"
                                                      : "cudaMemset") + ", then " +
                               (variants[h][2] > 0 ? std::to_string(variants[h][2]) + " CTAs (on as many SMs) each stream " +
                                                         std::to_string(c.sm_count * 100 / variants[h][2] / 100) + "." +
                                                         std::to_string(c.sm_count * 100 / variants[h][2] % 100) + " MiB"
                                                   : std::to_string(c.sm_count) + " CTAs (one per SM) each stream 1 MiB") +
                               " of their own of a 256 MiB tensor: " +
                               "a 6-stage ring of 32 KB TMA boxes, " + (variants[h][1] ? "each load with an L2::cache_hint of "
                               "createpolicy.fractional.L2::evict_first 1.0" : "the loads without a cache hint") + ". ";
      JObj p;
      p.num("dirty_mib", mib[x]).num("read_mib", read_mib).num("box_bytes", bytes).num("stages", stages).num("ctas", c.sm_count)
          .boolean("evict_first", variants[h][1] == 1).boolean("kernel_stores", variants[h][0] == 1)
          .boolean("tma_stores", variants[h][0] == 2)
          .num("read_ctas", variants[h][2] > 0 ? variants[h][2] : c.sm_count);
      record(c, base + "_span_us", G, "us", span[h][x], what + "Value: the read's span, first CTA start to last CTA end by %globaltimer.", p);
      record(c, base + "_event_us", G, "us", event[h][x], what + "Value: CUDA events around the read's launch (after the writes).", p);
      if (x > 0)
        record(c, base + "_extra_us", G, "us", extra[h][x], what + "Value: the span less that of the same rep without writes.", p);
    }
}

}  // namespace mb
