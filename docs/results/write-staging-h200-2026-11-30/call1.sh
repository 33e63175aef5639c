#!/bin/bash
# Writes staged with loads in flight where the direction is known when compiled: builds the
# agio tool three ways (base: main's io_handle.hpp; s4: 4 loads out; s8: 8 loads out, this
# tree) and runs the trip benchmark alternately, then deep reads and writes if time remains.
set -u
source scripts/deps.sh
start=$(date +%s)
log=$OUT/log.txt
elapsed() { echo $(( $(date +%s) - start )); }
mkdir -p build-v/base build-v/s4
for v in base s4; do
  tar --exclude=./build --exclude=./build-v --exclude=./build-registers --exclude=./.deps --exclude=./docs \
      --exclude=./.scratch --exclude=./.whl --exclude=./.git -cf - . | tar -xf - -C build-v/$v
done
cp .scratch/session14/io_handle.base.hpp  # main at 081fb27: build-v/base/include/agio/io/io_handle.hpp
sed -i 's/write_stage_loads = 8;/write_stage_loads = 4;/' build-v/s4/include/agio/io/io_handle.hpp
grep -c "write_stage_loads = 4" build-v/s4/include/agio/io/io_handle.hpp >> $log
build() {
  cmake -S $1 -B $2 -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_COMMIT=$3 > /tmp/cfg-$3.log 2>&1 || tail -5 /tmp/cfg-$3.log >> $log
  cmake --build $2 -j $4 --target agio_tool > /tmp/build-$3.log 2>&1
  echo "build $3 rc $? at $(elapsed) s" >> $log
  grep -m3 -A6 "error" /tmp/build-$3.log >> $log
}
build . build s8 6 &
build build-v/base build-v/base/build base 5 &
build build-v/s4 build-v/s4/build s4 5 &
wait
declare -A bin=([base]=build-v/base/build/tools/agio [s4]=build-v/s4/build/tools/agio [s8]=build/tools/agio)
mkdir -p /tmp/r
for r in 1 2 3; do
  for v in base s4 s8; do
    [ $(elapsed) -gt 560 ] && break 2
    echo "=== trip $v run $r at $(elapsed) s" >> $log
    timeout 40 ${bin[$v]} bench io --experiments trip --seconds 0.25 --out /tmp/r/trip-$v-run$r.json > /tmp/r/trip-$v-run$r.log 2>&1
    echo "rc $?" >> $log
    grep -E "^trip-|trip [0-9.]+ us|legs|flag round trip" /tmp/r/trip-$v-run$r.log >> $log
  done
done
tar czf $OUT/runs.tgz -C /tmp/r .
cat $log
