// Barrier microbenchmarks: named barrier (bar.sync) vs number of warps, bar.arrive -> bar.sync wake-up,
// cluster barrier (barrier.cluster.arrive.release + wait.acquire) for cluster sizes 1, 2, 4.
#include "common.cuh"

namespace mb {
namespace {

constexpr int kWarm = 16;

DEVI void bar_sync(int id, int nthreads) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(nthreads) : "memory"); }
DEVI void bar_arrive(int id, int nthreads) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(nthreads) : "memory"); }

// Note: SASS emits BAR.SYNC.DEFER_BLOCKING; a clock read right after it is not held back by the barrier
// (measured 2 cycles), so single-barrier clock deltas are meaningless. Each sample is therefore the
// time of kPerSample back-to-back barriers (all warps), read by warp 0 lane 0; value = time / kPerSample.
constexpr int kPerSample = 32;
__global__ void k_bar_sync(unsigned long long* out, int n) {
  const int nt = blockDim.x;
  bar_sync(1, nt);
  for (int i = 0; i < n; ++i) {
    unsigned long long t0 = clk();
#pragma unroll
    for (int k = 0; k < kPerSample; ++k) bar_sync(1, nt);
    unsigned long long t1 = clk();
    if (threadIdx.x == 0) out[i] = t1 - t0;
  }
}

// Ping-pong between two warps with named barriers: warp 0 { bar.arrive 2; bar.sync 3 }, warp 1
// { bar.sync 2; bar.arrive 3 }, kPerSample rounds per sample; value = time / (2 * kPerSample) = mean
// one-way bar.arrive -> bar.sync release.
__global__ void k_bar_pingpong(unsigned long long* out, int n) {
  const int warp = threadIdx.x >> 5;
  bar_sync(1, 64);
  for (int i = 0; i < n; ++i) {
    unsigned long long t0 = clk();
    if (warp == 0) {
#pragma unroll
      for (int k = 0; k < kPerSample; ++k) {
        bar_arrive(2, 64);
        bar_sync(3, 64);
      }
    } else {
#pragma unroll
      for (int k = 0; k < kPerSample; ++k) {
        bar_sync(2, 64);
        bar_arrive(3, 64);
      }
    }
    unsigned long long t1 = clk();
    if (threadIdx.x == 0) out[i] = t1 - t0;
  }
}

constexpr int kClusterPerSample = 8;
// Cluster barrier (8 back to back per sample, value = time / 8): all threads of all CTAs: t0; barrier.cluster.arrive.release.aligned;
// barrier.cluster.wait.acquire.aligned; t1. Thread 0 of cluster rank 0 records.
// relaxed = 1: barrier.cluster.arrive.relaxed.aligned + barrier.cluster.wait.aligned (no release fence on
// the arrive), as CUTLASS's cluster_arrive_relaxed + cluster_wait.
__global__ void k_cluster_bar(unsigned long long* out, int n, unsigned* sm_ids, int relaxed) {
  extern __shared__ unsigned char dyn[];
  const uint32_t rank = cluster_ctarank();
  if (threadIdx.x == 0) {
    sm_ids[blockIdx.x] = smid();
    dyn[0] = 0;
  }
  cluster_sync_all();
  for (int i = 0; i < n; ++i) {
    unsigned long long t0 = clk();
    if (relaxed) {
#pragma unroll
      for (int k = 0; k < kClusterPerSample; ++k) cluster_sync_relaxed();
    } else {
#pragma unroll
      for (int k = 0; k < kClusterPerSample; ++k) cluster_sync_all();
    }
    unsigned long long t1 = clk();
    if (rank == 0 && threadIdx.x == 0 && blockIdx.x == 0) out[i] = t1 - t0;
  }
}

}  // namespace

void bench_sync(Ctx& c) {
  const int n = c.reps(1000, 64) + kWarm;
  DevBuf<unsigned long long> out(n);
  const int warps_list[] = {2, 4, 8, 12, 16, 32};
  for (int w : warps_list) {
    out.zero();
    k_bar_sync<<<1, 32 * w>>>(out.p, n);
    CK_LAUNCH();
    JObj p;
    p.num("warps", w).num("threads", 32 * w).num("barriers_per_sample", kPerSample);
    record(c, "bar_sync_latency_" + std::to_string(w) + "warps", "named_barrier", "cycles",
           to_samples(out.get(), kWarm, 1.0 / kPerSample),
           "CTA of " + std::to_string(w) + " warps, all execute bar.sync 1, " + std::to_string(32 * w) +
               " 32 times back to back; warp 0 lane 0 times the 32 (clock64) and divides: cycles per barrier "
               "round when all warps arrive together (SASS BAR.SYNC.DEFER_BLOCKING: a single barrier cannot be "
               "timed with clock reads around it).",
           p);
  }
  {
    out.zero();
    k_bar_pingpong<<<1, 64>>>(out.p, n);
    CK_LAUNCH();
    record(c, "bar_arrive_to_sync_pingpong_half", "named_barrier", "cycles",
           to_samples(out.get(), kWarm, 1.0 / (2 * kPerSample)),
           "Two warps ping-pong with named barriers: warp 0 { bar.arrive 2,64; bar.sync 3,64 }, warp 1 "
           "{ bar.sync 2,64; bar.arrive 3,64 }, 32 rounds per sample; value = time / 64 = mean one-way "
           "bar.arrive -> waiting warp released (incl. issue of the next barrier op).",
           JObj().num("rounds_per_sample", kPerSample));
  }
  {
    const int dyn = 120 * 1024;  // more than half the SM's smem: one CTA per SM
    CK(cudaFuncSetAttribute(k_cluster_bar, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
    DevBuf<unsigned> sms(4);
    for (int relaxed = 0; relaxed < 2; ++relaxed)
    for (int cs : {1, 2, 4}) {
      out.zero();
      sms.zero();
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(cs, 1, 1);
      cfg.blockDim = dim3(128, 1, 1);
      cfg.dynamicSmemBytes = dyn;
      cudaLaunchAttribute at[1];
      at[0].id = cudaLaunchAttributeClusterDimension;
      at[0].val.clusterDim.x = cs;
      at[0].val.clusterDim.y = 1;
      at[0].val.clusterDim.z = 1;
      cfg.attrs = at;
      cfg.numAttrs = 1;
      CK(cudaLaunchKernelEx(&cfg, k_cluster_bar, out.p, n, sms.p, relaxed));
      CK_LAUNCH();
      auto s = sms.get();
      std::string sm_list;
      for (int k = 0; k < cs; ++k) sm_list += (k ? "," : "") + std::to_string(s[k]);
      record(c, std::string(relaxed ? "cluster_barrier_relaxed_latency_cs" : "cluster_barrier_latency_cs") +
                    std::to_string(cs),
             "cluster_barrier", "cycles",
             to_samples(out.get(), kWarm, 1.0 / kClusterPerSample),
             "Cluster of " + std::to_string(cs) + " CTAs x 128 threads (one CTA per SM, 120 KB dyn smem): all threads do " +
                 (relaxed ? "barrier.cluster.arrive.relaxed.aligned + barrier.cluster.wait.aligned"
                          : "barrier.cluster.arrive.release.aligned + barrier.cluster.wait.acquire.aligned") +
                 ", 8 back to back per sample; CTA rank 0 thread 0 times them with clock64; value = time / 8 per "
                 "barrier.",
             JObj().num("cluster_size", cs).num("threads_per_cta", 128).str("sms", sm_list).boolean("relaxed_arrive",
                                                                                                     relaxed != 0));
    }
  }
}

}  // namespace mb
