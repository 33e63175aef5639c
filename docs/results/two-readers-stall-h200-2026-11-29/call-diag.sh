#!/bin/bash
# Pins by atomic add (A: the patch as built; B: and a waiter that looks at the word before it
# pins again): the two-readers case with short waits and a stop after 4 s, its progress, the
# cache's counters and every line's word; then the cache test file.
set -u
source scripts/deps.sh
start=$(date +%s)
for v in A B; do
  mkdir -p /tmp/$v && tar -xf .scratch/addpin$v.tar -C /tmp/$v
  python3 - /tmp/$v/tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
PY
  cmake -S /tmp/$v -B /tmp/$v/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfg$v.log 2>&1 || tail -5 /tmp/cfg$v.log
done
for v in A B; do
  ( cmake --build /tmp/$v/b -j 8 --target agio_gpu_tests > /tmp/build$v.log 2>&1; echo "build $v rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A8 "error" /tmp/build$v.log | head -20 ) &
done
wait
for v in A B; do
  echo "=== $v service"
  timeout 40 /tmp/$v/b/tests/agio_gpu_tests --gtest_filter='GpuCacheDiag.*' 2>&1 | grep -E "DIAG|OK|FAILED" | tee -a $OUT/diag-$v.log
  echo "=== $v waiters"
  AGIO_TEST_COMPLETION=waiters timeout 40 /tmp/$v/b/tests/agio_gpu_tests --gtest_filter='GpuCacheDiag.*' 2>&1 | grep -E "DIAG|OK|FAILED" | tee -a $OUT/diag-$v-waiters.log
  echo "at $(( $(date +%s) - start )) s"
done
echo "=== B whole file"
timeout 90 /tmp/B/b/tests/agio_gpu_tests --gtest_filter='GpuCache.*' > $OUT/gpu-cache-B.log 2>&1
echo "rc $? at $(( $(date +%s) - start )) s"
grep -E "^\[       OK|^\[  (PASSED|FAILED) |FAILED|Failure" $OUT/gpu-cache-B.log | head -40
