#!/bin/bash
# The set lock taken only while the set has room, and never waited for by an access that gives
# up: the two-readers case repeated, then the suite's cache, fault and shadow files.
set -u
source scripts/deps.sh
start=$(date +%s)
python3 - tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu gpu/test_gpu_cache_faults.cu gpu/test_gpu_cache_shadow.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
PY
cmake -S . -B /tmp/F/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfgF.log 2>&1 || tail -5 /tmp/cfgF.log
cmake --build /tmp/F/b -j 16 --target agio_gpu_tests > /tmp/buildF.log 2>&1; echo "build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A5 "error" /tmp/buildF.log
T=/tmp/F/b/tests/agio_gpu_tests
for r in $(seq 1 16); do
  timeout 25 $T --gtest_filter='GpuCache.TwoReaders*' > $OUT/two-$r.log 2>&1
  echo "two readers run $r rc $? $(grep -oE "(OK|FAILED) \].*" $OUT/two-$r.log | head -1)"
done
for r in 1 2 3 4; do
  AGIO_TEST_COMPLETION=waiters timeout 25 $T --gtest_filter='GpuCache.TwoReaders*' > $OUT/two-waiters-$r.log 2>&1
  echo "two readers waiters run $r rc $? $(grep -oE "(OK|FAILED) \].*" $OUT/two-waiters-$r.log | head -1)"
done
echo "suite files at $(( $(date +%s) - start )) s"
timeout 150 $T > $OUT/suite.log 2>&1; echo "suite rc $?"; grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED" $OUT/suite.log | head -40
echo "at $(( $(date +%s) - start )) s"
