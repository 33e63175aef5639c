#pragma once
// The cache against a shadow model, as a job for run_job: the CPU suite runs it on std::threads,
// the GPU suite on GPU threads. Over a million mixed operations go through a cache far smaller
// than the data; the caller then flushes and compares storage with the model byte for byte.
//
// Every word has one writer, so each thread's shadow of what it wrote is the truth for those
// words whatever the interleaving: the shared blocks' words are owned round-robin by the
// threads (so their lines are contended: false sharing, concurrent fills, evictions of lines
// others are using), and each thread also owns private blocks it rewrites whole or in part.
// Reads check what the reader owns; whole-block reads of shared blocks check the reader's
// words in the copy, which read-after-write through the cache guarantees. With a share table,
// whole-block reads go through it: readers of a contended block get one another's buffers,
// and must still see their own latest writes.
#include <cstdint>
#include <string>

#include "agio/cache/array_view.hpp"
#include "agio/cache/cache.hpp"
#include "harness/mix.hpp"

namespace agio::test {

struct shadow_shape {
  std::uint32_t threads = 8;
  std::uint64_t ops_per_thread = 131072;
  std::uint64_t shared_blocks = 16;
  std::uint64_t private_blocks_per_thread = 6;
  static constexpr std::uint32_t line_bytes = 4096;
  static constexpr std::uint32_t words_per_block = line_bytes / sizeof(std::uint32_t);

  AGIO_HD std::uint64_t blocks() const { return shared_blocks + threads * private_blocks_per_thread; }
  AGIO_HD std::uint64_t private_block(std::uint32_t thread, std::uint64_t k) const {
    return shared_blocks + thread * private_blocks_per_thread + k;
  }
};

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

// The first thing that went wrong. `count` is claimed by the one thread that fills the rest.
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
    std::string out = "thread " + std::to_string(thread) + ", " + test::describe(step) + " at word " +
                      std::to_string(word) + " (block " + std::to_string(word / shadow_shape::words_per_block) + "): ";
    if (!s.ok()) return out + agio::describe(s.result);
    return out + "read " + std::to_string(seen) + ", the model says " + std::to_string(expected);
  }
};

template <class Policy, class Shares = cache::no_share_table, class IO = controller>
struct shadow_job {
  cache::cache_handle<Policy, cache::no_lock_chain, Shares, IO> cache;
  shadow_shape shape;
  std::uint32_t* truth;     // the model: blocks() * words_per_block words, each written by its owner
  std::uint32_t* buffers;   // one block per thread, registered for I/O
  shadow_failure* failure;

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    worker w{*this, t, buffers + std::uint64_t{t} * shadow_shape::words_per_block, 0x5eedull + t};
    for (std::uint64_t op = 0; op < shape.ops_per_thread; ++op) {
      if (detail::load<detail::scope::device>(failure->count, detail::relaxed) != 0) return;
      w.step(op);
    }
  }

 private:
  struct worker {
    const shadow_job& job;
    std::uint32_t id;
    std::uint32_t* buffer;
    std::uint64_t rng;

    AGIO_HD std::uint64_t next() { return bench::mix64(rng += 0x9e3779b97f4a7c15ull); }
    AGIO_HD std::uint32_t next_value() { return static_cast<std::uint32_t>(next()) | 1u; }
    AGIO_HD deadline limit() const { return deadline::after_ns(job.cache.wait_timeout_ns); }
    AGIO_HD std::uint64_t private_block() { return job.shape.private_block(id, next() % job.shape.private_blocks_per_thread); }

    AGIO_HD void fail(shadow_step step, status s, std::uint64_t word, std::uint32_t seen, std::uint32_t expected) {
      std::uint32_t none = 0;
      if (!detail::compare_exchange<detail::scope::device>(job.failure->count, none, 1u, detail::relaxed)) return;
      // Only this thread writes the rest; it is read after the job ends.
      job.failure->thread = id;
      job.failure->step = step;
      job.failure->result = s.pack();
      job.failure->word = word;
      job.failure->seen = seen;
      job.failure->expected = expected;
    }
    AGIO_HD bool check(shadow_step step, status s, std::uint64_t block) {
      if (!s.ok()) fail(step, s, block * shadow_shape::words_per_block, 0, 0);
      return s.ok();
    }
    AGIO_HD void expect(shadow_step step, std::uint64_t word, std::uint32_t seen) {
      if (seen != job.truth[word]) fail(step, {outcome::success, 0}, word, seen, job.truth[word]);
    }

    // A word this thread owns: in a shared block or in one of its private blocks.
    AGIO_HD std::uint64_t own_word() {
      constexpr std::uint32_t words = shadow_shape::words_per_block;
      if (next() % 2 == 0) {
        const std::uint64_t block = next() % job.shape.shared_blocks;
        const std::uint64_t slot = next() % (words / job.shape.threads);
        return block * words + slot * job.shape.threads + id;
      }
      return private_block() * words + next() % words;
    }

    AGIO_HD void step(std::uint64_t op) {
      const cache::array_view<std::uint32_t, Policy, cache::no_lock_chain, Shares, IO> view{job.cache};
      const std::uint32_t kind = static_cast<std::uint32_t>(next() % 100);
      if (kind < 30) {
        const std::uint64_t word = own_word();
        const std::uint32_t value = next_value();
        if (check(shadow_step::element_write, view.put(0, word, value), word / shadow_shape::words_per_block)) {
          job.truth[word] = value;
        }
      } else if (kind < 60) {
        const std::uint64_t word = own_word();
        std::uint32_t seen = 0;
        if (check(shadow_step::element_read, view.get(0, word, seen), word / shadow_shape::words_per_block)) {
          expect(shadow_step::element_read, word, seen);
        }
      } else if (kind < 70) {
        read_block(private_block(), 0, 1);
      } else if (kind < 78) {
        read_block(next() % job.shape.shared_blocks, id, job.shape.threads);
      } else if (kind < 88) {
        write_block(op);
      } else if (kind < 95) {
        write_range();
      } else {
        const std::uint64_t block = next() % job.shape.blocks();
        check(shadow_step::prefetch, job.cache.prefetch(0, block), block);
      }
    }

    // Reads a whole block into the buffer (or, with a share table, into a buffer shared with
    // other readers of the block) and checks words first, first + stride, ...
    AGIO_HD void read_block(std::uint64_t block, std::uint32_t first, std::uint32_t stride) {
      if constexpr (Shares::enabled) {
        cache::share_transaction t = job.cache.async_read(0, block, buffer);
        if (check(shadow_step::async_read, job.cache.wait(t), block)) {
          compare(static_cast<const std::uint32_t*>(t.data()), block, first, stride);
        }
        check(shadow_step::release, job.cache.release(t), block);
      } else {
        if (!check(shadow_step::async_read, job.cache.wait(job.cache.async_read(0, block, buffer)), block)) return;
        compare(buffer, block, first, stride);
      }
    }
    AGIO_HD void compare(const std::uint32_t* data, std::uint64_t block, std::uint32_t first, std::uint32_t stride) {
      for (std::uint32_t w = first; w < shadow_shape::words_per_block; w += stride) {
        expect(shadow_step::async_read, block * shadow_shape::words_per_block + w, data[w]);
      }
    }
    AGIO_HD void write_block(std::uint64_t op) {
      const std::uint64_t block = private_block();
      for (std::uint32_t w = 0; w < shadow_shape::words_per_block; ++w) {
        buffer[w] = static_cast<std::uint32_t>(op * 7919 + w + id);
      }
      if (!check(shadow_step::async_write, job.cache.wait(job.cache.async_write(0, block, buffer)), block)) return;
      for (std::uint32_t w = 0; w < shadow_shape::words_per_block; ++w) {
        job.truth[block * shadow_shape::words_per_block + w] = buffer[w];
      }
    }
    // Rewrites a random range of a private block, then reads its first word back.
    AGIO_HD void write_range() {
      constexpr std::uint32_t words = shadow_shape::words_per_block;
      const std::uint64_t block = private_block();
      const auto first = static_cast<std::uint32_t>(next() % words);
      const auto count = 1 + static_cast<std::uint32_t>(next() % (words - first));
      for (std::uint32_t w = 0; w < count; ++w) buffer[w] = next_value();
      if (!check(shadow_step::partial_write, job.cache.write_bytes(0, block, first * 4, count * 4, buffer, limit()),
                 block)) {
        return;
      }
      for (std::uint32_t w = 0; w < count; ++w) job.truth[block * words + first + w] = buffer[w];
      std::uint32_t seen = 0;
      if (check(shadow_step::partial_read, job.cache.read_bytes(0, block, first * 4, 4, &seen, limit()), block)) {
        expect(shadow_step::partial_read, block * words + first, seen);
      }
    }
  };
};

}  // namespace agio::test
