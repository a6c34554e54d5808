#!/usr/bin/env python3
"""Checks a Chrome trace written by `smpipe run --trace` (or `replay`/`compare --trace`) for what a viewer
needs to show it right:
  - the file is JSON with a traceEvents list, every event of a known phase with its required fields;
  - on each track (pid, tid) the complete slices (ph X) nest: none starts inside another and ends after it
    (times compared exactly, in the tenths of a nanosecond the file is written in);
  - every flow event (ph s / f) lies on a slice of its track (its start inside a slice, its end inside or at
    the end of one), and every flow id has one start and one end;
  - every async slice (ph b) has its end (ph e), not before it;
  - with --stopped: the run stopped, so the trace has a global instant event saying why, and the waits that
    never ended are slices marked unfinished that reach that instant; with --deadlock, there are such waits.
Usage: check_trace.py TRACE.json [--stopped | --deadlock]   (exit 1 and one line per problem when it is not valid)
       check_trace.py --self-test SMPIPE          (runs SMPIPE on the project's examples and checks each trace)
"""
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

PHASES = {"X", "M", "b", "e", "s", "f", "C", "i"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tenths(t):
    """A time in microseconds as printed (four decimals) -> an exact integer count of tenths of a nanosecond."""
    return round(t * 10000)


def check(path, stopped=False, deadlock=False):
    problems = []
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return [f"{path}: not readable JSON: {e}"]
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        return [f"{path}: no traceEvents list"]
    slices = defaultdict(list)  # (pid, tid) -> [(start, end, name)]
    flows = defaultdict(lambda: {"s": [], "f": []})
    asyncs = defaultdict(lambda: {"b": [], "e": []})
    instants = []
    for n, e in enumerate(events):
        ph = e.get("ph")
        if ph not in PHASES:
            problems.append(f"event {n}: unknown phase {ph!r}")
            continue
        if ph != "M" and not isinstance(e.get("ts"), (int, float)):
            problems.append(f"event {n} ({ph}): no numeric ts")
            continue
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                problems.append(f"event {n}: slice {e.get('name')!r} without a non-negative dur")
                continue
            start = tenths(e["ts"])
            slices[(e.get("pid"), e.get("tid"))].append((start, start + tenths(e["dur"]), e.get("name"), n, e))
        elif ph in "sf":
            flows[e.get("id")][ph].append(e)
        elif ph in "be":
            asyncs[(e.get("pid"), e.get("id"))][ph].append(tenths(e["ts"]))
        elif ph == "i":
            instants.append(e)

    # Slices on a track nest: sorted by start (longest first at equal starts), each must end by the end of
    # every slice it starts inside.
    for track, ss in slices.items():
        ss.sort(key=lambda s: (s[0], -s[1], s[3]))
        stack = []
        for s in ss:
            while stack and stack[-1][1] <= s[0]:
                stack.pop()
            if stack and s[1] > stack[-1][1]:
                top = stack[-1]
                problems.append(f"track pid {track[0]} tid {track[1]}: slice {s[2]!r} [{s[0]}, {s[1]}) overlaps "
                                f"{top[2]!r} [{top[0]}, {top[1]}) (tenths of ns) without nesting in it")
                if len(problems) > 50:
                    return problems
            stack.append(s)

    def on_slice(e, end_ok):
        t = tenths(e["ts"])
        for start, end, *_ in slices.get((e.get("pid"), e.get("tid")), []):
            if start <= t < end or (end_ok and t == end):
                return True
        return False

    for fid, ends in flows.items():
        if len(ends["s"]) != 1 or len(ends["f"]) != 1:
            problems.append(f"flow {fid}: {len(ends['s'])} start(s) and {len(ends['f'])} end(s), not one of each")
            continue
        s, f = ends["s"][0], ends["f"][0]
        if not on_slice(s, end_ok=False):
            problems.append(f"flow {fid}: its start (pid {s.get('pid')} tid {s.get('tid')} ts {s['ts']}) is on no slice")
        if not on_slice(f, end_ok=True):
            problems.append(f"flow {fid}: its end (pid {f.get('pid')} tid {f.get('tid')} ts {f['ts']}) is on no slice")
        if tenths(f["ts"]) < tenths(s["ts"]):
            problems.append(f"flow {fid}: ends (ts {f['ts']}) before it starts (ts {s['ts']})")
    for key, be in asyncs.items():
        if len(be["b"]) != len(be["e"]):
            problems.append(f"async slice id {key[1]} of pid {key[0]}: {len(be['b'])} begin(s), {len(be['e'])} end(s)")
        elif any(e < b for b, e in zip(sorted(be["b"]), sorted(be["e"]))):
            problems.append(f"async slice id {key[1]} of pid {key[0]}: ends before it begins")

    if stopped:
        ends = [e for e in instants if e.get("s") == "g" and not e.get("name", "").startswith("trace cut")]
        if not ends:
            problems.append("the run stopped, but no global instant event says why")
        else:
            stop = tenths(ends[-1]["ts"])
            unfinished = [s for ss in slices.values() for s in ss if s[4].get("args", {}).get("unfinished")]
            if deadlock and not unfinished:
                problems.append("the run deadlocked, but no wait is marked unfinished")
            for s in unfinished:
                if s[1] < stop:
                    problems.append(f"unfinished wait {s[2]!r} ends at {s[1]}, before the stop at {stop} (tenths of ns)")
    return problems


# What the self-test runs and checks: (smpipe arguments before --trace, how the run ends: None finished, "stop"
# stopped early, "deadlock" stopped with warps blocked).
SELF_TEST = [
    (["run", "examples/mainloop"], None),
    (["run", "examples/cluster_multicast"], None),
    (["run", "examples/sm80_cp_async"], None),
    (["run", "examples/sm100_umma_clc", "--gpu", "b200"], None),
    (["run", "examples/global_sync"], None),
    (["run", "sm90/gemm_tma_ws_pingpong", "-D", "M=512", "-D", "N=512", "-D", "K=1024", "--trace-ctas", "2"], None),
    (["run", "examples/deadlock_producer_start_phase"], "deadlock"),
    (["run", "examples/deadlock_tx_mismatch"], "deadlock"),
    (["run", "examples/ub_arrival_overflow"], "stop"),
    (["run", "examples/mainloop", "-D", "KTILES=4096", "--max-cycles", "20000"], "deadlock"),
    (["run", "examples/mainloop", "-D", "KTILES=4096", "--max-cycles", "2345"], "deadlock"),
    (["run", "examples/mainloop", "-D", "KTILES=4096", "--max-cycles", "6007"], "deadlock"),
    (["compare", "validation/results/h100/k2_trace_2048x2048x2048.json"], None),
    (["run", "sm90/gemm_tma_ws_cooperative", "-D", "M=1024", "-D", "N=1024", "-D", "K=1024", "--trace-window", "3000:5000"], None),
    (["run", "examples/deadlock_producer_start_phase", "--trace-window", "0:10"], "deadlock"),
]


def self_test(smpipe):
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (args, stops) in enumerate(SELF_TEST):
            out = os.path.join(tmp, f"t{n}.json")
            run = subprocess.run([smpipe] + args + ["--trace", out], capture_output=True, text=True, cwd=ROOT)
            what = " ".join(args)
            if (run.returncode != 0) != (stops is not None) or not os.path.exists(out):
                print(f"{what}: exit {run.returncode}, expected {'a stop' if stops else 0}\n{run.stderr}")
                failed += 1
                continue
            problems = check(out, stopped=stops is not None, deadlock=stops == "deadlock")
            print(f"{what}: {'ok' if not problems else str(len(problems)) + ' problem(s)'}")
            for p in problems[:10]:
                print(f"  {p}")
            failed += bool(problems)
    # The checker itself finds what it must: overlap, an unbound flow, a stop with nothing said.
    bad = {"traceEvents": [
        {"ph": "X", "name": "a", "pid": 0, "tid": 0, "ts": 0.0, "dur": 0.0010},
        {"ph": "X", "name": "b", "pid": 0, "tid": 0, "ts": 0.0005, "dur": 0.0010},
        {"ph": "s", "name": "flow", "id": 7, "pid": 0, "tid": 0, "ts": 0.0001},
        {"ph": "f", "name": "flow", "id": 7, "pid": 0, "tid": 1, "ts": 0.0003, "bp": "e"}]}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(bad, f)
    found = check(f.name, stopped=True, deadlock=True)
    os.unlink(f.name)
    want = ["overlaps", "its end", "no global instant"]
    for w in want:
        if not any(w in p for p in found):
            print(f"self-test: the checker missed a problem it must find ({w!r}): {found}")
            failed += 1
    return 1 if failed else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        return self_test(argv[2])
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] not in ("--stopped", "--deadlock")):
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(argv[1], stopped=len(argv) == 3, deadlock=len(argv) == 3 and argv[2] == "--deadlock")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
