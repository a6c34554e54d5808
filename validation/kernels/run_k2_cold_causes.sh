#!/usr/bin/env bash
# What a cold launch pays for: K2 on the shapes whose tensors fit in the L2, timed warm, after reading 256 MB and
# 1 GB (a cold L2; the larger read also evicts more address translations), and after reading one 16-byte word of each
# 2 MB page of 16 GB (address translations evicted, the L2 disturbed by 1 MB only).
#   validation/kernels/run_k2_cold_causes.sh OUTDIR [driver args...]
# Writes OUTDIR/k2_cold_{warm,l2_256mb,l2_1gb,tlb_16gb}.json (smpipe.k2_sweep.v1; flush_bytes and flush_stride say
# which). Env as run_driver.sh.
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
groups=(--group "1024x1024x1024,512x1024x2048@$small" --group "2048x2048x2048@$sq_base")
mkdir -p "$outdir"
run() {
  local name=$1
  shift
  "$here/run_driver.sh" k2_gemm "${K2_TIMEOUT:-300}" "$outdir/k2_cold_$name.json" --sweep --data random --reps 20 "$@" \
    "${groups[@]}"
}
run warm "$@"
run l2_256mb --flush-l2 "$@"
run l2_1gb --flush-l2 --flush-mb 1024 "$@"
run tlb_16gb --flush-l2 --flush-mb 16384 --flush-stride 2097152 "$@"
