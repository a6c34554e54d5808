#!/usr/bin/env bash
# K2's first steps without the capture probe: a sweep (k2_gemm --sweep, schema smpipe.k2_sweep.v1) whose rows carry
# cta0_cycles, CTA 0's clock64 from its entry to the end of the prologue's barrier, its first TMA load, the first
# full wait's return, its first tile's epilogue and its end (Params::clocks, k2_gemm.cuh), over single-wave and
# persistent shapes, 1x1 and 2x1 clusters, cooperative and pingpong.
#   validation/kernels/run_k2_prologue.sh OUT.json [driver args; later ones win]
# Env: K2_GEMM (default validation/kernels/build/k2_gemm), K2_TIMEOUT (seconds, default 400).
set -euo pipefail
out=${1:?OUT.json}
shift
source "$(dirname "${BASH_SOURCE[0]}")/k2_sweep_variants.sh"
sq2048="coop:128x256:s4,coop:128x128:s4,coop:128x128:s6,pp:128x128:s4,coop:128x64:s4,coop:128x256:s4:c2"
sq2048+=",coop:128x128:s6:c2"
k2_sweep "$out" \
  --group "1024x1024x1024,512x1024x2048@$small" \
  --group "2048x2048x2048@$sq2048" \
  --group "4096x4096x512@$shortk" \
  --group "256x8192x8192@coop:128x128:s4,coop:128x256:s4" \
  --group "8192x8192x8192@coop:128x256:s4,coop:128x128:s4" \
  "$@"
