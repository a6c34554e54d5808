// TMA tensor-map helpers shared by the benchmark files (bench_tma.cu, bench_hierarchy.cu): the encoder
// (cuTensorMapEncodeTiled through cudaGetDriverEntryPointByVersion, no -lcuda), the bf16 2D tensor map of
// 128 B rows (64 columns, 128B swizzle by default), the fill pattern and its swizzle-aware smem lookup.
#pragma once

#include <cuda.h>  // CUtensorMap and enums only; the encoder comes from cudaGetDriverEntryPointByVersion

#include "common.cuh"

namespace mb {

constexpr int kCols = 64;  // inner dimension: 64 bf16 = 128 B (one 128B-swizzle row)
constexpr int kRowBytes = kCols * 2;

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline EncodeTiledFn get_encoder() {
  static EncodeTiledFn fn = nullptr;
  if (fn) return fn;
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || !p) throw std::runtime_error("cuTensorMapEncodeTiled entry point not found");
  fn = reinterpret_cast<EncodeTiledFn>(p);
  return fn;
}

// 2D bf16 tensor [rows][cols], box [box_rows][cols] (the box spans the full row), 256B L2 promotion.
// Default: 64 columns (128 B rows) with 128B swizzle, the usual GEMM operand tile layout.
inline CUtensorMap make_map(void* base, uint64_t rows, uint32_t box_rows, uint32_t cols = kCols, bool swizzle = true) {
  CUtensorMap m;
  cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), rows};
  cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * 2};
  cuuint32_t box[2] = {cols, box_rows};
  cuuint32_t es[2] = {1, 1};
  CUresult r = get_encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, dims, strides, box, es,
                             CU_TENSOR_MAP_INTERLEAVE_NONE,
                             swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw std::runtime_error("cuTensorMapEncodeTiled failed: " + std::to_string((int)r));
  return m;
}

// A bf16 tensor of `rows` rows of row_bytes over `base`, boxes of box_rows rows x seg_bytes (256-byte L2 promotion).
inline CUtensorMap make_rows_map(void* base, long long rows, int row_bytes, int seg_bytes, int box_rows, CUtensorMapSwizzle swizzle) {
  CUtensorMap map;
  cuuint64_t dims[2] = {static_cast<cuuint64_t>(row_bytes / 2), static_cast<cuuint64_t>(rows)};
  cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_bytes)};
  cuuint32_t box[2] = {static_cast<cuuint32_t>(seg_bytes / 2), static_cast<cuuint32_t>(box_rows)};
  cuuint32_t es[2] = {1, 1};
  CUresult r = get_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, dims, strides, box, es,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw std::runtime_error("cuTensorMapEncodeTiled failed: " + std::to_string((int)r));
  return map;
}

// Element (row, col) of the test tensors (64 columns).
__host__ __device__ inline uint16_t pattern(uint32_t row, uint32_t col) {
  uint32_t h = (row * 64u + col) * 2654435761u;
  return static_cast<uint16_t>(h >> 16);
}

// Fills t[rows][64] with pattern(row, col) (kernel in bench_tma.cu; synchronizes).
void fill_pattern(Ctx& c, uint16_t* t, size_t rows);

// A device tensor of `bytes` (rows of 64 bf16) filled with the pattern: the hierarchy groups' 2 GiB source.
struct PatternTensor : DevBuf<uint16_t> {
  long long rows;
  PatternTensor(Ctx& c, size_t bytes) : DevBuf<uint16_t>(bytes / 2), rows(static_cast<long long>(bytes / kRowBytes)) {
    fill_pattern(c, p, static_cast<size_t>(rows));
  }
};

// Byte offset of element (r, col) of a box in smem written with 128B swizzle (box base 1024B aligned).
__device__ inline uint32_t swz128(uint32_t r, uint32_t col) {
  uint32_t chunk = (col >> 3) ^ (r & 7u);
  return r * kRowBytes + chunk * 16u + (col & 7u) * 2u;
}

__device__ inline unsigned char* align1024(unsigned char* p) {
  return reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(p) + 1023) & ~uintptr_t(1023));
}

}  // namespace mb
