#!/usr/bin/env python3
"""How many of the TMA box bytes K2's CTAs request reach the L2 as requests of their own, by raster, on the GPU
(Nsight Compute) and in the model, on a shape whose operands the L2 holds (4096x4096x1024: 16 MB of A and B) and on
one whose operands stream from HBM (8192^3).

The GPU's figures are in validation/results/h200/k2_combine_raster_ncu.csv (H200, 2026-11-29; the command is in
validation/kernels/README.md, "The L2's combining by raster"): for each point a warm-up launch and the timed one
of `k2_gemm --sweep --reps 1 --warm 1`, each profiled (three launches with the check): lts__t_sectors_srcunit_tex
_op_read x 32 over the box bytes the CTAs request, dram__bytes_read, the kernel's time and SM clock. This script
prints each point's last launch beside smpipe's run of the cooperative model with K2's parameters as the accuracy
report sets them (its raster: groups of 8 rows, 1 along N, 0 along M) at that clock: 1 - l2_merged_bytes /
bytes_loaded, the bytes HBM reads (hbm_read_bytes: the misses and what K2's 256-byte L2 promotion brings with them, as
dram__bytes_read counts; without the write-backs), and the time without the launch cost (Nsight Compute's duration
has none).

  python3 validation/calibration/k2_raster_ncu.py [SMPIPE]

Standard library only; not a test.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy as A  # noqa: E402  (K2's model parameters)
import ncu_csv  # noqa: E402  (Nsight Compute's CSV)

ROOT = A.ROOT
DATA = os.path.join(ROOT, "validation", "results", "h200", "k2_combine_raster_ncu.csv")


def gpu_points(path=DATA):
    """[(shape, spec, metrics of the point's last profiled launch)] in file order: the file is one ncu run per point,
    each after a line `== SHAPE SPEC`."""
    blocks = []
    with open(path) as f:
        for line in f:
            if line.startswith("== ") and not line.startswith("== shape"):
                blocks.append((tuple(line[3:].split()), []))
            elif blocks:
                blocks[-1][1].append(line)
    points = []
    for point, lines in blocks:
        runs = ncu_csv.launches(lines)
        points.append((*point, runs[max(runs)]))
    return points


def main():
    smpipe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "smpipe")
    measured = A.committed_data()["kernel_instructions"]
    print(f"{'shape':16s} {'K2':20s} {'GPU req/box':>11s} {'model':>6s} {'GPU HBM read GB':>15s} {'model':>6s} "
          f"{'GPU us':>7s} {'model':>7s} {'clock':>5s}")
    for shape, spec, m in gpu_points():
        M, N, K = map(int, shape.split("x"))
        parts = spec.split(":")
        tm, tn = map(int, parts[1].split("x"))
        group = {"g1": 1, "g0": 0}.get(parts[3] if len(parts) > 3 else "", 8)
        box = (M // tm) * (N // tn) * (K // 64) * (tm + tn) * 64 * 2
        clock = m["sm__cycles_elapsed.avg.per_second"] / 1e6
        # K2's model parameters as the accuracy report sets them (its own instruction costs among them).
        point = {"M": M, "N": N, "K": K, "tile_m": tm, "tile_n": tn, "tile_k": 64, "stages": int(parts[2][1:]),
                 "cluster_m": 1, "stages_c": 2, "stages_d": 2, "reuse": 0, "delay": 0, "epi_tile": [128, 32],
                 "schedule": "cooperative", "raster_rows": group if group else M // tm}
        cmd = [smpipe, "run", "sm90/gemm_tma_ws_cooperative", "--gpu", "h200", "--clock-mhz", f"{clock:.0f}", "--json"]
        for k, v in A.defines(point, measured).items():
            cmd += ["-D", f"{k}={v}"]
        r = json.loads(subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout)
        model_req = 1 - r["l2_merged_bytes"] / r["bytes_loaded"]
        print(f"{shape:16s} {spec:20s} {m['lts__t_sectors_srcunit_tex_op_read.sum'] * 32 / box:11.3f} {model_req:6.3f} "
              f"{m['dram__bytes_read.sum'] / 1e9:15.3f} {r['hbm_read_bytes'] / 1e9:6.3f} "
              f"{m['gpu__time_duration.sum'] / 1000:7.1f} {r['time_us'] - r.get('launch_us', 0):7.1f} {clock:5.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
