// Memory-hierarchy calibration (group "hierarchy"): data for a model with per-SM outstanding bytes, loaded
// latency, L2 as a cache in front of HBM, launch / prologue / drain cost and the SM clock under load.
//
//  1. loaded latency vs bytes in flight: every SM keeps D TMA box loads of B bytes in flight (one thread,
//     ring of D mbarriers), L2-resident (8 MiB, warm) or HBM (2 GiB tensor, no reuse); bandwidth and
//     per-load issue -> completion latency; also with 1, 33 and 66 SMs.
//  2. L2 footprint (all SMs stream 32 KB boxes over F bytes in per-SM orders) and sharing degree (groups of
//     g SMs read the same boxes of a tensor far larger than L2 at about the same time).
//  3. launch + prologue + drain: CUDA-event time vs in-kernel %globaltimer span for five kernel shapes.
//  4. SM clock under a dense wgmma load (m64n256k16 bf16) with random, constant and zero operands, with
//     nvidia-smi sampled while it runs.
#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <iterator>
#include <map>
#include <numeric>
#include <thread>

#include "common.cuh"
#include "tma_util.cuh"
#include "wgmma_util.cuh"

namespace mb {
namespace {

const std::string G = "hierarchy";

// =============================================================================================
// 1 + 2: TMA ring with per-load latency
// =============================================================================================

constexpr int kRecW = 8;                       // u64 words per CTA in the record
constexpr int kLatCap = 1024;                  // latency samples per CTA (kept in smem during the run)
constexpr int kRingDyn = 200 * 1024 + 1024;     // > half the SM's smem: one CTA per SM; 192 KB of ring + align
constexpr int kRingBufBytes = 192 * 1024;

struct RingArgs {
  int nbuf;         // distinct smem buffers; slot s writes buffer s % nbuf (nbuf < D: aliased, no data check)
  int box_rows;     // 128 B rows per box
  int bytes;        // box bytes (= expect_tx)
  int iters;        // loads per CTA
  int check_every;  // check 4 elements of every k-th load (0: never)
  int lat_from, lat_to;           // loads [from, to) store their latency (at most kLatCap per CTA)
  long long nboxes;               // boxes in the tensor (box b = rows [b*box_rows, +box_rows))
  int xboxes;                     // > 1: boxes across a row (box b = columns [(b % xboxes) * box_w, + box_w) of
  int box_w;                      // rows [(b / xboxes) * box_rows, + box_rows)): a GEMM operand's k-walk
  int pair;                       // 1: each load is two boxes of bytes / 2 (boxes b and b + stride, a GEMM stage's A
                                  // and B) into the slot's two halves, completing on its one barrier
  int think;                      // cycles the thread spins after each completed wait before it re-issues the slot
  int gap;                        // pair: cycles the thread spins between a load's first and second box
  int watch;                      // k_stage_pipe: 1: the watcher warp times the landings; 0: the consumer's wait end
  int straight;                   // k_stage_pipe, pair: both boxes' coordinates computed before the arrive.expect_tx
  int testwait;                   // k_stage_pipe: the producer's and consumer's waits spin on test_wait, not try_wait
  int sleep;                      // k_stage_pipe: the consumer holds a stage in __nanosleep(32) steps, not spinning
  uint32_t* lat2;                 // k_stage_pipe: [cta][2][kLatCap]: per sampled load its issue cycles and the
                                  // cycles from the consumer's release of its slot to the producer's clock read
  const long long* start;         // per CTA (per SM when by_sm): first box
  const long long* stride;        // per CTA (per SM when by_sm): box step (mod nboxes)
  int by_sm;                      // start, stride and delay_ns are indexed by the SM id (%smid), not the CTA
  uint32_t* lat;                  // [cta][kLatCap] latency samples (cycles)
  int probe_max;                  // k_ring: the most samples a probe takes (at most kLatCap)
  const long long* delay_ns;      // per CTA, or nullptr: start this long after a common %globaltimer instant
  unsigned long long* t0;         // that instant (0 before the launch: the first CTA sets it)
  unsigned long long* rec;        // [cta][kRecW]: g0, g1, cycles, smid, nlat, wait cycles, loads done, issue cycles
  int probe_think;                // cycles a probe spins between its loads
  unsigned* stop;                 // set by the first load CTA to finish: the probes stop then
  const int* role;                // k_ring, or nullptr: per CTA 0 idle (returns at once), 1 load, 2 probe
  int jitter;                     // k_ring: 1: each think time is drawn uniformly from [think/2, 3 think/2) (per-CTA LCG)
  int gt_issue;                   // k_ring: 1: the samples are the low 32 bits of %globaltimer (ns) at each re-issue of
                                  // loads [lat_from, ...), not latencies: when the SMs issue, on one clock
};

// A ring CTA's part: its role's entry, or load when the ring has no roles.
__device__ __host__ inline int ring_role(const int* role, int cta) {
  return role != nullptr ? role[cta] : 1;
}


// Thread 0 of each CTA: issue D loads (slot s: t_iss[s] = clock64; arrive.expect_tx(bytes); TMA 2D box load
// completing on bar[s]), then for every load in issue order: wait bar[s] (bounded try_wait loop), latency =
// clock64 after the wait - t_iss[s], optionally check the data, re-issue the next box into slot s.
// D is a template parameter so that the ring is unrolled and the per-slot state lives in registers; the
// latency samples go to smem and are copied out after the timed region (a global store in the loop would
// be ordered before the next release-arrive and slowed the loop down).
// A barrier phase completes only when its expect_tx bytes have all arrived, so each completed wait is a
// verified delivery of `bytes` bytes; the host also checks that every CTA completed all `iters` loads.
// Box b's first row, and its first column in x (0 unless the walk goes across rows).
__device__ __forceinline__ int box_origin(const RingArgs& a, long long b, int& x) {
  if (a.xboxes <= 1) return static_cast<int>(b * a.box_rows);
  x = static_cast<int>(b % a.xboxes) * a.box_w;
  return static_cast<int>(b / a.xboxes) * a.box_rows;
}

// The second box of a paired load: box bidx + st into the slot's second half, on the same barrier (the walk moves on
// by one box for it).
__device__ __forceinline__ void second_box(const RingArgs& a, const CUtensorMap& map, uint32_t dst, uint32_t fb,
                                           long long& bidx, long long st, long long nb) {
  bidx += st;
  if (bidx >= nb) bidx -= nb;
  int x = 0;
  const int y = box_origin(a, bidx, x);
  tma_load_2d(dst + static_cast<uint32_t>(a.bytes / 2), &map, x, y, fb);
}

// Group "loadlat": a probe CTA keeps one load (two boxes on one barrier when pair) in flight at a time while the other
// CTAs load the L2 or HBM: t = clock64; arrive.expect_tx; the loads; wait; latency = clock64 - t; spin probe_think; again,
// until the first load CTA is done (a.stop) or kLatCap samples. Its first 8 samples are not kept (TLB, warm-up). The
// probe's code is the same in every row, so what a row adds to the unloaded row is what the load adds to a landing.
__device__ void probe_loop(const CUtensorMap& map, const RingArgs& a, uint32_t bar, uint32_t dst, uint32_t* lat_s,
                           unsigned* err, int& nlat, int& done) {
  const unsigned who = blockIdx.x;
  const long long nb = a.nboxes, st = a.stride[who];
  long long bidx = a.start[who] % nb;
  uint32_t ph = 0;
  for (int i = 0; nlat < a.probe_max; ++i) {
    if (i % 4 == 0 && *reinterpret_cast<volatile unsigned*>(a.stop) != 0u) break;
    int x = 0;
    const int y = box_origin(a, bidx, x);
    const unsigned long long t = clk();
    mbar_arrive_expect_tx(bar, a.bytes);
    tma_load_2d(dst, &map, x, y, bar);
    if (a.pair) second_box(a, map, dst, bar, bidx, st, nb);
    if (!mbar_wait<WAIT_TRY>(bar, ph, err)) break;
    const unsigned long long t1 = clk();
    ph ^= 1u;
    ++done;
    if (i >= 8) lat_s[nlat++] = static_cast<uint32_t>(t1 - t);
    bidx += st;
    if (bidx >= nb) bidx -= nb;
    while (clk() - t1 < static_cast<unsigned long long>(a.probe_think)) {
    }
  }
}

template <int D>
__global__ void __launch_bounds__(32, 1) k_ring(const __grid_constant__ CUtensorMap map, const RingArgs a,
                                                unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t bars[D];
  __shared__ uint32_t lat_s[kLatCap];
  unsigned char* buf = align1024(dyn_raw);
  if (threadIdx.x != 0) return;
  const uint32_t bar0 = smem_u32(&bars[0]);
  uint32_t dst[D];
  unsigned long long t_iss[D];
  int y_s[D];
#pragma unroll
  for (int k = 0; k < D; ++k) {
    mbar_init(bar0 + 8u * k, 1);
    dst[k] = smem_u32(buf) + static_cast<uint32_t>((k % a.nbuf) * a.bytes);
    t_iss[k] = 0;
    y_s[k] = 0;
  }
  fence_mbar_init();
  prefetch_tmap(&map);
  const int role = ring_role(a.role, static_cast<int>(blockIdx.x));
  if (role == 0) {
    report_ring({0ull, 0ull, 1ull, 0ull, 0ull, 0, 0, 0u}, lat_s, a.lat + static_cast<size_t>(blockIdx.x) * kLatCap,
                a.rec + static_cast<size_t>(blockIdx.x) * kRecW, err);
    return;
  }
  if (role == 2) {
    int nlat = 0, done = 0;
    const unsigned long long g0 = gtime(), c0 = clk();
    probe_loop(map, a, bar0, dst[0], lat_s, err, nlat, done);
    const unsigned long long c1 = clk(), g1 = gtime();
    report_ring({g0, g1, c1 - c0, 0ull, 0ull, nlat, done, 0u}, lat_s, a.lat + static_cast<size_t>(blockIdx.x) * kLatCap,
                a.rec + static_cast<size_t>(blockIdx.x) * kRecW, err);
    return;
  }
  const unsigned who = a.by_sm ? smid() : blockIdx.x;
  const long long nb = a.nboxes, st = a.stride[who];
  long long bidx = a.start[who] % nb;
  int nlat = 0, done = 0, issued = 0, chk = a.check_every;
  unsigned bad = 0, lcg = 12345u + 7919u * blockIdx.x;
  unsigned long long wait_cyc = 0, issue_cyc = 0;
  if (a.delay_ns != nullptr) {
    // A common start 20 us after the first CTA arrives (all CTAs are resident by then), plus this CTA's delay.
    const unsigned long long now = gtime();
    unsigned long long t0 = atomicCAS(a.t0, 0ull, now + 20000ull);
    if (t0 == 0ull) t0 = now + 20000ull;
    const unsigned long long until = t0 + static_cast<unsigned long long>(a.delay_ns[who]);
    while (gtime() < until) {
    }
  }
  const unsigned long long g0 = gtime(), c0 = clk();
#pragma unroll
  for (int s = 0; s < D; ++s) {
    if (issued < a.iters) {
      const uint32_t fb = bar0 + 8u * s;
      int x = 0;
      y_s[s] = box_origin(a, bidx, x);
      t_iss[s] = clk();
      mbar_arrive_expect_tx(fb, a.bytes);
      tma_load_2d(dst[s], &map, x, y_s[s], fb);
      if (a.pair) {
        for (const unsigned long long tg = clk(); a.gap && clk() - tg < static_cast<unsigned long long>(a.gap);) {
        }
        second_box(a, map, dst[s], fb, bidx, st, nb);
      }
      issue_cyc += clk() - t_iss[s];
      bidx += st;
      if (bidx >= nb) bidx -= nb;
      ++issued;
    }
  }
  uint32_t ph = 0;
  int i = 0;
  bool ok = true;
  while (i < a.iters && ok) {
#pragma unroll
    for (int s = 0; s < D; ++s) {
      if (i < a.iters && ok) {
        const uint32_t fb = bar0 + 8u * s;
        const unsigned long long tw = clk();
        ok = mbar_wait<WAIT_TRY>(fb, ph, err);
        const unsigned long long t = clk();
        if (ok) {
          ++done;
          wait_cyc += t - tw;
          if (a.think) {
            unsigned long long th = static_cast<unsigned long long>(a.think);
            if (a.jitter) {
              lcg = lcg * 1664525u + 1013904223u;
              th = th / 2 + (th * (lcg >> 16)) / 65536u;
            }
            while (clk() - t < th) {
            }
          }
          if (!a.gt_issue && i >= a.lat_from && i < a.lat_to && nlat < kLatCap) lat_s[nlat++] = static_cast<uint32_t>(t - t_iss[s]);
          if (chk && --chk == 0) {
            chk = a.check_every;
            const unsigned char* bp = buf + static_cast<size_t>(s) * a.bytes;  // checked only when nbuf >= D
            const uint32_t rs[2] = {0u, static_cast<uint32_t>(a.box_rows - 1)}, cs[2] = {0u, 61u};
            for (uint32_t r : rs)
              for (uint32_t cc : cs)
                if (*reinterpret_cast<const volatile uint16_t*>(bp + swz128(r, cc)) != pattern(y_s[s] + r, cc)) ++bad;
            fence_proxy_async_smem();  // generic reads before the next async-proxy write of this buffer
          }
          if (issued < a.iters) {
            if (a.gt_issue && i >= a.lat_from && nlat < kLatCap) lat_s[nlat++] = static_cast<uint32_t>(gtime());
            int x = 0;
            y_s[s] = box_origin(a, bidx, x);
            t_iss[s] = clk();
            mbar_arrive_expect_tx(fb, a.bytes);
            tma_load_2d(dst[s], &map, x, y_s[s], fb);
            if (a.pair) {
              for (const unsigned long long tg = clk(); a.gap && clk() - tg < static_cast<unsigned long long>(a.gap);) {
              }
              second_box(a, map, dst[s], fb, bidx, st, nb);
            }
            issue_cyc += clk() - t_iss[s];
            bidx += st;
            if (bidx >= nb) bidx -= nb;
            ++issued;
          }
        }
        ++i;
      }
    }
    ph ^= 1u;
  }
  const unsigned long long c1 = clk(), g1 = gtime();
  if (a.role != nullptr) atomicExch(a.stop, 1u);
  report_ring({g0, g1, c1 - c0, wait_cyc, issue_cyc, nlat, done, bad}, lat_s, a.lat + static_cast<size_t>(blockIdx.x) * kLatCap,
              a.rec + static_cast<size_t>(blockIdx.x) * kRecW, err);
}

using RingKernel = void (*)(CUtensorMap, RingArgs, unsigned*);
// Group "pipe": a GEMM mainloop's ring without its MMAs, the load, the wait and the release in separate warps as in a
// warp-specialized kernel. Lane 0 of warp 0 (the producer) waits slot s's empty barrier, stores the clock, arms the
// slot's full barrier (arrive.expect_tx) and issues its loads (RingArgs::pair: two boxes, a stage's A and B); lane 0
// of warp 1 (the consumer) waits full, spins `think` cycles (the stage's MMAs) and arrives on empty; lane 0 of warp 2
// (the watcher) only waits each full phase in turn and stores the clock when it returns, so a sampled load's latency
// (watcher's clock - producer's clock, one SM's clock64) is its landing time, whether or not the consumer was
// waiting. rec: [5] the consumer's cycles in full waits, [7] the producer's in empty waits, [2] the consumer's loop.
template <int D>
__global__ void __launch_bounds__(96, 1) k_stage_pipe(const __grid_constant__ CUtensorMap map, const RingArgs a,
                                                      unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t full[D], empty[D];
  __shared__ uint32_t iss_s[kLatCap], land_s[kLatCap], rel_s[kLatCap];
  __shared__ uint16_t issue_s[kLatCap];
  __shared__ unsigned long long prod_wait_s, g0_s;
  unsigned char* buf = align1024(dyn_raw);
  const int warp = static_cast<int>(threadIdx.x / 32);
  const bool lead = threadIdx.x % 32 == 0;
  if (threadIdx.x == 0) {
    for (int k = 0; k < D; ++k) {
      mbar_init(smem_u32(&full[k]), 1);
      mbar_init(smem_u32(&empty[k]), 1);
    }
    fence_mbar_init();
    prefetch_tmap(&map);
    g0_s = gtime();
  }
  __syncthreads();
  const unsigned who = a.by_sm ? smid() : blockIdx.x;
  const int n = a.iters;
  auto sampled = [&](int i) { return i >= a.lat_from && i < a.lat_to && i - a.lat_from < kLatCap; };
  bool ok = true;
  if (warp == 0 && lead) {
    const long long nb = a.nboxes, st = a.stride[who];
    long long bidx = a.start[who] % nb;
    unsigned long long waited = 0;
    for (int i = 0; i < n && ok; ++i) {
      const int s = i % D;
      const uint32_t fb = smem_u32(&full[s]);
      if (i >= D) {
        const unsigned long long tw = clk();
        const uint32_t eb = smem_u32(&empty[s]), ep = static_cast<uint32_t>((i / D - 1) & 1);
        ok = a.testwait ? mbar_wait<WAIT_TEST>(eb, ep, err) : mbar_wait<WAIT_TRY>(eb, ep, err);
        waited += clk() - tw;
      }
      const uint32_t dst = smem_u32(buf) + static_cast<uint32_t>((s % a.nbuf) * a.bytes);
      if (a.straight) {
        // A mainloop's form: both boxes' coordinates first, then the arrive and the two issues back to back.
        long long b2 = bidx + st;
        if (b2 >= nb) b2 -= nb;
        int x = 0, x2 = 0;
        const int y = box_origin(a, bidx, x), y2 = box_origin(a, b2, x2);
        const unsigned long long t = clk();
        if (sampled(i)) iss_s[i - a.lat_from] = static_cast<uint32_t>(t);
        mbar_arrive_expect_tx(fb, a.bytes);
        tma_load_2d(dst, &map, x, y, fb);
        tma_load_2d(dst + static_cast<uint32_t>(a.bytes / 2), &map, x2, y2, fb);
        if (a.lat2 != nullptr && sampled(i)) issue_s[i - a.lat_from] = static_cast<uint16_t>(clk() - t);
        bidx = b2;
      } else {
        const unsigned long long t = clk();
        if (sampled(i)) iss_s[i - a.lat_from] = static_cast<uint32_t>(t);
        int x = 0;
        const int y = box_origin(a, bidx, x);  // (before the call: its x is an argument too)
        mbar_arrive_expect_tx(fb, a.bytes);
        tma_load_2d(dst, &map, x, y, fb);
        if (a.pair) second_box(a, map, dst, fb, bidx, st, nb);
        if (a.lat2 != nullptr && sampled(i)) issue_s[i - a.lat_from] = static_cast<uint16_t>(clk() - t);
      }
      bidx += st;
      if (bidx >= nb) bidx -= nb;
    }
    prod_wait_s = waited;
  } else if (warp == 2 && lead && a.watch) {
    for (int i = 0; i < n && ok; ++i) {
      ok = mbar_wait<WAIT_TRY>(smem_u32(&full[i % D]), static_cast<uint32_t>((i / D) & 1), err);
      if (sampled(i)) land_s[i - a.lat_from] = static_cast<uint32_t>(clk());
    }
  }
  unsigned long long c0 = 0, c1 = 0, cwait = 0;
  int done = 0;
  if (warp == 1 && lead) {
    c0 = clk();
    for (int i = 0; i < n && ok; ++i) {
      const int s = i % D;
      const unsigned long long tw = clk();
      const uint32_t fb = smem_u32(&full[s]), fp = static_cast<uint32_t>((i / D) & 1);
      ok = a.testwait ? mbar_wait<WAIT_TEST>(fb, fp, err) : mbar_wait<WAIT_TRY>(fb, fp, err);
      const unsigned long long t = clk();
      if (!ok) break;
      if (!a.watch && sampled(i)) land_s[i - a.lat_from] = static_cast<uint32_t>(t);
      cwait += t - tw;
      ++done;
      if (a.think && a.sleep)
        while (clk() - t < static_cast<unsigned long long>(a.think)) __nanosleep(32);
      else if (a.think)
        while (clk() - t < static_cast<unsigned long long>(a.think)) {
        }
      if (a.lat2 != nullptr && sampled(i + D)) rel_s[i + D - a.lat_from] = static_cast<uint32_t>(clk());  // frees load i + D's slot
      mbar_arrive(smem_u32(&empty[s]));
    }
    c1 = clk();
  }
  __syncthreads();
  if (warp == 1 && lead) {
    const unsigned long long g1 = gtime();
    const int nlat = std::max(0, std::min(static_cast<int>(kLatCap), std::min(a.lat_to, done) - a.lat_from));
    if (a.lat2 != nullptr) {
      uint32_t* o = a.lat2 + static_cast<size_t>(blockIdx.x) * 2 * kLatCap;
      for (int k = 0; k < nlat; ++k) {
        o[k] = issue_s[k];
        o[kLatCap + k] = iss_s[k] - rel_s[k];
      }
    }
    for (int k = 0; k < nlat; ++k) iss_s[k] = land_s[k] - iss_s[k];
    report_ring({g0_s, g1, c1 - c0, cwait, prod_wait_s, nlat, done, 0u}, iss_s,
                a.lat + static_cast<size_t>(blockIdx.x) * kLatCap, a.rec + static_cast<size_t>(blockIdx.x) * kRecW, err);
  }
}

RingKernel pipe_kernel(int D);


RingKernel ring_kernel(int D) {
  switch (D) {
    case 1: return k_ring<1>;
    case 2: return k_ring<2>;
    case 3: return k_ring<3>;
    case 4: return k_ring<4>;
    case 6: return k_ring<6>;
    case 8: return k_ring<8>;
    case 12: return k_ring<12>;
    default: throw std::runtime_error("k_ring: unsupported D " + std::to_string(D));
  }
}

RingKernel pipe_kernel(int D) {
  switch (D) {
    case 1: return k_stage_pipe<1>;
    case 2: return k_stage_pipe<2>;
    case 3: return k_stage_pipe<3>;
    case 4: return k_stage_pipe<4>;
    case 6: return k_stage_pipe<6>;
    default: throw std::runtime_error("k_stage_pipe: unsupported D " + std::to_string(D));
  }
}

struct RingBufs {
  DevBuf<long long> start, stride, delay;
  DevBuf<uint32_t> lat, lat2;
  DevBuf<unsigned long long> rec, t0;
  DevBuf<unsigned> stop;
  DevBuf<int> role;
  int cap;
  int entries;  // of start, stride, delay: CTAs, or SM ids (%smid < 1024 on Hopper's largest parts)
  explicit RingBufs(int ncta)
      : start(std::max(ncta, kSmIds)), stride(std::max(ncta, kSmIds)), delay(std::max(ncta, kSmIds)),
        lat(static_cast<size_t>(ncta) * kLatCap), lat2(static_cast<size_t>(ncta) * 2 * kLatCap), rec(ncta * kRecW), t0(1), stop(1), role(std::max(ncta, kSmIds)), cap(kLatCap), entries(std::max(ncta, kSmIds)) {}
  static constexpr int kSmIds = 1024;
};

struct RingCfg {
  const CUtensorMap* map;
  int box_rows, D, ncta, iters;
  long long nboxes;
  std::vector<long long> start, stride;  // per CTA
  bool flush;                            // flush L2 before every rep (HBM source)
  int reps;                              // measured reps (after one warm-up rep)
  std::vector<long long> delay_ns;       // per CTA start delays (empty: none)
  bool want_smids = false;               // report the SM of every CTA even when all SMs run one
  bool by_sm = false;                    // start, stride, delay_ns are per SM id (as many as RingBufs holds)
  int row_bytes = kRowBytes;             // bytes of each box row
  int xboxes = 1;                        // boxes across a tensor row (RingArgs::xboxes)
  bool pair = false;                     // each load two boxes on one barrier (RingArgs::pair)
  int think = 0;                         // RingArgs::think
  int gap = 0;                           // RingArgs::gap
  bool check_data = true;                // compare elements with the fill pattern (a 64-column tensor of it)
  int cluster = 1;                       // > 1: launched as clusters of this many CTAs (one GPC holds each cluster)
  bool pipe = false;                     // k_stage_pipe (producer, consumer and watcher warps) instead of k_ring
  bool watch = true;                     // RingArgs::watch
  bool straight = false;                 // RingArgs::straight
  bool testwait = false;                 // RingArgs::testwait
  bool timeline = false;                 // k_stage_pipe: record the issue and release-to-issue times (RingArgs::lat2)
  bool sleep = false;                    // RingArgs::sleep
  int probe_think = 0;                   // RingArgs::probe_think
  int probe_max = kLatCap;               // RingArgs::probe_max
  std::vector<int> role;                 // RingArgs::role (empty: every CTA loads); with roles, the latency samples are
                                         // the probes', the bandwidth the load CTAs'
  bool jitter = false;                   // RingArgs::jitter
  bool gt_issue = false;                 // RingArgs::gt_issue (RingOut::load_gt)
  bool sample_all = false;               // keep every load's latency (default: loads [2D, iters - D))
};

// The fields every ring sets: its tensor map and boxes, D loads in flight, ncta CTAs over nboxes boxes, the L2 flushed
// before each rep (an HBM source) or not, and reps measured reps; the rest keep their defaults.
RingCfg ring_cfg(const CUtensorMap& map, int box_rows, int D, int ncta, long long nboxes, bool flush, int reps) {
  RingCfg cfg;
  cfg.map = &map;
  cfg.box_rows = box_rows;
  cfg.D = D;
  cfg.ncta = ncta;
  cfg.nboxes = nboxes;
  cfg.flush = flush;
  cfg.reps = reps;
  return cfg;
}

struct RingOut {
  std::vector<double> gbs, lat;           // per rep; per sampled load (all measured reps)
  std::vector<double> issue, gap;         // k_stage_pipe, per sampled load: issue cycles, release-to-issue cycles
  std::vector<double> load_lat;           // with probes: the load CTAs' latency samples (lat: the probes')
  std::vector<std::vector<uint32_t>> load_gt;  // gt_issue: per load CTA its samples (%globaltimer at issue), last rep
  std::vector<int> load_gt_cta;                // ... and that CTA's index
  double bpc_sm = NAN;                    // median over reps: bytes per SM-cycle per SM (GB/s / (clk * ctas))
  double bpc_sm_clock64 = NAN;            // median over CTAs and reps: CTA bytes / CTA clock64 cycles
  double wait_frac = NAN;                 // mean fraction of the loop spent in the barrier wait
  double issue_frac = NAN;                // mean fraction spent in arrive.expect_tx + TMA issue
  std::string smids;                      // SM ids (runs with fewer CTAs than SMs)
  std::map<int, std::vector<double>> sm_lat;  // per SM id: its CTA's latency samples (all measured reps)
  std::map<int, std::vector<double>> sm_bpc;  // per SM id: its CTA's bytes per clock64 cycle, one per measured rep
  double span_us = NAN;                   // median span
  std::string problem;                    // host-side check failure
};

RingOut run_ring(Ctx& c, const RingCfg& cfg, RingBufs& b) {
  RingOut o;
  const int bytes = cfg.box_rows * cfg.row_bytes * (cfg.pair ? 2 : 1);  // one load's (a pair: both boxes)
  RingArgs a{};
  a.nbuf = std::min(cfg.D, kRingBufBytes / bytes);
  a.box_rows = cfg.box_rows;
  a.bytes = bytes;
  a.iters = cfg.iters;
  a.check_every = a.nbuf >= cfg.D && cfg.check_data ? 16 : 0;
  a.lat_from = cfg.sample_all ? 0 : 2 * cfg.D;
  a.lat_to = cfg.sample_all ? cfg.iters : cfg.iters - cfg.D;
  a.nboxes = cfg.nboxes;
  a.xboxes = cfg.xboxes;
  a.box_w = cfg.row_bytes / 2;
  a.pair = cfg.pair ? 1 : 0;
  a.think = cfg.think;
  a.gap = cfg.gap;
  a.watch = cfg.watch ? 1 : 0;
  a.straight = cfg.straight ? 1 : 0;
  a.testwait = cfg.testwait ? 1 : 0;
  a.sleep = cfg.sleep ? 1 : 0;
  a.lat2 = cfg.pipe && cfg.timeline ? b.lat2.p : nullptr;
  a.start = b.start.p;
  a.stride = b.stride.p;
  a.lat = b.lat.p;
  a.rec = b.rec.p;
  a.by_sm = cfg.by_sm;
  a.probe_think = cfg.probe_think;
  a.probe_max = std::min(cfg.probe_max, kLatCap);
  a.stop = b.stop.p;
  a.jitter = cfg.jitter ? 1 : 0;
  a.gt_issue = cfg.gt_issue ? 1 : 0;
  a.role = nullptr;
  if (!cfg.role.empty()) {
    if (cfg.role.size() != static_cast<size_t>(cfg.ncta)) throw std::runtime_error("run_ring: a role per CTA");
    CK(cudaMemcpy(b.role.p, cfg.role.data(), cfg.role.size() * sizeof(int), cudaMemcpyHostToDevice));
    a.role = b.role.p;
  }
  const size_t entries = cfg.start.size();  // ncta, or one per SM id with by_sm
  if (entries != cfg.stride.size() || entries > static_cast<size_t>(b.entries) || (!cfg.by_sm && entries != static_cast<size_t>(cfg.ncta)) ||
      (!cfg.delay_ns.empty() && cfg.delay_ns.size() != entries))
    throw std::runtime_error("run_ring: per-CTA / per-SM tables of the wrong size");
  CK(cudaMemcpy(b.start.p, cfg.start.data(), entries * sizeof(long long), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.stride.p, cfg.stride.data(), entries * sizeof(long long), cudaMemcpyHostToDevice));
  a.delay_ns = nullptr;
  a.t0 = b.t0.p;
  if (!cfg.delay_ns.empty()) {
    CK(cudaMemcpy(b.delay.p, cfg.delay_ns.data(), entries * sizeof(long long), cudaMemcpyHostToDevice));
    a.delay_ns = b.delay.p;
  }
  std::vector<double> bpcs, bpc_c, wf, isf, spans;
  const int reps = c.quick ? 1 : cfg.reps;
  for (int r = 0; r <= reps; ++r) {
    if (cfg.flush) flush_l2(c);
    if (a.delay_ns != nullptr) CK(cudaMemset(b.t0.p, 0, sizeof(unsigned long long)));
    CK(cudaMemset(b.stop.p, 0, sizeof(unsigned)));
    if (cfg.pipe) {
      if (cfg.cluster > 1) throw std::runtime_error("run_ring: the pipe kernel runs without clusters");
      pipe_kernel(cfg.D)<<<cfg.ncta, 96, kRingDyn>>>(*cfg.map, a, c.d_err);
    } else if (cfg.cluster > 1) {
      ClusterLaunch lc(cfg.ncta, cfg.cluster, 32, kRingDyn);
      CK(cudaLaunchKernelEx(&lc.cfg, ring_kernel(cfg.D), *cfg.map, a, c.d_err));
    } else {
      ring_kernel(cfg.D)<<<cfg.ncta, 32, kRingDyn>>>(*cfg.map, a, c.d_err);
    }
    CK_LAUNCH();
    if (r == 0) continue;  // warm-up (fills L2 for the L2 source; TLB, clocks)
    auto h = b.rec.get();
    std::vector<uint32_t> hl(static_cast<size_t>(cfg.ncta) * b.cap), hl2;
    CK(cudaMemcpy(hl.data(), b.lat.p, hl.size() * 4, cudaMemcpyDeviceToHost));
    if (cfg.pipe && cfg.timeline) {
      hl2.resize(static_cast<size_t>(cfg.ncta) * 2 * b.cap);
      CK(cudaMemcpy(hl2.data(), b.lat2.p, hl2.size() * 4, cudaMemcpyDeviceToHost));
    }
    unsigned long long mn = ~0ull, mx = 0, loads = 0;
    std::vector<unsigned long long> sms;
    double wsum = 0, isum = 0;
    int nload = 0;  // the CTAs that load (not the probes, not the idle)
    o.load_gt.clear();  // the last rep's only
    o.load_gt_cta.clear();
    const int* roles = cfg.role.empty() ? nullptr : cfg.role.data();
    for (int k = 0; k < cfg.ncta; ++k) nload += ring_role(roles, k) == 1;
    for (int k = 0; k < cfg.ncta; ++k) {
      const unsigned long long* q = &h[static_cast<size_t>(k) * kRecW];
      sms.push_back(q[3]);
      const int role = ring_role(roles, k);
      if (role == 0) continue;
      if (role == 2) {
        for (unsigned long long j = 0; j < q[4] && j < static_cast<unsigned long long>(b.cap); ++j)
          o.lat.push_back(double(hl[static_cast<size_t>(k) * b.cap + j]));
        if (q[4] < 16 && o.problem.empty()) o.problem = "probe CTA " + std::to_string(k) + " took " + std::to_string(q[4]) + " samples";
        continue;
      }
      mn = std::min(mn, q[0]);
      mx = std::max(mx, q[1]);
      if (q[6] != static_cast<unsigned long long>(cfg.iters) && o.problem.empty())
        o.problem = "CTA " + std::to_string(k) + " completed " + std::to_string(q[6]) + " of " +
                    std::to_string(cfg.iters) + " loads";
      loads += q[6];
      if (cfg.gt_issue) {
        o.load_gt_cta.push_back(k);
        o.load_gt.emplace_back(hl.begin() + static_cast<long>(static_cast<size_t>(k) * b.cap),
                               hl.begin() + static_cast<long>(static_cast<size_t>(k) * b.cap + std::min<unsigned long long>(q[4], b.cap)));
      }
      for (unsigned long long j = 0; !cfg.gt_issue && j < q[4] && j < static_cast<unsigned long long>(b.cap); ++j) {
        (roles != nullptr ? o.load_lat : o.lat).push_back(double(hl[static_cast<size_t>(k) * b.cap + j]));
        o.sm_lat[static_cast<int>(q[3])].push_back(double(hl[static_cast<size_t>(k) * b.cap + j]));
        if (cfg.pipe && cfg.timeline) {
          o.issue.push_back(double(hl2[static_cast<size_t>(k) * 2 * b.cap + j]));
          o.gap.push_back(double(static_cast<int32_t>(hl2[static_cast<size_t>(k) * 2 * b.cap + b.cap + j])));
        }
      }
      wsum += double(q[5]) / double(q[2]);
      isum += double(q[7]) / double(q[2]);
      bpc_c.push_back(double(q[6]) * bytes / double(q[2]));
      o.sm_bpc[static_cast<int>(q[3])].push_back(bpc_c.back());
    }
    std::sort(sms.begin(), sms.end());
    if (std::adjacent_find(sms.begin(), sms.end()) != sms.end() && o.problem.empty())
      o.problem = "two CTAs ran on the same SM";
    const double g = nload > 0 ? double(loads) * bytes / double(mx - mn) : 0.0;
    o.gbs.push_back(g);
    bpcs.push_back(nload > 0 ? g / (c.clk_ghz * nload) : 0.0);
    wf.push_back(nload > 0 ? wsum / nload : 0.0);
    isf.push_back(nload > 0 ? isum / nload : 0.0);
    if (cfg.ncta < c.sm_count || cfg.want_smids) {
      o.smids.clear();
      for (int k = 0; k < cfg.ncta; ++k) o.smids += (k ? "," : "") + std::to_string(h[static_cast<size_t>(k) * kRecW + 3]);
    }
    spans.push_back(nload > 0 ? double(mx - mn) / 1000.0 : 0.0);
  }
  o.bpc_sm = compute_stats(bpcs).median;
  o.bpc_sm_clock64 = compute_stats(bpc_c).median;
  o.wait_frac = compute_stats(wf).mean;
  o.issue_frac = compute_stats(isf).mean;
  o.span_us = compute_stats(spans).median;
  return o;
}

// Records "<base>_bw" (GB/s per rep) and "<base>_latency" (cycles per sampled load) of one ring run.
void record_ring(Ctx& c, const std::string& bw_name, const std::string& lat_name, const RingOut& o,
                 const std::string& what, JObj p) {
  if (!o.problem.empty()) {
    c.take_err();
    c.res->fail(bw_name, o.problem);
    return;
  }
  const Stats ls = compute_stats(o.lat);
  if (!o.smids.empty()) p.str("smids", o.smids);
  p.num("bytes_per_sm_cycle_per_sm", o.bpc_sm)
      .num("bytes_per_cycle_per_sm_clock64", o.bpc_sm_clock64)
      .num("latency_median_cycles", ls.median)
      .num("latency_mean_cycles", ls.mean)
      .num("littles_law_bytes_in_flight_per_sm", o.bpc_sm * ls.mean)
      .num("wait_fraction", o.wait_frac)
      .num("issue_fraction", o.issue_frac)
      .num("span_us_median", o.span_us)
      .num("sm_clock_ghz_used", c.clk_ghz);
  const std::string common =
      what + " One thread per CTA (1 CTA per SM, 200 KB smem) keeps D loads in flight: slot s has its own "
             "mbarrier; per load t_iss = clock64, mbarrier.arrive.expect_tx(B), cp.async.bulk.tensor.2d (bf16 box "
             "64 x B/128 rows, 128B swizzle); the thread waits the slots in issue order (bounded try_wait loop) and "
             "re-issues each slot as it completes (ring unrolled, per-slot state in registers, latency samples kept "
             "in smem and copied out after the timed region). Each completed phase = B bytes delivered (expect_tx); every CTA "
             "is checked to complete all its loads on distinct SMs, and 4 elements of every 16th load are compared "
             "with the tensor's pattern (not when D*B > 192 KB: then slots share smem buffers, see params). ";
  if (!record(c, bw_name, G, "GB/s", o.gbs,
              common + "Value: all bytes / (last CTA end - first CTA start) by %globaltimer, one sample per rep "
                       "(after a warm-up rep). params.bytes_per_sm_cycle_per_sm = GB/s / (SM clock x CTAs); "
                       "wait_fraction = share of the thread's time spent in the barrier waits (high: the memory "
                       "system sets the rate); issue_fraction = share spent from before arrive.expect_tx to after the "
                       "TMA instruction (high: the TMA issue stalls, i.e. back-pressure).",
              p))
    return;
  c.res->add(lat_name, G, "cycles", o.lat,
             common + "Value: per-load latency = clock64 when the slot's wait returned - clock64 before its "
                      "arrive.expect_tx (incl. ~120 cycles of mbarrier wake-up, as tma_load_latency_*), loads "
                      "[2D, iters-D) of every CTA and measured rep; median and mean over all samples. When the loop is "
                      "not memory-bound (low wait_fraction) a load may complete before its turn, so this is an upper bound.",
             p);
}

// =============================================================================================
// 3: launch + prologue + drain
// =============================================================================================

// V 0: nothing; 1: 16 mbarrier.init + fence.mbarrier_init + __syncthreads; 2: as 1 + barrier.cluster
// arrive.relaxed + wait (CUTLASS's cluster_arrive_relaxed + cluster_wait after the barrier init).
// Thread 0 stores %globaltimer at entry and at its end (after the prologue's last barrier).
template <int V>
__global__ void k_launch_probe(unsigned long long* rec) {
  unsigned long long g0 = 0;
  if (threadIdx.x == 0) g0 = gtime();
  if (V >= 1) {
    __shared__ __align__(8) uint64_t bars[16];
    if (threadIdx.x == 0) {
      for (int k = 0; k < 16; ++k) mbar_init(smem_u32(&bars[k]), 1);
      fence_mbar_init();
    }
    __syncthreads();
  }
  if (V == 2) cluster_sync_relaxed();
  if (threadIdx.x == 0) {
    rec[2 * blockIdx.x] = g0;
    rec[2 * blockIdx.x + 1] = gtime();
  }
}

// One thread spins on %globaltimer for ns nanoseconds (keeps the stream busy while the host enqueues).
__global__ void k_spin_ns(unsigned long long ns) {
  const unsigned long long g0 = gtime();
  while (gtime() - g0 < ns) {
  }
}

// %globaltimer resolution: one thread reads it 4096 times, records the positive increments.
__global__ void k_gt_tick(unsigned long long* out) {
  unsigned long long prev = gtime();
  int n = 0;
  for (int i = 0; i < 200000 && n < 256; ++i) {
    unsigned long long g = gtime();
    if (g != prev) {
      out[n++] = g - prev;
      prev = g;
    }
  }
  for (; n < 256; ++n) out[n] = 0;
}

// =============================================================================================
// 4: clock under wgmma load
// =============================================================================================

constexpr int kWgBatch = 8;     // wgmmas per commit group
constexpr int kWgWindows = 10;  // clock windows
constexpr int kWgSmemB = 4 * 8192, kWgSmemA = 2 * 4 * 2048, kWgDyn = 128 * 1024;  // dyn > used: 1 CTA/SM

// Two warpgroups per CTA (one CTA per SM). Fills the operand smem (B: 4 K-slices of 256 x 16 bf16; A: per
// warpgroup 4 K-slices of 64 x 16 bf16, no-swizzle layout as bench_wgmma) with kind 0 random bf16 (random sign,
// exponent 2^-7..2^0, random mantissa; different per CTA), 1 all 1.0, 2 all 0. Each warpgroup: `batches` x
// { wgmma.fence; 8 x wgmma m64n256k16 bf16 accumulating into one f32 accumulator (K-slices 0..3 twice);
// commit; wait_group 1 }, wait_group 0. Thread 0 records (clock64, %globaltimer) at the start and after every
// batches/kWgWindows batches; thread 0 stores its d[0] for the host check.
__global__ void __launch_bounds__(256, 1) k_wgmma_burn(int kind, long long batches, unsigned long long* win,
                                                     float* out, unsigned* smids) {
  extern __shared__ __align__(1024) unsigned char sm[];
  uint16_t* h = reinterpret_cast<uint16_t*>(sm);
  const int nel = (kWgSmemB + kWgSmemA) / 2;
  for (int e = threadIdx.x; e < nel; e += blockDim.x) {
    uint16_t v = 0;
    if (kind == 0) {
      uint32_t x = (static_cast<uint32_t>(e) + 0x9E3779B9u * (blockIdx.x + 1)) * 2654435761u;
      x ^= x >> 15;
      x *= 0x2C1B3C6Du;
      x ^= x >> 12;
      v = static_cast<uint16_t>(((x & 1u) << 15) | ((120u + ((x >> 1) & 7u)) << 7) | ((x >> 4) & 0x7Fu));
    } else if (kind == 1) {
      v = 0x3F80;  // 1.0
    }
    h[e] = v;
  }
  fence_proxy_async_smem();
  __syncthreads();
  const int wg = threadIdx.x >> 7;
  uint64_t da[4], db[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    db[k] = make_desc(smem_u32(sm + k * 8192), 128, 256);
    da[k] = make_desc(smem_u32(sm + kWgSmemB + wg * 8192 + k * 2048), 128, 256);
  }
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.f;
  const long long every = batches / kWgWindows;
  long long cnt = every;
  int w = 0;
  if (threadIdx.x == 0) {
    smids[blockIdx.x] = smid();
    win[(blockIdx.x * (kWgWindows + 1)) * 2] = clk();
    win[(blockIdx.x * (kWgWindows + 1)) * 2 + 1] = gtime();
  }
  for (long long b = 0; b < batches; ++b) {
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < kWgBatch; ++k) wgmma_bf16<256>(d, da[k & 3], db[k & 3], 1);
    wgmma_commit();
    wgmma_wait1();
    if (--cnt == 0) {
      cnt = every;
      if (threadIdx.x == 0 && w < kWgWindows) {
        ++w;
        unsigned long long* q = win + (blockIdx.x * (kWgWindows + 1) + w) * 2;
        q[0] = clk();
        q[1] = gtime();
      }
    }
  }
  wgmma_wait0();
  fence_regs(d);
  if (threadIdx.x == 0) out[blockIdx.x] = d[0];
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 128; ++i) s += d[i];
  if (s == 1234567.f) out[gridDim.x + threadIdx.x] = s;  // keeps every accumulator live
}

// nvidia-smi in loop mode (-lms) in the background; lines are kept with nvidia-smi's own timestamp.
struct SmiLoop {
  FILE* f = nullptr;
  pid_t pid = -1;
  std::thread th;
  std::mutex mu;
  std::vector<std::string> lines;
  std::atomic<int> n{0};
  void start(const std::string& fields, int period_ms) {
    std::string cmd = "echo $$; exec timeout 20 nvidia-smi --query-gpu=" + fields +
                      " --format=csv,noheader,nounits -i 0 -lms " + std::to_string(period_ms) + " 2>&1";
    f = popen(cmd.c_str(), "r");
    if (!f) return;
    char buf[1024];
    if (!std::fgets(buf, sizeof buf, f)) return;
    pid = static_cast<pid_t>(std::atol(buf));
    th = std::thread([this] {
      char b[1024];
      while (std::fgets(b, sizeof b, f)) {
        std::string s(b);
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
        std::lock_guard<std::mutex> g(mu);
        lines.push_back(s);
        ++n;
      }
    });
  }
  ~SmiLoop() { stop(); }
  void stop() {
    if (pid > 0) kill(pid, SIGTERM);  // the `timeout` process we started; it forwards the signal to nvidia-smi
    if (th.joinable()) th.join();
    if (f) pclose(f);
    f = nullptr;
    pid = -1;
  }
};

std::vector<std::string> split_csv(const std::string& s) {
  std::vector<std::string> v;
  size_t p = 0;
  while (true) {
    size_t q = s.find(',', p);
    std::string t = s.substr(p, q == std::string::npos ? std::string::npos : q - p);
    while (!t.empty() && t.front() == ' ') t.erase(t.begin());
    while (!t.empty() && t.back() == ' ') t.pop_back();
    v.push_back(t);
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return v;
}

// nvidia-smi "YYYY/MM/DD HH:MM:SS.mmm" (local time) -> ms since the epoch; NAN if it does not parse.
double smi_time_ms(const std::string& s) {
  std::tm tm{};
  int ms = 0;
  if (std::sscanf(s.c_str(), "%d/%d/%d %d:%d:%d.%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &ms) != 7)
    return NAN;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_isdst = -1;
  return double(std::mktime(&tm)) * 1000.0 + ms;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string jarr(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + json_num(v[i]);
  return s + "]";
}
std::string jarr_str(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", \"" : "\"") + json_escape(v[i]) + "\"";
  return s + "]";
}

// =============================================================================================

void part_loaded_latency(Ctx& c, uint16_t* big, long long big_rows, RingBufs& rb) {
  const long long l2_bytes = 8ll << 20;
  const int boxes_rows[3] = {64, 128, 256};  // 8, 16, 32 KB
  const int Ds[7] = {1, 2, 3, 4, 6, 8, 12};
  for (int src = 0; src < 2; ++src) {  // 0 = L2 (8 MiB, warm), 1 = HBM (2 GiB, flushed, no reuse)
    for (int br : boxes_rows) {
      const int bytes = br * kRowBytes;
      const long long rows = src == 0 ? l2_bytes / kRowBytes : big_rows;
      CUtensorMap map = make_map(big, rows, br);
      const long long nboxes = rows / br;
      for (int D : Ds) {
        RingCfg cfg = ring_cfg(map, br, D, c.sm_count, nboxes, src == 1, 3);
        // per CTA 8 MiB: L2 = the whole region once in its own order; HBM = its own contiguous slice
        cfg.iters = static_cast<int>((8ll << 20) / bytes);
        for (int k = 0; k < cfg.ncta; ++k) {
          cfg.start.push_back(src == 0 ? k * nboxes / cfg.ncta : k * (nboxes / cfg.ncta));
          cfg.stride.push_back(src == 0 ? pick_stride(k, nboxes) : 1);
        }
        RingOut o = run_ring(c, cfg, rb);
        const std::string sname = src == 0 ? "l2" : "hbm";
        const std::string tag = sname + "_box" + std::to_string(bytes / 1024) + "KB_d" + std::to_string(D);
        JObj p;
        p.str("source", sname).num("box_bytes", bytes).num("inflight_loads", D).num("inflight_bytes_per_sm",
                                                                                   double(D) * bytes)
            .num("ctas", cfg.ncta).num("bytes_per_cta", double(cfg.iters) * bytes)
            .boolean("smem_buffers_aliased", std::min(D, kRingBufBytes / bytes) < D);
        record_ring(c, "hier_loaded_bw_" + tag, "hier_loaded_latency_" + tag, o,
                    src == 0 ? "Loaded latency vs bytes in flight, L2 source: tensor of 8 MiB (first 8 MiB of a 2 GiB "
                               "buffer, warm after the warm-up rep); every CTA reads all of it once per rep, CTA k from "
                               "box k*boxes/CTAs with its own step coprime with the box count (different orders)."
                             : "Loaded latency vs bytes in flight, HBM source: 2 GiB tensor, L2 flushed before every "
                               "rep; CTA k reads 8 MiB of its own 1/CTAs slice sequentially (no reuse).",
                    p);
      }
    }
  }
  // GPU-wide load: 33 and 66 SMs at D = 4, B = 32 KB, and one SM for every D at B = 8 and 32 KB (132 SMs is
  // the sweep above)
  struct Sub {
    int n, box_rows, D;
  };
  std::vector<Sub> subs;
  for (int br : {64, 256})
    for (int D : Ds) subs.push_back({1, br, D});
  subs.push_back({33, 256, 4});
  subs.push_back({66, 256, 4});
  for (int src = 0; src < 2; ++src) {
    for (const Sub& sb : subs) {
      if (sb.n > c.sm_count) continue;
      const int br = sb.box_rows, bytes = br * kRowBytes, D = sb.D, n = sb.n;
      const long long rows = src == 0 ? l2_bytes / kRowBytes : big_rows;
      CUtensorMap map = make_map(big, rows, br);
      const long long nboxes = rows / br;
      RingCfg cfg = ring_cfg(map, br, D, n, nboxes, src == 1, 3);
      cfg.iters = static_cast<int>((8ll << 20) / bytes);
      for (int k = 0; k < n; ++k) {
        // same per-CTA placement as the all-SM run (slices of 1/SMs of the tensor)
        cfg.start.push_back(src == 0 ? k * nboxes / c.sm_count : k * (nboxes / c.sm_count));
        cfg.stride.push_back(src == 0 ? pick_stride(k, nboxes) : 1);
      }
      RingOut o = run_ring(c, cfg, rb);
      const std::string sname = src == 0 ? "l2" : "hbm";
      const std::string base = sname + "_box" + std::to_string(bytes / 1024) + "KB_d" + std::to_string(D);
      const std::string tag = base + "_" + std::to_string(n) + "sms";
      JObj p;
      p.str("source", sname).num("box_bytes", bytes).num("inflight_loads", D).num("inflight_bytes_per_sm",
                                                                                 double(D) * bytes)
          .num("ctas", n).num("bytes_per_cta", double(cfg.iters) * bytes)
          .boolean("smem_buffers_aliased", std::min(D, kRingBufBytes / bytes) < D);
      record_ring(c, "hier_loaded_bw_" + tag, "hier_loaded_latency_" + tag, o,
                  "As hier_loaded_*_" + base + " but only " + std::to_string(n) +
                      " CTA(s) (1 per SM, placed by the hardware scheduler; SM ids in params): latency vs GPU-wide "
                      "load.",
                  p);
    }
  }
}

void part_l2(Ctx& c, uint16_t* big, long long big_rows, RingBufs& rb) {
  const int br = 256, bytes = br * kRowBytes, D = 6;
  // --- footprint sweep
  for (int F : {4, 8, 16, 24, 32, 40, 48, 64, 96, 128, 256}) {
    const long long rows = (static_cast<long long>(F) << 20) / kRowBytes;
    CUtensorMap map = make_map(big, rows, br);
    RingCfg cfg = ring_cfg(map, br, D, c.sm_count, rows / br, false, 5);
    cfg.iters = static_cast<int>((16ll << 20) / bytes);
    for (int k = 0; k < cfg.ncta; ++k) {
      cfg.start.push_back(k * cfg.nboxes / cfg.ncta);
      cfg.stride.push_back(pick_stride(k, cfg.nboxes));
    }
    RingOut o = run_ring(c, cfg, rb);
    JObj p;
    p.num("footprint_bytes", double(F) * (1 << 20)).num("box_bytes", bytes).num("inflight_loads", D)
        .num("ctas", cfg.ncta).num("bytes_per_cta", double(cfg.iters) * bytes)
        .num("reads_per_byte_per_rep", double(cfg.iters) * bytes * cfg.ncta / (double(F) * (1 << 20)))
        .num("l2_bytes", c.prop.l2CacheSize);
    record_ring(c, "hier_l2_footprint_bw_" + std::to_string(F) + "MB", "hier_l2_footprint_latency_" + std::to_string(F) + "MB",
                o,
                "L2 footprint: all CTAs stream 32 KB boxes (D = 6) over the first " + std::to_string(F) +
                    " MiB of a 2 GiB tensor, 16 MiB per CTA per rep; CTA k walks the whole region from box "
                    "k*boxes/CTAs with its own step coprime with the box count, so every byte is read by many SMs "
                    "in different orders (at 4-8 MiB several SMs often read the same box at the same time). No "
                    "flush: the warm-up rep leaves what fits in L2; the measured reps show the hit bandwidth below "
                    "the L2 capacity and the move towards HBM bandwidth above it.",
                p);
  }
  // --- sharing degree, footprint far beyond L2
  {
    CUtensorMap map = make_map(big, big_rows, br);
    const long long nboxes = big_rows / br;
    const int iters = static_cast<int>((8ll << 20) / bytes);
    for (int g : {1, 2, 4, 8, 33, 132}) {
      RingCfg cfg = ring_cfg(map, br, D, c.sm_count, nboxes, true, 3);
      cfg.iters = iters;
      for (int k = 0; k < cfg.ncta; ++k) {
        cfg.start.push_back(static_cast<long long>(k / g) * iters);
        cfg.stride.push_back(1);
      }
      const int groups = (cfg.ncta + g - 1) / g;
      RingOut o = run_ring(c, cfg, rb);
      JObj p;
      p.num("sharing_group_ctas", g).num("groups", groups).num("box_bytes", bytes).num("inflight_loads", D)
          .num("ctas", cfg.ncta).num("bytes_per_cta", double(iters) * bytes)
          .num("distinct_bytes", double(groups) * iters * bytes)
          .num("distinct_bytes_gbs_median", compute_stats(o.gbs).median * groups / cfg.ncta);
      record_ring(c, "hier_l2_sharing_bw_group" + std::to_string(g), "hier_l2_sharing_latency_group" + std::to_string(g),
                  o,
                  "Sharing degree, footprint far beyond L2: 2 GiB tensor, L2 flushed before every rep; CTAs k with "
                  "the same k / " + std::to_string(g) + " form a group (last group smaller if " + std::to_string(g) +
                      " does not divide the CTA count) and read the same 8 MiB of boxes sequentially (32 KB boxes, "
                      "D = 6), starting together at launch (as GEMM CTAs reading the same operand tiles); groups read "
                      "disjoint data, so the first reader of a box misses and the others may hit or merge. Value: "
                      "TMA bytes delivered to smem per second; params.distinct_bytes_gbs_median = the same for the "
                      "distinct data (an upper bound of the HBM traffic rate). Extends tma_load_bw_pipe_l2_all_sms_"
                      "box32KB_shared* (16 MiB L2-resident tensor) to data that must come from HBM.",
                  p);
    }
  }
}

// A launch of the probe: `grid` CTAs x 384 threads, `dyn` bytes of dynamic smem, in clusters of `cluster` along x (1:
// none). The config points to `at`, the caller's.
cudaLaunchConfig_t probe_config(int grid, int dyn, int cluster, cudaLaunchAttribute& at) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid, 1, 1);
  cfg.blockDim = dim3(384, 1, 1);
  cfg.dynamicSmemBytes = dyn;
  at.id = cudaLaunchAttributeClusterDimension;
  at.val.clusterDim.x = cluster;
  at.val.clusterDim.y = 1;
  at.val.clusterDim.z = 1;
  cfg.attrs = &at;
  cfg.numAttrs = cluster > 1 ? 1 : 0;
  return cfg;
}

// One launch variant of k_launch_probe: name (after hier_launch_), the probe's V, grid, dynamic smem, cluster size (x),
// what it is.
struct LaunchVar {
  std::string name;
  int v, grid, dyn, cluster;
  std::string desc;
};

// Each variant launched back to back (events between launches, and in batches) and singly: event time, in-kernel span
// (%globaltimer), their difference (launch + drain overhead) and the CTAs' entry skew; results named
// hier_launch_<name>_* in group `group`.
void launch_variants(Ctx& c, const std::string& group, const std::vector<LaunchVar>& vars) {
  const int L = c.quick ? 10 : 50;
  cudaEvent_t ev[64], espin, ea, eb;
  for (int i = 0; i <= L; ++i) CK(cudaEventCreate(&ev[i]));
  CK(cudaEventCreate(&espin));
  CK(cudaEventCreate(&ea));
  CK(cudaEventCreate(&eb));
  for (const auto& vr : vars) {
    DevBuf<unsigned long long> rec(static_cast<size_t>(L) * vr.grid * 2);
    auto launch = [&](int i) {
      unsigned long long* r = rec.p + static_cast<size_t>(i) * vr.grid * 2;
      cudaLaunchAttribute at;
      cudaLaunchConfig_t cfg = probe_config(vr.grid, vr.dyn, vr.cluster, at);
      if (vr.v == 0)
        CK(cudaLaunchKernelEx(&cfg, k_launch_probe<0>, r));
      else if (vr.v == 1)
        CK(cudaLaunchKernelEx(&cfg, k_launch_probe<1>, r));
      else
        CK(cudaLaunchKernelEx(&cfg, k_launch_probe<2>, r));
    };
    // spans of launches [0, L): min entry -> max exit, entry skew (us)
    auto spans = [&](std::vector<double>& span, std::vector<double>& skew) {
      auto h = rec.get();
      for (int i = 0; i < L; ++i) {
        unsigned long long mn = ~0ull, mxe = 0, mx = 0;
        for (int k = 0; k < vr.grid; ++k) {
          const unsigned long long* q = &h[(static_cast<size_t>(i) * vr.grid + k) * 2];
          mn = std::min(mn, q[0]);
          mxe = std::max(mxe, q[0]);
          mx = std::max(mx, q[1]);
        }
        span.push_back(double(mx - mn) / 1000.0);
        skew.push_back(double(mxe - mn) / 1000.0);
      }
    };
    launch(0);  // warm-up
    CK_LAUNCH();
    int max_clusters = 0;
    if (vr.cluster > 1) {
      cudaLaunchAttribute at;
      cudaLaunchConfig_t cfg = probe_config(vr.grid, vr.dyn, vr.cluster, at);
      CK(cudaOccupancyMaxActiveClusters(&max_clusters, k_launch_probe<2>, &cfg));
    }
    // back to back, events between launches; a 3 ms spin kernel first so that the host has enqueued everything
    // before the GPU reaches the first launch
    std::vector<double> b2b_ev, b2b_span, b2b_skew, b2b_ovh;
    bool queue_full = true;
    {
      k_spin_ns<<<1, 1>>>(3000000ull);
      CK(cudaEventRecord(espin));
      CK(cudaEventRecord(ev[0]));
      for (int i = 0; i < L; ++i) {
        launch(i);
        CK(cudaEventRecord(ev[i + 1]));
      }
      if (cudaEventQuery(espin) != cudaErrorNotReady) queue_full = false;
      cudaGetLastError();  // clears the (non-sticky) not-ready status
      CK(cudaEventSynchronize(ev[L]));
      CK(cudaGetLastError());
      for (int i = 0; i < L; ++i) {
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
        b2b_ev.push_back(ms * 1000.0);
      }
      spans(b2b_span, b2b_skew);
      for (int i = 0; i < L; ++i) b2b_ovh.push_back(b2b_ev[i] - b2b_span[i]);
    }
    // back to back, events only around the batch (5 batches)
    std::vector<double> batch;
    for (int r = 0; r < 5; ++r) {
      k_spin_ns<<<1, 1>>>(3000000ull);
      CK(cudaEventRecord(espin));
      CK(cudaEventRecord(ea));
      for (int i = 0; i < L; ++i) launch(i);
      CK(cudaEventRecord(eb));
      if (cudaEventQuery(espin) != cudaErrorNotReady) queue_full = false;
      cudaGetLastError();
      CK(cudaEventSynchronize(eb));
      CK(cudaGetLastError());
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, ea, eb));
      batch.push_back(ms * 1000.0 / L);
    }
    // single launches separated by a sync
    std::vector<double> s_ev, s_span, s_skew, s_ovh;
    for (int i = 0; i < L; ++i) {
      CK(cudaEventRecord(ev[0]));
      launch(i);
      CK(cudaEventRecord(ev[1]));
      CK(cudaEventSynchronize(ev[1]));
      CK(cudaGetLastError());
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
      s_ev.push_back(ms * 1000.0);
    }
    spans(s_span, s_skew);
    for (int i = 0; i < L; ++i) s_ovh.push_back(s_ev[i] - s_span[i]);

    const std::string b = "hier_launch_" + vr.name;
    JObj p;
    p.str("variant", vr.desc.c_str()).num("grid", vr.grid).num("block", 384).num("dyn_smem", vr.dyn).num("cluster", vr.cluster)
        .num("launches", L).boolean("queue_filled_before_gpu_reached_it", queue_full);
    if (vr.cluster > 1) p.num("max_active_clusters", max_clusters);
    const std::string d0 = vr.desc + ". Thread 0 of every CTA stores %globaltimer at entry and at its "
                                                  "end (after the prologue). ";
    const std::string bb = "Back to back: a 3 ms one-thread spin kernel, then cudaEventRecord, " + std::to_string(L) +
                           " x (launch, cudaEventRecord) enqueued while the spin runs (queue full). ";
    const std::string ss = std::to_string(L) + " single launches: cudaEventRecord, launch, cudaEventRecord, "
                                               "cudaEventSynchronize. ";
    if (!record(c, b + "_b2b_event_us", group, "us", b2b_ev, d0 + bb + "Value: elapsed between consecutive events (one launch).", p))
      continue;
    c.res->add(b + "_b2b_batch_per_launch_us", group, "us", batch,
               d0 + "Back to back without events in between: spin kernel, event, " + std::to_string(L) +
                   " launches, event; value = elapsed / launches (5 batches).",
               p);
    c.res->add(b + "_b2b_span_us", group, "us", b2b_span,
               d0 + bb + "Value: in-kernel span = last CTA's end - first CTA's entry (%globaltimer) of each launch.", p);
    c.res->add(b + "_b2b_overhead_us", group, "us", b2b_ovh,
               d0 + bb + "Value: event time - in-kernel span per launch (launch + first-CTA start + drain/retire + "
                         "event overhead).",
               p);
    c.res->add(b + "_single_event_us", group, "us", s_ev, d0 + ss + "Value: elapsed between the two events.", p);
    c.res->add(b + "_single_span_us", group, "us", s_span,
               d0 + ss + "Value: in-kernel span = last CTA's end - first CTA's entry (%globaltimer).", p);
    c.res->add(b + "_single_overhead_us", group, "us", s_ovh, d0 + ss + "Value: event time - in-kernel span.", p);
    c.res->add(b + "_single_entry_skew_us", group, "us", s_skew,
               d0 + ss + "Value: last CTA's entry - first CTA's entry (CTA launch spread; includes the second wave "
                         "for (e)).",
               p);
  }
  for (int i = 0; i <= L; ++i) CK(cudaEventDestroy(ev[i]));
  CK(cudaEventDestroy(espin));
  CK(cudaEventDestroy(ea));
  CK(cudaEventDestroy(eb));
}


void part_launch(Ctx& c) {
  // globaltimer resolution
  {
    DevBuf<unsigned long long> t(256);
    k_gt_tick<<<1, 1>>>(t.p);
    CK_LAUNCH();
    std::vector<double> v;
    for (auto x : t.get())
      if (x) v.push_back(double(x));
    record(c, "hier_globaltimer_tick_ns", G, "ns", v,
           "One thread reads %globaltimer back to back; value = the positive increments seen (the timer's update "
           "step: in-kernel spans below are quantized to it).");
  }
  const int N = c.sm_count, dyn200 = 200 * 1024;
  CK(cudaFuncSetAttribute(k_launch_probe<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn200));
  CK(cudaFuncSetAttribute(k_launch_probe<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn200));
  CK(cudaFuncSetAttribute(k_launch_probe<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn200));
  launch_variants(c, G, {
      {"empty", 0, N, 0, 1, "(a) empty kernel, CTAs x 384 threads, no dynamic smem"},
      {"smem200KB", 0, N, dyn200, 1, "(b) as (a) with 200 KB dynamic smem (1 CTA per SM)"},
      {"smem200KB_mbar16", 1, N, dyn200, 1,
       "(c) as (b) + thread 0 initializes 16 mbarriers, fence.mbarrier_init.release.cluster, __syncthreads"},
      {"cluster2_smem200KB_mbar16", 2, N, dyn200, 2,
       "(d) as (c) launched as clusters of 2x1 (CTAs/2 clusters) + barrier.cluster.arrive.relaxed.aligned + "
       "barrier.cluster.wait.aligned after the init (CUTLASS's cluster_arrive_relaxed + cluster_wait)"},
      {"two_waves_smem200KB", 0, 2 * N, dyn200, 1, "(e) as (b) with 2 x CTAs: two waves of one CTA per SM"},
  });
}

void part_clock(Ctx& c) {
  const int N = c.sm_count;
  CK(cudaFuncSetAttribute(k_wgmma_burn, cudaFuncAttributeMaxDynamicSharedMemorySize, kWgDyn));
  // ~300 ms at 2 warpgroups x 128 cycles per m64n256k16 per SM at the measured clock
  const double target_s = c.quick ? 0.05 : 0.3;
  const long long batches = std::max<long long>(
      kWgWindows, static_cast<long long>(target_s * c.clk_ghz * 1e9 / (128.0 * kWgBatch * 2)) / kWgWindows * kWgWindows);
  DevBuf<unsigned long long> win(static_cast<size_t>(N) * (kWgWindows + 1) * 2);
  DevBuf<float> out(N + 256);
  DevBuf<unsigned> smids(N);
  // the nvidia-smi fields: power.draw.instant is newer; fall back without it
  std::string fields = "timestamp,clocks.sm,power.draw,power.draw.instant,temperature.gpu,clocks_throttle_reasons.active";
  {
    std::string t = popen_line("nvidia-smi --query-gpu=" + fields + " --format=csv,noheader,nounits -i 0 2>&1");
    if (t.find("alid") != std::string::npos || t.find("rror") != std::string::npos || t.empty())
      fields = "timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active";
  }
  const bool has_instant = fields.find("instant") != std::string::npos;
  const char* kinds[3] = {"random", "constant", "zero"};
  for (int kind : {2, 1, 0}) {  // increasing power: zero, constant, random
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // idle: let power and clocks settle
    SmiLoop smi;
    smi.start(fields, 25);
    for (int w = 0; w < 300 && smi.n.load() == 0; ++w) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    win.zero();
    const double t_launch = now_ms();
    k_wgmma_burn<<<N, 256, kWgDyn>>>(kind, batches, win.p, out.p, smids.p);
    CK(cudaGetLastError());
    while (cudaStreamQuery(0) == cudaErrorNotReady) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const double t_end = now_ms();
    cudaGetLastError();
    CK(cudaDeviceSynchronize());
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    smi.stop();
    auto hw = win.get();
    auto ho = out.get();
    auto hs = smids.get();
    // per CTA whole-run and per-window clocks
    std::vector<double> run_mhz, cyc_per_wgmma, run_cyc;
    std::vector<std::vector<double>> wmhz(kWgWindows), wend(kWgWindows);
    unsigned long long gmin = ~0ull, gmax = 0;
    for (int k = 0; k < N; ++k) {
      const unsigned long long* q = &hw[static_cast<size_t>(k) * (kWgWindows + 1) * 2];
      gmin = std::min(gmin, q[1]);
      gmax = std::max(gmax, q[2 * kWgWindows + 1]);
      run_mhz.push_back(double(q[2 * kWgWindows] - q[0]) / double(q[2 * kWgWindows + 1] - q[1]) * 1000.0);
      run_cyc.push_back(double(q[2 * kWgWindows] - q[0]));
      cyc_per_wgmma.push_back(double(q[2 * kWgWindows] - q[0]) / (double(batches / kWgWindows * kWgWindows) * kWgBatch * 2));
      for (int w = 0; w < kWgWindows; ++w) {
        wmhz[w].push_back(double(q[2 * (w + 1)] - q[2 * w]) / double(q[2 * (w + 1) + 1] - q[2 * w + 1]) * 1000.0);
        wend[w].push_back(double(q[2 * (w + 1) + 1] - q[1]) / 1e6);
      }
    }
    std::vector<double> wmed, wendm;
    for (int w = 0; w < kWgWindows; ++w) {
      wmed.push_back(compute_stats(wmhz[w]).median);
      wendm.push_back(compute_stats(wend[w]).median);
    }
    // check: every CTA on its own SM; accumulator value per kind
    std::string problem;
    std::vector<unsigned> ss(hs.begin(), hs.end());
    std::sort(ss.begin(), ss.end());
    if (std::adjacent_find(ss.begin(), ss.end()) != ss.end()) problem = "two CTAs ran on the same SM; ";
    const double expect = kind == 1 ? 16.0 * kWgBatch * double(batches) : 0.0;
    int bad = 0;
    for (int k = 0; k < N; ++k) {
      const double v = ho[k];
      if (!std::isfinite(v)) ++bad;
      else if (kind == 2 && v != 0.0) ++bad;
      else if (kind == 1 && std::fabs(v - expect) > 1e-3 * expect) ++bad;
    }
    const std::string numerics = bad ? "FAIL (" + std::to_string(bad) + " CTAs)" : "pass";
    // nvidia-smi samples taken while the kernel ran
    std::vector<double> smi_clk, smi_pw, smi_pwi, smi_temp, smi_t;
    std::vector<std::string> smi_reasons, smi_lines;
    {
      std::lock_guard<std::mutex> g(smi.mu);
      for (auto& l : smi.lines) {
        auto f = split_csv(l);
        if (f.size() < 5) continue;
        const double t = smi_time_ms(f[0]);
        if (!std::isfinite(t)) continue;
        const bool in_run = t > t_launch + 20 && t < t_end;
        smi_lines.push_back(std::string(in_run ? "run " : "out ") + json_num(std::round(t - t_launch)) + " ms: " + l);
        if (!in_run) continue;
        auto num = [](const std::string& x, std::vector<double>& v) {  // skips "[N/A]" and the like
          char* e = nullptr;
          const double d = std::strtod(x.c_str(), &e);
          if (e != x.c_str()) v.push_back(d);
        };
        smi_t.push_back(t - t_launch);
        num(f[1], smi_clk);
        num(f[2], smi_pw);
        size_t i = 3;
        if (has_instant) num(f[i++], smi_pwi);
        num(f[i++], smi_temp);
        if (i < f.size() && std::find(smi_reasons.begin(), smi_reasons.end(), f[i]) == smi_reasons.end())
          smi_reasons.push_back(f[i]);
      }
    }
    const double span_ms = double(gmax - gmin) / 1e6;
    const double flops = 2.0 * 64 * 256 * 16 * kWgBatch * double(batches) * 2 * N;
    JObj p;
    p.str("operands", kinds[kind]).num("ctas", N).num("warpgroups_per_cta", 2).num("wgmma_per_warpgroup",
                                                                                  double(batches) * kWgBatch)
        .str("numerics_check", numerics)
        .num("run_span_ms", span_ms)
        .num("host_seen_run_ms", t_end - t_launch)
        .num("sm_clock_mhz_cycles_over_host_time", compute_stats(run_cyc).median / ((t_end - t_launch) * 1e3))
        .num("tflops", flops / (span_ms * 1e-3) / 1e12)
        .num("sm_cycles_per_wgmma_per_sm_median", compute_stats(cyc_per_wgmma).median)
        .raw("window_mhz_median_over_ctas", jarr(wmed))
        .raw("window_end_ms_median", jarr(wendm))
        .str("smi_fields", fields)
        .raw("smi_samples_in_run_ms", jarr(smi_t))
        .raw("smi_clocks_sm_mhz", jarr(smi_clk))
        .raw("smi_power_draw_w", jarr(smi_pw))
        .raw("smi_power_draw_instant_w", jarr(smi_pwi))
        .raw("smi_temperature_c", jarr(smi_temp))
        .raw("smi_throttle_reasons_seen", jarr_str(smi_reasons))
        .raw("smi_lines", jarr_str(smi_lines));
    if (!problem.empty()) {
      c.take_err();
      c.res->fail("hier_clock_wgmma_" + std::string(kinds[kind]) + "_mhz", problem);
      continue;
    }
    if (bad)
      c.res->notes.push_back("hier_clock_wgmma_" + std::string(kinds[kind]) + ": accumulator check " + numerics +
                             " (expected " + json_num(expect) + ", CTA 0 got " + json_num(ho[0]) + ")");
    const std::string base = "Clock under load: " + std::to_string(N) + " CTAs (1 per SM) x 2 warpgroups, each " +
                             "issuing m64n256k16 bf16 wgmmas (dense, A and B from smem, no swizzle, accumulating into "
                             "one f32 accumulator; groups of 8, wait_group 1) for ~" +
                             json_num(target_s * 1000) + " ms; smem operands " +
                             (kind == 0 ? "random bf16 (random sign, exponent 2^-7..2^0, random mantissa)"
                                        : kind == 1 ? "all 1.0" : "all zero") +
                             ". Kinds run in the order zero, constant, random with 1 s idle before each. nvidia-smi refreshes its "
                             "values about every 100 ms (repeated lines). params.sm_clock_mhz_cycles_over_host_time = "
                             "median CTA cycles / host-seen run time (launch to completion, cross-check of "
                             "%globaltimer). ";
    std::printf("  clock under wgmma load (%s): windows (MHz) ", kinds[kind]);
    for (double m : wmed) std::printf("%.0f ", m);
    std::printf("| smi %zu samples\n", smi_clk.size());
    if (!record(c, "hier_clock_wgmma_" + std::string(kinds[kind]) + "_mhz", G, "MHz", run_mhz,
                base + "Value per CTA: clock64 delta / %globaltimer delta x 1000 over the whole run (thread 0); "
                       "params.window_mhz_median_over_ctas: the same per tenth of the run, median over CTAs. "
                       "Accumulator checked (zero: 0, constant: 128 x batches exactly, random: finite).",
                p))
      continue;
    if (!smi_clk.empty()) {
      c.res->add("hier_clock_wgmma_" + std::string(kinds[kind]) + "_smi_clock_mhz", G, "MHz", smi_clk,
                 base + "Value: nvidia-smi clocks.sm samples (-lms 25, in a background process) whose nvidia-smi "
                        "timestamp lies inside the run.",
                 p);
      c.res->add("hier_clock_wgmma_" + std::string(kinds[kind]) + "_smi_power_w", G, "W",
                 has_instant ? smi_pwi : smi_pw,
                 base + "Value: nvidia-smi " + (has_instant ? "power.draw.instant" : "power.draw") +
                     " samples inside the run (power.draw, a moving average, is in params).",
                 p);
    } else {
      c.res->notes.push_back("hier_clock_wgmma_" + std::string(kinds[kind]) +
                             ": no nvidia-smi sample fell inside the run");
    }
  }
}

}  // namespace

namespace {

// What the combining groups ("combine", "smpairs") share: a 2 GiB pattern-filled tensor of 128-byte rows read from
// HBM in 32 KB boxes, 6 in flight per SM, every CTA 8 MiB, one CTA per SM, the SMs recorded.
struct SharedReads {
  static constexpr size_t kBigBytes = 2ull << 30;
  static constexpr int kBoxRows = 256, kBytes = kBoxRows * kRowBytes, kD = 6;
  const long long big_rows = static_cast<long long>(kBigBytes / kRowBytes);
  const int iters = static_cast<int>((8ll << 20) / kBytes);
  DevBuf<uint16_t> big;
  RingBufs rb;
  CUtensorMap map;
  explicit SharedReads(Ctx& c) : big(kBigBytes / 2), rb(c.sm_count) {
    fill_pattern(c, big.p, static_cast<size_t>(big_rows));
    CK(cudaFuncSetAttribute(ring_kernel(kD), cudaFuncAttributeMaxDynamicSharedMemorySize, kRingDyn));
    map = make_map(big.p, big_rows, kBoxRows);
  }
  // What every measurement of these groups records beside its pattern: the box, the loads in flight, the CTAs, the
  // bytes per CTA and the distinct bytes of its `distinct_sets` data sets.
  void record_params(JObj& p, int ncta, long long distinct_sets) const {
    p.num("box_bytes", kBytes).num("inflight_loads", kD).num("ctas", ncta).num("bytes_per_cta", double(iters) * kBytes)
        .num("distinct_bytes", double(distinct_sets) * iters * kBytes);
  }
  // The ring of one measurement, without its per-CTA (or per-SM) tables.
  RingCfg cfg(int ncta) const {
    RingCfg g = ring_cfg(map, kBoxRows, kD, ncta, big_rows / kBoxRows, true, 3);
    g.iters = iters;
    g.want_smids = true;
    return g;
  }
};

// How many different values `v` holds (the distinct data sets of a measurement's start table).
long long distinct_values(std::vector<long long> v) {
  std::sort(v.begin(), v.end());
  return std::unique(v.begin(), v.end()) - v.begin();
}

}  // namespace

namespace {
// The data set of CTA k when pairs d CTAs apart read the same boxes in runs of 2d CTAs starting at CTA `off` (CTA
// off + i of each run's first half with CTA off + i + d); CTAs before `off` or past the last whole run read their
// own data. Pairs take ids below n / 2, the others n / 2 + k. `second`: whether k is its pair's later CTA.
long long dist_pair(int k, int d, int off, int n, long long* second) {
  const int j = k - off;
  const int run = j / (2 * d), i = j % (2 * d);
  const bool paired = j >= 0 && off + (run + 1) * 2 * d <= n;
  *second = paired && i >= d;
  return paired ? static_cast<long long>(run) * d + i % d : n / 2 + k;
}
}  // namespace

// Group "combine": when do identical TMA reads of two SMs reach the L2 as one? Pairs of CTAs read the same
// 8 MiB of boxes (HBM-sourced: L2 flushed before every rep; pairs read disjoint data), the second CTA of each
// pair starting a fixed delay after the first (a common %globaltimer instant, 32 ns resolution), with the pair
// on neighbouring SMs (CTAs 2j, 2j+1) or far apart (CTAs j, j + n/2). Run under Nsight Compute, the L2 request
// counters per delivered byte show how far apart two readers may be and still combine; the bandwidth alone shows
// whether the second reader saves L2 work. A run with no sharing is the baseline.
void bench_l2_combine(Ctx& c) {
  SharedReads rig(c);
  const int iters = rig.iters;
  struct Case {
    const char* pattern;
    long long delay;
  };
  std::vector<Case> cases = {{"none", 0}};
  for (long long d : {0, 32, 64, 128, 256, 512, 1024, 2048, 4096}) cases.push_back({"adjacent", d});
  for (long long d : {0, 128, 512}) cases.push_back({"far", d});
  // Pairs d CTAs apart (blocks of 2d CTAs: CTA i of the first half with CTA i + d; CTAs past the last whole
  // block read their own data), both starting together.
  for (int d : {2, 4, 8, 12, 16, 24, 33, 48}) cases.push_back({"dist", d});
  // Pairs 4 CTAs apart (as dist4), the second starting a delay after the first; far pairs with longer delays.
  for (long long d : {128, 512, 2048, 4096}) cases.push_back({"near4", d});
  for (long long d : {2048, 4096}) cases.push_back({"far", d});
  const int n = c.sm_count, half = n / 2;
  for (const Case& cs : cases) {
    RingCfg cfg = rig.cfg(n);
    const std::string pat = cs.pattern;
    for (int k = 0; k < n; ++k) {
      long long pair = k, second = 0;  // which data the CTA reads; whether it is the pair's later reader
      if (pat == "adjacent") pair = k / 2, second = k % 2;
      if (pat == "far") pair = k % half, second = k >= half && k < 2 * half;
      if (pat == "dist" || pat == "near4") {
        const int d = pat == "dist" ? static_cast<int>(cs.delay) : 4;
        pair = dist_pair(k, d, 0, n, &second);
        second = second && pat == "near4";
      }
      cfg.start.push_back(pair * iters);
      cfg.stride.push_back(1);
      cfg.delay_ns.push_back(second && pat != "dist" ? cs.delay : 0);
    }
    const long long distinct = distinct_values(cfg.start);
    RingOut o = run_ring(c, cfg, rig.rb);
    JObj p;
    p.str("pattern", pat).num(pat == "dist" ? "distance_ctas" : "delay_ns", double(cs.delay));
    if (pat == "near4") p.num("distance_ctas", 4);
    rig.record_params(p, n, distinct);
    const std::string name = "l2_combine_" + pat +
                             (pat == "none"   ? std::string()
                              : pat == "dist" ? std::to_string(cs.delay)
                                              : "_delay" + std::to_string(cs.delay) + "ns");
    record_ring(c, name + "_bw", name + "_latency", o,
                "L2 request combining vs the time between two readers: every CTA reads 8 MiB of 32 KB boxes (D = 6, "
                "2 GiB tensor, L2 flushed before every rep); pattern adjacent: CTAs 2j and 2j+1 read the same boxes "
                "(neighbouring SMs), the odd one starting delay_ns after the even one (a common %globaltimer "
                "instant 20 us after the first CTA arrives, plus the delay); far: CTAs j and j + SMs/2; distD: CTAs "
                "i and i + D in each block of 2D CTAs (CTAs past the last whole block read their own data), no delay; "
                "near4: as dist4, the second CTA of each pair starting delay_ns after the first; "
                "none: every CTA its own data. Pairs read disjoint data. Run under Nsight Compute (lts__t_sectors_srcunit_tex_op_"
                "read per delivered byte) to see which identical requests reached the L2 as one.",
                p);
  }
}

// The per-CTA tables of a ring whose CTA pairs d apart, in runs of 2d from CTA `off`, read the same data (dist_pair;
// d = 0: every CTA its own), each CTA's data `iters` boxes long, all starting together.
void pair_tables(RingCfg& cfg, int d, int off, int iters) {
  for (int k = 0; k < cfg.ncta; ++k) {
    long long second = 0;
    cfg.start.push_back((d == 0 ? k : dist_pair(k, d, off, cfg.ncta, &second)) * iters);
    cfg.stride.push_back(1);
    cfg.delay_ns.push_back(0);
  }
}

// Group "blockedge": do CTA pairs combine by their distance in launch order or by aligned blocks of 16 CTAs? Pairs
// d CTAs apart as in "combine" (dist{d}: runs of 2d CTAs from CTA 0, for d = 8 every pair inside an aligned block of
// 16, for d = 12 a third) and the same pairs shifted by `off` CTAs (dist{d}_off{off}: runs from CTA off; d = 8, off 8
// and d = 12, off 4 put every pair across a block's edge: CTAs 8-15 with 16-23, 4-15 with 16-27, ...). A distance rule
// gives the shifted pairs what the unshifted get; aligned blocks of 16 give them what far pairs get. HBM-sourced as
// "combine" (L2 flushed before every rep), all CTAs starting together; the baseline `none` is rerun alongside. Meant
// to run under Nsight Compute (lts__t_sectors_srcunit_tex_op_read per delivered byte).
void bench_l2_block_edge(Ctx& c) {
  SharedReads rig(c);
  const int n = c.sm_count;
  struct Case {
    int d, off;
  };
  for (const Case& cs : {Case{0, 0}, Case{2, 0}, Case{8, 0}, Case{8, 8}, Case{12, 0}, Case{12, 4}}) {
    RingCfg cfg = rig.cfg(n);
    pair_tables(cfg, cs.d, cs.off, rig.iters);
    const long long distinct = distinct_values(cfg.start);
    RingOut o = run_ring(c, cfg, rig.rb);
    JObj p;
    p.str("pattern", cs.d == 0 ? "none" : "dist").num("distance_ctas", cs.d).num("offset_ctas", cs.off);
    rig.record_params(p, n, distinct);
    const std::string name = cs.d == 0 ? std::string("l2_edge_none")
                                       : "l2_edge_dist" + std::to_string(cs.d) + "_off" + std::to_string(cs.off);
    record_ring(c, name + "_bw", name + "_latency", o,
                "L2 request combining by launch order, at the edges of aligned blocks of 16 CTAs: every CTA reads 8 MiB "
                "of 32 KB boxes (D = 6, 2 GiB tensor, L2 flushed before every rep), all starting together; distD_offO: "
                "CTAs O + i and O + i + D in each run of 2D CTAs from CTA O read the same boxes (CTAs before O or past "
                "the last whole run their own data); none: every CTA its own data. Run under Nsight Compute "
                "(lts__t_sectors_srcunit_tex_op_read per delivered byte).",
                p);
  }
}

// Group "clusteredge": the same pairs as "blockedge" in a grid launched as clusters of C CTAs (1D, so CTA k is rank
// k % C of cluster k / C): is the block that combines 16 CTAs or 16 clusters? With C = 2, pairs 16 apart (CTAs 0-15
// with 16-31, ...) lie in one block of 16 clusters and never in one of 16 CTAs; pairs 8 apart shifted by 8 straddle
// every 16-CTA edge and half of them lie in one 16-cluster block. d = 1 pairs the two CTAs of a cluster (with C = 4,
// d = 2 its other TPC's). As many clusters as fit at once (30 of 4 on the H200); HBM-sourced, all CTAs starting
// together; meant to run under Nsight Compute as "blockedge".
void bench_l2_cluster_edge(Ctx& c) {
  SharedReads rig(c);
  const int n = c.sm_count;
  struct Case {
    int cluster, d, off;
  };
  for (const Case& cs : {Case{2, 0, 0}, Case{2, 1, 0}, Case{2, 2, 0}, Case{2, 8, 0}, Case{2, 8, 8}, Case{2, 16, 0},
                         Case{4, 0, 0}, Case{4, 1, 0}, Case{4, 2, 0}, Case{4, 4, 0}, Case{4, 8, 0}, Case{4, 16, 0},
                         Case{4, 32, 0}}) {
    // As many whole clusters as fit at once (one CTA per SM): 66 of 2, 30 of 4 on the H200.
    int fit = 0;
    {
      ClusterLaunch lc(cs.cluster * (n / cs.cluster), cs.cluster, 32, kRingDyn);
      CK(cudaOccupancyMaxActiveClusters(&fit, ring_kernel(SharedReads::kD), &lc.cfg));
    }
    RingCfg cfg = rig.cfg(std::min(n / cs.cluster, fit) * cs.cluster);
    cfg.cluster = cs.cluster;
    pair_tables(cfg, cs.d, cs.off, rig.iters);
    const long long distinct = distinct_values(cfg.start);
    RingOut o = run_ring(c, cfg, rig.rb);
    JObj p;
    p.str("pattern", cs.d == 0 ? "none" : "dist").num("cluster_ctas", cs.cluster).num("distance_ctas", cs.d)
        .num("offset_ctas", cs.off);
    rig.record_params(p, cfg.ncta, distinct);
    const std::string base = "l2_cedge_c" + std::to_string(cs.cluster) + "_";
    const std::string name = cs.d == 0 ? base + "none" : base + "dist" + std::to_string(cs.d) + "_off" + std::to_string(cs.off);
    record_ring(c, name + "_bw", name + "_latency", o,
                "L2 request combining by launch order in a grid of clusters (1D, cluster_ctas CTAs each): as l2_edge_*, "
                "CTAs O + i and O + i + D in each run of 2D CTAs from CTA O read the same boxes (8 MiB of 32 KB boxes "
                "each, D = 6, L2 flushed before every rep), all starting together; none: every CTA its own data. Run "
                "under Nsight Compute (lts__t_sectors_srcunit_tex_op_read per delivered byte).",
                p);
  }
}

// Group "smlat": whether the SMs differ in how fast a TMA ring runs on them (the GPCs' distance to the L2 and
// HBM). Thread 0 of every SM (one CTA each, all starting together) keeps D loads of its own boxes in flight and
// records, per SM id, the median latency of its loads and its bytes per clock64 cycle. Cases: L2-resident 1 KB
// boxes, 1 in flight (every SM's unloaded latency at once: 132 KB in flight on the GPU); L2-resident 32 KB boxes,
// 2 and 4 in flight (loaded; the 2-stage ring is latency-bound); HBM-sourced 32 KB boxes, 2 in flight (L2 flushed
// before every rep). L2 source: an 8 MiB tensor, every CTA reads all of it in its own order (as
// hier_loaded_latency_l2_*); HBM: each CTA its own 8 MiB slice of 2 GiB. params.per_sm: "smid:median latency
// cycles:bytes per cycle" for every SM; which GPC an SM belongs to is in the gpc group's cluster maps.
void bench_l2_sm_latency(Ctx& c) {
  const PatternTensor big(c, 2ull << 30);
  RingBufs rb(c.sm_count);
  const long long l2_rows = (8ll << 20) / kRowBytes;
  struct Case {
    const char* src;
    int box_rows, D;
  };
  for (const Case& cs : {Case{"l2", 8, 1}, Case{"l2", 256, 2}, Case{"l2", 256, 4}, Case{"hbm", 256, 2}}) {
    const bool hbm = std::string(cs.src) == "hbm";
    CK(cudaFuncSetAttribute(ring_kernel(cs.D), cudaFuncAttributeMaxDynamicSharedMemorySize, kRingDyn));
    const long long rows = hbm ? big.rows : l2_rows;
    CUtensorMap map = make_map(big.p, rows, cs.box_rows);
    const long long nboxes = rows / cs.box_rows;
    const int bytes = cs.box_rows * kRowBytes;
    RingCfg cfg = ring_cfg(map, cs.box_rows, cs.D, c.sm_count, nboxes, hbm, 3);
    cfg.iters = static_cast<int>(std::min<long long>((hbm ? 8ll << 20 : 2ll << 20) / bytes, 4096));
    cfg.want_smids = true;
    cfg.sample_all = cs.D == 1;
    for (int k = 0; k < cfg.ncta; ++k) {
      cfg.start.push_back(hbm ? k * (nboxes / cfg.ncta) : k * nboxes / cfg.ncta);
      cfg.stride.push_back(hbm ? 1 : pick_stride(k, nboxes));
    }
    RingOut o = run_ring(c, cfg, rb);
    std::string per_sm;
    for (const auto& [sm, lat] : o.sm_lat) {
      const auto bpc = o.sm_bpc.find(sm);
      per_sm += (per_sm.empty() ? "" : ",") + std::to_string(sm) + ":" + json_num(compute_stats(lat).median) + ":" +
                json_num(bpc == o.sm_bpc.end() ? NAN : compute_stats(bpc->second).median);
    }
    JObj p;
    p.str("source", cs.src).num("box_bytes", bytes).num("inflight_loads", cs.D).num("ctas", cfg.ncta)
        .num("bytes_per_cta", double(cfg.iters) * bytes).str("per_sm", per_sm);
    const std::string name = std::string("l2_smlat_") + cs.src + "_box" + std::to_string(bytes / 1024) + "KB_d" +
                             std::to_string(cs.D);
    record_ring(c, name + "_bw", name + "_latency", o,
                "Per-SM TMA ring: every SM (one CTA each, all together) keeps D loads of its own boxes in flight; "
                "params.per_sm gives each SM id's median load latency (cycles) and bytes per clock64 cycle. L2: an "
                "8 MiB tensor read by every CTA in its own order (warm); HBM: each CTA its own slice, L2 flushed "
                "before every rep.",
                p);
  }
}

// Group "smpairs": which SMs' identical TMA reads reach the L2 as one, by SM id rather than by CTA (the CTA ->
// SM placement is the hardware's; here each CTA reads %smid and takes the data of its SM's set). Sets of SMs
// read the same 8 MiB of boxes, HBM-sourced (L2 flushed before every rep), all SMs starting at one common
// %globaltimer instant; different sets read disjoint data. Patterns: pairs of SM ids d apart (blocks of 2d ids:
// SM b*2d + i with SM b*2d + i + d, i < d), and groups of k SM ids t apart (blocks of k*t ids: SMs b*k*t + j,
// + t, ..., + (k-1)t); SMs past the last whole block read their own data. Meant to run under Nsight Compute
// (lts__t_sectors_srcunit_tex_op_read per delivered byte).
void bench_l2_smpairs(Ctx& c) {
  SharedReads rig(c);
  const int iters = rig.iters;
  const int n = c.sm_count;
  struct Case {
    int k, t;  // groups of k SM ids t apart (pairs d apart: k = 2, t = d; none: k = 1)
  };
  std::vector<Case> cases = {{1, 1}};
  for (int d : {1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 18, 20, 24, 32, 48, 64, 66}) cases.push_back({2, d});
  for (Case g : std::vector<Case>{{4, 1}, {4, 2}, {4, 16}, {8, 1}, {8, 2}, {8, 16}, {16, 1}}) cases.push_back(g);
  for (const Case& cs : cases) {
    RingCfg cfg = rig.cfg(n);
    cfg.by_sm = true;
    std::vector<long long> set_of(RingBufs::kSmIds);
    const int block = cs.k * cs.t;
    for (int s = 0; s < RingBufs::kSmIds; ++s) {
      const int b = s / block, r = s % block;
      // Sets of whole blocks take ids below n; every other SM id a set of its own, above them.
      set_of[s] = s < n && (b + 1) * block <= n ? static_cast<long long>(b) * cs.t + r % cs.t : n + s;
      cfg.start.push_back(set_of[s] * iters);
      cfg.stride.push_back(1);
      cfg.delay_ns.push_back(0);
    }
    const long long distinct = distinct_values(std::vector<long long>(set_of.begin(), set_of.begin() + n));
    RingOut o = run_ring(c, cfg, rig.rb);
    JObj p;
    p.str("pattern", cs.k == 1 ? "none" : cs.k == 2 ? "pair" : "group").num("sms_per_set", cs.k).num("sm_id_step", cs.t);
    rig.record_params(p, n, distinct);
    const std::string name = cs.k == 1   ? std::string("l2_smpairs_none")
                             : cs.k == 2 ? "l2_smpairs_d" + std::to_string(cs.t)
                                         : "l2_smpairs_group" + std::to_string(cs.k) + "_step" + std::to_string(cs.t);
    record_ring(c, name + "_bw", name + "_latency", o,
                "L2 request combining by SM id: sets of sms_per_set SMs whose ids are sm_id_step apart (blocks of "
                "sms_per_set x sm_id_step ids; SMs past the last whole block read their own data) read the same 8 MiB "
                "of 32 KB boxes (D = 6, 2 GiB tensor, L2 flushed before every rep), all starting at one %globaltimer "
                "instant; each CTA picks its data by %smid. Sets read disjoint data; none: every SM its own. Run under "
                "Nsight Compute (lts__t_sectors_srcunit_tex_op_read per delivered byte): below the no-sharing value, "
                "identical requests of several SMs reached the L2 as one.",
                p);
  }
}

// Group "segments": HBM bandwidth when each box row is a short segment of a longer tensor row (what an sm80
// kernel's cp.async of a narrow K-tile reads: 64 B of each 1152 B row of K1's A0). The 2 GiB buffer is viewed as
// rows of R bytes; every box takes the first W bytes of 256 consecutive rows (TMA, no swizzle), the SMs walk
// disjoint row ranges from HBM (L2 flushed; 2 MiB delivered per SM, or its share of the rows), D = 6 boxes in
// flight per SM, all 132 SMs. Bandwidth counts the bytes delivered; run under Nsight Compute, dram__bytes_read shows what HBM moved for them.
void bench_hbm_segments(Ctx& c) {
  const size_t big_bytes = 2ull << 30;
  DevBuf<uint16_t> big(big_bytes / 2);
  CK(cudaMemset(big.p, 0, big_bytes));
  CK(cudaFuncSetAttribute(ring_kernel(6), cudaFuncAttributeMaxDynamicSharedMemorySize, kRingDyn));
  RingBufs rb(c.sm_count);
  const int n = c.sm_count, D = 6, box_rows = 256;
  struct Case {
    int row_bytes, seg_bytes;
  };
  // (row, segment) bytes; a TMA box row is at most 256 elements: 512 bytes of bf16.
  const Case cases[] = {{128, 128},  {256, 256},  {512, 512},  {1152, 16},  {1152, 32},  {1152, 48},  {1152, 64},
                        {1152, 96},  {1152, 128}, {1152, 192}, {1152, 256}, {1152, 384}, {1152, 512}, {256, 64},
                        {512, 64},   {2048, 64},  {256, 128},  {512, 128},  {2048, 128}, {512, 256}};
  for (const Case& cs : cases) {
    const long long rows = static_cast<long long>(big_bytes / cs.row_bytes);
    CUtensorMap map = make_rows_map(big.p, rows, cs.row_bytes, cs.seg_bytes, box_rows, CU_TENSOR_MAP_SWIZZLE_NONE);
    const int seg = cs.seg_bytes;
    RingCfg cfg = ring_cfg(map, box_rows, D, n, rows / box_rows, true, 3);
    cfg.row_bytes = seg;
    // 2 MiB delivered per SM, or as much as its share of the buffer's rows holds (each SM its own rows).
    cfg.iters = static_cast<int>(std::min<long long>((2ll << 20) / (static_cast<long long>(box_rows) * seg), cfg.nboxes / n));
    cfg.want_smids = false;
    cfg.check_data = false;  // other rows than the fill pattern's (the buffer holds zeros)
    for (int k = 0; k < n; ++k) {
      cfg.start.push_back(static_cast<long long>(k) * cfg.iters);
      cfg.stride.push_back(1);
    }
    RingOut o = run_ring(c, cfg, rb);
    JObj p;
    p.num("row_bytes", cs.row_bytes).num("segment_bytes", seg).num("box_rows", box_rows).num("box_bytes", box_rows * seg)
        .num("inflight_loads", D).num("ctas", n).num("boxes_per_cta", cfg.iters)
        .num("delivered_bytes", double(cfg.iters) * box_rows * seg * n);
    const std::string name = "hbm_segments_row" + std::to_string(cs.row_bytes) + "_seg" + std::to_string(seg);
    record_ring(c, name + "_bw", name + "_latency", o,
                "HBM read bandwidth of short segments: the 2 GiB buffer seen as rows of row_bytes; each TMA box (no "
                "swizzle) takes the first segment_bytes of 256 consecutive rows, every SM walks its own rows (2 MiB "
                "delivered, or its share of the rows) from HBM (L2 flushed before every rep) with 6 boxes in flight. "
                "GB/s of delivered bytes; the rest of each row is not read. Run under Nsight Compute: dram__bytes_read per delivered byte is what HBM "
                "moved for each useful byte.",
                p);
  }
}

// Group "astream": HBM bandwidth of a GEMM operand's stream. A row-major operand with rows of R bytes is read
// the way a CTA's mainloop reads its A tile: boxes of 128 rows x 128 B (64 bf16, 128B swizzle, 16 KB), the k-walk
// across the row (box b: columns (b % (R / 128)) * 64, rows (b / (R / 128)) * 128), each CTA its own consecutive
// row blocks, all 132 SMs, 6 boxes in flight, L2 flushed before every rep. R = 128 is the contiguous stream (the
// hbm_bytes_per_cycle measurement's pattern in 16 KB boxes); longer rows spread each box over 128 DRAM rows' worth
// of addresses R apart, read again 128 B further on by the CTA's next box.
void bench_hbm_astream(Ctx& c) {
  const size_t big_bytes = 2ull << 30;
  DevBuf<uint16_t> big(big_bytes / 2);
  CK(cudaMemset(big.p, 0, big_bytes));
  constexpr int D = 6, box_rows = 128, seg = 128;
  CK(cudaFuncSetAttribute(ring_kernel(D), cudaFuncAttributeMaxDynamicSharedMemorySize, kRingDyn));
  RingBufs rb(c.sm_count);
  const int n = c.sm_count;
  for (int row_bytes : {128, 1024, 2048, 4096, 16384}) {
    const long long rows = static_cast<long long>(big_bytes / row_bytes);
    CUtensorMap map = make_rows_map(big.p, rows, row_bytes, seg, box_rows, CU_TENSOR_MAP_SWIZZLE_128B);
    RingCfg cfg = ring_cfg(map, box_rows, D, n, rows / box_rows * (row_bytes / seg), true, 3);
    cfg.row_bytes = seg;
    cfg.xboxes = row_bytes / seg;
    // 12 MiB per SM (whole row blocks: a multiple of the boxes across a row), 1.55 GiB in all: past the L2.
    cfg.iters = static_cast<int>((12ll << 20) / (box_rows * seg) / cfg.xboxes * cfg.xboxes);
    if (static_cast<long long>(cfg.iters) * n > cfg.nboxes) throw std::runtime_error("astream: buffer too small");
    cfg.want_smids = false;
    cfg.check_data = false;  // zeros, not the fill pattern
    for (int k = 0; k < n; ++k) {
      cfg.start.push_back(static_cast<long long>(k) * cfg.iters);
      cfg.stride.push_back(1);
    }
    RingOut o = run_ring(c, cfg, rb);
    JObj p;
    p.num("row_bytes", row_bytes).num("segment_bytes", seg).num("box_rows", box_rows).num("box_bytes", box_rows * seg)
        .num("boxes_across_row", cfg.xboxes).num("inflight_loads", D).num("ctas", n).num("boxes_per_cta", cfg.iters)
        .num("delivered_bytes", double(cfg.iters) * box_rows * seg * n);
    const std::string name = "hbm_astream_row" + std::to_string(row_bytes);
    record_ring(c, name + "_bw", name + "_latency", o,
                "HBM read bandwidth of a GEMM operand's stream: a row-major tensor of row_bytes rows (2 GiB buffer) read "
                "in boxes of 128 rows x 128 B (128B swizzle), box b at columns (b mod row_bytes/128) x 64 and rows "
                "(b div row_bytes/128) x 128 (a mainloop's k-walk), each SM its own consecutive boxes (12 MiB), L2 "
                "flushed before every rep, 6 boxes in flight. row_bytes 128: a contiguous stream.",
                p);
  }
}

// The think group's ring: `ctas` CTAs read the whole warm tensor of l2_rows rows once per rep in boxes of box_rows
// (two per load with pair), CTA k from box k * boxes / ctas with its own coprime step, D loads in flight, `think`
// cycles after each wait.
RingCfg think_cfg(const CUtensorMap& map, long long l2_rows, int box_rows, bool pair, int think, int D, int ctas) {
  RingCfg cfg = ring_cfg(map, box_rows, D, ctas, l2_rows / box_rows, false, 3);
  cfg.pair = pair;
  cfg.think = think;
  cfg.iters = static_cast<int>(cfg.nboxes / (pair ? 2 : 1));  // every box once per rep
  cfg.check_data = false;
  for (int k = 0; k < ctas; ++k) {
    cfg.start.push_back(static_cast<long long>(k) * cfg.nboxes / ctas);
    cfg.stride.push_back(pick_stride(k, cfg.nboxes));
  }
  return cfg;
}

// Group "think": the latency of a GEMM stage's loads at moderate load. Every SM's thread keeps S stages in flight,
// each stage two 16 KB boxes (128 rows x 64 bf16, 128B swizzle: a 128x128x64 tile's A and B) on one mbarrier, and
// after each completed wait spins T cycles (the mainloop's MMAs) before it re-issues the stage; all 132 SMs read one
// 8 MiB tensor (warm after the warm-up rep, every CTA its own order, as the loaded-latency rings), so T sets the
// load on the L2. Latency: the stage's wait end minus the clock before its arrive.expect_tx.
void bench_think(Ctx& c) {
  const long long l2_rows = (8ll << 20) / kRowBytes;
  DevBuf<uint16_t> big(static_cast<size_t>(l2_rows) * kCols);
  fill_pattern(c, big.p, static_cast<size_t>(l2_rows));
  const int box_rows = 128, n = c.sm_count;
  for (int D : {1, 2, 3, 4}) CK(cudaFuncSetAttribute(ring_kernel(D), cudaFuncAttributeMaxDynamicSharedMemorySize, kRingDyn));
  RingBufs rb(n);
  CUtensorMap map = make_map(big.p, static_cast<uint64_t>(l2_rows), box_rows);
  for (int D : {1, 2, 3, 4}) {
    for (int think : {0, 256, 512, 1024, 2048}) {
      RingCfg cfg = think_cfg(map, l2_rows, box_rows, true, think, D, n);
      RingOut o = run_ring(c, cfg, rb);
      JObj p;
      p.str("source", "l2").num("box_bytes", box_rows * kRowBytes).num("boxes_per_stage", 2).num("stages", D)
          .num("think_cycles", think).num("ctas", n).num("bytes_per_cta", double(cfg.iters) * 2 * box_rows * kRowBytes);
      const std::string name = "think_latency_l2_pair16KB_s" + std::to_string(D) + "_t" + std::to_string(think);
      record_ring(c, name + "_bw", name + "_latency", o,
                  "A GEMM stage's loads at moderate load: every SM keeps `stages` stages in flight, each two 16 KB "
                  "boxes on one mbarrier (expect_tx 32 KB), and spins think_cycles after each completed wait before "
                  "re-issuing it; all SMs read one warm 8 MiB tensor, each CTA in its own order. Latency: per stage, "
                  "the wait's end minus the clock before its arrive.expect_tx.",
                  p);
    }
  }
  // One stage, 1024 cycles of think time, on fewer SMs, and one box of 32 KB or 16 KB instead of the pair: whether
  // the stage's latency comes with the number of SMs loading or with its two boxes.
  struct Shape {
    const char* tag;
    int rows;
    bool pair;
  };
  const Shape shapes[] = {{"pair16KB", 128, true}, {"box32KB", 256, false}, {"box16KB", 128, false}};
  for (const Shape& sh : shapes) {
    CUtensorMap m = make_map(big.p, static_cast<uint64_t>(l2_rows), sh.rows);
    for (int ctas : {1, 8, 33, 66, n}) {
      if (!sh.pair && ctas != 1 && ctas != n) continue;
      RingCfg cfg = think_cfg(m, l2_rows, sh.rows, sh.pair, 1024, 1, ctas);
      RingOut o = run_ring(c, cfg, rb);
      JObj p;
      p.str("source", "l2").num("box_bytes", sh.rows * kRowBytes).num("boxes_per_stage", sh.pair ? 2 : 1).num("stages", 1)
          .num("think_cycles", 1024).num("ctas", ctas);
      const std::string name = std::string("think_latency_l2_") + sh.tag + "_s1_t1024_ctas" + std::to_string(ctas);
      record_ring(c, name + "_bw", name + "_latency", o,
                  "As think_latency_l2_pair16KB_s1_t1024 (one stage, 1024 cycles of think time, one warm 8 MiB tensor), "
                  "on `ctas` SMs, the stage two 16 KB boxes (pair16KB) or one box (box32KB, box16KB).",
                  p);
    }
  }
  // The stage's second box issued `gap` cycles after its first (spun between the two issues), on one SM and on all:
  // whether what the load of many SMs adds to a stage waits for its first box to be in flight. Latency as above (from
  // before the arrive.expect_tx, so it includes the gap).
  CUtensorMap m16 = make_map(big.p, static_cast<uint64_t>(l2_rows), box_rows);
  for (int gap : {0, 250, 500, 1000}) {
    for (int ctas : {1, n}) {
      RingCfg cfg = think_cfg(m16, l2_rows, box_rows, true, 1024, 1, ctas);
      cfg.gap = gap;
      RingOut o = run_ring(c, cfg, rb);
      JObj p;
      p.str("source", "l2").num("box_bytes", box_rows * kRowBytes).num("boxes_per_stage", 2).num("stages", 1)
          .num("think_cycles", 1024).num("gap_cycles", gap).num("ctas", ctas);
      const std::string name = "think_gap_pair16KB_s1_t1024_g" + std::to_string(gap) + "_ctas" + std::to_string(ctas);
      record_ring(c, name + "_bw", name + "_latency", o,
                  "As think_latency_l2_pair16KB_s1_t1024 on `ctas` SMs, the stage's second box issued gap_cycles after "
                  "its first (the thread spins between the two issues); the latency includes the gap.",
                  p);
    }
  }
}

// Group "pipe": a stage's landing time at the loads a GEMM mainloop puts on the L2, with the load, the wait and the
// release in separate warps (k_stage_pipe): every SM keeps S stages of two 16 KB boxes (a 128x128x64 tile's A and B)
// in flight, its consumer holds each landed stage T cycles before releasing it, all SMs read one warm 8 MiB tensor
// (each CTA its own order, as the think group). A watcher warp stores the clock when each stage lands, so the
// latency is the landing time at that load, not the time a thread came back to look (the think group's caveat).
void bench_pipe(Ctx& c) {
  const long long l2_rows = (8ll << 20) / kRowBytes;
  DevBuf<uint16_t> big(static_cast<size_t>(l2_rows) * kCols);
  fill_pattern(c, big.p, static_cast<size_t>(l2_rows));
  const int box_rows = 128, n = c.sm_count;
  const int stages[] = {2, 3, 4, 6};
  for (int D : {1, 2, 3, 4, 6}) CK(cudaFuncSetAttribute(pipe_kernel(D), cudaFuncAttributeMaxDynamicSharedMemorySize, kRingDyn));
  RingBufs rb(n);
  CUtensorMap map = make_map(big.p, static_cast<uint64_t>(l2_rows), box_rows);
  // The variants (bits of `mode`), each a suffix of the measurement's name.
  enum : unsigned { kNoWatch = 1, kStraight = 2, kTestWait = 4, kTimeline = 8, kSleep = 16 };
  auto one = [&](int D, int think, int ctas, unsigned mode = 0) {
    const bool watch = !(mode & kNoWatch), straight = mode & kStraight, testwait = mode & kTestWait,
               timeline = mode & kTimeline, sleep = mode & kSleep;
    RingCfg cfg = think_cfg(map, l2_rows, box_rows, true, think, D, ctas);
    cfg.pipe = true;
    cfg.watch = watch;
    cfg.straight = straight;
    cfg.testwait = testwait;
    cfg.timeline = timeline;
    cfg.sleep = sleep;
    cfg.iters *= 4;  // the tensor four times per rep (~0.3-1 ms)
    RingOut o = run_ring(c, cfg, rb);
    const std::string name = "pipe_l2_pair16KB_s" + std::to_string(D) + "_t" + std::to_string(think) +
                             (ctas == n ? std::string() : "_ctas" + std::to_string(ctas)) + (watch ? "" : "_nowatch") +
                             (straight ? "_straight" : "") + (testwait ? "_testwait" : "") + (timeline ? "_tl" : "") + (sleep ? "_sleep" : "");
    if (!o.problem.empty()) {
      c.take_err();
      c.res->fail(name + "_bw", o.problem);
      return;
    }
    const Stats ls = compute_stats(o.lat);
    JObj p;
    p.str("source", "l2").num("box_bytes", box_rows * kRowBytes).num("boxes_per_stage", 2).num("stages", D)
        .num("think_cycles", think).num("ctas", ctas).num("loads_per_cta", cfg.iters).num("watcher", watch ? 1 : 0)
        .num("straight", straight ? 1 : 0).num("testwait", testwait ? 1 : 0).num("timeline", timeline ? 1 : 0).num("sleep", sleep ? 1 : 0)
        .num("bytes_per_sm_cycle_per_sm", o.bpc_sm).num("latency_median_cycles", ls.median)
        .num("latency_p10_cycles", ls.p10).num("latency_p90_cycles", ls.p90).num("latency_mean_cycles", ls.mean)
        .num("littles_law_bytes_in_flight_per_sm", o.bpc_sm * ls.mean)
        .num("consumer_wait_fraction", o.wait_frac).num("producer_wait_fraction", o.issue_frac)
        .num("span_us_median", o.span_us).num("sm_clock_ghz_used", c.clk_ghz);
    if (!o.smids.empty()) p.str("smids", o.smids);
    const std::string what =
        "A GEMM mainloop's ring without MMAs, one CTA per SM (96 threads, 200 KB smem): lane 0 of warp 0 waits slot s's "
        "empty mbarrier, reads clock64, arrive.expect_tx(32 KB) on its full mbarrier and issues two 16 KB TMA boxes "
        "(128 rows x 64 bf16, 128B swizzle: a 128x128x64 tile's A and B); lane 0 of warp 1 waits full, spins "
        "think_cycles and arrives on empty; lane 0 of warp 2 only waits each full phase in turn. `stages` slots; all "
        "`ctas` CTAs read one warm 8 MiB tensor, each in its own order, four times per rep. ";
    if (!record(c, name + "_bw", G, "GB/s", o.gbs,
                what + "Value: all bytes / (last CTA end - first CTA start) by %globaltimer, one sample per rep (after a "
                       "warm-up rep). consumer_wait_fraction: share of the consumer's loop spent in full waits; "
                       "producer_wait_fraction: share spent by the producer in empty waits (of the consumer's loop).",
                p))
      return;
    c.res->add(name + "_latency", G, "cycles", o.lat,
               what + "Value: per load, the watcher's clock64 when its wait of the load's phase returned - the producer's "
                      "clock64 before the arrive.expect_tx (the landing time, with the mbarrier's wake-up), loads "
                      "[2 stages, loads - stages) of every CTA (at most 1024 per CTA) and measured rep.",
               p);
    if (!timeline) return;
    c.res->add(name + "_issue", G, "cycles", o.issue,
               what + "Value: per sampled load, the producer's clock64 after its second TMA issue - its clock64 before the "
                      "arrive.expect_tx (the arrive and the two issues).",
               p);
    c.res->add(name + "_release_to_issue", G, "cycles", o.gap,
               what + "Value: per sampled load, the producer's clock64 before its arrive.expect_tx - the consumer's clock64 "
                      "before the arrive on empty that freed the load's slot (the producer's wake-up from its empty wait; "
                      "with straight, also the two boxes' coordinates).",
               p);
  };
  if (c.filter.find("pipe_sleep") != std::string::npos) {
    // --only pipe_sleep: the consumer holds each stage asleep (__nanosleep) rather than spinning: whether a stage lands
    // later when the consumer issues instructions meanwhile.
    one(1, 1024, n, kStraight | kSleep);
    one(1, 1024, 1, kStraight | kSleep);
    for (int D : {2, 4})
      for (int think : {768, 1024, 1536}) one(D, think, n, kStraight | kSleep);
    one(4, 1024, 1, kStraight | kSleep);
    return;
  }
  if (c.filter.find("pipe_straight") != std::string::npos) {
    // --only pipe_straight: the grid in a mainloop's form (both boxes' coordinates before the arrive).
    for (int D : stages)
      for (int think : {0, 256, 512, 768, 1024, 1536}) one(D, think, n, kStraight);
    return;
  }
  if (c.filter.find("pipe_timeline") != std::string::npos) {
    // --only pipe_timeline: where a warp-specialized ring's round trip goes, in a mainloop's form: the issue, the
    // release-to-issue time and the landing, against the load (one SM, every SM; 1, 2 and 4 stages; hold times), with
    // the waits on try_wait (CUTLASS's) and spinning on test_wait. The clock reads this takes (one more in each warp's
    // loop) slow the consumer: these rows (_tl) are not the others' twins.
    for (unsigned tw : {0u, unsigned(kTestWait)}) {
      one(1, 1024, 1, kStraight | kTimeline | tw);
      one(1, 1024, n, kStraight | kTimeline | tw);
      for (int think : {0, 512, 1536}) {
        one(2, think, 1, kStraight | kTimeline | tw);
        one(2, think, n, kStraight | kTimeline | tw);
      }
      for (int think : {512, 768, 1536}) one(4, think, n, kStraight | kTimeline | tw);
      one(4, 512, 1, kStraight | kTimeline | tw);
    }
    return;
  }
  if (c.filter.find("pipe_more") == std::string::npos) {
    for (int D : stages)
      for (int think : {0, 256, 512, 768, 1024, 1536}) one(D, think, n);
    // The same ring on one SM and on half of them: the landing time without the others' load.
    for (int ctas : {1, 66})
      for (int D : {2, 4}) one(D, 512, ctas);
    return;
  }
  // --only pipe_more: what makes a stage land later here than in the think group's one-thread ring. One stage (the
  // think group's s1 t1024 with the wait in another warp), with and without the watcher (without: the consumer's
  // wait end, which for one stage waits from before the landing), with the second box's issue in a mainloop's form
  // (straight); and the GEMM-like rows in that form.
  for (int ctas : {1, n}) {
    one(1, 1024, ctas);
    one(1, 1024, ctas, kNoWatch);
    one(1, 1024, ctas, kStraight);
    one(1, 1024, ctas, kNoWatch | kStraight);
  }
  one(2, 512, 1, kNoWatch);
  one(2, 512, 1, kStraight);
  one(4, 512, 1, kStraight);
  for (int D : {2, 4})
    for (int think : {0, 512, 768, 1536}) one(D, think, n, kStraight);
}

// How far apart the load CTAs of a gt_issue run issue: per recorded load j (the same iteration of every CTA's loop),
// the p10-p90 and min-max spread over the CTAs of their %globaltimer readings at its issue (32 ns tick), in SM cycles
// at the run's clock ("<name>_issue_spread", which also counts whole periods one CTA runs ahead), and how much their
// phases agree: with P the median interval between a CTA's successive issues, the length of the mean of
// exp(2 pi i t / P) over the CTAs ("<name>_issue_phase": 1 when all issue at the same point of the period, about
// 1 / sqrt(CTAs) when their phases are random).
void record_issue_times(Ctx& c, const std::string& name, const RingOut& o, JObj p, int cluster = 1) {
  size_t m = ~size_t{0};
  for (const auto& v : o.load_gt) m = std::min(m, v.size());
  if (o.load_gt.empty() || m == 0) {
    c.res->fail(name + "_issue_spread", "no issue times recorded");
    return;
  }
  const uint32_t ref = o.load_gt[0][0];
  std::vector<double> gaps, p1090, full, near, phase;
  for (const auto& v : o.load_gt)
    for (size_t j = 1; j < m; ++j) gaps.push_back(double(static_cast<int32_t>(v[j] - v[j - 1])));
  const double period = compute_stats(gaps).median;
  for (size_t j = 0; j < m; ++j) {
    std::vector<double> t;
    for (const auto& v : o.load_gt) t.push_back(double(static_cast<int32_t>(v[j] - ref)));
    std::sort(t.begin(), t.end());
    const size_t n = t.size();
    p1090.push_back((t[std::min(n - 1, (9 * n) / 10)] - t[n / 10]) * c.clk_ghz);
    full.push_back((t.back() - t.front()) * c.clk_ghz);
    const double mid = t[n / 2];
    near.push_back(double(std::count_if(t.begin(), t.end(), [&](double x) { return std::fabs(x - mid) <= 100.0; })) / double(n));
    double re = 0, im = 0;
    for (double x : t) {
      re += std::cos(2 * M_PI * x / period);
      im += std::sin(2 * M_PI * x / period);
    }
    phase.push_back(std::hypot(re, im) / double(n));
  }
  // Launched as clusters (one GPC each): the coherence among the load CTAs of each cluster, averaged over the clusters
  std::vector<double> within;
  if (cluster > 1) {
    for (size_t j = 0; j < m; ++j) {
      std::vector<double> re_c, im_c, n_c;
      for (size_t q = 0; q < o.load_gt.size(); ++q) {
        const size_t cl = static_cast<size_t>(o.load_gt_cta[q] / cluster);
        if (re_c.size() <= cl) re_c.resize(cl + 1), im_c.resize(cl + 1), n_c.resize(cl + 1);
        const double x = double(static_cast<int32_t>(o.load_gt[q][j] - ref));
        re_c[cl] += std::cos(2 * M_PI * x / period);
        im_c[cl] += std::sin(2 * M_PI * x / period);
        n_c[cl] += 1;
      }
      double sum = 0;
      int groups = 0;
      for (size_t cl = 0; cl < re_c.size(); ++cl)
        if (n_c[cl] >= 8) {
          sum += std::hypot(re_c[cl], im_c[cl]) / n_c[cl];
          ++groups;
        }
      if (groups > 0) within.push_back(sum / groups);
    }
    p.num("issue_phase_coherence_within_cluster_median", compute_stats(within).median);
  }
  p.num("issue_spread_p10_p90_median_cycles", compute_stats(p1090).median)
      .num("issue_spread_min_max_median_cycles", compute_stats(full).median)
      .num("issue_share_within_100ns_of_median", compute_stats(near).median)
      .num("issue_loads_compared", double(m))
      .num("issue_period_cycles", period * c.clk_ghz)
      .num("issue_phase_coherence_median", compute_stats(phase).median);
  record(c, name + "_issue_spread", G, "cycles", p1090,
         "When the load CTAs issue (group loadlat, _gt rows): each load CTA reads %globaltimer (32 ns tick) before "
         "re-issuing each load from its 2D-th on; per load, the p10-p90 spread over the CTAs of those readings, in SM "
         "cycles at the run's clock (last rep). Small: the SMs issue in step (bursts); about the loop's period: spread "
         "evenly. params: medians of the p10-p90 and min-max spreads, and of the share of CTAs within 100 ns of the median.",
         p);
  record(c, name + "_issue_phase", G, "share", phase,
         "When the load CTAs issue (group loadlat, _gt rows): per load, with P the median interval between a CTA's "
         "successive issues (params.issue_period_cycles), |mean over the CTAs of exp(2 pi i t / P)| of their "
         "%globaltimer readings t at its issue: 1 when they all issue at the same point of the period, about "
         "1 / sqrt(CTAs) when their phases are random (last rep).",
         p);
  // Clumps: every issue of every load CTA on one time line; for an issue, its neighbours are the other CTAs that issue
  // within +-100 ns of it (whatever their load). The mean count over that of CTAs issuing at random times (the same
  // issues spread evenly over the span), and how many of an issue's neighbours are again neighbours of the same CTA's
  // next issue (persistence; the share random times give: the neighbours' count over the other CTAs).
  {
    std::vector<std::pair<int64_t, int>> ev;  // (ns from ref, load CTA slot)
    for (size_t q = 0; q < o.load_gt.size(); ++q)
      for (size_t j = 0; j < m; ++j) ev.emplace_back(static_cast<int32_t>(o.load_gt[q][j] - ref), static_cast<int>(q));
    std::sort(ev.begin(), ev.end());
    const int64_t w = 100;
    const double span = double(ev.back().first - ev.front().first), ctas = double(o.load_gt.size());
    // per CTA, its issues in order: the neighbour set of each
    std::vector<std::vector<std::vector<int>>> nb(o.load_gt.size());
    size_t lo = 0, hi = 0;
    double count = 0;
    for (size_t e = 0; e < ev.size(); ++e) {
      while (ev[lo].first < ev[e].first - w) ++lo;
      while (hi < ev.size() && ev[hi].first <= ev[e].first + w) ++hi;
      std::vector<int> set;
      for (size_t x = lo; x < hi; ++x)
        if (ev[x].second != ev[e].second) set.push_back(ev[x].second);
      std::sort(set.begin(), set.end());
      set.erase(std::unique(set.begin(), set.end()), set.end());
      count += double(set.size());
      nb[static_cast<size_t>(ev[e].second)].push_back(std::move(set));
    }
    const double mean = count / double(ev.size());
    const double random_mean = (ctas - 1) * double(m) * double(2 * w) / span;  // the others' issues per 2w ns
    double keep = 0, sets = 0;
    for (const auto& seq : nb)
      for (size_t j = 0; j + 1 < seq.size(); ++j) {
        if (seq[j].empty()) continue;
        std::vector<int> both;
        std::set_intersection(seq[j].begin(), seq[j].end(), seq[j + 1].begin(), seq[j + 1].end(), std::back_inserter(both));
        keep += double(both.size()) / double(seq[j].size());
        sets += 1;
      }
    p.num("issue_neighbours_100ns_mean", mean)
        .num("issue_neighbours_100ns_random", random_mean)
        .num("issue_neighbours_kept_next_issue", sets > 0 ? keep / sets : 0.0)
        .num("issue_neighbours_kept_random", mean / (ctas - 1));
    record(c, name + "_issue_neighbours", G, "ratio", {mean / random_mean},
           "When the load CTAs issue (group loadlat, _gt rows), all issues of all load CTAs on one time line (last rep): "
           "the mean number of other CTAs issuing within 100 ns of an issue, over what the same issues spread evenly "
           "over the span would give (1: no clumping). params: the counts, and the share of an issue's neighbours that "
           "are again neighbours of the same CTA's next issue (issue_neighbours_kept_next_issue) against that share "
           "for random times (issue_neighbours_kept_random).",
           p);
  }
  if (!within.empty())
    record(c, name + "_issue_phase_cluster", G, "share", within,
           "As _issue_phase, among the load CTAs of each cluster of the launch (one GPC each; clusters of 8 or more load "
           "CTAs), averaged over the clusters: whether the SMs of a GPC issue in step with each other (1 / sqrt(16) = 0.25 "
           "when random).",
           p);
}

// Group "loadlat": what load on the L2 or HBM adds to the landing of one GEMM stage. CTA 0 is a probe (probe_loop):
// one stage of two 16 KB boxes (128 rows x 64 bf16, 128B swizzle: a 128x128x64 tile's A and B) in flight at a time,
// 1024 cycles between a landing and the next issue, its latency the clock after its wait minus the clock before its
// arrive.expect_tx. The other CTAs (one per SM) are the load: k_ring's threads with D stages of the same two boxes in
// flight, each spinning T cycles after a wait before re-issuing that stage, so T sets the load. The probe's code is
// the same in every row and its own load small (~1/4 of a saturating SM's), so the probe's latency against the load's
// bandwidth is the loaded latency of a stage, read by a thread that waits for it from its issue on.
// L2: one warm 8 MiB tensor (every CTA reads all of it 4 times per rep in its own order); HBM: the 2 GiB tensor,
// L2 flushed before every rep, CTA k reading its own slice (the probe slice 0) sequentially, nothing read twice.
void bench_loadlat(Ctx& c) {
  const PatternTensor big(c, 2ull << 30);
  const long long big_rows = big.rows;
  const int box_rows = 128, n = c.sm_count, stage = 2 * box_rows * kRowBytes;
  for (int D : {1, 2, 3, 4}) {
    CK(cudaFuncSetAttribute(ring_kernel(D), cudaFuncAttributeMaxDynamicSharedMemorySize, kRingDyn));
    CK(cudaFuncSetAttribute(ring_kernel(D), cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  RingBufs rb(n);
  struct Row {
    bool hbm;
    int bg, D, think;  // load CTAs (0: the probe alone), their stages in flight and think cycles
    bool jitter = false;
    const char* where = "";  // clusters of 16 (one per GPC, 7 GPCs): "local" the probe's GPC loads, "remote" the six
                             // others, "all" all seven, "alone" none (the probe alone in a cluster launch)
    int group = 1;           // > 1: the load CTAs read the tensor in groups of this many that share one walk
    int rows = 128;          // rows of each box (128: 16 KB, 256: 32 KB)
    bool gt = false;         // the load CTAs record when they issue (%globaltimer): how far apart the SMs issue
  };
  std::vector<Row> rows;
  rows.push_back({false, 0, 4, 0});
  for (int t : {0, 250, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000}) rows.push_back({false, n - 1, 4, t});
  for (int t : {0, 500, 1000}) rows.push_back({false, n - 1, 2, t});
  for (int bg : {33, 66}) rows.push_back({false, bg, 4, 0});
  // The load's think times drawn from [T/2, 3T/2) (the SMs' issues no longer in step), and the load placed by GPC
  for (int t : {500, 1000, 2000}) rows.push_back({false, n - 1, 4, t, true});
  for (int t : {500, 1000}) rows.push_back({false, n - 1, 2, t, true});
  rows.push_back({false, 0, 4, 0, false, "alone"});
  for (const char* w : {"local", "remote", "all"})
    for (int t : {0, 1000, 2000}) rows.push_back({false, 0, 4, t, false, w});
  // Load CTAs that read the same boxes at about the same time (a GEMM operand's tile read by every CTA of its row):
  // groups of g consecutive load CTAs share one walk of the warm tensor
  for (int g : {2, 4, 8, 16, 32, 131}) rows.push_back({false, n - 1, 4, 0, false, "", g});
  // ... and with stages of two 32 KB boxes (the load thread's loop no longer the limit), three in flight
  for (int g : {1, 2, 4, 16, 131}) rows.push_back({false, n - 1, 3, 0, false, "", g, 256});
  // When the load's SMs issue: in step, out of step, saturated, and one stage at a time (the think group's ring)
  for (int t : {1000, 2000}) rows.push_back({false, n - 1, 4, t, false, "", 1, 128, true});
  rows.push_back({false, n - 1, 4, 1000, true, "", 1, 128, true});
  rows.push_back({false, n - 1, 4, 0, false, "", 1, 128, true});
  rows.push_back({false, n - 1, 1, 1024, false, "", 1, 128, true});
  // ... that ring again with its own stages' latency kept (params.load_latency_median_cycles: one stage at a time, its
  // thread waits from the issue on, so it is the landing, as the probe's), and a shared walk of pairs with its issue times
  rows.push_back({false, n - 1, 1, 1024});
  rows.push_back({false, n - 1, 3, 0, false, "", 2, 256, true});
  // The probe of a plain launch sits on one of SMs 124-131 (the GPU fills them first): small GPCs. Out of step with the
  // probe in a full GPC (clusters of 16), and the one-stage ring out of step with its own stages' latency kept
  for (int t : {1000, 2000}) rows.push_back({false, 0, 4, t, true, "all"});
  rows.push_back({false, n - 1, 1, 1024, true});
  // The one-stage ring as clusters of 16 (one per GPC): do the SMs of a GPC fall into step with each other?
  rows.push_back({false, 0, 1, 1024, false, "all"});
  rows.push_back({false, 0, 1, 1024, false, "all", 1, 128, true});
  rows.push_back({false, 0, 1, 1024, true, "all", 1, 128, true});
  rows.push_back({true, 0, 4, 0});
  for (int t : {0, 500, 1000, 2000, 4000, 10000}) rows.push_back({true, n - 1, 4, t});
  // HBM under a smooth load (`--only loadlat_smooth`: these rows alone): each load CTA keeps one stage in flight and
  // draws its think time from [T/2, 3T/2), so the SMs' requests spread over time as a GEMM's do rather than arriving
  // in step; the load CTAs' own landings are kept too (one stage at a time). In step (no jitter) and two stages beside.
  std::vector<Row> smooth;
  for (int t : {0, 500, 1000, 2000, 3000, 5000}) smooth.push_back({true, n - 1, 1, t, true});
  for (int t : {1000, 3000}) smooth.push_back({true, n - 1, 1, t});
  for (int t : {1000, 3000}) smooth.push_back({true, n - 1, 2, t, true});
  smooth.push_back({true, n - 1, 1, 2000, true, "", 1, 128, true});  // when they issue: out of step?
  smooth.push_back({true, 0, 1, 0});                                  // the probe alone, in the same run
  if (c.filter.find("loadlat_smooth") != std::string::npos)
    rows = smooth;
  else
    rows.insert(rows.end(), smooth.begin(), smooth.end());
  const long long l2_rows = (8ll << 20) / kRowBytes;
  CUtensorMap map_l2 = make_map(big.p, static_cast<uint64_t>(l2_rows), box_rows);
  CUtensorMap map_l2_32 = make_map(big.p, static_cast<uint64_t>(l2_rows), 2 * box_rows);
  CUtensorMap map_hbm = make_map(big.p, static_cast<uint64_t>(big_rows), box_rows);
  for (const Row& r : rows) {
    const long long trows = r.hbm ? big_rows : l2_rows, nboxes = trows / r.rows;
    const std::string where = r.where;
    const int ncta = where.empty() ? 1 + r.bg : 7 * 16;
    RingCfg cfg = ring_cfg(r.hbm ? map_hbm : r.rows == 256 ? map_l2_32 : map_l2, r.rows, r.D, ncta, nboxes, r.hbm, 3);
    cfg.jitter = r.jitter;
    cfg.gt_issue = r.gt;
    if (!where.empty()) cfg.cluster = 16;
    for (int k = 0; k < ncta; ++k)  // CTA 0 probes; clusters: the load CTAs by where they are
      cfg.role.push_back(k == 0 ? 2 : where.empty() || where == "all" || (where == "local" && k < 16) || (where == "remote" && k >= 16) ? 1 : 0);
    cfg.pair = true;
    cfg.think = r.think;
    cfg.check_data = false;
    cfg.probe_think = 1024;
    // HBM: the probe's loads stay in its own slice (992 boxes of 16 KB; 8 + 480 stages of two), which no load CTA reads
    if (r.hbm) cfg.probe_max = 480;
    cfg.want_smids = true;
    // L2: the whole tensor 4 times per load CTA; HBM: 8 MiB of the CTA's own slice
    cfg.iters = r.hbm ? static_cast<int>((8ll << 20) / stage) : static_cast<int>(4 * nboxes / 2);  // (32 KB boxes: 32 MiB too)
    for (int k = 0; k < ncta; ++k) {
      const int w = r.group > 1 && k > 0 ? 1 + (k - 1) / r.group * r.group : k;  // the walk of its group's first CTA
      cfg.start.push_back(r.hbm ? w * (nboxes / n) : w * nboxes / ncta);
      cfg.stride.push_back(r.hbm ? 1 : pick_stride(w, nboxes));
    }
    RingOut o = run_ring(c, cfg, rb);
    const std::string src = r.hbm ? "hbm" : "l2";
    int bg = 0;  // the load CTAs
    for (int v : cfg.role) bg += v == 1;
    const std::string name = "loadlat_" + src + (r.rows == 256 ? "_pair32KB_" : "_pair16KB_") + (where.empty() ? "" : "c16" + where + "_") + "bg" +
                             std::to_string(bg) + "_d" + std::to_string(r.D) + "_t" + std::to_string(r.think) +
                             (r.jitter ? "_jitter" : "") + (r.group > 1 ? "_g" + std::to_string(r.group) : "") +
                             (r.gt ? "_gt" : "");
    JObj p;
    p.str("source", src).num("box_bytes", r.rows * kRowBytes).num("boxes_per_stage", 2).num("probe_ctas", 1)
        .num("probe_think_cycles", 1024).num("load_ctas", bg).num("load_stages", r.D).num("load_think_cycles", r.think)
        .num("load_think_jitter", r.jitter ? 1 : 0).str("clusters16", where.empty() ? "none" : where)
        .num("load_group", r.group)
        .num("probe_samples", double(o.lat.size()));
    if (!o.load_lat.empty()) p.num("load_latency_median_cycles", compute_stats(o.load_lat).median);
    if (bg == 0) o.gbs.assign(o.gbs.size(), 0.0);
    if (std::string e = c.take_err(); !e.empty() && o.problem.empty()) o.problem = e;  // fails every row of the run
    if (r.gt && o.problem.empty()) record_issue_times(c, name, o, p, cfg.cluster);
    if (r.gt && !o.problem.empty()) c.res->fail(name + "_issue_spread", o.problem);
    record_ring(c, name + "_bw", name + "_latency", o,
                "Loaded latency of a GEMM stage (group loadlat): CTA 0 probes, one stage of two 16 KB boxes on one "
                "mbarrier at a time, 1024 cycles between a landing and its next issue; the other load_ctas CTAs keep "
                "load_stages such stages in flight and spin load_think_cycles after each wait. The latency rows are "
                "the probe's (its first 8 samples dropped), the bandwidth rows the load CTAs' (0 without them). _jitter: each "
                "think time drawn uniformly from [T/2, 3T/2) (a per-CTA LCG). c16<where>: 7 clusters of 16 CTAs (one "
                "per GPC), the probe CTA 0 of the first; load CTAs in its GPC (local), in the six others (remote), in "
                "all (all), or none (alone); the other CTAs return at once. _g<G>: the load CTAs in groups of G consecutive "
                "CTAs, each group reading one walk (the same boxes in the same order). pair32KB: boxes of 32 KB (256 rows) for "
                "the probe and the load, three stages of the load in flight.",
                p);
  }
}

// Group "burst": n SMs each load one box from HBM at the same %globaltimer instant (the L2 flushed before every rep):
// how the boxes of a burst land. Served one after another (first come first served) their latencies would spread
// evenly from one box's alone to that plus the burst's time at HBM's rate; served together (each box's rows spread
// over all of HBM's channels) they would all land near the burst's end. Two boxes: 32 KB of contiguous 128-byte rows,
// and a GEMM operand's k-walk box (128 rows of 128 B, 2048 B apart: K2's A box at K = 1024, whose 256-byte L2
// promotion reads 32 KB from HBM). Latency: the wait's end less the clock before the arrive.expect_tx, one per CTA and
// rep; the rows' params give the spread within a rep (median over reps of its p10, p90 and max less its min).
void bench_hbm_burst(Ctx& c) {
  const size_t big_bytes = 2ull << 30;
  DevBuf<uint16_t> big(big_bytes / 2);
  CK(cudaMemset(big.p, 0, big_bytes));
  CK(cudaFuncSetAttribute(ring_kernel(1), cudaFuncAttributeMaxDynamicSharedMemorySize, kRingDyn));
  RingBufs rb(c.sm_count);
  struct Box {
    const char* name;
    int row_bytes, box_rows, hbm_bytes;  // tensor row, box rows of 128 B, what HBM reads for it (256-byte promotion)
  };
  const int reps = 20;
  for (const Box& bx : {Box{"contig32KB", 128, 256, 32768}, Box{"kwalk16KB_r2048", 2048, 128, 32768}}) {
    const long long rows = static_cast<long long>(big_bytes / bx.row_bytes);
    CUtensorMap map = make_rows_map(big.p, rows, bx.row_bytes, 128, bx.box_rows, CU_TENSOR_MAP_SWIZZLE_128B);
    const long long nboxes = rows / bx.box_rows * (bx.row_bytes / 128);
    for (int n : {1, 8, 33, 66, c.sm_count}) {
      RingCfg cfg = ring_cfg(map, bx.box_rows, 1, n, nboxes, true, reps);
      cfg.row_bytes = 128;
      cfg.xboxes = bx.row_bytes / 128;
      cfg.iters = 1;
      cfg.sample_all = true;
      cfg.check_data = false;  // zeros, not the fill pattern
      cfg.want_smids = true;
      cfg.delay_ns.assign(static_cast<size_t>(n), 0);  // one common start
      for (int k = 0; k < n; ++k) {
        // Each CTA its own row block (k-walk: the first box of a block of 128 rows), far from the others'.
        cfg.start.push_back(static_cast<long long>(k) * (nboxes / c.sm_count / cfg.xboxes) * cfg.xboxes);
        cfg.stride.push_back(1);
      }
      RingOut o = run_ring(c, cfg, rb);
      const std::string name = std::string("hbm_burst_") + bx.name + "_n" + std::to_string(n);
      if (o.problem.empty() && o.lat.size() != static_cast<size_t>(n) * static_cast<size_t>(c.quick ? 1 : reps))
        o.problem = "expected one latency per CTA and rep, got " + std::to_string(o.lat.size());
      if (std::string e = c.take_err(); !e.empty() && o.problem.empty()) o.problem = e;
      if (!o.problem.empty()) {
        c.res->fail(name + "_latency", o.problem);
        continue;
      }
      std::vector<double> p10, p90, width;
      for (size_t r = 0; r + static_cast<size_t>(n) <= o.lat.size(); r += static_cast<size_t>(n)) {
        std::vector<double> v(o.lat.begin() + static_cast<long>(r), o.lat.begin() + static_cast<long>(r) + n);
        const Stats st = compute_stats(v);
        p10.push_back(st.p10);
        p90.push_back(st.p90);
        width.push_back(st.max - st.min);
      }
      JObj p;
      p.num("ctas", n).num("box_bytes", bx.box_rows * 128).num("row_bytes", bx.row_bytes).num("hbm_bytes_per_box", bx.hbm_bytes)
          .num("burst_hbm_bytes", double(n) * bx.hbm_bytes)
          .num("rep_p10_median", compute_stats(p10).median).num("rep_p90_median", compute_stats(p90).median)
          .num("rep_width_median", compute_stats(width).median).num("sm_clock_ghz_used", c.clk_ghz)
          .str("smids", o.smids);
      c.res->add(name + "_latency", G, "cycles", o.lat,
                 "A burst of HBM boxes (group burst): n CTAs (one per SM, 200 KB smem) each issue one TMA box load at the same "
                 "%globaltimer instant (20 us after the first CTA starts), the L2 flushed before every rep; per CTA the "
                 "wait's end less clock64 before its arrive.expect_tx. contig32KB: 256 rows of 128 B, contiguous; "
                 "kwalk16KB_r2048: 128 rows of 128 B, 2048 B apart (a GEMM operand's k-walk box; the tensor map's 256-byte "
                 "L2 promotion reads each row's 256 B). Each CTA reads its own rows. Value: every CTA's latency over 20 reps; "
                 "params.rep_*: the spread within one burst (median over reps).",
                 p);
    }
  }
}

// Group "gpc": the GPCs. A cluster's CTAs run on the SMs of one GPC (CUDA Programming Guide, thread block clusters),
// so (1) how many clusters of C one-CTA-per-SM CTAs fit at once (cudaOccupancyMaxActiveClusters) and the SMs the
// clusters of 16 land on say how the SMs group into GPCs, and (2) k SMs of one GPC loading together (one cluster of
// k) against k SMs the block scheduler spreads (a plain launch of k CTAs; their SM ids are recorded) say whether a
// GPC's link to the L2 limits its SMs' loads: the same ring as the think group (one warm 8 MiB tensor, each CTA its
// own order), a GEMM stage (two 16 KB boxes on one barrier) one at a time, or four 32 KB boxes in flight.
void bench_gpc(Ctx& c) {
  const long long l2_rows = (8ll << 20) / kRowBytes;
  DevBuf<uint16_t> big(static_cast<size_t>(l2_rows) * kCols);
  fill_pattern(c, big.p, static_cast<size_t>(l2_rows));
  for (int D : {1, 4}) {
    CK(cudaFuncSetAttribute(ring_kernel(D), cudaFuncAttributeMaxDynamicSharedMemorySize, kRingDyn));
    CK(cudaFuncSetAttribute(ring_kernel(D), cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  RingBufs rb(c.sm_count);
  // (1) Clusters that fit at once, C = 1..16.
  for (int C : {1, 2, 3, 4, 6, 8, 12, 16}) {
    ClusterLaunch lc(C * (c.sm_count / C), C, 32, kRingDyn);
    lc.cfg.numAttrs = 1;  // the cluster dimension even for C = 1: without it the query answers 0
    int n = 0;
    CK(cudaOccupancyMaxActiveClusters(&n, ring_kernel(1), &lc.cfg));
    JObj p;
    p.num("cluster_size", C).num("ctas", n * C).num("sm_count", c.sm_count);
    c.res->add("gpc_max_active_clusters_c" + std::to_string(C), G, "clusters", {double(n)},
               "cudaOccupancyMaxActiveClusters for clusters of cluster_size CTAs of a kernel that takes one CTA per "
               "SM (200 KB of dynamic smem): clusters that can be resident at once; params.ctas = SMs they use.",
               p);
  }
  const int rows16 = 128, rows32 = 256;
  CUtensorMap m16 = make_map(big.p, static_cast<uint64_t>(l2_rows), rows16);
  CUtensorMap m32 = make_map(big.p, static_cast<uint64_t>(l2_rows), rows32);
  // (2) k SMs in one GPC (one cluster) or spread (plain launch), and every GPC's first 16 SMs (clusters of 16).
  struct Shape {
    const char* tag;
    const CUtensorMap* map;
    int rows;
    bool pair;
    int D;
  };
  const Shape shapes[] = {{"pair16KB_s1", &m16, rows16, true, 1}, {"box32KB_s4", &m32, rows32, false, 4}};
  // Where the block scheduler puts a plain launch of K one-CTA-per-SM CTAs (params.smids, CTA by CTA), with the
  // stage latency of one stage at a time on them.
  for (int k : {24, 33, 48, 66, 80, 99, 120, 132}) {
    RingCfg cfg = think_cfg(m16, l2_rows, rows16, true, 0, 1, k);
    cfg.want_smids = true;
    RingOut o = run_ring(c, cfg, rb);
    JObj p;
    p.str("source", "l2").str("placement", "plain launch").num("box_bytes", rows16 * kRowBytes).num("boxes_per_stage", 2)
        .num("stages", 1).num("ctas", k);
    const std::string name = "gpc_order_pair16KB_s1_ctas" + std::to_string(k);
    record_ring(c, name + "_bw", name + "_latency", o,
                "A plain launch of k CTAs, one per SM (params.smids: the SM of each CTA, in CTA order), one stage of two "
                "16 KB boxes at a time, back to back. ",
                p);
  }
  for (const Shape& sh : shapes) {
    for (int k : {1, 2, 4, 8, 12, 16}) {
      for (int packed : {0, 1}) {
        if (k == 1 && packed) continue;
        RingCfg cfg = think_cfg(*sh.map, l2_rows, sh.rows, sh.pair, 0, sh.D, k);
        cfg.cluster = packed ? k : 1;
        cfg.want_smids = true;
        RingOut o = run_ring(c, cfg, rb);
        JObj p;
        p.str("source", "l2").str("placement", packed ? "one cluster (one GPC)" : "plain launch (spread)")
            .num("box_bytes", sh.rows * kRowBytes).num("boxes_per_stage", sh.pair ? 2 : 1).num("stages", sh.D)
            .num("ctas", k);
        const std::string name = std::string("gpc_") + (packed ? "packed" : "spread") + "_" + sh.tag + "_ctas" + std::to_string(k);
        record_ring(c, name + "_bw", name + "_latency", o,
                    "k SMs load together, one CTA each, D stages in flight back to back (no think time): one "
                    "cluster of k CTAs (its SMs in one GPC) or a plain launch of k CTAs (params.smids). ",
                    p);
      }
    }
    // Clusters of 16 on every GPC that holds one, all loading: each GPC's first 16 SMs (smids: 16 per cluster).
    // With the first shape also clusters of 4 and of 8, as many as fit (their SM ids map the SMs to GPCs).
    for (int C : {4, 8}) {
      if (sh.D != 1) break;
      ClusterLaunch lc(C * (c.sm_count / C), C, 32, kRingDyn);
      int n = 0;
      CK(cudaOccupancyMaxActiveClusters(&n, ring_kernel(sh.D), &lc.cfg));
      RingCfg cfg = think_cfg(*sh.map, l2_rows, sh.rows, sh.pair, 0, sh.D, C * n);
      cfg.cluster = C;
      cfg.want_smids = true;
      RingOut o = run_ring(c, cfg, rb);
      JObj p;
      p.str("source", "l2").str("placement", "as many clusters of cluster_size as fit")
          .num("box_bytes", sh.rows * kRowBytes).num("boxes_per_stage", sh.pair ? 2 : 1).num("stages", sh.D)
          .num("ctas", C * n).num("clusters", n).num("cluster_size", C);
      const std::string name = "gpc_map_c" + std::to_string(C) + "_" + sh.tag;
      record_ring(c, name + "_bw", name + "_latency", o,
                  "As many clusters of cluster_size as fit, all loading, D stages back to back (params.smids: cluster "
                  "by cluster; the SMs of one cluster are in one GPC). ",
                  p);
    }
    {
      ClusterLaunch lc(16, 16, 32, kRingDyn);
      int n16 = 0;
      CK(cudaOccupancyMaxActiveClusters(&n16, ring_kernel(sh.D), &lc.cfg));
      if (n16 < 1) continue;
      RingCfg cfg = think_cfg(*sh.map, l2_rows, sh.rows, sh.pair, 0, sh.D, 16 * n16);
      cfg.cluster = 16;
      cfg.want_smids = true;
      RingOut o = run_ring(c, cfg, rb);
      JObj p;
      p.str("source", "l2").str("placement", "clusters of 16 (one per GPC that holds 16)")
          .num("box_bytes", sh.rows * kRowBytes).num("boxes_per_stage", sh.pair ? 2 : 1).num("stages", sh.D)
          .num("ctas", 16 * n16).num("clusters", n16);
      const std::string name = std::string("gpc_clusters16_") + sh.tag;
      record_ring(c, name + "_bw", name + "_latency", o,
                  "Every GPC that holds 16 of these CTAs runs one cluster of 16 (params.smids: cluster by cluster, "
                  "so each run of 16 ids is one GPC's SMs), all loading, D stages back to back. ",
                  p);
    }
  }
}

void bench_hierarchy(Ctx& c) {
  const PatternTensor big(c, 2ull << 30);
  const long long big_rows = big.rows;
  for (int D : {1, 2, 3, 4, 6, 8, 12})
    CK(cudaFuncSetAttribute(ring_kernel(D), cudaFuncAttributeMaxDynamicSharedMemorySize, kRingDyn));
  RingBufs rb(c.sm_count);
  auto t0 = std::chrono::steady_clock::now();
  auto lap = [&](const char* what) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("   [hierarchy] %s done at %.1f s\n", what, s);
    std::fflush(stdout);
  };
  part_loaded_latency(c, big.p, big_rows, rb);
  lap("loaded latency");
  part_l2(c, big.p, big_rows, rb);
  lap("L2 footprint / sharing");
  part_launch(c);
  lap("launch");
  part_clock(c);
  lap("clock under load");
}

// Group "clusterstart": what a launch costs by cluster size. Each launch holds as many clusters as fit at once (one
// wave, as a persistent CUTLASS kernel sizes its grid), of the probe (c)+(d): 200 KB of dynamic smem (one CTA per SM),
// 16 mbarrier inits and the cluster's arrive + wait. A plain launch of the same CTA count as the clusters of 4 is the
// control (the grid shrinks with the cluster size: fewer CTAs fit in clusters).
void bench_cluster_start(Ctx& c) {
  const int dyn200 = 200 * 1024;
  CK(cudaFuncSetAttribute(k_launch_probe<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn200));
  CK(cudaFuncSetAttribute(k_launch_probe<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn200));
  const bool non_portable =
      cudaFuncSetAttribute(k_launch_probe<2>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess;
  cudaGetLastError();
  auto fits = [&](int k) {  // clusters of k that fit at once (0: none, or the size is refused)
    cudaLaunchAttribute at;
    cudaLaunchConfig_t cfg = probe_config(k * c.sm_count, dyn200, k, at);
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, k_launch_probe<2>, &cfg) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return n;
  };
  std::vector<LaunchVar> vars;
  const int n4 = fits(4);
  if (n4 > 0)
    vars.push_back({"plain_grid" + std::to_string(4 * n4) + "_smem200KB_mbar16", 1, 4 * n4, dyn200, 1,
                    "(f) as (c) with " + std::to_string(4 * n4) +
                        " CTAs, no clusters (the CTA count of the clusters of 4 below)"});
  for (int k : {2, 4, 8, 16}) {
    const int n = k > 8 && !non_portable ? 0 : fits(k);
    if (n <= 0) {
      c.res->fail("hier_launch_cluster" + std::to_string(k) + "_fit", "no cluster of this size fits (or it is refused)");
      continue;
    }
    vars.push_back({"cluster" + std::to_string(k) + "_fit_smem200KB_mbar16", 2, k * n, dyn200, k,
                    "(g) as (d) in clusters of " + std::to_string(k) + "x1, as many as fit at once (" + std::to_string(n) +
                        " clusters, " + std::to_string(k * n) + " CTAs)"});
  }
  launch_variants(c, "clusterstart", vars);
}

}  // namespace mb
