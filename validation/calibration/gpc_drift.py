#!/usr/bin/env python3
"""Do a K2 run's CTAs drift apart by GPC? From a K2 trace of every CTA reduced by trace_lags.py (LOADS.json: each CTA's
SM and the issue times of its producer's TMA loads) and a microbenchmark run of the same chip's GPCs and per-SM rates
(`smpipe_microbench --only smlat,gpc`: gpc_clusters16_* gives the GPCs, l2_smlat_* each SM's ring rate under load):
per tile j of each CTA's sequence, how far the SMs of each GPC start it (their first A load) from the mean over all
CTAs, the spread within each GPC, and at the last tile each GPC's offset as a share of the time elapsed (a steady rate
difference) beside that GPC's rates in the microbenchmark.

  python3 validation/calibration/gpc_drift.py SMLAT.json LOADS.json [LOADS.json ...] [--starts OUT.json]
  python3 validation/calibration/gpc_drift.py SMLAT.json OUT.json#LOADS.json ...   (from a --starts file)

--starts writes the per-CTA tile starts of every LOADS.json (SM, GPC, ns) as one small JSON (what the tables are
made from), which later runs can read instead of the large LOADS.json. Standard library only; not a test.
"""
import argparse
import collections
import json
import statistics


def gpcs_and_rates(path):
    """SM id -> GPC (runs of 16 ids of gpc_clusters16; other SMs 'rest'), and per l2_smlat_* case each GPC's median
    rate over the median of all SMs."""
    with open(path) as f:
        run = json.load(f)
    ms = {m["name"]: m for m in run["measurements"]}
    c16 = next(m for n, m in ms.items() if n.startswith("gpc_clusters16_") and n.endswith("_bw"))
    gpc = {int(s): i // 16 for i, s in enumerate(c16["params"]["smids"].split(","))}
    rates = {}
    for n, m in ms.items():
        if not (n.startswith("l2_smlat_") and n.endswith("_bw")):
            continue
        by = collections.defaultdict(list)
        for item in m["params"]["per_sm"].split(","):
            sm, _, bpc = item.split(":")
            by[gpc.get(int(sm), "rest")].append(float(bpc))
        mid = statistics.median(b for v in by.values() for b in v)
        rates[n[len("l2_smlat_"):-3]] = {g: statistics.median(v) / mid for g, v in by.items()}
    return gpc, rates


def tile_starts(path):
    """Per CTA: (SM, [issue time of the first A load of each tile of its sequence]); `path` a LOADS.json, or a --starts
    file (its traces, each as "FILE#NAME")."""
    name = None
    if "#" in path:
        path, name = path.split("#", 1)
    with open(path) as f:
        d = json.load(f)
    if name is not None:
        t = d["traces"][name]
        return ({"params": {}, "label": t["what"], "sm_clock_mhz": t["sm_clock_mhz"]},
                {int(c): (e["sm"], e["tile_start_ns"]) for c, e in t["ctas"].items()})
    first = {}
    for cta, seq, _tile, kb, tensor, t in d["loads"]:
        if kb == 0 and tensor == 0:
            first[(cta, seq)] = t
    tiles = max(s for _, s in first) + 1
    return d, {int(c): (sm, [first.get((int(c), j)) for j in range(tiles)]) for c, sm in d["sm"].items()}


def key(g):
    return (isinstance(g, str), g)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("smlat")
    ap.add_argument("loads", nargs="+")
    ap.add_argument("--starts")
    a = ap.parse_args()
    gpc, rates = gpcs_and_rates(a.smlat)
    out = {}
    for path in a.loads:
        d, starts = tile_starts(path)
        p = d.get("params", {})
        label = d.get("label") or f'{p.get("M")}x{p.get("N")}x{p.get("K")} tile {"x".join(map(str, p.get("tile", [])))} {p.get("stages")} stages'
        print(f'{path}: {label}, {len(starts)} CTAs, SM clock {d.get("sm_clock_mhz")} MHz')
        out[path] = {"what": label, "sm_clock_mhz": d.get("sm_clock_mhz"),
                     "ctas": {c: {"sm": sm, "gpc": gpc.get(sm, "rest"), "tile_start_ns": ts} for c, (sm, ts) in starts.items()}}
        tiles = len(next(iter(starts.values()))[1])
        if tiles < 2:
            print("  one tile per CTA: no drift to show")
            continue
        last = None
        for j in range(1, tiles):
            offs = {c: ts[j] - ts[0] for c, (sm, ts) in starts.items() if ts[j] is not None and ts[0] is not None}
            mean = statistics.mean(offs.values())
            by = collections.defaultdict(list)
            for c, o in offs.items():
                by[gpc.get(starts[c][0], "rest")].append(o - mean)
            cells = " ".join(f"{g}:{statistics.mean(v):+.0f}({statistics.pstdev(v):.0f})" for g, v in sorted(by.items(), key=lambda e: key(e[0])))
            print(f"  tile {j} ({mean / 1000:.0f} us in): GPC: mean offset (stdev within), ns: {cells}; all CTAs' stdev "
                  f"{statistics.pstdev(offs.values()):.0f}")
            last = (mean, by)
        mean, by = last
        if mean <= 0:
            continue
        print("  at the last tile, each GPC behind the mean by (share of the time elapsed), and its rate in the microbenchmark:")
        cases = sorted(rates)
        print("    GPC   SMs  behind    " + "  ".join(f"{c:>16}" for c in cases))
        for g, v in sorted(by.items(), key=lambda e: key(e[0])):
            print(f"    {g!s:<5} {len(v):>3}  {100 * statistics.mean(v) / mean:+6.2f} %  " +
                  "  ".join(f"{rates[c].get(g, float('nan')):16.3f}" for c in cases))
    if a.starts:
        with open(a.starts, "w") as f:
            json.dump({"what": "per CTA of each K2 trace: its SM, its GPC (validation/calibration/gpc_drift.py) and the "
                               "issue time (ns from the earliest CTA start) of the first A load of each tile of its sequence",
                       "smlat": a.smlat, "traces": out}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
