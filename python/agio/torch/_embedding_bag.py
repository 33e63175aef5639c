"""agio.torch.EmbeddingBag: torch.nn.EmbeddingBag whose table lives on an agio store and is read
through agio's cache in GPU memory, so it may be larger than the GPU's memory."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from .._cache import Cache
from .._runtime import Device
from ._checks import (
    check_in_range,
    check_input_shape,
    checked_indices,
    checked_mode,
    checked_offsets,
    checked_weights,
)
from .._array import numpy_dtype
from ._optim import make_optimizer
from ._table import (
    StagedTable,
    check_declared,
    check_fits,
    check_table,
    open_table,
    source_header,
    stage_table,
    table_cache,
)

_WHERE = "agio.torch.EmbeddingBag"


class EmbeddingBag(torch.nn.Module):
    """torch.nn.EmbeddingBag's forward over a table staged on `store` (an agio.Device of a
    started agio.Runtime) from byte `offset`. The constructor makes a new table initialised as
    torch's (N(0, 1), the padding row zero) and stages it; `from_pretrained` stages a given one;
    `open` reads one staged before. See docs/PYTORCH.md.

        emb = agio.torch.EmbeddingBag(1 << 24, 64, store=dev, mode="sum", cache_bytes=1 << 30)
        out = emb(indices, offsets)                 # (len(offsets), 64), as torch's

    `optimizer` ("sgd", "rowwise_adagrad" or None) with `lr` and `eps` trains the table: rows a
    batch read are updated when backward reaches them and written back through the cache
    (durable after flush()). `cache_bytes` (64 MiB) and `policy` ("clock") shape the table's own
    cache; `cache`, an agio.Cache shared with other tables (a host tier below it, for one), takes
    its place."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        *,
        store: Device,
        offset: int = 0,
        mode: str = "mean",
        scale_grad_by_freq: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        dtype: torch.dtype | None = None,
        cache: Cache | None = None,
        cache_bytes: int | None = None,
        policy: str | None = None,
        optimizer: str | None = None,
        lr: float = 0.01,
        eps: float = 1e-8,
    ):
        optim = _checked_options(False, mode, scale_grad_by_freq, optimizer, lr, eps)
        dtype = dtype or torch.get_default_dtype()
        shape = (num_embeddings, embedding_dim)
        check_table(numpy_dtype(dtype), shape, _WHERE)
        check_fits(store, offset, numpy_dtype(dtype), shape, _WHERE)
        padding_idx = _checked_padding_idx(padding_idx, num_embeddings)
        weight = torch.empty(shape, dtype=dtype).normal_()
        if padding_idx is not None:
            weight[padding_idx] = 0
        array = stage_table(weight, store, offset, _WHERE, **table_cache(cache, cache_bytes, policy, _WHERE))
        self._setup(array, offset, False, mode, scale_grad_by_freq, include_last_offset, padding_idx, optim)

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Any,
        *,
        store: Device,
        offset: int = 0,
        freeze: bool = True,
        mode: str = "mean",
        scale_grad_by_freq: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        cache: Cache | None = None,
        cache_bytes: int | None = None,
        policy: str | None = None,
        optimizer: str | None = None,
        lr: float = 0.01,
        eps: float = 1e-8,
    ) -> "EmbeddingBag":
        """Stages `embeddings` (a 2-D torch.Tensor, NumPy array or the path of a .npy file,
        read in chunks) on `store` from byte `offset`, and returns the module over it.
        `freeze=True` (torch's default) makes it read only."""
        optim = _checked_options(freeze, mode, scale_grad_by_freq, optimizer, lr, eps)
        dtype, shape = source_header(embeddings, _WHERE)
        check_table(dtype, shape, _WHERE)
        padding_idx = _checked_padding_idx(padding_idx, shape[0])
        array = stage_table(embeddings, store, offset, _WHERE, **table_cache(cache, cache_bytes, policy, _WHERE))
        self = cls.__new__(cls)
        self._setup(array, offset, freeze, mode, scale_grad_by_freq, include_last_offset, padding_idx, optim)
        return self

    @classmethod
    def open(
        cls,
        store: Device,
        offset: int = 0,
        *,
        num_embeddings: int | None = None,
        embedding_dim: int | None = None,
        dtype: torch.dtype | None = None,
        freeze: bool = False,
        mode: str = "mean",
        scale_grad_by_freq: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        cache: Cache | None = None,
        cache_bytes: int | None = None,
        policy: str | None = None,
        optimizer: str | None = None,
        lr: float = 0.01,
        eps: float = 1e-8,
    ) -> "EmbeddingBag":
        """The module over the table staged at byte `offset` of `store` (agio.stage or this
        module), or over a .npy file attached as file:PATH (read and written in place). Its
        shape and dtype come from the record; `num_embeddings`, `embedding_dim` and `dtype`,
        when given, must match them."""
        optim = _checked_options(freeze, mode, scale_grad_by_freq, optimizer, lr, eps)
        array = open_table(store, offset, _WHERE, **table_cache(cache, cache_bytes, policy, _WHERE))
        try:
            check_declared(array, _WHERE, num_embeddings=num_embeddings, embedding_dim=embedding_dim, dtype=dtype)
            padding_idx = _checked_padding_idx(padding_idx, len(array))
        except ValueError:
            array.close()
            raise
        self = cls.__new__(cls)
        self._setup(array, offset, freeze, mode, scale_grad_by_freq, include_last_offset, padding_idx, optim)
        return self

    def _setup(self, array, offset, freeze, mode, scale_grad_by_freq, include_last_offset, padding_idx, optim) -> None:
        super().__init__()
        self.mode = mode
        self.scale_grad_by_freq = scale_grad_by_freq
        self.include_last_offset = include_last_offset
        self.padding_idx = padding_idx
        self.num_embeddings, self.embedding_dim = array.shape
        self.table = StagedTable(array, offset, freeze, optim)

    def forward(
        self, input: torch.Tensor, offsets: torch.Tensor | None = None, per_sample_weights: torch.Tensor | None = None
    ) -> torch.Tensor:
        """torch.nn.EmbeddingBag's forward; the result is in the backend's memory (a CUDA tensor
        on the GPU backend). Every argument is checked before a row is read."""
        table = self.table
        input = checked_indices(input, _WHERE)
        check_input_shape(input, offsets, _WHERE)
        input = input.to(table.backend_device)
        if offsets is not None:
            offsets = checked_offsets(offsets, input.numel(), self.include_last_offset, _WHERE)
            offsets = offsets.to(table.backend_device)
        weights = checked_weights(per_sample_weights, input, self.mode, table.dtype, _WHERE)
        if weights is not None:
            weights = weights.to(table.backend_device)
        # A monotonic relabelling: each bag reduces its rows in the order torch's would.
        uniq, inverse = torch.unique(input, return_inverse=True)
        check_in_range(input, uniq, self.num_embeddings, _WHERE)
        return F.embedding_bag(
            inverse,
            table.rows(uniq),
            offsets,
            scale_grad_by_freq=self.scale_grad_by_freq,
            mode=self.mode,
            per_sample_weights=weights,
            include_last_offset=self.include_last_offset,
            padding_idx=self._padding_position(uniq),
        )

    def prefetch(self, input: torch.Tensor) -> None:
        """Starts loading the rows `input` names into the cache (a hint; returns at once)."""
        input = checked_indices(input, _WHERE).to(self.table.backend_device)
        uniq = torch.unique(input)
        check_in_range(input, uniq, self.num_embeddings, _WHERE)
        self.table.prefetch(uniq)

    def flush(self) -> None:
        """Writes every updated row back to the store and makes it durable."""
        self.table.flush()

    def close(self) -> None:
        """Writes updated rows back and frees the cache now; later calls raise RuntimeError."""
        self.table.close()

    @property
    def array(self) -> Any:
        """The agio.Array holding the table (its counters() tell the cache's hits and misses)."""
        return self.table.array

    def _padding_position(self, uniq: torch.Tensor) -> int | None:
        if self.padding_idx is None:
            return None
        found = (uniq == self.padding_idx).nonzero()
        return int(found[0]) if len(found) else None

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.include_last_offset:
            text += ", include_last_offset=True"
        return text


def _checked_padding_idx(padding_idx: int | None, num_embeddings: int) -> int | None:
    """torch's rule: a padding_idx in [-num_embeddings, num_embeddings), negative counting from
    the end."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(f"{_WHERE}: padding_idx {padding_idx} is not within the table's {num_embeddings} rows")
    return padding_idx % num_embeddings


def _checked_options(freeze: bool, mode: str, scale_grad_by_freq: bool, optimizer: Any, lr: float, eps: float) -> Any:
    """Checks the options before a table is made or opened; returns the optimiser (or None)."""
    checked_mode(mode, _WHERE)
    if mode == "max" and scale_grad_by_freq:
        raise ValueError(f"{_WHERE}: mode 'max' does not scale gradients by frequency")
    if freeze and optimizer is not None:
        raise ValueError(f"{_WHERE}: a frozen table (freeze=True) is read only; pass freeze=False to train it")
    return make_optimizer(optimizer, lr, eps, _WHERE)
