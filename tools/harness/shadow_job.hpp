#pragma once
// The cache against a shadow model, as a job for run_job: the CPU and GPU suites and `agio soak`
// run it on std::threads or GPU threads. Many mixed operations go through a cache, usually far
// smaller than the data, while the store may fail reads and writes; shadow_run.hpp drives the
// phases around it and checks storage against the model.
//
// Every word has one writer, so each thread's shadow of what it wrote is the truth for those
// words whatever the interleaving: the shared blocks' words are owned round-robin by the
// threads (so their lines are contended: false sharing, concurrent fills, evictions of lines
// others are using), and each thread also owns private blocks it rewrites whole or in part.
// Reads check what the reader owns; whole-block reads of shared blocks check the reader's
// words in the copy, which read-after-write through the cache guarantees. With a share table,
// whole-block reads go through it: readers of a contended block get one another's buffers,
// and must still see their own latest writes.
//
// Faults: an operation that fails must say why with a store error (nvme_error), or with
// timeout when it ran under the hurried handle's short deadline, and must leave the model as
// it was: a failed write did not happen. Values grow per word (a per-thread stamp above a
// fixed per-word tag), so after a write-back failed storage can be checked to hold a value
// between the last flushed one and the newest one, and a read that returns another block's
// data shows in the tag.
#include <cstdint>
#include <string>

#include "agio/cache/array_view.hpp"
#include "agio/cache/cache.hpp"
#include "agio/portable.hpp"
#include "harness/mix.hpp"

namespace agio::bench {

struct shadow_shape {
  std::uint32_t threads = 8;
  std::uint64_t ops_per_thread = 131072;
  std::uint64_t shared_blocks = 16;
  std::uint64_t private_blocks_per_thread = 6;
  static constexpr std::uint32_t line_bytes = 4096;
  static constexpr std::uint32_t words_per_block = line_bytes / sizeof(std::uint32_t);

  AGIO_HD std::uint64_t blocks() const { return shared_blocks + threads * private_blocks_per_thread; }
  // Shared words per thread: at least one when shared_blocks * words_per_block >= threads.
  AGIO_HD std::uint64_t shared_slots() const { return shared_blocks * words_per_block / threads; }
  AGIO_HD std::uint64_t private_block(std::uint32_t thread, std::uint64_t k) const {
    return shared_blocks + thread * private_blocks_per_thread + k;
  }
};

// A word's value: the stamp of the write that stored it above 8 bits fixed per word. Stamp 0 is
// the store's initial content.
inline constexpr std::uint32_t shadow_stamp_bits = 24;
AGIO_HD inline std::uint32_t shadow_value(std::uint64_t word, std::uint32_t stamp) {
  return stamp << 8 | static_cast<std::uint32_t>(mix64(word) & 0xff);
}

enum class shadow_step : std::uint32_t {
  element_write = 1,
  element_read,
  async_read,
  async_write,
  partial_write,
  partial_read,
  prefetch,
  release,
};

inline const char* describe(shadow_step s) {
  switch (s) {
    case shadow_step::element_write: return "element write";
    case shadow_step::element_read: return "element read";
    case shadow_step::async_read: return "async read";
    case shadow_step::async_write: return "async write";
    case shadow_step::partial_write: return "partial write";
    case shadow_step::partial_read: return "partial read";
    case shadow_step::prefetch: return "prefetch";
    case shadow_step::release: return "release of a shared buffer";
  }
  return "unknown step";
}

// What went wrong: `count` counts every wrong value or unexpected status; the thread that
// counted the first fills the rest.
struct shadow_failure {
  std::uint32_t count;
  std::uint32_t thread;
  shadow_step step;
  std::uint32_t result;  // status::pack(); success when a read returned the wrong value
  std::uint64_t word;    // word (or block * words_per_block) concerned
  std::uint32_t seen;
  std::uint32_t expected;

  std::string describe() const {
    const status s = status::unpack(result);
    std::string out = "thread " + std::to_string(thread) + ", " + bench::describe(step) + " at word " +
                      std::to_string(word) + " (block " + std::to_string(word / shadow_shape::words_per_block) + "): ";
    if (s.result == outcome::success && seen == 0 && expected == 0)
      return out + "succeeded on a block that always fails";
    if (!s.ok()) return out + agio::describe(s.result) + " (NVMe status " + std::to_string(s.nvme_status) + ")";
    return out + "read " + std::to_string(seen) + ", the model says " + std::to_string(expected);
  }
};

// One thread's outcomes, written by that thread alone and read after the job.
struct shadow_tally {
  std::uint64_t reads_checked;  // reads that succeeded and matched the model
  std::uint64_t writes_acknowledged;
  std::uint64_t prefetches;
  std::uint64_t store_errors;  // operations that failed with the store's error
  std::uint64_t timeouts;      // operations under the short deadline that gave up

  std::uint64_t operations() const {
    return reads_checked + writes_acknowledged + prefetches + store_errors + timeouts;
  }
  shadow_tally& operator+=(const shadow_tally& o) {
    reads_checked += o.reads_checked;
    writes_acknowledged += o.writes_acknowledged;
    prefetches += o.prefetches;
    store_errors += o.store_errors;
    timeouts += o.timeouts;
    return *this;
  }
};

inline constexpr std::uint64_t no_block = ~std::uint64_t{0};

template <class Policy, class Shares = cache::no_share_table, class IO = io_handle>
struct shadow_job {
  using handle = cache::cache_handle<Policy, cache::no_lock_chain, Shares, IO>;
  handle cache;
  handle hurried;             // the same cache with a short wait deadline
  std::uint32_t hurry_every;  // 1 in hurry_every operations uses `hurried` (0: none)
  shadow_shape shape;
  std::uint32_t first_stamp;    // this round's first stamp, the same for every thread
  std::uint64_t failing_block;  // a shared block whose every read fails, or no_block
  std::uint32_t* truth;         // the model: blocks() * words_per_block words, each written by its owner
  std::uint32_t* buffers;       // one block per thread, registered for I/O
  shadow_failure* failure;
  shadow_tally* tallies;  // one per thread

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    worker w{*this,       t, buffers + std::uint64_t{t} * shadow_shape::words_per_block, 0x5eedull + t + first_stamp,
             first_stamp, {}};
    for (std::uint64_t op = 0; op < shape.ops_per_thread; ++op) {
      if (portable::load<portable::scope::device>(failure->count, portable::relaxed) != 0) break;
      w.step();
    }
    tallies[t] = w.tally;
  }

 private:
  struct worker {
    const shadow_job& job;
    std::uint32_t id;
    std::uint32_t* buffer;
    std::uint64_t rng;
    std::uint32_t stamp;
    shadow_tally tally;

    AGIO_HD std::uint64_t next() { return mix64(rng += 0x9e3779b97f4a7c15ull); }
    AGIO_HD deadline limit(const handle& c) const { return deadline::after_ns(c.wait_timeout_ns); }
    AGIO_HD std::uint64_t private_block() {
      return job.shape.private_block(id, next() % job.shape.private_blocks_per_thread);
    }

    AGIO_HD void fail(shadow_step step, status s, std::uint64_t word, std::uint32_t seen, std::uint32_t expected) {
      if (portable::fetch_add<portable::scope::device>(job.failure->count, 1u, portable::relaxed) != 0) return;
      // Only this thread writes the rest; it is read after the job ends.
      job.failure->thread = id;
      job.failure->step = step;
      job.failure->result = s.pack();
      job.failure->word = word;
      job.failure->seen = seen;
      job.failure->expected = expected;
    }
    // True when `s` is a success to check. A failure must be the store's error, or a timeout
    // under the short deadline; a success on the always-failing block is wrong.
    AGIO_HD bool check(shadow_step step, status s, std::uint64_t block, bool hurried) {
      if (s.ok()) {
        if (block != job.failing_block || step == shadow_step::prefetch || step == shadow_step::release) return true;
        fail(step, s, block * shadow_shape::words_per_block, 0, 0);
        return false;
      }
      if (s.result == outcome::nvme_error) {
        ++tally.store_errors;
      } else if (s.result == outcome::timeout && hurried) {
        ++tally.timeouts;
      } else {
        fail(step, s, block * shadow_shape::words_per_block, 0, 0);
      }
      return false;
    }
    AGIO_HD void expect(shadow_step step, std::uint64_t word, std::uint32_t seen) {
      if (seen != job.truth[word]) fail(step, {outcome::success, 0}, word, seen, job.truth[word]);
    }

    // A word this thread owns: in the shared blocks (word w belongs to thread w % threads) or in
    // one of its private blocks.
    AGIO_HD std::uint64_t own_word() {
      constexpr std::uint32_t words = shadow_shape::words_per_block;
      if (next() % 2 == 0) return (next() % job.shape.shared_slots()) * job.shape.threads + id;
      return private_block() * words + next() % words;
    }

    AGIO_HD void step() {
      const bool hurry = job.hurry_every != 0 && next() % job.hurry_every == 0;
      const handle& c = hurry ? job.hurried : job.cache;
      const cache::array_view<std::uint32_t, Policy, cache::no_lock_chain, Shares, IO> view{c};
      const std::uint32_t kind = static_cast<std::uint32_t>(next() % 100);
      if (kind < 30) {
        const std::uint64_t word = own_word();
        const std::uint32_t value = shadow_value(word, ++stamp);
        if (check(shadow_step::element_write, view.put(0, word, value), word / shadow_shape::words_per_block, hurry)) {
          job.truth[word] = value;
          ++tally.writes_acknowledged;
        }
      } else if (kind < 60) {
        const std::uint64_t word = own_word();
        std::uint32_t seen = 0;
        if (check(shadow_step::element_read, view.get(0, word, seen), word / shadow_shape::words_per_block, hurry)) {
          expect(shadow_step::element_read, word, seen);
          ++tally.reads_checked;
        }
      } else if (kind < 70) {
        read_block(c, hurry, private_block(), 0, 1);
      } else if (kind < 78) {
        const std::uint64_t block = next() % job.shape.shared_blocks;
        const std::uint64_t before = block * shadow_shape::words_per_block % job.shape.threads;
        read_block(c, hurry, block, static_cast<std::uint32_t>((id + job.shape.threads - before) % job.shape.threads),
                   job.shape.threads);
      } else if (kind < 88) {
        write_block(c, hurry);
      } else if (kind < 95) {
        write_range(c, hurry);
      } else {
        const std::uint64_t block = next() % job.shape.blocks();
        if (check(shadow_step::prefetch, c.prefetch(0, block), block, hurry)) ++tally.prefetches;
      }
    }

    // Reads a whole block into the buffer (or, with a share table, into a buffer shared with
    // other readers of the block) and checks words first, first + stride, ... (none when first
    // is past the block: a thread may own no word of a shared block).
    AGIO_HD void read_block(const handle& c, bool hurry, std::uint64_t block, std::uint32_t first,
                            std::uint32_t stride) {
      if constexpr (Shares::enabled) {
        cache::share_transaction t = c.async_read(0, block, buffer);
        if (check(shadow_step::async_read, c.wait(t), block, hurry)) {
          compare(static_cast<const std::uint32_t*>(t.data()), block, first, stride);
        }
        // Under the full deadline: a buffer must not stay shared because its release hurried.
        check(shadow_step::release, job.cache.release(t), block, false);
      } else {
        if (!check(shadow_step::async_read, c.wait(c.async_read(0, block, buffer)), block, hurry)) return;
        compare(buffer, block, first, stride);
      }
    }
    AGIO_HD void compare(const std::uint32_t* data, std::uint64_t block, std::uint32_t first, std::uint32_t stride) {
      for (std::uint32_t w = first; w < shadow_shape::words_per_block; w += stride) {
        expect(shadow_step::async_read, block * shadow_shape::words_per_block + w, data[w]);
      }
      ++tally.reads_checked;
    }
    AGIO_HD void write_block(const handle& c, bool hurry) {
      const std::uint64_t block = private_block();
      const std::uint64_t base = block * shadow_shape::words_per_block;
      ++stamp;
      for (std::uint32_t w = 0; w < shadow_shape::words_per_block; ++w) buffer[w] = shadow_value(base + w, stamp);
      if (!check(shadow_step::async_write, c.wait(c.async_write(0, block, buffer)), block, hurry)) return;
      for (std::uint32_t w = 0; w < shadow_shape::words_per_block; ++w) job.truth[base + w] = buffer[w];
      ++tally.writes_acknowledged;
    }
    // Rewrites a random range of a private block, then reads its first word back.
    AGIO_HD void write_range(const handle& c, bool hurry) {
      constexpr std::uint32_t words = shadow_shape::words_per_block;
      const std::uint64_t block = private_block();
      const std::uint64_t base = block * words;
      const auto first = static_cast<std::uint32_t>(next() % words);
      const auto count = 1 + static_cast<std::uint32_t>(next() % (words - first));
      ++stamp;
      for (std::uint32_t w = 0; w < count; ++w) buffer[w] = shadow_value(base + first + w, stamp);
      if (!check(shadow_step::partial_write, c.write_bytes(0, block, first * 4, count * 4, buffer, limit(c)), block,
                 hurry)) {
        return;
      }
      for (std::uint32_t w = 0; w < count; ++w) job.truth[base + first + w] = buffer[w];
      ++tally.writes_acknowledged;
      std::uint32_t seen = 0;
      if (check(shadow_step::partial_read, c.read_bytes(0, block, first * 4, 4, &seen, limit(c)), block, hurry)) {
        expect(shadow_step::partial_read, base + first, seen);
        ++tally.reads_checked;
      }
    }
  };
};

}  // namespace agio::bench
