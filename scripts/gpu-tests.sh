#!/usr/bin/env bash
# Builds agio with CUDA and runs the GPU suite on the GPU, then again under compute-sanitizer
# memcheck. Needs an NVIDIA GPU. CUDA_ARCH picks the target (default 90, Hopper).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
# The completion service is a persistent kernel; with lazy module loading any kernel launched
# after it would wait for it. agio turns eager loading on itself; this covers tools that start
# CUDA before agio does (compute-sanitizer).
export CUDA_MODULE_LOADING=EAGER
build=${AGIO_BUILD_DIR:-build-gpu}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target agio_gpu_tests agio_tool
echo "== GPU suite"
"$build/tests/agio_gpu_tests"
echo "== GPU suite under compute-sanitizer memcheck"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 --leak-check full "$build/tests/agio_gpu_tests" \
  --gtest_filter='*ram_gpu_warps*:GpuFaults.*:GpuWait.*'
