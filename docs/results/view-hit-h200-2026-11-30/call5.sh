#!/bin/bash
# Same-call comparison of the kept form against main (patch reversed), vector mean and BaM's
# workload alternately; memcheck and racecheck on the view's GPU cache cases.
set -u
source scripts/deps.sh
start=$(date +%s)
mkdir -p /tmp/base && cp -a . /tmp/base/ 2>/dev/null; rm -rf /tmp/base/build*
( cd /tmp/base && patch -p1 -R -s < .scratch/hitprobe/view-fast.patch && echo "base: patch reversed" )
python3 - tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu gpu/test_gpu_warp_lanes.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases GTest::gtest_main")
open(p, "w").write(s)
PY
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfg.log 2>&1
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > /tmp/cfg2.log 2>&1
cmake -S /tmp/base -B /tmp/base/build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > /tmp/cfg3.log 2>&1
( cmake --build build-gpu -j 6 --target agio_gpu_tests > /tmp/build.log 2>&1; echo "tests build rc $? at $(( $(date +%s) - start )) s" >> $OUT/log.txt; grep -m3 -A8 "error" /tmp/build.log | head -20 >> $OUT/log.txt ) &
( cmake --build build -j 5 --target agio_eval > /tmp/build2.log 2>&1; echo "eval build rc $? at $(( $(date +%s) - start )) s" >> $OUT/log.txt ) &
( cmake --build /tmp/base/build -j 5 --target agio_eval > /tmp/build3.log 2>&1; echo "base eval build rc $? at $(( $(date +%s) - start )) s" >> $OUT/log.txt ) &
wait
run() {  # build label, run number
  exe=./build/eval/agio-eval; [ $1 = base ] && exe=/tmp/base/build/eval/agio-eval
  timeout 45 $exe cache-overhead --kernels vector_mean,warp_runs --out $OUT/overhead-$1-run$2.json > /tmp/o-$1-$2.log 2>&1
  echo "== $1 run $2 rc $? at $(( $(date +%s) - start )) s" >> $OUT/log.txt
  grep -aE "^(vector_mean|warp_runs) .*(native|cache)|GB/s" /tmp/o-$1-$2.log | grep -v bam_style >> $OUT/log.txt
}
run new 1; run base 1; run new 2; run base 2
left=$(( 400 - ($(date +%s) - start) ))
if [ $left -gt 30 ]; then
  AGIO_BUILD_DIR=build-gpu AGIO_SANITIZE_SECONDS=$(( left / 2 - 3 )) bash scripts/gpu-sanitize.sh 'GpuCache.TwoLines*:GpuCache.OneLine*' > $OUT/sanitize.log 2>&1
  echo "sanitize rc $? at $(( $(date +%s) - start )) s" >> $OUT/log.txt
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|^\[  (PASSED|FAILED) |did not finish" $OUT/sanitize.log >> $OUT/log.txt
fi
cat $OUT/log.txt
