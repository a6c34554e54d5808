#!/usr/bin/env python3
"""How much slower a pingpong epilogue's conversion runs while the other warpgroup's wgmmas run, from K2's pingpong
hardware traces (validation/results/h200/k2_pp_traces: 128x128x64 with 4 and 6 stages at 8192x8192x256 and 4096^3,
CTAs 0-3, the probe's raw buffers gzipped with the driver's descriptions; collected 2026-11-29 on the H200, command
line in each .meta.json).

The conversion of a subtile (alpha x accumulator -> bf16 pairs) is the interval from the event before a warp's
st.shared record (the previous subtile's bar.sync.end, or the tile's epilogue marker) to that record. Each is
classed by how much of it the other consumer warpgroup of the CTA spends with wgmmas in flight (from its tile's first
wgmma to the end of its wgmma.wait 0): over 90 % ("beside"), under 10 % ("alone"), else "partly". The probe's own
cost is in both classes alike (the pingpong probe-on kernel spills registers and runs 52-72 % slower than the
probe-off one: k2_probe_overhead_pp.json), so the ratio of the medians, alone / beside, is what the models take as
the conversion's `mma_speed` (FUSION_MMA_SPEED); the probe's absolute figures are not used.

  python3 validation/calibration/pp_conversion.py            prints the table
  python3 validation/calibration/pp_conversion.py --write    also writes validation/results/h200/k2_pp_conversion.json
  python3 validation/calibration/pp_conversion.py --check    fails (exit 1) when that file is not what the traces give
Standard library only.
"""
import argparse
import glob
import gzip
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "traces"))
import collect  # noqa: E402  (traces/collect.py: the probe's raw format)

TRACES = "validation/results/h200/k2_pp_traces"
OUT = "validation/results/h200/k2_pp_conversion.json"


def wgmma_spans(events):
    """[start, end) of each tile's wgmmas in flight: the tile's first wgmma to the end of its wgmma.wait 0."""
    spans, start = [], None
    for e in events:
        if e[1] == "wgmma" and start is None:
            start = e[0]
        elif e[1] == "wgmma.wait.end" and e[3] == 0 and start is not None:
            spans.append((start, e[0]))
            start = None
    return spans


def classify(trace):
    out = {"alone": [], "beside": [], "partly": []}
    for cta in trace["ctas"]:
        warps = {w["warp"]: w["events"] for w in cta["warps"]}
        spans = {g: wgmma_spans(warps[4 + 4 * g]) for g in (0, 1)}
        for g in (0, 1):
            for w in range(4 + 4 * g, 8 + 4 * g):
                ev = warps[w]
                for i in range(1, len(ev)):
                    if ev[i][1] != "st.shared":
                        continue
                    a, b = ev[i - 1][0], ev[i][0]
                    if b <= a:
                        continue
                    over = sum(max(0, min(b, y) - max(a, x)) for x, y in spans[1 - g])
                    f = over / (b - a)
                    out["beside" if f > 0.9 else "alone" if f < 0.1 else "partly"].append(b - a)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="write " + OUT)
    ap.add_argument("--check", action="store_true", help="exit 1 when " + OUT + " differs from what the traces give")
    args = ap.parse_args()
    rows, alone_all, beside_all = [], [], []
    for path in sorted(glob.glob(os.path.join(ROOT, TRACES, "*.bin.gz"))):
        with gzip.open(path, "rb") as f:
            raw = f.read()
        with open(path[:-len(".bin.gz")] + ".meta.json") as f:
            meta = json.load(f)
        trace = collect.decode(raw, meta)
        c = classify(trace)
        name = os.path.basename(path)[:-len(".bin.gz")]
        med = {k: statistics.median(v) if v else None for k, v in c.items()}
        rows.append({"trace": name, "sm_clock_mhz": trace.get("sm_clock_mhz"), **{f"{k}_n": len(v) for k, v in c.items()},
                     **{f"{k}_median_cycles": med[k] for k in c}, "ratio_alone_over_beside": med["alone"] / med["beside"]})
        alone_all += c["alone"]
        beside_all += c["beside"]
    pooled = statistics.median(alone_all) / statistics.median(beside_all)
    print(f"{'trace':64} {'alone':>12} {'beside':>12} {'ratio':>6}")
    for r in rows:
        print(f"{r['trace']:64} {r['alone_median_cycles']:>7} ({r['alone_n']:4}) {r['beside_median_cycles']:>7} ({r['beside_n']:4})"
              f" {r['ratio_alone_over_beside']:6.3f}")
    print(f"pooled: alone {statistics.median(alone_all)} ({len(alone_all)}), beside {statistics.median(beside_all)} "
          f"({len(beside_all)}): mma_speed {100 * pooled:.1f} %")
    text = json.dumps({"source": TRACES, "generator": "validation/calibration/pp_conversion.py --write", "traces": rows,
                       "pooled_alone_median_cycles": statistics.median(alone_all),
                       "pooled_beside_median_cycles": statistics.median(beside_all),
                       "mma_speed_percent": round(100 * pooled, 1)}, indent=2) + "\n"
    if args.write:
        with open(os.path.join(ROOT, OUT), "w") as f:
            f.write(text)
    if args.check:
        with open(os.path.join(ROOT, OUT)) as f:
            if f.read() != text:
                print(f"{OUT} is not what the traces give: run pp_conversion.py --write", file=sys.stderr)
                sys.exit(1)


if __name__ == "__main__":
    main()
