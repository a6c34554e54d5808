#!/usr/bin/env bash
# K2 built at three commits and timed in turns, two rounds, on one GPU (validation/results/h100/k2_clock_checks).
# Build each K2 from a worktree of its commit, e.g.
#   git worktree add /tmp/k2base a7d6f14^ && cmake -S /tmp/k2base -B /tmp/k2base/b -G Ninja -DCMAKE_BUILD_TYPE=Release \
#     && ninja -C /tmp/k2base/b validation/kernels/k2_gemm
# (likewise 8fe90d4 -> old, 0232ebf -> new), then: run_clock_checks.sh BASE_K2 OLD_K2 NEW_K2 OUTDIR
set -euo pipefail
declare -A bin=([base]=$1 [old]=$2 [new]=$3)
out=$4
G1="512x1024x2048,512x1024x4096,512x1024x8192@coop:128x64:s4,coop:128x64:s8,coop:128x128:s4,coop:128x128:s6,coop:128x256:s4,pp:128x128:s6"
G2="1024x1024x1024,4096x4096x512,1024x2048x4096@coop:128x64:s4,coop:128x128:s4,coop:128x256:s4"
q=name,driver_version,pstate,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu
nvidia-smi --query-gpu=$q --format=csv,noheader > "$out/ab_nvidia_smi.txt"
for round in 1 2; do
  for v in base old new; do
    timeout --signal=KILL 120 "${bin[$v]}" --out "$out/ab_${v}_$round.json" --sweep --data random --reps 20 \
      --group "$G1" --group "$G2" > "$out/ab_${v}_$round.log" 2>&1
    echo "$v $round rc=$? $(date -u +%T)" >> "$out/ab.log"
  done
done
nvidia-smi --query-gpu=$q --format=csv,noheader >> "$out/ab_nvidia_smi.txt"
