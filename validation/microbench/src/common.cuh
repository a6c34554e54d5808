// Shared pieces of the Hopper microbenchmarks: error checking, the run context, and thin inline-PTX
// wrappers for the primitives (mbarrier, TMA, bulk groups, cluster, clocks).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "results.hpp"

namespace mb {

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------

struct CudaError : std::runtime_error {
  cudaError_t code;
  CudaError(cudaError_t c, const std::string& m) : std::runtime_error(m), code(c) {}
};

#define CK(call)                                                                                      \
  do {                                                                                                \
    cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) {                                                                          \
      char b_[512];                                                                                   \
      std::snprintf(b_, sizeof b_, "%s failed: %s (%s) at %s:%d", #call, cudaGetErrorName(e_),        \
                    cudaGetErrorString(e_), __FILE__, __LINE__);                                      \
      throw ::mb::CudaError(e_, b_);                                                                  \
    }                                                                                                 \
  } while (0)

// After a <<<>>> launch: catch configuration errors at once and execution errors at the sync.
#define CK_LAUNCH()                         \
  do {                                      \
    CK(cudaGetLastError());                 \
    CK(cudaDeviceSynchronize());            \
  } while (0)

// Error slots that kernels bump; read and reset by the host after each benchmark.
enum ErrSlot : int { ERR_TIMEOUT = 0, ERR_DATA = 1, ERR_OTHER = 2, ERR_SLOTS = 4 };

struct Ctx {
  Results* res = nullptr;
  cudaDeviceProp prop{};
  int dev = 0;
  int sm_count = 0;
  double clk_ghz = 0;  // SM clock measured at start (clock64 vs %globaltimer), used for cycles <-> time
  bool quick = false;  // fewer repetitions (smoke test)
  std::string filter;  // only run benchmark groups whose name contains this
  unsigned* d_err = nullptr;

  void reset_err() const { CK(cudaMemset(d_err, 0, ERR_SLOTS * sizeof(unsigned))); }
  // Returns "" when no kernel reported a problem, else a short reason.
  std::string take_err() const {
    unsigned h[ERR_SLOTS];
    CK(cudaMemcpy(h, d_err, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaMemset(d_err, 0, sizeof h));
    std::string r;
    if (h[ERR_TIMEOUT]) r += "kernel-side wait timed out " + std::to_string(h[ERR_TIMEOUT]) + "x; ";
    if (h[ERR_DATA]) r += "data check mismatches: " + std::to_string(h[ERR_DATA]) + "; ";
    if (h[ERR_OTHER]) r += "other kernel-reported errors: " + std::to_string(h[ERR_OTHER]) + "; ";
    return r;
  }
  int reps(int full, int quick_reps) const { return quick ? quick_reps : full; }
};

// Converts raw uint64 cycle samples to doubles, dropping the first `warm` entries.
inline std::vector<double> to_samples(const std::vector<unsigned long long>& raw, size_t warm, double scale = 1.0) {
  std::vector<double> v;
  for (size_t i = warm; i < raw.size(); ++i) v.push_back(static_cast<double>(raw[i]) * scale);
  return v;
}

// Device buffer with RAII.
template <class T>
struct DevBuf {
  T* p = nullptr;
  size_t n = 0;
  DevBuf() = default;
  explicit DevBuf(size_t count) { alloc(count); }
  void alloc(size_t count) {
    n = count;
    CK(cudaMalloc(&p, count * sizeof(T)));
  }
  ~DevBuf() {
    if (p) cudaFree(p);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  std::vector<T> get() const {
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  void zero() { CK(cudaMemset(p, 0, n * sizeof(T))); }
};

// Odd-ish step coprime with n, different per walker k: the walk b += step mod n visits every one of n boxes once
// (the hierarchy and multicast rings: every CTA, or cluster, reads a tensor in its own order).
inline long long pick_stride(int k, long long n) {
  if (n <= 2) return 1;
  long long s = 1 + static_cast<long long>((static_cast<unsigned long long>(k) * 0x9E3779B97F4A7C15ull >> 20) %
                                           static_cast<unsigned long long>(n - 1));
  while (std::gcd(s, n) != 1) s = s % (n - 1) + 1;
  return s;
}

// Checks the kernel-reported error slots; on a problem the measurement is dropped and listed under
// "failures" instead, otherwise it is added. Returns true when it was recorded.
inline bool record(Ctx& c, const std::string& name, const std::string& group, const std::string& unit,
                   const std::vector<double>& samples, const std::string& desc, JObj params = {}) {
  std::string e = c.take_err();
  if (!e.empty()) {
    c.res->fail(name, e);
    return false;
  }
  if (samples.empty()) {
    c.res->fail(name, "no samples");
    return false;
  }
  c.res->add(name, group, unit, samples, desc, std::move(params));
  return true;
}

// Benchmark group entry points (one per source file).
void bench_mbarrier(Ctx& c);
void bench_tma(Ctx& c);
void bench_tma_sharing(Ctx& c);  // tma_sharing_*: many SMs reading the same boxes (group "sharing")
void bench_wgmma(Ctx& c);
void bench_sync(Ctx& c);
void bench_memory(Ctx& c);
void bench_launch(Ctx& c);
void bench_atomics(Ctx& c);
void bench_hierarchy(Ctx& c);
void bench_dirty_start(Ctx& c);  // dirtystart_*: a streaming read after another kernel's stores left the L2 dirty
void bench_cluster_start(Ctx& c);  // hier_launch_cluster*_fit_* (group "clusterstart": launch cost by cluster size)
void bench_hier_store(Ctx& c);  // hier_store_* (group "hierarchy"; --only store or hierarchy)
void bench_store_mix(Ctx& c);  // hier_store_mixed_*_spl*: a written byte's cost beside reads by the share of writes (group "wbmix")
void bench_l2_combine(Ctx& c);  // l2_combine_* (group "combine": request combining vs the time between readers)
void bench_l2_smpairs(Ctx& c);  // l2_smpairs_* (group "smpairs": request combining by SM id)
void bench_l2_block_edge(Ctx& c);  // l2_edge_* (group "blockedge": CTA pairs across aligned blocks of 16)
void bench_l2_sm_latency(Ctx& c);  // l2_smlat_* (group "smlat": each SM's ring latency and rate)
void bench_l2_cluster_edge(Ctx& c);  // l2_cedge_* (group "clusteredge": the block pairs in a grid of clusters)
void bench_hbm_segments(Ctx& c);  // hbm_segments_* (group "segments": HBM bandwidth of short row segments)
void bench_hbm_astream(Ctx& c);  // hbm_astream_* (group "astream": a GEMM operand's k-walk from HBM)
void bench_hbm_burst(Ctx& c);  // hbm_burst_* (group "burst": n SMs each load one HBM box at one instant)
void bench_think(Ctx& c);  // think_latency_* (group "think": a GEMM stage's load latency at moderate load)
void bench_loadlat(Ctx& c);  // loadlat_* (group "loadlat": a probe stage's landing under a controlled load)
void bench_pipe(Ctx& c);   // pipe_* (group "pipe": a stage's landing time, producer, consumer and watcher warps)
void bench_smem_port(Ctx& c);  // smem_port_* (group "smemport": wgmma operand reads against TMA writes)
void bench_issue(Ctx& c);      // issue_* (group "issue": warps sharing the SM's instruction issue)
void bench_l1(Ctx& c);         // l1_* (group "l1": a global access's L1TEX cost against the lines it touches)
void bench_multicast(Ctx& c);  // mcast_* (group "multicast": TMA multicast to clusters of 2 and 4 vs unicast)
void bench_gpc(Ctx& c);        // gpc_* (group "gpc": clusters per GPC; SMs of one GPC loading together vs spread)
void bench_tma_oob(Ctx& c);     // tma_oob_* (group "oob": TMA boxes partly or wholly outside the tensor)
void bench_epilogue(Ctx& c);   // epi_* (group "epilogue": the epilogue's store step, subtile after subtile)

// A launch of `ctas` CTAs of `threads` threads with `dyn_smem` bytes of dynamic shared memory, as clusters of C x 1 x 1
// (C > 1; C = 1: no cluster attribute), for cudaLaunchKernelEx and cudaOccupancyMaxActiveClusters.
struct ClusterLaunch {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute at[1];
  ClusterLaunch(int ctas, int C, int threads, int dyn_smem) {
    cfg.gridDim = dim3(ctas, 1, 1);
    cfg.blockDim = dim3(threads, 1, 1);
    cfg.dynamicSmemBytes = dyn_smem;
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = C;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.attrs = at;
    cfg.numAttrs = C > 1 ? 1 : 0;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;  // cfg.attrs points into this object
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// Runs a shell command (popen) and returns its stdout without the trailing newline ("" on failure).
// Defined in main.cu (used for nvidia-smi queries).
std::string popen_line(const std::string& cmd);

// Flushes L2 by reading (and writing) a buffer larger than L2. Defined in bench_memory.cu.
void flush_l2(Ctx& c);

// ---------------------------------------------------------------------------------------------
// Device side
// ---------------------------------------------------------------------------------------------

#define DEVI __device__ __forceinline__

constexpr unsigned long long kTimeoutNs = 500ull * 1000 * 1000;  // 0.5 s per wait, then give up

DEVI unsigned long long clk() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}
DEVI unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}
DEVI unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
DEVI uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// Busy-wait for about `cycles` SM clocks.
DEVI void spin_cycles(long long cycles) {
  unsigned long long t0 = clk();
  while ((long long)(clk() - t0) < cycles) {
  }
}

// ---- mbarrier ----
DEVI void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
DEVI void fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
DEVI void mbar_arrive(uint32_t bar) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}" ::"r"(bar) : "memory");
}
DEVI void mbar_arrive_cnt(uint32_t bar, uint32_t cnt) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0], %1;\n}" ::"r"(bar), "r"(cnt) : "memory");
}
DEVI void mbar_arrive_expect_tx(uint32_t bar, uint32_t tx) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}" ::"r"(bar), "r"(tx)
               : "memory");
}
DEVI void mbar_expect_tx(uint32_t bar, uint32_t tx) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(tx) : "memory");
}
DEVI void mbar_complete_tx(uint32_t bar, uint32_t tx) {
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(tx) : "memory");
}
// Arrive on a barrier of (possibly) another CTA of the cluster: `remote` comes from mapa.
DEVI void mbar_arrive_cluster(uint32_t remote) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}
// Same with the instruction's default semantics (release, CTA scope), the form CUTLASS's ClusterBarrier uses.
DEVI void mbar_arrive_cluster_default(uint32_t remote) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}
DEVI uint32_t mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok;
}
DEVI uint32_t mbar_try_wait_cluster(uint32_t bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok;
}
// Relaxed forms (PTX ISA 8.6): no acquire / release ordering.
DEVI void mbar_arrive_expect_tx_relaxed(uint32_t bar, uint32_t tx) {
  asm volatile("mbarrier.arrive.expect_tx.relaxed.cta.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(tx) : "memory");
}
DEVI uint32_t mbar_try_wait_relaxed(uint32_t bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.relaxed.cta.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok;
}
DEVI uint32_t mbar_test_wait(uint32_t bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok;
}

enum WaitKind : int { WAIT_TRY = 0, WAIT_TEST = 1, WAIT_TRY_CLUSTER = 2, WAIT_TRY_RELAXED = 3 };

// Bounded wait: polls; every 1024 failed polls it looks at %globaltimer, and after kTimeoutNs it
// counts a timeout in err[ERR_TIMEOUT] and returns false. The timer read is off the fast path.
template <int KIND = WAIT_TRY>
DEVI bool mbar_wait(uint32_t bar, uint32_t parity, unsigned* err) {
  uint32_t spins = 0;
  unsigned long long deadline = 0;
  while (true) {
    uint32_t ok = KIND == WAIT_TEST          ? mbar_test_wait(bar, parity)
                  : KIND == WAIT_TRY_CLUSTER ? mbar_try_wait_cluster(bar, parity)
                  : KIND == WAIT_TRY_RELAXED ? mbar_try_wait_relaxed(bar, parity)
                                             : mbar_try_wait(bar, parity);
    if (ok) return true;
    if ((++spins & 1023u) == 0) {
      unsigned long long now = gtime();
      if (deadline == 0) {
        deadline = now + kTimeoutNs;
      } else if (now > deadline) {
        atomicAdd(&err[ERR_TIMEOUT], 1u);
        return false;
      }
    }
  }
}

// ---- cluster ----
DEVI uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
DEVI uint32_t mapa_shared(uint32_t addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
DEVI void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// CUTLASS's cluster_arrive_relaxed + cluster_wait (no release fence on the arrive).
DEVI void cluster_sync_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n barrier.cluster.wait.aligned;" ::: "memory");
}

// ---- TMA / bulk async ----
DEVI void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// What a ring's thread (one thread keeping TMA loads in flight: the hierarchy and multicast groups) reports when its
// loop is over: its data mismatches, its latency samples (copied out of smem) and the first 8 words of its record:
// %globaltimer at the start and the end, clock64 cycles, SM id, samples, cycles in the full waits, loads (stages)
// done, cycles issuing.
struct RingTally {
  unsigned long long g0, g1, cycles, wait, issue;
  int nlat, done;
  unsigned bad;
};
DEVI void report_ring(const RingTally& t, const uint32_t* lat_s, uint32_t* lat, unsigned long long* rec, unsigned* err) {
  if (t.bad) atomicAdd(&err[ERR_DATA], t.bad);
  for (int k = 0; k < t.nlat; ++k) lat[k] = lat_s[k];
  rec[0] = t.g0;
  rec[1] = t.g1;
  rec[2] = t.cycles;
  rec[3] = smid();
  rec[4] = static_cast<unsigned long long>(t.nlat);
  rec[5] = t.wait;
  rec[6] = static_cast<unsigned long long>(t.done);
  rec[7] = t.issue;
}
DEVI void tma_load_2d(uint32_t dst, const void* tmap, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(tmap)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}
// Multicast form: the box is read once and lands at the same CTA-relative offset `dst` in every CTA of the cluster
// whose bit is set in `mask`; each of them gets complete_tx(box bytes) on its barrier at the offset of `bar`.
// The same with an L2 cache-eviction policy (a createpolicy result) for the lines it reads.
DEVI void tma_load_2d_hint(uint32_t dst, const void* tmap, int x, int y, uint32_t bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tmap)), "r"(x), "r"(y), "r"(bar), "l"(policy)
      : "memory");
}

DEVI void tma_load_2d_mc(uint32_t dst, const void* tmap, int x, int y, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tmap)), "r"(x), "r"(y), "r"(bar), "h"(mask)
      : "memory");
}
DEVI void tma_store_2d(const void* tmap, int x, int y, uint32_t src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<uint64_t>(tmap)),
               "r"(x), "r"(y), "r"(src)
               : "memory");
}
DEVI void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
DEVI void bulk_wait_read0() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
DEVI void bulk_wait0() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
DEVI void prefetch_tmap(const void* tmap) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(tmap)) : "memory");
}

}  // namespace mb
