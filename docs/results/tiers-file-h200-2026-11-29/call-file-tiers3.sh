#!/bin/bash
# Second runs on file: stores, and the Kronecker graph's tiers.
set -u
source scripts/deps.sh
cmake --build build -j 16 --target agio_eval > $OUT/build.log 2>&1; echo "build rc $?"
E=./build/eval/agio-eval
D=/var/tmp/agio-stores; mkdir -p $D
( time timeout 200 $E graph-tiers --graphs kron --store "file:$D/graph-kron.bin?create=2G&lba=4096" --out $OUT/graph-tiers-kron-file.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/graph-tiers-kron-file.log; grep -E "three tiers faster|two_tiers|three_tiers|real" $OUT/graph-tiers-kron-file.log
( time timeout 100 $E host-tier --experiments tiers --store "file:$D/host-tier.bin?create=1G&lba=4096" --out $OUT/host-tier-file-run2.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/host-tier-file-run2.log; grep -E "host_tier |two_tiers|two tiers /" $OUT/host-tier-file-run2.log
( time timeout 150 $E graph-tiers --graphs uniform --store "file:$D/graph.bin?create=2G&lba=4096" --out $OUT/graph-tiers-uniform-file-run2.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/graph-tiers-uniform-file-run2.log; grep -E "three tiers faster|two_tiers|three_tiers" $OUT/graph-tiers-uniform-file-run2.log
rm -f $D/graph*.bin $D/host-tier.bin
S="file:$D/dlrm0.bin?create=2G&lba=4096,file:$D/dlrm1.bin?create=2G&lba=4096,file:$D/dlrm2.bin?create=2G&lba=4096,file:$D/dlrm3.bin?create=2G&lba=4096"
common="dlrm --experiments configs --configs 1 --cache-mib 1536 --host-tier-mib 8192 --modes async,sync,async_host_tier,sync_host_tier"
( time timeout 250 $E $common --batches 128 --warm --store "$S" --out $OUT/dlrm-host-tier-file-warm-run2.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/warm-file-run2.log; grep -E "config1|real" $OUT/warm-file-run2.log
