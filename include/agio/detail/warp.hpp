#pragma once
// A warp facade: on the GPU the 32 lanes of the calling warp, on the host a warp of one thread
// that plays all 32 lanes itself in order. Code written against it (the completion service's
// 32-entry windows) has one body for both.
#include <cstdint>

#include "agio/detail/platform.hpp"

namespace agio::detail::warp {

inline constexpr unsigned size = 32;

// The calling thread's lane in its warp (0 on the host). The hardware's own number: with
// blocks of any shape a warp is 32 consecutive threads of the block's linear index, which
// threadIdx.x alone does not give.
AGIO_HD inline unsigned lane_id() {
#if defined(__CUDA_ARCH__)
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
#else
  return 0;
#endif
}

// Calls `lane_fn(lane)` for every lane and returns the mask of lanes that returned true. On the
// device each lane of the (fully converged) calling warp evaluates its own index.
template <class LaneFn>
AGIO_HD std::uint32_t ballot_each(LaneFn&& lane_fn) {
#if defined(__CUDA_ARCH__)
  return __ballot_sync(0xffffffffu, lane_fn(lane_id()));
#else
  std::uint32_t mask = 0;
  for (unsigned lane = 0; lane < size; ++lane) {
    if (lane_fn(lane)) mask |= 1u << lane;
  }
  return mask;
#endif
}

// Calls `lane_fn(lane)` for every lane (all lanes at once on the device).
template <class LaneFn>
AGIO_HD void for_each_lane(LaneFn&& lane_fn) {
#if defined(__CUDA_ARCH__)
  lane_fn(lane_id());
  __syncwarp();
#else
  for (unsigned lane = 0; lane < size; ++lane) lane_fn(lane);
#endif
}

// Index of the lowest set bit of a non-zero lane mask, and the number of set bits.
AGIO_HD inline unsigned lowest_lane(std::uint32_t mask) {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned>(__ffs(mask) - 1);
#else
  return static_cast<unsigned>(__builtin_ctz(mask));
#endif
}
AGIO_HD inline std::uint32_t count(std::uint32_t mask) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__popc(mask));
#else
  return static_cast<std::uint32_t>(__builtin_popcount(mask));
#endif
}

// True on one lane of the warp (lane 0), always true on the host's warp of one.
AGIO_HD inline bool is_leader() {
#if defined(__CUDA_ARCH__)
  return lane_id() == 0;
#else
  return true;
#endif
}

// Waits for the lanes of the warp and orders their memory accesses (no-op on the host).
AGIO_HD inline void sync() {
#if defined(__CUDA_ARCH__)
  __syncwarp();
#endif
}

// Some lanes of the calling warp, led by one of them. On the host a group of one.
struct lane_group {
  std::uint32_t mask = 1;
  unsigned leader = 0;
};

// Every lane of the calling warp, which must be fully converged (a group of one on the host).
AGIO_HD inline lane_group whole_warp() {
#if defined(__CUDA_ARCH__)
  return {0xffffffffu, 0};
#else
  return {};
#endif
}
// The lanes of the calling warp that are executing this call together, led by the lowest.
AGIO_HD inline lane_group active_lanes() {
#if defined(__CUDA_ARCH__)
  const std::uint32_t mask = __activemask();
  return {mask, static_cast<unsigned>(__ffs(mask) - 1)};
#else
  return {};
#endif
}

// The lanes of the calling warp that passed the same key: one group per distinct key, led by
// its lowest lane (the two-level coalescing of AGILE §3.3.2).
AGIO_HD inline lane_group group_by([[maybe_unused]] std::uint64_t key) {
#if defined(__CUDA_ARCH__)
  const std::uint32_t mask = __match_any_sync(__activemask(), key);
  return {mask, static_cast<unsigned>(__ffs(mask) - 1)};
#else
  return {};
#endif
}
// The lanes that passed the same key and the same `owner` (what the key is a key of, such as a
// cache: lanes of one warp may use several, and the same key means different things in each).
AGIO_HD inline lane_group group_by([[maybe_unused]] std::uint64_t key, [[maybe_unused]] std::uint64_t owner) {
#if defined(__CUDA_ARCH__)
  const std::uint32_t active = __activemask();
  const std::uint32_t mask = __match_any_sync(active, key) & __match_any_sync(active, owner);
  return {mask, static_cast<unsigned>(__ffs(mask) - 1)};
#else
  return {};
#endif
}
AGIO_HD inline bool leads(const lane_group& g) {
#if defined(__CUDA_ARCH__)
  return lane_id() == g.leader;
#else
  (void)g;
  return true;
#endif
}
// Lane `lane`'s `value`, on every lane of the group (`lane` must be one of its lanes).
AGIO_HD inline std::uint32_t from_lane([[maybe_unused]] const lane_group& g, std::uint32_t value,
                                       [[maybe_unused]] unsigned lane) {
#if defined(__CUDA_ARCH__)
  return __shfl_sync(g.mask, value, lane);
#else
  return value;
#endif
}
AGIO_HD inline std::uint64_t from_lane(const lane_group& g, std::uint64_t value, unsigned lane) {
  const std::uint32_t low = from_lane(g, static_cast<std::uint32_t>(value), lane);
  const std::uint32_t high = from_lane(g, static_cast<std::uint32_t>(value >> 32), lane);
  return std::uint64_t{high} << 32 | low;
}
// The leader's `value`, on every lane of the group.
AGIO_HD inline std::uint32_t from_leader(const lane_group& g, std::uint32_t value) {
  return from_lane(g, value, g.leader);
}
AGIO_HD inline std::uint64_t from_leader(const lane_group& g, std::uint64_t value) {
  return from_lane(g, value, g.leader);
}
// The sum of every lane's `value` in the group, on every lane.
AGIO_HD inline std::uint64_t sum(const lane_group& g, std::uint64_t value) {
  std::uint64_t total = 0;
  for (std::uint32_t m = g.mask; m != 0; m &= m - 1) total += from_lane(g, value, lowest_lane(m));
  return total;
}
// The same for 32-bit values, in one instruction from sm_80 on.
AGIO_HD inline std::uint32_t sum(const lane_group& g, std::uint32_t value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_add_sync(g.mask, value);
#else
  return static_cast<std::uint32_t>(sum(g, std::uint64_t{value}));
#endif
}
// How many lanes of the group come before the calling one (0 on the host).
AGIO_HD inline std::uint32_t rank([[maybe_unused]] const lane_group& g) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__popc(g.mask & ((1u << lane_id()) - 1)));
#else
  return 0;
#endif
}
// The group's lanes whose `value` is true.
AGIO_HD inline std::uint32_t ballot(const lane_group& g, bool value) {
#if defined(__CUDA_ARCH__)
  return __ballot_sync(g.mask, value) & g.mask;
#else
  return value ? g.mask : 0;
#endif
}
// Waits for the group's lanes and orders their memory accesses (no-op on the host).
AGIO_HD inline void sync([[maybe_unused]] const lane_group& g) {
#if defined(__CUDA_ARCH__)
  __syncwarp(g.mask);
#endif
}

#if defined(__CUDA_ARCH__)
// Copies `bytes` from `src` to `dst` with `lanes` lanes, the caller being lane `me` of them
// (every one calls it with the same ends): 16-byte words when both ends and the length allow,
// `InFlight` loads per lane out before their stores, else 4-byte words, else bytes. The two
// copies below are made of it.
template <unsigned InFlight>
__device__ inline void copy_range(std::uint64_t dst, std::uint64_t src, std::uint32_t bytes, std::uint32_t me,
                                  std::uint32_t lanes) {
  if (((dst | src | bytes) & 15u) == 0) {
    auto* dv = reinterpret_cast<uint4*>(dst);
    const auto* sv = reinterpret_cast<const uint4*>(src);
    const std::uint32_t n = bytes / 16;
    std::uint32_t i = me;
    if constexpr (InFlight > 1) {
      for (; i + (InFlight - 1) * lanes < n; i += InFlight * lanes) {
        uint4 v[InFlight];
#pragma unroll
        for (unsigned k = 0; k < InFlight; ++k) v[k] = sv[i + k * lanes];
#pragma unroll
        for (unsigned k = 0; k < InFlight; ++k) dv[i + k * lanes] = v[k];
      }
    }
    for (; i < n; i += lanes) dv[i] = sv[i];
  } else if (((dst | src | bytes) & 3u) == 0) {
    for (std::uint32_t i = me; i < bytes / 4; i += lanes) {
      reinterpret_cast<std::uint32_t*>(dst)[i] = reinterpret_cast<const std::uint32_t*>(src)[i];
    }
  } else {
    for (std::uint32_t i = me; i < bytes; i += lanes) {
      reinterpret_cast<unsigned char*>(dst)[i] = reinterpret_cast<const unsigned char*>(src)[i];
    }
  }
}
#endif

// Copies each lane's `bytes` from its `src` to its `dst`, every copy made by all the lanes of
// `g` together, one after another: a lane alone has one load in flight at a time (the compiler
// cannot tell its ends apart), a group as many as it has lanes, at no register cost to the
// callers (a batched copy in each thread cost the cache's kernels their occupancy, copy.hpp).
// `InFlight` 16-byte loads per lane go out before their stores, for copies over PCIe that a lane
// may make alone (a host tier's lines), at that many registers' cost. A lane with nothing to
// copy passes 0 bytes. On return, every lane's stores happen before what any lane of the group
// does next. On the host, memcpy.
template <unsigned InFlight = 1>
AGIO_HD inline void copy_each(const lane_group& g, void* dst, const void* src, std::uint32_t bytes) {
#if defined(__CUDA_ARCH__)
  const std::uint32_t lanes = count(g.mask);
  const std::uint32_t me = rank(g);
  for (std::uint32_t m = g.mask; m != 0; m &= m - 1) {
    const unsigned owner = lowest_lane(m);
    copy_range<InFlight>(from_lane(g, reinterpret_cast<std::uint64_t>(dst), owner),
                         from_lane(g, reinterpret_cast<std::uint64_t>(src), owner), from_lane(g, bytes, owner), me,
                         lanes);
  }
  sync(g);
#else
  (void)g;
  if (bytes != 0) __builtin_memcpy(dst, src, bytes);
#endif
}

// A crew: the lanes of a group that wait while their leader works for all of them (an access
// it makes on their behalf) and lend it their hands for the copies it makes on the way. The
// leader calls crew_copy for each such copy and dismiss once done; every other lane of the
// crew calls serve, which returns when dismissed. The lanes meet in shuffles made at different
// instructions on each side, which PTX allows from sm_70 on (it requires convergence only for
// sm_6x). A crew of the leader alone copies with the other lone leaders that reach crew_copy
// with it; on the host every crew is one thread.

// A crew's copies are made over PCIe (a host tier's lines): eight 16-byte loads a lane go out
// before their stores.
inline constexpr unsigned crew_loads_in_flight = 8;

// The lanes of a crew of the calling lane alone.
AGIO_HD inline lane_group alone() {
#if defined(__CUDA_ARCH__)
  return {1u << lane_id(), lane_id()};
#else
  return {};
#endif
}

// Whether `crew` is its leader alone.
AGIO_HD inline bool is_alone(const lane_group& crew) { return crew.mask == 1u << crew.leader; }

#if defined(__CUDA_ARCH__)
// The calling lane's share of a crew's copy, then the crew's barrier: the leader and the
// serving lanes split each copy the same way.
__device__ inline void copy_share(const lane_group& crew, std::uint64_t dst, std::uint64_t src, std::uint32_t bytes) {
  copy_range<crew_loads_in_flight>(dst, src, bytes, rank(crew), count(crew.mask));
  sync(crew);
}
#endif

// The leader of `crew`: copies `bytes` from `src` to `dst` with every lane of the crew (16-byte
// words where both ends and the length allow, else smaller ones). A crew of one copies with the
// lone lanes that called this together, each copy by all of them (copy_each). On return the
// stores happen before what the leader does next.
AGIO_HD inline void crew_copy(const lane_group& crew, void* dst, const void* src, std::uint32_t bytes) {
#if defined(__CUDA_ARCH__)
  if (is_alone(crew)) {
    copy_each<crew_loads_in_flight>(active_lanes(), dst, src, bytes);
    return;
  }
  (void)from_leader(crew, reinterpret_cast<std::uint64_t>(src));  // never 0: 0 dismisses
  (void)from_leader(crew, reinterpret_cast<std::uint64_t>(dst));
  (void)from_leader(crew, bytes);
  copy_share(crew, reinterpret_cast<std::uint64_t>(dst), reinterpret_cast<std::uint64_t>(src), bytes);
#else
  (void)crew;
  if (bytes != 0) __builtin_memcpy(dst, src, bytes);
#endif
}
// The leader of `crew`: lets the serving lanes go.
AGIO_HD inline void dismiss([[maybe_unused]] const lane_group& crew) {
#if defined(__CUDA_ARCH__)
  if (!is_alone(crew)) (void)from_leader(crew, std::uint64_t{0});
#endif
}
// Every lane of `crew` but its leader: makes its share of each of the leader's copies until
// dismissed.
AGIO_HD inline void serve([[maybe_unused]] const lane_group& crew) {
#if defined(__CUDA_ARCH__)
  for (;;) {
    const std::uint64_t src = from_leader(crew, std::uint64_t{0});
    if (src == 0) return;
    const std::uint64_t dst = from_leader(crew, std::uint64_t{0});
    const std::uint32_t bytes = from_leader(crew, 0u);
    copy_share(crew, dst, src, bytes);
  }
#endif
}

// Copies `bytes` with the whole warp on the device and memcpy on the host. Every lane of the
// warp calls it with the same arguments. Both pointers must be dword aligned (NVMe buffers
// are); 16-byte words are used when both ends allow, eight loads per lane in flight before the
// first store to hide the PCIe latency of mapped pinned memory. On return every lane's stores
// are visible device-wide, so one lane may publish the copy's completion.
AGIO_HD inline void copy(void* dst, const void* src, std::uint32_t bytes) {
#if defined(__CUDA_ARCH__)
  copy_range<8>(reinterpret_cast<std::uint64_t>(dst), reinterpret_cast<std::uint64_t>(src), bytes, lane_id(), size);
  __threadfence();
  __syncwarp();
#else
  __builtin_memcpy(dst, src, bytes);
#endif
}

}  // namespace agio::detail::warp
