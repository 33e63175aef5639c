#!/bin/bash
# DLRM configuration 1: rows the GPU cache misses read where they lie in the host tier.
set -u
source scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > $OUT/cfg.log 2>&1
( time cmake --build build -j 16 --target agio_eval ) > $OUT/build.log 2>&1; echo "build rc $?"; tail -3 $OUT/build.log; grep -m3 -E "error" $OUT/build.log
E=./build/eval/agio-eval
( time timeout 190 $E dlrm --experiments configs --configs 1 --cache-mib 1536 --host-tier-mib 8192 --batches 128 --warm --modes async,sync,async_host_tier,sync_host_tier,async_host_tier_direct,sync_host_tier_direct --out $OUT/dlrm-direct-run1.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/direct-run1.log; grep -vE "^registers" $OUT/direct-run1.log | tail -26
