#!/bin/bash
# The two-readers hang, main's kernels: a GPU core dump with global memory while stuck, then
# cuda-gdb: every thread's PC, the lines' words, the set lock and its holder's backtrace.
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
old = "    run_job(rt, 1024, Job<IO>{cache.template array<std::uint32_t>(), blocks, failures});\n"
new = ("    const auto view = cache.template array<std::uint32_t>();\n"
       "    const auto& st = view.cache.state;\n"
       "    std::fprintf(stderr, \"ADDR words %p tags %p orphans %p locks %p policy %p fill %p\\n\", (void*)st.words,"
       " (void*)st.tags, (void*)st.orphan_pins, (void*)st.set_locks, st.policy_state, (void*)st.fill_status);\n"
       "    run_job(rt, 1024, Job<IO>{view, blocks, failures});\n")
assert old in s
s = s.replace(old, new)
open(p, "w").write(s)
PY
cmake -S . -B /tmp/M/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS=-lineinfo -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfgM.log 2>&1 || tail -5 /tmp/cfgM.log
cmake --build /tmp/M/b -j 16 --target agio_gpu_tests > /tmp/buildM.log 2>&1; echo "build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A5 "error" /tmp/buildM.log
export CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1 CUDA_COREDUMP_PIPE=/tmp/cdpipe.%p CUDA_COREDUMP_FILE=/tmp/core.%p CUDA_COREDUMP_SHOW_PROGRESS=1
export CUDA_COREDUMP_GENERATION_FLAGS='skip_nonrelocated_elf_images,skip_shared_memory,skip_local_memory'
dumps=0
for r in $(seq 1 36); do
  mode=service; [ $r -gt 22 ] && mode=waiters
  [ $mode = service ] && [ $dumps -ge 1 ] && continue
  AGIO_TEST_COMPLETION=$mode /tmp/M/b/tests/agio_gpu_tests --gtest_filter='GpuCache.TwoReaders*' > $OUT/run-$r.log 2>&1 &
  pid=$!
  wait_half_s=$(( r > 22 ? 8 : 14 ))
  for i in $(seq 1 $wait_half_s); do sleep 0.5; kill -0 $pid 2>/dev/null || break; done
  if ! kill -0 $pid 2>/dev/null; then wait $pid; echo "run $r ($mode) finished rc $? $(grep -oE "OK \].*|FAILED \].*" $OUT/run-$r.log | head -1)"; continue; fi
  echo "run $r ($mode) stuck at $((wait_half_s / 2)) s: dumping at $(( $(date +%s) - start )) s"
  dd if=/dev/zero bs=1M count=1 of=/tmp/cdpipe.$pid 2>/dev/null
  for i in $(seq 1 150); do sleep 1; grep -q "All done" $OUT/run-$r.log && break; done
  echo "dump done at $(( $(date +%s) - start )) s"
  sleep 1; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
  core=$(ls /tmp/core.$pid* | head -1); ls -la $core
  read words tags orphans locks policy fill < <(grep -o "ADDR .*" $OUT/run-$r.log | awk '{print $3, $5, $7, $9, $11, $13}')
  cuda-gdb -batch -ex "target cudacore $core" -ex "info cuda kernels" -ex "cuda kernel 1" -ex "info cuda threads" \
    -ex "x/8xw $words" -ex "x/8xw $orphans" -ex "x/8xg $tags" -ex "x/2xw $locks" -ex "x/16xw $policy" -ex "x/8xw $fill" \
    > $OUT/state-$r.txt 2>&1
  grep -E "^0x|^\s+\(|Cannot|Error|error" $OUT/state-$r.txt | head -70
  holder=$(grep -A0 "^$locks\|^0x0*${locks#0x}" $OUT/state-$r.txt | head -1 | awk '{print $2}')
  echo "lock word $holder"
  if [ -n "$holder" ] && [ "$((holder))" -ne 0 ]; then
    h=$(( holder - 1 )); b=$(( h / 256 )); t=$(( h % 256 ))
    cuda-gdb -batch -ex "target cudacore $core" -ex "cuda kernel 1 block ($b,0,0) thread ($t,0,0)" -ex "bt" -ex "x/32i \$pc-0x100" -ex "info cuda lanes" -ex "info registers" > $OUT/holder-$r.txt 2>&1
    echo "holder thread $h (block $b thread $t):"; grep -E "^#|=>|^\[Switching" $OUT/holder-$r.txt | cut -c1-300; grep -E "^\s+[0-9]+\s+(Active|Divergent)|^\*?\s+[0-9]+ +(Active|Div)" $OUT/holder-$r.txt | head -40
  fi
  dumps=$((dumps + 1)); [ $dumps -ge 2 ] && break
done
echo "at $(( $(date +%s) - start )) s"
