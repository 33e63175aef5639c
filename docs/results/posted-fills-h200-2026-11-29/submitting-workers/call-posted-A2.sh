#!/bin/bash
# Fills posted to submitting workers of the service (working tree, "new") against main (HEAD):
# cache_overhead with its cold rows, alternately; Figure 11 on new; the quick Figures 4, 7-10 on both.
set -u
source scripts/deps.sh
nvidia-smi -L
start=$(date +%s)
mkdir -p /tmp/main && tar -xf .scratch/main.tar -C /tmp/main
CF="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF"
cmake -S . -B build $CF > /tmp/cfg.log 2>&1
(cd /tmp/main && cmake -S . -B build $CF > /tmp/cfg-main.log 2>&1)
( cmake --build build -j 8 --target agio_eval > /tmp/build.log 2>&1; echo "new build rc $? at $(( $(date +%s) - start )) s" ) &
( cmake --build /tmp/main/build -j 8 --target agio_eval > /tmp/build-main.log 2>&1; echo "main build rc $? at $(( $(date +%s) - start )) s" ) &
wait
grep -m3 -B2 -A8 "error" /tmp/build.log /tmp/build-main.log | head -40
for r in 1 2; do
  for b in main new; do
    E=./build/eval/agio-eval; [ $b = main ] && E=/tmp/main/build/eval/agio-eval
    timeout 150 $E cache-overhead --out $OUT/overhead-$b-run$r.json 2>/dev/null | grep -v "^\[" > /tmp/overhead-$b-run$r.log
    echo "== cache-overhead $b run $r at $(( $(date +%s) - start )) s"; grep -E " (cache|cold) " /tmp/overhead-$b-run$r.log | grep -v warp_runs
  done
done
timeout 200 ./build/eval/agio-eval evaluation --full --figures 11 --out-dir /tmp/fig11-new > /tmp/fig11-new.log 2>&1
echo "== figure 11 new rc $? at $(( $(date +%s) - start )) s"; grep -E "^(bfs|spmv|cc) +async|^kron:|^uniform:" /tmp/fig11-new.log
for b in new main; do
  E=./build/eval/agio-eval; [ $b = main ] && E=/tmp/main/build/eval/agio-eval
  timeout 120 $E evaluation --quick --figures 4,7-10 --out-dir /tmp/q-$b > /tmp/q-$b.log 2>&1
  echo "== quick 4,7-10 $b rc $? at $(( $(date +%s) - start )) s"; grep -v "^\[" /tmp/q-$b.log | grep -iE "ms|x |ok|fail|ratio|async|sync" | head -30
done
mkdir -p $OUT/logs && cp /tmp/fig11-new.log /tmp/q-new.log /tmp/q-main.log $OUT/logs/ 2>/dev/null; cp /tmp/fig11-new/graphs.json $OUT/logs/ 2>/dev/null
