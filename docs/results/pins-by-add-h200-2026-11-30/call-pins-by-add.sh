#!/bin/bash
# Pins by atomic add (pin-by-add.patch) and a waiting access that looks before pinning again
# (look-before-pinning-again.patch), on top of the set-lock fix and the printf set-up (3b0c2da):
# the GPU suite's cache cases with the completion service, the two-readers case repeated,
# cache-overhead twice, then the short shadow runs under compute-sanitizer with waiters retiring.
set -u
source scripts/deps.sh
start=$(date +%s)
python3 - tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu gpu/test_gpu_cache_shadow.cu gpu/test_gpu_cache_shadow_shared.cu gpu/test_gpu_cache_faults.cu gpu/test_gpu_warp_lanes.cu gpu/test_gpu_launch.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
PY
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfg.log 2>&1
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > /tmp/cfg2.log 2>&1
( cmake --build build-gpu -j 10 --target agio_gpu_tests > /tmp/build.log 2>&1; echo "tests build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A8 "error" /tmp/build.log | head -20 ) &
( cmake --build build -j 6 --target agio_eval > /tmp/build2.log 2>&1; echo "eval build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A8 "error" /tmp/build2.log | head -20 ) &
wait
timeout 100 ./build-gpu/tests/agio_gpu_tests > $OUT/gpu-suite.log 2>&1
echo "suite rc $? at $(( $(date +%s) - start )) s"
grep -E "^\[       OK|^\[  (PASSED|FAILED) |^\[==========\]|FAILED|Failure" $OUT/gpu-suite.log | head -40
for r in 1 2 3 4 5 6; do
  timeout 25 ./build-gpu/tests/agio_gpu_tests --gtest_filter='GpuCache.TwoReaders*' > $OUT/two-$r.log 2>&1
  echo "two readers run $r rc $? $(grep -oE "(OK|FAILED) \].*" $OUT/two-$r.log | head -1)"
done
for r in 1 2; do
  timeout 60 ./build/eval/agio-eval cache-overhead --kernels vector_mean,bfs,spmv,warp_runs --out $OUT/overhead-D-run$r.json > /tmp/o-$r.log 2>&1
  echo "== run $r rc $? at $(( $(date +%s) - start )) s"; grep -E " (native|cache|cold) |GB/s" /tmp/o-$r.log | grep -v bam_style
done
left=$(( 400 - ($(date +%s) - start) ))
if [ $left -gt 30 ]; then
  AGIO_BUILD_DIR=build-gpu AGIO_SANITIZE_SECONDS=$(( left / 2 - 3 )) bash scripts/gpu-sanitize.sh 'GpuCacheShadow.ShortRunMatchesTheModel:GpuCacheShadowFaults.ShortRunWithFaults' > $OUT/sanitize.log 2>&1
  echo "sanitize rc $? at $(( $(date +%s) - start )) s"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|^\[  (PASSED|FAILED) |did not finish" $OUT/sanitize.log
fi
