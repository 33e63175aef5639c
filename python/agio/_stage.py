"""Staging arrays into stores, and reading them back: the record is a .npy file.

A staged array is laid out in its store exactly as a .npy file, from byte `offset` on: NumPy's
header (magic, version, the dict with descr, fortran_order and shape) padded with spaces so that
the data starts a multiple of 4096 bytes after the record's start, then the array's bytes in C
order. So every row offset of the data is aligned for 512- and 4096-byte LBAs, a staged file:
store at offset 0 *is* a .npy file (numpy.load reads it), and opening a staged store and
opening a .npy file in place are one code path: parse the header, the data follows it.
"""

from __future__ import annotations

import io
import math
import os
import sys
from typing import Any, NamedTuple

import numpy
from numpy.lib import format as npy_format

from ._runtime import Device, Runtime, cuda_backend

HEADER_ALIGN = 4096
"""The record's data starts a multiple of this many bytes after the record's start."""

_ROW_BYTES = 128 << 10  # each staged chunk goes out as rows of this size: one request per row


class ArrayHeader(NamedTuple):
    """What a record holds: `dtype` (a numpy.dtype), `shape` (a tuple), `data_offset` (the byte
    of the store or file where element 0 starts) and `nbytes` (the data's length)."""

    dtype: numpy.dtype
    shape: tuple
    data_offset: int
    nbytes: int


def npy_header(dtype: Any, shape: tuple) -> bytes:
    """The record's header for an array of `dtype` and `shape` in C order: NumPy's own header
    (format 1.0, or 2.0 when it does not fit 1.0's 16-bit length) with its padding extended so
    that its length is a multiple of HEADER_ALIGN."""
    dtype = _checked_dtype(numpy.dtype(dtype), "the array")
    fields = {
        "descr": npy_format.dtype_to_descr(dtype),
        "fortran_order": False,
        "shape": tuple(int(n) for n in shape),
    }
    for version, write, length_bytes, max_text in (
        ((1, 0), npy_format.write_array_header_1_0, 2, 0xFFFF),
        ((2, 0), npy_format.write_array_header_2_0, 4, 0xFFFFFFFF),
    ):
        out = io.BytesIO()
        write(out, fields)
        written = out.getvalue()
        # NumPy pads the dict with spaces before the closing newline so that the data starts at
        # a multiple of 64 bytes; more spaces in the same place move it to a multiple of 4096.
        padded = -(-len(written) // HEADER_ALIGN) * HEADER_ALIGN
        prefix = len(npy_format.MAGIC_PREFIX) + 2 + length_bytes
        text = written[prefix:-1] + b" " * (padded - len(written)) + b"\n"
        if len(text) <= max_text:
            return written[: prefix - length_bytes] + len(text).to_bytes(length_bytes, "little") + text
    raise ValueError(f"agio: the .npy header of dtype {dtype} and shape {tuple(shape)} is too long")


def read_header(source: Any, offset: int = 0) -> ArrayHeader:
    """Reads the record at byte `offset` of `source`: a Device (a staged store, read through
    Device.read, which needs its runtime started; a file: store is read from its file, started
    or not) or the path of a .npy file. Raises ValueError when there is no record there (the
    message shows the first bytes found), for a Fortran-order array or one of Python objects."""
    if isinstance(source, Device):
        path = _file_store_path(source.uri)
        where = f"byte {offset} of {source.uri}"
        if path is None:
            return _parse(_DeviceReader(source, offset), offset, where)
    elif isinstance(source, (str, os.PathLike)):
        path, where = os.fspath(source), f"byte {offset} of {os.fspath(source)}"
    else:
        raise TypeError(
            f"agio.read_header: source is an agio.Device or the path of a .npy file, "
            f"not {type(source).__name__}"
        )
    with open(path, "rb") as f:
        f.seek(offset)
        return _parse(f, offset, where)


def open_array(array_class: Any, source: Any, offset: int = 0, **cache_options: Any) -> Any:
    """Array.open: the array whose record is at byte `offset` of the Device `source` (a staged
    store, or a .npy file attached as file:PATH), without repeating its dtype and shape.
    `cache_options` go to the Array as they are."""
    if not isinstance(source, Device):
        raise TypeError(
            "agio.Array.open: source is an agio.Device (attach the staged store or the .npy file "
            f"as file:PATH to a Runtime first), not {type(source).__name__}"
        )
    header = read_header(source, offset)
    end = header.data_offset + header.nbytes
    if end > source.capacity_bytes:
        lba = source.lba_bytes
        raise ValueError(
            f"agio.Array.open: the array in {source.uri} ends at byte {end}, past the store's "
            f"{source.capacity_bytes} bytes (a store holds whole {lba}-byte blocks); attach the "
            f"file with create={-(-end // HEADER_ALIGN) * HEADER_ALIGN} in its URI, which pads it "
            "with zeros after the data (NumPy ignores them)"
        )
    return array_class(source, header.dtype, header.shape, offset=header.data_offset, **cache_options)


def stage(
    source: Any,
    target: Any,
    offset: int = 0,
    chunk_bytes: int = 64 << 20,
    progress: bool | None = None,
    backend: str = "auto",
) -> ArrayHeader:
    """Writes `source` (a NumPy array, a PyTorch tensor on the CPU or a GPU, or the path of a
    .npy file) as a record at byte `offset` of `target` and returns its ArrayHeader.

    `target`: an agio.Device of a started runtime, or a file: URI; for a URI, stage runs a
    runtime of its own on `backend` ("auto": the GPU for a CUDA tensor, CPU threads for data in
    host memory) and creates or extends the file to the record's size when its URI has no
    create=. The data goes in chunks of `chunk_bytes`; the last block, when the data does not
    fill it, is padded with zeros. `progress`: a tqdm bar on stderr (None: when stderr is a
    terminal and tqdm is installed)."""
    if offset < 0:
        raise ValueError(f"agio.stage: offset {offset} is negative")
    data, dtype, shape = _source_bytes(source)
    header = npy_header(dtype, shape)
    record = ArrayHeader(dtype, shape, offset + len(header), int(data.shape[0]))
    if isinstance(target, Device):
        _write_record(target, offset, header, data, chunk_bytes, progress)
        return record
    if not isinstance(target, str):
        raise TypeError(f"agio.stage: target is an agio.Device or a file: URI, not {type(target).__name__}")
    uri = _sized_uri(target, offset + len(header) + _round_up(record.nbytes, HEADER_ALIGN))
    if backend == "auto":
        on_gpu = cuda_backend and getattr(getattr(data, "device", None), "type", None) == "cuda"
        backend = "gpu" if on_gpu else "cpu"
    with Runtime(backend=backend, devices=[uri]) as rt:
        _write_record(rt.devices[0], offset, header, data, chunk_bytes, progress)
    rt.check()
    return record


# --- reading headers -------------------------------------------------------------------------


def _parse(f: Any, offset: int, where: str) -> ArrayHeader:
    first = f.read(len(npy_format.MAGIC_PREFIX))
    if first != npy_format.MAGIC_PREFIX:
        f.seek(offset)
        raise ValueError(
            f"agio: {where} holds no staged array or .npy file: it starts with "
            f"{f.read(16)!r}, not {npy_format.MAGIC_PREFIX!r}"
        )
    f.seek(offset)
    version = npy_format.read_magic(f)
    readers = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}
    if version not in readers:
        raise ValueError(f"agio: {where} is a .npy header of format {version[0]}.{version[1]}; agio reads 1.0 and 2.0")
    try:
        shape, fortran_order, dtype = readers[version](f)
    except ValueError as e:
        raise ValueError(f"agio: {where}: the .npy header does not parse: {e}") from None
    if fortran_order:
        raise ValueError(
            f"agio: {where} holds an array in Fortran order; agio reads rows in C order: save it "
            "with numpy.save(path, numpy.ascontiguousarray(a))"
        )
    _checked_dtype(dtype, where)
    return ArrayHeader(dtype, tuple(shape), f.tell(), math.prod(shape) * dtype.itemsize)


class _DeviceReader(io.RawIOBase):
    """The store's bytes from `offset` on as a file that NumPy's header reader reads; fetched
    through Device.read in aligned blocks of HEADER_ALIGN bytes, as the reader asks for them."""

    def __init__(self, device: Device, offset: int):
        super().__init__()
        self._device, self._pos, self._blocks = device, offset, {}

    def readable(self) -> bool:
        return True

    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = pos if whence == 0 else self._pos + pos
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, buffer: Any) -> int:
        end = min(self._pos + len(buffer), self._device.capacity_bytes)
        got = b""
        while self._pos + len(got) < end:
            at = self._pos + len(got)
            block = self._block(at - at % HEADER_ALIGN)
            got += block[at % HEADER_ALIGN : at % HEADER_ALIGN + end - at]
        buffer[: len(got)] = got
        self._pos += len(got)
        return len(got)

    def _block(self, start: int) -> bytes:
        if start not in self._blocks:
            size = min(HEADER_ALIGN, self._device.capacity_bytes - start)
            out = self._device.read([start], _place(numpy.zeros(size, numpy.uint8), self._device, size).reshape(1, -1))
            self._blocks[start] = _to_host(out).tobytes()
        return self._blocks[start]


# --- writing records -------------------------------------------------------------------------


def _write_record(dev: Device, offset: int, header: bytes, data: Any, chunk_bytes: int, progress: Any) -> None:
    lba = dev.lba_bytes
    if offset % lba != 0:
        raise ValueError(f"agio.stage: offset {offset} is not a multiple of {dev.uri}'s {lba}-byte LBA")
    end = offset + len(header) + _round_up(int(data.shape[0]), lba)
    if end > dev.capacity_bytes:
        raise ValueError(
            f"agio.stage: the record needs bytes {offset}..{end} of {dev.uri}, which holds "
            f"{dev.capacity_bytes} bytes"
        )
    if chunk_bytes < _ROW_BYTES:
        raise ValueError(f"agio.stage: chunk_bytes is at least {_ROW_BYTES}, not {chunk_bytes}")
    bar = _bar(progress, int(data.shape[0]))
    head = numpy.frombuffer(bytearray(header), numpy.uint8)
    dev.write([offset], _place(head, dev, len(header)).reshape(1, -1))
    start = offset + len(header)
    chunk = chunk_bytes - chunk_bytes % _ROW_BYTES
    try:
        for at in range(0, int(data.shape[0]), chunk):
            piece = data[at : at + chunk]
            whole = len(piece) - len(piece) % _ROW_BYTES
            if whole:
                rows = _place(piece[:whole], dev, whole).reshape(-1, _ROW_BYTES)
                dev.write(numpy.arange(len(rows), dtype=numpy.int64) * _ROW_BYTES + start + at, rows)
            if whole < len(piece):  # the data's tail: one row, padded with zeros to a whole block
                tail = _place(piece[whole:], dev, _round_up(len(piece) - whole, lba))
                dev.write([start + at + whole], tail.reshape(1, -1))
            if bar is not None:
                bar.update(len(piece))
    finally:
        if bar is not None:
            bar.close()


def _source_bytes(source: Any) -> tuple:
    """(the data as one-dimensional bytes: a NumPy array or a PyTorch tensor, dtype, shape)."""
    if isinstance(source, (str, os.PathLike)):
        header = read_header(source)
        # Copy-on-write so that the chunks are writable arrays PyTorch takes without a warning;
        # nothing is written back to the file.
        mapped = numpy.load(source, mmap_mode="c")
        return _numpy_bytes(mapped), header.dtype, header.shape
    if isinstance(source, numpy.ndarray):
        _checked_dtype(source.dtype, "the array")
        return _numpy_bytes(numpy.ascontiguousarray(source)), source.dtype, source.shape
    if type(source).__module__.startswith("torch"):
        import torch

        try:
            dtype = torch.empty(0, dtype=source.dtype).numpy().dtype
        except TypeError:
            raise TypeError(
                f"agio.stage: {source.dtype} has no NumPy dtype, so a .npy header cannot describe "
                "it; stage a view of the same width (for bfloat16: tensor.view(torch.int16))"
            ) from None
        flat = source.contiguous().reshape(-1)
        return flat.view(torch.uint8), dtype, tuple(source.shape)
    raise TypeError(
        f"agio.stage: source is a NumPy array, a PyTorch tensor or the path of a .npy file, "
        f"not {type(source).__name__}"
    )


def _numpy_bytes(a: numpy.ndarray) -> numpy.ndarray:
    return a.reshape(-1).view(numpy.uint8) if a.size else numpy.zeros(0, numpy.uint8)


def _place(piece: Any, dev: Device, size: int) -> Any:
    """`piece` (bytes: NumPy or PyTorch) in the memory dev's backend reads and writes, followed by
    zeros up to `size` bytes."""
    on_gpu = dev._runtime.backend == "gpu"
    if isinstance(piece, numpy.ndarray):
        if not on_gpu:
            # Device.write takes writable arrays only (its binding asks for a mutable buffer).
            if size == len(piece) and piece.flags.writeable:
                return piece
            out = numpy.zeros(size, numpy.uint8)
            out[: len(piece)] = piece
            return out
        piece = _torch().from_numpy(piece if piece.flags.writeable else piece.copy())
    torch = _torch()
    where = "cuda" if on_gpu else "cpu"
    if piece.device.type == where and size == len(piece):
        return piece if on_gpu else piece.numpy()
    out = torch.zeros(size, dtype=torch.uint8, device=where)
    out[: len(piece)] = piece
    return out if on_gpu else out.numpy()


def _to_host(a: Any) -> numpy.ndarray:
    return a if isinstance(a, numpy.ndarray) else a.cpu().numpy()


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise RuntimeError(
            "agio.stage: the GPU backend reads and writes CUDA memory, which agio reaches "
            "through PyTorch: install PyTorch, or stage with backend='cpu'"
        ) from None
    return torch


# --- small helpers ---------------------------------------------------------------------------


def _checked_dtype(dtype: numpy.dtype, where: str) -> numpy.dtype:
    if dtype.hasobject:
        raise ValueError(
            f"agio: {where} has dtype {dtype}, which holds Python objects (pointers, not data); "
            "agio stages numbers, fixed-size strings and structured records of them"
        )
    return dtype


def _file_store_path(uri: str) -> str | None:
    return uri[len("file:") :].split("?", 1)[0] if uri.startswith("file:") else None


def _sized_uri(uri: str, size: int) -> str:
    """A file: URI that creates or extends its file to `size` bytes when it is missing or
    smaller, unless the URI says create= itself."""
    path = _file_store_path(uri)
    if path is None:
        kind = "a ram: store lives only as long as its runtime: attach it and pass the Device" \
            if uri.startswith("ram:") else f"{uri!r} is not a file: URI"
        raise ValueError(f"agio.stage: target is a file: URI or an agio.Device; {kind}")
    query = uri.partition("?")[2]
    if any(option.startswith("create=") for option in query.split("&")):
        return uri
    if os.path.exists(path) and (not os.path.isfile(path) or os.path.getsize(path) >= size):
        return uri
    return uri + ("&" if query else "?") + f"create={size}"


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def _bar(progress: bool | None, total: int) -> Any:
    if progress is False or (progress is None and not sys.stderr.isatty()):
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        if progress:
            raise ImportError("agio.stage: progress=True needs tqdm: pip install 'agio[progress]'") from None
        return None
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc="agio.stage")
