// K2: the project's own sm_90a warp-specialized persistent GEMM (cooperative), bf16 in, fp32 accumulate,
// bf16 out:  D = alpha * A * B + beta * C.
//
// Layouts (all row-major, "TN" in BLAS terms):  A is M x K (K contiguous), B is N x K (K contiguous),
// C and D are M x N (N contiguous).  D[m][n] = alpha * sum_k A[m][k] * B[n][k] + beta * C[m][n].
// Requirements (TMA): K and N multiples of 8 (16-byte global strides), 16-byte aligned base pointers.
// M, N, K need not be multiples of the tile: TMA zero-fills out-of-bounds loads and clips stores.
//
// Structure (shared/spec/kernels.md K2, semantics.md §1-5), written from the PTX ISA, no CUTLASS code:
//   384 threads = 3 warpgroups.
//   WG 0 (producer, setmaxnreg.dec 40):  warp 0 lane 0 = mainloop TMA loads of A and B into a STAGES-deep
//        ring (full[s]: count 1, arrive.expect_tx(stage bytes) + TMA complete_tx; empty[s]: count 256,
//        every consumer thread arrives).  Producer state starts at phase 1 (first pass does not wait).
//        warp 2 lane 0 = epilogue C loads (only when beta != 0) into a StagesC ring fullC/emptyC,
//        started after the mainloop warp issued the first tile's loads (load_order barrier).
//        Both end with a producer tail (wait every empty barrier once more).
//   WG 1, 2 (consumers, setmaxnreg.inc 232): both work on the same BM x BN CTA tile, split along M
//        (WG g owns rows 64g .. 64g+63).  Per k-block: wait full[s] -> wgmma.fence -> BK/16 wgmma
//        m64nBNk16 (A, B from 128B-swizzled smem descriptors) -> commit -> wait_group(1) -> release the
//        *previous* stage (K_PIPE_MMAS = 1).  Epilogue per 128 x 32 subtile (EPI_M x EPI_N):
//        [beta != 0: wait fullC, read C from smem, arrive emptyC] -> alpha*acc + beta*c -> bf16 ->
//        smem D buffer (StagesD = 2, 64B swizzle) -> fence.proxy.async -> named barrier 1 (256) ->
//        thread 0: TMA store + commit_group + wait_group.read(StagesD-1) -> named barrier 1 again.
//   Persistent tile scheduler: grid = min(#SMs, #tiles); CTA b walks tiles b, b+grid, ...; tile index ->
//   (m block, n block) in groups of GROUP_M m-blocks (m fastest inside a group) for L2 reuse.
#pragma once

#include <cuda.h>  // CUtensorMap (the encoder is taken through cudaGetDriverEntryPointByVersion)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "k2_wgmma.cuh"
#include "probe.cuh"  // traces/probe.cuh: the capture probe; every SMPIPE_PROBE_* macro is empty unless SMPIPE_PROBE=1

namespace k2 {

#define K2_DEVI __device__ __forceinline__

constexpr int BM = 128;  // CTA tile M (two consumer warpgroups x 64 rows)
constexpr int BK = 64;   // CTA tile K: 64 bf16 = 128 bytes = one 128B-swizzle row
constexpr int EPI_M = 128, EPI_N = 32;  // epilogue subtile (CUTLASS cooperative default: min(128,BM) x min(32,BN))
constexpr int STAGES_C = 2, STAGES_D = 2;
constexpr int GROUP_M = 8;  // scheduler raster group (m blocks)
constexpr int NUM_THREADS = 384;
constexpr int CONSUMER_THREADS = 256;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;  // 128*40 + 256*232 = 64512 <= 65536

template <int BN_, int STAGES_>
struct Cfg {
  static constexpr int BN = BN_;
  static constexpr int STAGES = STAGES_;
  static_assert(BN == 128 || BN == 256, "wgmma N per consumer warpgroup");
  static constexpr int A_BYTES = BM * BK * 2;
  static constexpr int B_BYTES = BN * BK * 2;
  static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;  // expect_tx per stage (full boxes, OOB zero-fill counts)
  static constexpr int EPI_BYTES = EPI_M * EPI_N * 2;     // one C or D subtile, bf16
  static constexpr int SUBTILES = BN / EPI_N;             // epilogue subtiles per CTA tile (EPI_M == BM)
  static constexpr int OFF_A = 0;
  static constexpr int OFF_B = OFF_A + STAGES * A_BYTES;
  static constexpr int OFF_D = OFF_B + STAGES * B_BYTES;
  static constexpr int OFF_C = OFF_D + STAGES_D * EPI_BYTES;
  static constexpr int OFF_BAR = OFF_C + STAGES_C * EPI_BYTES;
  static constexpr int NUM_BARS = 2 * STAGES + 2 * STAGES_C + 1;
  static constexpr int SMEM_BYTES = OFF_BAR + NUM_BARS * 8 + 1024;  // + slack to align the base to 1024
  static_assert(SMEM_BYTES <= 232448, "exceeds the sm_90 opt-in shared memory per block");
};

// ------------------------------------------------------------------------------------------------
// PTX wrappers
// ------------------------------------------------------------------------------------------------
K2_DEVI uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

K2_DEVI void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
K2_DEVI void fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
K2_DEVI void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
K2_DEVI void mbar_arrive_expect_tx(uint32_t bar, uint32_t tx) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(tx) : "memory");
}
K2_DEVI uint32_t mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok;
}
K2_DEVI unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}
// Wait until the phase with parity `parity` has completed.  Bounded: a wait that lasts over ~4 s is a
// hang (no legitimate wait in this kernel lasts a millisecond); it traps so that the host sees a launch
// error instead of a stuck GPU.  Everything stays inline: a function call between wgmma issue and wait
// would make ptxas serialize the wgmma pipeline (C7510).
K2_DEVI void mbar_wait(uint32_t bar, uint32_t parity) {
  if (mbar_try_wait(bar, parity)) return;
  const unsigned long long deadline = gtime() + 4000000000ull;
  uint32_t spins = 0;
  while (!mbar_try_wait(bar, parity)) {
    if ((++spins & 1023u) == 0 && gtime() > deadline) asm volatile("trap;");
  }
}

K2_DEVI void named_bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
K2_DEVI void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

K2_DEVI void tma_load_2d(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}
K2_DEVI void tma_store_2d(const CUtensorMap* map, int x, int y, uint32_t src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(x), "r"(y), "r"(src)
               : "memory");
}
K2_DEVI void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
template <int N>
K2_DEVI void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
K2_DEVI void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
K2_DEVI void prefetch_tmap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

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

// Persistent tile scheduler: linear tile index -> (m block, n block), GROUP_M m-blocks per raster group.
K2_DEVI void tile_coords(int t, int n_mblk, int n_nblk, int& mb, int& nb) {
  const int per_group = GROUP_M * n_nblk;
  const int g = t / per_group;
  const int r = t - g * per_group;
  const int rows = min(GROUP_M, n_mblk - g * GROUP_M);
  mb = g * GROUP_M + r % rows;
  nb = r / rows;
}

struct Params {
  int M, N, K;
  float alpha, beta;
};

// Probe ids (traces/probe.cuh records; the driver's trace metadata names them, docs/trace-format.md).
namespace probe_id {
enum : uint32_t { FULL = 0, EMPTY = 1, C_FULL = 2, C_EMPTY = 3, LOAD_ORDER = 4, EPI = 5 };  // barriers
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

template <int BN, int STAGES>
__global__ void __launch_bounds__(NUM_THREADS, 1)
    k2_gemm_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                   const __grid_constant__ CUtensorMap tmC, const __grid_constant__ CUtensorMap tmD, Params p) {
  using C = Cfg<BN, STAGES>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;  // 1024-aligned for the 128B swizzle atoms
  unsigned char* base_ptr = smem_raw + (base - smem_u32(smem_raw));
  const uint32_t sA = base + C::OFF_A, sB = base + C::OFF_B, sD = base + C::OFF_D, sC = base + C::OFF_C;
  const uint32_t bars = base + C::OFF_BAR;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (STAGES + s); };
  auto fullC = [&](int s) { return bars + 8u * (2 * STAGES + s); };
  auto emptyC = [&](int s) { return bars + 8u * (2 * STAGES + STAGES_C + s); };
  const uint32_t load_order = bars + 8u * (2 * STAGES + 2 * STAGES_C);

  const int tid = threadIdx.x;
  const int warp = tid >> 5, lane = tid & 31;
  const bool use_c = p.beta != 0.0f;
  SMPIPE_PROBE_INIT(pw);

  if (tid == 0) {
    prefetch_tmap(&tmA);
    prefetch_tmap(&tmB);
    prefetch_tmap(&tmD);
    if (use_c) prefetch_tmap(&tmC);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);                   // one elected producer arrive.expect_tx per phase
      mbar_init(empty(s), CONSUMER_THREADS);   // every consumer thread releases
    }
    for (int s = 0; s < STAGES_C; ++s) {
      mbar_init(fullC(s), 1);
      mbar_init(emptyC(s), CONSUMER_THREADS);
    }
    mbar_init(load_order, 1);
    fence_mbar_init();
  }
  __syncthreads();

  const int n_mblk = (p.M + BM - 1) / BM, n_nblk = (p.N + BN - 1) / BN;
  const int n_tiles = n_mblk * n_nblk;
  const int k_blocks = (p.K + BK - 1) / BK;

  if (warp < 4) {
    // ================================ producer warpgroup ================================
    setmaxnreg_dec<PRODUCER_REGS>();
    if (warp == 0 && lane == 0) {
      // Mainloop loads.  PipelineState producer start: index 0, phase 1.
      int s = 0;
      uint32_t ph = 1;
      bool first = true;
      for (int t = blockIdx.x; t < n_tiles; t += gridDim.x) {
        SMPIPE_PROBE_TILE(pw, t, (t - blockIdx.x) / gridDim.x);
        int mb, nb;
        tile_coords(t, n_mblk, n_nblk, mb, nb);
        for (int kb = 0; kb < k_blocks; ++kb) {
          K2P(WAIT, EMPTY, s, ph, 0, kb);
          mbar_wait(empty(s), ph);                       // producer_acquire
          K2P(WAIT_END, EMPTY, s, ph, 0, kb);
          K2P(ARRIVE_EXPECT_TX, FULL, s, ph ^ 1, C::STAGE_BYTES, kb);
          mbar_arrive_expect_tx(full(s), C::STAGE_BYTES);  // expect the stage's bytes, arrive (count 1)
          K2P_T(TMA_LOAD, TA, FULL, s, ph ^ 1, C::A_BYTES, kb);
          tma_load_2d(sA + s * C::A_BYTES, &tmA, kb * BK, mb * BM, full(s));
          K2P_T(TMA_LOAD, TB, FULL, s, ph ^ 1, C::B_BYTES, kb);
          tma_load_2d(sB + s * C::B_BYTES, &tmB, kb * BK, nb * BN, full(s));
          if (++s == STAGES) { s = 0; ph ^= 1; }
        }
        if (first) {
          K2P(ARRIVE, LOAD_ORDER, probe_id::NONE, 0, 0, -1);
          mbar_arrive(load_order);  // the epilogue load warp may start now
          first = false;
        }
      }
      // producer_tail: wait until consumers released every stage once more.
      K2P(TAIL, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, -1);
      for (int i = 0; i < STAGES; ++i) {
        K2P(WAIT, EMPTY, s, ph, 0, i);
        mbar_wait(empty(s), ph);
        K2P(WAIT_END, EMPTY, s, ph, 0, i);
        if (++s == STAGES) { s = 0; ph ^= 1; }
      }
    } else if (warp == 2 && lane == 0 && use_c) {
      // Epilogue C loads (PipelineTransactionAsync<StagesC>; here one elected lane arrives, full count 1).
      if (blockIdx.x < n_tiles) {
        K2P(WAIT, LOAD_ORDER, probe_id::NONE, 0, 0, -1);
        mbar_wait(load_order, 0);
        K2P(WAIT_END, LOAD_ORDER, probe_id::NONE, 0, 0, -1);
      }
      int s = 0;
      uint32_t ph = 1;
      for (int t = blockIdx.x; t < n_tiles; t += gridDim.x) {
        SMPIPE_PROBE_TILE(pw, t, (t - blockIdx.x) / gridDim.x);
        int mb, nb;
        tile_coords(t, n_mblk, n_nblk, mb, nb);
        for (int i = 0; i < C::SUBTILES; ++i) {  // epi_n outer (epi_m has one step: EPI_M == BM)
          K2P(WAIT, C_EMPTY, s, ph, 0, i);
          mbar_wait(emptyC(s), ph);
          K2P(WAIT_END, C_EMPTY, s, ph, 0, i);
          K2P(ARRIVE_EXPECT_TX, C_FULL, s, ph ^ 1, C::EPI_BYTES, i);
          mbar_arrive_expect_tx(fullC(s), C::EPI_BYTES);
          K2P_T(TMA_LOAD, TC, C_FULL, s, ph ^ 1, C::EPI_BYTES, i);
          tma_load_2d(sC + s * C::EPI_BYTES, &tmC, nb * BN + i * EPI_N, mb * BM, fullC(s));
          if (++s == STAGES_C) { s = 0; ph ^= 1; }
        }
      }
      K2P(TAIL, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, -1);
      for (int i = 0; i < STAGES_C; ++i) {
        K2P(WAIT, C_EMPTY, s, ph, 0, i);
        mbar_wait(emptyC(s), ph);
        K2P(WAIT_END, C_EMPTY, s, ph, 0, i);
        if (++s == STAGES_C) { s = 0; ph ^= 1; }
      }
    }
  } else {
    // ================================ consumer warpgroups ================================
    setmaxnreg_inc<CONSUMER_REGS>();
    const int ct = tid - 128;        // 0..255
    const int g = ct >> 7;           // consumer warpgroup: rows 64g .. 64g+63 of the CTA tile
    const int w = (ct >> 5) & 3;     // warp inside the warpgroup
    const int l = ct & 31;
    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;

    int s = 0;
    uint32_t ph = 0;   // consumer start: phase 0
    int cs = 0;
    uint32_t cph = 0;
    uint32_t epi_count = 0;  // global subtile counter: D buffer = epi_count % STAGES_D
    const uint32_t a_off = g * 64 * 128;  // this warpgroup's 64 rows of A (8 swizzle atoms of 1024 B)

    for (int t = blockIdx.x; t < n_tiles; t += gridDim.x) {
      SMPIPE_PROBE_TILE(pw, t, (t - blockIdx.x) / gridDim.x);
      int mb, nb;
      tile_coords(t, n_mblk, n_nblk, mb, nb);

      // ------------------------------ mainloop ------------------------------
      int prev = -1;
      for (int kb = 0; kb < k_blocks; ++kb) {
        K2P(WAIT, FULL, s, ph, 0, kb);
        mbar_wait(full(s), ph);
        K2P(WAIT_END, FULL, s, ph, 0, kb);
        fence_regs(acc);
        // no probe branch between wgmma.fence and wgmma.commit (traces/probe.cuh): fused records around them
        K2P(WGMMA_FENCED, NONE, s, probe_id::NO_PHASE, 0, kb);  // index = the stage whose A and B it reads
        wgmma_fence();
        const uint64_t da = desc_k128(sA + s * C::A_BYTES + a_off);
        const uint64_t db = desc_k128(sB + s * C::B_BYTES);
#pragma unroll
        for (int k = 0; k < BK / 16; ++k) {
          // +32 bytes per k16 step = +2 in the descriptor's address field
          wgmma_ss_bf16<BN>(acc, da + 2 * k, db + 2 * k, (kb | k) != 0);
        }
        wgmma_commit();
        K2P(WGMMA_COMMIT_WAIT, NONE, 1, probe_id::NO_PHASE, 0, kb);
        wgmma_wait<1>();  // the previous k-block's wgmmas are done: its stage can be released
        K2P(WGMMA_WAIT_END, NONE, 1, probe_id::NO_PHASE, 0, kb);
        fence_regs(acc);
        if (prev >= 0) {
          // phase of empty[prev] this release counts towards = the consumer phase of stage prev
          K2P(ARRIVE, EMPTY, prev, s == 0 ? ph ^ 1u : ph, 0, kb);
          mbar_arrive(empty(prev));
        }
        prev = s;
        if (++s == STAGES) { s = 0; ph ^= 1; }
      }
      K2P(WGMMA_WAIT, NONE, 0, probe_id::NO_PHASE, 0, k_blocks);
      wgmma_wait<0>();
      K2P(WGMMA_WAIT_END, NONE, 0, probe_id::NO_PHASE, 0, k_blocks);
      fence_regs(acc);
      if (prev >= 0) {
        K2P(ARRIVE, EMPTY, prev, s == 0 ? ph ^ 1u : ph, 0, k_blocks);
        mbar_arrive(empty(prev));
      }
      K2P(EPILOGUE, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, t);

      // ------------------------------ epilogue ------------------------------
      const int r0 = 64 * g + 16 * w + (l >> 2);  // rows r0 and r0 + 8 of the tile
      const int c0 = 2 * (l & 3);                 // column pair inside each 8-column block
#pragma unroll
      for (int i = 0; i < C::SUBTILES; ++i) {
        const uint32_t dbuf = sD + (epi_count & 1u) * C::EPI_BYTES;
        float cv[16];
#pragma unroll
        for (int q = 0; q < 16; ++q) cv[q] = 0.f;
        if (use_c) {
          K2P(WAIT, C_FULL, cs, cph, 0, i);
          mbar_wait(fullC(cs), cph);
          K2P(WAIT_END, C_FULL, cs, cph, 0, i);
          K2P_T(LD_SHARED, TC, NONE, cs, probe_id::NO_PHASE, C::EPI_BYTES / 8, i);  // this warp's share of sC[cs]
          const unsigned char* cb = base_ptr + (sC - base) + cs * C::EPI_BYTES;
#pragma unroll
          for (int jj = 0; jj < 4; ++jj) {
            const uint32_t c = 8 * jj + c0;
            float2 lo = unpack_bf16x2(*reinterpret_cast<const uint32_t*>(cb + swz64(r0, c)));
            float2 hi = unpack_bf16x2(*reinterpret_cast<const uint32_t*>(cb + swz64(r0 + 8, c)));
            cv[4 * jj + 0] = lo.x;
            cv[4 * jj + 1] = lo.y;
            cv[4 * jj + 2] = hi.x;
            cv[4 * jj + 3] = hi.y;
          }
          K2P(ARRIVE, C_EMPTY, cs, cph, 0, i);
          mbar_arrive(emptyC(cs));  // consumer_release of the C slot (reads are done: values in registers)
          if (++cs == STAGES_C) { cs = 0; cph ^= 1; }
        }
        K2P_T(ST_SHARED, TD, NONE, epi_count & 1u, probe_id::NO_PHASE, C::EPI_BYTES / 8, i);  // math + sD writes
        unsigned char* db_ptr = base_ptr + (dbuf - base);
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          const int j = 4 * i + jj;  // 8-column block of the accumulator fragment
          const uint32_t c = 8 * jj + c0;
          const float v0 = p.alpha * acc[4 * j + 0] + p.beta * cv[4 * jj + 0];
          const float v1 = p.alpha * acc[4 * j + 1] + p.beta * cv[4 * jj + 1];
          const float v2 = p.alpha * acc[4 * j + 2] + p.beta * cv[4 * jj + 2];
          const float v3 = p.alpha * acc[4 * j + 3] + p.beta * cv[4 * jj + 3];
          *reinterpret_cast<uint32_t*>(db_ptr + swz64(r0, c)) = pack_bf16x2(v0, v1);
          *reinterpret_cast<uint32_t*>(db_ptr + swz64(r0 + 8, c)) = pack_bf16x2(v2, v3);
        }
        K2P(FENCE_PROXY_ASYNC, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, i);
        fence_proxy_async_smem();           // generic-proxy smem writes -> visible to the TMA store
        K2P(BAR_SYNC, EPI, probe_id::NONE, probe_id::NO_PHASE, 0, i);
        named_bar_sync(1, CONSUMER_THREADS);
        K2P(BAR_SYNC_END, EPI, probe_id::NONE, probe_id::NO_PHASE, 0, i);
        if (ct == 0) {
          K2P_T(TMA_STORE, TD, NONE, epi_count & 1u, probe_id::NO_PHASE, C::EPI_BYTES, i);
          tma_store_2d(&tmD, nb * BN + i * EPI_N, mb * BM, dbuf);
          K2P(TMA_COMMIT, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, i);
          bulk_commit();
          K2P(TMA_WAIT_READ, NONE, STAGES_D - 1, probe_id::NO_PHASE, 0, i);
          bulk_wait_read<STAGES_D - 1>();   // acquire: the other D buffer is no longer read
          K2P(TMA_WAIT_READ_END, NONE, STAGES_D - 1, probe_id::NO_PHASE, 0, i);
        }
        K2P(BAR_SYNC, EPI, probe_id::NONE, probe_id::NO_PHASE, 0, i);
        named_bar_sync(1, CONSUMER_THREADS);
        K2P(BAR_SYNC_END, EPI, probe_id::NONE, probe_id::NO_PHASE, 0, i);
        ++epi_count;
      }
    }
    if (ct == 0) {  // store_tail
      K2P(TAIL, NONE, probe_id::NONE, probe_id::NO_PHASE, 0, -1);
      K2P(TMA_WAIT, NONE, 0, probe_id::NO_PHASE, 0, -1);
      bulk_wait_all();
      K2P(TMA_WAIT_END, NONE, 0, probe_id::NO_PHASE, 0, -1);
    }
  }
  SMPIPE_PROBE_FINISH(pw);
}

#undef K2P
#undef K2P_T
}  // inline namespace K2_KERNEL_NS

}  // namespace k2
