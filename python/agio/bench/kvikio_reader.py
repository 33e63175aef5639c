"""KvikIO as the file: experiment's comparator: compatibility mode on (POSIX reads into a pinned
bounce buffer, then a copy to the GPU: cuFile is not used), its thread pool sized by the command
line, and every 4 KiB pread sent to that pool so that a batch's reads run concurrently."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Settings read back into the JSON after they are set.
_REPORTED = ("compat_mode", "num_threads", "task_size", "gds_threshold", "bounce_buffer_size", "auto_direct_io_read")


def missing_reason(backend: str) -> str | None:
    """Why KvikIO cannot run here, or None."""
    if importlib.util.find_spec("kvikio") is None:
        return "KvikIO is not installed (python3 -m pip install kvikio-cu13): file experiment without KvikIO"
    if backend != "gpu":
        return "KvikIO reads into GPU memory and agio runs on CPU threads here: file experiment without KvikIO"
    return None


def configure(threads: int, direct_io: bool) -> dict:
    """Sets KvikIO's defaults for this process and returns its version and settings as set.

    gds_threshold 0: below the threshold pread() reads synchronously in the calling thread
    (its "small I/O shortcut"), which would turn a batch of 4 KiB preads into one read at a time;
    at 0 each goes to the thread pool. auto_direct_io_read: O_DIRECT for page-aligned reads,
    as agio's file: store reads (older KvikIO has no such setting: recorded as unsupported)."""
    import kvikio
    import kvikio.defaults

    kvikio.defaults.set({"compat_mode": kvikio.CompatMode.ON, "num_threads": threads, "gds_threshold": 0})
    settings: dict[str, Any] = {}
    try:
        kvikio.defaults.set("auto_direct_io_read", direct_io)
    except (KeyError, ValueError, AttributeError, RuntimeError) as e:
        settings["auto_direct_io_read_error"] = f"not set: {e}"
    for name in _REPORTED:
        try:
            settings[name] = str(kvikio.defaults.get(name))
        except (KeyError, ValueError, AttributeError, RuntimeError):
            settings[name] = "unsupported by this KvikIO"
    why = {
        "compat_mode": "ON, set explicitly: POSIX reads into a pinned bounce buffer, then a copy to the GPU",
        "num_threads": "--kvikio-threads (default one per CPU core): KvikIO's docs name no number beyond "
                       "the default of 1 and 'multiple threads'; in compatibility mode each thread has one "
                       "read in flight",
        "gds_threshold": "0: below it pread() reads synchronously in the calling thread, one read at a time",
        "auto_direct_io_read": "--kvikio-direct-io: O_DIRECT for aligned reads, as agio's file: store",
    }
    return {"version": getattr(kvikio, "__version__", "unknown"), "settings": settings, "why": why}


class KvikioReader:
    """Reads a batch of 4 KiB rows: one pread future per row, all issued, then all waited for."""

    def __init__(self, path: Path):
        import kvikio

        self._file = kvikio.CuFile(str(path), "r")

    def read(self, rows: Sequence[Any], offsets: Sequence[int], row_bytes: int) -> None:
        futures = [self._file.pread(row, row_bytes, offset) for row, offset in zip(rows, offsets)]
        for f in futures:
            got = f.get()
            if got != row_bytes:
                raise OSError(f"KvikIO read {got} of {row_bytes} bytes")

    def close(self) -> None:
        self._file.close()
