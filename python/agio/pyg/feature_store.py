"""agio.pyg.FeatureStore: a torch_geometric FeatureStore whose tensors are staged on an agio store
and read through one agio software cache: a mini-batch's attributes are gathered in one launch."""

from __future__ import annotations

from typing import Any, Optional

import numpy
import torch
from torch_geometric.data import FeatureStore as PygFeatureStore
from torch_geometric.data import TensorAttr

import agio

from .._array import numpy_dtype
from .._cache import own_or_shared
from .store_space import StoreSpace

Key = tuple[Optional[str], Optional[str]]


class FeatureStore(PygFeatureStore):
    """Node features on `store` (an agio.Device of a started Runtime, e.g. a file: store), gathered
    into GPU memory (host memory on the CPU backend) through one agio software cache of
    `cache_bytes` (256 MiB) shared by every attribute (`policy`, `line_bytes`, `ways` as
    agio.Cache's), or through `cache`, an agio.Cache of the caller's (a host tier below it, for
    one), which close() then leaves open.

        fs = agio.pyg.FeatureStore(rt.devices[0], cache_bytes=8 << 30)
        fs["x"] = x                                   # staged on the store (attr_name "x")
        fs["y"] = y
        loader = NeighborLoader((fs, graph_store), num_neighbors=[15, 10], batch_size=1024,
                                neighbor_sampler=agio.pyg.NeighborSampler((fs, graph_store), [15, 10]))

    A put without an index stages the whole tensor (its first dimension is the rows) in a range of
    the store of its own, replacing an earlier tensor of that name; a put with an index writes
    those rows through the cache (storage has them after flush(), an eviction or the runtime's
    stop). A get with an index (a tensor or array of rows, a slice, an int, None for all) gathers
    those rows; multi_get_tensor gathers every attribute's rows in one agio job. Results are
    PyTorch tensors, on the GPU on the GPU backend.

    Errors: KeyError for an attribute never put (as PyG's stores), IndexError for a row out of
    range, ValueError for a put whose dtype or row shape differs from the stored tensor's, or that
    does not fit the store (naming the sizes); nothing is written then."""

    def __init__(self, store: agio.Device, cache_bytes: int | None = None, policy: str | None = None,
                 line_bytes: int | None = None, ways: int | None = None, *, cache: agio.Cache | None = None):
        super().__init__()
        if not isinstance(store, agio.Device):
            raise TypeError(f"agio.pyg.FeatureStore: store must be an agio.Device, not {type(store).__name__}")
        if not store._runtime.running:
            raise RuntimeError("agio.pyg.FeatureStore: the store's runtime must be started")
        self.store = store
        self.cache, self._owns_cache = own_or_shared(store._runtime, cache, "agio.pyg.FeatureStore", "its",
                                                     {"cache_bytes": 256 << 20}, cache_bytes=cache_bytes,
                                                     policy=policy, line_bytes=line_bytes, ways=ways)
        self._space = StoreSpace(store.capacity_bytes, self.cache.line_bytes)
        self._arrays: dict[Key, agio.Array] = {}

    # Core (CRUD) #############################################################

    def _put_tensor(self, tensor: Any, attr: TensorAttr) -> bool:
        tensor = torch.as_tensor(tensor)
        if attr.index is None:
            self._stage(tensor, attr)
            return True
        array = self._array(attr)
        index = self._rows(attr.index, array)
        values = tensor.reshape((1,) + tuple(tensor.shape)) if isinstance(attr.index, int) else tensor
        dtype = numpy_dtype(values.dtype)
        if dtype != array.dtype:
            raise ValueError(f"agio.pyg.FeatureStore: '{attr.attr_name}' holds {array.dtype}, not {dtype}")
        if tuple(values.shape[1:]) != array.shape[1:] or len(values) != len(index):
            raise ValueError(
                f"agio.pyg.FeatureStore: {len(index)} rows of '{attr.attr_name}' take values of shape "
                f"{(len(index),) + array.shape[1:]}, not {tuple(values.shape)}"
            )
        array.scatter(index, self._in_backend_memory(values))
        return True

    def _get_tensor(self, attr: TensorAttr) -> torch.Tensor:
        return self._multi_get_tensor([attr])[0]

    def _multi_get_tensor(self, attrs: list[TensorAttr]) -> list[torch.Tensor]:
        """Every attribute's rows, gathered in one agio job (one GPU launch)."""
        pairs = []
        for attr in attrs:
            array = self._array(attr)
            pairs.append((array, self._rows(attr.index, array)))
        rows = agio.gather(pairs)
        return [r[0] if isinstance(a.index, int) else r for a, r in zip(attrs, rows)]

    def _remove_tensor(self, attr: TensorAttr) -> bool:
        return self._arrays.pop(_key(attr), None) is not None

    def _get_tensor_size(self, attr: TensorAttr) -> Optional[tuple[int, ...]]:
        array = self._arrays.get(_key(attr))
        if array is None:
            return None
        if isinstance(attr.index, int):
            return array.shape[1:]
        return (len(self._rows(attr.index, array)),) + array.shape[1:]

    def get_all_tensor_attrs(self) -> list[TensorAttr]:
        return [self._tensor_attr_cls.cast(*key) for key in self._arrays]

    def open_tensor(self, attr_name: str, offset: int = 0, group_name: Optional[str] = None) -> None:
        """Makes the array already staged at byte `offset` of the store (agio.stage, the agio
        tool's `stage --npy`, or a .npy file attached as a file: store) the attribute
        (group_name, attr_name), read in place: nothing is copied. Later puts are staged after it."""
        header = agio.read_header(self.store, offset)
        self._space.reserve(header.data_offset + header.nbytes)
        self._arrays[(group_name, attr_name)] = agio.Array(self.store, header.dtype, header.shape,
                                                           header.data_offset, cache=self.cache)

    # The cache ###############################################################

    def flush(self) -> None:
        """Writes every row put with an index back to the store and makes it durable."""
        self.cache.flush()

    def close(self) -> None:
        """Writes the cache back and frees it (Runtime.stop does this too); later calls raise
        RuntimeError. A cache given as `cache` is written back and left open (its owner closes
        it)."""
        if self._owns_cache:
            self.cache.close()
            return
        self.cache.flush()
        for array in self._arrays.values():
            array.close()

    def counters(self) -> dict:
        """The shared cache's counts (hits, misses, evictions, ...; see agio.Cache.counters)."""
        return self.cache.counters()

    # Helpers #################################################################

    def _stage(self, tensor: torch.Tensor, attr: TensorAttr) -> None:
        if tensor.dim() == 0:
            raise ValueError(f"agio.pyg.FeatureStore: '{attr.attr_name}' needs a first dimension (of rows)")
        dtype = numpy_dtype(tensor.dtype)
        shape = tuple(tensor.shape)
        size = len(agio.npy_header(dtype, shape)) + tensor.numel() * dtype.itemsize
        offset = self._space.take(size, f"'{attr.attr_name}' ({shape}, {dtype})")
        header = agio.stage(tensor, self.store, offset=offset, progress=False)
        self._arrays[_key(attr)] = agio.Array(self.store, dtype, shape, header.data_offset, cache=self.cache)

    def _array(self, attr: TensorAttr) -> agio.Array:
        array = self._arrays.get(_key(attr))
        if array is None:
            raise KeyError(f"Could not find tensor for '{attr}'")
        return array

    @staticmethod
    def _rows(index: Any, array: agio.Array) -> torch.Tensor:
        """The rows an index names, as a one-dimensional integer tensor."""
        if index is None:
            return torch.arange(len(array))
        if isinstance(index, slice):
            return torch.arange(*index.indices(len(array)))
        if isinstance(index, (int, numpy.integer)):
            row = int(index) + (len(array) if index < 0 else 0)
            if not 0 <= row < len(array):
                raise IndexError(f"agio.pyg.FeatureStore: row {index} is out of range for {len(array)} rows")
            return torch.tensor([row])
        return torch.as_tensor(index)

    def _in_backend_memory(self, values: torch.Tensor) -> torch.Tensor:
        where = "cuda" if self.store._runtime.backend == "gpu" else "cpu"
        return values.to(where).contiguous()

    def __repr__(self) -> str:
        names = ", ".join(f"{k[1]}{list(a.shape)}" for k, a in self._arrays.items())
        return f"agio.pyg.FeatureStore({self.store.uri!r}: {names})"


def _key(attr: TensorAttr) -> Key:
    return (attr.group_name, attr.attr_name)
