#!/usr/bin/env python3
"""Cross-check of the simulator against the H100 microbenchmarks.

Every microbenchmark of validation/microbench that smpipe can express has a .pipe twin in
validation/calibration/crosscheck/ (same warps, barriers, box sizes and repetition pattern). This script runs
each twin through the built smpipe binary on the h100-sxm machine, derives the simulated figure the way the
benchmark derives its own, compares it with the measured median of validation/results/h100/microbench.json (and
of store.json, hierarchy.json, think.json, multicast4.json, gpc.json, pipe*.json, loadlat8.json, loadlat_smooth.json, epilogue*.json, dirtystart3.json and
l2_combine_lag_ncu.json beside it), prints a table and writes
validation/results/h100/crosscheck.csv.

    python3 validation/calibration/crosscheck.py [SMPIPE] [--csv OUT] [--results FILE] [--gpu NAME] [-j N]

SMPIPE defaults to build-dev/smpipe, else build/smpipe. Standard library only. How a figure is derived:
- "bracket": a region's cycles = (cycles(2N repetitions) - cycles(N)) / N, which cancels start-up and
  drain; divided further as the benchmark divides (per barrier, per poll, per wgmma, round trip / 2).
- "timed": the benchmark times only part of each repetition (e.g. after a __syncthreads); the twin has a
  TIMED param, and the figure is bracket(TIMED=1) - bracket(TIMED=0).
- "bandwidth": bytes of N more iterations / (cycles(2N) - cycles(N)).
- "trace": for one-way latencies and timelines the benchmark reads clock64 at specific points; the script
  reads the same points from the Chrome trace (--trace), converted back to cycles.
A mismatch is a finding of the simulator's first-order model (docs/calibration.md), not something to tune.
Exit status: 0 when every program ran (whatever the errors), 1 when a run failed or a measurement is missing.
"""
import argparse
import cmath
import concurrent.futures
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PIPES = os.path.join(ROOT, "validation", "calibration", "crosscheck")
# Twins whose buffers are shared on purpose, as their benchmark's are (boxes no one reads, overwritten while in flight
# where the stages do not fit the shared memory): run without the data-hazard checker, which would stop them.
UNCHECKED = {"tma_multicast", "tma_multicast_split"}
RESULTS = os.path.join(ROOT, "validation", "results", "h100", "microbench.json")
CSV_OUT = os.path.join(ROOT, "validation", "results", "h100", "crosscheck.csv")


# A key of a run's defs that is not a param but its --l2 (the L2 at launch: cold, dirty:BYTES, ...).
L2_START = "--l2"


class RunError(Exception):
    pass


class Runner:
    """Runs smpipe, caching by (program, kernel, params, trace)."""

    def __init__(self, smpipe, gpu, tmpdir):
        self.smpipe, self.gpu, self.tmpdir = smpipe, gpu, tmpdir
        self.cache = {}
        self.count = 0

    @staticmethod
    def key(prog, defs, kernel=None, trace=False):
        return (prog, kernel, tuple(sorted(defs.items())), trace)

    def run_key(self, k):
        if k in self.cache:
            return self.cache[k]
        prog, kernel, defs, trace = k
        # At the machine file's clock, the one its parameters are stated at (the microbenchmarks' cycles).
        cmd = [self.smpipe, "run", os.path.join(PIPES, prog + ".pipe"), "--json", "--gpu", self.gpu, "--clock", "boost"]
        if prog in UNCHECKED:
            cmd.append("--no-hazards")
        if kernel:
            cmd += ["--kernel", kernel]
        for name, value in defs:
            cmd += ["--l2", value] if name == L2_START else ["-D", f"{name}={value}"]
        tpath = None
        if trace:
            fd, tpath = tempfile.mkstemp(suffix=".json", dir=self.tmpdir)
            os.close(fd)
            cmd += ["--trace", tpath, "--trace-ctas", str(int(trace))]  # True: CTA 0; n: CTAs 0..n-1
        try:
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                raise RunError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
            out = json.loads(p.stdout)
            if trace:
                with open(tpath) as f:
                    out["trace"] = json.load(f)
                os.remove(tpath)
        except (OSError, ValueError) as e:
            raise RunError(f"{' '.join(cmd)}: {e}") from e
        self.cache[k] = out
        self.count += 1
        return out

    def run(self, prog, defs, kernel=None, trace=False):
        return self.run_key(self.key(prog, defs, kernel, trace))


# ---- derivations --------------------------------------------------------------------------------------------

def cycles(r, prog, defs, kernel=None):
    return r.run(prog, defs, kernel)["cycles"]


def bracket(r, prog, param, n, defs, kernel=None):
    """Cycles of one repetition: (cycles(2n) - cycles(n)) / n."""
    a = cycles(r, prog, {**defs, param: n}, kernel)
    b = cycles(r, prog, {**defs, param: 2 * n}, kernel)
    return (b - a) / n


def timed(r, prog, param, n, defs):
    """Cycles of the timed part of one repetition: bracket with TIMED=1 minus bracket with TIMED=0."""
    return bracket(r, prog, param, n, {**defs, "TIMED": 1}) - bracket(r, prog, param, n, {**defs, "TIMED": 0})


def slices(run, pid=0, tid=0):
    """The X slices of one warp as (name, op text, start cycle, end cycle), in start order."""
    mhz = run["clock_mhz"]
    out = []
    for e in run["trace"]["traceEvents"]:
        if e.get("ph") == "X" and e.get("pid") == pid and e.get("tid") == tid:
            start = round(e["ts"] * mhz)
            out.append((e["name"], e.get("args", {}).get("op", ""), start, start + round(e["dur"] * mhz)))
    out.sort(key=lambda s: (s[2], s[3]))
    return out


def ops_starting(sl, prefix):
    return [s for s in sl if s[1].startswith(prefix)]


def one_way(r, defs):
    """mbarrier one-way wake-up (k_mbar_pingpong modes 1/2): t0 = start of the signaler's store of t0 (the
    clock read before it), t1 = the waiter's first op after its wait returns (its load of t0). Median over
    repetitions 1.."""
    run = r.run("mbar_pingpong", defs, trace=True)
    t0 = [s[2] for s in ops_starting(slices(run, 0, 0), "st.shared")]
    t1 = [s[2] for s in ops_starting(slices(run, 0, defs.get("WAITER", 1)), "ld.shared")]
    if len(t0) != len(t1) or len(t0) < 4:
        raise RunError(f"mbar_pingpong {defs}: {len(t0)} signals, {len(t1)} wake-ups in the trace")
    return statistics.median(b - a for a, b in list(zip(t0, t1))[1:])


def tma_issue_cost(r):
    """k_tma_load_lat: clock after the cp.async.bulk.tensor minus t0 (before the arrive.expect_tx)."""
    sl = slices(r.run("tma_load_latency", {"ROWS": 8, "REPS": 32}, trace=True))
    a = [s[2] for s in ops_starting(sl, "arrive.expect_tx")]
    b = [s[3] for s in sl if s[0] == "tma.load"]
    return statistics.median(y - x for x, y in zip(a, b))


def burst(r, rows, nb, what):
    """k_tma_burst, pass 1: median interval between consecutive issue ends or consecutive wait returns."""
    sl = slices(r.run("tma_burst", {"ROWS": rows, "NB": nb}, trace=True))
    if what == "issue":
        t = [s[3] for s in sl if s[0] == "tma.load"]
    else:  # a wait that blocked is a `wait: ...` slice, one that did not is the op's own slice
        t = [s[3] for s in ops_starting(sl, "wait bars")]
    if len(t) != 2 * nb:
        raise RunError(f"tma_burst ROWS={rows} NB={nb}: {len(t)} {what} points in the trace, expected {2 * nb}")
    t = t[nb:]
    return statistics.median(b - a for a, b in zip(t, t[1:]))


def loaded_latency(r, kb, d, hbm, pair=0, think=0, ctas=132, cluster=1, gap=0):
    """k_ring of the loaded-latency measurements (every SM, D boxes of kb KB in flight; with pair, D stages of two
    boxes each, and think cycles after each wait: the think_latency_* measurements): the median over CTA 0's
    measured loads (after the twin's warm-up) past their first 2 D and before their last D, of the end of the wait
    that covers the load minus the start of its arrive.expect_tx (the benchmark's clock64 before the arrive to
    clock64 after the wait)."""
    per = (8 << 20) // (kb * 1024 * (1 + pair))
    warm = 0 if hbm else 64 if ctas >= 66 else per  # the twin's WARM
    defs = {"ROWS": kb * 8, "STAGES": d, "HBM": hbm, **({"PAIR": 1} if pair else {}), **({"THINK": think} if think else {}),
            **({"CTAS": ctas} if ctas != 132 else {}), **({"CLUSTER": cluster} if cluster != 1 else {}),
            **({"GAP": gap} if gap else {})}
    sl = slices(r.run("tma_loaded_latency", defs, trace=True))
    arrives = [s[2] for s in ops_starting(sl, "arrive.expect_tx")]
    waits = [s[3] for s in ops_starting(sl, "wait full")]  # the i-th covers load i (the last d: the drain)
    first = warm + 2 * d
    if len(arrives) != len(waits) or len(arrives) < first + d + 1:
        raise RunError(f"tma_loaded_latency {defs}: {len(arrives)} loads, {len(waits)} waits")
    return statistics.median(waits[i] - arrives[i] for i in range(first, len(arrives) - d))


LOADLAT = {}  # the GPU's loadlat.json rows, name -> measurement


def loadlat_own(r):
    """LOAD_OWN of the twin: the benchmark load thread's own cycles per stage beyond its think time and the twin's, from the
    GPU's think-bound L2 rows (think >= 2000 cycles, where the thread's loop, not the L2, sets the rate): the median of
    their cycles per stage less the think time, less the twin's own at LOAD_OWN = 0 (think 10000, 4 stages); the rows of
    every SM but the probe loading its own walk with fixed think times."""
    gpu = [32768 * m["params"]["load_ctas"] * m["params"]["sm_clock_ghz_used"] / m["median"] - m["params"]["load_think_cycles"]
           for name, m in LOADLAT.items()
           if name.startswith("loadlat_l2_") and name.endswith("_bw") and m["params"]["load_ctas"] == 131
           and m["params"]["load_think_cycles"] >= 2000 and not m["params"].get("load_think_jitter")
           and m["params"].get("load_group", 1) == 1 and not name.endswith("_gt_bw")]
    if not gpu:
        raise RunError("loadlat: no think-bound rows in loadlat.json")
    own = 32768 * 131 / loadlat_bpc(r, 0, 131, 4, 10000, 0)[0] - 10000
    return max(0, round(statistics.median(gpu) - own))


ROLES = {"": 0, "all": 0, "local": 1, "remote": 2, "alone": 3}  # the loadlat rows' clusters of 16 -> the twin's ROLE


def loadlat_defs(r, hbm, bg, d, think, own=None, jitter=False, where="", group=1, rows=128):
    if own is None:
        own = loadlat_own(r) if bg else 0
    ctas = 1 + bg if not where else 112
    # the probe's 1024 loads (the benchmark's cap) outlast the load's warm-up at every think time
    # the probe's loads as the benchmark's: 1024 samples (they outlast the load's warm-up at every think time); from HBM
    # 480, in the probe's own slice of the tensor
    return {"ROWS": rows, "STAGES": d, "HBM": hbm, "PAIR": 1, "PROBE": 1, "PROBES": 8 + (480 if hbm else 1024), "CTAS": ctas,
            "LOADS": 256 if hbm else 1024,
            **({"THINK": think} if think else {}), **({"LOAD_OWN": own} if own else {}), **({"JITTER": 1} if jitter else {}),
            **({"CLUSTER": 16, "ROLE": ROLES.get(where, 0)} if where else {}), **({"GROUP": group} if group > 1 else {})}


def loadlat_loader(where):
    """The first CTA of a loadlat twin that loads (its trace stands for all load CTAs)."""
    return 16 if where == "remote" else 1


def loadlat_window(run, hbm, bg, where, rows=128):
    """Cycles from the load CTAs' warm-up end (their WARM-th load) to their last wait's end, and their loads since."""
    load = slices(run, pid=loadlat_loader(where))
    starts = [s[2] for s in ops_starting(load, "arrive.expect_tx")]
    ctas = 112 if where else 1 + bg
    warm = 0 if hbm else 64 if ctas >= 66 else (8 << 20) // (256 * rows)  # the twin's WARM
    return starts[warm], max(s[3] for s in load), len(starts) - warm


def loadlat(r, hbm, bg, d, think, jitter=False, where="", group=1, rows=128):
    """The loadlat group (bench_hierarchy.cu bench_loadlat): the probe CTA's stage latency (one stage of two boxes at a
    time, 1024 cycles after each landing) while bg CTAs keep d stages in flight with think cycles after each wait: the
    median over the probe's loads past its first 8 that start after the load CTAs' warm-up (the first load CTA's WARM-th
    load) and end before that CTA's last wait (while the load is on; the benchmark's probe stops when the first load CTA
    is done), of its wait's end minus its arrive.expect_tx's start."""
    defs = loadlat_defs(r, hbm, bg, d, think, jitter=jitter, where=where, group=group, rows=rows)
    run = r.run("tma_loaded_latency", defs, trace=loadlat_loader(where) + 1 if bg else True)
    probe = slices(run)
    arrives = [s[2] for s in ops_starting(probe, "arrive.expect_tx")]
    waits = [s[3] for s in ops_starting(probe, "wait full")]
    if len(arrives) != len(waits) or len(arrives) < 16:
        raise RunError(f"tma_loaded_latency {defs}: {len(arrives)} probe loads, {len(waits)} waits")
    lo, hi = 0, float("inf")
    if bg:
        lo, hi, _ = loadlat_window(run, hbm, bg, where, rows)
    lat = [w - a for a, w in zip(arrives[8:], waits[8:]) if a >= lo and w <= hi]
    if len(lat) < 16:
        raise RunError(f"tma_loaded_latency {defs}: {len(lat)} probe loads while the load is on")
    return statistics.median(lat)


def loadlat_own_stage(r, think, jitter=False, where=""):
    """The one-stage ring's own stages (D = 1: the thread waits from the issue on, so its latency is the landing, as the
    probe's): the median over the first load CTA's loads past the warm-up of its wait's end minus its arrive.expect_tx's
    start (the benchmark: params.load_latency_median_cycles, every load CTA's loads [2, iters - 1))."""
    defs = loadlat_defs(r, 0, 111 if where else 131, 1, think, jitter=jitter, where=where)
    load = slices(r.run("tma_loaded_latency", defs, trace=2), pid=1)
    arrives = [s[2] for s in ops_starting(load, "arrive.expect_tx")]
    waits = [s[3] for s in ops_starting(load, "wait full")]  # the i-th covers load i (the drain's last)
    if len(waits) < len(arrives) or len(arrives) < 64 + 16:
        raise RunError(f"tma_loaded_latency {defs}: {len(arrives)} loads, {len(waits)} waits of CTA 1")
    return statistics.median(w - a for a, w in zip(arrives[64:], waits[64:]))


def loadlat_bpc(r, hbm, bg, d, think, own=None, jitter=False, where="", group=1, rows=128):
    """The load CTAs' bytes per cycle (their bytes over the cycles from the first load CTA's WARM-th load to its last
    wait's end: the run's load CTAs run alike), and the run's clock in MHz."""
    defs = loadlat_defs(r, hbm, bg, d, think, own, jitter, where, group, rows)
    run = r.run("tma_loaded_latency", defs, trace=loadlat_loader(where) + 1)
    lo, hi, loads = loadlat_window(run, hbm, bg, where, rows)
    return loads * 256 * rows * bg / (hi - lo), run["clock_mhz"]


def loadlat_bw(r, hbm, bg, d, think, own=None, jitter=False, where="", group=1, rows=128):
    """loadlat_bpc in GB/s at the run's clock."""
    bpc, mhz = loadlat_bpc(r, hbm, bg, d, think, own, jitter, where, group, rows)
    return bpc * mhz / 1000


def loadlat_issues(r, d, think, jitter=False, group=1, rows=128, where=""):
    """The gt rows of the loadlat group: per load CTA, the cycles its arrive.expect_tx's start, from its load 3D on past
    the twin's warm-up (the GPU reads %globaltimer, a 32 ns tick, before each re-issue from the one at its 2D-th wait,
    i.e. of load 3D, on)."""
    # 256 loads past the warm-up (the model's rings settle within tens; a trace of every CTA's 1024 is ~330 MB)
    defs = dict(loadlat_defs(r, 0, 111 if where else 131, d, think, jitter=jitter, group=group, rows=rows, where=where),
                LOADS=320, PROBES=24)
    run = r.run("tma_loaded_latency", defs, trace=defs["CTAS"])
    mhz = run["clock_mhz"]
    issues = {}
    for e in run["trace"]["traceEvents"]:
        if e.get("ph") == "X" and e.get("pid", 0) > 0 and e.get("tid") == 0 and \
                e.get("args", {}).get("op", "").startswith("arrive.expect_tx"):
            issues.setdefault(e["pid"], []).append(round(e["ts"] * mhz))
    ctas = sorted(issues)
    per = [sorted(issues[c])[64 + 3 * d:] for c in ctas]  # the twin's WARM = 64 loads first
    m = min(len(v) for v in per)
    if len(per) != defs["CTAS"] - 1 or m < 16:
        raise RunError(f"tma_loaded_latency {defs}: {len(per)} load CTAs traced, {m} loads each")
    return [v[:m] for v in per], ctas


def loadlat_spread(r, d, think, jitter=False, group=1, rows=128, where=""):
    """Per load (the same iteration of every load CTA's loop), the p10-p90 spread of the load CTAs' issue cycles; the
    median over the loads."""
    per, _ = loadlat_issues(r, d, think, jitter, group, rows, where)
    spreads = []
    for j in range(len(per[0])):
        t = sorted(v[j] for v in per)
        spreads.append(t[min(len(t) - 1, 9 * len(t) // 10)] - t[len(t) // 10])
    return statistics.median(spreads)


def loadlat_clumps(r, d, think, jitter=False, group=1, rows=128, where="", persistence=False):
    """Every issue of every load CTA on one time line: the mean number of other CTAs issuing within 100 ns (198 cycles at
    the machine's clock) of an issue, over what the same issues spread evenly over the span give; with persistence, the
    share of an issue's neighbours that are again neighbours of the same CTA's next issue (the benchmark's
    _issue_neighbours row and its params)."""
    per, _ = loadlat_issues(r, d, think, jitter, group, rows, where)
    w = 198
    ev = sorted((t, k) for k, v in enumerate(per) for t in v)
    lo = hi = 0
    sets = [[] for _ in per]
    for t, k in ev:
        while ev[lo][0] < t - w:
            lo += 1
        while hi < len(ev) and ev[hi][0] <= t + w:
            hi += 1
        sets[k].append({c for _, c in ev[lo:hi] if c != k})
    mean = sum(len(x) for seq in sets for x in seq) / len(ev)
    if persistence:
        kept = [len(a & b) / len(a) for seq in sets for a, b in zip(seq, seq[1:]) if a]
        return statistics.fmean(kept)
    span = ev[-1][0] - ev[0][0]
    return mean / ((len(per) - 1) * len(per[0]) * 2 * w / span)


def loadlat_phase(r, d, think, jitter=False, group=1, rows=128, where="", cluster=False):
    """Per load, |mean over the load CTAs of exp(2 pi i t / P)| of their issue cycles t, P the median interval between a
    CTA's successive issues (1: in phase; about 1 / sqrt(131) = 0.09: random phases); the median over the loads. With
    cluster, the mean over the launch's clusters of 16 (one GPC each) of that among each cluster's load CTAs (8 or
    more)."""
    per, ctas = loadlat_issues(r, d, think, jitter, group, rows, where)
    period = statistics.median(b - a for v in per for a, b in zip(v, v[1:]))
    groups = {}
    for v, c in zip(per, ctas):
        groups.setdefault(c // 16 if cluster else 0, []).append(v)
    groups = [g for g in groups.values() if len(g) >= 8]
    out = []
    for j in range(len(per[0])):
        out.append(statistics.fmean(abs(sum(cmath.exp(2j * math.pi * v[j] / period) for v in g)) / len(g) for g in groups))
    return statistics.median(out)


# The stage-pipe runs of the GPU (pipe.json, pipe_more.json, pipe_straight.json, pipe_sleep.json beside the results):
# name -> measurement.
PIPE = {}


def pipe_defs(d, think, ctas, consumer):
    return {"STAGES": d, "THINK": think, **({"CTAS": ctas} if ctas != 132 else {}), "CONSUMER": consumer}


def pipe_stage_cycles(r, defs):
    """The twin's cycles per stage of one CTA between MEASURED = 256 and 512."""
    a = cycles(r, "tma_stage_pipe", {**defs, "MEASURED": 256})
    b = cycles(r, "tma_stage_pipe", {**defs, "MEASURED": 512})
    return (b - a) / 256


def pipe_consumer(r):
    """CONSUMER of the twin: the benchmark consumer's own cycles per stage beyond its wait's wake-up, its think time and
    its arrive (clock reads, the spin loop's exit), from the GPU's consumer-bound rows (every SM, think time >= 1024, the
    consumer waiting under 10 % of its loop): the median of their cycles per stage less the think time, less what the
    twin's consumer loop takes beyond its think time with CONSUMER = 0 (at 2 stages, 1536 cycles)."""
    gpu = [32768 * m["params"]["ctas"] * m["params"]["sm_clock_ghz_used"] / m["median"] - m["params"]["think_cycles"]
           for name, m in PIPE.items()
           if name.endswith("_bw") and m["params"]["ctas"] == 132 and m["params"]["think_cycles"] >= 1024
           and m["params"]["consumer_wait_fraction"] < 0.1 and m["params"].get("sleep", 0) == 0
           and m["params"].get("timeline", 0) == 0 and m["params"].get("watcher", 1) == 1]
    if not gpu:
        raise RunError("pipe: no consumer-bound rows in pipe.json")
    own = pipe_stage_cycles(r, pipe_defs(2, 1536, 132, 0)) - 1536
    return max(0, round(statistics.median(gpu) - own))


def pipe_bw(r, d, think, ctas):
    """k_stage_pipe's bandwidth in GB/s at the machine's clock: the bytes of all CTAs per cycle in the steady state."""
    defs = pipe_defs(d, think, ctas, pipe_consumer(r))
    mhz = r.run("tma_stage_pipe", {**defs, "MEASURED": 256})["clock_mhz"]
    return 32768 * ctas / pipe_stage_cycles(r, defs) * mhz / 1000


def pipe_latency(r, d, think, ctas, watch=True):
    """k_stage_pipe's landing time: per measured load of CTA 0 past its first 2 d and before its last d, the end of the
    watcher's wait of its phase (without the watcher: the consumer's) minus the start of its arrive.expect_tx."""
    defs = pipe_defs(d, think, ctas, pipe_consumer(r))
    run = r.run("tma_stage_pipe", defs, trace=True)
    arrives = [s[2] for s in ops_starting(slices(run, 0, 0), "arrive.expect_tx")]
    waits = [s[3] for s in ops_starting(slices(run, 0, 2 if watch else 1), "wait full")]
    warm = 64 if ctas >= 66 else 256  # the twin's WARM
    first = warm + 2 * d
    if len(arrives) != len(waits) or len(arrives) < first + d + 1:
        raise RunError(f"tma_stage_pipe {defs}: {len(arrives)} loads, {len(waits)} waits")
    return statistics.median(waits[i] - arrives[i] for i in range(first, len(arrives) - d))


# The SM clock the combining runs held (l2_combine_lag_ncu.json, "clocks"): their delays in ns become cycles at it.
COMBINE_CLOCK_MHZ = 1980
# MiB per CTA of the GPU's tma_load_bw_pipe_l2_all_sms_box32KB_shared* runs, by group count (from their params).
SHARED_MIB = {}


# The CTAs of as many clusters of C as fit at once on the H200 (cudaOccupancyMaxActiveClusters x C, one CTA per SM:
# validation/results/h200/smlat/smlat.json, gpc_max_active_clusters_c*): the grids of the GPU's cluster rows.
CLUSTER_CTAS = {1: 132, 2: 132, 3: 117, 4: 120, 6: 102, 8: 120, 12: 84, 16: 112}


def combined(r, pattern, delay_ns=0, dist=4, off=0, cluster=1):
    """k_ring of the L2 request-combining measurements (l2_combine_*: every SM reads 8 MiB of 32 KB boxes, 6 in
    flight, from a cold L2; pairs of CTAs read the same boxes, the second delay_ns later): the share of the box
    bytes that reached the L2 as requests of their own, 1 - merged / loaded. The GPU's figure is its L2 requests
    per delivered byte over those of no sharing at all (l2_combine_none: 1.25)."""
    defs = {"PATTERN": pattern, "DELAY": round(delay_ns * COMBINE_CLOCK_MHZ / 1000), **({"DIST": dist} if pattern in (3, 4) else {}),
            **({"OFF": off} if off else {}),
            **({"CLUSTER": cluster, "CTAS": CLUSTER_CTAS[cluster]} if cluster > 1 else {})}
    return merged_share(r, "tma_combine_lag", defs)


def ncu_shares(path, prefix, renamed):
    """The rows `prefix`*_bw of a combining run under Nsight Compute (ncu_smpairs.py's JSON at `path`, if it exists): each
    one's L2 requests per delivered byte over those of `prefix`none_bw (no sharing), named `renamed` + the rest of
    its name without _bw."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        ncu = {row["measurement"]: row["sm_requests_over_delivered"] for row in json.load(f)["rows"]}
    none = ncu[prefix + "none_bw"]
    return [{"name": renamed + name[len(prefix):-len("_bw")], "median": value / none, "unit": "share of bytes"}
            for name, value in ncu.items() if name.startswith(prefix) and name.endswith("_bw")]


def merged_share(r, prog, defs):
    """The share of the box bytes that reached the L2 as requests of their own: 1 - merged / loaded."""
    out = r.run(prog, defs)
    return 1 - out["l2_merged_bytes"] / out["bytes_loaded"]


def multicast(r, kb, c, mcast, hbm):
    """k_mcast (bench_multicast.cu): every SM in clusters of c keeps 4 stages of c boxes of kb KB in flight, each box
    loaded by its CTA (unicast) or by one rank for the whole cluster (multicast); GB/s landed in all CTAs' smem over
    the stages between n and 2n per CTA (n: one pass over the warm 8 MiB tensor, or half of the 8 MiB HBM stream)."""
    ctas = CLUSTER_CTAS[c]  # the GPU's grid: as many clusters as fit at once
    n = (8 << 20) // (c * kb * 1024) // (2 if hbm else 1)
    defs = {"ROWS": kb * 8, "C": c, "MCAST": int(mcast), "HBM": hbm, "CTAS": ctas}
    return gbs(r, "tma_multicast", n, ctas * c * kb * 1024, defs)


MCAST_THINK = {}  # the GPU's mcast_split_think_* rows (multicast4.json), name -> measurement


def mcast_cons_own(r):
    """CONS_OWN of the split twin: the benchmark consumer thread's own cycles per stage beyond its think time and the
    twin's, from the GPU's think-bound rows (T = 1024: the consumer's loop, not the L2, sets the rate; every mode and
    stage count): the median of their cycles per stage (stage bytes / bytes per CTA-cycle) less the think time, less
    the twin's own at CONS_OWN = 0 (T = 1024, 4 stages, independent unicast)."""
    gpu = [m["params"]["stage_bytes"] / m["params"]["bytes_per_cycle_per_sm_clock64"] - m["params"]["think_cycles"]
           for name, m in MCAST_THINK.items() if "_bw_" in name and m["params"].get("think_cycles") == 1024]
    if not gpu:
        raise RunError("multicast: no think-bound rows in multicast4.json")
    # The twin's cycles per stage and CTA over stages 128..256 (4 MiB per CTA), without CONS_OWN.
    n, defs = 128, {"ROWS": 128, "C": 2, "MCAST": 0, "CTAS": 132, "STAGES": 4, "THINK": 1024, "COUPLE": 0}
    twin = 132 * 32768 / bandwidth(r, "tma_multicast_split", n, 132 * 32768, defs) - 1024
    return max(0, round(statistics.median(gpu) - twin))


def multicast_split(r, kb, c, mcast, alone, stages=4, think=None, couple=1, landed=8 << 20, own=None, gemm=None, a_kb=None,
                    a_group=1, a_spread=False, a_share=0, ctas=None):
    """k_mcast_split (bench_multicast.cu): the multicast ring with a producer warp that only issues and a consumer warp
    that waits and arrives on the cluster's empty barriers (couple 0: its own only); every SM in clusters of c with
    `stages` stages in flight (or one cluster alone, one stage); GB/s landed in all CTAs' smem over the stages between
    n and 2n per CTA (n: `landed` bytes per CTA). The think rows (`think` given, 0 included) have the consumer work
    `think` cycles and its own CONS_OWN (mcast_cons_own) before each release."""
    ctas = ctas or (c if alone else (132 if c < 4 else 120))
    stage = (a_kb + kb) * 1024 if gemm is not None else c * kb * 1024  # bytes landing in a CTA per stage
    n = 64 if alone else landed // stage
    defs = {"ROWS": kb * 8, "C": c, "MCAST": int(mcast), "CTAS": ctas, "STAGES": 1 if alone else stages}
    if think is not None:
        if think:
            defs["THINK"] = think
        if own is None:
            own = mcast_cons_own(r)
        if own:
            defs["CONS_OWN"] = own
    if not couple:
        defs["COUPLE"] = 0
    if gemm is not None:  # a GEMM's stage (mcast_split_gemm_*): gemm = "own" or "shared", the A walk; A a_kb KB, B kb KB
        defs["GEMM"] = 1
        defs["SHARED_A"] = int(gemm == "shared")
        defs["A_ROWS"] = a_kb * 8
        if a_group != 1:
            defs["A_GROUP"] = a_group
        if a_spread:
            defs["A_SPREAD"] = 1
        if a_share:
            defs["A_SHARE"] = a_share
    return gbs(r, "tma_multicast_split", n, ctas * stage, defs)


def ring_trace(r, what):
    """k_tma_load_bw<0> with a trace (32 KB x 6 stages, 96 iterations; iterations 16..95): the stage wait
    (before it -> after it), the issue (after the wait -> after the TMA) and the issue-to-issue interval."""
    stages = 6
    sl = slices(r.run("tma_ring", {"ROWS": 256, "STAGES": stages, "ITERS": 96, "TRACE": 1}, trace=True))
    loads = [s for s in sl if s[0] == "tma.load"]
    arrives = ops_starting(sl, "arrive.expect_tx")
    waits = ops_starting(sl, "wait full")[:96 - stages]   # the waits inside the loop (the drain follows)
    ta, tb, tc = [], [], []
    for i in range(96):
        tb.append(arrives[i][2])
        tc.append(loads[i][3])
        ta.append(waits[i - stages][2] if i >= stages else arrives[i][2])
    if what == "stage_wait":
        v = [tb[i] - ta[i] for i in range(16, 96)]
    elif what == "issue":
        v = [tc[i] - tb[i] for i in range(16, 96)]
    else:
        v = [tc[i] - tc[i - 1] for i in range(16, 96)]
    return statistics.median(v)


def bandwidth(r, prog, n, bytes_per_iter, defs, param="ITERS"):
    """bytes / cycle over the iterations between n and 2n."""
    a = cycles(r, prog, {**defs, param: n})
    b = cycles(r, prog, {**defs, param: 2 * n})
    return bytes_per_iter * n / (b - a)


def gbs(r, prog, n, bytes_per_iter, defs):
    """bandwidth() in GB/s at the machine's clock."""
    return bandwidth(r, prog, n, bytes_per_iter, defs) * r.run(prog, {**defs, "ITERS": n})["clock_mhz"] / 1000


def dirty_extra_us(r, mib, defs):
    """What X MiB of another kernel's stores, left dirty in the L2, add to the dirtystart read (tma_dirty_ring with
    `defs`): its cycles with --l2 dirty:XMiB less with --l2 cold, in us at the machine's clock."""
    cold = r.run("tma_dirty_ring", {**defs, L2_START: "cold"})
    dirty = r.run("tma_dirty_ring", {**defs, L2_START: f"dirty:{mib}MiB"})
    return (dirty["cycles"] - cold["cycles"]) / cold["clock_mhz"]


def span_gbs(r, prog, defs):
    """Every byte loaded over the whole run, in GB/s at the machine's clock (as the sharing benchmarks count: all bytes
    delivered over the first CTA's start to the last one's end)."""
    out = r.run(prog, defs)
    return out["bytes_loaded"] / out["cycles"] * out["clock_mhz"] / 1000


# ---- the rows: (measurement name, simulated figure, program and how) -----------------------------------

SWEEPS = []  # (name, params) of the tma_load_bw_sweep_* measurements, filled from the result file


def sweeps():
    """The one-SM TMA sweep rows that the language can say: the single-thread ring (try_wait or test_wait spin)
    and the producer/consumer pipe. The .relaxed ring variant has no form of its own in the language."""
    return [(n, p) for n, p in SWEEPS if p.get("variant") in ("ring", "ring_testwait", "pipe")]


def rows():
    R = []

    def add(name, fn, how):
        R.append((name, fn, how))

    # another kernel's stores left dirty in the L2 (the dirtystart group's third run, dirtystart3.json: the dirt written by
    # cudaMemset, "normal", a kernel's st.global, "stores", or TMA stores, "tmastores", all of it alike to the model; and
    # the memset's read by 16 SMs, "slack16"; the loads without a cache hint, which the model has none of)
    for series, defs in (("normal", {}), ("stores", {}), ("tmastores", {}), ("slack16", {"CTAS": 16, "ITERS": 264})):
        add(f"dirtystart_{series}_0MiB_span_us",
            lambda r, defs=defs: (lambda out: out["cycles"] / out["clock_mhz"])(r.run("tma_dirty_ring", {**defs, L2_START: "cold"})),
            f"tma_dirty_ring {' '.join(f'{k}={v}' for k, v in defs.items())} --l2 cold, cycles / the clock in us")
        for mib in (4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 64, 96):
            add(f"dirtystart_{series}_{mib}MiB_extra_us", lambda r, mib=mib, defs=defs: dirty_extra_us(r, mib, defs),
                f"tma_dirty_ring {' '.join(f'{k}={v}' for k, v in defs.items())}, cycles with --l2 dirty:{mib}MiB - with "
                "--l2 cold, us at the clock")

    # mbarrier
    add("mbar_wake_other_warp_same_wg", lambda r: one_way(r, {"MODE": 1, "WAITER": 1}),
        "mbar_pingpong MODE=1 WAITER=1, trace t1-t0")
    add("mbar_wake_other_wg", lambda r: one_way(r, {"MODE": 1, "WAITER": 4}),
        "mbar_pingpong MODE=1 WAITER=4, trace t1-t0")
    add("mbar_wake_other_warp_same_wg_test_wait_spin",
        lambda r: one_way(r, {"MODE": 1, "WAITER": 1, "TEST_WAIT": 1}),
        "mbar_pingpong MODE=1 TEST_WAIT=1, trace t1-t0")
    add("mbar_wake_complete_tx_other_warp", lambda r: one_way(r, {"MODE": 2, "WAITER": 1}),
        "mbar_pingpong MODE=2, trace t1-t0")
    for w, sfx in ((1, "same_wg"), (4, "other_wg")):
        add(f"mbar_pingpong_rtt_half_{sfx}",
            lambda r, w=w: bracket(r, "mbar_pingpong", "REPS", 32, {"MODE": 0, "WAITER": w}) / 2,
            f"mbar_pingpong MODE=0 WAITER={w}, bracket / 2")
    for mode, nm in ((0, "mbar_same_warp_arrive_wait"), (1, "mbar_same_warp_arrive32_wait"),
                     (2, "mbar_same_warp_expect_tx_complete_tx_wait")):
        add(nm, lambda r, mode=mode: bracket(r, "mbar_same_warp", "REPS", 32, {"MODE": mode}),
            f"mbar_same_warp MODE={mode}, bracket")
    for kind, nm in ((0, "mbar_test_wait_completed_dependent"), (1, "mbar_try_wait_completed_dependent"),
                     (2, "mbar_test_wait_completed_independent"), (3, "mbar_test_wait_pending_dependent")):
        add(nm, lambda r, kind=kind: bracket(r, "mbar_poll", "SAMPLES", 8, {"KIND": kind}) / 64,
            f"mbar_poll KIND={kind}, bracket / 64")
    add("mbar_cluster_remote_arrive_rtt_half",
        lambda r: bracket(r, "mbar_cluster", "REPS", 32, {"REMOTE": 1}) / 2, "mbar_cluster REMOTE=1, bracket / 2")
    add("mbar_cluster_local_arrive_rtt_half",
        lambda r: bracket(r, "mbar_cluster", "REPS", 32, {"REMOTE": 0}) / 2, "mbar_cluster REMOTE=0, bracket / 2")

    # TMA loads
    for kb in (1, 2, 4, 8, 16, 32):
        add(f"tma_load_latency_l2_{kb}KB",
            lambda r, kb=kb: bracket(r, "tma_load_latency", "REPS", 32, {"ROWS": kb * 8}),
            f"tma_load_latency ROWS={kb * 8}, bracket")
    for kb in (1, 2, 4, 8, 16, 32):
        add(f"tma_load_latency_hbm_{kb}KB",
            lambda r, kb=kb: bracket(r, "tma_load_latency", "REPS", 32, {"ROWS": kb * 8, "HBM": 1}),
            f"tma_load_latency ROWS={kb * 8} HBM=1, bracket")
    add("tma_load_issue_cost", tma_issue_cost, "tma_load_latency ROWS=8, trace")
    for kind, prog in (("ring", "tma_ring"), ("pipe", "tma_pipe")):
        for kb, stages in ((32, 6), (8, 24)):
            n = (32 << 20) // (kb * 1024)  # the benchmark's 32 MiB per CTA
            add(f"tma_load_bw_{kind}_l2_one_sm_box{kb}KB_bytes_per_cycle",
                lambda r, prog=prog, kb=kb, stages=stages, n=n: bandwidth(
                    r, prog, n, kb * 1024, {"ROWS": kb * 8, "STAGES": stages}),
                f"{prog} ROWS={kb * 8} STAGES={stages}, bandwidth over ITERS={n}")
    add("tma_load_bw_ring_l2_all_sms_box32KB",
        lambda r: gbs(r, "tma_ring", 512, 132 * 32768, {"ROWS": 256, "STAGES": 6, "CTAS": 132}),
        "tma_ring CTAS=132 (16 MiB each), bandwidth over ITERS=512, GB/s at the machine clock")
    for name, p in sweeps():
        prog = "tma_pipe" if p["variant"] == "pipe" else "tma_ring"
        bytes_ = p["box_bytes"]
        n = (16 << 20) // bytes_  # the sweep's 16 MiB per run
        defs = {"ROWS": p["box_rows"], "STAGES": p["stages"]}
        if prog == "tma_ring":
            defs.update({"COLS": p["box_cols"], "SWZ": 128 if p["swizzle128"] else 0,
                         "TEST_WAIT": int(p["variant"] == "ring_testwait")})
        add(name, lambda r, prog=prog, n=n, bytes_=bytes_, defs=defs: bandwidth(r, prog, n, bytes_, defs),
            f"{prog} {' '.join(f'{k}={v}' for k, v in defs.items())}, bandwidth over ITERS={n}")
    for what in ("stage_wait", "issue", "interval"):
        add(f"tma_ring_trace_{what}", lambda r, what=what: ring_trace(r, what),
            "tma_ring ROWS=256 STAGES=6 ITERS=96 TRACE=1, trace of iterations 16..95")
    # Boxes partly or wholly outside their tensor (k_oob_ring, group oob; oob.json beside the H200's results): cycles
    # per box over the difference of 256 and 512 boxes. TROWS: the tensor's rows (the microbenchmark's whole source:
    # 132 x 256 + 256 rows); Y0 the box's first row; OWN each CTA its own box.
    whole = 132 * 256 + 256
    oob_cases = {"in_own": {"TROWS": whole, "OWN": 1}, "in_same": {"TROWS": whole}, "out32": {"TROWS": 224},
                 "quarter_out": {"TROWS": 192}, "out96": {"TROWS": 160}, "half": {"TROWS": 128}, "out192": {"TROWS": 64},
                 "out224": {"TROWS": 32}, "all_out": {"TROWS": 128, "Y0": 256},
                 "all_out_own": {"TROWS": 128, "Y0": 256, "OWN": 1}, "all_out16": {"TROWS": 128, "Y0": 256, "ROWS": 128},
                 "in16": {"TROWS": whole, "ROWS": 128}}
    for case, defs in oob_cases.items():
        runs = [(1, 1, "one_sm"), (1, 132, "all_sms"), (4, 1, "one_sm"), (4, 132, "all_sms")]
        if case in ("in_same", "all_out"):
            runs += [(4, n, f"ctas{n}") for n in (2, 8, 16, 33, 66)]
        for stages, ctas, where in runs:
            d = dict(defs, STAGES=stages, CTAS=ctas)
            add(f"tma_oob_{case}_s{stages}_{where}", lambda r, d=d: bracket(r, "tma_oob", "ITERS", 256, d),
                f"tma_oob {' '.join(f'{k}={v}' for k, v in d.items())}, bracket ITERS=256")
    for kb, stages, warps in ((8, 4, 1), (8, 4, 2), (8, 4, 4), (8, 4, 6), (1, 8, 1), (1, 8, 4)):
        n = (4 << 20) // (kb * 1024)
        add(f"tma_load_bw_multi_producer_l2_box{kb}KB_{warps}warps",
            lambda r, kb=kb, stages=stages, warps=warps, n=n: bandwidth(
                r, "tma_multi", n, warps * kb * 1024, {"ROWS": kb * 8, "STAGES": stages, "WARPS": warps}),
            f"tma_multi WARPS={warps} ROWS={kb * 8} STAGES={stages}, bandwidth over ITERS={n}")
    for kb, nb in ((32, 6), (8, 24), (1, 48)):
        for what in ("issue", "complete"):
            add(f"tma_burst_{kb}KBx{nb}_{what}_interval", lambda r, kb=kb, nb=nb, what=what: burst(r, kb * 8, nb, what),
                f"tma_burst ROWS={kb * 8} NB={nb}, trace of pass 1")

    # Loaded latency on every SM (the GPU's hierarchy.json beside its microbench.json; rows it lacks are left out)
    for src, hbm in (("l2", 0), ("hbm", 1)):
        for kb in (8, 16, 32):
            for d in (1, 2, 3, 4, 6):
                add(f"hier_loaded_latency_{src}_box{kb}KB_d{d}", lambda r, kb=kb, d=d, hbm=hbm: loaded_latency(r, kb, d, hbm),
                    f"tma_loaded_latency ROWS={kb * 8} STAGES={d} HBM={hbm}, trace of CTA 0, median latency")
    # L2 request combining against the readers' distance and lag (the GPU's l2_combine_lag_ncu.json, Nsight Compute)
    add("combine_none", lambda r: combined(r, 0), "tma_combine_lag PATTERN=0, 1 - merged / loaded bytes")
    for ns in (0, 128, 512, 2048, 4096):
        add(f"combine_adjacent_delay{ns}ns", lambda r, ns=ns: combined(r, 1, ns),
            f"tma_combine_lag PATTERN=1 DELAY={ns} ns, 1 - merged / loaded bytes")
    for ns in (0, 512, 4096):
        add(f"combine_far_delay{ns}ns", lambda r, ns=ns: combined(r, 2, ns), f"tma_combine_lag PATTERN=2 DELAY={ns} ns, 1 - merged / loaded bytes")
    for d in (2, 4, 8, 12, 16, 24, 48):
        add(f"combine_dist{d}", lambda r, d=d: combined(r, 3, 0, d), f"tma_combine_lag PATTERN=3 DIST={d}, 1 - merged / loaded bytes")
    for ns in (128, 512, 2048, 4096):
        add(f"combine_near4_delay{ns}ns", lambda r, ns=ns: combined(r, 3, ns, 4),
            f"tma_combine_lag PATTERN=3 DIST=4 DELAY={ns} ns, 1 - merged / loaded bytes")
    # Pairs inside and across the edges of aligned blocks of 16 CTAs (the H200's blockedge group, Nsight Compute:
    # validation/results/h200/blockedge/l2_edge_ncu.json, requests per delivered byte over l2_edge_none's)
    for d, off in ((2, 0), (8, 0), (8, 8), (12, 0), (12, 4)):
        add(f"combine_edge_dist{d}_off{off}", lambda r, d=d, off=off: combined(r, 3, 0, d, off),
            f"tma_combine_lag PATTERN=3 DIST={d} OFF={off}, 1 - merged / loaded bytes")
    # The same pairs in a launch of clusters of 2 and 4 (the H200's clusteredge group, Nsight Compute:
    # validation/results/h200/clusteredge/l2_cedge_ncu.json, requests per delivered byte over l2_cedge_c*_none's)
    for c, d, off in ((2, 1, 0), (2, 2, 0), (2, 8, 0), (2, 8, 8), (2, 16, 0), (4, 1, 0), (4, 2, 0), (4, 4, 0), (4, 8, 0),
                      (4, 16, 0), (4, 32, 0)):
        add(f"combine_cedge_c{c}_dist{d}_off{off}", lambda r, c=c, d=d, off=off: combined(r, 3, 0, d, off, c),
            f"tma_combine_lag PATTERN=3 DIST={d} OFF={off} CLUSTER={c}, 1 - merged / loaded bytes")
    # Many SMs reading the same data at once: groups of G consecutive CTAs from HBM (hierarchy.json's
    # hier_l2_sharing_bw_group*, GB/s of all bytes delivered; the H100's requests per delivered byte over group 1's in
    # l2_coalescing_ncu.json, combine_group*), and every SM walking the same boxes of an L2-resident tensor in 1, 4 or 16
    # groups of CTAs k mod G (tma_load_bw_pipe_l2_all_sms_box32KB_shared*: 16 or, in a --quick run, 4 MiB per CTA; the
    # H100's requests per delivered byte, combine_shared*)
    for g in (1, 2, 4, 8, 33, 132):
        add(f"hier_l2_sharing_bw_group{g}", lambda r, g=g: span_gbs(r, "tma_combine_lag", {"PATTERN": 4, "DIST": g}),
            f"tma_combine_lag PATTERN=4 DIST={g}, all bytes / cycles, GB/s at the machine clock")
        if g > 1:
            add(f"combine_group{g}", lambda r, g=g: combined(r, 4, 0, g), f"tma_combine_lag PATTERN=4 DIST={g}, 1 - merged / loaded bytes")
    # The sharing degree (the H200's group sharing, validation/results/h200/sharing/: 16 MiB per CTA, requests per
    # delivered byte from its --quick run under Nsight Compute, combine_sharing_*)
    for consec, gs in ((0, (1, 2, 3, 4, 6, 8, 12, 16, 24, 33, 66, 132)), (1, (2, 4, 8, 16, 33))):
        for g in gs:
            kind = ("consec" if consec else "mod") + str(g)
            defs = {"CTAS": 132, "GROUPS": g, "CONSEC": consec, "TROWS": 131072, "ITERS": 512}
            add(f"tma_sharing_{kind}_bw", lambda r, defs=defs: span_gbs(r, "tma_pipe", defs),
                f"tma_pipe {' '.join(f'{k}={v}' for k, v in defs.items())}, all bytes / cycles, GB/s at the machine clock")
            add(f"combine_sharing_{kind}", lambda r, defs=dict(defs, ITERS=128): merged_share(r, "tma_pipe", defs),
                f"tma_pipe {' '.join(f'{k}={v}' for k, v in dict(defs, ITERS=128).items())}, 1 - merged / loaded bytes")
    for g in (1, 4, 16):
        # (SHARED_MIB is filled from the GPU's runs after the rows are listed: read when a row runs)
        shared = lambda g=g: {"CTAS": 132, "GROUPS": g, "TROWS": 131072, "ITERS": SHARED_MIB.get(g, 16) * 32}
        add(f"tma_load_bw_pipe_l2_all_sms_box32KB_shared{g}", lambda r, shared=shared: span_gbs(r, "tma_pipe", shared()),
            f"tma_pipe CTAS=132 GROUPS={g} TROWS=131072 ITERS=32 x the run's MiB per CTA, all bytes / cycles, GB/s at the machine clock")
        add(f"combine_shared{g}", lambda r, shared=shared: merged_share(r, "tma_pipe", shared()),
            f"tma_pipe CTAS=132 GROUPS={g} TROWS=131072, 1 - merged / loaded bytes")
    # TMA multicast on every SM, clusters of C (the GPU's multicast4.json): bytes landed in all CTAs per second
    for src, hbm in (("l2", 0), ("hbm", 1)):
        for kb in (16, 32):
            for c in (1, 2, 4):
                for mode in ("unicast", "multicast") if c > 1 else ("unicast",):
                    add(f"mcast_loaded_bw_{src}_box{kb}KB_d4_c{c}_{mode}",
                        lambda r, kb=kb, c=c, mode=mode, hbm=hbm: multicast(r, kb, c, mode == "multicast", hbm),
                        f"tma_multicast ROWS={kb * 8} C={c} MCAST={int(mode == 'multicast')} HBM={hbm}, bandwidth over "
                        f"the second {'pass' if hbm == 0 else 'half'} of 8 MiB per CTA")
    # The same rings with a CUTLASS cluster GEMM's split roles (producer warp issues, consumer warp waits and arrives)
    for kb, d in ((16, 4), (32, 4), (32, 1)):
        for c in (2, 4):
            for mode in ("unicast", "multicast"):
                kind = "loaded" if d == 4 else "alone"
                add(f"mcast_split_{kind}_bw_l2_box{kb}KB_d{d}_c{c}_{mode}",
                    lambda r, kb=kb, c=c, mode=mode, d=d: multicast_split(r, kb, c, mode == "multicast", d == 1),
                    f"tma_multicast_split ROWS={kb * 8} C={c} MCAST={int(mode == 'multicast')} STAGES={d}"
                    f"{' CTAS=' + str(c) if d == 1 else ''}, bandwidth over the second "
                    f"{'pass over the warm 8 MiB' if d == 4 else '64 stages'}")
    # The split ring with a GEMM's stage (two 16 KB boxes) and its consumers' work: independent, coupled, multicast
    for d in (2, 4):
        for t in (0, 256, 512, 1024):
            for mode, mcast, couple in (("unicast_own", 0, 0), ("unicast_coupled", 0, 1), ("multicast", 1, 1)):
                add(f"mcast_split_think_bw_l2_pair16KB_d{d}_t{t}_c2_{mode}",
                    lambda r, d=d, t=t, mcast=mcast, couple=couple: multicast_split(r, 16, 2, mcast, False, d, t, couple, 4 << 20),
                    f"tma_multicast_split ROWS=128 C=2 MCAST={mcast} STAGES={d} THINK={t} COUPLE={couple}, bandwidth over "
                    f"the second 4 MiB per CTA")
    # The same with a cluster GEMM's stage: an A box for the cluster (multicast: each rank its half for both CTAs) and a
    # B box of each CTA's own; the A walk the cluster's own or the whole grid's (multicast_gemm.json)
    modes = (("unicast_own", 0, 0), ("unicast_coupled", 0, 1), ("multicast", 1, 1))
    gemm_rows = [(16, 16, t, walk, m) for t in (0, 512) for walk in ("own", "shared") for m in modes]
    gemm_rows += [(a, b, 0, "own", m) for a, b in ((16, 8), (32, 16), (16, 32)) for m in modes[1:]]
    gemm_rows += [(16, 16, 0, f"by{g}", m) for g in (2, 4, 8) for m in modes]  # g consecutive clusters share an A walk
    gemm_rows += [(16, 16, 0, f"by{g}", m) for g in (16, 33) for m in modes[:2]]  # (multicast_gemm4.json)
    gemm_rows += [(16, 16, 0, f"spread{g}", m) for g in (2, 6, 22) for m in modes[:2]]  # g clusters spread over the grid
    for a_kb, kb, t, walk, (mode, mcast, couple) in gemm_rows:
        spread = walk.startswith("spread")
        group = int(walk[2:]) if walk.startswith("by") else int(walk[6:]) if spread else 1
        name = f"a_{walk}" if group > 1 else f"{walk}_a"
        add(f"mcast_split_gemm_bw_l2_a{a_kb}KB_b{kb}KB_d4_t{t}_c2_{name}_{mode}",
            lambda r, a_kb=a_kb, kb=kb, t=t, walk=walk, mcast=mcast, couple=couple, group=group, spread=spread: multicast_split(
                r, kb, 2, mcast, False, 4, t, couple, 4 << 20, gemm="own" if group > 1 else walk, a_kb=a_kb, a_group=group,
                a_spread=spread),
            f"tma_multicast_split ROWS={kb * 8} A_ROWS={a_kb * 8} C=2 GEMM=1 SHARED_A={int(walk == 'shared')}"
            f"{f' A_GROUP={group}' if group > 1 else ''}{' A_SPREAD=1' if spread else ''} MCAST={mcast} STAGES=4 THINK={t} "
            f"COUPLE={couple}, bandwidth over the second 4 MiB per CTA")
    # Readers of the same A boxes held in step or not: clusters of 2 or 4 on 120 SMs, the A walk shared by a pair or two
    # pairs (multicast_gemm6.json)
    for c in (2, 4):
        for share in (2, 4):
            for mode, couple in (("unicast_own", 0), ("unicast_coupled", 1)):
                add(f"mcast_split_gemm_bw_l2_a16KB_b16KB_d4_t0_c{c}_ctas120_share{share}_{mode}",
                    lambda r, c=c, share=share, couple=couple: multicast_split(
                        r, 16, c, 0, False, 4, 0, couple, 4 << 20, gemm="own", a_kb=16, a_share=share, ctas=120),
                    f"tma_multicast_split ROWS=128 A_ROWS=128 C={c} CTAS=120 GEMM=1 A_SHARE={share} MCAST=0 STAGES=4 THINK=0 "
                    f"COUPLE={couple}, bandwidth over the second 4 MiB per CTA")
    # A GEMM stage's two boxes at moderate load (the GPU's think.json): S stages, T cycles after each wait
    for d in (1, 2, 3, 4):
        for t in (0, 256, 512, 1024, 2048):
            add(f"think_latency_l2_pair16KB_s{d}_t{t}_latency", lambda r, d=d, t=t: loaded_latency(r, 16, d, 0, 1, t),
                f"tma_loaded_latency ROWS=128 STAGES={d} PAIR=1 THINK={t}, trace of CTA 0, median latency")
    # ... one stage with 1024 cycles of think time on fewer SMs, and one box instead of the pair
    for tag, kb, pair, counts in (("pair16KB", 16, 1, (1, 8, 33, 66, 132)), ("box32KB", 32, 0, (1, 132)), ("box16KB", 16, 0, (1, 132))):
        for n in counts:
            add(f"think_latency_l2_{tag}_s1_t1024_ctas{n}_latency", lambda r, kb=kb, pair=pair, n=n: loaded_latency(r, kb, 1, 0, pair, 1024, n),
                f"tma_loaded_latency ROWS={kb * 8} STAGES=1{' PAIR=1' if pair else ''} THINK=1024 CTAS={n}, trace of CTA 0, median latency")

    # ... the stage's second box `gap` cycles after its first, on one SM and on all (the GPU's think_gap.json)
    for gap in (0, 250, 500, 1000):
        for n in (1, 132):
            add(f"think_gap_pair16KB_s1_t1024_g{gap}_ctas{n}_latency", lambda r, gap=gap, n=n: loaded_latency(r, 16, 1, 0, 1, 1024, n, 1, gap),
                f"tma_loaded_latency ROWS=128 STAGES=1 PAIR=1 THINK=1024 GAP={gap} CTAS={n}, trace of CTA 0, median latency")

    # One stage's landing under a controlled load (the GPU's loadlat.json): a probe CTA and bg load CTAs
    for hbm, src, rws in ((0, "l2", [(0, 4, 0)] + [(131, 4, t) for t in (0, 250, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000)]
                           + [(131, 2, t) for t in (0, 500, 1000)] + [(33, 4, 0), (66, 4, 0)]),
                          (1, "hbm", [(0, 4, 0)] + [(131, 4, t) for t in (0, 500, 1000, 2000, 4000, 10000)]
                           # under a smooth load (the GPU's loadlat_smooth.json): one stage per load CTA, think times drawn
                           # from [T/2, 3T/2) (out of step), or fixed; two stages drawn; the probe alone in that run
                           + [(131, 1, t, True) for t in (0, 500, 1000, 2000, 3000, 5000)] + [(131, 1, t) for t in (1000, 3000)]
                           + [(131, 2, t, True) for t in (1000, 3000)] + [(0, 1, 0)])):
        if not hbm:  # the load's think times drawn from [T/2, 3T/2); the load placed by GPC (clusters of 16)
            rws += [(131, 4, t, True) for t in (500, 1000, 2000)] + [(131, 2, t, True) for t in (500, 1000)]
            rws += [(0, 4, 0, False, "alone")] + [(bg, 4, t, False, w) for w, bg in (("local", 15), ("remote", 96), ("all", 111))
                                                  for t in (0, 1000, 2000)]
            # groups of load CTAs sharing one walk, stages of 16 KB and of 32 KB boxes
            rws += [(131, 4, 0, False, "", g) for g in (2, 4, 8, 16, 32, 131)]
            rws += [(131, 3, 0, False, "", g, 256) for g in (1, 2, 4, 16, 131)]
            # the one-stage ring (its think time fixed or drawn), and out of step with the probe in a full GPC
            rws += [(131, 1, 1024), (131, 1, 1024, True)] + [(111, 4, t, True, "all") for t in (1000, 2000)]
            rws += [(111, 1, 1024, False, "all")]
        if not hbm:  # when the load's SMs issue (the GPU's %globaltimer at each re-issue)
            for d, t, jitter, group, rows, where in (
                    (4, 1000, False, 1, 128, ""), (4, 2000, False, 1, 128, ""), (4, 1000, True, 1, 128, ""),
                    (4, 0, False, 1, 128, ""), (1, 1024, False, 1, 128, ""), (3, 0, False, 2, 256, ""),
                    (1, 1024, False, 1, 128, "all"), (1, 1024, True, 1, 128, "all")):
                name = (f"loadlat_l2_pair{rows // 8}KB_{'c16' + where + '_' if where else ''}bg{111 if where else 131}_d{d}_t{t}"
                        f"{'_jitter' if jitter else ''}{f'_g{group}' if group > 1 else ''}_gt_issue")
                how = (f"tma_loaded_latency PROBE=1 PAIR=1 ROWS={rows} CTAS={112 if where else 132} STAGES={d} THINK={t}"
                       f"{' JITTER=1' if jitter else ''}{f' GROUP={group}' if group > 1 else ''}"
                       f"{' CLUSTER=16' if where else ''}, trace of every CTA")
                a = dict(d=d, think=t, jitter=jitter, group=group, rows=rows, where=where)
                add(name + "_spread", lambda r, a=a: loadlat_spread(r, **a),
                    how + ", median over the loads of the p10-p90 spread of the load CTAs' issue cycles (the twin's 256 "
                    "loads, the GPU's ~1000: a drifting ring's spread grows with the loads compared)")
                add(name + "_phase", lambda r, a=a: loadlat_phase(r, **a),
                    how + ", median over the loads of the load CTAs' phase coherence at the median issue interval")
                if where:
                    add(name + "_phase_cluster", lambda r, a=a: loadlat_phase(r, **a, cluster=True),
                        how + ", the same among the load CTAs of each cluster of 16, averaged over the clusters")
                add(name + "_neighbours", lambda r, a=a: loadlat_clumps(r, **a),
                    how + ", other CTAs issuing within 100 ns of an issue over the count for evenly spread issues")
                add(name + "_persistence", lambda r, a=a: loadlat_clumps(r, **a, persistence=True),
                    how + ", share of an issue's neighbours that are again neighbours of the CTA's next issue")
            # the one-stage ring's own stages (the benchmark's params.load_latency_median_cycles, as load_latency rows)
            for jitter, where in ((False, ""), (True, ""), (False, "all")):
                name = f"loadlat_l2_pair16KB_{'c16' + where + '_' if where else ''}bg{111 if where else 131}_d1_t1024{'_jitter' if jitter else ''}_load_latency"
                add(name, lambda r, j=jitter, w=where: loadlat_own_stage(r, 1024, j, w),
                    f"tma_loaded_latency PROBE=1 PAIR=1 ROWS=128 CTAS={112 if where else 132} STAGES=1 THINK=1024"
                    f"{' JITTER=1' if jitter else ''}{' CLUSTER=16' if where else ''}, trace of CTA 1, median of its stages' latency")
        for bg, d, t, *more in rws:
            jitter, where, group, rows = (list(more) + [False, "", 1, 128][len(more):])
            name = (f"loadlat_{src}_pair{rows // 8}KB_{'c16' + where + '_' if where else ''}bg{bg}_d{d}_t{t}"
                    f"{'_jitter' if jitter else ''}{f'_g{group}' if group > 1 else ''}")
            how = (f"tma_loaded_latency PROBE=1 PAIR=1 ROWS={rows} HBM={hbm} CTAS={112 if where else 1 + bg} STAGES={d} THINK={t}"
                   + (" JITTER=1" if jitter else "") + (f" CLUSTER=16 ROLE={ROLES[where]}" if where else "")
                   + (f" GROUP={group}" if group > 1 else ""))
            args = dict(hbm=hbm, bg=bg, d=d, think=t, jitter=jitter, where=where, group=group, rows=rows)
            add(name + "_latency", lambda r, a=args: loadlat(r, **a),
                how + ", trace of the probe (CTA 0), median latency while the load is on")
            if bg:
                add(name + "_bw", lambda r, a=args: loadlat_bw(r, **a),
                    how + ", the load CTAs' bytes per cycle (a load CTA's trace), GB/s at the machine clock")

    # A GEMM mainloop's ring without MMAs, load, wait and release in separate warps (the GPU's pipe.json and
    # pipe_more.json): S stages, the consumer holding each T cycles; the landing time read by a watcher warp
    def pipe_rows(d, t, n=132, watch=True, straight=False, sleep=False):
        name = f"pipe_l2_pair16KB_s{d}_t{t}" + ("" if n == 132 else f"_ctas{n}") + ("" if watch else "_nowatch") + \
            ("_straight" if straight else "") + ("_sleep" if sleep else "")
        how = f"tma_stage_pipe STAGES={d} THINK={t}{'' if n == 132 else f' CTAS={n}'} CONSUMER from the consumer-bound rows"
        add(name + "_latency", lambda r: pipe_latency(r, d, t, n, watch),
            how + f", trace of CTA 0, median {'watcher' if watch else 'consumer'} wait end - arrive.expect_tx")
        add(name + "_bw", lambda r: pipe_bw(r, d, t, n), how + ", bandwidth over MEASURED=256, GB/s at the machine clock")
    for straight in (False, True):  # the second box's coordinates between the issues, or before them (a mainloop's form)
        for d in (2, 3, 4, 6):
            for t in (0, 256, 512, 768, 1024, 1536):
                pipe_rows(d, t, 132, True, straight)
    for d, n in ((2, 1), (4, 1), (2, 66), (4, 66)):
        pipe_rows(d, 512, n)
    for n in (1, 132):  # one stage, with and without the watcher
        for watch in (True, False):
            pipe_rows(1, 1024, n, watch)
            pipe_rows(1, 1024, n, watch, True)
    pipe_rows(2, 512, 1, False)
    for d in (2, 4):
        pipe_rows(d, 512, 1, True, True)
    # ... the consumer holding each stage asleep rather than spinning (the twin's consumer issues nothing meanwhile)
    for n in (1, 132):
        pipe_rows(1, 1024, n, True, True, True)
    for d in (2, 4):
        for t in (768, 1024, 1536):
            pipe_rows(d, t, 132, True, True, True)
    pipe_rows(4, 1024, 1, True, True, True)

    # k SMs loading back to back, in one GPC (one cluster of k) or spread (a plain launch), and every GPC's first 16
    # (clusters of 16 on the 7 GPCs that hold one): the GPU's gpc.json
    for tag, kb, pair, d in (("pair16KB_s1", 16, 1, 1), ("box32KB_s4", 32, 0, 4)):
        for k in (8, 12, 16):
            for packed in (0, 1):
                add(f"gpc_{'packed' if packed else 'spread'}_{tag}_ctas{k}_latency",
                    lambda r, kb=kb, pair=pair, d=d, k=k, packed=packed: loaded_latency(r, kb, d, 0, pair, 0, k, k if packed else 1),
                    f"tma_loaded_latency ROWS={kb * 8} STAGES={d}{' PAIR=1' if pair else ''} CTAS={k}"
                    f"{f' CLUSTER={k}' if packed else ''}, trace of CTA 0, median latency")
        add(f"gpc_clusters16_{tag}_latency", lambda r, kb=kb, pair=pair, d=d: loaded_latency(r, kb, d, 0, pair, 0, 112, 16),
            f"tma_loaded_latency ROWS={kb * 8} STAGES={d}{' PAIR=1' if pair else ''} CTAS=112 CLUSTER=16, trace of CTA 0, median latency")

    # TMA stores
    for full, tag in ((0, "wait_group_read0"), (1, "wait_group0")):
        for kb in (1, 2, 4, 8, 16, 32):
            add(f"tma_store_latency_{tag}_{kb}KB",
                lambda r, kb=kb, full=full: bracket(r, "tma_store", "REPS", 32, {"ROWS": kb * 8, "FULL": full}),
                f"tma_store ROWS={kb * 8} FULL={full}, bracket")

    # wgmma
    for n in (8, 16, 32, 64, 128, 256):
        add(f"wgmma_latency_m64n{n}k16_bf16", lambda r, n=n: timed(r, "wgmma", "REPS", 16, {"N": n}),
            f"wgmma N={n} BATCH=1, timed bracket")
    add("wgmma_latency_m64n256k32_e4m3", lambda r: timed(r, "wgmma", "REPS", 16, {"FP8": 1}),
        "wgmma FP8=1 BATCH=1, timed bracket")
    for n in (64, 128, 256):
        for wgs in (1, 2):
            add(f"wgmma_throughput_m64n{n}k16_bf16_{wgs}wg",
                lambda r, n=n, wgs=wgs: timed(r, "wgmma", "REPS", 8, {"N": n, "WGS": wgs, "BATCH": 64}) / (64 * wgs),
                f"wgmma N={n} WGS={wgs} BATCH=64, timed bracket / (64 x WGS)")
    for wgs in (1, 2):
        add(f"wgmma_throughput_m64n256k32_e4m3_{wgs}wg",
            lambda r, wgs=wgs: timed(r, "wgmma", "REPS", 8, {"FP8": 1, "WGS": wgs, "BATCH": 64}) / (64 * wgs),
            f"wgmma FP8=1 WGS={wgs} BATCH=64, timed bracket / (64 x WGS)")

    # mma.sync
    add("mma_sync_latency_m16n8k16_f16", lambda r: timed(r, "mma_sync", "REPS", 16, {"MODE": 0}) / 64,
        "mma_sync MODE=0, timed bracket / 64")
    for warps, nm in ((1, "per_warp"), (4, "4warps"), (8, "8warps")):
        add(f"mma_sync_throughput_m16n8k16_f16_{nm}",
            lambda r, warps=warps: timed(r, "mma_sync", "REPS", 16, {"MODE": 1, "WARPS": warps}) / (256 * warps),
            f"mma_sync MODE=1 WARPS={warps}, timed bracket / (256 x WARPS)")

    # named and cluster barriers
    for w in (2, 4, 8, 12, 16, 32):
        add(f"bar_sync_latency_{w}warps", lambda r, w=w: bracket(r, "bar_sync", "SAMPLES", 8, {"WARPS": w}) / 32,
            f"bar_sync WARPS={w}, bracket / 32")
    add("bar_arrive_to_sync_pingpong_half", lambda r: bracket(r, "bar_pingpong", "SAMPLES", 8, {}) / 64,
        "bar_pingpong, bracket / 64")
    for cs in (1, 2, 4):
        add(f"cluster_barrier_latency_cs{cs}",
            lambda r, cs=cs: bracket(r, "cluster_barrier", "SAMPLES", 8, {"CS": cs}) / 8,
            f"cluster_barrier CS={cs}, bracket / 8")

    # cp.async, global loads
    add("cp_async_cg16_latency_l2", lambda r: bracket(r, "cp_async", "REPS", 32, {}, kernel="latency"),
        "cp_async --kernel latency, bracket")
    add("cp_async_cg16_throughput_one_sm_l2",
        lambda r: (lambda a, b: 1024 * 8 * 4096 / (b - a))(
            cycles(r, "cp_async", {"ITERS": 1024}, "throughput"), cycles(r, "cp_async", {"ITERS": 2048}, "throughput")),
        "cp_async --kernel throughput, bandwidth over ITERS=1024")
    add("load_latency_l2_hit", lambda r: bracket(r, "ld_global", "REPS", 32, {}, kernel="chase"),
        "ld_global --kernel chase, bracket")
    add("l2_read_bw_all_sms",
        lambda r: (16 << 20) / bracket(r, "ld_global", "PASSES", 40, {}, kernel="bandwidth")
        * r.run("ld_global", {"PASSES": 40}, "bandwidth")["clock_mhz"] / 1000,
        "ld_global --kernel bandwidth, bandwidth over PASSES=40, GB/s at the machine clock")

    # TMA stores through the L2 (the GPU's store.json beside its microbench.json; rows it lacks are left out)
    for name, ctas, region, n in (("hier_store_bw_l2_box32KB_d2_read_gbs", 132, 4, 64),
                                  ("hier_store_bw_hbm_box32KB_d2_read_gbs", 132, 1024, 256),
                                  ("hier_store_bw_l2_box32KB_d2_1sm_read_gbs", 1, 4, 64)):
        add(name, lambda r, ctas=ctas, region=region, n=n: gbs(r, "tma_store_ring", n, ctas * 32768, {"CTAS": ctas, "REGION": region}),
            f"tma_store_ring CTAS={ctas} REGION={region}, bandwidth over ITERS={n}, GB/s at the machine clock")
    for name, wrap, n, indep in (("hier_store_mixed_l2_coupled_box32KB_total_gbs", 4, 128, 0),
                                 ("hier_store_mixed_coupled_box32KB_total_gbs", 1024, 256, 0),
                                 ("hier_store_mixed_l2_indep_box32KB_total_gbs", 4, 128, 1),
                                 ("hier_store_mixed_indep_box32KB_total_gbs", 1024, 256, 1)):
        add(name, lambda r, wrap=wrap, n=n, indep=indep: gbs(r, "tma_load_store", n, 2 * 132 * 32768, {"WRAP": wrap, "INDEP": indep}),
            f"tma_load_store WRAP={wrap} INDEP={indep}, bandwidth over ITERS={n}, GB/s at the machine clock")

    # The epilogue's store step, subtile after subtile (the GPU's epilogue.json beside its microbench.json)
    for sfx, ctas in (("1sm", 1), ("all_sms", 132)):
        for name, defs in (("stsm", {"FENCE_BARS": 0}), ("stsm_fence_bars", {"STORE": 0}), ("stsm_bars", {"STORE": 0, "FENCE": 0}),
                           ("stsm_store", {}),
                           ("conv_stsm_store_loads", {"LOADS": 1})):
            add(f"epi_{name}_{sfx}", lambda r, defs=defs, ctas=ctas: bracket(r, "epilogue", "SUBTILES", 256, {**defs, "CTAS": ctas}),
                f"epilogue CTAS={ctas} {' '.join(f'{k}={v}' for k, v in defs.items())}, bracket over SUBTILES=256")
        # ... as one warpgroup of a pingpong kernel runs it (epilogue_wg.json, 2026-12-03): 64x32 subtiles
        for name, defs in (("wg_stsm_fence_bars", {"STORE": 0, "WG": 1}), ("wg_stsm_store", {"WG": 1})):
            add(f"epi_{name}_{sfx}", lambda r, defs=defs, ctas=ctas: bracket(r, "epilogue", "SUBTILES", 256, {**defs, "CTAS": ctas}),
                f"epilogue CTAS={ctas} {' '.join(f'{k}={v}' for k, v in defs.items())}, bracket over SUBTILES=256")

    # How far a warp's stores run ahead of the shared memory, and the fence after them (epilogue_issue.json's epi_issue_*)
    base = lambda r, w: cycles(r, "epilogue_issue", {"W": w, "N": 0, "FENCE": 0})
    for w in (1, 4, 8):
        for n in (0, 1, 8, 64):
            add(f"epi_issue_fence_w{w}_n{n}", lambda r, w=w, n=n: cycles(r, "epilogue_issue", {"W": w, "N": n}) - base(r, w),
                f"epilogue_issue W={w} N={n} FENCE=1, cycles less those of W={w} N=0 FENCE=0")
        add(f"epi_issue_w{w}_n64", lambda r, w=w: cycles(r, "epilogue_issue", {"W": w, "N": 64, "FENCE": 0}) - base(r, w),
            f"epilogue_issue W={w} N=64 FENCE=0, cycles less those of W={w} N=0 FENCE=0")

    # CTA launch
    add("cta_wave_gap_same_sm",
        lambda r: cycles(r, "cta_wave", {"WAVES": 2}, "wave") - cycles(r, "cta_wave", {"WAVES": 1}, "wave") - 20000,
        "cta_wave --kernel wave, cycles(2 waves) - cycles(1 wave) - SPIN")
    add("cta_dispatch_empty_per_sm",
        lambda r: (lambda j: j["cycles"] / j["clock_mhz"] * 1000 / (52800 / 132))(
            r.run("cta_wave", {"CTAS": 52800}, "empty")),
        "cta_wave --kernel empty, ns / (CTAs per SM)")
    return R


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("smpipe", nargs="?", help="the smpipe binary (default build-dev/smpipe, else build/smpipe)")
    ap.add_argument("--csv", help="CSV to write (default validation/results/h100/crosscheck.csv; with --only none)")
    ap.add_argument("--results", default=RESULTS, help="microbenchmark results (default the committed H100 run)")
    ap.add_argument("--gpu", default="h100-sxm", help="machine (default h100-sxm)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel smpipe runs")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each row's program and derivation")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown (for docs/calibration.md)")
    ap.add_argument("--only", default="", help="only the rows whose name contains this (a quick look: no CSV unless --csv)")
    args = ap.parse_args()

    smpipe = args.smpipe
    if not smpipe:
        for c in ("build-dev/smpipe", "build/smpipe"):
            if os.path.exists(os.path.join(ROOT, c)):
                smpipe = os.path.join(ROOT, c)
                break
    if not smpipe or not os.path.exists(smpipe):
        sys.exit("crosscheck.py: no smpipe binary (build it, or pass its path)")
    smpipe = os.path.abspath(smpipe)

    with open(args.results) as f:
        measurements = [m for m in json.load(f)["measurements"] if m.get("median") is not None]
    # With the runs of the store, hierarchy, think, multicast and gpc groups (store.json, hierarchy.json, think.json,
    # multicast4.json, gpc.json) beside the results file, where the GPU has them.
    for extra in ("store.json", "hierarchy.json", "think.json", "multicast4.json", "multicast_gemm.json", "gpc.json", "pipe.json", "pipe_more.json",
                  "pipe_straight.json", "pipe_sleep.json", "loadlat8.json", "epilogue.json", "loadlat_smooth.json", "oob.json",
                  "dirtystart3.json"):
        path = os.path.join(os.path.dirname(os.path.abspath(args.results)), extra)
        if os.path.exists(path):
            with open(path) as f:
                measurements += [m for m in json.load(f)["measurements"] if m.get("median") is not None]
    # The multicast_gemm group's reruns with more A walks (multicast_gemm4.json, 2026-11-30) and clusters of 4
    # (multicast_gemm6.json): the rows the first run (multicast_gemm.json) does not have (its other rows repeat that
    # run's within 2 %).
    for extra in ("multicast_gemm4.json", "multicast_gemm6.json"):  # (6: the clusters-of-4 rows, 2026-11-30)
        path = os.path.join(os.path.dirname(os.path.abspath(args.results)), extra)
        if os.path.exists(path):
            have = {m["name"] for m in measurements}
            with open(path) as f:
                measurements += [m for m in json.load(f)["measurements"] if m.get("median") is not None and m["name"] not in have]
    # The epilogue group's rerun with the barriers without the fence (epilogue_rerun.json, 2026-11-30): that row only
    # (its other rows repeat the first run's within 1.2 %); and its run with the stores' issue (epilogue_issue.json,
    # 2026-11-30): the epi_issue_* rows only (its other rows repeat the first run's within 1.4 %).
    # Its run with one warpgroup's store step (epilogue_wg.json, 2026-12-03): the epi_wg_* rows only (its other rows
    # repeat the first run's within 1 %).
    for extra, prefix in (("epilogue_rerun.json", "epi_stsm_bars_"), ("epilogue_issue.json", "epi_issue_"),
                          ("epilogue_wg.json", "epi_wg_")):
        path = os.path.join(os.path.dirname(os.path.abspath(args.results)), extra)
        if os.path.exists(path):
            with open(path) as f:
                measurements += [m for m in json.load(f)["measurements"] if m.get("median") is not None and m["name"].startswith(prefix)]
    # The think group's rerun with a gap between a stage's two boxes (think_gap.json): its think_gap_* rows only.
    path = os.path.join(os.path.dirname(os.path.abspath(args.results)), "think_gap.json")
    if os.path.exists(path):
        with open(path) as f:
            measurements += [m for m in json.load(f)["measurements"] if m.get("median") is not None and m["name"].startswith("think_gap_")]
    # The L2 combining runs under Nsight Compute (l2_combine_lag_ncu.json beside the results, the H100's): requests
    # per delivered byte over those of no sharing (l2_combine_none, 1.25), named combine_* (without the _bw suffix).
    measurements += ncu_shares(os.path.join(os.path.dirname(os.path.abspath(args.results)), "l2_combine_lag_ncu.json"),
                               "l2_combine_", "combine_")
    # The sharing runs: the H100's L2-resident rows (l2_sharing.json), the H200's --quick runs during its Nsight Compute
    # session (l2_tma_ncu_run.json, l2_hier_ncu_run.json: the sharing rows only); and the H100's requests per delivered
    # byte of both (l2_coalescing_ncu.json): HBM-sourced groups over group 1's, L2-resident ones as they are (a byte
    # that hits costs one request).
    here = os.path.dirname(os.path.abspath(args.results))
    have = {m["name"] for m in measurements}
    for extra in ("l2_sharing.json", "l2_tma_ncu_run.json", "l2_hier_ncu_run.json"):
        path = os.path.join(here, extra)
        if os.path.exists(path):
            with open(path) as f:
                measurements += [m for m in json.load(f)["measurements"] if m.get("median") is not None and m["name"] not in have
                                 and (m["name"].startswith("tma_load_bw_pipe_l2_all_sms_box32KB_shared") or m["name"].startswith("hier_l2_sharing_bw_"))]
    for m in measurements:
        if m["name"].startswith("tma_load_bw_pipe_l2_all_sms_box32KB_shared"):
            SHARED_MIB[m["params"]["groups"]] = m["params"]["bytes_per_cta"] >> 20
    path = os.path.join(here, "sharing", "sharing.json")
    if os.path.exists(path):
        with open(path) as f:
            measurements += [m for m in json.load(f)["measurements"] if m.get("median") is not None]
        with open(os.path.join(here, "sharing", "sharing_ncu.json")) as f:
            measurements += [{"name": "combine_sharing_" + row["measurement"][len("tma_sharing_"):-len("_bw")], "unit": "share of bytes",
                              "median": row["sm_requests_over_delivered"]} for row in json.load(f)["rows"]]
    measurements += [m for m in ncu_shares(os.path.join(here, "blockedge", "l2_edge_ncu.json"), "l2_edge_", "combine_edge_")
                     if m["name"] != "combine_edge_none"]
    for c in (2, 4):
        measurements += [m for m in ncu_shares(os.path.join(here, "clusteredge", "l2_cedge_ncu.json"), f"l2_cedge_c{c}_",
                                               f"combine_cedge_c{c}_")
                         if m["name"] != f"combine_cedge_c{c}_none"]
    path = os.path.join(here, "l2_coalescing_ncu.json")
    if os.path.exists(path):
        with open(path) as f:
            ncu = {row["measurement"]: row["sm_requests_over_delivered"] for row in json.load(f)["rows"]}
        measurements += [{"name": "combine_group" + name[len("hier_l2_sharing_bw_group"):], "unit": "share of bytes",
                          "median": value / ncu["hier_l2_sharing_bw_group1"]}
                         for name, value in ncu.items() if name.startswith("hier_l2_sharing_bw_group") and not name.endswith("group1")]
        measurements += [{"name": "combine_shared" + name[len("tma_load_bw_pipe_l2_all_sms_box32KB_shared"):], "unit": "share of bytes",
                          "median": value}
                         for name, value in ncu.items() if name.startswith("tma_load_bw_pipe_l2_all_sms_box32KB_shared")]
    medians = {m["name"]: (m["median"], m["unit"]) for m in measurements}
    PIPE.update((m["name"], m) for m in measurements if m["name"].startswith("pipe_"))
    LOADLAT.update((m["name"], m) for m in measurements if m["name"].startswith("loadlat_"))
    MCAST_THINK.update((m["name"], m) for m in measurements if m["name"].startswith("mcast_split_think_"))
    # The clumps' persistence (a param of the _issue_neighbours rows) as a row of its own
    for name, m in list(LOADLAT.items()):
        if name.endswith("_issue_neighbours"):
            medians[name[:-len("neighbours")] + "persistence"] = (m["params"]["issue_neighbours_kept_next_issue"], "share")
    # The one-stage ring's own stages' latency (a param of its rows) as a row of its own
    for name, m in list(LOADLAT.items()):
        if "_d1_t1024" in name and name.endswith("_latency") and "_gt_" not in name and "load_latency_median_cycles" in m["params"]:
            medians[name[:-len("latency")] + "load_latency"] = (m["params"]["load_latency_median_cycles"], "cycles")
    SWEEPS.extend((m["name"], m["params"]) for m in measurements if m["name"].startswith("tma_load_bw_sweep_"))

    table, failed = [], []
    with tempfile.TemporaryDirectory(prefix="smpipe-crosscheck-") as tmp:
        runner = Runner(smpipe, args.gpu, tmp)
        # Rows of a group this GPU's runs lack are left out before they run (the H100 has no think or multicast
        # run, the H200 no hierarchy run, only the H200's store run has the L2-resident mix).
        optional = ("hier_store_", "hier_loaded_", "hier_l2_sharing_", "think_", "combine_", "mcast_", "gpc_", "pipe_", "loadlat_", "epi_", "tma_oob_", "dirtystart_",
                    "tma_load_bw_pipe_l2_all_sms_box32KB_shared", "tma_sharing_")  # (think_gap_ too)
        todo = [row for row in rows() if (row[0] in medians or not row[0].startswith(optional)) and args.only in row[0]]
        # Rows are independent: run them on a thread pool (each smpipe run is a process; the cache is shared,
        # a duplicate run at worst costs a few milliseconds).
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futs = [pool.submit(fn, runner) for _, fn, _ in todo]
            for (name, _, how), fut in zip(todo, futs):
                if name not in medians:
                    failed.append(f"{name}: no such measurement in {args.results}")
                    continue
                try:
                    sim = fut.result()
                except (RunError, KeyError, IndexError, ValueError, ZeroDivisionError) as e:
                    failed.append(f"{name}: {type(e).__name__}: {e}")
                    continue
                meas, unit = medians[name]
                err = (sim - meas) / meas * 100
                table.append((name, meas, sim, unit, err, abs(err) <= 10, how))

    w = max(len(t[0]) for t in table) if table else 10
    if args.markdown:
        print("| measurement | measured | simulated | unit | error | within 10% | twin (crosscheck/*.pipe), derivation |")
        print("|---|---:|---:|---|---:|---|---|")
    else:
        print(f"{'measurement':<{w}}  {'measured':>9}  {'simulated':>9}  {'unit':<12} {'error':>8}  within 10%")
    for name, meas, sim, unit, err, ok, how in table:
        if args.markdown:
            print(f"| `{name}` | {meas:.4g} | {sim:.4g} | {unit} | {err:+.1f}% | {'yes' if ok else '**no**'} | {how} |")
            continue
        print(f"{name:<{w}}  {meas:>9.4g}  {sim:>9.4g}  {unit:<12} {err:>+7.1f}%  {'yes' if ok else 'NO'}")
        if args.verbose:
            print(f"{'':<{w}}  ({how})")
    n_ok = sum(1 for t in table if t[5])
    print(f"{n_ok} of {len(table)} within 10% ({runner.count} smpipe runs, machine {args.gpu})")

    if args.csv is None and args.only:
        return 1 if failed else 0
    args.csv = args.csv or CSV_OUT
    os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
    with open(args.csv, "w", newline="") as f:
        cw = csv.writer(f, lineterminator="\n")
        cw.writerow(["name", "measured", "simulated", "unit", "error_pct", "within_10pct"])
        for name, meas, sim, unit, err, ok, _ in table:
            cw.writerow([name, f"{meas:.6g}", f"{sim:.6g}", unit, f"{err:.1f}", "yes" if ok else "no"])
    print(f"wrote {os.path.relpath(args.csv, os.getcwd())}")
    for msg in failed:
        print("FAILED " + msg, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
