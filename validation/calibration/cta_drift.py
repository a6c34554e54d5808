#!/usr/bin/env python3
"""How far apart neighbouring CTAs drift: on the GPU (a K2 hardware trace: the issue time of each recorded CTA's
A loads, the j-th load of its first tiles (k-blocks of its first tile, then of its second); times from
%globaltimer at the CTA's start plus clock64 cycles at the trace's SM clock) and in the model (about the same
configuration, the sm90 cooperative model with the trace's tile, stages, raster and C buffers, no jitter,
simulated with --trace-ctas N at that clock). In the model two reads of a block combine in the L2 only when
they start within l2_combine_window_cycles (128 ns); whether the GPU's drift explains why it combines fewer
reads than the model on large shapes (docs/accuracy.md) is not established (docs/replay.md, item 6).

  python3 validation/calibration/cta_drift.py build/smpipe [TRACE.json]

Prints the spread (latest less earliest) of the recorded CTAs' load times, GPU and model: its median and
maximum over windows of 32 loads. Standard library only; not a test.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACE = "validation/results/h100/k2_trace_8192x8192x8192.json"
WINDOW = 32  # loads per line of the output


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
    # Enough cycles for the recorded loads of every recorded CTA.
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
        if e.get("ph") == "X" and e.get("tid") == 0 and e.get("args", {}).get("op", "").startswith("tma.load A "):
            loads.setdefault(e["pid"], []).append(e["ts"] * 1000)  # the trace's times are microseconds
    return {cta: sorted(ts) for cta, ts in loads.items()}


def spreads(loads, n):
    """Spread of the CTAs' j-th loads, for j < n (the loads every CTA has on both sides)."""
    return [max(v[j] for v in loads.values()) - min(v[j] for v in loads.values()) for j in range(n)]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    smpipe = os.path.abspath(sys.argv[1])
    path = sys.argv[2] if len(sys.argv) > 2 else TRACE
    with open(os.path.join(ROOT, path)) as f:
        trace = json.load(f)
    g, m = gpu_loads(trace), model_loads(smpipe, trace)
    n = min(min(len(v) for v in g.values()), min(len(v) for v in m.values()))
    gpu, model = spreads(g, n), spreads(m, n)
    print(f"{path}: {len(trace['ctas'])} CTAs on SMs {[c['sm'] for c in trace['ctas']]}; spread of their A loads (ns), "
          f"{trace['params'].get('k_blocks', '?')} loads per tile")
    print(f"{'loads':>10} {'GPU median':>11} {'GPU max':>8} {'model median':>13} {'model max':>10}")
    for j in range(0, n, WINDOW):
        gw, mw = sorted(gpu[j:j + WINDOW]), sorted(model[j:j + WINDOW])
        print(f"{f'{j}-{j + len(gw) - 1}':>10} {gw[len(gw) // 2]:11.0f} {gw[-1]:8.0f} {mw[len(mw) // 2]:13.0f} {mw[-1]:10.0f}")


if __name__ == "__main__":
    main()
