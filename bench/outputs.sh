#!/usr/bin/env bash
# Engine changes must leave every output byte-identical. This runs a fixed set of commands (every built-in
# model, the GEMMs at mid sizes with the hazard checker on and off, clusters, traces, op logs, check with
# seeds, a sweep) with one smpipe binary and writes each command's stdout, stderr, exit status and files to
# DIR. Run it with the binary before and after a change, then `diff -r` the two folders.
#   bench/outputs.sh BUILD/smpipe DIR
set -u
bin=$(realpath "$1")
out=$2
mkdir -p "$out"
cd "$(dirname "$0")/.." || exit 1
n=0
run() {  # run NAME ARGS...: smpipe ARGS, its outputs under DIR/NAME.*
  local name=$1
  shift
  (cd "$out" && "$bin" "$@" >"$name.out" 2>"$name.err"; echo $? >"$name.rc")
  n=$((n + 1))
}
while read -r model; do
  run "model_${model//\//_}" run "$model" --json --clock boost
done < <("$bin" models 2>/dev/null | awk 'NR > 1 && $1 ~ /\// && $2 != "(does" {print $1}' | grep -v '^sm[0-9]*/')
for m in sm90/gemm_tma_ws sm90/gemm_tma_ws_cooperative sm90/gemm_tma_ws_pingpong; do
  s=${m#sm90/}
  run "${s}_2048" run "$m" -D M=2048 -D N=2048 -D K=2048 --json
  run "${s}_nh" run "$m" -D M=3072 -D N=2048 -D K=1024 --clock boost --no-hazards --json
  run "${s}_c21" run "$m" -D M=2048 -D N=2048 -D K=1024 -D CLUSTER_M=2 --clock boost --json
  run "${s}_c12_256" run "$m" -D M=2048 -D N=4096 -D K=512 -D CLUSTER_N=2 -D TILE_N=256 -D STAGES=3 --clock boost --gpu h200
  run "${s}_skinny" run "$m" -D M=256 -D N=8192 -D K=2048 -D TILE_N=64 --clock boost --json
  run "${s}_trace" run "$m" -D M=1024 -D N=1024 -D K=1024 --clock boost --trace "${s}.trace.json" --html "${s}.html" --jitter 10 --seed 3
done
run nvfp4_1sm run sm100/gemm_blockscaled_nvfp4 -D M=1024 -D N=1024 -D K=2048 --json
run nvfp4_2sm run sm100/gemm_blockscaled_nvfp4 -D M=2048 -D N=1024 -D K=1024 -D CTA_GROUP=2 --clock boost --json
run sm80_multistage run sm80/gemm_multistage -D M=1024 -D N=1024 -D K=1024 --json
run sm80_b2b run sm80/b2b_gemm_smem_accumulator -D M=8192 --json
run check_coop check sm90/gemm_tma_ws_cooperative -D M=1024 -D N=1024 -D K=512 --seeds 6 --jitter 20 --jobs 1
run check_mainloop check examples/mainloop --seeds 8 --jitter 30 --jobs 2
run sweep_coop sweep sm90/gemm_tma_ws_cooperative -D M=1024,2048 -D N=2048 -D K=1024 -D STAGES=3..5 --clock boost --jobs 2 --csv sweep.csv
echo "$n commands, outputs in $out"
