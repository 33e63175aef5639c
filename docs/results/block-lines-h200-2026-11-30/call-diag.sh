#!/bin/bash
# Block-shared view reads: the vector mean through the view stops. A GPU core dump with shared
# memory while it is stuck, then cuda-gdb: kernels, warps, a few backtraces, the block's table.
set -u
source scripts/deps.sh
start=$(date +%s)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS=-lineinfo -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > /tmp/cfg2.log 2>&1
cmake --build build -j 16 --target agio_eval > /tmp/build2.log 2>&1; echo "eval build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A8 "error" /tmp/build2.log | head -20
export CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1 CUDA_COREDUMP_PIPE=/tmp/cdpipe.%p CUDA_COREDUMP_FILE=/tmp/core.%p CUDA_COREDUMP_SHOW_PROGRESS=1
export CUDA_COREDUMP_GENERATION_FLAGS='skip_nonrelocated_elf_images,skip_global_memory,skip_local_memory'
./build/eval/agio-eval cache-overhead --kernels vector_mean --reps 1 --out /tmp/o.json > $OUT/run.log 2>&1 &
pid=$!
for i in $(seq 1 60); do sleep 1; kill -0 $pid 2>/dev/null || break; grep -aq "vector_mean native plain" $OUT/run.log && break; done
echo "native done (or ended) at $(( $(date +%s) - start )) s"; sleep 8
if kill -0 $pid 2>/dev/null; then
  echo "stuck: dumping at $(( $(date +%s) - start )) s"
  dd if=/dev/zero bs=1M count=1 of=/tmp/cdpipe.$pid 2>/dev/null
  for i in $(seq 1 120); do sleep 1; grep -aq "All done" $OUT/run.log && break; done
  echo "dump done at $(( $(date +%s) - start )) s"; sleep 1; kill -9 $pid; wait $pid 2>/dev/null
  core=$(ls /tmp/core.$pid* | head -1); ls -la $core
  cuda-gdb -batch -ex "target cudacore $core" -ex "info cuda kernels" > $OUT/gdb.txt 2>&1
  k=$(grep -E "mean_job" $OUT/gdb.txt | grep -oE "^\*?\s*[0-9]+" | tr -d '* ' | head -1)
  echo "job kernel $k"; grep -E "Kernel|mean_job|service" $OUT/gdb.txt | cut -c1-200 | head
  cmds=(-ex "target cudacore $core" -ex "cuda kernel $k" -ex "info cuda blocks" -ex "info cuda warps")
  for bt in "block (0,0,0) thread (0,0,0)" "block (0,0,0) thread (32,0,0)" "block (0,0,0) thread (224,0,0)" "block (5,0,0) thread (64,0,0)"; do
    cmds+=(-ex "cuda kernel $k $bt" -ex "bt" -ex "x/14xg (@shared long*)0")
  done
  cuda-gdb -batch "${cmds[@]}" >> $OUT/gdb.txt 2>&1
  grep -vE "^\s*$" $OUT/gdb.txt | cut -c1-220 | head -150
else
  echo "finished"; tail -20 $OUT/run.log
fi
echo "at $(( $(date +%s) - start )) s"
