// The epilogue's store step, subtile after subtile, as an sm90 warp-specialized GEMM's two consumer warpgroups run
// it (group "epilogue", epi_*): each of the 256 threads converts its 16 accumulator values of a 128x32 bf16
// subtile (alpha * acc, rounded to bf16 pairs), writes them to shared memory with two stmatrix.x4 (the 64-byte
// swizzle a 32-column bf16 subtile has), fences the generic-proxy writes for the async proxy, and the math threads
// sync on a named barrier; one thread stores the subtile with a TMA store, commits it and waits until at most one
// store still reads shared memory (the next of the two buffers is free), and the threads sync again. One thread
// times the whole loop with clock64: cycles per subtile, on one SM alone and on every SM at once (the stores then
// share the L2). Variants leave parts out, so that each part's cost shows as a difference; two add a ninth warp
// whose thread keeps a ring of TMA loads in flight (4 stages of 16 KB boxes from an L2-resident source, as a
// producer loading the next tile's stages during the epilogue), alone and beside the whole store step. The epi_wg_*
// variants run it as one warpgroup of a pingpong kernel does: 128 threads, 64x32 subtiles (4 KB), the same 16 values
// per thread.
#include <cuda_bf16.h>

#include "common.cuh"
#include "tma_util.cuh"

namespace mb {
namespace {

constexpr int kThreads = 256;       // two warpgroups (the epi_wg_* variants: one, 128 threads)
constexpr int kRows = 128, kSubCols = 32;  // the subtile: 128 x 32 bf16, 64-byte rows (epi_wg_*: 64 x 32)
constexpr int kSubBytes = kRows * kSubCols * 2;
// A subtile's rows for a CTA of `threads` math threads: each warp writes 16 rows, each thread 16 values.
constexpr int sub_rows(int threads) { return threads / 2; }
constexpr int kRing = 16;           // subtiles each CTA writes in turn (16 x 8 KB per CTA: the L2 holds them all)
constexpr int kSubtiles = 2048;     // per launch
constexpr int kLoadStages = 4, kLoadRows = 128, kLoadBytes = kLoadRows * kRowBytes;  // the load ring: 16 KB boxes
constexpr long long kLoadSourceRows = (8ll << 20) / kRowBytes;  // an 8 MiB source: it stays in the L2
constexpr long long kSpinCycles = 600000;  // how long the loads run alone

enum EpiMode : int { kConv = 1, kFenceBars = 2, kStore = 4, kLoads = 8, kNoFence = 16 };  // kNoFence: the barriers without the fence

DEVI void named_bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
DEVI void bulk_wait_read1() { asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory"); }
DEVI void stsm_x4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(a), "r"(b), "r"(c),
               "r"(d)
               : "memory");
}
DEVI uint32_t pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// Byte offset of row r, 16-byte chunk c of a subtile with the 64-byte swizzle (chunk c ^ ((r >> 1) & 3)): the eight
// rows of one 8x8 matrix fall in eight different 16-byte bank groups.
DEVI uint32_t swz64_offset(uint32_t r, uint32_t c) { return r * 64u + ((c ^ ((r >> 1) & 3u)) << 4); }

// The ninth warp's thread: TMA loads into a ring of kLoadStages boxes until thread 0 sets `stop`; reports the bytes
// landed and the cycles from the first issue to the last landing.
DEVI void load_ring(const CUtensorMap* src, uint32_t ring, uint32_t full0, volatile int* stop, unsigned long long* out,
                    unsigned* err) {
  uint32_t row = (blockIdx.x * 977u) % static_cast<uint32_t>(kLoadSourceRows / kLoadRows);
  const unsigned long long t0 = clk();
  long long landed = 0;
  int i = 0;
  bool ok = true;
  for (;; ++i) {
    const int s = i % kLoadStages;
    if (i >= kLoadStages) {
      ok = mbar_wait<WAIT_TRY>(full0 + 8u * s, static_cast<uint32_t>(((i - kLoadStages) / kLoadStages) & 1), err);
      if (!ok) break;
      ++landed;
    }
    if (*stop) break;
    mbar_arrive_expect_tx(full0 + 8u * s, kLoadBytes);
    tma_load_2d(ring + static_cast<uint32_t>(s) * kLoadBytes, src, 0, static_cast<int>(row * kLoadRows), full0 + 8u * s);
    row = (row + 1) % static_cast<uint32_t>(kLoadSourceRows / kLoadRows);
  }
  // The loads still in flight: those after the last one waited for (load j lands in slot j % kLoadStages, on that
  // slot's (j / kLoadStages)-th phase).
  for (int j = i - kLoadStages + 1 > 0 ? i - kLoadStages + 1 : 0; ok && j < i; ++j) {
    ok = mbar_wait<WAIT_TRY>(full0 + 8u * (j % kLoadStages), static_cast<uint32_t>((j / kLoadStages) & 1), err);
    if (ok) ++landed;
  }
  const unsigned long long t1 = clk();
  out[2] = static_cast<unsigned long long>(landed) * kLoadBytes;
  out[3] = t1 - t0;
}

template <int MODE, int THREADS>
__global__ void __launch_bounds__(THREADS + 32) k_epi(const __grid_constant__ CUtensorMap map,
                                                        const __grid_constant__ CUtensorMap src, float alpha,
                                                        unsigned long long* out, unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t full[kLoadStages];
  __shared__ volatile int stop;
  unsigned char* base = align1024(dyn_raw);
  const uint32_t tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  if (tid == 0) {
    stop = 0;
    for (int k = 0; k < kLoadStages; ++k) mbar_init(smem_u32(&full[k]), 1);
    fence_mbar_init();
  }
  __syncthreads();
  if (warp == THREADS / 32) {
    if ((MODE & kLoads) && lane == 0) {
      prefetch_tmap(&src);
      load_ring(&src, smem_u32(base) + 2 * kSubBytes, smem_u32(&full[0]), &stop, out + blockIdx.x * 4, err);
    }
    return;
  }
  // Each warp writes rows 16w .. 16w + 15: two stmatrix.x4, each four 8x8 matrices (the four 16-byte chunks of 8
  // rows); lane l gives the address of row l % 8 of matrix l / 8.
  const uint32_t r0 = warp * 16u + (lane & 7u), chunk = lane >> 3;
  const uint32_t off0 = swz64_offset(r0, chunk), off1 = swz64_offset(r0 + 8u, chunk);
  float acc[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) acc[i] = static_cast<float>(tid * 16u + static_cast<uint32_t>(i)) * 1e-3f;
  if (tid == 0) prefetch_tmap(&map);
  named_bar_sync(1, THREADS);
  const unsigned long long t0 = clk();
  if (MODE == kLoads) {  // the loads alone
    if (tid == 0) spin_cycles(kSpinCycles);
  }
  for (int e = 0; e < (MODE == kLoads ? 0 : kSubtiles); ++e) {
    const uint32_t buf = smem_u32(base) + static_cast<uint32_t>(e & 1) * kSubBytes;
    uint32_t pk[8];
#pragma unroll
    for (int i = 0; i < 16; ++i) asm volatile("" : "+f"(acc[i]));  // new accumulators every subtile, as far as nvcc knows
    if (MODE & kConv) {
#pragma unroll
      for (int j = 0; j < 8; ++j) pk[j] = pack_bf16x2(alpha * acc[2 * j], alpha * acc[2 * j + 1]);
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j) pk[j] = __float_as_uint(acc[2 * j]);
    }
    stsm_x4(buf + off0, pk[0], pk[1], pk[2], pk[3]);
    stsm_x4(buf + off1, pk[4], pk[5], pk[6], pk[7]);
    if (MODE & kFenceBars) {
      if (!(MODE & kNoFence)) fence_proxy_async_smem();
      named_bar_sync(1, THREADS);
      if ((MODE & kStore) && tid == 0) {
        const int y = static_cast<int>((blockIdx.x * kRing + static_cast<unsigned>(e % kRing)) * sub_rows(THREADS));
        tma_store_2d(&map, 0, y, buf);
        bulk_commit();
        bulk_wait_read1();
      }
      named_bar_sync(1, THREADS);
    }
  }
  const unsigned long long t1 = clk();
  if (tid == 0) {
    stop = 1;
    bulk_wait0();
    out[blockIdx.x * 4] = t1 - t0;
    out[blockIdx.x * 4 + 1] = smid();
  }
}

template <int MODE, int THREADS = kThreads>
void run_mode(Ctx& c, const CUtensorMap& map, const CUtensorMap& src, const char* name, const std::string& what) {
  const int dyn = 2 * kSubBytes + kLoadStages * kLoadBytes + 1024;  // two buffers of the largest subtile, the load ring
  CK(cudaFuncSetAttribute(k_epi<MODE, THREADS>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
  DevBuf<unsigned long long> out(4 * c.sm_count);
  const int reps = c.quick ? 2 : 5;
  const std::string loads = " A ninth warp's thread keeps 4 TMA loads of 16 KB boxes (128 rows x 128 B, 128B swizzle) "
                            "in flight from an 8 MiB (L2-resident) source, each issued as soon as its ring slot landed.";
  for (int all = 0; all < 2; ++all) {
    const int ctas = all ? c.sm_count : 1;
    std::vector<double> per, bpc;  // cycles per subtile; the loads' bytes per cycle: every CTA of every launch but the first
    for (int r = 0; r < reps + 1; ++r) {
      out.zero();
      k_epi<MODE, THREADS><<<ctas, THREADS + 32, dyn>>>(map, src, 1.0f, out.p, c.d_err);
      CK_LAUNCH();
      if (r == 0) continue;
      auto h = out.get();
      for (int b = 0; b < ctas; ++b) {
        per.push_back(double(h[4 * b]) / kSubtiles);
        if (MODE & kLoads) bpc.push_back(double(h[4 * b + 2]) / double(h[4 * b + 3]));
      }
    }
    const std::string where = all ? "Every SM (one CTA each) at once: " : "One CTA on one SM: ";
    JObj p;
    p.num("threads", THREADS).num("subtile_rows", sub_rows(THREADS)).num("subtile_cols", kSubCols)
        .num("subtile_bytes", sub_rows(THREADS) * kSubCols * 2)
        .num("subtiles", MODE == kLoads ? 0 : kSubtiles).num("ctas", ctas).boolean("conversion", (MODE & kConv) != 0)
        .boolean("barriers", (MODE & kFenceBars) != 0).boolean("fence", (MODE & kFenceBars) && !(MODE & kNoFence)).boolean("tma_store", (MODE & kStore) != 0)
        .boolean("tma_loads", (MODE & kLoads) != 0);
    const std::string suffix = all ? "_all_sms" : "_1sm";
    if (MODE != kLoads)
      record(c, std::string("epi_") + name + suffix, "epilogue", "cycles/subtile", per,
             where + what + ((MODE & kLoads) ? loads : std::string()) +
                 " Thread 0 times 2048 subtiles with clock64; samples: each CTA of 5 launches.",
             p);
    if (MODE & kLoads)
      record(c, std::string("epi_") + name + "_load_rate" + suffix, "epilogue", "bytes/cycle", bpc,
             where + (MODE == kLoads ? std::string("nothing but the loads (for 600k cycles).") : what) + loads +
                 " Value: the bytes landed over the cycles from the first issue to the last landing, per CTA; samples: "
                 "each CTA of 5 launches.",
             p);
  }
}


// How far a warp's stores to shared memory run ahead of the shared memory (epi_issue_*): each of W warps of one CTA
// issues N stmatrix.x4 (512 bytes each, conflict-free: eight 16-byte rows of one 128-byte line per matrix) back to
// back, reads clock64 (its stores issued), then fences them for the async proxy and reads clock64 again (the fence
// returns once the warp's writes are done). The whole sequence runs twice; the second pass is timed (the first warms
// the instruction cache), after a fence and a barrier that leave the shared memory idle. nvcc 13.0 gives the first
// clock read a register of the last stmatrix's sources for N = 1, 2, 32 (it then waits until that store has read its
// registers, which the store does when the shared memory takes it) and a free one for N = 64 (the issue itself):
// validation/results/h200/epilogue_issue_sass.txt.
// AFTER says what follows the stores instead of the fence (epi_issue_<after>_*): 1 every thread's mbarrier.arrive
// (.release.cta, the default) on a barrier of the CTA's threads; 2 fence.acq_rel.cta (__threadfence_block); 3 bar.sync 1
// of the CTA's threads. (A variant with an ld.shared of the first store's address was dropped: ptxas put the load after
// the clock read, epilogue_issue_sass.txt.)
enum IssueAfter : int { kAfterFence = 0, kAfterArrive = 1, kAfterMembar = 2, kAfterBar = 3 };
template <int N, int AFTER = kAfterFence>
__global__ void __launch_bounds__(kThreads) k_stsm_issue(unsigned long long* out) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t bar;
  unsigned char* base = align1024(dyn_raw);
  const uint32_t tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const uint32_t at = smem_u32(base) + warp * 4096u + (lane >> 3) * 128u + (lane & 7u) * 16u;
  if (tid == 0) {
    mbar_init(smem_u32(&bar), blockDim.x);
    fence_mbar_init();
  }
  unsigned long long t0 = 0, t1 = 0, t2 = 0;
  for (int pass = 0; pass < 2; ++pass) {
    fence_proxy_async_smem();
    __syncthreads();
    t0 = clk();
#pragma unroll
    for (int i = 0; i < N; ++i) stsm_x4(at + static_cast<uint32_t>(i & 7) * 512u, tid, tid + 1u, tid + 2u, tid + 3u);
    t1 = clk();
    if (AFTER == kAfterFence) fence_proxy_async_smem();
    if (AFTER == kAfterArrive) mbar_arrive(smem_u32(&bar));
    if (AFTER == kAfterMembar) asm volatile("fence.acq_rel.cta;" ::: "memory");
    if (AFTER == kAfterBar) named_bar_sync(1, static_cast<int>(blockDim.x));
    t2 = clk();
  }
  if (lane == 0) {
    out[warp * 2] = t1 - t0;
    out[warp * 2 + 1] = t2 - t0;
  }
}

// Launches k_stsm_issue<N, AFTER> with `warps` warps, 5 times after a first one: every warp's cycles to its stores'
// issue (`issue`) and to the end of what follows them (`done`).
struct IssueSamples {
  std::vector<double> issue, done;
};
template <int N, int AFTER>
IssueSamples issue_samples(Ctx& c, int warps) {
  const int dyn = 8 * 4096 + 1024;
  CK(cudaFuncSetAttribute(k_stsm_issue<N, AFTER>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
  DevBuf<unsigned long long> out(2 * 8);
  IssueSamples s;
  for (int r = 0; r < (c.quick ? 2 : 5) + 1; ++r) {
    out.zero();
    k_stsm_issue<N, AFTER><<<1, warps * 32, dyn>>>(out.p);
    CK_LAUNCH();
    if (r == 0) continue;
    auto h = out.get();
    for (int w = 0; w < warps; ++w) {
      s.issue.push_back(double(h[2 * w]));
      s.done.push_back(double(h[2 * w + 1]));
    }
  }
  return s;
}

JObj issue_params(int warps, int n) {
  JObj p;
  p.num("warps", warps).num("stmatrix_per_warp", n).num("bytes_per_stmatrix", 512).num("ctas", 1);
  return p;
}

std::string issue_what(int warps, int n) {
  return std::to_string(warps) + " warp(s) of one CTA on one SM each issue " + std::to_string(n) +
         " stmatrix.sync.aligned.m8n8.x4 (512 B, conflict-free) back to back";
}

template <int N, int AFTER>
void run_after(Ctx& c, int warps, const char* name, const std::string& after) {
  record(c, std::string("epi_issue_") + name + "_w" + std::to_string(warps) + "_n" + std::to_string(N), "epilogue", "cycles",
         issue_samples<N, AFTER>(c, warps).done,
         issue_what(warps, N) + ", then " + after +
             ". Value: clock64 after it less clock64 before the first stmatrix; samples: each warp of 5 launches.",
         issue_params(warps, N));
}

template <int N>
void run_afters(Ctx& c, int warps) {
  run_after<N, kAfterArrive>(c, warps, "arrive", "every thread's mbarrier.arrive.shared::cta.b64 (release.cta)");
  run_after<N, kAfterMembar>(c, warps, "membar", "fence.acq_rel.cta");
  run_after<N, kAfterBar>(c, warps, "bar", "bar.sync 1 of the CTA's threads");
}

template <int N>
void run_issue(Ctx& c, int warps) {
  const IssueSamples s = issue_samples<N, kAfterFence>(c, warps);
  const std::string what = issue_what(warps, N);
  const std::string tag = "_w" + std::to_string(warps) + "_n" + std::to_string(N);
  record(c, "epi_issue" + tag, "epilogue", "cycles", s.issue,
         what + ". Value: clock64 after the last stmatrix less clock64 before the first (the stores issued); samples: "
                "each warp of 5 launches.",
         issue_params(warps, N));
  record(c, "epi_issue_fence" + tag, "epilogue", "cycles", s.done,
         what + ", then fence.proxy.async.shared::cta. Value: clock64 after the fence less clock64 before the first "
                "stmatrix; samples: each warp of 5 launches.",
         issue_params(warps, N));
}

template <int... Ns>
void run_issue_all(Ctx& c, int warps) {
  (run_issue<Ns>(c, warps), ...);
}
}  // namespace

void bench_epilogue(Ctx& c) {
  const uint64_t rows = static_cast<uint64_t>(c.sm_count) * kRing * kRows;
  DevBuf<uint16_t> d(rows * kSubCols);
  // The D subtile's map: rows of 32 bf16 (64 bytes), boxes of 128 rows, 64-byte swizzle.
  CUtensorMap map = make_rows_map(d.p, static_cast<long long>(rows), kSubCols * 2, kSubCols * 2, kRows, CU_TENSOR_MAP_SWIZZLE_64B);
  DevBuf<uint16_t> source(static_cast<size_t>(kLoadSourceRows) * kCols);
  CUtensorMap src = make_map(source.p, kLoadSourceRows, kLoadRows);
  const std::string step = "each of 256 threads writes its 16 values of a 128x32 bf16 subtile with two "
                           "stmatrix.sync.aligned.m8n8.x4 (64-byte swizzle; buffers alternate)";
  run_mode<0>(c, map, src, "stsm", step + "; nothing else.");
  run_mode<kConv>(c, map, src, "conv_stsm", step + ", after converting them (alpha * acc, cvt.rn.bf16x2.f32).");
  run_mode<kFenceBars>(c, map, src, "stsm_fence_bars",
                       step + "; fence.proxy.async.shared::cta; bar.sync 1, 256; bar.sync 1, 256 (no store).");
  run_mode<kFenceBars | kNoFence>(c, map, src, "stsm_bars",
                                  step + "; bar.sync 1, 256; bar.sync 1, 256 (no fence, no store).");
  run_mode<kFenceBars | kStore>(c, map, src, "stsm_store",
                                step + "; fence.proxy.async.shared::cta; bar.sync 1, 256; thread 0: TMA store of the "
                                       "subtile (cp.async.bulk.tensor.2d, 8 KB), commit_group, wait_group.read 1; "
                                       "bar.sync 1, 256.");
  run_mode<kConv | kFenceBars | kStore>(c, map, src, "conv_stsm_store",
                                        "the whole store step: " + step +
                                            " after converting them; fence; bar.sync; thread 0: TMA store, commit, "
                                            "wait_group.read 1; bar.sync.");
  run_mode<kLoads>(c, map, src, "loads_alone", "");
  run_mode<kConv | kFenceBars | kStore | kLoads>(c, map, src, "conv_stsm_store_loads",
                                                 "the whole store step (as conv_stsm_store).");
  // One warpgroup's store step, as a pingpong kernel's (64x32 subtiles: boxes of 64 rows).
  CUtensorMap map_wg = make_rows_map(d.p, static_cast<long long>(rows), kSubCols * 2, kSubCols * 2, sub_rows(128),
                                     CU_TENSOR_MAP_SWIZZLE_64B);
  const std::string wg = "each of 128 threads (one warpgroup, as in a pingpong kernel) writes its 16 values of a 64x32 "
                         "bf16 subtile with two stmatrix.sync.aligned.m8n8.x4 (64-byte swizzle; buffers alternate)";
  run_mode<kFenceBars, 128>(c, map_wg, src, "wg_stsm_fence_bars",
                            wg + "; fence.proxy.async.shared::cta; bar.sync 1, 128; bar.sync 1, 128 (no store).");
  run_mode<kFenceBars | kStore, 128>(c, map_wg, src, "wg_stsm_store",
                                     wg + "; fence.proxy.async.shared::cta; bar.sync 1, 128; thread 0: TMA store of the "
                                          "subtile (cp.async.bulk.tensor.2d, 4 KB), commit_group, wait_group.read 1; "
                                          "bar.sync 1, 128.");
  run_mode<kConv | kFenceBars | kStore, 128>(c, map_wg, src, "wg_conv_stsm_store",
                                             "the whole store step of one warpgroup: " + wg +
                                                 " after converting them; fence; bar.sync; thread 0: TMA store, commit, "
                                                 "wait_group.read 1; bar.sync.");
  for (int warps : {1, 4, 8}) run_issue_all<0, 1, 2, 4, 8, 16, 32, 64>(c, warps);
  for (int warps : {1, 8}) {
    run_afters<0>(c, warps);
    run_afters<8>(c, warps);
    run_afters<64>(c, warps);
  }
}

}  // namespace mb
