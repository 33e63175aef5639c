#!/bin/bash
# DLRM configuration 1: three tiers against CUDA managed memory (emulated SSDs below the tiers),
# and two tiers over plain ram: stores.
set -u
source scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > $OUT/cfg.log 2>&1
( time cmake --build build -j 16 --target agio_eval ) > $OUT/build.log 2>&1; echo "build rc $?"; tail -3 $OUT/build.log; grep -m3 -E "error" $OUT/build.log
nvidia-smi -L
E=./build/eval/agio-eval
common="dlrm --experiments configs --configs 1 --cache-mib 1536 --host-tier-mib 8192 --batches 128 --warm"
( time timeout 240 $E $common --modes async,sync,async_host_tier,sync_host_tier,managed,managed_prefetched,managed_prefetched_capped --out $OUT/dlrm-managed-run1.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/managed-run1.log; grep -vE "^registers" $OUT/managed-run1.log | tail -22
R="ram:1500M?lba=4096"
( time timeout 120 $E $common --modes async,sync --store "$R,$R,$R,$R" --out $OUT/dlrm-ram-stores.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/ram-stores.log; grep -E "config1|real" $OUT/ram-stores.log
