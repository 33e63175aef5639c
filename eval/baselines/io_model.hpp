#pragma once
// The three ways the evaluation runs a workload's I/O, the same kernels in each:
//   async:     AGILE's model: reads for the next step are issued ahead (prefetched into the
//              cache) and waited for late, while the current step computes; the completion
//              service retires every completion.
//   sync:      the same code, but each read is issued and waited for at once.
//   bam_style: a re-creation of BaM's design, not BaM itself: no completion service (the
//              thread that waits polls the completion queue and retires what it finds), clock
//              replacement, reads issued and waited for at once. BaM's SSD DMAs into GPU
//              memory, which the proxy cannot: the retiring thread copies the data out of the
//              bounce slot (gpu_warps mover). The other mover, the copy engine writing straight
//              into the cache line, is closer to BaM's data path but was slower: DLRM
//              configuration 1 over four emulated SSDs took 809 ms with it and 348 ms without
//              (H100, 2026-11-22), so the baseline gets the faster one.
#include <stdexcept>
#include <string>

#include "agio/runtime/runtime.hpp"

namespace agio::bench {

enum class io_model { async, sync, bam_style };

inline const char* name_of(io_model m) {
  switch (m) {
    case io_model::async: return "async";
    case io_model::sync: return "sync";
    case io_model::bam_style: return "bam_style";
  }
  return "?";
}

inline io_model io_model_named(const std::string& name) {
  if (name == "async") return io_model::async;
  if (name == "sync") return io_model::sync;
  if (name == "bam_style" || name == "bam") return io_model::bam_style;
  throw std::invalid_argument("unknown I/O model '" + name + "' (async, sync, bam_style)");
}

// The runtime settings a model runs under; the rest of `base` is kept.
inline runtime_options runtime_options_for(io_model m, runtime_options base) {
  if (m == io_model::bam_style) {
    base.completion = completion_mode::waiters;
    base.mover = data_mover::gpu_warps;
  } else {
    base.completion = completion_mode::service;
  }
  return base;
}

}  // namespace agio::bench
