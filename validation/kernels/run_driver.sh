#!/usr/bin/env bash
# Builds one driver of validation/kernels if it is missing, then runs it with --out OUT.json under a kill
# timeout (run_k1.sh, run_k2.sh and run_k2_variants.sh are this with their driver and defaults).
#   validation/kernels/run_driver.sh TARGET TIMEOUT_S OUT.json [driver args...]
# Env: NVCC (default /usr/local/cuda/bin/nvcc), BUILD_DIR (default validation/kernels/build).
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 TARGET TIMEOUT_S OUT.json [driver args...]" >&2
  exit 1
fi
target=$1 limit=$2 out=$3
shift 3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${BUILD_DIR:-$here/build}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
bin=$build/$target
if [ ! -x "$bin" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc"
  cmake --build "$build" -j "$(nproc)" --target "$target"
fi
mkdir -p "$(dirname "$out")"
timeout --signal=KILL "$limit" "$bin" --out "$out" "$@"
