// mbarrier microbenchmarks: arrive -> waiter resumes, poll cost, expect_tx/complete_tx, remote (cluster) arrive.
#include "common.cuh"

namespace mb {
namespace {

constexpr int kWarm = 16;  // leading samples dropped (first touch, instruction cache)

// Two back-to-back clock64 reads: the floor that every clock64-timed sample includes.
__global__ void k_clock_overhead(unsigned long long* out, int n) {
  for (int i = 0; i < n; ++i) {
    unsigned long long t0 = clk();
    unsigned long long t1 = clk();
    if (threadIdx.x == 0) out[i] = t1 - t0;
  }
}

// --- same warp: arrive then wait on a barrier that this arrive completes -------------------------
// mode 0: count 1, lane 0 arrives, the whole warp waits (try_wait loop)
// mode 1: count 32, every lane arrives, the whole warp waits
// mode 2: count 1, lane 0 does arrive.expect_tx(1024) then complete_tx(1024); the whole warp waits
__global__ void k_mbar_same_warp(unsigned long long* out, int n, int mode, unsigned* err) {
  __shared__ __align__(8) uint64_t bar;
  const int lane = threadIdx.x & 31;
  const uint32_t b = smem_u32(&bar);
  if (threadIdx.x == 0) {
    mbar_init(b, mode == 1 ? 32u : 1u);
    fence_mbar_init();
  }
  __syncthreads();
  for (int i = 0; i < n; ++i) {
    unsigned long long t0 = clk();
    if (mode == 1) {
      mbar_arrive(b);
    } else if (lane == 0) {
      if (mode == 0) {
        mbar_arrive(b);
      } else {
        mbar_arrive_expect_tx(b, 1024);
        mbar_complete_tx(b, 1024);
      }
    }
    bool ok = mbar_wait<WAIT_TRY>(b, i & 1, err);
    unsigned long long t1 = clk();
    if (lane == 0) out[i] = t1 - t0;
    __syncwarp();
    if (!ok) break;
  }
}

// --- poll cost on a barrier whose phase 0 has completed -------------------------------------------
// kind 0: test_wait(parity 0) -> true, dependent chain (next address depends on the result)
// kind 1: try_wait(parity 0)  -> true, dependent chain
// kind 2: test_wait(parity 0) -> true, independent (results summed), issue-rate bound
// kind 3: test_wait(parity 1) -> false (phase 1 still pending), dependent chain
// kind 4: try_wait(parity 1) -> false: one call, times out after the hardware's time limit
// Each sample = cycles for `kChain` polls (kinds 0-3) or for one call (kind 4).
constexpr int kChain = 64;
__global__ void k_mbar_poll(unsigned long long* out, int n, int kind, unsigned* err) {
  __shared__ __align__(8) uint64_t bars[2];
  const int lane = threadIdx.x & 31;
  const uint32_t b0 = smem_u32(&bars[0]);
  if (threadIdx.x == 0) {
    mbar_init(b0, 1);
    mbar_init(b0 + 8, 1);
    fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbar_arrive(b0);  // phase 0 of both barriers completes
    mbar_arrive(b0 + 8);
  }
  __syncthreads();
  uint32_t expect_true = kind <= 2 ? 1u : 0u;
  uint32_t parity = kind <= 2 ? 0u : 1u;
  uint32_t bad = 0;
  for (int i = 0; i < n; ++i) {
    uint32_t a = b0;
    uint32_t acc = 0;
    unsigned long long t0 = clk();
    if (kind == 4) {
      acc += mbar_try_wait(a, parity);
    } else if (kind == 2) {
#pragma unroll
      for (int k = 0; k < kChain; ++k) acc += mbar_test_wait(a, parity);
    } else if (kind == 1) {
#pragma unroll
      for (int k = 0; k < kChain; ++k) {
        uint32_t r = mbar_try_wait(a, parity);
        acc += r;
        a = b0 + ((r ^ expect_true) << 3);  // stays b0 when the answer is as expected
      }
    } else {
#pragma unroll
      for (int k = 0; k < kChain; ++k) {
        uint32_t r = mbar_test_wait(a, parity);
        acc += r;
        a = b0 + ((r ^ expect_true) << 3);
      }
    }
    unsigned long long t1 = clk();
    uint32_t want = kind == 4 ? 0u : (expect_true ? kChain : 0u);
    if (acc != want) ++bad;
    if (lane == 0) out[i] = t1 - t0;
  }
  if (bad && lane == 0) atomicAdd(&err[ERR_DATA], bad);
}

// --- two warps ping-pong / one-way wake-up ----------------------------------------------------------
// Barriers A (signaler -> waiter) and B (waiter -> signaler), count 1 each.
// mode 0 (RTT): signaler lane 0: t0, arrive A, wait B, t1; sample = t1 - t0 = round trip.
// mode 1 (one-way): signaler waits for the previous iteration's B, spins `delay` cycles so the waiter
//   is certainly blocked in its wait, stores t0 = clock64 in smem, arrives on A. The waiter records
//   t1 = clock64 right after its wait returns: sample = t1 - t0 (same SM, same clock).
// mode 2 (one-way, tx): as mode 1 but the signaler first does arrive.expect_tx(A, 1024) (phase stays
//   pending on tx), spins, then t0 and complete_tx(A, 1024) completes the phase.
// WK: wait flavour of the waiter (try_wait loop or test_wait spin).
template <int WK>
__global__ void k_mbar_pingpong(unsigned long long* out, int n, int sig_warp, int wait_warp, int mode, int delay,
                                unsigned* err) {
  __shared__ __align__(8) uint64_t bars[2];
  __shared__ volatile unsigned long long t0s;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const uint32_t A = smem_u32(&bars[0]), B = smem_u32(&bars[1]);
  if (threadIdx.x == 0) {
    mbar_init(A, 1);
    mbar_init(B, 1);
    fence_mbar_init();
  }
  __syncthreads();
  if (warp == sig_warp) {
    for (int i = 0; i < n; ++i) {
      bool ok = true;
      if (mode == 0) {
        unsigned long long t0 = clk();
        if (lane == 0) mbar_arrive(A);
        ok = mbar_wait<WAIT_TRY>(B, i & 1, err);
        unsigned long long t1 = clk();
        if (lane == 0) out[i] = t1 - t0;
      } else {
        if (i > 0) ok = mbar_wait<WAIT_TRY>(B, (i - 1) & 1, err);
        if (lane == 0 && ok) {
          if (mode == 2) mbar_arrive_expect_tx(A, 1024);
          spin_cycles(delay);
          unsigned long long t0 = clk();
          t0s = t0;
          if (mode == 2)
            mbar_complete_tx(A, 1024);
          else
            mbar_arrive(A);
        }
      }
      __syncwarp();
      if (!ok) break;
    }
  } else if (warp == wait_warp) {
    for (int i = 0; i < n; ++i) {
      bool ok = mbar_wait<WK>(A, i & 1, err);
      unsigned long long t1 = clk();
      if (lane == 0) {
        if (mode != 0) out[i] = t1 - t0s;
        mbar_arrive(B);
      }
      __syncwarp();
      if (!ok) break;
    }
  }
}

// --- cluster of 2: remote arrive ping-pong --------------------------------------------------------
// CTA rank 0 warp 0 (lane 0): t0, remote arrive on A of `peer`, wait own B, t1 -> RTT.
// Ponger: waits own A, arrives on B of rank 0. remote=1: ponger is warp 0 of CTA rank 1 (another SM,
// forced by the dynamic smem size); remote=0: ponger is warp 1 of CTA rank 0 and the arrives still go
// through mapa + mbarrier.arrive.release.cluster.shared::cluster (to its own CTA). Waits use
// try_wait.acquire.cluster.
// sem 0: arrive.release.cluster + try_wait.acquire.cluster; sem 1: default forms (arrive = release.cta,
// try_wait = acquire.cta), as CUTLASS's ClusterBarrier issues them.
__global__ void k_mbar_cluster_pingpong(unsigned long long* out, int n, int remote, int sem, unsigned* sm_ids,
                                        unsigned* err) {
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ __align__(8) uint64_t bars[2];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const uint32_t rank = cluster_ctarank();
  const uint32_t A = smem_u32(&bars[0]), B = smem_u32(&bars[1]);
  if (threadIdx.x == 0) {
    mbar_init(A, 1);
    mbar_init(B, 1);
    fence_mbar_init();
    sm_ids[rank] = smid();
    dyn[0] = 0;
  }
  __syncthreads();
  cluster_sync_all();  // peers' barriers are initialised before anyone arrives on them
  const bool pinger = rank == 0 && warp == 0;
  const bool ponger = remote ? (rank == 1 && warp == 0) : (rank == 0 && warp == 1);
  const uint32_t pong_rank = remote ? 1u : 0u;
  if (pinger && lane == 0) {
    const uint32_t rA = mapa_shared(A, pong_rank);
    for (int i = 0; i < n; ++i) {
      unsigned long long t0 = clk();
      bool ok;
      if (sem == 0) {
        mbar_arrive_cluster(rA);
        ok = mbar_wait<WAIT_TRY_CLUSTER>(B, i & 1, err);
      } else {
        mbar_arrive_cluster_default(rA);
        ok = mbar_wait<WAIT_TRY>(B, i & 1, err);
      }
      unsigned long long t1 = clk();
      out[i] = t1 - t0;
      if (!ok) break;
    }
  } else if (ponger && lane == 0) {
    const uint32_t rB = mapa_shared(B, 0);
    for (int i = 0; i < n; ++i) {
      bool ok;
      if (sem == 0) {
        ok = mbar_wait<WAIT_TRY_CLUSTER>(A, i & 1, err);
        mbar_arrive_cluster(rB);
      } else {
        ok = mbar_wait<WAIT_TRY>(A, i & 1, err);
        mbar_arrive_cluster_default(rB);
      }
      if (!ok) break;
    }
  }
  __syncwarp();
  cluster_sync_all();  // nobody exits while a peer may still arrive on its barriers
}

}  // namespace

void bench_mbarrier(Ctx& c) {
  const std::string G = "mbarrier";
  const int n = c.reps(1000, 64) + kWarm;
  DevBuf<unsigned long long> out(n);

  {
    out.zero();
    k_clock_overhead<<<1, 32>>>(out.p, n);
    CK_LAUNCH();
    record(c, "clock64_read_overhead", "clock", "cycles", to_samples(out.get(), kWarm),
           "Two back-to-back clock64 reads (mov.u64 %clock64) in one warp: t1-t0. Floor included in every "
           "clock64-timed latency here (not subtracted).");
  }

  // 1. same warp
  {
    const char* names[3] = {"mbar_same_warp_arrive_wait", "mbar_same_warp_arrive32_wait",
                            "mbar_same_warp_expect_tx_complete_tx_wait"};
    const char* desc[3] = {
        "One warp, barrier count 1: t0=clock64; lane 0 mbarrier.arrive; all 32 lanes try_wait.parity loop "
        "until the phase completes; t1=clock64 (lane 0). Cost of an arrive that completes the phase plus the "
        "first successful try_wait, incl. ~2 clock reads.",
        "One warp, barrier count 32: all 32 lanes arrive (one instruction), then all try_wait; t1-t0 on lane 0.",
        "One warp, count 1: lane 0 mbarrier.arrive.expect_tx(1024) then mbarrier.complete_tx(1024) (completes "
        "the phase), then all lanes try_wait; t1-t0 on lane 0."};
    for (int m = 0; m < 3; ++m) {
      out.zero();
      k_mbar_same_warp<<<1, 32>>>(out.p, n, m, c.d_err);
      CK_LAUNCH();
      record(c, names[m], G, "cycles", to_samples(out.get(), kWarm), desc[m], JObj().num("warmup_dropped", kWarm));
    }
  }

  // 2. poll cost
  {
    struct P {
      int kind;
      const char* name;
      const char* desc;
      double div;
    } ps[] = {
        {0, "mbar_test_wait_completed_dependent", "mbarrier.test_wait.parity on an already completed phase "
         "(returns true), 64 polls in a dependent chain (next address = f(previous result), +1-2 integer ops per "
         "poll); cycles per poll = total/64. Latency of one poll.", kChain},
        {1, "mbar_try_wait_completed_dependent", "As above with mbarrier.try_wait.parity (returns true "
         "immediately). Cycles per poll.", kChain},
        {2, "mbar_test_wait_completed_independent", "64 independent test_wait.parity (completed phase) whose "
         "results are summed: issue interval per poll, cycles.", kChain},
        {3, "mbar_test_wait_pending_dependent", "mbarrier.test_wait.parity on the pending phase (returns "
         "false), dependent chain of 64; cycles per poll (the cost of one failed poll in a spin loop).", kChain},
        {4, "mbar_try_wait_pending_timeout", "One mbarrier.try_wait.parity (no suspend-time hint) on a phase "
         "that never completes: cycles until it returns false, i.e. the hardware's built-in time limit of one "
         "try_wait.", 1},
    };
    for (auto& p : ps) {
      int nn = p.kind == 4 ? c.reps(200, 32) + kWarm : n;
      out.zero();
      k_mbar_poll<<<1, 32>>>(out.p, nn, p.kind, c.d_err);
      CK_LAUNCH();
      auto raw = out.get();
      raw.resize(nn);
      record(c, p.name, G, "cycles", to_samples(raw, kWarm, 1.0 / p.div), p.desc,
             JObj().num("chain", p.div).num("warp_threads_polling", 32));
    }
  }

  // 3. two warps: RTT and one-way, same warpgroup (warps 0,1) and other warpgroup (warps 0,4)
  {
    const int delay = 2000;
    struct Cfg {
      int wait_warp;
      int mode;
      int wk;
      const char* name;
      const char* desc;
      double div;
    } cfgs[] = {
        {1, 1, WAIT_TRY, "mbar_wake_other_warp_same_wg", "One-way arrive -> waiter resumes. Signaler warp 0 "
         "lane 0 stores t0=clock64 to smem and arrives (count-1 barrier) after a 2000-cycle spin, so warp 1 "
         "(same warpgroup, all 32 lanes in a try_wait.parity loop) is already blocked; waiter lane 0 takes "
         "t1=clock64 right after the wait returns: t1-t0 (same SM clock).", 1},
        {4, 1, WAIT_TRY, "mbar_wake_other_wg", "As mbar_wake_other_warp_same_wg, waiter is warp 4 (warpgroup 1 "
         "of a 256-thread CTA).", 1},
        {1, 1, WAIT_TEST, "mbar_wake_other_warp_same_wg_test_wait_spin", "As mbar_wake_other_warp_same_wg but "
         "the waiter spins on mbarrier.test_wait.parity (non-blocking poll) instead of try_wait.", 1},
        {1, 2, WAIT_TRY, "mbar_wake_complete_tx_other_warp", "One-way: signaler does arrive.expect_tx(A,1024) "
         "(arrival count reaches 0, tx pending), spins 2000 cycles, t0, then mbarrier.complete_tx(A,1024) "
         "completes the phase; waiter warp 1 (try_wait loop) records t1: t1-t0.", 1},
        {1, 0, WAIT_TRY, "mbar_pingpong_rtt_half_same_wg", "Round trip / 2: warp 0 lane 0 t0, arrive A, "
         "try_wait B, t1; warp 1 waits A, lane 0 arrives B. No delay. Reported value = (t1-t0)/2 = mean one-way "
         "arrive->resume incl. the loop overhead.", 2},
        {4, 0, WAIT_TRY, "mbar_pingpong_rtt_half_other_wg", "As mbar_pingpong_rtt_half_same_wg with the "
         "ponger in warp 4 (other warpgroup). (t1-t0)/2.", 2},
    };
    for (auto& f : cfgs) {
      out.zero();
      if (f.wk == WAIT_TEST)
        k_mbar_pingpong<WAIT_TEST><<<1, 256>>>(out.p, n, 0, f.wait_warp, f.mode, delay, c.d_err);
      else
        k_mbar_pingpong<WAIT_TRY><<<1, 256>>>(out.p, n, 0, f.wait_warp, f.mode, delay, c.d_err);
      CK_LAUNCH();
      record(c, f.name, G, "cycles", to_samples(out.get(), kWarm, 1.0 / f.div), f.desc,
             JObj().num("signal_warp", 0).num("wait_warp", f.wait_warp).num("cta_threads", 256).num("delay_cycles",
                                                                                                  f.mode ? delay : 0));
    }
  }

  // 4. cluster of 2: remote arrive RTT
  {
    const int dyn = 160 * 1024;  // > half of the SM's smem: the two CTAs must sit on different SMs
    CK(cudaFuncSetAttribute(k_mbar_cluster_pingpong, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
    DevBuf<unsigned> sms(2);
    for (int sem = 1; sem >= 0; --sem) {
      for (int remote = 1; remote >= 0; --remote) {
        out.zero();
        sms.zero();
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(2, 1, 1);
        cfg.blockDim = dim3(64, 1, 1);
        cfg.dynamicSmemBytes = dyn;
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = 2;
        at[0].val.clusterDim.y = 1;
        at[0].val.clusterDim.z = 1;
        cfg.attrs = at;
        cfg.numAttrs = 1;
        CK(cudaLaunchKernelEx(&cfg, k_mbar_cluster_pingpong, out.p, n, remote, sem, sms.p, c.d_err));
        CK_LAUNCH();
        auto s = sms.get();
        const std::string forms =
            sem == 0 ? "mbarrier.arrive.release.cluster.shared::cluster + try_wait.parity.acquire.cluster"
                     : "mbarrier.arrive.shared::cluster (default sem: release.cta, as CUTLASS ClusterBarrier) + "
                       "try_wait.parity (default acquire.cta)";
        std::string name = std::string(remote ? "mbar_cluster_remote_arrive_rtt_half" : "mbar_cluster_local_arrive_rtt_half") +
                           (sem == 0 ? "_release_cluster" : "");
        std::string desc =
            remote ? "Cluster of 2 CTAs on different SMs (160 KB dyn smem each). CTA0 lane 0: t0, mapa + " + forms +
                         " on CTA1's barrier A, wait on own B, t1; CTA1 lane 0 waits its A and arrives remotely on "
                         "CTA0's B. Value = (t1-t0)/2 = mean one-way remote arrive -> waiter resumes (incl. loop "
                         "overhead)."
                   : "Comparator for the remote case: same kernel and instructions (mapa + " + forms +
                         ") but the ponger is warp 1 of the same CTA. (t1-t0)/2.";
        record(c, name, G, "cycles", to_samples(out.get(), kWarm, 0.5), desc,
               JObj().num("cluster_size", 2).num("sm_cta0", s[0]).num("sm_cta1", s[1]).boolean("different_sms",
                                                                                                 s[0] != s[1]).str("forms", forms));
      }
    }
  }
}

}  // namespace mb
