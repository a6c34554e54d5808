// Memory-system microbenchmarks: cp.async 16 B latency and per-SM throughput; pointer-chase latency
// (L1 hit, L2 hit, HBM); HBM and L2 read bandwidth of the whole GPU. Also the L2 flush helper.
#include <algorithm>
#include <numeric>
#include <random>

#include "common.cuh"

namespace mb {
namespace {

constexpr int kWarm = 16;

__global__ void k_fill_u32(uint32_t* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = static_cast<uint32_t>(i * 2654435761u) ^ 0x5bd1e995u;
}

DEVI int4 ld_cg_v4(const int4* p) {
  int4 r;
  asm volatile("ld.global.cg.v4.s32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}

// Reads n int4 elements `passes` times, grid-stride, 4 independent loads in flight per thread.
// cg = 1 uses ld.global.cg (L2 only, no L1 allocation).
template <bool CG>
__global__ void k_read_bw(const int4* __restrict__ p, size_t n, int passes, int* sink) {
  int acc = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (int ps = 0; ps < passes; ++ps) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
      int4 v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) v[k] = CG ? ld_cg_v4(p + i + k * stride) : p[i + k * stride];
#pragma unroll
      for (int k = 0; k < 4; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    }
    for (; i < n; i += stride) {
      int4 v = CG ? ld_cg_v4(p + i) : p[i];
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  if (acc == 0x7fffffff) sink[0] = acc;  // keeps the loads
}

// Pointer chase, one thread. Each node is a 64-bit pointer to the next. Per sample: t0; p = load(p);
// store p to smem (the store waits for the load's result); t1. MODE 0: ld.global.ca (L1), 1: ld.global.cg.
template <int MODE>
__global__ void k_chase(const uint64_t* start, int warm_steps, int n, unsigned long long* out, uint64_t* sink) {
  __shared__ volatile uint64_t sm[64];
  const uint64_t* p = start;
  for (int i = 0; i < warm_steps; ++i) {  // untimed pass (fills the cache level under test)
    uint64_t q;
    if (MODE == 0)
      asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(q) : "l"(p) : "memory");
    else
      asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(q) : "l"(p) : "memory");
    p = reinterpret_cast<const uint64_t*>(q);
  }
  sm[0] = reinterpret_cast<uint64_t>(p);
  for (int i = 0; i < n; ++i) {
    uint64_t q;
    unsigned long long t0 = clk();
    if (MODE == 0)
      asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(q) : "l"(p) : "memory");
    else
      asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(q) : "l"(p) : "memory");
    sm[i & 63] = q;
    unsigned long long t1 = clk();
    out[i] = t1 - t0;
    p = reinterpret_cast<const uint64_t*>(q);
  }
  sink[0] = reinterpret_cast<uint64_t>(p);
}

// Links nodes: node k lives at base + idx[k] * 16 u64 (128 B lines) and points to node k+1 (cyclic).
__global__ void k_link(uint64_t* base, const uint32_t* idx, int nn) {
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < nn; k += gridDim.x * blockDim.x)
    base[static_cast<size_t>(idx[k]) * 16] = reinterpret_cast<uint64_t>(base + static_cast<size_t>(idx[(k + 1) % nn]) * 16);
}

// cp.async 16 B .cg latency: t0; cp.async.cg.shared.global [s], [g], 16; commit_group; wait_group 0; t1.
// Rep i reads g = base + (i * stride_elems) (stride 0: same address -> L2 hit). Value checked.
// `base_elem` is base's element index in the k_fill_u32-filled buffer (for the value check).
__global__ void k_cpasync_lat(const uint32_t* base, long long base_elem, long long stride_u32, int n,
                              unsigned long long* out, unsigned* err) {
  __shared__ __align__(16) uint32_t s[4];
  if (threadIdx.x != 0) return;
  const uint32_t sa = smem_u32(s);
  unsigned bad = 0;
  for (int i = 0; i < n; ++i) {
    const uint32_t* g = base + i * stride_u32;
    unsigned long long t0 = clk();
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(g) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    unsigned long long t1 = clk();
    out[i] = t1 - t0;
    uint32_t v = *reinterpret_cast<volatile uint32_t*>(&s[1]);
    const size_t e = static_cast<size_t>(base_elem + i * stride_u32 + 1);
    uint32_t want = static_cast<uint32_t>(e * 2654435761u) ^ 0x5bd1e995u;
    if (v != want) ++bad;
  }
  if (bad) atomicAdd(&err[ERR_DATA], bad);
}

// cp.async per-SM throughput: every thread, per iteration, issues 8 cp.async.cg 16 B (coalesced across
// the warp) into one of 4 stages, commit_group, wait_group 2 (up to 3 groups in flight per thread).
// n_int4 must be a power of two. Thread 0's clock64 span after a final wait_group 0 + __syncthreads.
constexpr int kCpStages = 4;
__global__ void k_cpasync_bw(const int4* base, size_t n_int4, int iters, unsigned long long* out) {
  extern __shared__ __align__(16) int4 sbuf[];  // kCpStages x 8 x blockDim int4
  const int T = blockDim.x;
  const size_t mask = n_int4 - 1;
  __syncthreads();
  unsigned long long t0 = clk();
  for (int it = 0; it < iters; ++it) {
    const int stg = it % kCpStages;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      size_t gi = ((static_cast<size_t>(it) * 8 + j) * T + threadIdx.x) & mask;
      uint32_t sa = smem_u32(&sbuf[(stg * 8 + j) * T + threadIdx.x]);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(base + gi) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 2;" ::: "memory");
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();
  unsigned long long t1 = clk();
  if (threadIdx.x == 0) out[0] = t1 - t0;
}

int4* g_flush = nullptr;
const size_t kFlushBytes = 256ull << 20;
DevBuf<int>* g_sink = nullptr;

}  // namespace

// Writes (cudaMemset) and then reads a 256 MiB buffer: dirty lines of earlier kernels are written back and
// replaced (a read-only sweep was seen to leave some of them in L2), and L2 ends up holding clean lines
// of the flush buffer only.
void flush_l2(Ctx& c) {
  if (!g_flush) {
    CK(cudaMalloc(&g_flush, kFlushBytes));
    g_sink = new DevBuf<int>(1);
  }
  static unsigned char v = 0;
  CK(cudaMemset(g_flush, ++v, kFlushBytes));
  k_read_bw<false><<<c.sm_count * 4, 512>>>(g_flush, kFlushBytes / 16, 1, g_sink->p);
  CK_LAUNCH();
}

void bench_memory(Ctx& c) {
  const int n = c.reps(1000, 64) + kWarm;
  const size_t big_bytes = 1ull << 30;
  DevBuf<uint32_t> big(big_bytes / 4);
  k_fill_u32<<<c.sm_count * 8, 256>>>(big.p, big.n);
  CK_LAUNCH();
  DevBuf<unsigned long long> out(std::max(n, 4096));
  DevBuf<int> sink(1);
  DevBuf<uint64_t> psink(1);

  // --- cp.async latency: L2 hit (same 16 B every rep) and HBM (fresh 16 B every rep, 4 KiB apart, after flush)
  for (int where = 0; where < 2; ++where) {
    if (where) flush_l2(c);
    out.zero();
    const long long off = where ? (512ll << 20) / 4 : 0;
    k_cpasync_lat<<<1, 32>>>(big.p + off, off, where ? 1024 : 0, n, out.p, c.d_err);
    CK_LAUNCH();
    auto raw = out.get();
    raw.resize(n);
    record(c, std::string("cp_async_cg16_latency_") + (where ? "hbm" : "l2"), "cp_async", "cycles",
           to_samples(raw, kWarm),
           std::string("One thread: t0; cp.async.cg.shared.global 16 B; cp.async.commit_group; cp.async.wait_group 0; "
                       "t1. ") +
               (where ? "Each rep reads a new line 4 KiB after the previous one (L2 flushed first): HBM."
                      : "Same address every rep: L2 hit (.cg bypasses L1)."),
           JObj().str("source", where ? "hbm" : "l2"));
  }
  // --- cp.async per-SM throughput
  for (int where = 0; where < 2; ++where) {
    const int T = 256, iters = c.quick ? 256 : 1024;
    const int dyn = kCpStages * 8 * T * 16;
    CK(cudaFuncSetAttribute(k_cpasync_bw, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
    const size_t n4 = where ? big_bytes / 16 : (4ull << 20) / 16;
    std::vector<double> bpc;
    for (int r = 0; r < (c.quick ? 3 : 8); ++r) {
      if (where) flush_l2(c);
      k_cpasync_bw<<<1, T, dyn>>>(reinterpret_cast<const int4*>(big.p), n4, iters, out.p);
      CK_LAUNCH();
      if (r > 0) bpc.push_back(double(iters) * 8 * T * 16 / double(out.get()[0]));
    }
    record(c, std::string("cp_async_cg16_throughput_one_sm_") + (where ? "hbm" : "l2"), "cp_async", "bytes/cycle", bpc,
           std::string("One CTA of 256 threads; each thread issues 8 x cp.async.cg 16 B per iteration (warp-"
                       "coalesced, 4 KiB per warp-iteration) into one of 4 smem stages, commit, wait_group 2; ") +
               std::to_string(iters) + " iterations (" + std::to_string(iters * 8 * T * 16 >> 20) +
               " MiB). bytes / clock64 cycles. " +
               (where ? "Source: fresh data of a 1 GiB buffer (L2 flushed)." : "Source: 4 MiB buffer (L2 hits)."),
           JObj().num("threads", T).num("max_inflight_groups_per_thread", 3).num("bytes_per_group_per_thread", 128));
  }

  // --- pointer chase
  {
    std::mt19937_64 rng(12345);
    struct Ch {
      const char* name;
      size_t region_bytes;
      int nodes;
      int mode;  // 0 ld.ca, 1 ld.cg
      bool flush, warm;
      const char* desc;
    } chs[] = {
        {"load_latency_l1_hit", 16 << 10, 128, 0, false, true,
         "Pointer chase, one thread, ld.global.ca, 128 nodes (one per 128 B line, random cyclic order) in 16 KiB, "
         "after an untimed pass: L1 hits. Per sample: clock64; one dependent load; st.shared of the result (waits "
         "for it); clock64."},
        {"load_latency_l2_hit", 8 << 20, 65536, 1, false, true,
         "Pointer chase, ld.global.cg (no L1), 65536 nodes (every 128 B line of 8 MiB, random cyclic order), after "
         "an untimed full pass: L2 hits; mix of near and far L2 partition (see p10/p90). Per-load samples."},
        {"load_latency_hbm_16MB", 16 << 20, 4096, 1, true, false,
         "Pointer chase, ld.global.cg, 4096 random distinct lines of a 16 MiB region, each visited once after an "
         "L2 flush: L2 misses to HBM with few TLB misses (8 x 2 MiB pages)."},
        {"load_latency_hbm_1GB", 1ull << 30, 4096, 1, true, false,
         "As load_latency_hbm_16MB over a 1 GiB region: HBM latency including likely TLB misses."},
    };
    for (auto& ch : chs) {
      const size_t lines = ch.region_bytes / 128;
      std::vector<uint32_t> idx;
      if (static_cast<size_t>(ch.nodes) == lines) {
        idx.resize(lines);
        std::iota(idx.begin(), idx.end(), 0u);
        std::shuffle(idx.begin(), idx.end(), rng);
      } else {
        // distinct random lines
        std::vector<uint32_t> all(lines);
        std::iota(all.begin(), all.end(), 0u);
        for (int k = 0; k < ch.nodes; ++k) std::swap(all[k], all[k + rng() % (lines - k)]);
        idx.assign(all.begin(), all.begin() + ch.nodes);
      }
      // the chase region: second half of `big` for the small ones, all of it for the 1 GiB one
      uint64_t* region = reinterpret_cast<uint64_t*>(big.p);
      DevBuf<uint32_t> d_idx(idx.size());
      CK(cudaMemcpy(d_idx.p, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
      k_link<<<c.sm_count, 256>>>(region, d_idx.p, ch.nodes);
      CK_LAUNCH();
      if (ch.flush) flush_l2(c);
      const int samples = ch.warm ? std::min(n, ch.nodes * 8) : std::min(ch.nodes - 1, std::max(n, 2048));
      const int warm_steps = ch.warm ? ch.nodes : 0;
      const uint64_t* start = region + static_cast<size_t>(idx[0]) * 16;
      out.zero();
      if (ch.mode == 0)
        k_chase<0><<<1, 32>>>(start, warm_steps, samples, out.p, psink.p);
      else
        k_chase<1><<<1, 32>>>(start, warm_steps, samples, out.p, psink.p);
      CK_LAUNCH();
      auto raw = out.get();
      raw.resize(samples);
      record(c, ch.name, "memory", "cycles", to_samples(raw, ch.warm ? kWarm : 0), ch.desc,
             JObj().num("region_bytes", double(ch.region_bytes)).num("nodes", ch.nodes));
      // restore the fill pattern so the next users of `big` see defined data (k_link overwrote a few words)
      k_fill_u32<<<c.sm_count * 8, 256>>>(big.p, big.n);
      CK_LAUNCH();
    }
  }

  // --- HBM and L2 read bandwidth, whole GPU
  {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int which = 0; which < 2; ++which) {
      const size_t bytes = which == 0 ? big_bytes : (16ull << 20);
      const int passes = which == 0 ? 1 : 40;
      std::vector<double> gbs;
      const int grid = c.sm_count * 4, block = 512;
      for (int r = 0; r < (c.quick ? 3 : 11); ++r) {
        if (which == 0) flush_l2(c);
        CK(cudaEventRecord(e0));
        if (which == 0)
          k_read_bw<false><<<grid, block>>>(reinterpret_cast<const int4*>(big.p), bytes / 16, passes, sink.p);
        else
          k_read_bw<true><<<grid, block>>>(reinterpret_cast<const int4*>(big.p), bytes / 16, passes, sink.p);
        CK(cudaGetLastError());
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0) gbs.push_back(double(bytes) * passes / (ms * 1e6));
      }
      record(c, which == 0 ? "hbm_read_bw_all_sms" : "l2_read_bw_all_sms", "memory", "GB/s", gbs,
             which == 0 ? "Read 1 GiB once (int4 loads, 4 in flight per thread, grid = 4 x SMs x 512 threads) after "
                          "an L2 flush; bytes / CUDA-event time (includes ~launch overhead of a few us)."
                        : "Read a 16 MiB buffer 40 times with ld.global.cg (no L1), same grid: L2 hits; bytes / "
                          "CUDA-event time.",
             JObj().num("bytes_per_pass", double(bytes)).num("passes", passes).num("grid", grid).num("block", block));
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
  }
}

}  // namespace mb
