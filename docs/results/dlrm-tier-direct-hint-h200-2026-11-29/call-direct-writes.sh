#!/bin/bash
# DLRM's direct modes with the tier's presence hint; 64 KiB writes on a ram: store; a probe of
# the GPU's own stores into pinned host memory.
set -u
source scripts/deps.sh
nvidia-smi -L
nvcc -O2 -arch=sm_90 -o /tmp/d2h_probe .scratch/d2h_probe.cu && /tmp/d2h_probe | tee $OUT/d2h-probe.log
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > $OUT/cfg.log 2>&1
( time cmake --build build -j 16 --target agio_eval agio_tool ) > $OUT/build.log 2>&1; echo "build rc $?"; tail -3 $OUT/build.log; grep -m3 -E "error" $OUT/build.log
A=$(find build -maxdepth 2 -type f -name agio -perm -u+x | head -1); echo "tool: $A"
for r in 1 2 3; do
  timeout 60 $A bench io --experiments ram --io-bytes 65536 --outstanding 4096,16384 --ops write --controller-threads 16 --seconds 0.15 --out $OUT/writes-64k-run$r.json 2>/dev/null | grep -v "^\[" | tail -8
done
E=./build/eval/agio-eval
for r in 1 2; do
( time timeout 200 $E dlrm --experiments configs --configs 1 --cache-mib 1536 --host-tier-mib 8192 --batches 128 --warm --modes async_host_tier_direct,sync_host_tier_direct,sync_host_tier --out $OUT/dlrm-direct-hint-run$r.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/dlrm-direct-hint-run$r.log; grep -vE "^registers" $OUT/dlrm-direct-hint-run$r.log | tail -14
done
