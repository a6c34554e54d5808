#!/usr/bin/env python3
"""Replays every committed hardware trace (validation/results/<gpu>/k2_trace_*.json) with `smpipe compare`
and collects the error table: validation/results/h100/replay_compare.json, and a Markdown table for
docs/replay.md.

  python3 validation/calibration/replay_table.py SMPIPE             # write the JSON, print a summary
  python3 validation/calibration/replay_table.py SMPIPE --markdown  # print the docs table
  python3 validation/calibration/replay_table.py SMPIPE --check     # exit 1 if the committed JSON is stale

Standard library only. Runs from any directory; trace paths in the output are relative to the repository.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULT = os.path.join("validation", "results", "h100", "replay_compare.json")


def compare(smpipe, trace):
    out = subprocess.run([smpipe, "compare", trace, "--json"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def collect(smpipe):
    traces = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "validation/results/h100/k2_trace_*.json")))
    return {"generator": "validation/calibration/replay_table.py (smpipe compare TRACE --json)",
            "comparisons": [compare(smpipe, t) for t in traces]}


def span_error(c):
    hw = sum(x["hw_cycles"] for x in c["ctas"])
    sim = sum(x["sim_cycles"] for x in c["ctas"])
    return 100.0 * (sim - hw) / hw


def markdown(doc):
    rows = ["| trace | SM clock (MHz) | CTAs (recorded / run) | span: hw / sim cycles | span error | kernel: hw span / sim (us) | "
            "events | event error p50 / p90 (% of span) | interval error p50 / p90 (cycles) |",
            "|---|---|---|---|---|---|---|---|---|"]
    for c in doc["comparisons"]:
        hw = sum(x["hw_cycles"] for x in c["ctas"]) / len(c["ctas"])
        sim = sum(x["sim_cycles"] for x in c["ctas"]) / len(c["ctas"])
        k = c.get("kernel")
        kernel = f"{k['hw_recorded_span_us']:.1f} / {k['sim_us']:.1f}" if k else "window only"
        e = c["events"]
        rows.append(f"| `{os.path.basename(c['trace'])}` | {c['clock_mhz']:.1f} | {len(c['ctas'])} / {c['ctas_launched']} | "
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
        return 0
    with open(path, "w") as f:
        f.write(text)
    for c in doc["comparisons"]:
        print(f"{c['trace']}: span error {span_error(c):+.1f} %, events {c['events']['compared']}")
    print(f"wrote {RESULT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
