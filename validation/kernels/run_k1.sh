#!/usr/bin/env bash
# Builds the K1 b2b fused GEMM driver if needed and runs it: numerics against cuBLAS + a CPU float64 check,
# then timing against two cuBLAS GEMMs + epilogue kernels (and cublasLt with fused epilogues); one JSON.
#   validation/kernels/run_k1.sh OUT.json [driver args, e.g. --quick, --problem 81920x64x576x256, --beta1 0]
# Env: NVCC (default /usr/local/cuda/bin/nvcc), BUILD_DIR (default validation/kernels/build),
#      K1_TIMEOUT (seconds, default 300; the kernel has no spin waits, the timeout is a guard only).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT.json [driver args...]" >&2
  exit 1
fi
exec "$(dirname "${BASH_SOURCE[0]}")/run_driver.sh" k1_b2b "${K1_TIMEOUT:-300}" "$1" "${@:2}"
