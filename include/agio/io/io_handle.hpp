#pragma once
// The handle GPU kernels (and CPU threads) use to reach storage: asynchronous reads and writes
// that return a transaction at once, and waits that return a status by a deadline.
//
// A `io_handle` is a plain struct of pointers, made by agio::runtime and passed by value
// to kernels. Everything here runs on the device and on the host.
//
// Who retires completions is part of the type (runtime_options::completion picks which one
// the runtime hands out): `io_handle` leaves it to the completion service, so kernels carry
// no completion-queue code at all (AGILE §4.6: the service keeps application kernels light);
// `waiting_io_handle` makes waiting threads poll the queues themselves (BaM's model).
#include <cstddef>
#include <cstdint>
#include <span>

#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/detail/clock.hpp"
#include "agio/detail/copy.hpp"
#include "agio/detail/poll_together.hpp"
#include "agio/detail/thread_id.hpp"
#include "agio/detail/warp.hpp"
#include "agio/queue/failure.hpp"
#include "agio/queue/io_state.hpp"
#include "agio/queue/record_pool.hpp"
#include "agio/queue/status.hpp"
#include "agio/queue/submission.hpp"
#include "agio/service/retire.hpp"
#include "agio/spec/prp.hpp"

namespace agio {

// Where a signalled request reports its outcome (see io_handle::async_signalled): it adds
// `on_success` or `on_failure` to `word` (modulo 2^32) rather than storing a value, so that the
// word's other parts stay as others have left them (a cache line's word: its pins, which
// readers add and take back at any time).
struct completion_signal {
  std::uint32_t* word = nullptr;
  std::uint32_t on_success = 0;
  std::uint32_t on_failure = 0;
  std::uint32_t* status = nullptr;  // status::pack() of the outcome, stored before `word` changes
  // Counted up by one when the request fails, before `word` changes: lets the issuer count
  // failures it never waits for (a cache's write-backs).
  std::uint64_t* failures = nullptr;
};

// What async_read/async_write return: a transaction record to wait on, or an outcome decided
// before anything was submitted (bad argument, runtime stopped, no resources).
// [[nodiscard]]: a transaction nobody waits on holds its record until it completes, and its
// outcome, success or failure, reaches nobody.
struct [[nodiscard]] transaction {
  static constexpr std::uint32_t none = ~std::uint32_t{0};
  std::uint32_t record = none;
  // Submitted: the record's generation when this request took it (record_state.hpp), which
  // tells this request from later ones on the same record. Otherwise status::pack() of the
  // outcome decided before submission.
  std::uint32_t tag = 0;

  AGIO_HD bool submitted() const { return record != none; }
};

// One request of a batch (io_handle::read_all / write_all), in device blocks.
struct block_request {
  std::uint32_t dev = 0;
  std::uint64_t lba = 0;
  std::uint32_t blocks = 0;
  void* buffer = nullptr;  // read into, or written from (a write does not modify it)
};

// The state it points to is filled in by the runtime.
template <io::retirement Retirement>
class basic_io_handle : public io::io_state {
 public:
  static constexpr bool waiters_retire = Retirement == io::retirement::by_waiters;

  // A write's data is staged into its command's bounce slot (pinned host memory) by the lanes
  // that submit it, each with this many 16-byte loads out before their stores. A lane alone with
  // one load out makes 256 loads one after another for 4 KiB; eight out took 17 us off a 4 KiB
  // write's trip of 46 us, at 32-40 more registers in a kernel that writes (H200, 2026-11-30;
  // docs/RESULTS.md). So a submission whose direction is known when it is compiled carries the
  // staging it needs and no more: reads and flushes none, writes this. Where the direction is a
  // value (async_signalled, async_passthrough, the service's posted requests) it stages with one
  // load out, so that kernels which only read through such a site are not charged for writes.
  static constexpr unsigned write_stage_loads = 8;
  static constexpr unsigned no_staging = 0;        // a site that submits no writes
  static constexpr unsigned staging_by_value = 1;  // a site whose direction is a value

  AGIO_HD transaction async_read(std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks, void* dst) const {
    return submit<no_staging>(spec::opcode::read, dev, lba, blocks, dst);
  }
  AGIO_HD transaction async_write(std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks, const void* src) const {
    return submit<write_stage_loads>(spec::opcode::write, dev, lba, blocks, const_cast<void*>(src));
  }
  // Byte-addressed forms, for code that thinks in file offsets (as with KvikIO or cuFile):
  // `offset` and `bytes` must be multiples of the device's LBA size (lba_bytes(dev)), else the
  // request is refused with outcome::misaligned and nothing is issued. One request moves at
  // most max_blocks(dev) blocks; read_bytes/write_bytes below split larger ranges.
  AGIO_HD transaction async_read_bytes(std::uint32_t dev, std::uint64_t offset, std::uint32_t bytes, void* dst) const {
    return submit_bytes<no_staging>(spec::opcode::read, dev, offset, bytes, dst);
  }
  AGIO_HD transaction async_write_bytes(std::uint32_t dev, std::uint64_t offset, std::uint32_t bytes,
                                        const void* src) const {
    return submit_bytes<write_stage_loads>(spec::opcode::write, dev, offset, bytes, const_cast<void*>(src));
  }
  // A fire-and-forget read or write (`op`) for layers that track completion in their own words
  // (the cache's line states): nobody waits on the request; when it finishes, its status is
  // stored in `signal.status` (if set) and then `signal.on_success` or `signal.on_failure` added
  // to `signal.word`, with release. The returned status is only whether it was submitted. One call
  // for both directions, so that a caller submitting either from one place (the cache's miss
  // path) inlines the submission once.
  AGIO_HD status async_signalled(spec::opcode op, std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks,
                                 void* buffer, const completion_signal& signal) const {
    return submitted(submit<staging_by_value>(op, dev, lba, blocks, buffer, &signal));
  }

  // async_signalled made by the completion service instead of the caller: the request goes into
  // a ring slot of a service worker (queue/posted_ring.hpp), which submits it. For callers whose
  // kernels should not carry the submission: the cache's fills and write-backs, compiled into
  // every kernel that reads through the cache, whose hits the submission's code made slower
  // (docs/RESULTS.md). The returned status is whether it was posted: `stopped` once the runtime
  // stops, no_resources if no slot came free within submit_timeout_ms. A posted request that
  // the service must refuse (the runtime stopped before it was submitted, no transaction record
  // or queue entry within submit_timeout_ms of its posting, an invalid request) gets its status
  // stored in `signal.status`, all ones in `*cleared_on_refusal` (when not nullptr), and then
  // `on_refusal` added to `signal.word`, with release; the refusal is counted and reported as a
  // submitter's would be.
  static constexpr bool posts_to_service = !waiters_retire;
  AGIO_HD status post_signalled(spec::opcode op, std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks,
                                void* buffer, const completion_signal& signal, std::uint32_t on_refusal,
                                std::uint64_t* cleared_on_refusal) const requires(posts_to_service) {
    const queue::posted_request r{lba,
                                  reinterpret_cast<std::uint64_t>(buffer),
                                  reinterpret_cast<std::uint64_t>(signal.word),
                                  reinterpret_cast<std::uint64_t>(signal.status),
                                  reinterpret_cast<std::uint64_t>(signal.failures),
                                  reinterpret_cast<std::uint64_t>(cleared_on_refusal),
                                  now_ns(),
                                  dev,
                                  static_cast<std::uint32_t>(op),
                                  blocks,
                                  signal.on_success,
                                  signal.on_failure,
                                  on_refusal};
    // A poster passes the submission gate as a submitter does: the draining service waits for
    // what got in before the close (its ring is empty only once that is handled) and refuses it.
    const std::uint32_t gate = detail::fetch_add<detail::scope::device>(control->submission_gate, 1u, detail::relaxed);
    bool in_ring = false;
    if ((gate & io::gate_closed) == 0) {
      in_ring = queue::post(posted, detail::submitter_index() % posted.count, r, deadline::after_ns(submit_timeout_ns));
    }
    // Release: the service that reads the gate empty sees the ring's tail moved.
    detail::fetch_add<detail::scope::device>(control->submission_gate, ~0u, detail::release);
    if (in_ring) return {outcome::success, 0};
    if ((gate & io::gate_closed) != 0) return submitted(refuse_stopped(dev));
    return submitted(refuse({io::failure_cause::no_queue_entry, dev, static_cast<std::uint32_t>(op), lba, blocks}));
  }

  // The completion service's side of post_signalled: submits what was posted to ring `ring` (the
  // calling worker's), a window of up to 32 slots per call, the lanes of the calling warp one
  // each. A request is submitted with one sweep over its device's queues, never waiting for an
  // entry or record (the service that would wait is the one that frees them): one that finds
  // none stays for a later call, and the worker moves on to the ring's later requests, until
  // submit_timeout_ms after its posting, when it is refused. Returns the requests handled.
  AGIO_HD std::uint32_t serve_posted(std::uint32_t ring) const requires(posts_to_service) {
    queue::posted_cursor& cursor = posted.cursors[ring];
    const std::uint64_t head = detail::load<detail::scope::device>(cursor.head, detail::relaxed);
    std::uint32_t now = 0;  // the lanes that handled their request in this call
    const std::uint32_t handled = detail::warp::ballot_each([&](unsigned lane) {
      queue::posted_slot& slot = posted.slot(ring, head + lane);
      const queue::posted_state state = queue::state_of(posted, slot, head + lane);
      if (state != queue::posted_state::posted) return state == queue::posted_state::done;
      if (!submit_posted(slot.request)) return false;
      now |= 1u << lane;
      return true;
    });
    // Slots up to the first unhandled one are given to the next lap; later handled ones are
    // marked, for the worker to move past once the ones before them are handled.
    const std::uint32_t moved = handled == ~0u ? detail::warp::size : detail::warp::lowest_lane(~handled);
    detail::warp::for_each_lane([&](unsigned lane) {
      if (((handled >> lane) & 1u) == 0) return;
      queue::posted_slot& slot = posted.slot(ring, head + lane);
      if (lane < moved) {
        queue::free_slot(posted, slot, head + lane);
      } else {
        queue::mark_done(posted, slot, head + lane);
      }
    });
    if (detail::warp::is_leader() && moved != 0) {
      detail::store<detail::scope::device>(cursor.head, head + moved, detail::relaxed);
    }
    detail::warp::sync();
    return detail::warp::count(detail::warp::ballot_each([&](unsigned lane) { return ((now >> lane) & 1u) != 0; }));
  }

  // Makes every write the device acknowledged so far durable.
  AGIO_HD transaction async_flush(std::uint32_t dev) const {
    return submit<no_staging>(spec::opcode::flush, dev, 0, 0, nullptr);
  }

  // Submits `cmd` as it is, but for its command identifier, which the queue assigns. For
  // tools and tests that need commands the typed calls refuse to build (any opcode, any
  // PRP). `buffer` and `bytes` must be what the command's PRPs name when they name one run of
  // memory, and nullptr (bytes ignored) when they name several (a PRP list); otherwise the
  // controller answers Invalid Field in Command and moves no data.
  AGIO_HD transaction async_passthrough(std::uint32_t dev, const spec::command& cmd, void* buffer,
                                        std::uint32_t bytes) const {
    const io::failure_cause invalid =
        dev >= device_count ? io::failure_cause::no_such_device : io::failure_cause::completed;
    return issue<staging_by_value>(dev, &cmd, static_cast<spec::opcode>(cmd.opc()), cmd.slba(), cmd.blocks(), buffer,
                                   bytes, nullptr, invalid);
  }

  // Three waits, by how long they may take:
  //   wait_for(t, limit)  until `limit`; may return timeout.
  //   wait(t)             wait_for with the runtime's wait_timeout_ms; may return timeout.
  //   wait_until_done(t)  until the request finishes, however long that takes; never timeout.
  //                       Its bound is the runtime's: stop() finishes or aborts every request
  //                       within stop_timeout_ms, and should one still be unfinished when
  //                       stop() is over, its waiter gets `stopped`. A thread waiting here
  //                       must return before the runtime is destroyed: stop() it first.
  // The wait that collects a finished request's status gives its record back; any later wait
  // on `t` returns outcome::stale. A wait whose deadline passes returns timeout and abandons
  // the request: its record comes back once it finishes. Waiting on `t` again collects the
  // status, unless a new request needed the record first (stale). The buffer of an abandoned
  // read must stay valid until the request finishes. When waiters retire completions
  // (waiting_io_handle), the waiter polls the queue its command went to.
  AGIO_HD status wait_for(transaction t, deadline limit) const { return wait_until(t, limit, false); }
  AGIO_HD status wait(transaction t) const { return wait_for(t, deadline::after_ns(wait_timeout_ns)); }
  AGIO_HD status wait_until_done(transaction t) const { return wait_until(t, deadline::never(), true); }

  // Waits for every transaction of `ts` until it finishes (wait_until_done), so that each one's
  // record comes back, and returns the first failure in the order of `ts`, or success. With
  // `failed`, stores the index of that failure there (`count` when all succeeded).
  AGIO_HD status wait_all(const transaction* ts, std::uint32_t count, std::uint32_t* failed = nullptr) const {
    status first{outcome::success, 0};
    std::uint32_t first_index = count;
    for (std::uint32_t i = 0; i < count; ++i) {
      const status s = wait_until_done(ts[i]);
      if (!s.ok() && first_index == count) {
        first = s;
        first_index = i;
      }
    }
    if (failed != nullptr) *failed = first_index;
    return first;
  }
  status wait_all(std::span<const transaction> ts, std::uint32_t* failed = nullptr) const {
    return wait_all(ts.data(), static_cast<std::uint32_t>(ts.size()), failed);
  }

  // Submits every request of `requests` and waits for all of them, and returns the first
  // failure in their order, or success (its index in `failed`, as wait_all). Every request is
  // issued whatever the others' outcomes. A calling thread keeps up to batch_window() of them
  // in flight, each holding a transaction record (runtime_options::transaction_records).
  AGIO_HD static constexpr std::uint32_t batch_window() { return detail::on_device() ? 4 : 16; }
  AGIO_HD status read_all(const block_request* requests, std::uint32_t count, std::uint32_t* failed = nullptr) const {
    return run_windowed(count, failed, [&](std::uint32_t i) {
      const block_request& r = requests[i];
      return async_read(r.dev, r.lba, r.blocks, r.buffer);
    });
  }
  AGIO_HD status write_all(const block_request* requests, std::uint32_t count, std::uint32_t* failed = nullptr) const {
    return run_windowed(count, failed, [&](std::uint32_t i) {
      const block_request& r = requests[i];
      return async_write(r.dev, r.lba, r.blocks, r.buffer);
    });
  }
  status read_all(std::span<const block_request> requests, std::uint32_t* failed = nullptr) const {
    return read_all(requests.data(), static_cast<std::uint32_t>(requests.size()), failed);
  }
  status write_all(std::span<const block_request> requests, std::uint32_t* failed = nullptr) const {
    return write_all(requests.data(), static_cast<std::uint32_t>(requests.size()), failed);
  }

  // True once `t` has finished, or is stale (it still has to be waited on to collect its status).
  AGIO_HD bool ready(transaction t) const {
    if (!t.submitted() || t.record >= record_count) return true;
    io::transaction_record& rec = records[t.record];
    const auto settled = [&] {
      // Acquire pairs with publish_result's release, as in wait_for.
      const std::uint64_t word = detail::load<detail::scope::device>(rec.state, detail::acquire);
      return io::record_state::finished(word) || !io::record_state::held_by(word, t.tag);
    };
    if (settled()) return true;
    if constexpr (waiters_retire) {
      service::poll_queue_if_free<service::solo_team>(
          *this, queue_pairs[detail::load<detail::scope::device>(rec.queue_pair, detail::relaxed)]);
      return settled();
    } else {
      return false;
    }
  }

  // When waiters retire completions, a thread that waits on something other than a transaction
  // (a cache line's state, set by a signalled request) calls this between looks, so that what
  // it waits for gets retired. Empty in `io_handle`, whose completions the service retires.
  AGIO_HD void help_retire(std::uint32_t dev) const {
    if constexpr (waiters_retire) {
      if (dev >= device_count) return;
      const io::device_info& info = devices[dev];
      for (std::uint32_t q = 0; q < info.qp_count; ++q) {
        service::poll_queue_if_free<service::solo_team>(*this, queue_pairs[info.first_qp + q]);
      }
    }
  }

  // Synchronous forms: submit and wait_until_done (a timeout would leave the caller nothing to
  // wait on again, and a read's buffer in use for an unknown time).
  AGIO_HD status read(std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks, void* dst) const {
    return wait_until_done(async_read(dev, lba, blocks, dst));
  }
  AGIO_HD status write(std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks, const void* src) const {
    return wait_until_done(async_write(dev, lba, blocks, src));
  }
  // Byte-addressed synchronous forms of any length: the range is split into requests of at
  // most max_blocks(dev) blocks, up to batch_window() of them in flight. Alignment is checked
  // for the whole range first: a misaligned one is refused (misaligned) with nothing issued.
  AGIO_HD status read_bytes(std::uint32_t dev, std::uint64_t offset, std::uint64_t bytes, void* dst) const {
    return transfer_bytes<no_staging>(spec::opcode::read, dev, offset, bytes, static_cast<std::byte*>(dst));
  }
  AGIO_HD status write_bytes(std::uint32_t dev, std::uint64_t offset, std::uint64_t bytes, const void* src) const {
    return transfer_bytes<write_stage_loads>(spec::opcode::write, dev, offset, bytes,
                                             const_cast<std::byte*>(static_cast<const std::byte*>(src)));
  }

  AGIO_HD std::uint32_t lba_bytes(std::uint32_t dev) const { return devices[dev].lba_bytes; }
  AGIO_HD std::uint64_t capacity_blocks(std::uint32_t dev) const { return devices[dev].capacity_blocks; }
  AGIO_HD std::uint32_t max_blocks(std::uint32_t dev) const { return devices[dev].max_blocks; }

 private:
  // The waits of wait_for and wait_until_done: polls until the request settles or `limit`
  // passes, or (`until_stop`) the runtime has stopped.
  AGIO_HD status wait_until(transaction t, deadline limit, bool until_stop) const {
    if (!t.submitted()) return status::unpack(t.tag);
    if (t.record >= record_count) return {outcome::stale, 0};  // not a handle of this runtime
    io::transaction_record& rec = records[t.record];
    const std::uint32_t max_sleep_ns = wait_max_sleep_ns();
    // Acquire pairs with publish_result's release (the data is in place) and with the release
    // of the wait that collected the request, if one did.
    std::uint64_t word = detail::load<detail::scope::device>(rec.state, detail::acquire);
    if (!take_back(rec, word, t.tag)) return {outcome::stale, 0};
    const auto settled = [&] {
      word = detail::load<detail::scope::device>(rec.state, detail::acquire);
      return io::record_state::finished(word) || !io::record_state::held_by(word, t.tag);
    };
    // Relaxed: the record's state word, read again after this, carries the ordering.
    const auto stopped = [&] {
      return until_stop && detail::load<detail::scope::device>(control->stopped, detail::relaxed) != 0;
    };
    detail::poll_together(
        [&] {
          if constexpr (waiters_retire) {
            if (settled()) return true;
            // Relaxed: a wrong queue (the record reused under a duplicate wait) is only polled.
            service::poll_queue_if_free<service::solo_team>(
                *this, queue_pairs[detail::load<detail::scope::device>(rec.queue_pair, detail::relaxed)]);
          }
          return settled() || stopped();
        },
        limit, wait_together_ns, max_sleep_ns);
    const status s = end_wait(rec, word, t.tag);
    // Given up on at the end of stop(), not by a deadline of the caller's.
    return s.result == outcome::timeout && until_stop ? status{outcome::stopped, 0} : s;
  }

  // The longest sleep of a waiter between looks at its record. A request alone in the runtime
  // is waited for with short sleeps: the service has nothing else to do, and the waiter's look
  // is the last leg of the request's trip. Otherwise waiters sleep longer. With thousands
  // waiting, their looks would compete with the service's warps (4 KiB reads at 4096 in flight
  // lost 3 % when every waiter slept at most 512 ns; H100, 2026-11-27), and with as few as four
  // in flight the short sleeps cost 4 KiB reads 6 % (medians of five runs, 122 K a second
  // against 130 K; H200, 2026-11-29). The count is read before the record's state so that the
  // two loads are in flight together. Host threads keep their long sleeps (backoff.hpp).
  AGIO_HD std::uint32_t wait_max_sleep_ns() const {
    if (!detail::on_device()) return detail::io_wait_max_sleep_ns;
    // Relaxed: a count, only a hint.
    const std::int32_t available = detail::load<detail::scope::device>(control->records_available, detail::relaxed);
    const bool alone = static_cast<std::int64_t>(record_count) - available <= 1;
    return alone ? lone_request_max_sleep_ns : detail::io_wait_max_sleep_ns;
  }
  static constexpr std::uint32_t lone_request_max_sleep_ns = 256;

  // Runs `count` requests made by `issue(i)`, keeping up to batch_window() of them in flight,
  // and collects each in order. A GPU thread keeps fewer than a CPU thread: there are a
  // hundred times more of them, and each request in flight holds a transaction record.
  template <class Issue>
  AGIO_HD status run_windowed(std::uint32_t count, std::uint32_t* failed, Issue&& issue) const {
    constexpr std::uint32_t in_flight = batch_window();
    transaction window[in_flight];
    status first{outcome::success, 0};
    std::uint32_t first_index = count;
    const auto collect = [&](std::uint32_t i) {
      const status s = wait_until_done(window[i % in_flight]);
      if (!s.ok() && first_index == count) {
        first = s;
        first_index = i;
      }
    };
    for (std::uint32_t i = 0; i < count; ++i) {
      if (i >= in_flight) collect(i - in_flight);
      window[i % in_flight] = issue(i);
    }
    for (std::uint32_t i = count > in_flight ? count - in_flight : 0; i < count; ++i) collect(i);
    if (failed != nullptr) *failed = first_index;
    return first;
  }

  // Submits posted request `r` (serve_posted). False when no transaction record was free or
  // every queue of its device was full, and it may wait longer: nothing was taken or counted.
  AGIO_HD bool submit_posted(const queue::posted_request& r) const {
    const auto op = static_cast<spec::opcode>(r.opcode);
    const completion_signal signal{reinterpret_cast<std::uint32_t*>(r.signal_word), r.signal_ok, r.signal_failed,
                                   reinterpret_cast<std::uint32_t*>(r.signal_status),
                                   reinterpret_cast<std::uint64_t*>(r.signal_failures)};
    io::failure_cause refused = invalid_cause(op, r.device, r.blocks);
    transaction t{transaction::none, 0};
    if (refused == io::failure_cause::completed) {
      t = enqueue_at_gate<staging_by_value>(r.device, nullptr, op, r.lba, r.blocks, reinterpret_cast<void*>(r.buffer),
                                            r.blocks * devices[r.device].lba_bytes, &signal, refused, deadline{0});
      const bool starved = refused == io::failure_cause::no_queue_entry || refused == io::failure_cause::no_record;
      if (starved && now_ns() - r.posted_ns < submit_timeout_ns) return false;
    }
    if (refused != io::failure_cause::completed) {
      t = refuse({refused, r.device, r.opcode, r.lba, r.blocks});
    }
    if (!t.submitted()) {
      // As the retirement publishes a signal (service/retire.hpp), with the refusal's word.
      if (signal.status != nullptr) detail::store<detail::scope::device>(*signal.status, t.tag, detail::relaxed);
      if (r.cleared_on_refusal != 0) {
        detail::store<detail::scope::device>(*reinterpret_cast<std::uint64_t*>(r.cleared_on_refusal), ~std::uint64_t{0},
                                             detail::relaxed);
      }
      detail::fetch_add<detail::scope::device>(*signal.word, r.on_refusal, detail::release);
    }
    return true;
  }

  // Why a typed request is invalid (failure_cause::completed when it is not).
  AGIO_HD io::failure_cause invalid_cause(spec::opcode op, std::uint32_t dev, std::uint32_t blocks) const {
    if (dev >= device_count) return io::failure_cause::no_such_device;
    if (op != spec::opcode::flush && blocks == 0) return io::failure_cause::zero_blocks;
    if (op != spec::opcode::flush && blocks > devices[dev].max_blocks) return io::failure_cause::too_many_blocks;
    return io::failure_cause::completed;
  }

  // Refuses a byte-addressed request whose offset or size is not a multiple of the LBA size.
  AGIO_HD bool misaligned(std::uint32_t dev, spec::opcode op, std::uint64_t offset, std::uint64_t bytes, void* buffer,
                          transaction& refused) const {
    const std::uint32_t lba = devices[dev].lba_bytes;
    if (offset % lba == 0 && bytes % lba == 0) return false;
    io::failure f{io::failure_cause::misaligned, dev, static_cast<std::uint32_t>(op)};
    f.buffer = reinterpret_cast<std::uint64_t>(buffer);
    f.byte_offset = offset;
    f.byte_count = bytes;
    refused = refuse(f);
    return true;
  }

  template <unsigned StageLoads>
  AGIO_HD transaction submit_bytes(spec::opcode op, std::uint32_t dev, std::uint64_t offset, std::uint32_t bytes,
                                   void* buffer) const {
    if (dev >= device_count) {
      return refuse({io::failure_cause::no_such_device, dev, static_cast<std::uint32_t>(op), 0, 0});
    }
    transaction refused;
    if (misaligned(dev, op, offset, bytes, buffer, refused)) return refused;
    const std::uint32_t lba = devices[dev].lba_bytes;
    return submit<StageLoads>(op, dev, offset / lba, bytes / lba, buffer);
  }

  template <unsigned StageLoads>
  AGIO_HD status transfer_bytes(spec::opcode op, std::uint32_t dev, std::uint64_t offset, std::uint64_t bytes,
                                std::byte* buffer) const {
    if (dev >= device_count) {
      return wait_until_done(refuse({io::failure_cause::no_such_device, dev, static_cast<std::uint32_t>(op), 0, 0}));
    }
    transaction refused;
    if (misaligned(dev, op, offset, bytes, buffer, refused)) return wait_until_done(refused);
    const io::device_info& info = devices[dev];
    const std::uint64_t first = offset / info.lba_bytes;
    const std::uint64_t blocks = bytes / info.lba_bytes;
    // Zero bytes is refused as a request of zero blocks is.
    const std::uint64_t pieces = blocks == 0 ? 1 : (blocks + info.max_blocks - 1) / info.max_blocks;
    if (pieces > ~std::uint32_t{0}) {
      return wait_until_done(
          refuse({io::failure_cause::too_many_blocks, dev, static_cast<std::uint32_t>(op), first, ~std::uint32_t{0}}));
    }
    return run_windowed(static_cast<std::uint32_t>(pieces), nullptr, [&](std::uint32_t i) {
      const std::uint64_t done = std::uint64_t{i} * info.max_blocks;
      const std::uint64_t left = blocks - done;
      const auto n = static_cast<std::uint32_t>(left < info.max_blocks ? left : info.max_blocks);
      return submit<StageLoads>(op, dev, first + done, n, buffer + done * info.lba_bytes);
    });
  }

  // Refuses a request before submission: it is counted, and reported by check() if it is the
  // run's first failure.
  AGIO_HD transaction refuse(io::failure f) const {
    const bool starved = f.cause == io::failure_cause::no_record || f.cause == io::failure_cause::no_queue_entry;
    const outcome why = f.cause == io::failure_cause::misaligned ? outcome::misaligned
                        : starved                                ? outcome::no_resources
                                                                 : outcome::invalid_argument;
    f.result = status{why, 0}.pack();
    count_refusal(f.device);
    io::note_first_failure(*this, f);
    return {transaction::none, f.result};
  }
  // A request after stop() began is counted but not reported: stopping is the caller's doing,
  // not a failure of storage or of the request.
  AGIO_HD transaction refuse_stopped(std::uint32_t dev) const {
    count_refusal(dev);
    return {transaction::none, status{outcome::stopped, 0}.pack()};
  }
  AGIO_HD void count_refusal(std::uint32_t dev) const {
    if (dev < device_count) {
      detail::fetch_add<detail::scope::device>(counters[dev].rejected, std::uint64_t{1}, detail::relaxed);
    } else {
      detail::fetch_add<detail::scope::device>(control->unknown_device_requests, std::uint64_t{1}, detail::relaxed);
    }
  }

  // A signalled request was submitted (ok) or refused before submission (its outcome).
  AGIO_HD static status submitted(transaction t) {
    return t.submitted() ? status{outcome::success, 0} : status::unpack(t.tag);
  }

  // A wait that comes back to an abandoned request takes it back, so that its record is not
  // taken by a new request while this wait runs. False when `gen` no longer holds the record.
  AGIO_HD static bool take_back(io::transaction_record& rec, std::uint64_t& word, std::uint32_t gen) {
    // Each failed exchange means the word changed; it changes a bounded number of times.
    for (;;) {
      if (!io::record_state::held_by(word, gen)) return false;
      if (io::record_state::finished(word) || !io::record_state::is_abandoned(word)) return true;
      // Acquire, as the load that read `word`.
      if (detail::compare_exchange<detail::scope::device>(rec.state, word, word & ~io::record_state::abandoned,
                                                          detail::acquire)) {
        word &= ~io::record_state::abandoned;
        return true;
      }
    }
  }

  // Ends a wait that last saw `word`: collects a finished request's status and gives its
  // record back, or abandons an unfinished request so that its record comes back when it
  // finishes. Of two waits on one handle, one collects and the other is stale.
  AGIO_HD status end_wait(io::transaction_record& rec, std::uint64_t word, std::uint32_t gen) const {
    for (;;) {
      if (!io::record_state::held_by(word, gen)) return {outcome::stale, 0};
      if (io::record_state::finished(word)) {
        // Release pairs with take_record's acquire: our reads of the record come before its
        // next owner's writes.
        if (detail::compare_exchange<detail::scope::device>(rec.state, word, io::record_state::given_back(word),
                                                            detail::acq_rel)) {
          // An abandoned request's record was counted available when its result came.
          if (!io::record_state::is_abandoned(word)) io::count_available(*this);
          return status::unpack(io::record_state::result(word));
        }
      } else if (detail::compare_exchange<detail::scope::device>(rec.state, word, word | io::record_state::abandoned,
                                                                 detail::acq_rel)) {
        return {outcome::timeout, 0};
      }
    }
  }

  template <unsigned StageLoads>
  AGIO_HD transaction submit(spec::opcode op, std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks, void* buffer,
                             const completion_signal* signal = nullptr) const {
    const io::failure_cause invalid = invalid_cause(op, dev, blocks);
    const std::uint32_t bytes = invalid == io::failure_cause::completed ? blocks * devices[dev].lba_bytes : 0;
    return issue<StageLoads>(dev, nullptr, op, lba, blocks, buffer, bytes, signal, invalid);
  }

  // Takes a transaction record and a queue entry and submits either the typed command or `raw`;
  // refuses it instead when `invalid` says why (failure_cause::completed, the failure record's
  // default, when nothing is wrong with it), or when no record or queue entry comes. Every
  // refusal of a submission goes through the one refuse() at the end: inlined at each of the
  // five causes, refuse() (which records the run's first failure) set the register peak of
  // every kernel that reads through the cache, which inlines the submission of its fills and
  // write-backs (the graph kernels' SpMV: 107 registers, 96 this way; sm_90, 2026-11-26).
  template <unsigned StageLoads>
  AGIO_HD transaction issue(std::uint32_t dev, const spec::command* raw, spec::opcode op, std::uint64_t lba,
                            std::uint32_t blocks, void* buffer, std::uint32_t bytes, const completion_signal* signal,
                            io::failure_cause invalid) const {
    io::failure_cause refused = invalid;
    transaction t{transaction::none, 0};
    if (refused == io::failure_cause::completed) {
      t = enqueue_at_gate<StageLoads>(dev, raw, op, lba, blocks, buffer, bytes, signal, refused,
                                      deadline::after_ns(submit_timeout_ns));
    }
    if (refused == io::failure_cause::completed) return t;
    return refuse({refused, dev, static_cast<std::uint32_t>(op), lba, blocks});
  }

  // Passes the submission gate and enqueues the command (claim_and_enqueue: `refused` is set
  // when no record, or no queue entry by `limit`, came), or refuses it with `stopped` when the
  // gate is closed.
  template <unsigned StageLoads>
  AGIO_HD transaction enqueue_at_gate(std::uint32_t dev, const spec::command* raw, spec::opcode op, std::uint64_t lba,
                                      std::uint32_t blocks, void* buffer, std::uint32_t bytes,
                                      const completion_signal* signal, io::failure_cause& refused,
                                      deadline limit) const {
    // The gate's one word orders this entry against the service's close: either the add sees
    // it closed, or the draining service sees this submitter inside and waits for its command.
    const std::uint32_t gate = detail::fetch_add<detail::scope::device>(control->submission_gate, 1u, detail::relaxed);
    // Drawn before the gate's answer is looked at, so that the three adds are in flight at
    // once; a refused submitter returns it.
    const io::record_ticket ticket = io::draw_ticket(*this);
    transaction t{transaction::none, 0};
    if ((gate & io::gate_closed) != 0) {
      io::return_ticket(*this);
      t = refuse_stopped(dev);
    } else {
      t = claim_and_enqueue<StageLoads>(dev, raw, op, lba, blocks, buffer, bytes, signal, ticket, refused, limit);
    }
    // Release: the service that reads the gate empty sees this command's claim.
    detail::fetch_add<detail::scope::device>(control->submission_gate, ~0u, detail::release);
    return t;
  }

  // Sets `refused` (and returns no transaction) when no record came, or no queue entry by `limit`
  // (one sweep over the device's queues is made whatever the limit).
  template <unsigned StageLoads>
  AGIO_HD transaction claim_and_enqueue(std::uint32_t dev, const spec::command* raw, spec::opcode op, std::uint64_t lba,
                                        std::uint32_t blocks, void* buffer, std::uint32_t bytes,
                                        const completion_signal* signal, io::record_ticket ticket,
                                        io::failure_cause& refused, deadline limit) const {
    const io::device_info& info = devices[dev];
    std::uint32_t index = 0;
    std::uint32_t generation = 0;
    std::uint32_t in_flight = 0;
    if (!io::take_record(*this, ticket, index, generation, limit, in_flight)) {
      refused = io::failure_cause::no_record;
      return {transaction::none, 0};
    }

    io::transaction_record& rec = records[index];
    rec.destination = reinterpret_cast<std::uint64_t>(buffer);
    rec.lba = lba;
    rec.bytes = bytes;
    rec.blocks = blocks;
    rec.device = dev;
    rec.opcode = static_cast<std::uint32_t>(op);
    rec.issued_ns = now_ns();
    rec.signal_word = signal != nullptr ? reinterpret_cast<std::uint64_t>(signal->word) : 0;
    if (signal != nullptr) {
      rec.signal_status = reinterpret_cast<std::uint64_t>(signal->status);
      rec.signal_failures = reinterpret_cast<std::uint64_t>(signal->failures);
      rec.signal_ok = signal->on_success;
      rec.signal_failed = signal->on_failure;
    }

    // Algorithm 2: start at a queue chosen by the submitter's index; a full queue sends the
    // submitter to the next one. Only when every queue of the device is full does it back off.
    // Submitters that find every queue full sleep longer between sweeps (up to 32 us): with
    // tens of thousands of them, short sleeps turn their polling into the bottleneck. When
    // waiters retire completions, a submitter facing full queues retires some first: otherwise
    // threads that submit several requests before waiting on any could fill every queue and
    // leave nobody to empty them.
    const std::uint32_t start = first_queue(info, in_flight);
    detail::backoff wait(32'768);
    for (;;) {
      for (std::uint32_t k = 0; k < info.qp_count; ++k) {
        const std::uint32_t q = info.first_qp + (start + k) % info.qp_count;
        const queue::queue_pair& qp = queue_pairs[q];
        // Lanes of the warp at this queue together claim, and those that got an entry publish,
        // together (submission.hpp).
        std::uint64_t position = 0;
        if (queue::try_claim(qp, detail::warp::group_by(q), position)) {
          // Relaxed store: a duplicate wait on an earlier handle of this record may read it.
          detail::store<detail::scope::device>(rec.queue_pair, q, detail::relaxed);
          enqueue<StageLoads>(qp, detail::warp::group_by(q), position, raw, op, info, lba, blocks, buffer, bytes,
                              index);
          detail::fetch_add<detail::scope::device>(counters[dev].submitted, std::uint64_t{1}, detail::relaxed);
          return {index, generation};
        }
      }
      detail::fetch_add<detail::scope::device>(counters[dev].queue_full_retries, std::uint64_t{1}, detail::relaxed);
      if constexpr (waiters_retire) {
        service::poll_queue_if_free<service::solo_team>(*this, queue_pairs[info.first_qp + start]);
      }
      if (limit.passed()) {
        io::give_back(*this, rec, detail::load<detail::scope::device>(rec.state, detail::relaxed));
        refused = io::failure_cause::no_queue_entry;
        return {transaction::none, 0};
      }
      wait.pause();
    }
  }

  // Where a submitter starts (an index among the device's queues): its warp's queue, shared by
  // all its lanes so that they claim and ring together. Unless lanes_per_queue says otherwise
  // and few requests are in flight (`in_flight`, over the runtime: fewer than eight per queue
  // pair): then the warp's lanes start at 32 / lanes_per_queue queues side by side, so that a
  // few requests are fetched by several controller threads and retired by several service
  // warps at once instead of one after another. With many in flight every queue is busy, and a
  // warp's lanes together (one claim, one doorbell) are what keeps up: looking at its own
  // queue's occupancy instead, which often seems idle to a warp, cost 512-byte reads at 4096 in
  // flight a quarter of their rate (H100, 2026-11-27).
  AGIO_HD std::uint32_t first_queue(const io::device_info& info, std::uint32_t in_flight) const {
    const std::uint32_t warp = detail::submitter_index();
    // A host thread is a warp of one: nothing to spread.
    if (!detail::on_device() || lanes_per_queue_log2 == 5 || in_flight >= queue_pair_count * spread_below_per_queue) {
      return warp % info.qp_count;
    }
    return ((warp << (5 - lanes_per_queue_log2)) + (detail::warp::lane_id() >> lanes_per_queue_log2)) % info.qp_count;
  }
  static constexpr std::uint32_t spread_below_per_queue = 8;

  template <unsigned StageLoads>
  AGIO_HD static void enqueue(const queue::queue_pair& qp, const detail::warp::lane_group& publishers,
                              std::uint64_t position, const spec::command* raw, spec::opcode op,
                              const io::device_info& info, std::uint64_t lba, std::uint32_t blocks, void* buffer,
                              std::uint32_t bytes, std::uint32_t record) {
    const std::uint32_t slot = qp.depth.remainder(position);
    const std::uint16_t cid = static_cast<std::uint16_t>(slot);
    qp.cid_to_tx[slot] = record;
    spec::command cmd;
    if (raw != nullptr) {
      cmd = *raw;
      cmd.cdw0 = (cmd.cdw0 & 0xffffu) | (std::uint32_t{cid} << 16);
    } else if (op == spec::opcode::flush) {
      cmd = spec::make_flush(cid, info.nsid);
    } else {
      const auto address = reinterpret_cast<std::uint64_t>(buffer);
      std::uint64_t* list = qp.prp_lists + std::uint64_t{slot} * qp.prp_list_entries;
      const std::uint64_t list_iova = qp.prp_lists_iova + std::uint64_t{slot} * qp.prp_list_entries * 8;
      std::uint64_t prp1 = 0;
      std::uint64_t prp2 = 0;
      spec::build_prps(address, bytes, list, list_iova, prp1, prp2);
      cmd = spec::make_rw(op, cid, info.nsid, lba, blocks, prp1, prp2);
    }
    if (raw != nullptr) {
      // A raw command's PRPs may name anything: the controller refuses it unless they name this
      // buffer, so that it never writes a bounce slot nobody staged nor defers a copy to memory
      // it did not check. Typed commands need no such record: their PRPs are built from their
      // buffer. Relaxed: the doorbell's release orders it, as it does the entry.
      queue::declared_buffer& declared = qp.buffers[slot];
      detail::store<detail::scope::system>(declared.address, reinterpret_cast<std::uint64_t>(buffer), detail::relaxed);
      detail::store<detail::scope::system>(declared.bytes, queue::declared_bytes(bytes), detail::relaxed);
    }
    // The lanes publishing together stage their writes' data together, each with StageLoads
    // loads out. publish() below orders every lane's staging before its entry.
    if constexpr (StageLoads != no_staging) {
      const bool stages = op == spec::opcode::write && qp.stage_writes != 0 && buffer != nullptr;
      detail::warp::copy_each<StageLoads>(publishers, qp.bounce + std::uint64_t{slot} * qp.slot_bytes, buffer,
                                          stages ? (bytes < qp.slot_bytes ? bytes : qp.slot_bytes) : 0);
    }
    queue::write_entry(qp.sq[slot], cmd);
    queue::publish(qp, publishers, position);
  }
};

using io_handle = basic_io_handle<io::retirement::by_service>;
using waiting_io_handle = basic_io_handle<io::retirement::by_waiters>;

// The names of the 0.1 release, where `controller` also meant the software NVMe controller.
template <io::retirement Retirement>
using basic_controller [[deprecated("renamed agio::basic_io_handle")]] = basic_io_handle<Retirement>;
using controller [[deprecated("renamed agio::io_handle")]] = io_handle;
using waiting_controller [[deprecated("renamed agio::waiting_io_handle")]] = waiting_io_handle;

}  // namespace agio
