#!/bin/bash
# DLRM configuration 1, three tiers against two, on file: stores (real I/O on the VM's disk).
set -u
source scripts/deps.sh
df -h / /var/tmp $PWD | tee $OUT/df.txt
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > $OUT/cfg.log 2>&1
( time cmake --build build -j 16 --target agio_eval ) > $OUT/build.log 2>&1; echo "build rc $?"; tail -3 $OUT/build.log
nvidia-smi -L
E=./build/eval/agio-eval
D=/var/tmp/agio-stores; mkdir -p $D
S="file:$D/dlrm0.bin?create=2G&lba=4096,file:$D/dlrm1.bin?create=2G&lba=4096,file:$D/dlrm2.bin?create=2G&lba=4096,file:$D/dlrm3.bin?create=2G&lba=4096"
common="dlrm --experiments configs --configs 1 --cache-mib 1536 --host-tier-mib 8192 --modes async,sync,async_host_tier,sync_host_tier"
( time timeout 430 $E $common --batches 128 --warm --store "$S" --out $OUT/dlrm-host-tier-file-warm.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/warm-file.log; tail -25 $OUT/warm-file.log
