#!/usr/bin/env python3
"""Draws a timeline picture (SVG) of one CTA from an smpipe Chrome trace (`smpipe run ... --trace T.json`).

    python3 traces/timeline_svg.py TRACE.json OUT.svg [--cta N] [--from US] [--to US] [--title TEXT]

One row per warp (ops that take time as coloured boxes, waits as thin grey bars) and one row per mbarrier
element (a tick at each phase completion). Times are the trace's microseconds at the machine clock.
Standard library only; the output depends only on the input (same trace, same bytes).
"""
import argparse
import html
import json

COLOURS = [  # (prefix of the slice name, fill)
    ("wgmma", "#7b3fbf"), ("umma", "#7b3fbf"), ("mma.sync", "#7b3fbf"),
    ("tma.load", "#1f77b4"), ("tma.store", "#17a2b8"), ("tma.", "#1f77b4"),
    ("cp.async", "#1f77b4"), ("tmem.", "#e377c2"), ("arrive", "#2ca02c"), ("expect_tx", "#2ca02c"),
    ("wait", "#bcbd22"), ("test_wait", "#bcbd22"), ("bar.", "#ff7f0e"), ("compute", "#8c564b"),
    ("ld", "#9edae5"), ("st", "#9edae5"), ("clc", "#d62728"),
]


def colour(name):
    for prefix, fill in COLOURS:
        if name.startswith(prefix):
            return fill
    return "#7f7f7f"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--cta", type=int, default=0)
    ap.add_argument("--from", dest="t0", type=float, default=None)
    ap.add_argument("--to", dest="t1", type=float, default=None)
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    with open(args.trace) as f:
        events = json.load(f)["traceEvents"]
    names, slices, ticks = {}, [], []
    open_async = {}
    # In-flight work (async b/e pairs) gets two extra rows: the tensor core and the TMA engine.
    async_rows = {"mma": (900, "tensor core (in flight)"), "tma": (901, "TMA (in flight)")}
    for e in events:
        if e.get("pid") != args.cta:
            continue
        if e["ph"] in ("b", "e") and e.get("cat") in async_rows:
            tid, label = async_rows[e["cat"]]
            names[tid] = label
            if e["ph"] == "b":
                open_async[(e["cat"], e["id"])] = float(e["ts"])
            else:
                start = open_async.pop((e["cat"], e["id"]), None)
                if start is not None:
                    slices.append((tid, start, float(e["ts"]) - start, e["name"], "async"))
            continue
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        elif e["ph"] == "X":
            start, dur = float(e["ts"]), float(e["dur"])
            if e["tid"] >= 1000:
                ticks.append((e["tid"], start))
            else:
                slices.append((e["tid"], start, dur, e["name"], e.get("cat", "")))
    if not slices:
        raise SystemExit(f"no slices for CTA {args.cta} in {args.trace}")
    t0 = args.t0 if args.t0 is not None else min(s[1] for s in slices)
    t1 = args.t1 if args.t1 is not None else max(s[1] + s[2] for s in slices)
    warp_rows = sorted(t for t in names if t < 1000)
    bar_rows = sorted(t for t in names if t >= 1000 and any(k[0] == t and t0 <= k[1] <= t1 for k in ticks))
    rows = warp_rows + bar_rows
    label_w, width, row_h, top = 190, 1100, 18, 40
    scale = (width - label_w - 10) / max(t1 - t0, 1e-9)
    height = top + row_h * len(rows) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="8" y="18" font-size="13">{html.escape(args.title or f"CTA {args.cta}")}</text>']
    y_of = {t: top + i * row_h for i, t in enumerate(rows)}
    for t in rows:
        y = y_of[t]
        out.append(f'<text x="8" y="{y + 12}">{html.escape(names[t])}</text>')
        out.append(f'<line x1="{label_w}" y1="{y + row_h - 1}" x2="{width - 10}" y2="{y + row_h - 1}" stroke="#eee"/>')
    for tid, start, dur, name, cat in slices:
        if tid not in y_of or start + dur < t0 or start > t1:
            continue
        x = label_w + (max(start, t0) - t0) * scale
        w = max((min(start + dur, t1) - max(start, t0)) * scale, 0.6)
        y = y_of[tid]
        if cat == "async":
            fill = "#7b3fbf" if tid == 900 else "#1f77b4"
            out.append(f'<rect x="{x:.2f}" y="{y + 3}" width="{w:.2f}" height="{row_h - 7}" fill="{fill}" fill-opacity="0.35" '
                       f'stroke="{fill}" stroke-width="0.5"><title>{html.escape(name)}</title></rect>')
        elif cat == "wait":
            out.append(f'<rect x="{x:.2f}" y="{y + 7}" width="{w:.2f}" height="4" fill="#c8c8c8"><title>{html.escape(name)}</title></rect>')
        else:
            out.append(f'<rect x="{x:.2f}" y="{y + 2}" width="{w:.2f}" height="{row_h - 5}" fill="{colour(name)}">'
                       f'<title>{html.escape(name)}</title></rect>')
    for tid, at in ticks:
        if tid in y_of and t0 <= at <= t1:
            x = label_w + (at - t0) * scale
            out.append(f'<line x1="{x:.2f}" y1="{y_of[tid] + 2}" x2="{x:.2f}" y2="{y_of[tid] + row_h - 3}" stroke="#d62728" stroke-width="1.5"/>')
    ybase = top + row_h * len(rows) + 14
    out.append(f'<text x="{label_w}" y="{ybase}">{t0:.2f} us</text>')
    out.append(f'<text x="{width - 80}" y="{ybase}">{t1:.2f} us</text>')
    legend = [("MMA", "#7b3fbf"), ("TMA load", "#1f77b4"), ("TMA store", "#17a2b8"), ("arrive", "#2ca02c"),
              ("wait (passed)", "#bcbd22"), ("named barrier", "#ff7f0e"), ("compute", "#8c564b"), ("TMEM", "#e377c2"),
              ("CLC", "#d62728"), ("blocked", "#c8c8c8")]
    x = label_w
    for label, fill in legend:
        out.append(f'<rect x="{x}" y="{ybase + 8}" width="10" height="10" fill="{fill}"/><text x="{x + 14}" y="{ybase + 17}">{label}</text>')
        x += 14 + 7 * len(label) + 14
    out.append("</svg>")
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
