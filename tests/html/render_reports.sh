#!/usr/bin/env bash
# Makes HTML reports of runs that end every way (finished, deadlock, hazard, watchdog, a Blackwell model) and
# of a sweep, and loads each in headless Chromium (check_html.py): each must render without a script error.
# Usage: render_reports.sh SMPIPE_BINARY
set -uo pipefail
smpipe=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
report() {  # NAME EXPECTED_EXIT EXPECTED_TEXT ARGS...
  local name=$1 want=$2 text=$3
  shift 3
  "$smpipe" "$@" --html "$dir/$name.html" > "$dir/$name.out" 2>&1
  local code=$?
  if [ "$code" -ne "$want" ]; then
    echo "FAIL: smpipe $* exited $code, not $want"; cat "$dir/$name.out"; fail=1; return
  fi
  python3 "$here/check_html.py" "$dir/$name.html" --expect-text "$text" || fail=1
}
report finished 0 "tensor pipe" run sm90/gemm_tma_ws_cooperative -D M=1024 -D N=1024 -D K=1024
report deadlock 2 "deadlock" run examples/deadlock_producer_start_phase
report hazard 3 "hazard" run examples/hazard_wgmma_before_tma
report watchdog 2 "watchdog" run examples/watchdog_livelock --max-cycles 20000
report blackwell 0 "TMEM" run sm100/gemm_blockscaled_nvfp4 -D M=512 -D N=512 -D K=512
report replay 0 "replay of" replay "$here/../../validation/results/h100/k2_trace_2048x2048x2048.json"
report sweep 0 "TILE_N" sweep sm90/gemm_tma_ws_cooperative -D M=1024,2048 -D N=1024 -D K=512 -D TILE_N=128,256 --group M
exit $fail
