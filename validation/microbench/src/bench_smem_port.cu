// The SM's shared memory as a resource that wgmma operand reads and TMA writes share (group "smemport",
// smem_port_*).
//
// A wgmma m64nNk16 bf16 reads its A (64 x 16) and B (N x 16) operands from shared memory: 2 KB + N x 32 B per
// wgmma, N / 2 cycles at the tensor pipe's peak (4096 FLOP per cycle per SM), so 128 bytes per cycle at N = 64,
// 96 at 128 and 80 at 256. A GEMM's TMA loads write the next stages into the same shared memory meanwhile. If
// both go through one port of ~128 bytes per cycle (32 banks x 4 bytes, CUDA C++ Programming Guide), a CTA tile
// whose operand reads and loads together exceed it cannot keep the tensor pipe busy.
//
// One CTA per SM (1 SM, or every SM): two consumer warpgroups issue batches of 64 back-to-back wgmmas
// (scale-d = 1, four different K slices in turn so that no two consecutive wgmmas read the same bytes;
// commit; wait_group 0) while lane 0 of a ninth warp keeps 4 TMA loads of 32 KB boxes (256 rows x 128 B,
// 128B swizzle, from an 8 MB L2-resident tensor) in flight into a ring of its own, optionally spinning `gap`
// cycles after each issue. Measured per CTA: the SM-wide cycles per wgmma over the warpgroups' span, and the bytes per cycle the
// TMA delivered over the same span. Baselines: the same wgmmas without loads, and the loads alone (the
// warpgroups spin instead). Operand layouts: no swizzle (as bench_wgmma.cu) and 128B swizzle, K-major (as a
// GEMM's stages: 64 x 128 B rows, the k16 slices 32 bytes apart inside a row). On one SM also against generic
// traffic: warp 8's 32 lanes running st.shared.v4 or ld.shared.v4 (as an epilogue writes its accumulators to
// shared memory while the other warpgroup of a pingpong kernel runs its wgmmas).
#include <algorithm>
#include <cstring>

#include "common.cuh"
#include "tma_util.cuh"
#include "wgmma_util.cuh"

namespace mb {
namespace {

constexpr int kSlices = 4;              // K slices the wgmmas take in turn
constexpr int kBatch = 64;              // wgmmas per commit group
constexpr int kStages = 4;              // TMA loads in flight
constexpr int kBoxRows = 256;           // 256 rows x 128 B = 32 KB per load
constexpr int kBoxBytes = kBoxRows * kRowBytes;
constexpr int kThreads = 288;           // two warpgroups and the load warp
constexpr int kOut = 8;                 // per CTA: t0, t1 of each warpgroup, loads, load span start, end, bytes
// What warp 8 does while the warpgroups run: nothing, TMA loads (lane 0), or st.shared / ld.shared (all lanes).
enum Mode : int { kNone = 0, kTma = 1, kStShared = 2, kLdShared = 3 };

// Operand bytes: A of each warpgroup then B, per layout. No swizzle: kSlices core-matrix tiles of 64 (A) or N
// (B) rows x 32 B (as bench_wgmma.cu). 128B swizzle: one 64-wide K block of 128-byte rows, 64 rows per A and N
// rows for B; the four k16 slices are 32 bytes apart in each row.
__host__ __device__ constexpr int a_bytes(bool swz) { return swz ? 64 * 128 : kSlices * 2048; }
__host__ __device__ constexpr int b_bytes(int n, bool swz) { return swz ? n * 128 : kSlices * n * 32; }
__host__ __device__ constexpr int op_bytes(int n, bool swz) { return (2 * a_bytes(swz) + b_bytes(n, swz) + 1023) / 1024 * 1024; }
__host__ constexpr int smem_bytes(int n, bool swz) { return 1024 + op_bytes(n, swz) + kStages * kBoxBytes; }

// The shared-memory matrix descriptor with 128B swizzle (layout type 1 in bits 62-63, PTX ISA 9.7.15.5.1): for
// K-major operands the leading offset is unused (1) and the stride offset is one 8-row core group, 1024 bytes.
DEVI uint64_t make_desc_sw128(uint32_t saddr) {
  return static_cast<uint64_t>((saddr & 0x3FFFF) >> 4) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) |
         (uint64_t{1} << 62);
}

template <int N, bool SWZ>
__global__ void __launch_bounds__(kThreads, 1) k_smem_port(const __grid_constant__ CUtensorMap map, int reps, long long spin,
                                                           int mode, int gap, int nboxes, unsigned long long* out,
                                                           unsigned* err, float* sink) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t full[kStages];
  __shared__ volatile int stop;
  unsigned char* ops = align1024(dyn_raw);
  unsigned char* ring = ops + op_bytes(N, SWZ);
  const int tid = threadIdx.x, wg = tid >> 7;
  // Small values, exact in bf16 (0, 0.25, 0.5): the wgmmas' work does not depend on them.
  for (int i = tid; i < op_bytes(N, SWZ) / 2; i += blockDim.x) {
    const uint16_t v[3] = {0x0000, 0x3E80, 0x3F00};
    reinterpret_cast<uint16_t*>(ops)[i] = v[i % 3];
  }
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(smem_u32(&full[s]), 1);
    fence_mbar_init();
    stop = 0;
    prefetch_tmap(&map);
  }
  fence_proxy_async_smem();
  __syncthreads();
  unsigned long long* o = out + static_cast<size_t>(blockIdx.x) * kOut;
  if (wg < 2) {
    uint64_t da[kSlices], db[kSlices];
    const uint32_t a0 = smem_u32(ops + wg * a_bytes(SWZ)), b0 = smem_u32(ops + 2 * a_bytes(SWZ));
#pragma unroll
    for (int j = 0; j < kSlices; ++j) {
      if constexpr (SWZ) {
        da[j] = make_desc_sw128(a0 + 32u * j);
        db[j] = make_desc_sw128(b0 + 32u * j);
      } else {
        da[j] = make_desc(a0 + 2048u * j, 128, 256);
        db[j] = make_desc(b0 + static_cast<uint32_t>(N * 32) * j, 128, 256);
      }
    }
    float d[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; ++i) d[i] = 0.f;
    asm volatile("bar.sync 1, 256;" ::: "memory");
    unsigned long long t0 = clk();
    if (reps == 0)  // asleep between clock reads: the spinning warps leave the issue slots to warp 8
      while (static_cast<long long>(clk() - t0) < spin) __nanosleep(500);
    wgmma_batches<N, kBatch, kSlices>(d, da, db, reps);
    fence_regs(d);
    unsigned long long t1 = clk();
    asm volatile("bar.sync 1, 256;" ::: "memory");
    if (tid == 0) stop = 1;
    if ((tid & 127) == 0) {
      o[2 * wg] = t0;
      o[2 * wg + 1] = t1;
    }
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < N / 2; ++i) s += d[i];
    if (s == 1234567.f) sink[tid] = s;
  } else if (mode >= kStShared) {
    // Warp 8's generic accesses: 16-byte vectors of all lanes (512 contiguous bytes per instruction, no bank
    // conflict) over the ring's 128 KB, the stop flag looked at after each pass and the clock read only at the
    // ends, so that the warp's own instructions do not bound its rate.
    const int lane = tid & 31;
    unsigned long long rounds = 0;
    uint32_t acc = 0;
    const uint32_t base = smem_u32(ring) + 16u * lane;
    const unsigned long long tb = clk();
    while (!stop) {
#pragma unroll 1
      for (uint32_t off = 0; off < kStages * kBoxBytes; off += 8192u) {
#pragma unroll
        for (int k = 0; k < 16; ++k) {
          const uint32_t a = base + off + 512u * k;
          if (mode == kStShared) {
            asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};" ::"r"(a), "r"(acc + k) : "memory");
          } else {
            uint32_t x, y, z, w;
            asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a) : "memory");
            acc += x ^ y ^ z ^ w;
          }
        }
      }
      rounds += kStages * kBoxBytes / 4096;
    }
    const unsigned long long te = clk();
    if (acc == 0x12345678u) sink[tid] = float(acc);
    if (lane == 0) {
      o[4] = rounds * 4096ull / kBoxBytes;  // in box units (32 KB), like the loads
      o[5] = tb;
      o[6] = te;
      o[7] = rounds * 4096ull;
    }
  } else if (tid == 256) {
    unsigned long long loads = 0, tb = clk(), te = tb;
    if (mode == kTma) {
      const uint32_t full0 = smem_u32(&full[0]), ring0 = smem_u32(ring);
      int bidx = static_cast<int>((blockIdx.x * 37u) % static_cast<unsigned>(nboxes));
      long long i = 0;
      bool ok = true;
      for (;; ++i) {
        const int s = static_cast<int>(i % kStages);
        const uint32_t bar = full0 + 8u * s;
        if (i >= kStages) {
          // The stage's previous load (use i / kStages - 1) has landed: count it, then reuse the stage.
          ok = mbar_wait<WAIT_TRY>(bar, static_cast<uint32_t>((i / kStages - 1) & 1), err);
          if (!ok) break;
          ++loads;
          te = clk();
          if (stop) break;
        }
        mbar_arrive_expect_tx(bar, kBoxBytes);
        tma_load_2d(ring0 + static_cast<uint32_t>(s) * kBoxBytes, &map, 0, bidx * kBoxRows, bar);
        if (++bidx == nboxes) bidx = 0;
        if (gap > 0) spin_cycles(gap);
      }
      // The loads still in flight land before the CTA exits: uses i - kStages + 1 .. i - 1.
      for (long long j = i - kStages + 1; ok && j < i; ++j)
        if (j >= 0) ok = mbar_wait<WAIT_TRY>(full0 + 8u * static_cast<uint32_t>(j % kStages), static_cast<uint32_t>((j / kStages) & 1), err);
    }
    o[4] = loads;
    o[5] = tb;
    o[6] = te;
  }
  __syncthreads();
}

// Each launch runs about kSpanCycles: the warpgroups' wgmmas at the peak rate (N / 2 cycles per wgmma, two
// warpgroups), or their spin when they issue none.
constexpr long long kSpanCycles = 1700000;
constexpr int wgmma_reps(int n) { return std::max(8, static_cast<int>(kSpanCycles / (kBatch * 2 * (n / 2)))); }

// SM-wide cycles per wgmma of one CTA's output record: the two warpgroups' span over their wgmmas.
double cycles_per_wgmma(const unsigned long long* q, int reps) {
  return double(std::max(q[1], q[3]) - std::min(q[0], q[2])) / (double(reps) * kBatch * 2);
}

struct PortCase {
  int gap;   // -1: no loads
  bool wgmma;
};

template <int N, bool SWZ>
void port_cases(Ctx& c, const CUtensorMap& map, int nboxes) {
  const std::string G = "smemport";
  const int smem = smem_bytes(N, SWZ);
  CK(cudaFuncSetAttribute(k_smem_port<N, SWZ>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int reps = wgmma_reps(N);
  const int launches = c.reps(7, 2);
  DevBuf<float> sink(kThreads);
  const std::string lay = SWZ ? "sw128" : "noswz";
  for (int all = 0; all < 2; ++all) {
    const int grid = all ? c.sm_count : 1;
    DevBuf<unsigned long long> out(static_cast<size_t>(grid) * kOut);
    const PortCase cases[] = {{-1, true}, {0, true}, {600, true}, {1200, true}, {0, false}, {600, false}, {1200, false}};
    for (const PortCase& pc : cases) {
      // The loads alone are measured once (with the N = 128 no-swizzle instantiation).
      if (!pc.wgmma && (N != 128 || SWZ)) continue;
      std::vector<double> cyc, bpc;
      for (int l = 0; l < launches; ++l) {
        out.zero();
        k_smem_port<N, SWZ><<<grid, kThreads, smem>>>(map, pc.wgmma ? reps : 0, kSpanCycles, pc.gap >= 0 ? kTma : kNone,
                                                      std::max(pc.gap, 0), nboxes, out.p, c.d_err, sink.p);
        CK_LAUNCH();
        std::vector<unsigned long long> h = out.get();
        for (int b = 0; b < grid; ++b) {
          const unsigned long long* q = &h[static_cast<size_t>(b) * kOut];
          if (pc.wgmma) cyc.push_back(cycles_per_wgmma(q, reps));
          if (pc.gap >= 0 && q[6] > q[5]) bpc.push_back(double(q[4]) * kBoxBytes / double(q[6] - q[5]));
        }
      }
      const std::string where = all ? "all_sms" : "one_sm";
      const std::string load = pc.gap < 0 ? "noload" : "load_gap" + std::to_string(pc.gap);
      const std::string stem = pc.wgmma ? "smem_port_wgmma_n" + std::to_string(N) + "_" + lay + "_" + load + "_" + where
                                        : "smem_port_loads_alone_gap" + std::to_string(pc.gap) + "_" + where;
      JObj p;
      p.num("n", N).str("operand_layout", SWZ ? "128B swizzle, K-major" : "no swizzle (core matrices)")
          .num("ctas", grid).num("wgmma_per_warpgroup", pc.wgmma ? reps * kBatch : 0).num("load_gap_cycles", pc.gap)
          .num("load_box_bytes", kBoxBytes).num("loads_in_flight", kStages)
          .num("operand_bytes_per_wgmma", 64 * 32 + N * 32).num("ideal_cycles_per_wgmma_per_sm", N / 2.0);
      const std::string what = std::string(pc.wgmma ? "Two warpgroups issue batches of 64 wgmma m64n" + std::to_string(N) +
                                                          "k16 bf16 (" + (SWZ ? "128B-swizzled" : "unswizzled") +
                                                          " operands, 4 K slices in turn; commit; wait_group 0)"
                                                    : "The warpgroups spin ~1.7 M cycles") +
                               (pc.gap < 0 ? " with no TMA loads"
                                           : "; lane 0 of warp 8 keeps 4 TMA loads of 32 KB boxes (L2-resident) in flight" +
                                                 (pc.gap ? ", " + std::to_string(pc.gap) + " cycles between issues" : std::string())) +
                               "; one CTA per SM on " + (all ? "every SM" : "one SM") + ".";
      if (pc.wgmma)
        record(c, stem + "_cycles_per_wgmma", G, "cycles/wgmma", cyc,
               what + " Value: SM-wide cycles per wgmma over the warpgroups' span (per CTA and launch).", p);
      if (pc.gap >= 0)
        record(c, stem + "_load_bytes_per_cycle", G, "bytes/cycle", bpc,
               what + " Value: bytes the loads delivered per cycle, from the first issue to the last landing counted.",
               p);
    }
  }
}

// The same wgmmas against generic shared-memory traffic of warp 8 (one SM): st.shared.v4 or ld.shared.v4 of all its
// lanes, 512 bytes per instruction, as an epilogue's register-to-shared writes or a kernel's shared-memory reads.
template <int N>
void generic_cases(Ctx& c, const CUtensorMap& map, int nboxes) {
  const std::string G = "smemport";
  const int smem = smem_bytes(N, true);
  CK(cudaFuncSetAttribute(k_smem_port<N, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int reps = wgmma_reps(N);
  const int launches = c.reps(7, 2);
  DevBuf<float> sink(kThreads);
  DevBuf<unsigned long long> out(kOut);
  for (int mode : {kStShared, kLdShared})
    for (int wg = 1; wg >= 0; --wg) {
      if (!wg && N != 128) continue;  // the generic accesses alone: once
      std::vector<double> cyc, bpc;
      for (int l = 0; l < launches; ++l) {
        out.zero();
        k_smem_port<N, true><<<1, kThreads, smem>>>(map, wg ? reps : 0, kSpanCycles, mode, 0, nboxes, out.p, c.d_err, sink.p);
        CK_LAUNCH();
        std::vector<unsigned long long> q = out.get();
        if (wg) cyc.push_back(cycles_per_wgmma(q.data(), reps));
        if (q[6] > q[5]) bpc.push_back(double(q[7]) / double(q[6] - q[5]));
      }
      const std::string op = mode == kStShared ? "st_shared" : "ld_shared";
      const std::string stem = wg ? "smem_port_wgmma_n" + std::to_string(N) + "_sw128_" + op + "_one_sm" : "smem_port_" + op + "_alone_one_sm";
      JObj p;
      p.num("n", N).str("operand_layout", "128B swizzle, K-major").num("ctas", 1).num("wgmma_per_warpgroup", wg ? reps * kBatch : 0)
          .str("generic_access", mode == kStShared ? "st.shared.v4.u32" : "ld.shared.v4.u32").num("bytes_per_instruction", 512);
      const std::string what = std::string(wg ? "Two warpgroups issue batches of 64 wgmma m64n" + std::to_string(N) +
                                                     "k16 bf16 (128B-swizzled operands, 4 K slices in turn; commit; wait_group 0)"
                                               : "The warpgroups spin ~1.7 M cycles") +
                               "; all 32 lanes of warp 8 run back-to-back " + (mode == kStShared ? "st.shared.v4" : "ld.shared.v4") +
                               " (16 B per lane, 512 contiguous bytes per instruction) meanwhile; one CTA on one SM.";
      if (wg)
        record(c, stem + "_cycles_per_wgmma", G, "cycles/wgmma", cyc,
               what + " Value: SM-wide cycles per wgmma over the warpgroups' span (per launch).", p);
      record(c, stem + "_generic_bytes_per_cycle", G, "bytes/cycle", bpc,
             what + " Value: bytes warp 8 moved per cycle over its loop.", p);
    }
}

}  // namespace

void bench_smem_port(Ctx& c) {
  const int nboxes = 256;  // 8 MB: stays in the L2
  DevBuf<uint16_t> t(static_cast<size_t>(nboxes) * kBoxRows * kCols);
  fill_pattern(c, t.p, static_cast<size_t>(nboxes) * kBoxRows);
  CUtensorMap map = make_map(t.p, static_cast<uint64_t>(nboxes) * kBoxRows, kBoxRows);
  port_cases<64, false>(c, map, nboxes);
  port_cases<128, false>(c, map, nboxes);
  port_cases<256, false>(c, map, nboxes);
  port_cases<64, true>(c, map, nboxes);
  port_cases<128, true>(c, map, nboxes);
  port_cases<256, true>(c, map, nboxes);
  generic_cases<64>(c, map, nboxes);
  generic_cases<128>(c, map, nboxes);
  generic_cases<256>(c, map, nboxes);
}

}  // namespace mb
