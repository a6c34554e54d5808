#!/usr/bin/env bash
# The TMA rings of the `tma` and `hierarchy` groups (--quick) under Nsight Compute, with how busy the L2 and HBM were
# (lts__throughput, lts__t_sectors and dram__throughput in % of their peak over each launch) beside the read sectors,
# lookup hits and DRAM bytes; the list of the GH100 metrics it could have asked for.
#   validation/microbench/run_l2_ncu.sh OUTDIR [SMPIPE_MICROBENCH]
set -u
out=${1:?OUTDIR}
mb=${2:-validation/microbench/build/smpipe_microbench}
ncu --query-metrics --chip gh100 2>&1 | grep -E "^(lts__t_sectors_srcunit|lts__throughput|lts__t_sectors |lts__d_|lts__t_requests|lts__xbar|l1tex__m_xbar|gpc__|ltc__)" \
  > "$out/gh100_metrics.txt"
metrics=gpu__time_duration.sum,launch__grid_size,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
metrics+=,lts__t_sectors_op_read_lookup_hit.sum,dram__bytes_read.sum,sm__cycles_elapsed.avg.per_second
metrics+=,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
ncu --clock-control none --cache-control none -k regex:"k_ring|k_tma_pipe" --metrics "$metrics" --csv --print-units base \
  "$mb" --quick --only tma --out "$out/l2_tma_ncu_run.json" > "$out/l2_tma_ncu.csv" 2>&1
ncu --clock-control none --cache-control none -k regex:k_ring --metrics "$metrics" --csv --print-units base \
  "$mb" --quick --only hierarchy --out "$out/l2_hier_ncu_run.json" > "$out/l2_hier_ncu.csv" 2>&1
