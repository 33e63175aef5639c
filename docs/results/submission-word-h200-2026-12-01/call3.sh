#!/bin/bash
# Session 16, call 3: the GPU suite built on the build machine from this tree (every case,
# the six host-tier shadow runs included), with the completion service; then compute-sanitizer
# (waiters) over the short host-tier shadow runs and the cases that submit from many warps; then Figure 4 from agio-eval built here meanwhile.
set -u
source scripts/deps.sh
start=$(date +%s)
log=$OUT/log.txt
elapsed() { echo $(( $(date +%s) - start )); }
nvidia-smi --query-gpu=name --format=csv,noheader >> $log
mkdir -p /tmp/sb/tests && gunzip -c .scratch/s16/bin/agio_gpu_tests.gz > /tmp/sb/tests/agio_gpu_tests && chmod +x /tmp/sb/tests/agio_gpu_tests
export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$PWD/.scratch/s16/bin/lib"
ldd /tmp/sb/tests/agio_gpu_tests | grep -i "not found" >> $log
( cmake -S . -B /tmp/be -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > /tmp/cfg-e.log 2>&1
  nice cmake --build /tmp/be -j 8 --target agio_eval > /tmp/build-e.log 2>&1
  echo "eval build rc $? at $(elapsed) s" >> $log ) &
echo "=== suite (service) at $(elapsed) s" >> $log
timeout 280 /tmp/sb/tests/agio_gpu_tests --gtest_filter='-GpuLaunch.JobThatFinds*' > $OUT/suite.log 2>&1
echo "suite rc $? at $(elapsed) s" >> $log
grep -E "^\[  FAILED|^\[  PASSED|^\[  SKIPPED|tests ran|HostTier.*OK" $OUT/suite.log | head -40 >> $log
echo "=== sanitize at $(elapsed) s" >> $log
F='GpuCacheShadowHostTier*.Short*:GpuCacheShadowHostTierDemotionFaults.Short*:*GpuRoundtrip*:GpuWriteStaging.*:GpuFigure1.*:GpuStop.*:GpuWait.*:*GpuFaults*:*GpuLbaAtomicity*'
AGIO_BUILD_DIR=/tmp/sb AGIO_SANITIZE_SECONDS=140 bash scripts/gpu-sanitize.sh "$F" > $OUT/sanitize.log 2>&1
echo "sanitize rc $? at $(elapsed) s" >> $log
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|^\[ +(PASSED|FAILED) |did not finish|tests ran" $OUT/sanitize.log >> $log
grep -c "^\[       OK" $OUT/sanitize.log >> $log
wait
if [ $(elapsed) -lt 470 ] && [ -x /tmp/be/eval/agio-eval ]; then
  echo "=== figure 4 at $(elapsed) s" >> $log
  mkdir -p /tmp/ev && timeout $((585 - $(elapsed))) /tmp/be/eval/agio-eval evaluation --full --figures 4 --out-dir /tmp/ev > /tmp/ev/evaluation-figure-4.log 2>&1
  echo "figure 4 rc $? at $(elapsed) s" >> $log
  tail -15 /tmp/ev/evaluation-figure-4.log >> $log
  tar czf $OUT/evaluation.tgz -C /tmp/ev .
fi
cat $log
