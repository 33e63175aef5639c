#pragma once
// All of agio's public API in one include: the host runtime and its job launcher, the I/O
// handle that kernels and CPU threads use (async_read/async_write, transactions, waits), the
// software cache with its policies, array views, share table and lock-chain debugger, and the
// store interface. Include it from a .cu file for the GPU backend, from any C++20 file for the
// CPU backend.
#include "agio/cache/array_view.hpp"
#include "agio/cache/lock_chain.hpp"
#include "agio/cache/policies/clock.hpp"
#include "agio/cache/policies/direct_mapped.hpp"
#include "agio/cache/policies/lfu_da.hpp"
#include "agio/cache/policies/s3_fifo.hpp"
#include "agio/cache/share_table.hpp"
#include "agio/io/io_handle.hpp"
#include "agio/queue/status.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/lock_chain_recorder.hpp"
#include "agio/runtime/memory_buffer.hpp"
#include "agio/runtime/runtime.hpp"
#include "agio/runtime/software_cache.hpp"
#include "agio/spec/status.hpp"
#include "agio/store/store.hpp"
#include "agio/store/store_uri.hpp"
