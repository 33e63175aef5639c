#!/bin/bash
set -u
source scripts/deps.sh
python3 .scratch/fastpath_patch.py .
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > $OUT/cfg.log 2>&1
( time cmake --build build -j 16 --target agio_eval ) > $OUT/build.log 2>&1; echo "build rc $?"; tail -3 $OUT/build.log | head -1
for r in 1 2; do echo "== fast path run $r"; timeout 60 ./build/eval/agio-eval cache-overhead --kernels bfs,spmv --out /tmp/o.json 2>/dev/null | grep -E "native|cache |cold"; done | tee $OUT/fastpath.log
