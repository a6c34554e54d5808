#!/usr/bin/env python3
"""Per-GPC table of the "smlat" microbenchmarks (l2_smlat_*: every SM keeping D TMA loads of its own boxes in
flight, each SM's median load latency and bytes per cycle in params.per_sm), with the GPCs read from the same run's
"gpc" group (gpc_clusters16_*: clusters of 16 CTAs, one per GPC that holds 16; their SM ids come cluster by cluster,
so each run of 16 ids is one GPC's SMs). SMs in no cluster of 16 (GPCs with fewer SMs, and the SMs of larger GPCs
beyond 16) form one row, "rest".

usage: smlat_gpc.py RUN.json   (a microbench result of `--only smlat,gpc`)

Prints, per measurement and per GPC: its SMs, the median (min-max over its SMs) of their median latencies and of
their bytes per cycle, and the GPC's rate over the median of all SMs' rates. Standard library only.
"""
import json
import statistics
import sys


def gpc_map(measurements):
    """SM id -> GPC index, from the clusters of 16."""
    m = next((x for x in measurements if x["name"].startswith("gpc_clusters16_") and x["name"].endswith("_bw")), None)
    if m is None:
        sys.exit("no gpc_clusters16_* measurement: run the microbenchmark with --only smlat,gpc")
    ids = [int(s) for s in m["params"]["smids"].split(",")]
    return {sm: i // 16 for i, sm in enumerate(ids)}


def rows(measurement, gpc):
    """Per GPC (and 'rest'): [(latency, bytes per cycle)] of its SMs."""
    out = {}
    for item in measurement["params"]["per_sm"].split(","):
        sm, lat, bpc = item.split(":")
        out.setdefault(gpc.get(int(sm), "rest"), []).append((float(lat), float(bpc)))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        run = json.load(f)
    ms = run["measurements"]
    gpc = gpc_map(ms)
    for m in ms:
        if not (m["name"].startswith("l2_smlat_") and m["name"].endswith("_bw")):
            continue
        by = rows(m, gpc)
        all_rate = statistics.median(b for v in by.values() for _, b in v)
        print(f'{m["name"][:-3]}: {m["params"]["box_bytes"] // 1024} KB boxes, {m["params"]["inflight_loads"]} in flight, '
              f'{m["params"]["source"]} (all SMs: {m["median"]:.0f} GB/s)')
        print("  GPC   SMs  latency (cycles)          bytes/cycle           rate / all SMs' median")
        for g in sorted(by, key=lambda k: (isinstance(k, str), k)):
            v = by[g]
            lat = [a for a, _ in v]
            bpc = [b for _, b in v]
            print(f"  {g!s:<5} {len(v):>3}  {statistics.median(lat):6.0f} ({min(lat):5.0f}-{max(lat):5.0f})    "
                  f"{statistics.median(bpc):6.2f} ({min(bpc):5.2f}-{max(bpc):5.2f})    {statistics.median(bpc) / all_rate:6.3f}")


if __name__ == "__main__":
    main()
