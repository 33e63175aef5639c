#!/bin/bash
# graph-tiers with the bound row (a GPU cache holding every edge): both graphs once, then the
# Kronecker graph twice more.
set -u
source scripts/deps.sh
nvidia-smi -L
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > $OUT/cfg.log 2>&1
( time cmake --build build -j 16 --target agio_eval ) > $OUT/build.log 2>&1; echo "build rc $?"; tail -3 $OUT/build.log; grep -m3 -E "error" $OUT/build.log
E=./build/eval/agio-eval
( time timeout 330 $E graph-tiers --out $OUT/graph-tiers-bound-run1.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/graph-tiers-bound-run1.log; grep -E "faster than|real|FAILED|gpu_cache_holds_all|three_tiers|managed_host" $OUT/graph-tiers-bound-run1.log
for r in 2 3; do
( time timeout 200 $E graph-tiers --graphs kron --out $OUT/graph-tiers-bound-kron-run$r.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/graph-tiers-bound-kron-run$r.log; grep -E "faster than|real|FAILED|gpu_cache_holds_all|three_tiers|managed_host" $OUT/graph-tiers-bound-kron-run$r.log
done
