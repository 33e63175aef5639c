"""agio.torch.EmbeddingBagCollection: torchrec's EmbeddingBagCollection over tables on an agio
store. Tables of one embedding_dim and dtype are concatenated into one staged table (each from
a base row of its own), so a batch of all their features is one torch.unique, one gather (one
agio job) and one embedding_bag call per pooling mode."""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any

import numpy
import torch
import torch.nn.functional as F

from .._cache import Cache
from .._runtime import Device
from ._checks import checked_indices, checked_mode, checked_offsets
from ._optim import make_optimizer
from ._table import StagedTable, check_fits, check_table, open_table, source_header, stage_table, table_cache

_WHERE = "agio.torch.EmbeddingBagCollection"


@dataclasses.dataclass
class EmbeddingBagConfig:
    """One table of an EmbeddingBagCollection, as torchrec's config: `name`, its rows and
    width, the `feature_names` it serves, their `pooling` ("sum", "mean", "max", or torchrec's
    PoolingType) and its initial `weight` (a tensor, NumPy array or .npy path of shape
    (num_embeddings, embedding_dim); None: uniform in ±sqrt(1 / num_embeddings), torchrec's
    default)."""

    name: str
    num_embeddings: int
    embedding_dim: int
    feature_names: list
    pooling: Any = "sum"
    weight: Any = None

    def __post_init__(self):
        where = f"agio.torch.EmbeddingBagConfig {self.name!r}"
        self.pooling = checked_mode(str(getattr(self.pooling, "name", self.pooling)).lower(), where)
        self.feature_names = list(self.feature_names)
        if not self.feature_names:
            raise ValueError(f"{where}: feature_names names at least one feature")
        self.dtype = numpy.dtype(numpy.float32)
        if self.weight is not None:
            self.dtype, shape = source_header(self.weight, where)
            if tuple(shape) != (self.num_embeddings, self.embedding_dim):
                raise ValueError(
                    f"{where}: weight has shape {tuple(shape)}, not ({self.num_embeddings}, {self.embedding_dim})"
                )
        check_table(self.dtype, (self.num_embeddings, self.embedding_dim), where)

    def initial_weight(self) -> torch.Tensor:
        if self.weight is None:
            bound = math.sqrt(1 / self.num_embeddings)
            return torch.empty(self.num_embeddings, self.embedding_dim).uniform_(-bound, bound)
        if isinstance(self.weight, (str, os.PathLike)):
            return torch.from_numpy(numpy.load(self.weight))
        return torch.as_tensor(self.weight).detach().cpu()


@dataclasses.dataclass
class _Feature:
    table: str
    group: int
    base: int  # the table's first row in its group's staged table
    num_embeddings: int
    pooling: str


class EmbeddingBagCollection(torch.nn.Module):
    """Pooled embeddings of many features (see docs/PYTORCH.md):

        ebc = EmbeddingBagCollection([EmbeddingBagConfig("t0", 10**7, 64, ["f0"]), ...], store=dev)
        out = ebc({"f0": idx0, ...})       # dict of [batch, n] or (values, offsets) -> [batch, dim]
        out = ebc(kjt)                     # torchrec KeyedJaggedTensor -> KeyedTensor
        emb = ebc.lookup(indices)          # [batch, features] -> [batch, features, dim] (DLRM)

    The tables are staged on `store` from byte `offset` on, one record per (embedding_dim,
    dtype), in the order of their first table. `optimizer`, `lr`, `eps`, `cache_bytes` and
    `policy` as for agio.torch.EmbeddingBag (one cache of `cache_bytes` per record), or `cache`,
    one agio.Cache every record shares (a host tier below it, for one)."""

    def __init__(
        self,
        tables: list,
        *,
        store: Device,
        offset: int = 0,
        cache: Cache | None = None,
        cache_bytes: int | None = None,
        policy: str | None = None,
        optimizer: str | None = None,
        lr: float = 0.01,
        eps: float = 1e-8,
    ):
        layout = _layout(tables, store, offset)
        make_optimizer(optimizer, lr, eps, _WHERE)
        arrays = []
        for members, place in layout:
            data = torch.cat([tables[i].initial_weight() for i in members])
            arrays.append(stage_table(data, store, place, _WHERE, **table_cache(cache, cache_bytes, policy, _WHERE)))
        self._setup(tables, layout, arrays, optimizer, lr, eps)

    @classmethod
    def open(
        cls,
        tables: list,
        *,
        store: Device,
        offset: int = 0,
        cache: Cache | None = None,
        cache_bytes: int | None = None,
        policy: str | None = None,
        optimizer: str | None = None,
        lr: float = 0.01,
        eps: float = 1e-8,
    ) -> "EmbeddingBagCollection":
        """The collection staged before on `store` from byte `offset` by the constructor with
        the same `tables` (their weights are not read: the store has them)."""
        layout = _layout(tables, store, offset)
        make_optimizer(optimizer, lr, eps, _WHERE)
        arrays = []
        try:
            for members, place in layout:
                array = open_table(store, place, _WHERE, **table_cache(cache, cache_bytes, policy, _WHERE))
                arrays.append(array)
                expected = (sum(tables[i].num_embeddings for i in members), tables[members[0]].embedding_dim)
                if array.shape != expected or array.dtype != tables[members[0]].dtype:
                    raise ValueError(
                        f"{_WHERE}: the record at byte {place} of {store.uri} holds {array.shape} "
                        f"{array.dtype}; tables {[tables[i].name for i in members]} make "
                        f"{expected} {tables[members[0]].dtype}: open it with the tables it was made with"
                    )
        except ValueError:
            for array in arrays:
                array.close()
            raise
        self = cls.__new__(cls)
        self._setup(tables, layout, arrays, optimizer, lr, eps)
        return self

    def _setup(self, tables: list, layout: list, arrays: list, optimizer: Any, lr: float, eps: float) -> None:
        super().__init__()
        self.groups = torch.nn.ModuleList(
            StagedTable(array, place, False, make_optimizer(optimizer, lr, eps, _WHERE))
            for array, (_, place) in zip(arrays, layout)
        )
        self.features: dict = {}
        for g, (members, _) in enumerate(layout):
            base = 0
            for i in members:
                for name in tables[i].feature_names:
                    self.features[name] = _Feature(
                        tables[i].name, g, base, tables[i].num_embeddings, tables[i].pooling
                    )
                base += tables[i].num_embeddings
        self.feature_names = [name for table in tables for name in table.feature_names]
        self.embedding_dims = {name: int(self.groups[f.group].array.shape[1]) for name, f in self.features.items()}
        device = self.groups[0].backend_device
        self._bases = torch.tensor([self.features[n].base for n in self.feature_names], device=device)
        self._rows = torch.tensor([self.features[n].num_embeddings for n in self.feature_names], device=device)

    # --- the DLRM path: one index per sample and feature -----------------------------------

    def lookup(self, indices: torch.Tensor) -> torch.Tensor:
        """indices[b, f] is sample b's row of feature feature_names[f]; returns the rows as a
        [batch, features, embedding_dim] tensor (each bag holds one row, so every pooling gives
        the row itself). Needs every table of one embedding_dim and dtype."""
        table, uniq, inverse = self._lookup_rows(indices)
        return F.embedding(inverse, table.rows(uniq))

    def _lookup_rows(self, indices: Any) -> tuple:
        indices = checked_indices(indices, _WHERE, "indices")
        if indices.dim() != 2 or indices.shape[1] != len(self.feature_names):
            raise ValueError(
                f"{_WHERE}: indices is [batch, {len(self.feature_names)}] (one row a sample and "
                f"feature, in feature_names order), not of shape {tuple(indices.shape)}"
            )
        if len(self.groups) != 1:
            raise ValueError(
                f"{_WHERE}: lookup needs every table of one embedding_dim and dtype; these tables make "
                f"{len(self.groups)} groups: call the collection with a dict of features instead"
            )
        table = self.groups[0]
        indices = indices.to(table.backend_device)
        bad = (indices < 0) | (indices >= self._rows)
        if bool(bad.any()):
            b, f = bad.nonzero()[0].tolist()
            name = self.feature_names[f]
            raise IndexError(
                f"{_WHERE}: indices[{b}, {f}] = {int(indices[b, f])} is out of range for feature "
                f"{name!r} (table {self.features[name].table!r} of {self.features[name].num_embeddings} rows)"
            )
        uniq, inverse = torch.unique(indices.to(torch.int64) + self._bases, return_inverse=True)
        return table, uniq, inverse

    # --- pooled features -------------------------------------------------------------------

    def forward(self, features: Any) -> Any:
        """`features`: a torchrec KeyedJaggedTensor (returns a KeyedTensor of feature_names'
        pooled embeddings, concatenated along dim 1), or a dict of feature name -> a [batch, n]
        index tensor (n indices a bag) or (values, offsets) as torch.nn.EmbeddingBag's 1-D input
        and offsets (returns a dict of name -> [batch, embedding_dim])."""
        keyed = _is_keyed_jagged_tensor(features)
        bags = self._bags(features, keyed)
        pooled = {}
        for g, table in enumerate(self.groups):
            names = [name for name in self.feature_names if self.features[name].group == g]
            pooled.update(self._pool(table, names, bags))
        if keyed:
            from torchrec.sparse.jagged_tensor import KeyedTensor

            return KeyedTensor(
                keys=list(self.feature_names),
                length_per_key=[self.embedding_dims[name] for name in self.feature_names],
                values=torch.cat([pooled[name] for name in self.feature_names], dim=1),
            )
        return {name: pooled[name] for name in self.feature_names}

    def _pool(self, table: StagedTable, names: list, bags: dict) -> dict:
        uniq, inverse = torch.unique(self._global_values(names, bags), return_inverse=True)
        rows = table.rows(uniq)
        lengths = [len(bags[name][0]) for name in names]
        starts = numpy.cumsum([0] + lengths).tolist()
        pooled = {}
        for mode in dict.fromkeys(self.features[name].pooling for name in names):
            members = [i for i, name in enumerate(names) if self.features[name].pooling == mode]
            if len(members) == len(names):
                mode_inverse = inverse
            else:
                mode_inverse = torch.cat([inverse[starts[i] : starts[i + 1]] for i in members])
            parts, at = [], 0
            for i in members:  # each feature's bags, shifted to where its values now start
                parts.append(bags[names[i]][1][:-1] + at)
                at += lengths[i]
            parts.append(torch.tensor([at], device=inverse.device))
            out = F.embedding_bag(mode_inverse, rows, torch.cat(parts), mode=mode, include_last_offset=True)
            counts = [len(bags[names[i]][1]) - 1 for i in members]
            pooled.update({names[i]: rows_ for i, rows_ in zip(members, out.split(counts))})
        return pooled

    def _global_values(self, names: list, bags: dict) -> torch.Tensor:
        """The features' values as rows of their group's table, in `names` order; raises
        IndexError naming the first value out of its table's range (one host read when none is)."""
        values = [bags[name][0] for name in names]
        bad = torch.cat([(v < 0) | (v >= self.features[name].num_embeddings) for name, v in zip(names, values)])
        if bool(bad.any()):
            for name, v in zip(names, values):
                wrong = ((v < 0) | (v >= self.features[name].num_embeddings)).nonzero()
                if len(wrong):
                    i = int(wrong[0])
                    feature = self.features[name]
                    raise IndexError(
                        f"{_WHERE}: feature {name!r} value [{i}] = {int(v[i])} is out of range for table "
                        f"{feature.table!r} of {feature.num_embeddings} rows"
                    )
        return torch.cat([v + self.features[name].base for name, v in zip(names, values)])

    def _bags(self, features: Any, keyed: bool) -> dict:
        """name -> (values, offsets of batch + 1 entries), int64 in the backend's memory."""
        if keyed:
            given = {name: (jt.values(), jt.offsets()) for name, jt in features.to_dict().items()}
        elif isinstance(features, dict):
            given = features
            unknown = [name for name in given if name not in self.features]
            if unknown:
                raise ValueError(f"{_WHERE}: features {unknown} are none of this collection's {self.feature_names}")
        else:
            raise TypeError(
                f"{_WHERE}: features are a dict of feature name -> indices or a torchrec "
                f"KeyedJaggedTensor, not {type(features).__name__}"
            )
        missing = [name for name in self.feature_names if name not in given]
        if missing:
            raise ValueError(f"{_WHERE}: features lack {missing}; the collection pools {self.feature_names}")
        device = self.groups[0].backend_device
        bags = {}
        for name in self.feature_names:
            what = f"features[{name!r}]"
            given_bags = given[name]
            if isinstance(given_bags, torch.Tensor):
                indices = checked_indices(given_bags, _WHERE, what)
                if indices.dim() != 2:
                    raise ValueError(
                        f"{_WHERE}: {what} is a [batch, n] tensor or (values, offsets), not of shape "
                        f"{tuple(indices.shape)}"
                    )
                batch, n = indices.shape
                values, offsets = indices.reshape(-1), torch.arange(batch + 1, device=indices.device) * n
            elif isinstance(given_bags, (tuple, list)) and len(given_bags) == 2:
                values = checked_indices(given_bags[0], _WHERE, f"{what} values")
                if values.dim() != 1:
                    raise ValueError(f"{_WHERE}: {what} values are 1-D, not of shape {tuple(values.shape)}")
                offsets = checked_offsets(given_bags[1], len(values), keyed, f"{_WHERE}: {what}")
                if not keyed:
                    offsets = torch.cat([offsets, torch.tensor([len(values)], device=offsets.device)])
            else:
                kind = type(given_bags).__name__
                raise TypeError(f"{_WHERE}: {what} is a [batch, n] tensor or (values, offsets), not {kind}")
            bags[name] = (values.to(device, torch.int64), offsets.to(device, torch.int64))
        return bags

    # --- cache and storage -----------------------------------------------------------------

    def prefetch(self, features: Any) -> None:
        """Starts loading the rows of `features` (a lookup's indices, a dict or a
        KeyedJaggedTensor, as the calls take) into the caches; returns at once."""
        if isinstance(features, torch.Tensor):
            table, uniq, _ = self._lookup_rows(features)
            table.prefetch(uniq)
            return
        bags = self._bags(features, _is_keyed_jagged_tensor(features))
        for g, table in enumerate(self.groups):
            names = [name for name in self.feature_names if self.features[name].group == g]
            table.prefetch(torch.unique(self._global_values(names, bags)))

    def flush(self) -> None:
        """Writes every updated row back to the store and makes it durable."""
        for table in self.groups:
            table.flush()

    def close(self) -> None:
        """Writes updated rows back and frees the caches now; later calls raise RuntimeError."""
        for table in self.groups:
            table.close()

    def extra_repr(self) -> str:
        return f"features={self.feature_names}"


def _layout(tables: list, store: Device, offset: int) -> list:
    """[(indices of the tables of one (embedding_dim, dtype), the byte their record starts at)],
    checked to fit `store` before anything is made or written."""
    if not tables or not all(isinstance(t, EmbeddingBagConfig) for t in tables):
        raise TypeError(f"{_WHERE}: tables is a non-empty list of agio.torch.EmbeddingBagConfig")
    for what, names in (("table", [t.name for t in tables]), ("feature", [f for t in tables for f in t.feature_names])):
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"{_WHERE}: {what} names are unique; {repeated} repeat")
    groups: dict = {}
    for i, table in enumerate(tables):
        groups.setdefault((table.embedding_dim, table.dtype), []).append(i)
    layout, place = [], offset
    for (dim, dtype), members in groups.items():
        layout.append((members, place))
        place = check_fits(store, place, dtype, (sum(tables[i].num_embeddings for i in members), dim), _WHERE)
    return layout


def _is_keyed_jagged_tensor(features: Any) -> bool:
    kind = type(features)
    return kind.__name__ == "KeyedJaggedTensor" and kind.__module__.startswith("torchrec")
