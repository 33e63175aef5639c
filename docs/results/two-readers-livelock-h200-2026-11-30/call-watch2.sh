#!/bin/bash
# The two-readers hang: main's kernels. Alternately (a) a test whose host thread peeks at the
# cache, rings and queues at 3, 3.5, 4 and 5 s into a stuck job and then asks for a GPU core
# dump, and (b) the suite's case, dumped at 7 s if stuck. cuda-gdb then lists every thread's PC
# and the set lock holder's lanes and backtrace.
set -u
source scripts/deps.sh
start=$(date +%s)
cp .scratch/test_gpu_cache_watch.cu tests/gpu/test_gpu_cache.cu
python3 - tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
PY
cmake -S . -B /tmp/M/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS=-lineinfo -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfgM.log 2>&1 || tail -5 /tmp/cfgM.log
cmake --build /tmp/M/b -j 16 --target agio_gpu_tests > /tmp/buildM.log 2>&1; echo "build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A5 "error" /tmp/buildM.log
export CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1 CUDA_COREDUMP_PIPE=/tmp/cdpipe.%p CUDA_COREDUMP_FILE=/tmp/core.%p CUDA_COREDUMP_SHOW_PROGRESS=1
export CUDA_COREDUMP_GENERATION_FLAGS='skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory,skip_constbank_memory'
analyse() {  # $1 run, $2 pid
  local core; core=$(ls /tmp/core.$2* 2>/dev/null | head -1); [ -z "$core" ] && { echo "no core"; return; }
  cuda-gdb -batch -ex "target cudacore $core" -ex "cuda kernel 1" -ex "info cuda threads" > $OUT/threads-$1.txt 2>&1
  grep -E "^\s*\*?\s*\([0-9]" $OUT/threads-$1.txt | awk '{print $1,$2,$3,$4,$5,$6,$7,$8,$9}' | grep -v " 31 " | head -40
  local lock; lock=$(grep -E "^LOCK" $OUT/run-$1.log | tail -1 | awk '{print $2}')
  if [ -n "$lock" ] && [ "$lock" != 0 ]; then
    local h=$(( lock - 1 )); local b=$(( h / 256 )); local t=$(( h % 256 ))
    cuda-gdb -batch -ex "target cudacore $core" -ex "cuda kernel 1 block ($b,0,0) thread ($t,0,0)" -ex "bt" -ex "x/40i \$pc-0x140" -ex "info cuda lanes" > $OUT/holder-$1.txt 2>&1
    echo "last lock holder: thread $h (block $b thread $t)"; grep -E "^#|=>|^\[Switching" $OUT/holder-$1.txt | cut -c1-300
    grep -vE "^\s+0x|^#|^\[|^Opening|^[0-9]+\s" $OUT/holder-$1.txt | head -40
  fi
}
stuck=0
for r in $(seq 1 30); do
  if [ $((r % 2)) -eq 1 ]; then
    /tmp/M/b/tests/agio_gpu_tests --gtest_filter='GpuCacheWatch.*' > $OUT/run-$r.log 2>&1 &
    pid=$!; wait $pid; rc=$?
    if grep -q "WATCH stuck" $OUT/run-$r.log; then
      echo "run $r (watch) stuck, rc $rc at $(( $(date +%s) - start )) s"; grep -E "^LOOK|^LINE|^LOCK|^RING|^QP" $OUT/run-$r.log | head -80
      analyse $r $pid; stuck=$((stuck + 1)); break
    fi
    echo "run $r (watch) rc $rc $(grep -oE "WATCH finished.*" $OUT/run-$r.log)"
  else
    /tmp/M/b/tests/agio_gpu_tests --gtest_filter='GpuCache.TwoReaders*' > $OUT/run-$r.log 2>&1 &
    pid=$!
    for i in $(seq 1 14); do sleep 0.5; kill -0 $pid 2>/dev/null || break; done
    if ! kill -0 $pid 2>/dev/null; then wait $pid; echo "run $r (suite case) rc $? $(grep -oE "OK \].*|FAILED \].*" $OUT/run-$r.log | head -1)"; continue; fi
    echo "run $r (suite case) stuck at 7 s: dumping"
    dd if=/dev/zero bs=1M count=1 of=/tmp/cdpipe.$pid 2>/dev/null
    for i in $(seq 1 60); do sleep 1; grep -q "All done" $OUT/run-$r.log && break; done
    sleep 1; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    analyse $r $pid
    stuck=$((stuck + 1)); [ $stuck -ge 2 ] && break
  fi
done
echo "at $(( $(date +%s) - start )) s"
