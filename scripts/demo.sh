#!/usr/bin/env bash
# Installs what is needed, builds agio (with its GPU backend when nvcc is present) and runs the
# demo job: a ram: and a file: store written and read back through agio, checksums verified,
# throughput printed. Runs on the GPU when one is present, on CPU threads otherwise. Builds the
# library and the tool only (the evaluation is -DAGIO_BUILD_EVAL=ON, off by default).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
build=build-release
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DAGIO_BUILD_TESTS=OFF ${AGIO_CMAKE_ARGS:-} | { grep "agio:" || true; }
cmake --build "$build" -j "$(nproc)" --target agio_tool
"$build/tools/agio" demo "$@"
