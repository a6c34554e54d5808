#!/usr/bin/env python3
"""K2's HBM reads by raster on the H200 (Nsight Compute) against the model with one L2 and with two partitions.

The GPU's figures: validation/results/h200/k2_l2cap_ncu.csv (each point's last profiled launch) and the same points
timed without the profiler, k2_l2cap_timed.json (H200, 2026-12-01; validation/kernels/run_k2_l2cap_ncu.sh). The model:
K2's parameters as in the accuracy report, at the clock each timed point ran at, on the H200 machine file with
`l2_partitions` 1 and 2 (docs/simulator.md). Prints one row per point: the GPU's HBM reads and L2 read hit rate, the
model's HBM reads with each setting (`hbm_read_bytes`: misses and the bytes K2's 256-byte L2 promotion brings with
them, what dram__bytes_read counts), and the times.

    python3 validation/calibration/k2_l2cap_ncu.py build/smpipe
"""
import csv
import io
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NCU = os.path.join(ROOT, "validation", "results", "h200", "k2_l2cap_ncu.csv")
TIMED = os.path.join(ROOT, "validation", "results", "h200", "k2_l2cap_timed.json")


def gpu_points():
    """{(shape, spec): metrics of the point's last profiled launch}."""
    with open(NCU) as f:
        parts = re.split(r"^== (\d+x\d+x\d+) (\S+)$", f.read(), flags=re.M)
    out = {}
    for i in range(1, len(parts), 3):
        rows = list(csv.DictReader(io.StringIO("\n".join(l for l in parts[i + 2].splitlines() if l.startswith('"')))))
        last = max(int(r["ID"]) for r in rows)
        out[(parts[i], parts[i + 1])] = {r["Metric Name"]: float(r["Metric Value"].replace(",", ""))
                                         for r in rows if int(r["ID"]) == last}
    return out


def machine(partitions, tmp):
    """The H200 machine file with l2_partitions set."""
    with open(os.path.join(ROOT, "models", "machines", "h200.json")) as f:
        m = json.load(f)
    m["units"]["l2"]["params"]["l2_partitions"]["value"] = partitions
    path = os.path.join(tmp, f"h200_l2_partitions{partitions}.json")
    with open(path, "w") as f:
        json.dump(m, f)
    return path


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    smpipe = sys.argv[1]
    with open(os.path.join(ROOT, "validation", "results", "accuracy.json")) as f:
        measured = json.load(f)["kernel_instructions"]
    with open(TIMED) as f:
        timed = json.load(f)["rows"]
    gpu = gpu_points()
    print("| shape | K2 | GPU HBM reads GB | L2 read hits | one L2: HBM reads GB | two partitions | GPU us | one L2 | two |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        machines = {p: machine(p, tmp) for p in (1, 2)}
        for r in timed:
            shape = f'{r["M"]}x{r["N"]}x{r["K"]}'
            g = gpu[(shape, r["spec"])]
            runs = {p: accuracy.run_model(smpipe, accuracy.MODELS[r["schedule"]], machines[p], accuracy.defines(r, measured),
                                          clock=r["clock_mhz_pooled"]) for p in (1, 2)}
            for p, j in runs.items():
                if "time_us" not in j:
                    sys.exit(f"{shape} {r['spec']} with l2_partitions {p}: {j.get('error')}")
            hits = g["lts__t_sectors_op_read_lookup_hit.sum"] / g["lts__t_sectors_op_read.sum"]
            print(f'| {shape} | {r["spec"]} | {g["dram__bytes_read.sum"] / 1e9:.3f} | {hits:.3f} | '
                  f'{runs[1]["hbm_read_bytes"] / 1e9:.3f} | {runs[2]["hbm_read_bytes"] / 1e9:.3f} | {r["ms_median"] * 1000:.1f} | '
                  f'{runs[1]["time_us"]:.1f} | {runs[2]["time_us"]:.1f} |')


if __name__ == "__main__":
    main()
