#!/usr/bin/env bash
# Installs every Debian package smpipe needs to build and test. Idempotent: packages already present are
# left alone, and nothing is asked interactively.
set -euo pipefail

packages=(
  cmake ninja-build g++ make            # build
  libboost-dev libboost-graph-dev       # Boost.Graph: wait-for graph cycles in deadlock reports
  nlohmann-json3-dev                    # JSON: machine files, --json reports, Chrome traces
  libcli11-dev                          # command-line parsing
  libfmt-dev                            # formatting
  catch2                                # tests (Catch2 v2, header-only)
  python3                               # calibration scripts (standard library only)
  clang libclang-rt-dev                 # fuzzing: clang++ and libFuzzer (docs/fuzzing.md; .ci/run runs the fuzz targets)
  chromium                              # tests: the HTML reports are loaded in headless Chromium (tests/html/)
  openmpi-bin libopenmpi-dev            # smpipe_mpi: a sweep split over processes under mpirun
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: all packages present"
