#!/usr/bin/env python3
"""Replays every committed hardware trace (validation/results/<gpu>/k2_trace_*.json) with `smpipe compare`
and collects the error table: validation/results/h100/replay_compare.json, and a Markdown table for
docs/replay.md. Each trace is compared twice: as the replay alone, and with the kernel's own instructions between
ops measured in its partner, the trace of the other shape with the same epilogue (`--own-time PARTNER`: 2048^3
from 8192^3 and back), so that no trace's own intervals time its own replay. The held-out traces of
validation/results/h100/k2_traces_s2 (other tiles, 2 stages, a skinny shape; beta = 0) are compared the same two
ways, their own instructions from the 8192^3 trace; so are the H200's traces of the skinny shapes with 2, 4 and 6
stages (validation/results/h200/k2_skinny_traces) and of the shapes whose unshared operand streams from HBM
(validation/results/h200/k2_stream_traces), raw captures decoded here with traces/collect.py.

  python3 validation/calibration/replay_table.py SMPIPE             # write the JSON, print a summary
  python3 validation/calibration/replay_table.py SMPIPE --markdown  # print the docs table
  python3 validation/calibration/replay_table.py SMPIPE --check     # exit 1 if the committed JSON is stale

Standard library only. Runs from any directory; trace paths in the output are relative to the repository.
"""
import argparse
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULT = os.path.join("validation", "results", "h100", "replay_compare.json")


def decoded(raw, tmp):
    """A raw capture (RAW.bin.gz beside RAW.meta.json) decoded to a hardware trace in the folder tmp."""
    base = os.path.join(tmp, os.path.basename(raw)[:-len(".bin.gz")])
    with gzip.open(os.path.join(ROOT, raw)) as f, open(base + ".bin", "wb") as out:
        out.write(f.read())
    subprocess.run([sys.executable, os.path.join(ROOT, "traces", "collect.py"), base + ".bin", "--meta",
                    os.path.join(ROOT, raw[:-len(".bin.gz")] + ".meta.json"), "-o", base + ".json"],
                   check=True, capture_output=True)
    return base + ".json"


def compare(smpipe, trace, own_time=None):
    cmd = [smpipe, "compare", trace, "--json"] + (["--own-time", own_time] if own_time else [])
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


SHAPES = ("2048x2048x2048", "8192x8192x8192")


def partner(trace, traces):
    """The trace of the other shape with the same variant (k2_trace_2048x2048x2048_beta0.5 <-> k2_trace_8192x..._beta0.5)."""
    for a, b in (SHAPES, SHAPES[::-1]):
        if a in trace:
            other = trace.replace(a, b)
            return other if other in traces else None
    return None


def collect(smpipe):
    traces = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "validation/results/h100/k2_trace_*.json")))
    held_out = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "validation/results/h100/k2_traces_s2/k2_trace_*.json")))
    source = os.path.join("validation", "results", "h100", "k2_trace_8192x8192x8192.json")
    def raw_group(folder):
        """The H200's raw captures in `folder`, each compared alone and with the 8192^3 trace's own instructions."""
        raws = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, folder, "k2_trace_*.bin.gz")))
        alone, with_own = [], []
        with tempfile.TemporaryDirectory() as tmp:
            for raw in raws:
                path = decoded(raw, tmp)
                for out, own in ((alone, None), (with_own, source)):
                    c = compare(smpipe, path, own)
                    c["trace"] = raw  # (the decoded file lives in a temporary folder)
                    out.append(c)
        return alone, with_own

    h200, h200_own = raw_group("validation/results/h200/k2_skinny_traces")
    stream, stream_own = raw_group("validation/results/h200/k2_stream_traces")
    return {"generator": "validation/calibration/replay_table.py (smpipe compare TRACE --json; and --own-time PARTNER)",
            "comparisons": [compare(smpipe, t) for t in traces],
            "comparisons_own_time": [compare(smpipe, t, partner(t, traces)) for t in traces if partner(t, traces)],
            "held_out": [compare(smpipe, t) for t in held_out],
            "held_out_own_time": [compare(smpipe, t, source) for t in held_out],
            "h200_skinny": h200,
            "h200_skinny_own_time": h200_own,
            "h200_stream": stream,
            "h200_stream_own_time": stream_own}


GROUPS = ("comparisons_own_time", "held_out", "held_out_own_time", "h200_skinny", "h200_skinny_own_time", "h200_stream",
          "h200_stream_own_time")


def span_error(c):
    hw = sum(x["hw_cycles"] for x in c["ctas"])
    sim = sum(x["sim_cycles"] for x in c["ctas"])
    return 100.0 * (sim - hw) / hw


def markdown(doc, key="comparisons"):
    own = key.endswith("own_time")
    rows = ["| trace | " + ("own instructions from | " if own else "") + "SM clock (MHz) | CTAs (recorded / run) | span: hw / sim cycles | "
            "span error | kernel: hw span / sim (us) | events | event error p50 / p90 (% of span) | interval error p50 / p90 (cycles) |",
            "|---|---|---|---|---|---|---|---|---|" + ("---|" if own else "")]
    for c in doc[key]:
        hw = sum(x["hw_cycles"] for x in c["ctas"]) / len(c["ctas"])
        sim = sum(x["sim_cycles"] for x in c["ctas"]) / len(c["ctas"])
        k = c.get("kernel")
        kernel = f"{k['hw_recorded_span_us']:.1f} / {k['sim_us']:.1f}" if k else "window only"
        e = c["events"]
        source = f"`{os.path.basename(c['own_time']['source'])}` | " if own else ""
        rows.append(f"| `{os.path.basename(c['trace'])}` | {source}{c['clock_mhz']:.1f} | {len(c['ctas'])} / {c['ctas_launched']} | "
                    f"{hw:.0f} / {sim:.0f} | {span_error(c):+.1f} % | {kernel} | {e['compared']} | "
                    f"{e['abs_error_pct_of_span']['p50']:.1f} / {e['abs_error_pct_of_span']['p90']:.1f} | "
                    f"{e['interval_abs_error_cycles']['p50']:.0f} / {e['interval_abs_error_cycles']['p90']:.0f} |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("smpipe")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    smpipe = os.path.abspath(a.smpipe)
    doc = collect(smpipe)
    text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    path = os.path.join(ROOT, RESULT)
    if a.check:
        with open(path) as f:
            if f.read() != text:
                print(f"{RESULT} is stale: rerun python3 validation/calibration/replay_table.py SMPIPE", file=sys.stderr)
                return 1
        print(f"{RESULT} is current")
        return 0
    if a.markdown:
        print(markdown(doc))
        for key in GROUPS:
            print()
            print(markdown(doc, key))
        return 0
    with open(path, "w") as f:
        f.write(text)
    for c in doc["comparisons"]:
        print(f"{c['trace']}: span error {span_error(c):+.1f} %, events {c['events']['compared']}")
    for key in GROUPS:
        for c in doc[key]:
            own = f" with its own instructions from {c['own_time']['source']}" if "own_time" in c else ""
            print(f"{c['trace']}{own}: span error {span_error(c):+.1f} %")
    print(f"wrote {RESULT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
