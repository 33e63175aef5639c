#!/bin/bash
# The launch cases (the new one first), memcheck on it; Figures 11 and 12 of the full
# evaluation; the view's cache-overhead (vector mean and BaM's workload) twice.
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
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=ON > /tmp/cfg.log 2>&1 || tail -20 /tmp/cfg.log >> $log
cmake --build build -j 16 --target agio_gpu_tests agio_eval > /tmp/build.log 2>&1
echo "build rc $? at $(( $(date +%s) - start )) s" >> $log
grep -m5 -B2 -A8 "error" /tmp/build.log | head -60 >> $log
timeout 60 build/tests/agio_gpu_tests --gtest_filter='GpuLaunch.JobThatFinds*:GpuLaunch.*' > $OUT/launch.log 2>&1
echo "launch cases rc $? at $(( $(date +%s) - start )) s" >> $log
grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) |Failure|Expected|Which is|actual|FAILED:" $OUT/launch.log | head -30 >> $log
AGIO_TEST_COMPLETION=waiters timeout 60 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 build/tests/agio_gpu_tests --gtest_filter='GpuLaunch.JobThatFinds*' > $OUT/sanitize.log 2>&1
echo "memcheck rc $? at $(( $(date +%s) - start )) s" >> $log
grep -E "ERROR SUMMARY|LEAK SUMMARY|^\[ +(OK|FAILED|SKIPPED) |FAILED:" $OUT/sanitize.log | head >> $log
mkdir -p /run/udev/data && printf 'E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=ext4\n' > /run/udev/data/b254:0
mkdir -p /tmp/ev
timeout 200 build/eval/agio-eval evaluation --full --figures 11,12 --out-dir /tmp/ev > /tmp/ev/evaluation-figures-11-12.log 2>&1
echo "figures 11,12 rc $? at $(( $(date +%s) - start )) s" >> $log
grep -aE "^(bfs|spmv|cc) +(async|bam_style) |check|FAIL|register" /tmp/ev/evaluation-figures-11-12.log | head -40 >> $log
tar czf $OUT/ev-11-12.tgz -C /tmp/ev .
for r in 1 2; do
  timeout 45 build/eval/agio-eval cache-overhead --kernels vector_mean,warp_runs --out $OUT/overhead-run$r.json > /tmp/o-$r.log 2>&1
  echo "== cache-overhead run $r rc $? at $(( $(date +%s) - start )) s" >> $log
  grep -aE "^(vector_mean|warp_runs) .*(native|cache)|GB/s" /tmp/o-$r.log | grep -v bam_style >> $log
done
cat $log
