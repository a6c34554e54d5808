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

// The timing kernels' operands: A of warpgroup w at w*2048 (64 rows x 32 B) for every warpgroup of the CTA,
// B at 4096 (n rows x 32 B), filled, fenced for the async proxy and synchronised; da / db: this thread's
// warpgroup's descriptors (desc_sem as in k_wgmma_check).
template <bool FP8>
DEVI void setup_operands(unsigned char* sm, int n, int desc_sem, uint64_t& da, uint64_t& db) {
  const uint32_t k_off = 128, m_off = 256;
  const int wg = threadIdx.x >> 7, nwg = blockDim.x >> 7;
  for (int w = 0; w < nwg; ++w) fill_operand<FP8>(sm + w * 2048, 64, true, k_off, m_off);
  fill_operand<FP8>(sm + 4096, n, false, k_off, m_off);
  fence_proxy_async_smem();
  __syncthreads();
  const uint32_t lbo = desc_sem == 0 ? k_off : m_off, sbo = desc_sem == 0 ? m_off : k_off;
  da = make_desc(smem_u32(sm + wg * 2048), lbo, sbo);
  db = make_desc(smem_u32(sm + 4096), lbo, sbo);
}

// Keeps the accumulators live (the store never happens).
template <int N>
DEVI void keep_live(const float (&d)[N / 2], float* sink) {
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += d[i];
  if (s == 1234567.f) sink[threadIdx.x] = s;
}

// Timing: every warpgroup (nwg = blockDim/128) per rep: __syncthreads; t0; wgmma.fence; `batch` x
// wgmma into its own accumulator (scale-d = 1); commit_group; wait_group 0; t1. Thread 0 of each
// warpgroup stores t0/t1 (same SM clock).
template <int N, bool FP8>
__global__ void __launch_bounds__(256, 1) k_wgmma_time(unsigned long long* t0s, unsigned long long* t1s, int n, int batch,
                                                     int desc_sem, float* sink) {
  extern __shared__ __align__(1024) unsigned char sm[];
  const int wg = threadIdx.x >> 7, nwg = blockDim.x >> 7;
  uint64_t da, db;
  setup_operands<FP8>(sm, N, desc_sem, da, db);
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
  keep_live<N>(d, sink);
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

// ---------------------------------------------------------------------------------------------
// wgmma issue back-pressure (wgmma_issue_*): how many wgmma.mma_async a warpgroup can issue before the
// issuing instruction stalls on the busy tensor pipe, and when a CUTLASS-style wait_group 1 returns.
// Stamps are 32-bit %clock reads (asm volatile + "memory" clobber, like every wgmma wrapper, so the
// compiler keeps their order) executed by every thread of the warpgroup (no branch between the
// wgmmas); thread 0 of each warpgroup stores them after the timed region. Differences are taken
// modulo 2^32 (wraps every ~2 s).
// ---------------------------------------------------------------------------------------------
DEVI uint32_t clk32() {
  uint32_t t;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(t)::"memory");
  return t;
}

constexpr int kIssueN = 16;               // wgmmas per issue timeline
constexpr int kTlStamps = kIssueN + 2;    // t_pre, t_0 .. t_15 (after wgmma i), t_end
constexpr int kKb = 16;                   // k-blocks per k-loop sample
constexpr int kMmaPerKb = 4;              // dependent wgmmas per k-block (64-deep K tile / k16)
constexpr int kKlStamps = 3 * kKb + 1;    // t_first[16], t_commit[16], t_wait[16], t_end
constexpr int kKbFrom = 4;                // k-blocks [kKbFrom, kKb) enter the medians

// Issue timeline. Per rep: __syncthreads; t_pre; wgmma.fence; 16 x (wgmma m64nNk16 bf16 into the same
// accumulator, scale-d = 1; t_i); commit_group; wait_group 0; t_end.
template <int N>
__global__ void __launch_bounds__(256, 1) k_wgmma_issue_timeline(uint32_t* st, int n, int desc_sem, float* sink) {
  extern __shared__ __align__(1024) unsigned char sm[];
  const int wg = threadIdx.x >> 7, nwg = blockDim.x >> 7;
  uint64_t da, db;
  setup_operands<false>(sm, N, desc_sem, da, db);
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.f;
  for (int r = 0; r < n; ++r) {
    uint32_t t[kTlStamps];
    __syncthreads();
    t[0] = clk32();
    wgmma_fence();
#pragma unroll
    for (int i = 0; i < kIssueN; ++i) {
      wgmma_bf16<N>(d, da, db, 1);
      t[1 + i] = clk32();
    }
    wgmma_commit();
    wgmma_wait0();
    fence_regs(d);
    t[kTlStamps - 1] = clk32();
    if ((threadIdx.x & 127) == 0) {
#pragma unroll
      for (int j = 0; j < kTlStamps; ++j) st[(size_t(r) * nwg + wg) * kTlStamps + j] = t[j];
    }
  }
  keep_live<N>(d, sink);
}

// CUTLASS-style k-loop (K_PIPE_MMAS = 1). Per rep: __syncthreads; then per k-block k = 0..15:
// t_first[k]; wgmma.fence (CUTLASS warpgroup_arrive); 4 x dependent wgmma m64nNk16 bf16 (scale-d = 1);
// commit_group; t_commit[k]; wait_group 1 (the previous k-block's group); t_wait[k]. After the loop
// wait_group 0; t_end. fence_regs around the waits stands for CUTLASS's warpgroup_fence_operand.
template <int N>
__global__ void __launch_bounds__(256, 1) k_wgmma_issue_kloop(uint32_t* st, int n, int desc_sem, float* sink) {
  extern __shared__ __align__(1024) unsigned char sm[];
  const int wg = threadIdx.x >> 7, nwg = blockDim.x >> 7;
  uint64_t da, db;
  setup_operands<false>(sm, N, desc_sem, da, db);
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.f;
  for (int r = 0; r < n; ++r) {
    uint32_t tf[kKb], tc[kKb], tw[kKb];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kKb; ++k) {
      fence_regs(d);
      tf[k] = clk32();
      wgmma_fence();
#pragma unroll
      for (int j = 0; j < kMmaPerKb; ++j) wgmma_bf16<N>(d, da, db, 1);
      wgmma_commit();
      tc[k] = clk32();
      wgmma_wait1();
      tw[k] = clk32();
      fence_regs(d);
    }
    wgmma_wait0();
    fence_regs(d);
    const uint32_t tend = clk32();
    if ((threadIdx.x & 127) == 0) {
      uint32_t* o = st + (size_t(r) * nwg + wg) * kKlStamps;
#pragma unroll
      for (int k = 0; k < kKb; ++k) {
        o[k] = tf[k];
        o[kKb + k] = tc[k];
        o[2 * kKb + k] = tw[k];
      }
      o[3 * kKb] = tend;
    }
  }
  keep_live<N>(d, sink);
}

std::string jarr(const std::vector<double>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + json_num(v[i]);
  return o + "]";
}
inline double cyc(uint32_t b, uint32_t a) { return double(uint32_t(b - a)); }  // b - a mod 2^32

template <int N>
void wg_issue_timeline(Ctx& c, const WgResult& chk, int nwg) {
  const std::string G = "wgmma";
  const int n = c.reps(100, 16) + kWarm;
  const int smem = 4096 + N * 32;
  CK(cudaFuncSetAttribute(k_wgmma_issue_timeline<N>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  DevBuf<uint32_t> st(size_t(n) * nwg * kTlStamps);
  DevBuf<float> sink(256);
  k_wgmma_issue_timeline<N><<<1, 128 * nwg, smem>>>(st.p, n, chk.desc_sem < 0 ? 0 : chk.desc_sem, sink.p);
  CK_LAUNCH();
  const auto h = st.get();
  const double thr_add = std::max(8.0, N / 8.0);
  // per warpgroup, per wgmma index: offsets of t_i from t_0 over reps; gaps t_i - t_{i-1}
  std::vector<std::vector<std::vector<double>>> off(nwg, std::vector<std::vector<double>>(kIssueN)),
      gap(nwg, std::vector<std::vector<double>>(kIssueN));
  std::vector<double> span, freev, intv, first, drain, wg1_start;
  for (int r = kWarm; r < n; ++r) {
    for (int w = 0; w < nwg; ++w) {
      const uint32_t* t = &h[(size_t(r) * nwg + w) * kTlStamps];
      const uint32_t* ti = t + 1;  // ti[i] = stamp after wgmma i
      double gmin = 1e30;
      for (int i = 0; i < kIssueN; ++i) {
        off[w][i].push_back(cyc(ti[i], ti[0]));
        if (i > 0) {
          gap[w][i].push_back(cyc(ti[i], ti[i - 1]));
          gmin = std::min(gmin, cyc(ti[i], ti[i - 1]));
        }
      }
      int s = kIssueN;  // first wgmma whose issue stalled
      for (int i = 1; i < kIssueN; ++i)
        if (cyc(ti[i], ti[i - 1]) > gmin + thr_add) {
          s = i;
          break;
        }
      freev.push_back(s);
      if (s <= kIssueN - 2) intv.push_back(cyc(ti[kIssueN - 1], ti[s]) / double(kIssueN - 1 - s));
      span.push_back(cyc(ti[kIssueN - 1], ti[0]));
      first.push_back(cyc(ti[0], t[0]));
      drain.push_back(cyc(t[kTlStamps - 1], ti[kIssueN - 1]));
      if (w == 1) wg1_start.push_back(double(int32_t(ti[0] - h[(size_t(r) * nwg) * kTlStamps + 1])));
    }
  }
  const std::string sname = "n" + std::to_string(N) + "_" + std::to_string(nwg) + "wg";
  const std::string shape = "m64n" + std::to_string(N) + "k16 bf16";
  JObj p;
  p.str("shape", shape).num("warpgroups", nwg).num("wgmmas", kIssueN).num("reps_per_warpgroup", n - kWarm)
      .str("numerics_check", chk.err < 1e-6 ? "pass" : "FAIL")
      .num("stall_threshold_cycles_above_min_gap", thr_add)
      .num("first_issue_after_pre_fence_median", compute_stats(first).median)
      .num("wait0_return_after_last_issue_median", compute_stats(drain).median);
  if (nwg == 2) p.num("wg1_t0_minus_wg0_t0_median", compute_stats(wg1_start).median)
                    .num("wg1_t0_minus_wg0_t0_min", compute_stats(wg1_start).min)
                    .num("wg1_t0_minus_wg0_t0_max", compute_stats(wg1_start).max);
  for (int w = 0; w < nwg; ++w) {
    std::vector<double> med, mn, mx, gmed;
    for (int i = 0; i < kIssueN; ++i) {
      Stats so = compute_stats(off[w][i]);
      med.push_back(so.median);
      mn.push_back(so.min);
      mx.push_back(so.max);
      gmed.push_back(i == 0 ? 0.0 : compute_stats(gap[w][i]).median);
    }
    const std::string pre = "wg" + std::to_string(w) + "_";
    p.raw(pre + "issue_offset_median", jarr(med))
        .raw(pre + "issue_offset_min", jarr(mn))
        .raw(pre + "issue_offset_max", jarr(mx))
        .raw(pre + "issue_gap_median", jarr(gmed));
  }
  const std::string how =
      " warpgroup(s) in one CTA; per rep (after __syncthreads) each warpgroup runs wgmma.fence then 16 back-to-back "
      "dependent wgmma.mma_async " + shape +
      " into one accumulator (scale-d=1, A and B from smem descriptors, no swizzle); every thread reads %clock "
      "(32-bit, asm volatile + memory clobber) right after each wgmma instruction: t_i = stamp after wgmma i "
      "(the time the warp got past wgmma i's issue); then commit_group + wait_group 0 (t_end). Thread 0 of each "
      "warpgroup's stamps (warp 0's view). SASS checked (cuobjdump of the nvcc 13.0.88 build run on 2026-11-24): each "
      "HGMMA is directly followed by the CS2R.32 SR_CLOCKLO of its stamp (between two HGMMAs: the CS2R, 2 R2UR of the "
      "descriptor, + a NOP for N=256), commit_group is the gsb0 flag of the 16th HGMMA, t_end follows "
      "WARPGROUP.DEPBAR.LE gsb0, 0x0. ";
  const std::string rule =
      "Stall rule per rep: gap_i = t_i - t_{i-1} (i = 1..15), a gap > min(gap) + max(8, N/8) cycles is a stall; "
      "s = index of the first stalled wgmma (16 if none). ";
  record(c, "wgmma_issue_timeline_" + sname, G, "cycles", span,
         std::to_string(nwg) + how + "Value = t_15 - t_0 (issue span of the 16 wgmmas), pooled over warpgroups. "
             "params: wgW_issue_offset_{median,min,max}[i] = t_i - t_0 over reps for warpgroup W, "
             "wgW_issue_gap_median[i] = median t_i - t_{i-1}; first_issue_after_pre_fence = t_0 - t_pre "
             "(fence + first wgmma + one clock read); wait0_return_after_last_issue = t_end - t_15.",
         p);
  JObj q;
  q.str("shape", shape).num("warpgroups", nwg).num("stall_threshold_cycles_above_min_gap", thr_add);
  record(c, "wgmma_issue_free_" + sname, G, "wgmmas", freev,
         std::to_string(nwg) + how + rule +
             "Value = s = number of wgmmas issued back to back (within a few cycles of each other) before the "
             "first issue stall, i.e. the issue-queue depth seen by one warpgroup (16 = no stall seen in 16). "
             "Samples: one per rep and warpgroup.",
         q);
  if (intv.empty()) {
    c.res->notes.push_back("wgmma_issue_interval_" + sname + ": no issue stall within 16 wgmmas, no interval");
  } else {
    record(c, "wgmma_issue_interval_" + sname, G, "cycles", intv,
           std::to_string(nwg) + how + rule +
               "Value = steady-state cycles between issues after the first stall = (t_15 - t_s) / (15 - s) "
               "(the stalled gap itself, which waits for the first free slot, is excluded). Samples: one per rep "
               "and warpgroup with s <= 14.",
           q);
  }
}

template <int N>
void wg_issue_kloop(Ctx& c, const WgResult& chk, int nwg) {
  const std::string G = "wgmma";
  const int n = c.reps(100, 16) + kWarm;
  const int smem = 4096 + N * 32;
  CK(cudaFuncSetAttribute(k_wgmma_issue_kloop<N>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  DevBuf<uint32_t> st(size_t(n) * nwg * kKlStamps);
  DevBuf<float> sink(256);
  k_wgmma_issue_kloop<N><<<1, 128 * nwg, smem>>>(st.p, n, chk.desc_sem < 0 ? 0 : chk.desc_sem, sink.p);
  CK_LAUNCH();
  const auto h = st.get();
  std::vector<double> iss, wt, per, tot;
  // per warpgroup, per k-block, over reps
  std::vector<std::vector<std::vector<double>>> kiss(nwg, std::vector<std::vector<double>>(kKb)),
      kwt(nwg, std::vector<std::vector<double>>(kKb)), kper(nwg, std::vector<std::vector<double>>(kKb));
  for (int r = kWarm; r < n; ++r)
    for (int w = 0; w < nwg; ++w) {
      const uint32_t* o = &h[(size_t(r) * nwg + w) * kKlStamps];
      const uint32_t *tf = o, *tc = o + kKb, *tw = o + 2 * kKb;
      for (int k = 0; k < kKb; ++k) {
        const double a = cyc(tc[k], tf[k]), b = cyc(tw[k], tc[k]);
        kiss[w][k].push_back(a);
        kwt[w][k].push_back(b);
        if (k + 1 < kKb) kper[w][k].push_back(cyc(tf[k + 1], tf[k]));
        if (k >= kKbFrom) {
          iss.push_back(a);
          wt.push_back(b);
          if (k + 1 < kKb) per.push_back(cyc(tf[k + 1], tf[k]));
        }
      }
      tot.push_back(cyc(o[3 * kKb], tf[0]));
    }
  const std::string sname = "n" + std::to_string(N) + "_" + std::to_string(nwg) + "wg";
  const std::string shape = "m64n" + std::to_string(N) + "k16 bf16";
  JObj p;
  p.str("shape", shape).num("warpgroups", nwg).num("k_blocks", kKb).num("wgmmas_per_k_block", kMmaPerKb)
      .num("k_blocks_in_median_from", kKbFrom).num("reps_per_warpgroup", n - kWarm)
      .str("numerics_check", chk.err < 1e-6 ? "pass" : "FAIL")
      .num("total_first_to_end_median", compute_stats(tot).median)
      .num("cycles_per_wgmma_per_warpgroup_total", compute_stats(tot).median / (kKb * kMmaPerKb));
  for (int w = 0; w < nwg; ++w) {
    std::vector<double> a, b, cc;
    for (int k = 0; k < kKb; ++k) {
      a.push_back(compute_stats(kiss[w][k]).median);
      b.push_back(compute_stats(kwt[w][k]).median);
      if (k + 1 < kKb) cc.push_back(compute_stats(kper[w][k]).median);
    }
    const std::string pre = "wg" + std::to_string(w) + "_";
    p.raw(pre + "issue_per_kblock_median", jarr(a))
        .raw(pre + "wait_per_kblock_median", jarr(b))
        .raw(pre + "period_per_kblock_median", jarr(cc));
  }
  const std::string how =
      std::to_string(nwg) +
      " warpgroup(s) in one CTA, CUTLASS K_PIPE_MMAS=1 mainloop shape without the smem pipeline: per rep "
      "(after __syncthreads) 16 k-blocks, each: t_first (%clock); wgmma.fence (warpgroup_arrive); 4 dependent "
      "wgmma.mma_async " + shape +
      " into one accumulator (scale-d=1, same smem descriptors every time, no swizzle); wgmma.commit_group; "
      "t_commit; wgmma.wait_group 1 (waits for the previous k-block's group); t_wait. Thread 0 of each warpgroup's "
      "32-bit %clock stamps; samples pooled over k-blocks 4..15 (period: 4..14), reps and warpgroups; params give "
      "per-k-block medians per warpgroup and the whole-loop time (t_end after wait_group 0 minus t_first[0]). "
      "SASS checked (cuobjdump of the nvcc 13.0.88 build run on 2026-11-24): per k-block CS2R.32 SR_CLOCKLO (t_first), "
      "WARPGROUP.ARRIVE, 4 HGMMA (2 R2UR of the descriptor + NOP for N=256 between them; gsb0 on the 4th = "
      "commit_group), CS2R (t_commit), WARPGROUP.DEPBAR.LE gsb0, 0x1, CS2R (t_wait); k-block 0 also has ~11 "
      "descriptor set-up instructions between t_first and its first HGMMA (it is outside the medians). ";
  record(c, "wgmma_issue_kblock_issue_" + sname, G, "cycles", iss,
         how + "Value = t_commit - t_first: time for the warpgroup to get its k-block's 4 wgmmas (+ fence, commit) "
               "issued, i.e. the issue back-pressure per k-block.",
         p);
  JObj q;
  q.str("shape", shape).num("warpgroups", nwg).num("k_blocks_in_median_from", kKbFrom);
  record(c, "wgmma_issue_kblock_wait_" + sname, G, "cycles", wt,
         how + "Value = t_wait - t_commit: time in wait_group 1 (until the previous k-block's group completes).", q);
  record(c, "wgmma_issue_kblock_period_" + sname, G, "cycles", per,
         how + "Value = t_first(k+1) - t_first(k): the k-block period of one warpgroup.", q);
}

template <int N, bool KLOOP>
void wg_issue_all(Ctx& c) {
  WgResult chk = wg_check<N, false>(c);
  for (int nwg = 1; nwg <= 2; ++nwg) wg_issue_timeline<N>(c, chk, nwg);
  if constexpr (KLOOP)
    for (int nwg = 1; nwg <= 2; ++nwg) wg_issue_kloop<N>(c, chk, nwg);
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
  wg_issue_all<64, false>(c);
  wg_issue_all<128, true>(c);
  wg_issue_all<256, true>(c);
}

}  // namespace mb
