#!/usr/bin/env bash
# K2's D slot by a running counter (`ctr`, Params::slot_counter) against its default modulo per subtile and against
# ReuseSmemC, at short K with beta = 0: how much of the reuse gap (validation/results/h200/k2_pp_short_k) the
# per-subtile divisions are.
# The `ctr` knob is not in K2: build k2_gemm with slot_counter.patch (beside this script) applied to
# the repository at commit 33ca408 (`git apply validation/results/h200/k2_pp_short_k/slot_counter.patch`), then
#   validation/results/h200/k2_pp_short_k/run_k2_slot_counter.sh OUT.json [driver args; later ones win]
# Env: K2_GEMM (default validation/kernels/build/k2_gemm), K2_TIMEOUT (seconds, default 400).
set -euo pipefail
out=${1:?OUT.json}
shift
v="pp:128x128:s4,pp:128x128:s4:ctr,pp:128x128:s4:reuse,pp:128x128:s4:sd1:ctr,pp:128x128:s4:sd4:sc2:ctr"
v+=",coop:128x128:s4,coop:128x128:s4:ctr,coop:128x128:s4:reuse,coop:128x128:s4:sd1:ctr,coop:128x256:s4,coop:128x256:s4:ctr"
timeout --signal=KILL "${K2_TIMEOUT:-400}" "${K2_GEMM:-validation/kernels/build/k2_gemm}" --out "$out" --sweep \
  --data random --reps 20 \
  --group "8192x8192x256,4096x4096x512,2048x2048x2048@$v" \
  "$@"
