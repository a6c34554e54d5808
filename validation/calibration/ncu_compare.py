#!/usr/bin/env python3
"""The L2 traffic of K2 at 8192^3 on the GPU and in the model, configuration by configuration: how many of the
box bytes the CTAs request reach the L2 as requests of their own, how much is read from HBM, and the kernel's
time. The GPU's figures are Nsight Compute's (validation/results/h100/k2_ncu_stages.json: lts__t_sectors_srcunit_tex
_op_read x 32 over the requested box bytes, dram__bytes_read, the kernel's time under the profiler, the SM clock
it ran at); the model's are smpipe's (1 - l2_merged_bytes / bytes_loaded, hbm_bytes, time) for the matching sm90
model with K2's ordering of the store acquire, groups of 8 rows, at that clock. Where the model combines more
reads than the GPU, its L2 does less work, and an L2-bound configuration comes out too fast (docs/accuracy.md).

  python3 validation/calibration/ncu_compare.py [SMPIPE] [-- EXTRA SMPIPE ARGS]

Standard library only; not a test. Each configuration's first run is used (the file has two of each).
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "validation", "results", "h100", "k2_ncu_stages.json")


def simulate(smpipe, row, extra):
    sched, tile, stages = row["spec"].split(":")
    model = "sm90/gemm_tma_ws_cooperative" if sched == "coop" else "sm90/gemm_tma_ws_pingpong"
    cmd = [smpipe, "run", model, "-D", f"M={row['M']}", "-D", f"N={row['N']}", "-D", f"K={row['K']}",
           "-D", f"TILE_N={tile.split('x')[1]}", "-D", f"STAGES={stages[1:]}", "-D", f"GROUP_M={row['raster_group']}",
           "-D", "STORE_ACQUIRE=1", "--clock-mhz", str(row["sm_clock_mhz"]), "--json", *extra]
    return json.loads(subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout)


def main():
    args = sys.argv[1:]
    extra = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    smpipe = os.path.abspath(args[0] if args else os.path.join(ROOT, "build", "smpipe"))
    with open(DATA) as f:
        rows = json.load(f)["rows"]
    seen = set()
    print(f"{'config':18s} {'requests / box bytes':>21s} {'HBM read GB':>12s} {'time us':>16s} {'error':>7s}")
    print(f"{'':18s} {'GPU':>10s} {'model':>10s} {'GPU':>6s} {'model':>5s} {'GPU':>8s} {'model':>7s}")
    for row in rows:
        if row["spec"] in seen:
            continue
        seen.add(row["spec"])
        a = simulate(smpipe, row, extra)
        req = 1 - a["l2_merged_bytes"] / a["bytes_loaded"]
        err = (a["time_us"] / row["kernel_us_under_ncu"] - 1) * 100
        print(f"{row['spec']:18s} {row['sm_requests_over_box_bytes']:10.3f} {req:10.3f} {row['dram_read_gb']:6.2f} "
              f"{a['hbm_bytes'] / 1e9:5.2f} {row['kernel_us_under_ncu']:8.1f} {a['time_us']:7.1f} {err:+6.1f}%")


if __name__ == "__main__":
    main()
