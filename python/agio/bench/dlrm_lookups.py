"""Where the DLRM benchmark's embedding rows come from, one class per mode, all over the same 26
tables: each lookup(b) returns batch b's rows as [batch, 26, dim] on the model's device.

- HbmLookup (a): the tables in GPU memory as one torch.nn.EmbeddingBag (one kernel a batch):
  the upper bound, and the reference every other mode's output is checked against;
- HostLookup (b): the tables in pinned host memory, looked up by torch on CPU threads and the
  pooled rows copied to the GPU per batch (what users do when tables do not fit);
- ManagedLookup (c): the tables in CUDA managed memory (CuPy's malloc_managed, seen by PyTorch
  through __cuda_array_interface__), preferred in host memory, looked up on the GPU;
- AgioLookup: agio.torch.EmbeddingBagCollection on an agio store, read through agio's cache.
"""

from __future__ import annotations

import ctypes
import importlib.util

import numpy as np
import torch
import torch.nn.functional as F


def make_tables(vocab: list[int], dim: int, seed: int) -> list[torch.Tensor]:
    """The 26 tables, N(0, 1) float32 on the CPU, drawn from `seed`."""
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(rows, dim, generator=generator) for rows in vocab]


def _bags(vocab: list[int], indices: list[torch.Tensor], device) -> list[torch.Tensor]:
    """Each batch's lookups as rows of the tables laid end to end, one bag of one row each:
    [batch * 26, 1] int64 on `device`."""
    starts = torch.tensor(np.concatenate([[0], np.cumsum(vocab[:-1])]), dtype=torch.int64, device=device)
    return [(i.to(device) + starts).reshape(-1, 1) for i in indices]


class HbmLookup:
    """(a) The tables in GPU memory (CPU memory on the CPU backend)."""

    store = "tables in GPU memory (torch.nn.EmbeddingBag)"

    def __init__(self, tables: list[torch.Tensor], indices: list[torch.Tensor], device: torch.device):
        self.bag = torch.nn.EmbeddingBag.from_pretrained(torch.cat(tables).to(device), mode="sum", freeze=True)
        self.rows = _bags([t.shape[0] for t in tables], indices, device)
        self.features = len(tables)

    def lookup(self, b: int) -> torch.Tensor:
        return self.bag(self.rows[b]).view(-1, self.features, self.bag.embedding_dim)

    def close(self) -> None:
        self.bag = None


class HostLookup:
    """(b) The tables in pinned host memory, looked up on CPU threads; each batch's pooled rows
    are copied to the GPU from one of two pinned buffers, the next batch's lookup running while
    the copy of this one does."""

    store = "tables in pinned host memory, CPU lookup + copy to the GPU"

    def __init__(self, tables: list[torch.Tensor], indices: list[torch.Tensor], device: torch.device):
        self.bag = torch.nn.EmbeddingBag.from_pretrained(torch.cat(tables).pin_memory(), mode="sum", freeze=True)
        self.rows = _bags([t.shape[0] for t in tables], indices, "cpu")
        self.features = len(tables)
        self.device = device
        shape = (indices[0].shape[0], self.features, self.bag.embedding_dim)
        self.staging = [torch.empty(shape).pin_memory() for _ in range(2)]
        self.copied = [torch.cuda.Event() for _ in range(2)]
        self.turn = 0

    def lookup(self, b: int) -> torch.Tensor:
        k = self.turn
        self.turn ^= 1
        self.copied[k].synchronize()  # the copy that last read this buffer is done
        self.staging[k].view(-1, self.bag.embedding_dim).copy_(self.bag(self.rows[b]))
        out = self.staging[k].to(self.device, non_blocking=True)
        self.copied[k].record()
        return out

    def close(self) -> None:
        self.bag = None
        self.staging = []


# Managed memory's advice goes through the driver's cuMemAdvise_v2 (CUDA >= 12.2), which takes a
# location (a type and an id): CUDA 13's runtime cudaMemAdvise takes one too where CUDA 12's took
# a device number, and CuPy's runtime.memAdvise, passing the number, was refused with
# cudaErrorInvalidValue (CuPy under CUDA 13, H100 VM, 2026-11-26).
class _MemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


_ADVISE_PREFERRED_LOCATION, _ADVISE_ACCESSED_BY = 3, 5  # CUmem_advise
_LOCATION_DEVICE, _LOCATION_HOST = 1, 2  # CUmemLocationType


def _advise(pointer: int, nbytes: int, advice: int, location: _MemLocation) -> None:
    advise = ctypes.CDLL("libcuda.so.1").cuMemAdvise_v2
    advise.argtypes = [ctypes.c_uint64, ctypes.c_size_t, ctypes.c_int, _MemLocation]
    advise.restype = ctypes.c_int
    result = advise(pointer, nbytes, advice, location)
    if result != 0:
        raise RuntimeError(f"cuMemAdvise_v2 (advice {advice}, location type {location.type}) "
                           f"returned CUresult {result}")


class ManagedLookup:
    """(c) The tables in CUDA managed memory, preferred in host memory (tables that do not fit
    the GPU): the GPU's lookups fault or map their pages over PCIe."""

    store = "tables in CUDA managed memory (preferred location: host), GPU lookup"

    def __init__(self, tables: list[torch.Tensor], indices: list[torch.Tensor], device: torch.device):
        import cupy

        rows = sum(t.shape[0] for t in tables)
        dim = tables[0].shape[1]
        nbytes = rows * dim * 4
        self.memory = cupy.cuda.malloc_managed(nbytes)
        _advise(self.memory.ptr, nbytes, _ADVISE_PREFERRED_LOCATION, _MemLocation(_LOCATION_HOST, 0))
        _advise(self.memory.ptr, nbytes, _ADVISE_ACCESSED_BY, _MemLocation(_LOCATION_DEVICE, device.index or 0))
        held = cupy.ndarray((rows, dim), cupy.float32, self.memory)
        self.weight = torch.as_tensor(held, device=device)
        start = 0
        for t in tables:  # written from the host: the pages stay there
            np.asarray(self._host_view(start, t.shape[0], dim))[...] = t.numpy()
            start += t.shape[0]
        self.rows = _bags([t.shape[0] for t in tables], indices, device)
        self.features = len(tables)
        self.dim = dim

    def _host_view(self, start: int, rows: int, dim: int) -> np.ndarray:
        """Rows [start, start + rows) of the managed memory as a NumPy array (managed memory is
        addressable from the host)."""
        import ctypes

        address = self.memory.ptr + start * dim * 4
        buffer = (ctypes.c_float * (rows * dim)).from_address(address)
        return np.frombuffer(buffer, np.float32).reshape(rows, dim)

    def lookup(self, b: int) -> torch.Tensor:
        return F.embedding_bag(self.rows[b], self.weight, mode="sum").view(-1, self.features, self.dim)

    def close(self) -> None:
        self.weight = None
        self.memory = None


def managed_missing_reason(backend: str) -> str | None:
    """Why ManagedLookup cannot run here, or None."""
    if backend == "cpu":
        return "dlrm: (c) CUDA managed memory needs the GPU backend: skipped"
    if importlib.util.find_spec("cupy") is None:
        return ("dlrm: (c) CUDA managed memory is allocated with CuPy (cupy.cuda.malloc_managed), which is not "
                "installed: skipped")
    return None


def _configs(vocab: list[int], dim: int, tables: list[torch.Tensor] | None = None) -> list:
    import agio.torch

    return [agio.torch.EmbeddingBagConfig(f"table{t}", rows, dim, [f"sparse{t}"], pooling="sum",
                                          weight=None if tables is None else tables[t])
            for t, rows in enumerate(vocab)]


def _close(ebc) -> None:
    """Frees the collection's caches now (they are GPU memory) rather than when it is collected."""
    for group in ebc.groups:
        group.array.close()


def stage(tables: list[torch.Tensor], dev) -> None:
    """Writes the tables onto `dev` from byte 0, as agio.torch.EmbeddingBagCollection lays them
    out (one record: every table has the same dim), for AgioLookup to open."""
    import agio.torch

    vocab = [t.shape[0] for t in tables]
    configs = _configs(vocab, tables[0].shape[1], tables)
    _close(agio.torch.EmbeddingBagCollection(configs, store=dev, cache_bytes=1 << 20))


class AgioLookup:
    """agio.torch.EmbeddingBagCollection over the tables staged on `dev` (stage()), opened with a
    cache of its own, empty (one object per timed run). With `prefetch`, each lookup hands the
    next batch's indices to ebc.prefetch on a second Python thread (on a CUDA stream of its own,
    so that it does not wait for this batch's network), whose reads then run while this batch
    computes; the next lookup waits for that call first. With host_tier_bytes, the cache (one
    for every table) has a host tier of that size below it, empty too."""

    def __init__(self, vocab: list[int], dim: int, indices: list[torch.Tensor], device: torch.device, dev,
                 cache_bytes: int, prefetch: bool, host_tier_bytes: int = 0):
        import agio.torch

        self._cache = None
        options = {"cache_bytes": cache_bytes, "policy": "clock"}
        if host_tier_bytes:
            self._cache = agio.Cache(dev._runtime, cache_bytes=cache_bytes, policy="clock",
                                     host_tier_bytes=host_tier_bytes)
            options = {"cache": self._cache}
        self.ebc = agio.torch.EmbeddingBagCollection.open(_configs(vocab, dim), store=dev, **options)
        self.indices = [i.to(device) for i in indices]
        self._pool = None
        self._pending = None
        self._stream = None
        if prefetch:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agio-dlrm-prefetch")
            if device.type == "cuda":
                self._stream = torch.cuda.Stream(device)

    def _prefetch(self, b: int) -> None:
        if self._stream is None:
            self.ebc.prefetch(self.indices[b])
            return
        with torch.cuda.stream(self._stream):
            self.ebc.prefetch(self.indices[b])

    def lookup(self, b: int) -> torch.Tensor:
        if self._pending is not None:
            self._pending.result()
            self._pending = None
        rows = self.ebc.lookup(self.indices[b])
        if self._pool is not None and b + 1 < len(self.indices):
            self._pending = self._pool.submit(self._prefetch, b + 1)
        return rows

    def close(self) -> None:
        if self._pending is not None:
            self._pending.result()
        if self._pool is not None:
            self._pool.shutdown()
        _close(self.ebc)
        self.ebc = None
        if self._cache is not None:
            self._cache.close()
            self._cache = None


def agio_missing_reason() -> str | None:
    """Why AgioLookup cannot run here, or None."""
    try:
        import agio.torch
    except ImportError as e:
        return f"dlrm: agio.torch cannot be imported ({e}): the agio modes are skipped"
    if not hasattr(agio.torch, "EmbeddingBagCollection"):
        return "dlrm: agio.torch.EmbeddingBagCollection is not in this build: the agio modes are skipped"
    return None
