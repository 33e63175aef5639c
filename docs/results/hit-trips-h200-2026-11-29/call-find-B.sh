#!/bin/bash
# The tag loads of a set in one trip and the policy's hint beside the tag check (working tree, N)
# against main (A): cache-overhead alternately.
set -u
source scripts/deps.sh
nvidia-smi -L
start=$(date +%s)
mkdir -p /tmp/A && tar -xf .scratch/main.tar -C /tmp/A
CF="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF"
for d in /tmp/A .; do (cd $d && rm -rf build && cmake -S . -B build $CF > /tmp/cfg.log 2>&1); done
for d in /tmp/A .; do ( cmake --build $d/build -j 8 --target agio_eval > $d/build.log 2>&1; echo "build $d rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A5 error $d/build.log ) & done
wait
for r in 1 2; do
  for v in A N; do
    E=./build/eval/agio-eval; [ $v = A ] && E=/tmp/A/build/eval/agio-eval
    timeout 150 $E cache-overhead --out $OUT/overhead-$v-run$r.json > /tmp/o-$v-$r.log 2>/tmp/o-$v-$r.err
    echo "== $v run $r rc $? at $(( $(date +%s) - start )) s"; grep -E " (native|cache|cold) " /tmp/o-$v-$r.log; tail -2 /tmp/o-$v-$r.err | grep -v "^\["
  done
done
for v in A N; do
  E=./build/eval/agio-eval; [ $v = A ] && E=/tmp/A/build/eval/agio-eval
  timeout 100 $E cache-overhead --kernels vector_mean,bfs,spmv --out $OUT/overhead-$v-run3.json > /tmp/o-$v-3.log 2>/tmp/o-$v-3.err
  echo "== $v run 3 rc $? at $(( $(date +%s) - start )) s"; grep -E " (native|cache|cold) " /tmp/o-$v-3.log
done
