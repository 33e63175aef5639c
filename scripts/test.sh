#!/usr/bin/env bash
# Installs what is needed, builds agio's CPU backend and runs the CPU test suite twice: under
# ThreadSanitizer and under AddressSanitizer+UBSan. No GPU needed; this is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
jobs=$(nproc)
for sanitizer in thread address; do
  build="build-${sanitizer}"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DAGIO_ENABLE_CUDA=OFF -DAGIO_BUILD_TOOLS=ON \
        -DAGIO_SANITIZE="$sanitizer" >/dev/null
  cmake --build "$build" -j "$jobs"
  echo "== CPU suite under ${sanitizer} sanitizer"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ASAN_OPTIONS="detect_leaks=1" \
    ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 600
done
