#pragma once
// Copies by a warp through a staging area in shared memory with bulk asynchronous copies
// (cp.async.bulk, sm_90 and later): global memory (mapped pinned host memory included) to
// shared memory, then shared memory to global memory. A lane's loads hold their data in
// registers while they cross PCIe, so a warp copying with loads has as many bytes in flight as
// its registers hold (4 KiB with eight 16-byte loads a lane: one 4 KiB entry per ~2 us trip); a
// bulk copy holds none, and a warp has as many bytes in flight as its staging area holds.
// Measured (H200, 2026-11-30): 16 entries of 4 KiB from pinned host memory in 4.7 us by bulk
// copies against 34.0 us by the lanes' loads (docs/RESULTS.md).
#include <cstdint>

#include "agio/detail/platform.hpp"
#include "agio/detail/warp.hpp"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cuda/ptx>
#endif

namespace agio::detail::warp {

// A warp's staging area: `slots` slots of slot_bytes in shared memory, slot k and its mbarrier
// k owned by lane k. Made by every lane of the warp; without one (slots 0, on the host, or
// below sm_90) a warp copies with its lanes' loads.
class bulk_staging {
 public:
  static constexpr std::uint32_t slot_bytes = 4096;
  static constexpr std::uint32_t max_slots = size;

  // The shared memory a warp's staging area of `slots` slots takes: the slots, then their
  // barriers, padded so that the next warp's area is 128-byte aligned as its own (a bulk copy's
  // end in shared memory must be 16-byte aligned).
  AGIO_HD static constexpr std::uint32_t bytes_for(std::uint32_t slots) {
    return slots * slot_bytes + (slots * static_cast<std::uint32_t>(sizeof(std::uint64_t)) + 127u) / 128u * 128u;
  }

  AGIO_HD bulk_staging() = default;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // By every lane of the warp: its area at `area` (bytes_for(slots) bytes, 128-byte aligned).
  __device__ bulk_staging(unsigned char* area, std::uint32_t slots) : area_(area), slots_(slots) {
    if (lane_id() < slots_) cuda::ptx::mbarrier_init(barrier(lane_id()), 1);
    // The barriers' initialisation precedes the bulk copies (async proxy) that complete on them.
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    __syncwarp();
  }
#endif

  AGIO_HD std::uint32_t slots() const { return slots_; }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __device__ unsigned char* slot(std::uint32_t k) const { return area_ + std::uint64_t{k} * slot_bytes; }
  __device__ std::uint64_t* barrier(std::uint32_t k) const {
    return reinterpret_cast<std::uint64_t*>(area_ + std::uint64_t{slots_} * slot_bytes) + k;
  }
  // The calling lane's barrier's phase to wait for next; flips with each use.
  std::uint32_t parity = 0;

 private:
  unsigned char* area_ = nullptr;
#endif
  std::uint32_t slots_ = 0;
};

// The copies of one batch (a window's), by the whole warp: copy() for each, every lane with the
// same arguments, then finish(). Copies whose ends and length are 16-byte multiples go through
// the staging area, a slot (4 KiB) at a time, each lane moving its own slot's pieces; the rest,
// and every copy without staging, by the lanes' loads at once.
class bulk_copies {
 public:
  AGIO_HD explicit bulk_copies(bulk_staging& staging) : staging_(staging) {}

  AGIO_HD void copy(void* dst, const void* src, std::uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const auto d = reinterpret_cast<std::uint64_t>(dst);
    const auto s = reinterpret_cast<std::uint64_t>(src);
    if (staging_.slots() != 0 && ((d | s | bytes) & 15u) == 0) {
      if (!used_) {
        // The caller acquired the sources' completions in the generic proxy; the slots' loads
        // are the async proxy's.
        cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
        used_ = true;
      }
      for (std::uint32_t at = 0; at < bytes; at += bulk_staging::slot_bytes) {
        const std::uint32_t piece = bytes - at < bulk_staging::slot_bytes ? bytes - at : bulk_staging::slot_bytes;
        if (lane_id() == filled_) load_piece(d + at, s + at, piece);
        if (++filled_ == staging_.slots()) store_pieces();
      }
      return;
    }
#endif
    warp::copy(dst, src, bytes);
  }

  // Waits for every copy: on return their sources have been read and their data is in place,
  // visible device-wide, so one lane may publish their completion.
  AGIO_HD void finish() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (!used_) return;
    store_pieces();
    // The stores out of the slots are complete (not just done reading the slots), and ordered
    // before this lane's later accesses in the generic proxy: its release then covers them.
    cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
    cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
    __threadfence();
    __syncwarp();
#endif
  }

 private:
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // The calling lane's slot: loads `bytes` from `src` into it, to be stored to `dst`.
  __device__ void load_piece(std::uint64_t dst, std::uint64_t src, std::uint32_t bytes) {
    namespace ptx = cuda::ptx;
    // The slot's last store out has read it.
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
    std::uint64_t* bar = staging_.barrier(lane_id());
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar, bytes);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, staging_.slot(lane_id()),
                       reinterpret_cast<const void*>(src), bytes, bar);
    destination_ = dst;
    bytes_ = bytes;
  }

  // Every lane whose slot holds a piece: waits for its load, then stores it out. By the whole
  // warp. Waiting for the load is waiting for memory to answer, as a lane's own load does: it
  // has no deadline of its own.
  __device__ void store_pieces() {
    namespace ptx = cuda::ptx;
    if (bytes_ != 0) {
      std::uint64_t* bar = staging_.barrier(lane_id());
      while (!ptx::mbarrier_try_wait_parity(bar, staging_.parity)) {
      }
      staging_.parity ^= 1u;
      ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, reinterpret_cast<void*>(destination_),
                         staging_.slot(lane_id()), bytes_);
      ptx::cp_async_bulk_commit_group();
      bytes_ = 0;
    }
    filled_ = 0;
    __syncwarp();
  }

  std::uint64_t destination_ = 0;  // the calling lane's slot's piece
  std::uint32_t bytes_ = 0;
  std::uint32_t filled_ = 0;  // slots holding a piece not yet stored out (the same in every lane)
  bool used_ = false;         // any copy through the slots (the same in every lane)
#endif
  [[maybe_unused]] bulk_staging& staging_;
};

}  // namespace agio::detail::warp
