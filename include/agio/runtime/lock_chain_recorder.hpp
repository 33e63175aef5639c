#pragma once
// The host side of the lock-chain debugger (agio/cache/lock_chain.hpp): the records and the
// report live in device memory that this object allocates through the runtime.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agio/cache/lock_chain.hpp"
#include "agio/runtime/runtime.hpp"

namespace agio::cache {

// Host side: allocates the records and the report in device memory (runtime::allocate_device),
// hands out the lock_chain value for cache handles, and reads the report back.
class lock_chain_recorder {
 public:
  // Records for up to `threads` threads taking locks at once (slot = thread_index() % threads).
  explicit lock_chain_recorder(runtime& rt, std::uint32_t threads = 4096) : rt_(rt) {
    chain_.slots = threads == 0 ? 1 : threads;
    chain_.report = static_cast<lock_chain_report*>(rt_.allocate_device(sizeof(lock_chain_report)));
    chain_.records =
        static_cast<lock_chain_record*>(rt_.allocate_device(std::size_t{chain_.slots} * sizeof(lock_chain_record)));
    clear_records();
    clear();
  }
  ~lock_chain_recorder() {
    rt_.free(chain_.records);
    rt_.free(chain_.report);
  }
  lock_chain_recorder(const lock_chain_recorder&) = delete;
  lock_chain_recorder& operator=(const lock_chain_recorder&) = delete;

  // What to put in cache_handle::locks (by value).
  lock_chain locks() const { return chain_; }

  // The first cycle found, e.g. "lock cycle: thread 3 holds cache set 1 and waits for cache
  // set 2; thread 7 holds cache set 2 and waits for cache set 1". Read it while no thread
  // takes locks through the chain (after the kernel or the CPU threads finished).
  std::optional<std::string> report() const {
    lock_chain_report r{};
    rt_.copy_to_host(&r, chain_.report, sizeof r);
    if (r.state != 2 || r.length == 0 || r.length > lock_chain_max_cycle) return std::nullopt;
    std::string out = "lock cycle: ";
    for (std::uint32_t i = 0; i < r.length; ++i) {
      if (i != 0) out += "; ";
      out += "thread " + std::to_string(r.thread[i]) + " holds " + to_string(lock_name::unpack(r.holds[i])) +
             " and waits for " + to_string(lock_name::unpack(r.waits_for[i]));
    }
    return out;
  }
  // How many acquires returned outcome::deadlock so far (over every cycle, not only the first).
  std::uint64_t deadlocks() const {
    lock_chain_report r{};
    rt_.copy_to_host(&r, chain_.report, sizeof r);
    return r.deadlocks;
  }
  // Forgets the report (records of locks held stay: they describe the present).
  void clear() {
    const lock_chain_report zero{};
    rt_.copy_to_device(chain_.report, &zero, sizeof zero);
  }

 private:
  void clear_records() {
    const std::vector<lock_chain_record> zero(chain_.slots);
    rt_.copy_to_device(chain_.records, zero.data(), zero.size() * sizeof(lock_chain_record));
  }

  runtime& rt_;
  lock_chain chain_{};
};

}  // namespace agio::cache
