#!/bin/bash
# The view's hit-only fast path and counters added per lane, against main built beside them
# (the patch reversed in a copy): GPU cache tests, sanitizer, cache-overhead alternately.
set -u
source scripts/deps.sh
start=$(date +%s)
mkdir -p /tmp/base && cp -a . /tmp/base/ 2>/dev/null; rm -rf /tmp/base/build*
( cd /tmp/base && patch -p1 -R -s < .scratch/hitprobe/view-fast.patch && echo "base: patch reversed" )
python3 - tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu gpu/test_gpu_cache_faults.cu gpu/test_gpu_cache_shadow.cu gpu/test_gpu_cache_shadow_shared.cu gpu/test_gpu_warp_lanes.cu gpu/test_gpu_launch.cu" + s[b:]

open(p, "w").write(s)
PY
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfg.log 2>&1
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > /tmp/cfg2.log 2>&1
cmake -S /tmp/base -B /tmp/base/build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > /tmp/cfg3.log 2>&1
( cmake --build build-gpu -j 6 --target agio_gpu_tests > /tmp/build.log 2>&1; echo "tests build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A8 "error" /tmp/build.log | head -20 ) &
( cmake --build build -j 5 --target agio_eval > /tmp/build2.log 2>&1; echo "eval build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A8 "error" /tmp/build2.log | head -20 ) &
( cmake --build /tmp/base/build -j 5 --target agio_eval > /tmp/build3.log 2>&1; echo "base eval build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A8 "error" /tmp/build3.log | head -20 ) &
wait
timeout 100 ./build-gpu/tests/agio_gpu_tests > $OUT/gpu-suite.log 2>&1
echo "suite rc $? at $(( $(date +%s) - start )) s: $(grep -E '^\[  (PASSED|FAILED) ' $OUT/gpu-suite.log | tr '\n' ' ')"
grep -E "FAILED|Failure" $OUT/gpu-suite.log | head
run() {  # build label, kernels, run number, timeout
  exe=./build/eval/agio-eval; [ $1 = base ] && exe=/tmp/base/build/eval/agio-eval
  timeout $4 $exe cache-overhead --kernels $2 --out $OUT/overhead-$1-run$3.json > /tmp/o-$1-$3.log 2>&1
  echo "== $1 run $3 rc $? at $(( $(date +%s) - start )) s"
  grep -aE "^(vector_mean|warp_runs|bfs|spmv) |GB/s" /tmp/o-$1-$3.log | head -30
  tail -c 300 /tmp/o-$1-$3.log | grep -aiE "error|what" | head -3
}
run new vector_mean,bfs,spmv,warp_runs 1 100; run base vector_mean,bfs,spmv,warp_runs 1 100
run new vector_mean,bfs,spmv,warp_runs 2 100; run base vector_mean,bfs,spmv,warp_runs 2 100
left=$(( 570 - ($(date +%s) - start) ))
if [ $left -gt 30 ]; then
  AGIO_BUILD_DIR=build-gpu AGIO_SANITIZE_SECONDS=$(( left / 2 - 3 )) bash scripts/gpu-sanitize.sh 'GpuCache.TwoLines*:GpuCacheShadow.ShortRun*:GpuCacheShadowFaults.ShortRun*' > $OUT/sanitize.log 2>&1
  echo "sanitize rc $? at $(( $(date +%s) - start )) s"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|^\[  (PASSED|FAILED) |did not finish" $OUT/sanitize.log
fi
