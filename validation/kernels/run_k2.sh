#!/usr/bin/env bash
# Builds the K2 GEMM driver if needed and runs it: numerics check against cuBLAS, then timing; one JSON.
#   validation/kernels/run_k2.sh OUT.json [driver args, e.g. --quick, --shapes 8192x8192x8192, --variants 256x4]
# Env: NVCC (default /usr/local/cuda/bin/nvcc), BUILD_DIR (default validation/kernels/build),
#      K2_TIMEOUT (seconds, default 300; the kernel also traps by itself on a >4 s mbarrier wait).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT.json [driver args...]" >&2
  exit 1
fi
exec "$(dirname "${BASH_SOURCE[0]}")/run_driver.sh" k2_gemm "${K2_TIMEOUT:-300}" "$1" "${@:2}"
