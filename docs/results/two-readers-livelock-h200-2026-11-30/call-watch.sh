#!/bin/bash
# The two-readers hang: main's job kernel unchanged, a host thread peeking at the cache, the
# posted rings and the queues while it is stuck (.scratch/test_gpu_cache_watch.cu).
set -u
source scripts/deps.sh
start=$(date +%s)
cp .scratch/test_gpu_cache_watch.cu tests/gpu/test_gpu_cache.cu
python3 - tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
PY
cmake -S . -B /tmp/M/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS=-lineinfo -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfgM.log 2>&1 || tail -5 /tmp/cfgM.log
cmake --build /tmp/M/b -j 16 --target agio_gpu_tests > /tmp/buildM.log 2>&1; echo "build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A5 "error" /tmp/buildM.log
stuck=0
for r in 1 2 3 4 5; do
  timeout 40 /tmp/M/b/tests/agio_gpu_tests --gtest_filter='GpuCacheWatch.*' > $OUT/watch-$r.log 2>&1
  echo "service run $r rc $?"; grep -E "WATCH|OK \]|FAILED \]" $OUT/watch-$r.log | head -3
  if grep -q "WATCH stuck" $OUT/watch-$r.log; then stuck=$((stuck + 1)); [ $stuck -ge 2 ] && break; fi
done
for r in 1 2; do
  AGIO_TEST_COMPLETION=waiters timeout 40 /tmp/M/b/tests/agio_gpu_tests --gtest_filter='GpuCacheWatch.*' > $OUT/watch-waiters-$r.log 2>&1
  echo "waiters run $r rc $?"; grep -E "WATCH|OK \]|FAILED \]" $OUT/watch-waiters-$r.log | head -3
done
echo "at $(( $(date +%s) - start )) s"
