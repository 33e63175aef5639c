#pragma once
// The lock-chain debugger (AGILE §3.5): a drop-in replacement for no_lock_chain, chosen as the
// cache's second template argument,
//
//   agio::cache::lock_chain_recorder recorder(rt, 1024);       // agio/runtime/lock_chain_recorder.hpp
//   agio::software_cache<my_policy, agio::cache::lock_chain> cache(rt, options);
//   auto h = cache.device();  h.locks = recorder.locks();       // a handle that records
//   kernel<<<...>>>(h);  ...;  if (auto r = recorder.report()) std::cerr << *r << '\n';
//
// With no_lock_chain (the default) none of this is compiled in: no_lock_chain is an empty type
// and its acquire is a plain spin. With lock_chain every thread records, in memory the host
// provides, the locks it holds and the lock it is waiting for. A thread that fails to take a
// lock follows the waits-for chain (lock word -> its holder -> the lock that holder waits for
// -> its holder ...); when the chain comes back to the thread itself, on two consecutive checks
// that saw the same waits (so a record that changed in between is never taken for a cycle),
// acquire returns status{outcome::deadlock, 0} instead of spinning until its deadline, and the
// first thread to see a cycle writes a report of it for the host to read.
//
// Records are indexed by detail::thread_index() % slots: give the recorder at least as many
// slots as threads may take locks at once (threads whose indices collide make each other's
// records useless, which only loses detections; it never causes a false report). Cycles of up
// to lock_chain_max_cycle threads are found; each thread's first lock_chain_max_held held
// locks are recorded. Every lock must be taken through the chain (policy.hpp says so).
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "agio/cache/locks.hpp"
#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/detail/clock.hpp"
#include "agio/detail/thread_id.hpp"
#include "agio/queue/status.hpp"

namespace agio::cache {

inline constexpr std::uint32_t lock_chain_max_cycle = 8;
inline constexpr std::uint32_t lock_chain_max_held = 8;

// One thread's record (device memory, zeroed). Only its owner writes it; other threads read it
// while following a chain. The wait (word, name) is published seqlock-style: wait_seq is odd
// while the thread waits, and every store is a release and every load an acquire, so a reader
// that sees the same odd wait_seq before and after reading word and name has a consistent pair.
struct lock_chain_record {
  std::uint32_t owner;       // thread_index() + 1 of the thread using this slot
  std::uint32_t wait_seq;    // odd while waiting; changes with every wait
  std::uint64_t wait_word;   // address of the lock word waited for
  std::uint64_t wait_name;   // lock_name::pack() of it
  std::uint32_t held_count;  // entries of held_* in use
  std::uint32_t held_lost;   // locks held beyond lock_chain_max_held (not recorded)
  std::uint64_t held_word[lock_chain_max_held];
  std::uint64_t held_name[lock_chain_max_held];
};

// The first cycle found (device memory, zeroed). Entry i: thread[i] holds holds[i] and waits
// for waits_for[i], which thread[(i + 1) % length] holds.
struct lock_chain_report {
  std::uint32_t state;  // 0 none, 1 being written, 2 written
  std::uint32_t length;
  std::uint64_t deadlocks;  // acquires that returned outcome::deadlock (all cycles, all threads)
  std::uint32_t thread[lock_chain_max_cycle];
  std::uint64_t holds[lock_chain_max_cycle];
  std::uint64_t waits_for[lock_chain_max_cycle];
};

class lock_chain {
 public:
  lock_chain_record* records = nullptr;  // `slots` records; null: plain locks, nothing recorded
  lock_chain_report* report = nullptr;
  std::uint32_t slots = 0;

  AGIO_HD status acquire(std::uint32_t& word, lock_name name, deadline limit) const {
    if (try_lock(word)) {
      if (records != nullptr) note_held(mine(), word, name);
      return {outcome::success, 0};
    }
    detail::backoff wait(2'048);
    if (records == nullptr) {
      while (!try_lock(word)) {
        if (limit.passed()) return {outcome::timeout, 0};
        wait.pause();
      }
      return {outcome::success, 0};
    }
    lock_chain_record& me = mine();
    begin_wait(me, word, name);
    cycle previous{};
    for (std::uint32_t round = 1;; ++round) {
      if (try_lock(word)) {
        end_wait(me);
        note_held(me, word, name);
        return {outcome::success, 0};
      }
      if (limit.passed()) {
        end_wait(me);
        return {outcome::timeout, 0};
      }
      if (round % 4 == 0) {
        cycle now{};
        if (find_cycle(now)) {
          if (same(now, previous)) {
            end_wait(me);
            publish(now);
            return {outcome::deadlock, 0};
          }
          previous = now;
        } else {
          previous.length = 0;
        }
      }
      wait.pause();
    }
  }

  AGIO_HD void release(std::uint32_t& word, lock_name) const {
    if (records != nullptr) note_released(mine(), word);
    unlock(word);
  }

 private:
  struct cycle {
    std::uint32_t length;
    std::uint32_t thread[lock_chain_max_cycle];
    std::uint32_t seq[lock_chain_max_cycle];
    std::uint64_t word[lock_chain_max_cycle];
    std::uint64_t name[lock_chain_max_cycle];
  };

  template <class T>
  AGIO_HD static T get(T& w) {
    return detail::load<detail::scope::device>(w, detail::acquire);
  }
  template <class T>
  AGIO_HD static void put(T& w, T v) {
    detail::store<detail::scope::device>(w, v, detail::release);
  }
  AGIO_HD static std::uint64_t address(const std::uint32_t& word) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&word));
  }

  AGIO_HD lock_chain_record& mine() const {
    lock_chain_record& r = records[detail::thread_index() % slots];
    const std::uint32_t me = detail::thread_index() + 1;
    if (get(r.owner) != me) {
      // A new owner for the slot: nothing recorded by its previous owner is ours.
      put(r.owner, me);
      put(r.held_count, 0u);
      put(r.held_lost, 0u);
      const std::uint32_t seq = get(r.wait_seq);
      if (seq % 2 != 0) put(r.wait_seq, seq + 1);
    }
    return r;
  }

  AGIO_HD static void begin_wait(lock_chain_record& r, const std::uint32_t& word, lock_name name) {
    put(r.wait_word, address(word));
    put(r.wait_name, name.pack());
    put(r.wait_seq, get(r.wait_seq) + 1);  // odd: waiting
  }
  AGIO_HD static void end_wait(lock_chain_record& r) { put(r.wait_seq, get(r.wait_seq) + 1); }

  AGIO_HD static void note_held(lock_chain_record& r, const std::uint32_t& word, lock_name name) {
    const std::uint32_t n = get(r.held_count);
    if (n == lock_chain_max_held) {
      put(r.held_lost, get(r.held_lost) + 1);
      return;
    }
    put(r.held_word[n], address(word));
    put(r.held_name[n], name.pack());
    put(r.held_count, n + 1);
  }
  AGIO_HD static void note_released(lock_chain_record& r, const std::uint32_t& word) {
    const std::uint32_t n = get(r.held_count);
    const std::uint64_t a = address(word);
    for (std::uint32_t i = 0; i < n; ++i) {
      if (get(r.held_word[i]) != a) continue;
      put(r.held_word[i], get(r.held_word[n - 1]));
      put(r.held_name[i], get(r.held_name[n - 1]));
      put(r.held_count, n - 1);
      return;
    }
    const std::uint32_t lost = get(r.held_lost);
    if (lost != 0) put(r.held_lost, lost - 1);
  }

  // True when `r` (owned by thread `t`) records holding `word` (or lost some of its records).
  AGIO_HD static bool holds(lock_chain_record& r, std::uint64_t word) {
    if (get(r.held_lost) != 0) return true;
    const std::uint32_t n = get(r.held_count);
    for (std::uint32_t i = 0; i < n && i < lock_chain_max_held; ++i) {
      if (get(r.held_word[i]) == word) return true;
    }
    return false;
  }

  // Reads what thread `t` (its record `r`) waits for: false when it does not wait (or its
  // record is another thread's, or changed while read).
  AGIO_HD static bool read_wait(lock_chain_record& r, std::uint32_t t, std::uint32_t& seq, std::uint64_t& word,
                                std::uint64_t& name) {
    if (get(r.owner) != t + 1) return false;
    seq = get(r.wait_seq);
    if (seq % 2 == 0) return false;
    word = get(r.wait_word);
    name = get(r.wait_name);
    return get(r.wait_seq) == seq && get(r.owner) == t + 1;
  }

  // Follows the chain from the calling thread; true with `c` filled when it comes back here.
  AGIO_HD bool find_cycle(cycle& c) const {
    const std::uint32_t self = detail::thread_index();
    c.length = 0;
    if (!read_wait(records[self % slots], self, c.seq[0], c.word[0], c.name[0])) return false;
    c.thread[0] = self;
    for (std::uint32_t k = 0;; ++k) {
      const std::uint32_t held_by = get(*reinterpret_cast<std::uint32_t*>(static_cast<std::uintptr_t>(c.word[k])));
      if (held_by == 0) return false;  // free now: no cycle through it
      const std::uint32_t t = held_by - 1;
      lock_chain_record& r = records[t % slots];
      if (get(r.owner) != held_by || !holds(r, c.word[k])) return false;
      if (t == self) {
        c.length = k + 1;
        return true;
      }
      for (std::uint32_t i = 1; i <= k; ++i) {
        if (c.thread[i] == t) return false;  // a cycle we only wait behind: its members report it
      }
      if (k + 1 == lock_chain_max_cycle) return false;
      c.thread[k + 1] = t;
      if (!read_wait(r, t, c.seq[k + 1], c.word[k + 1], c.name[k + 1])) return false;
    }
  }

  AGIO_HD static bool same(const cycle& a, const cycle& b) {
    if (a.length == 0 || a.length != b.length) return false;
    for (std::uint32_t i = 0; i < a.length; ++i) {
      if (a.thread[i] != b.thread[i] || a.seq[i] != b.seq[i] || a.word[i] != b.word[i]) return false;
    }
    return true;
  }

  AGIO_HD void publish(const cycle& c) const {
    detail::fetch_add<detail::scope::device>(report->deadlocks, std::uint64_t{1}, detail::relaxed);
    std::uint32_t empty = 0;
    if (!detail::compare_exchange<detail::scope::device>(report->state, empty, 1u, detail::acquire)) return;
    for (std::uint32_t i = 0; i < c.length; ++i) {
      detail::store<detail::scope::device>(report->thread[i], c.thread[i], detail::relaxed);
      detail::store<detail::scope::device>(report->waits_for[i], c.name[i], detail::relaxed);
      detail::store<detail::scope::device>(report->holds[i], c.name[(i + c.length - 1) % c.length], detail::relaxed);
    }
    detail::store<detail::scope::device>(report->length, c.length, detail::relaxed);
    detail::store<detail::scope::device>(report->state, 2u, detail::release);
  }
};

static_assert(std::is_trivially_copyable_v<lock_chain>, "lock_chain is copied into kernels by value");
static_assert(std::is_empty_v<no_lock_chain>, "no_lock_chain must compile away");

// "cache set 12", "policy lock 3".
inline std::string to_string(lock_name name) {
  const char* kind = name.kind == lock_kind::cache_set   ? "cache set "
                     : name.kind == lock_kind::policy    ? "policy lock "
                     : name.kind == lock_kind::share_set ? "share table set "
                                                         : "lock ";
  return kind + std::to_string(name.index);
}

}  // namespace agio::cache
