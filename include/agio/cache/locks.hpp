#pragma once
// The locks the cache takes (one per set, held only while a thread inserts a block: never
// while anyone waits for I/O) and those a custom policy may take, all through one interface
// so that the lock-chain debugger (lock_chain.hpp) can watch them. The lock word holds its
// holder's thread index + 1, which is what lets the debugger follow who waits for whom.
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/detail/clock.hpp"
#include "agio/detail/thread_id.hpp"
#include "agio/queue/status.hpp"

namespace agio::cache {

enum class lock_kind : std::uint32_t { cache_set = 1, policy = 2, share_set = 3 };

// What a lock is called in a deadlock report: "cache set 12", "policy lock 3".
struct lock_name {
  lock_kind kind = lock_kind::cache_set;
  std::uint32_t index = 0;

  AGIO_HD std::uint64_t pack() const { return std::uint64_t{static_cast<std::uint32_t>(kind)} << 32 | index; }
  AGIO_HD static lock_name unpack(std::uint64_t v) {
    return {static_cast<lock_kind>(static_cast<std::uint32_t>(v >> 32)), static_cast<std::uint32_t>(v)};
  }
};

// Tries to take `word` once for the calling thread.
AGIO_HD inline bool try_lock(std::uint32_t& word) {
  std::uint32_t free_word = 0;
  // Acquire pairs with unlock's release: the previous holder's writes are seen.
  return detail::compare_exchange<detail::scope::device>(word, free_word, detail::thread_index() + 1, detail::acquire);
}
AGIO_HD inline void unlock(std::uint32_t& word) { detail::store<detail::scope::device>(word, 0u, detail::release); }

// Plain locks: spin with backoff until taken or `limit` passes. The default; costs nothing.
struct no_lock_chain {
  AGIO_HD status acquire(std::uint32_t& word, lock_name, deadline limit) const {
    detail::backoff wait(detail::io_wait_max_sleep_ns);
    while (!try_lock(word)) {
      if (limit.passed()) return {outcome::timeout, 0};
      wait.pause();
    }
    return {outcome::success, 0};
  }
  AGIO_HD void release(std::uint32_t& word, lock_name) const { unlock(word); }
};

}  // namespace agio::cache
