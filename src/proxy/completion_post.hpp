#pragma once
// Posting completion entries, the controller's side of a completion queue: each entry in ring
// order with the phase tag of the current pass, the NVMe status, the submission queue's head
// and identifier, and nothing rung (the retirer polls the phase tags; there are no interrupts).
// A full queue (the retirer has not yet handed the window back through the head doorbell)
// holds completions back, in order, until there is room.
#include <cstdint>
#include <deque>
#include <utility>

#include "agio/spec/nvme.hpp"

namespace agio::proxy {

class completion_poster {
 public:
  completion_poster() = default;
  // `cq` of `depth` entries, whose consumer hands entries back through `head_doorbell`.
  completion_poster(spec::completion* cq, std::uint32_t depth, std::uint32_t* head_doorbell, std::uint16_t sq_id)
      : cq_(cq), depth_(depth), head_doorbell_(head_doorbell), sq_id_(sq_id) {}

  // Posts the completion of `cid`, or holds it back behind earlier ones while the queue is full.
  // `sq_head` is the submission queue's head to report.
  void post(std::uint16_t cid, std::uint16_t nvme_status, std::uint32_t sq_head);
  // Posts what was held back, as far as there is room now. True if it posted any.
  bool post_held(std::uint32_t sq_head);
  bool holding() const { return !held_.empty(); }

  // The next entry to write and the phase tag it gets.
  std::uint32_t tail() const { return tail_; }
  bool phase() const { return phase_; }

 private:
  bool try_post(std::uint16_t cid, std::uint16_t nvme_status, std::uint32_t sq_head);

  spec::completion* cq_ = nullptr;
  std::uint32_t depth_ = 0;
  std::uint32_t* head_doorbell_ = nullptr;
  std::uint16_t sq_id_ = 0;
  std::uint32_t tail_ = 0;
  bool phase_ = true;                                         // the first pass over the ring carries phase 1
  std::deque<std::pair<std::uint16_t, std::uint16_t>> held_;  // (cid, status) in completion order
};

}  // namespace agio::proxy
