#!/bin/bash
# The set-lock fix: the 2026-11-29 diag variant of the two-readers pattern (every wait 1 s,
# posts refused after 2 s, each thread stopped after 6 s), which on main never returned.
set -u
source scripts/deps.sh
start=$(date +%s)
python3 - tests/CMakeLists.txt tests/gpu/test_gpu_cache.cu <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
p = sys.argv[2]; s = open(p).read()
s = s.replace("#include <type_traits>\n", "#include <chrono>\n#include <cstdio>\n#include <type_traits>\n", 1)
s += open(".scratch/diag_fix.cu").read()
open(p, "w").write(s)
PY
cmake -S . -B /tmp/D/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfgD.log 2>&1 || tail -5 /tmp/cfgD.log
cmake --build /tmp/D/b -j 16 --target agio_gpu_tests > /tmp/buildD.log 2>&1; echo "build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A8 "error" /tmp/buildD.log | head -20
for m in service service waiters; do
  echo "=== $m"
  AGIO_TEST_COMPLETION=$m timeout 40 /tmp/D/b/tests/agio_gpu_tests --gtest_filter='GpuCacheDiag.*' > $OUT/diag-$m.log 2>&1; echo "rc $?"
  grep -E "DIAG job|DIAG hits|DIAG outcome|OK \]|FAILED \]" $OUT/diag-$m.log | head -8; cat $OUT/diag-$m.log >> $OUT/diag-all.log
done
echo "at $(( $(date +%s) - start )) s"
