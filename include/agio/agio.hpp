#pragma once
// The whole public API in one include:
//
//   #include <agio/agio.hpp>
//
// the host runtime and its job launcher; the I/O handle kernels and CPU threads use, with its
// statuses; the software cache with its replacement policies, array views, share table and
// lock-chain debugger. Include it from a .cu file when the runtime uses the GPU (the cache's
// flush and preload jobs are kernels); from a .cpp file everything runs on CPU threads.

#include "agio/io/controller.hpp"
#include "agio/io/status.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "agio/spec/status.hpp"

#include "agio/cache/array_view.hpp"
#include "agio/cache/cache.hpp"
#include "agio/cache/lock_chain.hpp"
#include "agio/cache/policies/clock.hpp"
#include "agio/cache/policies/direct_mapped.hpp"
#include "agio/cache/policies/lfu_da.hpp"
#include "agio/cache/policies/s3_fifo.hpp"
#include "agio/cache/share_table.hpp"
#include "agio/cache/software_cache.hpp"
