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
    cases = [
        (IndexError, r"input\[2\] = 100 is out of range for a table of 100 rows", (torch.tensor([1, 2, 100, -1]), torch.tensor([0]))),
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


def test_sgd_steps_equal_torchs_sparse_sgd(dev, where):
    weight = torch.randn(200, 8, generator=torch.Generator().manual_seed(5))
    emb = agio_torch.EmbeddingBag.from_pretrained(weight, store=dev, mode="mean", freeze=False, optimizer="sgd", lr=0.5)
    ref = torch.nn.EmbeddingBag.from_pretrained(weight.clone(), freeze=False, mode="mean", sparse=True).to(where)
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
    other = agio_torch.EmbeddingBag.from_pretrained(torch.zeros(41, 4), store=dev, offset=2 * MIB, freeze=False, **options)
    with pytest.raises(ValueError, match="shape"):
        other.load_state_dict(saved)
