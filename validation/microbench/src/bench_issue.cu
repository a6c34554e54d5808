// The SM's instruction issue as a resource that warps share (group "issue", issue_*): what a model of the four
// sub-partition schedulers needs (issue 11, mechanism 5: a `compute` op today contends with nothing).
//
// One CTA on one SM. Each of its first W warps runs the same stream: 1024 iterations of 128 instructions, FFMA
// (fma.rn.f32), FADD (add.rn.f32) or MUFU.EX2 (ex2.approx.ftz.f32 of the negated value, which keeps the chain
// finite), in C independent chains (instruction i depends on i - C), so
// that C = 1 is bound by the instruction's latency and a large C by the issue slot or the pipe. Measured: each
// warp's instructions per cycle over its own loop, and the SM-wide rate (all warps' instructions over the span
// from the first start to the last end). A sub-partition issues one warp-instruction per cycle (CUDA C++
// Programming Guide, compute capability 9.0: four warp schedulers per SM); warps land on the sub-partitions
// by their warp slot, recorded from %warpid.
//
// Beside wgmma: warpgroup 0 issues batches of 64 back-to-back wgmma m64n256k16 bf16 (commit, wait_group 0)
// while 1, 2, 4 or 8 warps of warpgroups 1-2 run FFMA, FADD or MUFU streams (8 chains; FFMA also 1-7 chains on 4
// and 8 warps, from latency-bound to a warp ready every cycle): does a warpgroup's tensor work take
// issue slots or pipes that the other warps' ALU streams need, and do those streams slow the wgmmas? (FA3's
// pingpong overlaps one warpgroup's softmax with the other's wgmmas.) A second kernel (k_duty) runs the ALU warps
// until the wgmmas end, in bursts with optional sleeps between them, for N = 64, 128, 256 and a softmax-like mix:
// the wgmmas' loss against the share of time the ALU warps issue.
//
// Beside waiting warps (k_poll, issue_poll_*): W ALU warps run FFMA streams of C chains while P other warps of the
// CTA wait on an mbarrier phase that completes only when the ALU warps are done (mbarrier.try_wait.parity in a
// loop, as a pingpong kernel's warpgroup waits for its turn while the other converts its epilogue): do waiting
// warps take the issue slots of their sub-partitions?
#include <algorithm>

#include "common.cuh"
#include "wgmma_util.cuh"

namespace mb {
namespace {

constexpr int kIters = 1024;
constexpr int kPerIter = 128;             // instructions per iteration (the loop adds 2-3 of its own)
constexpr int kOutPerWarp = 4;            // t0, t1, %warpid, instructions
constexpr int kMaxWarps = 32;
constexpr int kMmaN = 256;
constexpr int kBatch = 64;
constexpr int kSlices = 4;
constexpr int kOpBytes = kSlices * 2048 + kSlices * kMmaN * 32;  // A (64 rows) and B (256 rows), no swizzle
enum Kind : int { kFfma = 0, kMufu = 1, kFadd = 2 };

template <int KIND, int C>
DEVI void stream(float (&a)[8], float x, float y) {
#pragma unroll
  for (int i = 0; i < kPerIter; ++i) {
    float& r = a[i % C];
    if constexpr (KIND == kFfma) {
      asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(r) : "f"(x), "f"(y));
    } else if constexpr (KIND == kFadd) {
      asm volatile("add.rn.f32 %0, %0, %1;" : "+f"(r) : "f"(y));
    } else {
      // r = 2^-r: the chain stays near its fixed point (0.64) instead of running to +inf.
      asm volatile("{\n .reg .f32 t;\n neg.f32 t, %0;\n ex2.approx.ftz.f32 %0, t;\n}" : "+f"(r));
    }
  }
}

// Warpgroup 0's operands in both kernels, at the start of the dynamic shared memory (no swizzle, as bench_wgmma.cu):
// kSlices core-matrix tiles of A (64 rows), then of B (N rows).
template <int N>
DEVI void operand_descs(const unsigned char* ops, uint64_t (&da)[kSlices], uint64_t (&db)[kSlices]) {
  const uint32_t a0 = smem_u32(ops), b0 = a0 + kSlices * 2048;
#pragma unroll
  for (int j = 0; j < kSlices; ++j) {
    da[j] = make_desc(a0 + 2048u * j, 128, 256);
    db[j] = make_desc(b0 + static_cast<uint32_t>(N * 32) * j, 128, 256);
  }
}

// Warps [first_alu, first_alu + alu_warps) run the ALU stream; with MMA (384 threads) warpgroup 0 issues mma_reps
// batches of wgmmas. Without MMA up to 32 warps (the wgmma code, which needs 128 accumulator registers, is left out).
template <int KIND, int C, bool MMA>
__global__ void __launch_bounds__(MMA ? 384 : 1024, 1) k_issue(int first_alu, int alu_warps, int mma_reps, unsigned long long* out,
                                                               float* sink) {
  extern __shared__ unsigned char dyn_raw[];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  unsigned long long* o = out + static_cast<size_t>(warp) * kOutPerWarp;
  if constexpr (MMA) {
    for (int i = tid; i < kOpBytes / 2; i += blockDim.x) reinterpret_cast<uint16_t*>(dyn_raw)[i] = (i % 3) ? 0x3E80 : 0;
    fence_proxy_async_smem();
  }
  __syncthreads();
  if (MMA && warp < 4) {
    uint64_t da[kSlices], db[kSlices];
    operand_descs<kMmaN>(dyn_raw, da, db);
    float d[MMA ? kMmaN / 2 : 1];
#pragma unroll
    for (int i = 0; i < (MMA ? kMmaN / 2 : 1); ++i) d[i] = 0.f;
    const unsigned long long t0 = clk();
    if constexpr (MMA) wgmma_batches<kMmaN, kBatch, kSlices>(d, da, db, mma_reps);
    fence_regs(d);
    const unsigned long long t1 = clk();
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < (MMA ? kMmaN / 2 : 1); ++i) s += d[i];
    if (s == 1234567.f) sink[tid] = s;
    if (lane == 0) {
      unsigned wid;
      asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
      o[0] = t0;
      o[1] = t1;
      o[2] = wid;
      o[3] = static_cast<unsigned long long>(mma_reps) * kBatch;  // wgmmas
    }
  } else if (warp >= first_alu && warp < first_alu + alu_warps) {
    float a[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) a[j] = KIND == kMufu ? 0.6f + 0.01f * j : 0.5f + 0.01f * j;
    const float x = 0.999f, y = 0.0005f * (lane + 1);
    unsigned wid;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
    const unsigned long long t0 = clk();
#pragma unroll 1
    for (int it = 0; it < kIters; ++it) stream<KIND, C>(a, x, y);
    const unsigned long long t1 = clk();
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j) s += a[j];
    if (s == 1234567.f) sink[tid] = s;
    if (lane == 0) {
      o[0] = t0;
      o[1] = t1;
      o[2] = wid;
      o[3] = static_cast<unsigned long long>(kIters) * kPerIter;
    }
  }
}

struct Launch {
  std::vector<double> warp_ipc;   // per ALU warp: instructions per cycle over its own loop
  double sm_ipc = 0;              // all ALU warps' instructions over their common span
  double cycles_per_wgmma = 0;    // warpgroup 0's span over its wgmmas (0: none)
  std::vector<int> slots;         // per ALU warp: %warpid mod 4
};

template <int KIND, int C>
Launch run_once(int first_alu, int alu_warps, int mma_reps, DevBuf<unsigned long long>& out, DevBuf<float>& sink) {
  out.zero();
  if (mma_reps > 0) {
    k_issue<KIND, C, true><<<1, 384, kOpBytes>>>(first_alu, alu_warps, mma_reps, out.p, sink.p);
  } else {
    k_issue<KIND, C, false><<<1, 32 * std::max(alu_warps, 1)>>>(first_alu, alu_warps, 0, out.p, sink.p);
  }
  CK_LAUNCH();
  std::vector<unsigned long long> h = out.get();
  Launch l;
  unsigned long long lo = ~0ull, hi = 0, instr = 0;
  for (int w = first_alu; w < first_alu + alu_warps; ++w) {
    const unsigned long long* q = &h[static_cast<size_t>(w) * kOutPerWarp];
    l.warp_ipc.push_back(double(q[3]) / double(q[1] - q[0]));
    l.slots.push_back(static_cast<int>(q[2] % 4));
    lo = std::min(lo, q[0]);
    hi = std::max(hi, q[1]);
    instr += q[3];
  }
  if (alu_warps > 0) l.sm_ipc = double(instr) / double(hi - lo);
  if (mma_reps > 0) l.cycles_per_wgmma = double(h[1] - h[0]) / double(h[3]);
  return l;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

const char* kind_name(int kind) { return kind == kFfma ? "ffma" : kind == kFadd ? "fadd" : "mufu_ex2"; }
const char* kind_ptx(int kind) { return kind == kFfma ? "fma.rn.f32" : kind == kFadd ? "add.rn.f32" : "ex2.approx.ftz.f32 of -x"; }

// W warps alone, C chains: the SM-wide rate and the per-warp rates.
template <int KIND, int C>
void alone_cases(Ctx& c, DevBuf<unsigned long long>& out, DevBuf<float>& sink) {
  const int launches = c.reps(5, 2);
  for (int w : {1, 2, 4, 8, 12, 16, 24, 32}) {
    std::vector<double> sm, per_warp;
    std::vector<int> slots;
    for (int l = 0; l < launches; ++l) {
      Launch r = run_once<KIND, C>(0, w, 0, out, sink);
      sm.push_back(r.sm_ipc);
      per_warp.insert(per_warp.end(), r.warp_ipc.begin(), r.warp_ipc.end());
      slots = r.slots;
    }
    std::vector<int> per_slot(4, 0);
    for (int s : slots) per_slot[static_cast<size_t>(s)] += 1;
    JObj p;
    p.num("warps", w).num("chains", C).str("instruction", kind_ptx(KIND)).num("instructions_per_warp", kIters * kPerIter)
        .num("warp_ipc_median", median(per_warp)).num("warp_ipc_min", *std::min_element(per_warp.begin(), per_warp.end()))
        .num("warp_ipc_max", *std::max_element(per_warp.begin(), per_warp.end()))
        .num("warps_on_slot0", per_slot[0]).num("warps_on_slot1", per_slot[1]).num("warps_on_slot2", per_slot[2])
        .num("warps_on_slot3", per_slot[3]);
    const std::string name = std::string("issue_") + kind_name(KIND) + "_c" + std::to_string(C) + "_w" + std::to_string(w);
    record(c, name, "issue", "instr/cycle", sm,
           std::to_string(w) + " warps of one CTA on one SM each run " + std::to_string(kIters * kPerIter) + " " + kind_ptx(KIND) +
               " in " + std::to_string(C) + " independent chain(s). Value: warp-instructions per cycle of the whole SM (all "
               "warps' instructions over the span from the first start to the last end); params: per-warp rates and the "
               "warps per sub-partition (%warpid mod 4).",
           p);
  }
}

// Beside a warpgroup's wgmmas: the ALU warps' rate and the wgmmas' cycles, against each alone. C < 8: FFMA chains
// that bound the ALU warps' own rate (latency), on 4 and 8 warps.
template <int KIND, int C = 8>
void beside_wgmma_cases(Ctx& c, DevBuf<unsigned long long>& out, DevBuf<float>& sink) {
  const int launches = c.reps(5, 2);
  const int mma_reps = 12;  // 768 wgmmas, ~100 k cycles at 128 cycles each
  for (int w : {0, 1, 2, 4, 8}) {
    if (w == 0 && (KIND != kFfma || C != 8)) continue;  // the wgmmas alone: once
    if ((w == 1 || w == 2) && KIND != kFfma) continue;  // one or two sub-partitions busy: FFMA only
    if (C != 8 && w != 4 && w != 8) continue;
    std::vector<double> cyc, sm, per_warp;
    std::vector<int> slots;
    for (int l = 0; l < launches; ++l) {
      Launch r = run_once<KIND, C>(4, w, mma_reps, out, sink);
      slots = r.slots;
      cyc.push_back(r.cycles_per_wgmma);
      if (w > 0) {
        sm.push_back(r.sm_ipc);
        per_warp.insert(per_warp.end(), r.warp_ipc.begin(), r.warp_ipc.end());
      }
    }
    JObj p;
    p.num("alu_warps", w).num("chains", C).str("instruction", kind_ptx(KIND)).num("wgmma_n", kMmaN).num("wgmmas", mma_reps * kBatch)
        .num("ideal_cycles_per_wgmma", kMmaN / 2.0);
    if (w > 0) {
      p.num("alu_sm_ipc_median", median(sm)).num("alu_warp_ipc_median", median(per_warp));
      std::vector<int> per_slot(4, 0);
      for (int sl : slots) per_slot[static_cast<size_t>(sl)] += 1;
      p.num("alu_warps_on_slot0", per_slot[0]).num("alu_warps_on_slot1", per_slot[1]).num("alu_warps_on_slot2", per_slot[2])
          .num("alu_warps_on_slot3", per_slot[3]);  // of the last launch (%warpid mod 4)
    }
    const std::string stem = std::string("issue_beside_wgmma_") +
                             (w ? std::string(kind_name(KIND)) + (C != 8 ? "_c" + std::to_string(C) : "") + "_w" + std::to_string(w) : "alone");
    const std::string what = "Warpgroup 0 of one CTA on one SM issues batches of 64 wgmma m64n256k16 bf16 (commit, wait_group 0)" +
                             (w ? "; warps 4.." + std::to_string(3 + w) + " meanwhile run " + kind_ptx(KIND) + " streams (" + std::to_string(C) + " chains)"
                                : std::string(" alone"));
    record(c, stem + "_cycles_per_wgmma", "issue", "cycles/wgmma", cyc, what + ". Value: cycles per wgmma over the warpgroup's span.", p);
    if (w > 0)
      record(c, stem + "_alu_ipc", "issue", "instr/cycle", sm,
             what + ". Value: the ALU warps' warp-instructions per cycle of the SM (compare issue_" + kind_name(KIND) + "_c" + std::to_string(C) + "_w" +
                 std::to_string(w) + ").",
             p);
  }
}

// ---- ALU work in bursts beside the wgmmas, the wgmma's N, and a softmax-like mix ----
// Warpgroup 0 issues mma_reps batches of 64 wgmma m64nNk16 bf16 and then raises a flag; warps 4..3+alu_warps run
// bursts until they see it: `burst` iterations of 128 instructions (FFMA in 8 chains, or a softmax-like element
// chain: t = x * s; e = ex2(t); sum += e; m = max(m, t), 8 elements at a time), then __nanosleep(sleep_ns) (no
// issue) when sleep_ns > 0. Per ALU warp: its instructions, the cycles it spent in bursts and its span.
enum Mix : int { kMixFfma = 0, kMixSoftmax = 1 };
constexpr int kDutyOut = 6;  // per warp: t0, t1, instructions, burst cycles, bursts, last burst's start

template <int MIX>
DEVI void burst_iter(float (&a)[8], float (&acc)[8], float (&mx)[8], float x, float y) {
  if constexpr (MIX == kMixFfma) {
    stream<kFfma, 8>(a, x, y);
  } else {
#pragma unroll
    for (int i = 0; i < kPerIter / 4; ++i) {
      const int j = i % 8;
      float t, e;
      asm volatile("mul.rn.f32 %0, %1, %2;" : "=f"(t) : "f"(a[j]), "f"(x));
      asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(t));
      asm volatile("add.rn.f32 %0, %0, %1;" : "+f"(acc[j]) : "f"(e));
      asm volatile("max.f32 %0, %0, %1;" : "+f"(mx[j]) : "f"(t));
      a[j] = t;
    }
  }
}

template <int N, int MIX>
__global__ void __launch_bounds__(384, 1) k_duty(int alu_warps, int mma_reps, int burst, int sleep_ns, unsigned long long* out,
                                                float* sink) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ volatile int stop;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  constexpr int kOps = kSlices * 2048 + kSlices * N * 32;
  for (int i = tid; i < kOps / 2; i += blockDim.x) reinterpret_cast<uint16_t*>(dyn_raw)[i] = (i % 3) ? 0x3E80 : 0;
  fence_proxy_async_smem();
  if (tid == 0) stop = 0;
  __syncthreads();
  unsigned long long* o = out + static_cast<size_t>(warp) * kDutyOut;
  if (warp < 4) {
    uint64_t da[kSlices], db[kSlices];
    operand_descs<N>(dyn_raw, da, db);
    float d[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; ++i) d[i] = 0.f;
    const unsigned long long t0 = clk();
    wgmma_batches<N, kBatch, kSlices>(d, da, db, mma_reps);
    fence_regs(d);
    const unsigned long long t1 = clk();
    if (tid == 0) stop = 1;
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < N / 2; ++i) s += d[i];
    if (s == 1234567.f) sink[tid] = s;
    if (lane == 0) {
      o[0] = t0;
      o[1] = t1;
      o[2] = static_cast<unsigned long long>(mma_reps) * kBatch;
    }
  } else if (warp < 4 + alu_warps) {
    float a[8], acc[8], mx[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) a[j] = 0.5f + 0.01f * j, acc[j] = 0.f, mx[j] = -1e30f;
    const float x = MIX == kMixFfma ? 0.999f : 0.9999f, y = 0.0005f * (lane + 1);
    unsigned long long instr = 0, in_burst = 0, bursts = 0, last = 0, t1 = 0;
    const unsigned long long t0 = clk();
    while (!stop) {
      const unsigned long long b0 = clk();
#pragma unroll 1
      for (int it = 0; it < burst; ++it) burst_iter<MIX>(a, acc, mx, x, y);
      t1 = clk();
      in_burst += t1 - b0;
      last = b0;
      bursts += 1;
      instr += static_cast<unsigned long long>(burst) * kPerIter;
      if (sleep_ns > 0) __nanosleep(sleep_ns);
    }
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j) s += a[j] + acc[j] + mx[j];
    if (s == 1234567.f) sink[tid] = s;
    if (lane == 0) {
      o[0] = t0;
      o[1] = t1;
      o[2] = instr;
      o[3] = in_burst;
      o[4] = bursts;
      o[5] = last;  // t1: the last burst's end
    }
  }
}

template <int N, int MIX>
void duty_case(Ctx& c, DevBuf<unsigned long long>& out, DevBuf<float>& sink, int alu_warps, int burst, int sleep_ns) {
  constexpr int kOps = kSlices * 2048 + kSlices * N * 32;
  CK(cudaFuncSetAttribute(k_duty<N, MIX>, cudaFuncAttributeMaxDynamicSharedMemorySize, kOps));
  const int launches = c.reps(5, 2);
  const int mma_reps = std::max(4, 12 * 256 / N);  // ~100 k cycles of wgmmas at the pipe's peak
  std::vector<double> cyc, duty, ipc, burst_ipc, gaps;
  for (int l = 0; l < launches; ++l) {
    out.zero();
    k_duty<N, MIX><<<1, 384, kOps>>>(alu_warps, mma_reps, burst, sleep_ns, out.p, sink.p);
    CK_LAUNCH();
    std::vector<unsigned long long> h = out.get();
    const double span = double(h[1] - h[0]);
    cyc.push_back(span / double(h[2]));
    // Per ALU warp over the wgmmas' window [h[0], h[1]]: the cycles in bursts (the last burst only up to the
    // window's end, its instructions in proportion), the instructions, the gaps between bursts.
    double busy = 0, ins = 0, in_ipc = 0, gap = 0;
    for (int w = 4; w < 4 + alu_warps; ++w) {
      const unsigned long long* q = &h[static_cast<size_t>(w) * kDutyOut];
      const double last_len = double(q[1] - q[5]);
      const double over = std::max(0.0, double(q[1]) - std::max(double(q[5]), double(h[1])));
      const double b = double(q[3]) - over;
      const double n = double(q[2]) * (1.0 - over / std::max(1.0, double(q[4]) * last_len));
      busy += b / span;
      ins += n;
      in_ipc += n / std::max(1.0, b);
      gap += q[4] > 1 ? (double(q[5]) - double(q[0]) - (double(q[3]) - last_len)) / double(q[4] - 1) : 0;
    }
    if (alu_warps > 0) {
      duty.push_back(busy / alu_warps);
      ipc.push_back(ins / span);
      burst_ipc.push_back(in_ipc / alu_warps);
      gaps.push_back(gap / alu_warps);
    }
  }
  JObj p;
  p.num("wgmma_n", N).num("ideal_cycles_per_wgmma", N / 2.0).num("alu_warps", alu_warps).num("burst_instructions", burst * kPerIter)
      .num("sleep_ns", sleep_ns).str("alu_mix", MIX == kMixFfma ? "fma.rn.f32, 8 chains" : "softmax-like: mul, ex2.approx.ftz, add, max per element, 8 elements");
  if (alu_warps > 0)
    p.num("alu_duty_median", median(duty)).num("alu_sm_ipc_median", median(ipc)).num("alu_in_burst_warp_ipc_median", median(burst_ipc))
        .num("alu_gap_cycles_median", median(gaps));
  std::string stem = "issue_duty_n" + std::to_string(N) + "_" + (alu_warps == 0 ? std::string("alone")
                     : std::string(MIX == kMixFfma ? "ffma" : "softmax") + "_w" + std::to_string(alu_warps) + "_b" +
                           std::to_string(burst * kPerIter) + "_s" + std::to_string(sleep_ns));
  const std::string what = "Warpgroup 0 of one CTA on one SM issues batches of 64 wgmma m64n" + std::to_string(N) +
                           "k16 bf16 (commit, wait_group 0)" +
                           (alu_warps ? "; " + std::to_string(alu_warps) + " warps meanwhile run bursts of " +
                                            std::to_string(burst * kPerIter) + " instructions (" +
                                            (MIX == kMixFfma ? "FFMA, 8 chains" : "softmax-like") + ")" +
                                            (sleep_ns ? ", __nanosleep(" + std::to_string(sleep_ns) + ") after each" : std::string())
                                      : std::string(" alone"));
  record(c, stem + "_cycles_per_wgmma", "issue", "cycles/wgmma", cyc,
         what + ". Value: cycles per wgmma over the warpgroup's span; params, over that span: the share of it each ALU "
                "warp spent in bursts (duty, mean of the warps), their instructions per cycle (SM), a warp's instructions per "
                "cycle inside its bursts, and the cycles between a warp's bursts.",
         p);
}

// ---- one FFMA-bound and one MUFU-bound warp on each sub-partition: do different pipes share? ----
// 8 warps; a warp whose %warpid / 4 is even runs FFMA (8 chains), else MUFU.EX2 (8 chains), so that slots s and s + 4
// (one sub-partition, if the slots are 0..7) hold one of each. Per warp: t0, t1, %warpid, instructions.
__global__ void __launch_bounds__(256, 1) k_mixed(unsigned long long* out, float* sink) {
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  unsigned wid;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
  const bool ffma = (wid / 4) % 2 == 0;
  float a[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) a[j] = ffma ? 0.5f + 0.01f * j : 0.6f + 0.01f * j;
  const float x = 0.999f, y = 0.0005f * (lane + 1);
  __syncthreads();
  const unsigned long long t0 = clk();
  if (ffma) {
#pragma unroll 1
    for (int it = 0; it < kIters; ++it) stream<kFfma, 8>(a, x, y);
  } else {
#pragma unroll 1
    for (int it = 0; it < kIters / 8; ++it) stream<kMufu, 8>(a, x, y);  // about as long as the FFMA warps' loop
  }
  const unsigned long long t1 = clk();
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 8; ++j) s += a[j];
  if (s == 1234567.f) sink[tid] = s;
  if (lane == 0) {
    unsigned long long* o = out + static_cast<size_t>(warp) * kOutPerWarp;
    o[0] = t0;
    o[1] = t1;
    o[2] = wid;
    o[3] = static_cast<unsigned long long>(ffma ? kIters : kIters / 8) * kPerIter;
  }
}

void mixed_case(Ctx& c, DevBuf<unsigned long long>& out, DevBuf<float>& sink) {
  const int launches = c.reps(5, 2);
  std::vector<double> f, m;
  int pairs = 0;
  for (int l = 0; l < launches; ++l) {
    out.zero();
    k_mixed<<<1, 256>>>(out.p, sink.p);
    CK_LAUNCH();
    std::vector<unsigned long long> h = out.get();
    int kinds[4][2] = {};
    for (int w = 0; w < 8; ++w) {
      const unsigned long long* q = &h[static_cast<size_t>(w) * kOutPerWarp];
      const bool ffma = (q[2] / 4) % 2 == 0;
      (ffma ? f : m).push_back(double(q[3]) / double(q[1] - q[0]));
      kinds[q[2] % 4][ffma ? 0 : 1] += 1;
    }
    pairs = 0;
    for (auto& k : kinds) pairs += k[0] == 1 && k[1] == 1;
  }
  JObj p;
  p.num("ffma_warp_ipc_median", median(f)).num("mufu_warp_ipc_median", median(m)).num("sub_partitions_with_one_of_each", pairs)
      .str("compare", "issue_ffma_c8_w4 and issue_mufu_ex2_c8_w4 (one warp per sub-partition)");
  record(c, "issue_mixed_ffma_mufu_w8_ffma_ipc", "issue", "instr/cycle", f,
         "8 warps of one CTA on one SM: those with %warpid / 4 even run FFMA (8 chains), the others MUFU.EX2 (8 chains): one "
         "of each per sub-partition (param: how many sub-partitions had exactly one of each, last launch). Value: the FFMA "
         "warps' instructions per cycle.",
         p);
  record(c, "issue_mixed_ffma_mufu_w8_mufu_ipc", "issue", "instr/cycle", m, "The same run. Value: the MUFU warps' instructions per cycle.", p);
}

template <int C>
void beside_chains(Ctx& c, DevBuf<unsigned long long>& out, DevBuf<float>& sink) {
  CK(cudaFuncSetAttribute(k_issue<kFfma, C, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kOpBytes));
  if constexpr (C == 3 || C == 5 || C == 6 || C == 7) alone_cases<kFfma, C>(c, out, sink);  // the streams alone
  beside_wgmma_cases<kFfma, C>(c, out, sink);
}

// Warps [0, alu) run the stream; warps [alu, alu + pollers) wait on `done` (count alu: each ALU warp's lane 0 arrives
// when its loop is over) with try_wait in a loop, counting their polls.
template <int C>
__global__ void __launch_bounds__(1024, 1) k_poll(int alu, int pollers, unsigned long long* out, float* sink) {
  __shared__ __align__(8) uint64_t done;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  unsigned long long* o = out + static_cast<size_t>(warp) * kOutPerWarp;
  if (tid == 0) {
    mbar_init(smem_u32(&done), static_cast<uint32_t>(alu));
    fence_mbar_init();
  }
  __syncthreads();
  unsigned wid;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
  if (warp < alu) {
    float a[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) a[j] = 0.5f + 0.01f * j;
    const float x = 0.999f, y = 0.0005f * (lane + 1);
    const unsigned long long t0 = clk();
#pragma unroll 1
    for (int it = 0; it < kIters; ++it) stream<kFfma, C>(a, x, y);
    const unsigned long long t1 = clk();
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j) s += a[j];
    if (s == 1234567.f) sink[tid] = s;
    if (lane == 0) {
      mbar_arrive(smem_u32(&done));
      o[0] = t0;
      o[1] = t1;
      o[2] = wid;
      o[3] = static_cast<unsigned long long>(kIters) * kPerIter;
    }
  } else if (warp < alu + pollers) {
    unsigned long long polls = 0;
    const unsigned long long t0 = clk();
    while (!mbar_try_wait(smem_u32(&done), 0)) ++polls;
    const unsigned long long t1 = clk();
    if (lane == 0) {
      o[0] = t0;
      o[1] = t1;
      o[2] = wid;
      o[3] = polls;
    }
  }
}

// 4 ALU warps (one per sub-partition) with 0, 4 or 12 waiting warps, FFMA streams of 1, 2, 4 and 8 chains: the ALU
// warps' rate against theirs alone.
template <int C>
void poll_cases(Ctx& c, DevBuf<unsigned long long>& out, DevBuf<float>& sink) {
  const int launches = c.reps(5, 2), alu = 4;
  for (int pollers : {0, 4, 12}) {
    std::vector<double> per_warp, polls;
    for (int l = 0; l < launches; ++l) {
      out.zero();
      k_poll<C><<<1, 32 * (alu + pollers)>>>(alu, pollers, out.p, sink.p);
      CK_LAUNCH();
      std::vector<unsigned long long> h = out.get();
      for (int w = 0; w < alu; ++w) {
        const unsigned long long* q = &h[static_cast<size_t>(w) * kOutPerWarp];
        per_warp.push_back(double(q[3]) / double(q[1] - q[0]));
      }
      for (int w = alu; w < alu + pollers; ++w) {
        const unsigned long long* q = &h[static_cast<size_t>(w) * kOutPerWarp];
        polls.push_back(double(q[1] - q[0]) / double(std::max(q[3], 1ull)));
      }
    }
    JObj p;
    p.num("alu_warps", alu).num("waiting_warps", pollers).num("chains", C).str("instruction", kind_ptx(kFfma))
        .num("instructions_per_warp", kIters * kPerIter).num("cycles_per_poll_median", polls.empty() ? 0 : median(polls));
    record(c, "issue_poll_ffma_c" + std::to_string(C) + "_p" + std::to_string(pollers), "issue", "instr/cycle", per_warp,
           std::to_string(alu) + " warps of one CTA on one SM each run " + std::to_string(kIters * kPerIter) + " fma.rn.f32 in " +
               std::to_string(C) + " independent chain(s) while " + std::to_string(pollers) +
               " other warps wait (mbarrier.try_wait.parity in a loop) for a phase that completes when the ALU warps "
               "are done. Value: each ALU warp's instructions per cycle over its loop; samples: every ALU warp of 5 "
               "launches; params: the waiting warps' cycles per try_wait.",
           p);
  }
}

}  // namespace

void bench_issue(Ctx& c) {
  DevBuf<unsigned long long> out(static_cast<size_t>(kMaxWarps) * kOutPerWarp);
  DevBuf<float> sink(kMaxWarps * 32);
  CK(cudaFuncSetAttribute(k_issue<kFfma, 8, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kOpBytes));
  CK(cudaFuncSetAttribute(k_issue<kMufu, 8, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kOpBytes));
  alone_cases<kFfma, 1>(c, out, sink);
  alone_cases<kFfma, 2>(c, out, sink);
  alone_cases<kFfma, 4>(c, out, sink);
  alone_cases<kFfma, 8>(c, out, sink);
  alone_cases<kMufu, 1>(c, out, sink);
  alone_cases<kMufu, 8>(c, out, sink);
  alone_cases<kFadd, 8>(c, out, sink);
  CK(cudaFuncSetAttribute(k_issue<kFadd, 8, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kOpBytes));
  beside_wgmma_cases<kFfma>(c, out, sink);
  beside_wgmma_cases<kMufu>(c, out, sink);
  beside_wgmma_cases<kFadd>(c, out, sink);
  // The wgmmas' rate against the ALU warps' own rate: FFMA streams of 1-7 chains on 4 and 8 warps.
  beside_chains<1>(c, out, sink);
  beside_chains<2>(c, out, sink);
  beside_chains<3>(c, out, sink);
  beside_chains<4>(c, out, sink);
  beside_chains<5>(c, out, sink);
  beside_chains<6>(c, out, sink);
  beside_chains<7>(c, out, sink);
  mixed_case(c, out, sink);
  // The wgmma's N, ALU bursts with idle gaps (the loss against the share of time the ALU warps issue), and a
  // softmax-like mix.
  DevBuf<unsigned long long> dout(static_cast<size_t>(12) * kDutyOut);
  duty_case<64, kMixFfma>(c, dout, sink, 0, 1, 0);
  duty_case<64, kMixFfma>(c, dout, sink, 4, 4, 0);
  duty_case<128, kMixFfma>(c, dout, sink, 0, 1, 0);
  duty_case<128, kMixFfma>(c, dout, sink, 4, 4, 0);
  duty_case<256, kMixFfma>(c, dout, sink, 0, 1, 0);
  duty_case<256, kMixFfma>(c, dout, sink, 4, 4, 0);
  for (int sleep : {250, 500, 1000, 2000, 4000}) duty_case<256, kMixFfma>(c, dout, sink, 4, 4, sleep);
  for (int sleep : {500, 2000}) duty_case<256, kMixFfma>(c, dout, sink, 4, 1, sleep);
  duty_case<256, kMixSoftmax>(c, dout, sink, 4, 4, 0);
  duty_case<256, kMixSoftmax>(c, dout, sink, 8, 4, 0);
  // ALU warps beside warps that wait on an mbarrier.
  poll_cases<1>(c, out, sink);
  poll_cases<2>(c, out, sink);
  poll_cases<4>(c, out, sink);
  poll_cases<8>(c, out, sink);
}

}  // namespace mb
