#!/usr/bin/env bash
# K2 hardware traces (the capture probe, docs/trace-format.md) of the skinny shapes' 128x128x64 cooperative points
# with 2, 4 and 6 stages (beta 0, CTAs 0-3, all their tiles), the probe's overhead measured beside them, packed into
# one archive (the device tool returns at most 8 files), then decoded (traces/collect.py) where the archive is opened.
#   validation/kernels/run_k2_skinny_trace.sh OUTDIR [driver args, later ones win: --trace-kb-sample 16 --trace-ctas 32]
# (on the GPU: writes OUTDIR/k2_skinny_traces.tar.gz; env K2_GEMM: the driver, default validation/kernels/build/k2_gemm)
set -u
out=${1:?OUTDIR}
shift
k2=${K2_GEMM:-validation/kernels/build/k2_gemm}
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
  --format=csv > "$work/nvidia_smi.txt"
timeout --signal=KILL 400 "$k2" --skip-bench --variants coop:128x128:s2,coop:128x128:s4,128x6 \
  --shapes 256x8192x8192,8192x256x8192 --reps 20 --trace "$work/k2_trace" --trace-ctas 4 --trace-first 0 \
  --trace-tiles 0 --trace-beta 0 --probe-overhead "$work/k2_probe_overhead.json" "$@" > "$work/k2_skinny_traces.log" 2>&1
echo "rc=$?" >> "$work/k2_skinny_traces.log"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader >> "$work/nvidia_smi.txt"
gzip "$work"/*.bin
tar -C "$work" -czf "$out/k2_skinny_traces.tar.gz" .
tail -30 "$work/k2_skinny_traces.log"
