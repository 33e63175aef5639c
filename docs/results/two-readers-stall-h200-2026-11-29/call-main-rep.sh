#!/bin/bash
# Main's build (compare-and-swap pins): does the two-readers case also stall now and then?
set -u
source scripts/deps.sh
start=$(date +%s)
mkdir -p /tmp/M && tar -xf .scratch/main.tar -C /tmp/M
python3 - /tmp/M/tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
PY
cmake -S /tmp/M -B /tmp/M/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfgM.log 2>&1 || tail -5 /tmp/cfgM.log
cmake --build /tmp/M/b -j 16 --target agio_gpu_tests > /tmp/buildM.log 2>&1; echo "build M rc $? at $(( $(date +%s) - start )) s"
timeout 150 /tmp/M/b/tests/agio_gpu_tests --gtest_filter='GpuCache.TwoReaders*' --gtest_repeat=60 > $OUT/rep-M.log 2>&1
echo "rc $? at $(( $(date +%s) - start )) s"; grep -c "^\[       OK" $OUT/rep-M.log; grep -E "FAILED|Failure" $OUT/rep-M.log | head -5
grep -o "EightLineCache ([0-9]* ms)" $OUT/rep-M.log | sort | uniq -c | sort -rn | head -5
