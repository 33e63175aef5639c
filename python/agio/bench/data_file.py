"""The file the file: experiment reads: one of the caller's (kept), or a temporary file of random
data (removed at the end); and dropping its pages from the page cache between runs."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

_CHUNK = 64 << 20


@contextlib.contextmanager
def data_file(path: Path | None, gib: float, seed: int, say) -> Iterator[Path]:
    """Yields `path` as it is, or a new file of `gib` GiB of random data removed on exit."""
    if path is not None:
        if not path.is_file() or path.stat().st_size < 4096:
            raise ValueError(f"agio.bench: --file {path} must be a regular file of at least 4096 bytes")
        yield path
        return
    size = max(4096, int(gib * (1 << 30)) // 4096 * 4096)
    fd, name = tempfile.mkstemp(prefix="agio-python-bench-", suffix=".bin")
    created = Path(name)
    try:
        say(f"preparing {created} ({size / (1 << 30):.2f} GiB of random data, removed at the end; "
            "--file PATH keeps one)")
        rng = np.random.default_rng(seed)
        with os.fdopen(fd, "wb") as f:
            for start in range(0, size, _CHUNK):
                f.write(rng.bytes(min(_CHUNK, size - start)))
            f.flush()
            # Dirty pages would make the O_DIRECT reads that follow wait for write-back.
            os.fsync(f.fileno())
        yield created
    finally:
        created.unlink(missing_ok=True)


def drop_cached_pages(path: Path) -> None:
    """Evicts the file's clean pages from the page cache, so that a buffered reader (KvikIO
    without O_DIRECT) reads from the disk as agio's O_DIRECT file: store does."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def expected_rows(path: Path, offsets: np.ndarray, row_bytes: int) -> np.ndarray:
    """The file's bytes at each offset, read with plain os.pread: what a reader must return."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return np.stack([np.frombuffer(os.pread(fd, row_bytes, int(o)), np.uint8) for o in offsets])
    finally:
        os.close(fd)


def cached_bytes(path: Path) -> int:
    """How many of the file's bytes sit in the page cache now (mincore over a mapping of it):
    what a buffered reader of that file has in memory, apart from anything else cached."""
    import ctypes
    import mmap

    size = path.stat().st_size
    if size == 0:
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    page = mmap.PAGESIZE
    fd = os.open(path, os.O_RDONLY)
    try:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), f"mmap of {path} for mincore failed")
        try:
            resident = ctypes.create_string_buffer((size + page - 1) // page)
            if libc.mincore(ctypes.c_void_p(address), size, resident) != 0:
                raise OSError(ctypes.get_errno(), f"mincore of {path} failed")
            pages = sum(b & 1 for b in resident.raw)
        finally:
            libc.munmap(ctypes.c_void_p(address), size)
    finally:
        os.close(fd)
    return min(size, pages * page)
