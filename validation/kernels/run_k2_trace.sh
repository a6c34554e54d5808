#!/usr/bin/env bash
# Captures K2 hardware traces with the probe (traces/probe.cuh) and measures the probe's overhead, in one
# command; then decodes each raw capture into a trace file (traces/collect.py, docs/trace-format.md).
#   validation/kernels/run_k2_trace.sh OUTDIR [driver args, later ones win: --shapes, --trace-ctas, ...]
# Writes OUTDIR/k2_trace_<shape>[_beta<B>].json, OUTDIR/k2_probe_overhead.json, OUTDIR/raw/*.{bin,meta.json}.
# Defaults: shapes 2048^3 and 8192^3, variant 128x256x64 (4 stages), CTAs 0..3 recorded, the first 2 tiles
# of each (the 2048^3 CTAs have 1 tile: complete), beta 0 and 0.5 (the second exercises the C-load warp),
# overhead = median of 30 interleaved runs per configuration.
# Env: NVCC, BUILD_DIR, K2_TIMEOUT (seconds, default 400), PYTHON (default python3).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUTDIR [driver args...]" >&2
  exit 1
fi
outdir=$1
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-$here/build}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
py=${PYTHON:-python3}
bin=$build/k2_gemm
if [ ! -x "$bin" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc" -DK2_PROBE=ON
  cmake --build "$build" -j "$(nproc)"
fi
mkdir -p "$outdir/raw"
timeout --signal=KILL "${K2_TIMEOUT:-400}" "$bin" --skip-bench --variants 256x4 \
  --shapes 2048x2048x2048,8192x8192x8192 --reps 30 \
  --trace "$outdir/raw/k2_trace" --trace-ctas 4 --trace-first 0 --trace-tiles 2 --trace-beta 0,0.5 \
  --probe-overhead "$outdir/k2_probe_overhead.json" "$@"
for raw in "$outdir"/raw/*.bin; do
  name=$(basename "${raw%.bin}")
  "$py" "$root/traces/collect.py" "$raw" -o "$outdir/$name.json" --summary
done
