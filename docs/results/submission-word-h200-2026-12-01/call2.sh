#!/bin/bash
# Session 16, call 2: main (base), the tail and lock in one word (new), and on top of it
# v1 (no acquire fence when the tail moves over the group's own entries only), v2 (the entry
# written with four 16-byte weak stores), v3 (both): trip and depth, alternately.
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
build .scratch/s16/base-src /tmp/b-base &
build . /tmp/b-new &
build .scratch/s16/v1-src /tmp/b-v1 &
wait
build .scratch/s16/v2-src /tmp/b-v2 &
build .scratch/s16/v3-src /tmp/b-v3 &
wait
mkdir -p /tmp/r
for r in 1 2 3; do
  for v in base new v1 v2 v3; do
    [ $(elapsed) -gt 500 ] && break 2
    echo "=== trip $v run $r at $(elapsed) s" >> $log
    timeout 40 /tmp/b-$v/tools/agio bench io --experiments trip --seconds 0.25 --out /tmp/r/trip-$v-run$r.json > /tmp/r/trip-$v-run$r.log 2>&1
    echo "rc $?" >> $log
    grep -E "^trip-ram|trip [0-9.]+ us|legs|flag round trip" /tmp/r/trip-$v-run$r.log | head -6 >> $log
    echo "=== depth $v run $r at $(elapsed) s" >> $log
    timeout 40 /tmp/b-$v/tools/agio bench io --experiments ram --io-bytes 4096 --outstanding 1,4,16,64,4096 --ops read,write --controller-threads 16 --seconds 0.1 --out /tmp/r/depth-$v-run$r.json > /tmp/r/depth-$v-run$r.log 2>&1
    echo "rc $?" >> $log
    grep -E "agio " /tmp/r/depth-$v-run$r.log >> $log
  done
done
cp $log /tmp/r/
tar czf $OUT/runs.tgz -C /tmp/r .
tail -c 3000 $log
