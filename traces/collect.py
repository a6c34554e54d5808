#!/usr/bin/env python3
"""Decodes a raw capture of the smpipe device probe (traces/probe.cuh) into a hardware trace file
(docs/trace-format.md: format "smpipe-hwtrace", version 1).

    python3 traces/collect.py RAW.bin [--meta RAW.meta.json] -o TRACE.json [--summary]
    python3 traces/collect.py --self-test

RAW.bin is the probe buffer exactly as the driver copied it back from the GPU; RAW.meta.json is the
driver's description of the run (kernel, GPU, parameters, barrier / tensor / warp tables; by default the
.bin path with .meta.json). Standard library only; the output depends only on the inputs.
"""
import argparse
import json
import os
import statistics
import struct
import sys
import tempfile

FORMAT = "smpipe-hwtrace"
VERSION = 1
RAW_MAGIC = 0x42504D53  # "SMPB"
RAW_VERSION = 1
RAW_VERSION_SAMPLED = 2  # the same layout, its k-blocks sampled (probe.cuh kRawVersionSampled; word 10: kb_sample)
GLOBAL_HEADER = 64

# Op tags of traces/probe.cuh (enum Op), by value.
OPS = {
    1: "wait", 2: "wait.end", 3: "arrive", 4: "arrive.expect_tx", 5: "expect_tx",
    6: "tma.load", 7: "tma.store", 8: "tma.commit", 9: "tma.wait", 10: "tma.wait.end",
    11: "tma.wait.read", 12: "tma.wait.read.end",
    13: "wgmma.fence", 14: "wgmma", 15: "wgmma.commit", 16: "wgmma.wait", 17: "wgmma.wait.end",
    18: "bar.sync", 19: "bar.sync.end", 20: "fence.proxy.async", 21: "ld.shared", 22: "st.shared",
    23: "compute", 24: "tile", 25: "epilogue", 26: "tail", 27: "exit",
}
# Fused tags: one record, two events at its cycle (the probe keeps the wgmma issue path short).
FUSED = {28: ("wgmma.fence", "wgmma"), 29: ("wgmma.commit", "wgmma.wait")}
END_OF = {"wait.end": "wait", "tma.wait.end": "tma.wait", "tma.wait.read.end": "tma.wait.read",
          "wgmma.wait.end": "wgmma.wait", "bar.sync.end": "bar.sync"}


class RawError(Exception):
    pass


def u32(buf, off):
    return struct.unpack_from("<I", buf, off)[0]


def u64(buf, off):
    return struct.unpack_from("<Q", buf, off)[0]


def decode(raw, meta):
    """Returns the trace as a dict (the documented file's content)."""
    if len(raw) < GLOBAL_HEADER:
        raise RawError("raw buffer shorter than its 64-byte header")
    (magic, version, record_bytes, slots, warps, capacity, cta_first, tile_limit,
     cta_hdr, warp_hdr, kb_sample) = struct.unpack_from("<11I", raw, 0)
    if magic != RAW_MAGIC:
        raise RawError("not a probe buffer (magic 0x%08x)" % magic)
    if version not in (RAW_VERSION, RAW_VERSION_SAMPLED) or record_bytes != 16 or cta_hdr != 64 or warp_hdr != 32:
        raise RawError("raw layout version %d (record %d B, headers %d/%d B) is not the one this collector reads"
                       % (version, record_bytes, cta_hdr, warp_hdr))
    slot_bytes = cta_hdr + warps * warp_hdr + warps * capacity * record_bytes
    if len(raw) < GLOBAL_HEADER + slots * slot_bytes:
        raise RawError("raw buffer has %d bytes, its header needs %d" % (len(raw), GLOBAL_HEADER + slots * slot_bytes))

    bars = {b["id"]: b for b in meta["barriers"]}
    tensors = {t["id"]: t for t in meta.get("tensors", [])}
    warp_info = {w["warp"]: w for w in meta["warps"]}
    params = meta["params"]
    grid = params.get("grid", [1, 1, 1])

    ctas = []
    mhz = []
    truncated = False
    unwritten_total = 0
    for s in range(slots):
        base = GLOBAL_HEADER + s * slot_bytes
        if u32(raw, base) != 1:
            continue  # this CTA did not run (grid smaller than the slots)
        bx, by, bz, smid = struct.unpack_from("<4I", raw, base + 4)
        clock_start, gt_start = u64(raw, base + 24), u64(raw, base + 32)
        cta_id = bx + grid[0] * (by + grid[1] * bz)
        out_warps = []
        clock_end, gt_end, dropped = clock_start, gt_start, 0
        for w in range(warps):
            wh = base + cta_hdr + w * warp_hdr
            wbase, wend, wgt = u64(raw, wh), u64(raw, wh + 8), u64(raw, wh + 16)
            n, cut = u32(raw, wh + 24), u32(raw, wh + 28)
            if wend == 0:
                raise RawError("CTA %d warp %d did not write its end header (kernel failed?)" % (cta_id, w))
            truncated = truncated or cut != 0
            kept = min(n, capacity)
            wdrop = n - kept
            dropped += wdrop
            clock_end, gt_end = max(clock_end, wend), max(gt_end, wgt)
            recs = base + cta_hdr + warps * warp_hdr + w * capacity * record_bytes
            base_lo = wbase & 0xFFFFFFFF
            events = []
            unwritten = 0
            for i in range(kept):
                t, info, nbytes, it = struct.unpack_from("<IIIi", raw, recs + 16 * i)
                tag = info & 0xFF
                if tag == 0:
                    unwritten += 1  # a slot the warp counted but never wrote (a probe bug)
                    continue
                if tag not in OPS and tag not in FUSED:
                    raise RawError("CTA %d warp %d record %d: unknown op tag %d" % (cta_id, w, i, tag))
                bar_id, idx, phase, tensor = (info >> 8) & 0xFF, (info >> 16) & 0xFF, (info >> 24) & 3, (info >> 26) & 15
                cycle = wbase + ((t - base_lo) & 0xFFFFFFFF) - clock_start
                bar = None
                if bar_id != 0xFF:
                    if bar_id not in bars:
                        raise RawError("CTA %d warp %d record %d: barrier id %d not in the metadata" % (cta_id, w, i, bar_id))
                    bar = bars[bar_id]["name"]
                tname = None
                if tensor:
                    if tensor not in tensors:
                        raise RawError("CTA %d warp %d record %d: tensor id %d not in the metadata" % (cta_id, w, i, tensor))
                    tname = tensors[tensor]["name"]
                idx_v, ph_v, it_v = None if idx == 0xFF else idx, None if phase == 3 else phase, None if it == -1 else it
                if tag in FUSED:
                    first, second = FUSED[tag]
                    events.append([cycle, first, None, None, None, 0, it_v, None])
                    events.append([cycle, second, bar, idx_v, ph_v, nbytes, it_v, tname])
                else:
                    events.append([cycle, OPS[tag], bar, idx_v, ph_v, nbytes, it_v, tname])
            unwritten_total += unwritten
            info = warp_info.get(w, {"role": "unknown", "lanes": 32})
            out_warps.append({"warp": w, "role": info["role"], "lanes": info["lanes"], "dropped": wdrop,
                              "window_cut": cut != 0, "end": wend - clock_start, "events": events})
        if gt_end > gt_start and clock_end > clock_start:
            mhz.append((clock_end - clock_start) / (gt_end - gt_start) * 1e3)
        ctas.append({"cta": cta_id, "sm": smid, "clock_start": clock_start, "clock_end": clock_end,
                     "globaltimer_start": gt_start, "globaltimer_end": gt_end, "dropped": dropped,
                     "warps": out_warps})

    barriers = []
    for b in sorted(meta["barriers"], key=lambda b: b["id"]):
        e = {"name": b["name"], "kind": b["kind"], "size": b["size"], "count": b["count"]}
        if b["kind"] == "named":
            e["named_id"] = b["named_id"]
        barriers.append(e)
    out_tensors = [{k: v for k, v in t.items() if k != "id"} for t in sorted(meta.get("tensors", []), key=lambda t: t["id"])]
    return {
        "format": FORMAT,
        "version": VERSION,
        "kernel": meta["kernel"],
        "variant": meta.get("variant"),
        "gpu": meta["gpu"],
        "sm_clock_mhz": round(statistics.median(mhz), 1) if mhz else None,
        "date": meta["date"],
        "command": meta["command"],
        "params": params,
        "barriers": barriers,
        "tensors": out_tensors,
        "smem": meta.get("smem", []),
        "probe": {"record_bytes": record_bytes, "slots": slots, "cta_first": cta_first, "capacity": capacity,
                  "tile_limit": tile_limit, "truncated": truncated, "unwritten": unwritten_total,
                  **({"kb_sample": kb_sample} if kb_sample > 1 else {})},
        "run": {k: meta[k] for k in ("kernel_ms", "rel_err", "check_ok", "nvidia_smi", "sm_count") if k in meta},
        "ctas": ctas,
    }


def check(trace):
    """Consistency checks a replay relies on; returns a list of problems (empty: fine)."""
    problems = []
    for c in trace["ctas"]:
        for w in c["warps"]:
            ev = w["events"]
            where = "CTA %d warp %d" % (c["cta"], w["warp"])
            for a, b in zip(ev, ev[1:]):
                if b[0] < a[0]:
                    problems.append("%s: cycle goes back from %d (%s) to %d (%s)" % (where, a[0], a[1], b[0], b[1]))
                    break
            open_op = None
            for e in ev:
                if e[1] in END_OF.values():
                    if open_op is not None:
                        problems.append("%s: %s at %d starts before %s ended" % (where, e[1], e[0], open_op[1]))
                    open_op = e
                elif e[1] in END_OF:
                    if open_op is None or END_OF[e[1]] != open_op[1] or open_op[2:5] != e[2:5]:
                        problems.append("%s: %s at %d does not close the op before it" % (where, e[1], e[0]))
                    open_op = None
            if w["dropped"]:
                problems.append("%s: %d records dropped (buffer full)" % (where, w["dropped"]))
    if trace["probe"].get("unwritten"):
        problems.append("%d counted records were never written (probe bug)" % trace["probe"]["unwritten"])
    return problems


def fmt_value(v):
    return json.dumps(v, separators=(",", ":"))


def write_trace(trace, f):
    """Writes the trace with one event per line (small, diffable, still plain JSON)."""
    f.write("{\n")
    keys = [k for k in trace if k != "ctas"]
    for k in keys:
        f.write('  "%s": %s,\n' % (k, json.dumps(trace[k], separators=(", ", ": "))))
    f.write('  "ctas": [')
    for ci, c in enumerate(trace["ctas"]):
        head = {k: v for k, v in c.items() if k != "warps"}
        f.write(("," if ci else "") + "\n    " + json.dumps(head, separators=(", ", ": "))[:-1] + ', "warps": [')
        for wi, w in enumerate(c["warps"]):
            wh = {k: v for k, v in w.items() if k != "events"}
            f.write(("," if wi else "") + "\n      " + json.dumps(wh, separators=(", ", ": "))[:-1] + ', "events": [')
            f.write(",".join("\n" + fmt_value(e) for e in w["events"]))
            f.write("\n      ]}")
        f.write("\n    ]}")
    f.write("\n  ]\n}\n")


def summary(trace):
    """Median hardware wait durations per role, op and barrier: what a replay compares first."""
    lines = ["%s %s on %s, SM clock %s MHz, %d CTAs" % (trace["kernel"], trace.get("variant") or "", trace["gpu"],
                                                        trace["sm_clock_mhz"], len(trace["ctas"]))]
    waits = {}
    counts = {}
    for c in trace["ctas"]:
        for w in c["warps"]:
            counts[w["role"]] = counts.get(w["role"], 0) + len(w["events"])
            start = None
            for e in w["events"]:
                if e[1] in END_OF.values():
                    start = e
                elif e[1] in END_OF and start is not None:
                    waits.setdefault((w["role"], start[1], start[2]), []).append(e[0] - start[0])
                    start = None
    lines.append("events per role: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    lines.append("%-16s %-16s %-12s %8s %10s %10s %10s" % ("role", "op", "barrier", "count", "median", "p90", "total"))
    for (role, op, bar), d in sorted(waits.items(), key=lambda kv: (kv[0][0], kv[0][1], str(kv[0][2]))):
        d = sorted(d)
        lines.append("%-16s %-16s %-12s %8d %10d %10d %10d" % (role, op, bar or "-", len(d), d[len(d) // 2],
                                                            d[min(len(d) - 1, int(0.9 * len(d)))], sum(d)))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# Self-test: a synthetic raw buffer built here the way probe.cuh lays it out.
# ---------------------------------------------------------------------------------------------------
def _synthetic():
    warps, cap, slots = 2, 4, 2
    slot_bytes = 64 + warps * 32 + warps * cap * 16
    raw = bytearray(GLOBAL_HEADER + slots * slot_bytes)
    struct.pack_into("<10I", raw, 0, RAW_MAGIC, RAW_VERSION, 16, slots, warps, cap, 0, 1, 64, 32)
    base = GLOBAL_HEADER  # slot 0 only; slot 1 never written (a CTA that did not run)
    start = (1 << 32) - 100  # the low 32 bits wrap during the run
    struct.pack_into("<6I", raw, base, 1, 0, 0, 0, 7, 132)
    struct.pack_into("<QQ", raw, base + 24, start, 5_000_000)
    recs = [  # warp 0: wait, wait.end, arrive.expect_tx, tma.load (4 kept of n = 5: EXIT dropped)
        [(start + 10, 1 | (1 << 8) | (2 << 16) | (1 << 24), 0, 5), (start + 150, 2 | (1 << 8) | (2 << 16) | (1 << 24), 0, 5),
         (start + 160, 4 | (0 << 8) | (2 << 16) | (0 << 24), 49152, 5), (start + 170, 6 | (2 << 26) | (2 << 16), 16384, 5)],
        # warp 1: tile, fused wgmma.fence + wgmma, fused wgmma.commit + wgmma.wait 1, exit (window cut after 3)
        [(start + 20, 24 | (0xFF << 8) | (0xFF << 16) | (3 << 24), 0, 3), (start + 30, 28 | (0xFF << 8) | (1 << 16) | (3 << 24), 0, 0),
         (start + 40, 29 | (0xFF << 8) | (1 << 16) | (3 << 24), 0, 0), (start + 50, 27 | (0xFF << 8) | (0xFF << 16) | (3 << 24), 0, -1)],
    ]
    n_cut = [(5, 0), (4, 4)]
    for w in range(warps):
        wh = base + 64 + w * 32
        struct.pack_into("<QQQII", raw, wh, start + w, start + 1000 + w, 5_000_500 + w, n_cut[w][0], n_cut[w][1])
        r0 = base + 64 + warps * 32 + w * cap * 16
        for i, (t, info, nb, it) in enumerate(recs[w]):
            struct.pack_into("<IIIi", raw, r0 + 16 * i, t & 0xFFFFFFFF, info, nb, it)
    meta = {"kernel": "synthetic", "gpu": "none", "date": "2026-01-01T00:00:00Z", "command": "self-test",
            "params": {"grid": [2, 1, 1], "tiles": 2},
            "barriers": [{"id": 0, "name": "full", "kind": "mbarrier", "size": 4, "count": 1},
                         {"id": 1, "name": "empty", "kind": "mbarrier", "size": 4, "count": 256}],
            "tensors": [{"id": 2, "name": "B"}],
            "warps": [{"warp": 0, "role": "producer", "lanes": 1}, {"warp": 1, "role": "consumer", "lanes": 32}]}
    return bytes(raw), meta


def self_test():
    raw, meta = _synthetic()
    tr = decode(raw, meta)
    assert tr["format"] == FORMAT and tr["version"] == VERSION
    assert len(tr["ctas"]) == 1, tr["ctas"]
    c = tr["ctas"][0]
    assert c["sm"] == 7 and c["dropped"] == 1 and c["clock_end"] - c["clock_start"] == 1001
    assert c["globaltimer_end"] - c["globaltimer_start"] == 501
    assert tr["sm_clock_mhz"] == round(1001 / 501 * 1e3, 1)
    assert tr["probe"]["truncated"] and c["warps"][1]["window_cut"] and not c["warps"][0]["window_cut"]
    w0, w1 = c["warps"][0]["events"], c["warps"][1]["events"]
    assert w0[0] == [10, "wait", "empty", 2, 1, 0, 5, None], w0[0]
    assert w0[1] == [150, "wait.end", "empty", 2, 1, 0, 5, None], w0[1]
    assert w0[2] == [160, "arrive.expect_tx", "full", 2, 0, 49152, 5, None], w0[2]
    assert w0[3] == [170, "tma.load", "full", 2, 0, 16384, 5, "B"], w0[3]
    assert w1[0] == [20, "tile", None, None, None, 0, 3, None], w1[0]  # cycles are absolute: the base only unwraps
    assert w1[1] == [30, "wgmma.fence", None, None, None, 0, 0, None], w1[1]
    assert w1[2] == [30, "wgmma", None, 1, None, 0, 0, None], w1[2]
    assert w1[3] == [40, "wgmma.commit", None, None, None, 0, 0, None], w1[3]
    assert w1[4] == [40, "wgmma.wait", None, 1, None, 0, 0, None], w1[4]
    assert w1[5][1] == "exit" and w1[5][6] is None and len(w1) == 6
    assert c["warps"][0]["dropped"] == 1 and c["warps"][1]["dropped"] == 0 and c["warps"][1]["end"] == 1001
    problems = check(tr)
    assert any("dropped" in p for p in problems) and not any("close" in p for p in problems), problems
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "t.json")
        with open(p, "w") as f:
            write_trace(tr, f)
        with open(p) as f:
            assert json.load(f) == json.loads(json.dumps(tr))
    # a sampled buffer (version 2, every 16th k-block): the same events, the sampling in probe.kb_sample
    sampled = bytearray(raw)
    struct.pack_into("<I", sampled, 4, RAW_VERSION_SAMPLED)
    struct.pack_into("<I", sampled, 40, 16)
    ts = decode(bytes(sampled), meta)
    assert ts["probe"]["kb_sample"] == 16 and "kb_sample" not in tr["probe"] and ts["ctas"] == tr["ctas"]
    for offset, value, what in ((4, 3, "unknown version"), (0, 0, "bad magic")):
        bad = bytearray(raw)
        struct.pack_into("<I", bad, offset, value)
        try:
            decode(bytes(bad), meta)
            raise AssertionError(what + " accepted")
        except RawError:
            pass
    print("collect.py self-test passed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("raw", nargs="?", help="raw probe buffer written by the driver (.bin)")
    ap.add_argument("--meta", help="the driver's description (default: RAW with .bin replaced by .meta.json)")
    ap.add_argument("-o", "--out", help="trace file to write (docs/trace-format.md)")
    ap.add_argument("--summary", action="store_true", help="print wait durations per role, op and barrier")
    ap.add_argument("--self-test", action="store_true", help="decode a synthetic buffer and check the result")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return 0
    if not a.raw or not a.out:
        ap.error("RAW and -o are required")
    meta_path = a.meta or (a.raw[:-4] if a.raw.endswith(".bin") else a.raw) + ".meta.json"
    with open(a.raw, "rb") as f:
        raw = f.read()
    with open(meta_path) as f:
        meta = json.load(f)
    try:
        trace = decode(raw, meta)
    except RawError as e:
        print("collect.py: %s: %s" % (a.raw, e), file=sys.stderr)
        return 1
    for p in check(trace):
        print("collect.py: warning: " + p, file=sys.stderr)
    with open(a.out, "w") as f:
        write_trace(trace, f)
    n = sum(len(w["events"]) for c in trace["ctas"] for w in c["warps"])
    print("wrote %s: %d CTAs, %d events, %d bytes" % (a.out, len(trace["ctas"]), n, os.path.getsize(a.out)))
    if a.summary:
        print(summary(trace))
    return 0


if __name__ == "__main__":
    sys.exit(main())
