// Driver for K1, the sm80-style back-to-back fused GEMM (k1_b2b.cuh, k1_tile.cuh):
//   D1 = fp16(ReLU(alpha0 * A0 x B0 + bias0))  (kept in shared memory),  D = fp16(ReLU(alpha1 * D1 x B1 + beta1 * C1))
// Random fp16 inputs from a fixed seed (scaled so that each ReLU keeps about half of its inputs and nothing
// comes near the fp16 range), D poisoned with 0xFFFF (NaN) before every checked run, then:
//   - reference: cublasGemmEx (fp16 in, CUBLAS_COMPUTE_32F, fp32 out) for GEMM0, the epilogue in fp32 on the
//     GPU, D1 rounded to fp16 as the kernel does, cublasGemmEx for GEMM1, its epilogue in fp32: ref (fp32).
//     Norm-wise relative error ||D - ref||_F / ||ref||_F and the largest |D - ref| / (|ref| + 0.1 rms(ref)).
//   - a CPU float64 check of sampled rows (first, last, random): the whole chain in double, with D1 rounded to
//     fp16 like the kernel ("f64") and without ("f64 exact"); the cuBLAS reference is checked against it too.
//   - a second configuration (alpha0 0.75, no bias, alpha1 1.25, beta1 0) with C1 filled with NaN (C1 must not
//     be read when beta1 == 0), and a rerun on the same inputs that must be bitwise identical.
// Timing (CUDA events per launch group, warm-up, then `reps` rounds, each round: the fused kernel, the unfused
// cuBLAS baseline, the cublasLt baseline, back to back; medians): 
//   fused     : k1_b2b_kernel, one launch
//   baseline  : cublasGemmEx GEMM0 (fp16 out, alpha0) -> bias+ReLU kernel (D1 in global memory, fp16) ->
//               cublasGemmEx GEMM1 (fp16 out, alpha1) -> beta1*C1 + ReLU kernel: 4 launches
//   cublaslt  : cublasLtMatmul GEMM0 with epilogue RELU_BIAS -> cublasLtMatmul GEMM1 with epilogue RELU and
//               C = C1 (beta1): 2 launches, D1 still goes through global memory (reported when available)
// Writes one JSON (--out).
//
//   k1_b2b [--out FILE] [--problem MxN0xK0xN1 | --m M --n0 N0 --k0 K0 --n1 N1] [--alpha0 A] [--alpha1 A]
//          [--beta1 B] [--no-bias] [--reps N] [--warm N] [--quick] [--seed S] [--spot-rows R] [--skip-bench]
//          [--probe FILE] [--lt-launches FILE]
// --probe FILE: after the checks (and the timing), one launch of the probed kernel (k1_b2b_probe_kernel: lane 0 of
// every warp reads clock64 at the marks of k1_tile.cuh's enum Mark; the timed kernel has none) after one plain
// launch; FILE gets per CTA its SM, its start (%globaltimer, ns) and per warp the clocks at the marks.
// --lt-launches FILE: after the timing, what one cublasLtMatmul call of each GEMM puts on the GPU (the nodes of a CUDA
// graph captured from it) and its time per call alone, among 20 back to back, and as a graph launch; and, back to back,
// the call's kernel and its workspace memset timed apart (the block's comments in main).
// Defaults: the kernels.md reference problem 81920x64x576x256, alpha0 1 + bias, alpha1 1, beta1 1, 50 reps.
// Shapes the kernel cannot do (N0 != 64, K0 not a multiple of 32, N1 not a multiple of 256, M < 1) are
// refused with a message and exit code 2 before anything touches the GPU.  The kernel has no spin waits (only
// cp.async.wait_group and __syncthreads), so it cannot hang; run_k1.sh still runs it under a kill timeout.
#include <cublasLt.h>
#include <cuda.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_common.h"
#include "k1_b2b.cuh"

namespace {

using namespace khost;

// ---------------------------------------------------------------------------------------------
// Helper kernels
// ---------------------------------------------------------------------------------------------
__host__ __device__ inline uint32_t hash32(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}
// scale * uniform[-1, 1), rounded to fp16
__global__ void k_fill_random(__half* p, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = hash32(i * 0x9E3779B97F4A7C15ull + seed);
    p[i] = __float2half_rn(scale * (float(h >> 8) * (2.0f / 16777216.0f) - 1.0f));
  }
}
// Reads n 16-byte words and keeps a word that depends on all of them (so the loads stay): what it leaves in the L2
// are clean lines of this buffer, none written (K1's start after a clean L2, --lt-launches).
__global__ void k_read_clean(const uint4* p, size_t n, unsigned* sink) {
  unsigned x = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = p[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x9E3779B9u) *sink = x;
}
__global__ void k_fill_u16(uint16_t* p, size_t n, uint16_t v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = v;
}
// reference epilogue 0: D1ref = fp16(ReLU(alpha0 * R0 + bias0[n])) (fp32 math, as the kernel); counts D1 > 0
__global__ void k_ref_epi0(const float* R0, const __half* bias, float alpha0, size_t n, int N0, __half* D1,
                           unsigned long long* kept) {
  unsigned long long c = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float v = alpha0 * R0[i] + (bias ? __half2float(bias[i % N0]) : 0.f);
    v = v > 0.f ? v : 0.f;
    D1[i] = __float2half_rn(v);
    c += v > 0.f;
  }
  for (int o = 16; o > 0; o >>= 1) c += __shfl_down_sync(0xffffffffu, c, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(kept, c);
}
// reference epilogue 1, in place: ref = ReLU(alpha1 * R1 + beta1 * C1) in fp32; C1 not read when beta1 == 0
__global__ void k_ref_epi1(float* R1, const __half* C1, float alpha1, float beta1, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float v = alpha1 * R1[i];
    if (beta1 != 0.f) v += beta1 * __half2float(C1[i]);
    R1[i] = v > 0.f ? v : 0.f;
  }
}
// Baseline epilogue kernels (fp16 in place, 8 halves per thread and step; N0 and the sizes are multiples of 8)
__global__ void k_base_epi0(__half* T, const __half* bias, size_t n8, int N0) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n8; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = reinterpret_cast<uint4*>(T)[i];
    __half2* h = reinterpret_cast<__half2*>(&v);
    const int c0 = int((i * 8) % size_t(N0));
    for (int e = 0; e < 4; ++e) {
      float2 f = __half22float2(h[e]);
      if (bias) {
        f.x += __half2float(bias[c0 + 2 * e]);
        f.y += __half2float(bias[c0 + 2 * e + 1]);
      }
      h[e] = __floats2half2_rn(f.x > 0.f ? f.x : 0.f, f.y > 0.f ? f.y : 0.f);
    }
    reinterpret_cast<uint4*>(T)[i] = v;
  }
}
__global__ void k_base_epi1(__half* D, const __half* C1, float beta1, size_t n8) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n8; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = reinterpret_cast<uint4*>(D)[i];
    __half2* h = reinterpret_cast<__half2*>(&v);
    uint4 cv = make_uint4(0, 0, 0, 0);
    if (beta1 != 0.f) cv = reinterpret_cast<const uint4*>(C1)[i];
    const __half2* c = reinterpret_cast<const __half2*>(&cv);
    for (int e = 0; e < 4; ++e) {
      float2 f = __half22float2(h[e]);
      if (beta1 != 0.f) {
        const float2 g = __half22float2(c[e]);
        f.x += beta1 * g.x;
        f.y += beta1 * g.y;
      }
      h[e] = __floats2half2_rn(f.x > 0.f ? f.x : 0.f, f.y > 0.f ? f.y : 0.f);
    }
    reinterpret_cast<uint4*>(D)[i] = v;
  }
}
// error pass 1: acc[0] += (d - ref)^2, acc[1] += ref^2; cnt[0] += non-finite d, cnt[1] += d > 0;
// mx[0] = max |d - ref| (float bits; non-negative floats order like their bits)
__global__ void k_err1(const __half* d, const float* ref, size_t n, double* acc, unsigned long long* cnt,
                       unsigned int* mx) {
  double e = 0, r = 0;
  unsigned long long bad = 0, pos = 0;
  float m = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const float x = __half2float(d[i]), y = ref[i];
    if (!isfinite(x)) {
      ++bad;
      continue;
    }
    pos += x > 0.f;
    const double df = double(x) - double(y);
    e += df * df;
    r += double(y) * double(y);
    m = fmaxf(m, fabsf(x - y));
  }
  for (int o = 16; o > 0; o >>= 1) {
    e += __shfl_down_sync(0xffffffffu, e, o);
    r += __shfl_down_sync(0xffffffffu, r, o);
    bad += __shfl_down_sync(0xffffffffu, bad, o);
    pos += __shfl_down_sync(0xffffffffu, pos, o);
    m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, o));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&acc[0], e);
    atomicAdd(&acc[1], r);
    atomicAdd(&cnt[0], bad);
    atomicAdd(&cnt[1], pos);
    atomicMax(&mx[0], __float_as_uint(m));
  }
}
// error pass 2: mx[1] = max |d - ref| / (|ref| + floor)
__global__ void k_err2(const __half* d, const float* ref, size_t n, float floor_, unsigned int* mx) {
  float m = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const float x = __half2float(d[i]), y = ref[i];
    if (isfinite(x)) m = fmaxf(m, fabsf(x - y) / (fabsf(y) + floor_));
  }
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0) atomicMax(&mx[1], __float_as_uint(m));
}

// ---------------------------------------------------------------------------------------------
// Misc host helpers (as in k2_main.cu)
// ---------------------------------------------------------------------------------------------
const char* kSmiFields =
    "name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,"
    "temperature.gpu,clocks_throttle_reasons.active";
std::string smi_now() {
  return popen_all(std::string("nvidia-smi --query-gpu=") + kSmiFields + " --format=csv,noheader -i 0 2>/dev/null");
}
std::string jbool(bool b) { return b ? "true" : "false"; }
float h2f(uint16_t u) { return __half2float(__ushort_as_half(u)); }
uint16_t f2h(float f) { return __half_as_ushort(__float2half_rn(f)); }

// Times several launch groups round-robin: per round, each group between its own pair of events (stream 0,
// no host sync inside).  Returns per-run times in ms, one vector per group.
std::vector<std::vector<double>> time_round_robin(const std::vector<std::function<void()>>& fs, int warm, int reps) {
  const size_t n = fs.size();
  std::vector<cudaEvent_t> ev(2 * n * reps);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  for (int i = 0; i < warm; ++i)
    for (auto& f : fs) f();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < reps; ++i)
    for (size_t j = 0; j < n; ++j) {
      CK(cudaEventRecord(ev[2 * (i * n + j)]));
      fs[j]();
      CK(cudaEventRecord(ev[2 * (i * n + j) + 1]));
    }
  CK(cudaDeviceSynchronize());
  CK(cudaGetLastError());
  std::vector<std::vector<double>> out(n);
  for (int i = 0; i < reps; ++i)
    for (size_t j = 0; j < n; ++j) {
      float t = 0;
      CK(cudaEventElapsedTime(&t, ev[2 * (i * n + j)], ev[2 * (i * n + j) + 1]));
      out[j].push_back(t);
    }
  for (auto& e : ev) CK(cudaEventDestroy(e));
  return out;
}

// ---------------------------------------------------------------------------------------------
// cublasLt baseline: two matmuls with fused epilogues (RELU_BIAS, then RELU with C = C1)
// ---------------------------------------------------------------------------------------------
struct LtBaseline {
  bool ok = false;
  std::string why;
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t op[2] = {nullptr, nullptr};
  cublasLtMatrixLayout_t lay[7] = {};  // B0, A0, T(N0 x M), B1, T as B, C1, D
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulHeuristicResult_t res[2] = {};
  void* ws = nullptr;
  uint64_t ws_bytes = 32ull << 20;

  void destroy() {
    for (auto& l : lay)
      if (l) cublasLtMatrixLayoutDestroy(l);
    for (auto& o : op)
      if (o) cublasLtMatmulDescDestroy(o);
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (lt) cublasLtDestroy(lt);
    if (ws) cudaFree(ws);
  }
};
#define LTTRY(call)                                               \
  do {                                                            \
    cublasStatus_t s_ = (call);                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                            \
      L.why = std::string(#call) + " -> status " + std::to_string((int)s_); \
      return;                                                     \
    }                                                             \
  } while (0)
void lt_setup(LtBaseline& L, int M, int N0, int K0, int N1, const void* bias0) {
  LTTRY(cublasLtCreate(&L.lt));
  if (cudaMalloc(&L.ws, L.ws_bytes) != cudaSuccess) {
    L.ws = nullptr;
    L.why = "workspace cudaMalloc failed";
    return;
  }
  const cublasOperation_t tT = CUBLAS_OP_T, tN = CUBLAS_OP_N;
  for (int i = 0; i < 2; ++i) {
    LTTRY(cublasLtMatmulDescCreate(&L.op[i], CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LTTRY(cublasLtMatmulDescSetAttribute(L.op[i], CUBLASLT_MATMUL_DESC_TRANSA, &tT, sizeof tT));
    LTTRY(cublasLtMatmulDescSetAttribute(L.op[i], CUBLASLT_MATMUL_DESC_TRANSB, &tN, sizeof tN));
  }
  const cublasLtEpilogue_t e0 = bias0 ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  const cublasLtEpilogue_t e1 = CUBLASLT_EPILOGUE_RELU;
  LTTRY(cublasLtMatmulDescSetAttribute(L.op[0], CUBLASLT_MATMUL_DESC_EPILOGUE, &e0, sizeof e0));
  if (bias0) LTTRY(cublasLtMatmulDescSetAttribute(L.op[0], CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias0, sizeof bias0));
  LTTRY(cublasLtMatmulDescSetAttribute(L.op[1], CUBLASLT_MATMUL_DESC_EPILOGUE, &e1, sizeof e1));
  // column-major views of the row-major matrices
  LTTRY(cublasLtMatrixLayoutCreate(&L.lay[0], CUDA_R_16F, K0, N0, K0));  // B0: K0 x N0 (op T -> N0 x K0)
  LTTRY(cublasLtMatrixLayoutCreate(&L.lay[1], CUDA_R_16F, K0, M, K0));   // A0: K0 x M
  LTTRY(cublasLtMatrixLayoutCreate(&L.lay[2], CUDA_R_16F, N0, M, N0));   // D1 (T): N0 x M
  LTTRY(cublasLtMatrixLayoutCreate(&L.lay[3], CUDA_R_16F, N0, N1, N0));  // B1: N0 x N1 (op T -> N1 x N0)
  LTTRY(cublasLtMatrixLayoutCreate(&L.lay[4], CUDA_R_16F, N0, M, N0));   // D1 as GEMM1's B
  LTTRY(cublasLtMatrixLayoutCreate(&L.lay[5], CUDA_R_16F, N1, M, N1));   // C1
  LTTRY(cublasLtMatrixLayoutCreate(&L.lay[6], CUDA_R_16F, N1, M, N1));   // D
  LTTRY(cublasLtMatmulPreferenceCreate(&L.pref));
  LTTRY(cublasLtMatmulPreferenceSetAttribute(L.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &L.ws_bytes,
                                             sizeof L.ws_bytes));
  int n = 0;
  LTTRY(cublasLtMatmulAlgoGetHeuristic(L.lt, L.op[0], L.lay[0], L.lay[1], L.lay[2], L.lay[2], L.pref, 1, &L.res[0], &n));
  if (n < 1) {
    L.why = "no cublasLt algorithm for GEMM0 with the RELU_BIAS epilogue";
    return;
  }
  LTTRY(cublasLtMatmulAlgoGetHeuristic(L.lt, L.op[1], L.lay[3], L.lay[4], L.lay[5], L.lay[6], L.pref, 1, &L.res[1], &n));
  if (n < 1) {
    L.why = "no cublasLt algorithm for GEMM1 with the RELU epilogue";
    return;
  }
  L.ok = true;
}

// What cuBLASLt's heuristic chose for GEMM i: the algorithm's configuration attributes as cublasLt.h numbers them
// (tile, stages, inner shape and cluster shape are values of cublasLtMatmulTile_t, cublasLtMatmulStages_t,
// cublasLtMatmulInnerShape_t, cublasLtClusterShape_t), its workspace and the waves it expects.
std::string lt_algo_json(const LtBaseline& L, int i) {
  const cublasLtMatmulAlgo_t& a = L.res[i].algo;
  // Most attributes are 32-bit (the algorithm id and split-K count signed, the rest unsigned), the inner and cluster
  // shapes 16-bit: ask for the size first, then read it as cublasLt.h types it.
  auto attr = [&](cublasLtMatmulAlgoConfigAttributes_t what) -> long long {
    size_t size = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&a, what, nullptr, 0, &size) != CUBLAS_STATUS_SUCCESS) return -1;
    const bool is_signed = what == CUBLASLT_ALGO_CONFIG_ID || what == CUBLASLT_ALGO_CONFIG_SPLITK_NUM;
    if (size == 4) {
      uint32_t v = 0;
      if (cublasLtMatmulAlgoConfigGetAttribute(&a, what, &v, sizeof v, &size) != CUBLAS_STATUS_SUCCESS) return -1;
      return is_signed ? static_cast<long long>(static_cast<int32_t>(v)) : static_cast<long long>(v);
    }
    if (size == 2) {
      uint16_t v = 0;
      if (cublasLtMatmulAlgoConfigGetAttribute(&a, what, &v, sizeof v, &size) != CUBLAS_STATUS_SUCCESS) return -1;
      return v;
    }
    return -1;
  };
  std::ostringstream o;
  o << "{\"algo_id\": " << attr(CUBLASLT_ALGO_CONFIG_ID) << ", \"tile_id\": " << attr(CUBLASLT_ALGO_CONFIG_TILE_ID)
    << ", \"stages_id\": " << attr(CUBLASLT_ALGO_CONFIG_STAGES_ID) << ", \"splitk_num\": "
    << attr(CUBLASLT_ALGO_CONFIG_SPLITK_NUM) << ", \"reduction_scheme\": " << attr(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)
    << ", \"cta_swizzling\": " << attr(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING) << ", \"custom_option\": "
    << attr(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION) << ", \"inner_shape_id\": " << attr(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID)
    << ", \"cluster_shape_id\": " << attr(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID) << ", \"workspace_bytes\": "
    << L.res[i].workspaceSize << ", \"waves_count\": " << L.res[i].wavesCount << "}";
  return o.str();
}

struct Check {
  std::string name;
  float alpha0, alpha1, beta1;
  bool bias, c1_poisoned;
  double rel = NAN, max_scaled = NAN, max_abs = NAN, rms_ref = NAN, kept_d1 = NAN, kept_d = NAN;
  unsigned long long nonfinite = 0;
  double spot = NAN, spot_exact = NAN, spot_ref = NAN;
  double base_rel = NAN, base_max_scaled = NAN, base_spot = NAN;
  double lt_rel = NAN, lt_max_scaled = NAN, lt_spot = NAN;
  unsigned long long base_nonfinite = 0, lt_nonfinite = 0;
  bool ok = false;
};

}  // namespace

int main(int argc, char** argv) {
  std::string out_path = "k1_b2b.json";
  long long M = 81920, N0 = 64, K0 = 576, N1 = 256;
  float alpha0 = 1.f, alpha1 = 1.f, beta1 = 1.f;
  bool bias_on = true, skip_bench = false;
  std::string probe_path, lt_launches_path;
  int reps = 50, warm = 5, spot_rows = 16;
  uint64_t seed = 0x6b31;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error("missing value for " + a);
        return argv[++i];
      };
      auto num = [&]() -> long long {
        const std::string v = next();
        char* end = nullptr;
        const long long x = std::strtoll(v.c_str(), &end, 10);
        if (!end || *end) throw std::runtime_error("bad integer '" + v + "' for " + a);
        return x;
      };
      auto fnum = [&]() -> float {
        const std::string v = next();
        char* end = nullptr;
        const float x = std::strtof(v.c_str(), &end);
        if (!end || *end || !std::isfinite(x)) throw std::runtime_error("bad number '" + v + "' for " + a);
        return x;
      };
      if (a == "--out") out_path = next();
      else if (a == "--problem") {
        const std::string v = next();
        char tail = 0;
        if (std::sscanf(v.c_str(), "%lldx%lldx%lldx%lld%c", &M, &N0, &K0, &N1, &tail) != 4)
          throw std::runtime_error("--problem wants MxN0xK0xN1, got '" + v + "'");
      } else if (a == "--m") M = num();
      else if (a == "--n0") N0 = num();
      else if (a == "--k0") K0 = num();
      else if (a == "--n1") N1 = num();
      else if (a == "--alpha0") alpha0 = fnum();
      else if (a == "--alpha1") alpha1 = fnum();
      else if (a == "--beta1") beta1 = fnum();
      else if (a == "--no-bias") bias_on = false;
      else if (a == "--reps") reps = int(num());
      else if (a == "--warm") warm = int(num());
      else if (a == "--quick") { reps = 10; warm = 2; }
      else if (a == "--seed") seed = uint64_t(num());
      else if (a == "--spot-rows") spot_rows = int(num());
      else if (a == "--skip-bench") skip_bench = true;
      else if (a == "--probe") probe_path = next();
      else if (a == "--lt-launches") lt_launches_path = next();
      else throw std::runtime_error("unknown argument " + a);
    }
    if (reps < 1 || warm < 0 || spot_rows < 2) throw std::runtime_error("bad --reps / --warm / --spot-rows");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  if (const char* why = k1::shape_error(M, N0, K0, N1)) {
    std::fprintf(stderr, "error: problem %lldx%lldx%lldx%lld (M x N0 x K0 x N1) refused: %s\n", M, N0, K0, N1, why);
    return 2;
  }
  std::string cmdline;
  for (int i = 0; i < argc; ++i) cmdline += (i ? " " : "") + std::string(argv[i]);

  try {
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    std::printf("device: %s, %d SMs, cc %d.%d\n", prop.name, sms, prop.major, prop.minor);
    if (prop.major != 9 || prop.minor != 0) {
      std::fprintf(stderr, "error: this build carries sm_90a code only (the kernel itself needs sm_80+); device is cc %d.%d\n",
                   prop.major, prop.minor);
      return 2;
    }
    const std::string smi_start = smi_now();
    CK(k1::prepare());
    cudaFuncAttributes fa{};
    CK(cudaFuncGetAttributes(&fa, k1::k1_b2b_kernel));
    int ctas_per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas_per_sm, k1::k1_b2b_kernel, k1::THREADS, k1::SMEM_BYTES));
    const int grid = k1::grid_for(int(M));
    std::printf("K1 kernel: %d regs, %zu B local, %u B dynamic smem, %d CTAs/SM, grid %d x %d threads\n", fa.numRegs,
                (size_t)fa.localSizeBytes, k1::SMEM_BYTES, ctas_per_sm, grid, k1::THREADS);
    std::printf("problem: GEMM0 %lld x %lld x %lld, GEMM1 %lld x %lld x %lld\n", M, N0, K0, M, N1, N0);

    const size_t nA0 = size_t(M) * K0, nB0 = size_t(N0) * K0, nB1 = size_t(N1) * N0, nC = size_t(M) * N1,
                 nD1 = size_t(M) * N0;
    __half *A0, *B0, *bias, *B1, *C1, *D, *Dkeep, *T0, *Db, *T1, *Dl, *D1ref;
    float *R0, *R1;
    CK(cudaMalloc(&A0, nA0 * 2));
    CK(cudaMalloc(&B0, nB0 * 2));
    CK(cudaMalloc(&bias, N0 * 2));
    CK(cudaMalloc(&B1, nB1 * 2));
    CK(cudaMalloc(&C1, nC * 2));
    CK(cudaMalloc(&D, nC * 2));
    CK(cudaMalloc(&Dkeep, nC * 2));
    CK(cudaMalloc(&T0, nD1 * 2));
    CK(cudaMalloc(&Db, nC * 2));
    CK(cudaMalloc(&T1, nD1 * 2));
    CK(cudaMalloc(&Dl, nC * 2));
    CK(cudaMalloc(&D1ref, nD1 * 2));
    CK(cudaMalloc(&R0, nD1 * 4));
    CK(cudaMalloc(&R1, nC * 4));
    double* d_acc;
    unsigned long long* d_cnt;
    unsigned int* d_mx;
    CK(cudaMalloc(&d_acc, 2 * sizeof(double)));
    CK(cudaMalloc(&d_cnt, 2 * sizeof(unsigned long long)));
    CK(cudaMalloc(&d_mx, 2 * sizeof(unsigned int)));

    // ---- inputs: A0, C1 ~ U[-1,1); B0 ~ U[-1,1) * 3/sqrt(K0) (so A0 x B0 has unit variance); bias0 ~ U[-0.5,0.5);
    // B1 ~ U[-1,1) * sqrt(6/N0) (D1 = ReLU(~N(0,1)) has second moment ~1/2: D1 x B1 has unit variance) ----
    const float sB0 = 3.f / std::sqrt(float(K0)), sB1 = std::sqrt(6.f / float(N0)), sBias = 0.5f;
    auto fill = [&](__half* p, size_t n, uint64_t id, float scale) {
      k_fill_random<<<4 * sms, 256>>>(p, n, seed * 0x100000001B3ull + id * 0x9E3779B97F4A7C15ull, scale);
      CK(cudaGetLastError());
    };
    auto poison = [&](__half* p, size_t n) {
      k_fill_u16<<<4 * sms, 256>>>(reinterpret_cast<uint16_t*>(p), n, 0xFFFFu);  // fp16 NaN
      CK(cudaGetLastError());
    };
    auto fill_c1 = [&] { fill(C1, nC, 5, 1.f); };
    fill(A0, nA0, 1, 1.f);
    fill(B0, nB0, 2, sB0);
    fill(bias, N0, 3, sBias);
    fill(B1, nB1, 4, sB1);
    fill_c1();
    CK(cudaDeviceSynchronize());

    cublasHandle_t h;
    CKB(cublasCreate(&h));
    LtBaseline L;
    lt_setup(L, int(M), int(N0), int(K0), int(N1), bias_on ? static_cast<const void*>(bias) : nullptr);
    if (!L.ok) std::printf("cublasLt baseline unavailable: %s\n", L.why.c_str());
    const float one = 1.f, zero = 0.f;

    auto params = [&](float a0, bool b, float a1, float b1, __half* out) {
      return k1::Params{reinterpret_cast<const uint16_t*>(A0), reinterpret_cast<const uint16_t*>(B0),
                        b ? reinterpret_cast<const uint16_t*>(bias) : nullptr, reinterpret_cast<const uint16_t*>(B1),
                        reinterpret_cast<const uint16_t*>(C1), reinterpret_cast<uint16_t*>(out), int(M), int(K0),
                        int(N1), a0, a1, b1};
    };
    // row-major X (R x C) = column-major X^T (C x R): D^T = B^T-view x A-view, as in k2_main.cu
    auto gemm0_ex = [&](const float* alpha, void* out, cudaDataType_t ot) {
      CKB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(N0), int(M), int(K0), alpha, B0, CUDA_R_16F, int(K0), A0,
                       CUDA_R_16F, int(K0), &zero, out, ot, int(N0), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    auto gemm1_ex = [&](const float* alpha, const __half* d1, void* out, cudaDataType_t ot) {
      CKB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(N1), int(M), int(N0), alpha, B1, CUDA_R_16F, int(N0), d1,
                       CUDA_R_16F, int(N0), &zero, out, ot, int(N1), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    // the reference into R1 (fp32, M x N1), D1ref (fp16); returns the fraction of D1 > 0
    unsigned long long* d_kept;
    CK(cudaMalloc(&d_kept, sizeof(unsigned long long)));
    auto reference = [&](float a0, bool b, float a1, float b1) {
      gemm0_ex(&one, R0, CUDA_R_32F);
      CK(cudaMemset(d_kept, 0, sizeof(unsigned long long)));
      k_ref_epi0<<<4 * sms, 256>>>(R0, b ? bias : nullptr, a0, nD1, int(N0), D1ref, d_kept);
      CK(cudaGetLastError());
      gemm1_ex(&one, D1ref, R1, CUDA_R_32F);
      k_ref_epi1<<<4 * sms, 256>>>(R1, C1, a1, b1, nC);
      CK(cudaGetLastError());
      unsigned long long kept = 0;
      CK(cudaMemcpy(&kept, d_kept, sizeof kept, cudaMemcpyDeviceToHost));
      return double(kept) / double(nD1);
    };
    auto fused = [&](float a0, bool b, float a1, float b1, __half* out) { k1::launch(params(a0, b, a1, b1, out), 0); };
    const size_t n8D1 = nD1 / 8, n8C = nC / 8;
    auto baseline = [&](float a0, bool b, float a1, float b1, __half* out) {
      gemm0_ex(&a0, T0, CUDA_R_16F);
      k_base_epi0<<<8 * sms, 256>>>(T0, b ? bias : nullptr, n8D1, int(N0));
      gemm1_ex(&a1, T0, out, CUDA_R_16F);
      k_base_epi1<<<8 * sms, 256>>>(out, C1, b1, n8C);
    };
    auto lt_gemm0 = [&](float a0, cudaStream_t st = 0) {  // bias as configured in lt_setup
      CKB(cublasLtMatmul(L.lt, L.op[0], &a0, B0, L.lay[0], A0, L.lay[1], &zero, T1, L.lay[2], T1, L.lay[2],
                         &L.res[0].algo, L.ws, L.ws_bytes, st));
    };
    auto lt_gemm1 = [&](float a1, float b1, __half* out, cudaStream_t st = 0) {
      CKB(cublasLtMatmul(L.lt, L.op[1], &a1, B1, L.lay[3], T1, L.lay[4], &b1, C1, L.lay[5], out, L.lay[6],
                         &L.res[1].algo, L.ws, L.ws_bytes, st));
    };
    auto cublaslt = [&](float a0, float a1, float b1, __half* out) {
      lt_gemm0(a0);
      lt_gemm1(a1, b1, out);
    };
    // errors of an fp16 result against R1: {rel, max_scaled, max_abs, rms_ref, kept}; nonfinite out
    struct Err {
      double rel, max_scaled, max_abs, rms, kept;
      unsigned long long nonfinite;
    };
    auto errors = [&](const __half* x) {
      CK(cudaMemset(d_acc, 0, 2 * sizeof(double)));
      CK(cudaMemset(d_cnt, 0, 2 * sizeof(unsigned long long)));
      CK(cudaMemset(d_mx, 0, 2 * sizeof(unsigned int)));
      k_err1<<<4 * sms, 256>>>(x, R1, nC, d_acc, d_cnt, d_mx);
      CK(cudaGetLastError());
      double acc[2];
      unsigned long long cnt[2];
      unsigned int mx[2];
      CK(cudaMemcpy(acc, d_acc, sizeof acc, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(cnt, d_cnt, sizeof cnt, cudaMemcpyDeviceToHost));
      const double rms = std::sqrt(acc[1] / double(nC));
      k_err2<<<4 * sms, 256>>>(x, R1, nC, float(0.1 * rms), d_mx);
      CK(cudaGetLastError());
      CK(cudaMemcpy(mx, d_mx, sizeof mx, cudaMemcpyDeviceToHost));
      float fmx[2];
      std::memcpy(fmx, mx, sizeof fmx);
      return Err{std::sqrt(acc[0] / acc[1]), fmx[1], fmx[0], rms, double(cnt[1]) / double(nC), cnt[0]};
    };

    // ---- CPU float64 check of sampled rows ----
    std::vector<uint16_t> hB0(nB0), hBias(N0), hB1(nB1);
    CK(cudaMemcpy(hB0.data(), B0, nB0 * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hBias.data(), bias, N0 * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hB1.data(), B1, nB1 * 2, cudaMemcpyDeviceToHost));
    std::vector<long long> rows = {0, M - 1};
    {
      std::mt19937_64 rng(seed);
      while ((int)rows.size() < spot_rows) rows.push_back((long long)(rng() % uint64_t(M)));
    }
    struct Spot {
      double vs_f64, vs_f64_exact;
    };
    // exact (y_h: D1 rounded to fp16 as the kernel does; y_e: no rounding) for the sampled rows
    std::vector<double> yh, ye;
    auto spot_expect = [&](float a0, bool b, float a1, float b1) {
      yh.assign(rows.size() * N1, 0);
      ye.assign(rows.size() * N1, 0);
      std::vector<uint16_t> arow(K0), crow(N1);
      std::vector<double> d1e(N0), d1h(N0);
      for (size_t r = 0; r < rows.size(); ++r) {
        const long long m = rows[r];
        CK(cudaMemcpy(arow.data(), A0 + size_t(m) * K0, K0 * 2, cudaMemcpyDeviceToHost));
        if (b1 != 0.f) CK(cudaMemcpy(crow.data(), C1 + size_t(m) * N1, N1 * 2, cudaMemcpyDeviceToHost));
        for (int n = 0; n < N0; ++n) {
          double s = 0;
          for (int k = 0; k < K0; ++k) s += double(h2f(arow[k])) * double(h2f(hB0[size_t(n) * K0 + k]));
          const double x = double(a0) * s + (b ? double(h2f(hBias[n])) : 0.0);
          d1e[n] = x > 0 ? x : 0;
          d1h[n] = h2f(f2h(float(d1e[n])));
        }
        for (int j = 0; j < N1; ++j) {
          double sh = 0, se = 0;
          for (int n = 0; n < N0; ++n) {
            const double bv = h2f(hB1[size_t(j) * N0 + n]);
            sh += d1h[n] * bv;
            se += d1e[n] * bv;
          }
          const double c = b1 != 0.f ? double(b1) * double(h2f(crow[j])) : 0.0;
          const double vh = double(a1) * sh + c, ve = double(a1) * se + c;
          yh[r * N1 + j] = vh > 0 ? vh : 0;
          ye[r * N1 + j] = ve > 0 ? ve : 0;
        }
      }
    };
    // max |x - y| / (|y| + 0.1 rms(y)) over the sampled rows, x an fp16 (or, ref, fp32) result on the GPU
    auto spot_cmp = [&](const void* x, bool is_f32, const std::vector<double>& y) {
      double ss = 0;
      for (double v : y) ss += v * v;
      const double fl = 0.1 * std::sqrt(ss / double(y.size()));
      double worst = 0;
      std::vector<uint16_t> hrow(N1);
      std::vector<float> frow(N1);
      for (size_t r = 0; r < rows.size(); ++r) {
        const size_t off = size_t(rows[r]) * N1;
        if (is_f32) CK(cudaMemcpy(frow.data(), static_cast<const float*>(x) + off, N1 * 4, cudaMemcpyDeviceToHost));
        else CK(cudaMemcpy(hrow.data(), static_cast<const __half*>(x) + off, N1 * 2, cudaMemcpyDeviceToHost));
        for (int j = 0; j < N1; ++j) {
          const double v = is_f32 ? double(frow[j]) : double(h2f(hrow[j]));
          double e = std::fabs(v - y[r * N1 + j]) / (std::fabs(y[r * N1 + j]) + fl);
          if (!(e == e)) e = INFINITY;
          worst = std::max(worst, e);
        }
      }
      return worst;
    };

    const double TOL_REL = 2e-3, TOL_MAX = 1e-2, TOL_SPOT = 1e-2;
    std::vector<Check> checks;
    checks.push_back({"main", alpha0, alpha1, beta1, bias_on, false});
    checks.push_back({"alpha0_0.75_nobias_alpha1_1.25_beta1_0_C1_NaN", 0.75f, 1.25f, 0.f, false, true});
    bool all_ok = true, repeat_ok = false;
    for (size_t ci = 0; ci < checks.size(); ++ci) {
      Check& c = checks[ci];
      const bool lt_here = L.ok && ci == 0;  // the Lt descriptors carry the main configuration's bias choice
      if (c.c1_poisoned) poison(C1, nC);
      poison(D, nC);
      fused(c.alpha0, c.bias, c.alpha1, c.beta1, D);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      if (ci == 0) {
        poison(Db, nC);
        baseline(c.alpha0, c.bias, c.alpha1, c.beta1, Db);
        if (lt_here) {
          poison(Dl, nC);
          cublaslt(c.alpha0, c.alpha1, c.beta1, Dl);
        }
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
      }
      c.kept_d1 = reference(c.alpha0, c.bias, c.alpha1, c.beta1);
      CK(cudaDeviceSynchronize());
      const Err e = errors(D);
      c.rel = e.rel, c.max_scaled = e.max_scaled, c.max_abs = e.max_abs, c.rms_ref = e.rms, c.kept_d = e.kept;
      c.nonfinite = e.nonfinite;
      spot_expect(c.alpha0, c.bias, c.alpha1, c.beta1);
      c.spot = spot_cmp(D, false, yh);
      c.spot_exact = spot_cmp(D, false, ye);
      c.spot_ref = spot_cmp(R1, true, yh);
      if (ci == 0) {
        const Err b = errors(Db);
        c.base_rel = b.rel, c.base_max_scaled = b.max_scaled, c.base_nonfinite = b.nonfinite;
        c.base_spot = spot_cmp(Db, false, yh);
        if (lt_here) {
          const Err l = errors(Dl);
          c.lt_rel = l.rel, c.lt_max_scaled = l.max_scaled, c.lt_nonfinite = l.nonfinite;
          c.lt_spot = spot_cmp(Dl, false, yh);
        }
      }
      c.ok = c.rel < TOL_REL && c.max_scaled < TOL_MAX && c.nonfinite == 0 && c.spot < TOL_SPOT &&
             c.spot_ref < TOL_SPOT;
      all_ok = all_ok && c.ok;
      std::printf("[check %s] alpha0 %g bias %d alpha1 %g beta1 %g%s: rel err %.3e, max scaled err %.3e (max abs "
                  "%.3e, rms(ref) %.3f), non-finite %llu, ReLU kept D1 %.1f %% D %.1f %%, f64 spot (%zu rows) %.3e "
                  "(exact chain %.3e; cuBLAS ref %.3e) -> %s\n",
                  c.name.c_str(), c.alpha0, c.bias, c.alpha1, c.beta1, c.c1_poisoned ? " (C1 = NaN)" : "", c.rel,
                  c.max_scaled, c.max_abs, c.rms_ref, c.nonfinite, 100 * c.kept_d1, 100 * c.kept_d, rows.size(),
                  c.spot, c.spot_exact, c.spot_ref, c.ok ? "OK" : "FAIL");
      if (ci == 0) {
        std::printf("[check %s] baseline (cublasGemmEx + epilogue kernels): rel err %.3e, max scaled %.3e, non-finite "
                    "%llu, f64 spot %.3e\n",
                    c.name.c_str(), c.base_rel, c.base_max_scaled, c.base_nonfinite, c.base_spot);
        if (lt_here)
          std::printf("[check %s] cublasLt (fused epilogues): rel err %.3e, max scaled %.3e, non-finite %llu, f64 spot "
                      "%.3e\n",
                      c.name.c_str(), c.lt_rel, c.lt_max_scaled, c.lt_nonfinite, c.lt_spot);
        CK(cudaMemcpy(Dkeep, D, nC * 2, cudaMemcpyDeviceToDevice));
      }
      if (c.c1_poisoned) {
        fill_c1();
        CK(cudaDeviceSynchronize());
      }
      std::fflush(stdout);
    }
    // repeatability: the main configuration again on the same inputs, bitwise
    {
      const Check& c = checks[0];
      poison(D, nC);
      fused(c.alpha0, c.bias, c.alpha1, c.beta1, D);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      std::vector<uint16_t> h1(nC), h2(nC);
      CK(cudaMemcpy(h1.data(), Dkeep, nC * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(h2.data(), D, nC * 2, cudaMemcpyDeviceToHost));
      repeat_ok = std::memcmp(h1.data(), h2.data(), nC * 2) == 0;
      all_ok = all_ok && repeat_ok;
      std::printf("[repeat] rerun on the same inputs: %s\n", repeat_ok ? "bitwise identical" : "DIFFERS");
    }

    // ---- timing ----
    const double flops0 = 2.0 * double(M) * double(N0) * double(K0), flops1 = 2.0 * double(M) * double(N1) * double(N0);
    const double flops = flops0 + flops1;
    // bytes the fused kernel must move at least: A0, B0, bias0, B1, C1 (beta1 != 0), D
    const double bytes_min = 2.0 * (double(nA0) + double(nB0) + (bias_on ? double(N0) : 0.0) + double(nB1) +
                                    (beta1 != 0.f ? double(nC) : 0.0) + double(nC));
    std::vector<double> tf, tb, tl, tl0, tl1;
    std::string smi_busy;
    bool timed = false;
    if (all_ok && !skip_bench) {
      const Check& c = checks[0];
      std::vector<std::function<void()>> fs = {[&] { fused(c.alpha0, c.bias, c.alpha1, c.beta1, D); },
                                               [&] { baseline(c.alpha0, c.bias, c.alpha1, c.beta1, Db); }};
      if (L.ok) {
        fs.push_back([&] { cublaslt(c.alpha0, c.alpha1, c.beta1, Dl); });
        // each of the two alone, in the same rounds (GEMM1 reads the D1 that GEMM0 left in T1)
        fs.push_back([&] { lt_gemm0(c.alpha0); });
        fs.push_back([&] { lt_gemm1(c.alpha1, c.beta1, Dl); });
      }
      auto ts = time_round_robin(fs, warm, reps);
      tf = ts[0];
      tb = ts[1];
      if (L.ok) tl = ts[2], tl0 = ts[3], tl1 = ts[4];
      timed = true;
      // nvidia-smi while the fused kernel runs back to back
      for (int i = 0; i < 3000; ++i) fused(c.alpha0, c.bias, c.alpha1, c.beta1, D);
      CK(cudaGetLastError());
      smi_busy = smi_now();
      CK(cudaDeviceSynchronize());
      // the timed runs' output is still right (R1 holds the last check's reference: recompute the main one)
      reference(c.alpha0, c.bias, c.alpha1, c.beta1);
      const Err e = errors(D);
      const bool after_ok = e.rel < TOL_REL && e.nonfinite == 0;
      all_ok = all_ok && after_ok;
      std::printf("[timing] output after the timed runs: rel err %.3e -> %s\n", e.rel, after_ok ? "OK" : "FAIL");
    }
    if (all_ok && !probe_path.empty()) {
      const Check& c = checks[0];
      const int warps = grid * (k1::THREADS / 32);
      unsigned long long *d_probe, *d_meta;
      CK(cudaMalloc(&d_probe, size_t(warps) * k1::K1_MARKS * 8));
      CK(cudaMalloc(&d_meta, size_t(grid) * 2 * 8));
      CK(cudaMemset(d_probe, 0, size_t(warps) * k1::K1_MARKS * 8));
      fused(c.alpha0, c.bias, c.alpha1, c.beta1, D);
      k1::launch_probe(params(c.alpha0, c.bias, c.alpha1, c.beta1, D), d_probe, d_meta, 0);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      const std::string smi_probe = smi_now();
      std::vector<unsigned long long> h_probe(size_t(warps) * k1::K1_MARKS), h_meta(size_t(grid) * 2);
      CK(cudaMemcpy(h_probe.data(), d_probe, h_probe.size() * 8, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(h_meta.data(), d_meta, h_meta.size() * 8, cudaMemcpyDeviceToHost));
      CK(cudaFree(d_probe));
      CK(cudaFree(d_meta));
      FILE* f = std::fopen(probe_path.c_str(), "w");
      if (!f) throw std::runtime_error("cannot write " + probe_path);
      std::fprintf(f, "{\"schema\": \"smpipe.k1_probe.v1\", \"command_line\": %s, \"gpu\": %s, \"nvidia_smi\": %s,\n",
                   jstr(cmdline).c_str(), jstr(prop.name).c_str(), jstr(smi_probe).c_str());
      std::fprintf(f, " \"problem\": [%lld, %lld, %lld, %lld], \"beta1\": %g, \"marks\": %d, \"warps_per_cta\": %d,\n", M, N0, K0, N1,
                   double(c.beta1), int(k1::K1_MARKS), k1::THREADS / 32);
      std::fprintf(f, " \"what\": \"per CTA: [sm, start globaltimer ns, [per warp: clock64 at each mark, 0 where not reached]]\",\n");
      std::fprintf(f, " \"ctas\": [\n");
      for (int b = 0; b < grid; ++b) {
        std::fprintf(f, "  [%llu, %llu, [", h_meta[size_t(b) * 2 + 1], h_meta[size_t(b) * 2]);
        for (int w = 0; w < k1::THREADS / 32; ++w) {
          std::fprintf(f, "%s[", w ? ", " : "");
          for (int m = 0; m < k1::K1_MARKS; ++m)
            std::fprintf(f, "%s%llu", m ? "," : "", h_probe[(size_t(b) * (k1::THREADS / 32) + w) * k1::K1_MARKS + m]);
          std::fprintf(f, "]");
        }
        std::fprintf(f, "]]%s\n", b + 1 < grid ? "," : "");
      }
      std::fprintf(f, " ]}\n");
      std::fclose(f);
      std::printf("[probe] wrote %s (%d CTAs x %d warps x %d marks)\n", probe_path.c_str(), grid, k1::THREADS / 32, int(k1::K1_MARKS));
    }
    // What one cublasLtMatmul call puts on the GPU, and what it costs timed in four ways (--lt-launches FILE): each GEMM
    // captured in a CUDA graph (its nodes: kernels with grid, block, cluster and shared memory, memsets with bytes), then
    // per round, on one stream: one call between two events (as the timed rounds above), 20 calls back to back between
    // two events (per call), one graph launch of the single-call graph, one graph launch of a 20-call graph (per call).
    // Where the single call takes longer than a call among 20, the difference is the launch's own cost between events.
    if (all_ok && L.ok && !lt_launches_path.empty()) {
      const Check& c = checks[0];
      cudaStream_t s;
      CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      auto call = [&](int g) {
        if (g == 0)
          lt_gemm0(c.alpha0, s);
        else
          lt_gemm1(c.alpha1, c.beta1, Dl, s);
      };
      auto capture = [&](int g, int calls) {
        cudaGraph_t graph;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < calls; ++i) call(g);
        CK(cudaStreamEndCapture(s, &graph));
        return graph;
      };
      constexpr int kBatch = 20;
      std::ostringstream js;
      js << "{\"schema\": \"smpipe.k1_lt_launches.v1\", \"command_line\": " << jstr(cmdline) << ", \"gpu\": " << jstr(prop.name)
         << ",\n \"what\": \"per cuBLASLt GEMM: the nodes of a CUDA graph captured from one cublasLtMatmul call; ms per call, medians of "
         << reps << " rounds: single (one call between two events), batch (" << kBatch
         << " calls between two events, per call), graph1 (one launch of the one-call graph), graph_batch (one launch of the "
         << kBatch << "-call graph, per call)\",\n \"gemms\": [";
      for (int g = 0; g < 2; ++g) {
        cudaGraph_t one = capture(g, 1), many = capture(g, kBatch);
        size_t n = 0;
        CK(cudaGraphGetNodes(one, nullptr, &n));
        std::vector<cudaGraphNode_t> nodes(n);
        CK(cudaGraphGetNodes(one, nodes.data(), &n));
        std::printf("[lt-launches] GEMM%d: %zu graph node(s) per call\n", g, n);
        cudaGraphNode_t memset_node = nullptr;
        cudaMemsetParams memset_params{};
        js << (g ? ",\n" : "\n") << "  {\"gemm\": " << g << ", \"nodes\": [";
        for (size_t i = 0; i < n; ++i) {
          cudaGraphNodeType t;
          CK(cudaGraphNodeGetType(nodes[i], &t));
          js << (i ? ", " : "");
          if (t == cudaGraphNodeTypeKernel) {
            // cuBLASLt's kernels live in its own modules: the runtime cannot name them (cudaGraphKernelNodeGetParams
            // answers invalid device function), the driver can.
            CUDA_KERNEL_NODE_PARAMS kp{};
            const char* name = "?";
            if (cuGraphKernelNodeGetParams(reinterpret_cast<CUgraphNode>(nodes[i]), &kp) == CUDA_SUCCESS) {
              if (kp.func == nullptr || cuFuncGetName(&name, kp.func) != CUDA_SUCCESS || name == nullptr) name = "?";
            }
            CUkernelNodeAttrValue cl{};  // cluster dimensions 0 x 0 x 0 where the node has none
            if (cuGraphKernelNodeGetAttribute(reinterpret_cast<CUgraphNode>(nodes[i]), CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION,
                                              &cl) != CUDA_SUCCESS)
              cl = CUkernelNodeAttrValue{};
            const unsigned cx = cl.clusterDim.x, cy = cl.clusterDim.y, cz = cl.clusterDim.z;
            std::printf("  kernel %s grid %ux%ux%u block %ux%ux%u smem %u cluster %ux%ux%u\n", name, kp.gridDimX, kp.gridDimY,
                        kp.gridDimZ, kp.blockDimX, kp.blockDimY, kp.blockDimZ, kp.sharedMemBytes, cx, cy, cz);
            js << "{\"type\": \"kernel\", \"name\": " << jstr(name) << ", \"grid\": [" << kp.gridDimX << ", " << kp.gridDimY
               << ", " << kp.gridDimZ << "], \"block\": [" << kp.blockDimX << ", " << kp.blockDimY << ", " << kp.blockDimZ
               << "], \"smem\": " << kp.sharedMemBytes << ", \"cluster\": [" << cx << ", " << cy << ", " << cz << "]}";
          } else if (t == cudaGraphNodeTypeMemset) {
            cudaMemsetParams& mp = memset_params;
            CK(cudaGraphMemsetNodeGetParams(nodes[i], &mp));
            memset_node = nodes[i];
            const size_t bytes = size_t(mp.elementSize) * mp.width * mp.height;
            std::printf("  memset %zu bytes\n", bytes);
            js << "{\"type\": \"memset\", \"bytes\": " << bytes << "}";
          } else {
            std::printf("  node of type %d\n", int(t));
            js << "{\"type\": " << int(t) << "}";
          }
        }
        cudaGraphExec_t x1, xn;
        CK(cudaGraphInstantiate(&x1, one, 0));
        CK(cudaGraphInstantiate(&xn, many, 0));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        std::vector<double> single, batch, graph1, graphn;
        auto timed = [&](auto&& work, int per, std::vector<double>& into) {
          CK(cudaEventRecord(e0, s));
          work();
          CK(cudaEventRecord(e1, s));
          CK(cudaEventSynchronize(e1));
          float ms = 0;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          into.push_back(double(ms) / per);
        };
        for (int w = 0; w < warm; ++w) {
          call(g);
          CK(cudaGraphLaunch(x1, s));
          CK(cudaGraphLaunch(xn, s));
        }
        CK(cudaStreamSynchronize(s));
        for (int r = 0; r < reps; ++r) {
          timed([&] { call(g); }, 1, single);
          timed([&] { for (int i = 0; i < kBatch; ++i) call(g); }, kBatch, batch);
          timed([&] { CK(cudaGraphLaunch(x1, s)); }, 1, graph1);
          timed([&] { CK(cudaGraphLaunch(xn, s)); }, kBatch, graphn);
        }
        CK(cudaGetLastError());
        std::printf("  ms per call (median of %d): single %.4f, batch of %d %.4f, graph %.4f, graph of %d %.4f\n", reps,
                    median(single), kBatch, median(batch), median(graph1), kBatch, median(graphn));
        // The memset apart from the kernel (a zero fill of one row, as cuBLASLt's node): per round kBatch times in a
        // stream kept busy (no host sync inside), each between its own two events: the call's graph (memset + kernel);
        // the kernel alone (the graph without its memset node), the same memset issued just before the first event; the
        // memset alone, the kernel-only graph right after the second event.
        std::vector<double> with_memset, kernel_only, memset_only, after_gemm1, after_fill;
        const bool split = memset_node != nullptr && memset_params.value == 0 && memset_params.height == 1;
        if (split) {
          cudaGraph_t bare;
          CK(cudaGraphClone(&bare, one));
          cudaGraphNode_t gone;
          CK(cudaGraphNodeFindInClone(&gone, memset_node, bare));
          CK(cudaGraphDestroyNode(gone));
          cudaGraphExec_t xk;
          CK(cudaGraphInstantiate(&xk, bare, 0));
          const size_t fill = size_t(memset_params.elementSize) * memset_params.width;
          auto zero_fill = [&] { CK(cudaMemsetAsync(memset_params.dst, 0, fill, s)); };
          std::vector<cudaEvent_t> ev(2 * kBatch);
          for (auto& e : ev) CK(cudaEventCreate(&e));
          auto rounds = [&](auto&& before, auto&& between, auto&& after, std::vector<double>& into) {
            for (int i = 0; i < kBatch; ++i) {
              before();
              CK(cudaEventRecord(ev[2 * i], s));
              between();
              CK(cudaEventRecord(ev[2 * i + 1], s));
              after();
            }
            CK(cudaStreamSynchronize(s));
            for (int i = 0; i < kBatch; ++i) {
              float ms = 0;
              CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
              into.push_back(ms);
            }
          };
          auto none = [] {};
          auto whole = [&] { CK(cudaGraphLaunch(x1, s)); };
          auto kernel = [&] { CK(cudaGraphLaunch(xk, s)); };
          for (int r = 0; r < reps; ++r) {
            rounds(none, whole, none, with_memset);
            rounds(zero_fill, kernel, none, kernel_only);
            rounds(none, zero_fill, kernel, memset_only);
          }
          // GEMM0's call after what precedes it in the timed rounds, GEMM1's call (D written, C1 read), and after a fill
          // of as many bytes as D (a memset: lines written, nothing read), each just before the first event.
          if (g == 0) {
            void* scratch = nullptr;
            CK(cudaMalloc(&scratch, nC * 2));
            auto after_g1 = [&] { call(1); };
            auto fill_d = [&] { CK(cudaMemsetAsync(scratch, 1, nC * 2, s)); };
            auto call0 = [&] { call(0); };
            for (int r = 0; r < reps; ++r) {
              rounds(after_g1, call0, none, after_gemm1);
              rounds(fill_d, call0, none, after_fill);
            }
            CK(cudaFree(scratch));
            std::printf("  GEMM0's call after GEMM1's %.4f, after a %zu-byte fill %.4f ms\n", median(after_gemm1), size_t(nC * 2),
                        median(after_fill));
          }
          CK(cudaGetLastError());
          for (auto& e : ev) CK(cudaEventDestroy(e));
          CK(cudaGraphExecDestroy(xk));
          CK(cudaGraphDestroy(bare));
          std::printf("  between events, back to back (median of %zu): memset + kernel %.4f, kernel alone %.4f, memset alone %.4f ms\n",
                      with_memset.size(), median(with_memset), median(kernel_only), median(memset_only));
        }
        js << "], \"ms\": {\"single\": " << jnum(median(single)) << ", \"batch\": " << jnum(median(batch))
           << ", \"graph1\": " << jnum(median(graph1)) << ", \"graph_batch\": " << jnum(median(graphn))
           << "}, \"ms_p10_p90\": {\"single\": [" << jnum(pct(single, 0.1)) << ", " << jnum(pct(single, 0.9))
           << "], \"batch\": [" << jnum(pct(batch, 0.1)) << ", " << jnum(pct(batch, 0.9)) << "]}";
        if (split) {
          js << ", \"back_to_back\": {\"what\": \"ms between two events, medians of " << with_memset.size()
             << " in a busy stream: the call's graph; its kernel alone (the memset just before); the memset alone (the kernel "
                "just after)\", \"memset_and_kernel\": " << jnum(median(with_memset)) << ", \"kernel\": " << jnum(median(kernel_only))
             << ", \"memset\": " << jnum(median(memset_only));
          if (!after_gemm1.empty())
            js << ", \"after_gemm1\": " << jnum(median(after_gemm1)) << ", \"after_fill\": " << jnum(median(after_fill))
               << ", \"fill_bytes\": " << nC * 2;
          js << "}";
        }
        js << "}";
        CK(cudaEventDestroy(e0));
        CK(cudaEventDestroy(e1));
        CK(cudaGraphExecDestroy(x1));
        CK(cudaGraphExecDestroy(xn));
        CK(cudaGraphDestroy(one));
        CK(cudaGraphDestroy(many));
      }
      std::ostringstream k1js;
      // K1 (the fused kernel) as the L2 leaves it, each case kBatch times per round just before the first of two events
      // around one K1 launch, in a busy stream: after a read of 256 MiB of another buffer (clean lines only: the start the
      // model calls cold), after a fill of as many bytes as D (a memset: D's bytes of lines written, dirty), after GEMM1's
      // cuBLASLt call (D written; as the timed rounds, where K1 follows the previous round's GEMM1), after K1 itself.
      // What a dirty start costs a kernel not bound by HBM (the model: --l2 dirty:BYTES).
      {
        const size_t clean_bytes = size_t(256) << 20;
        void* clean = nullptr;
        void* scratch = nullptr;
        unsigned* sink = nullptr;
        CK(cudaMalloc(&clean, clean_bytes));
        CK(cudaMemsetAsync(clean, 0, clean_bytes, s));
        CK(cudaMalloc(&scratch, nC * 2));
        CK(cudaMalloc(&sink, sizeof(unsigned)));
        const Check& k = checks[0];
        auto k1_call = [&] { k1::launch(params(k.alpha0, k.bias, k.alpha1, k.beta1, D), s); };
        auto read_clean = [&] { k_read_clean<<<4 * sms, 256, 0, s>>>(static_cast<const uint4*>(clean), clean_bytes / 16, sink); };
        auto fill_d = [&] { CK(cudaMemsetAsync(scratch, 1, nC * 2, s)); };
        auto after_g1 = [&] { lt_gemm1(k.alpha1, k.beta1, Dl, s); };
        std::vector<cudaEvent_t> ev(2 * kBatch);
        for (auto& e : ev) CK(cudaEventCreate(&e));
        const char* names[4] = {"after_clean_read", "after_fill", "after_gemm1", "after_k1"};
        std::vector<double> t[4];
        for (int w = 0; w < warm; ++w) read_clean(), k1_call();
        for (int r = 0; r < reps; ++r)
          for (int v = 0; v < 4; ++v) {
            for (int i = 0; i < kBatch; ++i) {
              if (v == 0) read_clean();
              else if (v == 1) fill_d();
              else if (v == 2) after_g1();
              else k1_call();
              CK(cudaEventRecord(ev[2 * i], s));
              k1_call();
              CK(cudaEventRecord(ev[2 * i + 1], s));
            }
            CK(cudaStreamSynchronize(s));
            for (int i = 0; i < kBatch; ++i) {
              float ms = 0;
              CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
              t[v].push_back(ms);
            }
          }
        CK(cudaGetLastError());
        for (auto& e : ev) CK(cudaEventDestroy(e));
        CK(cudaFree(clean));
        CK(cudaFree(scratch));
        CK(cudaFree(sink));
        std::printf("[lt-launches] K1 between events, back to back (median of %zu): after a clean 256 MiB read %.4f, after a "
                    "%zu-byte fill %.4f, after GEMM1's call %.4f, after K1 %.4f ms\n",
                    t[0].size(), median(t[0]), size_t(nC * 2), median(t[1]), median(t[2]), median(t[3]));
        k1js << ",\n \"k1_start\": {\"what\": \"ms of one K1 launch between two events, medians of " << t[0].size()
           << " in a busy stream, after: a kernel reading 256 MiB of another buffer (clean L2 lines), a memset of fill_bytes "
              "(dirty lines), GEMM1's cuBLASLt call, K1 itself\", \"fill_bytes\": " << nC * 2;
        for (int v = 0; v < 4; ++v)
          k1js << ", \"" << names[v] << "\": " << jnum(median(t[v])) << ", \"" << names[v] << "_p10_p90\": [" << jnum(pct(t[v], 0.1))
             << ", " << jnum(pct(t[v], 0.9)) << "]";
        k1js << "}";
      }
      js << "\n ]" << k1js.str() << ",\n \"nvidia_smi\": " << jstr(smi_now()) << "}\n";
      CK(cudaStreamDestroy(s));
      std::ofstream(lt_launches_path) << js.str();
      std::printf("[lt-launches] wrote %s\n", lt_launches_path.c_str());
    }
    const std::string smi_end = smi_now();
    auto stats = [&](const std::vector<double>& v, const char* name, int launches) {
      std::ostringstream o;
      if (v.empty()) {
        o << "{\"ms_median\": null}";
        return o.str();
      }
      const double md = median(v);
      o << "{\"what\": " << jstr(name) << ", \"launches\": " << launches << ", \"ms_median\": " << jnum(md)
        << ", \"ms_p10_p90\": [" << jnum(pct(v, 0.1)) << ", " << jnum(pct(v, 0.9)) << "], \"ms_min\": "
        << jnum(pct(v, 0.0)) << ", \"tflops\": " << jnum(flops / (md * 1e-3) / 1e12)
        << ", \"gbps_min_bytes\": " << jnum(bytes_min / (md * 1e-3) / 1e9) << "}";
      return o.str();
    };
    // One launch timed alone: its median and spread (the TFLOP/s and bytes of the stats above are both GEMMs').
    auto alone = [&](const std::vector<double>& v, const char* name) {
      std::ostringstream o;
      o << "{\"what\": " << jstr(name) << ", \"launches\": 1, \"ms_median\": " << jnum(median(v)) << ", \"ms_p10_p90\": ["
        << jnum(pct(v, 0.1)) << ", " << jnum(pct(v, 0.9)) << "], \"ms_min\": " << jnum(pct(v, 0.0)) << "}";
      return o.str();
    };
    double mf = NAN, mb = NAN, ml = NAN;
    if (timed) {
      mf = median(tf);
      mb = median(tb);
      std::printf("\n[timing] median of %d interleaved rounds (%d warm-up):\n", reps, warm);
      std::printf("  fused K1             %.4f ms  %6.1f TFLOP/s  %6.0f GB/s (min bytes)  p10-p90 %.4f-%.4f\n", mf,
                  flops / (mf * 1e-3) / 1e12, bytes_min / (mf * 1e-3) / 1e9, pct(tf, 0.1), pct(tf, 0.9));
      std::printf("  cuBLAS 2 GEMMs + epi %.4f ms  %6.1f TFLOP/s  p10-p90 %.4f-%.4f  -> fused speedup %.3f\n", mb,
                  flops / (mb * 1e-3) / 1e12, pct(tb, 0.1), pct(tb, 0.9), mb / mf);
      if (!tl.empty()) {
        ml = median(tl);
        std::printf("  cublasLt 2 GEMMs     %.4f ms  %6.1f TFLOP/s  p10-p90 %.4f-%.4f  -> fused speedup %.3f\n", ml,
                    flops / (ml * 1e-3) / 1e12, pct(tl, 0.1), pct(tl, 0.9), ml / mf);
        std::printf("    GEMM0 alone        %.4f ms  p10-p90 %.4f-%.4f\n", median(tl0), pct(tl0, 0.1), pct(tl0, 0.9));
        std::printf("    GEMM1 alone        %.4f ms  p10-p90 %.4f-%.4f\n", median(tl1), pct(tl1, 0.1), pct(tl1, 0.9));
        std::printf("  cublasLt's choice: GEMM0 %s\n                     GEMM1 %s\n", lt_algo_json(L, 0).c_str(),
                    lt_algo_json(L, 1).c_str());
      }
    }

    // ---- JSON ----
    std::ostringstream js;
    js << "{\n  \"schema\": \"smpipe.k1_b2b.v1\",\n  \"date_utc\": " << jstr(utc_now())
       << ",\n  \"command_line\": " << jstr(cmdline) << ",\n  \"gpu\": {\"name\": " << jstr(prop.name)
       << ", \"sm_count\": " << sms << ", \"cc\": " << jstr(std::to_string(prop.major) + "." + std::to_string(prop.minor))
       << "},\n  \"nvidia_smi\": {\"query\": " << jstr(kSmiFields) << ", \"idle_at_start\": " << jstr(smi_start)
       << ", \"while_k1_runs\": " << jstr(smi_busy) << ", \"at_end\": " << jstr(smi_end) << "},\n  \"kernel\": "
       << jstr("k1 sm80-style back-to-back fused GEMM (kernels.md K1, CUTLASS example 13 smem-accumulator structure, "
               "own code): mma.sync m16n8k16 f16->f32, ldmatrix.x4, cp.async.cg 16 B, 3-stage multistage mainloop for "
               "both GEMMs (GEMM1 streams only B1), D1 = fp16(ReLU(alpha0*acc + bias0)) staged in shared memory as "
               "GEMM1's A operand; epilogue 1 stores from the accumulator fragments; compiled for sm_90a")
       << ",\n  \"layout\": \"A0 MxK0 row-major; B0 N0xK0 row-major (= K0xN0 column-major); bias0 N0; B1 N1xN0 "
          "row-major (= N0xN1 column-major); C1, D MxN1 row-major; fp16 storage, fp32 accumulation and epilogue "
          "math\""
       << ",\n  \"params\": {\"M\": " << M << ", \"N0\": " << N0 << ", \"K0\": " << K0 << ", \"N1\": " << N1
       << ", \"alpha0\": " << jnum(alpha0) << ", \"bias0\": " << jbool(bias_on) << ", \"alpha1\": " << jnum(alpha1)
       << ", \"beta1\": " << jnum(beta1) << ", \"dtype\": \"fp16\", \"accumulator\": \"f32\""
       << ",\n    \"tile0\": [" << k1::BM << ", " << k1::BN0 << ", " << k1::BK << "], \"tile1\": [" << k1::BM << ", "
       << k1::BN1 << ", " << k1::BK << "], \"warp_tile0\": [" << k1::WM0 << ", " << k1::WN0 << ", " << k1::BK
       << "], \"warp_tile1\": [" << k1::WM1 << ", " << k1::WN1 << ", " << k1::BK << "], \"instruction\": [16, 8, 16]"
       << ", \"stages\": " << k1::STAGES << ", \"threads\": " << k1::THREADS << ", \"warps\": " << k1::WARPS
       << ", \"warp_grid0\": [2, 2], \"warp_grid1\": [1, 4], \"grid\": [" << grid << ", 1, 1], \"n1_tiles_per_cta\": "
       << N1 / k1::BN1 << ", \"k_tiles0\": " << K0 / k1::BK << ", \"k_tiles1\": " << k1::KT1
       << ",\n    \"smem_bytes\": " << k1::SMEM_BYTES << ", \"smem\": {\"A0\": [" << k1::STAGES << ", "
       << k1::A0_STAGE_BYTES << "], \"B0\": [" << k1::STAGES << ", " << k1::B0_STAGE_BYTES << "], \"B1\": ["
       << k1::STAGES << ", " << k1::B1_STAGE_BYTES << "], \"D1\": [1, " << k1::D1_BYTES << "]}"
       << ", \"swizzle\": \"k-tiles (64 B rows): 16B chunk (r&1)*4+c of 128B line r/2 at chunk ^ (line&7); D1 (128 B "
          "rows): chunk c ^ (r&7); no padding\""
       << ", \"regs\": " << fa.numRegs << ", \"local_bytes\": " << fa.localSizeBytes << ", \"ctas_per_sm\": "
       << ctas_per_sm << "},\n  \"inputs\": {\"seed\": " << seed
       << ", \"A0\": \"U[-1,1)\", \"B0\": " << jstr("U[-1,1) * 3/sqrt(K0) = " + jnum(sB0))
       << ", \"bias0\": \"U[-0.5,0.5)\", \"B1\": " << jstr("U[-1,1) * sqrt(6/N0) = " + jnum(sB1))
       << ", \"C1\": \"U[-1,1)\", \"relu_kept_d1\": " << jnum(checks[0].kept_d1) << ", \"relu_kept_d\": "
       << jnum(checks[0].kept_d) << ", \"rms_ref\": " << jnum(checks[0].rms_ref) << "}"
       << ",\n  \"reference\": \"cublasGemmEx fp16 in, CUBLAS_COMPUTE_32F, fp32 out for GEMM0; epilogue 0 in fp32 on "
          "the GPU, D1 rounded to fp16 (as the kernel); cublasGemmEx likewise for GEMM1; epilogue 1 in fp32. rel_err = "
          "||D-ref||_F/||ref||_F; max_scaled_err = max |D-ref|/(|ref| + 0.1 rms(ref)); spot_f64 = the same scaled "
          "error over the sampled rows against a CPU float64 chain with D1 rounded to fp16 (spot_f64_exact: no D1 "
          "rounding; spot_f64_cublas_ref: the fp32 cuBLAS reference against the float64 chain)\""
       << ",\n  \"tolerance\": {\"rel_err\": " << jnum(TOL_REL) << ", \"max_scaled_err\": " << jnum(TOL_MAX)
       << ", \"spot_f64\": " << jnum(TOL_SPOT) << ", \"spot_f64_cublas_ref\": " << jnum(TOL_SPOT) << "}"
       << ",\n  \"spot_rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) js << (i ? ", " : "") << rows[i];
    js << "],\n  \"checks\": [";
    for (size_t i = 0; i < checks.size(); ++i) {
      const Check& c = checks[i];
      js << (i ? "," : "") << "\n    {\"name\": " << jstr(c.name) << ", \"alpha0\": " << jnum(c.alpha0)
         << ", \"bias0\": " << jbool(c.bias) << ", \"alpha1\": " << jnum(c.alpha1) << ", \"beta1\": " << jnum(c.beta1)
         << ", \"c1_poisoned_nan\": " << jbool(c.c1_poisoned) << ",\n     \"rel_err\": " << jnum(c.rel)
         << ", \"max_scaled_err\": " << jnum(c.max_scaled) << ", \"max_abs_err\": " << jnum(c.max_abs)
         << ", \"rms_ref\": " << jnum(c.rms_ref) << ", \"nonfinite\": " << c.nonfinite
         << ", \"relu_kept_d1\": " << jnum(c.kept_d1) << ", \"relu_kept_d\": " << jnum(c.kept_d)
         << ", \"spot_f64\": " << jnum(c.spot) << ", \"spot_f64_exact\": " << jnum(c.spot_exact)
         << ", \"spot_f64_cublas_ref\": " << jnum(c.spot_ref);
      if (i == 0)
        js << ",\n     \"baseline\": {\"rel_err\": " << jnum(c.base_rel) << ", \"max_scaled_err\": "
           << jnum(c.base_max_scaled) << ", \"nonfinite\": " << c.base_nonfinite << ", \"spot_f64\": "
           << jnum(c.base_spot) << "}, \"cublaslt\": "
           << (L.ok ? "{\"rel_err\": " + jnum(c.lt_rel) + ", \"max_scaled_err\": " + jnum(c.lt_max_scaled) +
                          ", \"nonfinite\": " + std::to_string(c.lt_nonfinite) + ", \"spot_f64\": " + jnum(c.lt_spot) + "}"
                    : std::string("null"));
      js << ", \"ok\": " << jbool(c.ok) << "}";
    }
    js << "\n  ],\n  \"repeat_bitwise_same\": " << jbool(repeat_ok)
       << ",\n  \"flops\": {\"gemm0\": " << jnum(flops0) << ", \"gemm1\": " << jnum(flops1) << ", \"total\": "
       << jnum(flops) << "}, \"bytes_min\": " << jnum(bytes_min)
       << ",\n  \"timing\": {\"method\": "
       << jstr("CUDA events around each launch group on stream 0, " + std::to_string(warm) +
               " warm-up rounds, then " + std::to_string(reps) +
               " rounds; each round runs fused, baseline" + (L.ok ? ", cublaslt" : "") +
               " back to back (interleaved: same clock/power state); medians; main configuration; TFLOP/s from the "
               "useful flops of both GEMMs")
       << ",\n    \"fused\": " << stats(tf, "k1_b2b_kernel (one launch)", 1)
       << ",\n    \"baseline\": "
       << stats(tb, "cublasGemmEx GEMM0 fp16 out -> bias+ReLU kernel (D1 to global) -> cublasGemmEx GEMM1 fp16 out -> "
                    "beta1*C1+ReLU kernel", 4)
       << ",\n    \"cublaslt\": "
       << (L.ok ? stats(tl, "cublasLtMatmul GEMM0 epilogue RELU_BIAS -> cublasLtMatmul GEMM1 epilogue RELU, C=C1", 2)
                : "{\"unavailable\": " + jstr(L.why) + "}");
    if (L.ok && timed)
      js << ",\n    \"cublaslt_gemm0\": " << alone(tl0, "cublasLtMatmul GEMM0 epilogue RELU_BIAS alone (same rounds)")
         << ",\n    \"cublaslt_gemm1\": " << alone(tl1, "cublasLtMatmul GEMM1 epilogue RELU, C=C1, alone (same rounds)");
    if (L.ok) js << ",\n    \"cublaslt_algo\": {\"gemm0\": " << lt_algo_json(L, 0) << ", \"gemm1\": " << lt_algo_json(L, 1) << "}";
    js << ",\n    \"speedup_fused_vs_baseline\": " << jnum(mb / mf) << ", \"speedup_fused_vs_cublaslt\": "
       << jnum(ml / mf) << "},\n  \"all_ok\": " << jbool(all_ok) << "\n}\n";
    {
      FILE* f = std::fopen(out_path.c_str(), "w");
      if (!f) throw std::runtime_error("cannot write " + out_path);
      std::fputs(js.str().c_str(), f);
      std::fclose(f);
    }
    std::printf("wrote %s (%s)\n", out_path.c_str(), all_ok ? "all checks passed" : "SOME CHECKS FAILED");

    L.destroy();
    CKB(cublasDestroy(h));
    for (void* p : {(void*)A0, (void*)B0, (void*)bias, (void*)B1, (void*)C1, (void*)D, (void*)Dkeep, (void*)T0,
                    (void*)Db, (void*)T1, (void*)Dl, (void*)D1ref, (void*)R0, (void*)R1, (void*)d_acc, (void*)d_cnt,
                    (void*)d_mx, (void*)d_kept})
      CK(cudaFree(p));
    return all_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
