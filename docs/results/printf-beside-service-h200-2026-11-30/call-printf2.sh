#!/bin/bash
# The printf/heap set-up as kept: GpuLaunch, GpuOnDemand and GpuCache with the service and with
# waiters retiring; then the set-up skipped (main's behaviour) for the new test, which must now
# fail in about 10 s rather than hang.
set -u
source scripts/deps.sh
start=$(date +%s)
python3 - tests/CMakeLists.txt <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = s.index("add_library(agio_gpu_test_cases OBJECT"); b = s.index(")", a)
s = s[:a] + "add_library(agio_gpu_test_cases OBJECT gpu/test_gpu_launch.cu gpu/test_gpu_on_demand.cu gpu/test_gpu_cache.cu" + s[b:]
s = s.replace("agio_gpu_test_cases agio_host_tier_shadow_runs GTest::gtest_main", "agio_gpu_test_cases agio_shadow_runs GTest::gtest_main")
open(p, "w").write(s)
PY
cmake -S . -B /tmp/Q/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DAGIO_BUILD_EVAL=OFF -DAGIO_BUILD_TESTS=ON > /tmp/cfgQ.log 2>&1 || tail -5 /tmp/cfgQ.log
cmake --build /tmp/Q/b -j 16 --target agio_gpu_tests > /tmp/buildQ.log 2>&1; echo "build rc $? at $(( $(date +%s) - start )) s"; grep -m3 -A8 "error" /tmp/buildQ.log | head -20
T=/tmp/Q/b/tests/agio_gpu_tests
for m in service waiters; do
  AGIO_TEST_COMPLETION=$m timeout 150 $T > $OUT/suite-$m.log 2>&1; echo "suite ($m) rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|^\[  SKIPPED" $OUT/suite-$m.log | head
done
python3 - src/runtime/gpu_platform.cu <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
old = "  void set_up_device_printf_and_heap() override {\n"
assert old in s
s = s.replace(old, old + "    if (std::getenv(\"AGIO_SKIP_SET_UP\") != nullptr) return;\n", 1)
open(p, "w").write(s)
PY
cmake --build /tmp/Q/b -j 16 --target agio_gpu_tests > /tmp/buildQ2.log 2>&1; echo "rebuild rc $? at $(( $(date +%s) - start )) s"
s0=$(date +%s)
AGIO_SKIP_SET_UP=1 timeout 120 $T --gtest_filter='GpuLaunch.JobsContaining*' > $OUT/launch-noop.txt 2>&1; echo "GpuLaunch (set-up skipped) rc $? after $(( $(date +%s) - s0 )) s"; grep -E "FAILED|OK \]" $OUT/launch-noop.txt | head -3
echo "at $(( $(date +%s) - start )) s"
