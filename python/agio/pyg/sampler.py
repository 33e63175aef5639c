"""agio.pyg.NeighborSampler: PyG's NeighborSampler, whose homogeneous uniform sampling runs in plain
PyTorch when neither pyg-lib nor torch-sparse is installed (PyG's own then raises ImportError).
With either installed it is PyG's sampler unchanged."""

from __future__ import annotations

import warnings
from typing import Any

import torch
import torch_geometric.typing
from torch import Tensor
from torch_geometric.sampler import NeighborSampler as PygNeighborSampler
from torch_geometric.sampler import SamplerOutput
from torch_geometric.sampler.base import SubgraphType


def _has_native_sampler() -> bool:
    return bool(torch_geometric.typing.WITH_PYG_LIB or torch_geometric.typing.WITH_TORCH_SPARSE)


class NeighborSampler(PygNeighborSampler):
    """torch_geometric.sampler.NeighborSampler, with the same arguments. Without pyg-lib and
    torch-sparse it samples itself: homogeneous graphs, each hop picking for every node of the
    frontier `num_neighbors[hop]` distinct in-neighbours uniformly (all of them when it has no
    more, or for -1), as pyg-lib does with replace=False and disjoint=False. Its SamplerOutput
    follows pyg-lib's: `node` starts with the seeds, then each hop's new nodes in the order they
    were first sampled; `row` (sampled neighbour) and `col` (the node it was sampled for) index
    `node`; `edge` indexes the graph store's CSC order (the loader maps it through
    `edge_permutation`); `num_sampled_nodes` and `num_sampled_edges` per hop. Randomness comes
    from PyTorch's global generator: torch.manual_seed(s) gives the same batches again.

        sampler = agio.pyg.NeighborSampler((feature_store, graph_store), num_neighbors=[15, 10])
        loader = NeighborLoader((feature_store, graph_store), num_neighbors=[15, 10],
                                neighbor_sampler=sampler, batch_size=1024, input_nodes=train)

    What it does not do by itself raises NotImplementedError at construction: heterogeneous
    graphs, replace=True, disjoint=True, temporal or weighted sampling, subgraph_type="induced"."""

    def __init__(self, data: Any, num_neighbors: Any, **kwargs: Any):
        with warnings.catch_warnings():
            if not _has_native_sampler():
                # PyG warns that sampling without pyg-lib is deprecated: this class is the sampling.
                warnings.filterwarnings("ignore", message=".*without a 'pyg-lib' installation.*")
            super().__init__(data, num_neighbors, **kwargs)
        self._local: Tensor | None = None
        if not _has_native_sampler():
            self._refuse_unsupported()

    def _refuse_unsupported(self) -> None:
        unsupported = {
            "heterogeneous graphs": self.is_hetero,
            "replace=True": self.replace,
            "disjoint=True": self.disjoint,
            "temporal sampling (time_attr)": self.node_time is not None or self.edge_time is not None,
            "weighted sampling (weight_attr)": self.edge_weight is not None,
            "subgraph_type='induced'": self.subgraph_type == SubgraphType.induced,
        }
        asked = [name for name, on in unsupported.items() if on]
        if asked:
            raise NotImplementedError(
                f"agio.pyg.NeighborSampler samples without pyg-lib only homogeneous graphs, uniformly, "
                f"without replacement and not disjoint; {', '.join(asked)} needs pyg-lib"
            )

    def _sample(self, seed: Any, seed_time: Any = None, **kwargs: Any) -> SamplerOutput:
        if _has_native_sampler():
            return super()._sample(seed, seed_time, **kwargs)
        if self._local is None:
            self._local = torch.full((self.num_nodes,), -1, dtype=torch.int64)
        node, row, col, edge, num_nodes, num_edges = sample_neighbors(
            self.colptr, self.row, seed, self.num_neighbors.get_mapped_values(), self._local
        )
        if self.sample_direction == "backward":
            row, col = col, row
        return SamplerOutput(node=node, row=row, col=col, edge=edge, batch=None,
                             num_sampled_nodes=num_nodes, num_sampled_edges=num_edges)


def sample_neighbors(colptr: Tensor, row: Tensor, seed: Tensor, fanouts: list[int],
                     local: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, list[int], list[int]]:
    """Uniform neighbour sampling without replacement over the CSC graph (colptr, row), from the
    distinct nodes `seed`, `fanouts[h]` neighbours per node at hop h (-1: all). `local` is a
    node-to-local-index map of the graph's size holding -1 everywhere; it is used as scratch and
    left that way (a reused buffer: a map allocated per batch would cost a fill of the whole
    graph's size). Returns node, row, col, edge, num_sampled_nodes, num_sampled_edges."""
    seed = seed.to(torch.int64)
    count = seed.numel()
    local[seed] = torch.arange(count)
    sampled = [seed]
    try:
        if count and bool((local[seed] != torch.arange(count)).any()):
            raise ValueError("agio.pyg: the seed nodes of a batch must be distinct")
        rows, cols, edges, num_edges = [], [], [], []
        frontier, first_local = seed, 0
        for fanout in fanouts:
            edge, owner = _pick_edges(colptr, frontier, fanout)
            source = row[edge]
            new = _first_appearances(source[local[source] < 0])
            local[new] = torch.arange(first_local + len(frontier), first_local + len(frontier) + len(new))
            sampled.append(new)
            rows.append(local[source])
            cols.append(owner + first_local)
            edges.append(edge)
            num_edges.append(len(edge))
            first_local += len(frontier)
            frontier = new
        node = torch.cat(sampled)
    finally:
        local[torch.cat(sampled)] = -1
    empty = torch.empty(0, dtype=torch.int64)
    return (node, torch.cat(rows) if rows else empty, torch.cat(cols) if cols else empty,
            torch.cat(edges) if edges else empty, [len(s) for s in sampled], num_edges)


def _pick_edges(colptr: Tensor, frontier: Tensor, fanout: int) -> tuple[Tensor, Tensor]:
    """For each node of `frontier`, min(fanout, degree) of its in-edges chosen uniformly without
    replacement (all of them for fanout -1): their CSC positions, and for each the position in
    `frontier` of the node it was picked for, grouped by that node in frontier order."""
    start = colptr[frontier].to(torch.int64)
    degree = colptr[frontier + 1].to(torch.int64) - start
    counts = degree if fanout < 0 else degree.clamp(max=fanout)
    owner = torch.repeat_interleave(torch.arange(len(frontier)), counts)
    slot = torch.arange(len(owner)) - (torch.cumsum(counts, 0) - counts)[owner]
    offset = slot
    if fanout >= 0:
        many = degree > fanout
        if bool(many.any()):
            chosen = _distinct_below(degree[many], fanout)
            which = (torch.cumsum(many, 0) - 1)[owner]
            picked = many[owner]
            offset = slot.clone()
            offset[picked] = chosen[which[picked], slot[picked]]
    return start[owner] + offset, owner


def _distinct_below(bound: Tensor, k: int) -> Tensor:
    """Row i: k distinct integers drawn uniformly from [0, bound[i]) (every bound[i] > k), by
    Robert Floyd's algorithm, all rows at once: k steps of work k per row, whatever the degrees
    (a power-law graph's hubs have millions of neighbours; shuffling them would cost as much)."""
    chosen = torch.empty((len(bound), k), dtype=torch.int64)
    for i in range(k):
        top = bound - k + i  # step i draws from [0, top]; top itself is new to the set
        draw = torch.minimum((torch.rand(len(bound), dtype=torch.float64) * (top + 1)).to(torch.int64), top)
        taken = (chosen[:, :i] == draw[:, None]).any(1)
        chosen[:, i] = torch.where(taken, top, draw)
    return chosen


def _first_appearances(values: Tensor) -> Tensor:
    """The distinct values, in the order of their first appearance (the order pyg-lib numbers
    newly sampled nodes in)."""
    if values.numel() == 0:
        return values
    distinct, inverse = torch.unique(values, return_inverse=True)
    first = torch.full((len(distinct),), len(values), dtype=torch.int64)
    first.scatter_reduce_(0, inverse, torch.arange(len(values)), reduce="amin")
    return distinct[first.argsort()]
