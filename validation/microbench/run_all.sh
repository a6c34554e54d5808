#!/usr/bin/env bash
# Builds the Hopper microbenchmark driver if needed and runs every benchmark, writing one JSON file.
#   validation/microbench/run_all.sh OUT.json [extra driver args, e.g. --quick or --only mbarrier,tma]
# Env: NVCC (default /usr/local/cuda/bin/nvcc), BUILD_DIR (default validation/microbench/build),
#      MB_TIMEOUT (seconds, default 480: a hang is killed; the JSON written so far is kept).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT.json [driver args...]" >&2
  exit 1
fi
out=$1
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${BUILD_DIR:-$here/build}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
bin=$build/smpipe_microbench
if [ ! -x "$bin" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc"
  cmake --build "$build" -j "$(nproc)"
fi
mkdir -p "$(dirname "$out")"
timeout --signal=KILL "${MB_TIMEOUT:-480}" "$bin" --out "$out" "$@"
