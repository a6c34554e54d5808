#!/usr/bin/env python3
"""Predicts every point of the committed K2 sweeps (validation/results/<gpu>/k2_sweep*.json: the project's
sm90 GEMM timed on the GPU over schedules, tiles, stages, clusters, rasters and shapes) and of the committed
CUTLASS runs (validation/results/<gpu>/cutlass_gemm.json: CUTLASS's own sm90 GEMMs, built from its source,
timed the same way) with the matching sm90 model, and the project's K1 (validation/results/h100/k1_b2b.json: an
sm80 fused back-to-back GEMM) against the same two GEMMs unfused (on the H200, validation/results/h200/k1_b2b.json,
each at the configuration cuBLASLt ran, named in k1_ncu_kernels.csv), and writes the accuracy report docs/accuracy.md
with its data validation/results/accuracy.json.

  python3 validation/calibration/accuracy.py SMPIPE            # write both files, print the summary
  python3 validation/calibration/accuracy.py SMPIPE --check    # exit 1 if either committed file is stale
  python3 validation/calibration/accuracy.py SMPIPE --check --sample
      # the same, simulating anew one point of each GPU's configuration and data (~140 of 1,360 points, rotating
      # over the shapes) and every short-K and K1 run, the other points' predictions taken from the committed
      # data; ~7x faster: the test suite's form
  python3 validation/calibration/accuracy.py SMPIPE --sample   # write both files from such a sample, refusing
      # when a sampled point is predicted otherwise than committed: for changes that leave the models and machines
      # alone (the report's prose, K1's data)
  python3 validation/calibration/accuracy.py SMPIPE --jobs 2   # points in parallel (default: all cores)
  python3 validation/calibration/accuracy.py SMPIPE --seed 2   # every point with smpipe --seed 2: the summary at
      # each clock, nothing written (the HBM spread's draws belong to the seed: docs/simulator.md)

No parameter of the models or the machine files is fitted to these points. The K2 points are predicted with
K2's own instruction costs (measured in its traces); the CUTLASS points with the models' defaults, as a user
gets them.
Each point is predicted three times: at the SM clock the GPU ran it at (K2: measured in the kernel, clock64
against %globaltimer; CUTLASS: read by a probe kernel right after each launch, and where Nsight Compute counters
exist also at the clock they measured during the kernel), at the machine file's nominal clock, and at the
sustained clock smpipe models (`--clock sustained`, or `sustained-constant` for constant data).
Standard library only.
"""
import argparse
import concurrent.futures
import glob
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ncu_csv  # noqa: E402  (Nsight Compute's CSV)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join("docs", "accuracy.md")
DATA = os.path.join("validation", "results", "accuracy.json")
MODELS = {"cooperative": "models/kernels/sm90/gemm_tma_ws_cooperative.pipe",
          "pingpong": "models/kernels/sm90/gemm_tma_ws_pingpong.pipe",
          "basic": "models/kernels/sm90/gemm_tma_ws.pipe"}
MACHINES = {"H100": "h100-sxm", "H200": "h200"}
# K2's hardware traces with beta = 0 (as in the sweeps), and the intervals of its own instructions in them.
TRACES = ["validation/results/h100/k2_trace_2048x2048x2048.json", "validation/results/h100/k2_trace_8192x8192x8192.json"]
CONVERSION = "bar.sync.end epi -> st.shared"
# A k-block's intervals between pipeline ops, in the load warp and in a consumer warp, by where they stand in
# the loop (the models place each part there: in a latency-bound pipeline the instructions before a stage's
# loads or before its release lengthen the ring's round trip, those after do not).
PRODUCER_ACQUIRE_GAPS = ["wait.end empty -> arrive.expect_tx", "arrive.expect_tx full -> tma.load"]
PRODUCER_LOAD_GAPS = ["tma.load full A -> tma.load"]
PRODUCER_STAGE_GAPS = ["tma.load full B -> wait"]
CONSUMER_ISSUE_GAPS = ["wait.end full -> wgmma.fence"]
CONSUMER_RELEASE_GAPS = ["wgmma.wait.end -> arrive"]
CONSUMER_STAGE_GAPS = ["arrive empty -> wait"]
# A tile's intervals in a consumer warp outside its k-blocks and subtiles: from the tile's start to its first
# wait, from the mainloop's last release to the epilogue, from there to the first subtile's st.shared (which
# holds the first conversion, counted by FUSION_CYCLES), from the last subtile's barrier to the next tile.
TILE_GAPS = ["tile -> wait", "arrive empty -> epilogue", "epilogue -> st.shared", "bar.sync.end epi -> tile"]
# A subtile's intervals after its st.shared in every consumer warp, and around the TMA store in the store thread.
SUBTILE_GAPS = ["st.shared -> fence.proxy.async", "fence.proxy.async -> bar.sync"]
STORE_GAPS = ["bar.sync.end epi -> tma.store", "tma.wait.read.end -> bar.sync"]
# Every measured instruction cost but the conversion: (name, its intervals); the model knob is NAME_CYCLES.
INSTRUCTION_GROUPS = (("producer_acquire", PRODUCER_ACQUIRE_GAPS), ("producer_load", PRODUCER_LOAD_GAPS),
                      ("producer_stage", PRODUCER_STAGE_GAPS), ("consumer_issue", CONSUMER_ISSUE_GAPS),
                      ("consumer_release", CONSUMER_RELEASE_GAPS), ("consumer_stage", CONSUMER_STAGE_GAPS),
                      ("tile", TILE_GAPS), ("subtile", SUBTILE_GAPS), ("store", STORE_GAPS))
CONSUMER_THREADS = {"cooperative": 256, "pingpong": 128}  # the threads that convert one tile's subtile


def stage_latency(path):
    """In a hardware trace: per k-block, the cycles from the load warp's last TMA load of the stage to the end of
    the first consumer's wait on it, where that consumer was already waiting when the load was issued (the
    stage's load latency as the ring sees it). Events are matched by tile (counted per warp) and k-block."""
    with open(os.path.join(ROOT, path)) as f:
        t = json.load(f)
    out = []
    for c in t["ctas"]:
        loads, ends, starts = {}, {}, {}
        for w in c["warps"]:
            tile = -1
            for e in w["events"]:
                if e[1] == "tile":
                    tile += 1
                key = (tile, e[6])
                if w["role"] == "producer" and e[1] == "tma.load":
                    loads[key] = e[0]
                elif w["role"] == "consumer" and e[2] == "full" and e[1] in ("wait", "wait.end"):
                    d = starts if e[1] == "wait" else ends
                    d[key] = min(d.get(key, e[0]), e[0])
        out += [ends[k] - t0 for k, t0 in loads.items() if k in ends and starts.get(k, t0) < t0]
    return sorted(out)


def kernel_instructions(smpipe):
    """K2's own instructions between pipeline ops, which the models have as `compute` ops, measured in its
    hardware traces (`smpipe compare` per interval: the hardware mean against the replay's, which holds the
    model's op costs and the probe's own cycles per event, so the difference is what neither accounts for: the
    kernel's instructions, and any error of the machine file's op costs in that interval, e.g. a TMA issue
    that takes the single issuing thread longer than the burst microbenchmark):
    - the epilogue's conversion of a subtile (fp32 accumulators -> bf16, packed for st.shared, between the
      subtile's named barrier and its st.shared; the replay has only the probe there), per accumulator element
      a consumer thread converts -> FUSION_CYCLES;
    - a k-block's instructions in the load warp (stage and phase bookkeeping, box coordinates) beyond its
      acquire and two TMA loads: after the acquire, before the first load -> PRODUCER_ACQUIRE_CYCLES; between
      the loads -> PRODUCER_LOAD_CYCLES; after the last -> PRODUCER_STAGE_CYCLES;
    - the same in a consumer warp beyond its wait, MMAs and release: after the wait, before the MMAs ->
      CONSUMER_ISSUE_CYCLES; after the MMA wait, before the release -> CONSUMER_RELEASE_CYCLES; after the
      release -> CONSUMER_STAGE_CYCLES;
    - a tile's in a consumer warp outside its k-blocks and subtiles (the scheduler's next tile, coordinates, the
      epilogue's set-up), less the first subtile's conversion that FUSION_CYCLES counts -> TILE_CYCLES;
    - a subtile's after its st.shared in every consumer warp -> SUBTILE_CYCLES, and around its TMA store in the
      store thread -> STORE_CYCLES.
    A group's intervals are summed per k-block (tile, subtile) of a trace, weighted by the group's fewest samples
    in that trace; the traces are weighted by those samples."""
    sums = {"conversion": 0.0, **{name: 0.0 for name, _ in INSTRUCTION_GROUPS}}
    counts = dict.fromkeys(sums, 0)
    raw, probe = 0.0, 0.0
    for path in TRACES:
        with open(os.path.join(ROOT, path)) as f:
            meta = json.load(f)["params"]
        r = subprocess.run([smpipe, "compare", path, "--json"], cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"smpipe compare {path} failed (exit {r.returncode}): {r.stderr.strip()[-400:]}")
        j = json.loads(r.stdout)
        iv = {x["key"]: x for x in j["intervals"]}
        c = iv[CONVERSION]
        em, en = meta["epilogue_tile"]
        per_thread = em * en / (meta["threads"] - 128)  # one producer warpgroup, the rest convert
        sums["conversion"] += (c["hw_mean"] - c["sim_mean"]) / per_thread * c["count"]
        counts["conversion"] += c["count"]
        raw += c["hw_mean"] * c["count"]
        probe += j["probe_cycles"] * c["count"]
        for name, keys in INSTRUCTION_GROUPS:
            if any(k not in iv for k in keys):
                continue  # a trace whose CTAs ran one tile each has no tile-to-tile interval
            n = min(iv[k]["count"] for k in keys)
            gap = sum(iv[k]["hw_mean"] - iv[k]["sim_mean"] for k in keys)
            if name == "tile":  # less the tile's first conversion, which FUSION_CYCLES counts
                gap -= c["hw_mean"] - c["sim_mean"]
            sums[name] += gap * n
            counts[name] += n
    return {"conversion_interval": CONVERSION, "traces": TRACES, "conversion_samples": counts["conversion"],
            "conversion_trace_mean": raw / counts["conversion"], "probe_cycles": probe / counts["conversion"],
            "conversion_per_element": sums["conversion"] / counts["conversion"],
            **{f"{name}_gaps": keys for name, keys in INSTRUCTION_GROUPS},
            **{f"{name}_cycles": sums[name] / counts[name] for name, _ in INSTRUCTION_GROUPS},
            "kblocks": counts["consumer_issue"]}


def defines(p, measured, prologue=None, producer_scale=None):
    """The model parameters that reproduce a K2 configuration (validation/kernels/README.md); `prologue`: its
    PROLOGUE_CYCLES instead of the measured one, `producer_scale` the factor on the load warp's knobs (cta_start)."""
    d = {"M": p["M"], "N": p["N"], "K": p["K"], "TILE_M": p["tile_m"], "TILE_N": p["tile_n"], "TILE_K": p["tile_k"],
         "STAGES": p["stages"], "CLUSTER_M": p["cluster_m"], "STAGES_C": p["stages_c"], "STAGES_D": p["stages_d"],
         "REUSE_SMEM_C": int(p["reuse"]), "DELAY_TMA_STORE": int(p["delay"]),
         # K2 acquires the next D buffer right after each store's commit, with or without ReuseSmemC.
         "STORE_ACQUIRE": 1,
         # K2 times alpha = 1, beta = 0: its C buffers exist, no C is loaded.
         "BETA_ZERO": 1}
    # K2's grouped raster in cluster rows (g0, along M, is one group of every row).
    d["GROUP_M"] = p["raster_rows"]
    # K2's tensor maps ask for 256-byte L2 promotion (validation/kernels/src/k2_main.cu), CuTe's for 128 (the models'
    # default): a K2 box that misses brings the next k-block's half rows into the L2 along with its own.
    d["L2_PROMOTION"] = 256
    # Its own instructions, from the traces: the conversion of a subtile (the elements each consumer thread
    # converts at the measured cost) and a k-block's bookkeeping in the load and consumer warps.
    em, en = p["epi_tile"]
    d["FUSION_CYCLES"] = round(measured["conversion_per_element"] * em * en / CONSUMER_THREADS[p["schedule"]])
    # ... and how much of its speed it keeps while the SM's tensor pipe runs wgmmas (K2's pingpong traces).
    d["FUSION_MMA_SPEED"] = fusion_mma_speed()
    d.update(instruction_knobs(measured, producer_scale))
    if prologue is not None:
        d["PROLOGUE_CYCLES"] = d["PROLOGUE_WARM_CYCLES"] = prologue
    # K2's np knob: a grid of one CTA per tile instead of the persistent one.
    if p.get("one_per_tile"):
        d["PERSISTENT"] = 0
    return d


PP_CONVERSION = "validation/results/h200/k2_pp_conversion.json"
# K2 timed on shapes outside the sweeps after the conversion's speed beside wgmmas was measured and built in (pingpong
# 128x128 with 2, 4, 6 stages beside cooperative controls; 2026-11-29): a check of that mechanism held out from it.
PP_SWEEP = "validation/results/h200/k2_sweep_pingpong.json"
# K2 on shapes whose N is not a multiple of its CTA tile (B boxes that reach past the tensor), timed on the H200 on
# 2026-12-02 to check the L2's cost of the rows outside a tensor (l2_oob_bytes_per_cycle, measured by the microbenchmark
# group oob, not from these): held out, reported on their own.
OVERHANG = "validation/results/h200/k2_overhang*.json"


PROLOGUE = "validation/results/h200/k2_prologue/k2_prologue.json"
# K2 with one CTA per tile (np) beside its persistent grid, timed on the H200 on 2026-12-02; the grid's last CTA records
# its start too: how much sooner a CTA whose SM ran earlier CTAs reaches its first TMA load (warm_start), and the
# times, held out (nothing is fitted to them).
WARM_START = "validation/results/h200/k2_warm_start/k2_warm_start.json"
WARM_START_MIN_NS = 1000  # a last CTA that starts this long after the launch's first ran on an SM after another CTA
PROLOGUE_MAX_FLOP = 2 ** 35  # the rows whose model runs are quick (2048^3 and smaller; an 8192^3 run takes seconds)


def tma_load_cycles(smpipe, model, gpu, defs, clock):
    """The cycles of CTA 0's TMA loads, in order, in a model run (its trace; with C not loaded, the load warp's A
    and B boxes of each k-block)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.json")
        j = run_model(smpipe, model, gpu, defs, clock, extra=("--trace", path, "--trace-ctas", "1", "--trace-window", "0:20000"))
        if "error" in j:
            sys.exit(f"{model}: {j['error']}")
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    return sorted(e["ts"] * clock for e in events if e.get("ph") == "X" and e["name"] == "tma.load")


PRODUCER_GROUPS = ("producer_acquire", "producer_load", "producer_stage")


def cta_start(smpipe, measured):
    """K2 without its capture probe (PROLOGUE: Params::clocks, CTA 0's clock64, medians over the timed launches of a
    point; the points with 1x1 clusters up to PROLOGUE_MAX_FLOP, where a cluster's sync is the model's cluster.sync):
    - PROLOGUE_CYCLES, the CTA's start in each warp: from CTA 0's entry to its first TMA load less the model's own
      cycles to it with PROLOGUE_CYCLES = 0 (the load warp's acquire and bookkeeping before it), the median;
    - producer_scale: the factor on the load warp's trace-measured PRODUCER_*_CYCLES that makes the model's k-loop
      as long as K2's where the load warp bounds it (load_warp_pairs: K2's sweeps, which run without Params::clocks).
      The traces measure where the load warp's instructions stand; their sum, with the probe's records taken out at
      the probe's mean cost, is more than the kernel without the probe takes. (Until 2026-12-07 the factor came from
      PROLOGUE's own load k-block, the ring's first pass: K2 built with Params::clocks, whose checks in the load
      loop cost it 112-173 cycles a k-block where the load warp bounds it, CLOCK_CHECKS.)"""
    with open(os.path.join(ROOT, PROLOGUE)) as f:
        run = json.load(f)
    gpu = next(m for k, m in MACHINES.items() if k in run["gpu"]["name"])
    traced = instruction_knobs(measured, 1)
    knobs = sum(traced[f"{name.upper()}_CYCLES"] for name in PRODUCER_GROUPS)
    rows = [r for r in run["rows"]
            if r["cluster_m"] == 1 and r.get("ok") and 2 * r["M"] * r["N"] * r["K"] <= PROLOGUE_MAX_FLOP]

    def loads(r, scale):
        defs = defines(r, measured, prologue=0, producer_scale=scale)
        return tma_load_cycles(smpipe, MODELS[r["schedule"]], gpu, defs, r["clock_mhz_median"])

    pairs = load_warp_pairs()
    gpu_slope = statistics.median(s for _, _, _, s in pairs)

    def model_slope(scale):
        return statistics.median(slope_of(smpipe, g, a, b, measured, scale) for g, a, b, _ in pairs)

    # The model's k-loop is piecewise linear in the knobs: secant steps from the traces' values (scale 1).
    traced_slope = model_slope(1.0)
    s0, m0 = 1.0, traced_slope
    s1 = 1.0 - (m0 - gpu_slope) / knobs
    m1 = model_slope(s1)
    for _ in range(4):
        if abs(m1 - gpu_slope) < 1 or m1 == m0:
            break
        s0, m0, s1 = s1, m1, s1 - (m1 - gpu_slope) * (s1 - s0) / (m1 - m0)
        m1 = model_slope(s1)
    scale = s1
    diffs = [r["cta0_cycles"]["first_tma"] - loads(r, scale)[0] for r in rows]  # then the start, with them scaled
    return {"prologue_source": PROLOGUE, "prologue_points": len(diffs),
            "prologue_first_tma": statistics.median(r["cta0_cycles"]["first_tma"] for r in rows),
            "prologue_cycles": statistics.median(diffs), "load_slope_pairs": len(pairs),
            "load_slope_gpu": gpu_slope, "load_slope_traced": traced_slope,
            "load_slope_model": m1, "producer_scale": scale,
            "load_slope_shapes": sorted({f"{a['M']}x{a['N']}x{a['K']} -> {b['M']}x{b['N']}x{b['K']}" for _, a, b, _ in pairs})}


# Where the load warp bounds K2's k-loop: CTA tiles 128x64, whose k-block of wgmmas takes the SM's tensor pipe 256
# cycles (128 x 64 x 64 MACs at 2048 a cycle), against K2's load warp's ~380-470 (its two TMA loads and bookkeeping).
LOAD_BOUND_TILE_N = 64


def load_warp_pairs():
    """(machine, row, row, cycles per k-block) for every two points of K2's sweeps that differ only in K (and the
    raster's rows, clipped to the grid) where the load warp bounds the k-loop (LOAD_BOUND_TILE_N, 3 or more stages) and
    each CTA has one tile (a single wave: no tile's start or epilogue between k-blocks): the growth of the kernel's
    cycles (time at its measured clock) per k-block added."""
    groups = {}
    for _, gpu, p in load_points():
        if (p["tile_n"] == LOAD_BOUND_TILE_N and p["stages"] > 2 and p["cluster_m"] == 1 and not p.get("one_per_tile")
                and p.get("clock_mhz_median") and p["tiles"] <= p["grid"]):
            groups.setdefault((gpu, p["schedule"], p["tile_m"], p["stages"], p.get("data")), []).append(p)
    out = []
    for (gpu, *_), ps in sorted(groups.items(), key=str):
        ps.sort(key=lambda p: p["k_blocks"])
        for a, b in zip(ps, ps[1:]):
            if b["k_blocks"] > a["k_blocks"]:
                out.append((gpu, a, b, (kernel_cycles(b) - kernel_cycles(a)) / (b["k_blocks"] - a["k_blocks"])))
    if not out:
        sys.exit("no two K2 sweep points to measure the load warp's k-block by (load_warp_pairs)")
    return out


# K2 at three builds timed in turns (two rounds) on one H100 on 2026-12-07: without Params::clocks, with the clock
# checks of 2026-12-02 in its load loop, and with the check of 2026-12-07 added; held out (nothing is fitted to it).
CLOCK_CHECKS = "validation/results/h100/k2_clock_checks"
CLOCK_CHECK_BUILDS = (("base", "without clock checks (df7613b)"), ("old", "with those of 2026-12-02 (8fe90d4)"),
                      ("new", "with [19] added (0232ebf)"))


def clock_check_slopes(smpipe, measured):
    """Per build and configuration: K2's cycles per k-block added from the smallest K to the largest on 512x1024 (one
    wave), the mean of the rounds; for the build without clock checks the model's too, at the points' clocks."""
    out = []
    for build, _ in CLOCK_CHECK_BUILDS:
        by = {}
        for _, gpu, run in load_runs(os.path.join(CLOCK_CHECKS, f"ab_{build}_*.json")):
            for x in run["rows"]:
                if x.get("ok") and x["M"] == 512 and x["N"] == 1024:
                    by.setdefault((x["schedule"], x["tile_m"], x["tile_n"], x["stages"]), {}).setdefault(x["K"], []).append(x)
        for (schedule, tm, tn, stages), ks in sorted(by.items()):
            lo, hi = ks[min(ks)], ks[max(ks)]
            cyc = lambda xs: statistics.mean(kernel_cycles(x) for x in xs)
            row = {"build": build, "config": f"{'coop' if schedule == 'cooperative' else 'pp'} {tm}x{tn} s{stages}",
                   "shapes": f"512x1024x{min(ks)} -> 512x1024x{max(ks)}",
                   "gpu_slope": (cyc(hi) - cyc(lo)) / (hi[0]["k_blocks"] - lo[0]["k_blocks"])}
            if build == "base":  # the first round's points, at their clocks, with the calibrated knobs
                row["model_slope"] = slope_of(smpipe, gpu, lo[0], hi[0], measured)
            out.append(row)
    return out


def clock_check_lines(rows):
    """The markdown of clock_check_slopes."""
    if not rows:
        return []
    configs = list(dict.fromkeys(r["config"] for r in rows))  # in the rows' order
    by = {(r["build"], r["config"]): r for r in rows}
    shapes = rows[0]["shapes"]
    bound = [c for c in configs if c.split()[1].endswith(f"x{LOAD_BOUND_TILE_N}") and ("base", c) in by]
    cost = [by[(b, c)]["gpu_slope"] - by[("base", c)]["gpu_slope"] for c in bound for b, _ in CLOCK_CHECK_BUILDS[1:]
            if (b, c) in by]
    err = [100 * abs(by[("base", c)]["model_slope"] / by[("base", c)]["gpu_slope"] - 1) for c in bound]
    intro = ("The load warp's k-block, held out: K2 built three ways and timed in turns on one H100 (`" + CLOCK_CHECKS
             + "`), " + ", ".join(f"{b} {what}" for b, what in CLOCK_CHECK_BUILDS) + f"; cycles per k-block added from "
             f"{shapes} (one wave: no tile's start or epilogue in between), and the model's for the build without clock "
             f"checks. The clock checks cost the load warp {min(cost):.0f}-{max(cost):.0f} cycles a k-block; where it "
             f"bounds the loop (128x{LOAD_BOUND_TILE_N}) the model, scaled on other points (above), is within "
             f"{max(err):.1f} % of K2 without them:")
    lines = ["", *textwrap.wrap(intro, 116), "",
             "| config | " + " | ".join(f"K2 {b}" for b, _ in CLOCK_CHECK_BUILDS) + " | model |",
             "|---|" + "---:|" * (len(CLOCK_CHECK_BUILDS) + 1)]
    for c in configs:
        model = f'{by[("base", c)]["model_slope"]:.0f}' if ("base", c) in by else "-"
        lines.append(f"| {c} | " + " | ".join(f'{by[(b, c)]["gpu_slope"]:.0f}' if (b, c) in by else "-"
                                               for b, _ in CLOCK_CHECK_BUILDS) + f" | {model} |")
    return lines


def kernel_cycles(p):
    """A K2 sweep point's time in SM cycles at its measured clock."""
    return 1000 * p["ms_median"] * p["clock_mhz_median"]


def slope_of(smpipe, gpu, a, b, measured, scale=None):
    """The model's cycles per k-block added from point a to b (each at its measured clock), with the load warp's
    knobs at `scale` times the traces' (None: the measured scale)."""
    c = [predict(smpipe, gpu, p, p["clock_mhz_median"], defines(p, measured, producer_scale=scale))["cycles"] for p in (a, b)]
    return (c[1] - c[0]) / (b["k_blocks"] - a["k_blocks"])


def warm_start(measured):
    """PROLOGUE_WARM_CYCLES: the CTA's start on an SM that ran an earlier CTA of the launch. K2's np points (WARM_START)
    whose last CTA started after WARM_START_MIN_NS (a later wave: its SM ran others first): CTA 0's first TMA load
    less the last CTA's, each from its own entry, the median, taken off PROLOGUE_CYCLES (the same code runs before
    the first load in both)."""
    with open(os.path.join(ROOT, WARM_START)) as f:
        run = json.load(f)
    d = [r["cta0_cycles"]["first_tma"] - r["last_cta"]["first_tma"] for r in run["rows"]
         if r.get("ok") and r.get("one_per_tile") and r["last_cta"]["start_ns"] > WARM_START_MIN_NS]
    delta = statistics.median(d)
    return {"warm_start_source": WARM_START, "warm_start_points": len(d), "warm_start_sooner": delta,
            "warm_start_sooner_range": [min(d), max(d)], "prologue_warm_cycles": measured["prologue_cycles"] - delta}


def fusion_mma_speed():
    """The conversion's speed beside the other warpgroup's wgmmas, in % (validation/calibration/pp_conversion.py)."""
    with open(os.path.join(ROOT, PP_CONVERSION)) as f:
        return round(json.load(f)["mma_speed_percent"])


def instruction_knobs(measured, producer_scale=None):
    """The models' knobs of K2's measured instruction costs but the conversion (FUSION_CYCLES); the load warp's scaled
    to its k-block without the probe (cta_start; `producer_scale` instead of the measured factor)."""
    scale = producer_scale if producer_scale is not None else measured.get("producer_scale", 1)
    knobs = {f"{name.upper()}_CYCLES": max(0, round(measured[f"{name}_cycles"] * (scale if name in PRODUCER_GROUPS else 1)))
             for name, _ in INSTRUCTION_GROUPS}
    if "prologue_cycles" in measured:  # measured with the others in place (cta_start)
        knobs["PROLOGUE_CYCLES"] = max(0, round(measured["prologue_cycles"]))
    if "prologue_warm_cycles" in measured:  # warm_start
        knobs["PROLOGUE_WARM_CYCLES"] = max(0, round(measured["prologue_warm_cycles"]))
    return knobs


def stale_defaults(measured):
    """The sm90 models' default instruction costs that differ from K2's measured ones (they are the defaults,
    but for FUSION_CYCLES: docs/models.md); an empty list when all are in step."""
    want = instruction_knobs(measured)
    out = []
    for path in MODELS.values():
        with open(os.path.join(ROOT, path)) as f:
            text = f.read()
        for name, value in want.items():
            m = re.search(rf"^param {name} = (-?\d+)", text, re.M)
            if not m or int(m.group(1)) != value:
                out.append(f"{path}: {name} = {m.group(1) if m else 'missing'}, K2 measures {value}")
    return out


def cutlass_defines(p):
    """The model parameters of a CUTLASS configuration: its shape, tile, cluster and stage count (0: the
    builder's StageCountAutoCarveout, which the models compute), alpha = 1 and beta = 0 with C given (the
    epilogue keeps its C buffers, loads no C); everything else at the model's defaults, CUTLASS's raster
    heuristic among them."""
    return {"M": p["M"], "N": p["N"], "K": p["K"], "TILE_M": p["tile"][0], "TILE_N": p["tile"][1],
            "TILE_K": p["tile"][2], "CLUSTER_M": p["cluster"][0], "CLUSTER_N": p["cluster"][1],
            "STAGES": p["stages_param"], "BETA_ZERO": 1}


def sustained(p):
    """The --clock mode of a point's data: the sustained clock under load with random or constant operands."""
    return "sustained" if p.get("data", "random") == "random" else "sustained-constant"


SEED = None  # --seed: every prediction with this seed (smpipe's --seed) instead of smpipe's default


def run_model(smpipe, model, gpu, defs, clock=None, mode=None, extra=()):
    """One smpipe run of `model` with -D defs on machine `gpu`, at --clock-mhz `clock` or --clock `mode` (and the
    options `extra`): its JSON, or {"error": its last line} when it fails."""
    cmd = [smpipe, "run", model, "--gpu", gpu, "--json"] + (["--clock-mhz", f"{clock:.0f}"] if clock else []) + \
        (["--clock", mode] if mode else []) + list(extra) + (["--seed", str(SEED)] if SEED is not None else [])
    for k, v in defs.items():
        cmd += ["-D", f"{k}={v}"]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        lines = (r.stdout + r.stderr).strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {r.returncode}"}
    return json.loads(r.stdout)


def predict(smpipe, gpu, p, clock, defs, mode=None):
    j = run_model(smpipe, MODELS[p["schedule"]], gpu, defs, clock, mode)
    if "error" in j:
        return j
    units = {u["name"]: u["utilisation"] for u in j.get("units", [])}
    return {"us": j["time_us"], "cycles": j["cycles"], "launch_us": j.get("launch_us", 0), "clock_mhz": j["clock_mhz"],
            "stages": j.get("reports", {}).get("stages"), "bytes_loaded": j.get("bytes_loaded"),
            "l2_merged_bytes": j.get("l2_merged_bytes"), "hbm_bytes": j.get("hbm_bytes"),
            "bottleneck": j.get("bottleneck", ""), "l2_hit": (j["l2_hit_bytes"] / max(1, j["l2_hit_bytes"] + j["l2_miss_bytes"]))
            if "l2_hit_bytes" in j else None, "units": units}


K1 = "validation/results/h100/k1_b2b.json"
K1_FUSED = "models/kernels/sm80/b2b_gemm_smem_accumulator.pipe"
# K1 with beta1 = 1 and beta1 = 0 (its epilogue then reads no C1), timed in one session (2026-11-28).
K1_BETA = (("validation/results/h100/k1_b2b_beta1.json", 1), ("validation/results/h100/k1_b2b_beta0.json", 0))
# Tile widths tried for each unfused GEMM (the model's fastest is its prediction: cuBLASLt's choice is not known).
K1_TILE_N = (64, 128, 256)
# K1 launched after kernels that leave the L2 clean or dirty (k1_b2b --lt-launches, its k1_start; H100, 2026-12-07).
K1_START = "validation/results/h100/k1_start/k1_lt_launches.json"


def k1_predictions(smpipe, ex):
    """K1 (the project's sm80 back-to-back GEMM) and the same two GEMMs unfused (cuBLASLt, two launches with their
    bias/ReLU and C epilogues fused), on the GPU and in the models, at the SM clock nvidia-smi read while K1 ran
    (taken for the unfused GEMMs too: they ran interleaved with K1) and at the sustained clock. Unfused: GEMM0
    (M x N0 x K0, bias + ReLU, no C) and GEMM1 (M x N1 x N0, C read) with the sm90 cooperative model at the fastest
    of K1_TILE_N, each with its own launch."""
    with open(os.path.join(ROOT, K1)) as f:
        run = json.load(f)
    q = run["params"]
    smi = re.search(r"P0, (\d+) MHz, \d+ MHz, \d+ MHz, \d+ MHz, ([\d.]+) W", run["nvidia_smi"]["while_k1_runs"])
    clock = float(smi.group(1)) if smi else None
    gemms = [{"M": q["M"], "N": q["N0"], "K": q["K0"], "C_VOID": 1}, {"M": q["M"], "N": q["N1"], "K": q["N0"]}]
    fused_defs = {"M": q["M"], "N0": q["N0"], "K0": q["K0"], "N1": q["N1"], "STAGES": q["stages"]}
    out = {"source": K1, "clock_mhz": clock, "watts": float(smi.group(2)) if smi else None,
           "gpu_us": {k: 1000 * run["timing"][k]["ms_median"] for k in ("fused", "cublaslt", "baseline")}}
    for key, c, mode in (("at_measured_clock", clock, None), ("at_sustained_clock", None, "sustained")):
        if key == "at_measured_clock" and not clock:
            out[key] = {"error": "no clock measured"}
            continue
        jobs = [(K1_FUSED, fused_defs)] + [(MODELS["cooperative"], dict(g, TILE_N=t)) for g in gemms for t in K1_TILE_N]
        res = list(ex.map(lambda j: run_model(smpipe, j[0], "h100-sxm", j[1], c, mode), jobs))
        fused = res[0]
        if "error" in fused or fused["outcome"] != "finished":
            out[key] = {"error": f'fused: {fused.get("error", fused.get("outcome"))}'}
            continue
        unfused = []
        for g in range(len(gemms)):
            done = [(r["time_us"], t, r["clock_mhz"]) for r, t in zip(res[1 + g * len(K1_TILE_N):1 + (g + 1) * len(K1_TILE_N)], K1_TILE_N)
                    if "error" not in r and r["outcome"] == "finished"]
            unfused.append(min(done) if done else None)
        if not all(unfused):
            out[key] = {"error": "an unfused GEMM finished at no tile width"}
            continue
        out[key] = {"fused_us": fused["time_us"], "fused_clock_mhz": fused["clock_mhz"], "unfused_us": sum(u[0] for u in unfused),
                    "unfused_gemms": [{"us": u[0], "tile_n": u[1], "clock_mhz": u[2]} for u in unfused]}
    out["start"] = k1_start_predictions(smpipe, fused_defs)
    out["beta"] = []
    for path, beta in K1_BETA:
        with open(os.path.join(ROOT, path)) as f:
            b = json.load(f)
        m = re.search(r"P0, (\d+) MHz", b["nvidia_smi"]["while_k1_runs"])
        c = float(m.group(1)) if m else None
        r = run_model(smpipe, K1_FUSED, "h100-sxm", dict(fused_defs, BETA=beta), c, None if c else "sustained")
        out["beta"].append({"source": path, "beta": beta, "clock_mhz": c, "gpu_us": 1000 * b["timing"]["fused"]["ms_median"],
                            "model_us": r.get("time_us"), "error": r.get("error")})
    return out


def k1_start_predictions(smpipe, fused_defs):
    """K1 between two events after a kernel that leaves the L2 clean (a 256 MiB read of another buffer) or dirty (a fill
    of D's bytes), after GEMM1's call and after K1 itself, against the model started cold (--l2 cold) and as the fill
    leaves the L2 (--l2 dirty:BYTES), at the clock nvidia-smi read in that run."""
    path = os.path.join(ROOT, K1_START)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        run = json.load(f)
    st = run["k1_start"]
    m = re.search(r"P0, (\d+) MHz", run["nvidia_smi"])
    clock = float(m.group(1)) if m else None
    out = {"source": K1_START, "clock_mhz": clock, "fill_bytes": st["fill_bytes"],
           "gpu_us": {k: 1000 * st[k] for k in ("after_clean_read", "after_fill", "after_gemm1", "after_k1")},
           "gpu_p10_p90_us": {k: [1000 * v for v in st[k + "_p10_p90"]] for k in ("after_clean_read", "after_fill", "after_gemm1", "after_k1")}}
    for key, extra in (("cold", ("--l2", "cold")), ("dirty", ("--l2", f'dirty:{st["fill_bytes"]}'))):
        r = run_model(smpipe, K1_FUSED, "h100-sxm", fused_defs, clock, None if clock else "sustained", extra)
        out[key] = {"error": r.get("error") or r.get("outcome")} if "error" in r or r["outcome"] != "finished" else \
            {"us": r["time_us"], "clock_mhz": r["clock_mhz"], "hbm_busy": {u["name"]: u["utilisation"] for u in r.get("units", [])}.get("HBM bandwidth")}
    return out


def k1_start_markdown(st):
    """The K1 section's table of K1 started after a clean and a dirty L2, on the GPU and in the model."""
    if not st or "us" not in st["cold"] or "us" not in st["dirty"]:
        return []
    g, cold, dirty = st["gpu_us"], st["cold"]["us"], st["dirty"]["us"]
    mib = st["fill_bytes"] / 2 ** 20
    def err(m, x):
        return f'{100 * (m / x - 1):+.1f} %'
    clock = (f'H100 at {st["clock_mhz"]:.0f} MHz; the model at that clock' if st["clock_mhz"]
             else "no clock recorded; the model at the sustained clock")
    lines = ["", f'K1 started after what the kernel before it leaves in the L2 (`{st["source"]}`, `k1_b2b --lt-launches`: one K1 '
             f'launch between two events, medians of 1,000 in a busy stream, {clock}, `--l2 cold` and `--l2 dirty:BYTES`):', "",
             "| K1 launched after | GPU | p10-p90 | model | error |", "|---|---|---|---|---|",
             f'| a kernel reading 256 MiB of another buffer (the L2 clean) | {g["after_clean_read"]:.1f} us | '
             f'{st["gpu_p10_p90_us"]["after_clean_read"][0]:.1f}-{st["gpu_p10_p90_us"]["after_clean_read"][1]:.1f} | '
             f'{cold:.1f} us (`--l2 cold`) | {err(cold, g["after_clean_read"])} |',
             f'| a fill of {mib:.0f} MiB, D\'s size (the L2 dirty) | {g["after_fill"]:.1f} us | '
             f'{st["gpu_p10_p90_us"]["after_fill"][0]:.1f}-{st["gpu_p10_p90_us"]["after_fill"][1]:.1f} | '
             f'{dirty:.1f} us (`--l2 dirty:{st["fill_bytes"]}`) | {err(dirty, g["after_fill"])} |',
             f'| GEMM1\'s cuBLASLt call (as in the rounds above) | {g["after_gemm1"]:.1f} us | '
             f'{st["gpu_p10_p90_us"]["after_gemm1"][0]:.1f}-{st["gpu_p10_p90_us"]["after_gemm1"][1]:.1f} | | |',
             f'| K1 itself | {g["after_k1"]:.1f} us | {st["gpu_p10_p90_us"]["after_k1"][0]:.1f}-{st["gpu_p10_p90_us"]["after_k1"][1]:.1f} | | |',
             "", f'The GPU pays {g["after_fill"] - g["after_clean_read"]:.1f} us ({100 * (g["after_fill"] / g["after_clean_read"] - 1):.1f} %) '
             f'for the dirty start, about what the `dirtystart` microbenchmark\'s streaming read pays for the ~22 MiB a kernel '
             f'leaves dirty (0.40-0.47 us per MiB, validation/microbench/README.md); the model {dirty - cold:+.1f} us '
             f'(HBM {100 * (st["cold"]["hbm_busy"] or 0):.0f} % busy cold, {100 * (st["dirty"]["hbm_busy"] or 0):.0f} % dirty).']
    model_cost, gpu_cost = dirty - cold, g["after_fill"] - g["after_clean_read"]
    if abs(model_cost) < 0.25 * gpu_cost:
        lines[-1] += (' Its write-backs share HBM with K1\'s reads, which leave room for them, so they cost K1 almost nothing. The '
                      'rounds above time K1 after GEMM1\'s call, a dirty start: there the model\'s error is the sum of a K1 '
                      f'{err(cold, g["after_clean_read"])} off from a clean L2 and a dirty start that costs it almost nothing. Why '
                      'the GPU pays for write-backs that a bandwidth share would hide is not established (a miss that must wait '
                      'for its line\'s write-back is one mechanism a next model could test against `dirtystart`).')
    return lines


# K1 where the run recorded what cuBLASLt ran (each GEMM timed alone, its kernels listed by Nsight Compute).
K1_KERNELS = (("validation/results/h200/k1_b2b.json", "validation/results/h200/k1_ncu_kernels.csv", "h200"),
              ("validation/results/h100/k1_lt/k1_b2b.json", "validation/results/h100/k1_lt/k1_ncu_kernels.csv", "h100-sxm"))
# cuBLASLt's sm90 kernel names: nvjet_sm90_<types>_<tile M'>x<tile N'>_<K>x<stages>_<cluster M'>x<cluster N'>_..._<epilogue>_<layout>.
NVJET = re.compile(r"nvjet_sm90_\w+?_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)_.*?_(relubias|relu)_[TN]{3}$")


def k1_ncu_kernels(path):
    """The cuBLASLt kernels of K1's GEMM0 (bias + ReLU epilogue) and GEMM1 (ReLU, C) in an Nsight Compute CSV, with
    their tiles, stages and clusters turned to the models' view, and each kernel's median duration and SM clock (K1's
    own kernel's too). cuBLAS is column-major: its M' is the models' N and its N' the models' M, so a M'xN' tile is
    TILE_N x TILE_M and a cluster c'm x c'n is CLUSTER_N x CLUSTER_M. A kernel named `coop` (cooperative: its two
    consumer warpgroups split the tile) runs the cooperative model in that view; one without runs the pingpong model
    (CUTLASS's other persistent warp-specialized schedule: each consumer warpgroup a whole tile) on the problem as
    cuBLAS sees it (D' = D transposed: M' x N'), where its wgmmas are m64 along M' as the kernel's are ("view":
    "cublas"; a 64-row M' tile has no 128-row split in the models' view)."""
    import statistics
    rows = {}
    with open(os.path.join(ROOT, path)) as f:
        for launch in ncu_csv.launches(f).values():
            for metric, value in launch.items():
                if metric != "Kernel Name":
                    rows.setdefault(launch["Kernel Name"], {}).setdefault(metric, []).append(value)
    out = {}
    for name, m in rows.items():
        stats = {"ncu_us": statistics.median(m["gpu__time_duration.sum"]) / 1000,
                 "ncu_clock_mhz": statistics.median(m["sm__cycles_elapsed.avg.per_second"]) / 1e6, "kernel": name}
        g = NVJET.match(name)
        if g:
            tm_, tn_, tk, st, cm_, cn_, epi = g.groups()
            if "_coop" in name:
                stats.update(schedule="cooperative", view="model", TILE_M=int(tn_), TILE_N=int(tm_), TILE_K=int(tk), STAGES=int(st),
                             CLUSTER_M=int(cn_), CLUSTER_N=int(cm_))
            else:
                stats.update(schedule="pingpong", view="cublas", TILE_M=int(tm_), TILE_N=int(tn_), TILE_K=int(tk), STAGES=int(st),
                             CLUSTER_M=int(cm_), CLUSTER_N=int(cn_))
            key = "gemm0" if epi == "relubias" else "gemm1"
            if key in out:
                sys.exit(f"{path}: two cuBLASLt kernels for {key} ({out[key]['kernel']}, {name})")
            out[key] = stats
        elif name.startswith("k1::k1_b2b_kernel"):
            out["fused"] = stats
    missing = [k for k in ("fused", "gemm0", "gemm1") if k not in out]
    if missing:
        sys.exit(f"{path}: no kernel for {', '.join(missing)} (K1's own, and cuBLASLt's nvjet kernels with the relubias and relu "
                 "epilogues)")
    return out


def k1_kernel_predictions(smpipe, ex):
    """K1 against the two GEMMs unfused where the run recorded cuBLASLt's kernels: each GEMM predicted with the
    cooperative or pingpong model (k1_ncu_kernels) at the tile, stages and cluster cuBLASLt ran (its nvjet kernels are not
    CUTLASS's, but have the same warp-specialized form: a load warp, two consumer warpgroups, a TMA ring of that many
    stages), at the SM clock
    Nsight Compute measured during that kernel and at the sustained clock, against its time alone between events."""
    out = []
    for source, ncu, gpu in K1_KERNELS:
        with open(os.path.join(ROOT, source)) as f:
            run = json.load(f)
        q, t = run["params"], run["timing"]
        kern = k1_ncu_kernels(ncu)
        entry = {"source": source, "ncu": ncu, "gpu": gpu, "gpu_us": {
            "fused": 1000 * t["fused"]["ms_median"], "cublaslt": 1000 * t["cublaslt"]["ms_median"],
            "gemm0": 1000 * t["cublaslt_gemm0"]["ms_median"], "gemm1": 1000 * t["cublaslt_gemm1"]["ms_median"]},
            "kernels": kern}
        fused = ("fused", K1_FUSED, {"M": q["M"], "N0": q["N0"], "K0": q["K0"], "N1": q["N1"], "STAGES": q["stages"]})
        gemms = [("gemm0", {"M": q["M"], "N": q["N0"], "K": q["K0"], "C_VOID": 1}), ("gemm1", {"M": q["M"], "N": q["N1"], "K": q["N0"]})]

        def view(k, d):  # the problem as the kernel's view has it (cuBLAS's: M and N swapped)
            return dict(d, M=d["N"], N=d["M"]) if kern[k]["view"] == "cublas" else d
        # Each job: its key, the kernel whose measured clock it runs at, the model, its -D params and further options.
        jobs = [fused[:1] + fused + ((),)] + [(k, k, MODELS[kern[k]["schedule"]],
                                               dict(view(k, d), **{a: kern[k][a] for a in ("TILE_M", "TILE_N", "TILE_K", "STAGES", "CLUSTER_M", "CLUSTER_N")}), ())
                                              for k, d in gemms]
        # GEMM0 as the round-robin runs it, after GEMM1's call: the L2 holds none of its tensors but GEMM1's stores of D
        # (M x N1 bf16), dirty (--l2 dirty: at most the share of the L2 a kernel leaves dirty, l2_dirty_left_share).
        entry["gemm1_d_bytes"] = q["M"] * q["N1"] * 2
        jobs.append(("gemm0_after_gemm1",) + jobs[1][1:4] + (("--l2", f'dirty:{entry["gemm1_d_bytes"]}'),))
        for key, mode in (("at_ncu_clock", None), ("at_sustained_clock", "sustained")):
            res = list(ex.map(lambda j: run_model(smpipe, j[2], gpu, j[3], None if mode else kern[j[1]]["ncu_clock_mhz"], mode, j[4]),
                              jobs))
            bad = [j[0] for j, r in zip(jobs, res) if "error" in r or r["outcome"] != "finished"]
            if bad:
                entry[key] = {"error": f'{", ".join(bad)}: ' + "; ".join(r.get("error", r.get("outcome", "")) for r in res if "error" in r or r.get("outcome") != "finished")}
                continue
            entry[key] = {j[0]: {"us": r["time_us"], "clock_mhz": r["clock_mhz"], "launch_us": r.get("launch_us"),
                                 "l2_dirty_start_bytes": r.get("l2_dirty_start_bytes")} for j, r in zip(jobs, res)}
            entry[key]["unfused"] = {"us": entry[key]["gemm0"]["us"] + entry[key]["gemm1"]["us"]}
        out.append(entry)
    return out


def k1_markdown(k):
    g = k["gpu_us"]
    clocks = [("at_measured_clock", "the measured clock"), ("at_sustained_clock", "the sustained clock")]
    ok = [(key, name) for key, name in clocks if "fused_us" in k[key]]
    smi = f'nvidia-smi read the SM clock at {fmt(k["clock_mhz"], ".0f")} MHz and {fmt(k["watts"], ".0f")} W while K1 ran' \
        if k["clock_mhz"] else "no SM clock was recorded"
    lines = ["", "## K1: the fused back-to-back GEMM against the same GEMMs unfused", "",
             f'K1 (validation/kernels: CUTLASS example 13\'s sm80 structure, mma.sync and cp.async, 3 stages, 64-row CTAs) on '
             f'its reference problem, and the same two GEMMs as two cuBLASLt launches with their bias/ReLU and C epilogues '
             f'fused (`{k["source"]}`: CUDA events, medians of 50 interleaved rounds; {smi}). smpipe predicts K1 with '
             "`sm80/b2b_gemm_smem_accumulator` (its defaults are K1's) and each unfused GEMM with the sm90 cooperative model "
             f'at the fastest of its tile widths {", ".join(map(str, K1_TILE_N))} (cuBLASLt\'s own choice is not recorded), each '
             "with its own launch cost; the measured clock is K1's, the unfused GEMMs ran interleaved with it.", "",
             "| | GPU | " + " | ".join(f"model at {name} | error" for _, name in clocks) + " |",
             "|---|---|" + "---|---|" * len(clocks)]

    def cell(key, field, measured):
        x = k[key]
        if field not in x:
            return f'{x.get("error", "-")} | -'
        return f'{x[field]:.1f} us | {100 * (x[field] / measured - 1):+.1f} %'

    def faster(f, u):
        return "fused faster" if f < u else "unfused faster" if u < f else "a tie"

    gpu_order = faster(g["fused"], g["cublaslt"])
    lines.append(f'| fused (K1, one launch) | {g["fused"]:.1f} us | ' + " | ".join(cell(key, "fused_us", g["fused"]) for key, _ in clocks) + " |")
    lines.append(f'| unfused (two cuBLASLt GEMMs) | {g["cublaslt"]:.1f} us | ' +
                 " | ".join(cell(key, "unfused_us", g["cublaslt"]) for key, _ in clocks) + " |")
    orders = []
    for key, _ in clocks:
        x = k[key]
        if "fused_us" in x:
            o = faster(x["fused_us"], x["unfused_us"])
            orders.append(f'{o} | {"right" if o == gpu_order else "wrong"}')
        else:
            orders.append("- | -")
    lines.append(f'| faster | {gpu_order} ({max(g["fused"], g["cublaslt"]) / min(g["fused"], g["cublaslt"]):.2f}x) | ' + " | ".join(orders) + " |")
    if ok:
        margin = max(abs(k[key]["fused_us"] / k[key]["unfused_us"] - 1) for key, _ in ok)
        errs = [abs(k[key][f] / g[m] - 1) for key, _ in ok for f, m in (("fused_us", "fused"), ("unfused_us", "cublaslt"))]
        if margin < min(errs):
            lines += ["", f'The model puts the two within {100 * margin:.1f} % of each other, less than its smallest error here '
                      f'({100 * min(errs):.1f} %): an order it gets right is not a prediction of it.']
        s = k["at_sustained_clock"]
        if "unfused_gemms" in s:
            tiles = ", ".join(f'GEMM{i} TILE_N {u["tile_n"]} ({u["us"]:.1f} us at {u["clock_mhz"]:.0f} MHz)' for i, u in enumerate(s["unfused_gemms"]))
            lines += ["", f'At the sustained clock the unfused GEMMs are {tiles}; K1 runs at {s["fused_clock_mhz"]:.0f} MHz.']
        signs = [(k[key]["fused_us"] / g["fused"] - 1, k[key]["unfused_us"] / g["cublaslt"] - 1) for key, _ in ok]
        if all(f < 0 and u < 0 for f, u in signs):
            worse = "on K1 most" if all(f < u for f, u in signs) else "on the unfused GEMMs most"
            lines += ["", f"The model is too fast on both, {worse}. K1 is bound by the latency of its warps' own instruction "
                      "streams (Nsight Compute, `validation/results/h100/k1_ncu.txt`: issue slots 17 % busy, 0.2 of 1.9 warps per "
                      "scheduler eligible, half of the stalls on global-memory scoreboards), which the sm80 model has only as "
                      "two `compute` estimates (docs/models.md, \"How far to trust the numbers\")."]
    if k.get("beta") and all(b["model_us"] for b in k["beta"]):
        b1, b0 = k["beta"]
        lines += ["", "K1 with and without its epilogue's C1 loads (beta1 = 1 and 0; the same session, 2026-11-28, "
                  f'`{b1["source"]}`, `{b0["source"]}`; the model at the clock nvidia-smi read, with `-D BETA`). Its copies and '
                  "its epilogue's loads and stores hold the SM's load/store path for the lines and sectors each instruction "
                  "touches (8 rows of 16 bytes per 4-byte load or store, 8 rows of 64 bytes per 16-byte copy: "
                  "`validation/results/h100/l1.json`, docs/reference.md, \"The SM's load/store path\"; Nsight Compute counts "
                  "the same, `validation/results/h100/k1_ncu_l1.txt`: 8 sectors in 8 lines per load and store instruction, 16 "
                  "sectors and 8 wavefronts per copy).", "",
                  "| beta1 | GPU | model | error |", "|---|---|---|---|"]
        for b in k["beta"]:
            lines.append(f'| {b["beta"]} | {b["gpu_us"]:.1f} us | {b["model_us"]:.1f} us | {100 * (b["model_us"] / b["gpu_us"] - 1):+.1f} % |')
        lines += ["", f'Without the C1 loads the GPU is {100 * (1 - b0["gpu_us"] / b1["gpu_us"]):.1f} % faster, the model '
                  f'{100 * (1 - b0["model_us"] / b1["model_us"]):.1f} %: on the GPU most of the loads\' time in the path overlaps '
                  "other work of the SM's two CTAs (Nsight Compute puts them at 8 wavefronts each, ~10 % of the kernel's "
                  "cycles), in the model much less of it. K1's probe (`validation/results/h100/k1_probe_summary.json`) shows "
                  "where the GPU's time goes: per warp a CTA takes 31.1k cycles, a GEMM0 k-tile 961 on average (the model's "
                  "copies land sooner: ~706), epilogue 1 8.1k; without the C1 loads epilogue 1 is 3.8k cycles shorter but "
                  "the SM's other CTA's mainloop slower, so the CTA only 2.0k (docs/models.md)."]
    if k["clock_mhz"] and "fused_clock_mhz" in k["at_sustained_clock"] and k["clock_mhz"] > k["at_sustained_clock"]["fused_clock_mhz"]:
        lines += ["", f'The GPU ran K1 at {k["clock_mhz"]:.0f} MHz ({fmt(k["watts"], ".0f")} W), above the sustained clock of '
                  f'{k["at_sustained_clock"]["fused_clock_mhz"]:.0f} MHz: K1 (mma.sync, timed over milliseconds of launches) did '
                  "not bring the clock down as the wgmma microbenchmark's 330 ms on every SM did."]
    lines += k1_start_markdown(k.get("start"))
    lines += ["", "Goal (issue 11): the right order, each within 10 %."]
    return [ln for para in lines for ln in (textwrap.wrap(para, 110, break_on_hyphens=False) if para and not para.startswith(("|", "#")) else [para])]


CLUSTER_START = "validation/results/h100/cluster_start.json"


def cluster_launch_sentence():
    """What a launch costs by cluster size (the microbenchmarks' `clusterstart` group: as many clusters as fit, back to
    back), as a sentence for the K1 sections: the launch cost does not explain the GEMMs' gaps between events."""
    with open(os.path.join(ROOT, CLUSTER_START)) as f:
        ms = {m["name"]: m for m in json.load(f)["measurements"] if m.get("status") == "ok"}
    pat = re.compile(r"hier_launch_(?:cluster(\d+)_fit|plain_grid\d+)_smem200KB_mbar16_b2b_overhead_us$")
    sizes = sorted((int(g.group(1) or 1), m["median"]) for n, m in ms.items() if (g := pat.match(n)))
    if not sizes:
        return ""
    lo, hi = min(v for _, v in sizes), max(v for _, v in sizes)
    return (f' A launch does not cost more in clusters (`{CLUSTER_START}`, the H100, back to back, as many clusters as fit: '
            + ", ".join(f'{"no clusters" if k == 1 else f"clusters of {k}"} {v:.2f} us' for k, v in sizes)
            + f'; {hi - lo:.2f} us apart), so the launch cost does not explain the gap of GEMM0.')


def lt_launches_sentence(e, key):
    """What one cublasLtMatmul call puts on the GPU and costs back to back (k1_b2b --lt-launches, beside the run's
    JSON), against the model's GEMMs at `key`; empty when the run has no such file."""
    path = os.path.join(os.path.dirname(e["source"]), "k1_lt_launches.json")
    if not os.path.exists(os.path.join(ROOT, path)):
        return ""
    with open(os.path.join(ROOT, path)) as f:
        gemms = {g["gemm"]: g for g in json.load(f)["gemms"]}
    if set(gemms) != {0, 1}:
        return ""
    def ops(g):
        return " and ".join(f'a memset of {n["bytes"]} bytes' if n["type"] == "memset" else "the kernel" if n["type"] == "kernel"
                            else f'a node of type {n["type"]}' for n in g["nodes"])
    ms = {i: {k: 1000 * v for k, v in g["ms"].items()} for i, g in gemms.items()}
    model = {i: e[key][f"gemm{i}"]["us"] for i in (0, 1)}
    same = ops(gemms[0]) == ops(gemms[1])
    out = (f' Each cublasLtMatmul call puts {len(gemms[0]["nodes"])} operations on the GPU (`{path}`: a CUDA graph captured '
           f'from one call): {ops(gemms[0])}' + ("" if same else f' (GEMM1: {ops(gemms[1])})') + '. Timed per call on a stream '
           f'of their own (GEMM0, GEMM1): {ms[0]["single"]:.1f} and {ms[1]["single"]:.1f} us for one call between two events '
           f'after the last one ended (the host\'s call in the time), {ms[0]["batch"]:.1f} and {ms[1]["batch"]:.1f} us each for '
           f'20 calls between two events, {ms[0]["graph_batch"]:.1f} and {ms[1]["graph_batch"]:.1f} us each for a graph of 20 '
           '(these leave the L2 otherwise than the round-robin above: GEMM1 does not follow GEMM0 there).')
    if all("back_to_back" in g for g in gemms.values()):
        b = {i: {k: 1000 * v for k, v in g["back_to_back"].items() if k != "what"} for i, g in gemms.items()}
        added = {i: b[i]["memset_and_kernel"] - b[i]["kernel"] for i in (0, 1)}
        out += (f' Back to back in a busy stream, between two events, GEMM0\'s call takes {b[0]["memset_and_kernel"]:.1f} us, '
                f'its kernel alone {b[0]["kernel"]:.1f} and the memset alone {b[0]["memset"]:.1f} (GEMM1: '
                f'{b[1]["memset_and_kernel"]:.1f}, {b[1]["kernel"]:.1f} and {b[1]["memset"]:.1f}): the memset, which the model '
                f'does not run, adds {added[0]:.1f} and {added[1]:.1f} us to a call. Against the kernel alone back to back the '
                f'model\'s GEMM0 is {100 * (model[0] / b[0]["kernel"] - 1):+.1f} % off and its GEMM1 '
                f'{100 * (model[1] / b[1]["kernel"] - 1):+.1f} %, so what the round-robin adds to GEMM0 is neither the memset '
                'nor the launch but the work before it in the round (validation/kernels/README.md, K1).')
        if "after_gemm1" in b[0] and "gemm0_after_gemm1" in e[key]:
            after = e[key]["gemm0_after_gemm1"]
            out += (f' Timed back to back after GEMM1\'s call instead, as in the round, GEMM0\'s call takes '
                    f'{b[0]["after_gemm1"]:.1f} us, and after a kernel that only writes '
                    f'{gemms[0]["back_to_back"]["fill_bytes"] / 1e6:.1f} MB '
                    f'{b[0]["after_fill"]:.1f} us: what costs GEMM0 is the stores of the kernel before it, which the L2 holds '
                    'dirty and writes back to HBM while GEMM0 streams A0 (the microbenchmark group `dirtystart` measures this '
                    'on a streaming read, validation/results/h100/dirtystart*.json: the cost grows with the bytes written up '
                    'to about 22 MiB and no further, the share of the L2 a kernel leaves dirty, the machine file\'s '
                    f'`l2_dirty_left_share`). Started as GEMM1 leaves the L2 (`--l2 dirty:{e["gemm1_d_bytes"]}`, GEMM1\'s D: '
                    f'{(after.get("l2_dirty_start_bytes") or 0) / 1e6:.1f} MB of it held dirty), the model\'s GEMM0 takes '
                    f'{after["us"]:.1f} us at {after["clock_mhz"]:.0f} MHz, {100 * (after["us"] / b[0]["after_gemm1"] - 1):+.1f} % '
                    f'off the call after GEMM1\'s (its memset included) and {100 * (after["us"] / e["gpu_us"]["gemm0"] - 1):+.1f} % '
                    'off GEMM0 in the round-robin above.')
    else:
        out += (f' Against 20 calls back to back the model\'s GEMM0 (one launch, no memset) is '
                f'{100 * (model[0] / ms[0]["batch"] - 1):+.1f} % off and its GEMM1 {100 * (model[1] / ms[1]["batch"] - 1):+.1f} %.')
    return out


def dirty_start_sentence(e, key):
    """GEMM0 started as GEMM1 leaves the L2 (--l2 dirty) against the timed rounds' GEMM0, for a run without the
    call-level timing of k1_b2b --lt-launches (whose sentence says more)."""
    after = e[key].get("gemm0_after_gemm1")
    if not after:
        return ""
    return (f' In the timed rounds GEMM0 follows GEMM1, whose stores of D the L2 holds dirty and writes back while GEMM0 '
            f'runs (measured on the H100: validation/kernels/README.md, K1). Started so (`--l2 dirty:{e["gemm1_d_bytes"]}`, '
            f'{(after.get("l2_dirty_start_bytes") or 0) / 1e6:.1f} MB held dirty) the model\'s GEMM0 takes {after["us"]:.1f} us '
            f'at {after["clock_mhz"]:.0f} MHz, {100 * (after["us"] / e["gpu_us"]["gemm0"] - 1):+.1f} % off the rounds\' '
            f'{e["gpu_us"]["gemm0"]:.1f} us (started cold: {100 * (e[key]["gemm0"]["us"] / e["gpu_us"]["gemm0"] - 1):+.1f} %).')


def k1_kernels_markdown(entries):
    """The K1 runs that recorded cuBLASLt's kernels: each GEMM against its model at cuBLASLt's own configuration."""
    lines = []
    for e in entries:
        g, k = e["gpu_us"], e["kernels"]
        keys = [("at_ncu_clock", "the clock measured during the kernel"), ("at_sustained_clock", "the sustained clock")]
        lines += ["", f'### {e["gpu"]}: each cuBLASLt GEMM at the tile, stages and cluster cuBLASLt ran', "",
                  f'`{e["source"]}` times each cuBLASLt GEMM alone too (CUDA events, in the same rounds), and records what '
                  f'cuBLASLt\'s heuristic chose; `{e["ncu"]}` names the kernels and the SM clock Nsight Compute measured during '
                  "each (its durations, medians of the launches it profiled, come after an L2 flush and leave out the launch's "
                  "own cost). The models take each GEMM's tile, stages and cluster from the kernel's name. cuBLASLt's "
                  "nvjet kernels are not CUTLASS's; what their names show is the tile, the stages, the cluster and whether "
                  "the two consumer warpgroups split a tile (`coop`, as CUTLASS's cooperative kernel does). A `coop` kernel "
                  "runs the cooperative model in the models' view (cuBLAS is column-major: its M'xN' tile is TILE_N x "
                  "TILE_M, as its cluster); the rest is the model's: its consumer warpgroups split the problem's M where "
                  "nvjet's may split N (`coopA`), and they issue m64 wgmmas along the problem's M where nvjet's are m64 "
                  "along M' (GEMM0 on the H200: 3 x m64n64 per k16 where nvjet issues one m64n192). A kernel without "
                  "`coop` runs the pingpong model, CUTLASS's other persistent warp-specialized schedule (each consumer "
                  "warpgroup a whole tile), on the problem as cuBLAS sees it (M' x N', its tile TILE_M x TILE_N), "
                  "where its wgmmas are m64 along M' as the kernel's are (a 64-wide M' tile has no 128-row split in the "
                  "models' view). The persistent grid is CUTLASS's in either.", "",
                  "| | kernel | GPU (events) | Nsight Compute | " + " | ".join(f"model at {n} | error" for _, n in keys) + " |",
                  "|---|---|---|---|" + "---|---|" * len(keys)]

        def cell(key, part, measured):
            x = e[key]
            if "error" in x:
                return f'{x["error"]} | -'
            return f'{x[part]["us"]:.1f} us ({x[part]["clock_mhz"]:.0f} MHz) | {100 * (x[part]["us"] / measured - 1):+.1f} %' \
                if "clock_mhz" in x[part] else f'{x[part]["us"]:.1f} us | {100 * (x[part]["us"] / measured - 1):+.1f} %'
        for part, label, measured in (("fused", "K1 (one launch)", g["fused"]), ("gemm0", "GEMM0 alone (bias + ReLU)", g["gemm0"]),
                                      ("gemm1", "GEMM1 alone (C1 + ReLU)", g["gemm1"]), ("unfused", "GEMM0 + GEMM1", g["cublaslt"])):
            kk = k.get(part, {})
            whose = "cuBLAS's" if kk.get("view") == "cublas" else "the models'"
            name = f'`{kk["kernel"]}` ({kk["schedule"]}, {whose} view)' \
                if part.startswith("gemm") else "K1's" if part == "fused" else "the two, one after the other"
            ncu = f'{kk["ncu_us"]:.1f} us at {kk["ncu_clock_mhz"]:.0f} MHz' if "ncu_us" in kk else "-"
            lines.append(f"| {label} | {name} | {measured:.1f} us | {ncu} | " + " | ".join(cell(key, part, measured) for key, _ in keys) + " |")
        ok = [key for key, _ in keys if "error" not in e[key]]
        if ok:
            gpu_order = "fused faster" if g["fused"] < g["cublaslt"] else "unfused faster"
            orders = ["fused faster" if e[key]["fused"]["us"] < e[key]["unfused"]["us"] else "unfused faster" for key in ok]
            lines += ["", f'The GPU runs the unfused pair {g["fused"] / g["cublaslt"]:.2f}x as fast as K1 ({gpu_order}); the model '
                      + ("gets the order at both clocks" if all(o == gpu_order for o in orders) else "gets the order wrong at "
                         + ", ".join(n for (key, n), o in zip(keys, orders) if o != gpu_order))
                      + f'. Between events each GEMM takes {g["gemm0"] - k["gemm0"]["ncu_us"]:.1f} (GEMM0) and '
                      f'{g["gemm1"] - k["gemm1"]["ncu_us"]:.1f} us (GEMM1) more than Nsight Compute\'s kernel duration; the model '
                      f'adds its launch cost, {e[ok[0]]["gemm0"]["launch_us"]:.2f} us, to each.' + cluster_launch_sentence()
                      + (lt_launches_sentence(e, ok[0]) or dirty_start_sentence(e, ok[0]))]
    return [ln for para in lines for ln in (textwrap.wrap(para, 110, break_on_hyphens=False) if para and not para.startswith(("|", "#")) else [para])]


def clock_errors(rows, measured="clock_mhz"):
    """Per GPU and data: how far the modelled sustained clock is from the clock the GPU ran each point at (for
    CUTLASS, the clock Nsight Compute measured during the kernel: its probe reads the clock after it)."""
    out = {}
    for r in rows:
        x = r.get("at_sustained_clock", {})
        if "clock_mhz" in x and r.get(measured):
            out.setdefault(f'{r["gpu"]} {r["data"]}', []).append((x["clock_mhz"] - r[measured]) / r[measured])
    return {k: {"points": len(v), "mean_abs_pct": 100 * sum(abs(e) for e in v) / len(v),
                "mean_signed_pct": 100 * sum(v) / len(v)} for k, v in sorted(out.items())}


def spearman(xs, ys):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r
    if len(xs) < 2:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return num / den if den else None


def load_runs(pattern):
    """(path relative to the root, machine, run) of every committed result file matching `pattern` whose GPU
    has a machine file; a run names its GPU as a string or as {"name": ...}."""
    for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
        with open(path) as f:
            run = json.load(f)
        name = run["gpu"]["name"] if isinstance(run["gpu"], dict) else run["gpu"]
        gpu = next((m for k, m in MACHINES.items() if k in name), None)
        if gpu is not None:
            yield os.path.relpath(path, ROOT), gpu, run


def timed_points(pattern):
    """(path, machine, row) of every checked and timed row of those files."""
    return [(path, gpu, p) for path, gpu, run in load_runs(pattern) for p in run["rows"] if p.get("ok") and p.get("ms_median")]


def load_points():
    return timed_points("validation/results/*/k2_sweep*.json")


def load_cutlass():
    return timed_points("validation/results/*/cutlass_gemm.json")


def label(p):
    s = f'{"coop" if p["schedule"] == "cooperative" else "pp"} {p["tile_m"]}x{p["tile_n"]}x{p["tile_k"]} s{p["stages"]}'
    if p["cluster_m"] > 1:
        s += f' c{p["cluster_m"]}x1'
    s += f' g{p["raster_group"]}'
    if p.get("one_per_tile"):
        s += " np"
    return s


def shape(p):
    return f'{p["M"]}x{p["N"]}x{p["K"]}'


def summarise(rows, key):
    """MAPE, mean signed error, per-shape Spearman and best-config picks of the predictions under `key`."""
    ok = [r for r in rows if "us" in r[key]]
    errs = [(r[key]["us"] - r["measured_us"]) / r["measured_us"] for r in ok]
    out = {"points": len(rows), "predicted": len(ok),
           "mape_pct": 100 * sum(abs(e) for e in errs) / len(errs) if errs else None,
           "mean_signed_pct": 100 * sum(errs) / len(errs) if errs else None,
           "max_abs_pct": 100 * max(abs(e) for e in errs) if errs else None}
    groups = {}
    for r in ok:
        groups.setdefault((r["gpu"], r["data"], r["shape"]), []).append(r)
    per_shape = []
    for (gpu, data, sh), g in sorted(groups.items()):
        if len(g) < 2:
            continue
        rho = spearman([r["measured_us"] for r in g], [r[key]["us"] for r in g])
        best = min(g, key=lambda r: r["measured_us"])
        pick = min(g, key=lambda r: r[key]["us"])
        per_shape.append({"gpu": gpu, "data": data, "shape": sh, "configs": len(g), "spearman": rho,
                          "best": best["config"], "picked": pick["config"],
                          "picked_slower_pct": 100 * (pick["measured_us"] / best["measured_us"] - 1)})
    rhos = [s["spearman"] for s in per_shape if s["spearman"] is not None]
    out["spearman_mean"] = sum(rhos) / len(rhos) if rhos else None
    out["shapes"] = len(per_shape)
    out["picks_within_3pct"] = sum(1 for s in per_shape if s["picked_slower_pct"] <= 3.0)
    out["per_shape"] = per_shape
    return out


S2_TRACES = "validation/results/h100/k2_traces_s2"


def two_stage_lines():
    """What K2's 2-stage traces (held out: nothing is measured from them) say about a latency-bound ring."""
    rows = []
    for path in sorted(glob.glob(os.path.join(ROOT, S2_TRACES, "k2_trace_*_s2.json"))):
        lat = stage_latency(os.path.relpath(path, ROOT))
        if lat:
            rows.append((lat[len(lat) // 2], lat[int(0.9 * len(lat))]))
    if not rows:
        return []
    med, p90 = [r[0] for r in rows], [r[1] for r in rows]
    return ["- With 2 stages the ring is latency-bound: in K2's 2-stage traces (`" + S2_TRACES + f"`, {len(rows)} of them,",
            f"  held out) a stage's data lands {min(med)}-{max(med)} cycles (medians; p90 {min(p90)}-{max(p90)}) after its last TMA load",
            "  while its consumers wait, and every instruction before a stage's loads or before its release adds to",
            "  the round trip: the models place K2's own instructions where its traces show them",
            "  (`PRODUCER_ACQUIRE_CYCLES` ... `CONSUMER_STAGE_CYCLES` above). The rest of the 2-stage error is the",
            "  load latency under load: a stage of two 16 KB boxes lands in ~810 cycles on the H200 when every SM loads,",
            "  from a third to two thirds of the L2's rate, and in 657 on one SM. The model has it since 2026-11-29 as",
            "  measured on SMs of one GPC loading together: a stage's second box waits `tma_gpc_latency_cycles` per other",
            "  SM of its GPC that loads, at most `tma_gpc_latency_max_cycles` (846 cycles when every SM loads; before,",
            "  649 at any load short of the L2's bandwidth), and a plain launch spreads a smaller grid over the GPCs as",
            "  the GPU's block scheduler does (docs/simulator.md; `think_latency_*`, `gpc_*`, validation/microbench/README.md)."]


def held_out_summary(m, shapes="shapes"):
    """A held-out set's figures at the measured clock (`m`: its summarise())."""
    return (f"MAPE {fmt(m['mape_pct'])} %, mean signed {fmt(m['mean_signed_pct'], '+.1f')} %, Spearman "
            f"{fmt(m['spearman_mean'], '.2f')}, the fastest predicted within 3 % on {m['picks_within_3pct']} of {m['shapes']} {shapes}.")


def held_out_table(points, data_column):
    """A held-out set's points at the measured clock, one table row each (with the data column when asked)."""
    cols = (["data"] if data_column else []) + ["shape", "config", "clock", "measured", "predicted", "error", "model's bottleneck"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in points:
        x = r["at_measured_clock"]
        err = f"{error_pct(r, 'at_measured_clock'):+.1f} %" if "us" in x else x.get("error", "-")
        lines.append("| " + (f'{r["data"]} | ' if data_column else "") +
                     f'{r["shape"]} | {r["config"]} | {fmt(r["clock_mhz"], ".0f")} | {r["measured_us"]:.1f} | '
                     f'{fmt(x.get("us"))} | {err} | {x.get("bottleneck", "-").split(" (")[0]} |')
    return lines


def overhang_markdown(o):
    """The K2 points whose tiles reach past N (held out): each at the measured clock, and their summary."""
    if not o or not o["points"]:
        return []
    m = o["at_measured_clock"]
    lines = ["", "## Tiles that reach past N (K2, held out)", "",
             f"K2 on shapes whose N is not a multiple of its CTA tile (`{OVERHANG}`, {m['points']} points, H200; beside them",
             "65536x256x1024, where every row is inside): every B box of the last tile column reaches past the tensor, and",
             "TMA fills those rows with zeros. The L2 answers them",
             "at `l2_oob_bytes_per_cycle` (measured alone: validation/microbench/README.md, \"Boxes outside their tensor\";",
             "nothing here is fitted to these points). At the measured clock: " + held_out_summary(m, "shapes and data"),
             "", *held_out_table(o["points"], data_column=True)]
    lines += ["", "The 2x1-cluster points stay too fast: their B half beyond N is a multicast load, which the model charges as a",
              "unicast byte times `l2_multicast_read_cost`, while the microbenchmark's multicast fill costs the whole GPU 3.8",
              "times a unicast one (and K2 does not slow down that much: validation/microbench/README.md). The 2- and 3-stage",
              "points share the sweep's latency-under-load error (above)."]
    return lines


def one_per_tile_markdown(o):
    """K2's np points (held out) at the measured clock, and their summary."""
    if not o or not o["points"]:
        return []
    m = o["at_measured_clock"]
    lines = ["", "## One CTA per tile (K2, held out)", "",
             f"K2 with its `np` knob (`{WARM_START}`, {m['points']} points, H200): a grid of one CTA per tile",
             "instead of the persistent one, beside persistent controls (the same configs without `np`). Its CTAs start in",
             "waves as earlier ones exit, each paying the CTA's start (`PROLOGUE_CYCLES`, or `PROLOGUE_WARM_CYCLES` on an",
             "SM that ran one before) and the placement (`cta_launch_cycles`), and with 2 stages the register file",
             "(`regs=168`: 384 threads, CUTLASS's setmaxnreg split) holds one CTA per SM where shared memory would hold",
             "two. The models run it with `PERSISTENT=0`; nothing is fitted to these times. The pingpong rows share the",
             "pingpong model's short-K error (above).",
             "At the measured clock: " + held_out_summary(m),
             "", *held_out_table(o["points"], data_column=False)]
    return lines


def groups(points):
    """Groups of points that share a mechanism, for the error breakdown."""
    def stages(r):
        return int(r["config"].split(" s")[1].split()[0])
    yield "2 stages", [r for r in points if stages(r) == 2]
    yield "3 stages", [r for r in points if stages(r) == 3]
    yield "4+ stages, tile N 256", [r for r in points if stages(r) >= 4 and "x256x" in r["config"]]
    yield "4+ stages, tile N 128", [r for r in points if stages(r) >= 4 and "x128x" in r["config"]]
    yield "4+ stages, tile N 64", [r for r in points if stages(r) >= 4 and "x64x" in r["config"]]
    yield "2x1 clusters", [r for r in points if "c2x1" in r["config"]]
    yield "pingpong", [r for r in points if r["config"].startswith("pp")]
    yield "random data", [r for r in points if r["data"] == "random"]
    yield "constant data", [r for r in points if r["data"] == "const"]


def fmt(v, spec=".1f"):
    return "-" if v is None else format(v, spec)


def config_errors(points, config, shapes=None):
    """The errors (%) at the measured clock of one configuration's points (on `shapes` only, when given)."""
    return [error_pct(r, "at_measured_clock") for r in points
            if r["config"] == config and (shapes is None or r["shape"] in shapes) and "us" in r["at_measured_clock"]]


def pick_loss_lines(summary, n=2):
    """The shapes where the predicted fastest config loses most against the measured fastest (prose lines)."""
    worst = sorted((r for r in summary["per_shape"] if r["picked_slower_pct"] > 3), key=lambda r: -r["picked_slower_pct"])[:n]
    if not worst:
        return []
    said = "; ".join(f'{r["gpu"]} {r["data"]} {r["shape"]}: {r["picked"]} against {r["best"]}, {r["picked_slower_pct"]:.1f} % slower'
                     for r in worst)
    return textwrap.wrap(f"The largest losses of a pick at the measured clock: {said}.", 108, initial_indent="  ",
                         subsequent_indent="  ", break_on_hyphens=False)


def skinny_range(points, config):
    """The range of one configuration's errors (%) on the skinny shapes, at the measured clock."""
    errs = config_errors(points, config, ("256x8192x8192", "8192x256x8192"))
    return f"{min(errs):+.0f} to {max(errs):+.0f} %" if errs else "no points"


def config_signed(points, config):
    """Mean signed error (%) at the measured clock of the points of one configuration."""
    errs = config_errors(points, config)
    return sum(errs) / len(errs) if errs else float("nan")


def markdown(data):
    a, b, c = data["at_measured_clock"], data["at_nominal_clock"], data["at_sustained_clock"]
    conv = data["kernel_instructions"]
    lines = [
        "# Accuracy against the GPU",
        "",
        "Generated by `python3 validation/calibration/accuracy.py build/smpipe` from the committed K2 sweeps (H100:",
        "`validation/results/h100/k2_sweep.json`; H200: `validation/results/h200/k2_sweep.json`, 260 points each, and",
        f"`{PP_SWEEP}`, {sum(1 for r in data['points'] if r.get('source') == PP_SWEEP)} points) and",
        f'CUTLASS runs (`validation/results/<gpu>/cutlass_gemm.json`, {data["cutlass"]["at_measured_clock"]["points"]} points: section',
        "\"CUTLASS's own kernels\" below); a test (`accuracy_report_is_current`) fails when the models, the machine",
        "files or the data change without it (it simulates anew one point of every GPU's configuration and data, every",
        "short-K and K1 run, and takes the other points from this report; `accuracy.py build/smpipe --check` checks all).",
        "",
        "| | K2 (the project's kernel, its own instruction costs) | CUTLASS (the models' defaults, at the probe's clock) |",
        "|---|---|---|",
        f'| MAPE at the measured clock | {fmt(a["mape_pct"])} % | {fmt(data["cutlass"]["at_measured_clock"]["mape_pct"])} % |',
        f'| mean signed error | {fmt(a["mean_signed_pct"], "+.1f")} % | {fmt(data["cutlass"]["at_measured_clock"]["mean_signed_pct"], "+.1f")} % |',
        f'| Spearman of the configs per shape | {fmt(a["spearman_mean"], ".2f")} | {fmt(data["cutlass"]["at_measured_clock"]["spearman_mean"], ".2f")} |',
        f'| fastest predicted within 3 % of the best | {a["picks_within_3pct"]} of {a["shapes"]} | {data["cutlass"]["at_measured_clock"]["picks_within_3pct"]} of {data["cutlass"]["at_measured_clock"]["shapes"]} |',
        f'| MAPE at the sustained clock (the default of smpipe: no GPU needed) | {fmt(c["mape_pct"])} % | {fmt(data["cutlass"]["at_sustained_clock"]["mape_pct"])} % |',
        f'| MAPE at the nominal clock | {fmt(b["mape_pct"])} % | {fmt(data["cutlass"]["at_nominal_clock"]["mape_pct"])} % |',
        "",
        "K2 is the project's own sm90 warp-specialized persistent GEMM (validation/kernels), built to the same",
        "structure as CUTLASS's cooperative and pingpong kernels. Each point of a sweep is one configuration",
        "(schedule, CTA tile, stages, cluster, raster order) on one shape, timed on the GPU with CUDA events",
        "(median of the runs), with the SM clock it ran at measured inside the kernel. smpipe predicts each point",
        "with the matching model (`gemm_tma_ws_cooperative.pipe` or `gemm_tma_ws_pingpong.pipe`, parameters in",
        "`validation/calibration/accuracy.py`) on the machine file of that GPU. No parameter is fitted to these",
        "points: the machine files come from microbenchmarks and the K2 parameters below from K2's traces, separate",
        "(probe-on) runs of one configuration (cooperative 128x256x64, 4 stages, groups of 8 rows) at 2048^3 and",
        "8192^3 on the H100; the timed points of that configuration on those shapes are the only ones that share",
        "its source. The H200's points share nothing but the epilogue conversion's speed beside wgmmas (a ratio",
        "within K2's pingpong hardware traces on the H200, probe-on runs apart from the timed points, below).",
        "",
        "Twelve parameters describe K2 itself rather than the GPU: its own instructions between pipeline ops, which",
        "the models have as `compute` ops, each where it stands in the loop, and how the epilogue's conversion shares",
        "the SM with wgmmas, and the CTA's start. The first ten are measured in K2's hardware",
        f'traces (beta = 0, as in the sweeps; {conv["kblocks"]} k-blocks of two shapes): per interval, the hardware mean less the',
        "replay's, which holds the model's op costs and the probe's own cycles per event (docs/replay.md); so they",
        "also hold any error of the machine file's op costs in those intervals (the single issuing thread's TMA",
        "issue is slower than the burst microbenchmark's, and that difference lands in the producer's); the load",
        "warp's three are scaled to K2's k-block measured without the probe, and the CTA's start is measured so too.",
        f'- `FUSION_CYCLES`: the epilogue\'s conversion of a subtile (`{conv["conversion_interval"]}`: {conv["conversion_trace_mean"]:.0f} cycles',
        f'  on the GPU, {conv["probe_cycles"]:.0f} of them the probe\'s), {conv["conversion_per_element"]:.1f} cycles per accumulator element a',
        f'  consumer thread converts; every point\'s subtile gives each thread 16 elements: {round(conv["conversion_per_element"] * 16)} cycles.',
        f'  The conversion keeps `FUSION_MMA_SPEED` = {fusion_mma_speed()} % of its speed while the SM\'s tensor pipe runs wgmmas',
        "  (`compute ... mma_speed=`): in K2's pingpong traces on the H200 (`validation/results/h200/k2_pp_traces`,",
        "  `validation/calibration/pp_conversion.py`) a subtile's conversion takes 1112 cycles (median) while the other",
        "  warpgroup's wgmmas run and 820 while they do not; the wgmmas beside it each take `wgmma_beside_alu_cycles`",
        "  (42, the `issue` microbenchmarks) longer. A cooperative epilogue runs while no wgmma does; a pingpong one",
        "  runs beside the other warpgroup's mainloop, and both slow down.",
        "- A k-block of the load warp beyond its acquire and its two TMA loads, where the traces put them, their sum",
        f'  scaled by {conv["producer_scale"]:.3f} so that the model\'s k-loop grows as K2\'s does where the load warp bounds it:',
        f'  CTA tiles 128x{LOAD_BOUND_TILE_N} (their wgmmas take 256 cycles a k-block) on one wave, K2\'s sweeps (built without',
        "  Params::clocks) from " + ", ".join(conv["load_slope_shapes"]) + f' ({conv["load_slope_pairs"]} pairs: both GPUs and data),',
        f'  median {conv["load_slope_gpu"]:.0f} cycles per k-block added, against the model\'s {conv["load_slope_traced"]:.0f} with the',
        f'  traces\' values and {conv["load_slope_model"]:.0f} scaled (with the probe\'s records taken out at their mean cost the',
        "  traces hold more than the kernel without them takes; K2's first pass of the ring, timed by Params::clocks, is",
        "  no measure of it: K2 built with those clock checks in its load loop ran 6-15 % more cycles at the 128x64 and",
        "  2-stage points, `validation/results/h200/k2_prologue` against `k2_sweep.json`; `validation/results/h100/k2_steady`):",
        *(f'  `{name.upper()}_CYCLES` = {max(0, round(conv[name + "_cycles"] * conv["producer_scale"]))} {where} '
          f'({round(conv[name + "_cycles"])} in the traces: '
          + ", ".join(f"`{k}`" for k in conv[name + "_gaps"]) + ")" + end
          for name, where, end in (("producer_acquire", "after the acquire, before the first load", ";"),
                                   ("producer_load", "between the loads", ";"),
                                   ("producer_stage", "after the last load", "."))),
        "- A k-block of a consumer warp beyond its wait, MMAs and release:",
        *(f'  `{name.upper()}_CYCLES` = {round(conv[name + "_cycles"])} {where} ('
          + ", ".join(f"`{k}`" for k in conv[name + "_gaps"]) + ")" + end
          for name, where, end in (("consumer_issue", "after the wait, before the MMAs", ";"),
                                   ("consumer_release", "after the MMA wait, before the release", ";"),
                                   ("consumer_stage", "after the release", "."))),
        f'- `TILE_CYCLES` = {max(0, round(conv["tile_cycles"]))}: a tile of a consumer warp outside its k-blocks and subtiles',
        "  (" + ", ".join(f"`{k}`" for k in conv["tile_gaps"]) + "), less the first subtile's conversion.",
        f'- `SUBTILE_CYCLES` = {round(conv["subtile_cycles"])}: a subtile of a consumer warp after its st.shared'
        " (" + ", ".join(f"`{k}`" for k in conv["subtile_gaps"]) + ");",
        f'  `STORE_CYCLES` = {round(conv["store_cycles"])}: the store thread\'s around its TMA store'
        " (" + ", ".join(f"`{k}`" for k in conv["store_gaps"]) + ").",
        f'- `PROLOGUE_CYCLES` = {round(conv["prologue_cycles"])}: the CTA\'s start in every warp before its role\'s first op',
        "  (tensor-map prefetch, barrier init and fence, the CTA's sync, setmaxnreg, the first tile's set-up). Measured",
        "  without the capture probe, which would add its records: K2 with `Params::clocks` stores CTA 0's clock64 at its",
        f'  first TMA load (`{conv["prologue_source"]}`, `validation/kernels/run_k2_prologue.sh`, H200, the',
        "  GH100 SM of the H100 too), from its entry: median " + f'{conv["prologue_first_tma"]:.0f} cycles over the',
        f'  {conv["prologue_points"]} points with 1x1 clusters up to 2048^3, less the model\'s own cycles before its first',
        "  load (the acquire's bookkeeping); with 2x1 clusters the GPU took 400-500 cycles more, the model's `cluster.sync`.",
        "  A persistent kernel pays it once per CTA: on a single-wave shape up to a sixth of the time (below).",
        f'- `PROLOGUE_WARM_CYCLES` = {round(conv["prologue_warm_cycles"])}: the same start in a CTA whose SM already ran a CTA of',
        "  the launch (the built-in `sm_ctas_before` > 0: a grid of more CTAs than fit at once, such as the basic",
        "  kernel's): its code and constants are cached. K2 with one CTA per tile (its `np` knob; `" + conv["warm_start_source"] + "`,",
        "  `validation/kernels/run_k2_warm_start.sh`) records the grid's last CTA too: on the "
        f'{conv["warm_start_points"]} points where it started in a',
        f'  later wave it reached its first TMA load {conv["warm_start_sooner"]:.0f} cycles sooner after its entry than CTA 0 (median;',
        f'  {conv["warm_start_sooner_range"][0]:.0f}-{conv["warm_start_sooner_range"][1]:.0f}), less `PROLOGUE_CYCLES` by that.',
        *clock_check_lines(data.get("clock_checks", [])),
        "",
        "Three predictions per point:",
        "- **at the measured clock**: `--clock-mhz` set to the clock the GPU ran the point at. This judges the",
        "  pipeline and memory models alone.",
        "- **at the nominal clock**: `--clock boost`, the machine file's clock (the boost clock). The difference from",
        "  the first is the clock the GPU drops to under load.",
        "- **at the sustained clock**: `--clock sustained` (random data: smpipe's default) or `--clock",
        "  sustained-constant` (constant data): the clock the GPU holds under load, from the machine file's",
        "  clock-under-load measurements (`load_clock_mhz`, `load_clock_random_mhz`: wgmma on every SM, constant and",
        "  random operands) and the tensor-pipe load of the run's first 1 M ops (docs/simulator.md). This is what a",
        "  user gets without a GPU; nothing in it is fitted to these points (the H200 borrows the H100's measurements).",
        "",
        "Every prediction starts with a warm L2 (smpipe's default, `--l2 warm`): both sweeps time back-to-back launches of",
        "one configuration on the same inputs, so the tensors of the shapes that fit in the L2 (1024^3, 512x1024x2048,",
        "2048^3, 4096x4096x512) are there when a timed launch starts. On the H200 a cold L2 costs those shapes 10.5 %",
        "on average (2 stages up to 35 %) and the others nothing (docs/simulator.md, `validation/results/h200/l2_start_compare.json`).",
        "",
        "## Summary",
        "",
        "| | at the measured clock | at the nominal clock | at the sustained clock |",
        "|---|---|---|---|",
        f'| points predicted | {a["predicted"]} of {a["points"]} | {b["predicted"]} of {b["points"]} | {c["predicted"]} of {c["points"]} |',
        f'| mean absolute error (MAPE) | {fmt(a["mape_pct"])} % | {fmt(b["mape_pct"])} % | {fmt(c["mape_pct"])} % |',
        f'| mean signed error (+: predicted slower) | {fmt(a["mean_signed_pct"], "+.1f")} % | {fmt(b["mean_signed_pct"], "+.1f")} % | {fmt(c["mean_signed_pct"], "+.1f")} % |',
        f'| largest error | {fmt(a["max_abs_pct"])} % | {fmt(b["max_abs_pct"])} % | {fmt(c["max_abs_pct"])} % |',
        f'| Spearman of the configs per shape (mean) | {fmt(a["spearman_mean"], ".2f")} | {fmt(b["spearman_mean"], ".2f")} | {fmt(c["spearman_mean"], ".2f")} |',
        f'| shapes where the predicted fastest config is within 3 % of the best | {a["picks_within_3pct"]} of {a["shapes"]} | {b["picks_within_3pct"]} of {b["shapes"]} | {c["picks_within_3pct"]} of {c["shapes"]} |',
        "",
        "The sustained clock against the clock each point ran at (mean absolute and signed difference):",
        "",
        "| GPU and data | points | mean absolute | mean signed |",
        "|---|---|---|---|",
        *(f'| {k} | {v["points"]} | {v["mean_abs_pct"]:.1f} % | {v["mean_signed_pct"]:+.1f} % |' for k, v in data["sustained_clock"].items()),
        "",
        "Goals (issue 11): MAPE <= 5 %, Spearman >= 0.9, the predicted fastest within 3 % on every shape.",
        "",
        "By GPU (the H200's sweep is held out from everything, the K2 measurements above included):",
        "",
        "| GPU | points | MAPE | mean signed error | MAPE at the nominal clock | MAPE at the sustained clock | Spearman | fastest within 3 % |",
        "|---|---|---|---|---|---|---|---|",
    ]
    groups_by_gpu = [(gpu, gpu, lambda r, gpu=gpu: r["gpu"] == gpu) for gpu in sorted({r["gpu"] for r in data["points"]})]
    groups_by_gpu.append(("h200, pingpong check", "h200", lambda r: r.get("source") == PP_SWEEP))
    for label_, gpu, member in groups_by_gpu:
        pts = [r for r in data["points"] if member(r) and predicted_at_every_clock(r)]
        if not pts:
            continue
        e = [error_pct(r, "at_measured_clock") for r in pts]
        en = [error_pct(r, "at_nominal_clock") for r in pts]
        es = [error_pct(r, "at_sustained_clock") for r in pts]
        pshapes = {(r["shape"], r["data"]) for r in pts}
        shapes = [s for s in a["per_shape"] if s["gpu"] == gpu and (s["shape"], s["data"]) in pshapes]
        rhos = [s["spearman"] for s in shapes if s["spearman"] is not None]
        lines.append(f'| {label_} | {len(pts)} | {sum(abs(x) for x in e) / len(e):.1f} % | {sum(e) / len(e):+.1f} % | '
                     f'{sum(abs(x) for x in en) / len(en):.1f} % | {sum(abs(x) for x in es) / len(es):.1f} % | '
                     f'{fmt(sum(rhos) / len(rhos) if rhos else None, ".2f")} | '
                     f'{sum(1 for s in shapes if s["picked_slower_pct"] <= 3.0)} of {len(shapes)} |')
    lines += [
        "",
        "## Per shape (at the measured clock)",
        "",
        "| GPU | data | shape | configs | Spearman | fastest measured | fastest predicted | its loss |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in a["per_shape"]:
        lines.append(f'| {s["gpu"]} | {s["data"]} | {s["shape"]} | {s["configs"]} | {fmt(s["spearman"], ".2f")} | {s["best"]} | '
                     f'{s["picked"]} | {fmt(s["picked_slower_pct"])} % |')
    lines += ["", "## Where the error comes from", "",
              "Mean signed error at the measured clock by group of points (+: the model is slower than the GPU):", "",
              "| group | points | mean signed error | MAPE |", "|---|---|---|---|"]
    signed = {}
    for name, members in groups(data["points"]):
        errs = [100 * (r["at_measured_clock"]["us"] / r["measured_us"] - 1) for r in members if "us" in r["at_measured_clock"]]
        if errs:
            signed[name] = sum(errs) / len(errs)
            lines.append(f"| {name} | {len(errs)} | {signed[name]:+.1f} % | {sum(abs(e) for e in errs) / len(errs):.1f} % |")
    fast = sorted(signed, key=signed.get)
    lines += ["",
              f"- The model is too fast most with {fast[0]} ({signed[fast[0]]:+.1f} %) and too slow most with {fast[-1]}",
              f"  ({signed[fast[-1]]:+.1f} %). Its L2 takes the reads of the two SMs of a TPC that start within",
              "  `l2_combine_window_cycles` of each other as one request, combines a share of the reads of CTAs close",
              "  in launch order (0.62 within an aligned block of 16 CTAs, 0.15 across blocks, by the CTAs on the read: its",
              "  issuer or one of its last joiners) and charges a byte from HBM 1.7 L2 lookups (all",
              "  measured with Nsight Compute: `l2_combine_*`), and a warpgroup's wgmma issue stalls on the tensor pipe's",
              "  queue as measured (`wgmma_issue_*`): large-tile points are bound by the tensor pipe or the L2.",
              worst_errors(data["points"]),
              "  Short-K shapes with large outputs spend their time in the epilogue and the write stream (128 MB of",
              "  D at 8192x8192x256): the GPU streams TMA stores to HBM at 3.1-3.3 TB/s and into the L2 at 4.0 TB/s",
              "  (`hier_store_*`); the models' L2 takes stores at that measured rate, each stored byte at 1.39 of a read's",
              "  share of the L2 (`l2_store_bytes_per_cycle`, `l2_store_cost`), and a dirty block it evicts is written",
              "  back through the HBM queue. The GPU's epilogue barrier and wgmma issue differ from the model's",
              "  (docs/replay.md). The store step itself, measured alone (validation/microbench, group `epilogue`: 256",
              "  threads storing 128x32 subtiles with stmatrix, a fence, two barriers and one thread's TMA store, on the",
              "  H200), is bound on one SM by the TMA store reading the subtile out of shared memory: 270 cycles per",
              "  subtile, 256 in the model; with every SM storing 425, the model 475 (docs/calibration.md).",
              "- The kernel's own instructions between pipeline ops are in, as K2's (above); but for FUSION_CYCLES and",
              "  FUSION_MMA_SPEED they are also the models' defaults (a test keeps the two in step), and a CUTLASS kernel's",
              "  may differ.",
              "- Pingpong at short K: K2's pingpong 128x128 points with K <= 512 are 10-14 % fast, where the two",
              "  warpgroups' epilogues, which alternate, bound the tile. `validation/results/h200/k2_pp_short_k` (2026-12-03)",
              "  shows it does not depend on K below that (8192x8192x64, x128, x256: 166.6, 166.5, 173.0 us; the model 14.3,",
              "  13.9 and 13.4 % fast; the cooperative controls 4.0 % slow). K2's own clocks (no probe) time CTA 0's first",
              "  epilogues: 9.0 K cycles for a pingpong warpgroup's eight subtiles at 8192x8192x256, 7.9 K in the model;",
              "  the cooperative's four 3.5 K, the model 3.6 K. Not the D buffers (StagesD 1, 2, 4 move the GPU and the",
              "  model alike; their addresses move neither), nor K2's runtime index arithmetic (both schedules have it,",
              "  inside the knobs), nor one warpgroup's store step (measured alone with every SM storing: 242 cycles per",
              "  64x32 subtile, the model 238; `epi_wg_*`, validation/microbench/README.md), nor the other warpgroup's",
              "  warps waiting for their turn (waiting warps take no issue slots: `issue_poll_*`). Open: the conversion of",
              "  four warps alone against eight, or a pingpong trace without the probe's spills, would show where.",
              "- The CTA's start (`PROLOGUE_CYCLES`, since 2026-12-02, above): a persistent kernel pays it once per CTA, a",
              "  single-wave shape once per tile (1024^3 with 128x64 tiles: a sixth of the CTA's time). Without it the",
              "  CUTLASS points of the single-wave shapes (1024^3, 512x1024x2048) were 10.6 % and 4.7 % fast on average",
              "  (MAPE 10.8 and 10.1 %) and K2's the same shapes 1.9 % fast and 0.8 % slow: the K2 model's first tile was",
              "  slow by about what the start costs, the load warp's knobs as the traces gave them holding ~10 % more than",
              "  K2's load k-block without the probe. With the start and the knobs scaled to that k-block, the whole report",
              "  went from K2 MAPE 5.1 % (Spearman 0.89, 51 of 58 picks) and CUTLASS 9.5 % (0.86, 37 of 56) to the figures",
              "  above; the start alone gave K2 5.2 % (0.90, 53) and CUTLASS 8.4 % (0.87, 40). The faster load warp costs",
              "  CUTLASS six picks: the model, already 5-22 % fast on 1536x4096x4096, now prefers a 1x2 cluster there (19-20 %",
              "  off the GPU's best), and pingpong 128x64 on the H200's 1024^3 (7-10 %); counting a later reader's distance",
              "  to the nearest CTA on a read (below) took both back, and combining by blocks of 16 lost 1536x4096x4096 again",
              "  (below).",
              "- The load warp's k-block (since 2026-12-07, above): scaled before to K2's first pass of the ring as its",
              "  Params::clocks timed it (469 cycles on the H200), it is now scaled to how K2's kernel time grows per k-block",
              "  where the load warp bounds the loop (386: K2 with those clock checks in its load loop was the slower one).",
              "  The report went from K2 MAPE 4.6 % (5.6 % at the sustained clock; Spearman 0.91, 53 of 58 picks) and CUTLASS",
              "  7.9 % (6.7 %; 0.89, 41 of 56) to the figures above. The 4 pairs it is measured on are 8 of K2's 580 points.",
              "  CUTLASS's small tiles on the single-wave 512x1024x2048 stay slow (cooperative 128x64 +25 -> +18 %, pingpong",
              "  64x128 +28 -> +21 % at the sustained clock): CUTLASS's load warp is leaner still than K2's (K2 takes 12.8 us",
              "  there with 128x64 tiles, CUTLASS 11.5), and the models' other instruction costs are K2's too.",
              *two_stage_lines(),
              "- The clock: the GPU ran these points at 1,300-1,900 MHz (lower with random data than with constant",
              "  data); at the nominal 1,980 MHz the model is that much faster still. The sustained clock follows the",
              "  load and the data but not the time a kernel has run: the longest points (8192^3) ran at 1,300-1,800",
              "  MHz (medians 1,490-1,550 with random data, below the 330 ms microbenchmark's 1,668; 1,780-1,830 with",
              "  constant data): the board heats, and its clock falls further, over seconds of back-to-back launches.",
              f'  At the sustained clock the fastest predicted config is within 3 % on {c["picks_within_3pct"]} of {c["shapes"]} shapes (nominal clock:',
              f'  {b["picks_within_3pct"]}, measured clock: {a["picks_within_3pct"]}): at a lower SM clock the L2, fixed in bytes per second, is',
              "  relatively faster, which favours the L2-bound 128x128 tiles.",
              *pick_loss_lines(a),
              "  On the skinny shapes (one wave of tiles, each B or A tile read by many CTAs at once) the 128x128 points",
              f'  with 4 stages are {skinny_range(data["points"], "coop 128x128x64 s4 g8")} off and with 6 stages '
              f'{skinny_range(data["points"], "coop 128x128x64 s6 g8")}. Until 2026-12-03 a read',
              "  joined another CTA's at the distance of that read's issuer only: there the model combined half to two",
              "  thirds of what the GPU did (the CUTLASS counters below), the 6-stage points came out up to 18 % slow and",
              "  its picks 4 stages where the GPU runs 6 stages 9-14 % faster; a later reader's distance is now to the",
              "  nearest CTA on the read (its issuer or one of its last 8 joiners: their requests are outstanding too; the",
              "  H200's `sharing` microbenchmarks, docs/calibration.md), which took K2 from MAPE 5.0 % (Spearman 0.90, 54",
              "  of 58 picks) to 4.6 % (0.92, 52) and CUTLASS from 8.2 % (0.86, 34 of 56, mean signed -2.5 %) to 8.2 %",
              "  (0.90, 49, -4.9 %). Then CTAs combined by distance (near up to 12 apart); since 2026-12-03 by aligned",
              "  blocks of 16 CTAs in launch order, the rule that fits the H100's pairs at every distance and the H200's",
              "  readers 8-12 apart (docs/simulator.md): K2 4.6 -> 4.6 % (Spearman 0.92 -> 0.90, picks 52 -> 53: the H200's",
              "  const 8192^3 regained), CUTLASS 8.2 -> 8.1 % (0.90 -> 0.90, picks 49 -> 43): it lost 1536x4096x4096 on",
              "  three of four GPU and data pairs, where the 1x1 points rose toward the GPU and the 1x2 cluster, 24 % fast",
              "  there, became the pick. In a launch of clusters the blocks do not hold: there the H200's CTAs of different",
              "  clusters combine at the far share inside a block of 16 too, and what combines beyond a TPC is one GPC's",
              "  SMs (`clusteredge`, docs/simulator.md). With that rule for clusters (later on 2026-12-03; the clusters",
              "  placed on the GPCs in turn, as the GPU places them) the model's combined share on the 32 clustered CUTLASS",
              "  points with Nsight Compute counters on each GPU is 0.043 from the GPU's on average (with the blocks 0.085",
              "  on the H100, 0.095 on the H200; the 88 plain points unchanged, 0.081 and 0.085), K2 went",
              "  4.61 -> 4.56 % (Spearman 0.900 -> 0.904, picks 53 either way) and CUTLASS 8.02 -> 7.93 % (mean signed -4.7 ->",
              "  -4.1 %, Spearman 0.896 -> 0.889, picks 43 -> 41): on 1536x4096x4096 the picks come within 0-4 % of the",
              "  GPU's best on the three pairs (18-20 % before; the 1x2 cluster -8 to -11 % off the GPU now, -17 to -24 %",
              "  before), and 4096x4096x512 is lost on the H100, where the GPU's best, pingpong 128x128 in a 2x1 cluster,",
              "  comes out 15 % slow (+7 % before; pingpong's short-K error below), and on the H200 with random data (4 %),",
              "  as is the H100's constant-data 8192x8192x256 (3 %).",
              "  Since 2026-12-04 a launch of clusters of 2 starts on the GPCs of one TPC (the H200 put its first four",
              "  clusters on SMs 124-131, then one per larger GPC in turn: `multicast_gemm6.json`): K2 4.56 -> 4.56 %",
              "  (Spearman 0.904 -> 0.905, picks 53), CUTLASS 7.93 -> 7.86 % (mean signed -4.1 -> -4.2 %, Spearman",
              "  0.889 -> 0.892, picks 41; at the sustained clock 6.8 -> 6.7 %, picks 44 -> 45).",
              "  Until 2026-11-30 it picked 128x128 tiles with 4 stages in a 2x1 cluster on both skinny shapes, 12-25 % slower than the",
              f'  GPU\'s best (now {skinny_range(data["points"], "coop 128x128x64 s4 c2x1 g8")}): its multicast reads cost its L2 what unicast',
              "  ones do, where the H200's reads multicast boxes 11 % slower (`l2_multicast_read_cost`), and on 8192x256x8192,",
              "  where half the grid's CTAs read each B tile, they combined with the other clusters' reads of it as unicast reads",
              "  do; on the GPU a multicast read gains nothing from them (`l2_multicast_combines`; the `mcast_split_gemm_*`",
              "  microbenchmarks). With fewer",
              "  stages the GPU's ring is latency-bound before the model's is (cooperative 128x128 with 3 stages:",
              f'  {config_signed(data["points"], "coop 128x128x64 s3 g8"):+.1f} % on average at the measured clock).',
              "  K2's traces of the skinny shapes with the probe's k-block sampling (validation/kernels/README.md, \"Skinny",
              "  and tall shapes\") show it at 4 stages: the GPU's first consumer warp waits for data in 89-90 % of the",
              "  k-blocks (median ~500 cycles), at 6 stages in 57-58 % (~270-290), while the model's 4- and 6-stage rings both",
              "  wait ~320-375 cycles on its L2 queue. A fixed longer load latency does not reproduce it (it slows the",
              "  skinny 2-stage points, already 5-9 % slow; `validation/calibration/latency_sensitivity.py`); one growing with the",
              "  L2's load before it saturates, as the `pipe` microbenchmarks show (validation/microbench/README.md), might:",
              "  not built yet.",
              "  The wgmmas' rate is not what the shared memory limits: two warpgroups' wgmmas keep it while TMA loads or a",
              "  warp's st.shared write the same shared memory (`validation/results/h100/smem_port.json`,",
              "  validation/microbench/README.md); the GPU runs the 6-stage points bound by its L2 (below).",
              ]
    lines += overhang_markdown(data.get("overhang"))
    lines += one_per_tile_markdown(data.get("one_per_tile"))
    lines += cutlass_markdown(data["cutlass"], data["points"])
    lines += k1_markdown(data["k1"])
    lines += k1_kernels_markdown(data.get("k1_kernels", []))
    lines += ["", "## Every K2 point", "",
              "Times in microseconds. `clock`: the SM clock measured on the GPU for that point (MHz). The CUTLASS",
              "points are in `validation/results/accuracy.json` (`cutlass.points`).",
              "`sustained`: the prediction at the sustained clock, and that clock.",
              "", "| GPU | data | shape | config | clock | measured | predicted | error | at nominal clock | error | sustained | clock | error | model's bottleneck |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["points"]:
        m, n, su = r["at_measured_clock"], r["at_nominal_clock"], r["at_sustained_clock"]
        def cell(x):
            return (f'{x["us"]:.1f}', f'{100 * (x["us"] / r["measured_us"] - 1):+.1f} %') if "us" in x else ("-", x["error"][:60])
        pm, em = cell(m)
        pn, en = cell(n)
        ps, es = cell(su)
        lines.append(f'| {r["gpu"]} | {r["data"]} | {r["shape"]} | {r["config"]} | {fmt(r["clock_mhz"], ".0f")} | '
                     f'{r["measured_us"]:.1f} | {pm} | {em} | {pn} | {en} | {ps} | {fmt(su.get("clock_mhz"), ".0f")} | {es} | '
                     f'{m.get("bottleneck", "").split(":")[0]} |')
    return "\n".join(lines) + "\n"


def error_pct(r, key):
    return 100 * (r[key]["us"] / r["measured_us"] - 1)


def predicted_at_every_clock(r):
    return all("us" in r[k] for k in ("at_measured_clock", "at_nominal_clock", "at_sustained_clock"))


def cutlass_markdown(c, k2_points=()):
    """The section on CUTLASS's own kernels: predicted with the models' defaults."""
    pts = [r for r in c["points"] if predicted_at_every_clock(r)]
    runs = {path: run for path, _, run in load_runs("validation/results/*/cutlass_gemm.json")}
    any_run = next(iter(runs.values()))
    rows = [p for run in runs.values() for p in run["rows"]]
    configs = sorted({p["config"] for p in rows})
    lines = [
        "", "## CUTLASS's own kernels", "",
        f'CUTLASS\'s sm90 bf16 GEMMs (`GemmUniversal` over the `CollectiveBuilder`\'s mainloop and TMA epilogue; CUTLASS at',
        f'{any_run["cutlass"].split(" at ")[1].split()[0][:7]}), built from CUTLASS\'s source and timed on the GPU by a harness that stays outside the',
        f'repository (it compiles fetched code): {len(configs)} configurations ({", ".join(sorted({p["schedule"] for p in rows}))} schedules;',
        f'CTA tiles {", ".join(sorted({"x".join(map(str, p["tile"])) for p in rows}))}; clusters',
        f'{", ".join(sorted({"x".join(map(str, p["cluster"])) for p in rows}))}; automatic and fixed stage counts) on',
        f'{len({shape(p) for p in rows})} shapes, {" and ".join(sorted({p["data"] for p in rows}))} data, alpha = 1 and beta = 0, CUTLASS\'s default tile scheduler,',
        f'on {" and the ".join(run["gpu"] for run in runs.values())}.',
        f'`validation/results/<gpu>/cutlass_gemm.json` holds every point: the median of {any_run["reps"]} launches timed with CUDA',
        "events, the SM clock read right after each launch by a one-warp probe (clock64 against %globaltimer, pooled",
        "over the launches: the file's `timing`), a check of sampled output elements, and a second run of the sweep.",
        "",
        "Each point is predicted with the matching model at its defaults (`cutlass_defines` in",
        "`validation/calibration/accuracy.py`: shape, tile, cluster, the stage count when fixed, beta = 0): what a",
        "user gets. The kernel's own instruction costs are the models' defaults: K2's measured ones (above: the",
        "only such measurement the project has, of a kernel built to CUTLASS's structure) but for the epilogue's",
        "conversion, FUSION_CYCLES, which stays an estimate (48), and its speed beside wgmmas, FUSION_MMA_SPEED (100: a",
        "conversion that short costs the wgmmas next to nothing, the `issue` microbenchmarks' 128-instruction bursts 4-6 %",
        "of their time, against 25 % for 512-instruction bursts): with K2's the short-K points (K <= 512, bound by",
        f'the epilogue) come out {c["short_k_with_k2_conversion"]["mean_signed_pct"]:+.1f} % on average '
        f'({c["short_k_with_k2_conversion"]["points"]} points, MAPE {c["short_k_with_k2_conversion"]["mape_pct"]:.1f} %), so CUTLASS\'s',
        "conversion is much cheaper than K2's. That choice was made on these points; nothing is fitted to them.",
        "Part of why, found since (`validation/results/h200/k2_pp_short_k`): K2's stage counts are runtime values, and",
        "without ReuseSmemC (every sweep point) each subtile computes its D slot twice by an unsigned modulo and",
        "branches on runtime knobs, ~280-300 cycles per subtile on the epilogue's path (K2 with ReuseSmemC is 15-22 %",
        "faster at 8192x8192x256; a running counter instead of the modulo takes back half); CUTLASS's stage counts",
        "are compile-time constants. K2's epilogue knobs include that cost (not yet split out of them).",
        "Here \"the measured clock\" is the probe's, read after the kernel, not inside it as for K2; see the",
        "comparison with the clock Nsight Compute measured during the kernel below.",
        "",
    ]
    auto = [r for r in pts if next((p for p in rows if p["config"] == r["config"]), {}).get("stages_param") == 0]
    mism = sorted({(r["config"], r["cutlass_stages"], r["at_nominal_clock"].get("stages")) for r in auto
                   if r["at_nominal_clock"].get("stages") != r["cutlass_stages"]})
    n_auto = len({r["config"] for r in auto})
    if mism:
        lines.append("Stage counts that differ from CUTLASS's StageCountAutoCarveout: " +
                     "; ".join(f"{a}: CUTLASS {b}, model {m}" for a, b, m in mism) + ".")
    else:
        lines.append(f"The models' stage counts equal CUTLASS's StageCountAutoCarveout in all {n_auto} configurations that use it.")
    lines += ["", "| GPU | points | MAPE | mean signed error | MAPE at the nominal clock | MAPE at the sustained clock | Spearman | fastest within 3 % | GPU against its second run |",
              "|---|---|---|---|---|---|---|---|---|"]
    a = c["at_measured_clock"]
    for gpu in sorted({r["gpu"] for r in pts}):
        g = [r for r in pts if r["gpu"] == gpu]
        e = [error_pct(r, "at_measured_clock") for r in g]
        en = [error_pct(r, "at_nominal_clock") for r in g]
        es = [error_pct(r, "at_sustained_clock") for r in g]
        rep = [100 * abs(r["repeat_us"] / r["measured_us"] - 1) for r in g]
        shapes = [s for s in a["per_shape"] if s["gpu"] == gpu]
        rhos = [s["spearman"] for s in shapes if s["spearman"] is not None]
        lines.append(f'| {gpu} | {len(g)} | {sum(map(abs, e)) / len(e):.1f} % | {sum(e) / len(e):+.1f} % | '
                     f'{sum(map(abs, en)) / len(en):.1f} % | {sum(map(abs, es)) / len(es):.1f} % | '
                     f'{fmt(sum(rhos) / len(rhos) if rhos else None, ".2f")} | '
                     f'{sum(1 for s in shapes if s["picked_slower_pct"] <= 3.0)} of {len(shapes)} | {sum(rep) / len(rep):.1f} % |')
    lines += ["", "By configuration (both GPUs, at the measured clock; +: the model is slower than the GPU):", "",
              "| configuration | CUTLASS's stages | points | mean signed error | MAPE | model's usual bottleneck |", "|---|---|---|---|---|---|"]
    for cfg in sorted({r["config"] for r in pts}):
        g = [r for r in pts if r["config"] == cfg]
        e = [error_pct(r, "at_measured_clock") for r in g]
        botts = {}
        for r in g:
            b = r["at_measured_clock"].get("bottleneck", "").split("(")[0].strip()
            botts[b] = botts.get(b, 0) + 1
        lines.append(f'| {cfg} | {g[0]["cutlass_stages"]} | {len(g)} | {sum(e) / len(e):+.1f} % | {sum(map(abs, e)) / len(e):.1f} % | '
                     f'{max(sorted(botts), key=lambda b: botts[b])} |')
    lines += ["", "By shape (both GPUs and data, at the measured clock):", "",
              "| shape | points | mean signed error | MAPE |", "|---|---|---|---|"]
    for sh in sorted({r["shape"] for r in pts}, key=lambda x: [int(v) for v in x.split("x")]):
        e = [error_pct(r, "at_measured_clock") for r in pts if r["shape"] == sh]
        lines.append(f"| {sh} | {len(e)} | {sum(e) / len(e):+.1f} % | {sum(map(abs, e)) / len(e):.1f} % |")
    lines += ["", "Per shape (at the measured clock):", "",
              "| GPU | data | shape | configs | Spearman | fastest measured | fastest predicted | its loss |",
              "|---|---|---|---|---|---|---|---|"]
    for s in a["per_shape"]:
        lines.append(f'| {s["gpu"]} | {s["data"]} | {s["shape"]} | {s["configs"]} | {fmt(s["spearman"], ".2f")} | {s["best"]} | '
                     f'{s["picked"]} | {fmt(s["picked_slower_pct"])} % |')
    lines += ncu_markdown(c, k2_points)
    return lines


def load_ncu():
    rows = {}
    for _, gpu, run in load_runs("validation/results/*/cutlass_ncu.json"):
        for r in run["rows"]:
            rows[(gpu, r["config"], shape(r), r["data"])] = r["metrics"]
    return rows


def ncu_markdown(c, k2_points=()):
    """The clock and the model's memory traffic against the GPU's counters (Nsight Compute)."""
    ncu = load_ncu()
    key = lambda r: (r["gpu"], r["config"], r["shape"], r["data"])
    counted = [r for r in c["points"] if key(r) in ncu and "us" in r.get("at_ncu_clock", {}) and "us" in r["at_measured_clock"]]
    if not counted:
        return []
    l2_clock = [m["lts__cycles_elapsed.avg.per_second"] / 1e6 for m in ncu.values()]
    sm_clock = [m["sm__cycles_elapsed.avg.per_second"] / 1e6 for m in ncu.values()]
    ratio = sorted(r["clock_mhz"] / r["ncu_clock_mhz"] for r in counted)
    tratio = sorted(ncu[key(r)]["gpu__time_duration.sum"] / 1e3 / r["measured_us"] for r in counted)
    e_probe = [error_pct(r, "at_measured_clock") for r in counted]
    e_ncu = [error_pct(r, "at_ncu_clock") for r in counted]
    sus = [r for r in counted if "clock_mhz" in r.get("at_sustained_clock", {})]
    e_clk = [100 * (r["at_sustained_clock"]["clock_mhz"] / r["ncu_clock_mhz"] - 1) for r in sus]
    lines = ["", "### The clock and the memory traffic against the GPU's counters", "",
             f"`validation/results/<gpu>/cutlass_ncu.json`: one launch per configuration on {len({r['shape'] for r in counted})} shapes",
             "(random data), read by Nsight Compute (`--clock-control none`; it flushes the L2 before each launch, so small",
             "shapes start cold).",
             "",
             f"- The clock: on these {len(counted)} points the probe's clock is {ratio[0]:.2f}-{ratio[-1]:.2f}x (median",
             f"  {ratio[len(ratio) // 2]:.2f}) the SM clock Nsight Compute measured during the kernel, while the kernel times agree",
             f"  ({tratio[0]:.2f}-{tratio[-1]:.2f}x, median {tratio[len(tratio) // 2]:.2f}): the probe most likely reads the clock the GPU",
             "  returns to once the GEMM is over. At the clock measured during the kernel the model's error on these",
             f"  points is MAPE {sum(map(abs, e_ncu)) / len(e_ncu):.1f} %, mean signed {sum(e_ncu) / len(e_ncu):+.1f} % (at the probe's clock:",
             f"  {sum(map(abs, e_probe)) / len(e_probe):.1f} %, {sum(e_probe) / len(e_probe):+.1f} %). smpipe's sustained clock (`--clock sustained`)",
             f"  is {sum(map(abs, e_clk)) / max(1, len(e_clk)):.1f} % from the clock measured during the kernel on average ({sum(e_clk) / max(1, len(e_clk)):+.1f} % signed, {len(e_clk)} points);",
             "  the probe's clock, read after the kernel, is not the one to compare it with.",
             f"- The L2 runs on its own clock: {min(l2_clock):.0f}-{max(l2_clock):.0f} MHz in every launch while the SM clock",
             f"  moved over {min(sm_clock):.0f}-{max(sm_clock):.0f} MHz, so the L2 and HBM bandwidths are fixed in bytes per",
             "  second (as the models scale them with `--clock-mhz`).",
             "", "By shape (both GPUs; the model's mean signed error at each clock, against the kernel's time with CUDA events):", "",
             "| shape | points | at the clock measured during the kernel | at the probe's clock | probe's clock / kernel's |",
             "|---|---|---|---|---|"]
    mean = lambda v: sum(v) / len(v)
    # K2 against CUTLASS on the short-K shape, the same tile and data: how much K2's own instructions cost there.
    k2_t = {(r["gpu"], r["data"]): r["measured_us"] for r in k2_points if r["shape"] == "8192x8192x256" and r["config"] == "coop 128x128x64 s4 g8"}
    cu_t = {(r["gpu"], r["data"]): r["measured_us"] for r in c["points"] if r["shape"] == "8192x8192x256" and r["config"] == "coop_128x128x64_1x1_auto"}
    both = [k2_t[k] / cu_t[k] for k in k2_t if k in cu_t]
    k2_over_cutlass = mean(both) if both else None
    for shp in sorted({r["shape"] for r in counted}, key=lambda s: (math.prod(int(v) for v in s.split("x")), s)):
        g = [r for r in counted if r["shape"] == shp]
        lines.append(f'| {shp} | {len(g)} | {mean([error_pct(r, "at_ncu_clock") for r in g]):+.1f} % | '
                     f'{mean([error_pct(r, "at_measured_clock") for r in g]):+.1f} % | {mean([r["clock_mhz"] / r["ncu_clock_mhz"] for r in g]):.2f} |')
    lines += ["",
              *textwrap.wrap(
                  "At the kernel's own clock two errors stand apart: the short-K shape (8192x8192x256, bound by the epilogue) "
                  "comes out slow and the largest square ones (6144^3, 8192^3) fast. The second goes with the L2 (below); the "
                  "first with the models' default instruction costs, K2's (the kernel's start, a tile's and a subtile's own "
                  "instructions: docs/models.md), which CUTLASS's kernels undercut"
                  + (f": K2 itself takes {k2_over_cutlass:.2f}x CUTLASS's time on 8192x8192x256 with the same 128x128x64 tile "
                     "(K2's sweep, 4 stages; CUTLASS's 6)." if k2_over_cutlass else "."), 110, break_on_hyphens=False),
              "", "On the large shapes (predicted at the clock measured during the kernel; GB per launch):", "",
             "| GPU | shape | config | GPU time (us) | predicted (us) | L2 read lookups | from the SMs | GPU lookups / time (TB/s) | model's reads | of them merged | DRAM read + write | model's HBM |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    big = [r for r in counted if math.prod(int(v) for v in r["shape"].split("x")) >= 6144 ** 3]
    for r in sorted(big, key=lambda r: (r["gpu"], r["shape"], r["config"])):
        m = ncu[key(r)]
        p = r["at_ncu_clock"]
        t = m["gpu__time_duration.sum"] / 1e3
        look = m["lts__t_sectors_op_read.sum"] * 32 / 1e9
        lines.append(f'| {r["gpu"]} | {r["shape"]} | {r["config"]} | {t:.0f} | {p["us"]:.0f} | {look:.2f} | '
                     f'{m["lts__t_sectors_srcunit_tex_op_read.sum"] * 32 / 1e9:.2f} | {look / t * 1e3:.1f} | '
                     f'{(p.get("bytes_loaded") or 0) / 1e9:.2f} | {(p.get("l2_merged_bytes") or 0) / 1e9:.2f} | '
                     f'{(m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]) / 1e9:.2f} | {(p.get("hbm_bytes") or 0) / 1e9:.2f} |')
    tex = [ncu[key(r)]["lts__t_sectors_srcunit_tex_op_read.sum"] * 32 / r["at_ncu_clock"]["bytes_loaded"]
           for r in big if r["at_ncu_clock"].get("bytes_loaded")]
    merged = [r["at_ncu_clock"]["l2_merged_bytes"] / r["at_ncu_clock"]["bytes_loaded"] for r in big if r["at_ncu_clock"].get("bytes_loaded")]
    hbm = [r["at_ncu_clock"]["hbm_bytes"] / (ncu[key(r)]["dram__bytes_read.sum"] + ncu[key(r)]["dram__bytes_write.sum"])
           for r in big if r["at_ncu_clock"].get("hbm_bytes")]
    rate = sorted(ncu[key(r)]["lts__t_sectors_op_read.sum"] * 32 / ncu[key(r)]["gpu__time_duration.sum"] / 1e3 for r in big)
    model_req = [1 - x for x in merged]
    with open(os.path.join(ROOT, "validation/results/h100/k2_ncu.json")) as fh:
        k2 = {(r["tile"][1], r["cluster_m"], r["raster_group"]): r["sm_requests_over_box_bytes"] for r in json.load(fh)["rows"]}
    lines += ["",
              f"- The SMs' requests reach the GPU's L2 at {min(tex):.2f}-{max(tex):.2f}x the bytes the TMA boxes name (L2 lookups",
              "  add the traffic between the L2's two partitions), and the slow configurations run it at up to",
              f"  {rate[-1]:.1f} TB/s of lookups (median of these points {rate[len(rate) // 2]:.1f}); the model's SMs request",
              f"  {min(model_req):.2f}-{max(model_req):.2f}x the box bytes (the rest reached the L2 with another SM's read).",
              f"  K2's counters (`validation/results/h100/k2_ncu.json`): {k2[(128, 1, 8)]:.2f}x with its groups of 8 rows, {k2[(128, 1, 1)]:.2f}x along N."]
    skinny = [r for r in counted if r["shape"] == "8192x256x8192" and r["at_ncu_clock"].get("bytes_loaded")]
    if skinny:
        sk = sorted(skinny, key=lambda r: ncu[key(r)]["lts__t_sectors_srcunit_tex_op_read.sum"] * 32 / r["at_ncu_clock"]["bytes_loaded"])
        f = lambda r: ncu[key(r)]["lts__t_sectors_srcunit_tex_op_read.sum"] * 32 / r["at_ncu_clock"]["bytes_loaded"]
        lines += [f"- Yet the GPU does combine requests elsewhere: on 8192x256x8192 the SMs request {f(sk[0]):.2f}x the box bytes",
                  f"  ({sk[0]['gpu']} {sk[0]['config']}) to {f(sk[-1]):.2f}x ({sk[-1]['gpu']} {sk[-1]['config']})."]
    co_path = os.path.join(ROOT, "validation/results/h100/l2_coalescing_ncu.json")
    if os.path.exists(co_path):
        with open(co_path) as fh:
            co = {r["measurement"]: r for r in json.load(fh)["rows"]}
        g = lambda n: co[n]["sm_requests_over_delivered"]
        lines += ["- The sharing microbenchmarks under Nsight Compute (`validation/results/h100/l2_coalescing_ncu.json`)",
                  "  show where: identical TMA requests of several SMs reach the L2 as one when the sharers are spread over",
                  f"  the GPU (groups of consecutive CTAs reading from HBM: {g('hier_l2_sharing_bw_group2'):.2f}x the delivered bytes for",
                  f"  pairs, {g('hier_l2_sharing_bw_group8'):.2f}x for 8; CTAs k = g mod 4 on an L2-resident tensor:",
                  f"  {g('tma_load_bw_pipe_l2_all_sms_box32KB_shared4'):.2f}x), not when they are CTAs k = g mod 16",
                  f"  ({g('tma_load_bw_pipe_l2_all_sms_box32KB_shared16'):.2f}x), and a read from HBM costs",
                  f"  {g('hier_l2_sharing_bw_group1'):.2f} requests and {co['hier_l2_sharing_bw_group1']['l2_lookups_over_delivered']:.2f} L2 lookups per delivered byte.",
                  "  The 'combine' microbenchmark (`validation/results/h100/l2_combine_ncu.json`) pins the first part down:",
                  "  the two SMs of a TPC combine fully up to 128 ns apart, CTAs 2-8 apart in launch order about 0.6 of",
                  "  their requests, 12 apart 0.4, farther 0.12-0.18: as CTAs in one aligned block of 16 in launch order",
                  "  would at 0.62 and CTAs of different blocks at 0.15 (the machine file's `l2_combine_*`)."]
        # The share of the box bytes whose requests the GPU combined: its SMs' requests against what they would be
        # without combining, a byte read from HBM costing as many requests as when read alone
        # (hier_l2_sharing_bw_group1), a byte that hits as many as when no sharers are near (shared16).
        hit_req, miss_req = g("tma_load_bw_pipe_l2_all_sms_box32KB_shared16"), g("hier_l2_sharing_bw_group1")
        # An upper bound for a hit: the second read of a far pair 4 us apart (it combines almost nothing) costs
        # 2 x its pair's requests per byte less the first read's.
        with open(os.path.join(ROOT, "validation/results/h100/l2_combine_lag_ncu.json")) as fh:
            lag = {r["measurement"]: r["sm_requests_over_delivered"] for r in json.load(fh)["rows"]}
        hit_high = 2 * lag["l2_combine_far_delay4096ns_bw"] - lag["l2_combine_none_bw"]
        diff, shares, diff_high = [], [], []
        by_shape = {}  # shape -> (the GPU's combined share, the model's, the model's error at the clock of the kernel)
        for r in counted:
            p, m = r["at_ncu_clock"], ncu[key(r)]
            if not p.get("bytes_loaded"):
                continue
            dram = min(m["dram__bytes_read.sum"], p["bytes_loaded"])
            gpu_share = lambda hit: 1 - m["lts__t_sectors_srcunit_tex_op_read.sum"] * 32 / ((p["bytes_loaded"] - dram) * hit + dram * miss_req)
            model_share = p["l2_merged_bytes"] / p["bytes_loaded"]
            shares.append(gpu_share(hit_req))
            diff.append(model_share - shares[-1])
            diff_high.append(model_share - gpu_share(hit_high))
            by_shape.setdefault(r["shape"], []).append((shares[-1], model_share, error_pct(r, "at_ncu_clock"),
                                                        p.get("bottleneck", "").startswith("L2 bandwidth"), tpc_pair_share(r)))
        lines += [f"- The share of the box bytes whose requests were combined, GPU against model, on these {len(diff)} points:",
                  f"  the GPU's from its SMs' requests against those the same bytes cost without combining ({hit_req:.3f} per byte",
                  f"  that hits, {miss_req:.2f} per byte from HBM, as measured alone on the H100). The model's share is",
                  f"  {sum(diff) / len(diff):+.3f} from the GPU's on average ({sum(map(abs, diff)) / len(diff):.3f} mean absolute difference;",
                  f"  the GPU's ranges over {min(shares):.2f}-{max(shares):.2f} with shape and configuration). Were every byte that",
                  f"  hits as costly as the second read of a far pair 4 us apart ({hit_high:.2f} requests per byte,",
                  f"  `l2_combine_lag_ncu.json`), the GPU's shares would be larger and the model's {sum(diff_high) / len(diff_high):+.3f} from them",
                  f"  ({sum(map(abs, diff_high)) / len(diff_high):.3f} per point)."]
    lines += [f"- The model's HBM traffic is {min(hbm):.2f}-{max(hbm):.2f}x the GPU's DRAM reads and writes on these shapes (below",
              "  1: its L2 keeps more of the operands than the GPU's does)."]
    # The model's time error against that ratio, point by point: where its L2 keeps what the GPU's does, and where not.
    pairs = [(r["at_ncu_clock"]["hbm_bytes"] / (ncu[key(r)]["dram__bytes_read.sum"] + ncu[key(r)]["dram__bytes_write.sum"]),
              error_pct(r, "at_ncu_clock")) for r in big if r["at_ncu_clock"].get("hbm_bytes")]
    close = [e for h, e in pairs if abs(h - 1) <= 0.05]
    short = [e for h, e in pairs if h < 0.9]
    if len(pairs) > 2 and close and short:
        rho = statistics.correlation([h for h, _ in pairs], [e for _, e in pairs])
        lines += [f"- That ratio goes with the model's error (correlation {rho:.2f} over the {len(pairs)} points): where the model's",
                  f"  HBM traffic is within 5 % of the GPU's ({len(close)} points) its time is {sum(close) / len(close):+.1f} % off on average",
                  f"  (MAPE {sum(map(abs, close)) / len(close):.1f} %); where it is below 0.9x ({len(short)} points, the GPU's L2 missing what",
                  f"  the model's keeps) {sum(short) / len(short):+.1f} % (MAPE {sum(map(abs, short)) / len(short):.1f} %): the model's largest",
                  "  errors on these shapes are its L2 keeping too much. Which mechanism makes the GPU miss more is open",
                  "  (docs/simulator.md, \"What is not modelled yet\")."]
    if os.path.exists(co_path) and by_shape:
        mean = lambda v: sum(v) / len(v)
        dims = lambda s: [int(v) for v in s.split("x")]
        lines += ["", "The combined share by shape (as in the last bullet but one: mean over the configurations and both GPUs),",
                  "beside the model's error at the clock measured during the kernel:", "",
                  "| shape | points | GPU combines | model merges | model's mean signed error |", "|---|---|---|---|---|"]
        for shp in sorted(by_shape, key=lambda s: math.prod(dims(s))):
            v = by_shape[shp]
            lines.append(f'| {shp} | {len(v)} | {100 * mean([x[0] for x in v]):.1f} % | {100 * mean([x[1] for x in v]):.1f} % | '
                         f'{mean([x[2] for x in v]):+.1f} % |')
        lines += ["", "The same with one CTA per cluster only, beside the share the two SMs of each TPC alone would combine if",
                  "they always read their common operand together: the persistent scheduler gives the two CTAs of a TPC",
                  "(consecutive in launch order) consecutive tiles, which share the A stage when it rasters along N and the",
                  "B stage along M (CUTLASS's heuristic: along N unless the grid has more N tiles than M tiles; the other",
                  "operand when that direction has one tile), so they could combine that operand's share of the pair's",
                  "bytes, A / (2 (A + B)) along N, and no more:", "",
                  "| shape | points | grid's tiles | GPU combines | model merges | TPC pairs alone |", "|---|---|---|---|---|---|"]
        for shp in sorted(by_shape, key=lambda s: math.prod(dims(s))):
            v = [x for x in by_shape[shp] if x[4] is not None]
            if v:
                lines.append(f'| {shp} | {len(v)} | {tile_count_range(c["points"], shp)} | {100 * mean([x[0] for x in v]):.1f} % | '
                             f'{100 * mean([x[1] for x in v]):.1f} % | {100 * mean([x[4][0] for x in v]):.1f} % |')
        one = [x for shp in by_shape for x in by_shape[shp] if x[4] is not None]
        many = [x for x in one if x[4][1] > 4 * 132]
        few = [x for x in one if x[4][1] <= 132]
        if many and few:
            para = (f"Where the grid has more than four tiles per SM ({len(many)} points) the GPU combines "
                    f"{100 * mean([x[0] - x[4][0] for x in many]):+.1f} points from what the TPC pairs alone could, the model "
                    f"{100 * mean([x[1] - x[4][0] for x in many]):+.1f}; where it has at most one tile per SM ({len(few)} points) the "
                    f"GPU {100 * mean([x[0] - x[4][0] for x in few]):+.1f}, the model {100 * mean([x[1] - x[4][0] for x in few]):+.1f}. "
                    "So on grids of many tiles the GPU's combining looks like the TPC pairs' alone, while the model also merges "
                    "reads of CTAs close in launch order (`l2_combine_near_share`, measured where every CTA reads at once); on "
                    "grids of one wave the GPU combines far beyond its TPC pairs, and the model less so (there many CTAs read each "
                    "tile at once, and each joins a read at the near share when a CTA on it lies in its block of 16). K2's traces of all its CTAs show part of why "
                    "(docs/replay.md, item 6): the CTAs start their first tile together and then drift apart by microseconds, "
                    "tile after tile, while the two CTAs of each TPC mostly stay together; the model's CTAs keep in step.")
            lines += [""] + textwrap.wrap(para, 110, break_on_hyphens=False)
        square = [x for shp in by_shape if len(set(dims(shp))) == 1 and math.prod(dims(shp)) >= 4096 ** 3 for x in by_shape[shp]]
        l2_bound = [x for x in square if x[3]]
        if square and l2_bound:
            para = (f"On the square shapes of 4096^3 and more ({len(square)} points) the model merges "
                    f"{100 * mean([x[1] - x[0] for x in square]):.1f} points more of the box bytes than the GPU combines; the "
                    f"{len(l2_bound)} of them the model finds bound by the L2 are {mean([x[2] for x in l2_bound]):+.1f} % off on average "
                    f"({mean([x[2] for x in square]):+.1f} % over all {len(square)}): there its L2 does less work than the GPU's. "
                    "Why the GPU combines less on these shapes is not established. Its share falls with the number of tiles in "
                    "the grid rather than with K (the skinny shapes with K = 8192 combine most), and the model's 128 ns combining "
                    "window is the model's rule: the two SMs of a TPC measured alone still combine 87 % of their requests 512 ns apart "
                    "(`l2_combine_lag_ncu.json`). docs/replay.md (item 6) has the drift of neighbouring CTAs in K2's traces. "
                    "Not the readers' spacing in launch order: since 2026-12-03 CTAs combine by aligned blocks of 16 in launch "
                    "order (`l2_combine_block_ctas`), which fits the H100's pairs at every distance and the H200's `sharing` "
                    "microbenchmarks where readers are 8 or more apart (8 and 12 apart: the GPU 0.73 and 0.80 L2 requests per "
                    "delivered byte, the model 0.69 and 0.77, with the distance rule before it 0.48-0.50), and the square "
                    "shapes' merged share stayed where it was (8192^3 19.8 -> 19.9 %, 6144^3 21.9 -> 22.0 %). Many readers "
                    "2-6 apart still combine less in the model than on the GPU (0.53-0.62 against 0.34-0.39).")
            lines += [""] + textwrap.wrap(para, 110, break_on_hyphens=False)
    return lines


def config_tile(config):
    """(tile M, tile N, cluster M x N) of a CUTLASS configuration name such as coop_128x256x64_2x1_auto."""
    parts = config.split("_")
    tm, tn, _ = (int(v) for v in parts[1].split("x"))
    cm, cn = (int(v) for v in parts[2].split("x"))
    return tm, tn, cm * cn


def tpc_pair_share(point):
    """For a configuration of one CTA per cluster: (the share of a TPC pair's box bytes in the operand its two CTAs
    share, the grid's tile count); None for clusters. The pair runs consecutive tiles of the persistent scheduler:
    the same M tile (sharing A) when it rasters along N, which CUTLASS's heuristic picks unless the grid has more N
    tiles than M tiles (the models' RASTER_N = -1)."""
    tm, tn, cluster = config_tile(point["config"])
    if cluster != 1:
        return None
    m, n, _ = (int(v) for v in point["shape"].split("x"))
    tiles_m, tiles_n = -(-m // tm), -(-n // tn)
    tm, tn = min(tm, m), min(tn, n)  # a tile wider than the problem moves only the rows that exist
    fast = tiles_n if tiles_n <= tiles_m else tiles_m  # tiles along the raster's fast direction
    # Tiles t and t + 1 (t even): the same slow index (sharing the fast direction's operand: A along N) unless t + 1
    # starts a new line; then they share the other operand only when the fast direction has a single tile.
    total = tiles_m * tiles_n
    pairs = same_line = wrap_shared = 0
    for t in range(0, total - 1, 2):
        pairs += 1
        if (t + 1) % fast:
            same_line += 1
        elif fast == 1:
            wrap_shared += 1
    along_n = tiles_n <= tiles_m
    a_share, b_share = tm / (2 * (tm + tn)), tn / (2 * (tm + tn))
    if not pairs:
        return 0.0, total
    line, other = (a_share, b_share) if along_n else (b_share, a_share)
    return (same_line * line + wrap_shared * other) / pairs, total


def tile_count_range(points, shape):
    counts = sorted({tpc_pair_share(p)[1] for p in points if p["shape"] == shape and tpc_pair_share(p) is not None})
    return f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"


def worst_errors(points, n=40):
    """A bullet naming the shapes and configurations with the largest errors at the measured clock."""
    pts = [p for p in points if "us" in p["at_measured_clock"]]
    err = lambda p: 100 * (p["at_measured_clock"]["us"] / p["measured_us"] - 1)
    worst = sorted(pts, key=lambda p: (-abs(err(p)), p["shape"], p["config"], p["gpu"], p["data"]))[:n]
    shapes = {}
    for p in worst:
        shapes[p["shape"]] = shapes.get(p["shape"], 0) + 1
    top = sorted(shapes.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
    first = worst[:3]
    return (f"- The {n} largest errors are on {', '.join(f'{s} ({k})' for s, k in top)} and others; the largest: "
            + "; ".join(f"{p['gpu']} {p['shape']} {p['config']} ({p['data']}) {err(p):+.0f} %" for p in first) + ".")


def committed_data():
    try:
        with open(os.path.join(ROOT, DATA)) as f:
            return json.load(f)
    except (FileNotFoundError, json.JSONDecodeError) as e:
        sys.exit(f"stale: {DATA} ({e}): run python3 validation/calibration/accuracy.py SMPIPE")


def sample_indices(items, group):
    """One point of every group (a GPU's configuration on one kind of data), the groups' points taken at rotating
    positions so that the sample spans the shapes: the indices of `items` (rows) to simulate anew."""
    groups = {}
    for i, it in enumerate(items):
        groups.setdefault(group(it), []).append(i)
    return sorted(ix[n % len(ix)] for n, (_, ix) in enumerate(sorted(groups.items())))


def sampled(ex, predict_row, items, committed_rows, group, strict=False):
    """`predict_row(item)` over the sample of `items`; every other row is `predict_row(item, stub)` (its fields
    from the item, no simulation) with each prediction (`at_*` key) the committed row's: a changed measurement or
    field then shows as stale, as does a committed list of another length. `strict` (writing the report from a
    sample): a sampled row predicted otherwise than committed stops it (the models or machines changed)."""
    if len(committed_rows) != len(items):
        sys.exit(f"stale: {DATA} has {len(committed_rows)} rows where the results give {len(items)}: "
                 "run python3 validation/calibration/accuracy.py SMPIPE")
    pick = set(sample_indices(committed_rows, group))
    fresh = dict(zip(sorted(pick), ex.map(predict_row, [items[i] for i in sorted(pick)])))
    if strict:
        moved = [i for i, row in fresh.items() if json.dumps(row, sort_keys=True) != json.dumps(committed_rows[i], sort_keys=True)]
        if moved:
            r = fresh[moved[0]]
            sys.exit(f"{len(moved)} sampled points are predicted otherwise than {DATA} has them (e.g. {r['gpu']} {r['shape']} "
                     f"{r['config']}): the models or machines changed; write the report without --sample")
    out = []
    for i, (item, old) in enumerate(zip(items, committed_rows)):
        if i in fresh:
            out.append(fresh[i])
            continue
        row = predict_row(item, lambda *args, **kw: {})
        out.append({k: (old.get(k, v) if k.startswith("at_") else v) for k, v in row.items()})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("smpipe")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--sample", action="store_true",
                    help="simulate one point per configuration (and every short-K and K1 run) anew and take the other "
                         "points' predictions from the committed data: with --check, compare both files; without, write "
                         "them, refusing when a sampled point moved (for changes that leave the models and machines "
                         "alone: the report's prose, K1's data)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int,
                    help="predict every point with this seed (the draws of the machine's HBM spread) and print the "
                         "summary at each clock, writing nothing: how much the report depends on the seed")
    a = ap.parse_args()
    global SEED
    SEED = a.seed
    if a.sample and a.seed is not None:
        ap.error("--sample takes the other points from the committed data, which has smpipe's default seed")
    smpipe = os.path.abspath(a.smpipe)
    points = load_points()
    if not points:
        sys.exit("no K2 sweep results under validation/results/*/k2_sweep*.json")
    measured = kernel_instructions(smpipe)
    measured.update(cta_start(smpipe, measured))
    measured.update(warm_start(measured))
    stale = stale_defaults(measured)
    if stale:
        sys.exit("the models' default instruction costs are not K2's measured ones:\n  " + "\n  ".join(stale))

    def one(item, run=predict):
        src, gpu, p = item
        clock = p.get("clock_mhz_median")
        defs = defines(p, measured)
        return {"source": src, "gpu": gpu, "data": p.get("data", "random"), "shape": shape(p), "config": label(p),
                "measured_us": 1000 * p["ms_median"], "clock_mhz": clock,
                "at_measured_clock": run(smpipe, gpu, p, clock, defs) if clock else {"error": "no clock measured"},
                "at_nominal_clock": run(smpipe, gpu, p, None, defs, "boost"),
                "at_sustained_clock": run(smpipe, gpu, p, None, defs, sustained(p))}

    ncu = load_ncu()

    def one_cutlass(item, run=predict):
        src, gpu, p = item
        clock = p.get("clock_mhz_pooled") or p.get("clock_mhz_median")
        defs = cutlass_defines(p)
        counters = ncu.get((gpu, p["config"], shape(p), p["data"]))
        def slim(x):  # the per-unit utilisations of 840 points are left out of the data file
            x.pop("units", None)
            return x
        return {"source": src, "gpu": gpu, "data": p["data"], "shape": shape(p), "config": p["config"],
                "measured_us": 1000 * p["ms_median"], "repeat_us": 1000 * p["repeat_ms_median"], "clock_mhz": clock,
                "cutlass_stages": p["stages"],
                "at_measured_clock": slim(run(smpipe, gpu, p, clock, defs)) if clock else {"error": "no clock measured"},
                "at_nominal_clock": slim(run(smpipe, gpu, p, None, defs, "boost")),
                "at_sustained_clock": slim(run(smpipe, gpu, p, None, defs, sustained(p))),
                **({"ncu_clock_mhz": counters["sm__cycles_elapsed.avg.per_second"] / 1e6,
                    "at_ncu_clock": slim(run(smpipe, gpu, p, counters["sm__cycles_elapsed.avg.per_second"] / 1e6, defs))}
                   if counters else {})}

    cpoints = load_cutlass()
    opoints = timed_points(OVERHANG)
    wpoints = timed_points(WARM_START)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        if a.sample:
            committed = committed_data()
            def by_config(p):  # a GPU's configuration on one kind of data: one sampled point each
                return p["gpu"], p["config"], p["data"]
            strict = not a.check
            rows = sampled(ex, one, points, committed["points"], by_config, strict)
            crows = sampled(ex, one_cutlass, cpoints, committed["cutlass"]["points"], by_config, strict)
            orows = sampled(ex, one, opoints, committed.get("overhang", {}).get("points", []), by_config, strict)
            wrows = sampled(ex, one, wpoints, committed.get("one_per_tile", {}).get("points", []), by_config, strict)
        else:
            rows = list(ex.map(one, points))
            crows = list(ex.map(one_cutlass, cpoints))
            orows = list(ex.map(one, opoints))
            wrows = list(ex.map(one, wpoints))
        # Why FUSION_CYCLES is not K2's by default: the short-K points (bound by the epilogue) with K2's conversion.
        def with_k2_conversion(item):
            src, gpu, p = item
            # 16 accumulator elements per consumer thread: every model's default epilogue tile gives that.
            defs = dict(cutlass_defines(p), FUSION_CYCLES=round(measured["conversion_per_element"] * 16),
                        FUSION_MMA_SPEED=fusion_mma_speed())
            clock = p.get("clock_mhz_pooled") or p.get("clock_mhz_median")
            if not clock:
                return None
            r = predict(smpipe, gpu, p, clock, defs)
            return 100 * (r["us"] / (1000 * p["ms_median"]) - 1) if "us" in r else None
        short_k = [e for e in ex.map(with_k2_conversion, [i for i in load_cutlass() if i[2]["K"] <= 512]) if e is not None]
        k1 = k1_predictions(smpipe, ex)
        k1_kernels = k1_kernel_predictions(smpipe, ex)
    data = {"generator": "validation/calibration/accuracy.py", "points": rows,
            "kernel_instructions": measured,
            "at_measured_clock": summarise(rows, "at_measured_clock"), "at_nominal_clock": summarise(rows, "at_nominal_clock"),
            "at_sustained_clock": summarise(rows, "at_sustained_clock"), "sustained_clock": clock_errors(rows),
            "cutlass": {"points": crows, "at_measured_clock": summarise(crows, "at_measured_clock"),
                        "at_nominal_clock": summarise(crows, "at_nominal_clock"),
                        "at_sustained_clock": summarise(crows, "at_sustained_clock"),
                        "sustained_clock": clock_errors(crows, "ncu_clock_mhz"),
                        "short_k_with_k2_conversion": {"points": len(short_k),
                                                       "mape_pct": sum(abs(e) for e in short_k) / max(1, len(short_k)),
                                                       "mean_signed_pct": sum(short_k) / max(1, len(short_k))}},
            "k1": k1, "k1_kernels": k1_kernels,
            "overhang": {"points": orows, "at_measured_clock": summarise(orows, "at_measured_clock"),
                         "at_sustained_clock": summarise(orows, "at_sustained_clock")},
            "one_per_tile": {"points": wrows, "at_measured_clock": summarise(wrows, "at_measured_clock")},
            "clock_checks": clock_check_slopes(smpipe, measured)}
    text_json = json.dumps(data, indent=1, sort_keys=True) + "\n"
    text_md = markdown(data)
    if a.check:
        stale = []
        for path, text in ((DATA, text_json), (DOC, text_md)):
            try:
                with open(os.path.join(ROOT, path)) as f:
                    if f.read() != text:
                        stale.append(path)
            except FileNotFoundError:
                stale.append(path)
        if stale:
            old = committed_data() if DATA in stale else data
            changed = [f'{r["gpu"]} {r["shape"]} {r["config"]} ({r["data"]})'
                       for r, o in zip(rows + crows + orows + wrows,
                                       old["points"] + old["cutlass"]["points"] + old.get("overhang", {}).get("points", [])
                                       + old.get("one_per_tile", {}).get("points", []))
                       if json.dumps(r, sort_keys=True) != json.dumps(o, sort_keys=True)]
            sys.exit(f"stale: {', '.join(stale)}" + (f" ({len(changed)} points predicted otherwise, e.g. {'; '.join(changed[:3])})"
                                                     if changed else "") +
                     f": run python3 validation/calibration/accuracy.py {a.smpipe}")
        return
    if a.seed is not None:
        for key in ("at_measured_clock", "at_sustained_clock", "at_nominal_clock"):
            for name, x in (("K2", data[key]), ("CUTLASS", data["cutlass"][key])):
                print(f'seed {a.seed} {key} {name}: MAPE {x["mape_pct"]:.2f} %, Spearman {x["spearman_mean"]:.3f}, picks '
                      f'within 3 %: {x["picks_within_3pct"]} of {x["shapes"]}')
        return
    with open(os.path.join(ROOT, DATA), "w") as f:
        f.write(text_json)
    with open(os.path.join(ROOT, DOC), "w") as f:
        f.write(text_md)
    for name, s in (("K2", data["at_measured_clock"]), ("CUTLASS", data["cutlass"]["at_measured_clock"])):
        print(f'{name}: {s["predicted"]} points: MAPE {fmt(s["mape_pct"])} %, signed {fmt(s["mean_signed_pct"], "+.1f")} %, '
              f'Spearman {fmt(s["spearman_mean"], ".2f")}, picks within 3 %: {s["picks_within_3pct"]} of {s["shapes"]}')


if __name__ == "__main__":
    main()
