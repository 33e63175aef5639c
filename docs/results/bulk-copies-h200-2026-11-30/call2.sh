#!/bin/bash
# After the staging areas' alignment fix: builds the tool, the GPU suite (less the host-tier
# shadow runs) and the evaluation; runs the bulk-copy and retire-copy cases, those under
# compute-sanitizer, the suite, then reads across depths with staging areas of 0, 32 and 64 KiB
# alternately, and the trip with 0 and 32 KiB.
set -u
source scripts/deps.sh
start=$(date +%s)
log=$OUT/log.txt
elapsed() { echo $(( $(date +%s) - start )); }
python3 - tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
s = s.replace(" gpu/test_gpu_cache_shadow_host_tier.cu", "").replace("gpu/test_gpu_cache_shadow_host_tier_demotion.cu ", "")
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
PY
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=ON > /tmp/cfg.log 2>&1 || tail -20 /tmp/cfg.log >> $log
cmake --build build -j 16 --target agio_tool agio_gpu_tests agio_eval > /tmp/build.log 2>&1
echo "build rc $? at $(elapsed) s" >> $log
grep -m5 -B2 -A8 "error" /tmp/build.log | head -60 >> $log
timeout 60 build/tests/agio_gpu_tests --gtest_filter='*GpuBulkCopies.*:*GpuRetireCopies.*' > $OUT/copies.log 2>&1
echo "bulk and retire copies (service) rc $? at $(elapsed) s" >> $log
AGIO_TEST_COMPLETION=waiters timeout 60 build/tests/agio_gpu_tests --gtest_filter='*GpuRetireCopies.*' > $OUT/copies-waiters.log 2>&1
echo "retire copies (waiters) rc $? at $(elapsed) s" >> $log
grep -hE "^\[ +(OK|FAILED|PASSED|SKIPPED) |Failure|Expected|Which is|what|copy " $OUT/copies.log $OUT/copies-waiters.log | head -40 >> $log
AGIO_BUILD_DIR=build AGIO_SANITIZE_SECONDS=60 bash scripts/gpu-sanitize.sh '*GpuBulkCopies.*' > $OUT/sanitize.log 2>&1
echo "sanitize rc $? at $(elapsed) s" >> $log
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|^\[ +(PASSED|FAILED) |did not finish" $OUT/sanitize.log >> $log
timeout 150 build/tests/agio_gpu_tests --gtest_filter='-GpuLaunch.JobThatFinds*' > $OUT/suite.log 2>&1
echo "suite rc $? at $(elapsed) s" >> $log
grep -E "^\[  FAILED|^\[  PASSED|^\[  SKIPPED|tests ran" $OUT/suite.log | head -30 >> $log
mkdir -p /tmp/d
for r in 3 4 5; do
  for v in 0 32768 65536; do
    [ $(elapsed) -gt 500 ] && break 2
    echo "=== depth staging $v run $r at $(elapsed) s" >> $log
    timeout 60 build/tools/agio bench io --experiments ram --io-bytes 4096,65536 --outstanding 1,4,16,64,4096,16384 --ops read --controller-threads 16 --seconds 0.1 --service-staging-bytes $v --out /tmp/d/depth-s$v-run$r.json > /tmp/d/depth-s$v-run$r.log 2>&1
    echo "rc $?" >> $log
  done
done
for v in 0 32768; do
  [ $(elapsed) -gt 540 ] && break
  echo "=== trip staging $v at $(elapsed) s" >> $log
  timeout 40 build/tools/agio bench io --experiments trip --seconds 0.25 --service-staging-bytes $v --out /tmp/d/trip-s$v.json > /tmp/d/trip-s$v.log 2>&1
  echo "rc $?" >> $log
  grep -E "^trip-|trip [0-9.]+ us|legs|flag round trip" /tmp/d/trip-s$v.log >> $log
done
tar czf $OUT/depth.tgz -C /tmp/d .
cat $log
