# Throwaway experiment, on top of hits_only_patch.py: job kernels launched with the dynamic
# shared memory AGIO_EXPERIMENT_SMEM names (bytes), so that fewer blocks fit an SM: the hit
# path's time at the occupancy a kernel with more registers would have.
import sys, pathlib
root = pathlib.Path(sys.argv[1])
p = root / "include/agio/runtime/launch.hpp"
s = p.read_text()
helper = """
template <class Job>
inline std::size_t experiment_smem() {
  static const std::size_t bytes = [] {
    const char* e = std::getenv("AGIO_EXPERIMENT_SMEM");
    return e != nullptr ? static_cast<std::size_t>(std::strtoull(e, nullptr, 10)) : std::size_t{0};
  }();
  if (bytes > 48 * 1024) {
    cudaFuncSetAttribute(launch_job_kernel<Job>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  }
  return bytes;
}
"""
anchor = "// Queues job(t, threads) for t in [0, threads)"
assert s.count(anchor) == 1
s = s.replace(anchor, helper + anchor)
old = "block_threads, 0, stream>>>(job, threads);"
assert s.count(old) == 2
s = s.replace(old, "block_threads, experiment_smem<Job>(), stream>>>(job, threads);")
if "#include <cstdlib>" not in s:
    s = s.replace("#include <chrono>", "#include <chrono>\n#include <cstdlib>")
p.write_text(s)
