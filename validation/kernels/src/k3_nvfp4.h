// K3: the NVFP4 number format and the block quantisation, shared by the sm_100a kernel (k3_gemm.cuh, device
// code) and the CPU reference (k3_reference.h, host code).  One definition for both, so that the reference the
// CI tests is the arithmetic the kernel's epilogue runs.  Compiles with nvcc (host + device) and with a plain
// host C++ compiler that has the CUDA include directory (cuda_fp4.h / cuda_fp8.h have host paths).
//
// The element conversions are NVIDIA's (cuda_fp4.h, cuda_fp8.h of CUDA 13.0), not our own bit tricks:
//   e2m1  (FP4, sign + 2 exponent + 1 mantissa bit): values {0, 0.5, 1, 1.5, 2, 3, 4, 6} and their negatives;
//         __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest): round to nearest, ties to even, saturating
//         at +-6 (NaN -> +6).  On sm_100a this is cvt.rn.satfinite.e2m1x2.f32; on the host, software.
//   ue4m3 (the NVFP4 scale factor: e4m3 with the sign bit 0): 2^(e-7) * (1 + m/8), e = 1..15 (e = 15, m = 7 is
//         NaN), subnormals m * 2^-9; max 448.  __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3).
//
// NVFP4 block quantisation of 16 consecutive values v[0..15] (along K for A and B, along N for D):
//   scale code  s = ue4m3(amax / 6)     (amax = max |v|; IEEE division; RNE; saturates at 448)
//   element i   q = e2m1(v[i] / S)      (S = the float value of s; IEEE division; RNE; saturates at +-6)
//   S == 0 (amax / 6 rounds to 0)  ->  every q = 0 (+0).
// There is no per-tensor global scale here (CUTLASS's NVFP4 epilogues can take one; K3 does not).
//
// Memory layouts used by K3 (all host <-> device):
//   packed e2m1: two elements per byte, element 2j in the LOW nibble, 2j+1 in the high nibble (the
//     __nv_fp4x2 convention: cvt.rn.satfinite.e2m1x2.f32 d, hi, lo); rows contiguous (K-major for A and B,
//     N-major for D).  The tensor core is assumed to read K-major FP4 smem operands in the same nibble
//     order (PTX 9.7.16.10.4.6: "two 4-bit elements in a 8-bit container, with no padding"; the order is
//     not spelled out there: unverified without an sm_100 GPU).
//   scale factors in global memory: the 128x4-tiled layout (cuBLAS "1D block scaling factors layout"):
//     512-byte blocks, each 128 rows x 4 scale factors (= 64 elements along K), blocks row-major over
//     (row / 128, sf_col / 4); inside a block, byte (row % 32) * 16 + (row % 128 / 32) * 4 + sf_col % 4.
//     A block is 32 x 16-byte rows: exactly the source of one tcgen05.cp.cta_group::1.32x128b.warpx4,
//     which puts row r % 32 of the block in TMEM lane r % 32 of every 32-lane quarter (4 columns).
#pragma once

#include <cuda_fp4.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#if defined(__USE_FAST_MATH__)
#error "k3_nvfp4.h: the NVFP4 quantisation must use IEEE division (no --use_fast_math) to match the CPU reference"
#endif

#if defined(__CUDACC__)
#define K3_HD __host__ __device__ __forceinline__
#define K3_UNROLL _Pragma("unroll")
#else
#define K3_HD inline
#define K3_UNROLL
#endif

namespace k3 {

constexpr int kSfVec = 16;          // NVFP4: one scale factor per 16 elements
constexpr float kE2m1Max = 6.0f;    // largest e2m1 magnitude
constexpr float kUe4m3Max = 448.0f; // largest finite (u)e4m3

// ---- element conversions (NVIDIA's definitions) ---------------------------------------------------------
K3_HD float e2m1_to_float(uint8_t code) {
  const __half_raw h = __nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(code & 0xFu), __NV_E2M1);
  return __half2float(__half(h));
}
K3_HD uint8_t float_to_e2m1(float x) {
  return static_cast<uint8_t>(__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) & 0xFu);
}
// ue4m3 = e4m3 with sign 0.  Codes 0x7F (NaN) and 0x80.. are never produced by float_to_ue4m3 for x >= 0.
K3_HD float ue4m3_to_float(uint8_t code) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(code), __NV_E4M3);
  return __half2float(__half(h));
}
K3_HD uint8_t float_to_ue4m3(float x) {  // x >= 0 (an amax / 6)
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
}

// ---- block quantisation ----------------------------------------------------------------------------------
// Quantises v[0..15]; returns the scale-factor code; lo holds elements 0..7 (element i in bits 4i..4i+3),
// hi elements 8..15: stored little-endian they are the 8 packed bytes of the block.
K3_HD uint8_t quantize16(const float* v, uint32_t& lo, uint32_t& hi) {
  float amax = 0.0f;
K3_UNROLL
  for (int i = 0; i < kSfVec; ++i) amax = fmaxf(amax, fabsf(v[i]));
  const uint8_t s = float_to_ue4m3(amax / kE2m1Max);
  lo = 0u;
  hi = 0u;
  if (s == 0) return 0;  // the scale rounds to zero: the block is all (+)zeros
  const float S = ue4m3_to_float(s);
K3_UNROLL
  for (int i = 0; i < 8; ++i) {
    lo |= static_cast<uint32_t>(float_to_e2m1(v[i] / S)) << (4 * i);
    hi |= static_cast<uint32_t>(float_to_e2m1(v[8 + i] / S)) << (4 * i);
  }
  return s;
}

// The epilogue's per-element value before quantisation: D = alpha * acc + beta * C, one fused multiply-add
// (alpha * acc + (beta * C rounded)), written out so that nvcc (which contracts a*b + c*d on its own) and a
// host compiler (which may not) compute the same float.
K3_HD float epilogue_value(float alpha, float acc, float beta, float c) { return fmaf(alpha, acc, beta * c); }

// ---- scale-factor layout -----------------------------------------------------------------------------------
// Byte offset of scale factor (row, sf_col) in the 128x4-tiled layout of a matrix with sf_cols scale factors
// per row (sf_cols a multiple of 4, rows a multiple of 128).
K3_HD size_t sf_tiled_offset(size_t row, size_t sf_col, size_t sf_cols) {
  const size_t block = (row / 128) * (sf_cols / 4) + sf_col / 4;
  return block * 512 + (row % 32) * 16 + (row % 128 / 32) * 4 + sf_col % 4;
}

}  // namespace k3
