// The K2 kernel built with the capture probe on (traces/probe.cuh), linked into the same driver as the
// probe-off kernel so that both can be timed in one process, launches interleaved.
#ifndef SMPIPE_PROBE
#define SMPIPE_PROBE 1
#endif
#if !SMPIPE_PROBE
#error "k2_probe.cu is the probe-on instance: compile it with SMPIPE_PROBE=1"
#endif

#include "k2_probe_api.h"

#include <cuda_runtime.h>

namespace k2probe {
namespace {

smpipe_probe::HostBuffer g_buf[2];
smpipe_probe::Config* g_pinned = nullptr;  // [3]: set 0, set 1, off

template <int BN, int ST, bool PP>
void launch_t(const CUtensorMap& a, const CUtensorMap& b, const CUtensorMap& c, const CUtensorMap& d, k2::Params p,
              int grid, cudaStream_t st) {
  k2::k2_gemm_kernel<BN, ST, PP><<<grid, k2::NUM_THREADS, k2::Cfg<BN, ST, PP>::SMEM_BYTES, st>>>(a, b, c, d, p);
}

}  // namespace

// The probe-on instances: the two original variants, the 2-stage ones (traces of a latency-bound ring), and
// 128x128 with 4 stages, cooperative and pingpong, and pingpong with 6 (the schedules' epilogues side by side).
#define K2_PROBE_INSTANCES(X) \
  X(256, 4, false) X(128, 6, false) X(256, 2, false) X(128, 2, false) X(128, 4, false) X(128, 4, true) X(128, 6, true)

bool kb_sampling() {
#if SMPIPE_PROBE_KB_SAMPLING
  return true;
#else
  return false;
#endif
}

bool has(int bn, int stages, bool pp) {
#define K2_HAS(BN, ST, PP) \
  if (bn == BN && stages == ST && pp == PP) return true;
  K2_PROBE_INSTANCES(K2_HAS)
#undef K2_HAS
  return false;
}

cudaError_t prepare(int bn, int stages, bool pp) {
#define K2_PREPARE(BN, ST, PP)                                                                              \
  if (bn == BN && stages == ST && pp == PP)                                                                 \
    return cudaFuncSetAttribute(k2::k2_gemm_kernel<BN, ST, PP>, cudaFuncAttributeMaxDynamicSharedMemorySize, \
                                k2::Cfg<BN, ST, PP>::SMEM_BYTES);
  K2_PROBE_INSTANCES(K2_PREPARE)
#undef K2_PREPARE
  return cudaErrorInvalidValue;
}

void launch(int bn, int stages, bool pp, const CUtensorMap& a, const CUtensorMap& b, const CUtensorMap& c,
            const CUtensorMap& d, k2::Params p, int grid, cudaStream_t st) {
#define K2_LAUNCH(BN, ST, PP) \
  if (bn == BN && stages == ST && pp == PP) launch_t<BN, ST, PP>(a, b, c, d, p, grid, st);
  K2_PROBE_INSTANCES(K2_LAUNCH)
#undef K2_LAUNCH
}

cudaError_t configure(int set, uint32_t slots, uint32_t cta_first, uint32_t warps, uint32_t capacity,
                      uint32_t tile_limit, uint32_t kb_sample) {
  if (!g_pinned) {
    cudaError_t e = cudaMallocHost(&g_pinned, 3 * sizeof(smpipe_probe::Config));
    if (e != cudaSuccess) return e;
    g_pinned[2] = smpipe_probe::Config{};
  }
  cudaError_t e = smpipe_probe::host_setup(g_buf[set], slots, cta_first, warps, capacity, tile_limit, kb_sample);
  if (e != cudaSuccess) return e;
  g_pinned[set] = g_buf[set].cfg;
  return cudaSuccess;
}

cudaError_t select(int set, cudaStream_t st) {
  const smpipe_probe::Config* src = set >= 0 ? &g_pinned[set] : &g_pinned[2];
  return cudaMemcpyToSymbolAsync(smpipe_probe::g_config, src, sizeof(smpipe_probe::Config), 0,
                                 cudaMemcpyHostToDevice, st);
}

cudaError_t read(int set, std::vector<unsigned char>& out) { return smpipe_probe::host_read(g_buf[set], out); }

void release() {
  smpipe_probe::host_free(g_buf[0]);
  smpipe_probe::host_free(g_buf[1]);
  if (g_pinned) cudaFreeHost(g_pinned);
  g_pinned = nullptr;
}

}  // namespace k2probe
