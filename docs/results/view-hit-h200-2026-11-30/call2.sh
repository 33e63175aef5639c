#!/bin/bash
# Hit-path probe, call 2: main's headers (A) against counters added per lane (B); the view with
# a hit-only fast path in front, in both.
set -u
source scripts/deps.sh
start=$(date +%s)
mkdir -p /tmp/incB && cp -a include /tmp/incB/ && (cd /tmp/incB && patch -p1 -s < /work/main/.scratch/hitprobe/count-per-lane.patch 2>/dev/null || patch -d /tmp/incB -p1 -s < $PWD/.scratch/hitprobe/count-per-lane.patch)
grep -c "std::uint32_t n = 1" /tmp/incB/include/agio/cache/cache_state.hpp
cmake -S .scratch/hitprobe -B /tmp/hpA -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/cfgA.log 2>&1 || tail /tmp/cfgA.log
cmake -S .scratch/hitprobe -B /tmp/hpB -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHP_INCLUDE=/tmp/incB/include > /tmp/cfgB.log 2>&1 || tail /tmp/cfgB.log
( cmake --build /tmp/hpA -j 8 --target hitprobe > /tmp/bA.log 2>&1; echo "A rc $?" ) &
( cmake --build /tmp/hpB -j 8 --target hitprobe > /tmp/bB.log 2>&1; echo "B rc $?" ) &
wait; echo "built at $(( $(date +%s) - start )) s"; grep -h error -A3 /tmp/bA.log /tmp/bB.log | head
for r in 1 2; do
  for v in A B; do echo "== $v run $r"; /tmp/hp$v/hitprobe 5 2>&1 | tee -a $OUT/timings-$v.txt; done
done
echo "done at $(( $(date +%s) - start )) s"
