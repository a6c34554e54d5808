#!/usr/bin/env bash
# Where a pingpong tile's time goes when its epilogue is longer than its mainloop (short K): K2 pingpong 128x128x64
# with the epilogue knobs that change what a subtile and the epilogue turn wait for (StagesD, ReuseSmemC,
# DelayTmaStore, the order barrier's depth) and with K from 64 to 1024 (1 to 16 k-blocks), beside cooperative
# controls. The models run the same points: a knob whose effect on the GPU differs from its effect in the model
# points at the mechanism the pingpong model lacks (its short-K points are ~11 % fast).
#   validation/kernels/run_k2_pp_short_k.sh OUT.json [driver args; later ones win]
# Env: K2_GEMM (default validation/kernels/build/k2_gemm), K2_TIMEOUT (seconds, default 400).
set -euo pipefail
out=${1:?OUT.json}
shift
source "$(dirname "${BASH_SOURCE[0]}")/k2_sweep_variants.sh"
knobs="pp:128x128:s4,pp:128x128:s4:sd1,pp:128x128:s4:sc2:sd4,pp:128x128:s4:reuse,pp:128x128:s4:delay"
knobs+=",pp:128x128:s4:od1,pp:128x128:s6,coop:128x128:s4,coop:128x128:s4:sd1,coop:128x256:s4"
k2_sweep "$out" \
  --group "8192x8192x256,4096x4096x512@$knobs" \
  --group "8192x8192x64,8192x8192x128,8192x8192x1024@pp:128x128:s4,coop:128x128:s4" \
  "$@"
