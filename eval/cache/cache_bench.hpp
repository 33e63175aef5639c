#pragma once
// The cache benchmarks: replacement policies on skewed traces (cache_policies) and the
// overhead of the cache API and of cold I/O against native HBM kernels (cache_overhead), and the
// host-memory tier below the cache (host_tier).
namespace agio::bench {
int cache_policies_main(int argc, char** argv, int first);
int cache_overhead_main(int argc, char** argv, int first);
int host_tier_main(int argc, char** argv, int first);
}  // namespace agio::bench
