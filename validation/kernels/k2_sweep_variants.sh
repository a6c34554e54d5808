# The K2 variants of the accuracy sweep, per group of shapes (sourced by run_k2_sweep.sh and run_k2_l2_start.sh), and
# k2_sweep, the timed sweep the smaller run scripts share (run_k2_prologue.sh, run_k2_warm_start.sh, run_k2_pp_*.sh).

# k2_sweep OUT.json [driver args]: k2_gemm --sweep with random data, 20 timed launches per point, under a kill timeout.
# Env: K2_GEMM (default validation/kernels/build/k2_gemm), K2_TIMEOUT (seconds, default 400).
k2_sweep() {
  local out=$1
  shift
  timeout --signal=KILL "${K2_TIMEOUT:-400}" "${K2_GEMM:-validation/kernels/build/k2_gemm}" --out "$out" --sweep \
    --data random --reps 20 "$@"
}

# Square: every instance (sq_base), then 2x1 clusters and rasters g1 (along N) / g0 (along M) next to the default g8.
sq_base="coop:128x256:s4,coop:128x256:s3,coop:128x256:s2,coop:128x128:s6,coop:128x128:s4,coop:128x128:s3,coop:128x128:s2"
sq_base+=",pp:128x128:s6,pp:128x128:s4,pp:128x128:s2,coop:128x64:s8,coop:128x64:s4"
sq="$sq_base,coop:128x256:s4:c2,coop:128x128:s6:c2,coop:128x256:s4:g1,coop:128x256:s4:g0,coop:128x128:s6:g1,coop:128x128:s6:g0"
# Small / short-K: few tiles (< 1 wave) or few k-blocks.
small="coop:128x256:s4,coop:128x256:s2,coop:128x128:s6,coop:128x128:s4,coop:128x128:s2,pp:128x128:s6,pp:128x128:s2"
small+=",coop:128x64:s4"
shortk="coop:128x256:s4,coop:128x256:s2,coop:128x128:s4,coop:128x128:s2,pp:128x128:s6,pp:128x128:s2"
shortk+=",coop:128x256:s4:c2,coop:128x64:s4"
# Skinny (one or two tile rows / columns): rasters matter for 256x8192 (2 m rows), clusters for 8192x256.
skinny="coop:128x256:s4,coop:128x256:s2,coop:128x128:s6,coop:128x128:s4,coop:128x128:s2,pp:128x128:s6,pp:128x128:s4"
skinny+=",coop:128x64:s8,coop:128x128:s4:g1,coop:128x128:s4:c2"
# Tall-thin, HBM-bound (A streamed once; N = 128 or 256 = one or two tile columns).
tall="coop:128x128:s4,coop:128x128:s6,coop:128x128:s2,pp:128x128:s6,pp:128x128:s4,coop:128x64:s8,coop:128x64:s4"
tall+=",coop:128x128:s4:c2"
tall256="coop:128x256:s4,coop:128x256:s2,coop:128x128:s4,coop:128x64:s8"
# Odd (edge tiles along N for BN = 256: 5120 = 20 x 256, 3072 = 24 x 128): every instance (odd_base), then a 2x1
# cluster and rasters.
odd_base="coop:128x256:s4,coop:128x256:s3,coop:128x256:s2,coop:128x128:s6,coop:128x128:s4,coop:128x128:s2"
odd_base+=",pp:128x128:s6,pp:128x128:s4,pp:128x128:s2"
odd="$odd_base,coop:128x256:s4:c2,coop:128x256:s4:g1,coop:128x256:s4:g0"
