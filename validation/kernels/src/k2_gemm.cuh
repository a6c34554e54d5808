// K2: the project's own sm_90a warp-specialized persistent GEMM, bf16 in, fp32 accumulate, bf16 out:
// D = alpha * A * B + beta * C.  Schedules: cooperative (default) and pingpong; 1x1 or 2x1 clusters with
// TMA multicast of B; epilogue knobs ReuseSmemC / DelayTmaStore / StagesC / StagesD.
//
// Layouts (all row-major, "TN" in BLAS terms):  A is M x K (K contiguous), B is N x K (K contiguous),
// C and D are M x N (N contiguous).  D[m][n] = alpha * sum_k A[m][k] * B[n][k] + beta * C[m][n].
// Requirements (TMA): K and N multiples of 8 (16-byte global strides), 16-byte aligned base pointers.
// M, N, K need not be multiples of the tile: TMA zero-fills out-of-bounds loads and clips stores.
//
// Structure (shared/spec/kernels.md K2, semantics.md §1-5), written from the PTX ISA, no CUTLASS code:
//   384 threads = 3 warpgroups.
//   WG 0 (producer, setmaxnreg.dec 40):  warp 0 lane 0 = mainloop TMA loads of A and B into a STAGES-deep
//        ring (full[s]: count 1, arrive.expect_tx(stage bytes) + TMA complete_tx; empty[s]: every consumer
//        thread of the warpgroup(s) that consume the stage arrives (1x1 cluster), or, in a 2x1 cluster, one
//        signalling thread per consuming warpgroup and CTA of the cluster).  Producer state starts at
//        phase 1 (first pass does not wait).  warp 2 lane 0 = epilogue C loads (only when beta != 0) into
//        a StagesC ring fullC/emptyC, started after the mainloop warp issued the first tile's loads
//        (load_order barrier).  Both end with a producer tail (wait every empty barrier once more).
//   WG 1, 2 (consumers, setmaxnreg.inc 232):
//     cooperative: both work on the same 128 x BN CTA tile, split along M (WG g owns rows 64g .. 64g+63).
//     pingpong: each works on its own 128 x BN tile (tiles of the CTA alternate: WG 0 takes the CTA's
//        tiles 0, 2, 4, ..., WG 1 tiles 1, 3, ...; 2 x m64nBNk16 per k16 step), mainloops and epilogues
//        ordered by an OrderedSequenceBarrier of depth 2 (order[stage][group], count 128: the mainloops
//        alternate among themselves, the epilogues among themselves, so one warpgroup's epilogue runs
//        under the other's MMAs); depth 1 (one ring: ML0, ML1, EPI0, EPI1, ...) is a runtime option.
//     Mainloop per k-block: wait full[s] -> wgmma.fence -> wgmma m64nBNk16 (A, B from 128B-swizzled smem
//        descriptors) -> commit -> wait_group(1) -> release the *previous* stage (K_PIPE_MMAS = 1).
//     Epilogue per EPI_M x 32 subtile (cooperative 128 x 32, pingpong 64 x 32; epi_n outer, epi_m inner):
//        [beta != 0: wait fullC, read C from smem, arrive emptyC unless ReuseSmemC] -> alpha*acc + beta*c
//        -> [DelayTmaStore: store step of the previous subtile] -> bf16 -> smem D buffer (ReuseSmemC: the
//        subtile's own C slot; 64B swizzle) -> [not delayed: store step].  Store step: fence.proxy.async ->
//        named barrier -> one thread: TMA store + commit_group + wait_group.read(StagesD-1) -> named
//        barrier -> ReuseSmemC: release the C slot of subtile i-(StagesD-1).  store_tail: cooperative once
//        at kernel end, pingpong after every tile (before passing the epilogue turn).
//   Persistent tile scheduler over clusters: a cluster tile is CLUSTER_M m-blocks x 1 n-block; grid =
//   CLUSTER_M * min(#clusters that fit, #cluster tiles); cluster c walks cluster tiles c, c+#clusters, ...;
//   cluster tile -> (m row, n block) in raster groups of G cluster rows (m fastest inside a group, see
//   tile_coords) for L2 reuse, G from Params::raster_group (default GROUP_M = 8 m-blocks);
//   CTA rank r of the cluster takes m-block CLUSTER_M*row + r.  2x1 cluster: the two CTAs share the B tile
//   (same n-block): rank r loads B rows [r*BN/2, (r+1)*BN/2) of the tile with .multicast::cluster into both
//   CTAs; each CTA's full[s] expects the whole stage (A + both B halves).
#pragma once

#include <cuda.h>  // CUtensorMap (the encoder is taken through cudaGetDriverEntryPointByVersion)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "k2_wgmma.cuh"
#include "probe.cuh"  // traces/probe.cuh: the capture probe; every SMPIPE_PROBE_* macro is empty unless SMPIPE_PROBE=1

#include "ptx_common.cuh"

namespace k2 {

#define K2_DEVI __device__ __forceinline__

constexpr int BM = 128;  // CTA tile M (cooperative: two consumer warpgroups x 64 rows; pingpong: one warpgroup)
constexpr int BK = 64;   // CTA tile K: 64 bf16 = 128 bytes = one 128B-swizzle row
constexpr int EPI_M = 128, EPI_N = 32;  // cooperative epilogue subtile (CUTLASS default: min(128,BM) x min(32,BN))
constexpr int STAGES_C = 2, STAGES_D = 2;  // cooperative defaults (the 1x1 path and its traces)
constexpr int GROUP_M = 8;  // default scheduler raster group (m blocks; Params::raster_group)
constexpr int NUM_THREADS = 384;
constexpr int CONSUMER_THREADS = 256;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;  // 128*40 + 256*232 = 64512 <= 65536

template <int BN_, int STAGES_, bool PP_ = false>
struct Cfg {
  static constexpr int BN = BN_;
  static constexpr int STAGES = STAGES_;
  static constexpr bool PINGPONG = PP_;
  static_assert(BN == 64 || BN == 128 || BN == 256, "wgmma N per consumer warpgroup (k2_wgmma.cuh)");
  static_assert(BN % EPI_N == 0, "epilogue subtiles of EPI_N columns");
  static_assert(!PP_ || BN == 128, "pingpong: 128 x 128 per consumer warpgroup (128 accumulators per thread)");
  static constexpr int MI = PP_ ? 2 : 1;                  // m64 wgmma rows per consumer warpgroup
  static constexpr int EPI_M_ = PP_ ? 64 : 128;           // epilogue subtile rows (builder: min(64|128, tile M))
  static constexpr int EPI_MS = BM / EPI_M_;              // subtiles along M
  static constexpr int EPI_THREADS = PP_ ? 128 : 256;     // threads of one epilogue (named barrier count)
  static constexpr int A_BYTES = BM * BK * 2;
  static constexpr int B_BYTES = BN * BK * 2;
  static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;  // expect_tx per stage (full boxes, OOB zero-fill counts)
  static constexpr int EPI_BYTES = EPI_M_ * EPI_N * 2;    // one C or D subtile, bf16
  static constexpr int SUBTILES = EPI_MS * (BN / EPI_N);  // epilogue subtiles per tile
  // Epilogue buffers: EPI_SLOTS slots; C slots [0, StagesC), D slots [StagesC, StagesC + StagesD) (ReuseSmemC:
  // D written into the C slot of the same subtile).  Cooperative 4 x 8 KB, pingpong 6 x 4 KB.
  static constexpr int EPI_SLOTS = PP_ ? 6 : 4;
  static constexpr int MAX_SC = EPI_SLOTS;
  static constexpr int OFF_A = 0;
  static constexpr int OFF_B = OFF_A + STAGES * A_BYTES;
  static constexpr int OFF_EPI = OFF_B + STAGES * B_BYTES;
  static constexpr int OFF_BAR = OFF_EPI + EPI_SLOTS * EPI_BYTES;
  // full[STAGES], empty[STAGES], fullC[MAX_SC], emptyC[MAX_SC], load_order, order[2][2]
  static constexpr int BAR_FULLC = 2 * STAGES, BAR_EMPTYC = BAR_FULLC + MAX_SC, BAR_LOAD_ORDER = BAR_EMPTYC + MAX_SC;
  static constexpr int BAR_ORDER = BAR_LOAD_ORDER + 1;
  static constexpr int NUM_BARS = BAR_ORDER + 4;
  static constexpr int SMEM_BYTES = OFF_BAR + NUM_BARS * 8 + 1024;  // + slack to align the base to 1024
  static_assert(SMEM_BYTES <= 232448, "exceeds the sm_90 opt-in shared memory per block");
};

// ------------------------------------------------------------------------------------------------
// PTX wrappers
// ------------------------------------------------------------------------------------------------
using namespace kptx;  // ptx_common.cuh

K2_DEVI void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
K2_DEVI void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
K2_DEVI void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads/writes across wgmma issue / wait points.
template <int R>
K2_DEVI void fence_regs(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <int N>
K2_DEVI void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}
template <int N>
K2_DEVI void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

// sm_90 shared-memory matrix descriptor for a K-major operand with 128-byte swizzle:
// bits 0-13 start address >> 4, 16-29 leading byte offset >> 4 (unused for swizzled K-major, set to 1),
// 32-45 stride byte offset >> 4 (1024 B between 8-row groups), 49-51 base offset (0: atoms 1024-aligned),
// 62-63 layout (1 = 128B swizzle).  Stepping K by 16 elements inside the 128-byte row = start + 32 bytes.
K2_DEVI uint64_t desc_k128(uint32_t saddr) {
  return static_cast<uint64_t>((saddr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(1) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (static_cast<uint64_t>(1) << 62);
}

// Byte offset of element (r, c) (c in 0..31) in a 128 x 32 bf16 subtile stored with the TMA 64B swizzle:
// rows of 64 B; 16-byte chunk index (address bits 4-5) XOR address bits 7-8 (= (r >> 1) & 3).
K2_DEVI uint32_t swz64(uint32_t r, uint32_t c) {
  return r * 64u + ((((c >> 3) ^ (r >> 1)) & 3u) << 4) + (c & 7u) * 2u;
}

K2_DEVI uint32_t pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x = lo (lower address)
  return *reinterpret_cast<uint32_t*>(&v);
}
K2_DEVI float2 unpack_bf16x2(uint32_t u) {
  __nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162*>(&u);
  return __bfloat1622float2(v);
}

// wait_group.read with a runtime N (StagesD - 1, StagesD <= 4)
K2_DEVI void bulk_wait_read_n(int n) {
  if (n <= 0) bulk_wait_read<0>();
  else if (n == 1) bulk_wait_read<1>();
  else if (n == 2) bulk_wait_read<2>();
  else bulk_wait_read<3>();
}

// ---- cluster ----
K2_DEVI uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// All threads of all CTAs of the cluster (aligned: every thread of the CTA executes it).  Release/acquire:
// the barrier inits (fence.mbarrier_init.release.cluster) are visible to the peers afterwards.
K2_DEVI void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// shared::cta address of this CTA -> shared::cluster address of the same offset in CTA `rank`.
K2_DEVI uint32_t mapa_shared(uint32_t addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
// Arrive (count 1) on an mbarrier of any CTA of the cluster (address from mapa_shared).  Default semantics
// (.release, .cta scope): a consumer release only says that its wgmma reads of the stage are complete (done
// before the arrive by wgmma.wait_group), there are no generic writes to publish to the peer.
K2_DEVI void mbar_arrive_cluster(uint32_t cluster_addr) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster_addr) : "memory");
}
// TMA tile load multicast to the CTAs of ctaMask: the box lands at the same CTA-relative offset `dst` in
// each of them, and each gets complete_tx(box bytes) on its barrier at offset `bar`.
K2_DEVI void tma_load_2d_mc(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar), "h"(mask)
      : "memory");
}

// Persistent tile scheduler: linear (cluster) tile index t -> (m row mr, n block nb), `group` m rows (cluster
// rows) per raster group, 1 <= group <= n_mrow.  The rows are cut into groups of `group` consecutive rows (the
// last group may be shorter: `rows`); the groups are walked one after the other, and inside a group the tiles go
// m fastest: (row 0, n 0), (row 1, n 0), ..., (row rows-1, n 0), (row 0, n 1), ...  So group = 1 walks along N
// (every n block of m row 0, then m row 1, ...: t -> (t / n_nblk, t % n_nblk)) and group = n_mrow along M (every
// m row of n block 0, then n block 1, ...: t -> (t % n_mrow, t / n_mrow)).
K2_DEVI void tile_coords(int t, int n_mrow, int n_nblk, int group, int& mr, int& nb) {
  const int per_group = group * n_nblk;
  const int g = t / per_group;
  const int r = t - g * per_group;
  const int rows = min(group, n_mrow - g * group);
  mr = g * group + r % rows;
  nb = r / rows;
}

// Runtime knobs: the defaults are the cooperative 1x1 path (the one the probe traces describe).
struct Params {
  int M, N, K;
  float alpha, beta;
  int cluster_m = 1;          // CTAs per cluster along M: 1, or 2 (B multicast; launch with a cluster dim)
  int reuse_c = 0;            // ReuseSmemC: D written into the C slot of the same subtile
  int delay_store = 0;        // DelayTmaStore: the store of subtile i is issued during subtile i+1
  int stages_c = STAGES_C;    // C load pipeline depth (1..EPI_SLOTS)
  int stages_d = STAGES_D;    // D buffers (1..4); <= stages_c with reuse; stages_c + stages_d <= EPI_SLOTS without
  int order_depth = 2;        // pingpong OrderedSequenceBarrier depth: 2 (CUTLASS: mainloop / epilogue) or 1
  // Scheduler raster group in m-blocks (tile_coords): G > 0 -> groups of max(1, G / cluster_m) cluster rows,
  // clamped to the number of cluster rows; G <= 0 -> one group of all rows (raster along M).  G = 1 with a 1x1
  // cluster walks along N.  Default GROUP_M (8): the raster of every result and trace before this knob.
  int raster_group = GROUP_M;
  // Clock record (nullptr: nothing recorded).  When set (probe-off instances only), CTA 0 writes 12 values:
  // [0] clock64 and [1] %globaltimer (ns) by thread 0 at kernel entry, [2] clock64 and [3] %globaltimer by
  // consumer thread 0 (thread 128: the store thread; cooperative: the last of the CTA to finish; pingpong:
  // warpgroup 0's) after its store tail; clock64 of the CTA's first steps: [4] thread 0 after the prologue's
  // barrier (init, fence, CTA or cluster sync), [5] the load thread just before its first TMA load, [6] consumer
  // thread 0 when its first full wait returns, [7] the same at its first tile's epilogue, [8] the load thread just
  // before the first TMA load of its first tile's k-block STAGES - 1 (the ring's first pass acquires free stages:
  // ([8] - [5]) / (STAGES - 1) is a k-block of the load thread's own work; 0 when the tile has fewer k-blocks), one
  // store each, no probe: the prologue, the first load's latency and the load loop without the probe's records;
  // consumer thread 0 at the end of its first tile's epilogue [9], and at the start [10] and end [11] of its
  // second tile's (the first tile's code runs cold, the second's warm).
  // clock64 is the SM's own counter (same for every thread of the CTA): SM MHz = ([2]-[0]) / ([3]-[1]) * 1000.
  // The last CTA of the grid (blockIdx.x == gridDim.x - 1) writes the same first steps of its own: [12] clock64 and
  // [13] %globaltimer at its entry (thread 0), [14] thread 0 after the prologue's barrier, [15] the load thread just
  // before its first TMA load, [16] clock64 and [17] %globaltimer of consumer thread 0 after its store tail, [18] its
  // %smid. With a grid of one CTA per tile (the driver's `np` knob) it runs after other CTAs of the same launch on its
  // SM, whose code and constants it finds cached: the start of a CTA that is not the SM's first ([13] - [1]: when it
  // started after CTA 0). (A grid of one CTA: [12..18] are CTA 0's.)
  // CTA 0's load thread in its first tile's steady state: [19] just before the first TMA load of the tile's last
  // k-block: ([19] - [5]) / (k-blocks - 1) is the ring's k-block, whatever bounds it (one store, as [8]'s; clock reads
  // around every acquire, tried on the H100 on 2026-12-07, made K2 up to 40 % slower, so the waits are not split out).
  unsigned long long* clocks = nullptr;
};

// Probe ids (traces/probe.cuh records; the driver's trace metadata names them, docs/trace-format.md).
namespace probe_id {
enum : uint32_t { FULL = 0, EMPTY = 1, C_FULL = 2, C_EMPTY = 3, LOAD_ORDER = 4, EPI = 5, ORDER = 6 };  // barriers
enum : uint32_t { TA = 1, TB = 2, TC = 3, TD = 4 };                                        // tensors
constexpr uint32_t NONE = smpipe_probe::kNone, NO_PHASE = smpipe_probe::kNoPhase;
}  // namespace probe_id

// The kernel is compiled once per probe setting; the inline namespace keeps the two instances apart when
// both are linked into one program (the driver times the probe-off kernel against the probe-on one).
#if SMPIPE_PROBE
#define K2_KERNEL_NS probe_on
#else
#define K2_KERNEL_NS probe_off
#endif
inline namespace K2_KERNEL_NS {

// Shorthands for this kernel's probe points (empty when the probe is off).
#define K2P(op, bar, idx, ph, bytes, it) SMPIPE_PROBE_REC(pw, op, probe_id::bar, (idx), (ph), (bytes), (it))
#define K2P_T(op, tensor, bar, idx, ph, bytes, it) \
  SMPIPE_PROBE_REC_T(pw, op, probe_id::tensor, probe_id::bar, (idx), (ph), (bytes), (it))
// The mainloop's records of k-block kb: kept for the sampled k-blocks only (the probe's kb_sample; every one by default).
// (A consumer's release recorded at k-block kb is of k-block kb - 1's stage: a sampled trace keeps the release of the
// k-block before each sampled one.)
#define K2PK(op, bar, idx, ph, bytes, kb) SMPIPE_PROBE_KB(kb, K2P(op, bar, idx, ph, bytes, kb))
#define K2PK_T(op, tensor, bar, idx, ph, bytes, kb) SMPIPE_PROBE_KB(kb, K2P_T(op, tensor, bar, idx, ph, bytes, kb))

template <int MI, int R>
K2_DEVI void fence_acc(float (&d)[MI][R]) {
#pragma unroll
  for (int m = 0; m < MI; ++m) fence_regs(d[m]);
}

template <int BN, int STAGES, bool PP = false>
__global__ void __launch_bounds__(NUM_THREADS, 1)
    k2_gemm_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                   const __grid_constant__ CUtensorMap tmC, const __grid_constant__ CUtensorMap tmD, Params p) {
  using C = Cfg<BN, STAGES, PP>;
  constexpr int MI = C::MI, EPI_MS = C::EPI_MS, EM = C::EPI_M_, SUBTILES = C::SUBTILES;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;  // 1024-aligned for the 128B swizzle atoms
  unsigned char* base_ptr = smem_raw + (base - smem_u32(smem_raw));
  const uint32_t sA = base + C::OFF_A, sB = base + C::OFF_B, sEpi = base + C::OFF_EPI;
  const uint32_t bars = base + C::OFF_BAR;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (STAGES + s); };
  auto fullC = [&](int s) { return bars + 8u * (C::BAR_FULLC + s); };
  auto emptyC = [&](int s) { return bars + 8u * (C::BAR_EMPTYC + s); };
  const uint32_t load_order = bars + 8u * C::BAR_LOAD_ORDER;
  auto order = [&](int stage, int group) { return bars + 8u * (C::BAR_ORDER + 2 * stage + group); };

  const int tid = threadIdx.x;
  const int warp = tid >> 5, lane = tid & 31;
  const bool use_c = p.beta != 0.0f;
#if SMPIPE_PROBE
  // The probe-on instance records the cooperative 1x1 kernel without ReuseSmemC / DelayTmaStore only (traces,
  // overhead): those knobs and the cluster size are constants here, so that they cost it no registers (with
  // them as Params fields ptxas spilled 8 B / 24 B); any other setting is a driver bug and stops the kernel.
  const int SC = p.stages_c, SD = p.stages_d;  // (as constants too, ptxas unrolls more and spills 144 B)
  constexpr bool reuse = false, delay = false;
  constexpr int cl = 1;
  if (p.reuse_c != 0 || p.delay_store != 0 || p.cluster_m != 1 || p.raster_group != GROUP_M) __trap();
#else
  const int SC = p.stages_c, SD = p.stages_d;
  const bool reuse = p.reuse_c != 0, delay = p.delay_store != 0;
  const int cl = p.cluster_m;                        // 1 or 2
  if (p.clocks != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
    p.clocks[0] = clock64();
    p.clocks[1] = gtime();
  }
  const bool clk_last = p.clocks != nullptr && blockIdx.x == gridDim.x - 1;  // Params::clocks: the last CTA's steps
  if (clk_last && threadIdx.x == 0) {
    p.clocks[12] = clock64();
    p.clocks[13] = gtime();
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    p.clocks[18] = smid;
  }
#endif
  const uint32_t crank = cl > 1 ? cluster_ctarank() : 0u;
  SMPIPE_PROBE_INIT(pw);

  if (tid == 0) {
    prefetch_tmap(&tmA);
    prefetch_tmap(&tmB);
    prefetch_tmap(&tmD);
    if (use_c) prefetch_tmap(&tmC);
    // empty: 1x1 cluster: every thread of the warpgroup(s) consuming a stage; 2x1: one signalling thread per
    // consuming warpgroup of each CTA of the cluster (CLUSTER_M + CLUSTER_N - 1 CTAs multicast into this one).
    const uint32_t empty_count = cl == 1 ? (PP ? 128u : 256u) : uint32_t(cl) * (PP ? 1u : 2u);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);                   // one elected producer arrive.expect_tx per phase
      mbar_init(empty(s), empty_count);
    }
    for (int s = 0; s < C::MAX_SC; ++s) {
      mbar_init(fullC(s), 1);
      mbar_init(emptyC(s), C::EPI_THREADS);
    }
    mbar_init(load_order, 1);
    for (int i = 0; i < 4; ++i) mbar_init(bars + 8u * (C::BAR_ORDER + i), 128);
    fence_mbar_init();
  }
  if (cl > 1) cluster_sync();  // peers multicast into this CTA's smem and arrive on its barriers
  else __syncthreads();
#if !SMPIPE_PROBE
  const bool clk0 = p.clocks != nullptr && blockIdx.x == 0;  // Params::clocks: CTA 0's first steps
  if (clk0 && tid == 0) p.clocks[4] = clock64();
  if (clk_last && tid == 0) p.clocks[14] = clock64();
#endif

  const int n_mblk = (p.M + BM - 1) / BM, n_nblk = (p.N + BN - 1) / BN;
  const int n_mrow = (n_mblk + cl - 1) / cl;       // cluster rows
  const int n_tiles = n_mrow * n_nblk;             // cluster tiles
  const int unit0 = blockIdx.x / cl, unit_step = gridDim.x / cl;
#if SMPIPE_PROBE
  constexpr int group = GROUP_M;                   // the traced raster (1x1 cluster)
#else
  // raster group in cluster rows (Params::raster_group): <= 0 -> all rows; else max(1, G / cl), at most n_mrow
  const int group = p.raster_group <= 0 ? n_mrow : min(n_mrow, max(1, p.raster_group / cl));
#endif
  const int k_blocks = (p.K + BK - 1) / BK;

  if (warp < 4) {
    // ================================ producer warpgroup ================================
    setmaxnreg_dec<PRODUCER_REGS>();
    if (warp == 0 && lane == 0) {
      // Mainloop loads, tiles in the CTA's sequence (pingpong: the order the warpgroups take them).
      // PipelineState producer start: index 0, phase 1.
      int s = 0;
      uint32_t ph = 1;
      bool first = true;
      const uint16_t mc_mask = uint16_t((1u << cl) - 1u);
      for (int t = unit0; t < n_tiles; t += unit_step) {
        SMPIPE_PROBE_TILE(pw, t, (t - unit0) / unit_step);
        int mr, nb;
        tile_coords(t, n_mrow, n_nblk, group, mr, nb);
        const int mb = mr * cl + int(crank);
        for (int kb = 0; kb < k_blocks; ++kb) {
          K2PK(WAIT, EMPTY, s, ph, 0, kb);
          mbar_wait(empty(s), ph);                       // producer_acquire
          K2PK(WAIT_END, EMPTY, s, ph, 0, kb);
          K2PK(ARRIVE_EXPECT_TX, FULL, s, ph ^ 1, C::STAGE_BYTES, kb);
          mbar_arrive_expect_tx(full(s), C::STAGE_BYTES);  // the whole stage, peers' multicast part included
          K2PK_T(TMA_LOAD, TA, FULL, s, ph ^ 1, C::A_BYTES, kb);
#if !SMPIPE_PROBE
          if (clk0 && first && kb == 0) p.clocks[5] = clock64();
          if (clk_last && first && kb == 0) p.clocks[15] = clock64();
          if (clk0 && first && kb == STAGES - 1) p.clocks[8] = clock64();
          if (clk0 && first && kb == k_blocks - 1 && kb > 0) p.clocks[19] = clock64();
#endif
          tma_load_2d(sA + s * C::A_BYTES, &tmA, kb * BK, mb * BM, full(s));
          K2PK_T(TMA_LOAD, TB, FULL, s, ph ^ 1, C::B_BYTES / cl, kb);
          if (cl == 1) {
            tma_load_2d(sB + s * C::B_BYTES, &tmB, kb * BK, nb * BN, full(s));
          } else {  // this CTA's half of the shared B tile, to both CTAs
            tma_load_2d_mc(sB + s * C::B_BYTES + crank * (C::B_BYTES / 2), &tmB, kb * BK,
                           nb * BN + int(crank) * (BN / 2), full(s), mc_mask);
          }
          if (++s == STAGES) { s = 0; ph ^= 1; }
        }
        if (first) {
          K2P(ARRIVE, LOAD_ORDER, probe_id::NONE, 0, 0, -1);
          mbar_arrive(load_order);  // the epilogue load warp may start now
          first = false;
        }
      }
      // producer_tail: wait until consumers (of every CTA of the cluster) released every stage once more.
      K2P(TAIL, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, -1);
      for (int i = 0; i < STAGES; ++i) {
        K2P(WAIT, EMPTY, s, ph, 0, i);
        mbar_wait(empty(s), ph);
        K2P(WAIT_END, EMPTY, s, ph, 0, i);
        if (++s == STAGES) { s = 0; ph ^= 1; }
      }
    } else if (warp == 2 && lane == 0 && use_c) {
      // Epilogue C loads (PipelineTransactionAsync<StagesC>; here one elected lane arrives, full count 1).
      if (unit0 < n_tiles) {
        K2P(WAIT, LOAD_ORDER, probe_id::NONE, 0, 0, -1);
        mbar_wait(load_order, 0);
        K2P(WAIT_END, LOAD_ORDER, probe_id::NONE, 0, 0, -1);
      }
      int s = 0;
      uint32_t ph = 1;
      for (int t = unit0; t < n_tiles; t += unit_step) {
        SMPIPE_PROBE_TILE(pw, t, (t - unit0) / unit_step);
        int mr, nb;
        tile_coords(t, n_mrow, n_nblk, group, mr, nb);
        const int mb = mr * cl + int(crank);
#pragma unroll 1
        for (int i = 0; i < SUBTILES; ++i) {  // epi_n outer, epi_m inner
          const int en = i / EPI_MS, em = i % EPI_MS;
          K2P(WAIT, C_EMPTY, s, ph, 0, i);
          mbar_wait(emptyC(s), ph);
          K2P(WAIT_END, C_EMPTY, s, ph, 0, i);
          K2P(ARRIVE_EXPECT_TX, C_FULL, s, ph ^ 1, C::EPI_BYTES, i);
          mbar_arrive_expect_tx(fullC(s), C::EPI_BYTES);
          K2P_T(TMA_LOAD, TC, C_FULL, s, ph ^ 1, C::EPI_BYTES, i);
          tma_load_2d(sEpi + s * C::EPI_BYTES, &tmC, nb * BN + en * EPI_N, mb * BM + em * EM, fullC(s));
          if (++s == SC) { s = 0; ph ^= 1; }
        }
      }
      K2P(TAIL, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, -1);
      for (int i = 0; i < SC; ++i) {
        K2P(WAIT, C_EMPTY, s, ph, 0, i);
        mbar_wait(emptyC(s), ph);
        K2P(WAIT_END, C_EMPTY, s, ph, 0, i);
        if (++s == SC) { s = 0; ph ^= 1; }
      }
    }
  } else {
    // ================================ consumer warpgroups ================================
    setmaxnreg_inc<CONSUMER_REGS>();
    const int ct = tid - 128;        // 0..255
    const int g = ct >> 7;           // consumer warpgroup
    const int wt = ct & 127;         // thread inside the warpgroup
    const int w = wt >> 5;           // warp inside the warpgroup
    const int l = ct & 31;
    const int bar_id = PP ? 1 + g : 1;                 // epilogue named barrier (pingpong: one per warpgroup)
    const bool st_thread = PP ? wt == 0 : ct == 0;     // issues the TMA stores of its epilogue
    float acc[MI][BN / 2];
#pragma unroll
    for (int m = 0; m < MI; ++m)
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[m][i] = 0.f;

    const uint32_t a_off = PP ? 0u : uint32_t(g) * 64u * 128u;  // cooperative: this warpgroup's 64 rows of A
    const int r0 = (PP ? 0 : 64 * g) + 16 * w + (l >> 2);      // rows r0 and r0 + 8 of the epilogue subtile
    const int c0 = 2 * (l & 3);                                // column pair inside each 8-column block
    // OrderedSequenceBarrier (pingpong), state {stage, phase} derived from the warpgroup's tile count n (two
    // turns per tile, group 0 starts unlocked: phase 1).  Depth 2: mainloop turn = stage 0, epilogue turn =
    // stage 1, phase (g == 0) ^ (n & 1).  Depth 1: stage 0 for both, phase (g == 0) ^ (turn & 1).
    const bool od2 = p.order_depth == 2;
    const int jstep = PP ? 2 : 1;  // pingpong: this warpgroup's tiles are every other one of the CTA's
    const int my_tiles = unit0 < n_tiles ? (n_tiles - unit0 + unit_step - 1) / unit_step : 0;
    // pingpong: both warpgroups walk the same number of tile pairs; one without a tile of its own in the last
    // pair passes its turns, so that the one-ring order (depth 1) never waits on a turn that is not taken.
    const int j_end = PP ? (my_tiles + 1) / 2 * 2 : my_tiles;
    uint32_t e_done = 0;           // cooperative: subtiles processed (the C / D pipelines run across tiles)

    for (int j = PP ? g : 0; j < j_end; j += jstep) {  // j: position of the tile in the CTA's tile sequence
      const int t = unit0 + j * unit_step;
      if (PP && j >= my_tiles) {
        const uint32_t ph_pass = uint32_t(g == 0) ^ (od2 ? (uint32_t(j >> 1) & 1u) : 0u);
        mbar_wait(order(0, g), ph_pass);
        mbar_arrive(order(0, g ^ 1));
        mbar_wait(order(od2 ? 1 : 0, g), od2 ? ph_pass : ph_pass ^ 1u);
        mbar_arrive(order(od2 ? 1 : 0, g ^ 1));
        continue;
      }
      SMPIPE_PROBE_TILE(pw, t, j);
      int mr, nb;
      tile_coords(t, n_mrow, n_nblk, group, mr, nb);
      const int mb = mr * cl + int(crank);
      const int g0 = j * k_blocks;   // the producer loads tiles in sequence order: stage counter of this tile
      int s = g0 % STAGES;
      uint32_t ph = uint32_t(g0 / STAGES) & 1u;

      const uint32_t n_mine = uint32_t(j >> 1);  // pingpong: tiles this warpgroup did before this one
      const uint32_t ph_ml = uint32_t(g == 0) ^ (od2 ? (n_mine & 1u) : 0u);
      if (PP) {  // mainloop turn
        K2P(WAIT, ORDER, g, ph_ml, 0, j);
        mbar_wait(order(0, g), ph_ml);
        K2P(WAIT_END, ORDER, g, ph_ml, 0, j);
      }
      // ------------------------------ mainloop ------------------------------
      int prev = -1;
      for (int kb = 0; kb < k_blocks; ++kb) {
        K2PK(WAIT, FULL, s, ph, 0, kb);
        mbar_wait(full(s), ph);
        K2PK(WAIT_END, FULL, s, ph, 0, kb);
#if !SMPIPE_PROBE
        if (clk0 && ct == 0 && j == 0 && kb == 0) p.clocks[6] = clock64();
#endif
        fence_acc(acc);
        // no probe branch between wgmma.fence and wgmma.commit (traces/probe.cuh): fused records around them
        K2PK(WGMMA_FENCED, NONE, s, probe_id::NO_PHASE, 0, kb);  // index = the stage whose A and B it reads
        wgmma_fence();
        const uint64_t da = desc_k128(sA + s * C::A_BYTES + a_off);
        const uint64_t db = desc_k128(sB + s * C::B_BYTES);
#pragma unroll
        for (int k = 0; k < BK / 16; ++k) {
#pragma unroll
          for (int m = 0; m < MI; ++m) {
            // +32 bytes per k16 step = +2 in the descriptor's address field; +8 KB (64 rows) per m64 block
            wgmma_ss_bf16<BN>(acc[m], da + 2 * k + m * (8192 >> 4), db + 2 * k, (kb | k) != 0);
          }
        }
        wgmma_commit();
        K2PK(WGMMA_COMMIT_WAIT, NONE, 1, probe_id::NO_PHASE, 0, kb);
        wgmma_wait<1>();  // the previous k-block's wgmmas are done: its stage can be released
        K2PK(WGMMA_WAIT_END, NONE, 1, probe_id::NO_PHASE, 0, kb);
        fence_acc(acc);
        if (prev >= 0) {
          // phase of empty[prev] this release counts towards = the consumer phase of stage prev
          K2PK(ARRIVE, EMPTY, prev, s == 0 ? ph ^ 1u : ph, 0, kb);
          if (cl == 1) mbar_arrive(empty(prev));
          else if (w == 0 && l < cl) mbar_arrive_cluster(mapa_shared(empty(prev), uint32_t(l)));
        }
        prev = s;
        if (++s == STAGES) { s = 0; ph ^= 1; }
      }
      if (PP) {  // pass the mainloop turn: the other warpgroup may issue its MMAs
        K2P(ARRIVE, ORDER, g ^ 1, probe_id::NO_PHASE, 0, j);
        mbar_arrive(order(0, g ^ 1));
      }
      K2P(WGMMA_WAIT, NONE, 0, probe_id::NO_PHASE, 0, k_blocks);
      wgmma_wait<0>();
      K2P(WGMMA_WAIT_END, NONE, 0, probe_id::NO_PHASE, 0, k_blocks);
      fence_acc(acc);
      if (prev >= 0) {
        K2P(ARRIVE, EMPTY, prev, s == 0 ? ph ^ 1u : ph, 0, k_blocks);
        if (cl == 1) mbar_arrive(empty(prev));
        else if (w == 0 && l < cl) mbar_arrive_cluster(mapa_shared(empty(prev), uint32_t(l)));
      }
      if (PP) {  // epilogue turn
        K2P(WAIT, ORDER, (od2 ? 2 : 0) + g, od2 ? ph_ml : ph_ml ^ 1u, 0, j);
        mbar_wait(order(od2 ? 1 : 0, g), od2 ? ph_ml : ph_ml ^ 1u);
        K2P(WAIT_END, ORDER, (od2 ? 2 : 0) + g, od2 ? ph_ml : ph_ml ^ 1u, 0, j);
      }
      K2P(EPILOGUE, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, t);
#if !SMPIPE_PROBE
      if (clk0 && ct == 0 && j == 0) p.clocks[7] = clock64();
      if (clk0 && ct == 0 && j == jstep) p.clocks[10] = clock64();
#endif

      // ------------------------------ epilogue ------------------------------
      // subtile counter e (C load pipe slot e % StagesC, D buffer e % StagesD): the CTA's subtiles in order
      const uint32_t e0 = PP ? uint32_t(j) * SUBTILES : e_done;
      const uint32_t rel_base = PP ? e0 : 0u;  // ReuseSmemC releases: per tile (pingpong) or across tiles
      // The store step of subtile e (PipelineTmaStore): fence, sync, one thread stores + commits + acquires
      // (<= StagesD-1 stores still reading smem), sync; ReuseSmemC: the C slot of e-(StagesD-1) is free.
      auto store_step = [&](int it) {  // it: the subtile's index in the tile (compile-time after unrolling)
        const uint32_t e = e0 + it;
        const int x = nb * BN + (it / EPI_MS) * EPI_N, y = mb * BM + (it % EPI_MS) * EM;
        const uint32_t buf = sEpi + (reuse ? e % uint32_t(SC) : uint32_t(SC) + e % uint32_t(SD)) * C::EPI_BYTES;
        K2P(FENCE_PROXY_ASYNC, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, it);
        fence_proxy_async_smem();           // generic-proxy smem writes -> visible to the TMA store
        K2P(BAR_SYNC, EPI, probe_id::NONE, probe_id::NO_PHASE, 0, it);
        named_bar_sync(bar_id, C::EPI_THREADS);
        K2P(BAR_SYNC_END, EPI, probe_id::NONE, probe_id::NO_PHASE, 0, it);
        if (st_thread) {
          K2P_T(TMA_STORE, TD, NONE, e % uint32_t(SD), probe_id::NO_PHASE, C::EPI_BYTES, it);
          tma_store_2d(&tmD, x, y, buf);
          K2P(TMA_COMMIT, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, it);
          bulk_commit();
          K2P(TMA_WAIT_READ, NONE, SD - 1, probe_id::NO_PHASE, 0, it);
          bulk_wait_read_n(SD - 1);         // acquire: the buffer StagesD-1 stores back is no longer read
          K2P(TMA_WAIT_READ_END, NONE, SD - 1, probe_id::NO_PHASE, 0, it);
        }
        K2P(BAR_SYNC, EPI, probe_id::NONE, probe_id::NO_PHASE, 0, it);
        named_bar_sync(bar_id, C::EPI_THREADS);
        K2P(BAR_SYNC_END, EPI, probe_id::NONE, probe_id::NO_PHASE, 0, it);
        if (reuse && use_c && e >= rel_base + uint32_t(SD - 1)) {
          const uint32_t rs = (e - uint32_t(SD - 1)) % uint32_t(SC);
          K2P(ARRIVE, C_EMPTY, rs, probe_id::NO_PHASE, 0, it);
          mbar_arrive(emptyC(rs));
        }
      };
#pragma unroll
      for (int i = 0; i < SUBTILES; ++i) {
        const int en = i / EPI_MS, em = i % EPI_MS;
        const int m = PP ? em : 0;          // accumulator block of the subtile's rows
        const uint32_t e = e0 + i;
        const uint32_t cs = e % uint32_t(SC);
        const uint32_t cph = (e / uint32_t(SC)) & 1u;
        // alpha * acc + beta * c -> bf16x2, one 8-column block at a time (few registers live besides acc)
        uint32_t pk[8];
        auto fuse = [&](int jj, float c00, float c01, float c10, float c11) {
          const int jb = 4 * en + jj;  // 8-column block of the accumulator fragment
          pk[2 * jj + 0] = pack_bf16x2(p.alpha * acc[m][4 * jb + 0] + p.beta * c00, p.alpha * acc[m][4 * jb + 1] + p.beta * c01);
          pk[2 * jj + 1] = pack_bf16x2(p.alpha * acc[m][4 * jb + 2] + p.beta * c10, p.alpha * acc[m][4 * jb + 3] + p.beta * c11);
        };
        if (use_c) {
          K2P(WAIT, C_FULL, cs, cph, 0, i);
          mbar_wait(fullC(cs), cph);
          K2P(WAIT_END, C_FULL, cs, cph, 0, i);
          K2P_T(LD_SHARED, TC, NONE, cs, probe_id::NO_PHASE, C::EPI_BYTES / (C::EPI_THREADS / 32), i);  // this warp's share
          const unsigned char* cb = base_ptr + (sEpi - base) + cs * C::EPI_BYTES;
#pragma unroll
          for (int jj = 0; jj < 4; ++jj) {
            const uint32_t c = 8 * jj + c0;
            const float2 lo = unpack_bf16x2(*reinterpret_cast<const uint32_t*>(cb + swz64(r0, c)));
            const float2 hi = unpack_bf16x2(*reinterpret_cast<const uint32_t*>(cb + swz64(r0 + 8, c)));
            fuse(jj, lo.x, lo.y, hi.x, hi.y);
          }
          if (!reuse) {
            K2P(ARRIVE, C_EMPTY, cs, cph, 0, i);
            mbar_arrive(emptyC(cs));  // consumer_release of the C slot (reads are done: values in registers)
          }
        } else {
#pragma unroll
          for (int jj = 0; jj < 4; ++jj) fuse(jj, 0.f, 0.f, 0.f, 0.f);
        }
        // D buffer: ReuseSmemC -> the subtile's own C slot (each thread overwrites exactly the C elements it
        // read); otherwise D slot e % StagesD after the StagesC C slots.
        const uint32_t dslot = reuse ? cs : uint32_t(SC) + e % uint32_t(SD);
        const uint32_t dbuf = sEpi + dslot * C::EPI_BYTES;
        if (delay && i > 0) store_step(i - 1);
        K2P_T(ST_SHARED, TD, NONE, reuse ? cs : e % uint32_t(SD), probe_id::NO_PHASE, C::EPI_BYTES / (C::EPI_THREADS / 32), i);  // math + sD writes
        unsigned char* db_ptr = base_ptr + (dbuf - base);
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          const uint32_t c = 8 * jj + c0;
          *reinterpret_cast<uint32_t*>(db_ptr + swz64(r0, c)) = pk[2 * jj + 0];
          *reinterpret_cast<uint32_t*>(db_ptr + swz64(r0 + 8, c)) = pk[2 * jj + 1];
        }
        if (!delay) store_step(i);
      }
      if (delay) store_step(SUBTILES - 1);
      if (PP) {
        // store_tail after every tile: the other warpgroup reuses the D buffers next
        if (st_thread) {
          K2P(TMA_WAIT_READ, NONE, 0, probe_id::NO_PHASE, 0, -1);
          bulk_wait_read<0>();
          K2P(TMA_WAIT_READ_END, NONE, 0, probe_id::NO_PHASE, 0, -1);
        }
        named_bar_sync(bar_id, C::EPI_THREADS);
        if (reuse && use_c) {
          const uint32_t e_end = e0 + SUBTILES;
          for (uint32_t jj = e_end - uint32_t(SD - 1); jj < e_end; ++jj) mbar_arrive(emptyC(jj % uint32_t(SC)));
        }
        K2P(ARRIVE, ORDER, (od2 ? 2 : 0) + (g ^ 1), probe_id::NO_PHASE, 0, j);
        mbar_arrive(order(od2 ? 1 : 0, g ^ 1));  // pass the epilogue turn
      }
#if !SMPIPE_PROBE
      if (clk0 && ct == 0 && j == 0) p.clocks[9] = clock64();
      if (clk0 && ct == 0 && j == jstep) p.clocks[11] = clock64();
#endif
      e_done += SUBTILES;
    }
    if (!PP && reuse && use_c) {
      // cooperative store_tail (ReuseSmemC): wait until every store read its smem, give back the C slots
      // still held (the last StagesD-1 subtiles)
      if (st_thread) bulk_wait_read<0>();
      named_bar_sync(bar_id, C::EPI_THREADS);
      const uint32_t lo = e_done > uint32_t(SD - 1) ? e_done - uint32_t(SD - 1) : 0u;
      for (uint32_t jj = lo; jj < e_done; ++jj) mbar_arrive(emptyC(jj % uint32_t(SC)));
    }
    if (st_thread) {  // store_tail: global writes complete before exit
      K2P(TAIL, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, -1);
      K2P(TMA_WAIT, NONE, 0, probe_id::NO_PHASE, 0, -1);
      bulk_wait_all();
      K2P(TMA_WAIT_END, NONE, 0, probe_id::NO_PHASE, 0, -1);
    }
#if !SMPIPE_PROBE
    if (p.clocks != nullptr && blockIdx.x == 0 && ct == 0) {  // Params::clocks: the end of CTA 0
      p.clocks[2] = clock64();
      p.clocks[3] = gtime();
    }
    if (clk_last && ct == 0) {  // ... and of the last CTA
      p.clocks[16] = clock64();
      p.clocks[17] = gtime();
    }
#endif
  }
  SMPIPE_PROBE_FINISH(pw);
}

#undef K2P
#undef K2P_T
}  // inline namespace K2_KERNEL_NS

}  // namespace k2
