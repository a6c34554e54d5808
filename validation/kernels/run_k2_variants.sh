#!/usr/bin/env bash
# Checks and times the K2 variants of issue 5 (pingpong, 2x1 clusters with B multicast, epilogue knobs
# ReuseSmemC / DelayTmaStore) against cuBLAS, in one process, each variant's launches interleaved with
# cuBLAS's (alpha 1 beta 0, and alpha 1 beta 0.5 with C loaded); one JSON.
#   validation/kernels/run_k2_variants.sh OUT.json [driver args; later ones win, e.g. --shapes 8192x8192x8192,
#       --variants pp:128x128:s6,coop:128x256:s4:c2, --quick]
# Env: NVCC (default /usr/local/cuda/bin/nvcc), BUILD_DIR (default validation/kernels/build),
#      K2_TIMEOUT (seconds, default 300; the kernel also traps by itself on a >4 s mbarrier wait).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT.json [driver args...]" >&2
  exit 1
fi
exec "$(dirname "${BASH_SOURCE[0]}")/run_driver.sh" k2_gemm "${K2_TIMEOUT:-300}" "$1" --variants issue5 \
  --shapes 8192x8192x8192,4096x4096x4096,2048x2048x2048 --bench-beta 0.5 "${@:2}"
