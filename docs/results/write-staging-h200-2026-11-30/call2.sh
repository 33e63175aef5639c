#!/bin/bash
# Depth runs, reads and writes, 4 KiB and 64 KiB, three builds alternately (built by call1.sh).
set -u
start=$(date +%s)
log=$OUT/log.txt
elapsed() { echo $(( $(date +%s) - start )); }
declare -A bin=([base]=build-v/base/build/tools/agio [s4]=build-v/s4/build/tools/agio [s8]=build/tools/agio)
mkdir -p /tmp/d
for r in 1 2; do
  for v in base s4 s8; do
    [ $(elapsed) -gt 500 ] && break 2
    echo "=== depth $v run $r at $(elapsed) s" >> $log
    timeout 90 ${bin[$v]} bench io --experiments ram --io-bytes 4096,65536 --outstanding 1,4,16,4096,16384 --ops read,write --controller-threads 16 --seconds 0.1 --out /tmp/d/depth-$v-run$r.json > /tmp/d/depth-$v-run$r.log 2>&1
    echo "rc $?" >> $log
    grep -E "^ram|IOPS|GB/s" /tmp/d/depth-$v-run$r.log | grep -v "^ *$" >> $log
  done
done
tar czf $OUT/depth.tgz -C /tmp/d .
cat $log
