#!/usr/bin/env bash
# Installs the dependencies (scripts/setup.sh), configures with the release preset and builds
# everything: the smpipe command, the tests, the benchmark, and the CUDA sources when nvcc exists.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release > /dev/null
cmake --build --preset release -j "$(nproc)"
