// The SM's L1TEX unit as the resource that global-memory instructions share (group "l1", l1_*): what a warp
// instruction costs there against the 128-byte lines it touches, not against the bytes it moves. smpipe's LSU
// charges an op its bytes at lsu_bytes_per_cycle (cp_async_cg16_throughput_one_sm_l2: fully coalesced 16-byte
// copies, four whole lines per instruction); sm80-style kernels also issue narrow accesses that spread a warp's
// 32 lanes over many rows (K1's epilogue: 4-byte loads and stores, 8 rows of 16 bytes per instruction; its
// cp.async: 16 bytes per lane, 8 rows of 64 bytes).
//
// One CTA of 8 or 16 warps on one SM. Each warp issues 256 x 8 instructions of one kind: ld.global.b32 / .v2 /
// .v4, st.global.b32 / .v2 / .v4, cp.async.cg.shared.global 16 B, or ldmatrix.x4. Lanes are laid out as
// rows: LPR lanes per row, 32 / LPR rows per instruction, each row in its own 128-byte line (rows 512 bytes
// apart, the pitch of K1's C1 and D), so an instruction touches 32 / LPR lines with LPR x width bytes of each.
// Every instruction of a warp takes the next rows of the footprint (a ring of rows: 2 MiB, which the L1 does
// not hold, or 16 KB, which it does, for the loads). Loads: 8 independent loads per iteration, then their values
// are combined (the next iteration waits for them); stores: back to back; cp.async: 8 copies, commit, wait_group 1.
// Mixes: 8 warps of one kind beside 8 of another (the second kind half the footprint away), all 16 timed together
// (each half's own span is in params, which includes time after the other half ended): do they share one resource?
// Value: cycles per warp instruction at the SM (all warps' instructions over the span from the first warp's
// start to the last warp's end, clock64).
#include <algorithm>

#include "common.cuh"

namespace mb {
namespace {

constexpr int kU = 8;                // instructions per iteration per warp
constexpr int kIters = 256;
constexpr int kPitch = 512;          // bytes between rows
constexpr int kRowsL2 = 4096;        // 2 MiB of rows
constexpr int kRowsL1 = 32;          // 16 KB
constexpr int kWarpSmem = 2 * kU * 512;  // per warp: two groups of cp.async destinations, or ldmatrix sources
enum Op : int { kLd32 = 0, kLd64, kLd128, kSt32, kSt64, kSt128, kCp16, kLdsm };

constexpr int width_of(int op) { return op == kLd32 || op == kSt32 ? 4 : op == kLd64 || op == kSt64 ? 8 : 16; }
constexpr bool is_load(int op) { return op == kLd32 || op == kLd64 || op == kLd128; }

// One warp's stream of iters x kU instructions of kind OP (LPR lanes per row); slot / slots: this warp's place
// among the warps that run this kind (they take the footprint's rows in turn). Returns a value to keep.
template <int OP, int LPR>
DEVI uint32_t stream(unsigned char* buf, int rows_mask, int iters, int slot, int slots, int lane, uint32_t smem_warp, int base) {
  constexpr int W = width_of(OP), R = 32 / LPR;
  const int r = lane / LPR, col = (lane % LPR) * W;
  uint32_t acc = 0;
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
    uint32_t v[kU][4];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int j = it * kU + u;
      const int row = (base + (j * slots + slot) * R + r) & rows_mask;
      unsigned char* p = buf + static_cast<size_t>(row) * kPitch + col;
      const uint32_t x = static_cast<uint32_t>(j ^ lane);
      if constexpr (OP == kLd32) {
        asm volatile("ld.global.b32 %0, [%1];" : "=r"(v[u][0]) : "l"(p) : "memory");
      } else if constexpr (OP == kLd64) {
        asm volatile("ld.global.v2.b32 {%0, %1}, [%2];" : "=r"(v[u][0]), "=r"(v[u][1]) : "l"(p) : "memory");
      } else if constexpr (OP == kLd128) {
        asm volatile("ld.global.v4.b32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v[u][0]), "=r"(v[u][1]), "=r"(v[u][2]), "=r"(v[u][3])
                     : "l"(p)
                     : "memory");
      } else if constexpr (OP == kSt32) {
        asm volatile("st.global.b32 [%0], %1;" ::"l"(p), "r"(x) : "memory");
      } else if constexpr (OP == kSt64) {
        asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(x), "r"(x + 1) : "memory");
      } else if constexpr (OP == kSt128) {
        asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(x), "r"(x + 1), "r"(x + 2), "r"(x + 3)
                     : "memory");
      } else if constexpr (OP == kCp16) {
        const uint32_t d = smem_warp + static_cast<uint32_t>(((it & 1) * kU + u) * 512 + lane * 16);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(p) : "memory");
      } else {
        // ldmatrix.x4: lane l gives the address of row l % 8 of matrix l / 8, rows 16 bytes apart (conflict-free)
        const uint32_t a = smem_warp + static_cast<uint32_t>((u & 7) * 512 + lane * 16);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v[u][0]), "=r"(v[u][1]), "=r"(v[u][2]), "=r"(v[u][3])
                     : "r"(a)
                     : "memory");
      }
    }
    if constexpr (is_load(OP) || OP == kLdsm) {
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        // Every component kept: ptxas splits a vector load whose components are unused into narrower loads.
        acc ^= v[u][0];
        if constexpr (OP == kLdsm || W >= 8) acc ^= v[u][1];
        if constexpr (OP == kLdsm || W == 16) acc ^= v[u][2] + v[u][3];
      }
    } else if constexpr (OP == kCp16) {
      asm volatile("cp.async.commit_group;" ::: "memory");
      asm volatile("cp.async.wait_group 1;" ::: "memory");
    }
  }
  if constexpr (OP == kCp16) asm volatile("cp.async.wait_group 0;" ::: "memory");
  return acc;
}

// Warps [0, split) run kind A, the others kind B (split = all warps: A alone).
template <int OPA, int LPRA, int OPB, int LPRB>
__global__ void __launch_bounds__(512, 1) k_l1(unsigned char* buf, int rows_mask, int iters, int split,
                                               unsigned long long* out, uint32_t* sink) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, nwarps = blockDim.x >> 5;
  const uint32_t smem_warp = smem_u32(smem) + static_cast<uint32_t>(warp * kWarpSmem);
  __syncthreads();
  const unsigned long long t0 = clk();
  // The second kind starts half the footprint away: the two kinds never touch the same rows at once.
  const uint32_t acc = warp < split ? stream<OPA, LPRA>(buf, rows_mask, iters, warp, split, lane, smem_warp, 0)
                                    : stream<OPB, LPRB>(buf, rows_mask, iters, warp - split, nwarps - split, lane, smem_warp,
                                                        (rows_mask + 1) / 2);
  const unsigned long long t1 = clk();
  if (acc == 0x12345678u) sink[tid] = acc;
  if (lane == 0) {
    out[warp * 2] = t0;
    out[warp * 2 + 1] = t1;
  }
}

const char* op_name(int op) {
  switch (op) {
    case kLd32: return "ld32";
    case kLd64: return "ld64";
    case kLd128: return "ld128";
    case kSt32: return "st32";
    case kSt64: return "st64";
    case kSt128: return "st128";
    case kCp16: return "cp16";
    default: return "ldsm";
  }
}
const char* op_ptx(int op) {
  switch (op) {
    case kLd32: return "ld.global.b32";
    case kLd64: return "ld.global.v2.b32";
    case kLd128: return "ld.global.v4.b32";
    case kSt32: return "st.global.b32";
    case kSt64: return "st.global.v2.b32";
    case kSt128: return "st.global.v4.b32";
    case kCp16: return "cp.async.cg.shared.global 16 B (commit and wait_group 1 every 8)";
    default: return "ldmatrix.sync.aligned.m8n8.x4.shared.b16 (conflict-free)";
  }
}

// Cycles per warp instruction of warps [w0, w1) over their own span (first start to last end), per launch.
double rate(const std::vector<unsigned long long>& h, int w0, int w1, int iters) {
  unsigned long long lo = ~0ull, hi = 0;
  for (int w = w0; w < w1; ++w) lo = std::min(lo, h[w * 2]), hi = std::max(hi, h[w * 2 + 1]);
  return double(hi - lo) / (double(iters) * kU * (w1 - w0));
}

template <int OPA, int LPRA, int OPB, int LPRB>
std::vector<std::vector<double>> launches(Ctx& c, DevBuf<unsigned char>& buf, DevBuf<unsigned long long>& out,
                                          DevBuf<uint32_t>& sink, int rows, int warps, int split, int iters) {
  constexpr bool smem = OPA == kCp16 || OPB == kCp16 || OPA == kLdsm || OPB == kLdsm;
  const int dyn = smem ? 16 * kWarpSmem : 0;
  if (dyn > 0) CK(cudaFuncSetAttribute(k_l1<OPA, LPRA, OPB, LPRB>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
  std::vector<std::vector<double>> r(3);  // all warps, warps of A, warps of B
  for (int l = 0; l < c.reps(6, 2); ++l) {
    out.zero();
    k_l1<OPA, LPRA, OPB, LPRB><<<1, 32 * warps, dyn>>>(buf.p, rows - 1, iters, split, out.p, sink.p);
    CK_LAUNCH();
    auto h = out.get();
    if (l == 0) continue;  // the first launch warms up
    r[0].push_back(rate(h, 0, warps, iters));
    r[1].push_back(rate(h, 0, split, iters));
    if (split < warps) r[2].push_back(rate(h, split, warps, iters));
  }
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string pattern(int op, int lpr) {
  if (op == kLdsm) return "4 matrices of 8 rows x 16 bytes";
  return std::to_string(lpr) + " lanes x " + std::to_string(width_of(op)) + " bytes per row, " + std::to_string(32 / lpr) +
         " rows (each its own 128-byte line, " + std::to_string(kPitch) + " bytes apart) per instruction";
}

template <int OP, int LPR>
void l1_case(Ctx& c, DevBuf<unsigned char>& buf, DevBuf<unsigned long long>& out, DevBuf<uint32_t>& sink, bool l1_footprint) {
  constexpr int W = width_of(OP), R = 32 / LPR;
  const int iters = c.quick ? kIters / 4 : kIters;
  const int rows = l1_footprint ? kRowsL1 : kRowsL2;
  for (int warps : {8, 16}) {
    std::vector<double> cyc = launches<OP, LPR, OP, LPR>(c, buf, out, sink, rows, warps, warps, iters)[0];
    const double med = median(cyc);
    const std::string name = std::string("l1_") + op_name(OP) + (is_load(OP) ? (l1_footprint ? "_l1hit" : "_l2") : "") +
                             (OP == kLdsm ? "" : "_lines" + std::to_string(R)) + "_warps" + std::to_string(warps);
    JObj p;
    p.num("warps", warps);
    if (OP != kLdsm)
      p.num("lines_per_instr", R).num("bytes_per_lane", W).num("lanes_per_row", LPR).num("bytes_per_line", LPR * W)
          .num("footprint_bytes", rows * kPitch).num("cycles_per_line", med / R);
    p.num("bytes_per_cycle", 32.0 * W / med);
    record(c, name, "l1", "cycles/instr", cyc,
           std::string(op_ptx(OP)) + ": one CTA of " + std::to_string(warps) + " warps on one SM, " + std::to_string(iters * kU) +
               " instructions per warp; " + pattern(OP, LPR) +
               (OP == kLdsm ? "" : "; footprint " + std::to_string(rows * kPitch / 1024) + " KB") +
               ". Value: cycles per warp instruction at the SM (all warps' instructions over their span).",
           p);
  }
}

// 8 warps of kind A beside 8 of kind B (16 warps): does the SM serve them from one resource (each half slower by
// the other's work) or from separate ones (each as alone)?
template <int OPA, int LPRA, int OPB, int LPRB>
void l1_mix(Ctx& c, DevBuf<unsigned char>& buf, DevBuf<unsigned long long>& out, DevBuf<uint32_t>& sink) {
  const int iters = c.quick ? kIters / 4 : kIters;
  auto r = launches<OPA, LPRA, OPB, LPRB>(c, buf, out, sink, kRowsL2, 16, 8, iters);
  const auto alone_a = launches<OPA, LPRA, OPA, LPRA>(c, buf, out, sink, kRowsL2, 8, 8, iters)[0];
  const auto alone_b = launches<OPB, LPRB, OPB, LPRB>(c, buf, out, sink, kRowsL2, 8, 8, iters)[0];
  const std::string stem = std::string("l1_mix_") + op_name(OPA) + (OPA == kLdsm ? "" : "_lines" + std::to_string(32 / LPRA)) +
                           "_" + op_name(OPB) + (OPB == kLdsm ? "" : "_lines" + std::to_string(32 / LPRB));
  const std::string what = std::string("8 warps of ") + op_ptx(OPA) + " (" + pattern(OPA, LPRA) + ") beside 8 warps of " + op_ptx(OPB) +
                           " (" + pattern(OPB, LPRB) + "), one CTA on one SM, 2 MiB footprint.";
  JObj p = JObj()
               .num("a_alone_cycles_per_instr", median(alone_a))
               .num("b_alone_cycles_per_instr", median(alone_b))
               .num("a_beside_b_cycles_per_instr", median(r[1]))
               .num("b_beside_a_cycles_per_instr", median(r[2]))
               .num("sum_of_alone", median(alone_a) + median(alone_b));
  record(c, stem, "l1", "cycles/instr", r[0],
         what + " Value: cycles per warp instruction of all 16 warps together (each half's own rate and each kind alone "
                "with 8 warps in params: one shared resource gives about their sum per pair of instructions).",
         p);
}

}  // namespace

void bench_l1(Ctx& c) {
  DevBuf<unsigned char> buf(static_cast<size_t>(kRowsL2) * kPitch);
  CK(cudaMemset(buf.p, 1, buf.n));
  DevBuf<unsigned long long> out(64);
  DevBuf<uint32_t> sink(512);
  for (bool l1 : {false, true}) {
    l1_case<kLd32, 32>(c, buf, out, sink, l1);
    l1_case<kLd32, 16>(c, buf, out, sink, l1);
    l1_case<kLd32, 8>(c, buf, out, sink, l1);
    l1_case<kLd32, 4>(c, buf, out, sink, l1);
    l1_case<kLd32, 1>(c, buf, out, sink, l1);
    l1_case<kLd64, 16>(c, buf, out, sink, l1);
    l1_case<kLd64, 8>(c, buf, out, sink, l1);
    l1_case<kLd64, 4>(c, buf, out, sink, l1);
    l1_case<kLd64, 1>(c, buf, out, sink, l1);
    l1_case<kLd128, 8>(c, buf, out, sink, l1);
    l1_case<kLd128, 4>(c, buf, out, sink, l1);
    l1_case<kLd128, 2>(c, buf, out, sink, l1);
    l1_case<kLd128, 1>(c, buf, out, sink, l1);
  }
  l1_case<kSt32, 32>(c, buf, out, sink, false);
  l1_case<kSt32, 16>(c, buf, out, sink, false);
  l1_case<kSt32, 8>(c, buf, out, sink, false);
  l1_case<kSt32, 4>(c, buf, out, sink, false);
  l1_case<kSt32, 1>(c, buf, out, sink, false);
  l1_case<kSt64, 16>(c, buf, out, sink, false);
  l1_case<kSt64, 8>(c, buf, out, sink, false);
  l1_case<kSt64, 4>(c, buf, out, sink, false);
  l1_case<kSt64, 1>(c, buf, out, sink, false);
  l1_case<kSt128, 8>(c, buf, out, sink, false);
  l1_case<kSt128, 4>(c, buf, out, sink, false);
  l1_case<kSt128, 1>(c, buf, out, sink, false);
  l1_case<kCp16, 8>(c, buf, out, sink, false);
  l1_case<kCp16, 4>(c, buf, out, sink, false);
  l1_case<kCp16, 2>(c, buf, out, sink, false);
  l1_case<kCp16, 1>(c, buf, out, sink, false);
  l1_case<kLdsm, 1>(c, buf, out, sink, false);
  // K1's mix: its epilogue's 4-byte loads and stores (8 lines each), its 16-byte copies (8 lines), its ldmatrix.
  l1_mix<kLd32, 4, kSt32, 4>(c, buf, out, sink);
  l1_mix<kCp16, 4, kSt32, 4>(c, buf, out, sink);
  l1_mix<kCp16, 4, kLd32, 4>(c, buf, out, sink);
  l1_mix<kCp16, 4, kLdsm, 1>(c, buf, out, sink);
  l1_mix<kLd32, 4, kLdsm, 1>(c, buf, out, sink);
  l1_mix<kSt32, 4, kLdsm, 1>(c, buf, out, sink);
  l1_mix<kCp16, 8, kSt128, 8>(c, buf, out, sink);
}

}  // namespace mb
