#!/usr/bin/env python3
"""Joins the ring microbenchmarks of the memory hierarchy that are meant to run under Nsight Compute (groups
"combine", l2_combine_*: pairs of CTAs reading the same TMA boxes; "smpairs", l2_smpairs_*: sets of SMs by SM
id; "blockedge", l2_edge_*: CTA pairs inside and across aligned blocks of 16; "segments", hbm_segments_*: short segments of long rows) with the counters of the same run, and writes one
JSON file: per measurement, the L2 requests the SMs made per byte the TMA delivered and the HBM bytes read per
distinct byte.

usage: ncu_smpairs.py --bench RUN.json --ncu NCU.csv --bw FULL.json --out OUT.json --command "..."
                      [--repeat RUN2.json NCU2.csv]

RUN.json: the microbench JSON of the run under Nsight Compute (e.g. `--quick --only combine,smpairs`: two k_ring
launches per measurement, a warm-up and the measured one, in program order); NCU.csv: `ncu --csv --print-units
base` of that run; FULL.json: a run of the same groups without the profiler, whose median bandwidth is reported
beside the counters. --repeat: a second profiled run of the same command, whose requests per byte are kept beside the
first's (repeat_sm_requests_over_delivered).
"""
import argparse
import csv
import io
import json
import sys

PREFIXES = ("l2_combine_", "l2_smpairs_", "l2_edge_", "l2_cedge_", "hbm_segments_")
METRICS = ["gpu__time_duration.sum", "launch__grid_size", "lts__t_sectors_op_read.sum",
           "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_op_read_lookup_hit.sum", "dram__bytes_read.sum",
           "sm__cycles_elapsed.avg.per_second"]


def ncu_launches(path, kernel="k_ring"):
    """The launches of `kernel` in an ncu CSV in program order: {metric: value} each."""
    text = open(path, encoding="utf-8", errors="replace").read()
    start = text.find('"ID"')
    if start < 0:
        sys.exit(f"{path}: no ncu CSV header")
    launches = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        if kernel not in row.get("Kernel Name", ""):
            continue
        value = row["Metric Value"].replace(",", "")
        try:
            launches.setdefault(int(row["ID"]), {})[row["Metric Name"]] = float(value)
        except ValueError:
            continue
    return [launches[k] for k in sorted(launches)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--ncu", required=True)
    ap.add_argument("--bw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--repeat", nargs=2, metavar=("RUN2.json", "NCU2.csv"))
    a = ap.parse_args()
    rows = join(a.bench, a.ncu, a.bw)
    if a.repeat:
        again = {r["measurement"]: r for r in join(a.repeat[0], a.repeat[1], a.bw)}
        for r in rows:
            r["repeat_sm_requests_over_delivered"] = again[r["measurement"]]["sm_requests_over_delivered"]
    run = json.load(open(a.bench))
    measured = [m for m in run["measurements"]
                if m["name"].startswith(PREFIXES) and m["name"].endswith("_bw")]
    out = {"schema": "smpipe-ncu-microbench/1", "gpu": run["gpu"]["name"], "date_utc": run["date_utc"][:10],
           "what": {m["name"].split("_")[1]: m["description"] for m in measured},
           "command_line": a.command, "clocks": run.get("clocks"),
           "matching": "two k_ring launches per measurement (warm-up, measured) in program order; checked: each measured "
                       "launch's HBM read bytes are within 0.6x-32x of the measurement's distinct bytes",
           "reading": "sm_requests_over_delivered = lts__t_sectors_srcunit_tex_op_read x 32 / the bytes the TMA delivered "
                      "(l2_combine_none, l2_smpairs_none, l2_edge_none: no two SMs share data); below it, identical requests of several SMs "
                      "reached the L2 as one. dram_over_distinct above 1: shared data was read from HBM more than once.",
           "rows": rows}
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    for r in rows:
        print(f"{r['measurement']:36s} requests/byte {r['sm_requests_over_delivered']:.4f}"
              f" (again {r.get('repeat_sm_requests_over_delivered', float('nan')):.4f})  HBM/distinct {r['dram_over_distinct']:.3f}"
              f"  {r['microbenchmark_gbs'] or float('nan'):8.1f} GB/s")


def join(bench, ncu_csv, bw):
    """One row per measurement of a profiled run: its counters, with the unprofiled run's bandwidth."""
    run = json.load(open(bench))
    full = {m["name"]: m for m in json.load(open(bw))["measurements"]}
    measured = [m for m in run["measurements"]
                if m["name"].startswith(PREFIXES) and m["name"].endswith("_bw")]
    launches = ncu_launches(ncu_csv)
    if len(launches) != 2 * len(measured):
        sys.exit(f"{len(launches)} k_ring launches for {len(measured)} measurements (two each expected)")
    rows = []
    for i, m in enumerate(measured):
        ncu = launches[2 * i + 1]  # the measured launch (the first of each pair is the warm-up)
        p = m["params"]
        delivered = p["delivered_bytes"] if "delivered_bytes" in p else p["ctas"] * p["bytes_per_cta"]
        distinct = p.get("distinct_bytes", delivered)
        dram = ncu.get("dram__bytes_read.sum", 0.0)
        row = {"measurement": m["name"], "params": p, "delivered_bytes": delivered,
               "microbenchmark_gbs": full.get(m["name"], {}).get("median"),
               "ncu": {k: ncu.get(k) for k in METRICS},
               "sm_requests_over_delivered": round(ncu["lts__t_sectors_srcunit_tex_op_read.sum"] * 32 / delivered, 4),
               "dram_over_distinct": round(dram / distinct, 4)}
        # Checked: the launch matched is this measurement's (its HBM bytes follow its distinct bytes).
        if not 0.6 * distinct <= dram <= 32.0 * distinct:
            sys.exit(f"{m['name']}: launch {2 * i + 1} read {dram:.3g} B from HBM for {distinct:.3g} distinct")
        rows.append(row)
    return rows


if __name__ == "__main__":
    main()
