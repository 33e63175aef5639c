#!/bin/bash
# Fills posted to the service: the GPU suite's cache, cache-fault, shadow-model, row-access and
# on-demand cases with the completion service (the other files left out to fit the call).
set -u
source scripts/deps.sh
start=$(date +%s)
python3 - tests/CMakeLists.txt <<'PY'
import sys, re
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu gpu/test_gpu_cache_shadow.cu gpu/test_gpu_cache_faults.cu gpu/test_gpu_on_demand.cu gpu/test_gpu_row_access.cu" + s[b:]

s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
PY
cmake -S . -B b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfg.log 2>&1
cmake --build b -j 16 --target agio_gpu_tests > /tmp/build.log 2>&1; echo "tests build rc $? at $(( $(date +%s) - start )) s"
grep -m3 -A8 "error" /tmp/build.log | head -30
timeout $(( 200 - ($(date +%s) - start) )) ./b/tests/agio_gpu_tests > $OUT/gpu-suite.log 2>&1
echo "suite rc $? at $(( $(date +%s) - start )) s"
grep -E "^\[       OK|^\[  (PASSED|FAILED) |^\[==========\]|FAILED|Failure" $OUT/gpu-suite.log | head -80
