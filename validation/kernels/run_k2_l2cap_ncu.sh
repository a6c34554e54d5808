#!/usr/bin/env bash
# K2 by raster (groups of 8 rows, along N, along M) with 128x128 and 128x256 tiles at 4096^3 (64 MB of operands),
# 3072x5120x2048 and 4096x4096x2048 under Nsight Compute: HBM reads (what the L2 missed) and L2 read hits of each point's
# last profiled launch, then the same points timed without the profiler. validation/calibration/k2_l2cap_ncu.py sets the
# model beside them with one L2 and with two partitions (l2_partitions).
#   validation/kernels/run_k2_l2cap_ncu.sh OUTDIR [K2_GEMM]
set -u
out=${1:?OUTDIR}
k2=${2:-validation/kernels/build/k2_gemm}
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
  --format=csv > "$out/k2_l2cap_nvidia_smi.txt"
metrics=gpu__time_duration.sum,launch__grid_size,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
metrics+=,lts__t_sectors_op_read_lookup_hit.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg.per_second
specs="coop:128x128:s6 coop:128x128:s6:g1 coop:128x128:s6:g0 coop:128x256:s4 coop:128x256:s4:g1 coop:128x256:s4:g0"
{
  for shape in 4096x4096x4096 3072x5120x2048 4096x4096x2048; do for spec in $specs; do
    echo "== $shape $spec"
    ncu --clock-control none --cache-control none -k regex:k2_gemm_kernel --metrics "$metrics" --csv --print-units base \
      "$k2" --sweep --data random --reps 1 --warm 2 --group "$shape@$spec" --out /tmp/k2_l2cap_o.json 2>&1
  done; done
} > "$out/k2_l2cap_ncu.csv"
"$k2" --sweep --data random --reps 20 --warm 3 --group "4096x4096x4096@${specs// /,}" --group "3072x5120x2048@${specs// /,}" \
  --group "4096x4096x2048@${specs// /,}" --out "$out/k2_l2cap_timed.json" > "$out/k2_l2cap_timed.log" 2>&1
