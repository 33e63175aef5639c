#pragma once
// The completion service (AGILE §3.2): a few warps that sweep every completion queue
// round-robin, retire completions 32 entries per step (Algorithm 1), free submission entries,
// perform the copies the proxy transport defers to the GPU and finish transactions. User
// threads never touch a completion queue, except when the runtime is told to run without a
// service (runtime_options::completion): then waiters retire, and the service only runs at
// stop() to drain what nobody waited for.
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/queue/io_state.hpp"
#include "agio/queue/posted_ring.hpp"
#include "agio/service/retire.hpp"

namespace agio::service {

using detail::scope;

// Closes the submission gate: submitters that enter from now on are refused with `stopped`.
// Every worker closes it once it reads stop's mode (the first does it; the rest find it done):
// the gate is one word, so a submitter's add comes either before this or after it in the
// word's order.
AGIO_HD inline void close_submission_gate(const io::io_state& c) {
  detail::fetch_or<scope::device>(c.control->submission_gate, io::gate_closed, detail::relaxed);
}

// The service's workers: the first `retiring_workers(c, workers)` retire completions, queue pairs
// w, w + retiring, ... each; the rest submit what is posted to them, ring w - retiring each (a
// worker of its own, so that a request posted while the retiring workers retire a window, copies
// included, is submitted at once, not after that window).
AGIO_HD inline std::uint32_t retiring_workers(const io::io_state& c, std::uint32_t workers) {
  return workers - c.posted.count;
}

// True once every request posted to the worker's ring is handled (a submitting worker), or once
// every posted request anywhere is handled and every command submitted to the worker's queues
// retired (a retiring worker: a submitting worker may put a posted request into its queues).
AGIO_HD inline bool drained(const io::io_state& c, std::uint32_t worker, std::uint32_t workers) {
  // Acquire pairs with the submitters' and posters' release as they leave the gate: their
  // claims and the rings' tails precede.
  if ((detail::load<scope::device>(c.control->submission_gate, detail::acquire) & ~io::gate_closed) != 0) return false;
  const std::uint32_t retiring = retiring_workers(c, workers);
  if (worker >= retiring) return queue::empty(c.posted, worker - retiring);
  for (std::uint32_t ring = 0; ring < c.posted.count; ++ring) {
    if (!queue::empty(c.posted, ring)) return false;
  }
  for (std::uint32_t q = worker; q < c.queue_pair_count; q += retiring) {
    queue::sq_control& ctl = *c.queue_pairs[q].control;
    if (detail::load<scope::device>(ctl.completed, detail::relaxed) !=
        detail::load<scope::device>(ctl.claimed, detail::acquire)) {
      return false;
    }
  }
  return true;
}

// What the host has told generation `generation` of an on-demand service. The words name the
// latest generation told, and every one before it was told too (a generation that missed its
// own number, because the next lease came before it looked, must still end, or the next one,
// queued behind it, would never start). Generations count up and wrap; the difference says which
// came first.
enum class lease_news { run, drain_and_exit, exit_now };
AGIO_HD inline bool told(std::uint32_t word, std::uint32_t generation) {
  return static_cast<std::int32_t>(word - generation) >= 0;
}
AGIO_HD inline lease_news news_for(const io::io_state& c, std::uint32_t generation) {
  if (c.service_quit == nullptr) return lease_news::run;
  if (told(detail::load<scope::system>(c.service_quit[io::superseded_word], detail::acquire), generation))
    return lease_news::exit_now;
  return told(detail::load<scope::system>(c.service_quit[io::quit_word], detail::acquire), generation)
             ? lease_news::drain_and_exit
             : lease_news::run;
}

// The service loop of worker `worker` of `workers` (a warp on the GPU, a thread on the host): a
// retiring worker w's queue pairs (w, w + retiring, ...) belong to it alone, and a submitting
// worker's ring to it alone, whose requests `serve_posted(ring)` submits
// (io_handle::serve_posted: the submission is the I/O handle's, a layer above) and returns how
// many it handled. A retiring worker on the GPU copies through its warp's `staging` area, if it
// has one (null: none). Runs until the host asks it to exit, or to drain and drained() says so. An
// on-demand service (completion_mode::on_demand) is launched as generation `generation` and
// also ends, drained, once the host has released the last lease (news_for says drain_and_exit),
// or at once when the host has queued the next generation behind it (exit_now).
template <class ServePosted>
AGIO_HD void run(const io::io_state& c, std::uint32_t worker, std::uint32_t workers, std::uint32_t generation,
                 detail::warp::bulk_staging* staging, ServePosted&& serve_posted) {
  // Idle polls stay short: a completion waits at most this long for its warp to look again.
  detail::backoff idle(1'024);
  // The lease words are in host memory: read at every poll, their round trip over PCIe would slow
  // the polling itself (measured: 4 requests in flight went from 109 K to 62 K per second). So
  // they are read every this many polls, busy or idle: tens of microseconds at most.
  constexpr std::uint32_t polls_per_lease_check = 32;
  std::uint32_t polls = 0;
  const std::uint32_t retiring = retiring_workers(c, workers);
  bool quit = false;    // told to drain and exit: it stays told
  bool closed = false;  // this worker has closed the submission gate
  for (;;) {
    std::uint32_t retired = 0;
    if (worker < retiring) {
      for (std::uint32_t q = worker; q < c.queue_pair_count; q += retiring)
        retired += poll_for_mode<warp_team>(c, c.queue_pairs[q], staging);
    } else {
      retired += serve_posted(worker - retiring);
    }
    const std::uint32_t mode = detail::load<scope::device>(c.control->service_mode, detail::acquire);
    // stop() set the mode (drain, then exit if the drain outlives its deadline): from now on
    // nothing is accepted. At once, not at the first idle poll, which a service kept busy by
    // submitters that go on submitting would never reach. A lease's end does not close it.
    if (mode != io::service_run && !closed) {
      close_submission_gate(c);
      closed = true;
    }
    if (mode == io::service_exit) return;
    if (c.service_quit != nullptr && ++polls % polls_per_lease_check == 0) {
      const lease_news news = news_for(c, generation);
      // The next generation is queued behind this one and takes over every queue, completions
      // still unretired included: each worker leaves at once, so that it starts. (Were they to
      // drain first, those whose queues drained would leave the others' queues and their own to
      // a generation that cannot start until the rest also drain: requests would wait on queues
      // nobody polls.)
      if (news == lease_news::exit_now) return;
      quit = quit || news == lease_news::drain_and_exit;
    }
    if (retired != 0) {
      idle.reset();
      continue;
    }
    if ((mode == io::service_drain || quit) && drained(c, worker, workers)) return;
    idle.pause();
  }
}

}  // namespace agio::service
