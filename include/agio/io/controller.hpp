#pragma once
// The handle GPU kernels (and CPU threads) use to reach storage: asynchronous reads and writes
// that return a transaction at once, and waits that return a status by a deadline.
//
// A `controller` is a plain struct of pointers, made by agio::runtime and passed by value
// to kernels. Everything here runs on the device and on the host.
//
// Who retires completions is part of the type (runtime_options::completion picks which one
// the runtime hands out): `controller` leaves it to the completion service, so kernels carry
// no completion-queue code at all (AGILE §4.6: the service keeps application kernels light);
// `waiting_controller` makes waiting threads poll the queues themselves (BaM's model).
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/detail/clock.hpp"
#include "agio/detail/copy.hpp"
#include "agio/detail/thread_id.hpp"
#include "agio/detail/warp.hpp"
#include "agio/io/io_state.hpp"
#include "agio/io/status.hpp"
#include "agio/queue/submission.hpp"
#include "agio/service/retire.hpp"
#include "agio/spec/prp.hpp"

namespace agio {

// Where a signalled request reports its outcome (see controller::async_read_signalled).
struct completion_signal {
  std::uint32_t* word = nullptr;
  std::uint32_t on_success = 0;
  std::uint32_t on_failure = 0;
  std::uint32_t* status = nullptr;  // status::pack() of the outcome, stored before `word`
};

// What async_read/async_write return: a transaction record to wait on, or an outcome decided
// before anything was submitted (bad argument, runtime stopped, no resources).
struct transaction {
  static constexpr std::uint32_t none = ~std::uint32_t{0};
  std::uint32_t record = none;
  std::uint32_t immediate = 0;  // status::pack() when record == none

  AGIO_HD bool submitted() const { return record != none; }
};

// The state it points to is filled in by the runtime.
template <io::retirement Retirement>
class basic_controller : public io::io_state {
 public:
  static constexpr bool waiters_retire = Retirement == io::retirement::by_waiters;

  AGIO_HD transaction async_read(std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks, void* dst) const {
    return submit(spec::opcode::read, dev, lba, blocks, dst);
  }
  AGIO_HD transaction async_write(std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks,
                                  const void* src) const {
    return submit(spec::opcode::write, dev, lba, blocks, const_cast<void*>(src));
  }
  // Fire-and-forget variants for layers that track completion in their own words (the cache's
  // line states): nobody waits on the request; when it finishes, its status is stored in
  // `signal.status` (if set) and then `signal.on_success` or `signal.on_failure` in
  // `signal.word`, with release. The returned status is only whether it was submitted.
  AGIO_HD status async_read_signalled(std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks, void* dst,
                                      const completion_signal& signal) const {
    return submitted(submit(spec::opcode::read, dev, lba, blocks, dst, &signal));
  }
  AGIO_HD status async_write_signalled(std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks, const void* src,
                                       const completion_signal& signal) const {
    return submitted(submit(spec::opcode::write, dev, lba, blocks, const_cast<void*>(src), &signal));
  }

  // Makes every write the device acknowledged so far durable.
  AGIO_HD transaction async_flush(std::uint32_t dev) const { return submit(spec::opcode::flush, dev, 0, 0, nullptr); }

  // Submits `cmd` as it is, but for its command identifier, which the queue assigns. For
  // tools and tests that need commands the typed calls refuse to build (any opcode, any
  // PRP). A read's data is copied to `buffer` (`bytes` long) where the transport defers copies.
  AGIO_HD transaction async_passthrough(std::uint32_t dev, const spec::command& cmd, void* buffer,
                                        std::uint32_t bytes) const {
    if (dev >= device_count) return reject(outcome::invalid_argument);
    return issue(dev, &cmd, static_cast<spec::opcode>(cmd.opc()), cmd.slba(), cmd.blocks(), buffer, bytes);
  }

  // Waits for `t` until `limit`. A finished transaction's record is given back, so each
  // transaction is waited on successfully once; after a timeout it may be waited on again.
  // When waiters retire completions (waiting_controller), the waiter polls the queue its
  // command went to.
  AGIO_HD status wait_for(transaction t, deadline limit) const {
    if (!t.submitted()) return status::unpack(t.immediate);
    io::transaction_record& rec = records[t.record];
    std::uint32_t word = 0;
    // Acquire pairs with the retirer's release of the result: the data is in place.
    const auto finished = [&] { return (word = detail::load<detail::scope::device>(rec.result, detail::acquire)) != 0; };
    const bool done = detail::poll_until(
        [&] {
          if constexpr (waiters_retire) {
            if (finished()) return true;
            service::poll_queue_if_free<service::solo_team>(*this, queue_pairs[rec.queue_pair]);
          }
          return finished();
        },
        limit, detail::io_wait_max_sleep_ns);
    if (!done) return {outcome::timeout, 0};
    detail::store<detail::scope::device>(rec.result, 0u, detail::relaxed);
    // Release pairs with acquire_record's exchange: the reset result is seen by the next owner.
    detail::store<detail::scope::device>(rec.owner, 0u, detail::release);
    return status::unpack(word);
  }
  AGIO_HD status wait(transaction t) const { return wait_for(t, deadline::after_ns(wait_timeout_ns)); }

  // True once `t` has finished (it still has to be waited on to collect its status).
  AGIO_HD bool ready(transaction t) const {
    if (!t.submitted()) return true;
    const io::transaction_record& rec = records[t.record];
    if (detail::load<detail::scope::device>(rec.result, detail::acquire) != 0) return true;
    if constexpr (waiters_retire) {
      service::poll_queue_if_free<service::solo_team>(*this, queue_pairs[rec.queue_pair]);
      return detail::load<detail::scope::device>(rec.result, detail::acquire) != 0;
    } else {
      return false;
    }
  }

  // When waiters retire completions, a thread that waits on something other than a transaction
  // (a cache line's state, set by a signalled request) calls this between looks, so that what
  // it waits for gets retired. Empty in `controller`, whose completions the service retires.
  AGIO_HD void help_retire(std::uint32_t dev) const {
    if constexpr (waiters_retire) {
      if (dev >= device_count) return;
      const io::device_info& info = devices[dev];
      for (std::uint32_t q = 0; q < info.qp_count; ++q) {
        service::poll_queue_if_free<service::solo_team>(*this, queue_pairs[info.first_qp + q]);
      }
    }
  }

  AGIO_HD status read(std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks, void* dst) const {
    return wait(async_read(dev, lba, blocks, dst));
  }
  AGIO_HD status write(std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks, const void* src) const {
    return wait(async_write(dev, lba, blocks, src));
  }

  AGIO_HD std::uint32_t lba_bytes(std::uint32_t dev) const { return devices[dev].lba_bytes; }
  AGIO_HD std::uint64_t capacity_blocks(std::uint32_t dev) const { return devices[dev].capacity_blocks; }
  AGIO_HD std::uint32_t max_blocks(std::uint32_t dev) const { return devices[dev].max_blocks; }

 private:
  AGIO_HD static transaction reject(outcome why) { return {transaction::none, status{why, 0}.pack()}; }

  // A signalled request was submitted (ok) or refused before submission (its outcome).
  AGIO_HD static status submitted(transaction t) {
    return t.submitted() ? status{outcome::success, 0} : status::unpack(t.immediate);
  }

  AGIO_HD transaction submit(spec::opcode op, std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks,
                             void* buffer, const completion_signal* signal = nullptr) const {
    if (dev >= device_count) return reject(outcome::invalid_argument);
    const io::device_info& info = devices[dev];
    if (op != spec::opcode::flush && (blocks == 0 || blocks > info.max_blocks)) {
      return reject(outcome::invalid_argument);
    }
    return issue(dev, nullptr, op, lba, blocks, buffer, blocks * info.lba_bytes, signal);
  }

  // Takes a transaction record and a queue entry and submits either the typed command or `raw`.
  AGIO_HD transaction issue(std::uint32_t dev, const spec::command* raw, spec::opcode op, std::uint64_t lba,
                            std::uint32_t blocks, void* buffer, std::uint32_t bytes,
                            const completion_signal* signal = nullptr) const {
    // Sequentially consistent with stop(): either this submitter sees `accepting` cleared, or
    // the draining service sees it in `in_submission` and waits for its command.
    detail::fetch_add<detail::scope::device>(control->in_submission, 1u, detail::seq_cst);
    const transaction t = (detail::load<detail::scope::device>(control->accepting, detail::seq_cst) == 0)
                              ? reject(outcome::stopped)
                              : claim_and_enqueue(dev, raw, op, lba, blocks, buffer, bytes, signal);
    detail::fetch_add<detail::scope::device>(control->in_submission, ~0u, detail::release);
    return t;
  }

  AGIO_HD transaction claim_and_enqueue(std::uint32_t dev, const spec::command* raw, spec::opcode op,
                                        std::uint64_t lba, std::uint32_t blocks, void* buffer, std::uint32_t bytes,
                                        const completion_signal* signal) const {
    const io::device_info& info = devices[dev];
    const deadline limit = deadline::after_ns(submit_timeout_ns);
    std::uint32_t index = 0;
    if (!acquire_record(index, limit)) return reject(outcome::no_resources);

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
    const std::uint32_t start = detail::submitter_index() % info.qp_count;
    detail::backoff wait(32'768);
    for (;;) {
      for (std::uint32_t k = 0; k < info.qp_count; ++k) {
        const std::uint32_t q = info.first_qp + (start + k) % info.qp_count;
        const queue::queue_pair& qp = queue_pairs[q];
        // Lanes of the warp at this queue together claim, and those that got an entry publish,
        // together (submission.hpp).
        std::uint64_t position = 0;
        if (queue::try_claim(qp, detail::warp::group_by(q), position)) {
          rec.queue_pair = q;
          enqueue(qp, detail::warp::group_by(q), position, raw, op, info, lba, blocks, buffer, bytes, index);
          detail::fetch_add<detail::scope::device>(counters[dev].submitted, std::uint64_t{1}, detail::relaxed);
          return {index, 0};
        }
      }
      detail::fetch_add<detail::scope::device>(counters[dev].queue_full_retries, std::uint64_t{1}, detail::relaxed);
      if constexpr (waiters_retire) {
        service::poll_queue_if_free<service::solo_team>(*this, queue_pairs[info.first_qp + start]);
      }
      if (limit.passed()) {
        detail::store<detail::scope::device>(rec.owner, 0u, detail::release);
        return reject(outcome::no_resources);
      }
      wait.pause();
    }
  }

  // Takes a free transaction record; records are scanned from a shared cursor so that takers
  // spread over the pool.
  AGIO_HD bool acquire_record(std::uint32_t& index, deadline limit) const {
    detail::backoff wait(4'096);
    for (;;) {
      for (std::uint32_t probe = 0; probe < 64; ++probe) {
        const std::uint32_t i =
            detail::fetch_add<detail::scope::device>(control->tx_cursor, 1u, detail::relaxed) % record_count;
        // Acquire pairs with wait_for's release when the previous owner gave it back.
        if (detail::exchange<detail::scope::device>(records[i].owner, 1u, detail::acquire) == 0) {
          index = i;
          return true;
        }
      }
      if (limit.passed()) return false;
      wait.pause();
    }
  }

  AGIO_HD static void enqueue(const queue::queue_pair& qp, const detail::warp::lane_group& publishers,
                              std::uint64_t position, const spec::command* raw,
                              spec::opcode op, const io::device_info& info, std::uint64_t lba, std::uint32_t blocks,
                              void* buffer, std::uint32_t bytes, std::uint32_t record) {
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
    if (op == spec::opcode::write && qp.stage_writes != 0 && buffer != nullptr) {
      detail::thread_copy(qp.bounce + std::uint64_t{slot} * qp.slot_bytes, buffer,
                          bytes < qp.slot_bytes ? bytes : qp.slot_bytes);
    }
    queue::write_entry(qp.sq[slot], cmd);
    queue::publish(qp, publishers, position);
  }
};

using controller = basic_controller<io::retirement::by_service>;
using waiting_controller = basic_controller<io::retirement::by_waiters>;

}  // namespace agio
