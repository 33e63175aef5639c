#include "proxy/completion_post.hpp"

#include <atomic>

namespace agio::proxy {

void completion_poster::post(std::uint16_t cid, std::uint16_t nvme_status, std::uint32_t sq_head) {
  if (!held_.empty() || !try_post(cid, nvme_status, sq_head)) held_.emplace_back(cid, nvme_status);
}

bool completion_poster::post_held(std::uint32_t sq_head) {
  bool posted = false;
  while (!held_.empty()) {
    const auto [cid, nvme_status] = held_.front();
    if (!try_post(cid, nvme_status, sq_head)) break;
    held_.pop_front();
    posted = true;
  }
  return posted;
}

// Writes a completion entry if the queue has room: DW0-DW2 first, then DW3 with the phase tag,
// released so that a consumer that sees the new phase sees the whole entry.
bool completion_poster::try_post(std::uint16_t cid, std::uint16_t nvme_status, std::uint32_t sq_head) {
  const std::uint32_t next = (tail_ + 1) % depth_;
  // Acquire pairs with the retirer's release of the head doorbell after it retired a window.
  if (next == std::atomic_ref<std::uint32_t>(*head_doorbell_).load(std::memory_order_acquire)) return false;
  spec::completion& entry = cq_[tail_];
  std::atomic_ref<std::uint32_t>(entry.dw0).store(0, std::memory_order_relaxed);
  std::atomic_ref<std::uint32_t>(entry.dw1).store(0, std::memory_order_relaxed);
  std::atomic_ref<std::uint32_t>(entry.dw2).store(spec::make_cqe_dw2(static_cast<std::uint16_t>(sq_head), sq_id_),
                                                  std::memory_order_relaxed);
  std::atomic_ref<std::uint32_t>(entry.dw3).store(spec::make_cqe_dw3(cid, phase_, nvme_status),
                                                  std::memory_order_release);
  tail_ = next;
  if (next == 0) phase_ = !phase_;
  return true;
}

}  // namespace agio::proxy
