"""Runs a function in a child process whose page cache is held to a budget: the child is put in a
cgroup v2 of its own before it touches the file it reads, and once it is set up the cgroup's
memory.high becomes the child's memory then + its working buffers + the budget, so the kernel
reclaims the file's pages beyond the budget as a host whose RAM is smaller than the file would.
memory.high rather than memory.max: above memory.high the kernel reclaims and, where it cannot,
slows the child down, but never kills it; with memory.max a memory map that faults faster than
the kernel reclaims its pages was taken by the OOM killer on the H100 and H200 VMs, even with
a gigabyte of slack.
This needs root and a cgroup v2 hierarchy with the memory controller; `unavailable_reason` says
why not where it is missing."""

from __future__ import annotations

import contextlib
import errno
import multiprocessing
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

READY = "ready"


class Unavailable(RuntimeError):
    """The budget cannot be enforced here; the message says why."""


def cgroup2_root(mounts: str) -> Path | None:
    """Where the cgroup v2 hierarchy is mounted, from /proc/self/mounts' text (None: nowhere)."""
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[2] == "cgroup2":
            return Path(fields[1])
    return None


def unavailable_reason(root: Path | None, euid: int) -> str | None:
    """Why a memory-limited cgroup cannot be made under `root`, or None when it can."""
    if root is None:
        return "no cgroup v2 hierarchy is mounted"
    if euid != 0:
        return f"not root (euid {euid}): making and limiting a cgroup under {root} needs root"
    try:
        controllers = (root / "cgroup.controllers").read_text().split()
    except OSError as e:
        return f"the cgroup v2 hierarchy at {root} cannot be read: {e}"
    if "memory" not in controllers:
        return (f"the cgroup v2 hierarchy at {root} has no memory controller "
                "(it is held by cgroup v1 here, or not delegated to this container)")
    if not os.access(root, os.W_OK):
        return f"the cgroup v2 hierarchy at {root} is not writable"
    return None


def here() -> tuple[Path | None, str | None]:
    """This machine's cgroup v2 root and why it cannot be used (None: it can, a cgroup was made
    and removed there)."""
    try:
        root = cgroup2_root(Path("/proc/self/mounts").read_text())
    except OSError:
        root = None
    reason = unavailable_reason(root, os.geteuid())
    if reason is None:
        try:
            with _cgroup(root):
                pass
        except Unavailable as e:
            reason = str(e)
    return root, reason


def memory_high(child_bytes: int, working_bytes: int, cache_bytes: int) -> int:
    """The cgroup's limit: what the child holds once set up, the buffers its steps allocate (so
    that they do not come out of the page cache's share), and the page cache's budget."""
    return child_bytes + working_bytes + cache_bytes


def run(root: Path, target: Callable, args: tuple, cache_bytes: int, working_bytes: int,
        before_run: Callable[[], None]) -> tuple[Any, dict]:
    """target(conn, *args) in a spawned child in a new cgroup under `root`. The child must
    conn.recv() before it opens the file (it is then in the cgroup), conn.send(READY) and
    conn.recv() once set up (the limit is then set and before_run() done: drop the file's pages
    there), and conn.send() its result last. Returns that result and the budget's figures."""
    context = multiprocessing.get_context("spawn")  # a forked child would inherit CUDA's state
    parent, child = context.Pipe()
    with _cgroup(root) as group:
        process = context.Process(target=target, args=(child, *args), daemon=True)
        process.start()
        child.close()  # the child's end lives in the child only: its exit ends parent.recv()
        try:
            (group / "cgroup.procs").write_text(str(process.pid))
            parent.send("placed")
            if _receive(parent, process) != READY:
                raise RuntimeError("agio.bench: the budgeted child broke the protocol")
            before_run()
            child_bytes = int((group / "memory.current").read_text())
            anon_set_up = _stat(group, "anon")
            limit = memory_high(child_bytes, working_bytes, cache_bytes)
            (group / "memory.high").write_text(str(limit))
            parent.send("run")
            result = _receive(parent, process)
            file_bytes = _stat(group, "file")
            anon_bytes = _stat(group, "anon")
            over_high = _stat(group, "high", "memory.events")
            process.join()
        finally:
            if process.is_alive():  # the run failed in the parent
                process.kill()
                process.join()
    return result, {"memory_high_bytes": limit, "child_bytes_when_set_up": child_bytes,
                    "working_bytes": working_bytes, "cache_bytes": cache_bytes,
                    "anon_bytes_when_set_up": anon_set_up, "anon_bytes_at_end": anon_bytes,
                    "page_cache_bytes_at_end": file_bytes, "times_over_high": over_high, "cgroup_root": str(root)}


def _receive(conn, process) -> Any:
    try:
        return conn.recv()
    except EOFError:
        process.join()
        raise RuntimeError(f"agio.bench: the budgeted child exited with code {process.exitcode} "
                           "(its error is above; -9 is a kill: the OOM killer, with less memory left on the "
                           "machine than the child needs)") from None


def _stat(group: Path, key: str, file: str = "memory.stat") -> int | None:
    """A count of the cgroup's memory.stat (or of `file`, such as memory.events), None if absent."""
    path = group / file
    if not path.exists():
        return None
    for line in path.read_text().splitlines():
        name, value = line.split()
        if name == key:
            return int(value)
    return None


@contextlib.contextmanager
def _cgroup(root: Path) -> Iterator[Path]:
    """A new cgroup under `root` with no swap (the limit must take page cache, not swap the child
    out), removed on exit, with the memory controller enabled for it meanwhile if it was not."""
    control = root / "cgroup.subtree_control"
    group = root / f"agio-bench-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        enabled = "memory" not in control.read_text().split()
        if enabled:
            control.write_text("+memory")
    except OSError as e:
        raise Unavailable(f"the memory controller could not be enabled in {control}: {e}") from e
    try:
        try:
            group.mkdir()
        except OSError as e:
            raise Unavailable(f"no cgroup could be made under {root}: {e}") from e
        try:
            swap = group / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
            yield group
        finally:
            _remove(group)
    finally:
        if enabled:
            with contextlib.suppress(OSError):  # another cgroup may use it by now
                control.write_text("-memory")


def _remove(group: Path) -> None:
    # A child just reaped may still count as a member for a moment (EBUSY).
    for _ in range(50):
        try:
            group.rmdir()
            return
        except OSError as e:
            if e.errno != errno.EBUSY:
                raise
            time.sleep(0.1)
    group.rmdir()
