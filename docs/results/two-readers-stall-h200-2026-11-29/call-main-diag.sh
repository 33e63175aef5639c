#!/bin/bash
# Main's build: the two-readers pattern with 1 s waits, stopped after 6 s; a thread whose wait
# times out prints every line's word, tag and orphans from the device (the first six).
set -u
source scripts/deps.sh
start=$(date +%s)
if [ ! -x /tmp/M/b/tests/agio_gpu_tests ]; then
  mkdir -p /tmp/M && tar -xf .scratch/main.tar -C /tmp/M
  python3 - /tmp/M/tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
PY
  cmake -S /tmp/M -B /tmp/M/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfgM.log 2>&1
fi
cp .scratch/test_gpu_cache_diag.cu /tmp/M/tests/gpu/test_gpu_cache.cu
cmake --build /tmp/M/b -j 16 --target agio_gpu_tests > /tmp/buildM.log 2>&1; echo "build M rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A5 error /tmp/buildM.log
for r in $(seq 1 8); do
  timeout 40 /tmp/M/b/tests/agio_gpu_tests --gtest_filter='GpuCacheDiag.*' > /tmp/d.log 2>&1
  rc=$?
  echo "run $r rc $rc: $(grep 'DIAG job' /tmp/d.log)"
  if [ $rc -ne 0 ] || ! grep -q "timeouts 0$" /tmp/d.log; then cp /tmp/d.log $OUT/stall-$r.log; grep -E "DEV|DIAG" /tmp/d.log | head -60; break; fi
  [ $(( $(date +%s) - start )) -gt 230 ] && break
done
echo "at $(( $(date +%s) - start )) s"
