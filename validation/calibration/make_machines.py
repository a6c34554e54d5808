#!/usr/bin/env python3
"""Writes models/machines/{h100-sxm,h200,b200}.json: published numbers with their citations, and the
numbers measured by validation/microbench on the project's H100 (validation/results/h100/microbench.json),
each with its source tag. Run from the repository root after a new calibration run:

    python3 validation/calibration/make_machines.py [--out DIR]

(--out DIR: write the three files into DIR instead, e.g. to compare them with the committed ones: CI's
machine_files_are_current does.) A measured value names its measurement as `measured: FILE#NAME (GPU, date)`; tests/models/test_machine.cpp
checks that the value equals the measurement's median (rounded) in the committed result file.
"""
import argparse
import json
import statistics
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ap = argparse.ArgumentParser(description="Writes the built-in machine files from the committed measurements.")
_ap.add_argument("--out", default=os.path.join(ROOT, "models", "machines"), help="folder to write them into")
OUT = os.path.abspath(_ap.parse_args().out)
os.makedirs(OUT, exist_ok=True)
RESULTS = "validation/results/h100/microbench.json"
SPEC = "published: shared/spec/machines.md"
GUIDE = "published: CUDA C++ Programming Guide 13, compute capability 9.0 table"

HIERARCHY = "validation/results/h100/hierarchy.json"


def launch_overhead():
    """A launch's fixed cost as CUDA events around back-to-back launches see it, beyond the CTAs' span:
    hier_launch_smem200KB_b2b_overhead_us of the hierarchy group (one CTA of 384 threads and 200 KB per SM)."""
    with open(os.path.join(ROOT, HIERARCHY)) as f:
        run = json.load(f)
    v = {m["name"]: m["median"] for m in run["measurements"]}["hier_launch_smem200KB_b2b_overhead_us"]
    return (round(v * 1000), f"derived: {HIERARCHY}#hier_launch_smem200KB_b2b_overhead_us in ns (event time of back-to-back "
                             f"launches minus the CTAs' span; {run['gpu']['name']}, {run['date_utc'][:10]})")


def load_clocks():
    """The SM clock under sustained load (hierarchy group, `clock under load`: 132 CTAs of two warpgroups issuing
    m64n256k16 wgmmas back to back for ~330 ms; the clock is the SMs' clock64 over %globaltimer, median over the
    CTAs): with constant operands (zero operands give the same within 0.3 %) and with random ones (the board then
    reaches its 700 W power cap: 725-768 W instantaneous in the same run)."""
    with open(os.path.join(ROOT, HIERARCHY)) as f:
        run = json.load(f)
    med = {m["name"]: m["median"] for m in run["measurements"] if m.get("median") is not None}
    who = f"{run['gpu']['name']}, {run['date_utc'][:10]}"
    return {
        "load_clock_mhz": (round(med["hier_clock_wgmma_constant_mhz"]),
                           f"measured: {HIERARCHY}#hier_clock_wgmma_constant_mhz (wgmma on every SM for ~330 ms, constant operands; "
                           f"zero operands: {med['hier_clock_wgmma_zero_mhz']:.0f}; {who})"),
        "load_clock_random_mhz": (round(med["hier_clock_wgmma_random_mhz"]),
                                  f"measured: {HIERARCHY}#hier_clock_wgmma_random_mhz (wgmma on every SM for ~330 ms, random operands, "
                                  f"at the 700 W power cap; {who})"),
    }


WGMMA_ISSUE = "validation/results/h100/wgmma_issue.json"
ISSUE = "validation/results/h100/issue.json"


def wgmma_beside_alu():
    """What ALU work beside a warpgroup's wgmmas costs them (the `issue` group: 4 warps run bursts of 512 FFMA, 8
    chains, back to back beside one warpgroup's m64nNk16 wgmmas, N = 64, 128, 256): the wgmma rate r against alone and
    the bursts' duty d give the wgmmas' rate inside the bursts, 1 - (1 - r) / d, so a wgmma there takes
    alone / (that rate) - alone cycles more: 37, 46 and 44 cycles for N = 64, 128, 256, about the same whatever its
    FLOP; the mean of the three."""
    with open(os.path.join(ROOT, ISSUE)) as f:
        run = json.load(f)
    m = {x["name"]: x for x in run["measurements"]}
    extra = []
    for n in (64, 128, 256):
        alone = m[f"issue_duty_n{n}_alone_cycles_per_wgmma"]["median"]
        beside = m[f"issue_duty_n{n}_ffma_w4_b512_s0_cycles_per_wgmma"]
        duty = beside["params"]["alu_duty_median"]
        inside = 1 - (1 - alone / beside["median"]) / duty
        extra.append(alone / inside - alone)
    who = f'{ISSUE}, {run["gpu"]["name"]}, {run["date_utc"][:10]}'
    return {"wgmma_beside_alu_cycles": (round(sum(extra) / len(extra)),
                                        "derived: issue_duty_n{64,128,256}_ffma_w4_b512_s0 against issue_duty_n*_alone: per wgmma, "
                                        "alone / (1 - (1 - rate) / duty) - alone, the cycles a wgmma adds inside 512-FFMA bursts "
                                        f"({', '.join(f'{e:.1f}' for e in extra)} for N = 64, 128, 256; the mean) ({who})")}


def wgmma_issue():
    """wgmma issue back-pressure from the wgmma_issue_* measurements (one SM; the H200's SM is the H100's):
    the issue cost of one wgmma when nothing stalls it (CUTLASS-style k-loop of one warpgroup, 4 wgmmas per
    k-block, no clock reads between them), and how many wgmmas can wait behind the one the pipe works on.
    The timeline of one warpgroup issuing 16 m64n256k16 back to back stalls at wgmma `free`; wgmma i then
    issues when wgmma i - depth has started, so free = depth + 2 (the first two start before the queue fills:
    one at once, the next after its occupancy)."""
    with open(os.path.join(ROOT, WGMMA_ISSUE)) as f:
        run = json.load(f)
    med = {m["name"]: m["median"] for m in run["measurements"] if m.get("median") is not None}
    who = f'{WGMMA_ISSUE}, {run["gpu"]["name"]}, {run["date_utc"][:10]}'
    return {
        "wgmma_issue_cycles": (round(med["wgmma_issue_kblock_issue_n128_1wg"] / 4),
                               f"derived: wgmma_issue_kblock_issue_n128_1wg / 4 (issue of 4 m64n128k16 and the commit, nothing stalled; "
                               f"the timelines give 18-20 per wgmma for N <= 128 with a clock read each) ({who})"),
        "wgmma_issue_cycles_n256": (round(med["wgmma_issue_kblock_issue_n256_1wg"] / 4),
                                    f"derived: wgmma_issue_kblock_issue_n256_1wg / 4 (wgmmas with N > 128; the timeline gives 28) ({who})"),
        "wgmma_queue_depth": (round(med["wgmma_issue_free_n256_1wg"]) - 2,
                              f"derived: wgmma_issue_free_n256_1wg - 2 (wgmma i issues once wgmma i - depth has started; "
                              f"this reproduces the 1-warpgroup timelines at N = 64, 128, 256 within 3 cycles per wgmma) ({who})"),
    }


COMBINE = "validation/results/h100/l2_combine_ncu.json"
COALESCING = "validation/results/h100/l2_coalescing_ncu.json"
SMPAIRS = "validation/results/h100/l2_smpairs_ncu.json"  # its session reran the 'combine' group too


def cta_pair_combining():
    """The share of a second reader's L2 requests that combine with the first's when the two CTAs are d apart in
    launch order (blockIdx), from the 'combine' group's l2_combine_dist<d> (CTAs k and k + d) and l2_combine_far
    (k and k + 66) rows of both sessions: {d: [(CTAs launched, share)]} (far as 66)."""
    by_distance = {}
    for path in (COMBINE, SMPAIRS):
        with open(os.path.join(ROOT, path)) as f:
            rows = {r["measurement"]: r for r in json.load(f)["rows"]}
        alone = rows["l2_combine_none_bw"]["sm_requests_over_delivered"]
        for name, r in rows.items():
            # Pairs that start together (far pairs up to 512 ns apart combine as at once; later they combine less).
            if not (name.startswith("l2_combine_dist") or name.startswith("l2_combine_far")) or r["params"].get("delay_ns", 0) > 512:
                continue
            n = r["params"]["ctas"]
            d = int(r["params"]["distance_ctas"]) if "distance_ctas" in r["params"] else n // 2
            # Each combined pair makes one request instead of two.
            share = (1 - r["sm_requests_over_delivered"] / alone) * n / len(pair_firsts(n, d))
            by_distance.setdefault(d, []).append((n, share))
    return by_distance


def pair_firsts(n, d):
    """The first CTAs k of the 'combine' group's pairs (k, k + d) among n CTAs: the first half of each run of 2d CTAs
    that fits, as the kernel pairs them."""
    return [k for k in range(n) if (k // (2 * d) + 1) * 2 * d <= n and k % (2 * d) < d]


def combine_block_fit():
    """The aligned block of consecutive CTAs (in launch order) within which CTA pairs combine at the near share, and the
    near and far shares: for every block size B of 3-66 CTAs (at 2 every measured pair lies across blocks), each pair
    distance's measured share against the fraction of its pairs that lie in one block (a line: far + (near - far) *
    fraction, least squares over all the pairs of both sessions); the B with the smallest squared error. Returns (B,
    near, far, error, runner-up B and error)."""
    rows = [(pair_firsts(n, d), d, share) for d, v in cta_pair_combining().items() for n, share in v]
    ys = [share for _, _, share in rows]
    fits = []
    for block in range(3, 67):
        xs = [sum(1 for k in firsts if k // block == (k + d) // block) / len(firsts) for firsts, d, _ in rows]
        slope, far = statistics.linear_regression(xs, ys)
        fits.append((sum((y - far - slope * x) ** 2 for x, y in zip(xs, ys)), block, far + slope, far))
    fits.sort()
    (err, block, near, far), (err2, block2, _, _) = fits[0], fits[1]
    return block, near, far, err, block2, err2


def l2_combining():
    """The L2's request combining and its work per missed byte, from the Nsight Compute counters of the
    'combine' and sharing microbenchmarks (H100)."""
    with open(os.path.join(ROOT, COMBINE)) as f:
        comb = {r["measurement"]: r for r in json.load(f)["rows"]}
    with open(os.path.join(ROOT, COALESCING)) as f:
        coal = {r["measurement"]: r for r in json.load(f)["rows"]}
    alone = comb["l2_combine_none_bw"]
    tpc = comb["l2_combine_adjacent_delay0ns_bw"]
    hit = coal["tma_load_bw_pipe_l2_all_sms_box32KB_shared16"]  # L2-resident, no two sharers close: no combining
    hit_lookups = hit["ncu"]["lts__t_sectors_op_read.sum"] * 32 / hit["delivered_bytes"]
    sms = round(alone["sm_requests_over_delivered"] / tpc["sm_requests_over_delivered"])
    lag = {int(r["params"]["delay_ns"]): r["sm_requests_over_delivered"] for r in comb.values() if r["params"].get("pattern") == "adjacent"}
    # The largest start delay at which the second SM still combines 95 % of its requests.
    combined = {d: (alone["sm_requests_over_delivered"] - q) / (alone["sm_requests_over_delivered"] - tpc["sm_requests_over_delivered"])
                for d, q in lag.items()}
    window_ns = max(d for d, f in combined.items() if f >= 0.95)
    # Combining between CTAs: pairs in one aligned block of consecutive CTAs combine at the near share, others at the
    # far share (combine_block_fit).
    shares = {d: sum(s for _, s in v) / len(v) for d, v in cta_pair_combining().items()}
    block, near, far, err, block2, err2 = combine_block_fit()
    table = ", ".join(f"{d}: {shares[d]:.2f}" for d in sorted(shares))
    sessions = f"Nsight Compute, {COMBINE} and {SMPAIRS}, two sessions; NVIDIA H100 80GB HBM3, 2026-11-24"
    return {
        "l2_combine_block_ctas": (block, f"derived: of aligned blocks of 3-66 consecutive CTAs in launch order, the one for which "
                                         f"'the pairs in one block combine a near share, others a far share' fits the measured pairs "
                                         f"best (least squares over every pair row: squared error {err:.3f}, the next best, {block2} "
                                         f"CTAs, {err2:.3f}); share of the second reader's requests combined by distance (CTAs k and "
                                         f"k + d for k in the first half of each run of 2d), {table} (l2_combine_dist*, "
                                         f"l2_combine_far; {sessions})"),
        "l2_combine_near_share": (round(near, 2), f"derived: the fit's share for pairs in one block of l2_combine_block_ctas "
                                                  f"(l2_combine_dist*, l2_combine_far; {sessions})"),
        "l2_combine_far_share": (round(far, 2), f"derived: the fit's share for pairs in different blocks (l2_combine_dist*, "
                                                f"l2_combine_far; {sessions}; pairs starting 128-512 ns apart count as together)"),
        "l2_combine_window_cycles": (round(window_ns * 1980 / 1000),
                                     f"derived: {window_ns} ns at the 1980 MHz clock, the longest start delay between the two SMs of a TPC "
                                     f"at which 95 % of the second one's requests still combine (l2_combine_adjacent_delay{window_ns}ns: "
                                     f"{lag[window_ns]} requests per byte against {tpc['sm_requests_over_delivered']} at 0 ns and "
                                     f"{alone['sm_requests_over_delivered']} alone; {100 * combined[max(lag)]:.0f} % still at {max(lag)} ns) "
                                     f"(Nsight Compute, {COMBINE}; NVIDIA H100 80GB HBM3, 2026-11-24)"),
        "l2_combine_sms": (sms, f"derived: L2 requests per delivered byte of one SM reading alone over those of two SMs of one TPC "
                                f"(CTAs 2j, 2j+1) reading the same boxes: {alone['sm_requests_over_delivered']} / "
                                f"{tpc['sm_requests_over_delivered']} (Nsight Compute, {COMBINE}; SMs farther apart combine "
                                f"little: l2_combine_dist*, l2_combine_far*; NVIDIA H100 80GB HBM3, 2026-11-24)"),
        "l2_miss_lookups": (round(alone["l2_lookups_over_delivered"] / hit_lookups, 2),
                            f"derived: L2 lookups per delivered byte read from HBM (l2_combine_none: {alone['l2_lookups_over_delivered']}, "
                            f"{COMBINE}) over those of a byte that hits (tma_load_bw_pipe_l2_all_sms_box32KB_shared16: "
                            f"{hit_lookups:.3f}, {COALESCING}) (Nsight Compute, NVIDIA H100 80GB HBM3, 2026-11-24)"),
    }


def latency_spread():
    """How much a box's time through the L2 and through HBM varies under load: the p10-p90 spread of the loaded
    latency of 32 KB boxes, 4 in flight per SM, on every SM (hier_loaded_latency_{l2,hbm}_box32KB_d4), as the share
    x of a uniform draw within +-x of the median with the same spread (a uniform's p10 and p90 lie at -+0.8x). The
    model's own queues give every box of such a run about the same time, so the spread is all the GPU's. HBM's is
    applied; the L2's is not (0): the machine files say why and what it would be."""
    with open(os.path.join(ROOT, HIERARCHY)) as f:
        run = json.load(f)
    m = {r["name"]: r for r in run["measurements"]}
    out = {}
    for key, src in (("l2_latency_spread", "l2"), ("hbm_latency_spread", "hbm")):
        r = m[f"hier_loaded_latency_{src}_box32KB_d4"]
        x = (r["p90"] - r["p10"]) / r["median"] / 1.6
        how = (f"the p10-p90 spread of the loaded latency of 32 KB boxes, 4 in flight on every SM, over its median / 1.6 (the "
               f"p10-p90 width of a uniform draw within +-x is 1.6 x): ({r['p90']} - {r['p10']}) / {r['median']} cycles "
               f"({HIERARCHY}#hier_loaded_latency_{src}_box32KB_d4; {run['gpu']['name']}, {run['date_utc'][:10]})")
        if src == "hbm":
            # The CTAs of a GEMM whose unshared operand streams from HBM drift apart by it, and combine fewer of their
            # reads of the shared one, as the GPU's do (validation/results/h200/k2_combine_raster_ncu.csv).
            out[key] = (round(x, 2), f"derived: {how}. Applied alone (the L2's spread off) it lowered the accuracy report's "
                                     f"mean error on K2 and on CUTLASS's GEMMs and ranked K2's configurations better, CUTLASS's "
                                     f"slightly worse (docs/simulator.md)")
        else:
            out[key] = (0, f"estimate: off (0); measured, it would be {x:.2f}: {how}. With it (drawn per transfer, evaluated on "
                           f"the accuracy data with HBM's) the CUTLASS GEMMs' mean error fell but their ranking got worse "
                           f"(docs/simulator.md), so it is not applied by default")
    return out


L1 = "validation/results/h100/l1.json"
GPC = "validation/results/h200/gpc.json"


def gpc_layout():
    """The GPCs a cluster is placed in, from the H200's 'gpc' microbenchmark: how many clusters of C one-CTA-per-SM
    CTAs fit at once (cudaOccupancyMaxActiveClusters, C = 1 .. 16). A cluster runs on the SMs of one GPC, so with GPCs
    of s_i SMs, sum_i floor(s_i / C) clusters fit; the one layout of GPCs of whole TPCs (2 SMs) of at most 18 SMs (GH100:
    9 TPCs per GPC) that gives every measured count is the machine's (largest first)."""
    with open(os.path.join(ROOT, GPC)) as f:
        run = json.load(f)
    counts = {int(r["params"]["cluster_size"]): int(r["median"]) for r in run["measurements"]
              if r["name"].startswith("gpc_max_active_clusters_c")}
    sm_count = run["gpu"]["sm_count"]
    sols = []

    def search(size, left, cur):
        if any(sum(x // c for x in cur) > n for c, n in counts.items()):
            return
        if left == 0:
            if all(sum(x // c for x in cur) == n for c, n in counts.items()):
                sols.append(cur)
            return
        if size < 2:
            return
        for k in range(left // size, -1, -1):
            search(size - 2, left - k * size, cur + [size] * k)

    search(18, sm_count, [])
    assert len(sols) == 1, f"{len(sols)} GPC layouts fit the measured cluster counts {counts}"
    shown = ", ".join(f"C = {c}: {n}" for c, n in sorted(counts.items()))
    return sols[0], (f"derived: the one layout of GPCs of whole TPCs, at most 18 SMs each, that fits how many clusters of C "
                     f"one-CTA-per-SM CTAs fit at once ({shown}; cudaOccupancyMaxActiveClusters, gpc_max_active_clusters_c*, "
                     f"{GPC}; {run['gpu']['name']}, {run['date_utc'][:10]}): a cluster runs on the SMs of one GPC")


MULTICAST = "validation/results/h200/multicast2.json"


def multicast_issue():
    """What a multicast tma.load adds to its issuing thread per destination CTA beyond the first, from the H200's
    'multicast' rings with a CUTLASS cluster GEMM's split roles (mcast_split_*: a producer thread that only issues, a
    consumer thread of another warp that waits and arrives on the cluster's empty barriers). Per stage the producer
    spends issue_fraction x stage_bytes / bytes_per_cycle_per_sm_clock64 cycles from before its arrive.expect_tx to
    after its last TMA instruction. The unicast rows issue C boxes per stage (C = 2, 4): their difference gives one
    unicast box's issue u and the rest e (the expect_tx); a multicast stage is one box to C CTAs, e + u + (C - 1) x:
    x from each multicast row (C = 2, 4; 16 and 32 KB boxes under load, 32 KB alone), the mean of the six."""
    with open(os.path.join(ROOT, MULTICAST)) as f:
        run = json.load(f)
    m = {x["name"]: x for x in run["measurements"]}

    def issue(name):
        p = m[name]["params"]
        return p["issue_fraction"] * p["stage_bytes"] / p["bytes_per_cycle_per_sm_clock64"]

    xs = []
    for tag in ("loaded_bw_l2_box16KB_d4", "loaded_bw_l2_box32KB_d4", "alone_bw_l2_box32KB_d1"):
        iu = {c: issue(f"mcast_split_{tag}_c{c}_unicast") for c in (2, 4)}
        u = (iu[4] - iu[2]) / 2
        e = iu[2] - 2 * u
        for c in (2, 4):
            xs.append((issue(f"mcast_split_{tag}_c{c}_multicast") - e - u) / (c - 1))
    return {"tma_multicast_issue_cycles": (
        round(sum(xs) / len(xs)),
        "derived: mcast_split_{loaded_bw_l2_box16KB_d4,loaded_bw_l2_box32KB_d4,alone_bw_l2_box32KB_d1}_c{2,4}_{unicast,multicast}: "
        "the producer's issue cycles per stage of a multicast box to C CTAs less those of one unicast box and the expect_tx "
        "(from the unicast rows of 2 and 4 boxes), per destination beyond the first "
        f"({', '.join(f'{x:.0f}' for x in xs)}; the mean) ({MULTICAST}; {run['gpu']['name']}, {run['date_utc'][:10]})")}


def multicast_l2():
    """What a byte of a multicast load takes of the L2, in bytes of a unicast read, from the H200's 'multicast' rings with
    split roles on every SM (mcast_split_loaded_bw_l2_box{16,32}KB_d4_c2_{unicast,multicast}: clusters of 2, the warm 8
    MiB source, 4 stages in flight): the rate at which the L2 reads for unicast stages over that for multicast ones
    (params.l2_read_gbs_median: a multicast box read once), per box size; the mean of the two."""
    with open(os.path.join(ROOT, MULTICAST)) as f:
        run = json.load(f)
    m = {x["name"]: x["params"]["l2_read_gbs_median"] for x in run["measurements"] if "params" in x and "l2_read_gbs_median" in x["params"]}
    ratios = [m[f"mcast_split_loaded_bw_l2_box{kb}KB_d4_c2_unicast"] / m[f"mcast_split_loaded_bw_l2_box{kb}KB_d4_c2_multicast"]
              for kb in (16, 32)]
    gemm_file = "validation/results/h200/multicast_gemm.json"
    with open(os.path.join(ROOT, gemm_file)) as f:
        g = {x["name"]: x["median"] for x in json.load(f)["measurements"] if x.get("median") is not None}
    rate = {(walk, mode): g[f"mcast_split_gemm_bw_l2_a16KB_b16KB_d4_t0_c2_{walk}_a_{mode}"]
            for walk in ("own", "shared") for mode in ("unicast_coupled", "multicast")}
    gain = {mode: rate[("shared", mode)] / rate[("own", mode)] - 1 for mode in ("unicast_coupled", "multicast")}
    return {"l2_multicast_combines": (
        0,
        "derived: mcast_split_gemm_bw_l2_a16KB_b16KB_d4_t0_c2_{own,shared}_a_{unicast_coupled,multicast} (every SM in "
        "clusters of 2, a GEMM stage of an A box the cluster needs and a B box of each CTA's own, the A walk each "
        "cluster's own or the whole grid's): with every CTA reading the same A boxes at once the unicast stages land "
        f"{100 * gain['unicast_coupled']:+.0f} %, the multicast ones {100 * gain['multicast']:+.0f} % ({gemm_file}): a multicast "
        "read gains nothing from other clusters reading the same data"),
        "l2_multicast_read_cost": (
        round(sum(ratios) / len(ratios), 2),
        "derived: mcast_split_loaded_bw_l2_box{16,32}KB_d4_c2_{unicast,multicast} (every SM in clusters of 2, a producer "
        "and a consumer warp, 4 stages in flight, the warm 8 MiB source): the L2's read rate for unicast stages over that "
        f"for multicast ones (a multicast box read once), 16 KB boxes {ratios[0]:.3f}, 32 KB {ratios[1]:.3f}; the mean "
        f"({MULTICAST}; {run['gpu']['name']}, {run['date_utc'][:10]})")}


def smem_stores(smem):
    """How a warp's st.shared (stmatrix) go, from the H200's epi_issue_* (validation/microbench, group 'epilogue': W = 1,
    4, 8 warps of one SM each issue N = 0..64 stmatrix.x4 of 512 bytes back to back, then fence.proxy.async; clock64
    before, after the stores, after the fence). fence_proxy_async_cycles: the fence alone (N = 0, one warp).
    smem_warp_store_bytes_per_cycle: one warp's stores, from the slope of its N = 1..32 rows (there the clock read waits
    for the last store to read its registers: the store's dispatch; epilogue_issue_sass.txt). smem_store_queue_ops: at
    N = 64 the clock read waits for nothing, so the stores issued run ahead of those written by the queue: (fence end -
    issue end - the fence alone with W warps) / the time one instruction of a sub-partition takes (one warp: 512 B at its
    own rate; 4 and 8 warps: a quarter of the SM's shared memory, `smem` bytes per cycle), the mean of W = 1, 4, 8."""
    path = "validation/results/h200/epilogue_issue.json"
    with open(os.path.join(ROOT, path)) as f:
        run = json.load(f)
    med = {m["name"]: m["median"] for m in run["measurements"] if m.get("median") is not None}
    who = f'{run["gpu"]["name"]}, {run["date_utc"][:10]}'
    fence = med["epi_issue_fence_w1_n0"] - med["epi_issue_w1_n0"]
    per_op = (med["epi_issue_w1_n32"] - med["epi_issue_w1_n1"]) / 31
    ahead = []
    for w in (1, 4, 8):
        op = per_op if w == 1 else 4 * 512 / smem
        alone = med[f"epi_issue_fence_w{w}_n0"] - med[f"epi_issue_w{w}_n0"]
        ahead.append((med[f"epi_issue_fence_w{w}_n64"] - med[f"epi_issue_w{w}_n64"] - alone) / op)
    return {
        "fence_proxy_async_cycles": (round(fence), f"derived: {path}#epi_issue_fence_w1_n0 less epi_issue_w1_n0 (the clock read) ({who})"),
        "smem_warp_store_bytes_per_cycle": (
            round(512 / per_op, 3),
            f"derived: 512 B per stmatrix.x4 over the slope of {path}#epi_issue_w1_n{{1..32}} ({per_op:.2f} cycles per "
            f"instruction; one warp alone on the SM) ({who})"),
        "smem_store_queue_ops": (
            round(sum(ahead) / len(ahead)),
            f"derived: {path}#epi_issue{{,_fence}}_w{{1,4,8}}_n64 (the stores issued ahead of those written, less the "
            f"fence alone, over one sub-partition's time per instruction: {', '.join(f'{a:.1f}' for a in ahead)}; the "
            f"mean) ({who})"),
    }


SMOOTH = ["validation/results/h200/loadlat_smooth.json", "validation/results/h200/loadlat_smooth_rerun1.json",
          "validation/results/h200/loadlat_smooth_rerun2.json"]


def hbm_loaded_latency(params):
    """HBM's latency under load, from the H200's `loadlat_smooth` rows (three runs): a probe CTA's stage of two 16 KB
    boxes from HBM, one at a time, while the other 131 SMs each keep one such stage in flight and think a random time
    (uniform around T = 0 .. 5000 cycles) after each: per T the knot (delivered bandwidth of the load CTAs over the
    machine's HBM rate, the probe's median latency less its median alone), the medians over the runs."""
    runs = []
    for path in SMOOTH:
        with open(os.path.join(ROOT, path)) as f:
            runs.append({m["name"]: m["median"] for m in json.load(f)["measurements"]})
    med = lambda name: sorted(r[name] for r in runs)[len(runs) // 2]
    rate = params["hbm_bytes_per_cycle"][0] * params["clock_mhz"][0] / 1000  # GB/s
    alone = med("loadlat_hbm_pair16KB_bg0_d1_t0_latency")
    knots = sorted((round(med(f"loadlat_hbm_pair16KB_bg131_d1_t{t}_jitter_bw") / rate, 3),
                    round(med(f"loadlat_hbm_pair16KB_bg131_d1_t{t}_jitter_latency") - alone))
                   for t in (0, 500, 1000, 2000, 3000, 5000))
    return knots, (f"derived: a stage of two 16 KB HBM boxes beside 131 SMs each keeping one in flight with random think "
                   f"times (T = 5000 .. 0 cycles): the load SMs' bandwidth over hbm_bytes_per_cycle at {params['clock_mhz'][0]} "
                   f"MHz ({rate:.0f} GB/s), and the stage's median latency less its median alone ({alone:.0f} cycles), the "
                   f"medians of three runs ({', '.join(SMOOTH)}#loadlat_hbm_pair16KB_bg131_d1_t*_jitter_{{bw,latency}}, "
                   f"loadlat_hbm_pair16KB_bg0_d1_t0_latency; NVIDIA H200, 2026-12-01)")


GPCS = {}
layout, src = gpc_layout()
GPCS["h200"] = {"sms": layout, "source": src}
GPCS["h100-sxm"] = {"sms": layout, "source": "estimate: taken from the H200 measurement (the H100 has the H200's chip, GH100, "
                                              "with as many SMs); " + src}


def l2_stores(gpu):
    """How the L2 takes tensor stores, from the 'store' microbenchmarks: l2_store_bytes_per_cycle, the GPU-wide rate of
    all SMs storing 32 KB boxes to an L2-resident footprint (hier_store_bw_l2_box32KB_d1/d2/d4, their median; the TMA
    engines alone would go twice as fast) on `gpu`; l2_store_cost, what a stored byte takes of the L2's read bandwidth
    when loads run beside the stores, from the H200's L2-resident mixes of 32 KB loads and 32 KB stores (coupled 1:1
    and independent): (read rate alone - loads' rate in the mix) / stores' rate in the mix, the mean of the two;
    hbm_turnaround, what mixing reads and writes costs HBM, from `gpu`'s HBM mix of 32 KB loads and 32 KB stores
    coupled 1:1 (each SM alternates them): the model's HBM moves a 1:1 mix at hbm_bytes_per_cycle / (1 + t / 2), so
    t = 2 x (the HBM read rate alone, tma_load_bw_ring_hbm_all_sms_box32KB as hbm_bytes_per_cycle has it / the mix's
    total - 1)."""
    def medians(path):
        with open(os.path.join(ROOT, path)) as f:
            return {m["name"]: m["median"] for m in json.load(f)["measurements"] if m.get("median") is not None}
    store = f"validation/results/{gpu}/store.json"
    rates = sorted(medians(store)[f"hier_store_bw_l2_box32KB_d{d}_read_gbs"] for d in (1, 2, 4))
    mix_file = "validation/results/h200/store.json"
    mix, reads_file = medians(mix_file), "validation/results/h200/microbench.json"
    reads = medians(reads_file)["tma_load_bw_ring_l2_all_sms_box32KB"]
    costs = [(reads - mix[f"hier_store_mixed_l2_{m}_box32KB_load_gbs"]) / mix[f"hier_store_mixed_l2_{m}_box32KB_store_read_gbs"]
             for m in ("coupled", "indep")]
    own = medians(store)
    hbm_reads = medians(f"validation/results/{gpu}/microbench.json")["tma_load_bw_ring_hbm_all_sms_box32KB"]
    hbm_mix, hbm_indep = own["hier_store_mixed_coupled_box32KB_total_gbs"], own["hier_store_mixed_indep_box32KB_total_gbs"]
    return {
        "hbm_turnaround": (round(2 * (hbm_reads / hbm_mix - 1), 3),
                           f"derived: 2 x (the HBM read rate alone, tma_load_bw_ring_hbm_all_sms_box32KB {hbm_reads:.0f} GB/s in "
                           f"validation/results/{gpu}/microbench.json / the total of a 1:1 mix of 32 KB TMA loads and stores "
                           f"streaming through HBM, each SM alternating them, hier_store_mixed_coupled_box32KB_total_gbs "
                           f"{hbm_mix:.0f} GB/s in {store} - 1): the model's HBM moves a 1:1 mix at its rate / (1 + t / 2) (the "
                           f"bus turns around between reads and writes; the independent mix, "
                           f"hier_store_mixed_indep_box32KB_total_gbs, {hbm_indep:.0f} GB/s)"),
        "l2_store_bytes_per_cycle": (round(rates[1] * 1e9 / 1980e6, 3),
                                     f"derived: the median of hier_store_bw_l2_box32KB_d1/d2/d4 ({rates[1]:.0f} GB/s: all SMs storing 32 KB "
                                     f"boxes to an L2-resident footprint, {store}) / the 1980 MHz clock"),
        "l2_store_cost": (round(sum(costs) / len(costs), 2),
                          f"derived: the H200's L2-resident mixes of 32 KB loads and stores ({mix_file}): (the L2 read rate "
                          f"alone, tma_load_bw_ring_l2_all_sms_box32KB {reads:.0f} GB/s in {reads_file}, - the loads' rate in "
                          f"the mix) / the stores' rate in it: coupled 1:1 {costs[0]:.3f}, independent {costs[1]:.3f}; their "
                          f"mean (NVIDIA H200, 2026-11-28)"),
    }


def l1_costs():
    """What a warp's global-memory instruction holds the SM's load/store path for, beyond lsu_bytes_per_cycle (the
    `l1` group: one CTA of 16 warps on one SM, each warp's instructions spread over 1-32 rows of 128-byte lines).
    Loads and cp.async take about one cycle per line they touch, however few of its bytes they use; a load
    instruction at least lsu_load_min_cycles; stores one cycle per whole 32-byte sector and two per sector they
    write in part. The H200 has the H100's SM."""
    with open(os.path.join(ROOT, L1)) as f:
        run = json.load(f)
    med = {m["name"]: m["median"] for m in run["measurements"] if m.get("median") is not None}
    who = f'{L1}, {run["gpu"]["name"]}, {run["date_utc"][:10]}'
    whole = med["l1_st128_lines4_warps16"]  # 16 whole sectors
    partial = med["l1_st32_lines8_warps16"]  # 8 sectors written in part (16 of their 32 bytes)
    return {
        "lsu_load_min_cycles": (round(med["l1_ld32_l1hit_lines1_warps16"], 3),
                                f"measured: {L1}#l1_ld32_l1hit_lines1_warps16 (ld.global.b32 of one whole line per instruction, "
                                f"L1 hits: the path's own floor; two lines: {med['l1_ld32_l1hit_lines2_warps16']:.2f}; from the L2 "
                                f"{med['l1_ld32_l2_lines1_warps16']:.2f} with 16 warps, {med['l1_ld32_l2_lines1_warps8']:.2f} with 8: "
                                f"bound by the loads' latency; {who})"),
        "lsu_store_bytes_per_cycle": (round(512 / whole, 3),
                                      f"derived: 512 bytes / l1_st128_lines4_warps16 (st.global.v4 of four whole lines: "
                                      f"{whole:.2f} cycles; st.global.b32 of one line: {med['l1_st32_lines1_warps16']:.2f} cycles per 128 bytes) ({who})"),
        "lsu_partial_sector_factor": (round(partial / 8 / (whole / 16), 2),
                                      f"derived: l1_st32_lines8_warps16 / 8 sectors written in part ({partial:.2f} cycles) over "
                                      f"l1_st128_lines4_warps16 / 16 whole ones ({whole:.2f}); 32 rows of 16 or 8 bytes: "
                                      f"{med['l1_st128_lines32_warps16']:.2f}, {med['l1_st64_lines32_warps16']:.2f} cycles ({who})"),
    }


def sm90(results):
    """The parameters of an sm90 machine (H100, H200) from one microbenchmark result file."""
    global RESULTS, MEDIAN, WHO
    RESULTS = results
    with open(os.path.join(ROOT, RESULTS)) as f:
        run = json.load(f)
    MEDIAN = {m["name"]: m["median"] for m in run["measurements"] if m.get("median") is not None}
    WHO = f'{run["gpu"]["name"]}, {run["date_utc"][:10]}'


    def measured(name, integer=True):
        v = MEDIAN[name]
        return (round(v) if integer else round(v, 3)), f"measured: {RESULTS}#{name} ({WHO})"


    def derived(value, how):
        return value, f"derived: {how} ({RESULTS}, {WHO})"


    def est(value, why):
        return value, f"estimate: {why} (not measured yet)"


    clock = 1980
    # Named barrier: latency grows with the warps it gathers; fit a line through the measured points.
    _nb = [(w, MEDIAN[f"bar_sync_latency_{w}warps"]) for w in (2, 4, 8, 12, 16, 32)]
    _mx = sum(w for w, _ in _nb) / len(_nb)
    _my = sum(v for _, v in _nb) / len(_nb)
    nb_slope = sum((w - _mx) * (v - _my) for w, v in _nb) / sum((w - _mx) ** 2 for w, _ in _nb)
    nb_base = _my - nb_slope * _mx
    # The L2 queue of the model serves mostly TMA traffic: use the all-SM TMA figure (ld.global reaches less:
    # l2_read_bw_all_sms, 6.35 TB/s).
    l2_bw = MEDIAN["tma_load_bw_ring_l2_all_sms_box32KB"] * 1e9 / (clock * 1e6)
    tma_bw = MEDIAN["tma_load_bw_pipe_l2_one_sm_box32KB_bytes_per_cycle"]
    store_slope = (MEDIAN["tma_store_latency_wait_group_read0_32KB"] - MEDIAN["tma_store_latency_wait_group_read0_1KB"]) / (31 * 1024)
    store_bw = 1 / store_slope
    mma_sync_cycles = MEDIAN["mma_sync_throughput_m16n8k16_f16_4warps"]
    mma_per_warp = MEDIAN["mma_sync_throughput_m16n8k16_f16_per_warp"]

    params = {
        "sm_count": (132, "published: NVIDIA H100 SXM5 datasheet (132 SMs); also read from the device in " + RESULTS),
        "clock_mhz": (clock, f"measured: {RESULTS}#clocks (clock64 / %globaltimer: 1979-1980 MHz, nvidia-smi 1980 MHz; {WHO})"),
        "max_warps_per_sm": (64, GUIDE),
        "max_ctas_per_sm": (32, GUIDE),
        "registers_per_sm": (65536, GUIDE + " (64K 32-bit registers per SM; a warp's are allocated in units of 256)"),
        "smem_per_sm": (233472, GUIDE + " (228 KB per SM; the device reports the same)"),
        "smem_per_cta_max": (232448, GUIDE + " (227 KB per block opt-in; the device reports the same)"),
        "smem_reserved_per_cta": (1024, GUIDE + " (1 KB reserved per block)"),
        "max_cluster_size": (16, "published: CUDA C++ Programming Guide 13, thread block clusters (8 portable, 16 non-portable)"),
        "tmem_columns": (0, "derived: Hopper has no tensor memory (tcgen05 is sm_100)"),
        "has_wgmma": (1, "published: PTX ISA 9.7.15 (wgmma requires sm_90a)"),
        "cta_launch_cycles": measured("cta_wave_gap_same_sm"),
        "launch_overhead_ns": launch_overhead(),
        **load_clocks(),
        "op_issue_cycles": est(2, "issue of a fence / commit / bar.arrive"),
        "mbarrier_arrive_cycles": est(4, "issue of a local arrive"),
        "mbarrier_test_wait_cycles": measured("mbar_test_wait_completed_dependent"),
        "mbarrier_wake_cycles": measured("mbar_wake_other_warp_same_wg"),
        "remote_arrive_cycles": derived(round(MEDIAN["mbar_cluster_remote_arrive_rtt_half"] - MEDIAN["mbar_wake_other_warp_same_wg"]),
                                        "mbar_cluster_remote_arrive_rtt_half minus the wake-up the simulator adds "
                                        "(mbar_wake_other_warp_same_wg)"),
        "named_barrier_cycles": derived(round(nb_base), "intercept of a least-squares line through bar_sync_latency_{2,4,8,12,16,32}warps"),
        "named_barrier_cycles_per_warp": derived(round(nb_slope, 3), "slope of that line (cycles per warp the barrier gathers)"),
        "cluster_sync_cycles": measured("cluster_barrier_latency_cs2"),
        "tma_issue_cycles": measured("tma_burst_8KBx24_issue_interval"),
        # The simulator composes a measured load latency as issue + transfer + latency + the waiter's wake-up,
        # so the parameter is what remains of the measured total after the parts the model adds itself.
        "tma_load_latency_cycles": derived(round(MEDIAN["tma_load_latency_l2_1KB"] - 1024 / tma_bw
                                                 - MEDIAN["tma_burst_8KBx24_issue_interval"] - MEDIAN["mbar_wake_other_warp_same_wg"]),
                                           "tma_load_latency_l2_1KB minus 1 KB at the one-SM TMA bandwidth, the issue interval "
                                           "(tma_burst_8KBx24_issue_interval) and the wake-up (mbar_wake_other_warp_same_wg)"),
        "tma_bytes_per_cycle": measured("tma_load_bw_pipe_l2_one_sm_box32KB_bytes_per_cycle", integer=False),
        "tma_store_bytes_per_cycle": derived(round(store_bw, 3),
                                             "slope of tma_store_latency_wait_group_read0 from 1 KB to 32 KB"),
        "tma_store_read_cycles": derived(max(0, round(MEDIAN["tma_store_latency_wait_group_read0_1KB"] - 1024 / store_bw
                                                      - MEDIAN["tma_burst_8KBx24_issue_interval"])),
                                         "tma_store_latency_wait_group_read0_1KB minus 1 KB at the store bandwidth and the "
                                         "issue interval (tma_burst_8KBx24_issue_interval)"),
        "tma_store_latency_cycles": derived(round(MEDIAN["tma_store_latency_wait_group0_1KB"] - MEDIAN["tma_store_latency_wait_group_read0_1KB"]),
                                            "tma_store_latency_wait_group0 minus wait_group_read0 (11 cycles at every size)"),
        "l2_bytes_per_cycle": derived(round(l2_bw, 3), "tma_load_bw_ring_l2_all_sms_box32KB / the 1980 MHz clock (ld.global: l2_read_bw_all_sms, 6.35 TB/s)"),
        "l2_capacity_bytes": (run["gpu"]["l2_bytes"], f"published: the L2 size the device reports (cudaDeviceProp::l2CacheSize, in {RESULTS} gpu.l2_bytes)"),
        "hbm_bytes_per_cycle": derived(round(MEDIAN["tma_load_bw_ring_hbm_all_sms_box32KB"] * 1e9 / (clock * 1e6), 3),
                                       "tma_load_bw_ring_hbm_all_sms_box32KB / the 1980 MHz clock (ld.global: hbm_read_bw_all_sms)"),
        "hbm_latency_cycles": derived(round(MEDIAN["tma_load_latency_hbm_1KB"] - MEDIAN["tma_load_latency_l2_1KB"]),
                                      "tma_load_latency_hbm_1KB minus tma_load_latency_l2_1KB (the same difference at 2-32 KB within 10%)"),
        "cp_async_latency_cycles": measured("cp_async_cg16_latency_l2"),
        "lsu_bytes_per_cycle": measured("cp_async_cg16_throughput_one_sm_l2", integer=False),
        "smem_bytes_per_cycle": (128, "published: 32 banks x 4 bytes per cycle (CUDA C++ Programming Guide, shared memory)"),
        "global_load_latency_cycles": measured("load_latency_l2_hit"),
        "tensor_flops_per_cycle_16bit": derived(round(2 * 64 * 256 * 16 / MEDIAN["wgmma_throughput_m64n256k16_bf16_2wg"]),
                                                "2*64*256*16 FLOP / wgmma_throughput_m64n256k16_bf16_2wg (published: 4096)"),
        "tensor_flops_per_cycle_8bit": derived(round(2 * 64 * 256 * 32 / MEDIAN["wgmma_throughput_m64n256k32_e4m3_2wg"]),
                                               "2*64*256*32 FLOP / wgmma_throughput_m64n256k32_e4m3_2wg (published: 8192)"),
        "tensor_flops_per_cycle_tf32": (2048, "derived: half the 16-bit rate (H100 datasheet: tf32 494.7 vs bf16 989.4 TFLOP/s dense)"),
        "tensor_flops_per_cycle_4bit": (0, "derived: Hopper tensor cores have no 4-bit floating point"),
        "wgmma_latency_cycles": derived(round(MEDIAN["wgmma_latency_m64n128k16_bf16"] - 64 - wgmma_issue()["wgmma_issue_cycles"][0]),
                                        "wgmma_latency_m64n128k16_bf16 minus its 64-cycle occupancy and the issue cost wgmma_issue_cycles "
                                        "(172-180 for N<=128, 217 at N=256, before the issue cost)"),
        "mma_sync_latency_cycles": derived(round(MEDIAN["mma_sync_latency_m16n8k16_f16"] - mma_per_warp),
                                           "mma_sync_latency_m16n8k16_f16 minus mma_sync_throughput_m16n8k16_f16_per_warp"),
        "mma_sync_flops_per_cycle_16bit": derived(round(4096 / mma_sync_cycles),
                                                  "4096 FLOP per m16n8k16 / mma_sync_throughput_m16n8k16_f16_4warps"),
        "umma_latency_cycles": (0, "derived: no tcgen05 on sm_90"),
        "tmem_ld_cycles": (0, "derived: no tcgen05 on sm_90"),
        "tmem_cp_cycles": (0, "derived: no tcgen05 on sm_90"),
        "tmem_alloc_cycles": (0, "derived: no tcgen05 on sm_90"),
        "clc_latency_cycles": (0, "derived: no cluster launch control on sm_90"),
    }
    return params


def borrowed(params, why, source="H100"):
    """Parameters measured on the `source` GPU, as estimates for another GPU (`why`: what the two share)."""
    return {k: (v, f"estimate: taken from the {source} measurement ({why}); " + src) for k, (v, src) in params.items()}


h100 = sm90("validation/results/h100/microbench.json")
COMBINING = l2_combining()
COMBINING.update(latency_spread())
COMBINING["l2_processor_sharing"] = (
    0, "estimate: off (0): a read's share of the L2 is fixed when it starts, by the SMs busy then. With 1 (the SMs with "
       "reads in flight share it equally at every moment, so reads that start together end together) the whole accuracy "
       "report (2026-11-29, at the measured clock) went K2 MAPE 7.9 -> 8.3 %, Spearman 0.85 -> 0.79, CUTLASS MAPE 11.9 -> "
       "11.1 % (mean signed -8.7 -> -2.1 %), Spearman 0.85 -> 0.78, and the combined share of the L2's reads fell further "
       "below the GPU's counters (-0.070 -> -0.126): slower partly by combining too little, and ranking worse, so it is "
       "not the default (docs/simulator.md)")
COMBINING["l2_partitions"] = (
    2, "derived: Hopper's L2 is two partitions, each caching the data of the SMs of the GPCs directly connected to it (the "
       "A100 whitepaper's words for its L2, which Hopper keeps), so a block both halves of the GPU read is held twice. "
       "Checked against K2's HBM reads on the H200 (Nsight Compute, validation/results/h200/k2_l2cap_ncu.csv, 4096^3, "
       "128x128 tiles: 0.177 GB in groups of 8 rows, 0.307 along N or M; the model 0.158 and 0.275 with 2, 0.067 with 1; "
       "validation/calibration/k2_l2cap_ncu.py)")
h100.update(COMBINING)
h100.update(l2_stores("h100"))


DIRTY = ("validation/results/h100/dirtystart.json", "validation/results/h100/dirtystart2.json",
         "validation/results/h100/dirtystart3.json")


def l2_dirty_left(capacity_bytes, paths=DIRTY):
    """l2_dirty_left_share, the most of the L2 a kernel's stores leave dirty for the next launch, from the dirtystart
    microbenchmarks (a 132 MiB streaming TMA read after X MiB of another buffer were written, the loads without a cache
    hint): the read takes e(X) longer than without the writes; it grows in proportion to X and then stops growing. Per
    series (the writes by cudaMemset in every run, by a kernel's st.global stores in the second and third, by TMA stores
    and read by 16 SMs only in the third): (the level it stops at, the
    median of e(X) for X >= 48 MiB) / (the cost per MiB while it grows, a least-squares line through 0 over the X whose
    e(X) is at most 80 % of that level) = the MiB left dirty at most; the share: their median over the L2's capacity."""
    lefts, parts, who = [], [], ""
    for path in paths:
        with open(os.path.join(ROOT, path)) as f:
            run = json.load(f)
        who = f"{run['gpu']['name']}, {run['date_utc'][:10]}"
        med = {m["name"]: m["median"] for m in run["measurements"] if m.get("median") is not None}
        for series in ("normal", "stores", "tmastores", "slack16"):
            head = f"dirtystart_{series}_"
            pts = sorted((int(n[len(head):-len("MiB_extra_us")]), v) for n, v in med.items()
                         if n.startswith(head) and n.endswith("MiB_extra_us"))
            if not pts:
                continue
            level = statistics.median(v for x, v in pts if x >= 48)
            rising = [(x, v) for x, v in pts if v <= 0.8 * level]
            per_mib = sum(x * v for x, v in rising) / sum(x * x for x, _ in rising)
            lefts.append(level / per_mib)
            how = {"normal": "cudaMemset", "stores": "st.global", "tmastores": "TMA stores", "slack16": "cudaMemset, 16 readers"}
            parts.append(f"{os.path.basename(path)} {how[series]}: {per_mib:.3f} us per "
                         f"MiB up to {max(x for x, _ in rising)} MiB, {level:.2f} us from 48 MiB on, {lefts[-1]:.1f} MiB")
    left = statistics.median(lefts) * (1 << 20)
    return (round(left / capacity_bytes, 3),
            f"derived: {os.path.dirname(paths[0])}/dirtystart*.json (dirtystart_{{normal,stores,tmastores,slack16}}_*MiB_extra_us; "
            f"{who}): a "
            f"streaming read of 132 MiB after X MiB of another buffer were written takes longer in proportion to X, then "
            f"no longer past about 24 MiB; (that level / the cost per MiB) is what the writes leave dirty at most: "
            f"{'; '.join(parts)}; the median {left / (1 << 20):.1f} MiB over the L2's capacity")


h100["l2_dirty_left_share"] = l2_dirty_left(h100["l2_capacity_bytes"][0])


def atomics(results, who_note=""):
    """The atomics unit (global words, grid.sync) from the `atomics` group of the microbenchmarks."""
    with open(os.path.join(ROOT, results)) as f:
        run = json.load(f)
    med = {m["name"]: m["median"] for m in run["measurements"] if m.get("median") is not None}
    who = f'{run["gpu"]["name"]}, {run["date_utc"][:10]}'

    def measured(name, integer=True):
        v = med[name]
        return (round(v) if integer else round(v, 3)), f"measured: {results}#{name} ({who}){who_note}"

    return {
        "atomic_latency_cycles": measured("atom_add_relaxed_gpu_latency"),
        "acquire_load_latency_cycles": measured("ld_acquire_gpu_latency"),
        "atomic_issue_cycles": measured("red_relaxed_gpu_issue"),
        "release_issue_cycles": measured("st_release_gpu_issue"),
        "atomic_same_address_per_cycle": measured("atom_add_same_address_throughput_132ctas", integer=False),
        "fence_cycles": measured("fence_acq_rel_gpu_cost"),
        "spin_poll_cycles": measured("spin_poll_period"),
    }


ATOMICS = "validation/results/h100/atomics.json"
atomic_params = atomics(ATOMICS)
h100.update(atomic_params)

# The H200 (the H100's SM with more and faster HBM) from its own run.
h200 = sm90("validation/results/h200/microbench.json")
h200["sm_count"] = (132, "published: NVIDIA H200 datasheet (132 SMs); also read from the device in " + RESULTS)
h200.update(borrowed(COMBINING, "the H200 has the H100's SMs, TPCs and L2"))
h200.update(l2_stores("h200"))
h200.update(borrowed({"l2_dirty_left_share": h100["l2_dirty_left_share"]}, "the H200 has the H100's L2"))
# No clock-under-load run on the H200 yet: the same GH100 chip and the same 700 W board power.
h200.update(borrowed(load_clocks(), "the H200 has the H100's chip and its 700 W power limit"))
# No atomics run on the H200 yet: its SM and L2 design are the H100's.
h200.update(borrowed(atomic_params, "the H200 has the H100's SM and L2"))
# A GEMM stage's second TMA box waits for the other SMs of its GPC that load (the H200's fit, 2026-11-29; docs/simulator.md).
GPC_LATENCY = {
    'h100-sxm': {
        'tma_gpc_latency_cycles': (17.9, "estimate: the H200's fit (validation/results/h200/gpc.json: the H100 has the same GH100 chip and GPC layout; its own GPC runs are not measured yet)"),
        'tma_gpc_latency_max_cycles': (197, "estimate: the H200's fit (validation/results/h200/gpc.json: same chip; not measured on the H100 yet)"),
    },
    'h200': {
        'tma_gpc_latency_cycles': (17.9, "derived: least-squares fit of min(d x (n - 1), max) to a GEMM stage's latency (two 16 KB boxes on one barrier, one at a time) on n SMs of one GPC loading together (one cluster of n = 8, 12, 16; clusters of 16 on every GPC), less one SM's (validation/results/h200/gpc.json gpc_packed_pair16KB_s1_ctas{8,12,16}_latency, gpc_clusters16_pair16KB_s1_latency; validation/results/h200/think.json think_latency_l2_pair16KB_s1_t1024_ctas1_latency; NVIDIA H200, 2026-11-28/29)"),
        'tma_gpc_latency_max_cycles': (197, 'derived: the same fit (validation/results/h200/gpc.json, think.json; NVIDIA H200, 2026-11-28/29)'),
    },
    'b200': {
        'tma_gpc_latency_cycles': (0, 'estimate: not measured on a B200 (no data): off'),
        'tma_gpc_latency_max_cycles': (0, 'estimate: not measured on a B200 (no data): off'),
    },
}


def tma_outside():
    """The whole GPU's rate for the parts of TMA boxes outside their tensor (zero fill), from the H200's 'oob' group:
    every SM loading a 32 KB box wholly outside its tensor, 4 in flight (one SM alone takes no longer than inside the
    tensor: nothing to subtract). The 16 KB box and the boxes at each CTA's own coordinates give the same rate."""
    path = "validation/results/h200/oob.json"
    with open(os.path.join(ROOT, path)) as f:
        run = json.load(f)
    med = {r["name"]: r for r in run["measurements"]}
    r = med["tma_oob_all_out_s4_all_sms"]
    p = r["params"]
    rate = p["ctas"] * p["box_rows"] * 128 / r["median"]
    others = ", ".join(f"{n} {med[n]['params']['ctas'] * med[n]['params']['box_rows'] * 128 / med[n]['median']:.0f}"
                       for n in ("tma_oob_all_out16_s4_all_sms", "tma_oob_all_out_own_s4_all_sms"))
    return {"l2_oob_bytes_per_cycle": (round(rate, 1), (
        f"derived: {p['ctas']} SMs x {p['box_rows'] * 128} bytes / tma_oob_all_out_s4_all_sms ({r['median']:.1f} cycles per box: "
        f"every SM loading a box wholly outside its tensor, 4 in flight; one SM alone {med['tma_oob_all_out_s4_one_sm']['median']:.0f}, "
        f"as inside; bytes per cycle of the same with {others}) ({path}; NVIDIA H200, {run['date_utc'][:10]})"))}


def l2_delivery(gpu, path):
    """The whole GPU's rate of delivering tensor reads to the SMs when their requests combine (every SM's copy counted):
    tma_load_bw_pipe_l2_all_sms_box32KB_shared1, every SM walking the same 32 KB boxes of an L2-resident tensor at
    about the same time (the L2 answers about 0.29 requests per delivered byte, l2_coalescing_ncu.json: its own
    bandwidth does not bind), over the 1980 MHz clock it ran at."""
    with open(os.path.join(ROOT, path)) as f:
        run = json.load(f)
    med = {r["name"]: r for r in run["measurements"]}
    r = med["tma_load_bw_pipe_l2_all_sms_box32KB_shared1"]
    quick = " (a --quick run, 4 MiB per CTA, during the Nsight Compute session)" if run.get("quick") in (True, "True") else ""
    return {"l2_delivery_bytes_per_cycle": (round(r["median"] * 1e9 / 1980e6, 1), (
        f"derived: tma_load_bw_pipe_l2_all_sms_box32KB_shared1 ({r['median']:.0f} GB/s: every SM walking the same 32 KB boxes "
        f"of an L2-resident tensor at about the same time, their requests combined to ~0.29 per delivered byte; with 4 "
        f"groups {med['tma_load_bw_pipe_l2_all_sms_box32KB_shared4']['median']:.0f}, 16 groups "
        f"{med['tma_load_bw_pipe_l2_all_sms_box32KB_shared16']['median']:.0f}) / the 1980 MHz clock ({path}{quick}; "
        f"{run['gpu']['name']}, {run['date_utc'][:10]})"))}


h100.update(l2_delivery("h100", "validation/results/h100/l2_sharing.json"))
h200.update(l2_delivery("h200", "validation/results/h200/l2_tma_ncu_run.json"))
OUTSIDE = tma_outside()
h200.update(OUTSIDE)
h100.update(borrowed(OUTSIDE, "the H100 has the H200's GH100 chip; not measured on the H100 yet", source="H200"))
wgmma = wgmma_issue()
wgmma.update(wgmma_beside_alu())
h100.update(wgmma)
h200.update(borrowed(wgmma, "the H200 has the H100's SM"))
h100.update(GPC_LATENCY["h100-sxm"])
h200.update(GPC_LATENCY["h200"])
MCAST_ISSUE = multicast_issue()
MCAST_ISSUE.update(multicast_l2())
h200.update(MCAST_ISSUE)
h100.update({k: (v, "estimate: taken from the H200 measurement (the H100 has the H200's SM; not measured on the H100 yet); " + src)
             for k, (v, src) in MCAST_ISSUE.items()})
L1_COSTS = l1_costs()
h100.update(L1_COSTS)
h200.update(borrowed(L1_COSTS, "the H200 has the H100's SM"))
SMEM_STORES = smem_stores(h200["smem_bytes_per_cycle"][0])
h200.update(SMEM_STORES)
h100.update({k: (v, "estimate: taken from the H200 measurement (the H100 has the H200's SM; not measured on the H100 yet); " + src)
             for k, (v, src) in SMEM_STORES.items()})
h100_results = "validation/results/h100/microbench.json"
RESULTS = h100_results

B = "published: shared/spec/machines.md (B200)"


def bd(value, why):
    return value, "estimate: " + why + " (no Blackwell GPU is available to the project)"


b200 = dict(h100)
b200.update({
    "sm_count": (148, B),
    "registers_per_sm": (65536, "published: CUDA C++ Programming Guide 13, compute capability 10.0 table (64K 32-bit "
                                "registers per SM; a warp's are allocated in units of 256)"),
    "clock_mhz": (1900, B + " (~1.85-1.97 GHz; midpoint)"),
    "load_clock_mhz": bd(1900, "the nominal clock: the B200's clock under load is not known"),
    "load_clock_random_mhz": bd(1900, "the nominal clock: the B200's clock under load is not known"),
    "tmem_columns": (512, "published: PTX ISA 9.7.16 (tensor memory: 128 lanes x 512 columns)"),
    "has_wgmma": (0, "published: PTX ISA 9.7.15 (wgmma is sm_90a only)"),
    "tensor_flops_per_cycle_16bit": (8192, B + " (dense bf16 FLOP per SM per clock)"),
    "tensor_flops_per_cycle_8bit": (16384, B + " (dense fp8)"),
    "tensor_flops_per_cycle_tf32": (4096, "derived: half the 16-bit rate"),
    "tensor_flops_per_cycle_4bit": (32768, B + " (dense fp4)"),
    "tma_load_latency_cycles": (1200, B + " (TMA load 518-918 cycles plus ~700 of async overhead; rough)"),
    "tma_multicast_issue_cycles": bd(MCAST_ISSUE["tma_multicast_issue_cycles"][0], "the H200's (Hopper) measurement"),
    "l2_multicast_read_cost": bd(MCAST_ISSUE["l2_multicast_read_cost"][0], "the H200's (Hopper) measurement"),
    "l2_multicast_combines": bd(MCAST_ISSUE["l2_multicast_combines"][0], "the H200's (Hopper) measurement"),
    "umma_latency_cycles": bd(200, "tcgen05.mma beyond occupancy; machines.md: 128x128x64 ~559 cycles in all"),
    "tmem_ld_cycles": bd(16, "tcgen05.ld 32x32b.x32"),
    "tmem_cp_cycles": bd(32, "tcgen05.cp 128x256b"),
    "tmem_alloc_cycles": bd(20, "tcgen05.alloc"),
    "clc_latency_cycles": bd(400, "try_cancel round trip"),
    "l2_bytes_per_cycle": bd(4200, "L2 bandwidth scaled from the H100 by SM count"),
    "wgmma_latency_cycles": (0, "derived: no wgmma on sm_100"),
    "wgmma_issue_cycles": (0, "derived: no wgmma on sm_100"),
    "wgmma_issue_cycles_n256": (0, "derived: no wgmma on sm_100"),
    "wgmma_queue_depth": (0, "derived: no wgmma on sm_100"),
    "wgmma_beside_alu_cycles": (0, "derived: no wgmma on sm_100"),
})
b200.update(borrowed(COMBINING, "Blackwell's TPCs also pair two SMs"))
b200.update(GPC_LATENCY["b200"])
b200["l2_oob_bytes_per_cycle"] = (0, "estimate: not measured on a B200 (no data): off")
b200["l2_delivery_bytes_per_cycle"] = (0, "estimate: not measured on a B200 (no data): off")
b200.update(borrowed(l2_stores("h100"), "assuming Blackwell's L2 takes stores as the Hopper L2 does"))
b200.update(borrowed({"l2_dirty_left_share": h100["l2_dirty_left_share"]},
                     "assuming Blackwell's L2 leaves the same share of itself dirty"))
for k, (v, src) in list(b200.items()):
    if src.startswith("measured:") or (src.startswith("derived:") and (RESULTS in src or L1 in src)):
        b200[k] = (v, "estimate: taken from the H100 measurement, assuming Blackwell's SM is no slower here; " + src)

# The simulator unit each parameter belongs to (the sections of a machine file, models/machine.hpp).
UNITS = {
    "sm": ["sm_count", "clock_mhz", "load_clock_mhz", "load_clock_random_mhz", "max_warps_per_sm", "max_ctas_per_sm", "registers_per_sm", "smem_per_sm", "smem_per_cta_max", "smem_reserved_per_cta", "max_cluster_size", "cta_launch_cycles", "launch_overhead_ns", "op_issue_cycles"],
    "tensor": ["has_wgmma", "tensor_flops_per_cycle_16bit", "tensor_flops_per_cycle_8bit", "tensor_flops_per_cycle_tf32", "tensor_flops_per_cycle_4bit", "wgmma_latency_cycles", "wgmma_issue_cycles", "wgmma_issue_cycles_n256", "wgmma_queue_depth", "wgmma_beside_alu_cycles", "mma_sync_latency_cycles", "mma_sync_flops_per_cycle_16bit", "umma_latency_cycles"],
    "mbarrier": ["mbarrier_arrive_cycles", "mbarrier_test_wait_cycles", "mbarrier_wake_cycles", "remote_arrive_cycles"],
    "named_barrier": ["named_barrier_cycles", "named_barrier_cycles_per_warp"],
    "cluster_barrier": ["cluster_sync_cycles"],
    "tma": ["tma_issue_cycles", "tma_multicast_issue_cycles", "tma_load_latency_cycles", "tma_bytes_per_cycle", "tma_gpc_latency_cycles", "tma_gpc_latency_max_cycles", "tma_store_bytes_per_cycle", "tma_store_read_cycles", "tma_store_latency_cycles"],
    "lsu": ["cp_async_latency_cycles", "lsu_bytes_per_cycle", "lsu_load_min_cycles", "lsu_store_bytes_per_cycle", "lsu_partial_sector_factor", "smem_bytes_per_cycle", "smem_store_queue_ops", "smem_warp_store_bytes_per_cycle", "fence_proxy_async_cycles", "global_load_latency_cycles"],
    "l2": ["l2_bytes_per_cycle", "l2_capacity_bytes", "hbm_bytes_per_cycle", "hbm_latency_cycles", "l2_combine_sms", "l2_combine_window_cycles", "l2_combine_block_ctas", "l2_combine_near_share", "l2_combine_far_share", "l2_latency_spread", "hbm_latency_spread", "hbm_turnaround", "l2_dirty_left_share", "l2_processor_sharing", "l2_miss_lookups", "l2_store_cost", "l2_multicast_read_cost", "l2_multicast_combines", "l2_partitions", "l2_store_bytes_per_cycle", "l2_oob_bytes_per_cycle", "l2_delivery_bytes_per_cycle"],
    "tmem": ["tmem_columns", "tmem_ld_cycles", "tmem_cp_cycles", "tmem_alloc_cycles"],
    "clc": ["clc_latency_cycles"],
    "atomics": ["atomic_latency_cycles", "acquire_load_latency_cycles", "atomic_issue_cycles", "release_issue_cycles",
                "atomic_same_address_per_cycle", "fence_cycles", "spin_poll_cycles"],
}
HBM_LOADED = {}
knots, src = hbm_loaded_latency(h200)
HBM_LOADED["h200"] = {"utilisation": [k[0] for k in knots], "cycles": [k[1] for k in knots], "source": src}
HBM_LOADED["h100-sxm"] = dict(HBM_LOADED["h200"], source="estimate: taken from the H200 measurement as shares of HBM's "
                              "rate (the H100 has the H200's chip and memory controllers, with HBM3 at 3.35 TB/s against "
                              "HBM3e at 4.8; not measured on the H100 yet); " + src)

# Units with a choice of implementation, and the one these machines use.
IMPLS = {"l2": "cache_hbm", "atomics": "l2_serial"}
# Device names (as CUDA reports them) each machine stands for: smpipe replay picks the machine by them.
GPU_NAMES = {"h100-sxm": ["H100"], "h200": ["H200"], "b200": ["B200"]}

for name, desc, params in [
    ("h100-sxm", "NVIDIA H100 SXM5 80GB (sm_90a). SM-level numbers measured by validation/microbench on the project's H100; "
                 "the rest published. Regenerate with validation/calibration/make_machines.py.", h100),
    ("h200", "NVIDIA H200 SXM 141GB (sm_90a): the H100's SM with more and faster HBM. Numbers measured by "
             "validation/microbench on the project's H200 (validation/results/h200/microbench.json), the rest published.", h200),
    ("b200", "NVIDIA B200 (sm_100a). Published and derived numbers only: no Blackwell GPU is available to the project.", b200),
]:
    unknown = set(params) - {p for ps in UNITS.values() for p in ps}
    assert not unknown, f"parameters without a unit: {sorted(unknown)}"
    units = {}
    for unit, names in UNITS.items():
        section = {"impl": IMPLS[unit]} if unit in IMPLS else {}
        section["params"] = {k: {"value": params[k][0], "source": params[k][1]} for k in names}
        units[unit] = section
    if name in GPCS:
        units["sm"]["gpcs"] = GPCS[name]
    if name in HBM_LOADED:
        units["l2"]["hbm_loaded_latency"] = HBM_LOADED[name]
    j = {"name": name, "description": desc, "gpu_names": GPU_NAMES[name], "units": units}
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        f.write(json.dumps(j, indent=2) + "\n")
print(f"wrote {os.path.relpath(OUT, os.getcwd())}/{{h100-sxm,h200,b200}}.json")
