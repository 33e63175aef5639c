#!/bin/bash
# The new launch case alone in its process (no eager loading asked by the environment), the
# launch file, then memcheck and racecheck on the new case and the register-cap case.
set -u
source scripts/deps.sh
start=$(date +%s)
log=$OUT/log.txt
python3 - tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_launch.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases GTest::gtest_main")
open(p, "w").write(s)
PY
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfg.log 2>&1 || tail -20 /tmp/cfg.log >> $log
cmake --build build -j 16 --target agio_gpu_tests > /tmp/build.log 2>&1
echo "build rc $? at $(( $(date +%s) - start )) s" >> $log
grep -m5 -B2 -A8 "error" /tmp/build.log | head -60 >> $log
for r in 1 2 3; do
  timeout 40 build/tests/agio_gpu_tests --gtest_filter='GpuLaunch.JobThatFinds*' > $OUT/alone-$r.log 2>&1
  echo "alone run $r rc $? at $(( $(date +%s) - start )) s" >> $log
  grep -E "^\[ +(OK|FAILED|SKIPPED) |Failure|FAILED:" $OUT/alone-$r.log | head -5 >> $log
done
timeout 60 build/tests/agio_gpu_tests --gtest_filter='GpuLaunch.*' > $OUT/launch.log 2>&1
echo "launch file rc $? at $(( $(date +%s) - start )) s" >> $log
grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) |Failure" $OUT/launch.log | head -12 >> $log
AGIO_BUILD_DIR=build AGIO_SANITIZE_SECONDS=90 bash scripts/gpu-sanitize.sh 'GpuLaunch.JobThatFinds*:GpuLaunch.AJobs*' > $OUT/sanitize.log 2>&1
echo "sanitize rc $? at $(( $(date +%s) - start )) s" >> $log
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|^\[ +(OK|FAILED|SKIPPED|PASSED) |did not finish|Failure" $OUT/sanitize.log >> $log
cat $log
