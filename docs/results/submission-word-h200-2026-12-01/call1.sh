#!/bin/bash
# Session 16, call 1: the lone submission's phases (a throwaway build of main with stamps), and
# main against the tail and the doorbell's lock in one word (this tree): trip and depth.
set -u
source scripts/deps.sh
start=$(date +%s)
log=$OUT/log.txt
elapsed() { echo $(( $(date +%s) - start )); }
nvidia-smi --query-gpu=name --format=csv,noheader >> $log
build() {  # src dir, build dir
  cmake -S $1 -B $2 -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_TESTS=OFF > /tmp/cfg-$(basename $2).log 2>&1 || tail -20 /tmp/cfg-$(basename $2).log >> $log
  cmake --build $2 -j 16 --target agio_tool > /tmp/build-$(basename $2).log 2>&1
  echo "build $2 rc $? at $(elapsed) s" >> $log
  grep -m3 -A6 "error" /tmp/build-$(basename $2).log | head -30 >> $log
}
build .scratch/s16/probe-src /tmp/b-probe &
build .scratch/s16/base-src /tmp/b-base &
wait
build . /tmp/b-new
for c in service waiters; do
  opt=""; [ $c = waiters ] && opt="--completion waiters"
  echo "=== probe trip $c at $(elapsed) s" >> $log
  timeout 60 /tmp/b-probe/tools/agio bench io --experiments trip --seconds 0.25 $opt --out $OUT/probe-trip-$c.json > $OUT/probe-trip-$c.log 2>&1
  echo "rc $?" >> $log
  grep -E "^PROBE|^trip-|trip [0-9.]+ us|legs|flag round trip" $OUT/probe-trip-$c.log >> $log
done
for r in 1 2 3; do
  for v in base new; do
    [ $(elapsed) -gt 540 ] && break 2
    echo "=== trip $v run $r at $(elapsed) s" >> $log
    timeout 50 /tmp/b-$v/tools/agio bench io --experiments trip --seconds 0.25 --out $OUT/trip-$v-run$r.json > $OUT/trip-$v-run$r.log 2>&1
    echo "rc $?" >> $log
    grep -E "^trip-|trip [0-9.]+ us|legs|flag round trip" $OUT/trip-$v-run$r.log >> $log
    echo "=== depth $v run $r at $(elapsed) s" >> $log
    timeout 60 /tmp/b-$v/tools/agio bench io --experiments ram --io-bytes 4096 --outstanding 1,4,16,64,4096 --ops read,write --controller-threads 16 --seconds 0.1 --out $OUT/depth-$v-run$r.json > $OUT/depth-$v-run$r.log 2>&1
    echo "rc $?" >> $log
    grep -E "agio " $OUT/depth-$v-run$r.log >> $log
  done
done
cat $log
