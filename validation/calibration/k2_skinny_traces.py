#!/usr/bin/env python3
"""K2's hardware traces of the skinny shapes' 128x128x64 cooperative points with 2, 4 and 6 stages (H200, 2026-11-30,
validation/results/h200/k2_skinny_traces: CTAs 0-3, every tile, beta 0; validation/kernels/run_k2_skinny_trace.sh)
beside the model's run of the same point at the clock the probe measured.

Per trace, on the GPU's recorded CTAs and on the model's CTA 0: a k-block's period (the load warp's successive B
loads), the share of k-blocks whose first consumer warp (warp 4) was already waiting when the stage's B load was
issued, the landing time of those stages (the B load to that warp's wait end), and the median waits of warp 4 on full
and of the load warp on empty. The probe's records cost the recorded warps time (k2_probe_overhead.json: recording
every tile makes these launches 25-38 % slower), so the recorded CTAs' consumers are slower than the others'.

    python3 validation/calibration/k2_skinny_traces.py [SMPIPE]
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
TIMED = os.path.join(ROOT, "validation", "results", "h200", "k2_skinny_timed.json")


def med(v):
    return statistics.median(v) if v else float("nan")


def summary(tb, waits, pwaits):
    """tb: the B loads' times; waits: warp 4's (start, end) of its full waits, one per k-block; pwaits: the load warp's
    empty waits' durations."""
    land = [e - b for (s, e), b in zip(waits, tb) if s < b]
    n = min(len(tb), len(waits))
    return {"kblock": med([b - a for a, b in zip(tb, tb[1:])]), "waiting": len(land) / max(1, n), "landing": med(land),
            "consumer_wait": med([e - s for s, e in waits]), "producer_wait": med(pwaits)}


def gpu(trace):
    tb, waits, pw = [], [], []
    for cta in trace["ctas"]:
        warps = {w["warp"]: w["events"] for w in cta["warps"]}
        p, c = warps[0], warps[4]
        b = [e[0] for e in p if e[1] == "tma.load" and e[7] == "B"]
        w = [(e[0], c[i + 1][0]) for i, e in enumerate(c) if e[1] == "wait" and e[2] == "full"]
        k = min(len(b), len(w))
        tb += b[:k]
        waits += w[:k]
        pw += [p[i + 1][0] - e[0] for i, e in enumerate(p) if e[1] == "wait" and e[2] == "empty"]
    return summary(tb, waits, pw)


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
    tb = [s[1] for s in p if s[2] == "tma.load" and s[3].startswith("tma.load B")]
    waits = [(s[0], s[1]) for s in c if s[2] == "wait: mbarrier mainloop.full"]
    pw = [s[1] - s[0] for s in p if s[2] == "wait: mbarrier mainloop.empty"]
    return j["time_us"], summary(tb, waits, pw)


def main():
    smpipe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "smpipe")
    with open(TIMED) as f:
        timed = {(r["M"], r["N"], r["K"], r["spec"]): r for r in json.load(f)["rows"]}
    cols = ("kblock", "waiting", "landing", "consumer_wait", "producer_wait")
    print(f"{'trace':32s} {'MHz':>5s} | GPU (recorded CTAs): {' '.join(f'{c:>13s}' for c in cols)} | model: {'us':>6s} "
          f"{' '.join(f'{c:>13s}' for c in cols)}")
    for path in sorted(glob.glob(os.path.join(TRACES, "*.bin.gz"))):
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
        g = gpu(trace)
        us, s = model(smpipe, row, clock)

        def cells(d):
            return " ".join(f"{d[c]:13.2f}" if c == "waiting" else f"{d[c]:13.0f}" for c in cols)
        print(f"{name.split('_')[0] + ' s' + str(stages):32s} {clock:5.0f} | {'':20s} {cells(g)} | model: {us:6.1f} {cells(s)}")


if __name__ == "__main__":
    main()
