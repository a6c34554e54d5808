#!/usr/bin/env python3
"""Speed of the built-in models (not a test): for each, the ops it simulates, the best wall time of N runs on
one core, ops per second, and with --callgrind the instructions per op (valgrind --tool=callgrind: a figure
that the noise of a shared machine does not move). With --sweep, also the wall time of a sweep of the
cooperative model over tiles, stages, clusters and shapes on every core. With --check, the wall time of
`smpipe check --seeds N` on one core (--jobs 1) and on every core, run in turn --runs times, and the speed-up.

With --no-hazards every run skips the data-hazard checker (smpipe --no-hazards: the same timing, less work).
Every run is at --clock boost (one simulation: the engine's speed) unless --clock says otherwise; the default
clock (sustained) adds a first run of at most 1 M ops that measures the tensor pipe's load.

Usage: bench/models.py [--smpipe build/smpipe] [--runs 3] [--callgrind] [--sweep] [--check] [--rss] [--only NAME]
                       [--no-hazards] [--clock boost|sustained|sustained-constant]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# name, params, and the params of its callgrind run (the same code paths at a fraction of the ops, 1/8 for the
# 8192^3 GEMMs: valgrind runs ~50x slower). The sizes are those the targets name (8192^3 for the GEMMs).
S4 = ["-D", "M=4096", "-D", "N=4096", "-D", "K=4096"]
MODELS = [
    ("sm90/gemm_tma_ws_cooperative", [], S4),
    ("sm90/gemm_tma_ws_pingpong", [], S4),
    ("sm90/gemm_tma_ws", [], S4),
    ("sm90/gemm_tma_ws_cooperative", ["-D", "CLUSTER_M=2"], S4 + ["-D", "CLUSTER_M=2"]),
    ("sm100/gemm_blockscaled_nvfp4", ["-D", "M=8192", "-D", "N=8192", "-D", "K=8192"], S4),
    ("sm80/gemm_multistage", S4, ["-D", "M=2048", "-D", "N=2048", "-D", "K=2048"]),
    ("sm80/b2b_gemm_smem_accumulator", [], ["-D", "M=16384"]),
]

SWEEP = ["-D", "TILE_N=64,128,256", "-D", "STAGES=2,3,4,5", "-D", "CLUSTER_M=1,2",
         "-D", "M=2048,4096,6144,8192", "-D", "N=2048,4096,6144,8192", "-D", "K=2048,4096,8192"]


# The sizes the memory target names: 16384^3 for the GEMMs, 262144 rows (3.2x K1's problem) for the back-to-back GEMM.
S16 = ["-D", "M=16384", "-D", "N=16384", "-D", "K=16384"]
RSS_PARAMS = {
    "sm90/gemm_tma_ws_cooperative": S16,
    "sm90/gemm_tma_ws_pingpong": S16,
    "sm90/gemm_tma_ws": S16,
    "sm100/gemm_blockscaled_nvfp4": S16,
    "sm80/gemm_multistage": S16,
    "sm80/b2b_gemm_smem_accumulator": ["-D", "M=262144"],
}

EXTRA = []  # --clock MODE, --no-hazards


def run_json(smpipe, name, params):
    out = subprocess.run([smpipe, "run", name, *params, *EXTRA, "--json", "--max-ops", "4000000000"], capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"{name} {' '.join(params)}: exit {out.returncode}: {out.stderr.strip()[-300:]}")
    return json.loads(out.stdout)


def instructions(smpipe, name, params):
    with tempfile.TemporaryDirectory() as d:
        cg = os.path.join(d, "cg.out")
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", smpipe, "run", name, *params, *EXTRA,
                            "--json", "--max-ops", "4000000000"], capture_output=True, text=True, check=False)
        m = re.search(r"refs:\s+([\d,]+)", r.stderr)
        ops = json.loads(r.stdout)["ops"]
        return int(m.group(1).replace(",", "")), ops


def peak_rss(smpipe, name, params, extra=()):
    """Runs one simulation; returns (its ops, seconds, peak resident set size in MB) from the process's own rusage."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err, subprocess.Popen(
            [smpipe, "run", name, *params, *EXTRA, *extra, "--json", "--max-ops", "4000000000"], stdout=subprocess.PIPE,
            stderr=err) as proc:
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        dt = time.perf_counter() - t0
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"{name} {' '.join(params)}: exit {proc.returncode}: {err.read().decode(errors='replace').strip()[-300:]}")
    return json.loads(out)["ops"], dt, usage.ru_maxrss / 1024  # ru_maxrss is in KB on Linux


# check --seeds: 16 jittered schedules of the cooperative model at 2048^3 (a schedule is one simulation of ~0.9 M ops).
CHECK = ["sm90/gemm_tma_ws_cooperative", "-D", "M=2048", "-D", "N=2048", "-D", "K=2048", "--seeds", "16", "--jitter", "20"]


def check_scaling(smpipe, runs):
    """`smpipe check` with --jobs 1 and with one job per core, in turn (pairs: a shared machine's drifting speed
    moves both runs of a pair alike); prints the median wall time of each and the median of the pairs' ratios."""
    jobs = os.cpu_count() or 1

    def wall(j):
        t0 = time.perf_counter()
        r = subprocess.run([smpipe, "check", *CHECK, *EXTRA, "--jobs", str(j)], capture_output=True, text=True, check=False)
        if r.returncode != 0:
            sys.exit(f"check --jobs {j}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
        return time.perf_counter() - t0

    one, all_, ratio = [], [], []
    for _ in range(runs):
        one.append(wall(1))
        all_.append(wall(jobs))
        ratio.append(one[-1] / all_[-1])
    print(f"check --seeds 16 of the cooperative model at 2048^3 ({runs} pairs): median {statistics.median(one):.2f} s on 1 core, "
          f"{statistics.median(all_):.2f} s on {jobs} cores; speed-up median {statistics.median(ratio):.2f}x "
          f"(pairs {min(ratio):.2f}-{max(ratio):.2f}x)")


def rss_table(smpipe, only):
    print(f"{'peak memory (16384^3; the b2b GEMM at 262144 rows)':62s} {'ops':>10s} {'wall s':>7s} {'RSS MB':>7s}")
    # A small run first: the process's own baseline, against which the large runs' live state shows.
    rows = [("sm90/gemm_tma_ws_cooperative", ["-D", "M=1024", "-D", "N=1024", "-D", "K=1024"], [])]
    rows += [(name, params, []) for name, params in RSS_PARAMS.items()]
    rows.append(("sm90/gemm_tma_ws_cooperative", RSS_PARAMS["sm90/gemm_tma_ws_cooperative"], ["--trace-window", "0:200000"]))
    rows.append(("sm90/gemm_tma_ws_cooperative", RSS_PARAMS["sm90/gemm_tma_ws_cooperative"],
                 ["--trace-ctas", "1", "--trace-window", "0:200000"]))
    for name, params, window in rows:
        label = " ".join([name, *params[1::2], *window])
        if only and only not in label:
            continue
        with tempfile.TemporaryDirectory() as d:
            extra = ["--trace", os.path.join(d, "t.json"), *window] if window else []
            ops, dt, mb = peak_rss(smpipe, name, params, extra)
        print(f"{label:62s} {ops:10d} {dt:7.1f} {mb:7.1f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smpipe", default="build/smpipe")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--check", action="store_true", help="check --seeds on one core and on every core (the models table is skipped)")
    ap.add_argument("--rss", action="store_true", help="peak memory of each model at 16384^3 (and with a trace window)")
    ap.add_argument("--only")
    ap.add_argument("--no-hazards", action="store_true")
    ap.add_argument("--clock", default="boost", choices=["boost", "sustained", "sustained-constant"])
    a = ap.parse_args()
    EXTRA.extend(["--clock", a.clock])
    if a.no_hazards:
        EXTRA.append("--no-hazards")
    if a.check:  # the check scaling alone
        check_scaling(a.smpipe, a.runs)
        return 0
    if a.rss:  # the memory table alone (--runs, --callgrind and --sweep do not apply)
        rss_table(a.smpipe, a.only)
        return 0
    print(f"{'model':62s} {'ops':>10s} {'wall s':>7s} {'Mops/s':>7s}" + (f" {'instr/op':>9s}" if a.callgrind else ""))
    for name, params, cg_params in MODELS:
        label = " ".join([name, *params[1::2]])
        if a.only and a.only not in label:
            continue
        best, ops = None, 0
        for _ in range(a.runs):
            t0 = time.perf_counter()
            ops = run_json(a.smpipe, name, params)["ops"]
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        line = f"{label:62s} {ops:10d} {best:7.3f} {ops / best / 1e6:7.2f}"
        if a.callgrind:
            ir, cops = instructions(a.smpipe, name, cg_params)
            line += f" {ir / cops:9.0f}"
        print(line, flush=True)
    if a.sweep:
        jobs = os.cpu_count() or 1
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            subprocess.run([a.smpipe, "sweep", "sm90/gemm_tma_ws_cooperative", *SWEEP, *EXTRA, "--group", "M,N,K", "--csv",
                            os.path.join(d, "s.csv")], capture_output=True, check=False)
            dt = time.perf_counter() - t0
            points = sum(1 for _ in open(os.path.join(d, "s.csv"))) - 1
        print(f"sweep of the cooperative model: {points} points in {dt:.1f} s on {jobs} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
