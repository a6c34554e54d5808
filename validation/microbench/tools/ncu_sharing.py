#!/usr/bin/env python3
"""Joins the "sharing" group's runs (tma_sharing_*: every SM walking the boxes of an L2-resident tensor, the CTAs of a
group reading the same boxes at about the same time) with Nsight Compute's counters of the same run, and writes one
JSON file: per measurement, the L2 requests the SMs made per byte the TMA delivered (the launches after each
measurement's warm-up, their mean), the L2 lookups and hits per delivered byte, and the bandwidth of a run without the
profiler.

usage: ncu_sharing.py --bench RUN.json --ncu NCU.csv --bw FULL.json --out OUT.json --command "..."

RUN.json: the microbench JSON of the run under Nsight Compute (`--quick --only sharing`: params.launches k_tma_pipe
launches per measurement, in program order, the first a warm-up); NCU.csv: `ncu --csv --print-units base` of that
run; FULL.json: a run of the group without the profiler.
"""
import argparse
import json
import sys

from ncu_smpairs import ncu_launches  # (this folder: the script's own directory is on the path)


def main():
    ap = argparse.ArgumentParser()
    for name in ("--bench", "--ncu", "--bw", "--out", "--command"):
        ap.add_argument(name, required=True)
    a = ap.parse_args()
    with open(a.bench) as f:
        run = json.load(f)
    with open(a.bw) as f:
        full = {m["name"]: m for m in json.load(f)["measurements"]}
    launches = ncu_launches(a.ncu, "k_tma_pipe")
    rows, i = [], 0
    for m in run["measurements"]:
        if not m["name"].startswith("tma_sharing_") or m.get("median") is None:
            continue
        p = m["params"]
        n = int(p["launches"])
        mine = launches[i + 1:i + n]  # (the first is the warm-up)
        i += n
        if len(mine) != n - 1:
            sys.exit(f"{m['name']}: {len(mine)} profiled launches after its warm-up, expected {n - 1}")
        delivered = p["bytes_per_cta"] * p["ctas"]
        mean = lambda metric: sum(x[metric] for x in mine) / len(mine)
        rows.append({
            "measurement": m["name"], "params": p, "delivered_bytes": delivered,
            "sm_requests_over_delivered": round(mean("lts__t_sectors_srcunit_tex_op_read.sum") * 32 / delivered, 4),
            "l2_lookups_over_delivered": round(mean("lts__t_sectors_op_read.sum") * 32 / delivered, 4),
            "l2_hits_over_delivered": round(mean("lts__t_sectors_op_read_lookup_hit.sum") * 32 / delivered, 4),
            "dram_bytes_read": mean("dram__bytes_read.sum"),
            "sm_clock_mhz": round(mean("sm__cycles_elapsed.avg.per_second") / 1e6, 1),
            "profiled_gbs": m["median"],
            "gbs": full[m["name"]]["median"] if m["name"] in full else None,
        })
    if i != len(launches):
        sys.exit(f"{len(launches)} k_tma_pipe launches profiled, {i} belong to the sharing measurements")
    out = {"schema": "smpipe-ncu-sharing/1", "gpu": run["gpu"]["name"], "date_utc": run["date_utc"], "command_line": a.command,
           "what": "L2 requests per TMA-delivered byte of many SMs reading the same boxes (group sharing, tma_sharing_*)",
           "reading": "sm_requests_over_delivered = lts__t_sectors_srcunit_tex_op_read x 32 / the bytes the TMA delivered: "
                      "below 1 (a byte that hits costs one request alone), identical requests of several SMs reached the L2 "
                      "as one",
           "rows": rows}
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
