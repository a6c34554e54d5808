// Launch microbenchmarks: empty-kernel launch cost (host and GPU views), CTA dispatch rate, and the gap
// between a CTA's end and the next CTA's start on the same SM (second wave).
#include <algorithm>
#include <chrono>
#include <map>

#include "common.cuh"

namespace mb {
namespace {

__global__ void k_empty() {}

// Thread 0 records smid, clock64 and %globaltimer at start and end of a `spin`-cycle busy loop.
__global__ void k_wave(unsigned long long* rec, long long spin) {
  extern __shared__ unsigned char dyn[];
  if (threadIdx.x == 0) {
    unsigned long long t0 = clk(), g0 = gtime();
    dyn[0] = 1;
    spin_cycles(spin);
    unsigned long long t1 = clk(), g1 = gtime();
    unsigned long long* r = rec + blockIdx.x * 5;
    r[0] = smid();
    r[1] = t0;
    r[2] = t1;
    r[3] = g0;
    r[4] = g1;
  }
  __syncthreads();
}

}  // namespace

void bench_launch(Ctx& c) {
  const std::string G = "launch";
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  k_empty<<<1, 32>>>();
  CK_LAUNCH();

  // back-to-back launches, GPU time per launch
  {
    const int L = 2000;
    std::vector<double> us;
    for (int r = 0; r < (c.quick ? 3 : 11); ++r) {
      CK(cudaEventRecord(e0));
      for (int i = 0; i < L; ++i) k_empty<<<1, 32>>>();
      CK(cudaGetLastError());
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r > 0) us.push_back(ms * 1000.0 / L);
    }
    record(c, "launch_empty_back_to_back", G, "us", us,
           "2000 launches of an empty kernel <<<1,32>>> queued back to back on one stream; CUDA-event time / 2000 "
           "(launch throughput; host enqueue may be the limit).",
           JObj().num("launches", L));
  }
  // single launch, GPU-side events around it
  {
    std::vector<double> us, host_us;
    const int R = c.quick ? 20 : 200;
    for (int r = 0; r < R + 5; ++r) {
      auto h0 = std::chrono::steady_clock::now();
      CK(cudaEventRecord(e0));
      k_empty<<<1, 32>>>();
      CK(cudaGetLastError());
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      auto h1 = std::chrono::steady_clock::now();
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 5) {
        us.push_back(ms * 1000.0);
        host_us.push_back(std::chrono::duration<double, std::micro>(h1 - h0).count());
      }
    }
    record(c, "launch_empty_event_time", G, "us", us,
           "cudaEventRecord; empty kernel <<<1,32>>>; cudaEventRecord; elapsed between the events (GPU-side time of "
           "one isolated launch incl. event overhead).",
           JObj());
    record(c, "launch_empty_host_roundtrip", G, "us", host_us,
           "Host wall clock from before the first cudaEventRecord to after cudaEventSynchronize for one empty "
           "kernel (launch + completion seen by the host).",
           JObj());
  }
  // CTA dispatch rate: many empty CTAs
  {
    const int waves = 100;
    const int grid = c.sm_count * waves * 4;  // 128-thread CTAs: several resident per SM
    std::vector<double> ns;
    for (int r = 0; r < (c.quick ? 3 : 11); ++r) {
      CK(cudaEventRecord(e0));
      k_empty<<<grid, 128>>>();
      CK(cudaGetLastError());
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r > 0) ns.push_back(ms * 1e6 / (double(grid) / c.sm_count));
    }
    record(c, "cta_dispatch_empty_per_sm", G, "ns/CTA/SM", ns,
           "Empty kernel with " + std::to_string(grid) + " CTAs of 128 threads; event time / (CTAs per SM): "
           "average time per CTA on one SM when CTAs are only launched and retired (several CTAs resident at once).",
           JObj().num("grid", grid).num("block", 128));
  }
  // second-wave gap on the same SM
  {
    const int grid = 2 * c.sm_count;
    const int dyn = 200 * 1024;  // one CTA per SM
    const long long spin = 20000;
    CK(cudaFuncSetAttribute(k_wave, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
    DevBuf<unsigned long long> rec(grid * 5);
    std::vector<double> gap_cyc, skew_ns, gap_ns;
    for (int r = 0; r < (c.quick ? 3 : 11); ++r) {
      rec.zero();
      k_wave<<<grid, 128, dyn>>>(rec.p, spin);
      CK_LAUNCH();
      if (r == 0) continue;
      auto h = rec.get();
      std::map<unsigned long long, std::vector<int>> by_sm;
      unsigned long long gmin = ~0ull;
      std::vector<unsigned long long> first_wave_g0;
      for (int b = 0; b < grid; ++b) by_sm[h[b * 5]].push_back(b);
      for (auto& kv : by_sm) {
        auto& v = kv.second;
        std::sort(v.begin(), v.end(), [&](int a, int b) { return h[a * 5 + 1] < h[b * 5 + 1]; });
        for (size_t k = 1; k < v.size(); ++k) {
          gap_cyc.push_back(double(h[v[k] * 5 + 1]) - double(h[v[k - 1] * 5 + 2]));
          gap_ns.push_back(double(h[v[k] * 5 + 3]) - double(h[v[k - 1] * 5 + 4]));
        }
        first_wave_g0.push_back(h[v[0] * 5 + 3]);
        gmin = std::min(gmin, h[v[0] * 5 + 3]);
      }
      unsigned long long gmax = *std::max_element(first_wave_g0.begin(), first_wave_g0.end());
      skew_ns.push_back(double(gmax - gmin));
    }
    JObj p;
    p.num("grid", grid).num("block", 128).num("dyn_smem", dyn).num("spin_cycles", spin);
    record(c, "cta_wave_gap_same_sm", G, "cycles", gap_cyc,
           "Grid of 2 x SMs CTAs, 1 CTA/SM (200 KB smem), each spins 20000 cycles. Per SM: start clock64 of the "
           "later CTA minus the end clock64 (just before __syncthreads and exit) of the earlier one = CTA retire "
           "+ next CTA launch gap, in SM cycles.",
           p);
    c.res->add("cta_wave_gap_same_sm_ns", G, "ns", gap_ns,
               "Same gaps measured with %globaltimer (ns; coarse timer resolution, see cycles version).", p);
    c.res->add("cta_first_wave_start_skew", G, "ns", skew_ns,
               "Spread of the first-wave CTA start times over all SMs (%globaltimer, max - min) per launch.", p);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
}

}  // namespace mb
