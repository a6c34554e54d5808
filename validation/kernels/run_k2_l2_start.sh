#!/usr/bin/env bash
# The L2 at launch, measured: K2 swept over the shapes whose tensors fit in the L2 (and one that does not), timed
# with a warm L2 (back-to-back launches, as every other sweep) and with a cold one (--flush-l2: a kernel reading a
# 256 MB buffer before every timed launch, outside its events), then warm again (the run-to-run spread).
#   validation/kernels/run_k2_l2_start.sh OUTDIR [driver args...]
# Writes OUTDIR/k2_l2_warm.json, k2_l2_cold.json, k2_l2_warm2.json (smpipe.k2_sweep.v1; "l2_flush" says which).
# Variants per shape are those of run_k2_sweep.sh's groups for the same shapes. Env as run_driver.sh.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUTDIR [driver args...]" >&2
  exit 1
fi
outdir=$1
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=k2_sweep_variants.sh
source "$here/k2_sweep_variants.sh"
groups=(--group "1024x1024x1024,512x1024x2048@$small" --group "4096x4096x512@$shortk" --group "2048x2048x2048@$sq_base"
        --group "3072x5120x2048@$odd_base")
mkdir -p "$outdir"
for run in warm cold warm2; do
  flush=()
  [ "$run" = cold ] && flush=(--flush-l2)
  "$here/run_driver.sh" k2_gemm "${K2_TIMEOUT:-300}" "$outdir/k2_l2_$run.json" --sweep --data random --reps 20 \
    "${flush[@]}" "${groups[@]}" "$@"
done
