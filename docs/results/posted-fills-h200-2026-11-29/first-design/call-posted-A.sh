#!/bin/bash
# Fills posted to the completion service (working tree, "new") against main (HEAD, "main"):
# cache_overhead with its cold rows, alternately, then Figure 11 (graph kernels) for each.
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
    echo "== cache-overhead $b run $r at $(( $(date +%s) - start )) s"; grep -E "native|cache |cold" /tmp/overhead-$b-run$r.log
  done
done
for b in new main; do
  E=./build/eval/agio-eval; [ $b = main ] && E=/tmp/main/build/eval/agio-eval
  timeout 200 $E evaluation --full --figures 11 --out-dir /tmp/fig11-$b > /tmp/fig11-$b.log 2>&1
  echo "== figure 11 $b rc $? at $(( $(date +%s) - start )) s"; grep -v "^\[" /tmp/fig11-$b.log | tail -45
done
mkdir -p $OUT/fig11 && cp /tmp/fig11-new/*.json $OUT/fig11/ 2>/dev/null; cp /tmp/fig11-new.log /tmp/fig11-main.log $OUT/fig11/ 2>/dev/null
