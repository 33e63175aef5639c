#!/bin/bash
# The evaluation's transport figures (4, 7-10, 7 on a file: store) with the build of call3.sh,
# then the write cases (parameterized names) under compute-sanitizer, waiters retiring.
set -u
source scripts/deps.sh
start=$(date +%s)
log=$OUT/log.txt
mkdir -p /run/udev/data && printf 'E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=ext4\n' > /run/udev/data/b254:0
mkdir -p /tmp/ev
timeout 420 build/eval/agio-eval evaluation --full --figures 4,7-10,7-file --out-dir /tmp/ev > /tmp/ev/evaluation-figures-4-7-10.log 2>&1
echo "figures 4,7-10,7-file rc $? at $(( $(date +%s) - start )) s" >> $log
grep -aiE "check|speedup|ratio|fraction|FAIL|ideal" /tmp/ev/evaluation-figures-4-7-10.log | tail -40 >> $log
tar czf $OUT/ev-4-7-10.tgz -C /tmp/ev .
left=$(( 575 - ($(date +%s) - start) ))
if [ $left -gt 30 ]; then
  AGIO_BUILD_DIR=build AGIO_SANITIZE_SECONDS=$(( left / 2 - 3 )) bash scripts/gpu-sanitize.sh 'GpuWriteStaging.*:*GpuRoundtrip.*ram_gpu_warps:*GpuLbaAtomicity.SmallBlocks/gpu_warps' > $OUT/sanitize.log 2>&1
  echo "sanitize rc $? at $(( $(date +%s) - start )) s" >> $log
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|^\[ +(OK|PASSED|FAILED) |did not finish" $OUT/sanitize.log >> $log
fi
cat $log
