#!/bin/bash
# The hit path with the fill's submission posted to a ring (posted_patch.py) against main's
# build, cache_overhead's preloaded rows, alternately on one machine.
set -u
source scripts/deps.sh
nvidia-smi -L
mkdir -p /tmp/v && tar --exclude=./build --exclude=./.deps --exclude=./.whl -cf - . | tar -xf - -C /tmp/v
python3 .scratch/posted_patch.py /tmp/v
CF="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=ON -DAGIO_BUILD_TESTS=OFF"
cmake -S . -B build $CF > $OUT/cfg.log 2>&1
(cd /tmp/v && cmake -S . -B build $CF > $OUT/cfg-v.log 2>&1)
( time cmake --build build -j 8 --target agio_eval ) > $OUT/build.log 2>&1 &
( time cmake --build /tmp/v/build -j 8 --target agio_eval ) > $OUT/build-v.log 2>&1 &
wait
tail -3 $OUT/build.log; tail -3 $OUT/build-v.log; grep -m3 error $OUT/build.log $OUT/build-v.log
for r in 1 2 3; do
  for b in main posted; do
    E=./build/eval/agio-eval; [ $b = posted ] && E=/tmp/v/build/eval/agio-eval
    timeout 150 $E cache-overhead --kernels vector_mean,bfs,spmv --out /tmp/overhead-$b-run$r.json 2>/dev/null | grep -v "^\[" > /tmp/overhead-$b-run$r.log
    echo "== $b run $r"; grep -E "native|cache " /tmp/overhead-$b-run$r.log
  done
done
cp /tmp/overhead-*.log $OUT/ 2>/dev/null
