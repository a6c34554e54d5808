#!/usr/bin/env bash
# The start of a CTA that is not its SM's first: K2 with a grid of one CTA per tile (the `np` knob: not persistent,
# later CTAs start on SMs that ran earlier ones of the same launch) beside the persistent grid, on shapes of several
# waves. Every row carries last_cta (the grid's last CTA: its entry to its prologue's barrier, first TMA load and
# end, and its entry after CTA 0's, Params::clocks [12..18]) beside cta0_cycles (CTA 0, the SM's first: cold).
#   validation/kernels/run_k2_warm_start.sh OUT.json [driver args; later ones win]
# Env: K2_GEMM (default validation/kernels/build/k2_gemm), K2_TIMEOUT (seconds, default 400).
set -euo pipefail
out=${1:?OUT.json}
shift
source "$(dirname "${BASH_SOURCE[0]}")/k2_sweep_variants.sh"
np="coop:128x128:s4:np,coop:128x128:s4,coop:128x256:s4:np,coop:128x256:s4,coop:128x64:s4:np,pp:128x128:s4:np"
np+=",coop:128x128:s2:np"
k2_sweep "$out" \
  --group "4096x4096x512,8192x8192x256,2048x2048x2048@$np" \
  --group "1024x1024x1024@coop:128x128:s4:np,coop:128x64:s4:np" \
  --group "4096x4096x4096@coop:128x128:s4:np,coop:128x128:s4" \
  "$@"
