#!/bin/bash
# The hit path alone (hits_only_patch) at 6/5/4/3 blocks of 256 per SM (occupancy_patch: dynamic
# shared memory), cache_overhead's preloaded rows.
set -u
source scripts/deps.sh
nvidia-smi -L
python3 .scratch/hits_only_patch.py . && python3 .scratch/occupancy_patch.py .
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > $OUT/cfg.log 2>&1
( time cmake --build build -j 16 --target agio_eval ) > $OUT/build.log 2>&1; echo "build rc $?"; tail -3 $OUT/build.log; grep -m3 -E "error" $OUT/build.log
for r in 1 2; do
for S in 0 44032 51200 71680; do
  echo "== smem $S run $r" | tee -a $OUT/occupancy.log
  AGIO_EXPERIMENT_SMEM=$S timeout 100 ./build/eval/agio-eval cache-overhead --kernels vector_mean,bfs,spmv --out /tmp/o.json 2>/dev/null | grep -E "native|cache " | tee -a $OUT/occupancy.log
done
done
