#!/usr/bin/env python3
"""K2 on the skinny shapes (256x8192x8192, 8192x256x8192) and a tall HBM-bound one (65536x128x1024) on the GPU
(Nsight Compute) and in the model, configuration by configuration: the kernel's time, how many of the box bytes the
CTAs issue reach the L2 as requests of their own, and how busy the L2 and HBM were.

The GPU's figures are in validation/results/h200/k2_skinny_ncu.csv (H200, 2026-11-30;
validation/kernels/run_k2_skinny_ncu.sh): each point's last profiled launch (`k2_gemm --sweep --reps 1 --warm 1`):
gpu__time_duration, the SM clock, lts__t_sectors_srcunit_tex_op_read x 32 over the box bytes the CTAs issue (a
multicast slice once), lts__throughput and dram__throughput in % of their peak over the kernel. The points'
parameters are those of the same points timed without the profiler (k2_skinny_timed.json). The model's figures are
smpipe's run of the matching sm90 model with K2's parameters as the accuracy report sets them, at the clock Nsight
Compute read: its time without the launch cost, 1 - l2_merged_bytes / bytes_loaded, and the busy share of its L2
and HBM queues.

  python3 validation/calibration/k2_skinny_ncu.py [SMPIPE]

Standard library only; not a test.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy as A  # noqa: E402  (K2's model parameters)
import k2_raster_ncu  # noqa: E402  (the CSV's points)

ROOT = A.ROOT
DATA = os.path.join(ROOT, "validation", "results", "h200", "k2_skinny_ncu.csv")
TIMED = os.path.join(ROOT, "validation", "results", "h200", "k2_skinny_timed.json")


def issued_box_bytes(row):
    """The bytes of the TMA boxes all CTAs issue: per k-block an A box of the tile's rows and its share of the B box
    (a 2x1 cluster's two CTAs each load half of B and multicast it)."""
    tiles = (row["M"] // row["tile_m"]) * (row["N"] // row["tile_n"])
    return tiles * (row["K"] // row["tile_k"]) * (row["tile_m"] + row["tile_n"] // row["cluster_m"]) * row["tile_k"] * 2


def main():
    smpipe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "smpipe")
    measured = A.committed_data()["kernel_instructions"]
    with open(TIMED) as f:
        rows = {(f"{r['M']}x{r['N']}x{r['K']}", r["spec"]): r for r in json.load(f)["rows"]}
    print(f"{'shape':15s} {'K2':19s} {'GPU us':>6s} {'model':>6s} {'error':>6s}   {'requests / box byte':>19s}   "
          f"{'L2 busy %':>11s}   {'HBM busy %':>11s}")
    print(f"{'':15s} {'':19s} {'':6s} {'':6s} {'':6s}   {'GPU':>9s} {'model':>9s}   {'GPU':>5s} {'model':>5s}   "
          f"{'GPU':>5s} {'model':>5s}")
    for shape, spec, m in k2_raster_ncu.gpu_points(DATA):
        row = rows[(shape, spec)]
        clock = m["sm__cycles_elapsed.avg.per_second"] / 1e6
        r = A.predict(smpipe, "h200", row, clock, A.defines(row, measured))
        if "error" in r:
            print(f"{shape:15s} {spec:19s} model failed: {r['error']}")
            continue
        units = r["units"]
        gpu_us = m["gpu__time_duration.sum"] / 1000
        model_us = r["us"] - r["launch_us"]
        gpu_req = m["lts__t_sectors_srcunit_tex_op_read.sum"] * 32 / issued_box_bytes(row)
        model_req = 1 - r["l2_merged_bytes"] / r["bytes_loaded"]
        print(f"{shape:15s} {spec:19s} {gpu_us:6.1f} {model_us:6.1f} {100 * (model_us / gpu_us - 1):+5.1f}%   "
              f"{gpu_req:9.3f} {model_req:9.3f}   {m['lts__throughput.avg.pct_of_peak_sustained_elapsed']:5.1f} "
              f"{100 * units.get('L2 bandwidth (whole GPU)', 0):5.1f}   "
              f"{m['dram__throughput.avg.pct_of_peak_sustained_elapsed']:5.1f} {100 * units.get('HBM bandwidth', 0):5.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
