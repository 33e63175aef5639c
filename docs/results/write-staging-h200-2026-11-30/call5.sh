#!/bin/bash
# Figures 11 and 12 of the full evaluation with the build of call3.sh.
mkdir -p /tmp/ev && timeout 240 build/eval/agio-eval evaluation --full --figures 11,12 --out-dir /tmp/ev > /tmp/ev/evaluation-figures-11-12.log 2>&1; echo "rc $?"; tar czf $OUT/ev-11-12.tgz -C /tmp/ev .; grep -aE "check|FAIL|register" /tmp/ev/evaluation-figures-11-12.log | tail -20
