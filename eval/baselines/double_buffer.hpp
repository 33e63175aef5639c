#pragma once
// The double-buffered loop of the baselines without agio (the DLRM CPU pipeline and cuFile
// modes, the graphs' CPU-driven BFS): two sets of buffers taken in turn, step k using set k % 2.
// The host fills step k + 1's set (reads from storage, a plan's indices) while the GPU works on
// step k from the other; before refilling a set it waits for the event the GPU recorded once it
// was done with the set's previous contents (step k - 1's copies or gather). GPU only (nvcc).
#if defined(__CUDACC__)
#include <cstddef>
#include <utility>

#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"

namespace agio::bench {

// Set: the buffers of one step, allocated by its constructor Set(runtime&, args...) and given
// back by set.free(runtime&).
template <class Set>
class double_buffer {
 public:
  template <class... Args>
  explicit double_buffer(runtime& rt, const Args&... args) : rt_(rt), sets_{{Set(rt, args...)}, {Set(rt, args...)}} {
    for (slot& s : sets_)
      throw_on_cuda_error(cudaEventCreateWithFlags(&s.released, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~double_buffer() {
    for (slot& s : sets_) {
      cudaEventDestroy(s.released);
      s.set.free(rt_);
    }
  }
  double_buffer(const double_buffer&) = delete;
  double_buffer& operator=(const double_buffer&) = delete;

  // Step k's set, as it is (for the GPU's work on it).
  Set& operator[](std::size_t k) { return sets_[k % 2].set; }
  // Step k's set once the GPU has released its previous contents (for the host to fill it).
  Set& refill(std::size_t k, const char* what) {
    throw_on_cuda_error(cudaEventSynchronize(sets_[k % 2].released), what);
    return sets_[k % 2].set;
  }
  // Marks, on `stream`, the point after which step k's set may be refilled.
  void release(std::size_t k, cudaStream_t stream) { cudaEventRecord(sets_[k % 2].released, stream); }

  // The loop over steps [0, steps): queue(k, set) queues the GPU's work on step k (and calls
  // release(k, stream) where the set may be refilled), then fill(k + 1, set) fills the next
  // step's set on the host meanwhile. Step 0 is filled before: fill(0, refill(0, what)).
  template <class Queue, class Fill>
  void run(std::size_t steps, Queue&& queue, Fill&& fill, const char* what) {
    for (std::size_t k = 0; k < steps; ++k) {
      queue(k, (*this)[k]);
      if (k + 1 < steps) fill(k + 1, refill(k + 1, what));
    }
  }

 private:
  struct slot {
    Set set;
    cudaEvent_t released{};
  };
  runtime& rt_;
  slot sets_[2];
};

}  // namespace agio::bench
#endif
