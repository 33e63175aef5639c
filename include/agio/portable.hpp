#pragma once
// The host/device primitives agio's own kernels are written with, for user code whose one body
// runs as a GPU kernel and on the CPU backend's threads alike (as agio's tools and evaluation
// do): AGIO_HD, atomics whose thread scope and memory order are explicit at every use, the
// warp facade (a warp of one on the CPU), and the clock with the deadlines agio's waits take
// (agio::now_ns, agio::deadline).
#include "agio/detail/atomic.hpp"
#include "agio/detail/clock.hpp"
#include "agio/detail/platform.hpp"
#include "agio/detail/warp.hpp"

namespace agio::portable {

using detail::on_device;

using detail::acq_rel;
using detail::acquire;
using detail::memory_order;
using detail::relaxed;
using detail::release;
using detail::scope;
using detail::seq_cst;

using detail::compare_exchange;
using detail::exchange;
using detail::fetch_add;
using detail::fetch_and;
using detail::fetch_or;
using detail::load;
using detail::store;

namespace warp = detail::warp;

}  // namespace agio::portable
