#!/bin/bash
# Next step for the two-readers hang (docs/results/two-readers-stall-h200-2026-11-29): main with
# where-codes (include/agio/detail/where.hpp in where.tar) and a watchdog that prints, 5 s into
# a stuck job, every thread's code, the lines' words, the set lock and the posted rings.
set -u
source scripts/deps.sh
start=$(date +%s)
mkdir -p /tmp/W && tar -xf .scratch/where.tar -C /tmp/W
python3 - /tmp/W/tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
PY
cmake -S /tmp/W -B /tmp/W/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfg.log 2>&1 || tail /tmp/cfg.log
cmake --build /tmp/W/b -j 16 --target agio_gpu_tests > /tmp/build.log 2>&1; echo "build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A5 error /tmp/build.log
for r in 1 2 3; do
  timeout 40 /tmp/W/b/tests/agio_gpu_tests --gtest_filter='GpuCacheWhere.*' > $OUT/where-$r.log 2>&1
  echo "service run $r rc $?"; grep -E "WHERE|RING|LOCK|LINE" $OUT/where-$r.log | head -24
done
for r in 1 2; do
  AGIO_TEST_COMPLETION=waiters timeout 40 /tmp/W/b/tests/agio_gpu_tests --gtest_filter='GpuCacheWhere.*' > $OUT/where-waiters-$r.log 2>&1
  echo "waiters run $r rc $?"; grep -E "WHERE" $OUT/where-waiters-$r.log | head -4
done
echo "synccheck (waiters retiring), the case as the suite has it"
CUDA_MODULE_LOADING=EAGER AGIO_TEST_COMPLETION=waiters timeout 150 compute-sanitizer --tool synccheck --error-exitcode 1 /tmp/W/b/tests/agio_gpu_tests --gtest_filter='GpuCache.TwoReaders*' > $OUT/synccheck.log 2>&1
echo "synccheck rc $?"; grep -E "ERROR SUMMARY|Barrier|Invalid|OK|FAILED" $OUT/synccheck.log | head -12
echo "at $(( $(date +%s) - start )) s"
