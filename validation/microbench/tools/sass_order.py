#!/usr/bin/env python3
"""Order check of clock reads and wgmma instructions in SASS (output of `cuobjdump -sass BINARY`).

    python3 tools/sass_order.py ALL.sass --match k_wgmma_issue_ [--dump OUT.txt]

For each function whose name contains one of the --match substrings (comma separated) it prints one
compact line of tokens in program order:
  H  HGMMA (wgmma.mma_async)      C  clock read (any instruction reading SR_CLOCKLO / SR_CLOCKHI)
  A  WARPGROUP.ARRIVE (wgmma.fence)   W  WARPGROUP.DEPBAR (wgmma.wait_group)   B  BAR.SYNC / BAR.*
  G  WARPGROUP.* other              .N  N other instructions in a row
plus the HGMMA count and whether every HGMMA is followed by a C before the next H or W (meant for the
issue-timeline kernels; the k-loop kernels have one clock read per 4 HGMMAs by design, so they print NO).
--dump writes the full SASS of the matched functions to a file.
"""
import argparse
import re
import sys


def split_functions(text):
    funcs, name, body = [], None, []
    for line in text.splitlines():
        m = re.match(r"\s*Function\s*:\s*(\S+)", line)
        if m:
            if name:
                funcs.append((name, body))
            name, body = m.group(1), []
        elif name:
            body.append(line)
    if name:
        funcs.append((name, body))
    return funcs


def instr(line):
    # "        /*0120*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], RZ ;   /* 0x... */"
    m = re.match(r"\s*/\*[0-9a-fA-F]+\*/\s+(.*?);", line)
    return m.group(1).strip() if m else None


def token(ins):
    op = re.sub(r"^@!?U?P\w+\s+", "", ins)  # drop a predicate guard
    if "SR_CLOCK" in op:
        return "C"
    if op.startswith("HGMMA") or op.startswith("QGMMA"):
        return "H"
    if op.startswith("WARPGROUP.ARRIVE"):
        return "A"
    if op.startswith("WARPGROUP.DEPBAR"):
        return "W"
    if op.startswith("WARPGROUP"):
        return "G"
    if op.startswith("BAR"):
        return "B"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sass")
    ap.add_argument("--match", required=True)
    ap.add_argument("--dump")
    a = ap.parse_args()
    keys = [k for k in a.match.split(",") if k]
    funcs = [(n, b) for n, b in split_functions(open(a.sass).read()) if any(k in n for k in keys)]
    dump = open(a.dump, "w") if a.dump else None
    for name, body in funcs:
        toks, other, seq = [], 0, []
        for line in body:
            ins = instr(line)
            if ins is None:
                continue
            t = token(ins)
            if t is None:
                other += 1
                continue
            if other:
                toks.append(".%d" % other)
                other = 0
            toks.append(t)
            seq.append(t)
        if other:
            toks.append(".%d" % other)
        nh = seq.count("H")
        # every H followed by a C before the next H / W / end
        ok = True
        for i, t in enumerate(seq):
            if t == "H":
                j = i + 1
                while j < len(seq) and seq[j] not in ("H", "C", "W"):
                    j += 1
                if j >= len(seq) or seq[j] != "C":
                    ok = False
        print("%s: %d HGMMA, %d clock reads, each HGMMA followed by a clock read before the next HGMMA/wait: %s"
              % (name, nh, seq.count("C"), "yes" if ok else "NO"))
        print("  " + " ".join(toks))
        if dump:
            dump.write("Function : %s\n" % name)
            dump.write("\n".join(body) + "\n")
    if not funcs:
        print("no function matched %s" % keys, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
