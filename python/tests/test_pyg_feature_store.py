"""agio.pyg.FeatureStore against PyG's in-memory reference store (torch_geometric.testing's
MyFeatureStore): what is put is what is got, by every kind of index; multi_get_tensor equals the
single gets; NeighborLoader over (FeatureStore, LocalGraphStore) yields the in-memory x[n_id];
each bad input raises and writes nothing."""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

from torch_geometric.distributed import LocalGraphStore  # noqa: E402
from torch_geometric.loader import NeighborLoader  # noqa: E402
from torch_geometric.testing import MyFeatureStore  # noqa: E402

import agio  # noqa: E402
from agio.pyg import FeatureStore, NeighborSampler  # noqa: E402



@pytest.fixture
def runtime(backend):
    with agio.Runtime(backend=backend, devices=["ram:16M?lba=4096"]) as rt:
        yield rt


@pytest.fixture
def store(runtime):
    return FeatureStore(runtime.devices[0], cache_bytes=1 << 20)


def _features(rows: int = 1000, width: int = 24, seed: int = 0) -> torch.Tensor:
    return torch.randn((rows, width), generator=torch.Generator().manual_seed(seed))


def _host(t: torch.Tensor) -> torch.Tensor:
    """A result on the host, after checking it came where the backend puts it."""
    assert t.device.type == ("cuda" if os.environ.get("AGIO_PYTEST_BACKEND", "cpu") == "gpu" else "cpu")
    return t.cpu()


def test_put_then_get_by_every_index_as_pyg_reference(store):
    x, y = _features(), torch.arange(1000) % 7
    reference = MyFeatureStore()
    for fs in (store, reference):
        assert fs.put_tensor(x, group_name=None, attr_name="x", index=None)
        fs[None, "y", None] = y  # group None, attr_name "y", whole tensor
    index = torch.tensor([999, 0, 5, 5, 512])
    for idx in (index, None, slice(None)):
        for name in ("x", "y"):
            want = reference.get_tensor(group_name=None, attr_name=name, index=idx)
            got = store.get_tensor(group_name=None, attr_name=name, index=idx)
            assert torch.equal(_host(got), want)
    assert torch.equal(_host(store.get_tensor(attr_name="x", group_name=None, index=slice(10, 20, 3))), x[10:20:3])
    assert torch.equal(_host(store.get_tensor(attr_name="x", group_name=None, index=-1)), x[-1])
    assert store.get_tensor_size(group_name=None, attr_name="x") == (1000, 24)
    assert store.get_tensor_size(group_name=None, attr_name="y") == (1000,)
    assert store.get_tensor_size(group_name=None, attr_name="x", index=index) == (5, 24)
    assert store.get_tensor_size(group_name=None, attr_name="z") is None
    assert sorted(a.attr_name for a in store.get_all_tensor_attrs()) == ["x", "y"]


def test_multi_get_equals_single_gets(store):
    x, y = _features(), torch.arange(1000) * 3
    store[None, "x", None], store[None, "y", None] = x, y
    index = torch.randint(0, 1000, (300,), generator=torch.Generator().manual_seed(1))
    attrs = [a for a in store.get_all_tensor_attrs()]
    for a in attrs:
        a.index = index
    got = store.multi_get_tensor(attrs)
    for a, tensor in zip(attrs, got):
        assert torch.equal(tensor, store.get_tensor(a))
        assert torch.equal(_host(tensor), {"x": x, "y": y}[a.attr_name][index])


def test_put_with_index_updates_rows_through_the_cache_and_flush_stores_them(store, runtime):
    x = _features()
    store[None, "x", None] = x
    rows, values = torch.tensor([7, 100, 999]), torch.full((3, 24), 2.5)
    assert store.put_tensor(values, group_name=None, attr_name="x", index=rows)
    store.put_tensor(torch.full((24,), -1.0), group_name=None, attr_name="x", index=8)
    expected = x.clone()
    expected[rows], expected[8] = values, -1.0
    assert torch.equal(_host(store.get_tensor(group_name=None, attr_name="x", index=None)), expected)
    store.flush()
    # A cache of its own over the same bytes reads the store itself.
    staged = store._arrays[(None, "x")]
    fresh = agio.Array(runtime.devices[0], np.float32, (1000, 24), offset=staged.offset, cache_bytes=1 << 20)
    assert torch.equal(_host(fresh[torch.arange(1000)]), expected)


def test_a_shared_cache_with_a_host_tier_serves_the_features_and_stays_open(runtime):
    cache = agio.Cache(runtime, cache_bytes=64 * 1024, ways=4, host_tier_bytes=4 << 20, line_bytes=8192)
    store = FeatureStore(runtime.devices[0], cache=cache)
    x = _features(rows=2900)
    store[None, "x", None] = x
    store[None, "y", None] = _features(rows=10, seed=1)
    rows = torch.randperm(2900, generator=torch.Generator().manual_seed(4))
    for _ in range(2):
        assert torch.equal(_host(store.get_tensor(group_name=None, attr_name="x", index=rows)), x[rows])
    assert cache.host_tier_counters()["hits"] > 0
    # Records start on the shared cache's 8 KiB lines (their data 4 KiB after, past the header).
    assert [(store._arrays[(None, name)].offset - 4096) % 8192 for name in "xy"] == [0, 0]
    store.put_tensor(torch.zeros(24), group_name=None, attr_name="x", index=5)
    store.close()
    assert not cache.closed
    fresh = agio.Array(runtime.devices[0], np.float32, (2900, 24), offset=store._arrays[(None, "x")].offset)
    assert torch.equal(_host(fresh[torch.tensor([4, 5, 6])]), torch.cat([x[4:5], torch.zeros(1, 24), x[6:7]]))
    with pytest.raises(ValueError, match="with cache= the shared agio.Cache's options hold"):
        FeatureStore(runtime.devices[0], cache_bytes=1 << 20, cache=cache)


def test_put_whole_tensor_again_replaces_it_and_remove_forgets_it(store):
    store[None, "x", None] = _features(seed=1)
    again = _features(rows=50, width=8, seed=2)
    store[None, "x", None] = again
    assert store.get_tensor_size(group_name=None, attr_name="x") == (50, 8)
    assert torch.equal(_host(store.get_tensor(group_name=None, attr_name="x", index=None)), again)
    assert store.remove_tensor(group_name=None, attr_name="x", index=None)
    assert not store.remove_tensor(group_name=None, attr_name="x", index=None)
    assert store.get_all_tensor_attrs() == []
    with pytest.raises(KeyError, match="Could not find tensor"):
        store.get_tensor(group_name=None, attr_name="x", index=None)


def test_open_tensor_reads_an_array_staged_before_in_place(store, runtime):
    x = _features(rows=300)
    agio.stage(x, runtime.devices[0], offset=0, progress=False)
    store.open_tensor("x")
    store[None, "y", None] = torch.arange(300)  # staged after x, not over it
    index = torch.tensor([299, 0, 17])
    assert torch.equal(_host(store.get_tensor(group_name=None, attr_name="x", index=index)), x[index])
    assert torch.equal(_host(store.get_tensor(group_name=None, attr_name="y", index=index)), index)


def test_bad_inputs_raise_and_write_nothing(store):
    x = _features()
    store[None, "x", None] = x
    whole = dict(group_name=None, attr_name="x", index=None)
    with pytest.raises(KeyError, match="Could not find tensor"):
        store.get_tensor(group_name=None, attr_name="nope", index=torch.tensor([1]))
    with pytest.raises(KeyError):
        store.put_tensor(x[:2], group_name=None, attr_name="nope", index=torch.tensor([0, 1]))
    with pytest.raises(IndexError, match="1000"):
        store.get_tensor(group_name=None, attr_name="x", index=torch.tensor([3, 1000]))
    with pytest.raises(IndexError):
        store.get_tensor(group_name=None, attr_name="x", index=1000)
    with pytest.raises(IndexError, match="1000"):
        store.put_tensor(torch.zeros(2, 24), group_name=None, attr_name="x", index=torch.tensor([0, 1000]))
    with pytest.raises(ValueError, match="float32"):
        store.put_tensor(torch.zeros(2, 24, dtype=torch.float64), group_name=None, attr_name="x",
                         index=torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="shape"):
        store.put_tensor(torch.zeros(2, 23), group_name=None, attr_name="x", index=torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="shape"):
        store.put_tensor(torch.zeros(3, 24), group_name=None, attr_name="x", index=torch.tensor([0, 1]))
    assert torch.equal(_host(store.get_tensor(**whole)), x)
    # 16 MiB store: a 20 MiB tensor does not fit; the message names both sizes.
    with pytest.raises(ValueError, match=r"needs 20,975,616 bytes but the store has [\d,]+ of its 16,777,216"):
        store[None, "big", None] = torch.zeros((5 << 20) // 4, 4)
    assert [a.attr_name for a in store.get_all_tensor_attrs()] == ["x"]
    with pytest.raises(ValueError, match="first dimension"):
        store[None, "scalar", None] = torch.tensor(1.0)


def test_neighbor_loader_batches_hold_the_in_memory_features(runtime, tmp_path):
    nodes = 2000
    g = torch.Generator().manual_seed(5)
    edge_index = torch.stack([torch.randint(0, nodes, (12000,), generator=g),
                              torch.randint(0, nodes, (12000,), generator=g)])
    x, y = _features(rows=nodes, width=16), torch.randint(0, 5, (nodes,), generator=g)
    fs = FeatureStore(runtime.devices[0], cache_bytes=64 << 10)  # smaller than x: evictions
    fs[None, "x", None], fs[None, "y", None] = x, y
    graph = LocalGraphStore.from_data(torch.arange(edge_index.size(1)), edge_index, nodes)
    sampler = NeighborSampler((fs, graph), num_neighbors=[5, 3])
    loader = NeighborLoader((fs, graph), num_neighbors=[5, 3], neighbor_sampler=sampler, batch_size=128,
                            input_nodes=torch.arange(nodes), shuffle=True)
    edges = set(map(tuple, edge_index.t().tolist()))
    seen = 0
    for batch in loader:
        assert torch.equal(_host(batch.x), x[batch.n_id])
        assert torch.equal(_host(batch.y), y[batch.n_id])
        assert set(map(tuple, batch.n_id[batch.edge_index].t().tolist())) <= edges
        seen += batch.batch_size
    assert seen == nodes
    assert fs.counters()["misses"] > 0 and fs.counters()["evictions"] > 0
