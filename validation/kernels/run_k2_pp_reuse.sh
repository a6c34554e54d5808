#!/usr/bin/env bash
# Which of the epilogue slots' addresses, their reuse distance and the stores in flight make K2's ReuseSmemC
# fast with beta = 0 (no C loaded): every StagesC/StagesD split with and without reuse, pingpong and cooperative.
#   validation/kernels/run_k2_pp_reuse.sh OUT.json [driver args; later ones win]
# Env: K2_GEMM (default validation/kernels/build/k2_gemm), K2_TIMEOUT (seconds, default 400).
set -euo pipefail
out=${1:?OUT.json}
shift
source "$(dirname "${BASH_SOURCE[0]}")/k2_sweep_variants.sh"
v="pp:128x128:s4,pp:128x128:s4:reuse,pp:128x128:s4:sc1:sd2,pp:128x128:s4:sc2:sd2,pp:128x128:s4:sc3:sd2"
v+=",pp:128x128:s4:sc1:sd4,pp:128x128:s4:sc1:sd1,pp:128x128:s4:reuse:sd1,pp:128x128:s4:reuse:sd4"
v+=",pp:128x128:s4:sc2:reuse:sd2,pp:128x128:s4:sc4:sd2:reuse:delay,coop:128x128:s4,coop:128x128:s4:reuse,coop:128x128:s4:sc1:sd2,coop:128x128:s4:reuse:sd1"
k2_sweep "$out" \
  --group "8192x8192x256,4096x4096x512@$v" \
  "$@"
