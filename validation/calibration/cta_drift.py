#!/usr/bin/env python3
"""How far apart neighbouring CTAs drift over a k-loop: on the GPU (a K2 hardware trace: each recorded CTA's
producer issues its A load of every k-block; times from %globaltimer at the CTA's start plus clock64 cycles at
the trace's SM clock) and in the model (the same configuration simulated with --trace-ctas N at that clock).
Two reads of a block combine in the L2 only when they start close together (the machine file's
l2_combine_window_cycles, 128 ns), so CTAs that drift apart combine less of their reads: docs/accuracy.md shows
the GPU combining less of them the larger the shape, the model about as much on all.

  python3 validation/calibration/cta_drift.py build/smpipe [TRACE.json]

Prints, for a few k-blocks, the spread (latest less earliest) of the recorded CTAs' load times, GPU and model.
Standard library only; not a test.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACE = "validation/results/h100/k2_trace_8192x8192x8192.json"
KBLOCKS = (0, 1, 4, 16, 32, 64, 100, 127, 128, 160, 200, 255)


def gpu_loads(trace):
    """ns since the first recorded CTA's start of every A load issued by each CTA's producer, by CTA."""
    clock = trace["sm_clock_mhz"]
    # %globaltimer is ~1.8e18 ns: as a float it has 256 ns steps, so subtract the first start as an integer.
    first = min(c["globaltimer_start"] for c in trace["ctas"])
    out = {}
    for c in trace["ctas"]:
        producer = next(w for w in c["warps"] if w["role"] == "producer")
        out[c["cta"]] = [(c["globaltimer_start"] - first) + e[0] * 1000 / clock
                         for e in producer["events"] if e[1] == "tma.load" and e[7] == "A"]
    return out


def model_loads(smpipe, trace):
    """The same from a simulation of the trace's configuration with the cooperative model (A then B each k-block)."""
    p = trace["params"]
    ctas = len(trace["ctas"])
    defs = {"M": p["M"], "N": p["N"], "K": p["K"], "TILE_M": p["tile"][0], "TILE_N": p["tile"][1], "TILE_K": p["tile"][2],
            "STAGES": p["stages"], "STAGES_C": p["stages_c"], "STAGES_D": p["stages_d"], "GROUP_M": p["group_m"],
            "STORE_ACQUIRE": 1, "BETA_ZERO": 1 if p.get("beta", 0) == 0 else 0}
    # Enough cycles for the recorded k-blocks of every recorded CTA.
    window = max(w["end"] for c in trace["ctas"] for w in c["warps"])
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "t.json")
        cmd = [smpipe, "run", "sm90/gemm_tma_ws_cooperative", "--clock-mhz", f'{trace["sm_clock_mhz"]:.0f}', "--no-hazards",
               "--trace", out, "--trace-ctas", str(ctas), "--trace-window", f"0:{window}"]
        for k, v in defs.items():
            cmd += ["-D", f"{k}={v}"]
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        with open(out) as f:
            events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    loads = {}
    for e in events:
        if e.get("ph") == "X" and e.get("name") == "tma.load" and e.get("tid") == 0:
            loads.setdefault(e["pid"], []).append(e["ts"] * 1000)  # the trace's times are microseconds
    return {cta: sorted(ts)[0::2] for cta, ts in loads.items()}  # each k-block loads A, then B


def spreads(loads):
    n = min(len(v) for v in loads.values())
    return {j: max(v[j] for v in loads.values()) - min(v[j] for v in loads.values()) for j in KBLOCKS if j < n}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    smpipe = os.path.abspath(sys.argv[1])
    path = sys.argv[2] if len(sys.argv) > 2 else TRACE
    with open(os.path.join(ROOT, path)) as f:
        trace = json.load(f)
    gpu, model = spreads(gpu_loads(trace)), spreads(model_loads(smpipe, trace))
    print(f"{path}: {len(trace['ctas'])} CTAs on SMs {[c['sm'] for c in trace['ctas']]}, spread of their A loads (ns)")
    print(f"{'k-block':>8} {'GPU':>8} {'model':>8}")
    for j in KBLOCKS:
        if j in gpu:
            print(f"{j:8d} {gpu[j]:8.0f} {model.get(j, float('nan')):8.0f}")


if __name__ == "__main__":
    main()
