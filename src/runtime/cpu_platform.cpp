// The CPU platform: "device" memory is ordinary memory, the completion service is a few host
// threads, and the copy engine is memcpy. CI drives the whole stack this way.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "agio/io/io_handle.hpp"
#include "agio/service/service.hpp"
#include "runtime/numa_memory.hpp"
#include "runtime/platform.hpp"

namespace agio {
namespace {

constexpr std::size_t alignment = 4096;

void* zeroed_allocation(std::size_t bytes) {
  void* p = ::operator new (std::max<std::size_t>(bytes, 1), std::align_val_t{alignment});
  std::memset(p, 0, bytes);
  return p;
}

template <class Word>
void atomic_words(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<Word*>(dst);
  auto* s = static_cast<Word*>(const_cast<void*>(src));
  for (std::size_t i = 0; i < bytes / sizeof(Word); ++i) {
    std::atomic_ref<Word>(d[i]).store(std::atomic_ref<Word>(s[i]).load(std::memory_order_acquire),
                                      std::memory_order_release);
  }
}

// Copies as 8- or 4-byte atomics when size and alignment allow (all of agio's shared words
// are), so a host read of counters that service threads are updating is not a data race. The
// stores release: a thread that reads a word the host set (with acquire) sees what the host
// wrote before it.
void word_copy(void* dst, const void* src, std::size_t bytes) {
  const auto bits = reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) | bytes;
  if (bits % 8 == 0) {
    atomic_words<std::uint64_t>(dst, src, bytes);
  } else if (bits % 4 == 0) {
    atomic_words<std::uint32_t>(dst, src, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

class memcpy_engine final : public proxy::copy_engine {
 public:
  void copy(void* dst, const void* src, std::size_t bytes, std::uint64_t tag) override {
    std::memcpy(dst, src, bytes);
    done_.push_back(tag);
  }
  void push() override {}
  std::size_t reap(std::span<std::uint64_t> out) override {
    const std::size_t n = std::min(out.size(), done_.size());
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = done_.front();
      done_.pop_front();
    }
    return n;
  }
  std::size_t in_flight() const override { return done_.size(); }

 private:
  std::deque<std::uint64_t> done_;
};

class cpu_platform final : public runtime::platform {
 public:
  ~cpu_platform() override { join_service(60'000); }

  agio::backend kind() const override { return backend::cpu; }
  std::string describe() const override { return "CPU threads"; }

  void* allocate_pinned(std::size_t bytes) override { return zeroed_allocation(bytes); }
  void* adopt_mapping(void* p, std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    mapped_blocks_.emplace_back(p, bytes);
    return p;
  }
  void free_pinned(void* p) override {
    {
      std::lock_guard lock(mutex_);
      const auto it =
          std::find_if(mapped_blocks_.begin(), mapped_blocks_.end(), [p](const auto& b) { return b.first == p; });
      if (it != mapped_blocks_.end()) {
        unmap_host(p, it->second);
        mapped_blocks_.erase(it);
        return;
      }
    }
    ::operator delete (p, std::align_val_t{alignment});
  }
  void* allocate_device(std::size_t bytes) override {
    void* p = zeroed_allocation(bytes);
    std::lock_guard lock(mutex_);
    device_blocks_.emplace_back(p, bytes);
    return p;
  }
  void free_device(void* p) override {
    {
      std::lock_guard lock(mutex_);
      std::erase_if(device_blocks_, [p](const auto& block) { return block.first == p; });
    }
    ::operator delete (p, std::align_val_t{alignment});
  }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override { word_copy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override { word_copy(dst, src, bytes); }

  // Memory from allocate_device plays GPU memory, so the CPU suite exercises the bounce and
  // deferred-copy paths that GPU memory takes.
  proxy::region_kind classify(const void* p) override {
    std::lock_guard lock(mutex_);
    const auto* byte = static_cast<const std::byte*>(p);
    const bool device = std::any_of(device_blocks_.begin(), device_blocks_.end(), [byte](const auto& block) {
      const auto* base = static_cast<const std::byte*>(block.first);
      return byte >= base && byte < base + block.second;
    });
    return device ? proxy::region_kind::device : proxy::region_kind::host;
  }

  std::uint32_t default_service_workers(std::uint32_t queue_pairs) const override {
    return std::min<std::uint32_t>(queue_pairs, 2);
  }

  void reserve_thread_stack(std::size_t) override {}
  void set_up_device_printf_and_heap() override {}

  void start_service(const io::io_state& io, std::uint32_t workers, std::uint32_t generation) override {
    std::vector<std::thread> earlier;
    {
      std::lock_guard lock(mutex_);
      running_ += workers;
      earlier.swap(threads_);
    }
    earlier.resize(std::max<std::size_t>(earlier.size(), workers));
    for (std::uint32_t w = 0; w < workers; ++w) {
      // Worker w of the generation before runs out first, as a kernel queued behind another on
      // one stream would.
      threads_.emplace_back([this, io, w, workers, generation, before = std::move(earlier[w])]() mutable {
        if (before.joinable()) before.join();
        const io_handle handle{io};
        // Host workers copy with memcpy: no staging area.
        service::run(io, w, workers, generation, nullptr,
                     [&](std::uint32_t ring) { return handle.serve_posted(ring); });
        std::lock_guard lock(mutex_);
        --running_;
        exited_.notify_all();
      });
    }
  }

  bool join_service(std::uint32_t timeout_ms) override {
    {
      std::unique_lock lock(mutex_);
      if (!exited_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return running_ == 0; }))
        return false;
    }
    for (auto& t : threads_) t.join();
    threads_.clear();
    return true;
  }

  void call_after_stream(void*, void (*fn)(void*), void* arg) override { fn(arg); }

  std::unique_ptr<proxy::copy_engine> make_copy_engine() override { return std::make_unique<memcpy_engine>(); }

 private:
  std::mutex mutex_;
  std::condition_variable exited_;
  std::uint32_t running_ = 0;
  std::vector<std::thread> threads_;
  std::vector<std::pair<void*, std::size_t>> device_blocks_;
  std::vector<std::pair<void*, std::size_t>> mapped_blocks_;  // from adopt_mapping
};

}  // namespace

std::unique_ptr<runtime::platform> make_cpu_platform() { return std::make_unique<cpu_platform>(); }

}  // namespace agio
