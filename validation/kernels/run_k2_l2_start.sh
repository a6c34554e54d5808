#!/usr/bin/env bash
# The L2 at launch, measured on K2 (k2_gemm --sweep, random data, 20 timed launches per point).
#   validation/kernels/run_k2_l2_start.sh OUTDIR [compare|dirty|causes] [driver args...]
# compare (the default): the shapes whose tensors fit in the L2 and one that does not, timed with a warm L2
#   (back-to-back launches, as every other sweep), a cold one (--flush-l2: a kernel reading a 256 MB buffer before
#   every timed launch, outside its events) and warm again (the run-to-run spread): OUTDIR/k2_l2_{warm,cold,warm2}.json.
# dirty: shapes whose tensors are far larger than the L2 (HBM-bound tall ones, the short-K one with 128 MB of D, 8192^3),
#   warm (back to back: each launch starts with the dirty D blocks the previous one left), cold (--flush-l2: the read
#   writes them back outside the events: a clean, empty L2) and warm again: OUTDIR/k2_dirty_{warm,cold,warm2}.json.
# causes: what a cold launch pays for, on the shapes that fit: warm, after reading 256 MB and 1 GB (a cold L2; the
#   larger read also evicts more address translations), and after reading one 16-byte word of each 2 MB page of 16 GB
#   (address translations evicted, the L2 disturbed by 1 MB only): OUTDIR/k2_cold_{warm,l2_256mb,l2_1gb,tlb_16gb}.json.
# smpipe.k2_sweep.v1 files ("l2_flush", "flush_bytes", "flush_stride" say which); the variants per shape are those of
# run_k2_sweep.sh's groups. Env as run_driver.sh.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUTDIR [compare|dirty|causes] [driver args...]" >&2
  exit 1
fi
outdir=$1
shift
mode=compare
if [ $# -ge 1 ] && [ "${1#--}" = "$1" ]; then  # a mode (not a driver flag)
  mode=$1
  shift
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=k2_sweep_variants.sh
source "$here/k2_sweep_variants.sh"
mkdir -p "$outdir"
sweep() {  # sweep OUTFILE [driver args...]
  local out=$1
  shift
  "$here/run_driver.sh" k2_gemm "${K2_TIMEOUT:-300}" "$outdir/$out" --sweep --data random --reps 20 "$@"
}
fits=(--group "1024x1024x1024,512x1024x2048@$small" --group "2048x2048x2048@$sq_base")
case $mode in
  compare)
    groups=(--group "1024x1024x1024,512x1024x2048@$small" --group "4096x4096x512@$shortk" --group "2048x2048x2048@$sq_base"
            --group "3072x5120x2048@$odd_base")
    sweep k2_l2_warm.json "${groups[@]}" "$@"
    sweep k2_l2_cold.json --flush-l2 "${groups[@]}" "$@"
    sweep k2_l2_warm2.json "${groups[@]}" "$@"
    ;;
  causes)
    sweep k2_cold_warm.json "$@" "${fits[@]}"
    sweep k2_cold_l2_256mb.json --flush-l2 "$@" "${fits[@]}"
    sweep k2_cold_l2_1gb.json --flush-l2 --flush-mb 1024 "$@" "${fits[@]}"
    sweep k2_cold_tlb_16gb.json --flush-l2 --flush-mb 16384 --flush-stride 2097152 "$@" "${fits[@]}"
    ;;
  dirty)
    big=(--group "65536x128x1024@coop:128x128:s6,coop:128x128:s4,coop:128x64:s8,pp:128x128:s6"
         --group "32768x256x1024@coop:128x256:s4,coop:128x128:s4,coop:128x128:s6"
         --group "8192x8192x256@coop:128x256:s4,coop:128x128:s4" --group "8192x8192x8192@coop:128x256:s4,coop:128x128:s6")
    sweep k2_dirty_warm.json "${big[@]}" "$@"
    sweep k2_dirty_cold.json --flush-l2 "${big[@]}" "$@"
    sweep k2_dirty_warm2.json "${big[@]}" "$@"
    ;;
  *)
    echo "unknown mode $mode (compare, dirty or causes)" >&2
    exit 1
    ;;
esac
