"""agio.workloads: the C++ Criteo generator seen from Python. The pinned values are those
tests/host/test_criteo.cpp (FixedSeedGivesThePinnedSamples) asserts of the C++ generator."""

import numpy as np
import pytest

from agio import workloads

TERABYTE = [39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346, 10,
            2208, 11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36]


def test_vocab_sizes_are_the_cpp_ones():
    assert workloads.criteo_vocab_sizes() == TERABYTE
    capped = workloads.criteo_vocab_sizes(0.01, 100000)
    assert capped == [100000, 390, 173, 74, 203, 2, 71, 15, 2, 100000, 29535, 4033, 2, 22, 119, 2, 2, 10, 2,
                      100000, 100000, 100000, 5859, 130, 2, 2]
    assert workloads.criteo_vocab_sizes(1e-9) == [2] * 26
    assert workloads.criteo_vocab_sizes(1, cap=1) == [1] * 26


@pytest.mark.parametrize("scale", [0, -1.0, float("nan"), float("inf"), "1"])
def test_bad_scale_is_refused(scale):
    with pytest.raises(ValueError, match="scale"):
        workloads.criteo_vocab_sizes(scale)


@pytest.mark.parametrize("cap", [0, -5, 1 << 32, 2.5])
def test_bad_cap_is_refused(cap):
    with pytest.raises(ValueError, match="cap"):
        workloads.criteo_vocab_sizes(1.0, cap)


def test_fixed_seed_gives_the_cpp_samples():
    gen = workloads.CriteoGenerator(workloads.criteo_vocab_sizes(0.001, 20000), alpha=1.05, seed=42)
    dense, sparse, labels = gen.batch(1000)
    assert dense.shape == (1000, 13) and dense.dtype == np.float32
    assert sparse.shape == (1000, 26) and sparse.dtype == np.int64
    assert labels.shape == (1000,) and labels.dtype == np.float32
    assert sparse[0].tolist() == [19249, 20, 7, 6, 9, 1, 3, 1, 0, 2093, 2231, 110, 1, 1, 4, 0, 0, 1, 0, 1612,
                                  17008, 12571, 241, 0, 0, 1]
    assert dense[0, 1] == np.float32(np.log1p(16.0)) and dense[0, 4] == np.float32(np.log1p(411.0))
    assert int(labels.sum()) == 33 and set(labels.tolist()) <= {0.0, 1.0}
    assert int(sparse.sum()) == 54411414
    assert int(np.rint(np.expm1(dense.astype(np.float64))).sum()) == 10220084


def test_batches_continue_one_stream():
    vocab = workloads.criteo_vocab_sizes(0.001)
    whole = workloads.CriteoGenerator(vocab, seed=3).batch(300)
    gen = workloads.CriteoGenerator(vocab, seed=3)
    parts = [gen.batch(100), gen.batch(0), gen.batch(200)]
    for k in range(3):
        assert np.array_equal(whole[k], np.concatenate([p[k] for p in parts]))
    other = workloads.CriteoGenerator(vocab, seed=4).batch(300)
    assert not np.array_equal(whole[1], other[1])


def test_indices_stay_inside_their_tables():
    vocab = workloads.criteo_vocab_sizes(0.0001, 500)
    _, sparse, _ = workloads.CriteoGenerator(vocab, alpha=0.0, seed=9).batch(2000)
    assert (sparse >= 0).all() and (sparse < np.array(vocab)).all()
    gen = workloads.CriteoGenerator(vocab, alpha=0.0, seed=9)
    assert gen.vocab == vocab and gen.alpha == 0.0


@pytest.mark.parametrize("vocab, alpha, seed, match", [
    ([10] * 25, 1.05, 1, "vocab"),
    ([10] * 25 + [0], 1.05, 1, "vocab"),
    ([10] * 25 + [1 << 32], 1.05, 1, "vocab"),
    ([10] * 26, -0.5, 1, "alpha"),
    ([10] * 26, float("nan"), 1, "alpha"),
    ([10] * 26, 1.05, -1, "seed"),
])
def test_bad_generator_arguments_are_refused(vocab, alpha, seed, match):
    with pytest.raises(ValueError, match=match):
        workloads.CriteoGenerator(vocab, alpha, seed)


def test_bad_batch_size_is_refused():
    gen = workloads.CriteoGenerator([10] * 26)
    with pytest.raises(ValueError, match="n must be"):
        gen.batch(-1)
