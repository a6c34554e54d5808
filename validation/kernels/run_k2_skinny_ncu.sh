#!/usr/bin/env bash
# K2 on the skinny shapes (256x8192x8192, 8192x256x8192) and one tall HBM-bound shape (65536x128x1024) under Nsight
# Compute: each point's L2 requests per box byte, L2 lookups that hit, HBM reads and writes, and how busy the L2 and
# HBM were (% of their peak over the kernel), then the same points timed without the profiler.
#   validation/kernels/run_k2_skinny_ncu.sh OUTDIR [K2_GEMM]
set -u
out=${1:?OUTDIR}
k2=${2:-validation/kernels/build/k2_gemm}
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
  --format=csv > "$out/k2_skinny_nvidia_smi.txt"
metrics=gpu__time_duration.sum,launch__grid_size,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
metrics+=,lts__t_sectors_op_read_lookup_hit.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg.per_second
metrics+=,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_write.sum
skinny="coop:128x128:s2 coop:128x128:s4 coop:128x128:s6 coop:128x128:s4:c2 coop:128x128:s4:g1 coop:128x64:s8"
skinny+=" coop:128x256:s4 pp:128x128:s6 pp:128x128:s4"
tall="coop:128x128:s2 coop:128x128:s4 coop:128x128:s6 coop:128x128:s4:c2"
profile() {  # SHAPE SPEC: the warm-up, check and timed launches, profiled
  echo "== $1 $2"
  ncu --clock-control none --cache-control none -k regex:k2_gemm_kernel --metrics "$metrics" --csv --print-units base \
    "$k2" --sweep --data random --reps 1 --warm 1 --group "$1@$2" --out /tmp/k2_skinny_o.json 2>&1
}
{
  for shape in 256x8192x8192 8192x256x8192; do for spec in $skinny; do profile $shape $spec; done; done
  for spec in $tall; do profile 65536x128x1024 $spec; done
} > "$out/k2_skinny_ncu.csv"
# The same points without the profiler (medians of 20 launches after 3).
"$k2" --sweep --data random --reps 20 --warm 3 --group "256x8192x8192@${skinny// /,}" --group "8192x256x8192@${skinny// /,}" \
  --group "65536x128x1024@${tall// /,}" --out "$out/k2_skinny_timed.json" > "$out/k2_skinny_timed.log" 2>&1
