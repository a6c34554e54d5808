#!/usr/bin/env python3
"""When do the CTAs that read the same TMA box read it? From a K2 hardware trace of every CTA (the probe's tma.load
issue times of each CTA's producer): the time between the reads of one box by different CTAs, by how the two CTAs
relate (the two SMs of a TPC; CTAs at most 12 apart in launch order; farther) and by the tile of each CTA's
sequence the later read belongs to (its wave); and how far apart the CTAs start their j-th tile, on the GPU and in
the model. The L2 combines a second read of a box with the first only while the two are close in time
(validation/microbench/README.md: the two SMs of a TPC 100 % up to 128 ns and 66 % 4 us apart; CTAs 4 apart 63 %
at once, 23 % 4 us apart; far apart 13 %), and docs/accuracy.md shows the GPU combining no more than its TPC pairs
could on grids of many tiles, far more on grids of one wave.

  python3 validation/calibration/trace_lags.py reduce TRACE.json -o LOADS.json   (beside the trace: it is large)
  python3 validation/calibration/trace_lags.py analyse LOADS.json[.xz] [--model build/smpipe_cta_starts]

reduce keeps each traced CTA's SM and, per TMA load of its producer, the place of its tile in the CTA's sequence,
the tile, the k-block, the tensor (0: A, 1: B) and the issue time (ns from the earliest CTA start: %globaltimer at
the CTA's start plus clock64 cycles at the trace's SM clock). analyse prints the tables; with --model it also
simulates the trace's configuration (the sm90 cooperative model, K2's parameters, at the trace's clock, through
smpipe_cta_starts) and prints when its CTAs start their tiles. Standard library only; not a test.
"""
import argparse
import collections
import json
import lzma
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NEAR = 12  # CTAs at most this far apart in launch order (the model's near distance until 2026-12-03; now blocks of 16)


def reduce(trace_path, out_path):
    with open(trace_path) as f:
        trace = json.load(f)
    clock = trace["sm_clock_mhz"]
    first = min(c["globaltimer_start"] for c in trace["ctas"])
    loads = []
    for c in trace["ctas"]:
        producer = next(w for w in c["warps"] if w["role"] == "producer")
        tile, seq = -1, -1
        for e in producer["events"]:  # field 6 (iteration): the tile index of a tile marker, a load's k-block
            if e[1] == "tile":
                tile, seq = e[6], seq + 1
            elif e[1] == "tma.load" and e[7] in ("A", "B"):
                t_ns = (c["globaltimer_start"] - first) + e[0] * 1000.0 / clock
                loads.append([c["cta"], seq, tile, e[6], 0 if e[7] == "A" else 1, round(t_ns)])
    out = {"what": "K2's TMA loads, one row each: " + ", ".join(["cta", "tile_seq", "tile", "k_block", "tensor (0: A, 1: B)",
                                                                  "issue_ns"]) + " (validation/calibration/trace_lags.py)",
           "command": trace["command"], "gpu": trace["gpu"], "date": trace["date"], "sm_clock_mhz": clock,
           "params": trace["params"], "sm": {str(c["cta"]): c["sm"] for c in trace["ctas"]},
           "dropped": sum(w["dropped"] for c in trace["ctas"] for w in c["warps"]), "loads": loads}
    with open(out_path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
    print(f"{out_path}: {len(loads)} loads of {len(out['sm'])} CTAs ({out['dropped']} records dropped)")


def tile_coords(t, n_mrow, n_nblk, group):
    """K2's persistent scheduler (validation/kernels/src/k2_gemm.cuh, tile_coords)."""
    per_group = group * n_nblk
    g, r = divmod(t, per_group)
    rows = min(group, n_mrow - g * group)
    return g * group + r % rows, r // rows


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def spread_lines(starts, unit):
    """starts: tile place -> {cta: start}; one line per tile place."""
    lines = []
    for seq in sorted(starts):
        v = list(starts[seq].values())
        lines.append(f"  tile {seq}: {len(v)} CTAs, spread {max(v) - min(v):.0f} {unit} (p10-p90 {pct(v, .9) - pct(v, .1):.0f}), "
                     f"stdev {statistics.pstdev(v):.0f}")
    return lines


def analyse(path, model):
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:  # the committed ones are xz-compressed
        d = json.load(f)
    p = d["params"]
    sm = {int(k): v for k, v in d["sm"].items()}
    bm, bn = p["tile"][0], p["tile"][1]
    n_mrow, n_nblk = -(-p["M"] // bm), -(-p["N"] // bn)
    group = p.get("group_m", 8)
    reads = collections.defaultdict(list)  # (tensor, row block, k block) -> [(issue_ns, cta, seq)]
    for cta, seq, tile, kb, tensor, t in d["loads"]:
        mr, nb = tile_coords(tile, n_mrow, n_nblk, group)
        reads[(tensor, mr if tensor == 0 else nb, kb)].append((t, cta, seq))
    # For every read of a box after its first in a wave: the time since the latest earlier read of it in the same
    # wave (the same place in the CTAs' tile sequences) by a CTA of each kind.
    lags = collections.defaultdict(list)  # (kind, wave of the later read) -> ns
    for rs in reads.values():
        rs.sort()
        for i, (t, cta, seq) in enumerate(rs):
            best = {}
            for t0, c0, s0 in rs[:i]:
                if s0 != seq:
                    continue
                kind = "TPC" if sm[c0] // 2 == sm[cta] // 2 else "near" if abs(c0 - cta) <= NEAR else "far"
                best[kind] = min(best.get(kind, float("inf")), t - t0)
            for kind, lag in best.items():
                lags[(kind, min(seq, 3))].append(lag)
    print(f"{os.path.basename(path).removesuffix('.xz')}: {len(sm)} CTAs, {len(d['loads'])} loads, tile {bm}x{bn}, {n_mrow}x{n_nblk} tiles, "
          f"raster groups of {group} m rows; {d['gpu']}, {d['sm_clock_mhz']} MHz")
    print("For each read of a box after its first in its wave (the j-th tile of each CTA): the time since the latest")
    print("earlier read of it in that wave by a CTA of each kind")
    print(f"(ns; TPC: the other SM of its TPC; near: at most {NEAR} CTAs apart in launch order; far: the rest)")
    print(f"{'partner':8s} {'wave':>5s} {'reads':>7s} {'p10':>8s} {'median':>8s} {'p90':>8s} {'<=128ns':>8s} {'<=512ns':>8s} {'<=4us':>7s}")
    for kind in ("TPC", "near", "far"):
        for wave in range(4):
            v = lags.get((kind, wave))
            if not v:
                continue
            share = lambda x: sum(1 for a in v if a <= x) / len(v)
            print(f"{kind:8s} {wave if wave < 3 else '3+':>5} {len(v):7d} {pct(v, .1):8.0f} {pct(v, .5):8.0f} {pct(v, .9):8.0f} "
                  f"{share(128):8.2f} {share(512):8.2f} {share(4096):7.2f}")
    starts = collections.defaultdict(dict)
    for cta, seq, tile, kb, tensor, t in d["loads"]:
        if kb == 0 and tensor == 0:
            starts[seq][cta] = t
    print("GPU: when the CTAs issue the first A load of the j-th tile of their sequence (ns)")
    print("\n".join(spread_lines(starts, "ns")))
    last = max(s for s in starts if len(starts[s]) == len(sm))
    off = {c: starts[last][c] - statistics.median(starts[last].values()) for c in sm}
    pairs = collections.defaultdict(list)
    for c in sm:
        pairs[sm[c] // 2].append(off[c])
    within = [abs(v[0] - v[1]) for v in pairs.values() if len(v) == 2]
    if within:
        print(f"  at tile {last}: the two CTAs of a TPC {statistics.median(within):.0f} ns apart (median; max {max(within):.0f}), "
              f"the TPCs' offsets stdev {statistics.pstdev([statistics.mean(v) for v in pairs.values()]):.0f} ns")
    if model:
        clock = d["sm_clock_mhz"]
        defs = {"M": p["M"], "N": p["N"], "K": p["K"], "TILE_M": bm, "TILE_N": bn, "TILE_K": p["tile"][2],
                "STAGES": p["stages"], "STAGES_C": p["stages_c"], "STAGES_D": p["stages_d"], "GROUP_M": group,
                "STORE_ACQUIRE": 1, "BETA_ZERO": 1 if p.get("beta", 0) == 0 else 0}
        cmd = [os.path.abspath(model), "sm90/gemm_tma_ws_cooperative", str(p["k_blocks"]), f"{clock:.1f}"] + [f"{k}={v}" for k, v in defs.items()]
        out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout.splitlines()[1:]
        mstarts = collections.defaultdict(dict)
        for line in out:
            cta, _, seq, cycle = (int(x) for x in line.split(","))
            if seq <= max(starts):
                mstarts[seq][cta] = cycle * 1000.0 / clock
        print(f"model (sm90/gemm_tma_ws_cooperative with K2's parameters at {clock:.0f} MHz): the same (ns)")
        print("\n".join(spread_lines(mstarts, "ns")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("reduce")
    r.add_argument("trace")
    r.add_argument("-o", required=True)
    a = sub.add_parser("analyse")
    a.add_argument("loads")
    a.add_argument("--model", help="the smpipe_cta_starts binary (build/smpipe_cta_starts)")
    args = ap.parse_args()
    if args.cmd == "reduce":
        reduce(args.trace, args.o)
    else:
        analyse(args.loads, args.model)


if __name__ == "__main__":
    sys.exit(main())
