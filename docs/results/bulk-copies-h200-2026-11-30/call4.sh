#!/bin/bash
# Reads at 16 and 64 in flight with staging areas of 0 and 32 KiB, a warp's lanes at one queue
# (the default) and spread one a queue waiting together (lanes_per_queue 1, wait_together_ns
# 8000), alternately; then file: reads at shallow depths with 0 and 32 KiB.
set -u
source scripts/deps.sh
start=$(date +%s)
log=$OUT/log.txt
elapsed() { echo $(( $(date +%s) - start )); }
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/cfg.log 2>&1 || tail -20 /tmp/cfg.log >> $log
cmake --build build -j 16 --target agio_tool > /tmp/build.log 2>&1
echo "build rc $? at $(elapsed) s" >> $log
mkdir -p /tmp/s
for r in 1 2; do
  for lanes in 32 1; do
    for v in 0 32768; do
      [ $(elapsed) -gt 230 ] && break 3
      wt=0; [ $lanes = 1 ] && wt=8000
      echo "=== spread lanes $lanes staging $v run $r at $(elapsed) s" >> $log
      timeout 40 build/tools/agio bench io --experiments ram --io-bytes 4096,65536 --outstanding 16,64 --ops read --controller-threads 16 --seconds 0.1 --lanes-per-queue $lanes --wait-together-ns $wt --service-staging-bytes $v --out /tmp/s/spread-l$lanes-s$v-run$r.json > /tmp/s/spread-l$lanes-s$v-run$r.log 2>&1
      echo "rc $?" >> $log
      grep -E "agio " /tmp/s/spread-l$lanes-s$v-run$r.log >> $log
    done
  done
done
for v in 0 32768; do
  [ $(elapsed) -gt 250 ] && break
  echo "=== file staging $v at $(elapsed) s" >> $log
  timeout 45 build/tools/agio bench io --experiments file --io-bytes 4096 --outstanding 1,4,16 --ops read --controller-threads 16 --seconds 0.25 --service-staging-bytes $v --out /tmp/s/file-s$v.json > /tmp/s/file-s$v.log 2>&1
  echo "rc $?" >> $log
  grep -E "^file" /tmp/s/file-s$v.log >> $log
done
tar czf $OUT/spread.tgz -C /tmp/s .
cat $log
