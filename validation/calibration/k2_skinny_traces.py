#!/usr/bin/env python3
"""K2's hardware traces of the skinny shapes' 128x128x64 cooperative points with 2, 4 and 6 stages (H200, 2026-11-30,
validation/results/h200/k2_skinny_traces: every k-block of CTAs 0-3, and in sampled/ every 16th k-block of CTAs 0-31;
validation/kernels/run_k2_skinny_trace.sh) beside the model's run of the same point at the clock the probe measured.

Per trace, over the recorded k-blocks (past the first) of the GPU's recorded CTAs and of the model's CTA 0: a k-block's
period (the load warp's successive B loads; every k-block recorded only), the first consumer warp's (warp 4) wait on
full (median and p90), the share of k-blocks where it waited for data (a wait over WAITED cycles: longer than its
wake-up and the probe's record), the landing time of those stages (the B load to that wait's end), and the load warp's
median wait on empty. The probe's records and branches cost the warps time (k2_probe_overhead.json in each folder:
recording every k-block makes these launches 12-39 % slower, every 16th 1-33 % with the sampling build, whose probe-on
kernel recording nothing is 15-25 % slower: the README there), so the recorded CTAs run slower than the model's.

    python3 validation/calibration/k2_skinny_traces.py [SMPIPE] [--sampled | --folder DIR]

--folder DIR reads another folder of such traces, any cooperative variant (the point from the trace's own parameters),
and prints beside each trace the launch's time without the probe (its k2_probe_overhead.json) and the model's at the
probe's clock: validation/results/h200/k2_stream_traces (128x256 with 2 and 4 stages and 128x128 with 2 at shapes whose
unshared operand streams from HBM, 2026-12-01).
"""
import glob
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "traces"))
sys.path.insert(0, os.path.join(ROOT, "validation", "calibration"))
import accuracy as A  # noqa: E402
import collect  # noqa: E402

TRACES = os.path.join(ROOT, "validation", "results", "h200", "k2_skinny_traces")
WAITED = 200  # cycles: a consumer wait longer than this waited for its data
TIMED = os.path.join(ROOT, "validation", "results", "h200", "k2_skinny_timed.json")


def med(v):
    return statistics.median(v) if v else float("nan")


def summary(ctas, pwaits):
    """ctas: per CTA (each on its own clock), (loads, waits): k-block -> its B load's time, and k-block -> warp 4's
    (start, end) of its full wait; pwaits: the load warp's empty waits' durations. Pooled over the CTAs."""
    cw, land, per, n = [], [], [], 0
    for loads, waits in ctas:
        kbs = sorted(k for k in waits if k in loads and k > 0)
        n += len(kbs)
        cw += [waits[k][1] - waits[k][0] for k in kbs]
        land += [waits[k][1] - loads[k] for k in kbs if waits[k][1] - waits[k][0] > WAITED]
        ordered = sorted(loads)
        per += [loads[b] - loads[a] for a, b in zip(ordered, ordered[1:]) if b == a + 1]
    return {"kblock": med(per), "consumer_wait": med(cw), "wait_p90": sorted(cw)[9 * len(cw) // 10] if cw else float("nan"),
            "waited": sum(c > WAITED for c in cw) / max(1, len(cw)), "landing": med(land), "producer_wait": med(pwaits),
            "n": n}


def gpu(trace):
    ctas, pw = [], []
    for cta in trace["ctas"]:
        warps = {w["warp"]: w["events"] for w in cta["warps"]}
        p, c = warps[0], warps[4]
        ctas.append(({e[6]: e[0] for e in p if e[1] == "tma.load" and e[7] == "B"},
                     {e[6]: (e[0], c[i + 1][0]) for i, e in enumerate(c) if e[1] == "wait" and e[2] == "full"}))
        pw += [p[i + 1][0] - e[0] for i, e in enumerate(p) if e[1] == "wait" and e[2] == "empty" and e[6] > 0]
    return summary(ctas, pw)


def model(smpipe, row, clock):
    defs = A.defines(row, A.committed_data()["kernel_instructions"])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.json")
        j = A.run_model(smpipe, A.MODELS[row["schedule"]], "h200", defs, clock, extra=("--trace", path, "--trace-ctas", "1"))
        if "error" in j:
            raise SystemExit(f"model: {j['error']}")
        with open(path) as f:
            events = json.load(f)["traceEvents"]

    def warp(tid):
        return sorted((round(e["ts"] * clock), round((e["ts"] + e["dur"]) * clock), e["name"], e.get("args", {}).get("op", ""))
                      for e in events if e.get("ph") == "X" and e.get("pid") == 0 and e.get("tid") == tid)
    p, c = warp(0), warp(4)
    # Every k-block's ops, whether a wait blocked (its slice named after the barrier) or not (named "wait"): by the op.
    tb = [s[1] for s in p if s[2] == "tma.load" and s[3].startswith("tma.load B")]
    waits = [(s[0], s[1]) for s in c if s[3].startswith("consumer_wait mainloop") and s[2].startswith("wait")]
    acquires = [s[1] - s[0] for s in p if s[3].startswith("producer_acquire mainloop") and s[2].startswith("wait")]
    if len(waits) != len(tb) or len(acquires) != len(tb):
        raise SystemExit(f"model trace: {len(tb)} B loads, {len(waits)} full waits, {len(acquires)} empty waits")
    pw = acquires[1:]
    return j["time_us"], summary([(dict(enumerate(tb)), dict(enumerate(waits)))], pw)


def row_of(trace, timed):
    """The K2 point of a trace: its timed row where the timed file has it, else from the trace's own parameters."""
    p = trace["params"]
    m, n, k = p["M"], p["N"], p["K"]
    tm, tn, tk = p["tile"]
    spec = f"coop:{tm}x{tn}:s{p['stages']}"
    if (m, n, k, spec) in timed:
        return timed[(m, n, k, spec)]
    cluster_m = p["cluster"][0]
    return {"M": m, "N": n, "K": k, "schedule": p["schedule"], "tile_m": tm, "tile_n": tn, "tile_k": tk,
            "stages": p["stages"], "cluster_m": cluster_m, "stages_c": p["stages_c"], "stages_d": p["stages_d"],
            "reuse": 0, "delay": 0, "raster_rows": min(p["group_m"], -(-m // tm) // cluster_m),
            "epi_tile": p["epilogue_tile"]}


def probe_off_us(folder, trace):
    """The launch's median time without the probe (the folder's k2_probe_overhead.json), in us; None without it."""
    path = os.path.join(folder, "k2_probe_overhead.json")
    if not os.path.exists(path):
        return None
    p = trace["params"]
    with open(path) as f:
        for r in json.load(f)["shapes"]:
            if (r["M"], r["N"], r["K"], r["variant"]) == (p["M"], p["N"], p["K"], trace["variant"]):
                return 1000 * r["runs"]["probe_off"]["ms_median"]
    return None


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    folder = TRACES
    if "--folder" in sys.argv:
        folder = sys.argv[sys.argv.index("--folder") + 1]
        args.remove(folder)
    elif "--sampled" in sys.argv:
        folder = os.path.join(TRACES, "sampled")
    smpipe = args[0] if args else os.path.join(ROOT, "build", "smpipe")
    with open(TIMED) as f:
        timed = {(r["M"], r["N"], r["K"], r["spec"]): r for r in json.load(f)["rows"]}
    cols = ("n", "kblock", "consumer_wait", "wait_p90", "waited", "landing", "producer_wait")
    print(f"{'trace':24s} {'MHz':>5s} | {'':5s} {' '.join(f'{c:>13s}' for c in cols)}")
    for path in sorted(glob.glob(os.path.join(folder, "*.bin.gz"))):
        with gzip.open(path, "rb") as f:
            raw = f.read()
        with open(path[:-len(".bin.gz")] + ".meta.json") as f:
            meta = json.load(f)
        trace = collect.decode(raw, meta)
        p = trace["params"]
        row = row_of(trace, timed)
        clock = trace["sm_clock_mhz"]
        us, s = model(smpipe, row, clock)
        off = probe_off_us(folder, trace)

        def cells(d):
            return " ".join(f"{d[c]:13.2f}" if c == "waited" else f"{d[c]:13.0f}" for c in cols)
        name = f"{p['M']}x{p['N']}x{p['K']} {p['tile'][0]}x{p['tile'][1]} s{p['stages']}"
        print(f"{name:24s} {clock:5.0f} | GPU   {cells(gpu(trace))}" + (f"   ({off:.1f} us without the probe)" if off else ""))
        print(f"{'':24s} {'':5s} | model {cells(s)}   ({us:.1f} us)")


if __name__ == "__main__":
    main()
