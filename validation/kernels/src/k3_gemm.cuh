// K3: the project's own sm_100a block-scaled NVFP4 GEMM (shared/spec/kernels.md K3), written from the PTX ISA
// (tcgen05 = PTX 9.7.16, cluster launch control = 9.7.13.17-18 in the numbering of semantics.md), no CUTLASS.
//
//   D = quantize_nvfp4(alpha * (A * SFA) x (B * SFB)^T + beta * C)
//
// A: M x K, B: N x K, both e2m1 (FP4) packed two per byte, K contiguous, with one ue4m3 scale factor per 16 K
// (SFA, SFB in the 128x4-tiled layout of k3_nvfp4.h).  C: M x N bf16 (only with WITH_C).  D: M x N e2m1,
// N contiguous, with one new ue4m3 scale factor per 16 N (SFD, 128x4-tiled with N in the role of K).
// Requirements: M, N multiples of 128, K a multiple of 256 (no partial tiles).  The numerics of the epilogue
// are k3_nvfp4.h's (shared with the CPU reference k3_reference.h).
//
// NOT RUN: no sm_100 GPU exists where this project is built and tested (the lent machines are Hopper).  This
// file compiles for sm_100a and ptxas accepts it; nothing about its behaviour on hardware has been observed.
//
// Structure (1 CTA per SM, 256 threads, 1x1 cluster, cta_group::1; tile 128 x 128 x 256):
//   warp 0  MMA.  Allocates 512 TMEM columns (tcgen05.alloc), hands the address to the epilogue over named
//           barrier 6 (160 threads: this warp + the 4 epilogue warps), then per tile: acquire an accumulator
//           stage (acc_empty), per k-tile wait full[s] -> one lane: tcgen05.cp of the stage's SFA and SFB
//           (smem -> TMEM, 4 x .32x128b.warpx4 each) -> 4 x tcgen05.mma kind::mxf4nvf4.block_scale.scale_vec::4X
//           (K = 64 each) -> tcgen05.commit -> empty[s]; after the last k-tile tcgen05.commit -> acc_full[a].
//           After the work loop: relinquish the alloc permit, wait until the epilogue released both
//           accumulator stages, dealloc.
//   warp 1  scheduler (cluster launch control).  Loop: acquire clc_empty[c], arrive.expect_tx(16) on
//           clc_full[c], clusterlaunchcontrol.try_cancel into the 16-byte response slot c; consume the
//           response like every other role; stop after the first "not cancelled" (issuing another try_cancel
//           after observing a failure is undefined).  Tail: wait until every consumer released the last
//           SCHED_STAGES responses.
//   warp 2  mainloop load.  Per k-tile: wait empty[s] -> arrive.expect_tx(full[s], A+B+SFA+SFB bytes) ->
//           4 TMA loads (A 128x128 B and B 128x128 B with the 128B swizzle; SFA, SFB 2 KB each).  Producer
//           tail: wait every empty barrier once more.
//   warp 3  epilogue load (C).  WITH_C: per 128 x 32 subtile wait c_empty -> arrive.expect_tx(c_full, 8 KB) ->
//           TMA load (64B swizzle).  Without C the warp has no work and leaves at once (it is then not a CLC
//           consumer either, as in CUTLASS where the epilogue-load warp only participates when C is loaded).
//   warps 4..7  epilogue (128 threads; thread t owns row t of the tile: warp w reaches TMEM lanes 32(w%4)..+31).
//           Per tile: wait acc_full[a]; per 32-column subtile: tcgen05.ld.32x32b.x32 (its row, 32 fp32
//           columns), tcgen05.wait::ld; after the last subtile's load, tcgen05.fence::before_thread_sync and
//           arrive acc_empty[a]; [C: wait c_full, read its 32 bf16, arrive c_empty]; v = fmaf(alpha, acc,
//           beta * c); quantise two blocks of 16 (k3::quantize16) -> 16 bytes of D + 2 scale factors; D bytes to
//           an smem buffer (2 buffers), fence.proxy.async, named barrier 1 (128), one thread TMA-stores the
//           128 x 32 D subtile (and after the last subtile the tile's 1 KB of SFD), commit_group, and before
//           reusing a buffer cp.async.bulk.wait_group.read 1.
//   Every role walks the same tile sequence: its first tile is blockIdx.x (the grid has one CTA per tile), the
//   next ones come from the CLC pipeline (PipelineCLCFetchAsync-like: SCHED_STAGES response slots, clc_full
//   count 1 + 16 tx bytes, clc_empty count = every consumer thread); -1 = the grid is exhausted.
//
// Pipelines and barriers (mbarriers unless named):
//   full[s]       count 1   load warp arrive.expect_tx(STAGE_TX) + the 4 TMA complete_tx
//   empty[s]      count 1   tcgen05.commit (arrive::one) after the stage's MMAs
//   acc_full[a]   count 1   tcgen05.commit after the tile's last MMA         (PipelineUmmaAsync<2>)
//   acc_empty[a]  count 128 every epilogue thread after its last tcgen05.ld of the stage
//   clc_full[c]   count 1   scheduler arrive.expect_tx(16) + the try_cancel response's complete_tx(16)
//   clc_empty[c]  count 224 (+32 WITH_C)  every consumer thread: scheduler 32 + MMA 32 + load 32 + epilogue 128
//                           (+ epilogue load 32)
//   c_full[s]     count 1   epilogue-load lane arrive.expect_tx(8 KB) + TMA complete_tx   (K2's simplification:
//                           CUTLASS's PipelineTransactionAsync has count 32, all lanes arrive)
//   c_empty[s]    count 128 every epilogue thread after reading its C values
//   named barrier 6 (160): TMEM address hand-off; named barrier 1 (128): epilogue smem D buffer; barrier 0: init.
//
// TMEM (512 columns x 128 lanes of 32 bit; address = lane << 16 | column, PTX 9.7.16.1.1):
//   columns   0..127  accumulator stage 0 (fp32, lane m = row m of the tile, column n = column n: layout D,
//                     M = 128 cta_group::1, PTX 9.7.16.10.5.4);  128..255 accumulator stage 1
//   columns 256 + 32 s .. : the scale factors of mainloop stage s: SFA of MMA kb at +4 kb, SFB at +16 + 4 kb
//                     (4 columns per MMA each).  One region per smem stage, so a tcgen05.cp never overwrites
//                     scale factors that an MMA still in flight reads: mma -> cp is not one of the implicitly
//                     pipelined pairs (PTX 9.7.16.6.2.1 lists cp -> mma, not the reverse); the region of stage s
//                     is rewritten only after empty[s] completed, i.e. after the commit that tracks those MMAs.
//   STAGES 6 uses 256 + 192 = 448 columns; the allocation is 512 (a power of 2).
//
// The tcgen05 / CLC wrappers are inline asm written from the PTX ISA, with the syntax cross-checked against
// CCCL 13.0's cuda::ptx generated wrappers (include/cccl/cuda/__ptx/instructions/generated/); they are not
// used directly because some of them are non-volatile asm without a memory clobber (tcgen05.ld, tcgen05.cp),
// which the compiler may move across the mbarrier waits that order them.
#pragma once

#include <cuda.h>  // CUtensorMap (the encoder is taken through cudaGetDriverEntryPointByVersion)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "k3_nvfp4.h"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM100_ALL)
#error "k3_gemm.cuh: tcgen05 and the block-scaled MMA need the arch-specific target sm_100a (compute_100a)"
#endif

#include "ptx_common.cuh"

namespace k3 {

#define K3_DEVI __device__ __forceinline__

constexpr int BM = 128, BN = 128, BK = 256;  // CTA tile in FP4 elements (BK: 128 bytes of a row of A or B)
constexpr int MMA_K = 64;                     // kind::mxf4nvf4: K = 64 per tcgen05.mma (dense)
constexpr int KBLK = BK / MMA_K;              // 4 MMAs per mainloop stage
constexpr int EPI_N = 32;                     // epilogue subtile: 128 rows x 32 columns
constexpr int SUBTILES = BN / EPI_N;
constexpr int ACC_STAGES = 2, SCHED_STAGES = 2, STAGES_C = 2, STAGES_D = 2;
constexpr int NUM_THREADS = 256, EPI_THREADS = 128;
constexpr int WARP_MMA = 0, WARP_SCHED = 1, WARP_LOAD = 2, WARP_EPI_LOAD = 3;  // warps 4..7: epilogue
constexpr uint32_t TMEM_COLS = 512;
constexpr uint32_t TMEM_SF_COL0 = ACC_STAGES * BN;     // first scale-factor column
constexpr uint32_t TMEM_SF_COLS_STAGE = 2 * KBLK * 4;  // SFA + SFB of one stage: 4 columns per MMA each
constexpr int BAR_EPI = 1, BAR_TMEM = 6;              // named barriers (CUTLASS's ids: 1 epilogue, 6 TMEM hand-off)
constexpr int TMEM_BAR_THREADS = 32 + EPI_THREADS;
constexpr int SF_BLOCK = 512;                          // bytes of one 128 x 4 scale-factor block
constexpr int SMEM_LIMIT = 232448;                     // sm_100 opt-in shared memory per block

template <int STAGES_, bool WITH_C_>
struct Cfg {
  static constexpr int STAGES = STAGES_;
  static constexpr bool WITH_C = WITH_C_;
  static constexpr int A_BYTES = BM * BK / 2;                    // 16 KB: 128 rows x 128 B (FP4)
  static constexpr int B_BYTES = BN * BK / 2;                    // 16 KB
  static constexpr int SFA_BYTES = BM * BK / kSfVec;             // 2 KB: 4 blocks of 512 B (one per MMA)
  static constexpr int SFB_BYTES = BN * BK / kSfVec;             // 2 KB
  static constexpr int STAGE_TX = A_BYTES + B_BYTES + SFA_BYTES + SFB_BYTES;  // 36,864 B per stage
  static constexpr int C_BYTES = BM * EPI_N * 2;                 // 8 KB: a 128 x 32 bf16 C subtile
  static constexpr int D_BYTES = BM * EPI_N / 2;                 // 2 KB: a 128 x 32 FP4 D subtile
  static constexpr int SFD_BYTES = BM * BN / kSfVec;             // 1 KB: the tile's SFD (2 blocks)
  static constexpr int OFF_A = 0;                                // every A/B buffer 1024-aligned (128B swizzle)
  static constexpr int OFF_B = OFF_A + STAGES * A_BYTES;
  static constexpr int OFF_SFA = OFF_B + STAGES * B_BYTES;
  static constexpr int OFF_SFB = OFF_SFA + STAGES * SFA_BYTES;
  static constexpr int OFF_C = OFF_SFB + STAGES * SFB_BYTES;     // 512-aligned (64B swizzle)
  static constexpr int OFF_D = OFF_C + (WITH_C ? STAGES_C * C_BYTES : 0);
  static constexpr int OFF_SFD = OFF_D + STAGES_D * D_BYTES;
  static constexpr int OFF_CLC = OFF_SFD + 2 * SFD_BYTES;        // 16-byte try_cancel responses
  static constexpr int OFF_BAR = OFF_CLC + SCHED_STAGES * 16;
  static constexpr int NUM_BARS = 2 * STAGES + 2 * ACC_STAGES + 2 * SCHED_STAGES + 2 * STAGES_C;
  static constexpr int OFF_TMEM_SLOT = OFF_BAR + NUM_BARS * 8;  // tcgen05.alloc writes the TMEM address here
  static constexpr int SMEM_BYTES = OFF_TMEM_SLOT + 16 + 1024;  // + slack to align the base to 1024
  static constexpr int CLC_CONSUMERS = 32 + 32 + 32 + EPI_THREADS + (WITH_C ? 32 : 0);
  static_assert(SMEM_BYTES <= SMEM_LIMIT, "shared memory over the sm_100 opt-in limit: lower STAGES");
  static_assert(TMEM_SF_COL0 + STAGES * TMEM_SF_COLS_STAGE <= TMEM_COLS, "TMEM: scale-factor regions do not fit");
  static_assert(OFF_C % 1024 == 0 && OFF_D % 128 == 0 && OFF_SFD % 128 == 0 && OFF_CLC % 16 == 0, "alignment");
};

// ------------------------------------------------------------------------------------------------
// Descriptors
// ------------------------------------------------------------------------------------------------
// Instruction descriptor, PTX 9.7.16.4.2 Table 44 ("Instruction descriptor format for .kind::mxf4 and
// .kind::mxf4nvf4"), 32 bits:
//   0-1 reserved 0 | 2 sparsity (dense 0) | 3 reserved | 4-5 Matrix B scale factor data ID (scale_vec::4X: must
//   be 0, PTX 9.7.16.10.7.3.3) | 6 reserved | 7-9 atype (E2M1 = 1) | 10-11 btype (E2M1 = 1) | 12 reserved |
//   13 negate A | 14 negate B | 15 transpose A (0 = K-major; mxf4nvf4 supports only 0) | 16 transpose B (0) |
//   17-22 N >> 3 | 23 scale type (UE4M3 = 0, UE8M0 = 1) | 24-26 reserved | 27-28 M >> 7 |
//   29-30 Matrix A scale factor data ID (0) | 31 K dimension (dense K = 64: 0).
// There is no D-type field: the accumulator is fp32.
constexpr uint32_t make_idesc_mxf4nvf4_ue4m3(int M, int N) {
  return (0u << 2)                             // dense
         | (0u << 4)                           // SFB ID
         | (1u << 7)                           // atype E2M1
         | (1u << 10)                          // btype E2M1
         | (0u << 13) | (0u << 14)             // no negation
         | (0u << 15) | (0u << 16)             // A and B K-major
         | (static_cast<uint32_t>(N >> 3) << 17)
         | (0u << 23)                          // scale factors are UE4M3 (NVFP4)
         | (static_cast<uint32_t>(M >> 7) << 27)
         | (0u << 29)                          // SFA ID
         | (0u << 31);                         // K = 64
}
constexpr uint32_t IDESC = make_idesc_mxf4nvf4_ue4m3(BM, BN);
static_assert(BM == 128, "cta_group::1 block-scaled MMA: M = 128 only");
static_assert(BN % 16 == 0 && BN >= 16 && BN <= 256, "MMA N");
static_assert(IDESC == 0x08200480u, "instruction descriptor for M 128, N 128, E2M1 x E2M1, UE4M3 scales");

// Shared-memory matrix descriptor, PTX 9.7.16.4.1, 64 bits:
//   0-13 start address >> 4 | 16-29 leading-dimension byte offset (LBO) >> 4 | 32-45 stride-dimension byte
//   offset (SBO) >> 4 | 46-48 fixed 0b001 | 49-51 matrix base offset | 52 LBO mode (0: byte offset) |
//   53-60 fixed 0 | 61-63 swizzle (0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B).
// Each field's value is (x & 0x3FFFF) >> 4 ("matrix-descriptor-encode").
K3_DEVI uint64_t desc_field(uint32_t bytes) { return static_cast<uint64_t>((bytes & 0x3FFFFu) >> 4); }

// A or B stage buffer: K-major, 128B swizzle, rows of 128 bytes (256 FP4), 8-row swizzle atoms of 1024 B.
//   LBO: unused for swizzled K-major layouts ("assumed 1"); SBO = 1024 (8 rows x 128 B between 8-row groups);
//   base offset 0 (every buffer is 1024-aligned).  The k-th MMA (K = 64 FP4 = 32 bytes) of the stage adds
//   32 k bytes to the start address (+2 k in bits 0-13), inside the swizzle atom as TMA wrote it.
K3_DEVI uint64_t desc_kmajor_sw128(uint32_t saddr) {
  return desc_field(saddr) | (uint64_t{1} << 16) | (desc_field(1024) << 32) | (uint64_t{1} << 46) |
         (uint64_t{2} << 61);
}
// Scale-factor block (tcgen05.cp source): 32 rows x 16 bytes contiguous, K-major, no swizzle: core matrices
// of 8 rows x 16 B (128 B), SBO = 128 between 8-row groups; one 16-byte column only, so LBO is not used (0).
K3_DEVI uint64_t desc_sf_block(uint32_t saddr) {
  return desc_field(saddr) | (desc_field(128) << 32) | (uint64_t{1} << 46) | (uint64_t{0} << 61);
}

// ------------------------------------------------------------------------------------------------
// PTX wrappers: mbarrier, named barriers, TMA (as K2)
// ------------------------------------------------------------------------------------------------
using namespace kptx;  // ptx_common.cuh
K3_DEVI void st_shared_v4(uint32_t addr, const uint32_t (&v)[4]) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3])
               : "memory");
}
K3_DEVI void st_shared_u32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
K3_DEVI uint4 ld_shared_v4(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

// ------------------------------------------------------------------------------------------------
// PTX wrappers: tcgen05 (PTX 9.7.16) -- all cta_group::1
// ------------------------------------------------------------------------------------------------
// 9.7.16.7.1 tcgen05.alloc: one whole warp; nCols a power of 2 in 32..512; writes the TMEM address (lane 0,
// first column) to shared memory; blocks until the columns are free.
K3_DEVI void tmem_alloc(uint32_t slot_smem, uint32_t ncols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(slot_smem), "r"(ncols)
               : "memory");
}
K3_DEVI void tmem_relinquish_alloc_permit() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}
K3_DEVI void tmem_dealloc(uint32_t taddr, uint32_t ncols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(ncols) : "memory");
}
// 9.7.16.11.1 tcgen05.fence: order tcgen05 operations across a thread synchronisation (mbarrier, bar.sync).
K3_DEVI void tc_fence_before_sync() { asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory"); }
K3_DEVI void tc_fence_after_sync() { asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory"); }
// 9.7.16.9.2 tcgen05.cp: smem (matrix descriptor) -> TMEM, asynchronous, single thread.  .32x128b.warpx4:
// 32 rows of 128 bits, multicast to the four 32-lane quarters (row r -> lanes r, 32 + r, 64 + r, 96 + r),
// 4 columns from taddr.
K3_DEVI void utccp_32x128b_warpx4(uint32_t taddr, uint64_t sdesc) {
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(sdesc) : "memory");
}
// 9.7.16.10.9.1 tcgen05.mma, block-scaled (9.7.16.10.7): D[d_tmem] (+)= (A * scale_A) x (B * scale_B); A and B from smem
// descriptors, scale_A / scale_B from TMEM; enable_input_d = 0 overwrites D (the first MMA of a tile).
K3_DEVI void umma_mxf4nvf4(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc, uint32_t sfa_tmem,
                           uint32_t sfb_tmem, uint32_t accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %6, 0;\n"
      " tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%0], %1, %2, %3, [%4], [%5], p;\n}" ::"r"(
          d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(sfa_tmem), "r"(sfb_tmem), "r"(accumulate)
      : "memory");
}
// 9.7.16.12.1 tcgen05.commit: when every prior asynchronous tcgen05 op of this thread (mma, cp) has completed,
// arrive once on the mbarrier (cluster scope; the CTA's own barrier is a valid shared::cluster address).
K3_DEVI void umma_commit(uint32_t bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar) : "memory");
}
// 9.7.16.8.3 tcgen05.ld .32x32b.x32 (shapes: 9.7.16.2.3): lane i of the warp reads TMEM lane (taddr.lane + i), 32 consecutive
// 32-bit columns from taddr.column.  Asynchronous: the registers are valid after tcgen05.wait::ld.
K3_DEVI void tmem_ld_32x32b_x32(uint32_t taddr, uint32_t (&r)[32]) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
      "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=r"(r[8]),
        "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15]), "=r"(r[16]),
        "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]),
        "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
      : "r"(taddr)
      : "memory");
}
// 9.7.16.8.5 tcgen05.wait::ld, then pass the registers through an empty asm so that no use of them is scheduled before
// the wait (volatile asm statements keep their order; the uses depend on the second one's outputs).
K3_DEVI void tmem_wait_ld(uint32_t (&r)[32]) {
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// ------------------------------------------------------------------------------------------------
// PTX wrappers: cluster launch control (PTX 9.7.13.17-18 as numbered in semantics.md)
// ------------------------------------------------------------------------------------------------
// try_cancel: asynchronously try to cancel a not-yet-launched cluster of the grid; the 16-byte response lands
// at resp (16-byte aligned, shared::cta) and complete_tx(16) goes to the mbarrier.  The issuing thread has
// already done arrive.expect_tx(16) on that barrier.
K3_DEVI void clc_try_cancel(uint32_t resp, uint32_t bar) {
  asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%0], [%1];" ::"r"(
                   resp),
               "r"(bar)
               : "memory");
}
// Reads a response: the first ctaid.x of the cancelled cluster, or -1 when none was cancelled (get_first_ctaid
// is undefined on a failed response, so it is only executed under the predicate).
K3_DEVI int clc_read_response(uint32_t resp) {
  uint32_t ok, x;
  asm volatile(
      "{\n .reg .b128 r;\n .reg .pred p;\n"
      " ld.shared.b128 r, [%2];\n"
      " clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, r;\n"
      " selp.u32 %0, 1, 0, p;\n"
      " mov.u32 %1, 0;\n"
      " @p clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %1, r;\n}"
      : "=r"(ok), "=r"(x)
      : "r"(resp)
      : "memory");
  return ok ? static_cast<int>(x) : -1;
}

struct Params {
  int M, N, K;
  float alpha, beta;
};

// ------------------------------------------------------------------------------------------------
// The kernel
// ------------------------------------------------------------------------------------------------
template <int STAGES, bool WITH_C>
__global__ void __launch_bounds__(NUM_THREADS, 1)
    k3_gemm_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                   const __grid_constant__ CUtensorMap tmSFA, const __grid_constant__ CUtensorMap tmSFB,
                   const __grid_constant__ CUtensorMap tmC, const __grid_constant__ CUtensorMap tmD,
                   const __grid_constant__ CUtensorMap tmSFD, Params p) {
  using C = Cfg<STAGES, WITH_C>;
  extern __shared__ unsigned char smem_raw[];  // aligned to 1024 below (the Cfg has 1 KB of slack)
  const uint32_t raw = smem_u32(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;  // 1024-aligned: 128B-swizzle atoms
  const unsigned char* const base_ptr = smem_raw + (base - raw);
  const uint32_t sA = base + C::OFF_A, sB = base + C::OFF_B, sSFA = base + C::OFF_SFA, sSFB = base + C::OFF_SFB;
  const uint32_t sC = base + C::OFF_C, sD = base + C::OFF_D, sSFD = base + C::OFF_SFD, sCLC = base + C::OFF_CLC;
  const uint32_t bars = base + C::OFF_BAR;
  const uint32_t tmem_slot = base + C::OFF_TMEM_SLOT;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (STAGES + s); };
  auto acc_full = [&](uint32_t a) { return bars + 8u * (2 * STAGES + a); };
  auto acc_empty = [&](uint32_t a) { return bars + 8u * (2 * STAGES + ACC_STAGES + a); };
  auto clc_full = [&](uint32_t c) { return bars + 8u * (2 * STAGES + 2 * ACC_STAGES + c); };
  auto clc_empty = [&](uint32_t c) { return bars + 8u * (2 * STAGES + 2 * ACC_STAGES + SCHED_STAGES + c); };
  auto c_full = [&](int s) { return bars + 8u * (2 * STAGES + 2 * ACC_STAGES + 2 * SCHED_STAGES + s); };
  auto c_empty = [&](int s) { return bars + 8u * (2 * STAGES + 2 * ACC_STAGES + 2 * SCHED_STAGES + STAGES_C + s); };
  // Consume CLC response number `it` (every thread of every consumer warp): wait for it, decode it, order the
  // generic-proxy read before the scheduler's next try_cancel (async proxy) into the same slot, release it.
  auto clc_fetch = [&](uint32_t it) {
    const uint32_t c = it % SCHED_STAGES;
    mbar_wait(clc_full(c), (it / SCHED_STAGES) & 1u);
    const int next = clc_read_response(sCLC + 16u * c);
    fence_proxy_async_smem();
    mbar_arrive(clc_empty(c));
    return next;
  };

  const int warp = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 32, 0);  // warp-uniform
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int tiles_m = p.M / BM;
  const int k_tiles = p.K / BK;
  const int sf_rows_per_mblock_k = (p.K / MMA_K) * (SF_BLOCK / 128);  // 128-byte SFA/SFB rows per 128 rows of A/B
  const int sf_rows_per_mblock_d = (p.N / MMA_K) * (SF_BLOCK / 128);  // same for SFD (N plays K)

  if (threadIdx.x == 0) {
    prefetch_tmap(&tmA);
    prefetch_tmap(&tmB);
    prefetch_tmap(&tmSFA);
    prefetch_tmap(&tmSFB);
    prefetch_tmap(&tmD);
    prefetch_tmap(&tmSFD);
    if (WITH_C) prefetch_tmap(&tmC);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), 1);
    }
    for (uint32_t a = 0; a < ACC_STAGES; ++a) {
      mbar_init(acc_full(a), 1);
      mbar_init(acc_empty(a), EPI_THREADS);
    }
    for (uint32_t c = 0; c < SCHED_STAGES; ++c) {
      mbar_init(clc_full(c), 1);
      mbar_init(clc_empty(c), C::CLC_CONSUMERS);
    }
    for (int s = 0; s < STAGES_C; ++s) {
      mbar_init(c_full(s), 1);
      mbar_init(c_empty(s), EPI_THREADS);
    }
    fence_mbar_init();
  }
  __syncthreads();

  if (warp == WARP_MMA) {
    // ===================================== MMA =====================================
    tmem_alloc(tmem_slot, TMEM_COLS);
    tc_fence_before_sync();
    named_bar_sync(BAR_TMEM, TMEM_BAR_THREADS);  // hand-off to the epilogue (and back to this warp)
    tc_fence_after_sync();
    const uint32_t tmem = *reinterpret_cast<const volatile uint32_t*>(base_ptr + C::OFF_TMEM_SLOT);

    int tile = blockIdx.x;
    uint32_t it = 0, acc_n = 0;
    int s = 0;
    uint32_t ph = 0;  // consumer of full[]: phase 0
    while (tile >= 0) {
      const uint32_t a = acc_n % ACC_STAGES;
      mbar_wait(acc_empty(a), ((acc_n / ACC_STAGES) & 1u) ^ 1u);  // producer of the accumulator: phase 1 first
      tc_fence_after_sync();
      const uint32_t d_tmem = tmem + a * BN;
      for (int kt = 0; kt < k_tiles; ++kt) {
        mbar_wait(full(s), ph);
        tc_fence_after_sync();
        if (lane == 0) {
          const uint32_t sf_tmem = tmem + TMEM_SF_COL0 + static_cast<uint32_t>(s) * TMEM_SF_COLS_STAGE;
          const uint32_t sfa_smem = sSFA + s * C::SFA_BYTES, sfb_smem = sSFB + s * C::SFB_BYTES;
#pragma unroll
          for (int kb = 0; kb < KBLK; ++kb) {
            utccp_32x128b_warpx4(sf_tmem + 4 * kb, desc_sf_block(sfa_smem + kb * SF_BLOCK));
            utccp_32x128b_warpx4(sf_tmem + 16 + 4 * kb, desc_sf_block(sfb_smem + kb * SF_BLOCK));
          }
          const uint64_t da = desc_kmajor_sw128(sA + s * C::A_BYTES);
          const uint64_t db = desc_kmajor_sw128(sB + s * C::B_BYTES);
#pragma unroll
          for (int kb = 0; kb < KBLK; ++kb)  // +32 bytes of K per MMA = +2 in the address field
            umma_mxf4nvf4(d_tmem, da + 2 * kb, db + 2 * kb, IDESC, sf_tmem + 4 * kb, sf_tmem + 16 + 4 * kb,
                          (kt | kb) != 0);
          umma_commit(empty(s));  // the stage's smem and TMEM scale factors are free once these MMAs are done
        }
        __syncwarp();
        if (++s == STAGES) {
          s = 0;
          ph ^= 1u;
        }
      }
      if (lane == 0) umma_commit(acc_full(a));  // the tile's accumulator is complete
      __syncwarp();
      ++acc_n;
      tile = clc_fetch(it++);
    }
    __syncwarp();  // .sync.aligned instructions below: the whole warp, converged
    tmem_relinquish_alloc_permit();
    for (uint32_t i = 0; i < ACC_STAGES; ++i) {  // the epilogue has released every accumulator stage
      const uint32_t n = acc_n + i;
      mbar_wait(acc_empty(n % ACC_STAGES), ((n / ACC_STAGES) & 1u) ^ 1u);
    }
    tc_fence_after_sync();
    __syncwarp();
    tmem_dealloc(tmem, TMEM_COLS);
  } else if (warp == WARP_SCHED) {
    // ================================ CLC scheduler ================================
    uint32_t it = 0;
    while (true) {
      const uint32_t c = it % SCHED_STAGES;
      if (lane == 0) {
        mbar_wait(clc_empty(c), ((it / SCHED_STAGES) & 1u) ^ 1u);  // producer: phase 1 first
        fence_proxy_async_smem();                                    // consumers' reads before the async write
        mbar_arrive_expect_tx(clc_full(c), 16);
        clc_try_cancel(sCLC + 16u * c, clc_full(c));
      }
      __syncwarp();
      const int next = clc_fetch(it++);  // the scheduler consumes too: it must see a failure before stopping
      if (next < 0) break;
    }
    if (lane == 0) {  // tail: every consumer has released the responses before the warp exits
      for (uint32_t i = 0; i < SCHED_STAGES; ++i) {
        const uint32_t n = it + i;
        mbar_wait(clc_empty(n % SCHED_STAGES), ((n / SCHED_STAGES) & 1u) ^ 1u);
      }
    }
  } else if (warp == WARP_LOAD) {
    // ================================ mainloop loads ================================
    int tile = blockIdx.x;
    uint32_t it = 0;
    int s = 0;
    uint32_t ph = 1;  // producer start state: phase 1 (the first pass does not wait)
    while (tile >= 0) {
      const int tm = tile % tiles_m, tn = tile / tiles_m;
      if (lane == 0) {
        for (int kt = 0; kt < k_tiles; ++kt) {
          mbar_wait(empty(s), ph);
          mbar_arrive_expect_tx(full(s), C::STAGE_TX);
          tma_load_2d(sA + s * C::A_BYTES, &tmA, kt * (BK / 2), tm * BM, full(s));
          tma_load_2d(sB + s * C::B_BYTES, &tmB, kt * (BK / 2), tn * BN, full(s));
          // Scale factors: the 4 consecutive 512-byte blocks of k-tile kt (tensor map rows of 128 bytes).
          tma_load_2d(sSFA + s * C::SFA_BYTES, &tmSFA, 0, tm * sf_rows_per_mblock_k + kt * KBLK * 4, full(s));
          tma_load_2d(sSFB + s * C::SFB_BYTES, &tmSFB, 0, tn * sf_rows_per_mblock_k + kt * KBLK * 4, full(s));
          if (++s == STAGES) {
            s = 0;
            ph ^= 1u;
          }
        }
      }
      __syncwarp();
      tile = clc_fetch(it++);
    }
    if (lane == 0) {  // producer tail: every stage released before the CTA may exit
      for (int i = 0; i < STAGES; ++i) {
        mbar_wait(empty(s), ph);
        if (++s == STAGES) {
          s = 0;
          ph ^= 1u;
        }
      }
    }
  } else if (warp == WARP_EPI_LOAD) {
    // ================================ epilogue C loads ================================
    if constexpr (WITH_C) {
      int tile = blockIdx.x;
      uint32_t it = 0;
      int cs = 0;
      uint32_t cph = 1;
      while (tile >= 0) {
        const int tm = tile % tiles_m, tn = tile / tiles_m;
        if (lane == 0) {
          for (int sub = 0; sub < SUBTILES; ++sub) {
            mbar_wait(c_empty(cs), cph);
            mbar_arrive_expect_tx(c_full(cs), C::C_BYTES);
            tma_load_2d(sC + cs * C::C_BYTES, &tmC, tn * BN + sub * EPI_N, tm * BM, c_full(cs));
            if (++cs == STAGES_C) {
              cs = 0;
              cph ^= 1u;
            }
          }
        }
        __syncwarp();
        tile = clc_fetch(it++);
      }
      if (lane == 0) {
        for (int i = 0; i < STAGES_C; ++i) {
          mbar_wait(c_empty(cs), cph);
          if (++cs == STAGES_C) {
            cs = 0;
            cph ^= 1u;
          }
        }
      }
    }
  } else {
    // ================================ epilogue (warps 4..7) ================================
    const int t = static_cast<int>(threadIdx.x) - 4 * 32;  // row of the tile this thread owns
    const uint32_t quarter = static_cast<uint32_t>(warp) & 3u;  // TMEM lanes 32 q .. 32 q + 31 (PTX 9.7.16.8.1)
    named_bar_sync(BAR_TMEM, TMEM_BAR_THREADS);
    tc_fence_after_sync();
    const uint32_t tmem = *reinterpret_cast<const volatile uint32_t*>(base_ptr + C::OFF_TMEM_SLOT);
    const uint32_t tmem_rows = tmem + ((quarter * 32u) << 16);

    int tile = blockIdx.x;
    uint32_t it = 0, acc_n = 0, epi_n = 0, tile_n = 0;
    int cs = 0;
    uint32_t cph = 0;
    while (tile >= 0) {
      const int tm = tile % tiles_m, tn = tile / tiles_m;
      const uint32_t a = acc_n % ACC_STAGES;
      mbar_wait(acc_full(a), (acc_n / ACC_STAGES) & 1u);
      tc_fence_after_sync();
      uint32_t sf_word = 0;  // this row's 4 scale factors of the current 64-column block
      for (int sub = 0; sub < SUBTILES; ++sub) {
        uint32_t r[32];
        __syncwarp();  // tcgen05.ld / wait::ld are .sync.aligned: the warp converged after the t == 0 branches
        tmem_ld_32x32b_x32(tmem_rows + a * BN + sub * EPI_N, r);
        tmem_wait_ld(r);
        if (sub == SUBTILES - 1) {  // every TMEM read of this stage is done: release it to the MMA warp
          tc_fence_before_sync();
          mbar_arrive(acc_empty(a));
        }
        float v[32];
        if constexpr (WITH_C) {
          mbar_wait(c_full(cs), cph);
          const uint32_t cb = sC + cs * C::C_BYTES + t * 64;  // row t: 64 bytes, 16-byte chunks 64B-swizzled
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const uint4 w = ld_shared_v4(cb + ((((uint32_t)j ^ ((uint32_t)t >> 1)) & 3u) << 4));
            const uint32_t ws[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
            for (int h = 0; h < 4; ++h) {
              const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&ws[h]));
              const int n = 8 * j + 2 * h;
              v[n] = epilogue_value(p.alpha, __uint_as_float(r[n]), p.beta, f.x);
              v[n + 1] = epilogue_value(p.alpha, __uint_as_float(r[n + 1]), p.beta, f.y);
            }
          }
          mbar_arrive(c_empty(cs));
          if (++cs == STAGES_C) {
            cs = 0;
            cph ^= 1u;
          }
        } else {
#pragma unroll
          for (int n = 0; n < 32; ++n) v[n] = epilogue_value(p.alpha, __uint_as_float(r[n]), p.beta, 0.0f);
        }
        uint32_t packed[4];
        const uint32_t sf0 = quantize16(v, packed[0], packed[1]);
        const uint32_t sf1 = quantize16(v + 16, packed[2], packed[3]);
        sf_word |= (sf0 | (sf1 << 8)) << (16 * (sub & 1));  // blocks 2 sub, 2 sub + 1 of the tile's 8
        const uint32_t dbuf = epi_n % STAGES_D;
        if (t == 0) bulk_wait_read<STAGES_D - 1>();  // the buffer being reused has been read by its TMA store
        named_bar_sync(BAR_EPI, EPI_THREADS);
        st_shared_v4(sD + dbuf * C::D_BYTES + t * 16, packed);  // row t: 16 bytes = 32 FP4
        if (sub & 1) {  // a 64-column block of scale factors is complete: its 128x4-tiled position
          st_shared_u32(sSFD + (tile_n & 1u) * C::SFD_BYTES + (sub >> 1) * SF_BLOCK + (t % 32) * 16 + (t / 32) * 4,
                        sf_word);
          sf_word = 0;
        }
        fence_proxy_async_smem();  // generic-proxy smem writes -> visible to the TMA store (async proxy)
        named_bar_sync(BAR_EPI, EPI_THREADS);
        if (t == 0) {
          tma_store_2d(&tmD, tn * (BN / 2) + sub * (EPI_N / 2), tm * BM, sD + dbuf * C::D_BYTES);
          if (sub == SUBTILES - 1)  // the tile's SFD: 2 blocks of 512 B, contiguous in the tiled layout
            tma_store_2d(&tmSFD, 0, tm * sf_rows_per_mblock_d + tn * (BN / MMA_K) * 4,
                         sSFD + (tile_n & 1u) * C::SFD_BYTES);
          bulk_commit();
        }
        ++epi_n;
      }
      ++acc_n;
      ++tile_n;
      tile = clc_fetch(it++);
    }
    if (t == 0) bulk_wait_all();  // store tail
  }
}

}  // namespace k3
