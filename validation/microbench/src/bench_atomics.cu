// Synchronisation through global memory: latency of dependent gpu-scope atomics (add, acq_rel add, cas) and
// loads (ld.acquire / ld.relaxed) on an L2-resident line; the period of an ld.acquire spin loop; issue cost of
// st.release / red.release / red.relaxed runs; cost of gpu-scope fences (with and without a store to order);
// flag hand-off between two CTAs on different SMs; a hand-written grid barrier and the cooperative-groups grid
// sync for 2..SM-count CTAs; whole-GPU throughput of relaxed red.add to one address and to distinct addresses.
#include <cooperative_groups.h>

#include <algorithm>
#include <set>

#include "common.cuh"

namespace mb {
namespace {

const char* const G = "atomics";
constexpr int kWarm = 16;           // leading samples dropped (L2 fill of the line, instruction cache)
constexpr int kMaxSamples = 1024;   // per-sample times are kept in smem during the run (see kernels)
constexpr int kChain = 64;          // dependent operations per latency sample
constexpr int kRun = 64;            // back-to-back stores / reds per issue sample
constexpr int kRounds = 32;         // flag round trips per hand-off sample
constexpr int kBarriers = 32;       // grid barriers per sample
constexpr int kPolls = 64;          // polls per spin-loop sample
constexpr unsigned kSyncChecks = 8; // untimed checked grid syncs after the timed ones (cg grid sync)
constexpr int kOneCtaPerSmDyn = 160 * 1024;  // > half of the SM's smem: one CTA per SM

// ---- global-memory PTX (all operands are generic pointers to global memory) ----
DEVI unsigned ld_acquire_gpu(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
DEVI void st_release_gpu(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
DEVI void red_release_gpu_add(unsigned* p, unsigned v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
DEVI void red_relaxed_gpu_add(unsigned* p, unsigned v) {
  asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
DEVI unsigned atom_release_gpu_add(unsigned* p, unsigned v) {
  unsigned old;
  asm volatile("atom.release.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
DEVI void st_relaxed_gpu(unsigned* p, unsigned v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
DEVI unsigned ld_relaxed_gpu(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
DEVI void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
DEVI void fence_sc_gpu() { asm volatile("fence.sc.gpu;" ::: "memory"); }
DEVI void bar_sync0() { asm volatile("bar.sync 0;" ::: "memory"); }

// Bounded spin on a global word with ld.acquire.gpu until (int)(value - want) >= 0; `seen` = the value that
// ended the wait. Every 1024 failed polls it looks at %globaltimer; after kTimeoutNs it counts a timeout in
// err[ERR_TIMEOUT] and returns false.
DEVI bool spin_acquire_geq(const unsigned* p, unsigned want, unsigned* err, unsigned& seen) {
  uint32_t spins = 0;
  unsigned long long deadline = 0;
  while (true) {
    const unsigned v = ld_acquire_gpu(p);
    if (static_cast<int>(v - want) >= 0) {
      seen = v;
      return true;
    }
    if ((++spins & 1023u) == 0) {
      unsigned long long now = gtime();
      if (deadline == 0) {
        deadline = now + kTimeoutNs;
      } else if (now > deadline) {
        atomicAdd(&err[ERR_TIMEOUT], 1u);
        seen = v;
        return false;
      }
    }
  }
}

// ---- 1-4: dependent chains on one 128 B line --------------------------------------------------------
// Probe line (32 words, 128 B aligned): word 0 add.relaxed counter, word 1 add.acq_rel counter, word 2 cas
// word, words 8..14 the 7 nodes of the load chain (each holds the byte offset of the next node), words 16-18
// targets of the issue runs, word 19 the store target of the fence runs, word 20 the spin-poll word. All
// latency chains touch this one line, so they see the same L2 slice.
enum ChainOp : int { CH_ADD_RELAXED = 0, CH_ADD_ACQ_REL = 1, CH_CAS_RELAXED = 2, CH_LD_ACQUIRE = 3, CH_LD_RELAXED = 4 };
constexpr int kWordAddRelaxed = 0, kWordAddAcqRel = 1, kWordCas = 2, kWordSt = 16, kWordRedRelease = 17,
              kWordRedRelaxed = 18, kWordFenceSt = 19, kWordSpin = 20;
constexpr int kChainNodes[7] = {8, 13, 10, 14, 9, 12, 11};  // cyclic visiting order (word indices)

// One step of a chain. r is the previous step's result; the step cannot issue before r is back.
//   add: atom.add of min(r, 1) (the counter starts at 1, so the old value is >= 1 and the addend is 1)
//   cas: atom.cas(compare = r + 1, new = r + 2). The cas returns the OLD value, so when it succeeds the word
//        holds r + 2 = (returned value) + 1 afterwards: the next step's compare. Every cas succeeds (the word
//        starts at 0 and r0 = 0xffffffff); the two adds are independent of each other. (A first version used
//        compare = r, new = r + 1: after a success the word was r + 1 but the next compare was r again, so every
//        second cas failed and the word reached only half the step count.)
//   ld : load from line + r (r = byte offset of this node, the loaded value the next node's offset)
template <int OP>
DEVI unsigned chain_step(unsigned* line, unsigned r) {
  unsigned d;
  if (OP == CH_ADD_RELAXED)
    asm volatile("{\n .reg .u32 t;\n min.u32 t, %1, 1;\n atom.relaxed.gpu.global.add.u32 %0, [%2], t;\n}"
                 : "=r"(d)
                 : "r"(r), "l"(line + kWordAddRelaxed)
                 : "memory");
  else if (OP == CH_ADD_ACQ_REL)
    asm volatile("{\n .reg .u32 t;\n min.u32 t, %1, 1;\n atom.acq_rel.gpu.global.add.u32 %0, [%2], t;\n}"
                 : "=r"(d)
                 : "r"(r), "l"(line + kWordAddAcqRel)
                 : "memory");
  else if (OP == CH_CAS_RELAXED)
    asm volatile(
        "{\n .reg .u32 c, t;\n add.u32 c, %1, 1;\n add.u32 t, %1, 2;\n"
        " atom.relaxed.gpu.global.cas.b32 %0, [%2], c, t;\n}"
        : "=r"(d)
        : "r"(r), "l"(line + kWordCas)
        : "memory");
  else if (OP == CH_LD_ACQUIRE)
    asm volatile("{\n .reg .u64 a;\n cvt.u64.u32 a, %1;\n add.s64 a, a, %2;\n ld.acquire.gpu.global.u32 %0, [a];\n}"
                 : "=r"(d)
                 : "r"(r), "l"(line)
                 : "memory");
  else
    asm volatile("{\n .reg .u64 a;\n cvt.u64.u32 a, %1;\n add.s64 a, a, %2;\n ld.relaxed.gpu.global.u32 %0, [a];\n}"
                 : "=r"(d)
                 : "r"(r), "l"(line)
                 : "memory");
  return d;
}

// One thread. Per sample: t0; kChain dependent steps; st.shared of the last result (waits for it); t1.
// Sample times go to smem and are copied out at the end, so no global store sits in the chain (an acq_rel
// atom would otherwise wait for the previous sample's store). result[0] = the last step's result.
template <int OP>
__global__ void k_chain(unsigned* line, unsigned r0, int n, unsigned long long* out, unsigned* result,
                        unsigned* sm_id) {
  __shared__ unsigned long long ts[kMaxSamples];
  __shared__ volatile unsigned sink[64];
  if (threadIdx.x != 0) return;
  unsigned r = r0;
  for (int i = 0; i < n; ++i) {
    unsigned long long t0 = clk();
#pragma unroll
    for (int k = 0; k < kChain; ++k) r = chain_step<OP>(line, r);
    sink[i & 63] = r;
    unsigned long long t1 = clk();
    ts[i] = t1 - t0;
  }
  for (int i = 0; i < n; ++i) out[i] = ts[i];
  result[0] = r;
  sm_id[0] = smid();
}

// ---- 4b: period of an ld.acquire spin loop on a word that never changes ---------------------------------
// One thread. Per sample: t0; a spin loop (not unrolled) of the form the waits of this file use: poll =
// ld.acquire.gpu.global.u32, exit when (int)(value - want) >= 0 (never: the word holds 0, want = 1) or after
// kPolls polls; st.shared of the last value (waits for it); t1. The exit test needs each poll's value, so a
// poll cannot issue before the previous one has returned (no branch speculation). polls[0] = total polls,
// result[0] = the last value seen.
__global__ void k_spin_poll(const unsigned* word, unsigned want, int n, unsigned long long* out, unsigned* polls,
                            unsigned* result, unsigned* sm_id) {
  __shared__ unsigned long long ts[kMaxSamples];
  __shared__ volatile unsigned sink[64];
  if (threadIdx.x != 0) return;
  unsigned total = 0, v = 0;
  for (int i = 0; i < n; ++i) {
    unsigned k = 0;
    unsigned long long t0 = clk();
#pragma unroll 1
    do {
      v = ld_acquire_gpu(word);
      ++k;
    } while (static_cast<int>(v - want) < 0 && k < static_cast<unsigned>(kPolls));
    sink[i & 63] = v;
    unsigned long long t1 = clk();
    ts[i] = t1 - t0;
    total += k;
  }
  for (int i = 0; i < n; ++i) out[i] = ts[i];
  polls[0] = total;
  result[0] = v;
  sm_id[0] = smid();
}

// ---- 5: issue cost of a back-to-back run ------------------------------------------------------------
// One thread. Per sample: fence.acq_rel.gpu (earlier stores performed) and a 1000-cycle spin, untimed; then
// t0; kRun stores / reds to one word; t1 (nothing waits for the last one). The stored value is i + 1 for
// every store of sample i (one register, no per-store arithmetic); reds add 1.
enum IssueOp : int { IS_ST_RELEASE = 0, IS_RED_RELEASE = 1, IS_RED_RELAXED = 2 };
template <int OP>
__global__ void k_issue_run(unsigned* word, int n, unsigned long long* out, unsigned* sm_id) {
  __shared__ unsigned long long ts[kMaxSamples];
  if (threadIdx.x != 0) return;
  const unsigned one = 1u;
  for (int i = 0; i < n; ++i) {
    fence_acq_rel_gpu();
    spin_cycles(1000);
    const unsigned v = static_cast<unsigned>(i) + 1u;
    unsigned long long t0 = clk();
#pragma unroll
    for (int k = 0; k < kRun; ++k) {
      if (OP == IS_ST_RELEASE)
        st_release_gpu(word, v);
      else if (OP == IS_RED_RELEASE)
        red_release_gpu_add(word, one);
      else
        red_relaxed_gpu_add(word, one);
    }
    unsigned long long t1 = clk();
    ts[i] = t1 - t0;
  }
  fence_acq_rel_gpu();
  for (int i = 0; i < n; ++i) out[i] = ts[i];
  sm_id[0] = smid();
}

// ---- 5b: cost of back-to-back gpu-scope fences ------------------------------------------------------------
// One thread, same frame as k_issue_run: untimed fence.acq_rel.gpu + 1000-cycle spin; t0; kRun x (fence) or
// kRun x (st.relaxed.gpu word = i + 1; fence.acq_rel.gpu); t1.
enum FenceOp : int { FE_ACQ_REL = 0, FE_SC = 1, FE_ACQ_REL_AFTER_STORE = 2 };
template <int OP>
__global__ void k_fence_run(unsigned* word, int n, unsigned long long* out, unsigned* sm_id) {
  __shared__ unsigned long long ts[kMaxSamples];
  if (threadIdx.x != 0) return;
  for (int i = 0; i < n; ++i) {
    fence_acq_rel_gpu();
    spin_cycles(1000);
    const unsigned v = static_cast<unsigned>(i) + 1u;
    unsigned long long t0 = clk();
#pragma unroll
    for (int k = 0; k < kRun; ++k) {
      if (OP == FE_ACQ_REL_AFTER_STORE) st_relaxed_gpu(word, v);
      if (OP == FE_SC)
        fence_sc_gpu();
      else
        fence_acq_rel_gpu();
    }
    unsigned long long t1 = clk();
    ts[i] = t1 - t0;
  }
  fence_acq_rel_gpu();
  for (int i = 0; i < n; ++i) out[i] = ts[i];
  sm_id[0] = smid();
}

// ---- 6: flag hand-off between two CTAs on different SMs ---------------------------------------------
// Grid of 2 CTAs x 32 threads (160 KB dynamic smem each: different SMs); lane 0 of each works. Round j
// (1-based, j = 1 .. n * kRounds): CTA 0 signals flag_a, then spins with ld.acquire.gpu until flag_b >= j;
// CTA 1 spins until flag_a >= j, then signals flag_b. Signal: st.release.gpu flag = j (ATOMIC = false) or
// red.release.gpu.add flag, 1 (ATOMIC = true; the flag then also reaches j). Each wait checks that it saw
// exactly j. CTA 0 times kRounds round trips per sample (clock64). A timed-out side stops.
template <bool ATOMIC>
__global__ void k_flag_handoff(unsigned* flag_a, unsigned* flag_b, int n, unsigned long long* out, unsigned* sm_ids,
                               unsigned* err) {
  extern __shared__ unsigned char dyn[];
  __shared__ unsigned long long ts[kMaxSamples];
  if (threadIdx.x != 0) return;
  dyn[0] = 0;
  sm_ids[blockIdx.x] = smid();
  unsigned bad = 0;
  bool ok = true;
  if (blockIdx.x == 0) {
    unsigned j = 0;
    int done = 0;
    for (int i = 0; i < n && ok; ++i) {
      unsigned long long t0 = clk();
#pragma unroll 1
      for (int k = 0; k < kRounds; ++k) {
        ++j;
        if (ATOMIC)
          red_release_gpu_add(flag_a, 1u);
        else
          st_release_gpu(flag_a, j);
        unsigned seen;
        ok = spin_acquire_geq(flag_b, j, err, seen);
        bad += ok && seen != j;
        if (!ok) break;
      }
      unsigned long long t1 = clk();
      ts[i] = t1 - t0;
      done = i + 1;
    }
    for (int i = 0; i < done; ++i) out[i] = ts[i];
  } else {
    const unsigned total = static_cast<unsigned>(n) * kRounds;
#pragma unroll 1
    for (unsigned j = 1; j <= total; ++j) {
      unsigned seen;
      ok = spin_acquire_geq(flag_a, j, err, seen);
      bad += ok && seen != j;
      if (!ok) break;
      if (ATOMIC)
        red_release_gpu_add(flag_b, 1u);
      else
        st_release_gpu(flag_b, j);
    }
  }
  if (bad) atomicAdd(&err[ERR_DATA], bad);
}

// ---- 7: grid barrier ----------------------------------------------------------------------------------
// N CTAs x 128 threads, one per SM, cooperative launch. Barrier k (1-based): all threads bar.sync 0; thread 0
// of each CTA: old = atom.release.gpu.add(count, 1); the arrival that makes the count N*k (old == N*k - 1) is
// the last one: it does fence.acq_rel.gpu (acquire side of the release adds of the others) and
// st.release.gpu gen = k; every other thread 0 spins with ld.acquire.gpu until gen >= k (and checks that it
// reads exactly k); then all threads bar.sync 0. The count never resets (generation counting), so no reset
// race. A thread 0 whose wait timed out stops touching the words but keeps doing the bar.syncs of its CTA,
// so every CTA ends. Thread 0 of CTA 0 times kBarriers barriers per sample (clock64).
__global__ void k_grid_barrier(unsigned* count, unsigned* gen, int n, unsigned long long* out, unsigned* sm_ids,
                               unsigned* err) {
  extern __shared__ unsigned char dyn[];
  __shared__ unsigned long long ts[kMaxSamples];
  const unsigned N = gridDim.x;
  const bool leader = threadIdx.x == 0;
  if (leader) {
    dyn[0] = 0;
    sm_ids[blockIdx.x] = smid();
  }
  bool ok = true;
  unsigned bad = 0, k = 0;
  for (int i = 0; i < n; ++i) {
    unsigned long long t0 = clk();
#pragma unroll 1
    for (int b = 0; b < kBarriers; ++b) {
      bar_sync0();
      ++k;
      if (leader && ok) {
        const unsigned old = atom_release_gpu_add(count, 1u);
        if (old == N * k - 1u) {
          fence_acq_rel_gpu();
          st_release_gpu(gen, k);
        } else {
          unsigned seen;
          ok = spin_acquire_geq(gen, k, err, seen);
          bad += ok && seen != k;
        }
      }
      bar_sync0();
    }
    unsigned long long t1 = clk();
    if (leader) ts[i] = t1 - t0;
  }
  if (leader && blockIdx.x == 0)
    for (int i = 0; i < n; ++i) out[i] = ts[i];
  if (leader && bad) atomicAdd(&err[ERR_DATA], bad);
}

// ---- 7b: cooperative-groups grid sync -------------------------------------------------------------------------
// N CTAs x 128 threads, one per SM, launched with cudaLaunchCooperativeKernel. Timed part: every thread calls
// cooperative_groups::this_grid().sync() kBarriers times per sample; thread 0 of CTA 0 times them (clock64).
// Untimed check afterwards, kSyncChecks rounds m = 1..: thread 0 of each CTA red.relaxed.gpu.add(count, 1);
// grid sync; thread 0 reads count with ld.relaxed.gpu and checks N*m <= count < N*(m+1) (all arrivals of round m
// visible; no CTA can be two rounds ahead). The grid sync itself is the library's (no timeout possible: every
// CTA is resident by construction of the cooperative launch).
__global__ void k_cg_grid_sync(unsigned* count, int n, unsigned long long* out, unsigned* sm_ids, unsigned* err) {
  extern __shared__ unsigned char dyn[];
  __shared__ unsigned long long ts[kMaxSamples];
  const cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const unsigned N = gridDim.x;
  const bool leader = threadIdx.x == 0;
  if (leader) {
    dyn[0] = 0;
    sm_ids[blockIdx.x] = smid();
  }
  for (int i = 0; i < n; ++i) {
    unsigned long long t0 = clk();
#pragma unroll 1
    for (int b = 0; b < kBarriers; ++b) grid.sync();
    unsigned long long t1 = clk();
    if (leader) ts[i] = t1 - t0;
  }
  unsigned bad = 0;
#pragma unroll 1
  for (unsigned m = 1; m <= kSyncChecks; ++m) {
    if (leader) red_relaxed_gpu_add(count, 1u);
    grid.sync();
    if (leader) {
      const unsigned v = ld_relaxed_gpu(count);
      bad += v < N * m || v >= N * (m + 1);
    }
  }
  if (leader && blockIdx.x == 0)
    for (int i = 0; i < n; ++i) out[i] = ts[i];
  if (leader && bad) atomicAdd(&err[ERR_DATA], bad);
}

// ---- 8: whole-GPU red.add throughput --------------------------------------------------------------------
// N CTAs x 128 threads, one per SM. Every thread: `iters` red.relaxed.gpu.global.add.u32 (+1) to one shared
// word (DISTINCT = false) or to its own word, one 128 B line per thread (DISTINCT = true); then
// fence.acq_rel.gpu (waits until its reds are performed) and bar.sync. Thread 0 records %globaltimer after
// the first bar.sync and after the last.
template <bool DISTINCT>
__global__ void k_red_throughput(unsigned* base, int iters, unsigned long long* gt0, unsigned long long* gt1,
                                 unsigned* sm_ids) {
  extern __shared__ unsigned char dyn[];
  unsigned* p = DISTINCT ? base + static_cast<size_t>(blockIdx.x * blockDim.x + threadIdx.x) * 32 : base;
  const unsigned one = 1u;
  if (threadIdx.x == 0) dyn[0] = 0;
  __syncthreads();
  unsigned long long g0 = gtime();
#pragma unroll 8
  for (int i = 0; i < iters; ++i) red_relaxed_gpu_add(p, one);
  fence_acq_rel_gpu();
  __syncthreads();
  unsigned long long g1 = gtime();
  if (threadIdx.x == 0) {
    gt0[blockIdx.x] = g0;
    gt1[blockIdx.x] = g1;
    sm_ids[blockIdx.x] = smid();
  }
}

// Launch with `dyn` bytes of dynamic smem, optionally as a cooperative launch (all CTAs co-resident or the
// launch fails instead of hanging).
template <class... KArgs, class... Args>
void launch(void (*k)(KArgs...), int grid, int block, int dyn, bool coop, Args... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid, 1, 1);
  cfg.blockDim = dim3(block, 1, 1);
  cfg.dynamicSmemBytes = dyn;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeCooperative;
  at[0].val.cooperative = 1;
  cfg.attrs = at;
  cfg.numAttrs = coop ? 1 : 0;
  CK(cudaLaunchKernelEx(&cfg, k, args...));
  CK_LAUNCH();
}

// Host-side check result: "" or the reason; on a reason the measurement goes to failures.
bool record_checked(Ctx& c, const std::string& name, const std::string& unit, const std::vector<double>& samples,
                    const std::string& desc, JObj params, const std::string& host_err) {
  if (!host_err.empty()) {
    std::string e = c.take_err();
    c.res->fail(name, host_err + (e.empty() ? "" : "; " + e));
    return false;
  }
  return record(c, name, G, unit, samples, desc, std::move(params));
}

std::string mismatch(const char* what, unsigned long long got, unsigned long long want) {
  if (got == want) return "";
  return std::string(what) + " = " + std::to_string(got) + ", expected " + std::to_string(want);
}

}  // namespace

void bench_atomics(Ctx& c) {
  const int n = std::min(c.reps(500, 32) + kWarm, kMaxSamples);
  const unsigned long long steps = static_cast<unsigned long long>(n) * kChain;
  DevBuf<unsigned long long> out(kMaxSamples);
  DevBuf<unsigned> line(32), result(1), sm1(1);

  // --- 1-4: dependent chains on the probe line
  {
    std::vector<unsigned> init(32, 0u);
    init[kWordAddRelaxed] = 1;
    init[kWordAddAcqRel] = 1;
    for (int k = 0; k < 7; ++k) init[kChainNodes[k]] = 4u * kChainNodes[(k + 1) % 7];
    const unsigned ld_start = 4u * kChainNodes[0];
    const std::string step_note =
        " Sample = clock64 around 64 steps, the last result stored to smem before the closing clock read; value = "
        "cycles / 64 (includes the step's integer op(s) and 1/64 of a clock read). First 16 samples dropped (they "
        "bring the line into L2). One thread of a <<<1,32>>> launch.";
    struct Ch {
      int op;
      const char* name;
      std::string desc;
    } chs[] = {
        {CH_ADD_RELAXED, "atom_add_relaxed_gpu_latency",
         "Dependent chain of atom.relaxed.gpu.global.add.u32 on one L2-resident word (starts at 1); each atom adds "
         "min(previous atom's returned old value, 1) = 1 (min.u32 + atom per step), so it cannot issue before the "
         "previous atom has returned." + step_note},
        {CH_ADD_ACQ_REL, "atom_add_acq_rel_gpu_latency",
         "As atom_add_relaxed_gpu_latency with atom.acq_rel.gpu.global.add.u32 (another word of the same 128 B "
         "line)." + step_note},
        {CH_CAS_RELAXED, "atom_cas_relaxed_gpu_latency",
         "Dependent chain of atom.relaxed.gpu.global.cas.b32 on one L2-resident word (same line, starts at 0): "
         "compare = the previous cas's returned (old) value + 1, new = that old value + 2 (two independent add.u32 + "
         "atom per step; the first compare is 0), so every cas succeeds and depends on the previous one (the final "
         "word = number of steps incl. the dropped samples proves that none failed)." + step_note},
        {CH_LD_ACQUIRE, "ld_acquire_gpu_latency",
         "Pointer chase with ld.acquire.gpu.global.u32 over 7 words of one L2-resident 128 B line (the same line "
         "as the atomics); each word holds the byte offset of the next (address = line + previous value: cvt + "
         "64-bit add + load per step)." + step_note},
        {CH_LD_RELAXED, "ld_relaxed_gpu_latency",
         "As ld_acquire_gpu_latency with ld.relaxed.gpu.global.u32." + step_note},
    };
    for (auto& ch : chs) {
      CK(cudaMemcpy(line.p, init.data(), 32 * sizeof(unsigned), cudaMemcpyHostToDevice));
      out.zero();
      // cas: the word starts at 0 and the first step compares r0 + 1 = 0.
      unsigned r0 = ch.op == CH_ADD_RELAXED || ch.op == CH_ADD_ACQ_REL ? 1u : ch.op == CH_CAS_RELAXED ? ~0u : ld_start;
      switch (ch.op) {
        case CH_ADD_RELAXED: k_chain<CH_ADD_RELAXED><<<1, 32>>>(line.p, r0, n, out.p, result.p, sm1.p); break;
        case CH_ADD_ACQ_REL: k_chain<CH_ADD_ACQ_REL><<<1, 32>>>(line.p, r0, n, out.p, result.p, sm1.p); break;
        case CH_CAS_RELAXED: k_chain<CH_CAS_RELAXED><<<1, 32>>>(line.p, r0, n, out.p, result.p, sm1.p); break;
        case CH_LD_ACQUIRE: k_chain<CH_LD_ACQUIRE><<<1, 32>>>(line.p, r0, n, out.p, result.p, sm1.p); break;
        default: k_chain<CH_LD_RELAXED><<<1, 32>>>(line.p, r0, n, out.p, result.p, sm1.p); break;
      }
      CK_LAUNCH();
      auto h = line.get();
      const unsigned res = result.get()[0];
      std::string chk;
      if (ch.op == CH_ADD_RELAXED || ch.op == CH_ADD_ACQ_REL) {
        const int w = ch.op == CH_ADD_RELAXED ? kWordAddRelaxed : kWordAddAcqRel;
        chk = mismatch("counter", h[w], 1 + steps);
        if (chk.empty()) chk = mismatch("last returned value", res, steps);
      } else if (ch.op == CH_CAS_RELAXED) {
        chk = mismatch("cas word", h[kWordCas], steps);
        if (chk.empty()) chk = mismatch("last returned value", res, steps - 1);
      } else {
        chk = mismatch("final chase offset", res, 4u * kChainNodes[steps % 7]);
      }
      auto raw = out.get();
      raw.resize(n);
      record_checked(c, ch.name, "cycles", to_samples(raw, kWarm, 1.0 / kChain), ch.desc,
                     JObj().num("chain", kChain).num("sm", sm1.get()[0]).num("steps_checked", double(steps)), chk);
    }
  }

  // --- 4b: ld.acquire spin-loop period on a word that never changes
  {
    DevBuf<unsigned> polls(1);
    line.zero();
    out.zero();
    polls.zero();
    CK(cudaMemset(result.p, 0xff, sizeof(unsigned)));
    k_spin_poll<<<1, 32>>>(line.p + kWordSpin, 1u, n, out.p, polls.p, result.p, sm1.p);
    CK_LAUNCH();
    std::string chk = mismatch("polls", polls.get()[0], static_cast<unsigned long long>(n) * kPolls);
    if (chk.empty()) chk = mismatch("last polled value", result.get()[0], 0);
    if (chk.empty()) chk = mismatch("polled word", line.get()[kWordSpin], 0);
    auto raw = out.get();
    raw.resize(n);
    record_checked(
        c, "spin_poll_period", "cycles", to_samples(raw, kWarm, 1.0 / kPolls),
        "One thread of a <<<1,32>>> launch spins on one L2-resident word that holds 0 and never changes (same 128 B "
        "line as the chains): a loop (not unrolled) of ld.acquire.gpu.global.u32, exit when (int)(value - 1) >= 0 "
        "(never) or after 64 polls, as the waits of this group are written (minus their %globaltimer check every "
        "1024 polls). Sample = clock64 around the 64 polls, the last value stored to smem before the closing clock "
        "read; value = cycles / 64 per poll (includes the compare, counter and branch of the loop and 1/64 of a "
        "clock read). The exit test needs each poll's value, so polls cannot overlap: compare with "
        "ld_acquire_gpu_latency. First 16 samples dropped. Poll count, last value and the word checked on the host.",
        JObj().num("polls_per_sample", kPolls).num("sm", sm1.get()[0]), chk);
  }

  // --- 5: issue cost of 64 back-to-back st.release / red.release / red.relaxed
  {
    struct Is {
      int op, word;
      const char* name;
      const char* instr;
    } iss[] = {
        {IS_ST_RELEASE, kWordSt, "st_release_gpu_issue", "st.release.gpu.global.u32"},
        {IS_RED_RELEASE, kWordRedRelease, "red_release_gpu_issue", "red.release.gpu.global.add.u32 (+1)"},
        {IS_RED_RELAXED, kWordRedRelaxed, "red_relaxed_gpu_issue", "red.relaxed.gpu.global.add.u32 (+1)"},
    };
    for (auto& is : iss) {
      line.zero();
      out.zero();
      unsigned* w = line.p + is.word;
      if (is.op == IS_ST_RELEASE)
        k_issue_run<IS_ST_RELEASE><<<1, 32>>>(w, n, out.p, sm1.p);
      else if (is.op == IS_RED_RELEASE)
        k_issue_run<IS_RED_RELEASE><<<1, 32>>>(w, n, out.p, sm1.p);
      else
        k_issue_run<IS_RED_RELAXED><<<1, 32>>>(w, n, out.p, sm1.p);
      CK_LAUNCH();
      const unsigned got = line.get()[is.word];
      const std::string chk = is.op == IS_ST_RELEASE ? mismatch("stored word", got, n)
                                                     : mismatch("counter", got, static_cast<unsigned long long>(n) * kRun);
      auto raw = out.get();
      raw.resize(n);
      record_checked(
          c, is.name, "cycles", to_samples(raw, kWarm, 1.0 / kRun),
          std::string("One thread: untimed fence.acq_rel.gpu + 1000-cycle spin (memory pipe idle), then t0; 64 x ") +
              is.instr + " back to back to one L2-resident word (no other PTX instructions between them; a .release form "
              "carries its own release fence); t1 (nothing waits for the last one to complete). Value = (t1 - t0) / 64: issue cost per instruction as the thread "
              "sees it, incl. 1/64 of a clock read. Final word checked on the host.",
          JObj().num("run", kRun).num("sm", sm1.get()[0]), chk);
    }
  }

  // --- 5b: cost of 64 back-to-back gpu-scope fences (alone, and each after a relaxed store)
  {
    struct Fe {
      int op;
      const char* name;
      const char* what;
    } fes[] = {
        {FE_ACQ_REL, "fence_acq_rel_gpu_cost",
         "fence.acq_rel.gpu back to back (no other PTX instructions between them, no store to order)"},
        {FE_SC, "fence_sc_gpu_cost",
         "fence.sc.gpu back to back (no other PTX instructions between them, no store to order)"},
        {FE_ACQ_REL_AFTER_STORE, "fence_acq_rel_gpu_after_store_cost",
         "(st.relaxed.gpu.global.u32 to one L2-resident word, value = sample index + 1; fence.acq_rel.gpu) back to "
         "back, so every fence has one write to order"},
    };
    for (auto& fe : fes) {
      line.zero();
      out.zero();
      unsigned* w = line.p + kWordFenceSt;
      if (fe.op == FE_ACQ_REL)
        k_fence_run<FE_ACQ_REL><<<1, 32>>>(w, n, out.p, sm1.p);
      else if (fe.op == FE_SC)
        k_fence_run<FE_SC><<<1, 32>>>(w, n, out.p, sm1.p);
      else
        k_fence_run<FE_ACQ_REL_AFTER_STORE><<<1, 32>>>(w, n, out.p, sm1.p);
      CK_LAUNCH();
      const unsigned got = line.get()[kWordFenceSt];
      const std::string chk = mismatch("stored word", got, fe.op == FE_ACQ_REL_AFTER_STORE ? n : 0);
      auto raw = out.get();
      raw.resize(n);
      record_checked(
          c, fe.name, "cycles", to_samples(raw, kWarm, 1.0 / kRun),
          std::string("One thread of a <<<1,32>>> launch: untimed fence.acq_rel.gpu + 1000-cycle spin (memory pipe "
                      "idle), then t0; 64 x ") +
              fe.what + "; t1 (nothing after the last fence waits for it). Value = (t1 - t0) / 64 per " +
              (fe.op == FE_ACQ_REL_AFTER_STORE ? "store + fence" : "fence") +
              ", incl. 1/64 of a clock read. First 16 samples dropped. The word is checked on the host (" +
              (fe.op == FE_ACQ_REL_AFTER_STORE ? "last stored value" : "untouched, 0") + ").",
          JObj().num("run", kRun).num("sm", sm1.get()[0]), chk);
    }
  }

  // --- 6: flag hand-off between two SMs
  {
    DevBuf<unsigned> flags(64);  // flag_a word 0, flag_b word 32 (different 128 B lines)
    DevBuf<unsigned> sms(2);
    CK(cudaFuncSetAttribute(k_flag_handoff<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kOneCtaPerSmDyn));
    CK(cudaFuncSetAttribute(k_flag_handoff<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kOneCtaPerSmDyn));
    for (int atomic = 0; atomic < 2; ++atomic) {
      flags.zero();
      sms.zero();
      out.zero();
      if (atomic)
        launch(k_flag_handoff<true>, 2, 32, kOneCtaPerSmDyn, true, flags.p, flags.p + 32, n, out.p, sms.p, c.d_err);
      else
        launch(k_flag_handoff<false>, 2, 32, kOneCtaPerSmDyn, true, flags.p, flags.p + 32, n, out.p, sms.p, c.d_err);
      auto s = sms.get();
      auto f = flags.get();
      const unsigned long long total = static_cast<unsigned long long>(n) * kRounds;
      std::string chk = s[0] == s[1] ? "both CTAs ran on SM " + std::to_string(s[0]) : "";
      if (chk.empty()) chk = mismatch("flag_a", f[0], total);
      if (chk.empty()) chk = mismatch("flag_b", f[32], total);
      auto raw = out.get();
      raw.resize(n);
      const std::string sig = atomic ? "red.release.gpu.global.add.u32 flag, 1" : "st.release.gpu.global.u32 flag = j";
      record_checked(
          c, atomic ? "flag_handoff_one_way_atomic" : "flag_handoff_one_way", "cycles",
          to_samples(raw, kWarm, 1.0 / (2 * kRounds)),
          "Two CTAs of one warp on different SMs (160 KB dynamic smem each, cooperative launch; SMs in params), lane 0 "
          "of each. Round j: CTA 0 signals flag_a with " + sig + ", then spins with ld.acquire.gpu.global.u32 until "
          "flag_b >= j; CTA 1 spins the same way on flag_a, then signals flag_b likewise (flags in different 128 B "
          "lines; each wait checks it saw exactly j). CTA 0 times 32 round trips per sample with clock64; value = "
          "(t1 - t0) / 64 = mean one-way signal -> the other SM's spin sees it (incl. its poll interval and loop "
          "overhead). Final flags checked on the host.",
          JObj().num("rounds_per_sample", kRounds).num("sm_cta0", s[0]).num("sm_cta1", s[1]).str("signal", sig),
          chk);
    }
  }

  // --- 7: grid barrier
  {
    DevBuf<unsigned> words(64);  // count word 0, gen word 32 (different 128 B lines)
    DevBuf<unsigned> sms(c.sm_count);
    CK(cudaFuncSetAttribute(k_grid_barrier, cudaFuncAttributeMaxDynamicSharedMemorySize, kOneCtaPerSmDyn));
    std::vector<int> ns;
    for (int nc : {2, 16, 66, c.sm_count})
      if (nc <= c.sm_count && std::find(ns.begin(), ns.end(), nc) == ns.end()) ns.push_back(nc);
    for (int nc : ns) {
      words.zero();
      sms.zero();
      out.zero();
      launch(k_grid_barrier, nc, 128, kOneCtaPerSmDyn, true, words.p, words.p + 32, n, out.p, sms.p, c.d_err);
      auto w = words.get();
      auto s = sms.get();
      const unsigned long long total = static_cast<unsigned long long>(n) * kBarriers;
      std::string chk = mismatch("count", w[0], total * nc);
      if (chk.empty()) chk = mismatch("generation", w[32], total);
      const size_t distinct = std::set<unsigned>(s.begin(), s.begin() + nc).size();
      auto raw = out.get();
      raw.resize(n);
      record_checked(
          c, "grid_barrier_latency_" + std::to_string(nc) + "ctas", "cycles", to_samples(raw, kWarm, 1.0 / kBarriers),
          std::to_string(nc) + " CTAs x 128 threads, one per SM (160 KB dynamic smem, cooperative launch). Barrier k: "
          "bar.sync 0; thread 0 of each CTA: atom.release.gpu.global.add.u32 count, 1; the last arriver (old == N*k - "
          "1) does fence.acq_rel.gpu + st.release.gpu.global.u32 gen = k, the others spin with "
          "ld.acquire.gpu.global.u32 on gen (another 128 B line) until it reads k; bar.sync 0. Thread 0 of CTA 0 "
          "times 32 back-to-back barriers with clock64; value = cycles / 32 per barrier. Final count and generation "
          "checked on the host.",
          JObj().num("ctas", nc).num("threads_per_cta", 128).num("barriers_per_sample", kBarriers).num("distinct_sms",
                                                                                                       double(distinct))
              .num("sm_cta0", s[0]),
          chk);
    }
  }

  // --- 7b: cooperative-groups grid sync
  {
    DevBuf<unsigned> words(32);  // check counter word 0
    DevBuf<unsigned> sms(c.sm_count);
    CK(cudaFuncSetAttribute(k_cg_grid_sync, cudaFuncAttributeMaxDynamicSharedMemorySize, kOneCtaPerSmDyn));
    std::vector<int> ns;
    for (int nc : {2, 16, 66, c.sm_count})
      if (nc <= c.sm_count && std::find(ns.begin(), ns.end(), nc) == ns.end()) ns.push_back(nc);
    for (int nc : ns) {
      words.zero();
      sms.zero();
      out.zero();
      int n_arg = n;
      unsigned* count = words.p;
      unsigned long long* out_p = out.p;
      unsigned* sms_p = sms.p;
      unsigned* err_p = c.d_err;
      void* args[] = {&count, &n_arg, &out_p, &sms_p, &err_p};
      CK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(k_cg_grid_sync), dim3(nc), dim3(128), args,
                                     kOneCtaPerSmDyn, cudaStream_t{}));
      CK_LAUNCH();
      auto w = words.get();
      auto s = sms.get();
      const std::string chk = mismatch("check counter", w[0], static_cast<unsigned long long>(nc) * kSyncChecks);
      const size_t distinct = std::set<unsigned>(s.begin(), s.begin() + nc).size();
      auto raw = out.get();
      raw.resize(n);
      record_checked(
          c, "cg_grid_sync_latency_" + std::to_string(nc) + "ctas", "cycles", to_samples(raw, kWarm, 1.0 / kBarriers),
          std::to_string(nc) + " CTAs x 128 threads, one per SM (160 KB dynamic smem), launched with "
          "cudaLaunchCooperativeKernel. Every thread calls cooperative_groups::this_grid().sync() (the CUDA " +
          std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10) +
          " library's implementation, built without -rdc); thread 0 of CTA 0 times 32 back-to-back grid syncs with "
          "clock64; value = cycles / 32 per sync. First 16 samples dropped. Untimed check afterwards: 8 rounds of "
          "(thread 0 of each CTA red.relaxed.gpu.add count, 1; grid sync; thread 0 reads count with ld.relaxed.gpu "
          "and checks N*m <= count < N*(m+1)); final count checked on the host. Compare with "
          "grid_barrier_latency_" + std::to_string(nc) + "ctas.",
          JObj().num("ctas", nc).num("threads_per_cta", 128).num("syncs_per_sample", kBarriers).num("distinct_sms",
                                                                                                     double(distinct))
              .num("sm_cta0", s[0]).num("check_rounds", kSyncChecks).str("launch", "cudaLaunchCooperativeKernel"),
          chk);
    }
  }

  // --- 8: whole-GPU red.add throughput, one address and distinct addresses
  {
    struct Tp {
      bool distinct;
      int ctas;
    };
    std::vector<Tp> tps;
    for (int nc : {1, 16, c.sm_count})
      if (nc <= c.sm_count) tps.push_back({false, nc});
    tps.push_back({true, c.sm_count});
    DevBuf<unsigned> dist(static_cast<size_t>(c.sm_count) * 128 * 32);
    DevBuf<unsigned long long> g0(c.sm_count), g1(c.sm_count);
    DevBuf<unsigned> sms(c.sm_count);
    CK(cudaFuncSetAttribute(k_red_throughput<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kOneCtaPerSmDyn));
    CK(cudaFuncSetAttribute(k_red_throughput<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kOneCtaPerSmDyn));
    for (auto& tp : tps) {
      const int threads = tp.ctas * 128;
      const long long target = (tp.distinct ? 1ll << 26 : 1ll << 24) / (c.quick ? 8 : 1);
      const int iters = std::max(64, static_cast<int>(target / threads) / 8 * 8);
      const unsigned long long total = static_cast<unsigned long long>(threads) * iters;
      std::vector<double> apc;
      std::string chk;
      for (int r = 0; r < (c.quick ? 3 : 11) && chk.empty(); ++r) {
        if (tp.distinct) {
          dist.zero();
          launch(k_red_throughput<true>, tp.ctas, 128, kOneCtaPerSmDyn, false, dist.p, iters, g0.p, g1.p, sms.p);
          auto h = dist.get();
          for (int t = 0; t < threads && chk.empty(); ++t)
            chk = mismatch(("word of thread " + std::to_string(t)).c_str(), h[static_cast<size_t>(t) * 32], iters);
        } else {
          CK(cudaMemset(dist.p, 0, 128));
          launch(k_red_throughput<false>, tp.ctas, 128, kOneCtaPerSmDyn, false, dist.p, iters, g0.p, g1.p, sms.p);
          unsigned got = 0;
          CK(cudaMemcpy(&got, dist.p, sizeof got, cudaMemcpyDeviceToHost));
          chk = mismatch("counter", got, total & 0xffffffffull);
        }
        auto h0 = g0.get(), h1 = g1.get();
        unsigned long long mn = ~0ull, mx = 0;
        for (int k = 0; k < tp.ctas; ++k) {
          mn = std::min(mn, h0[k]);
          mx = std::max(mx, h1[k]);
        }
        if (r > 0 && mx > mn) apc.push_back(double(total) / (double(mx - mn) * c.clk_ghz));
      }
      auto s = sms.get();
      const size_t distinct_sms = std::set<unsigned>(s.begin(), s.begin() + tp.ctas).size();
      const std::string name = tp.distinct ? "atom_add_distinct_address_throughput_" + std::to_string(tp.ctas) + "ctas"
                                           : "atom_add_same_address_throughput_" + std::to_string(tp.ctas) + "ctas";
      record_checked(
          c, name, "atomics/cycle", apc,
          std::to_string(tp.ctas) + " CTA(s) x 128 threads, one CTA per SM (160 KB dynamic smem). Every thread issues " +
              std::to_string(iters) + " red.relaxed.gpu.global.add.u32 (+1) " +
              (tp.distinct ? "to its own word (one 128 B line per thread, all L2-resident)"
                           : "to ONE shared word (all threads, all CTAs)") +
              ", then fence.acq_rel.gpu (its reds performed) and bar.sync. Value = all atomics / (last CTA end - first "
              "CTA start by %globaltimer, in ns, x the SM clock measured at the start of the run in GHz): thread-level "
              "atomics per SM cycle for the whole GPU. One sample per launch, the first launch dropped; final " +
              (tp.distinct ? "words" : "counter") + " checked on the host after every launch.",
          JObj().num("ctas", tp.ctas).num("threads_per_cta", 128).num("reds_per_thread", iters).num("atomics_per_launch",
                                                                                                    double(total))
              .num("sm_clock_ghz_used", c.clk_ghz).num("distinct_sms", double(distinct_sms)).str("timer", "%globaltimer span"),
          chk);
    }
  }
}

}  // namespace mb
