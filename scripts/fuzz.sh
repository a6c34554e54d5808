#!/usr/bin/env bash
# Runs one fuzz target (docs/fuzzing.md): builds it if needed (the `fuzz` preset: clang++, libFuzzer, ASan,
# UBSan, into build-fuzz/), gathers its seed corpus into build-fuzz/corpus/TARGET (scripts/fuzz_seeds.sh; the
# inputs libFuzzer finds are kept there too), and fuzzes for SECONDS with JOBS processes.
#   scripts/fuzz.sh TARGET [SECONDS] [JOBS]      TARGET: fuzz_pipe fuzz_pipe_tokens fuzz_hwtrace fuzz_machine
# Crash, timeout and out-of-memory inputs are written to build-fuzz/crashes/TARGET/; the exit status is 1
# when this run wrote one. Environment: FUZZ_SEED (libFuzzer -seed; default: random), FUZZ_ARGS (more
# libFuzzer flags), FUZZ_BUILD_JOBS (compile jobs; default: the number of cores).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${1:?usage: scripts/fuzz.sh TARGET [SECONDS] [JOBS]}"
seconds="${2:-60}"
jobs="${3:-1}"
case "$target" in
  fuzz_pipe | fuzz_pipe_tokens | fuzz_hwtrace | fuzz_machine) ;;
  *) echo "unknown target '$target' (fuzz_pipe, fuzz_pipe_tokens, fuzz_hwtrace, fuzz_machine)" >&2; exit 2 ;;
esac

build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  cmake --preset fuzz > /dev/null
fi
cmake --build --preset fuzz --target "$target" smpipe_fuzz_regress -j "${FUZZ_BUILD_JOBS:-$(nproc)}" > "$build/last_build.log" 2>&1 ||
  { cat "$build/last_build.log"; echo "fuzz.sh: building $target failed" >&2; exit 2; }

corpus="$build/corpus/$target"
crashes="$build/crashes/$target"
logs="$build/logs/$target"
mkdir -p "$corpus" "$crashes" "$logs"
scripts/fuzz_seeds.sh "$target" "$corpus" "$root/$build/fuzz/smpipe_fuzz_regress"

flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$root/$crashes/" -print_final_stats=1)
case "$target" in
  fuzz_pipe) flags+=(-dict="$root/fuzz/pipe.dict" -max_len=65536) ;;
  fuzz_pipe_tokens) flags+=(-max_len=8192) ;;
  *) flags+=(-max_len=65536) ;;
esac
[ -n "${FUZZ_SEED:-}" ] && flags+=(-seed="$FUZZ_SEED")
if [ "$jobs" -gt 1 ]; then
  flags+=(-jobs="$jobs" -workers="$jobs")
fi
# shellcheck disable=SC2206
extra=(${FUZZ_ARGS:-})

# UB aborts (the fuzz build has -fno-sanitize-recover=undefined); print where.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
stamp="$logs/.start"
touch "$stamp"
echo "fuzz.sh: $target for ${seconds}s, $jobs job(s); corpus $corpus, crashes $crashes"
status=0
# -jobs writes one log per job (fuzz-N.log) into the working directory.
(cd "$logs" && SMPIPE_MACHINES="$root/models/machines" SMPIPE_KERNELS="$root/models/kernels" \
   "$root/$build/fuzz/$target" "${flags[@]}" "${extra[@]}" "$root/$corpus") || status=$?
if [ "$jobs" -gt 1 ]; then tail -n 3 "$logs"/fuzz-*.log 2>/dev/null || true; fi

mapfile -t found < <(find "$crashes" -type f -newer "$stamp" \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | sort)
if ((${#found[@]})); then
  echo "fuzz.sh: $target found ${#found[@]} failing input(s):"
  printf '  %s\n' "${found[@]}"
  echo "reproduce: $build/fuzz/$target FILE   (docs/fuzzing.md: add it to tests/fuzz_regressions/$target/)"
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: $target exited with status $status" >&2
  exit "$status"
fi
echo "fuzz.sh: $target: no failure in ${seconds}s"
