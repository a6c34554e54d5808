#!/usr/bin/env python3
"""How the model's skinny and tall K2 points (128x128x64 cooperative, 2/4/6 stages; validation/results/h200/
k2_skinny_timed.json) move when every TMA load takes D cycles longer (the H200 machine file's tma_load_latency_cycles
+ D, through SMPIPE_MACHINES in a temporary folder), beside the GPU's times: whether a fixed extra latency, or only one
that grows with the L2's load, could give the GPU's 4-stage points (latency-held, validation/kernels/README.md).

    python3 validation/calibration/latency_sensitivity.py [SMPIPE]

Each point at the SM clock measured while it ran, the model's time with its launch cost against the GPU's median
(CUDA events). Standard library only; no file is written in the repository.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "validation", "calibration"))
import accuracy as A  # noqa: E402

TIMED = os.path.join(ROOT, "validation", "results", "h200", "k2_skinny_timed.json")
POINTS = [(256, 8192, s) for s in (2, 4, 6)] + [(8192, 256, s) for s in (2, 4, 6)] + [(65536, 128, s) for s in (2, 4, 6)]
EXTRA = (0, 150, 300, 450)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    smpipe = os.path.abspath(args[0] if args else os.path.join(ROOT, "build", "smpipe"))
    measured = A.committed_data()["kernel_instructions"]
    with open(TIMED) as f:
        rows = {(r["M"], r["N"], r["spec"]): r for r in json.load(f)["rows"]}
    print(f"{'point':22s} {'GPU us':>7s} " + " ".join(f"{'+' + str(d):>7s}" for d in EXTRA))
    with tempfile.TemporaryDirectory() as tmp:
        for name in os.listdir(os.path.join(ROOT, "models", "machines")):
            shutil.copy(os.path.join(ROOT, "models", "machines", name), tmp)
        with open(os.path.join(ROOT, "models", "machines", "h200.json")) as f:
            base = json.load(f)
        table = {}
        for d in EXTRA:
            m = json.loads(json.dumps(base))
            m["units"]["tma"]["params"]["tma_load_latency_cycles"]["value"] += d
            with open(os.path.join(tmp, "h200.json"), "w") as f:
                json.dump(m, f, indent=2)
            env = dict(os.environ, SMPIPE_MACHINES=tmp)
            for (mm, nn, s) in POINTS:
                r = rows[(mm, nn, f"coop:128x128:s{s}")]
                cmd = [smpipe, "run", A.MODELS[r["schedule"]], "--gpu", "h200", "--json", "--clock-mhz",
                       f"{r['clock_mhz_median']:.0f}"]
                for k, v in A.defines(r, measured).items():
                    cmd += ["-D", f"{k}={v}"]
                out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=True)
                j = json.loads(out.stdout)
                table[(mm, nn, s, d)] = j["time_us"]
    for (mm, nn, s) in POINTS:
        r = rows[(mm, nn, f"coop:128x128:s{s}")]
        print(f"{f'{mm}x{nn}x{r[chr(75)]} s{s}':22s} {1000 * r['ms_median']:7.1f} "
              + " ".join(f"{table[(mm, nn, s, d)]:7.1f}" for d in EXTRA))


if __name__ == "__main__":
    main()
