// K1: sm80-style back-to-back GEMM with the first GEMM's result staged in shared memory (kernels.md "K1",
// seed sm80_b2b_gemm_smem_accumulator.txt).  This header holds everything but the PTX: the tile constants,
// the shared-memory layout (XOR swizzles), and the per-thread CTA program `cta_body`, written against an
// `Ops` policy (ldmatrix, mma, cp.async, commit/wait, __syncthreads, shared/global accesses).  The GPU
// kernel (k1_b2b.cuh) instantiates it with inline PTX; the CPU emulation test (tests/k1_emulation_test.cpp)
// runs the very same code with 128 host threads, an emulated warp (ldmatrix / mma exchange), and cp.async
// copies that land either at issue or only at the wait that retires them (so a stage read too early or
// written too early shows up as wrong numbers), plus a bank-conflict count of every shared access.
// Plain C++17 when not compiled by nvcc (no CUDA header needed).
//
// Problem (row-major storage, fp16 values as raw uint16_t bits, fp32 accumulation):
//   D1[m][n]  = ReLU(alpha0 * sum_k A0[m][k] * B0[n][k] + bias0[n])      A0: M x K0,  B0: N0 x K0 (K contiguous)
//              rounded to fp16 and kept in shared memory (never written to global memory)
//   D[m][j]   = ReLU(alpha1 * sum_n D1[m][n] * B1[j][n] + beta1 * C1[m][j])   B1: N1 x N0 (N0 contiguous),
//                                                                              C1, D: M x N1
// B0 / B1 stored N x K ("column-major K x N", CUTLASS's ColumnMajor B) so that both mma B fragments come from
// ldmatrix without .trans; A0 and the staged D1 are row-major (K contiguous), also plain ldmatrix.
// Shapes the kernel does: N0 == 64 (the whole D1 row block of a CTA is one 64 x 64 tile), K0 a multiple of
// 32, N1 a multiple of 256, any M >= 1 (rows past M are zero-filled on load and never stored).
#pragma once
#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define K1_HD __host__ __device__ __forceinline__
#define K1_UNROLL _Pragma("unroll")
#else
#define K1_HD inline
#define K1_UNROLL
#endif

namespace k1 {

// ---- tiles (CUTLASS example 13, fused_two_gemms_f16_sm80_shmem) ----
constexpr int BM = 64;        // threadblock M, both GEMMs
constexpr int BN0 = 64;       // threadblock N of GEMM0 (= N0 = K of GEMM1)
constexpr int BK = 32;        // threadblock K, both GEMMs
constexpr int BN1 = 256;      // threadblock N of GEMM1
constexpr int STAGES = 3;     // cp.async stages, both GEMMs
constexpr int THREADS = 128;  // 4 warps in both GEMMs
constexpr int WARPS = THREADS / 32;
constexpr int KGROUPS = BK / 16;  // warp k-groups (mma k16 steps) per k-tile: 2
// GEMM0 warp tile 32 x 32 x 32, warps 2 (M) x 2 (N)
constexpr int WM0 = 32, WN0 = 32, MT0 = WM0 / 16, NT0 = WN0 / 8;
// GEMM1 warp tile 64 x 64 x 32, warps 1 (M) x 4 (N)
constexpr int WM1 = 64, WN1 = 64, MT1 = WM1 / 16, NT1 = WN1 / 8;
constexpr int K1 = BN0;            // GEMM1's K
constexpr int KT1 = K1 / BK;       // GEMM1 k-tiles: 2
constexpr int KK1 = K1 / 16;       // GEMM1 k16 steps: 4
static_assert((BM / WM0) * (BN0 / WN0) == WARPS && (BM / WM1) * (BN1 / WN1) == WARPS, "same warp count in both GEMMs");

// ---- cp.async: 16-byte pieces (8 fp16) per thread per stage, and per warp k-group (interleaving) ----
constexpr int A0_PIECES = BM * BK / 8 / THREADS;   // 2
constexpr int B0_PIECES = BN0 * BK / 8 / THREADS;  // 2
constexpr int B1_PIECES = BN1 * BK / 8 / THREADS;  // 8
constexpr int A0_PER_GROUP = A0_PIECES / KGROUPS;  // 1 (CUTLASS kAccessesPerGroupA0)
constexpr int B0_PER_GROUP = B0_PIECES / KGROUPS;  // 1
constexpr int B1_PER_GROUP = B1_PIECES / KGROUPS;  // 4
static_assert(A0_PIECES % KGROUPS == 0 && B0_PIECES % KGROUPS == 0 && B1_PIECES % KGROUPS == 0, "");

// ---- shared memory (byte offsets from the dynamic smem base; 81,920 B) ----
constexpr uint32_t A0_STAGE_BYTES = BM * BK * 2;   // 4 KB
constexpr uint32_t B0_STAGE_BYTES = BN0 * BK * 2;  // 4 KB
constexpr uint32_t B1_STAGE_BYTES = BN1 * BK * 2;  // 16 KB
constexpr uint32_t D1_BYTES = BM * BN0 * 2;        // 8 KB
constexpr uint32_t OFF_A0 = 0;
constexpr uint32_t OFF_B0 = OFF_A0 + STAGES * A0_STAGE_BYTES;
constexpr uint32_t OFF_B1 = OFF_B0 + STAGES * B0_STAGE_BYTES;
constexpr uint32_t OFF_D1 = OFF_B1 + STAGES * B1_STAGE_BYTES;
constexpr uint32_t SMEM_BYTES = OFF_D1 + D1_BYTES;

// Swizzles (XOR on 16-byte chunk indices, no padding).
// k-tiles (A0, B0, B1 stages): rows of 32 fp16 = 64 B = 4 chunks.  Two consecutive rows form one 128-byte
// line (8 chunks, all 32 banks); logical chunk (r & 1) * 4 + c of line r / 2 is stored at physical chunk
// ((r & 1) * 4 + c) ^ (line & 7).  An ldmatrix 8x8 matrix reads chunk c of 8 consecutive rows (4 lines):
// the XOR spreads them over 8 distinct chunk positions = conflict-free; cp.async writes a line per 8 lanes.
K1_HD constexpr uint32_t sw64(int r, int c) {
  return uint32_t((r >> 1) << 7) | uint32_t(((((r & 1) << 2) | c) ^ ((r >> 1) & 7)) << 4);
}
// D1 (64 x 64 fp16, 128 B rows = 8 chunks): chunk c of row r at physical chunk c ^ (r & 7).  ldmatrix of 8
// consecutive rows: distinct; the epilogue's 4-byte stores (8 rows x 4 lanes, one chunk column): 32 banks.
K1_HD constexpr uint32_t sw128(int r, int c) { return uint32_t(r << 7) | uint32_t((c ^ (r & 7)) << 4); }

struct Params {
  const uint16_t* A0;     // M x K0
  const uint16_t* B0;     // N0 x K0  (N0 == 64)
  const uint16_t* bias0;  // N0, or null: no bias
  const uint16_t* B1;     // N1 x N0
  const uint16_t* C1;     // M x N1, read only when beta1 != 0
  uint16_t* D;            // M x N1
  int M, K0, N1;
  float alpha0, alpha1, beta1;
};

// Probe marks (k1_b2b --probe): the places in cta_body where a probed kernel's warps read their clock. The k-tile
// marks cover the first K1_MAX_KT_MARKS k-tiles of GEMM0; with several n1 tiles the GEMM1 marks keep the last.
enum Mark : int {
  K1_MARK_START = 0,       // the CTA program begins
  K1_MARK_PROLOGUE = 1,    // GEMM0's prologue copies waited for and synced
  K1_MARK_KT0 = 2,         // + kt: GEMM0 k-tile kt's wait and __syncthreads done (the second-to-last k-group)
  K1_MAX_KT_MARKS = 18,
  K1_MARK_G0_DONE = K1_MARK_KT0 + K1_MAX_KT_MARKS,  // GEMM0's copies drained (wait 0, sync)
  K1_MARK_EPI0,            // D1 in shared memory, synced
  K1_MARK_G1_PROLOGUE,     // GEMM1's prologue copies waited for and synced
  K1_MARK_G1_DONE,         // GEMM1's copies drained (wait 0, sync)
  K1_MARK_END,             // the last D store issued
  K1_MARKS
};

// What the driver accepts; returns null when the kernel can do the shape, else the reason.
inline const char* shape_error(long long M, long long N0, long long K0, long long N1) {
  if (M < 1) return "M must be >= 1";
  if (N0 != BN0) return "N0 must be 64: one CTA keeps a whole 64-row x N0 block of D1 in shared memory as one GEMM0 tile";
  if (K0 < BK || K0 % BK) return "K0 must be a positive multiple of 32 (the k-tile; no K0 remainder path)";
  if (N1 < BN1 || N1 % BN1) return "N1 must be a positive multiple of 256 (the GEMM1 tile width; no N1 remainder path)";
  if (M > (1LL << 31) - BM || K0 > (1LL << 30) || N1 > (1LL << 30)) return "dimension too large for int indexing";
  return nullptr;
}

// The CTA program: CTA `cta` computes rows [cta*64, cta*64+64) of D (all N1 columns), thread `tid` of 128.
// Ops (see k1_b2b.cuh / the emulation test):
//   ldsm_x4(uint32_t (&r)[4], uint32_t off)       ldmatrix.sync.aligned.m8n8.x4.shared.b16
//   mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])   mma.sync m16n8k16 row.col f32.f16.f16.f32, d += a*b
//   cp_async16(uint32_t off, const void* src, bool valid)   cp.async.cg 16 B (valid false: zero-fill)
//   commit(), wait<N>(), sync()                  cp.async.commit_group / wait_group N / __syncthreads
//   sts32(uint32_t off, uint32_t v), ldg32(const uint16_t*), stg32(uint16_t*, uint32_t)
//   pack(float lo, float hi) -> uint32_t (fp16x2, round to nearest even), lo(uint32_t) / hi(uint32_t) -> float
//   mark(int id)                                   a probe mark (a clock read) or nothing
template <class Ops>
K1_HD void cta_body(Ops& o, const Params& p, int cta, int tid) {
  const int warp = tid >> 5, lane = tid & 31;
  const int m_base = cta * BM;
  const int ktiles0 = p.K0 / BK;
  o.mark(K1_MARK_START);

  // =========================== GEMM0: acc0 = A0 x B0, 64 x 64 per CTA ===========================
  // cp.async pieces of this thread: piece j = tid + j * 128 -> tile row j_id / 4, chunk j_id % 4.
  const uint16_t* a0_src[A0_PIECES];
  bool a0_ok[A0_PIECES];
  uint32_t a0_dst[A0_PIECES];
K1_UNROLL
  for (int j = 0; j < A0_PIECES; ++j) {
    const int id = tid + j * THREADS, r = id >> 2, c = id & 3;
    const int gm = m_base + r;
    a0_ok[j] = gm < p.M;
    a0_src[j] = p.A0 + size_t(a0_ok[j] ? gm : p.M - 1) * size_t(p.K0) + c * 8;  // clamped: valid address for zfill
    a0_dst[j] = OFF_A0 + sw64(r, c);
  }
  const uint16_t* b0_src[B0_PIECES];
  uint32_t b0_dst[B0_PIECES];
K1_UNROLL
  for (int j = 0; j < B0_PIECES; ++j) {
    const int id = tid + j * THREADS, r = id >> 2, c = id & 3;
    b0_src[j] = p.B0 + size_t(r) * size_t(p.K0) + c * 8;
    b0_dst[j] = OFF_B0 + sw64(r, c);
  }
  // pieces [j0, j1) of A0 and B0 for k-tile kt into stage st (nothing once kt runs past K0: CUTLASS clears
  // the iterators' masks there; the stage is never read afterwards)
  auto copy0 = [&](int st, int kt, int ja0, int ja1, int jb0, int jb1) {
    if (kt >= ktiles0) return;
K1_UNROLL
    for (int j = ja0; j < ja1; ++j) o.cp_async16(a0_dst[j] + st * A0_STAGE_BYTES, a0_src[j] + kt * BK, a0_ok[j]);
K1_UNROLL
    for (int j = jb0; j < jb1; ++j) o.cp_async16(b0_dst[j] + st * B0_STAGE_BYTES, b0_src[j] + kt * BK, true);
  };

  // warp tile 32 x 32 at (wm0 * 32, wn0 * 32); fragments double-buffered in registers
  const int wm0 = warp >> 1, wn0 = warp & 1;
  uint32_t fa0[2][MT0][4], fb0[2][NT0][2];
  float acc0[MT0][NT0][4];
K1_UNROLL
  for (int i = 0; i < MT0; ++i)
K1_UNROLL
    for (int j = 0; j < NT0; ++j)
K1_UNROLL
      for (int e = 0; e < 4; ++e) acc0[i][j][e] = 0.f;
  // ldmatrix of k-group kg (k16 step inside the k-tile) of stage st.
  //   A (16x16 per mt): lanes 0-15 address rows 0-15 at k 0-7, lanes 16-31 rows 0-15 at k 8-15 -> a0..a3.
  //   B (2 n8 blocks x k16 per x4): lanes 0-7 rows n 0-7 k 0-7 (b0 of block 0), 8-15 n 0-7 k 8-15 (b1 of
  //   block 0), 16-23 n 8-15 k 0-7 (b0 of block 1), 24-31 n 8-15 k 8-15 (b1 of block 1).
  auto load_frag0 = [&](int buf, int st, int kg) {
K1_UNROLL
    for (int mt = 0; mt < MT0; ++mt)
      o.ldsm_x4(fa0[buf][mt], OFF_A0 + st * A0_STAGE_BYTES + sw64(wm0 * WM0 + mt * 16 + (lane & 15), kg * 2 + (lane >> 4)));
K1_UNROLL
    for (int np = 0; np < NT0 / 2; ++np) {
      uint32_t r[4];
      o.ldsm_x4(r, OFF_B0 + st * B0_STAGE_BYTES +
                       sw64(wn0 * WN0 + np * 16 + (lane & 7) + ((lane >> 4) << 3), kg * 2 + ((lane >> 3) & 1)));
      fb0[buf][2 * np][0] = r[0];
      fb0[buf][2 * np][1] = r[1];
      fb0[buf][2 * np + 1][0] = r[2];
      fb0[buf][2 * np + 1][1] = r[3];
    }
  };

  // ---- prologue: Stages-1 k-tiles in flight, one commit each ----
K1_UNROLL
  for (int s = 0; s < STAGES - 1; ++s) {
    copy0(s, s, 0, A0_PIECES, 0, B0_PIECES);
    o.commit();
  }
  o.template wait<STAGES - 2>();
  o.sync();
  o.mark(K1_MARK_PROLOGUE);

  int rd = 0, wr = STAGES - 1, kt_next = STAGES - 1;
  load_frag0(0, rd, 0);
  // ---- mainloop: per k-tile, per warp k-group: ldmatrix of the next k-group (the next stage's first one in
  // the last k-group), mma of this one, this k-group's share of the cp.async of k-tile kt + Stages - 1; at the
  // second-to-last k-group the rest of it, commit, wait(Stages-2), __syncthreads, advance the stages ----
  for (int kt = 0; kt < ktiles0; ++kt) {
K1_UNROLL
    for (int wk = 0; wk < KGROUPS; ++wk) {
      load_frag0((wk + 1) & 1, rd, (wk + 1) % KGROUPS);
K1_UNROLL
      for (int mt = 0; mt < MT0; ++mt)
K1_UNROLL
        for (int nt = 0; nt < NT0; ++nt) o.mma(acc0[mt][nt], fa0[wk & 1][mt], fb0[wk & 1][nt]);
      if (wk < KGROUPS - 1)
        copy0(wr, kt_next, wk * A0_PER_GROUP, (wk + 1) * A0_PER_GROUP, wk * B0_PER_GROUP, (wk + 1) * B0_PER_GROUP);
      if (wk + 2 == KGROUPS) {
        copy0(wr, kt_next, (wk + 1) * A0_PER_GROUP, (wk + 2) * A0_PER_GROUP, (wk + 1) * B0_PER_GROUP,
              (wk + 2) * B0_PER_GROUP);
        o.commit();
        o.template wait<STAGES - 2>();
        o.sync();
        if (kt < K1_MAX_KT_MARKS) o.mark(K1_MARK_KT0 + kt);
        wr = wr == STAGES - 1 ? 0 : wr + 1;
        rd = rd == STAGES - 1 ? 0 : rd + 1;
        ++kt_next;
      }
    }
  }
  o.commit();
  o.template wait<0>();
  o.sync();
  o.mark(K1_MARK_G0_DONE);

  // ---- epilogue 0: D1 = fp16(ReLU(alpha0 * acc0 + bias0)) into shared memory (swizzled, row-major) ----
  // accumulator element e of (mt, nt): row g + 8 * (e >> 1), column 2 * t + (e & 1), g = lane / 4, t = lane % 4
K1_UNROLL
  for (int nt = 0; nt < NT0; ++nt) {
    const int col = wn0 * WN0 + nt * 8 + 2 * (lane & 3);
    float b_lo = 0.f, b_hi = 0.f;
    if (p.bias0) {
      const uint32_t bb = o.ldg32(p.bias0 + col);
      b_lo = o.lo(bb);
      b_hi = o.hi(bb);
    }
K1_UNROLL
    for (int mt = 0; mt < MT0; ++mt)
K1_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int row = wm0 * WM0 + mt * 16 + (lane >> 2) + 8 * h;
        float v0 = p.alpha0 * acc0[mt][nt][2 * h] + b_lo;
        float v1 = p.alpha0 * acc0[mt][nt][2 * h + 1] + b_hi;
        v0 = v0 > 0.f ? v0 : 0.f;
        v1 = v1 > 0.f ? v1 : 0.f;
        o.sts32(OFF_D1 + sw128(row, col >> 3) + (col & 7) * 2, o.pack(v0, v1));
      }
  }
  o.sync();
  o.mark(K1_MARK_EPI0);

  // =========================== GEMM1: D = D1 x B1, 64 x 256 per n1 tile ===========================
  // One CTA loops over the N1 / 256 column tiles, reusing D1 (N1 = 256, the reference problem: one tile).
  const int wn1 = warp;  // warp tile 64 x 64 at column wn1 * 64 of the n1 tile
  const int n1_tiles = p.N1 / BN1;
  for (int t = 0; t < n1_tiles; ++t) {
    const uint16_t* b1_src[B1_PIECES];
    uint32_t b1_dst[B1_PIECES];
K1_UNROLL
    for (int j = 0; j < B1_PIECES; ++j) {
      const int id = tid + j * THREADS, r = id >> 2, c = id & 3;
      b1_src[j] = p.B1 + size_t(t * BN1 + r) * size_t(K1) + c * 8;
      b1_dst[j] = OFF_B1 + sw64(r, c);
    }
    auto copy1 = [&](int st, int kt, int j0, int j1) {
      if (kt >= KT1) return;
K1_UNROLL
      for (int j = j0; j < j1; ++j) o.cp_async16(b1_dst[j] + st * B1_STAGE_BYTES, b1_src[j] + kt * BK, true);
    };
    uint32_t fa1[2][MT1][4], fb1[2][NT1][2];
    float acc1[MT1][NT1][4];
K1_UNROLL
    for (int i = 0; i < MT1; ++i)
K1_UNROLL
      for (int j = 0; j < NT1; ++j)
K1_UNROLL
        for (int e = 0; e < 4; ++e) acc1[i][j][e] = 0.f;
    // A1 fragments straight from the staged D1 (k16 step kk of 4; no ring), B1 from the cp.async ring
    auto load_a1 = [&](int buf, int kk) {
K1_UNROLL
      for (int mt = 0; mt < MT1; ++mt) o.ldsm_x4(fa1[buf][mt], OFF_D1 + sw128(mt * 16 + (lane & 15), kk * 2 + (lane >> 4)));
    };
    auto load_b1 = [&](int buf, int st, int kg) {
K1_UNROLL
      for (int np = 0; np < NT1 / 2; ++np) {
        uint32_t r[4];
        o.ldsm_x4(r, OFF_B1 + st * B1_STAGE_BYTES +
                         sw64(wn1 * WN1 + np * 16 + (lane & 7) + ((lane >> 4) << 3), kg * 2 + ((lane >> 3) & 1)));
        fb1[buf][2 * np][0] = r[0];
        fb1[buf][2 * np][1] = r[1];
        fb1[buf][2 * np + 1][0] = r[2];
        fb1[buf][2 * np + 1][1] = r[3];
      }
    };

    // ---- prologue: only B1 is streamed ----
K1_UNROLL
    for (int s = 0; s < STAGES - 1; ++s) {
      copy1(s, s, 0, B1_PIECES);
      o.commit();
    }
    o.template wait<STAGES - 2>();
    o.sync();
    o.mark(K1_MARK_G1_PROLOGUE);

    int rd1 = 0, wr1 = STAGES - 1, kt1_next = STAGES - 1;
    load_a1(0, 0);
    load_b1(0, rd1, 0);
K1_UNROLL
    for (int kt = 0; kt < KT1; ++kt) {
K1_UNROLL
      for (int wk = 0; wk < KGROUPS; ++wk) {
        const int kk = kt * KGROUPS + wk;
        if (kk + 1 < KK1) load_a1((wk + 1) & 1, kk + 1);  // CUTLASS skips the A1 load after the last k-group
        load_b1((wk + 1) & 1, rd1, (wk + 1) % KGROUPS);
K1_UNROLL
        for (int mt = 0; mt < MT1; ++mt)
K1_UNROLL
          for (int nt = 0; nt < NT1; ++nt) o.mma(acc1[mt][nt], fa1[wk & 1][mt], fb1[wk & 1][nt]);
        if (wk < KGROUPS - 1) copy1(wr1, kt1_next, wk * B1_PER_GROUP, (wk + 1) * B1_PER_GROUP);
        if (wk + 2 == KGROUPS) {
          copy1(wr1, kt1_next, (wk + 1) * B1_PER_GROUP, (wk + 2) * B1_PER_GROUP);
          o.commit();
          o.template wait<STAGES - 2>();
          o.sync();
          wr1 = wr1 == STAGES - 1 ? 0 : wr1 + 1;
          rd1 = rd1 == STAGES - 1 ? 0 : rd1 + 1;
          ++kt1_next;
        }
      }
    }
    o.commit();
    o.template wait<0>();
    o.sync();  // every warp is done with the B1 ring: the next n1 tile's prologue may overwrite it
    o.mark(K1_MARK_G1_DONE);

    // ---- epilogue 1: D = fp16(ReLU(alpha1 * acc1 + beta1 * C1)), straight from the accumulator fragments
    // (4-byte stores, a quad of lanes covers 16 contiguous bytes of a row); C1 is not read when beta1 == 0.
    // All 64 C1 words of the thread are loaded first (one memory round trip per n1 tile; the A1 / B1 fragment
    // registers are dead here), then the math and the stores. ----
    const bool use_c = p.beta1 != 0.f;
    uint32_t cv[MT1][NT1][2];
    K1_UNROLL
    for (int mt = 0; mt < MT1; ++mt)
      K1_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int grow = m_base + mt * 16 + (lane >> 2) + 8 * h;
        const uint16_t* crow = p.C1 + size_t(grow) * size_t(p.N1) + t * BN1 + wn1 * WN1 + 2 * (lane & 3);
        K1_UNROLL
        for (int nt = 0; nt < NT1; ++nt) cv[mt][nt][h] = (use_c && grow < p.M) ? o.ldg32(crow + nt * 8) : 0u;
      }
    K1_UNROLL
    for (int mt = 0; mt < MT1; ++mt)
      K1_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int grow = m_base + mt * 16 + (lane >> 2) + 8 * h;
        if (grow >= p.M) continue;
        uint16_t* drow = p.D + size_t(grow) * size_t(p.N1) + t * BN1 + wn1 * WN1 + 2 * (lane & 3);
        K1_UNROLL
        for (int nt = 0; nt < NT1; ++nt) {
          float v0 = p.alpha1 * acc1[mt][nt][2 * h];
          float v1 = p.alpha1 * acc1[mt][nt][2 * h + 1];
          if (use_c) {
            v0 += p.beta1 * o.lo(cv[mt][nt][h]);
            v1 += p.beta1 * o.hi(cv[mt][nt][h]);
          }
          v0 = v0 > 0.f ? v0 : 0.f;
          v1 = v1 > 0.f ? v1 : 0.f;
          o.stg32(drow + nt * 8, o.pack(v0, v1));
        }
      }
    o.mark(K1_MARK_END);
  }
}

}  // namespace k1
