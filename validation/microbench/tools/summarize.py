#!/usr/bin/env python3
"""Prints the key results of a smpipe microbench JSON as a Markdown table (used for README.md).

usage: python3 tools/summarize.py validation/results/h100/microbench.json [--all]
"""
import json
import sys

KEY = [
    # (section, measurement name, short label)
    ("mbarrier", "mbar_wake_other_warp_same_wg", "arrive -> waiter resumes, other warp, same warpgroup (try_wait loop)"),
    ("mbarrier", "mbar_wake_other_wg", "arrive -> waiter resumes, warp of another warpgroup"),
    ("mbarrier", "mbar_wake_other_warp_same_wg_test_wait_spin", "arrive -> waiter resumes, waiter spins on test_wait"),
    ("mbarrier", "mbar_wake_complete_tx_other_warp", "complete_tx (after arrive.expect_tx) -> waiter resumes"),
    ("mbarrier", "mbar_pingpong_rtt_half_same_wg", "ping-pong round trip / 2, same warpgroup"),
    ("mbarrier", "mbar_pingpong_rtt_half_other_wg", "ping-pong round trip / 2, other warpgroup"),
    ("mbarrier", "mbar_same_warp_arrive_wait", "same warp: lane 0 arrive (count 1) + warp try_wait"),
    ("mbarrier", "mbar_same_warp_arrive32_wait", "same warp: 32 lanes arrive (count 32) + try_wait"),
    ("mbarrier", "mbar_same_warp_expect_tx_complete_tx_wait", "same warp: arrive.expect_tx + complete_tx + try_wait"),
    ("mbarrier", "mbar_try_wait_completed_dependent", "try_wait on completed phase, one poll (dependent chain)"),
    ("mbarrier", "mbar_test_wait_completed_dependent", "test_wait on completed phase, one poll (dependent chain)"),
    ("mbarrier", "mbar_test_wait_completed_independent", "test_wait issue interval (independent polls)"),
    ("mbarrier", "mbar_test_wait_pending_dependent", "test_wait on pending phase (returns false), one poll"),
    ("mbarrier", "mbar_try_wait_pending_timeout", "try_wait on a phase that never completes: time until it returns false"),
    ("mbarrier", "mbar_cluster_remote_arrive_rtt_half", "cluster of 2: remote arrive -> peer resumes (RTT/2, default sem, CUTLASS form)"),
    ("mbarrier", "mbar_cluster_local_arrive_rtt_half", "  same instructions, both warps in one CTA (RTT/2)"),
    ("mbarrier", "mbar_cluster_remote_arrive_rtt_half_release_cluster", "cluster of 2: arrive.release.cluster / try_wait.acquire.cluster (RTT/2)"),
    ("mbarrier", "mbar_cluster_local_arrive_rtt_half_release_cluster", "  same, both warps in one CTA (RTT/2)"),
    ("tma", "tma_load_issue_cost", "TMA load issue cost (arrive.expect_tx + cp.async.bulk.tensor)"),
] + [("tma", f"tma_load_latency_{w}_{k}KB", f"TMA load latency, {k} KB box, {'L2 hit' if w == 'l2' else 'HBM'}")
     for w in ("l2", "hbm") for k in (1, 2, 4, 8, 16, 32)] + [
    ("tma", "tma_burst_1KBx48_issue_interval", "TMA burst: issue interval (one thread, no waits)"),
    ("tma", "tma_burst_1KBx48_complete_interval", "TMA burst: completion interval, 1 KB boxes"),
    ("tma", "tma_burst_8KBx24_complete_interval", "TMA burst: completion interval, 8 KB boxes"),
    ("tma", "tma_burst_32KBx6_complete_interval", "TMA burst: completion interval, 32 KB boxes"),
    ("tma", "tma_ring_trace_stage_wait", "TMA ring (one producer thread): try_wait on the reused stage"),
    ("tma", "tma_ring_trace_issue", "TMA ring: arrive.expect_tx + TMA issue"),
    ("tma", "tma_load_bw_ring_l2_one_sm_box32KB_bytes_per_cycle", "TMA load BW one SM, 32 KB boxes x 6 stages (L2)"),
    ("tma", "tma_load_bw_ring_hbm_one_sm_box32KB_bytes_per_cycle", "TMA load BW one SM, 32 KB boxes x 6 stages (HBM)"),
    ("tma", "tma_load_bw_pipe_l2_one_sm_box8KB_bytes_per_cycle", "TMA load BW one SM, producer/consumer pipe, 8 KB x 24 (L2)"),
    ("tma", "tma_load_bw_multi_producer_l2_box8KB_4warps", "TMA load BW one SM, 4 producer warps x 4 stages x 8 KB (L2)"),
    ("tma", "tma_load_bw_ring_hbm_all_sms_box32KB", "TMA load BW all 132 SMs, 32 KB boxes (HBM)"),
    ("tma", "tma_load_bw_pipe_hbm_all_sms_box8KB", "TMA load BW all 132 SMs, pipe, 8 KB boxes (HBM)"),
    ("tma", "tma_load_bw_ring_l2_all_sms_box32KB", "TMA load BW all 132 SMs, 32 KB boxes (16 MiB L2-resident)"),
] + [("tma", f"tma_store_latency_wait_group_read0_{k}KB", f"TMA store + commit + wait_group.read 0, {k} KB") for k in (1, 8, 32)] + [
    ("tma", f"tma_store_latency_wait_group0_{k}KB", f"TMA store + commit + wait_group 0, {k} KB") for k in (1, 8, 32)] + [
    ("wgmma", f"wgmma_latency_m64n{n}k16_bf16", f"wgmma m64n{n}k16 bf16 latency (fence, mma, commit, wait 0)") for n in (8, 16, 32, 64, 128, 256)] + [
    ("wgmma", "wgmma_latency_m64n256k32_e4m3", "wgmma m64n256k32 e4m3 latency"),
] + [("wgmma", f"wgmma_throughput_m64n{n}k16_bf16_{w}wg", f"wgmma m64n{n}k16 bf16, {w} warpgroup(s), SM cycles per wgmma (ideal {n // 2})")
     for n in (64, 128, 256) for w in (1, 2)] + [
    ("wgmma", f"wgmma_throughput_m64n256k32_e4m3_{w}wg", f"wgmma m64n256k32 e4m3, {w} warpgroup(s), cycles per wgmma (ideal 128)") for w in (1, 2)] + [
    ("mma_sync", "mma_sync_latency_m16n8k16_f16", "mma.sync m16n8k16 f16->f32, dependent chain, cycles per mma"),
    ("mma_sync", "mma_sync_throughput_m16n8k16_f16_per_warp", "mma.sync throughput, one warp, cycles per mma"),
    ("mma_sync", "mma_sync_throughput_m16n8k16_f16_4warps", "mma.sync throughput, 4 warps, SM cycles per mma"),
] + [("named_barrier", f"bar_sync_latency_{w}warps", f"bar.sync, {w} warps, cycles per barrier") for w in (2, 4, 8, 12, 16, 32)] + [
    ("named_barrier", "bar_arrive_to_sync_pingpong_half", "bar.arrive -> bar.sync released (ping-pong / 2)"),
] + [("cluster_barrier", f"cluster_barrier_latency_cs{c}", f"barrier.cluster arrive.release + wait.acquire, cluster {c}") for c in (1, 2, 4)] + [
    ("cluster_barrier", f"cluster_barrier_relaxed_latency_cs{c}", f"barrier.cluster arrive.relaxed + wait, cluster {c}") for c in (1, 2, 4)] + [
    ("cp_async", "cp_async_cg16_latency_l2", "cp.async.cg 16 B -> wait_group 0, L2 hit"),
    ("cp_async", "cp_async_cg16_latency_hbm", "cp.async.cg 16 B -> wait_group 0, HBM"),
    ("cp_async", "cp_async_cg16_throughput_one_sm_l2", "cp.async 16 B throughput, one SM, 256 threads (L2)"),
    ("cp_async", "cp_async_cg16_throughput_one_sm_hbm", "cp.async 16 B throughput, one SM, 256 threads (HBM)"),
    ("memory", "load_latency_l1_hit", "load latency, L1 hit (pointer chase)"),
    ("memory", "load_latency_l2_hit", "load latency, L2 hit (pointer chase, ld.cg)"),
    ("memory", "load_latency_hbm_16MB", "load latency, HBM (16 MiB region)"),
    ("memory", "load_latency_hbm_1GB", "load latency, HBM (1 GiB region, TLB misses likely)"),
    ("memory", "hbm_read_bw_all_sms", "HBM read bandwidth, all SMs"),
    ("memory", "l2_read_bw_all_sms", "L2 read bandwidth, all SMs (16 MiB, ld.cg)"),
    ("launch", "launch_empty_back_to_back", "empty kernel, back-to-back launches, per launch"),
    ("launch", "launch_empty_event_time", "empty kernel, one launch between two events"),
    ("launch", "launch_empty_host_roundtrip", "empty kernel, host launch + synchronize"),
    ("launch", "cta_dispatch_empty_per_sm", "empty CTAs (128 thr), time per CTA per SM"),
    ("launch", "cta_wave_gap_same_sm", "2nd-wave gap: CTA end -> next CTA start on the same SM"),
]


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.2f}".rstrip("0").rstrip(".") if abs(v) < 10 else f"{v:.1f}"


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 1
    d = json.load(open(sys.argv[1]))
    by = {m["name"]: m for m in d["measurements"]}
    clk = d["clocks"]["sm_clock_mhz_measured_one_cta"]
    print(f"GPU: {d['gpu']['name']}, {d['gpu']['sm_count']} SMs, driver {d['gpu']['driver_version']}, "
          f"SM clock measured {clk:.0f} MHz (all SMs busy: {d['clocks']['sm_clock_mhz_measured_all_sms_busy']:.0f} MHz), "
          f"date {d['date_utc']}\n")
    print("| group | what | median | p10 | p90 | unit |")
    print("|---|---|---:|---:|---:|---|")
    rows = KEY if "--all" not in sys.argv else [(m["group"], m["name"], m["name"]) for m in d["measurements"]]
    for g, name, label in rows:
        m = by.get(name)
        if m is None:
            print(f"| {g} | {label} | (missing) | | | |")
            continue
        print(f"| {g} | {label} | {fmt(m['median'])} | {fmt(m['p10'])} | {fmt(m['p90'])} | {m['unit']} |")
    if d.get("failures"):
        print("\nFailures:")
        for f in d["failures"]:
            print(f"- {f['name']}: {f['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
