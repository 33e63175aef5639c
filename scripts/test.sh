#!/usr/bin/env bash
# Installs what is needed, checks the layering (scripts/check_layers.py), formatting
# (scripts/check_format.sh) and, where nvcc is present, the register budgets of the evaluation's
# kernels (scripts/check_registers.py: ptxas's counts, no GPU needed), installs agio's CPU
# backend into a prefix and builds examples/ against the installed package, running the CPU one
# and compiling the GPU one when nvcc is present (scripts/examples.sh --cpu), installs the Python
# package (pip install .) and runs its suite on the CPU backend (python/tests), builds agio's CPU
# backend (the tool and the evaluation included) and runs the CPU test suite twice: under
# ThreadSanitizer and under AddressSanitizer+UBSan (every CTest entry: the unit suite, the tool
# and evaluation runs and the crash-consistency runs, which SIGKILL a writing child process and
# check its file), then the libFuzzer targets for a bounded time (scripts/fuzz.sh, with clang).
# No GPU needed; this is what CI runs. Every stage runs even after one fails, so that one CI run
# shows every failure; the script exits non-zero if any stage failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
jobs=$(nproc)
started=$SECONDS
failed=()
echo "== layering (scripts/check_layers.py)"
python3 scripts/check_layers.py || failed+=("layering")
echo "== formatting (scripts/check_format.sh)"
bash scripts/check_format.sh || failed+=("formatting")
echo "== register budgets (scripts/check_registers.py)"
python3 scripts/check_registers.py || failed+=("register budgets")
echo "== installed package and examples (scripts/examples.sh --cpu)"
bash scripts/examples.sh --cpu || failed+=("installed package and examples")
for sanitizer in thread address; do
  build="build-${sanitizer}"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DAGIO_ENABLE_CUDA=OFF -DAGIO_BUILD_TOOLS=ON -DAGIO_BUILD_EVAL=ON \
        -DAGIO_SANITIZE="$sanitizer" >/dev/null
  cmake --build "$build" -j "$jobs"
  echo "== CPU suite under ${sanitizer} sanitizer: $(ctest --test-dir "$build" -N | tail -n 1)," \
       "crash-consistency entries: $(ctest --test-dir "$build" -N -R '^crash_' | grep -c 'Test *#')"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ASAN_OPTIONS="detect_leaks=1" \
    ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 600 || failed+=("CPU suite under ${sanitizer} sanitizer")
done
echo "== Python package and suite (pip install ., pytest python/tests, CPU backend)"
# The CPU backend is what the suite runs here, so the extension is built without nvcc, which
# would take minutes on CI's two cores; the GPU machine builds and tests the CUDA one. The
# benchmark harness's test sets Python beside the C++ tool of the AddressSanitizer build. PyTorch
# and PyG come from PyPI (about a minute), so that agio.torch and agio.pyg are tested too.
{ CMAKE_ARGS="-DAGIO_ENABLE_CUDA=OFF" python3 -m pip install --quiet ".[test,pyg]" &&
  AGIO_BENCH_CPP_TOOL=build-address/tools/agio python3 -m pytest -q python/tests; } ||
  failed+=("Python package and suite")
echo "== fuzzers (scripts/fuzz.sh)"
bash scripts/fuzz.sh || failed+=("fuzzers")
minutes=$(( (SECONDS - started) / 60 ))
if [ "${#failed[@]}" -ne 0 ]; then
  printf '== scripts/test.sh FAILED after %d min: %s\n' "$minutes" "$(IFS=';'; echo "${failed[*]}")"
  exit 1
fi
echo "== scripts/test.sh passed in ${minutes} min: layering, formatting, register budgets, installed package and examples, CPU suite" \
     "under thread and address sanitizers (crash consistency included), Python package and suite, fuzzers"
