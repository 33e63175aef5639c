#!/bin/bash
# The full evaluation with the build of call2.sh (default staging areas, 32 KiB): figures 4,
# 7-10 and 7 on a file: store, with the write cases under compute-sanitizer (the earlier run's
# script), then figures 11 and 12.
bash docs/results/write-staging-h200-2026-11-30/call4.sh 2>&1 | head -60
mkdir -p /tmp/ev && timeout 150 build/eval/agio-eval evaluation --full --figures 11,12 --out-dir /tmp/ev > /tmp/ev/evaluation-figures-11-12.log 2>&1
echo "rc 11,12 $?"
tar czf $OUT/ev-11-12.tgz -C /tmp/ev .
grep -aE "check|FAIL|register" /tmp/ev/evaluation-figures-11-12.log | tail -20
