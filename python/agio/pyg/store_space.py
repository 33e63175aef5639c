"""The byte ranges a FeatureStore stages its tensors in: handed out in order from the store's
start, each aligned to the cache line, never handed out twice."""

from __future__ import annotations


class StoreSpace:
    """Ranges of a store of `capacity` bytes, each starting at a multiple of `align` (the cache's
    line: a multiple of the LBA size, and no two tensors share a line). A removed tensor's range
    is not reused: the shared cache may still hold its lines, clean ones that a new tensor there
    would read as its own and modified ones it would write back over the new tensor's bytes."""

    def __init__(self, capacity: int, align: int):
        self.capacity = capacity
        self.align = align
        self.used = 0

    def take(self, size: int, what: str) -> int:
        """The byte offset of `size` new bytes for `what`; ValueError naming the sizes when the
        store has not that many left."""
        start = -(-self.used // self.align) * self.align
        if start + size > self.capacity:
            raise ValueError(
                f"agio.pyg.FeatureStore: {what} needs {size:,} bytes but the store has "
                f"{max(0, self.capacity - start):,} of its {self.capacity:,} left (bytes of removed or "
                f"replaced tensors are not reused); attach a larger store"
            )
        self.used = start + size
        return start

    def reserve(self, end: int) -> None:
        """Marks the bytes up to `end` taken (an array staged there before)."""
        self.used = max(self.used, end)
