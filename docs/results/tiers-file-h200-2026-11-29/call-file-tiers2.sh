#!/bin/bash
# The host tier's random lines and the graph kernels' tiers on file: stores (real I/O).
set -u
source scripts/deps.sh
cmake --build build -j 16 --target agio_eval > $OUT/build.log 2>&1; echo "build rc $?"
nvidia-smi -L
E=./build/eval/agio-eval
D=/var/tmp/agio-stores; mkdir -p $D; rm -f $D/dlrm*.bin
( time timeout 150 $E host-tier --experiments tiers --store "file:$D/host-tier.bin?create=1G&lba=4096" --out $OUT/host-tier-file.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/host-tier-file.log; tail -14 $OUT/host-tier-file.log
( time timeout 400 $E graph-tiers --graphs uniform --store "file:$D/graph.bin?create=2G&lba=4096" --out $OUT/graph-tiers-uniform-file.json ) 2>&1 | tr '\r' '\n' | grep -v '^\[#' > $OUT/graph-tiers-file.log; tail -30 $OUT/graph-tiers-file.log
