#!/bin/bash
# Figures 4, 7-10 and 7-file of the full evaluation, on the machine call 2 left warm (its build).
set -u; source scripts/deps.sh; start=$(date +%s)
mkdir -p /run/udev/data && printf 'E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=ext4\n' > /run/udev/data/b254:0
ls build/eval/agio-eval > /dev/null 2>&1 || cmake --build build -j 16 --target agio_eval > /tmp/build.log 2>&1
mkdir -p /tmp/ev
timeout 540 build/eval/agio-eval evaluation --full --figures 4,7-10,7-file --out-dir /tmp/ev > /tmp/ev/evaluation-figures-4-7-10-7-file.log 2>&1
echo "figures 4,7-10,7-file rc $? at $(( $(date +%s) - start )) s" > $OUT/log.txt
tar czf $OUT/ev-4-7-10.tgz -C /tmp/ev .
grep -aE "ok|FAIL|speedup|check|x " /tmp/ev/evaluation-figures-4-7-10-7-file.log | tail -60 >> $OUT/log.txt
cat $OUT/log.txt
