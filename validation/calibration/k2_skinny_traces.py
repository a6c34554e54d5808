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

    python3 validation/calibration/k2_skinny_traces.py [SMPIPE] [--sampled]
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


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    smpipe = args[0] if args else os.path.join(ROOT, "build", "smpipe")
    folder = os.path.join(TRACES, "sampled") if "--sampled" in sys.argv else TRACES
    with open(TIMED) as f:
        timed = {(r["M"], r["N"], r["K"], r["spec"]): r for r in json.load(f)["rows"]}
    cols = ("n", "kblock", "consumer_wait", "wait_p90", "waited", "landing", "producer_wait")
    print(f"{'trace':18s} {'MHz':>5s} | {'':5s} {' '.join(f'{c:>13s}' for c in cols)}")
    for path in sorted(glob.glob(os.path.join(folder, "*.bin.gz"))):
        with gzip.open(path, "rb") as f:
            raw = f.read()
        with open(path[:-len(".bin.gz")] + ".meta.json") as f:
            meta = json.load(f)
        trace = collect.decode(raw, meta)
        name = os.path.basename(path)[len("k2_trace_"):-len(".bin.gz")]
        m, n, k = map(int, name.split("_")[0].split("x"))
        stages = trace["params"]["stages"]
        row = timed[(m, n, k, f"coop:128x128:s{stages}")]
        clock = trace["sm_clock_mhz"]
        us, s = model(smpipe, row, clock)

        def cells(d):
            return " ".join(f"{d[c]:13.2f}" if c == "waited" else f"{d[c]:13.0f}" for c in cols)
        print(f"{name.split('_')[0] + ' s' + str(stages):18s} {clock:5.0f} | GPU   {cells(gpu(trace))}")
        print(f"{'':18s} {'':5s} | model {cells(s)}   ({us:.1f} us)")


if __name__ == "__main__":
    main()
