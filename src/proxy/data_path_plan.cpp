#include "proxy/data_path_plan.hpp"

namespace agio::proxy {
namespace {

bool aligned_to(const void* p, std::size_t alignment) { return reinterpret_cast<std::uintptr_t>(p) % alignment == 0; }

data_plan plan_read(const data_path_request& r, bool direct) {
  data_plan plan;
  if (direct) {
    plan.io_buffer = r.whole->address;
  } else if (r.whole != nullptr && r.mover == data_mover::gpu_warps) {
    // Leave the data in host memory and let the retirer copy it to the checked PRP target; a
    // store with host memory of its own needs no bounce slot at all, unless this thread copies
    // a small read into it.
    std::byte* view = r.copy_here && r.bytes <= copy_here_max_bytes ? nullptr : r.host_view;
    plan.io_buffer = view != nullptr ? nullptr : r.bounce;
    plan.deferred_source = view != nullptr ? view + r.offset : r.bounce;
    plan.deferred_destination = r.whole->address;
  } else if (r.whole != nullptr && r.whole->kind == region_kind::device) {
    plan.io_buffer = r.bounce;
    plan.user = r.whole->address;
    plan.next = then::copy_engine_to_user;
  } else {
    plan.io_buffer = r.bounce;
    plan.host_runs.assign(r.runs.begin(), r.runs.end());
    plan.next = then::scatter_to_user;
  }
  return plan;
}

data_plan plan_write(const data_path_request& r, bool direct) {
  data_plan plan;
  if (r.stage_writes && r.whole != nullptr) {
    plan.io_buffer = r.bounce;  // the submitter staged its buffer, the PRP target, before the doorbell
  } else if (direct) {
    plan.io_buffer = r.whole->address;
  } else if (r.whole != nullptr && r.whole->kind == region_kind::device) {
    plan.io_buffer = r.bounce;
    plan.user = r.whole->address;
    plan.next = then::store_write;
  } else {
    plan.io_buffer = r.bounce;
    plan.host_runs.assign(r.runs.begin(), r.runs.end());
    plan.gather_before_store = true;
  }
  return plan;
}

}  // namespace

data_plan plan_data_path(const data_path_request& r) {
  // The store can use host memory it is handed directly only if it is aligned as it needs.
  const bool direct =
      r.whole != nullptr && r.whole->kind == region_kind::host && aligned_to(r.whole->address, r.buffer_alignment);
  return r.op == store_op::read ? plan_read(r, direct) : plan_write(r, direct);
}

}  // namespace agio::proxy
