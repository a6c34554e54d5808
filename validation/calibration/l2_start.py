#!/usr/bin/env python3
"""The L2 at launch against the GPU: K2 timed with a warm L2 (back-to-back launches) and with a cold one (a 256 MB
read before every timed launch), validation/results/h200/k2_l2_{warm,cold,warm2}.json
(validation/kernels/run_k2_l2_start.sh), each point predicted by smpipe with `--l2 warm` and `--l2 cold` at the clock
it ran at. Writes validation/results/h200/l2_start_compare.json and prints a Markdown table (docs/simulator.md).

    python3 validation/calibration/l2_start.py SMPIPE [--check] [--jobs N]

--check: exit 1 when the committed comparison differs from what SMPIPE gives now. Standard library only.
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy as A  # noqa: E402

ROOT = A.ROOT
DATA = "validation/results/h200/k2_l2_{}.json"
OUT = "validation/results/h200/l2_start_compare.json"
GPU = "h200"


def model_us(smpipe, p, clock, defs, l2):
    j = A.run_model(smpipe, A.MODELS[p["schedule"]], GPU, defs, clock, extra=("--l2", l2))
    if "error" in j:
        raise RuntimeError(f"{A.shape(p)} {A.label(p)} --l2 {l2}: {j['error']}")
    return {"us": round(j["time_us"], 3), "l2_start": j.get("l2_start"), "hbm_bytes": j.get("hbm_bytes")}


def load(path):
    with open(os.path.join(ROOT, path)) as f:
        return json.load(f)


def collect(smpipe, jobs):
    runs = {k: load(DATA.format(k)) for k in ("warm", "cold", "warm2")}
    assert runs["cold"]["l2_flush"] and not runs["warm"]["l2_flush"] and not runs["warm2"]["l2_flush"]
    key = lambda p: (p["M"], p["N"], p["K"], p.get("data", "random"), p["variant"])  # noqa: E731
    cold = {key(p): p for p in runs["cold"]["rows"] if p.get("ok", True)}
    warm2 = {key(p): p for p in runs["warm2"]["rows"] if p.get("ok", True)}
    measured = A.kernel_instructions(smpipe)
    # The points timed in all three runs.
    items = [(p, cold[key(p)], warm2[key(p)]) for p in runs["warm"]["rows"]
             if p.get("ok", True) and key(p) in cold and key(p) in warm2]

    def one(item):
        w, c, w2 = item
        defs = A.defines(w, measured)
        mw = model_us(smpipe, w, w["clock_mhz_median"], defs, "warm")
        mc = model_us(smpipe, c, c["clock_mhz_median"], defs, "cold")
        return {"shape": A.shape(w), "data": w.get("data", "random"), "config": A.label(w), "gpu_warm_us": round(1000 * w["ms_median"], 3),
                "gpu_warm2_us": round(1000 * w2["ms_median"], 3), "gpu_cold_us": round(1000 * c["ms_median"], 3),
                "clock_warm_mhz": round(w["clock_mhz_median"]), "clock_cold_mhz": round(c["clock_mhz_median"]),
                "model_warm_us": mw["us"], "model_cold_us": mc["us"], "model_start": mw["l2_start"]}

    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        rows = list(ex.map(one, items))
    return {"generator": "validation/calibration/l2_start.py (smpipe run MODEL --gpu h200 --clock-mhz MEASURED "
                         "--l2 warm|cold)", "source": [DATA.format(k) for k in ("warm", "cold", "warm2")],
            "gpu": runs["warm"]["gpu"]["name"], "date_utc": runs["warm"]["date_utc"], "rows": rows}


def pct(a, b):
    return 100.0 * (a / b - 1.0)


def summary(rows):
    out = []
    fits = lambda r: r["model_start"] == "warm"  # noqa: E731
    for name, sel in (("tensors fit (model starts warm)", fits), ("tensors exceed the L2", lambda r: not fits(r))):
        s = [r for r in rows if sel(r)]
        if not s:
            continue
        gpu_delta = statistics.mean(pct(r["gpu_cold_us"], r["gpu_warm_us"]) for r in s)
        model_delta = statistics.mean(pct(r["model_cold_us"], r["model_warm_us"]) for r in s)
        rep = statistics.mean(abs(pct(r["gpu_warm2_us"], r["gpu_warm_us"])) for r in s)
        err_w = statistics.mean(abs(pct(r["model_warm_us"], r["gpu_warm_us"])) for r in s)
        err_c = statistics.mean(abs(pct(r["model_cold_us"], r["gpu_cold_us"])) for r in s)
        out.append((name, len(s), gpu_delta, model_delta, rep, err_w, err_c))
    return out


def markdown(data):
    lines = ["| shape | config | GPU warm / cold (us) | cold - warm: GPU | model | model error warm / cold |",
             "|---|---|---|---|---|---|"]
    for r in data["rows"]:
        lines.append(f"| {r['shape']} | {r['config']} | {r['gpu_warm_us']:.1f} / {r['gpu_cold_us']:.1f} | "
                     f"{pct(r['gpu_cold_us'], r['gpu_warm_us']):+.1f} % | {pct(r['model_cold_us'], r['model_warm_us']):+.1f} % | "
                     f"{pct(r['model_warm_us'], r['gpu_warm_us']):+.1f} / {pct(r['model_cold_us'], r['gpu_cold_us']):+.1f} % |")
    lines += ["", "| points | n | cold - warm, GPU (mean) | model (mean) | GPU warm twice (mean abs) | model MAPE warm | cold |",
              "|---|---|---|---|---|---|---|"]
    for name, n, g, m, rep, ew, ec in summary(data["rows"]):
        lines.append(f"| {name} | {n} | {g:+.1f} % | {m:+.1f} % | {rep:.1f} % | {ew:.1f} % | {ec:.1f} % |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("smpipe")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    data = collect(os.path.abspath(a.smpipe), a.jobs)
    path = os.path.join(ROOT, OUT)
    if a.check:
        committed = load(OUT) if os.path.exists(path) else None
        if committed != data:
            print(f"{OUT} is stale: rerun validation/calibration/l2_start.py SMPIPE", file=sys.stderr)
            return 1
        return 0
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
