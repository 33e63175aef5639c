"""LMB's memory buffer: regions of pinned host memory that a runtime's stores read into with no
bounce copy and its GPU kernels read, shared with other runtimes and processes region by region
(docs/CACHE.md, Regions of host memory)."""

from __future__ import annotations

import ctypes
import weakref
from typing import Any

from . import _agio


class Region:
    """A region of host memory the runtime reaches: one a MemoryBuffer allocated, or a
    SharedRegion. `nbytes`, `address` (the host's, which the runtime's GPU kernels share), and
    numpy(): a view of its bytes, which Device.read() and write() take as `out` and `src` on
    either backend (the store reads straight into it). A region is unmapped once freed or
    closed, so that is refused while a view of it lives."""

    def __init__(self, address: int, nbytes: int, region_id: int | None = None):
        self.address = address
        self.nbytes = nbytes
        self.id = region_id  # the buffer's id of it (None for a SharedRegion)
        self._views: list[weakref.ref] = []  # to the ctypes arrays under its NumPy views (unhashable)
        self._gone = False

    def numpy(self, dtype: Any = "uint8", shape: Any = None) -> Any:
        """A NumPy array over the region's bytes (no copy): of `dtype`, one-dimensional, or of
        `shape`. The array keeps this object alive, and the region stays mapped while it lives."""
        import numpy

        if self._gone:
            raise ValueError("agio: this region was freed or closed")
        raw = (ctypes.c_ubyte * self.nbytes).from_address(self.address)
        raw._agio_region = self  # a view keeps its region object, which refuses to go while it lives
        self._views = [v for v in self._views if v() is not None] + [weakref.ref(raw)]
        array = numpy.frombuffer(raw, dtype=dtype)
        return array if shape is None else array.reshape(shape)

    def _viewed(self) -> bool:
        return any(v() is not None for v in self._views)

    def _let_go(self, what: str) -> None:
        if self._viewed():
            raise BufferError(f"agio: {what}: NumPy views of the region are still alive; delete them first")
        self._gone = True


class MemoryBuffer:
    """Up to `capacity_bytes` of pinned host memory for regions of `runtime` (a started or
    unstarted agio.Runtime), bound to NUMA node `numa_node` (-1: none; a CXL expander's node, for
    one). allocate(nbytes) hands out a zeroed region (whole pages); free(region) gives it back;
    descriptor(region) is its memory object, to hand to SharedRegion here or in another process
    (socket.send_fds). The runtime closes its buffers when it stops."""

    def __init__(self, runtime: Any, capacity_bytes: int, numa_node: int = -1):
        self._buffer = _agio.MemoryBuffer(runtime._live(), capacity_bytes, numa_node)
        self._regions: dict[int, Region] = {}
        runtime._memory.add(self)

    @property
    def capacity_bytes(self) -> int:
        return self._live().capacity()

    @property
    def used_bytes(self) -> int:
        return self._live().used()

    @property
    def numa_node(self) -> int:
        return self._live().numa_node()

    def allocate(self, nbytes: int) -> Region:
        """A zeroed region of at least `nbytes` (whole pages). Raises ValueError when the buffer
        has not that much left, naming what was asked and what is free."""
        region_id, address, size = self._live().allocate(nbytes)
        region = Region(address, size, region_id)
        self._regions[region_id] = region
        return region

    def free(self, region: Region) -> None:
        """Gives the region back (refused while a NumPy view of it lives). A runtime or process it
        was shared with keeps its own mapping."""
        if self._regions.get(region.id) is not region:
            raise ValueError("agio: the region is not one of this memory buffer's")
        region._let_go("free")
        self._live().free(region.id)
        del self._regions[region.id]

    def descriptor(self, region: Region) -> int:
        """The region's memory object: a file descriptor (close-on-exec) the buffer keeps open
        until free(); SharedRegion maps it here, or in a process it was sent to."""
        return self._live().descriptor(region.id)

    def close(self) -> None:
        """Frees every region (refused while a NumPy view of one lives); idempotent."""
        if self._buffer is None:
            return
        for region in self._regions.values():
            region._let_go("close")
        self._buffer.close()
        self._buffer = None
        self._regions.clear()

    def _viewed(self) -> bool:
        return any(region._viewed() for region in self._regions.values())

    def _live(self) -> Any:
        if self._buffer is None:
            raise RuntimeError("agio: this memory buffer is closed")
        return self._buffer

    def __repr__(self) -> str:
        if self._buffer is None:
            return "agio.MemoryBuffer(closed)"
        return f"agio.MemoryBuffer({self.used_bytes} of {self.capacity_bytes} bytes used)"


class SharedRegion(Region):
    """A region of a memory buffer, shared by its descriptor, mapped for `runtime`: only that
    region, so the runtime's stores and kernels reach nothing else of the buffer. The descriptor
    stays the caller's. close() unmaps it (the runtime closes it when it stops)."""

    def __init__(self, runtime: Any, descriptor: int):
        self._shared = _agio.SharedRegion(runtime._live(), descriptor)
        super().__init__(self._shared.address(), self._shared.bytes())
        runtime._memory.add(self)

    def close(self) -> None:
        if self._shared is None:
            return
        self._let_go("close")
        self._shared.close()
        self._shared = None
