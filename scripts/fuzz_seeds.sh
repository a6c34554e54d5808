#!/usr/bin/env bash
# Gathers the seed corpus of a fuzz target (docs/fuzzing.md) from the project's own files into OUTDIR:
#   fuzz_pipe         every .pipe program under models/kernels/
#   fuzz_pipe_tokens  the same programs as token codes (smpipe_fuzz_regress --encode-tokens)
#   fuzz_hwtrace      the committed hardware traces (validation/results/**/, "format": "smpipe-hwtrace"),
#                     cut to fuzz size (1-2 CTAs, the first loop iterations or the first events of each
#                     warp), and a toy trace
#   fuzz_machine      the machine files models/machines/*.json
# Seeds are named by content, so gathering again adds nothing twice. Usage:
#   scripts/fuzz_seeds.sh TARGET OUTDIR [REGRESS_BINARY]
# REGRESS_BINARY (default build-fuzz/fuzz/smpipe_fuzz_regress) encodes the token seeds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:?usage: scripts/fuzz_seeds.sh TARGET OUTDIR [REGRESS_BINARY]}"
out="${2:?usage: scripts/fuzz_seeds.sh TARGET OUTDIR [REGRESS_BINARY]}"
regress="${3:-$root/build-fuzz/fuzz/smpipe_fuzz_regress}"
max_bytes=65536
mkdir -p "$out"

# add FILE: copy FILE into the corpus under its content hash (files over max_bytes are left out).
add() {
  local size
  size=$(stat -c %s "$1")
  if [ "$size" -gt "$max_bytes" ] || [ "$size" -eq 0 ]; then return 0; fi
  cp "$1" "$out/seed-$(sha1sum "$1" | cut -c1-16)"
}

case "$target" in
  fuzz_pipe)
    while IFS= read -r -d '' f; do add "$f"; done < <(find "$root/models/kernels" -name '*.pipe' -print0 | sort -z)
    ;;
  fuzz_pipe_tokens)
    tmp="$(mktemp)"
    trap 'rm -f "$tmp"' EXIT
    while IFS= read -r -d '' f; do
      "$regress" --encode-tokens "$f" "$tmp" && add "$tmp"
    done < <(find "$root/models/kernels" -name '*.pipe' -print0 | sort -z)
    ;;
  fuzz_machine)
    for f in "$root"/models/machines/*.json; do add "$f"; done
    ;;
  fuzz_hwtrace)
    tmpdir="$(mktemp -d)"
    trap 'rm -rf "$tmpdir"' EXIT
    mapfile -t traces < <(grep -rlsZ --include='*.json' '"format": *"smpipe-hwtrace"' "$root/validation/results" "$root/tests" | tr '\0' '\n' | sort)
    python3 - "$tmpdir" "${traces[@]}" <<'PY'
import copy, json, os, sys

out = sys.argv[1]
BLOCKING = {"wait", "tma.wait", "tma.wait.read", "wgmma.wait", "bar.sync"}

def write(name, t):
    with open(os.path.join(out, name), "w") as f:
        json.dump(t, f, separators=(",", ":"))

def cut(t, ctas, keep):
    """The trace with its first `ctas` CTAs, each warp's events cut by keep(events) -> count."""
    t = copy.deepcopy(t)
    t["ctas"] = t["ctas"][:ctas]
    t["probe"]["slots"] = len(t["ctas"])
    for c in t["ctas"]:
        for w in c["warps"]:
            ev = w["events"]
            n = keep(ev)
            if n < len(ev) and n > 0 and ev[n - 1][1] in BLOCKING:
                n += 1  # keep the .end of a blocking op
            if n < len(ev):
                w["events"] = ev[:n] + [ev[-1]] if ev[-1][1] == "exit" else ev[:n]
                w["window_cut"] = True
                t["probe"]["truncated"] = True
    return t

def first_iterations(t, ctas, n):
    """The trace with its first `ctas` CTAs, each warp keeping the events of loop iterations < n (k-blocks of
    the mainloop, subtiles of the epilogue) and those outside loops: a smaller kernel that still runs through."""
    t = copy.deepcopy(t)
    t["ctas"] = t["ctas"][:ctas]
    t["probe"]["slots"] = len(t["ctas"])
    for c in t["ctas"]:
        for w in c["warps"]:
            w["events"] = [e for e in w["events"] if e[6] is None or e[6] < n or e[1] in ("tile", "epilogue")]
    return t

for i, path in enumerate(sys.argv[2:]):
    try:
        t = json.load(open(path))
    except Exception:
        continue
    if t.get("format") != "smpipe-hwtrace" or not t.get("ctas"):
        continue
    base = os.path.basename(path).replace(".json", "")
    write(f"{base}.cta1.it4.json", first_iterations(t, 1, 4))
    write(f"{base}.cta2.it2.json", first_iterations(t, 2, 2))
    write(f"{base}.cta1.ev40.json", cut(t, 1, lambda ev: 40))
    write(f"{base}.cta2.ev16.json", cut(t, 2, lambda ev: 16))

PY
    for f in "$tmpdir"/*.json "$root/tests/traces/toy.hwtrace.json"; do add "$f"; done
    ;;
  *)
    echo "unknown target '$target' (fuzz_pipe, fuzz_pipe_tokens, fuzz_hwtrace, fuzz_machine)" >&2
    exit 2
    ;;
esac
echo "$target: $(find "$out" -maxdepth 1 -type f | wc -l) inputs in $out"
