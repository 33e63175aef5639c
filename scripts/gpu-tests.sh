#!/usr/bin/env bash
# Builds agio with CUDA and runs the GPU suite on the GPU. Needs an NVIDIA GPU; built for the GPUs
# of the machine unless CUDA_ARCH names the target (e.g. 90, Hopper). scripts/gpu-sanitize.sh runs it under compute-sanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
build=${AGIO_BUILD_DIR:-build-gpu}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${CUDA_ARCH:+-DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCH} >/dev/null
cmake --build "$build" -j "$(nproc)" --target agio_gpu_tests
echo "== GPU suite"
"$build/tests/agio_gpu_tests" "$@"
