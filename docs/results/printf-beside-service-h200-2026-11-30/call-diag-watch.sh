#!/bin/bash
# The set-lock fix as kept (9837af1) on the GPU: the two-readers suite case repeated, the suite's
# cache, fault and shadow files, then the 2026-11-29 diag variant (every wait 1 s, posts refused
# after 2 s, threads stopped after 6 s) quiet and printing, with a host thread peeking at its
# counters each second; the first stuck run is attached (host stacks) and core-dumped.
set -u
source scripts/deps.sh
start=$(date +%s)
python3 - tests/CMakeLists.txt tests/gpu/test_gpu_cache.cu <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_cache.cu gpu/test_gpu_cache_faults.cu gpu/test_gpu_cache_shadow.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
p = sys.argv[2]; s = open(p).read()
s = s.replace("#include <type_traits>\n", "#include <cuda_runtime.h>\n#include <unistd.h>\n\n#include <atomic>\n#include <chrono>\n#include <cstdio>\n#include <cstring>\n#include <thread>\n#include <type_traits>\n", 1)
s += open(".scratch/diag_watch.cu").read()
open(p, "w").write(s)
PY
cmake -S . -B /tmp/W/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS=-lineinfo -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfgW.log 2>&1 || tail -5 /tmp/cfgW.log
cmake --build /tmp/W/b -j 16 --target agio_gpu_tests > /tmp/buildW.log 2>&1; echo "build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A8 "error" /tmp/buildW.log | head -20
T=/tmp/W/b/tests/agio_gpu_tests
for r in $(seq 1 8); do
  timeout 25 $T --gtest_filter='GpuCache.TwoReaders*' > $OUT/two-$r.log 2>&1
  echo "two readers run $r rc $? $(grep -oE "(OK|FAILED) \].*" $OUT/two-$r.log | head -1)"
done
for r in 1 2 3; do
  AGIO_TEST_COMPLETION=waiters timeout 25 $T --gtest_filter='GpuCache.TwoReaders*' > $OUT/two-waiters-$r.log 2>&1
  echo "two readers waiters run $r rc $? $(grep -oE "(OK|FAILED) \].*" $OUT/two-waiters-$r.log | head -1)"
done
echo "suite files at $(( $(date +%s) - start )) s"
timeout 150 $T --gtest_filter='-GpuCacheDiag.*' > $OUT/suite.log 2>&1; echo "suite rc $?"; grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED" $OUT/suite.log | head -40
echo "diag at $(( $(date +%s) - start )) s"
export CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1 CUDA_COREDUMP_PIPE=/tmp/cdpipe.%p CUDA_COREDUMP_FILE=/tmp/core.%p
export CUDA_COREDUMP_GENERATION_FLAGS='skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory,skip_constbank_memory'
summarize() {  # cuda-gdb's thread list, grouped by source line
  grep -E "^\s*\*?\s*\([0-9]+,0,0\)" "$1" | awk '{n=$(NF-2); c[$(NF-1)" "$NF]+=n} END {for (k in c) print c[k], k}' | sort -rn | head -12
}
dumped=0
for run in quiet:service printing:service quiet:service quiet:waiters printing:waiters; do
  kind=${run%%:*}; mode=${run##*:}; name=Quiet; [ $kind = printing ] && name=Printing
  log=$OUT/diag-$kind-$mode-$(date +%s).log
  AGIO_TEST_COMPLETION=$mode $T --gtest_filter="GpuCacheDiag.TwoReadersProgress$name" > $log 2>&1 &
  pid=$!
  for i in $(seq 1 26); do sleep 0.5; kill -0 $pid 2>/dev/null || break; done
  if ! kill -0 $pid 2>/dev/null; then wait $pid; echo "diag $kind $mode rc $?"; grep -E "DIAG job|DIAG outcome|OK \]|FAILED \]|DIAG check" $log | head -6; continue; fi
  echo "diag $kind $mode still running at 13 s"; grep -E "^WATCH" $log | tail -4
  if [ $dumped -eq 0 ]; then
    timeout 60 cuda-gdb -p $pid -batch -ex "info threads" -ex "thread apply all bt 14" > $OUT/host-$pid.txt 2>&1
    echo "host stacks (cuda-gdb attach rc $?):"; grep -E "^#[0-9]+ " $OUT/host-$pid.txt | grep -vE "libc|pthread|futex|epoll|poll \(" | cut -c1-200 | sort | uniq -c | sort -rn | head -24
    kill -0 $pid 2>/dev/null && dd if=/dev/zero bs=1M count=1 of=/tmp/cdpipe.$pid 2>/dev/null
    for i in $(seq 1 90); do sleep 1; ls /tmp/core.$pid* >/dev/null 2>&1 && ! kill -0 $pid 2>/dev/null && break; done
    kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    core=$(ls /tmp/core.$pid* 2>/dev/null | head -1)
    if [ -n "$core" ]; then
      for k in 0 1; do
        timeout 60 cuda-gdb -batch -ex "target cudacore $core" -ex "info cuda kernels" -ex "cuda kernel $k" -ex "info cuda threads" > $OUT/threads-$k-$pid.txt 2>&1
        echo "kernel $k threads by line:"; summarize $OUT/threads-$k-$pid.txt
      done
      grep -A4 "Kernel Parent" $OUT/threads-0-$pid.txt | head -6
    else echo "no core"; fi
    dumped=1
  else
    kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
  fi
  grep -E "^WATCH" $log | tail -2
done
echo "at $(( $(date +%s) - start )) s"
