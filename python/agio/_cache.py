"""agio.Cache: one software cache in GPU memory (CPU memory on the CPU backend) that any number
of agio.Arrays read and write through (the _agio extension's Cache)."""

from __future__ import annotations

from typing import Any

from . import _agio
from ._runtime import Runtime


class Cache:
    """A software cache of `cache_bytes` in the memory of the started `runtime`, in lines of
    `line_bytes` (a multiple of the devices' LBA size) grouped in sets of `ways`, evicting by
    `policy` ("clock", "lfu_da", "s3_fifo", "direct_mapped").

        cache = agio.Cache(rt, cache_bytes=256 << 20)
        users = agio.Array(dev, numpy.float32, (1 << 20, 64), cache=cache)
        items = agio.Array(dev, numpy.float16, (1 << 22, 32), offset=users_bytes, cache=cache)
        u, i = agio.gather([(users, user_ids), (items, item_ids)])   # one GPU launch

    Arrays made with cache=cache share its lines, its counters and its flush(); agio.gather,
    agio.scatter and agio.prefetch cover all of them in one job. Runtime.stop writes it back
    and closes it.

    With `host_tier_bytes`, a host tier (docs/CACHE.md) of that many bytes of pinned host
    memory sits below the cache, with the same policy and line size: the cache's misses are
    served from it without a round trip to storage's controller, its write-backs go into it,
    and flush() writes both out. `host_tier_admission` says which blocks it takes:
    "always" (every block the cache misses on), "on_reuse" (a block's second miss, so that a
    scan passes by) or "on_eviction" (a victim cache: blocks go from storage straight into the
    cache, and the clean lines it evicts are demoted into the tier);
    `host_tier_numa_node` binds its memory to a NUMA node (a CXL expander's, for one; -1: none);
    `host_tier_latency_ns` adds that many nanoseconds to each of its accesses (emulating CXL
    memory). It needs a runtime whose completions a service retires (completion "on_demand",
    the default, or "service"). On a runtime made with host_tier_bytes (agio.Runtime), the tier
    takes its memory from the runtime's, on the runtime's node: by default all that is left of
    it (host_tier_bytes=None), admitting as the runtime says (host_tier_admission=None);
    host_tier_bytes=0 makes a cache without a tier. Elsewhere None means no tier and
    "always"."""

    def __init__(
        self,
        runtime: Runtime,
        cache_bytes: int = 64 << 20,
        policy: str = "clock",
        line_bytes: int = 4096,
        ways: int = 8,
        host_tier_bytes: int | None = None,
        host_tier_admission: str | None = None,
        host_tier_numa_node: int = -1,
        host_tier_latency_ns: int = 0,
    ):
        if not isinstance(runtime, Runtime):
            raise TypeError(f"agio.Cache: runtime must be an agio.Runtime, not {type(runtime).__name__}")
        self.runtime = runtime  # the cache lives in the runtime's memory: keep the runtime alive
        self.cache_bytes, self.policy, self.line_bytes, self.ways = cache_bytes, policy, line_bytes, ways
        if host_tier_bytes is None:
            memory = runtime.host_tier_memory()
            whole_sets = line_bytes * ways  # the tier keeps whole sets; none left: no tier
            left = 0 if memory is None else memory["capacity_bytes"] - memory["used_bytes"]
            host_tier_bytes = left // whole_sets * whole_sets
        if host_tier_admission is None:
            host_tier_admission = runtime.host_tier_admission
        self.host_tier_bytes = host_tier_bytes
        self._core = _agio.Cache(
            runtime._live(),
            policy,
            cache_bytes,
            line_bytes,
            ways,
            host_tier_bytes,
            host_tier_admission,
            host_tier_numa_node,
            host_tier_latency_ns,
        )
        runtime._caches.add(self)

    def flush(self) -> None:
        """Writes every modified line back to storage and makes it durable. Raises agio.IOError
        if storage refused a write (its data stays in the cache for the next flush)."""
        self._live().flush()

    def counters(self) -> dict:
        """The cache's counts, over every Array on it, since it was made or reset_counters():
        hits, misses (fills issued), hits_on_busy, coalesced_in_warp, evictions, write_backs,
        fill_failures, write_back_failures, demotions (a host tier's: clean lines the cache
        above put into it)."""
        return self._live().counters()

    def host_tier_counters(self) -> dict | None:
        """The host tier's counts (the same keys as counters(): its hits are the cache's misses
        it served), or None without a host tier."""
        return self._live().host_tier_counters()

    def reset_counters(self) -> None:
        """Zeroes the counts, the host tier's too."""
        self._live().reset_counters()

    def close(self) -> None:
        """Writes the cache back (while the runtime runs) and frees it; idempotent. Runtime.stop
        does this for every Cache. Later calls on it, or on its Arrays, raise RuntimeError."""
        self._core.close()

    @property
    def closed(self) -> bool:
        return self._core.closed()

    def _live(self) -> Any:
        if self._core.closed():
            raise RuntimeError(
                "agio: this Cache is closed (its runtime stopped, or close() was called); "
                "make a new agio.Cache on a running agio.Runtime"
            )
        return self._core

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.cache_bytes} bytes"
        return f"agio.Cache(policy={self.policy!r}, line_bytes={self.line_bytes}, ways={self.ways}, {state})"


def own_or_shared(runtime: Runtime, cache: Cache | None, where: str, owner: str, defaults: dict[str, Any],
                  **given: Any) -> tuple[Cache, bool]:
    """The cache `where` (an agio.Array, a FeatureStore) reads through, and whether it is its
    own: `cache`, an open agio.Cache of `runtime` shared with others (checked); or, when None, a
    new Cache of `runtime` made with the options `given` (those not None) over `defaults`.
    Options given beside cache= are refused: the shared cache's own hold."""
    options = {name: value for name, value in given.items() if value is not None}
    if cache is None:
        return Cache(runtime, **{**defaults, **options}), True
    if not isinstance(cache, Cache):
        raise TypeError(f"{where}: cache must be an agio.Cache, not {type(cache).__name__}")
    if options:
        raise ValueError(f"{where}: {', '.join(options)} shape a cache of {owner} own; with cache= the shared "
                         "agio.Cache's options hold (give them to agio.Cache instead)")
    if cache.runtime is not runtime:
        raise ValueError(f"{where}: cache belongs to another agio.Runtime than its device")
    cache._live()  # a closed cache is refused now, not at the first call
    return cache, False
