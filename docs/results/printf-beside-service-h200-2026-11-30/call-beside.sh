set -u
cd .scratch/beside && nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/beside beside.cu 2>&1 | grep -v Wno-deprecated | head
for m in EAGER LAZY; do
  echo "== CUDA_MODULE_LOADING=$m"
  for k in plain printf malloc assert; do
    for p in none printf-kernel printf-limit malloc-limit malloc-kernel assert-kernel all; do
      CUDA_MODULE_LOADING=$m timeout 20 /tmp/beside $k $p | grep RESULT || echo "kernel $k primed $p: rc $?"
    done
  done
done
