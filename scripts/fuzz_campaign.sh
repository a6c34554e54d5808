#!/usr/bin/env bash
# A long fuzzing campaign over every target (docs/fuzzing.md), from fuzz binaries built before (the `fuzz`
# preset, build-fuzz/fuzz/): nothing is compiled, so it runs on any machine with the same OS, without clang
# or libfmt (the binaries link ASan, UBSan, libFuzzer and fmt statically; they need libc, libm, libstdc++ and
# libgcc_s only). Usage:
#   scripts/fuzz_campaign.sh OUTDIR SECONDS_PER_TARGET JOBS [TARGET...]
# Each target runs for SECONDS_PER_TARGET with JOBS processes (libFuzzer -fork=JOBS; a crash, timeout or
# out-of-memory input is saved and fuzzing goes on), one target after the other; FUZZ_SPLIT=1 runs all
# targets at once instead, JOBS shared between them. Writes, per target, OUTDIR/TARGET/{corpus,crashes,log.txt,
# crashes.txt} and for the campaign OUTDIR/summary.txt and OUTDIR/summary.json: executions, exec/s, edges
# covered (cov) and features (ft) of the final corpus, corpus size, and the failing inputs grouped by the top
# three frames of their stack. The exit status is 1 when some input failed.
# Environment: FUZZ_BIN (folder of the binaries; default build-fuzz/fuzz), FUZZ_RSS_MB (per process; 2048),
# FUZZ_TIMEOUT (seconds per input; 10), FUZZ_ARGS (more libFuzzer flags), FUZZ_SUMMARY_ONLY=1 (fuzz nothing: write
# the summary of the campaign already in OUTDIR).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: scripts/fuzz_campaign.sh OUTDIR SECONDS_PER_TARGET JOBS [TARGET...]}"
seconds="${2:?usage: scripts/fuzz_campaign.sh OUTDIR SECONDS_PER_TARGET JOBS [TARGET...]}"
jobs="${3:?usage: scripts/fuzz_campaign.sh OUTDIR SECONDS_PER_TARGET JOBS [TARGET...]}"
shift 3
targets=("$@")
((${#targets[@]})) || targets=(fuzz_pipe fuzz_pipe_tokens fuzz_hwtrace fuzz_machine)
bin="${FUZZ_BIN:-$root/build-fuzz/fuzz}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
export SMPIPE_MACHINES="$root/models/machines" SMPIPE_KERNELS="$root/models/kernels"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

for t in "${targets[@]}"; do
  [ -x "$bin/$t" ] || { echo "fuzz_campaign: no $bin/$t: build it with scripts/fuzz.sh or 'cmake --preset fuzz && cmake --build --preset fuzz'" >&2; exit 2; }
  if ldd "$bin/$t" | grep -q 'not found'; then
    echo "fuzz_campaign: $bin/$t needs shared libraries this machine lacks:" >&2
    ldd "$bin/$t" | grep 'not found' >&2
    exit 2
  fi
done

# seeds TARGET DIR: the corpus gathered by scripts/fuzz.sh when there is one, else the project's files.
seeds() {
  local t="$1" dir="$2"
  if [ -d "$root/build-fuzz/corpus/$t" ] && [ -n "$(ls -A "$root/build-fuzz/corpus/$t")" ]; then
    cp -n "$root/build-fuzz/corpus/$t"/* "$dir"/ 2>/dev/null || true
  else
    "$root/scripts/fuzz_seeds.sh" "$t" "$dir" "$bin/smpipe_fuzz_regress" || echo "fuzz_campaign: $t: seeds not gathered; starting from an empty corpus" >&2
  fi
}

# run TARGET FORKS: one campaign of TARGET.
run() {
  local t="$1" forks="$2" dir="$out/$1"
  mkdir -p "$dir/corpus" "$dir/crashes"
  seeds "$t" "$dir/corpus"
  local flags=(-fork="$forks" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds"
               -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -artifact_prefix="$dir/crashes/"
               -print_final_stats=1)
  case "$t" in
    fuzz_pipe) flags+=(-dict="$root/fuzz/pipe.dict" -max_len=65536) ;;
    fuzz_pipe_tokens) flags+=(-max_len=8192) ;;
    *) flags+=(-max_len=65536) ;;
  esac
  # shellcheck disable=SC2206
  local extra=(${FUZZ_ARGS:-})
  echo "fuzz_campaign: $t: ${seconds}s, $forks process(es), started $(date -u +%FT%TZ)"
  # Wall, user and system seconds of the fuzzing (all its processes), for the summary: on a shared or busy
  # machine the CPU time, not the wall time, says how much fuzzing was done.
  local TIMEFORMAT='%R %U %S'
  { time (cd "$dir" && "$bin/$t" "${flags[@]}" "${extra[@]}" "$dir/corpus" > "$dir/log.txt" 2>&1 || true) ; } 2> "$dir/time.txt"
  # The coverage of the final corpus, in one process.
  (cd "$dir" && "$bin/$t" -runs=0 -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" "$dir/corpus" > "$dir/final_coverage.txt" 2>&1) || true
  # Each failing input reproduced once: its sanitizer summary and top three frames. A slow-unit-* file is an
  # input that finished, within the timeout, but took longer than libFuzzer's -report_slow_units (10 s): not a
  # failure (the summary lists them apart), so it is not reproduced here.
  : > "$dir/crashes.txt"
  local f
  for f in "$dir"/crashes/*; do
    [ -f "$f" ] || continue
    case "$(basename "$f")" in slow-unit-*) continue ;; esac
    {
      echo "== $(basename "$f") ($(stat -c %s "$f") bytes)"
      (cd "$dir" && timeout 120 "$bin/$t" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" "$f" 2>&1 || true) |
        grep -E '^ *#[0-2] |^SUMMARY|FAILURE|ERROR: libFuzzer|ERROR: AddressSanitizer|runtime error' | head -8 || true
    } >> "$dir/crashes.txt"
  done
  echo "fuzz_campaign: $t: done $(date -u +%FT%TZ)"
}

if [ "${FUZZ_SUMMARY_ONLY:-0}" = 1 ]; then
  :  # the summary of a campaign already in OUTDIR (one that was interrupted, or written by an older script)
elif [ "${FUZZ_SPLIT:-0}" = 1 ]; then
  per=$((jobs / ${#targets[@]}))
  ((per >= 1)) || per=1
  pids=()
  for t in "${targets[@]}"; do run "$t" "$per" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || echo "fuzz_campaign: a target's run ended with status $?" >&2; done
else
  for t in "${targets[@]}"; do run "$t" "$jobs"; done
fi

# The summary.
python_summary() {
  python3 - "$out" "$seconds" "$jobs" "${targets[@]}" <<'PY'
import json, os, re, sys
out, seconds, jobs, targets = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def short_frame(line):
    """'#0 0x55.. in FUNCTION FILE:LINE:COL' -> 'FUNCTION FILE:LINE', names shortened."""
    line = re.sub(r"^\s*#\d+ 0x[0-9a-f]+ in ", "", line.strip())
    line = line.replace("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string")
    line = re.sub(r"\(BuildId: [0-9a-f]+\)", "", line)
    m = re.match(r"(.*) (\S+?:\d+)(:\d+)?$", line)
    func, where = (m.group(1), m.group(2)) if m else (line, "")
    if len(func) > 100:
        func = func[:100] + "..."
    return f"{func} {where}".strip()

rows = []
for t in targets:
    d = os.path.join(out, t)
    log = open(os.path.join(d, "log.txt"), errors="replace").read() if os.path.exists(os.path.join(d, "log.txt")) else ""
    last = [l for l in log.splitlines() if re.match(r"#\d+", l) and "cov:" in l]
    m = re.match(r"#(\d+)", last[-1]) if last else None
    execs = int(m.group(1)) if m else 0
    eps = re.search(r"exec/s:? (\d+)", last[-1]) if last else None
    fin = open(os.path.join(d, "final_coverage.txt"), errors="replace").read() if os.path.exists(os.path.join(d, "final_coverage.txt")) else ""
    inited = re.search(r"INITED cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)", fin)
    # When the corpus run stopped on an input (one that fails with a later build), the fork log's last figures.
    forked = re.search(r"cov: (\d+) ft: (\d+) corp: (\d+)", last[-1]) if last else None
    cov_from = "corpus" if inited else "fork log" if forked else None
    inited = inited or forked
    tm = open(os.path.join(d, "time.txt")).read().split() if os.path.exists(os.path.join(d, "time.txt")) else []
    wall_s, cpu_s = (round(float(tm[0])), round(float(tm[1]) + float(tm[2]))) if len(tm) == 3 else (None, None)
    saved = sorted(os.listdir(os.path.join(d, "crashes"))) if os.path.isdir(os.path.join(d, "crashes")) else []
    slow = [c for c in saved if c.startswith("slow-unit-")]
    crashes = [c for c in saved if not c.startswith("slow-unit-")]
    kinds = {}
    for c in crashes:
        k = c.split("-")[0]
        kinds[k] = kinds.get(k, 0) + 1
    # distinct failures: by the top three frames of the reproduction
    groups = {}
    text = open(os.path.join(d, "crashes.txt"), errors="replace").read() if os.path.exists(os.path.join(d, "crashes.txt")) else ""
    for block in text.split("== ")[1:]:
        name, _, rest = block.partition("\n")
        frames = [short_frame(l) for l in rest.splitlines() if re.match(r"\s*#[0-2] ", l)]
        summary = [l for l in rest.splitlines() if l.startswith("SUMMARY") or "FAILURE" in l or "ERROR: libFuzzer" in l]
        key = "\n  ".join(frames[:3]) or (summary[0] if summary else "no stack (did not reproduce?)")
        groups.setdefault(key, []).append(name.split(" ")[0])
    rows.append({"target": t, "executions": execs, "wall_s": wall_s, "cpu_s": cpu_s, "exec_per_s_last": int(eps.group(1)) if eps else None,
                 "cov_edges": int(inited.group(1)) if inited else None, "features": int(inited.group(2)) if inited else None,
                 "corpus_inputs": int(inited.group(3)) if inited else None, "coverage_from": cov_from,
                 "failing_inputs": len(crashes), "by_kind": kinds, "slow_inputs": len(slow),
                 "distinct_failures": [{"stack": k, "inputs": v} for k, v in groups.items()]})
json.dump({"seconds_per_target": seconds, "jobs": jobs, "targets": rows}, open(os.path.join(out, "summary.json"), "w"), indent=2)
with open(os.path.join(out, "summary.txt"), "w") as f:
    f.write(f"fuzz campaign: {seconds}s per target, {jobs} jobs\n")
    f.write(f"{'target':18} {'executions':>12} {'wall s':>7} {'cpu s':>7} {'cov':>7} {'ft':>8} {'corpus':>8} {'failing':>8} {'slow':>5}  kinds\n")
    for r in rows:
        mark = "*" if r["coverage_from"] == "fork log" else ""
        f.write(f"{r['target']:18} {r['executions']:>12} {str(r['wall_s']):>7} {str(r['cpu_s']):>7} {str(r['cov_edges']) + mark:>7} {str(r['features']):>8} "
                f"{str(r['corpus_inputs']):>8} {r['failing_inputs']:>8} {r['slow_inputs']:>5}  {r['by_kind'] or ''}\n")
    if any(r["slow_inputs"] for r in rows):
        f.write("slow: inputs that finished within the timeout but took over 10 s (libFuzzer's slow-unit-*; not failures)\n")
    if any(r["coverage_from"] == "fork log" for r in rows):
        f.write("* the corpus run stopped on a failing input: the fork log's last figures\n")
    for r in rows:
        for g in r["distinct_failures"]:
            f.write(f"\n{r['target']}: {len(g['inputs'])} failing input(s), e.g. {out}/{r['target']}/crashes/{g['inputs'][0]}\n  {g['stack']}\n")
print(open(os.path.join(out, "summary.txt")).read(), end="")
PY
}
if command -v python3 > /dev/null; then
  python_summary
else
  # Without python: the counts only.
  for t in "${targets[@]}"; do
    echo "$t: $(grep -E '^#[0-9]+' "$out/$t/log.txt" | tail -1) ; failing inputs: $(find "$out/$t/crashes" -type f ! -name 'slow-unit-*' | wc -l)"
  done | tee "$out/summary.txt"
fi
failing=0
for t in "${targets[@]}"; do
  n=$(find "$out/$t/crashes" -type f ! -name 'slow-unit-*' | wc -l)
  failing=$((failing + n))
done
[ "$failing" -eq 0 ]
