// Tensor-core microbenchmarks: wgmma (sm_90a) latency and throughput, mma.sync m16n8k16 latency and throughput.
#include <cmath>
#include <cstring>

#include "common.cuh"
#include "wgmma_util.cuh"

namespace mb {
namespace {

constexpr int kWarm = 8;

// Operand element values (small, exact in bf16 / e4m3, never all zero).
__host__ __device__ inline float val_a(uint32_t r, uint32_t k) { return float(int((r * 7 + k * 3) % 9) - 4) * 0.25f; }
__host__ __device__ inline float val_b(uint32_t r, uint32_t k) { return float(int((r * 5 + k * 11) % 7) - 3) * 0.5f; }
__host__ __device__ inline uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);  // values used are exact in bf16
}
// e4m3 encoding of the few values used (|v| in {0, .25, .5, .75, 1, 1.5}... via table of the values above)
__host__ __device__ inline uint8_t to_e4m3(float f) {
  uint8_t s = f < 0 ? 0x80 : 0;
  float a = fabsf(f);
  if (a == 0.f) return 0;
  int e = 0;
  float m = frexpf(a, &e);  // a = m * 2^e, m in [0.5, 1)
  // a = (1 + f/8) * 2^(E-7): E = e - 1 + 7, f = (2m - 1) * 8
  int E = e - 1 + 7;
  int fr = static_cast<int>((2.f * m - 1.f) * 8.f + 0.5f);
  return s | static_cast<uint8_t>((E << 3) | fr);
}

// Fills an operand (rows x 32 bytes of K) into smem at base with the layout above.
template <bool FP8>
DEVI void fill_operand(unsigned char* base, int rows, bool is_a, uint32_t k_off, uint32_t m_off) {
  const int kel = FP8 ? 32 : 16;
  for (int e = threadIdx.x; e < rows * kel; e += blockDim.x) {
    uint32_t r = e / kel, k = e % kel;
    float v = is_a ? val_a(r, k) : val_b(r, k);
    if (FP8)
      base[op_offset(r, k, k_off, m_off)] = to_e4m3(v);
    else
      *reinterpret_cast<uint16_t*>(base + op_offset(r, k * 2, k_off, m_off)) = to_bf16(v);
  }
}

template <int N, bool FP8>
DEVI void do_mma(float (&d)[N / 2], uint64_t da, uint64_t db, int sd) {
  if constexpr (FP8)
    wgmma_e4m3<N>(d, da, db, sd);
  else
    wgmma_bf16<N>(d, da, db, sd);
}

// smem: A of warpgroup w at w*2048 (64 rows x 32 B), B at 4096 (N rows x 32 B).
// desc_sem: 0 = documented semantic (LBO = K-direction core offset, SBO = M/N-direction offset),
//           1 = the two swapped (tried only if 0 fails the numeric check).
template <int N, bool FP8>
__global__ void __launch_bounds__(128, 1) k_wgmma_check(float* D, int desc_sem) {
  extern __shared__ __align__(1024) unsigned char sm[];
  const uint32_t k_off = 128, m_off = 256;
  fill_operand<FP8>(sm, 64, true, k_off, m_off);
  fill_operand<FP8>(sm + 4096, N, false, k_off, m_off);
  fence_proxy_async_smem();
  __syncthreads();
  const uint32_t lbo = desc_sem == 0 ? k_off : m_off, sbo = desc_sem == 0 ? m_off : k_off;
  const uint64_t da = make_desc(smem_u32(sm), lbo, sbo), db = make_desc(smem_u32(sm + 4096), lbo, sbo);
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.f;
  wgmma_fence();
  do_mma<N, FP8>(d, da, db, 0);
  wgmma_commit();
  wgmma_wait0();
  fence_regs(d);
  const int w = threadIdx.x >> 5, l = threadIdx.x & 31;
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    const int row = 16 * w + l / 4, col = 8 * j + 2 * (l % 4);
    D[row * N + col] = d[4 * j + 0];
    D[row * N + col + 1] = d[4 * j + 1];
    D[(row + 8) * N + col] = d[4 * j + 2];
    D[(row + 8) * N + col + 1] = d[4 * j + 3];
  }
}

// Timing: every warpgroup (nwg = blockDim/128) per rep: __syncthreads; t0; wgmma.fence; `batch` x
// wgmma into its own accumulator (scale-d = 1); commit_group; wait_group 0; t1. Thread 0 of each
// warpgroup stores t0/t1 (same SM clock).
template <int N, bool FP8>
__global__ void __launch_bounds__(256, 1) k_wgmma_time(unsigned long long* t0s, unsigned long long* t1s, int n, int batch,
                                                     int desc_sem, float* sink) {
  extern __shared__ __align__(1024) unsigned char sm[];
  const uint32_t k_off = 128, m_off = 256;
  const int wg = threadIdx.x >> 7, nwg = blockDim.x >> 7;
  for (int w = 0; w < nwg; ++w) fill_operand<FP8>(sm + w * 2048, 64, true, k_off, m_off);
  fill_operand<FP8>(sm + 4096, N, false, k_off, m_off);
  fence_proxy_async_smem();
  __syncthreads();
  const uint32_t lbo = desc_sem == 0 ? k_off : m_off, sbo = desc_sem == 0 ? m_off : k_off;
  const uint64_t da = make_desc(smem_u32(sm + wg * 2048), lbo, sbo), db = make_desc(smem_u32(sm + 4096), lbo, sbo);
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.f;
  for (int i = 0; i < n; ++i) {
    __syncthreads();
    unsigned long long t0 = clk();
    wgmma_fence();
#pragma unroll 4
    for (int b = 0; b < batch; ++b) do_mma<N, FP8>(d, da, db, 1);
    wgmma_commit();
    wgmma_wait0();
    fence_regs(d);
    unsigned long long t1 = clk();
    if ((threadIdx.x & 127) == 0) {
      t0s[i * nwg + wg] = t0;
      t1s[i * nwg + wg] = t1;
    }
  }
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += d[i];
  if (s == 1234567.f) sink[threadIdx.x] = s;  // keeps the accumulators live
}

// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
DEVI void mma16816(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// mode 0: one dependent chain of 64 mma.sync (accumulator feeds the next) per sample.
// mode 1: 8 independent accumulators, 32 rounds -> 256 mma.sync per sample.
// Every warp records t0/t1 per rep after a __syncthreads.
__global__ void k_mma_sync(unsigned long long* t0s, unsigned long long* t1s, int n, int mode, float* sink) {
  const int warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  uint32_t a[4], b[2];
  const uint32_t h = 0x3C003C00u ^ (threadIdx.x & 3);  // ~1.0 halves, not compile-time constant
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = h;
  b[0] = b[1] = 0x1C001C00u;  // ~0.0039 in each half
  float acc[8][4];
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[j][i] = 0.f;
  for (int r = 0; r < n; ++r) {
    __syncthreads();
    unsigned long long t0 = clk();
    if (mode == 0) {
#pragma unroll
      for (int k = 0; k < 64; ++k) mma16816(acc[0], a, b);
    } else {
#pragma unroll
      for (int k = 0; k < 32; ++k)
#pragma unroll
        for (int j = 0; j < 8; ++j) mma16816(acc[j], a, b);
    }
    // consume the last results before reading the clock
    float s = acc[0][0] + acc[7][3];
    asm volatile("" : "+f"(s)::"memory");
    if (s == -1.f) sink[0] = s;
    unsigned long long t1 = clk();
    if ((threadIdx.x & 31) == 0) {
      t0s[r * nw + warp] = t0;
      t1s[r * nw + warp] = t1;
    }
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  if (s == 1234567.f) sink[threadIdx.x] = s;
}

// Per-rep span over groups: (max t1 - min t0) / div.
std::vector<double> spans(const std::vector<unsigned long long>& t0, const std::vector<unsigned long long>& t1, int n,
                          int groups, int warm, double div) {
  std::vector<double> v;
  for (int i = warm; i < n; ++i) {
    unsigned long long a = ~0ull, b = 0;
    for (int g = 0; g < groups; ++g) {
      a = std::min(a, t0[i * groups + g]);
      b = std::max(b, t1[i * groups + g]);
    }
    v.push_back(double(b - a) / div);
  }
  return v;
}

// Host reference for the check: D[m][n] = sum_k A[m][k] * B[n][k] (both K-major).
template <int N, bool FP8>
double check_err(const std::vector<float>& D) {
  const int K = FP8 ? 32 : 16;
  double num = 0, den = 0;
  for (int m = 0; m < 64; ++m)
    for (int nn = 0; nn < N; ++nn) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += double(val_a(m, k)) * double(val_b(nn, k));
      double e = D[m * N + nn] - ref;
      if (!std::isfinite(D[m * N + nn])) return INFINITY;
      num += e * e;
      den += ref * ref;
    }
  return std::sqrt(num / (den > 0 ? den : 1));
}

struct WgResult {
  int desc_sem = -1;
  double err = INFINITY;
};

template <int N, bool FP8>
WgResult wg_check(Ctx& c) {
  WgResult r;
  const int smem = 4096 + N * 32;
  CK(cudaFuncSetAttribute(k_wgmma_check<N, FP8>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  DevBuf<float> D(64 * N);
  for (int sem = 0; sem < 2; ++sem) {
    CK(cudaMemset(D.p, 0xFF, D.n * sizeof(float)));  // NaN poison
    k_wgmma_check<N, FP8><<<1, 128, smem>>>(D.p, sem);
    CK_LAUNCH();
    double e = check_err<N, FP8>(D.get());
    if (sem == 0 || e < r.err) {
      r.err = e;
      r.desc_sem = sem;
    }
    if (e < 1e-6) break;
  }
  return r;
}

template <int N, bool FP8>
void wg_time(Ctx& c, const WgResult& chk, bool latency, int nwg) {
  const std::string G = "wgmma";
  const int n = c.reps(latency ? 500 : 200, 32) + kWarm;
  const int batch = latency ? 1 : 64;
  const int smem = 4096 + N * 32;
  CK(cudaFuncSetAttribute(k_wgmma_time<N, FP8>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  DevBuf<unsigned long long> t0(n * nwg), t1(n * nwg);
  DevBuf<float> sink(256);
  k_wgmma_time<N, FP8><<<1, 128 * nwg, smem>>>(t0.p, t1.p, n, batch, chk.desc_sem < 0 ? 0 : chk.desc_sem, sink.p);
  CK_LAUNCH();
  const std::string shape = std::string("m64n") + std::to_string(N) + (FP8 ? "k32 e4m3" : "k16 bf16");
  const std::string sname = std::string("m64n") + std::to_string(N) + (FP8 ? "k32_e4m3" : "k16_bf16");
  JObj p;
  p.str("shape", shape).num("warpgroups", nwg).num("batch", batch).str("numerics_check",
                                                                     chk.err < 1e-6 ? "pass" : "FAIL")
      .num("numerics_rel_err", chk.err)
      .str("descriptor_semantic", chk.desc_sem == 0 ? "LBO=K-direction core offset, SBO=M/N-direction"
                                                    : "LBO/SBO swapped");
  if (latency) {
    record(c, "wgmma_latency_" + sname, G, "cycles", spans(t0.get(), t1.get(), n, nwg, kWarm, 1.0),
           "One warpgroup: t0=clock64; wgmma.fence; one wgmma.mma_async " + shape +
               " (A and B from smem descriptors, no swizzle, f32 accumulators); wgmma.commit_group; "
               "wgmma.wait_group 0; t1 (thread 0). Issue-to-result latency incl. fence/commit/wait.",
           p);
  } else {
    const double div = double(batch) * nwg;
    const double peak = FP8 ? N / 2.0 : N / 2.0;  // cycles per wgmma per SM at 4096 bf16 / 8192 fp8 flop/clk
    p.num("ideal_cycles_per_wgmma_per_sm", peak);
    record(c, "wgmma_throughput_" + sname + "_" + std::to_string(nwg) + "wg", G, "cycles/wgmma",
           spans(t0.get(), t1.get(), n, nwg, kWarm, div),
           std::to_string(nwg) + " warpgroup(s) in one CTA, each issues 64 back-to-back wgmma " + shape +
               " into its own accumulator (scale-d=1, dependent accumulation as in a k-loop), then commit + "
               "wait_group 0. Value = (max t1 - min t0 over warpgroups) / (64 x warpgroups) = SM-wide cycles "
               "per wgmma; includes one pipeline fill/drain per 64. Ideal at peak = N/2 cycles.",
           p);
  }
}

void mma_sync_time(Ctx& c, int mode, int warps) {
  const int n = c.reps(300, 32) + kWarm;
  DevBuf<unsigned long long> t0(n * warps), t1(n * warps);
  DevBuf<float> sink(1024);
  k_mma_sync<<<1, 32 * warps>>>(t0.p, t1.p, n, mode, sink.p);
  CK_LAUNCH();
  const int per = mode == 0 ? 64 : 256;
  JObj p;
  p.str("shape", "m16n8k16 f16 x f16 -> f32").num("warps", warps).num("mma_per_warp_per_sample", per);
  if (mode == 0) {
    record(c, "mma_sync_latency_m16n8k16_f16", "mma_sync", "cycles", spans(t0.get(), t1.get(), n, 1, kWarm, per),
           "One warp: chain of 64 mma.sync.m16n8k16.row.col.f32.f16.f16.f32 where each accumulator feeds the "
           "next (dependent); cycles per mma = total/64 (dependent-issue latency).",
           p);
  } else {
    const std::string nm = warps == 1 ? "mma_sync_throughput_m16n8k16_f16_per_warp"
                                      : "mma_sync_throughput_m16n8k16_f16_" + std::to_string(warps) + "warps";
    record(c, nm, "mma_sync", "cycles/mma",
           spans(t0.get(), t1.get(), n, warps, kWarm, double(per) * warps),
           std::to_string(warps) + " warp(s), each 8 independent accumulators x 32 rounds = 256 mma.sync "
                                   "m16n8k16 f16->f32; value = SM-wide cycles per mma = span / (256 x warps). "
                                   "(4096 flop per mma; 1 cycle/mma/SM = 4096 flop/clk.)",
           p);
  }
}

template <int N, bool FP8>
void wg_all(Ctx& c, bool thr) {
  WgResult chk = wg_check<N, FP8>(c);
  std::string sname = std::string("m64n") + std::to_string(N) + (FP8 ? "k32_e4m3" : "k16_bf16");
  if (chk.err >= 1e-6)
    c.res->notes.push_back("wgmma " + sname + " numeric check FAILED (rel err " + std::to_string(chk.err) +
                           "); timings kept (operand values do not change the instruction's work)");
  wg_time<N, FP8>(c, chk, true, 1);
  if (thr) {
    wg_time<N, FP8>(c, chk, false, 1);
    wg_time<N, FP8>(c, chk, false, 2);
  }
}

}  // namespace

void bench_wgmma(Ctx& c) {
  wg_all<8, false>(c, false);
  wg_all<16, false>(c, false);
  wg_all<32, false>(c, false);
  wg_all<64, false>(c, true);
  wg_all<128, false>(c, true);
  wg_all<256, false>(c, true);
  wg_all<256, true>(c, true);
  mma_sync_time(c, 0, 1);
  mma_sync_time(c, 1, 1);
  mma_sync_time(c, 1, 4);
  mma_sync_time(c, 1, 8);
}

}  // namespace mb
