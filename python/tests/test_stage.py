"""Staging: an array's record (a .npy header padded to 4096 bytes, then its data) written into a
store and read back through Device.read, NumPy reading a staged file store, .npy files opened
in place, and every bad input refused with a message that says what to change."""

import io
import sys

import numpy as np
import pytest

import agio
from agio import _stage

ROW = _stage._ROW_BYTES

SHAPES_AND_DTYPES = [
    ((1000,), np.float32),  # 1-D, whole blocks of 512 bytes but not of 4096
    ((7, 33, 5), np.float16),  # 3-D, 2310 bytes: not a whole block
    ((316, 1025), np.int64),  # in chunks of 2 rows: 9 chunks, then 1 row and a tail
    ((3,), np.dtype([("id", "<i4"), ("score", "<f8"), ("tag", "S3")])),  # structured
    ((), np.float64),  # a single value
    ((0, 4), np.uint8),  # empty
    ((5, 3), np.dtype(">i4")),  # big-endian stays big-endian
]


def example(shape, dtype, seed=1):
    dtype = np.dtype(dtype)
    raw = np.random.default_rng(seed).integers(0, 256, size=int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    if dtype.names is None and dtype.kind == "f":  # finite values, so that == compares them
        return (np.arange(int(np.prod(shape))) % 1000 - 500).astype(dtype).reshape(shape)
    return raw.view(dtype).reshape(shape)


def read_bytes(dev, arrays, start, length):
    """Bytes [start, start + length) of dev, through Device.read in whole blocks."""
    lba = dev.lba_bytes
    first, end = start - start % lba, -(-(start + length) // lba) * lba
    if end == first:
        return np.zeros(0, np.uint8)
    out = dev.read([first], arrays.empty((1, end - first), np.uint8))
    return arrays.get(out).reshape(-1)[start - first : start - first + length]


def assert_same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


# --- the header ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,dtype", SHAPES_AND_DTYPES)
def test_a_record_is_a_npy_file_whose_data_starts_at_4096(shape, dtype, tmp_path):
    a = example(shape, dtype)
    header = agio.npy_header(a.dtype, a.shape)
    assert len(header) % 4096 == 0
    path = tmp_path / "a.npy"
    path.write_bytes(header + a.tobytes())
    assert_same(np.load(path), a)
    assert agio.read_header(path) == (a.dtype, a.shape, len(header), a.nbytes)


def test_read_header_takes_numpy_s_own_files_and_offsets(tmp_path):
    a = example((40, 6), np.float32)
    np.save(tmp_path / "a.npy", a)
    dtype, shape, data_offset, nbytes = agio.read_header(tmp_path / "a.npy")
    assert (dtype, shape, nbytes) == (a.dtype, a.shape, a.nbytes)
    assert (tmp_path / "a.npy").read_bytes()[data_offset:] == a.tobytes()
    (tmp_path / "b.bin").write_bytes(b"\0" * 8192 + (tmp_path / "a.npy").read_bytes())
    assert agio.read_header(str(tmp_path / "b.bin"), offset=8192).data_offset == 8192 + data_offset


def test_read_header_refuses_what_is_not_a_record(tmp_path):
    (tmp_path / "x").write_bytes(b"PK\x03\x04 not an array" + bytes(100))
    with pytest.raises(ValueError, match=r"holds no staged array or \.npy file: it starts with b'PK\\x03\\x04 not"):
        agio.read_header(tmp_path / "x")
    np.save(tmp_path / "f.npy", np.asfortranarray(example((4, 5), np.int64)))
    with pytest.raises(ValueError, match=r"Fortran order.*numpy\.ascontiguousarray"):
        agio.read_header(tmp_path / "f.npy")
    np.save(tmp_path / "o.npy", np.array([1, "a", None], dtype=object))
    with pytest.raises(ValueError, match="holds Python objects"):
        agio.read_header(tmp_path / "o.npy")
    broken = bytearray(agio.npy_header(np.float32, (3,)))
    broken[10:15] = b"{'de "
    (tmp_path / "b.npy").write_bytes(bytes(broken))
    with pytest.raises(ValueError, match="the .npy header does not parse"):
        agio.read_header(tmp_path / "b.npy")
    with pytest.raises(TypeError, match="an agio.Device or the path of a .npy file, not int"):
        agio.read_header(42)


# --- staging into a store --------------------------------------------------------------------


@pytest.fixture(params=[512, 4096], ids=["lba512", "lba4096"])
def rt(request, backend):
    with agio.Runtime(backend=backend, devices=[f"ram:16M?lba={request.param}"]) as runtime:
        yield runtime


@pytest.mark.parametrize("shape,dtype", SHAPES_AND_DTYPES)
def test_staged_rows_read_back_through_the_device(rt, arrays, shape, dtype):
    dev = rt.devices[0]
    a = example(shape, dtype)
    # The backend's own memory where it has that dtype (conftest's put makes a 0-d array 1-d).
    source = arrays.put(a) if a.dtype.names is None and a.dtype.isnative and a.ndim else a
    record = agio.stage(source, dev, offset=8192, chunk_bytes=2 * ROW)
    assert record == agio.read_header(dev, offset=8192)
    assert record.dtype == a.dtype and record.shape == a.shape and record.nbytes == a.nbytes
    assert record.data_offset % 4096 == 0
    assert read_bytes(dev, arrays, record.data_offset, a.nbytes).tobytes() == a.tobytes()
    # The last block's bytes after the data are zeros.
    end = record.data_offset + a.nbytes
    assert not read_bytes(dev, arrays, end, -end % dev.lba_bytes).any()
    # What came before the record is untouched.
    assert not read_bytes(dev, arrays, 0, 8192).any()


def test_a_staged_file_store_is_a_npy_file(backend, arrays, tmp_path):
    a = example((513, 77), np.float32)
    store = tmp_path / "store.npy"
    record = agio.stage(arrays.put(a), f"file:{store}", chunk_bytes=ROW, backend=backend)
    assert store.stat().st_size == 4096 + -(-a.nbytes // 4096) * 4096  # created to the record's size
    assert record == agio.read_header(store)
    assert_same(np.load(store), a)
    assert_same(np.load(store, mmap_mode="r"), a)


def test_staging_at_an_offset_keeps_the_file_before_it(tmp_path):
    store = tmp_path / "store.bin"
    store.write_bytes(b"\xab" * 4096)
    a = example((10, 10), np.int64)
    record = agio.stage(a, f"file:{store}?lba=4096", offset=4096)
    data = store.read_bytes()
    assert data[:4096] == b"\xab" * 4096
    assert record.data_offset == 8192 and data[8192 : 8192 + a.nbytes] == a.tobytes()
    assert_same(np.load(io.BytesIO(data[4096:])), a)


@pytest.mark.parametrize("shape,dtype", [SHAPES_AND_DTYPES[i] for i in (2, 3, 5)])
def test_a_npy_file_stages_from_its_path(rt, arrays, tmp_path, shape, dtype):
    a = example(shape, dtype)
    np.save(tmp_path / "a.npy", a)
    dev = rt.devices[0]
    record = agio.stage(tmp_path / "a.npy", dev, chunk_bytes=ROW)
    assert (record.dtype, record.shape, record.data_offset) == (a.dtype, a.shape, 4096)
    assert read_bytes(dev, arrays, 4096, a.nbytes).tobytes() == a.tobytes()


def test_a_npy_file_opens_in_place(backend, arrays, tmp_path):
    a = example((1000, 3), np.float16)
    path = tmp_path / "a.npy"
    np.save(path, a)
    before = path.read_bytes()
    with agio.Runtime(backend=backend, devices=[f"file:{path}?create={-(-len(before) // 4096) * 4096}"]) as rt:
        dev = rt.devices[0]
        header = agio.read_header(dev)
        assert header.data_offset == len(before) - a.nbytes  # NumPy's own header, not moved
        assert read_bytes(dev, arrays, header.data_offset, a.nbytes).tobytes() == a.tobytes()
    assert path.read_bytes().rstrip(b"\0") == before.rstrip(b"\0")  # only zeros were added
    assert_same(np.load(path), a)


def test_progress_bar_counts_the_bytes(rt, capsys):
    pytest.importorskip("tqdm")
    agio.stage(example((300, 1000), np.uint8), rt.devices[0], chunk_bytes=ROW, progress=True)
    assert "agio.stage: 100%" in capsys.readouterr().err  # 300,000 bytes: "293k/293k"


def test_progress_true_without_tqdm_says_what_to_install(rt, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now fails
    with pytest.raises(ImportError, match=r"pip install 'agio\[progress\]'"):
        agio.stage(example((10,), np.uint8), rt.devices[0], progress=True)
    agio.stage(example((10,), np.uint8), rt.devices[0])  # no bar asked for: none, no error


def test_staging_refuses_bad_targets_and_sources(rt, arrays, tmp_path):
    dev = rt.devices[0]
    a = example((4, 1024), np.float32)
    with pytest.raises(ValueError, match=f"offset 100 is not a multiple of .*'s {dev.lba_bytes}-byte LBA"):
        agio.stage(a, dev, offset=100)
    with pytest.raises(ValueError, match=r"needs bytes 16773120\.\.16793600 of ram:16M.*which holds 16777216"):
        agio.stage(a, dev, offset=16 * 1024 * 1024 - 4096)
    with pytest.raises(ValueError, match="negative"):
        agio.stage(a, dev, offset=-4096)
    with pytest.raises(ValueError, match="chunk_bytes is at least"):
        agio.stage(a, dev, chunk_bytes=4096)
    with pytest.raises(ValueError, match="a ram: store lives only as long as its runtime"):
        agio.stage(a, "ram:1M")
    with pytest.raises(ValueError, match="'/tmp/x' is not a file: URI"):
        agio.stage(a, "/tmp/x")
    with pytest.raises(TypeError, match="target is an agio.Device or a file: URI, not int"):
        agio.stage(a, 3)
    with pytest.raises(TypeError, match="source is a NumPy array, a PyTorch tensor or the path"):
        agio.stage([1, 2, 3], dev)
    with pytest.raises(ValueError, match="holds Python objects"):
        agio.stage(np.array([None, 1]), dev)
    np.save(tmp_path / "f.npy", np.asfortranarray(a))
    with pytest.raises(ValueError, match="Fortran order"):
        agio.stage(tmp_path / "f.npy", dev)
    assert rt.counters()[0]["submitted"] == 0
    with pytest.raises(ValueError, match=r"byte 0 of ram:16M.* holds no staged array .*starts with b'\\x00\\x00"):
        agio.read_header(dev)


def test_a_fortran_order_array_in_memory_is_staged_in_c_order(rt, arrays):
    a = np.asfortranarray(example((6, 700), np.int32))
    record = agio.stage(a, rt.devices[0])
    assert read_bytes(rt.devices[0], arrays, record.data_offset, a.nbytes).tobytes() == np.ascontiguousarray(a).tobytes()


def test_bfloat16_has_no_npy_dtype(rt, backend):
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match=r"torch.bfloat16 has no NumPy dtype.*view\(torch.int16\)"):
        agio.stage(torch.zeros(4, 2048, dtype=torch.bfloat16), rt.devices[0])


# --- Array.open: the record read back through the HBM cache -------------------------------


def array_rows(arr, arrays, indices):
    """Rows `indices` of an agio.Array, as NumPy."""
    return arrays.get(arr[arrays.put(np.asarray(indices, np.int64))])


@pytest.mark.parametrize("shape,dtype", [((3000, 20), np.float32), ((999, 3), np.int64), ((50, 7, 9), np.float16)])
def test_array_open_reads_a_staged_store(rt, arrays, shape, dtype):
    a = example(shape, dtype)
    agio.stage(arrays.put(a), rt.devices[0], offset=4096, chunk_bytes=ROW)
    arr = agio.Array.open(rt.devices[0], offset=4096)
    order = np.random.default_rng(3).permutation(shape[0])
    np.testing.assert_array_equal(array_rows(arr, arrays, order), a[order])


def test_array_open_reads_a_npy_file_in_place(backend, arrays, tmp_path):
    a = example((2000, 5), np.float32)  # 20-byte rows after NumPy's 128-byte header: unaligned
    path = tmp_path / "a.npy"
    np.save(path, a)
    size = -(-path.stat().st_size // 4096) * 4096
    with agio.Runtime(backend=backend, devices=[f"file:{path}?create={size}"]) as rt:
        arr = agio.Array.open(rt.devices[0])
        order = np.random.default_rng(4).permutation(2000)
        np.testing.assert_array_equal(array_rows(arr, arrays, order), a[order])


class ArrayArguments:
    """Stands in for agio.Array's constructor: keeps what open_array passes it."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def test_open_array_passes_the_record_and_the_cache_options(rt):
    dev = rt.devices[0]
    a = example((30, 9), np.int64)
    record = agio.stage(a, dev, offset=8192)
    made = _stage.open_array(ArrayArguments, dev, offset=8192, cache_bytes=1 << 20, policy="clock")
    assert made.args == (dev, a.dtype, a.shape)
    assert made.kwargs == {"offset": record.data_offset, "cache_bytes": 1 << 20, "policy": "clock"}
    with pytest.raises(TypeError, match="attach the staged store or the .npy file as file:PATH"):
        _stage.open_array(ArrayArguments, "file:/tmp/a.npy")


def test_open_array_says_how_to_reach_the_last_partial_block(backend, tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, example((1000,), np.uint8))  # 1128 bytes: the store holds 1024 of them
    with agio.Runtime(backend=backend, devices=[f"file:{path}"]) as rt:
        with pytest.raises(ValueError, match="ends at byte 1128, past the store's 1024 bytes.*create=4096"):
            _stage.open_array(ArrayArguments, rt.devices[0])
