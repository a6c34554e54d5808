// K3 CPU reference (host only): the block-scaled NVFP4 GEMM D = quantize(alpha * A x B^T + beta * C) that the
// sm_100a kernel (k3_gemm.cuh) computes, written plainly.  Used by the kernel's driver (k3_main.cu) to check the
// GPU result and by the CI test (tests/k3_reference_test.cpp), which checks this file against hand-computed
// values and an independent exact integer computation.  The element formats and the block quantisation come
// from k3_nvfp4.h (NVIDIA's cuda_fp4.h / cuda_fp8.h conversions), the same code the kernel's epilogue runs.
//
// Problem convention (the "TN" GEMM, as K2): A is M x K, B is N x K, both K-contiguous NVFP4 (e2m1 elements, one
// ue4m3 scale factor per 16 consecutive K); C is M x N (bf16 in the kernel, passed here as its float values);
// D is M x N NVFP4 with one ue4m3 scale factor per 16 consecutive N.
//   acc[m][n] = sum_k (a[m][k] * sfa[m][k/16]) * (b[n][k] * sfb[n][k/16])      (double, rounded to float once)
//   D[m][n]   = quantize16 over n of fmaf(alpha, acc[m][n], beta * C[m][n])      (k3::quantize16)
// The tensor core accumulates in fp32 in an order we do not know: when every partial sum is exactly
// representable in fp32 (the driver's "exact" inputs) the kernel must match this bit for bit; otherwise the
// accumulators differ by fp32 rounding and a few re-quantised codes may differ by one step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "k3_nvfp4.h"

namespace k3ref {

// rows x cols NVFP4 values: packed e2m1 codes row-major (cols / 2 bytes a row, element 2j in the low nibble)
// and scale factors row-major [rows][cols / 16] (the plain layout; to_tiled() gives the kernel's layout).
struct Nvfp4 {
  int rows = 0, cols = 0;
  std::vector<uint8_t> q;
  std::vector<uint8_t> sf;

  uint8_t code(int r, int c) const {
    const uint8_t b = q[static_cast<size_t>(r) * (cols / 2) + c / 2];
    return (c & 1) ? static_cast<uint8_t>(b >> 4) : static_cast<uint8_t>(b & 0xF);
  }
  void set_code(int r, int c, uint8_t v) {
    uint8_t& b = q[static_cast<size_t>(r) * (cols / 2) + c / 2];
    b = (c & 1) ? static_cast<uint8_t>((b & 0x0F) | (v & 0xF) << 4) : static_cast<uint8_t>((b & 0xF0) | (v & 0xF));
  }
  uint8_t scale(int r, int c) const { return sf[static_cast<size_t>(r) * (cols / k3::kSfVec) + c / k3::kSfVec]; }
  uint8_t& scale_ref(int r, int sf_col) { return sf[static_cast<size_t>(r) * (cols / k3::kSfVec) + sf_col]; }
  // element value: an e2m1 value (2 significant bits) times a ue4m3 scale (4 bits): exact in float.
  float value(int r, int c) const { return k3::e2m1_to_float(code(r, c)) * k3::ue4m3_to_float(scale(r, c)); }
};

inline Nvfp4 make_nvfp4(int rows, int cols) {
  if (rows <= 0 || cols <= 0 || cols % k3::kSfVec != 0)
    throw std::invalid_argument("NVFP4 matrix: cols must be a positive multiple of 16, got " + std::to_string(cols));
  Nvfp4 m;
  m.rows = rows;
  m.cols = cols;
  m.q.assign(static_cast<size_t>(rows) * cols / 2, 0);
  m.sf.assign(static_cast<size_t>(rows) * cols / k3::kSfVec, 0);
  return m;
}

// All values of a matrix as floats, row-major (exact).
inline std::vector<float> decode(const Nvfp4& m) {
  std::vector<float> v(static_cast<size_t>(m.rows) * m.cols);
  for (int r = 0; r < m.rows; ++r)
    for (int c = 0; c < m.cols; ++c) v[static_cast<size_t>(r) * m.cols + c] = m.value(r, c);
  return v;
}

// One row of accumulators: acc[n] = sum_k a_row[k] * b_dec[n][k], in double, rounded to float once.
inline void gemm_acc_row(const float* a_row, const float* b_dec, int N, int K, float* acc) {
  for (int n = 0; n < N; ++n) {
    const float* b = b_dec + static_cast<size_t>(n) * K;
    double s = 0.0;
    for (int k = 0; k < K; ++k) s += static_cast<double>(a_row[k]) * static_cast<double>(b[k]);
    acc[n] = static_cast<float>(s);
  }
}

// M x N accumulators of A (M x K) times B^T (B is N x K).
inline std::vector<float> gemm_acc(const Nvfp4& A, const Nvfp4& B) {
  if (A.cols != B.cols) throw std::invalid_argument("gemm_acc: A and B need the same K");
  const std::vector<float> a = decode(A), b = decode(B);
  std::vector<float> acc(static_cast<size_t>(A.rows) * B.rows);
  for (int m = 0; m < A.rows; ++m)
    gemm_acc_row(a.data() + static_cast<size_t>(m) * A.cols, b.data(), B.rows, A.cols,
                 acc.data() + static_cast<size_t>(m) * B.rows);
  return acc;
}

// The epilogue of one output row: v[n] = fmaf(alpha, acc[n], beta * c[n]) (c == nullptr: C is void, c = 0),
// quantised 16 columns at a time.  d: N / 2 packed bytes; sfd: N / 16 scale-factor codes.
inline void epilogue_row(const float* acc, const float* c, float alpha, float beta, int N, uint8_t* d, uint8_t* sfd) {
  if (N % k3::kSfVec != 0) throw std::invalid_argument("epilogue_row: N must be a multiple of 16");
  for (int j = 0; j < N / k3::kSfVec; ++j) {
    float v[k3::kSfVec];
    for (int i = 0; i < k3::kSfVec; ++i) {
      const int n = j * k3::kSfVec + i;
      v[i] = k3::epilogue_value(alpha, acc[n], beta, c ? c[n] : 0.0f);
    }
    uint32_t lo, hi;
    sfd[j] = k3::quantize16(v, lo, hi);
    for (int b = 0; b < 4; ++b) {
      d[j * 8 + b] = static_cast<uint8_t>(lo >> (8 * b));
      d[j * 8 + 4 + b] = static_cast<uint8_t>(hi >> (8 * b));
    }
  }
}

// The whole reference: D (M x N NVFP4) = quantize(alpha * A x B^T + beta * C).  C: M x N floats or nullptr.
inline Nvfp4 reference_gemm(const Nvfp4& A, const Nvfp4& B, const float* C, float alpha, float beta) {
  const std::vector<float> acc = gemm_acc(A, B);
  Nvfp4 D = make_nvfp4(A.rows, B.rows);
  const int N = B.rows;
  for (int m = 0; m < A.rows; ++m)
    epilogue_row(acc.data() + static_cast<size_t>(m) * N, C ? C + static_cast<size_t>(m) * N : nullptr, alpha, beta,
                 N, D.q.data() + static_cast<size_t>(m) * (N / 2), D.sf.data() + static_cast<size_t>(m) * (N / 16));
  return D;
}

// Row-major [rows][sf_cols] scale factors <-> the 128x4-tiled layout (k3::sf_tiled_offset).
inline void check_tiled_shape(int rows, int sf_cols) {
  if (rows <= 0 || rows % 128 != 0 || sf_cols <= 0 || sf_cols % 4 != 0)
    throw std::invalid_argument("tiled scale factors need rows % 128 == 0 and sf_cols % 4 == 0, got " +
                                std::to_string(rows) + " x " + std::to_string(sf_cols));
}
inline std::vector<uint8_t> to_tiled(const std::vector<uint8_t>& sf, int rows, int sf_cols) {
  check_tiled_shape(rows, sf_cols);
  std::vector<uint8_t> t(sf.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < sf_cols; ++c)
      t[k3::sf_tiled_offset(r, c, sf_cols)] = sf[static_cast<size_t>(r) * sf_cols + c];
  return t;
}
inline std::vector<uint8_t> from_tiled(const std::vector<uint8_t>& t, int rows, int sf_cols) {
  check_tiled_shape(rows, sf_cols);
  std::vector<uint8_t> sf(t.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < sf_cols; ++c)
      sf[static_cast<size_t>(r) * sf_cols + c] = t[k3::sf_tiled_offset(r, c, sf_cols)];
  return sf;
}

}  // namespace k3ref
