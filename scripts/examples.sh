#!/usr/bin/env bash
# Installs agio into a prefix and builds examples/ against the installed package, as a user's
# project would (find_package(agio), nothing else), then runs them:
#
#   bash scripts/examples.sh         agio with its GPU backend where nvcc is found; runs the CPU
#                                    example, and the GPU example where there is a GPU
#   bash scripts/examples.sh --cpu   agio's CPU backend only (what CI does): runs the CPU example;
#                                    the GPU example is compiled (when nvcc is found), not run
#
# Needs no network where .deps/ holds the .deb files scripts/deps.sh unpacks.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
cuda=AUTO
if [ "${1:-}" = "--cpu" ]; then
  cuda=OFF
elif [ "$#" -ne 0 ]; then
  echo "usage: bash scripts/examples.sh [--cpu]" >&2
  exit 2
fi
build=build-examples
prefix="$PWD/$build/prefix"
rm -rf "$prefix" "$build/cpu_threads" "$build/gpu_kernel"

echo "== installing agio into $prefix"
cmake -S . -B "$build/agio" -DCMAKE_BUILD_TYPE=Release -DAGIO_BUILD_TESTS=OFF -DAGIO_BUILD_TOOLS=OFF \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DAGIO_ENABLE_CUDA="$cuda" | grep 'agio:' || true
cmake --build "$build/agio" -j "$(nproc)"
cmake --install "$build/agio" >/dev/null
export CMAKE_PREFIX_PATH="$prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"

echo "== examples/cpu_threads"
cmake -S examples/cpu_threads -B "$build/cpu_threads" >/dev/null
cmake --build "$build/cpu_threads" -j "$(nproc)"
"$build/cpu_threads/cpu_threads"

echo "== examples/gpu_kernel"
if ! command -v "${CUDACXX:-nvcc}" >/dev/null 2>&1; then
  echo "no CUDA compiler (nvcc on PATH, or CUDACXX): not built"
  exit 0
fi
gpu=false
nvidia-smi -L >/dev/null 2>&1 && gpu=true
arch_args=()
# The example compiles for the GPU in the machine (native); without one, name a target.
$gpu || arch_args+=(-DCMAKE_CUDA_ARCHITECTURES=90)
cmake -S examples/gpu_kernel -B "$build/gpu_kernel" "${arch_args[@]}" >/dev/null
cmake --build "$build/gpu_kernel" -j "$(nproc)"
if $gpu && grep -q 'cuda_backend = true' "$prefix/include/agio/config.hpp"; then
  "$build/gpu_kernel/gpu_kernel"
else
  echo "compiled; not run ($($gpu && echo "agio installed without its GPU backend" || echo "no GPU"))"
fi
