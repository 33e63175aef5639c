#!/bin/bash
# Session 16, call 4: memcheck (waiters) over the LBA-atomicity cases the last call's bound
# cut off, beside a build of agio-eval; then the evaluation's DLRM and graph figures.
set -u
source scripts/deps.sh
start=$(date +%s)
log=$OUT/log.txt
elapsed() { echo $(( $(date +%s) - start )); }
nvidia-smi --query-gpu=name --format=csv,noheader >> $log
mkdir -p /tmp/sb/tests && gunzip -c .scratch/s16/bin/agio_gpu_tests.gz > /tmp/sb/tests/agio_gpu_tests && chmod +x /tmp/sb/tests/agio_gpu_tests
export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$PWD/.scratch/s16/bin/lib"
( cmake -S . -B /tmp/be -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF > /tmp/cfg-e.log 2>&1
  cmake --build /tmp/be -j 14 --target agio_eval > /tmp/build-e.log 2>&1
  echo "eval build rc $? at $(elapsed) s" >> $log ) &
CUDA_MODULE_LOADING=EAGER AGIO_TEST_COMPLETION=waiters timeout 130 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 /tmp/sb/tests/agio_gpu_tests --gtest_filter='*GpuLbaAtomicity*' > $OUT/memcheck-lba.log 2>&1
echo "memcheck lba rc $? at $(elapsed) s" >> $log
grep -E "ERROR SUMMARY|LEAK SUMMARY|^\[ +(PASSED|FAILED) |^\[       OK" $OUT/memcheck-lba.log >> $log
wait
mkdir -p /tmp/ev
if [ -x /tmp/be/eval/agio-eval ]; then
  echo "=== figures 7-10 at $(elapsed) s" >> $log
  timeout $((560 - $(elapsed) - 110)) /tmp/be/eval/agio-eval evaluation --full --figures 7-10 --out-dir /tmp/ev > /tmp/ev/evaluation-figures-7-10.log 2>&1
  echo "figures 7-10 rc $? at $(elapsed) s" >> $log
  tail -8 /tmp/ev/evaluation-figures-7-10.log >> $log
  echo "=== figures 11,12 at $(elapsed) s" >> $log
  timeout $((585 - $(elapsed))) /tmp/be/eval/agio-eval evaluation --full --figures 11,12 --out-dir /tmp/ev > /tmp/ev/evaluation-figures-11-12.log 2>&1
  echo "figures 11,12 rc $? at $(elapsed) s" >> $log
  tail -8 /tmp/ev/evaluation-figures-11-12.log >> $log
  tar czf $OUT/evaluation.tgz -C /tmp/ev .
fi
cat $log
