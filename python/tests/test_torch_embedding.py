"""agio.torch.EmbeddingBag and EmbeddingBagCollection: results equal to torch.nn.EmbeddingBag's
on the whole table (torch.equal), training equal to torch's optimisers, every bad input refused
before a row is read or written. On the GPU backend the tensors are CUDA tensors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import agio  # noqa: E402
import agio.torch as agio_torch  # noqa: E402

MIB = 1 << 20


@pytest.fixture
def rt(backend):
    with agio.Runtime(backend=backend, devices=["ram:32M"]) as runtime:
        yield runtime


@pytest.fixture
def dev(rt):
    return rt.devices[0]


@pytest.fixture
def where(backend):
    """The torch device the backend's tensors are in."""
    return torch.device("cuda" if backend == "gpu" else "cpu")


def reference(weight, where, **options):
    """torch.nn.EmbeddingBag over the whole of `weight`, on `where`."""
    return torch.nn.EmbeddingBag.from_pretrained(weight.clone(), **options).to(where)


def table_of(module):
    """The module's whole table, read back through its cache, on the CPU."""
    return module.array.gather(torch.arange(len(module.array))).cpu()


def bags(generator, rows, count, where):
    """A batch of `count` bags of 0 to 9 indices each, with repeats, and its offsets."""
    lengths = torch.randint(0, 10, (count,), generator=generator)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)[:-1]])
    indices = torch.randint(0, rows // 4, (int(lengths.sum()),), generator=generator) * 4 % rows
    return indices.to(where), offsets.to(where)


# --- forward ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 8])
def test_forward_equals_torch(dev, where, mode, padding_idx):
    g = torch.Generator().manual_seed(1)
    weight = torch.randn(1000, 24, generator=g)
    emb = agio_torch.EmbeddingBag.from_pretrained(weight, store=dev, mode=mode, padding_idx=padding_idx)
    ref = reference(weight, where, mode=mode, padding_idx=padding_idx)
    indices, offsets = bags(g, 1000, 64, where)
    out = emb(indices, offsets)
    assert out.device.type == where.type and out.dtype == torch.float32
    assert torch.equal(out, ref(indices, offsets))
    two_d = indices[:60].reshape(12, 5)
    assert torch.equal(emb(two_d), ref(two_d))


def test_include_last_offset_and_per_sample_weights_equal_torch(dev, where):
    g = torch.Generator().manual_seed(2)
    weight = torch.randn(500, 8, generator=g)
    options = dict(mode="sum", include_last_offset=True)
    emb = agio_torch.EmbeddingBag.from_pretrained(weight, store=dev, **options)
    ref = reference(weight, where, **options)
    indices, offsets = bags(g, 500, 40, where)
    offsets = torch.cat([offsets, torch.tensor([len(indices)], device=where)])
    weights = torch.rand(len(indices), generator=g).to(where)
    assert torch.equal(emb(indices, offsets, weights), ref(indices, offsets, weights))
    assert torch.equal(emb(indices.int(), offsets.int()), ref(indices.int(), offsets.int()))


def test_new_table_is_initialised_as_torchs(dev, where):
    torch.manual_seed(7)
    emb = agio_torch.EmbeddingBag(300, 16, store=dev, mode="sum", padding_idx=3)
    torch.manual_seed(7)
    ref = torch.nn.EmbeddingBag(300, 16, mode="sum", padding_idx=3)
    assert torch.equal(table_of(emb), ref.weight.detach())
    assert emb.num_embeddings == 300 and emb.embedding_dim == 16


def test_from_numpy_npy_file_and_open(dev, rt, where, tmp_path):
    weight = np.random.default_rng(3).standard_normal((256, 32)).astype(np.float32)
    path = tmp_path / "emb.npy"
    np.save(path, weight)
    from_numpy = agio_torch.EmbeddingBag.from_pretrained(weight, store=dev, mode="sum")
    from_file = agio_torch.EmbeddingBag.from_pretrained(str(path), store=dev, offset=4 * MIB, mode="sum")
    reopened = agio_torch.EmbeddingBag.open(dev, 4 * MIB, mode="sum", embedding_dim=32, num_embeddings=256)
    indices = torch.tensor([[5, 7, 5], [255, 0, 1]], device=where)
    expected = reference(torch.from_numpy(weight), where, mode="sum")(indices)
    for module in (from_numpy, from_file, reopened):
        assert torch.equal(module(indices), expected)
        assert torch.equal(table_of(module), torch.from_numpy(weight))


def test_open_a_npy_file_in_place(backend, where, tmp_path):
    weight = np.random.default_rng(4).standard_normal((100, 16)).astype(np.float32)
    path = tmp_path / "table.npy"
    np.save(path, weight)
    size = -(-path.stat().st_size // 4096) * 4096
    with agio.Runtime(backend=backend, devices=[f"file:{path}?create={size}"]) as rt:
        emb = agio_torch.EmbeddingBag.open(rt.devices[0], mode="max")
        indices = torch.tensor([[1, 2], [99, 99]], device=where)
        assert torch.equal(emb(indices), reference(torch.from_numpy(weight), where, mode="max")(indices))


def test_declared_dimensions_must_match_the_staged_table(dev):
    agio_torch.EmbeddingBag.from_pretrained(torch.zeros(64, 8), store=dev)
    with pytest.raises(ValueError, match="embedding_dim is 16, but the table"):
        agio_torch.EmbeddingBag.open(dev, embedding_dim=16)
    with pytest.raises(ValueError, match="num_embeddings is 65"):
        agio_torch.EmbeddingBag.open(dev, num_embeddings=65)
    with pytest.raises(ValueError, match="dtype is torch.float16"):
        agio_torch.EmbeddingBag.open(dev, dtype=torch.float16)


def test_a_table_too_large_for_the_store_is_refused(dev):
    with pytest.raises(ValueError, match="needs .* bytes of ram:32M"):
        agio_torch.EmbeddingBag(1 << 20, 16, store=dev)
    with pytest.raises(ValueError, match="holds floating-point"):
        agio_torch.EmbeddingBag.from_pretrained(np.zeros((4, 4), np.int32), store=dev)
    with pytest.raises(ValueError, match="is 2-D"):
        agio_torch.EmbeddingBag.from_pretrained(torch.zeros(4, 4, 4), store=dev)


def test_bad_inputs_raise_before_a_row_is_read(dev, where):
    emb = agio_torch.EmbeddingBag.from_pretrained(torch.randn(100, 4), store=dev, mode="mean")
    ok = torch.tensor([1, 2, 3, 4], device=where)
    start = torch.tensor([0])
    cases = [
        (IndexError, r"input\[2\] = 100 is out of range for a table of 100 rows", (torch.tensor([1, 2, 100, -1]), start)),
        (IndexError, r"input\[1, 0\] = -3", (torch.tensor([[1, 2], [-3, 4]]),)),
        (ValueError, r"offsets\[0\] is 1", (ok, torch.tensor([1, 2]))),
        (ValueError, r"offsets decrease at offsets\[2\]", (ok, torch.tensor([0, 3, 2]))),
        (ValueError, r"offsets\[1\] = 5 is past", (ok, torch.tensor([0, 5]))),
        (ValueError, "offsets is 1-D", (ok, torch.tensor([[0]]))),
        (ValueError, "needs offsets", (ok,)),
        (ValueError, "offsets must be None", (ok.reshape(2, 2), torch.tensor([0]))),
        (ValueError, "goes with mode 'sum' only", (ok, torch.tensor([0]), torch.ones(4))),
        (TypeError, "torch.int32 or torch.int64", (ok.float(), torch.tensor([0]))),
    ]
    for error, message, args in cases:
        args = tuple(a.to(where) for a in args)
        with pytest.raises(error, match=message):
            emb(*args)
    summed = agio_torch.EmbeddingBag.from_pretrained(torch.randn(100, 4), store=dev, offset=MIB, mode="sum")
    with pytest.raises(ValueError, match="needs the input's"):
        summed(ok, torch.tensor([0], device=where), torch.ones(3, device=where))
    counts = emb.array.counters()
    assert counts["hits"] + counts["misses"] == 0


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="mode is one of"):
        agio_torch.EmbeddingBag.open(None, mode="median")
    with pytest.raises(ValueError, match="pass freeze=False"):
        agio_torch.EmbeddingBag.from_pretrained(torch.zeros(2, 2), store=None, optimizer="sgd")
    with pytest.raises(ValueError, match="optimizer is one of"):
        agio_torch.EmbeddingBag.open(None, optimizer="adam")


def test_prefetch_loads_the_rows(dev, where):
    emb = agio_torch.EmbeddingBag.from_pretrained(torch.randn(4096, 128), store=dev, mode="sum")
    indices = torch.arange(0, 4096, 16, device=where)
    emb.prefetch(indices)
    emb.array.reset_counters()
    emb(indices.reshape(-1, 4))
    assert emb.array.counters()["misses"] == 0


# --- training --------------------------------------------------------------------------------


def training_batches(where, rows, steps=4):
    g = torch.Generator().manual_seed(11)
    return [bags(g, rows, 16, where) for _ in range(steps)]


@pytest.mark.parametrize("mode, scale_grad_by_freq", [("mean", False), ("sum", True)])
def test_sgd_steps_equal_torchs_sparse_sgd(dev, where, mode, scale_grad_by_freq):
    weight = torch.randn(200, 8, generator=torch.Generator().manual_seed(5))
    options = dict(mode=mode, scale_grad_by_freq=scale_grad_by_freq, freeze=False)
    emb = agio_torch.EmbeddingBag.from_pretrained(weight, store=dev, optimizer="sgd", lr=0.5, **options)
    # torch has no sparse gradient scaled by frequency; its dense one steps the same rows
    ref = torch.nn.EmbeddingBag.from_pretrained(weight.clone(), sparse=not scale_grad_by_freq, **options).to(where)
    sgd = torch.optim.SGD(ref.parameters(), lr=0.5)
    for indices, offsets in training_batches(where, 200):
        target = torch.arange(len(offsets) * 8, dtype=torch.float32, device=where).reshape(-1, 8)
        (emb(indices, offsets) - target).pow(2).sum().backward()
        sgd.zero_grad()
        (ref(indices, offsets) - target).pow(2).sum().backward()
        sgd.step()
    torch.testing.assert_close(table_of(emb), ref.weight.detach().cpu(), rtol=1e-6, atol=1e-6)
    assert not torch.equal(table_of(emb), weight)


def rowwise_adagrad_reference(weight, batches, where, lr, eps, mode):
    """FBGEMM's row-wise Adagrad written out on a dense torch.nn.EmbeddingBag."""
    ref = torch.nn.EmbeddingBag.from_pretrained(weight.clone(), freeze=False, mode=mode).to(where)
    state = torch.zeros(len(weight), device=where)
    for indices, offsets in batches:
        ref.weight.grad = None
        ref(indices, offsets).pow(2).sum().backward()
        with torch.no_grad():
            g = ref.weight.grad
            touched = g.abs().sum(dim=1) > 0
            state[touched] += g[touched].pow(2).mean(dim=1)
            step = (lr / (state[touched].sqrt() + eps)).unsqueeze(1) * g[touched]
            ref.weight[touched] -= step
    return ref.weight.detach().cpu(), state.cpu()


def test_rowwise_adagrad_steps_equal_the_reference(dev, where):
    weight = torch.randn(300, 16, generator=torch.Generator().manual_seed(6))
    emb = agio_torch.EmbeddingBag.from_pretrained(
        weight, store=dev, mode="sum", freeze=False, optimizer="rowwise_adagrad", lr=0.1, eps=1e-6
    )
    batches = training_batches(where, 300, steps=5)
    for indices, offsets in batches:
        emb(indices, offsets).pow(2).sum().backward()
    expected, state = rowwise_adagrad_reference(weight, batches, where, lr=0.1, eps=1e-6, mode="sum")
    torch.testing.assert_close(table_of(emb), expected, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(emb.state_dict()["table.optimizer_state"].cpu(), state, rtol=1e-6, atol=1e-7)


def test_two_forwards_before_backward_lose_no_update(dev, where):
    weight = torch.randn(50, 4, generator=torch.Generator().manual_seed(8))
    emb = agio_torch.EmbeddingBag.from_pretrained(weight, store=dev, mode="sum", freeze=False, optimizer="sgd", lr=1.0)
    indices = torch.tensor([[3, 3, 9]], device=where)
    (emb(indices).sum() + emb(indices).sum()).backward()
    expected = weight.clone()
    for _ in range(2):  # each backward's update, applied to the rows the one before wrote
        expected[3] -= 2.0
        expected[9] -= 1.0
    assert torch.equal(table_of(emb), expected)


def test_updates_reach_storage_on_flush(dev, where):
    weight = torch.randn(64, 8, generator=torch.Generator().manual_seed(9))
    emb = agio_torch.EmbeddingBag.from_pretrained(weight, store=dev, mode="sum", freeze=False, optimizer="sgd", lr=0.25)
    emb(torch.tensor([[1, 2, 2]], device=where)).sum().backward()
    emb.flush()
    again = agio.Array.open(dev)  # a cache of its own: it sees what storage holds
    assert torch.equal(again.gather(torch.arange(64, device=where)).cpu(), table_of(emb))
    emb(torch.tensor([[3]], device=where)).sum().backward()
    expected = table_of(emb)
    emb.close()  # writes back, then frees the cache
    assert emb.array.closed
    assert torch.equal(agio.Array.open(dev).gather(torch.arange(64, device=where)).cpu(), expected)
    with pytest.raises(RuntimeError, match="closed"):
        emb(torch.tensor([[3]], device=where))


def test_frozen_and_optimizerless_tables_refuse_backward_and_write_nothing(dev, where):
    weight = torch.randn(32, 4)
    frozen = agio_torch.EmbeddingBag.from_pretrained(weight, store=dev, mode="sum")
    indices = torch.tensor([[1, 2]], device=where)
    with pytest.raises(RuntimeError, match="does not require grad"):
        frozen(indices).sum().backward()
    untrained = agio_torch.EmbeddingBag.open(dev, mode="sum")
    with pytest.raises(RuntimeError, match="has no optimizer"):
        untrained(indices).sum().backward()
    for module in (frozen, untrained):
        assert torch.equal(table_of(module), weight)
        assert module.array.counters()["write_backs"] == 0
    untrained.eval()
    assert not untrained(indices).requires_grad


def test_state_dict_reopens_the_table_with_its_optimizer_state(dev, where):
    weight = torch.randn(40, 4, generator=torch.Generator().manual_seed(10))
    options = dict(mode="sum", optimizer="rowwise_adagrad", lr=0.05)
    emb = agio_torch.EmbeddingBag.from_pretrained(weight, store=dev, offset=MIB, freeze=False, **options)
    emb(torch.tensor([[0, 5, 5]], device=where)).sum().backward()
    saved = emb.state_dict()
    place = saved["table._extra_state"]
    assert place["uri"] == dev.uri and place["offset"] == MIB
    assert place["shape"] == (40, 4) and place["dtype"] == "float32"
    reopened = agio_torch.EmbeddingBag.open(dev, place["offset"], **options)
    reopened.load_state_dict(saved)
    assert torch.equal(reopened.table.optimizer_state, emb.table.optimizer_state)
    assert torch.equal(table_of(reopened), table_of(emb))
    other = agio_torch.EmbeddingBag.from_pretrained(torch.zeros(41, 4), store=dev, offset=2 * MIB, freeze=False,
                                                    **options)
    with pytest.raises(ValueError, match="shape"):
        other.load_state_dict(saved)


# --- EmbeddingBagCollection ------------------------------------------------------------------


def test_a_shared_cache_with_a_host_tier_trains_and_reaches_storage(dev, rt, where):
    """Two tables on one agio.Cache of 64 KiB above a 4 MiB host tier: lookups equal torch's,
    SGD updates reach storage through both levels on flush(), and closing the modules leaves the
    shared cache open."""
    weights = weights_of(12, [(2048, 16), (512, 16)])
    cache = agio.Cache(rt, cache_bytes=64 * 1024, ways=4, host_tier_bytes=4 * MIB)
    embs = [agio_torch.EmbeddingBag.from_pretrained(w, store=dev, offset=k * 4 * MIB, mode="sum", freeze=False,
                                                     optimizer="sgd", lr=0.5, cache=cache) for k, w in enumerate(weights)]
    generator = torch.Generator().manual_seed(13)
    for emb, w in zip(embs, weights):
        indices, offsets = bags(generator, len(w), 300, where)
        assert torch.equal(emb(indices, offsets), reference(w, where, mode="sum")(indices, offsets))
    embs[0](torch.tensor([[5, 5, 7]], device=where)).sum().backward()
    expected = weights[0].clone()
    expected[5] -= 1.0
    expected[7] -= 0.5
    assert cache.host_tier_counters()["hits"] + cache.host_tier_counters()["misses"] > 0
    for emb in embs:
        emb.close()
    assert not cache.closed
    cache.flush()
    again = agio.Array.open(dev)  # a cache of its own: it reads what storage holds
    assert torch.equal(again.gather(torch.arange(2048, device=where)).cpu(), expected)
    with pytest.raises(ValueError, match="with cache= the shared agio.Cache's options hold"):
        agio_torch.EmbeddingBag.open(dev, cache=cache, cache_bytes=MIB)
    tables = [agio_torch.EmbeddingBagConfig("t0", 512, 16, ["f0"], weight=weights[1])]
    ebc = agio_torch.EmbeddingBagCollection(tables, store=dev, offset=8 * MIB, cache=cache)
    assert ebc.groups[0].array.cache is cache
    index = torch.arange(512, device=where)[:, None]
    assert torch.equal(ebc.lookup(index)[:, 0].cpu(), weights[1])


def weights_of(seed, shapes):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(rows, dim, generator=g) for rows, dim in shapes]


def collection(dev, weights, poolings, **options):
    """Tables t0, t1, ... of `weights`, table i serving features f{i}a and f{i}b."""
    tables = [
        agio_torch.EmbeddingBagConfig(f"t{i}", len(w), w.shape[1], [f"f{i}a", f"f{i}b"], pooling=p, weight=w)
        for i, (w, p) in enumerate(zip(weights, poolings))
    ]
    return agio_torch.EmbeddingBagCollection(tables, store=dev, **options), tables


def test_collection_pools_each_feature_as_torch(dev, where):
    weights = weights_of(1, [(100, 8), (300, 8), (50, 4), (70, 8)])
    ebc, _ = collection(dev, weights, ["sum", "mean", "max", "sum"])
    assert len(ebc.groups) == 2  # the three tables of width 8 are one staged table: one gather
    assert ebc.feature_names == ["f0a", "f0b", "f1a", "f1b", "f2a", "f2b", "f3a", "f3b"]
    g = torch.Generator().manual_seed(2)
    features, expected = {}, {}
    for i, (w, mode) in enumerate(zip(weights, ["sum", "mean", "max", "sum"])):
        ref = reference(w, where, mode=mode)
        two_d = torch.randint(0, len(w), (6, 3), generator=g).to(where)
        values, offsets = bags(g, len(w), 6, where)
        offsets[1] = 0  # an empty bag
        features[f"f{i}a"], expected[f"f{i}a"] = two_d, ref(two_d)
        features[f"f{i}b"], expected[f"f{i}b"] = (values, offsets), ref(values, offsets)
    out = ebc(features)
    assert list(out) == ebc.feature_names
    for name in ebc.feature_names:
        assert torch.equal(out[name], expected[name]), name


def test_lookup_gives_each_features_row(dev, where):
    weights = weights_of(3, [(100, 16), (40, 16)])
    ebc, _ = collection(dev, weights, ["sum", "mean"])
    indices = torch.tensor([[5, 99, 0, 39], [5, 5, 39, 0], [0, 1, 2, 3]], device=where)
    out = ebc.lookup(indices)
    table_per_feature = [weights[0], weights[0], weights[1], weights[1]]
    expected = torch.stack([w[indices[:, f].cpu()] for f, w in enumerate(table_per_feature)], dim=1)
    assert out.shape == (3, 4, 16) and torch.equal(out.cpu(), expected)
    message = r"indices\[1, 2\] = 40 is out of range for feature 'f1a' \(table 't1' of 40 rows\)"
    with pytest.raises(IndexError, match=message):
        ebc.lookup(torch.tensor([[0, 0, 0, 0], [0, 0, 40, 0]], device=where))
    with pytest.raises(ValueError, match=r"indices is \[batch, 4\]"):
        ebc.lookup(indices[:, :3])
    mixed, _ = collection(dev, weights_of(4, [(10, 4), (10, 8)]), ["sum", "sum"], offset=4 * MIB)
    with pytest.raises(ValueError, match="lookup needs every table of one embedding_dim"):
        mixed.lookup(torch.zeros(2, 4, dtype=torch.int64, device=where))


def test_collection_refuses_bad_features_before_reading(dev, where):
    ebc, _ = collection(dev, weights_of(5, [(20, 4)]), ["sum"])
    good = torch.zeros(2, 2, dtype=torch.int64, device=where)
    past = torch.tensor([[0, 0, 0, 20]], device=where)  # one bag, its last index past the table
    cases = [
        (ValueError, r"features lack \['f0b'\]", {"f0a": good}),
        (ValueError, r"features \['g'\] are none", {"f0a": good, "f0b": good, "g": good}),
        (IndexError, r"'f0b' value \[3\] = 20 is out of range for table 't0' of 20 rows", {"f0a": good, "f0b": past}),
        (ValueError, r"offsets\[0\] is 1", {"f0a": good, "f0b": (good.reshape(-1), torch.tensor([1], device=where))}),
        (TypeError, "torchrec", [good]),
    ]
    for error, message, features in cases:
        with pytest.raises(error, match=message):
            ebc(features)
    counts = ebc.groups[0].array.counters()
    assert counts["hits"] + counts["misses"] == 0


def test_collection_config_errors(dev):
    with pytest.raises(ValueError, match="mode is one of"):
        agio_torch.EmbeddingBagConfig("t", 10, 4, ["f"], pooling="none")
    with pytest.raises(ValueError, match=r"weight has shape \(10, 4\), not \(10, 8\)"):
        agio_torch.EmbeddingBagConfig("t", 10, 8, ["f"], weight=torch.zeros(10, 4))
    tables = [agio_torch.EmbeddingBagConfig("t", 10, 4, ["f"]), agio_torch.EmbeddingBagConfig("u", 10, 4, ["f"])]
    with pytest.raises(ValueError, match=r"feature names are unique; \['f'\] repeat"):
        agio_torch.EmbeddingBagCollection(tables, store=dev)
    with pytest.raises(ValueError, match="needs .* bytes of ram:32M"):
        agio_torch.EmbeddingBagCollection([agio_torch.EmbeddingBagConfig("t", 1 << 20, 16, ["f"])], store=dev)


def test_collection_lookup_trains_with_rowwise_adagrad(dev, where):
    weights = weights_of(6, [(60, 8), (30, 8)])
    ebc, _ = collection(dev, weights, ["sum", "sum"], optimizer="rowwise_adagrad", lr=0.2, eps=1e-6)
    whole = torch.cat(weights).to(where).requires_grad_()
    state = torch.zeros(len(whole), device=where)
    bases = torch.tensor([0, 0, 60, 60], device=where)
    g = torch.Generator().manual_seed(7)
    for _ in range(4):
        indices = torch.cat([torch.randint(0, 20, (8, 2), generator=g), torch.randint(0, 10, (8, 2), generator=g)], 1)
        indices = indices.to(where)
        ebc.lookup(indices).pow(2).sum().backward()
        whole.grad = None
        whole[indices + bases].pow(2).sum().backward()
        with torch.no_grad():
            touched = torch.unique(indices + bases)
            grad = whole.grad[touched]
            state[touched] += grad.pow(2).mean(dim=1)
            whole[touched] -= (0.2 / (state[touched].sqrt() + 1e-6)).unsqueeze(1) * grad
    table = ebc.groups[0].array.gather(torch.arange(90, device=where)).cpu()
    torch.testing.assert_close(table, whole.detach().cpu(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(ebc.state_dict()["groups.0.optimizer_state"], state, rtol=1e-6, atol=1e-7)


def test_collection_pooled_training_equals_torchs_sparse_sgd(dev, where):
    weights = weights_of(8, [(50, 4), (80, 6)])
    ebc, _ = collection(dev, weights, ["mean", "sum"], optimizer="sgd", lr=0.3)
    refs = [reference(w, where, mode=m, freeze=False, sparse=True) for w, m in zip(weights, ["mean", "sum"])]
    sgd = torch.optim.SGD([p for r in refs for p in r.parameters()], lr=0.3)
    g = torch.Generator().manual_seed(9)
    for _ in range(3):
        features = {}
        for i, w in enumerate(weights):
            features[f"f{i}a"] = bags(g, len(w), 5, where)
            features[f"f{i}b"] = torch.randint(0, len(w), (5, 2), generator=g).to(where)
        sum(o.pow(2).sum() for o in ebc(features).values()).backward()
        sgd.zero_grad()
        loss = 0
        for i, ref in enumerate(refs):
            loss = loss + ref(*features[f"f{i}a"]).pow(2).sum() + ref(features[f"f{i}b"]).pow(2).sum()
        loss.backward()
        sgd.step()
    for table, ref in zip(ebc.groups, refs):
        got = table.array.gather(torch.arange(len(table.array), device=where)).cpu()
        # torch's sparse gradient adds each occurrence of a row on its own: rounding apart
        torch.testing.assert_close(got, ref.weight.detach().cpu(), rtol=1e-5, atol=1e-5)


def test_collection_prefetch_flush_and_open(dev, where):
    weights = weights_of(10, [(4096, 64), (100, 64)])
    ebc, tables = collection(dev, weights, ["sum", "sum"], optimizer="sgd", lr=1.0)
    indices = torch.stack([torch.arange(0, 4096, 64), torch.arange(64) % 7, torch.arange(64), torch.arange(64)], 1)
    indices = indices.to(where)
    ebc.prefetch(indices)
    ebc.prefetch({"f0a": indices[:, :2], "f0b": indices[:, 2:], "f1a": indices[:, 2:], "f1b": indices[:, 3:]})
    ebc.groups[0].array.reset_counters()
    ebc.lookup(indices).sum().backward()
    assert ebc.groups[0].array.counters()["misses"] == 0
    ebc.flush()
    again = agio_torch.EmbeddingBagCollection.open(tables, store=dev)
    assert torch.equal(again.lookup(indices), ebc.lookup(indices).detach())
    assert not torch.equal(again.lookup(indices[:1]).cpu()[0, 0], weights[0][0])
    ebc.close()
    assert all(table.array.closed for table in ebc.groups)
    smaller = [agio_torch.EmbeddingBagConfig("t0", 4000, 64, ["f0a"])]
    with pytest.raises(ValueError, match="open it with the tables it was made with"):
        agio_torch.EmbeddingBagCollection.open(smaller, store=dev)


def test_keyed_jagged_tensor_in_keyed_tensor_out(dev, where):
    jagged = pytest.importorskip("torchrec.sparse.jagged_tensor")
    weights = weights_of(11, [(30, 4)])
    ebc, _ = collection(dev, weights, ["sum"])
    lengths = torch.tensor([2, 0, 1, 3, 1, 1])  # f0a's 3 bags, then f0b's
    values = torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9])
    kjt = jagged.KeyedJaggedTensor(keys=["f0a", "f0b"], values=values.to(where), lengths=lengths.to(where))
    out = ebc(kjt)
    ref = reference(weights[0], where, mode="sum")
    assert out.keys() == ["f0a", "f0b"]
    assert torch.equal(out["f0a"], ref(values[:3].to(where), torch.tensor([0, 2, 2], device=where)))
    assert torch.equal(out["f0b"], ref(values[3:].to(where), torch.tensor([0, 3, 4], device=where)))
