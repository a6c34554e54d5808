// Driver for the K3 sm_100a block-scaled NVFP4 GEMM (k3_gemm.cuh).  NEVER RUN: no sm_100 GPU is available to
// this project; this program is written to be run on a B200-class GPU (compute capability 10.0) as it is.
//
//   k3_gemm [--shapes 2048x2048x2048,...] [--mode exact|random|both] [--check-rows N] [--reps N] [--seed S]
//           [--out FILE]
//
// For every shape and input mode it runs two configurations: alpha 1, beta 0 (C void: the 6-stage kernel
// without C loads) and alpha 0.5, beta 0.75 (the 5-stage kernel with bf16 C loaded by the epilogue-load
// warp).  Each run: random NVFP4 inputs made on the host, D and SFD poisoned with 0xFF (SFD 0xFF is e4m3 NaN,
// which the quantisation never produces), one checked launch, then the result compared with the CPU reference
// (k3_reference.h) on --check-rows rows (default 128 sampled rows including the first and last; 0 = all),
// then --reps timed launches (CUDA events, median).
//   mode exact:  scale factors in {0.5, 1, 2}: every fp32 partial sum of the tensor core is exact, so D and
//                SFD must equal the reference bit for bit (any mismatch fails).
//   mode random: scale factors 2^-3 .. 2^3 (random ue4m3 codes 0x20..0x50): the tensor core's fp32
//                accumulation order differs from the reference's double sum, so a re-quantised code may differ
//                by one step where a value sits on a rounding boundary; pass = fewer than 0.1 % of the elements
//                differ, every element within one e2m1 step (2 x the larger of the two scales), every scale
//                factor within one ue4m3 code.
// Exit status: 0 all passed, 1 a check failed, 2 usage or CUDA error, 77 no sm_100 device (the message says so).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "host_common.h"
#include "k3_gemm.cuh"
#include "k3_reference.h"

namespace {

using namespace khost;

// ---------------------------------------------------------------------------------------------
// Tensor maps (cuTensorMapEncodeTiled through cudaGetDriverEntryPointByVersion: no -lcuda)
// ---------------------------------------------------------------------------------------------
// 2-D row-major tensor [rows][cols] of `type` (element size es bytes), box [box_rows][box_cols].
CUtensorMap make_map(const void* base, CUtensorMapDataType type, uint64_t es, uint64_t rows, uint64_t cols,
                     uint32_t box_rows, uint32_t box_cols, CUtensorMapSwizzle swz) {
  CUtensorMap m;
  cuuint64_t dims[2] = {cols, rows};
  cuuint64_t strides[1] = {cols * es};
  cuuint32_t box[2] = {box_cols, box_rows};
  cuuint32_t estr[2] = {1, 1};
  CUresult r = encoder()(&m, type, 2, const_cast<void*>(base), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                         swz, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw std::runtime_error("cuTensorMapEncodeTiled failed: " + std::to_string((int)r));
  return m;
}
// Scale factors in the 128x4-tiled layout viewed as rows of 128 bytes (4 rows per 512-byte block).
CUtensorMap make_sf_map(const void* base, uint64_t rows, uint64_t sf_cols, uint32_t box_rows) {
  return make_map(base, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, rows / 128 * (sf_cols / 4) * 4, 128, box_rows, 128,
                  CU_TENSOR_MAP_SWIZZLE_NONE);
}

struct Maps {
  CUtensorMap A, B, SFA, SFB, C, D, SFD;
};

template <int ST, bool WC>
void launch(const Maps& m, const k3::Params& p, int grid, cudaStream_t s) {
  k3::k3_gemm_kernel<ST, WC><<<grid, k3::NUM_THREADS, k3::Cfg<ST, WC>::SMEM_BYTES, s>>>(m.A, m.B, m.SFA, m.SFB, m.C,
                                                                                       m.D, m.SFD, p);
}
constexpr int kStagesNoC = 6, kStagesC = 5;  // what fits in 227 KB of shared memory (k3::Cfg static_asserts)

uint16_t f2bf(float f) {
  __nv_bfloat16 b = __float2bfloat16(f);
  uint16_t u;
  std::memcpy(&u, &b, 2);
  return u;
}

// K3's tiles must divide the problem (khost::parse_shapes reads the list).
std::vector<Shape> parse_k3_shapes(const std::string& s) {
  std::vector<Shape> v = parse_shapes(s);
  for (const Shape& sh : v)
    if (sh.M <= 0 || sh.N <= 0 || sh.K <= 0 || sh.M % k3::BM || sh.N % k3::BN || sh.K % k3::BK)
      throw std::runtime_error("shape " + std::to_string(sh.M) + "x" + std::to_string(sh.N) + "x" + std::to_string(sh.K) +
                               ": M, N must be multiples of 128 and K of 256");
  return v;
}

// Comparison of checked rows of D / SFD with the reference.
struct Cmp {
  size_t elems = 0, code_diff = 0, bad_elems = 0, sf = 0, sf_diff = 0, bad_sf = 0;
  std::string first_bad;
};

}  // namespace

int main(int argc, char** argv) {
  std::string shapes_arg = "2048x2048x2048", mode_arg = "both", out_path;
  int check_rows = 128, reps = 20;
  uint64_t seed = 20261122ull;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value for " + a);
      return argv[++i];
    };
    try {
      if (a == "--shapes") shapes_arg = next();
      else if (a == "--mode") mode_arg = next();
      else if (a == "--check-rows") check_rows = std::atoi(next().c_str());
      else if (a == "--reps") reps = std::atoi(next().c_str());
      else if (a == "--seed") seed = std::strtoull(next().c_str(), nullptr, 0);
      else if (a == "--out") out_path = next();
      else {
        std::fprintf(stderr, "unknown argument %s\n", a.c_str());
        return 2;
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
  }
  if (mode_arg != "exact" && mode_arg != "random" && mode_arg != "both") {
    std::fprintf(stderr, "--mode must be exact, random or both\n");
    return 2;
  }

  // ---------------- device ----------------
  int ndev = 0;
  const cudaError_t de = cudaGetDeviceCount(&ndev);
  if (de != cudaSuccess || ndev == 0) {
    std::printf("k3_gemm: no sm_100 device (no CUDA device: %s)\n",
                de != cudaSuccess ? cudaGetErrorString(de) : "0 devices");
    return 77;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 10 || prop.minor != 0) {
    std::printf("k3_gemm: no sm_100 device (device 0 is %s, compute capability %d.%d; this binary holds sm_100a "
                "code only)\n",
                prop.name, prop.major, prop.minor);
    return 77;
  }
  std::printf("device: %s, %d SMs, cc %d.%d\n", prop.name, prop.multiProcessorCount, prop.major, prop.minor);

  bool all_ok = true;
  std::ostringstream js;
  js << "{\n  \"device\": \"" << prop.name << "\",\n  \"runs\": [";
  bool first_run = true;
  try {
    CK(cudaFuncSetAttribute(k3::k3_gemm_kernel<kStagesNoC, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            k3::Cfg<kStagesNoC, false>::SMEM_BYTES));
    CK(cudaFuncSetAttribute(k3::k3_gemm_kernel<kStagesC, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            k3::Cfg<kStagesC, true>::SMEM_BYTES));
    std::mt19937_64 rng(seed);
    std::vector<std::string> modes;
    if (mode_arg != "random") modes.push_back("exact");
    if (mode_arg != "exact") modes.push_back("random");

    for (const Shape& sh : parse_k3_shapes(shapes_arg)) {
      const int M = sh.M, N = sh.N, K = sh.K;
      for (const std::string& mode : modes) {
        // ---------------- inputs ----------------
        k3ref::Nvfp4 A = k3ref::make_nvfp4(M, K), B = k3ref::make_nvfp4(N, K);
        std::uniform_int_distribution<int> code(0, 15), sc_exact(0, 2), sc_rand(0x20, 0x50);
        for (k3ref::Nvfp4* mat : {&A, &B}) {
          for (auto& byte : mat->q) byte = static_cast<uint8_t>(code(rng) | code(rng) << 4);
          for (auto& s : mat->sf)
            s = static_cast<uint8_t>(mode == "exact" ? 0x30 + 8 * sc_exact(rng) : sc_rand(rng));
        }
        std::vector<uint16_t> Cbf(static_cast<size_t>(M) * N);
        std::vector<float> Cf(Cbf.size());
        std::uniform_real_distribution<float> cu(-4.0f, 4.0f);
        for (size_t i = 0; i < Cbf.size(); ++i) {
          Cbf[i] = f2bf(cu(rng));
          Cf[i] = bf2f(Cbf[i]);
        }
        const std::vector<uint8_t> sfa_t = k3ref::to_tiled(A.sf, M, K / 16), sfb_t = k3ref::to_tiled(B.sf, N, K / 16);

        uint8_t *dA, *dB, *dSFA, *dSFB, *dD, *dSFD;
        uint16_t* dC;
        CK(cudaMalloc(&dA, A.q.size()));
        CK(cudaMalloc(&dB, B.q.size()));
        CK(cudaMalloc(&dSFA, sfa_t.size()));
        CK(cudaMalloc(&dSFB, sfb_t.size()));
        CK(cudaMalloc(&dC, Cbf.size() * 2));
        CK(cudaMalloc(&dD, static_cast<size_t>(M) * N / 2));
        CK(cudaMalloc(&dSFD, static_cast<size_t>(M) * N / 16));
        CK(cudaMemcpy(dA, A.q.data(), A.q.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dB, B.q.data(), B.q.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dSFA, sfa_t.data(), sfa_t.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dSFB, sfb_t.data(), sfb_t.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dC, Cbf.data(), Cbf.size() * 2, cudaMemcpyHostToDevice));

        Maps maps;
        maps.A = make_map(dA, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, M, K / 2, k3::BM, k3::BK / 2, CU_TENSOR_MAP_SWIZZLE_128B);
        maps.B = make_map(dB, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, N, K / 2, k3::BN, k3::BK / 2, CU_TENSOR_MAP_SWIZZLE_128B);
        maps.SFA = make_sf_map(dSFA, M, K / 16, k3::KBLK * 4);
        maps.SFB = make_sf_map(dSFB, N, K / 16, k3::KBLK * 4);
        maps.C = make_map(dC, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, M, N, k3::BM, k3::EPI_N, CU_TENSOR_MAP_SWIZZLE_64B);
        maps.D = make_map(dD, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, M, N / 2, k3::BM, k3::EPI_N / 2,
                          CU_TENSOR_MAP_SWIZZLE_NONE);
        maps.SFD = make_sf_map(dSFD, M, N / 16, (k3::BN / 64) * 4);

        // Rows to check: the first, the last, and random ones (or all).
        std::vector<int> rows;
        if (check_rows <= 0 || check_rows >= M) {
          for (int m = 0; m < M; ++m) rows.push_back(m);
        } else {
          rows = {0, M - 1};
          std::uniform_int_distribution<int> rm(1, M - 2);
          while (static_cast<int>(rows.size()) < check_rows) rows.push_back(rm(rng));
          std::sort(rows.begin(), rows.end());
          rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        }
        const std::vector<float> bdec = k3ref::decode(B);
        std::vector<float> acc_rows(rows.size() * static_cast<size_t>(N));  // reference accumulators of the rows
        {
          const unsigned nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
          std::vector<std::thread> th;
          for (unsigned w = 0; w < nt; ++w)
            th.emplace_back([&, w] {
              std::vector<float> arow(K);
              for (size_t i = w; i < rows.size(); i += nt) {
                for (int k = 0; k < K; ++k) arow[k] = A.value(rows[i], k);
                k3ref::gemm_acc_row(arow.data(), bdec.data(), N, K, acc_rows.data() + i * N);
              }
            });
          for (auto& t : th) t.join();
        }

        const struct { float alpha, beta; } configs[] = {{1.0f, 0.0f}, {0.5f, 0.75f}};
        for (const auto& cfg : configs) {
          const bool with_c = cfg.beta != 0.0f;
          const k3::Params p{M, N, K, cfg.alpha, cfg.beta};
          const int grid = (M / k3::BM) * (N / k3::BN);  // one CTA per tile; CLC makes the survivors persistent
          auto run = [&]() {
            if (with_c) launch<kStagesC, true>(maps, p, grid, nullptr);
            else launch<kStagesNoC, false>(maps, p, grid, nullptr);
          };
          // ---------------- checked launch ----------------
          CK(cudaMemset(dD, 0xFF, static_cast<size_t>(M) * N / 2));
          CK(cudaMemset(dSFD, 0xFF, static_cast<size_t>(M) * N / 16));
          run();
          CK(cudaGetLastError());
          CK(cudaDeviceSynchronize());
          std::vector<uint8_t> Dg(static_cast<size_t>(M) * N / 2), SFDt(static_cast<size_t>(M) * N / 16);
          CK(cudaMemcpy(Dg.data(), dD, Dg.size(), cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(SFDt.data(), dSFD, SFDt.size(), cudaMemcpyDeviceToHost));
          const std::vector<uint8_t> SFDg = k3ref::from_tiled(SFDt, M, N / 16);

          Cmp cmp;
          std::vector<uint8_t> dref(N / 2), sref(N / 16);
          for (size_t i = 0; i < rows.size(); ++i) {
            const int m = rows[i];
            k3ref::epilogue_row(acc_rows.data() + i * N, with_c ? Cf.data() + static_cast<size_t>(m) * N : nullptr,
                                cfg.alpha, cfg.beta, N, dref.data(), sref.data());
            for (int j = 0; j < N / 16; ++j) {
              const uint8_t sg = SFDg[static_cast<size_t>(m) * (N / 16) + j], sr = sref[j];
              ++cmp.sf;
              if (sg != sr) ++cmp.sf_diff;
              const bool sf_ok = sg != 0xFF && sg <= 0x7E && std::abs(int(sg) - int(sr)) <= 1;
              if (!sf_ok) ++cmp.bad_sf;
              const float Sg = sg <= 0x7E ? k3::ue4m3_to_float(sg) : NAN, Sr = k3::ue4m3_to_float(sr);
              for (int e = 0; e < 16; ++e) {
                const int n = 16 * j + e;
                const uint8_t bg = Dg[static_cast<size_t>(m) * (N / 2) + n / 2], br = dref[n / 2];
                const uint8_t qg = (n & 1) ? bg >> 4 : bg & 0xF, qr = (n & 1) ? br >> 4 : br & 0xF;
                ++cmp.elems;
                if (qg != qr) ++cmp.code_diff;
                const float vg = k3::e2m1_to_float(qg) * Sg, vr = k3::e2m1_to_float(qr) * Sr;
                const bool ok = std::fabs(vg - vr) <= 2.0f * std::max(Sg, Sr);  // false for NaN
                if (!ok) ++cmp.bad_elems;
                if ((!ok || !sf_ok || (mode == "exact" && (qg != qr || sg != sr))) && cmp.first_bad.empty()) {
                  char b[256];
                  std::snprintf(b, sizeof b, "D[%d][%d]: gpu code %d scale 0x%02x, reference code %d scale 0x%02x", m,
                                n, qg, sg, qr, sr);
                  cmp.first_bad = b;
                }
              }
            }
          }
          const bool ok = mode == "exact"
                              ? (cmp.code_diff == 0 && cmp.sf_diff == 0)
                              : (cmp.bad_elems == 0 && cmp.bad_sf == 0 && cmp.code_diff * 1000 <= cmp.elems);
          all_ok = all_ok && ok;

          // ---------------- timing ----------------
          std::vector<double> ms;
          cudaEvent_t e0, e1;
          CK(cudaEventCreate(&e0));
          CK(cudaEventCreate(&e1));
          for (int w = 0; w < 3; ++w) run();
          for (int r = 0; r < reps; ++r) {
            CK(cudaEventRecord(e0));
            run();
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float t = 0;
            CK(cudaEventElapsedTime(&t, e0, e1));
            ms.push_back(t);
          }
          CK(cudaGetLastError());
          CK(cudaEventDestroy(e0));
          CK(cudaEventDestroy(e1));
          const double med = ms.empty() ? NAN : median(ms);
          const double tflops = 2.0 * M * N * K / (med * 1e-3) / 1e12;

          std::printf("%dx%dx%d %-6s alpha %.2f beta %.2f (%d stages%s): %s  rows checked %zu, element codes differing "
                      "%zu of %zu, scale factors differing %zu of %zu, out of tolerance %zu + %zu;  %.4f ms, %.1f "
                      "TFLOP/s\n",
                      M, N, K, mode.c_str(), cfg.alpha, cfg.beta, with_c ? kStagesC : kStagesNoC, with_c ? ", C" : "",
                      ok ? "PASS" : "FAIL", rows.size(), cmp.code_diff, cmp.elems, cmp.sf_diff, cmp.sf,
                      cmp.bad_elems, cmp.bad_sf, med, tflops);
          if (!cmp.first_bad.empty()) std::printf("  first mismatch: %s\n", cmp.first_bad.c_str());
          js << (first_run ? "\n" : ",\n") << "    {\"M\": " << M << ", \"N\": " << N << ", \"K\": " << K
             << ", \"mode\": \"" << mode << "\", \"alpha\": " << cfg.alpha << ", \"beta\": " << cfg.beta
             << ", \"stages\": " << (with_c ? kStagesC : kStagesNoC) << ", \"ok\": " << (ok ? "true" : "false")
             << ", \"rows_checked\": " << rows.size() << ", \"code_diff\": " << cmp.code_diff
             << ", \"elems\": " << cmp.elems << ", \"sf_diff\": " << cmp.sf_diff << ", \"ms\": " << med
             << ", \"tflops\": " << tflops << "}";
          first_run = false;
        }
        for (void* ptr : {(void*)dA, (void*)dB, (void*)dSFA, (void*)dSFB, (void*)dC, (void*)dD, (void*)dSFD})
          CK(cudaFree(ptr));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "k3_gemm: %s\n", e.what());
    return 2;
  }
  js << "\n  ]\n}\n";
  if (!out_path.empty()) {
    FILE* f = std::fopen(out_path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", out_path.c_str());
      return 2;
    }
    std::fputs(js.str().c_str(), f);
    std::fclose(f);
  }
  std::printf("%s\n", all_ok ? "all checks passed" : "SOME CHECKS FAILED");
  return all_ok ? 0 : 1;
}
