#!/usr/bin/env bash
# Builds agio with CUDA and runs the GPU suite on the GPU. Needs an NVIDIA GPU; CUDA_ARCH picks
# the target (default 90, Hopper). scripts/gpu-sanitize.sh runs it under compute-sanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
build=${AGIO_BUILD_DIR:-build-gpu}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target agio_gpu_tests agio_tool
echo "== GPU suite"
"$build/tests/agio_gpu_tests" "$@"
