"""A table on an agio store as a torch module: its rows are read through an agio.Array (one job
for a batch's unique rows) and, while training, updated inside backward by the table's own
optimiser and written back through the cache. EmbeddingBag and EmbeddingBagCollection each hold
their tables as these modules, so the optimiser state and the table's whereabouts go into
their state_dict."""

from __future__ import annotations

import os
import weakref
from typing import Any

import numpy
import torch

from .._array import Array, numpy_dtype
from .._runtime import Device
from .._stage import HEADER_ALIGN, npy_header, read_header, stage


class StagedTable(torch.nn.Module):
    """The 2-D table staged at byte `record_offset` of `array.device`. `frozen`: its rows never
    require grad (as a frozen torch.nn.EmbeddingBag's weight); `optimizer` (from _optim, or
    None) updates the rows a batch read once their gradient is known."""

    def __init__(self, array: Array, record_offset: int, frozen: bool, optimizer: Any):
        super().__init__()
        self.array = array
        self.record_offset = record_offset
        self.frozen = frozen
        self.optimizer = optimizer
        self.dtype = torch_dtype(array.dtype)
        self.backend_device = torch.device("cuda" if array._runtime.backend == "gpu" else "cpu")
        state = optimizer.new_state(len(array), self.backend_device) if optimizer is not None else None
        self.register_buffer("optimizer_state", state)
        self._writes = 0  # scatters so far: rows read before the last one may be stale

    def rows(self, uniq: torch.Tensor) -> torch.Tensor:
        """Rows `uniq` (sorted, in range) as a tensor in the backend's memory; while training,
        a leaf that requires grad and whose gradient updates the table when backward reaches it."""
        rows = self.array.gather(uniq)
        if self.frozen or not (self.training and torch.is_grad_enabled()):
            return rows
        rows.requires_grad_()
        # The graph holds the hook as long as the output lives; a weak reference lets the
        # module (and its cache) go when the user drops it.
        table, writes_then = weakref.ref(self), self._writes
        rows.register_post_accumulate_grad_hook(lambda leaf: _update(table, uniq, leaf, writes_then))
        return rows

    def update(self, uniq: torch.Tensor, leaf: torch.Tensor, writes_then: int) -> None:
        grad, leaf.grad = leaf.grad, None
        if self.optimizer is None:
            raise RuntimeError(
                "agio.torch: backward reached a table that has no optimizer, so its gradient "
                "would be lost; pass optimizer='sgd' or 'rowwise_adagrad' (with lr) to train it; for "
                "inference call the module's eval() or run it under torch.no_grad() (from_pretrained "
                "and open also take freeze=True)"
            )
        # The rows the forward read are current unless an update was written since; then the
        # table's rows are read again so that no update is lost.
        current = leaf.detach() if writes_then == self._writes else self.array.gather(uniq)
        updated = self.optimizer.updated(current, grad, self.optimizer_state, uniq)
        self.array.scatter(uniq, updated.contiguous())
        self._writes += 1

    def prefetch(self, uniq: torch.Tensor) -> None:
        self.array.prefetch(uniq)

    def flush(self) -> None:
        self.array.flush()

    def close(self) -> None:
        """Writes the table back and frees its cache now (GPU memory), not when collected."""
        if not self.array.closed:
            self.flush()
            self.array.close()

    def whereabouts(self) -> dict:
        return {
            "uri": self.array.device.uri,
            "offset": self.record_offset,
            "shape": tuple(self.array.shape),
            "dtype": str(self.array.dtype),
            "optimizer": None if self.optimizer is None else self.optimizer.name,
        }

    def get_extra_state(self) -> dict:
        """Where the table is (written back and durable first), so that a module can be
        opened on it again, and the optimiser's settings."""
        self.flush()
        state = self.whereabouts()
        if self.optimizer is not None:
            state.update(lr=self.optimizer.lr, eps=getattr(self.optimizer, "eps", None))
        return state

    def set_extra_state(self, state: dict) -> None:
        mine = self.whereabouts()
        for key in ("shape", "dtype", "optimizer"):
            if tuple_or_value(state.get(key)) != mine[key]:
                raise ValueError(
                    f"agio.torch: the state_dict is of a table with {key} {state.get(key)!r}, this "
                    f"module's table has {mine[key]!r}; open the table it was saved from "
                    f"({state.get('uri')!r} at byte {state.get('offset')})"
                )
        if self.optimizer is not None:
            self.optimizer.lr = state["lr"]
            if state.get("eps") is not None:
                self.optimizer.eps = state["eps"]

    def extra_repr(self) -> str:
        where = self.whereabouts()
        return f"{where['uri']!r} from byte {where['offset']}, shape={where['shape']}, dtype={where['dtype']}"


def _update(table: Any, uniq: torch.Tensor, leaf: torch.Tensor, writes_then: int) -> None:
    if table() is None:
        raise RuntimeError("agio.torch: backward reached rows of a module deleted since; keep it until backward")
    table().update(uniq, leaf, writes_then)


def tuple_or_value(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def torch_dtype(dtype: Any) -> torch.dtype:
    return torch.from_numpy(numpy.empty(0, numpy.dtype(dtype))).dtype


def check_table(dtype: Any, shape: tuple, where: str) -> None:
    """A table is 2-D, of a floating-point dtype (what torch.nn.functional.embedding_bag takes)."""
    if len(shape) != 2:
        raise ValueError(f"{where}: a table is 2-D (rows, embedding_dim), not of shape {tuple(shape)}")
    if numpy.dtype(dtype).kind != "f":
        raise ValueError(f"{where}: a table holds floating-point numbers, not {numpy.dtype(dtype)}")


def check_fits(store: Device, offset: int, dtype: Any, shape: tuple, where: str) -> int:
    """Raises ValueError unless a record of `dtype` and `shape` fits `store` from byte `offset`,
    before anything is made or written; returns the byte after the record, rounded up to
    HEADER_ALIGN (where a next record may start)."""
    if not isinstance(store, Device):
        raise TypeError(f"{where}: store is an agio.Device of a started agio.Runtime, not {type(store).__name__}")
    nbytes = int(numpy.prod(shape)) * numpy.dtype(dtype).itemsize
    end = offset + len(npy_header(dtype, shape)) + -(-nbytes // HEADER_ALIGN) * HEADER_ALIGN
    if end > store.capacity_bytes:
        raise ValueError(
            f"{where}: a table of shape {tuple(shape)} and dtype {numpy.dtype(dtype)} staged from byte "
            f"{offset} needs {end} bytes of {store.uri}, which holds {store.capacity_bytes}"
        )
    return end


def source_header(source: Any, where: str) -> tuple:
    """(dtype, shape) of a table given as a tensor, a NumPy array or the path of a .npy file."""
    if isinstance(source, (str, os.PathLike)):
        header = read_header(source)
        return header.dtype, header.shape
    if isinstance(source, torch.Tensor):
        return numpy_dtype(source.dtype), tuple(source.shape)
    if isinstance(source, numpy.ndarray):
        return source.dtype, source.shape
    raise TypeError(
        f"{where}: embeddings are a torch.Tensor, a NumPy array or the path of a .npy file, "
        f"not {type(source).__name__}"
    )


def table_cache(cache: Any, cache_bytes: int | None, policy: str | None, where: str) -> dict:
    """The cache options of a table's agio.Array: a shared agio.Cache (`cache`, made by the caller
    with the options it wants, a host tier among them), or one of the table's own of
    `cache_bytes` (64 MiB when not given) and `policy` ("clock")."""
    if cache is None:
        return {"cache_bytes": 64 << 20 if cache_bytes is None else cache_bytes, "policy": policy or "clock"}
    if cache_bytes is not None or policy is not None:
        raise ValueError(f"{where}: cache_bytes and policy shape a cache of the table's own; with cache= the "
                         "shared agio.Cache's options hold (give them to agio.Cache instead)")
    return {"cache": cache}


def stage_table(source: Any, store: Device, offset: int, where: str, **cache_options: Any) -> Array:
    """Stages `source` (checked to be a table that fits) at byte `offset` of `store` and opens it."""
    dtype, shape = source_header(source, where)
    check_table(dtype, shape, where)
    check_fits(store, offset, dtype, shape, where)
    if isinstance(source, torch.Tensor):
        source = source.detach()
    stage(source, store, offset)
    return Array.open(store, offset, **cache_options)


def open_table(store: Device, offset: int, where: str, **cache_options: Any) -> Array:
    if not isinstance(store, Device):
        raise TypeError(f"{where}: store is an agio.Device of a started agio.Runtime, not {type(store).__name__}")
    array = Array.open(store, offset, **cache_options)
    try:
        check_table(array.dtype, array.shape, where)
    except ValueError:
        array.close()
        raise
    return array


def check_declared(array: Array, where: str, **declared: Any) -> None:
    """Raises ValueError when a dimension or dtype the caller declared is not the staged table's."""
    staged = {"num_embeddings": array.shape[0], "embedding_dim": array.shape[1], "dtype": array.dtype}
    for name, value in declared.items():
        if value is None:
            continue
        expected = numpy_dtype(value) if name == "dtype" else value
        if expected != staged[name]:
            raise ValueError(
                f"{where}: {name} is {value}, but the table staged on {array.device.uri} has "
                f"{staged[name]} (shape {array.shape}, dtype {array.dtype})"
            )
