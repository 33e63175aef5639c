"""agio.pyg.NeighborSampler without pyg-lib: every sampled edge is one of the graph's, at most k
neighbours per node and hop, all of them where the degree is at most k, seeds first, no node
twice, the same batches for the same torch.manual_seed; and NeighborLoader over it."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

from torch_geometric.data import Data  # noqa: E402
from torch_geometric.loader import NeighborLoader  # noqa: E402

from agio.pyg import NeighborSampler  # noqa: E402
from agio.pyg.sampler import sample_neighbors  # noqa: E402


def _graph(nodes: int = 300, seed: int = 0) -> Data:
    """A graph of varied in-degrees: a few hubs with many in-edges, many nodes with few or none."""
    g = torch.Generator().manual_seed(seed)
    dst = torch.cat([torch.randint(0, 5, (2000,), generator=g), torch.randint(0, nodes, (1500,), generator=g)])
    src = torch.randint(0, nodes, (len(dst),), generator=g)
    keep = src != dst
    edge_index = torch.unique(torch.stack([src[keep], dst[keep]]), dim=1)  # no parallel edges
    return Data(edge_index=edge_index, num_nodes=nodes)


def _in_neighbours(data: Data) -> dict[int, set[int]]:
    found: dict[int, set[int]] = {v: set() for v in range(data.num_nodes)}
    for s, d in data.edge_index.t().tolist():
        found[d].add(s)
    return found


@pytest.fixture(autouse=True)
def _sample_here(monkeypatch):
    """Runs the PyTorch sampling even where pyg-lib or torch-sparse is installed."""
    monkeypatch.setattr("agio.pyg.sampler._has_native_sampler", lambda: False)


@pytest.mark.parametrize("fanouts", [[4, 3], [2, 2, 2], [-1, 2]])
def test_samples_only_graph_edges_at_most_k_per_node_and_all_when_fewer(fanouts):
    data = _graph()
    neighbours = _in_neighbours(data)
    sampler = NeighborSampler(data, num_neighbors=fanouts)
    seeds = torch.tensor([0, 1, 7, 42, 150, 299])
    torch.manual_seed(3)
    out = sampler._sample(seeds)
    node, row, col = out.node, out.row, out.col

    assert node[: len(seeds)].tolist() == seeds.tolist()
    assert len(set(node.tolist())) == len(node)
    assert out.num_sampled_nodes[0] == len(seeds) and sum(out.num_sampled_nodes) == len(node)
    assert sum(out.num_sampled_edges) == len(row) == len(col) == len(out.edge)
    # Every edge (neighbour -> node) is in the graph, and is the CSC edge it names.
    src, dst = node[row], node[col]
    for s, d in zip(src.tolist(), dst.tolist()):
        assert s in neighbours[d]
    assert torch.equal(sampler.row[out.edge], src)
    # Per hop: each node of the frontier got min(k, degree) distinct neighbours (all for -1).
    first_edge, first_node = 0, 0
    for hop, k in enumerate(fanouts):
        frontier = range(first_node, first_node + out.num_sampled_nodes[hop])
        edges = slice(first_edge, first_edge + out.num_sampled_edges[hop])
        for v in frontier:
            picked = src[edges][col[edges] == v].tolist()
            degree = len(neighbours[int(node[v])])
            assert len(picked) == len(set(picked)) == (degree if k < 0 else min(k, degree))
        first_node += out.num_sampled_nodes[hop]
        first_edge += out.num_sampled_edges[hop]
    # The node-to-local map is left clean for the next batch.
    assert bool((sampler._local == -1).all())


def test_same_seed_same_batches_and_each_neighbour_drawn():
    data = _graph()
    sampler = NeighborSampler(data, num_neighbors=[3])
    seeds = torch.tensor([0])  # a hub: hundreds of in-neighbours, 3 drawn
    runs = []
    for _ in range(2):
        torch.manual_seed(11)
        runs.append([sampler._sample(seeds).node.tolist() for _ in range(200)])
    assert runs[0] == runs[1]
    # Uniform: over 200 draws of 3 every neighbour of a hub of degree d comes up about 600/d times.
    drawn = {n for batch in runs[0] for n in batch[1:]}
    assert len(drawn) > 0.8 * len(_in_neighbours(data)[0])


def test_neighbor_loader_batches_are_subgraphs_of_the_graph():
    data = _graph()
    data.x = torch.arange(data.num_nodes, dtype=torch.float32).view(-1, 1)
    sampler = NeighborSampler(data, num_neighbors=[5, 5])
    loader = NeighborLoader(data, num_neighbors=[5, 5], neighbor_sampler=sampler, batch_size=32, shuffle=True)
    edges = set(map(tuple, data.edge_index.t().tolist()))
    seen = 0
    for batch in loader:
        assert torch.equal(batch.x.view(-1).long(), batch.n_id)
        assert set(map(tuple, batch.n_id[batch.edge_index].t().tolist())) <= edges
        assert torch.equal(data.edge_index[:, batch.e_id], batch.n_id[batch.edge_index])
        seen += batch.batch_size
    assert seen == data.num_nodes


def test_duplicate_seeds_and_unsupported_options_raise():
    data = _graph()
    sampler = NeighborSampler(data, num_neighbors=[2])
    with pytest.raises(ValueError, match="distinct"):
        sampler._sample(torch.tensor([3, 4, 3]))
    assert bool((sampler._local == -1).all())
    with pytest.raises(NotImplementedError, match="replace=True"):
        NeighborSampler(data, num_neighbors=[2], replace=True)
    with pytest.raises(NotImplementedError, match="disjoint=True"):
        NeighborSampler(data, num_neighbors=[2], disjoint=True)


def test_empty_hops_and_isolated_seeds():
    data = Data(edge_index=torch.tensor([[1], [0]]), num_nodes=3)
    sampler = NeighborSampler(data, num_neighbors=[2, 2])
    node, row, col, edge, num_nodes, num_edges = sample_neighbors(
        sampler.colptr, sampler.row, torch.tensor([2, 0]), [2, 2], torch.full((3,), -1, dtype=torch.int64))
    assert node.tolist() == [2, 0, 1] and num_nodes == [2, 1, 0] and num_edges == [1, 0]
    assert row.tolist() == [2] and col.tolist() == [1]
