#!/bin/bash
# The two-readers hang: main's build with line info; when the job is stuck, a user-triggered GPU
# core dump, then cuda-gdb on the dump: every thread's PC and source line, and a backtrace and the
# SASS around each distinct PC.
set -u
source scripts/deps.sh
start=$(date +%s)
which cuda-gdb nvdisasm cuobjdump | tee $OUT/tools.txt
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
dumps=0
for r in 1 2 3 4; do
  /tmp/M/b/tests/agio_gpu_tests --gtest_filter='GpuCache.TwoReaders*' > $OUT/run-$r.log 2>&1 &
  pid=$!
  wait_s=$(( dumps == 0 ? 20 : 60 ))
  for i in $(seq 1 $wait_s); do sleep 0.5; kill -0 $pid 2>/dev/null || break; done
  if ! kill -0 $pid 2>/dev/null; then wait $pid; echo "run $r finished rc $?"; grep -E "OK|FAILED" $OUT/run-$r.log | head -3; continue; fi
  echo "run $r stuck at $((wait_s / 2)) s: dumping"
  dd if=/dev/zero bs=1M count=1 of=/tmp/cdpipe.$pid 2>/dev/null
  for i in $(seq 1 60); do sleep 1; grep -q "All done\|Writing done" $OUT/run-$r.log && break; done
  sleep 1; kill -9 $pid; wait $pid 2>/dev/null
  ls -la /tmp/core.$pid*; core=$(ls /tmp/core.$pid* | head -1)
  cuda-gdb -batch -ex "target cudacore $core" -ex "info cuda kernels" -ex "cuda kernel 1" -ex "info cuda threads" -ex "cuda kernel 0" -ex "info cuda threads" > $OUT/threads-$r.txt 2>&1
  echo "threads at distinct PCs:"; grep -E "^\s*\*?\s*\([0-9]" $OUT/threads-$r.txt | head -60
  python3 - $OUT/threads-$r.txt $core > /tmp/gdbcmds <<'PY'
import re, sys
seen = set(); cmds = [f"target cudacore {sys.argv[2]}"]; kernel = "0"
for line in open(sys.argv[1]):
    k = re.match(r"Kernel (\d+)", line)
    if k: kernel = k.group(1)
    m = re.match(r"\s*\*?\s*\((\d+),\d+,\d+\)\s+\((\d+),\d+,\d+\)\s+\(\d+,\d+,\d+\)\s+\(\d+,\d+,\d+\)\s+\d+\s+(0x[0-9a-f]+)", line)
    if not m or m.group(3) in seen: continue
    seen.add(m.group(3))
    if len(seen) > 24: break
    cmds += [f"cuda kernel {kernel} block ({m.group(1)},0,0) thread ({m.group(2)},0,0)", "bt", "x/24i $pc-0xc0"]
print("\n".join(cmds))
PY
  cuda-gdb -batch -x /tmp/gdbcmds > $OUT/bt-$r.txt 2>&1
  grep -E "^#|=>" $OUT/bt-$r.txt | cut -c1-400 | head -120
  dumps=$((dumps + 1)); [ $dumps -ge 2 ] && break
done
echo "at $(( $(date +%s) - start )) s"
