#!/usr/bin/env bash
# Builds, checks and times every kernel of validation/kernels on the GPU, in one command; writes the result
# files that validation/results/<gpu>/ keeps:
#   validation/kernels/run_all.sh OUTDIR
#     OUTDIR/k1_b2b.json                 K1 (sm80 b2b fused GEMM): numerics vs cuBLAS + CPU, time vs two cuBLAS GEMMs
#     OUTDIR/k2_gemm.json                K2 cooperative 128x256x64: numerics and speed vs cuBLAS, several shapes
#     OUTDIR/k2_variants.json            K2 pingpong / 2x1 cluster / ReuseSmemC / DelayTmaStore vs cuBLAS
#     OUTDIR/k2_trace_*.json             K2 hardware traces (smpipe-hwtrace v1) and k2_probe_overhead.json
#     OUTDIR/k3.txt                      K3 (sm100a NVFP4): runs only on an sm_100 GPU; elsewhere it says so
#     OUTDIR/nvidia_smi.txt              the GPU, driver and clocks before and after
# Every driver poisons its output before the run and exits non-zero when the numerics check fails; this
# script stops at the first failure. Build first on a machine with nvcc (the GPU machine needs none):
#   cmake -S validation/kernels -B validation/kernels/build -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc
#   cmake --build validation/kernels/build -j
# Env: BUILD_DIR (default validation/kernels/build), SKIP (space-separated: k1 k2 variants traces k3).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 1
fi
outdir=$(mkdir -p "$1" && cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BUILD_DIR=${BUILD_DIR:-$here/build}
skip=" ${SKIP:-} "
want() { [[ "$skip" != *" $1 "* ]]; }
smi() { nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active --format=csv 2>&1 || true; }

{ echo "# before ($(date -u +%FT%TZ))"; smi; } > "$outdir/nvidia_smi.txt"
if want k1; then
  echo "== K1: sm80 back-to-back GEMM"
  "$here/run_k1.sh" "$outdir/k1_b2b.json"
fi
if want k2; then
  echo "== K2: cooperative GEMM vs cuBLAS"
  "$here/run_k2.sh" "$outdir/k2_gemm.json"
fi
if want variants; then
  echo "== K2 variants"
  "$here/run_k2_variants.sh" "$outdir/k2_variants.json"
fi
if want traces; then
  echo "== K2 traces and probe overhead"
  "$here/run_k2_trace.sh" "$outdir"
fi
if want k3; then
  echo "== K3: sm100a NVFP4 GEMM"
  set +e
  "$BUILD_DIR/k3_gemm" > "$outdir/k3.txt" 2>&1
  rc=$?
  set -e
  cat "$outdir/k3.txt"
  # 77: no sm_100 device (the only acceptable failure on a Hopper machine)
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    echo "K3 failed (exit $rc)" >&2
    exit $rc
  fi
fi
{ echo "# after ($(date -u +%FT%TZ))"; smi; } >> "$outdir/nvidia_smi.txt"
echo "results in $outdir"
