#!/bin/bash
# Pricing: pins by atomic add (P = working tree + add-pin.patch, preloaded rows only) against the
# working tree (N), cache-overhead alternately.
set -u
source scripts/deps.sh
start=$(date +%s)
mkdir -p /tmp/P && cp -r . /tmp/P && (cd /tmp/P && patch -p1 < .scratch/add-pin.patch > /dev/null && echo P patched)
CF="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF"
for d in . /tmp/P; do (cd $d && rm -rf build && cmake -S . -B build $CF > /tmp/cfg.log 2>&1); done
for d in . /tmp/P; do ( cmake --build $d/build -j 8 --target agio_eval > $d/build.log 2>&1; echo "build $d rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A5 error $d/build.log ) & done
wait
for r in 1 2; do
  for v in N P; do
    E=./build/eval/agio-eval; [ $v = P ] && E=/tmp/P/build/eval/agio-eval
    K=vector_mean,bfs,spmv,warp_runs; [ $v = N ] && [ $r = 2 ] && K=vector_mean,bfs,spmv
    timeout 120 $E cache-overhead --kernels $K --out $OUT/overhead-$v-run$r.json > /tmp/o-$v-$r.log 2>/tmp/o-$v-$r.err
    echo "== $v run $r rc $? at $(( $(date +%s) - start )) s"; grep -E " (native|cache) |GB/s" /tmp/o-$v-$r.log | grep -v bam_style; tail -2 /tmp/o-$v-$r.err | grep -v "^\["
  done
done
