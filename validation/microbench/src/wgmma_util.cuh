// wgmma helpers shared by bench_wgmma.cu and bench_hierarchy.cu: fence / commit / wait, the register
// fence that keeps accumulators live, and the no-swizzle shared-memory matrix descriptor with its layout.
// The wgmma instructions themselves are in wgmma_gen.cuh (generated).
#pragma once

#include "common.cuh"
#include "wgmma_gen.cuh"

namespace mb {

DEVI void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
DEVI void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
DEVI void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
DEVI void wgmma_wait1() { asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); }
template <int R>
DEVI void fence_regs(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// `reps` batches of BATCH back-to-back wgmma m64nNk16 bf16 (scale-d 1), the operand slices taken in turn, each batch
// committed and waited for.
template <int N, int BATCH, int SLICES>
DEVI void wgmma_batches(float (&d)[N / 2], const uint64_t (&da)[SLICES], const uint64_t (&db)[SLICES], int reps) {
  for (int r = 0; r < reps; ++r) {
    wgmma_fence();
#pragma unroll
    for (int b = 0; b < BATCH; ++b) wgmma_bf16<N>(d, da[b % SLICES], db[b % SLICES], 1);
    wgmma_commit();
    wgmma_wait0();
  }
}

// Shared-memory matrix descriptor, no swizzle: start address, leading byte offset (LBO), stride byte
// offset (SBO), all >> 4.
DEVI uint64_t make_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
  return static_cast<uint64_t>((saddr & 0x3FFFF) >> 4) | (static_cast<uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<uint64_t>((sbo >> 4) & 0x3FFF) << 32);
}

// Operand layout in smem (K-major, no swizzle): a matrix of `rows` rows and 32 bytes of K per row
// (k16 bf16 or k32 fp8) is cut into 8-row x 16-byte core matrices (128 contiguous bytes, row r of the
// core at 16*r). Core (row block i, k block j) starts at i*m_off + j*k_off bytes.
__host__ __device__ inline uint32_t op_offset(uint32_t row, uint32_t kbyte, uint32_t k_off, uint32_t m_off) {
  return (row >> 3) * m_off + (kbyte >> 4) * k_off + (row & 7) * 16 + (kbyte & 15);
}

}  // namespace mb
