#!/usr/bin/env bash
# Ground truth for the simulator's accuracy study: K2 alone, timed on a fixed list of (shape, variant) points,
# each with the SM clock it ran at (k2_gemm --sweep; JSON schema smpipe.k2_sweep.v1, README "Sweep").
#   validation/kernels/run_k2_sweep.sh OUT.json [data] [driver args; later ones win, e.g. --reps 20]
# data: both (default: each shape's variants under random inputs, then under constant ones; one JSON, the `data`
# field of each row tells them apart) | random | const (A = B = 1/64, C zero: the SM clock under the power cap
# depends on the data).
# Points: 130 per data mode (7 groups below, 12 shapes), 260 with both; numerics checked once per shape (the
# group's first variant) and once for every variant (on its first shape).  Estimated GPU time, conservative
# (K2 at 300 TFLOP/s or 2 TB/s, whichever is slower, 13 launches per point, + 25 ms of host work per point,
# + 1.5 s per shape for allocation, fills, cuBLAS reference, checks and nvidia-smi, + 5 s start): ~30 s per data
# mode, ~50 s for both (the smoke test ran 80 points, 36 of them at 8192^3, + 51 full checks in 6 s).
# Env: NVCC (default /usr/local/cuda/bin/nvcc), BUILD_DIR (default validation/kernels/build),
#      K2_TIMEOUT (seconds, default 420; the JSON is rewritten after every point, so a kill keeps what ran).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT.json [random|const|both] [driver args...]" >&2
  exit 1
fi
out=$1
shift
data=both
if [ $# -ge 1 ] && [ "${1#--}" = "$1" ]; then  # a data mode (not a driver flag)
  data=$1
  shift
fi

# shellcheck source=k2_sweep_variants.sh
source "$(dirname "${BASH_SOURCE[0]}")/k2_sweep_variants.sh"

exec "$(dirname "${BASH_SOURCE[0]}")/run_driver.sh" k2_gemm "${K2_TIMEOUT:-420}" "$out" --sweep --data "$data" \
  --group "2048x2048x2048,4096x4096x4096,8192x8192x8192@$sq" \
  --group "1024x1024x1024,512x1024x2048@$small" \
  --group "8192x8192x256,4096x4096x512@$shortk" \
  --group "8192x256x8192,256x8192x8192@$skinny" \
  --group "65536x128x1024@$tall" \
  --group "32768x256x1024@$tall256" \
  --group "3072x5120x2048@$odd" \
  "$@"
