// K1 GPU kernel: the CTA program of k1_tile.cuh with sm80 PTX (ldmatrix, mma.sync m16n8k16 f16 -> f32,
// cp.async.cg 16 B with zero-fill, cp.async.commit_group / wait_group).  Runs on sm_80 and later; this
// project compiles it for sm_90a (H100).  No CUTLASS, no CuTe: written from the PTX ISA.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "k1_tile.cuh"

namespace k1 {

// PROBE: mark() has lane 0 of each warp store its clock64 at probe[((cta * 4 + warp) * K1_MARKS + id)] (the
// driver's --probe); otherwise mark() is nothing and the kernel is the timed one.
template <bool PROBE>
struct DevOpsT {
  uint32_t smem;  // shared-window address of the dynamic shared memory
  unsigned long long* probe = nullptr;
  int slot = 0;   // (cta * 4 + warp) * K1_MARKS

  __device__ __forceinline__ void mark(int id) const {
    if constexpr (PROBE) {
      unsigned long long t;
      asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
      if ((threadIdx.x & 31) == 0) probe[slot + id] = t;
    }
  }

  __device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t off) const {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem + off));
  }
  __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) const {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  // cp.async.cg (L2 only, 16 B); valid == false: src-size 0, the 16 bytes are zero-filled
  __device__ __forceinline__ void cp_async16(uint32_t off, const void* src, bool valid) const {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem + off), "l"(src),
                 "r"(valid ? 16 : 0)
                 : "memory");
  }
  __device__ __forceinline__ void commit() const { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
  template <int N>
  __device__ __forceinline__ void wait() const {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
  }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
  __device__ __forceinline__ void sts32(uint32_t off, uint32_t v) const {
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(smem + off), "r"(v) : "memory");
  }
  __device__ __forceinline__ uint32_t ldg32(const uint16_t* p) const {
    return *reinterpret_cast<const uint32_t*>(p);
  }
  __device__ __forceinline__ void stg32(uint16_t* p, uint32_t v) const { *reinterpret_cast<uint32_t*>(p) = v; }
  __device__ __forceinline__ uint32_t pack(float lo, float hi) const {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  __device__ __forceinline__ float lo(uint32_t v) const {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(v & 0xFFFFu)));
  }
  __device__ __forceinline__ float hi(uint32_t v) const {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(v >> 16)));
  }
};

using DevOps = DevOpsT<false>;

// grid = ceil(M / 64) CTAs (one 64-row block each, all N1 columns), 128 threads, SMEM_BYTES dynamic smem.
__global__ void __launch_bounds__(THREADS) k1_b2b_kernel(Params p) {
  extern __shared__ __align__(128) unsigned char k1_smem[];
  DevOps o{static_cast<uint32_t>(__cvta_generic_to_shared(k1_smem))};
  cta_body(o, p, static_cast<int>(blockIdx.x), static_cast<int>(threadIdx.x));
}

// The same with probe marks; meta[cta * 2] = %globaltimer at the start, meta[cta * 2 + 1] = %smid.
__global__ void __launch_bounds__(THREADS) k1_b2b_probe_kernel(Params p, unsigned long long* probe, unsigned long long* meta) {
  extern __shared__ __align__(128) unsigned char k1_smem[];
  const int cta = static_cast<int>(blockIdx.x), tid = static_cast<int>(threadIdx.x);
  DevOpsT<true> o{static_cast<uint32_t>(__cvta_generic_to_shared(k1_smem)), probe, (cta * (THREADS / 32) + tid / 32) * K1_MARKS};
  if (tid == 0) {
    unsigned long long g;
    unsigned s;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    meta[cta * 2] = g;
    meta[cta * 2 + 1] = s;
  }
  cta_body(o, p, cta, tid);
}

inline cudaError_t prepare() {
  cudaError_t e = cudaFuncSetAttribute(k1_b2b_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(SMEM_BYTES));
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(k1_b2b_probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(SMEM_BYTES));
}
inline int grid_for(int M) { return (M + BM - 1) / BM; }
inline void launch(const Params& p, cudaStream_t st) {
  k1_b2b_kernel<<<grid_for(p.M), THREADS, SMEM_BYTES, st>>>(p);
}
inline void launch_probe(const Params& p, unsigned long long* probe, unsigned long long* meta, cudaStream_t st) {
  k1_b2b_probe_kernel<<<grid_for(p.M), THREADS, SMEM_BYTES, st>>>(p, probe, meta);
}

}  // namespace k1
