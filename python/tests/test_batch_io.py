"""Device.read and Device.write: rows at byte offsets, checked byte for byte, and every bad
input refused before anything is issued."""

import numpy as np
import pytest

import agio


@pytest.fixture
def rt(backend):
    with agio.Runtime(backend=backend, devices=["ram:4M?lba=4096"]) as runtime:
        yield runtime


def test_rows_read_back_what_was_written_in_another_order(rt, arrays):
    dev = rt.devices[0]
    rng = np.random.default_rng(7)
    blocks = rng.permutation(1024)[:300]
    data = rng.integers(0, 2**31, size=(300, 1024), dtype=np.int32)  # 4 KiB rows
    dev.write(blocks * 4096, arrays.put(data))
    order = rng.permutation(300)
    out = dev.read(arrays.put(blocks[order] * 4096), arrays.empty((300, 1024), np.int32))
    np.testing.assert_array_equal(arrays.get(out), data[order])


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.int64])
def test_typed_rows_of_several_blocks(rt, arrays, dtype):
    dev = rt.devices[0]
    rows, row_bytes = 10, 3 * 4096
    per_row = row_bytes // np.dtype(dtype).itemsize
    data = (np.arange(rows * per_row) % 251).astype(dtype).reshape(rows, per_row)
    offsets = np.arange(rows, dtype=np.uint32) * row_bytes * 2
    dev.write(offsets, arrays.put(data))
    back = dev.read(offsets.astype(np.int64), arrays.empty((rows, per_row), dtype))
    np.testing.assert_array_equal(arrays.get(back), data)


def test_rows_larger_than_one_transfer_are_split(backend, arrays):
    with agio.Runtime(backend=backend, devices=["ram:8M"], max_transfer_bytes=16 * 1024) as rt:
        data = np.arange(2 * 256 * 1024, dtype=np.uint8).reshape(2, 256 * 1024)
        rt.devices[0].write([0, 1 << 20], arrays.put(data))
        back = rt.devices[0].read([0, 1 << 20], arrays.empty(data.shape, np.uint8))
        np.testing.assert_array_equal(arrays.get(back), data)


def test_empty_batch_is_a_no_op(rt, arrays):
    rt.devices[0].read(np.zeros(0, np.int64), arrays.empty((0, 4096), np.uint8))
    assert rt.counters()[0]["submitted"] == 0


def test_unaligned_offset_is_refused_with_its_index(rt, arrays):
    with pytest.raises(ValueError, match=r"offsets\[1\] = 4100 is not a multiple of .*4096-byte LBA"):
        rt.devices[0].read([0, 4100], arrays.empty((2, 4096), np.uint8))
    assert rt.counters()[0]["submitted"] == 0


def test_row_size_not_a_multiple_of_the_lba_is_refused(rt, arrays):
    with pytest.raises(ValueError, match="rows of 1000 bytes"):
        rt.devices[0].read([0], arrays.empty((1, 1000), np.uint8))


def test_offset_past_the_end_is_refused(rt, arrays):
    with pytest.raises(ValueError, match="runs past the end"):
        rt.devices[0].read([4 * 1024 * 1024 - 4096], arrays.empty((1, 8192), np.uint8))
    with pytest.raises(ValueError, match="negative"):
        rt.devices[0].read([-4096], arrays.empty((1, 4096), np.uint8))


def test_offsets_and_rows_must_agree(rt, arrays):
    with pytest.raises(ValueError, match="3 offsets for 2 rows"):
        rt.devices[0].read([0, 4096, 8192], arrays.empty((2, 4096), np.uint8))
    with pytest.raises(ValueError, match="one-dimensional"):
        rt.devices[0].read(np.zeros((2, 1), np.int64), arrays.empty((2, 4096), np.uint8))
    with pytest.raises(TypeError, match="integers"):
        rt.devices[0].read(np.zeros(2, np.float64), arrays.empty((2, 4096), np.uint8))


def test_non_contiguous_rows_are_refused(rt, arrays):
    out = arrays.empty((4, 8192), np.uint8)[:, :4096]
    with pytest.raises(ValueError, match="C-contiguous"):
        rt.devices[0].read(np.arange(4) * 4096, out)


def test_data_in_the_wrong_memory_is_refused(backend, rt):
    if backend == "cpu":
        pytest.skip("host memory is the CPU backend's own")
    with pytest.raises(ValueError, match=r"must be in CUDA memory \(or a region of an agio.MemoryBuffer\) on the GPU"):
        rt.devices[0].read([0], np.zeros((1, 4096), np.uint8))


def test_a_stopped_runtime_refuses(backend, arrays):
    rt = agio.Runtime(backend=backend, devices=["ram:1M"])
    with pytest.raises(RuntimeError, match="not running"):
        rt.devices[0].read([0], arrays.empty((1, 4096), np.uint8))
    with rt:
        pass
    with pytest.raises(RuntimeError, match="has stopped"):
        rt.devices[0].read([0], arrays.empty((1, 4096), np.uint8))
    with pytest.raises(RuntimeError, match="has stopped"):
        rt.start()
    assert rt.devices[0].capacity_bytes == 1 << 20
    assert rt.counters()[0]["submitted"] == 0


def test_a_file_store_keeps_what_was_written(backend, arrays, tmp_path):
    path = tmp_path / "rows.bin"
    path.write_bytes(b"\0" * (1 << 20))
    data = np.random.default_rng(3).integers(0, 255, size=(16, 4096), dtype=np.uint8)
    offsets = np.arange(16)[::-1] * 8192
    with agio.Runtime(backend=backend, devices=[f"file:{path}"]) as rt:
        rt.devices[0].write(offsets, arrays.put(data))
    raw = np.fromfile(path, np.uint8)
    for row, off in zip(data, offsets):
        np.testing.assert_array_equal(raw[off : off + 4096], row)
