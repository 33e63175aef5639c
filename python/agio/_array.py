"""agio.Array: an N-D array whose rows live on a device, gathered and scattered through an
agio.Cache in GPU memory (the _agio extension's RowTable says where the rows are)."""

from __future__ import annotations

import importlib.util
import math
from typing import Any

import numpy

from . import _agio
from ._cache import Cache, own_or_shared
from ._runtime import Device, _array
from ._stage import open_array


class Array:
    """An array of `shape` and `dtype` stored on `dev` from byte `offset` on, row after row
    (shape[0] rows, each the remaining dimensions in C order), read and written through a
    software cache in GPU memory (CPU memory on the CPU backend): `cache`, an agio.Cache shared
    with other arrays, or else one of its own.

        arr = agio.Array(dev, numpy.float32, (1 << 20, 128))   # rows of 512 bytes
        rows = arr[torch.tensor([5, 9, 5], device="cuda")]     # shape (3, 128), on the GPU
        arr[idx] = values                                      # written back on flush()/stop
        arr.flush()

    `dev`: a Device of a started Runtime; `dtype`: anything numpy.dtype takes (or a PyTorch
    dtype); `offset`: any byte offset (a .npy file's data starts after its header). Without
    `cache`, `cache_bytes`, `line_bytes`, `ways` and `policy` shape the array's own cache (as
    agio.Cache's, whose defaults they take); with it they may not be given."""

    def __init__(
        self,
        dev: Device,
        dtype: Any,
        shape: Any,
        offset: int = 0,
        *,
        cache: Cache | None = None,
        cache_bytes: int | None = None,
        policy: str | None = None,
        line_bytes: int | None = None,
        ways: int | None = None,
    ):
        if not isinstance(dev, Device):
            raise TypeError(f"agio.Array: dev must be an agio.Device (Runtime.attach), not {type(dev).__name__}")
        self.dtype: numpy.dtype = numpy_dtype(dtype)
        self.shape: tuple = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
        if len(self.shape) == 0 or any(n < 0 for n in self.shape):
            raise ValueError(f"agio.Array: shape {shape!r} needs a first dimension (of rows) and no negative sizes")
        if offset < 0:
            raise ValueError(f"agio.Array: offset {offset} is negative")
        self.device = dev
        self.offset = offset
        self.row_bytes = math.prod(self.shape[1:]) * self.dtype.itemsize
        if self.row_bytes == 0:
            raise ValueError(f"agio.Array: rows of shape {self.shape[1:]} and dtype {self.dtype} hold no bytes")
        runtime = dev._runtime
        self._runtime = runtime
        self._table = _agio.RowTable(runtime._live(), dev.index, offset, self.row_bytes, self.shape[0])
        self._closed = False
        self.cache: Cache
        self.cache, self._owns_cache = own_or_shared(runtime, cache, "agio.Array", "the array's", {},
                                                     cache_bytes=cache_bytes, policy=policy,
                                                     line_bytes=line_bytes, ways=ways)

    def __len__(self) -> int:
        return self.shape[0]

    def gather(self, index: Any, out: Any = None) -> Any:
        """Rows index[i] of the array, as an array of shape (len(index),) + shape[1:]: `out`
        when given (C-contiguous, of this dtype and shape, in host memory on the CPU backend
        and CUDA memory on the GPU one), else a new array of the index's framework (see
        docs/PYTHON.md). `index`: a one-dimensional integer array (NumPy, PyTorch, CuPy, a
        list) of rows in [0, len(self)). Raises IndexError naming the first index out of range,
        agio.IOError when storage failed (naming device, LBA and cause)."""
        cache = self._live()
        index = _array(index)
        out = self._out("", index, out)
        cache.gather([self._segment("", index, out)])
        return out

    def scatter(self, index: Any, values: Any) -> None:
        """Writes values[i] as row index[i] (into the cache: storage has them after flush(),
        an eviction or the runtime's stop). `values`: this dtype, shape (len(index),) +
        shape[1:], in the backend's memory as for gather's `out`. Every index is checked before
        anything is written; two writes of one row in a call leave either."""
        cache = self._live()
        index = _array(index)
        self._check_rows("values", values, index)
        cache.scatter([self._segment("", index, values)])

    def prefetch(self, index: Any) -> None:
        """Starts loading rows index[i] into the cache and returns when they are asked for (a
        hint: a row whose cache set is full is loaded when read instead)."""
        self._live().prefetch([self._segment("", _array(index), None)])

    def flush(self) -> None:
        """Writes every modified row of the array's cache back to storage (every array's on a
        shared cache) and makes it durable. Raises agio.IOError if storage refused a write (its
        data stays in the cache for the next flush)."""
        self._live().flush()

    def counters(self) -> dict:
        """The cache's counts (every array's on a shared cache) since it was made or
        reset_counters(): see agio.Cache.counters."""
        return self._live().counters()

    def reset_counters(self) -> None:
        self._live().reset_counters()

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, (int, numpy.integer)):
            row = int(index)
            if row < 0:
                row += len(self)
            if not 0 <= row < len(self):
                raise IndexError(f"agio.Array: row {index} is out of range for an array of {len(self)} rows")
            return self.gather(numpy.array([row], dtype=numpy.int64))[0]
        if isinstance(index, slice):
            index = numpy.arange(*index.indices(len(self)), dtype=numpy.int64)
        return self.gather(index)

    def __setitem__(self, index: Any, values: Any) -> None:
        if isinstance(index, slice):
            index = numpy.arange(*index.indices(len(self)), dtype=numpy.int64)
        self.scatter(index, values)

    @classmethod
    def open(cls, source: Device, offset: int = 0, **cache_options: Any) -> "Array":
        """The array staged at byte `offset` of `source` (agio.stage), or the .npy file attached
        as file:PATH, read in place: its dtype, shape and data offset come from the record's
        header. `cache_options` (cache, or cache_bytes, policy, line_bytes, ways) go to Array."""
        return open_array(cls, source, offset, **cache_options)

    def close(self) -> None:
        """Closes the array, and its cache when it is its own (written back while the runtime
        runs; Runtime.stop closes every cache); a shared agio.Cache stays open for its other
        arrays. Later calls raise RuntimeError."""
        self._closed = True
        if self._owns_cache:
            self.cache.close()

    @property
    def closed(self) -> bool:
        return self._closed or self.cache.closed

    def _live(self) -> Any:
        """The extension's cache, once the array and its cache are open."""
        if self._closed:
            raise RuntimeError("agio: this Array is closed (close() was called); open it again with agio.Array or Array.open")
        if self.cache.closed:
            raise RuntimeError(
                "agio: this Array's cache is closed (its runtime stopped, or Cache.close() was "
                "called); make a new agio.Runtime and Array"
            )
        return self.cache._core

    def _segment(self, name: str, index: Any, rows: Any) -> tuple:
        """The array's part of a call on its cache: rows `rows` (None for a prefetch) of
        `index`; `name` starts the arguments' names in messages ("pairs[1] ")."""
        return (self._table, index, rows, name)

    def _out(self, name: str, index: Any, out: Any) -> Any:
        """`out` checked to take the rows of `index`, or a new array for them."""
        if out is None:
            return self._new_rows(index)
        self._check_rows(name + "out", out, index)
        return out

    def _rows_shape(self, index: Any) -> tuple:
        if len(getattr(index, "shape", ())) != 1:
            raise ValueError(f"agio.Array: index must be one-dimensional, not of shape {getattr(index, 'shape', ())}")
        return (int(index.shape[0]),) + self.shape[1:]

    def _check_rows(self, name: str, rows: Any, index: Any) -> None:
        expected = self._rows_shape(index)
        shape = tuple(getattr(rows, "shape", ()))
        if shape != expected:
            raise ValueError(f"agio.Array: {name} has shape {shape}, expected {expected} (one row per index)")
        dtype = numpy_dtype(rows.dtype)
        if dtype != self.dtype:
            raise TypeError(f"agio.Array: {name} has dtype {dtype}, expected {self.dtype}")

    def _new_rows(self, index: Any) -> Any:
        """An empty result for `index`, of the index's framework on the backend's device."""
        shape = self._rows_shape(index)
        gpu = self._runtime.backend == "gpu"
        kind = type(index).__module__.split(".")[0]
        if kind == "torch" or (kind == "numpy" and gpu and importlib.util.find_spec("torch") is not None):
            import torch

            dtype = torch.from_numpy(numpy.empty(0, self.dtype)).dtype
            where = "cpu"
            if gpu:
                where = index.device if kind == "torch" and index.device.type == "cuda" else "cuda"
            return torch.empty(shape, dtype=dtype, device=where)
        if kind == "cupy" or (kind == "numpy" and gpu and importlib.util.find_spec("cupy") is not None):
            import cupy

            return cupy.empty(shape, dtype=self.dtype)
        if kind == "numpy" and not gpu:
            return numpy.empty(shape, dtype=self.dtype)
        raise TypeError(
            f"agio.Array: cannot make the rows for an index of type {type(index).__name__} on the "
            f"{self._runtime.backend} backend; pass out= (C-contiguous, dtype {self.dtype}, shape {shape})"
        )

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"on {self.device.uri!r} from byte {self.offset}"
        return f"agio.Array(shape={self.shape}, dtype={self.dtype}, {state})"


def numpy_dtype(dtype: Any) -> numpy.dtype:
    """numpy.dtype(dtype), also for a PyTorch dtype NumPy has (torch.float32 -> float32)."""
    if type(dtype).__module__ == "torch":
        name = str(dtype).removeprefix("torch.")
        try:
            return numpy.dtype(name)
        except TypeError:
            raise TypeError(f"agio: NumPy has no dtype like {dtype}") from None
    return numpy.dtype(dtype)
