#!/usr/bin/env bash
# Builds agio's libFuzzer targets with clang (ASan + UBSan, in build-fuzz/) and runs each one
# from its committed seed corpus (tests/fuzz/corpus/<target>/) for a bounded time. Fails on any
# crash, hang, leak or sanitizer report; the input that caused it is left in build-fuzz/findings/.
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET]     (default: $AGIO_FUZZ_SECONDS, else 60)
#
# Reproduce a finding: build-fuzz/tests/fuzz/fuzz_<target> build-fuzz/findings/<target>/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
seconds="${1:-${AGIO_FUZZ_SECONDS:-60}}"
targets=(store_uri passthrough)

fuzzer_runtime() {
  local resource
  resource="$(clang++ -print-resource-dir 2>/dev/null)" || return 1
  compgen -G "$resource/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null ||
    compgen -G "$resource/lib/*/libclang_rt.fuzzer*.a" >/dev/null
}
if ! { agio_have clang++ && fuzzer_runtime; }; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq clang >/dev/null
  # Debian and Ubuntu ship libFuzzer's runtime apart from clang (a recommended package).
  major="$(clang++ -dumpversion | cut -d. -f1)"
  fuzzer_runtime || $sudo_cmd apt-get install -y -qq "libclang-rt-${major}-dev" >/dev/null
fi

build=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAGIO_ENABLE_CUDA=OFF \
  -DAGIO_BUILD_TOOLS=OFF -DAGIO_BUILD_TESTS=OFF -DAGIO_BUILD_FUZZERS=ON >/dev/null
cmake --build "$build" -j "$(nproc)"

# Inputs the fuzzers create (file: stores of the URI target) go to a directory removed at exit.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in "${targets[@]}"; do
  findings="$build/findings/$target"
  rm -rf "$findings"
  mkdir -p "$findings" "$scratch/corpus-$target"
  echo "== fuzzing $target for ${seconds} s from tests/fuzz/corpus/$target ($(ls "tests/fuzz/corpus/$target" | wc -l) seeds)"
  if TMPDIR="$scratch" ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1" \
     "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
       -artifact_prefix="$findings/" -print_final_stats=1 "$scratch/corpus-$target" "tests/fuzz/corpus/$target" \
       >"$findings/log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$findings/log" | sed 's/^/   /' || true
    echo "   $target: no crash, hang or sanitizer report"
  else
    tail -n 60 "$findings/log"
    echo "   $target: FAILED; reproducer(s): $(ls "$findings" | grep -v '^log$' | tr '\n' ' ' || true)"
    failed+=("$target")
  fi
done
if [ "${#failed[@]}" -ne 0 ]; then
  echo "== fuzzing failed: ${failed[*]}"
  exit 1
fi
echo "== fuzzing passed: ${targets[*]}"
