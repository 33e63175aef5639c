#pragma once
// Placeholder on the tools branch: the host/device primitives that code outside the library
// (the tools, the evaluation's kernels) may use: AGIO_HD, scope-explicit atomics and the warp
// facade. The library's own portable.hpp replaces it.
#include "agio/detail/atomic.hpp"
#include "agio/detail/platform.hpp"
#include "agio/detail/warp.hpp"
