"""agio.Array: rows of any size at any offset, gathered and scattered through the cache and
checked byte for byte against what storage holds; every bad input refused with a message."""

import numpy as np
import pytest

import agio
from conftest import in_threads

MIB = 1 << 20


@pytest.fixture
def rt(backend):
    with agio.Runtime(backend=backend, devices=["ram:8M?lba=512"]) as runtime:
        yield runtime


def stored(rt, dtype, shape, offset, seed=1):
    """Random data of `shape` written straight to device 0 from byte `offset` (whole LBAs around
    it, through Device.write), returned as NumPy."""
    dev = rt.devices[0]
    data = np.random.default_rng(seed).integers(0, 250, size=shape).astype(dtype)
    raw = data.tobytes()
    first = offset // 512 * 512
    end = -(-(offset + len(raw)) // 512) * 512
    span = np.zeros(end - first, np.uint8)
    span[offset - first : offset - first + len(raw)] = np.frombuffer(raw, np.uint8)
    dev.write([first], _put_host_or_device(rt, span.reshape(1, -1)))
    return data


def storage_bytes(rt, offset, length):
    dev = rt.devices[0]
    first = offset // 512 * 512
    end = -(-(offset + length) // 512) * 512
    out = _put_host_or_device(rt, np.zeros((1, end - first), np.uint8))
    dev.read([first], out)
    return _to_numpy(out)[0, offset - first : offset - first + length]


def _put_host_or_device(rt, a):
    if rt.backend == "gpu":
        import torch

        return torch.from_numpy(a).cuda()
    return a


def _to_numpy(a):
    return a if isinstance(a, np.ndarray) else a.cpu().numpy()


@pytest.mark.parametrize(
    "dtype, shape, offset",
    [
        (np.float32, (2000, 128), 0),  # rows of 512 B, lines of 8 rows
        (np.uint8, (3000, 100), 0),  # 100 B rows straddle lines
        (np.int32, (400, 1250), 0),  # 5000 B rows span two or three lines
        (np.float64, (300, 4, 5), 0),  # 3-D: rows of 4 x 5 doubles
        (np.int16, (1000, 77), 137),  # an odd row size at an unaligned offset
    ],
)
def test_gather_returns_the_stored_rows(rt, arrays, dtype, shape, offset):
    data = stored(rt, dtype, shape, offset)
    arr = agio.Array(rt.devices[0], dtype, shape, offset=offset, cache_bytes=64 * 1024)
    assert len(arr) == shape[0] and arr.shape == shape and arr.dtype == np.dtype(dtype)
    index = np.random.default_rng(2).integers(0, shape[0], size=700)
    rows = arr.gather(arrays.put(index))
    assert tuple(rows.shape) == (700,) + shape[1:]
    np.testing.assert_array_equal(arrays.get(rows), data[index])
    np.testing.assert_array_equal(_to_numpy(arr[int(index[0])]), data[index[0]])
    np.testing.assert_array_equal(_to_numpy(arr[-1]), data[-1])


def test_scatter_then_flush_reaches_storage_and_a_new_array(rt, arrays):
    shape, offset = (500, 25), 3  # rows of 100 B from byte 3
    before = stored(rt, np.int32, shape, offset)
    arr = agio.Array(rt.devices[0], np.int32, shape, offset=offset, cache_bytes=32 * 1024)
    index = np.random.default_rng(5).permutation(500)[:200]
    values = np.random.default_rng(6).integers(-(2**31), 2**31, size=(200, 25)).astype(np.int32)
    arr[arrays.put(index)] = arrays.put(values)
    expected = before.copy()
    expected[index] = values
    np.testing.assert_array_equal(arrays.get(arr.gather(arrays.put(np.arange(500)))), expected)
    arr.flush()
    raw = storage_bytes(rt, offset, expected.nbytes)
    np.testing.assert_array_equal(raw.view(np.int32).reshape(shape), expected)
    # The bytes around the array are untouched.
    assert storage_bytes(rt, 0, 3).tolist() == [0, 0, 0]
    fresh = agio.Array(rt.devices[0], np.int32, shape, offset=offset)
    np.testing.assert_array_equal(arrays.get(fresh[arrays.put(index)]), values)


def test_concurrent_rows_in_one_line_keep_their_neighbours(rt, arrays):
    # 64 B rows: a 4 KiB line holds 64 of them, written by different threads at once.
    arr = agio.Array(rt.devices[0], np.uint8, (4096, 64), cache_bytes=16 * 4096, ways=4)
    values = (np.arange(4096 * 64) % 251).astype(np.uint8).reshape(4096, 64)
    arr[arrays.put(np.arange(4096))] = arrays.put(values)
    arr.flush()
    np.testing.assert_array_equal(storage_bytes(rt, 0, values.nbytes).reshape(4096, 64), values)


def test_stop_writes_back_and_closes(backend, arrays):
    rt = agio.Runtime(backend=backend, devices=["ram:1M?lba=512"]).start()
    arr = agio.Array(rt.devices[0], np.float32, (100, 3))
    values = np.arange(300, dtype=np.float32).reshape(100, 3)
    arr[arrays.put(np.arange(100))] = arrays.put(values)
    rt.stop()
    assert arr.closed
    with pytest.raises(RuntimeError, match="runtime stopped"):
        arr.gather(arrays.put(np.arange(3)))
    with pytest.raises(RuntimeError, match="runtime stopped"):
        arr.flush()
    # What stop wrote back is in storage: a new runtime on the same store file would see it; on
    # ram: the old runtime's counters show the write-backs reached the device.
    assert rt.counters()[0]["bytes"] >= values.nbytes


def test_stopped_runtime_data_reaches_a_file(backend, arrays, tmp_path):
    path = tmp_path / "rows.bin"
    values = np.arange(1000 * 7, dtype=np.int64).reshape(1000, 7)
    with agio.Runtime(backend=backend, devices=[f"file:{path}?create=1M"]) as rt:
        arr = agio.Array(rt.devices[0], np.int64, (1000, 7), offset=100, cache_bytes=64 * 1024)
        arr[arrays.put(np.arange(1000))] = arrays.put(values)
    np.testing.assert_array_equal(np.fromfile(path, np.int64, count=7000, offset=100).reshape(1000, 7), values)


def test_prefetch_turns_misses_into_hits(rt, arrays):
    stored(rt, np.float32, (1000, 128), 0)
    arr = agio.Array(rt.devices[0], np.float32, (1000, 128), cache_bytes=1 * MIB)
    index = arrays.put(np.arange(0, 1000, 8))  # one row a line
    arr.prefetch(index)
    arr.reset_counters()
    arr.gather(index)
    c = arr.counters()
    # A prefetch's fill may still be landing when its row is read (a hit on a busy line).
    assert c["misses"] == 0 and c["hits"] + c["hits_on_busy"] == 125


def test_counters_count_hits_and_misses(rt, arrays):
    arr = agio.Array(rt.devices[0], np.float32, (1000, 128), cache_bytes=1 * MIB)
    arr.gather(arrays.put(np.arange(0, 80, 8)))  # 10 lines, one row each
    c = arr.counters()
    assert c["misses"] == 10 and c["hits"] == 0
    arr.gather(arrays.put(np.arange(0, 80, 8)))
    assert arr.counters()["hits"] == 10
    assert set(c) >= {"hits", "misses", "evictions", "write_backs", "fill_failures"}
    arr.reset_counters()
    assert arr.counters()["hits"] == 0 and arr.counters()["misses"] == 0


def test_gather_into_out(rt, arrays):
    data = stored(rt, np.uint16, (50, 9), 0)
    arr = agio.Array(rt.devices[0], np.uint16, (50, 9))
    out = arrays.empty((3, 9), np.uint16)
    assert arr.gather(arrays.put(np.array([4, 0, 49])), out=out) is out
    np.testing.assert_array_equal(arrays.get(out), data[[4, 0, 49]])


def test_list_index_on_the_cpu_backend_gives_numpy(backend):
    if backend != "cpu":
        pytest.skip("the CPU backend's output type")
    with agio.Runtime(backend="cpu", devices=["ram:1M"]) as rt:
        arr = agio.Array(rt.devices[0], np.int8, (10, 4))
        assert isinstance(arr[[1, 2]], np.ndarray)


@pytest.mark.parametrize("bad, error, message", [([0, 1000], IndexError, r"index\[1\] = 1000 is out of range")])
def test_out_of_range_index_is_refused_before_anything_is_written(rt, arrays, bad, error, message):
    arr = agio.Array(rt.devices[0], np.uint8, (1000, 10))
    with pytest.raises(error, match=message):
        arr[arrays.put(np.array(bad))] = arrays.put(np.ones((2, 10), np.uint8))
    with pytest.raises(error, match=message):
        arr.gather(arrays.put(np.array(bad)))
    with pytest.raises(IndexError, match="row 1000 is out of range"):
        arr[1000]
    assert arr.counters()["misses"] == 0


def test_negative_index_is_refused(rt, arrays):
    arr = agio.Array(rt.devices[0], np.uint8, (1000, 10))
    with pytest.raises(ValueError, match=r"index\[2\] .*negative"):
        arr.gather(arrays.put(np.array([0, 1, -4], np.int32)))


def test_values_of_the_wrong_dtype_or_shape_are_refused(rt, arrays):
    arr = agio.Array(rt.devices[0], np.float32, (100, 4))
    with pytest.raises(TypeError, match="dtype float64, expected float32"):
        arr[arrays.put(np.arange(2))] = arrays.put(np.zeros((2, 4), np.float64))
    with pytest.raises(ValueError, match=r"shape \(2, 5\), expected \(2, 4\)"):
        arr[arrays.put(np.arange(2))] = arrays.put(np.zeros((2, 5), np.float32))
    with pytest.raises(ValueError, match=r"shape \(3, 4\), expected \(2, 4\)"):
        arr.gather(arrays.put(np.arange(2)), out=arrays.empty((3, 4), np.float32))
    with pytest.raises(ValueError, match="one-dimensional"):
        arr.gather(arrays.put(np.zeros((2, 2), np.int64)))
    assert arr.counters()["misses"] == 0


def test_out_in_the_wrong_memory_is_refused(rt, backend):
    arr = agio.Array(rt.devices[0], np.float32, (100, 4))
    if backend == "gpu":
        out, message = np.zeros((2, 4), np.float32), "must be in CUDA memory on the GPU backend"
    else:
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("needs CUDA memory to hand the CPU backend")
        out, message = torch.zeros((2, 4), device="cuda"), "must be in host memory on the CPU backend"
    with pytest.raises(ValueError, match=message):
        arr.gather([0, 1], out=out)


def test_array_past_the_device_is_refused(rt):
    with pytest.raises(ValueError, match="run past the end of ram:8M"):
        agio.Array(rt.devices[0], np.float32, (8 * MIB // 512, 128), offset=1)
    with pytest.raises(ValueError, match="policy must be"):
        agio.Array(rt.devices[0], np.float32, (10, 128), policy="lru")


@pytest.mark.parametrize("policy", ["clock", "lfu_da", "s3_fifo", "direct_mapped"])
def test_every_policy_round_trips_through_a_small_cache(rt, arrays, policy):
    shape = (2000, 200)  # 800 B rows, a table of 1.6 MB through a 64 KiB cache
    arr = agio.Array(rt.devices[0], np.int32, shape, offset=24, cache_bytes=64 * 1024, policy=policy, ways=4)
    values = np.random.default_rng(9).integers(0, 2**30, size=shape).astype(np.int32)
    arr[arrays.put(np.arange(2000))] = arrays.put(values)
    index = np.random.default_rng(10).integers(0, 2000, size=3000)
    np.testing.assert_array_equal(arrays.get(arr[arrays.put(index)]), values[index])
    assert arr.counters()["evictions"] > 0


def test_storage_failure_raises_io_error_naming_device_and_lba(backend, arrays):
    with agio.Runtime(backend=backend, devices=["ram:1M?lba=4096&fault=eio@3"]) as rt:
        arr = agio.Array(rt.devices[0], np.uint8, (256, 1000), offset=10)
        with pytest.raises(agio.IOError) as raised:
            arr.gather(arrays.put(np.arange(10, 20)))  # rows 12-16 touch LBA 3
        assert raised.value.device == 0 and raised.value.lba == 3 and raised.value.opcode == "read"
        assert "ram:1M" in str(raised.value)
        # The rows outside the failing line still read.
        arr.gather(arrays.put(np.arange(0, 5)))


def test_slices_and_empty_indices(rt, arrays):
    data = stored(rt, np.int64, (40, 3), 8)
    arr = agio.Array(rt.devices[0], np.int64, (40, 3), offset=8)
    np.testing.assert_array_equal(arrays.get(arr[5:30:4]), data[5:30:4])
    arr[0:2] = arrays.put(np.full((2, 3), 7, np.int64))
    np.testing.assert_array_equal(arrays.get(arr[[0, 1, 2]]), np.vstack([np.full((2, 3), 7), data[2:3]]))
    empty = arr.gather(arrays.put(np.zeros(0, np.int64)))
    assert tuple(empty.shape) == (0, 3)


def test_python_threads_share_an_array(rt, arrays):
    data = stored(rt, np.float32, (3000, 50), 0)
    arr = agio.Array(rt.devices[0], np.float32, (3000, 50), cache_bytes=64 * 1024)

    def gather(seed):
        index = np.random.default_rng(seed).integers(0, 3000, size=500)
        for _ in range(5):
            np.testing.assert_array_equal(arrays.get(arr[arrays.put(index)]), data[index])

    in_threads(4, gather)


def test_read_only_indices_and_values(backend):
    if backend != "cpu":
        pytest.skip("NumPy's read-only arrays are host memory")
    with agio.Runtime(backend="cpu", devices=["ram:1M"]) as rt:
        arr = agio.Array(rt.devices[0], np.int32, (100, 3))
        index = np.arange(4)
        values = np.arange(12, dtype=np.int32).reshape(4, 3)
        index.flags.writeable = values.flags.writeable = False
        arr[index] = values
        np.testing.assert_array_equal(arr[index], values)
        arr.prefetch(index)
