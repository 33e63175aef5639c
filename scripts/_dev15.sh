source scripts/deps.sh; export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
which ninja; nproc
printf '#!/bin/bash\ns=$EPOCHREALTIME; "$@"; r=$?; e=$EPOCHREALTIME; echo "$(python3 -c "print(round($e-$s,1))") ${@: -1}" >> '$OUT'/tu.log; exit $r\n' > /tmp/tu.sh; chmod +x /tmp/tu.sh
s=$EPOCHREALTIME; cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DAGIO_BUILD_EVAL=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_COMPILER_LAUNCHER=/tmp/tu.sh -DCMAKE_CXX_COMPILER_LAUNCHER=/tmp/tu.sh > $OUT/configure.log 2>&1
echo "configure seconds=$(python3 -c "print($EPOCHREALTIME-$s)")"
s=$EPOCHREALTIME; cmake --build build-gpu -j16 > $OUT/build.log 2>&1; echo "build rc=$? seconds=$(python3 -c "print($EPOCHREALTIME-$s)")" | tee $OUT/build_time.txt
sort -rn $OUT/tu.log | head -6
build-gpu/tests/agio_gpu_tests > $OUT/gpu_tests.log 2>&1; tail -3 $OUT/gpu_tests.log
build-gpu/tools/agio soak --backend gpu --ops 4000000 --seconds 10 --dir /dev/shm 2>&1 | tail -1
