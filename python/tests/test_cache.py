"""agio.Cache shared by several agio.Arrays, and agio.gather/scatter/prefetch over many arrays
in one job: rows checked byte for byte against what storage holds, every bad input refused
before anything is written."""

import numpy as np
import pytest

import agio
from conftest import in_threads
from test_array import storage_bytes, stored

# Three tables of different dtypes and row sizes at unaligned offsets on device 0, no two in
# one 512-byte LBA (stored() writes whole LBAs): (dtype, shape, offset).
TABLES = [
    (np.float32, (3000, 16), 3),  # 64 B rows
    (np.int16, (500, 333), 193_011),  # 666 B rows straddling lines
    (np.uint8, (2000, 5000), 527_013),  # 5000 B rows spanning lines
]


@pytest.fixture
def rt(backend):
    with agio.Runtime(backend=backend, devices=["ram:16M?lba=512"]) as runtime:
        yield runtime


def three_arrays(rt, cache):
    """The TABLES' data written to storage, and an Array for each on `cache`."""
    data = [stored(rt, dtype, shape, offset, seed=k) for k, (dtype, shape, offset) in enumerate(TABLES)]
    return data, arrays_on(rt, cache)


def arrays_on(rt, cache):
    """An Array for each of the TABLES on `cache`, over what storage holds."""
    return [agio.Array(rt.devices[0], dtype, shape, offset=offset, cache=cache) for dtype, shape, offset in TABLES]


def picks(seed, rows, count):
    return np.random.default_rng(seed).integers(0, rows, size=count)


def test_one_gather_over_three_arrays_equals_their_rows(rt, arrays):
    cache = agio.Cache(rt, cache_bytes=64 * 1024, ways=4)  # far smaller than the tables
    data, arrs = three_arrays(rt, cache)
    assert all(a.cache is cache for a in arrs)
    index = [picks(k, len(a), 700) for k, a in enumerate(arrs)]
    rows = agio.gather([(a, arrays.put(i)) for a, i in zip(arrs, index)])
    assert len(rows) == 3
    for k in range(3):
        assert tuple(rows[k].shape) == (700,) + TABLES[k][1][1:]
        np.testing.assert_array_equal(arrays.get(rows[k]), data[k][index[k]])
        np.testing.assert_array_equal(arrays.get(arrs[k].gather(arrays.put(index[k]))), data[k][index[k]])
    # Counters are the cache's: every array reports the same, the shared one.
    assert arrs[0].counters() == arrs[2].counters() == cache.counters()
    assert cache.counters()["evictions"] > 0


def test_gather_into_out(rt, arrays):
    cache = agio.Cache(rt)
    data, arrs = three_arrays(rt, cache)
    out = [arrays.empty((2,) + shape[1:], dtype) for dtype, shape, _ in TABLES]
    got = agio.gather([(a, arrays.put(np.array([1, 0]))) for a in arrs], out=out)
    assert all(g is o for g, o in zip(got, out))
    for k in range(3):
        np.testing.assert_array_equal(arrays.get(out[k]), data[k][[1, 0]])
    with pytest.raises(ValueError, match="out holds 2 arrays for 3 pairs"):
        agio.gather([(a, arrays.put(np.array([1, 0]))) for a in arrs], out=out[:2])


def test_one_scatter_over_three_arrays_reaches_storage_and_a_fresh_runtime(backend, arrays, tmp_path):
    path = tmp_path / "tables.bin"
    rng = np.random.default_rng(7)
    values, index = [], []
    with agio.Runtime(backend=backend, devices=[f"file:{path}?create=16M"]) as rt:
        cache = agio.Cache(rt, cache_bytes=128 * 1024, ways=4)
        data, arrs = three_arrays(rt, cache)
        for k, (dtype, shape, _) in enumerate(TABLES):
            index.append(rng.permutation(shape[0])[: shape[0] // 2])
            values.append(rng.integers(0, 120, size=(len(index[k]),) + shape[1:]).astype(dtype))
        agio.scatter([(a, arrays.put(i), arrays.put(v)) for a, i, v in zip(arrs, index, values)])
        for k in range(3):
            data[k][index[k]] = values[k]
            everything = arrays.put(np.arange(len(arrs[k])))
            np.testing.assert_array_equal(arrays.get(arrs[k].gather(everything)), data[k])
        arrs[1].flush()  # one array's flush writes back the whole shared cache
        for k, (dtype, shape, offset) in enumerate(TABLES):
            raw = storage_bytes(rt, offset, data[k].nbytes)
            np.testing.assert_array_equal(raw.view(dtype).reshape(shape), data[k])
    with agio.Runtime(backend=backend, devices=[f"file:{path}"]) as rt:
        fresh = arrays_on(rt, agio.Cache(rt))
        rows = agio.gather([(a, arrays.put(i)) for a, i in zip(fresh, index)])
        for k in range(3):
            np.testing.assert_array_equal(arrays.get(rows[k]), values[k])


def test_prefetch_over_three_arrays_turns_their_misses_into_hits(rt, arrays):
    cache = agio.Cache(rt, cache_bytes=4 << 20)
    data, arrs = three_arrays(rt, cache)
    index = [arrays.put(np.arange(0, 64, 8)), arrays.put(np.array([3, 400])), arrays.put(np.array([9]))]
    agio.prefetch([(a, i) for a, i in zip(arrs, index)])
    cache.reset_counters()
    rows = agio.gather([(a, i) for a, i in zip(arrs, index)])
    # A prefetch's fill may still be landing when its row is read (a hit on a busy line).
    assert cache.counters()["misses"] == 0
    for k in range(3):
        np.testing.assert_array_equal(arrays.get(rows[k]), data[k][arrays.get(index[k])])


def test_a_bad_index_in_the_second_pair_is_refused_before_anything_is_written(rt, arrays):
    cache = agio.Cache(rt)
    data, arrs = three_arrays(rt, cache)
    first = (arrs[0], arrays.put(np.array([0, 1])), arrays.put(np.full((2, 16), 5, np.float32)))
    second = (arrs[1], arrays.put(np.array([0, 1, 500])), arrays.put(np.ones((3, 333), np.int16)))
    with pytest.raises(IndexError, match=r"pairs\[1\] index\[2\] = 500 is out of range for an array of 500 rows"):
        agio.scatter([first, second])
    with pytest.raises(IndexError, match=r"pairs\[1\] index\[2\] = 500 is out of range"):
        agio.gather([first[:2], second[:2]])
    with pytest.raises(ValueError, match=r"pairs\[1\] index\[1\] .*negative"):
        agio.prefetch([first[:2], (arrs[1], arrays.put(np.array([0, -1], np.int32)))])
    with pytest.raises(ValueError, match=r"pairs\[1\] values has shape \(2, 333\), expected \(3, 333\)"):
        agio.scatter([first, (arrs[1], second[1], arrays.put(np.ones((2, 333), np.int16)))])
    with pytest.raises(TypeError, match=r"pairs\[1\] values has dtype int32, expected int16"):
        agio.scatter([first, (arrs[1], second[1], arrays.put(np.ones((3, 333), np.int32)))])
    assert cache.counters()["misses"] == 0  # nothing reached the cache
    np.testing.assert_array_equal(arrays.get(arrs[0][0:2]), data[0][:2])


def test_arrays_of_different_caches_are_refused(rt, arrays):
    shared = agio.Cache(rt)
    one = agio.Array(rt.devices[0], np.float32, (100, 4), cache=shared)
    two = agio.Array(rt.devices[0], np.float32, (100, 4), offset=1600, cache=shared)
    own = agio.Array(rt.devices[0], np.float32, (100, 4), offset=3200)
    assert own.cache is not shared
    index = arrays.put(np.arange(3))
    values = arrays.put(np.ones((3, 4), np.float32))
    named = r"pairs\[0\] \(agio.Array.*\) and pairs\[2\] \(agio.Array.*\) use different caches"
    with pytest.raises(ValueError, match=named):
        agio.scatter([(one, index, values), (two, index, values), (own, index, values)])
    with pytest.raises(ValueError, match="different caches"):
        agio.gather([(own, index), (one, index)])
    with pytest.raises(ValueError, match="different caches"):
        agio.prefetch([(one, index), (own, index)])
    assert shared.counters()["misses"] == 0 and own.counters()["misses"] == 0
    with pytest.raises(TypeError, match=r"pairs\[1\] must be a tuple \(array, index\) with an agio.Array"):
        agio.gather([(one, index), (index, one)])
    assert agio.gather([]) == []


def test_cache_options_and_a_cache_of_another_runtime_are_refused(rt, backend):
    cache = agio.Cache(rt)
    with pytest.raises(ValueError, match="cache_bytes, ways shape a cache of the array's own"):
        agio.Array(rt.devices[0], np.float32, (10, 4), cache=cache, cache_bytes=1 << 20, ways=4)
    with pytest.raises(TypeError, match="cache must be an agio.Cache"):
        agio.Array(rt.devices[0], np.float32, (10, 4), cache=1 << 20)
    with pytest.raises(TypeError, match="runtime must be an agio.Runtime"):
        agio.Cache(rt.devices[0])
    with pytest.raises(ValueError, match="policy must be"):
        agio.Cache(rt, policy="lru")
    with agio.Runtime(backend=backend, devices=["ram:1M"]) as other:
        with pytest.raises(ValueError, match="cache belongs to another agio.Runtime"):
            agio.Array(other.devices[0], np.float32, (10, 4), cache=cache)


def test_closing_an_array_leaves_its_shared_cache_open(rt, arrays):
    cache = agio.Cache(rt)
    one = agio.Array(rt.devices[0], np.int32, (10, 2), cache=cache)
    two = agio.Array(rt.devices[0], np.int32, (10, 2), offset=80, cache=cache)
    one.close()
    assert one.closed and not cache.closed and not two.closed
    with pytest.raises(RuntimeError, match="this Array is closed"):
        one.gather(arrays.put(np.arange(2)))
    with pytest.raises(RuntimeError, match="this Array is closed"):
        agio.gather([(two, arrays.put(np.arange(2))), (one, arrays.put(np.arange(2)))])
    two[arrays.put(np.arange(2))] = arrays.put(np.array([[1, 2], [3, 4]], np.int32))
    cache.close()  # writes back while the runtime runs
    assert two.closed and cache.closed
    with pytest.raises(RuntimeError, match="cache is closed"):
        two.gather(arrays.put(np.arange(2)))
    with pytest.raises(RuntimeError, match="this Cache is closed"):
        cache.flush()
    with pytest.raises(RuntimeError, match="this Cache is closed"):
        agio.Array(rt.devices[0], np.int32, (10, 2), cache=cache)
    assert storage_bytes(rt, 80, 16).view(np.int32).tolist() == [1, 2, 3, 4]


def test_stop_writes_back_and_closes_the_shared_cache(backend, arrays, tmp_path):
    path = tmp_path / "rows.bin"
    rt = agio.Runtime(backend=backend, devices=[f"file:{path}?create=1M"]).start()
    cache = agio.Cache(rt, cache_bytes=64 * 1024)
    arrs = [agio.Array(rt.devices[0], np.int64, (100, 3), offset=24 * 100 * k + 5, cache=cache) for k in range(3)]
    values = [np.arange(300, dtype=np.int64).reshape(100, 3) * (k + 1) for k in range(3)]
    agio.scatter([(a, arrays.put(np.arange(100)), arrays.put(v)) for a, v in zip(arrs, values)])
    rt.stop()
    assert cache.closed and all(a.closed for a in arrs)
    with pytest.raises(RuntimeError, match="runtime stopped"):
        agio.gather([(arrs[0], arrays.put(np.arange(3)))])
    cache.close()  # closing again does nothing
    everything = np.fromfile(path, np.int64, count=900, offset=5).reshape(3, 100, 3)
    for k in range(3):
        np.testing.assert_array_equal(everything[k], values[k])


def test_python_threads_share_a_cache(rt, arrays):
    cache = agio.Cache(rt, cache_bytes=64 * 1024)
    data, arrs = three_arrays(rt, cache)

    def gather(seed):
        index = [picks(seed + k, len(a), 300) for k, a in enumerate(arrs)]
        for _ in range(4):
            rows = agio.gather([(a, arrays.put(i)) for a, i in zip(arrs, index)])
            for k in range(3):
                np.testing.assert_array_equal(arrays.get(rows[k]), data[k][index[k]])

    in_threads(4, gather)


def test_storage_failure_in_the_second_pair_raises_io_error(backend, arrays):
    with agio.Runtime(backend=backend, devices=["ram:1M?lba=4096&fault=eio@3"]) as rt:
        cache = agio.Cache(rt)
        one = agio.Array(rt.devices[0], np.uint8, (10, 100), cache=cache)
        two = agio.Array(rt.devices[0], np.uint8, (256, 1000), offset=10, cache=cache)
        with pytest.raises(agio.IOError) as raised:
            agio.gather([(one, arrays.put(np.arange(10))), (two, arrays.put(np.arange(10, 20)))])
        assert raised.value.device == 0 and raised.value.lba == 3 and raised.value.opcode == "read"
        # The rows outside the failing line still read.
        agio.gather([(one, arrays.put(np.arange(10))), (two, arrays.put(np.arange(0, 5)))])


def test_a_host_tier_serves_the_second_pass_and_both_levels_reach_storage(backend, arrays, tmp_path):
    """A 64 KiB cache above a 16 MiB host tier: a second gather of every row misses the cache
    again and the tier serves those misses; a scatter then reaches storage through both levels
    on flush() and is what a fresh runtime reads."""
    path = tmp_path / "tables.bin"
    rng = np.random.default_rng(11)
    with agio.Runtime(backend=backend, devices=[f"file:{path}?create=16M"]) as rt:
        cache = agio.Cache(rt, cache_bytes=64 * 1024, ways=4, host_tier_bytes=16 << 20)
        assert agio.Cache(rt).host_tier_counters() is None
        data, arrs = three_arrays(rt, cache)
        everything = [arrays.put(np.arange(len(a))) for a in arrs]
        for _ in range(2):
            for k, a in enumerate(arrs):
                np.testing.assert_array_equal(arrays.get(a.gather(everything[k])), data[k])
        tier = cache.host_tier_counters()
        assert tier["hits"] > 0 and tier["hits"] >= tier["misses"]
        index = rng.permutation(len(arrs[2]))[:500]
        values = rng.integers(0, 255, size=(500, 5000)).astype(np.uint8)
        arrs[2].scatter(arrays.put(index), arrays.put(values))
        data[2][index] = values
        cache.flush()
        _, shape, offset = TABLES[2][0], TABLES[2][1], TABLES[2][2]
        np.testing.assert_array_equal(storage_bytes(rt, offset, data[2].nbytes).reshape(shape), data[2])
        cache.reset_counters()
        assert cache.host_tier_counters()["hits"] == 0
    with agio.Runtime(backend=backend, devices=[f"file:{path}"]) as rt:
        fresh = arrays_on(rt, agio.Cache(rt, host_tier_bytes=1 << 20, host_tier_admission="on_reuse"))
        np.testing.assert_array_equal(arrays.get(fresh[2].gather(arrays.put(index))), values)


def test_a_host_tier_admitting_on_eviction_holds_what_the_cache_gave_up(backend, arrays):
    """A victim tier: the first pass reads storage straight into the 64 KiB cache, whose
    evictions are demoted into the tier; the second pass is served by the tier."""
    with agio.Runtime(backend=backend, devices=["ram:4M"]) as rt:
        everything = arrays.put(np.arange(1 << 18))
        plain = agio.Cache(rt, cache_bytes=64 * 1024)
        agio.Array(rt.devices[0], np.uint32, (1 << 18,), cache=plain)[everything] = arrays.put(
            np.arange(1 << 18, dtype=np.uint32) * 7)
        plain.flush()
        cache = agio.Cache(rt, cache_bytes=64 * 1024, ways=4, host_tier_bytes=4 << 20,
                           host_tier_admission="on_eviction")
        array = agio.Array(rt.devices[0], np.uint32, (1 << 18,), cache=cache)
        np.testing.assert_array_equal(arrays.get(array[everything]), np.arange(1 << 18) * 7)
        np.testing.assert_array_equal(arrays.get(array[everything]), np.arange(1 << 18) * 7)
        tier = cache.host_tier_counters()
        assert tier["demotions"] > 0 and tier["hits"] > 0


def test_a_runtime_with_host_tier_memory_puts_a_tier_below_each_cache(backend, arrays):
    """host_tier_bytes on the runtime: a Cache made without a size of its own gets a tier of
    what is left of the runtime's memory, admitting as the runtime says (here as a victim
    cache); one asking for more than is left is refused, one made once all is taken or with
    host_tier_bytes=0 has none, and a closed cache gives its tier's memory back."""
    with agio.Runtime(backend=backend, devices=["ram:4M"], host_tier_bytes=4 << 20,
                      host_tier_admission="on_eviction") as rt:
        assert rt.host_tier_memory() == {"capacity_bytes": 4 << 20, "used_bytes": 0, "numa_node": -1}
        everything = arrays.put(np.arange(1 << 18))
        plain = agio.Cache(rt, cache_bytes=64 * 1024, host_tier_bytes=0)
        assert plain.host_tier_counters() is None
        agio.Array(rt.devices[0], np.uint32, (1 << 18,), cache=plain)[everything] = arrays.put(
            np.arange(1 << 18, dtype=np.uint32) * 5)
        plain.flush()
        first = agio.Cache(rt, cache_bytes=64 * 1024, ways=4, host_tier_bytes=1 << 20)
        assert rt.host_tier_memory()["used_bytes"] == 1 << 20
        cache = agio.Cache(rt, cache_bytes=64 * 1024, ways=4)
        assert cache.host_tier_bytes == 3 << 20 and rt.host_tier_memory()["used_bytes"] == 4 << 20
        assert agio.Cache(rt, cache_bytes=64 * 1024).host_tier_counters() is None
        with pytest.raises(ValueError, match="bytes asked, 0 of 4194304 free"):
            agio.Cache(rt, cache_bytes=64 * 1024, host_tier_bytes=1 << 20)
        array = agio.Array(rt.devices[0], np.uint32, (1 << 18,), cache=cache)
        for _ in range(2):
            np.testing.assert_array_equal(arrays.get(array[everything]), np.arange(1 << 18) * 5)
        tier = cache.host_tier_counters()
        assert tier["demotions"] > 0 and tier["hits"] > 0
        first.close()
        assert rt.host_tier_memory()["used_bytes"] == 3 << 20
    assert rt.host_tier_memory() is None


def test_host_memory_nodes_reads_a_cxl_expander_as_memory_only(tmp_path):
    for node, cpus in ((0, "0-7"), (4, "")):
        (tmp_path / f"node{node}").mkdir()
        (tmp_path / f"node{node}" / "meminfo").write_text(
            f"Node {node} MemTotal:  2048 kB\nNode {node} MemFree:  1024 kB\n")
        (tmp_path / f"node{node}" / "cpulist").write_text(cpus + "\n")
    (tmp_path / "online").write_text("0,4\n")
    assert agio.host_memory_nodes(tmp_path) == [
        {"id": 0, "total_bytes": 2 << 20, "free_bytes": 1 << 20, "cpus": "0-7", "memory_only": False},
        {"id": 4, "total_bytes": 2 << 20, "free_bytes": 1 << 20, "cpus": "", "memory_only": True},
    ]


def test_a_host_tier_binds_to_a_node_the_host_lists(backend, arrays):
    nodes = agio.host_memory_nodes()
    assert all(n["total_bytes"] >= n["free_bytes"] >= 0 and n["memory_only"] == (n["cpus"] == "") for n in nodes)
    assert [n["id"] for n in nodes] == sorted(n["id"] for n in nodes)
    with agio.Runtime(backend=backend, devices=["ram:1M"]) as rt:
        node = nodes[0]["id"] if nodes else 0
        cache = agio.Cache(rt, cache_bytes=64 * 1024, host_tier_bytes=1 << 20, host_tier_numa_node=node)
        array = agio.Array(rt.devices[0], np.uint32, (1000,), cache=cache)
        array[arrays.put(np.arange(1000))] = arrays.put(np.arange(1000, dtype=np.uint32) * 3)
        np.testing.assert_array_equal(arrays.get(array[arrays.put(np.arange(1000))]), np.arange(1000) * 3)


def test_a_host_tier_refuses_what_it_cannot_do(backend):
    with agio.Runtime(backend=backend, devices=["ram:1M"]) as rt:
        with pytest.raises(ValueError, match="host_tier_admission must be 'always', 'on_reuse' or 'on_eviction'"):
            agio.Cache(rt, host_tier_bytes=1 << 20, host_tier_admission="sometimes")
    with agio.Runtime(backend=backend, completion="waiters", devices=["ram:1M"]) as rt:
        with pytest.raises(ValueError, match="a host tier needs a runtime whose completions a service retires"):
            agio.Cache(rt, host_tier_bytes=1 << 20)
