// TMA multicast under load (group "multicast", mcast_*): when the CTAs of a cluster need the same box, one
// `.multicast::cluster` load reads it from the L2 once and writes it into every CTA's shared memory. Does each SM
// then receive data faster than the L2 serves unicast loads (the hier_loaded rings: ~30 B per SM-cycle per SM with
// every SM loading 16-32 KB boxes from a warm 8 MiB tensor, ~12 from HBM), up to C times the L2-read rate, or is
// the delivery into each SM (or its GPC) the limit, so that a multicast stage of C boxes arrives no sooner than C
// unicast boxes? And what does a multicast stage's latency cost against a unicast one, alone and under load?
//
// One kernel, one thread per CTA (one CTA per SM: 200 KB dynamic smem), D stages in flight. A stage is C boxes
// (bf16 64 x B/128 rows, 128B swizzle, as the ring) on one full mbarrier expecting all C x B bytes:
//   unicast:   the CTA issues the C boxes of its stage itself (its own walk over the tensor), into its own smem;
//   multicast: the C CTAs of a cluster walk the tensor together; cluster rank r issues box r of each stage with
//              ctaMask (1 << C) - 1, so every box is read once and lands at the same offset in all C CTAs.
// Clusters of C = 2 and 4 run both modes with the same launch, stages and stage-reuse protocol, so that only the
// multicast differs; C = 1 is a plain launch (the hier_loaded ring's loop, one box per stage).
// Stage reuse in a cluster: a CTA's stage s is written by every CTA of its cluster (multicast), so nobody may
// re-issue stage s before every CTA has finished waiting on its own full[s]. Each CTA has an empty[s] mbarrier of
// count C; after its wait on full[s] a CTA arrives (mapa + mbarrier.arrive.shared::cluster) on empty[s] of every
// CTA of the cluster, itself included, and waits on its own empty[s] before it re-issues stage s. Barriers are
// initialized, fenced (fence.mbarrier_init.release.cluster) and published by a cluster barrier before the first
// load; a cluster barrier before exit keeps every CTA alive while peers may still write into it or arrive on it.
//
//  1. all SMs: as many CTAs as fit (C = 1: one per SM; clusters: C x cudaOccupancyMaxActiveClusters), D = 4,
//     B = 16 and 32 KB, an 8 MiB warm tensor (every CTA receives all of it once per rep, each walk in its own order)
//     or HBM (2 GiB tensor, L2 flushed before every rep, each CTA / cluster streams 8 MiB of its own slice).
//  2. one cluster alone (one CTA for C = 1), D = 1, B = 32 KB, the warm tensor: the stage latency on an idle GPU.
//  4-8. split roles (mcast_split_*): a producer warp that only issues and a consumer warp that waits and releases, as a
//     CUTLASS cluster GEMM; think time, coupling, staggered issue, one issuer, no cluster (the sections below).
//  9. a cluster GEMM's stage (mcast_split_gemm_*, also alone with --only multicast_gemm): an A box the cluster needs
//     (multicast: each rank its half for both CTAs) and a B box of each CTA's own; the A walk the cluster's own or
//     shared by the whole grid (a skinny GEMM's small operand).
//  3. burst (mcast_burst_*): one cluster alone (one CTA for C = 1), thread 0 of rank 0 issues NB loads back to back
//     (8 KB x 24, 32 KB x 6, warm tensor), unicast or multicast to all C CTAs, clock64 after each issue, then waits:
//     the issuing thread's cycles per load instruction when nothing waits (as tma_burst_* in bench_tma.cu).
#include <algorithm>
#include <numeric>

#include "common.cuh"
#include "tma_util.cuh"

namespace mb {
namespace {

const std::string G = "multicast";

constexpr int kRecW = 10;                   // u64 words per CTA in the record
constexpr int kLatCap = 1024;               // latency samples per CTA (kept in smem during the run)
constexpr int kDyn = 200 * 1024 + 1024;     // > half the SM's smem: one CTA per SM; 192 KB of stages + align
constexpr int kBufBytes = 192 * 1024;

struct McastArgs {
  int mcast;           // 1: rank r issues box r of every stage to the whole cluster; 0: each CTA issues its C boxes
  int nbuf;            // distinct stage buffers; stage s writes buffer s % nbuf (nbuf < D: aliased, no data check)
  int box_rows;        // 128 B rows per box
  int bytes;           // box bytes (a stage: C boxes)
  int iters;           // stages per CTA
  int check_every;     // check 4 elements of every box of every k-th stage (0: never)
  int lat_from, lat_to;  // stages [from, to) store their latency (at most kLatCap per CTA)
  int think;             // k_mcast_split: cycles the consumer spins after each full wait, before it releases the stage
  int delay_odd;         // k_mcast_split: cycles the producers of odd cluster ranks spin before each issue
  int one_issuer;        // multicast: rank 0 issues all C boxes of every stage (back to back), the others none
  int couple;            // k_mcast_split: 1: a stage is released to every CTA of the cluster (empty count C); 0: to its own
                         // CTA only (empty count 1: the CTAs of a cluster run unicast rings independently)
  int gemm;              // k_mcast_split, C = 2: a GEMM's stage, an A box from the A walk (multicast: each rank issues its half
                         // box, `half` map, to both CTAs; unicast: the CTA issues the whole box, `amap`) and a B box (box_rows,
                         // `map`) of its own walk
  int a_rows;            // gemm: rows of the A box (a_bytes = a_rows x 128)
  int stage_bytes;       // bytes of a stage's buffer (C x bytes; gemm: a_bytes + bytes)
  long long a_nboxes;    // gemm: A boxes in the tensor (A box b = rows [b * a_rows, + a_rows))
  const long long* a_start;   // gemm: per CTA, the A walk's first box (the same for every CTA: an operand every CTA reads)
  const long long* a_stride;  // gemm: per CTA, the A walk's box step
  long long nboxes;      // boxes in the tensor (box b = rows [b * box_rows, + box_rows))
  const long long* start;   // per CTA: first box of its walk (the CTAs of a multicast cluster share one walk)
  const long long* stride;  // per CTA: box step (mod nboxes)
  uint32_t* lat;            // [cta][kLatCap] latency samples (cycles)
  unsigned long long* rec;  // [cta][kRecW]: g0, g1, cycles, smid, nlat, full-wait cycles, stages done, issue
                            // cycles, empty-wait cycles, cluster rank
};

// Issues one stage: arrive.expect_tx(C x B) on this CTA's full barrier, then the stage's C boxes (walk positions
// bidx, bidx + st, ...; box j at offset j x B): all of them (unicast), or box `rank` only, to every CTA of the
// cluster (multicast). Advances bidx past the stage.
template <int C>
DEVI void issue_stage(const CUtensorMap& map, const McastArgs& a, uint32_t dst, uint32_t fb, uint32_t rank,
                      long long& bidx, long long st) {
  mbar_arrive_expect_tx(fb, static_cast<uint32_t>(C * a.bytes));
#pragma unroll
  for (int j = 0; j < C; ++j) {
    const int y = static_cast<int>(bidx * a.box_rows);
    const uint32_t d = dst + static_cast<uint32_t>(j * a.bytes);
    if (C > 1 && a.mcast) {
      // (one_issuer: rank 0 issues every box of the stage, back to back; the other ranks only arm their barriers)
      if (a.one_issuer ? rank == 0u : static_cast<uint32_t>(j) == rank)
        tma_load_2d_mc(d, &map, 0, y, fb, static_cast<uint16_t>((1u << C) - 1u));
    } else {
      tma_load_2d(d, &map, 0, y, fb);
    }
    bidx += st;
    if (bidx >= a.nboxes) bidx -= a.nboxes;
  }
}

// Compares 4 elements (first and last row, columns 0 and 61) of each of a stage's C boxes, the first at walk
// position b, with the tensor's pattern; returns the mismatches.
template <int C>
DEVI unsigned check_stage(const unsigned char* stage, const McastArgs& a, long long b, long long st) {
  unsigned bad = 0;
#pragma unroll
  for (int j = 0; j < C; ++j) {
    const unsigned char* bp = stage + static_cast<size_t>(j) * a.bytes;
    const uint32_t y = static_cast<uint32_t>(b * a.box_rows);
    const uint32_t rs[2] = {0u, static_cast<uint32_t>(a.box_rows - 1)}, cs[2] = {0u, 61u};
    for (uint32_t r : rs)
      for (uint32_t cc : cs)
        if (*reinterpret_cast<const volatile uint16_t*>(bp + swz128(r, cc)) != pattern(y + r, cc)) ++bad;
    b += st;
    if (b >= a.nboxes) b -= a.nboxes;
  }
  return bad;
}

// A GEMM's stage (gemm): arrive.expect_tx(A + B bytes), the A box at A walk position aidx (multicast, C = 2: rank r
// issues rows [r a_rows / C, (r + 1) a_rows / C) of it, `half` map, to both CTAs; unicast: the whole box, `amap`) and
// the B box at its own walk position bidx (unicast, every mode, `map`), at offsets 0 and a_bytes of the stage. Advances
// both walks.
template <int C>
DEVI void issue_gemm_stage(const CUtensorMap& map, const CUtensorMap& amap, const CUtensorMap& half, const McastArgs& a,
                           uint32_t dst, uint32_t fb, uint32_t rank, long long& aidx, long long ast, long long& bidx,
                           long long bst) {
  const int a_bytes = a.a_rows * kRowBytes;
  mbar_arrive_expect_tx(fb, static_cast<uint32_t>(a_bytes + a.bytes));
  const int ya = static_cast<int>(aidx * a.a_rows);
  if (C > 1 && a.mcast) {
    const int hr = a.a_rows / C;
    tma_load_2d_mc(dst + rank * static_cast<uint32_t>(a_bytes / C), &half, 0, ya + static_cast<int>(rank) * hr, fb,
                   static_cast<uint16_t>((1u << C) - 1u));
  } else {
    tma_load_2d(dst, &amap, 0, ya, fb);
  }
  tma_load_2d(dst + static_cast<uint32_t>(a_bytes), &map, 0, static_cast<int>(bidx * a.box_rows), fb);
  aidx += ast;
  if (aidx >= a.a_nboxes) aidx -= a.a_nboxes;
  bidx += bst;
  if (bidx >= a.nboxes) bidx -= a.nboxes;
}

// Compares 4 elements of a GEMM stage's A box (walk position ab) and B box (bb) with the tensor's pattern.
DEVI unsigned check_gemm_stage(const unsigned char* stage, const McastArgs& a, long long ab, long long bb) {
  unsigned bad = 0;
  const long long pos[2] = {ab, bb};
  const int rows[2] = {a.a_rows, a.box_rows};
  for (int j = 0; j < 2; ++j) {
    const unsigned char* bp = stage + static_cast<size_t>(j) * a.a_rows * kRowBytes;
    const uint32_t y = static_cast<uint32_t>(pos[j] * rows[j]);
    const uint32_t rs[2] = {0u, static_cast<uint32_t>(rows[j] - 1)}, cs[2] = {0u, 61u};
    for (uint32_t r : rs)
      for (uint32_t cc : cs)
        if (*reinterpret_cast<const volatile uint16_t*>(bp + swz128(r, cc)) != pattern(y + r, cc)) ++bad;
  }
  return bad;
}

// Thread 0 of each CTA: issue D stages (t_iss[s] = clock64 before the stage's arrive.expect_tx), then for every stage
// in issue order: wait full[s] (bounded try_wait loop), latency = clock64 after the wait - t_iss[s], check the data
// of every 16th stage, and (clusters) arrive on empty[s] of every CTA of the cluster and wait on its own empty[s];
// then re-issue stage s. As in k_ring, C and D are template parameters (the ring unrolls, per-stage state stays in
// registers) and the latency samples go to smem, copied out after the timed region. A full phase completes only when
// all C x B bytes have landed, so each completed wait is a verified delivery of the whole stage; the host checks
// that every CTA completed all its stages.
template <int C, int D>
__global__ void __launch_bounds__(32, 1) k_mcast(const __grid_constant__ CUtensorMap map, const McastArgs a,
                                                 unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t full_bar[D], empty_bar[D];
  __shared__ uint32_t lat_s[kLatCap];
  unsigned char* buf = align1024(dyn_raw);  // the same offset in every CTA: multicast writes land at dst in each
  const uint32_t fb0 = smem_u32(&full_bar[0]), eb0 = smem_u32(&empty_bar[0]);
  const uint32_t rank = C > 1 ? cluster_ctarank() : 0u;
  if (threadIdx.x == 0) {
#pragma unroll
    for (int k = 0; k < D; ++k) {
      mbar_init(fb0 + 8u * k, 1);
      if (C > 1) mbar_init(eb0 + 8u * k, C);
    }
    fence_mbar_init();
  }
  // Every CTA's barriers are initialized before any peer loads into it or arrives on them.
  if (C > 1) cluster_sync_all();
  if (threadIdx.x == 0) {
    prefetch_tmap(&map);
    uint32_t dst[D];
    unsigned long long t_iss[D];
    long long b_s[D];  // walk position of the stage's first box (data check)
#pragma unroll
    for (int k = 0; k < D; ++k) {
      dst[k] = smem_u32(buf) + static_cast<uint32_t>((k % a.nbuf) * C * a.bytes);
      t_iss[k] = 0;
      b_s[k] = 0;
    }
    const long long nb = a.nboxes, st = a.stride[blockIdx.x];
    long long bidx = a.start[blockIdx.x] % nb;
    int nlat = 0, done = 0, issued = 0, chk = a.check_every;
    unsigned bad = 0;
    unsigned long long wait_cyc = 0, issue_cyc = 0, empty_cyc = 0;
    const unsigned long long g0 = gtime(), c0 = clk();
#pragma unroll
    for (int s = 0; s < D; ++s) {
      if (issued < a.iters) {
        b_s[s] = bidx;
        t_iss[s] = clk();
        issue_stage<C>(map, a, dst[s], fb0 + 8u * s, rank, bidx, st);
        issue_cyc += clk() - t_iss[s];
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
          const uint32_t fb = fb0 + 8u * s;
          const unsigned long long tw = clk();
          ok = mbar_wait<WAIT_TRY>(fb, ph, err);
          const unsigned long long t = clk();
          if (ok) {
            ++done;
            wait_cyc += t - tw;
            if (i >= a.lat_from && i < a.lat_to && nlat < kLatCap) lat_s[nlat++] = static_cast<uint32_t>(t - t_iss[s]);
            if (chk && --chk == 0) {
              chk = a.check_every;
              bad += check_stage<C>(buf + static_cast<size_t>(s) * C * a.bytes, a, b_s[s], st);  // only when nbuf >= D
              fence_proxy_async_smem();  // generic reads before the next async-proxy write of this buffer
            }
            // Stage s is consumed here: tell every CTA of the cluster (each may multicast into it next round).
            if (C > 1) {
#pragma unroll
              for (int q = 0; q < C; ++q) mbar_arrive_cluster_default(mapa_shared(eb0 + 8u * s, static_cast<uint32_t>(q)));
            }
            if (issued < a.iters) {
              if (C > 1) {  // every CTA of the cluster has consumed its stage s: this CTA's box may overwrite it
                const unsigned long long te = clk();
                ok = mbar_wait<WAIT_TRY>(eb0 + 8u * s, ph, err);
                empty_cyc += clk() - te;
              }
              if (ok) {
                b_s[s] = bidx;
                t_iss[s] = clk();
                issue_stage<C>(map, a, dst[s], fb, rank, bidx, st);
                issue_cyc += clk() - t_iss[s];
                ++issued;
              }
            }
          }
          ++i;
        }
      }
      ph ^= 1u;
    }
    const unsigned long long c1 = clk(), g1 = gtime();
    unsigned long long* r = a.rec + static_cast<size_t>(blockIdx.x) * kRecW;
    report_ring({g0, g1, c1 - c0, wait_cyc, issue_cyc, nlat, done, bad}, lat_s, a.lat + static_cast<size_t>(blockIdx.x) * kLatCap,
                r, err);
    r[8] = empty_cyc;
    r[9] = rank;
  }
  // No CTA exits while a peer may still multicast into its smem or arrive on its barriers.
  __syncwarp();
  if (C > 1) cluster_sync_all();
}

// The same ring with the roles of a CUTLASS cluster GEMM: thread 0 of warp 0 only issues (the producer: the first D
// stages, then stage s again after its own empty[s] wait), thread 0 of warp 1 only consumes (the consumer: waits on
// full[s], takes the latency sample, checks the data, arrives on empty[s] of every CTA of the cluster). In k_mcast one
// thread does both, so its TMA issue follows its own remote arrives; here the issuing thread makes none. The record spans
// the producer's start to the consumer's last wait (%globaltimer and clock64), with the producer's issue and empty-wait
// cycles and the consumer's full-wait cycles, samples and stages.
template <int C, int D>
__global__ void __launch_bounds__(64, 1) k_mcast_split(const __grid_constant__ CUtensorMap map,
                                                      const __grid_constant__ CUtensorMap amap,
                                                      const __grid_constant__ CUtensorMap half, const McastArgs a,
                                                      unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t full_bar[D], empty_bar[D];
  __shared__ uint32_t lat_s[kLatCap];
  __shared__ unsigned long long t_iss_s[D];
  __shared__ long long b_s[D], a_s[D];
  __shared__ unsigned long long cons_wait, cons_end_c, cons_end_g, prod[5];  // prod: g0, clock64 at start, -, issue, empty-wait cycles
  __shared__ int cons_nlat, cons_done;
  __shared__ unsigned cons_bad;
  unsigned char* buf = align1024(dyn_raw);
  const uint32_t fb0 = smem_u32(&full_bar[0]), eb0 = smem_u32(&empty_bar[0]);
  const uint32_t rank = C > 1 ? cluster_ctarank() : 0u;
  if (threadIdx.x == 0) {
#pragma unroll
    for (int k = 0; k < D; ++k) {
      mbar_init(fb0 + 8u * k, 1);
      mbar_init(eb0 + 8u * k, a.couple ? C : 1);
    }
    fence_mbar_init();
  }
  __syncthreads();
  if (C > 1) cluster_sync_all();
  const long long nb = a.nboxes, st = a.stride[blockIdx.x];
  if (threadIdx.x == 0) {  // producer
    prefetch_tmap(&map);
    uint32_t dst[D];
#pragma unroll
    for (int k = 0; k < D; ++k) dst[k] = smem_u32(buf) + static_cast<uint32_t>((k % a.nbuf) * a.stage_bytes);
    long long bidx = a.start[blockIdx.x] % nb;
    long long aidx = a.gemm ? a.a_start[blockIdx.x] % a.a_nboxes : 0;
    const long long ast = a.gemm ? a.a_stride[blockIdx.x] : 0;
    if (a.gemm) prefetch_tmap(&half), prefetch_tmap(&amap);
    unsigned long long issue_cyc = 0, empty_cyc = 0;
    const unsigned long long g0 = gtime(), c0 = clk();
    bool ok = true;
    for (int k = 0; k < a.iters && ok; ++k) {
      const int s = k % D;
      if (k >= D) {  // every CTA of the cluster (or this CTA, uncoupled) has consumed this stage's previous round
        const unsigned long long te = clk();
        ok = mbar_wait<WAIT_TRY>(eb0 + 8u * s, static_cast<uint32_t>((k / D - 1) & 1), err);
        empty_cyc += clk() - te;
      }
      if (ok) {
        if (a.delay_odd > 0 && (rank & 1u)) {  // this rank issues later than its peers (not counted as issue)
          const unsigned long long td = clk();
          while (clk() - td < static_cast<unsigned long long>(a.delay_odd)) {
          }
        }
        b_s[s] = bidx;
        a_s[s] = aidx;
        const unsigned long long t = clk();
        t_iss_s[s] = t;
        if (a.gemm)
          issue_gemm_stage<C>(map, amap, half, a, dst[s], fb0 + 8u * s, rank, aidx, ast, bidx, st);
        else
          issue_stage<C>(map, a, dst[s], fb0 + 8u * s, rank, bidx, st);
        issue_cyc += clk() - t;
      }
    }
    prod[0] = g0, prod[1] = c0, prod[3] = issue_cyc, prod[4] = empty_cyc;
  } else if (threadIdx.x == 32) {  // consumer
    int nlat = 0, done = 0, chk = a.check_every;
    unsigned bad = 0;
    unsigned long long wait_cyc = 0;
    bool ok = true;
    for (int i = 0; i < a.iters && ok; ++i) {
      const int s = i % D;
      const unsigned long long tw = clk();
      ok = mbar_wait<WAIT_TRY>(fb0 + 8u * s, static_cast<uint32_t>((i / D) & 1), err);
      const unsigned long long t = clk();
      if (!ok) break;
      ++done;
      wait_cyc += t - tw;
      if (a.think > 0)  // the stage's consumers at work (a GEMM's MMAs) before it is released
        while (clk() - t < static_cast<unsigned long long>(a.think)) {
        }
      if (i >= a.lat_from && i < a.lat_to && nlat < kLatCap) lat_s[nlat++] = static_cast<uint32_t>(t - t_iss_s[s]);
      if (chk && --chk == 0) {
        chk = a.check_every;
        if (a.gemm)
          bad += check_gemm_stage(buf + static_cast<size_t>(s) * a.stage_bytes, a, a_s[s], b_s[s]);
        else
          bad += check_stage<C>(buf + static_cast<size_t>(s) * C * a.bytes, a, b_s[s], st);
        fence_proxy_async_smem();
      }
      if (C > 1 && a.couple) {
#pragma unroll
        for (int q = 0; q < C; ++q) mbar_arrive_cluster_default(mapa_shared(eb0 + 8u * s, static_cast<uint32_t>(q)));
      } else {
        mbar_arrive(eb0 + 8u * s);
      }
    }
    // The loop ends when the last stage has landed (the consumer's last wait), as k_mcast's does.
    cons_end_c = clk();
    cons_end_g = gtime();
    cons_wait = wait_cyc;
    cons_nlat = nlat;
    cons_done = done;
    cons_bad = bad;
  }
  __syncthreads();  // both tallies are in smem
  if (threadIdx.x == 0) {
    unsigned long long* r = a.rec + static_cast<size_t>(blockIdx.x) * kRecW;
    // From the producer's start to the consumer's end, in the SM's clock64 (one counter for both warps).
    report_ring({prod[0], cons_end_g, cons_end_c - prod[1], cons_wait, prod[3], cons_nlat, cons_done, cons_bad}, lat_s,
                a.lat + static_cast<size_t>(blockIdx.x) * kLatCap, r, err);
    r[8] = prod[4];
    r[9] = rank;
  }
  __syncthreads();
  if (C > 1) cluster_sync_all();
}

using McastKernel = void (*)(CUtensorMap, McastArgs, unsigned*);
McastKernel mcast_kernel(int C, int D) {
  if (D == 4) {
    if (C == 1) return k_mcast<1, 4>;
    if (C == 2) return k_mcast<2, 4>;
    if (C == 4) return k_mcast<4, 4>;
  } else if (D == 1) {
    if (C == 1) return k_mcast<1, 1>;
    if (C == 2) return k_mcast<2, 1>;
    if (C == 4) return k_mcast<4, 1>;
  }
  throw std::runtime_error("k_mcast: unsupported C " + std::to_string(C) + ", D " + std::to_string(D));
}
using McastSplitKernel = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, McastArgs, unsigned*);
McastSplitKernel mcast_split_kernel(int C, int D) {
  if (D == 4 && C == 1) return k_mcast_split<1, 4>;
  if (D == 1 && C == 1) return k_mcast_split<1, 1>;
  if (D == 2 && C == 2) return k_mcast_split<2, 2>;
  if (D == 4 && C == 2) return k_mcast_split<2, 4>;
  if (D == 4 && C == 4) return k_mcast_split<4, 4>;
  if (D == 1 && C == 2) return k_mcast_split<2, 1>;
  if (D == 1 && C == 4) return k_mcast_split<4, 1>;
  throw std::runtime_error("k_mcast_split: unsupported C " + std::to_string(C) + ", D " + std::to_string(D));
}

// Clusters of C (one CTA per SM) that can be resident at once.
int max_clusters(Ctx& c, int C, int D) {
  ClusterLaunch lc(C * (c.sm_count / C), C, 32, kDyn);
  int n = 0;
  CK(cudaOccupancyMaxActiveClusters(&n, mcast_kernel(C, D), &lc.cfg));
  if (n < 1) throw std::runtime_error("no cluster of " + std::to_string(C) + " fits");
  return n;
}

struct McastBufs {
  DevBuf<long long> start, stride, a_start, a_stride;
  DevBuf<uint32_t> lat;
  DevBuf<unsigned long long> rec;
  int ctas;
  explicit McastBufs(int n)
      : start(n), stride(n), a_start(n), a_stride(n), lat(static_cast<size_t>(n) * kLatCap), rec(static_cast<size_t>(n) * kRecW), ctas(n) {}
};

struct McastCfg {
  const CUtensorMap* map;
  int C, D, box_rows, ctas, iters;
  bool mcast;       // multicast (C > 1), else unicast
  long long nboxes;
  bool flush;       // flush L2 before every rep (HBM source)
  bool split = false;  // k_mcast_split: a producer thread issues, a consumer thread (another warp) waits and arrives
  int think = 0;       // k_mcast_split: the consumer's cycles per stage after its full wait
  bool couple = true;  // k_mcast_split: release each stage to the whole cluster (false: each CTA to itself, unicast only)
  int delay_odd = 0;   // k_mcast_split: the odd ranks' producers spin this many cycles before each issue
  bool one_issuer = false;  // multicast: rank 0 issues every box of a stage
  bool gemm = false;        // k_mcast_split, C = 2: a GEMM's stage (an A box from a_start / a_stride, a B box of the own walk)
  int a_group = 1;          // gemm: clusters that walk the same A boxes, consecutive in launch order (1: each its own; 0: all
                            // of the grid, an operand every CTA reads)
  bool a_spread = false;    // gemm: the a_group clusters of a walk are spread over the grid (cluster w walks w mod walks,
                            // walks = clusters / a_group) rather than consecutive
  const CUtensorMap* half = nullptr;  // gemm: the map of half an A box (a_rows / C rows), for multicast
  const CUtensorMap* amap = nullptr;  // gemm: the map of a whole A box (a_rows rows), for unicast
  int a_rows = 0;                     // gemm: rows of the A box
  std::vector<long long> a_start, a_stride;  // gemm: per CTA
  int reps;         // measured reps (after one warm-up rep)
  int max_active_clusters = 0;           // cudaOccupancyMaxActiveClusters (clusters), 0: plain launch
  std::vector<long long> start, stride;  // per CTA
};

struct McastOut {
  std::vector<double> gbs, lat;  // delivered GB/s per rep; latency per sampled stage (all measured reps)
  double clk_ghz = NAN;          // median over CTAs and reps: clock64 / %globaltimer over the CTA's loop
  double bpc_sm = NAN;           // median over reps: delivered bytes per SM-cycle per SM (GB/s / (clock x CTAs))
  double bpc_sm_clock64 = NAN;   // median over CTAs and reps: CTA bytes / CTA clock64 cycles
  double wait_frac = NAN;        // mean share of the loop spent waiting on full barriers
  double issue_frac = NAN;       // mean share spent from before arrive.expect_tx to after the last TMA issue
  double empty_frac = NAN;       // mean share spent waiting on the own empty barrier (for the cluster's peers)
  double issue_even = NAN, issue_odd = NAN;  // median over CTAs and reps: issue cycles per stage, even / odd cluster ranks
  double issue_rank0 = NAN;                  // the same, cluster rank 0
  double span_us = NAN;          // median span
  std::string smids;             // SM ids (runs with fewer CTAs than SMs)
  std::string problem;           // host-side check failure
};

// CTA k's walk: walker w of W (its cluster for multicast, the CTA itself for unicast). Warm tensor: from box
// w x nboxes / W with the walker's own step (every walker reads the tensor in its own order); HBM: the walker's own
// slice of nboxes / W boxes, sequentially (no reuse).
void set_walks(McastCfg& cfg, bool warm) {
  const int W = cfg.mcast ? cfg.ctas / cfg.C : cfg.ctas;
  if (!warm && static_cast<long long>(cfg.iters) * cfg.C > cfg.nboxes / W)
    throw std::runtime_error("multicast: the HBM tensor is too small for its walks");
  for (int k = 0; k < cfg.ctas; ++k) {
    const int w = cfg.mcast ? k / cfg.C : k;
    cfg.start.push_back(warm ? w * cfg.nboxes / W : w * (cfg.nboxes / W));
    cfg.stride.push_back(warm ? pick_stride(w, cfg.nboxes) : 1);
  }
}

// A ring of C-CTA clusters (C = 1: a plain launch) over `map`'s `nboxes` boxes of `box_rows` rows: `ctas` CTAs, D
// stages, `iters` stages per CTA, 3 measured reps; HBM source (`flush`: the L2 flushed before every rep, each walker
// streaming its own slice) or the warm tensor (each walker its own order). The caller sets the split-ring fields.
McastCfg ring_cfg(const CUtensorMap* map, int C, int D, int box_rows, int ctas, int iters, bool mcast, long long nboxes,
                  int max_active_clusters = 0, bool flush = false) {
  McastCfg cfg;
  cfg.map = map;
  cfg.C = C;
  cfg.D = D;
  cfg.box_rows = box_rows;
  cfg.ctas = ctas;
  cfg.iters = iters;
  cfg.mcast = mcast;
  cfg.nboxes = nboxes;
  cfg.flush = flush;
  cfg.reps = 3;
  cfg.max_active_clusters = max_active_clusters;
  set_walks(cfg, !flush);
  return cfg;
}

McastOut run_mcast(Ctx& c, const McastCfg& cfg, McastBufs& b) {
  McastOut o;
  const int bytes = cfg.box_rows * kRowBytes, stage = cfg.gemm ? cfg.a_rows * kRowBytes + bytes : cfg.C * bytes;
  McastArgs a{};
  a.mcast = cfg.mcast ? 1 : 0;
  a.nbuf = std::min(cfg.D, kBufBytes / stage);
  a.box_rows = cfg.box_rows;
  a.bytes = bytes;
  a.iters = cfg.iters;
  a.check_every = a.nbuf >= cfg.D ? 16 : 0;
  a.lat_from = 2 * cfg.D;
  a.lat_to = cfg.iters - cfg.D;
  a.think = cfg.think;
  a.couple = cfg.couple ? 1 : 0;
  a.delay_odd = cfg.delay_odd;
  a.one_issuer = cfg.one_issuer ? 1 : 0;
  a.nboxes = cfg.nboxes;
  a.stage_bytes = stage;
  a.a_rows = cfg.a_rows;
  a.a_nboxes = cfg.a_rows > 0 ? cfg.nboxes * cfg.box_rows / cfg.a_rows : 0;
  a.start = b.start.p;
  a.stride = b.stride.p;
  a.lat = b.lat.p;
  a.rec = b.rec.p;
  const size_t n = static_cast<size_t>(cfg.ctas);
  if (cfg.start.size() != n || cfg.stride.size() != n || cfg.ctas > b.ctas || cfg.ctas % cfg.C != 0)
    throw std::runtime_error("run_mcast: per-CTA tables of the wrong size");
  CK(cudaMemcpy(b.start.p, cfg.start.data(), n * sizeof(long long), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.stride.p, cfg.stride.data(), n * sizeof(long long), cudaMemcpyHostToDevice));
  ClusterLaunch lc(cfg.ctas, cfg.C, cfg.split ? 64 : 32, kDyn);
  if (cfg.gemm) {
    if (!cfg.split || cfg.C < 2 || (cfg.mcast && cfg.C != 2) || cfg.half == nullptr || cfg.amap == nullptr || cfg.a_rows <= 0 ||
        cfg.a_start.size() != n || cfg.a_stride.size() != n)
      throw std::runtime_error("run_mcast: a GEMM stage needs the split ring, a cluster (C = 2 to multicast), the half-box map "
                               "and A walks");
    CK(cudaMemcpy(b.a_start.p, cfg.a_start.data(), n * sizeof(long long), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.a_stride.p, cfg.a_stride.data(), n * sizeof(long long), cudaMemcpyHostToDevice));
  }
  a.gemm = cfg.gemm ? 1 : 0;
  a.a_start = b.a_start.p;
  a.a_stride = b.a_stride.p;
  const McastKernel kern = cfg.split ? nullptr : mcast_kernel(cfg.C, cfg.D);
  const McastSplitKernel split_kern = cfg.split ? mcast_split_kernel(cfg.C, cfg.D) : nullptr;
  std::vector<double> bpcs, bpc_c, clks, wf, isf, ef, spans, iss_even, iss_odd, iss_rank0;
  const int reps = c.quick ? 1 : cfg.reps;
  for (int r = 0; r <= reps; ++r) {
    if (cfg.flush) flush_l2(c);
    b.rec.zero();  // a CTA that never wrote its record shows 0 stages done
    if (cfg.split)
      CK(cudaLaunchKernelEx(&lc.cfg, split_kern, *cfg.map, cfg.amap ? *cfg.amap : *cfg.map, cfg.half ? *cfg.half : *cfg.map, a,
                            c.d_err));
    else
      CK(cudaLaunchKernelEx(&lc.cfg, kern, *cfg.map, a, c.d_err));
    CK_LAUNCH();
    if (r == 0) continue;  // warm-up (fills L2 for the warm source; TLB, clocks)
    auto h = b.rec.get();
    std::vector<uint32_t> hl(n * kLatCap);
    CK(cudaMemcpy(hl.data(), b.lat.p, hl.size() * 4, cudaMemcpyDeviceToHost));
    unsigned long long mn = ~0ull, mx = 0, stages = 0;
    std::vector<unsigned long long> sms;
    std::vector<double> rep_clk;
    double wsum = 0, isum = 0, esum = 0;
    for (int k = 0; k < cfg.ctas; ++k) {
      const unsigned long long* q = &h[static_cast<size_t>(k) * kRecW];
      mn = std::min(mn, q[0]);
      mx = std::max(mx, q[1]);
      sms.push_back(q[3]);
      if (q[6] != static_cast<unsigned long long>(cfg.iters) && o.problem.empty())
        o.problem = "CTA " + std::to_string(k) + " completed " + std::to_string(q[6]) + " of " +
                    std::to_string(cfg.iters) + " stages";
      if (q[9] != static_cast<unsigned long long>(k % cfg.C) && o.problem.empty())
        o.problem = "CTA " + std::to_string(k) + " has cluster rank " + std::to_string(q[9]);
      stages += q[6];
      for (unsigned long long j = 0; j < q[4] && j < static_cast<unsigned long long>(kLatCap); ++j)
        o.lat.push_back(double(hl[static_cast<size_t>(k) * kLatCap + j]));
      wsum += double(q[5]) / double(q[2]);
      isum += double(q[7]) / double(q[2]);
      (q[9] % 2 ? iss_odd : iss_even).push_back(double(q[7]) / double(std::max(q[6], 1ull)));
      if (q[9] == 0) iss_rank0.push_back(double(q[7]) / double(std::max(q[6], 1ull)));
      esum += double(q[8]) / double(q[2]);
      rep_clk.push_back(double(q[2]) / double(std::max(q[1] - q[0], 1ull)));
      bpc_c.push_back(double(q[6]) * stage / double(q[2]));
    }
    std::sort(sms.begin(), sms.end());
    if (std::adjacent_find(sms.begin(), sms.end()) != sms.end() && o.problem.empty())
      o.problem = "two CTAs ran on the same SM";
    const double g = double(stages) * stage / double(mx - mn);  // bytes landed in all CTAs' smem per ns
    const double ck = compute_stats(rep_clk).median;
    o.gbs.push_back(g);
    bpcs.push_back(g / (ck * cfg.ctas));
    clks.insert(clks.end(), rep_clk.begin(), rep_clk.end());
    wf.push_back(wsum / cfg.ctas);
    isf.push_back(isum / cfg.ctas);
    ef.push_back(esum / cfg.ctas);
    if (cfg.ctas < c.sm_count) {
      o.smids.clear();
      for (int k = 0; k < cfg.ctas; ++k) o.smids += (k ? "," : "") + std::to_string(h[static_cast<size_t>(k) * kRecW + 3]);
    }
    spans.push_back(double(mx - mn) / 1000.0);
  }
  o.clk_ghz = compute_stats(clks).median;
  o.bpc_sm = compute_stats(bpcs).median;
  o.bpc_sm_clock64 = compute_stats(bpc_c).median;
  o.wait_frac = compute_stats(wf).mean;
  o.issue_frac = compute_stats(isf).mean;
  o.empty_frac = compute_stats(ef).mean;
  if (!iss_even.empty()) o.issue_even = compute_stats(iss_even).median;
  if (!iss_odd.empty()) o.issue_odd = compute_stats(iss_odd).median;
  if (!iss_rank0.empty()) o.issue_rank0 = compute_stats(iss_rank0).median;
  o.span_us = compute_stats(spans).median;
  return o;
}

// Records "<prefix>_bw_<tag>" (delivered GB/s per rep) and "<prefix>_latency_<tag>" (cycles per sampled stage).
void record_mcast(Ctx& c, const std::string& prefix, const std::string& tag, const McastCfg& cfg, const McastOut& o,
                  const std::string& what) {
  const std::string bw_name = prefix + "_bw_" + tag, lat_name = prefix + "_latency_" + tag;
  if (!o.problem.empty()) {
    c.take_err();
    c.res->fail(bw_name, o.problem);
    return;
  }
  const int bytes = cfg.box_rows * kRowBytes, stage = cfg.gemm ? cfg.a_rows * kRowBytes + bytes : cfg.C * bytes;
  const int nbuf = std::min(cfg.D, kBufBytes / stage);
  const double delivered = double(cfg.ctas) * cfg.iters * stage;
  // (gemm, multicast: half of the A box and the whole B box of each CTA's stage are read)
  const double a_bytes = cfg.a_rows * kRowBytes;
  const double l2_read = !cfg.mcast ? delivered : cfg.gemm ? delivered * (a_bytes / cfg.C + bytes) / (a_bytes + bytes)
                                                           : delivered / cfg.C;
  const Stats ls = compute_stats(o.lat);
  JObj p;
  p.str("mode", cfg.mcast ? "multicast" : "unicast").num("cluster_size", cfg.C).boolean("cluster_launch", cfg.C > 1)
      .num("max_active_clusters", cfg.max_active_clusters).num("ctas", cfg.ctas).num("box_bytes", bytes)
      .num("boxes_per_stage", cfg.C).num("stage_bytes", stage).num("inflight_stages", cfg.D)
      .num("inflight_bytes_per_sm", double(cfg.D) * stage).num("stages_per_cta", cfg.iters)
      .boolean("smem_buffers_aliased", nbuf < cfg.D).boolean("data_checked", nbuf >= cfg.D)
      .num("delivered_bytes", delivered).num("l2_read_bytes", l2_read)
      .num("l2_read_gbs_median", compute_stats(o.gbs).median * l2_read / delivered);
  if (!o.smids.empty()) p.str("smids", o.smids);
  if (cfg.split)
    p.num("think_cycles", cfg.think).boolean("coupled", cfg.couple).num("delay_odd_ranks_cycles", cfg.delay_odd)
        .boolean("one_issuer", cfg.one_issuer).boolean("gemm_stage", cfg.gemm)
        .str("a_walk", !cfg.gemm ? "-" : cfg.a_group == 0 ? "shared" : cfg.a_group == 1 ? "own" : cfg.a_spread ? "spread" : "group")
        .num("a_walk_clusters", cfg.a_group).num("a_box_bytes", a_bytes)
        .num("issue_cycles_per_stage_even_ranks", o.issue_even).num("issue_cycles_per_stage_odd_ranks", o.issue_odd)
        .num("issue_cycles_per_stage_rank0", o.issue_rank0);
  p.num("bytes_per_sm_cycle_per_sm", o.bpc_sm)
      .num("bytes_per_cycle_per_sm_clock64", o.bpc_sm_clock64)
      .num("latency_p10_cycles", ls.p10)
      .num("latency_median_cycles", ls.median)
      .num("latency_p90_cycles", ls.p90)
      .num("latency_mean_cycles", ls.mean)
      .num("littles_law_bytes_in_flight_per_sm", o.bpc_sm * ls.mean)
      .num("wait_fraction", o.wait_frac)
      .num("issue_fraction", o.issue_frac)
      .num("empty_wait_fraction", o.empty_frac)
      .num("span_us_median", o.span_us)
      .num("sm_clock_mhz_in_run", o.clk_ghz * 1000.0)
      .num("sm_clock_mhz_at_start", c.clk_ghz * 1000.0);
  const std::string split_text =
      " Split roles (k_mcast_split): per CTA (1 CTA per SM, 200 KB smem) thread 0 of warp 0 issues the stages (its "
      "arrive.expect_tx(C x B) and TMA loads; issue_fraction, empty_wait_fraction: its cycles issuing and waiting on its "
      "own empty[s]) and thread 0 of warp 1 waits on full[s], spins think_cycles, checks the data and releases the stage "
      "(arrive on empty[s] of every CTA of the cluster, count C; coupled false: on its own CTA's only, count 1); "
      "wait_fraction: the consumer's full waits. The fractions are shares of the CTA's span from the producer's start to "
      "the consumer's last wait (clock64 of the SM); a stage is C boxes (bf16 64 x B/128 rows, 128B swizzle) on one full "
      "mbarrier. Every wait is bounded; every CTA is checked to complete all its stages on distinct SMs, and 4 elements "
      "of every box of every 16th stage are compared with the tensor's pattern. ";
  const std::string common =
      cfg.split ? what + split_text :
      what + " One thread per CTA (1 CTA per SM, 200 KB smem) keeps D stages in flight; a stage is C boxes (bf16 64 x "
             "B/128 rows, 128B swizzle) on one full mbarrier (arrive.expect_tx(C x B)). unicast: the CTA issues the "
             "C boxes of its own walk itself; multicast: the C CTAs of a cluster share one walk and rank r issues box "
             "r of each stage with .multicast::cluster (ctaMask (1 << C) - 1): read from the L2 once, landing in all C "
             "CTAs. C = 1: plain launch, one box per stage, no empty barriers (the hier_loaded ring's loop). Clusters "
             "(both modes): after its full wait a CTA arrives (mapa + mbarrier.arrive.shared::cluster) on empty[s] "
             "(count C) of every CTA of its cluster and waits on its own empty[s] before re-issuing stage s. Every "
             "wait is bounded; every CTA is checked to complete all its stages on distinct SMs, and 4 elements of "
             "every box of every 16th stage are compared with the tensor's pattern (not when D stages do not fit in "
             "192 KB of smem: then stages share buffers, smem_buffers_aliased). ";
  if (!record(c, bw_name, G, "GB/s", o.gbs,
              common + "Value: bytes landed in all CTAs' smem (C x B per completed stage and CTA) / (last CTA end - "
                       "first CTA start) by %globaltimer, one sample per rep (after a warm-up rep). "
                       "params.l2_read_gbs_median: the bytes requested from the L2 (a multicast box once) per second; "
                       "bytes_per_sm_cycle_per_sm = GB/s / (SM clock in the run x CTAs), the clock being clock64 / "
                       "%globaltimer over each CTA's loop (median, sm_clock_mhz_in_run); wait_fraction, "
                       "issue_fraction, empty_wait_fraction = shares of the thread's time in the full waits, in "
                       "arrive.expect_tx + TMA issue, in the empty wait (one thread: a low wait_fraction says the thread, "
                       "not the memory system, set the rate; split roles: see above).",
              p))
    return;
  c.res->add(lat_name, G, "cycles", o.lat,
             common + "Value: per-stage latency = clock64 when the CTA's full wait returned - clock64 before its "
                      "arrive.expect_tx for the stage (in clusters: after its empty wait; the peers issue their boxes "
                      "of a multicast stage after their own empty waits, which all end on the same last arrive, so a "
                      "peer's box may leave a little before or after this CTA's), stages [2D, iters - D) of every CTA and measured rep; "
                      "p10 / median / p90 over all samples (incl. ~120 cycles of mbarrier wake-up).",
             p);
}

// ---- 3. Burst (mcast_burst_*): the issuing thread's cost per TMA load instruction when nothing waits ----
// As k_tma_burst (bench_tma.cu), in a cluster: thread 0 of rank 0 issues NB loads back to back (load k: box k of the
// warm tensor into buffer k, its own barrier k), clock64 right after each, then waits for them in order.
constexpr int kBurstMaxNb = 24;
constexpr int kBurstRecW = 4;                  // per CTA: smid, cluster rank, completed waits, data mismatches
constexpr int kBurstTlW = 2 * kBurstMaxNb + 2;  // rank 0: issue[NB], done[NB] (cycles from t0), %globaltimer g0, g1

struct BurstArgs {
  int box_rows;             // 128 B rows per box
  int bytes;                // box bytes
  unsigned long long* tl;   // rank 0's timeline: [k] = issue k, [NB + k] = done k, [2 NB] = g0, [2 NB + 1] = g1
  unsigned long long* rec;  // [cta][kBurstRecW]
};

// One TMA load of box `box` into `dst` on barrier `bar`: unicast (this CTA's smem) or to every CTA of the cluster.
template <int C, bool MC>
DEVI void burst_load(const CUtensorMap& map, const BurstArgs& a, uint32_t dst, int box, uint32_t bar) {
  if (MC)
    tma_load_2d_mc(dst, &map, 0, box * a.box_rows, bar, static_cast<uint16_t>((1u << C) - 1u));
  else
    tma_load_2d(dst, &map, 0, box * a.box_rows, bar);
}

// Barriers: bars[k] (count 1) for load k, bars[NB] for a warm-up load. Every receiving CTA but rank 0 (multicast:
// all peers) arms all NB + 1 barriers with arrive.expect_tx(B) before the cluster barrier; rank 0 arms each barrier
// itself right before its load, as k_tma_burst and the ring do. Rank 0 first issues one warm-up load (box 0 into
// buffer 0, same mode; the tensor map, TLB and TMA unit warm, the unit idle when the burst starts) and waits for it,
// then t0 = clock64 and the burst: NB x (arrive.expect_tx, TMA load, clock64) fully unrolled, timestamps in
// registers, then the in-order waits (done[k] = clock64 after wait k). Receiving peers wait on all their barriers.
// Every receiving CTA then compares 4 elements of each box with the pattern. Cluster barriers: after the barrier
// init (before any load) and before exit (no CTA leaves while a multicast may still write into it).
template <int C, int NB, bool MC>
__global__ void __launch_bounds__(32, 1) k_mcast_burst(const __grid_constant__ CUtensorMap map, const BurstArgs a,
                                                       unsigned* err) {
  static_assert(C > 1 || !MC, "multicast needs a cluster");
  static_assert(NB <= kBurstMaxNb, "timeline too small");
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t bars[NB + 1];
  unsigned char* buf = align1024(dyn_raw);  // the same offset in every CTA: multicast writes land at dst in each
  const uint32_t rank = C > 1 ? cluster_ctarank() : 0u;
  const uint32_t b0 = smem_u32(&bars[0]), dst0 = smem_u32(buf), bw = b0 + 8u * NB;
  const uint32_t bytes = static_cast<uint32_t>(a.bytes);
  if (threadIdx.x == 0) {
    for (int k = 0; k <= NB; ++k) mbar_init(b0 + 8u * k, 1);
    fence_mbar_init();
    if (rank == 0) {
      prefetch_tmap(&map);
    } else if (MC) {
      for (int k = 0; k <= NB; ++k) mbar_arrive_expect_tx(b0 + 8u * k, bytes);
    }
  }
  // Every CTA's barriers are initialized and armed before rank 0 loads into it.
  if (C > 1) cluster_sync_all();
  if (threadIdx.x == 0) {
    unsigned completed = 0, bad = 0;
    bool ok = true;
    if (rank == 0) {
      mbar_arrive_expect_tx(bw, bytes);
      burst_load<C, MC>(map, a, dst0, 0, bw);
      ok = mbar_wait<WAIT_TRY>(bw, 0, err);
      if (ok) {
        ++completed;
        unsigned long long t_iss[NB], t_done[NB];
        const unsigned long long g0 = gtime(), t0 = clk();
#pragma unroll
        for (int k = 0; k < NB; ++k) {
          const uint32_t b = b0 + 8u * k;
          mbar_arrive_expect_tx(b, bytes);
          burst_load<C, MC>(map, a, dst0 + static_cast<uint32_t>(k) * bytes, k, b);
          t_iss[k] = clk();
        }
#pragma unroll
        for (int k = 0; k < NB; ++k) {
          if (ok) ok = mbar_wait<WAIT_TRY>(b0 + 8u * k, 0, err);
          t_done[k] = clk();
          if (ok) ++completed;
        }
        const unsigned long long g1 = gtime();
#pragma unroll
        for (int k = 0; k < NB; ++k) {
          a.tl[k] = t_iss[k] - t0;
          a.tl[NB + k] = t_done[k] - t0;
        }
        a.tl[2 * NB] = g0;
        a.tl[2 * NB + 1] = g1;
      }
    } else if (MC) {
      ok = mbar_wait<WAIT_TRY>(bw, 0, err);
      if (ok) ++completed;
      for (int k = 0; k < NB && ok; ++k) {
        ok = mbar_wait<WAIT_TRY>(b0 + 8u * k, 0, err);
        if (ok) ++completed;
      }
    }
    if (ok && (rank == 0 || MC)) {
      for (int k = 0; k < NB; ++k) {
        const unsigned char* bp = buf + static_cast<size_t>(k) * a.bytes;
        const uint32_t y = static_cast<uint32_t>(k * a.box_rows);
        const uint32_t rs[2] = {0u, static_cast<uint32_t>(a.box_rows - 1)}, cs[2] = {0u, 61u};
        for (uint32_t r : rs)
          for (uint32_t cc : cs)
            if (*reinterpret_cast<const volatile uint16_t*>(bp + swz128(r, cc)) != pattern(y + r, cc)) ++bad;
      }
      if (bad) atomicAdd(&err[ERR_DATA], bad);
    }
    unsigned long long* r = a.rec + static_cast<size_t>(blockIdx.x) * kBurstRecW;
    r[0] = smid();
    r[1] = rank;
    r[2] = completed;
    r[3] = bad;
  }
  // No CTA exits while rank 0 may still multicast into it.
  __syncwarp();
  if (C > 1) cluster_sync_all();
}

using BurstKernel = void (*)(CUtensorMap, BurstArgs, unsigned*);
BurstKernel burst_kernel(int C, int nb, bool mc) {
  if (nb == 24) {
    if (C == 1 && !mc) return k_mcast_burst<1, 24, false>;
    if (C == 2) return mc ? k_mcast_burst<2, 24, true> : k_mcast_burst<2, 24, false>;
    if (C == 4) return mc ? k_mcast_burst<4, 24, true> : k_mcast_burst<4, 24, false>;
  } else if (nb == 6) {
    if (C == 1 && !mc) return k_mcast_burst<1, 6, false>;
    if (C == 2) return mc ? k_mcast_burst<2, 6, true> : k_mcast_burst<2, 6, false>;
    if (C == 4) return mc ? k_mcast_burst<4, 6, true> : k_mcast_burst<4, 6, false>;
  }
  throw std::runtime_error("k_mcast_burst: unsupported C " + std::to_string(C) + ", NB " + std::to_string(nb) +
                           (mc ? ", multicast" : ", unicast"));
}

struct BurstOut {
  std::vector<double> iss_int, done_int, done_all, clk_ghz;  // over all measured reps
  std::vector<std::vector<double>> iss_by_k, done_by_k;      // [k]: interval k (k >= 1) / done[k], per rep
  std::string smids, problem;
};

// One cluster of C CTAs alone (C = 1: a plain launch of one CTA); rep 0 warms the L2 and is not recorded.
BurstOut run_burst(Ctx& c, const CUtensorMap& map, int C, int nb, int box_rows, bool mc, int reps) {
  BurstOut o;
  o.iss_by_k.resize(nb);
  o.done_by_k.resize(nb);
  DevBuf<unsigned long long> tl(kBurstTlW), rec(static_cast<size_t>(C) * kBurstRecW);
  BurstArgs a{};
  a.box_rows = box_rows;
  a.bytes = box_rows * kRowBytes;
  a.tl = tl.p;
  a.rec = rec.p;
  ClusterLaunch lc(C, C, 32, kDyn);
  const BurstKernel kern = burst_kernel(C, nb, mc);
  for (int r = 0; r <= reps; ++r) {
    tl.zero();
    rec.zero();
    CK(cudaLaunchKernelEx(&lc.cfg, kern, map, a, c.d_err));
    CK_LAUNCH();
    if (r == 0) continue;
    auto h = rec.get(), t = tl.get();
    std::vector<unsigned long long> sms;
    for (int k = 0; k < C; ++k) {
      const unsigned long long* q = &h[static_cast<size_t>(k) * kBurstRecW];
      const unsigned long long want = (k == 0 || mc) ? static_cast<unsigned long long>(nb + 1) : 0ull;
      if (q[1] != static_cast<unsigned long long>(k) && o.problem.empty())
        o.problem = "CTA " + std::to_string(k) + " has cluster rank " + std::to_string(q[1]);
      if (q[2] != want && o.problem.empty())
        o.problem = "CTA " + std::to_string(k) + " completed " + std::to_string(q[2]) + " of " + std::to_string(want) +
                    " barrier waits";
      sms.push_back(q[0]);
    }
    o.smids.clear();
    for (int k = 0; k < C; ++k) o.smids += (k ? "," : "") + std::to_string(sms[static_cast<size_t>(k)]);
    std::sort(sms.begin(), sms.end());
    if (std::adjacent_find(sms.begin(), sms.end()) != sms.end() && o.problem.empty())
      o.problem = "two CTAs ran on the same SM";
    if (!o.problem.empty()) break;
    for (int k = 0; k < nb; ++k) {
      o.done_by_k[static_cast<size_t>(k)].push_back(double(t[static_cast<size_t>(nb + k)]));
      if (k == 0) continue;
      const double di = double(t[static_cast<size_t>(k)] - t[static_cast<size_t>(k - 1)]);
      o.iss_int.push_back(di);
      o.iss_by_k[static_cast<size_t>(k)].push_back(di);
      o.done_int.push_back(double(t[static_cast<size_t>(nb + k)] - t[static_cast<size_t>(nb + k - 1)]));
    }
    o.done_all.push_back(double(t[static_cast<size_t>(2 * nb - 1)]));
    const unsigned long long g0 = t[static_cast<size_t>(2 * nb)], g1 = t[static_cast<size_t>(2 * nb + 1)];
    if (g1 > g0) o.clk_ghz.push_back(double(t[static_cast<size_t>(2 * nb - 1)]) / double(g1 - g0));
  }
  return o;
}

// Comma-separated medians of v[from..] (one per load position).
std::string medians_by_k(const std::vector<std::vector<double>>& v, size_t from) {
  std::string s;
  char b[32];
  for (size_t k = from; k < v.size(); ++k) {
    std::snprintf(b, sizeof b, "%.0f", v[k].empty() ? NAN : compute_stats(v[k]).median);
    s += (k > from ? "," : "") + std::string(b);
  }
  return s;
}

void record_burst(Ctx& c, const std::string& tag, int C, int nb, int bytes, bool mc, int reps, const BurstOut& o) {
  if (!o.problem.empty()) {
    c.take_err();
    c.res->fail(tag + "_issue_interval", o.problem);
    return;
  }
  JObj p;
  p.str("mode", mc ? "multicast" : "unicast").num("cluster_size", C).boolean("cluster_launch", C > 1)
      .num("cta_mask", mc ? double((1 << C) - 1) : 1.0).num("receiving_ctas", mc ? C : 1).num("box_bytes", bytes)
      .num("loads", nb).num("burst_bytes", double(nb) * bytes).num("reps", reps).str("source", "l2 (warm 8 MiB tensor)")
      .str("smids", o.smids)
      .str("issue_interval_median_by_load", medians_by_k(o.iss_by_k, 1))
      .str("complete_median_by_load", medians_by_k(o.done_by_k, 0))
      .num("complete_all_median_cycles", compute_stats(o.done_all).median)
      .num("sm_clock_mhz_in_run", o.clk_ghz.empty() ? NAN : compute_stats(o.clk_ghz).median * 1000.0)
      .num("sm_clock_mhz_at_start", c.clk_ghz * 1000.0);
  const std::string base =
      "One cluster of C CTAs alone on the GPU (C = 1: a plain launch of one CTA; SM ids in params), warm source (boxes "
      "0..NB-1 of the 8 MiB tensor, 128 B rows, 128B swizzle, L2-warm after a first, unrecorded rep). Thread 0 of rank "
      "0 issues NB = " + std::to_string(nb) + " TMA loads of " + std::to_string(bytes / 1024) + " KB back to back, "
      "each into its own smem buffer and onto its own mbarrier, with no wait in between: per load arrive.expect_tx(B) "
      "on its barrier, cp.async.bulk.tensor, clock64 (fully unrolled, timestamps in registers), then waits for them in "
      "order (as tma_burst_*, after one warm-up load of the same mode that it waited for). " +
      (mc ? "multicast: .multicast::cluster with ctaMask (1 << C) - 1, every load lands in all C CTAs; the peers armed "
            "each of their barriers with arrive.expect_tx(B) before a cluster barrier that precedes the first load, "
            "and wait on all of them before a cluster barrier before exit. "
          : std::string(C > 1 ? "unicast in a cluster launch: the loads land in rank 0's smem only (cta_mask 1 = "
                                "rank 0), the peers only join the cluster barriers. "
                              : "unicast, plain launch. ")) +
      "Every receiving CTA compares 4 elements of each box with the tensor's pattern; all waits are bounded. ";
  if (!record(c, tag + "_issue_interval", G, "cycles", o.iss_int,
              base + "Value: the issuing thread's cycles per load instruction when nothing waits = clock64 after "
                     "load k's issue - clock64 after load k-1's (k = 1..NB-1; includes load k's arrive.expect_tx "
                     "and one clock read, the same in both modes), all intervals of all measured reps. params: "
                     "issue_interval_median_by_load (k = 1..NB-1: a rising tail is the TMA unit pushing back), "
                     "complete_median_by_load (rank 0's done[k] from t0), complete_all_median_cycles, "
                     "sm_clock_mhz_in_run (clock64 / %globaltimer over rank 0's burst, a few us: coarse).",
              p))
    return;
  c.res->add(tag + "_complete_interval", G, "cycles", o.done_int,
             base + "Value: cycles between consecutive completions of rank 0's barriers (its own copy; observed in "
                    "order, k = 1..NB-1).",
             p);
  c.res->add(tag + "_complete_all", G, "cycles", o.done_all,
             base + "Value: cycles from t0 (clock64 before the first arrive.expect_tx) until rank 0's last barrier "
                    "completed (all NB boxes landed in rank 0; its wait returned), one sample per rep.",
             p);
}

}  // namespace

// 9. A GEMM's stage (mcast_split_gemm_*; also alone with --only multicast_gemm): clusters of 2 on every SM, the split
//    ring of section 5 with a cluster GEMM's stage: an A box (16 KB) that both CTAs of a cluster need and a B box (16
//    KB) of each CTA's own walk. unicast_own: each CTA loads both boxes and releases the stage to itself only;
//    unicast_coupled: the same, released to both CTAs; multicast: rank r loads half of the A box (8 KB) for both CTAs,
//    each CTA its own B box (a 1x2 cluster GEMM's A, or 2x1's B). The A walk is the cluster's own (every cluster reads
//    other A boxes) or shared (every CTA of the grid reads the same A boxes at about the same time: the small operand
//    of a skinny GEMM, read by every CTA of its row or column). Does multicasting an operand every SM reads anyway
//    save what it saves for one only the cluster reads?
void mcast_gemm_rows(Ctx& c, uint16_t* big, long long warm_rows, McastBufs& b) {
  const int C = 2;
  const int clusters = max_clusters(c, C, 4);
  const char* mname[3] = {"unicast_own", "unicast_coupled", "multicast"};
  // One row: A boxes of ar rows, B boxes of br rows, the A walk shared by the grid or each cluster's own, the consumer's
  // think time T, mode 0 (unicast, independent), 1 (unicast, coupled) or 2 (multicast). With share > 0 (unicast), the
  // grid is 120 CTAs in clusters of Cs (0: C) and `share` consecutive CTAs walk the same A boxes.
  auto row = [&](int ar, int br, int group, int T, int mode, bool spread = false, int Cs = 0, int share = 0) {
    if (Cs == 0) Cs = C;
    const int ctas = share > 0 ? 120 : C * clusters;
    CUtensorMap map = make_map(big, static_cast<uint64_t>(warm_rows), static_cast<uint32_t>(br));
    CUtensorMap amap = make_map(big, static_cast<uint64_t>(warm_rows), static_cast<uint32_t>(ar));
    CUtensorMap half = make_map(big, static_cast<uint64_t>(warm_rows), static_cast<uint32_t>(ar / C));
    const long long nboxes = warm_rows / br, a_nboxes = warm_rows / ar;
    const int stage = (ar + br) * kRowBytes;
    McastCfg cfg = ring_cfg(&map, Cs, 4, br, ctas, static_cast<int>((4ll << 20) / stage), mode == 2, nboxes, ctas / Cs);
    cfg.split = true;
    cfg.think = T;
    cfg.couple = mode != 0;
    cfg.gemm = true;
    cfg.a_group = share > 0 ? share / C : group;
    cfg.a_spread = spread;
    cfg.half = &half;
    cfg.amap = &amap;
    cfg.a_rows = ar;
    // B: each CTA its own walk; A: the walk of the CTA's cluster (or of its `share` consecutive CTAs), half a tensor
    // away from its first CTA's B walk, or one walk for the whole grid. `per_walk` CTAs walk each.
    const int per_walk = share > 0 ? share : C * group;
    cfg.start.clear();
    cfg.stride.clear();
    for (int k = 0; k < cfg.ctas; ++k) {
      const int w = k / C;
      cfg.start.push_back(k * nboxes / cfg.ctas);
      cfg.stride.push_back(pick_stride(k, nboxes));
      const int walks = group == 0 ? 1 : std::max(1, clusters / group);
      const int aw = share > 0 ? k / share : group == 0 ? 0 : spread ? w % walks : w / group;  // the A walk of CTA k
      const bool shared = share == 0 && group == 0;
      cfg.a_start.push_back(shared ? 0 : (static_cast<long long>(aw) * per_walk * a_nboxes / cfg.ctas + a_nboxes / 2) % a_nboxes);
      cfg.a_stride.push_back(pick_stride(shared ? 0 : aw + cfg.ctas, a_nboxes));
    }
    McastOut o = run_mcast(c, cfg, b);
    const std::string walk = share > 0   ? "c" + std::to_string(Cs) + "_ctas120_share" + std::to_string(share)
                             : group == 0 ? "c2_shared_a"
                             : group == 1 ? "c2_own_a"
                                          : std::string("c2_") + (spread ? "a_spread" : "a_by") + std::to_string(group);
    const std::string tag = "l2_a" + std::to_string(ar * kRowBytes / 1024) + "KB_b" + std::to_string(br * kRowBytes / 1024) +
                            "KB_d4_t" + std::to_string(T) + "_" + walk + "_" + mname[mode];
    record_mcast(c, "mcast_split_gemm", tag, cfg, o,
                 share > 0
                     ? "As mcast_split_gemm_* (A16/B16, T = 0, unicast) on 120 CTAs in clusters of C (2 or 4): the A walk "
                       "shared by `share` consecutive CTAs (2: a pair; 4: two pairs, one cluster of 4 or two clusters of 2); "
                       "unicast_coupled releases each stage to the whole cluster (a cluster of 4 holds its pairs in step), "
                       "unicast_own each CTA to itself. Do readers of the same boxes gain when held in step? 4 MiB landed "
                       "per CTA."
                     : "As mcast_split_think_* (warm 8 MiB source, clusters of 2 on every SM, a producer warp and a consumer "
                       "warp spinning T cycles after each full wait, D = 4) with a cluster GEMM's stage: an A box (params."
                       "a_box_bytes) that both CTAs of a cluster need and a B box (box_bytes) from each CTA's own walk, on one "
                       "full barrier (arrive.expect_tx A + B). unicast_own: each CTA loads both boxes and releases the stage to "
                       "itself only; unicast_coupled: the same, released to both CTAs of the cluster; multicast: rank r loads "
                       "the r-th half of the A box's rows to both CTAs, each CTA its B box unicast (params.a_walk: own, every "
                       "cluster its own A boxes; shared, every CTA of the grid the same A boxes at about the same time, as the "
                       "small operand of a skinny GEMM; group, a_walk_clusters clusters consecutive in launch order, as a GEMM's "
                       "clusters rastered along the other operand's dimension: the same A boxes). 4 MiB landed per CTA.");
  };
  for (int group : {1, 0})
    for (int T : {0, 512})
      for (int mode = 0; mode < 3; ++mode) row(128, 128, group, T, mode);
  // The share of a stage's L2 reads that are multicast: 1/2 (A 16 KB, B 8 KB; A 32 KB, B 16 KB), 1/3 (the rows above),
  // 1/5 (A 16 KB, B 32 KB), against the same stages unicast.
  for (auto [ar, br] : {std::pair{128, 64}, std::pair{256, 128}, std::pair{128, 256}})
    for (int mode : {1, 2}) row(ar, br, 1, 0, mode);
  // Neighbouring clusters walking the same A boxes (2, 4, 8 consecutive in launch order), as a 1x2 GEMM's clusters
  // rastered along N share their A tile, a 2x1's along M their B.
  for (int group : {2, 4, 8})
    for (int mode = 0; mode < 3; ++mode) row(128, 128, group, 0, mode);
  // How the gain of reading the same A boxes grows with the number of clusters that read them (consecutive: 16, 33 of
  // the grid's 66), and whether it needs them close in launch order: 2, 6, 22 clusters per walk spread over the grid
  // (cluster w walks w mod walks: sharers 33, 11, 3 clusters apart). Unicast only (a multicast read combines with nothing).
  for (int group : {16, 33})
    for (int mode = 0; mode < 2; ++mode) row(128, 128, group, 0, mode);
  for (int group : {2, 6, 22})
    for (int mode = 0; mode < 2; ++mode) row(128, 128, group, 0, mode, true);
  // Do readers of the same A boxes gain when they are held in step? Clusters of C (2 or 4) on 120 SMs (as many as
  // clusters of 4 get), unicast A16/B16 stages, the A walk shared by `share` consecutive CTAs (2: a pair, 4: two pairs);
  // coupled: each stage released to the whole cluster, so a cluster of 4 keeps its two pairs in step, where two
  // clusters of 2 sharing the walk run free (mcast_split_gemm_*_c{C}_ctas120_share{S}_{unicast_own,unicast_coupled}).
  for (int Cs : {2, 4})
    for (int share : {2, 4})
      for (int mode = 0; mode < 2; ++mode) row(128, 128, 1, 0, mode, false, Cs, share);
}

void bench_multicast(Ctx& c) {
  const size_t big_bytes = 2ull << 30;
  const long long big_rows = static_cast<long long>(big_bytes / kRowBytes), warm_rows = (8ll << 20) / kRowBytes;
  DevBuf<uint16_t> big(big_bytes / 2);
  fill_pattern(c, big.p, static_cast<size_t>(big_rows));
  for (int C : {1, 2, 4})
    for (int D : {1, 4}) {
      CK(cudaFuncSetAttribute(mcast_kernel(C, D), cudaFuncAttributeMaxDynamicSharedMemorySize, kDyn));
      if (C > 1) CK(cudaFuncSetAttribute(mcast_split_kernel(C, D), cudaFuncAttributeMaxDynamicSharedMemorySize, kDyn));
    }
  CK(cudaFuncSetAttribute(mcast_split_kernel(2, 2), cudaFuncAttributeMaxDynamicSharedMemorySize, kDyn));
  CK(cudaFuncSetAttribute(mcast_split_kernel(1, 4), cudaFuncAttributeMaxDynamicSharedMemorySize, kDyn));
  CK(cudaFuncSetAttribute(mcast_split_kernel(1, 1), cudaFuncAttributeMaxDynamicSharedMemorySize, kDyn));
  for (int C : {1, 2, 4})
    for (int nb : {6, 24})
      for (int m = 0; m < (C == 1 ? 1 : 2); ++m)
        CK(cudaFuncSetAttribute(burst_kernel(C, nb, m == 1), cudaFuncAttributeMaxDynamicSharedMemorySize, kDyn));
  McastBufs b(c.sm_count);
  if (c.filter.find("multicast_gemm") != std::string::npos) {  // --only multicast_gemm: section 9 alone
    mcast_gemm_rows(c, big.p, warm_rows, b);
    return;
  }
  const char* modes[2] = {"unicast", "multicast"};

  // 1. All SMs busy: D = 4, B = 16 / 32 KB, warm 8 MiB tensor or HBM; C = 1, then clusters of 2 and 4 in both modes.
  for (int src = 0; src < 2; ++src) {  // 0: warm 8 MiB (first 8 MiB of the 2 GiB tensor), 1: HBM (2 GiB, flushed)
    const std::string sname = src == 0 ? "l2" : "hbm";
    for (int br : {128, 256}) {
      const int bytes = br * kRowBytes;
      const long long rows = src == 0 ? warm_rows : big_rows;
      CUtensorMap map = make_map(big.p, static_cast<uint64_t>(rows), static_cast<uint32_t>(br));
      for (int C : {1, 2, 4}) {
        const int clusters = C == 1 ? 0 : max_clusters(c, C, 4);
        for (int m = 0; m < (C == 1 ? 1 : 2); ++m) {
          // 8 MiB delivered per CTA
          const McastCfg cfg = ring_cfg(&map, C, 4, br, C == 1 ? c.sm_count : C * clusters,
                                        static_cast<int>((8ll << 20) / (C * bytes)), m == 1, rows / br, clusters, src == 1);
          McastOut o = run_mcast(c, cfg, b);
          const std::string tag = sname + "_box" + std::to_string(bytes / 1024) + "KB_d4_c" + std::to_string(C) + "_" +
                                  modes[m];
          record_mcast(c, "mcast_loaded", tag, cfg, o,
                       src == 0 ? "All SMs busy, warm source: an 8 MiB tensor (the first 8 MiB of a 2 GiB buffer, warm "
                                  "after the warm-up rep); every CTA receives all of it once per rep (8 MiB), each walk "
                                  "(CTA, or cluster for multicast) from its own start with its own step coprime with "
                                  "the box count. Grid: one CTA per SM, clusters: C x cudaOccupancyMaxActiveClusters."
                                : "All SMs busy, HBM source: a 2 GiB tensor, L2 flushed before every rep; every CTA "
                                  "receives 8 MiB, each walk (CTA, or cluster for multicast) streams its own 1/walkers "
                                  "slice sequentially (no reuse). Grid: one CTA per SM, clusters: C x "
                                  "cudaOccupancyMaxActiveClusters.");
        }
      }
    }
  }

  // 2. One cluster alone (one CTA for C = 1), D = 1, B = 32 KB, warm tensor: the stage latency on an idle GPU.
  {
    const int br = 256;
    CUtensorMap map = make_map(big.p, static_cast<uint64_t>(warm_rows), static_cast<uint32_t>(br));
    for (int C : {1, 2, 4}) {
      for (int m = 0; m < (C == 1 ? 1 : 2); ++m) {
        const McastCfg cfg = ring_cfg(&map, C, 1, br, C, 256, m == 1, warm_rows / br);
        McastOut o = run_mcast(c, cfg, b);
        const std::string tag = "l2_box32KB_d1_c" + std::to_string(C) + "_" + modes[m];
        record_mcast(c, "mcast_alone", tag, cfg, o,
                     "One cluster of C CTAs alone on the GPU (one CTA for C = 1; SM ids in params), one stage in flight "
                     "(D = 1), 32 KB boxes of the warm 8 MiB tensor, 256 stages per CTA: the latency of a unicast "
                     "stage of C boxes against a multicast one without load from other SMs.");
      }
    }
  }

  // 4. Split roles (mcast_split_*): sections 1 (warm tensor) and 2 for clusters of 2 and 4, both modes, with a producer
  //    thread that only issues and a consumer thread of another warp that waits and arrives on the cluster's empty
  //    barriers, as a CUTLASS cluster GEMM splits them: is the issuing thread's cost in the rings its own remote arrives?
  for (int D : {4, 1}) {
    for (int br : D == 4 ? std::vector<int>{128, 256} : std::vector<int>{256}) {
      const int bytes = br * kRowBytes;
      CUtensorMap map = make_map(big.p, static_cast<uint64_t>(warm_rows), static_cast<uint32_t>(br));
      for (int C : {2, 4}) {
        const int clusters = D == 4 ? max_clusters(c, C, 4) : 1;
        for (int m = 0; m < 2; ++m) {
          McastCfg cfg = ring_cfg(&map, C, D, br, C * clusters, D == 4 ? static_cast<int>((8ll << 20) / (C * bytes)) : 256,
                                  m == 1, warm_rows / br, D == 4 ? clusters : 0);
          cfg.split = true;
          McastOut o = run_mcast(c, cfg, b);
          const std::string tag = "l2_box" + std::to_string(bytes / 1024) + "KB_d" + std::to_string(D) + "_c" +
                                  std::to_string(C) + "_" + modes[m];
          const std::string kind = D == 4 ? "loaded" : "alone";
          record_mcast(c, "mcast_split_" + kind, tag, cfg, o,
                       std::string(D == 4 ? "As mcast_loaded_* (warm source, all SMs busy)" : "As mcast_alone_* (one cluster alone)") +
                           ", with the ring's two roles in two threads of two warps, as a CUTLASS cluster GEMM has "
                           "them: thread 0 of warp 0 only issues (the first D stages, then stage s after its own "
                           "empty[s] wait: issue_fraction and empty_wait_fraction are its), thread 0 of warp 1 only "
                           "waits on full[s] (wait_fraction, latency samples, data check) and arrives on empty[s] of "
                           "every CTA of the cluster. The issuing thread makes no remote arrive.");
        }
      }
    }
  }

  // 5. Coupling (mcast_split_think_*): the split ring of section 4 with a GEMM's stage (two 16 KB boxes on one
  //    barrier) and its consumers' work (the consumer spins T cycles after each full wait, before it releases the
  //    stage), clusters of 2 on every SM, D = 2 and 4: unicast with each CTA releasing its stages to itself only
  //    (independent rings), unicast released to both CTAs of the cluster (coupled: a stage is re-issued when both
  //    have consumed it, as a cluster GEMM's empty barriers do), multicast (coupled by necessity). What does the
  //    coupling cost a loop that is latency-bound, and what does multicast save there?
  {
    const int br = 128, bytes = br * kRowBytes, C = 2;
    CUtensorMap map = make_map(big.p, static_cast<uint64_t>(warm_rows), static_cast<uint32_t>(br));
    const int clusters = max_clusters(c, C, 4);
    for (int D : {2, 4})
      for (int T : {0, 256, 512, 1024})
        for (int mode = 0; mode < 3; ++mode) {  // 0: unicast independent, 1: unicast coupled, 2: multicast
          // 4 MiB landed per CTA
          McastCfg cfg = ring_cfg(&map, C, D, br, C * clusters, static_cast<int>((4ll << 20) / (C * bytes)), mode == 2,
                                  warm_rows / br, clusters);
          cfg.split = true;
          cfg.think = T;
          cfg.couple = mode != 0;
          McastOut o = run_mcast(c, cfg, b);
          const char* mname[3] = {"unicast_own", "unicast_coupled", "multicast"};
          const std::string tag = "l2_pair16KB_d" + std::to_string(D) + "_t" + std::to_string(T) + "_c2_" + mname[mode];
          record_mcast(c, "mcast_split_think", tag, cfg, o,
                       "As mcast_split_loaded_* (warm source, clusters of 2 on every SM, a producer warp and a consumer "
                       "warp) with a GEMM's stage, two 16 KB boxes on one full barrier, and its consumers' work: the "
                       "consumer spins T cycles (params: think_cycles) after each full wait before it releases the "
                       "stage. unicast_own: each CTA loads its two boxes and releases the stage to itself only (empty "
                       "count 1: independent rings in a cluster launch); unicast_coupled: the same loads, the stage "
                       "released to both CTAs of the cluster (empty count 2: re-issued when both consumed it, as a "
                       "cluster GEMM's empty barriers); multicast: rank r loads box r for both (coupled by necessity). "
                       "4 MiB landed per CTA.");
        }
  }

  // 6. Staggered issue (mcast_split_delay_*): one cluster of 2 alone, one stage in flight, 32 KB boxes, unicast and
  //    multicast, the odd rank's producer spinning 0, 1000 or 3000 cycles before each issue: with 3000 neither rank
  //    issues while the other's box of the stage lands (a stage alone takes ~1100 cycles). Is the multicast issue's
  //    extra cost the issue itself, or the boxes landing in the SM while it issues? (params: issue cycles per stage of
  //    the even and the odd rank)
  {
    const int br = 256;
    CUtensorMap map = make_map(big.p, static_cast<uint64_t>(warm_rows), static_cast<uint32_t>(br));
    for (int delay : {0, 1000, 3000})
      for (int m = 0; m < 2; ++m) {
        McastCfg cfg = ring_cfg(&map, 2, 1, br, 2, 256, m == 1, warm_rows / br);
        cfg.split = true;
        cfg.delay_odd = delay;
        McastOut o = run_mcast(c, cfg, b);
        const std::string tag = std::string("l2_box32KB_d1_c2_") + modes[m] + "_delay" + std::to_string(delay);
        record_mcast(c, "mcast_split_delay", tag, cfg, o,
                     "As mcast_split_alone_* (one cluster of 2 alone, one stage in flight, 32 KB boxes), the odd rank's "
                     "producer spinning delay_odd_ranks_cycles before each issue (after its empty wait; not counted as "
                     "issue): with 3000 cycles neither rank issues while the other's box of the stage lands. "
                     "issue_cycles_per_stage_{even,odd}_ranks: each rank's cycles from before its arrive.expect_tx to "
                     "after its TMA issue, per stage (median over CTAs and reps).");
      }
  }

  // 7. One issuer (mcast_split_one_issuer_*): clusters of 2 and 4, multicast, rank 0 issuing all C boxes of every
  //    stage back to back (the other ranks only arm their barriers with arrive.expect_tx): the issue of C multicast
  //    loads in a row against one (sections 4 and 6), and of arrive.expect_tx alone (the other ranks).
  for (int D : {1, 4})
    for (int C : {2, 4}) {
      const int br = D == 1 ? 256 : 128, bytes = br * kRowBytes;
      CUtensorMap map = make_map(big.p, static_cast<uint64_t>(warm_rows), static_cast<uint32_t>(br));
      const int clusters = D == 4 ? max_clusters(c, C, 4) : 1;
      McastCfg cfg = ring_cfg(&map, C, D, br, C * clusters, D == 4 ? static_cast<int>((8ll << 20) / (C * bytes)) : 256, true,
                              warm_rows / br, D == 4 ? clusters : 0);
      cfg.split = true;
      cfg.one_issuer = true;
      McastOut o = run_mcast(c, cfg, b);
      const std::string kind = D == 4 ? "loaded" : "alone";
      const std::string tag = "l2_box" + std::to_string(bytes / 1024) + "KB_d" + std::to_string(D) + "_c" + std::to_string(C);
      record_mcast(c, "mcast_split_one_issuer_" + kind, tag, cfg, o,
                   std::string(D == 4 ? "As mcast_split_loaded_* multicast" : "As mcast_split_alone_* multicast") +
                       ", but rank 0 issues all C boxes of every stage back to back (multicast to the whole cluster) "
                       "and the other ranks only arm their full barriers (arrive.expect_tx): "
                       "issue_cycles_per_stage_rank0 is rank 0's (arrive.expect_tx and C multicast loads), "
                       "issue_cycles_per_stage_odd_ranks the odd ranks' (arrive.expect_tx alone).");
    }

  // 8. Plain launch (mcast_split_plain_*): the split ring without a cluster (C = 1, one box a stage, each CTA releasing
  //    its stages to itself), every SM (16 KB, D = 4) and one CTA alone (32 KB, D = 1): the producer's
  //    arrive.expect_tx + one unicast load outside any cluster, against sections 4 and 7's in clusters of 2 and 4.
  for (int D : {4, 1}) {
    const int br = D == 4 ? 128 : 256, bytes = br * kRowBytes;
    CUtensorMap map = make_map(big.p, static_cast<uint64_t>(warm_rows), static_cast<uint32_t>(br));
    McastCfg cfg = ring_cfg(&map, 1, D, br, D == 4 ? c.sm_count : 1, D == 4 ? static_cast<int>((8ll << 20) / bytes) : 256,
                            false, warm_rows / br);
    cfg.split = true;
    cfg.couple = false;
    McastOut o = run_mcast(c, cfg, b);
    const std::string kind = D == 4 ? "loaded" : "alone";
    const std::string tag = "l2_box" + std::to_string(bytes / 1024) + "KB_d" + std::to_string(D) + "_c1_unicast";
    record_mcast(c, "mcast_split_plain_" + kind, tag, cfg, o,
                 std::string(D == 4 ? "Every SM, a plain launch (no cluster)" : "One CTA alone, a plain launch") +
                     ": the split ring (a producer and a consumer warp) with one box a stage, each CTA releasing its "
                     "stages to itself: the producer's arrive.expect_tx + one unicast load outside any cluster "
                     "(issue_cycles_per_stage_rank0).");
  }

  mcast_gemm_rows(c, big.p, warm_rows, b);

  // 3. Burst: one cluster alone (one CTA for C = 1), rank 0 issues NB loads back to back (8 KB x 24, 32 KB x 6 =
  //    192 KB), unicast and multicast: the issuing thread's cycles per TMA load instruction when nothing waits.
  for (int br : {64, 256}) {
    const int nb = br == 64 ? 24 : 6, bytes = br * kRowBytes;
    CUtensorMap map = make_map(big.p, static_cast<uint64_t>(warm_rows), static_cast<uint32_t>(br));
    for (int C : {1, 2, 4}) {
      for (int m = 0; m < (C == 1 ? 1 : 2); ++m) {
        const int reps = c.quick ? 2 : 24;
        BurstOut o = run_burst(c, map, C, nb, br, m == 1, reps);
        const std::string tag = "mcast_burst_" + std::to_string(bytes / 1024) + "KBx" + std::to_string(nb) + "_c" +
                                std::to_string(C) + "_" + modes[m];
        record_burst(c, tag, C, nb, bytes, m == 1, reps, o);
      }
    }
  }
}

}  // namespace mb
