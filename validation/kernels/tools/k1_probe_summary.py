#!/usr/bin/env python3
"""Summarises a K1 probe file (k1_b2b --probe FILE: per CTA its SM, start and per warp clock64 at the marks of
k1_tile.cuh's enum Mark) as the cycles each phase of a CTA takes: medians and p10 / p90 over all warps of all
CTAs, the CTAs' spans, and how many CTAs an SM runs at once. Writes a small JSON (the committed result) and prints
a table.

    validation/kernels/tools/k1_probe_summary.py PROBE.json [PROBE_beta0.json ...] --out SUMMARY.json
"""
import argparse
import json
import statistics

MARKS = ["start", "prologue"] + [f"kt{k}" for k in range(18)] + ["g0_done", "epi0", "g1_prologue", "g1_done", "end"]
# Phases: (name, from mark, to mark)
PHASES = [("GEMM0 prologue (first two stages' copies)", "start", "prologue"),
          ("GEMM0 k-tile 0", "prologue", "kt0")] + \
         [(f"GEMM0 k-tile {k}", f"kt{k - 1}", f"kt{k}") for k in range(1, 18)] + \
         [("GEMM0 drain", "kt17", "g0_done"),
          ("epilogue 0 (bias, ReLU, D1 to smem, sync)", "g0_done", "epi0"),
          ("GEMM1 prologue (B1 copies)", "epi0", "g1_prologue"),
          ("GEMM1 (2 k-tiles, drain)", "g1_prologue", "g1_done"),
          ("epilogue 1 (C1 loads, math, D stores)", "g1_done", "end")]


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def summarise(path):
    with open(path) as f:
        run = json.load(f)
    idx = {m: i for i, m in enumerate(MARKS)}
    assert run["marks"] == len(MARKS), f'{path}: {run["marks"]} marks, expected {len(MARKS)}'
    phases = {name: [] for name, _, _ in PHASES}
    spans, starts = [], []
    for sm, start_ns, warps in run["ctas"]:
        first = min(w[idx["start"]] for w in warps)
        last = max(w[idx["end"]] for w in warps)
        spans.append(last - first)
        starts.append((sm, start_ns))
        for w in warps:
            for name, a, b in PHASES:
                if w[idx[a]] and w[idx[b]]:
                    phases[name].append(w[idx[b]] - w[idx[a]])
    kt = [x for k in range(1, 18) for x in phases[f"GEMM0 k-tile {k}"]]
    out = {"source": path, "command_line": run["command_line"], "gpu": run["gpu"], "nvidia_smi": run["nvidia_smi"],
           "beta1": run["beta1"], "ctas": len(run["ctas"]),
           "cta_span_cycles": {"median": statistics.median(spans), "p10": pct(spans, 0.1), "p90": pct(spans, 0.9)},
           "phases_cycles": {}}
    for name, _, _ in PHASES:
        if name.startswith("GEMM0 k-tile") and name not in ("GEMM0 k-tile 0", "GEMM0 k-tile 1", "GEMM0 k-tile 17"):
            continue
        v = phases[name]
        out["phases_cycles"][name] = {"median": statistics.median(v), "p10": pct(v, 0.1), "p90": pct(v, 0.9)}
    out["phases_cycles"]["GEMM0 k-tiles 1-17 (each)"] = {"median": statistics.median(kt), "p10": pct(kt, 0.1), "p90": pct(kt, 0.9)}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("probe", nargs="+")
    ap.add_argument("--out")
    a = ap.parse_args()
    res = [summarise(p) for p in a.probe]
    for r in res:
        print(f'{r["source"]}: beta1 {r["beta1"]}, {r["ctas"]} CTAs, span median {r["cta_span_cycles"]["median"]} cycles')
        for name, s in r["phases_cycles"].items():
            print(f'  {name:48s} {s["median"]:8.0f}  (p10 {s["p10"]}, p90 {s["p90"]})')
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"schema": "smpipe.k1_probe_summary.v1", "runs": res}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
