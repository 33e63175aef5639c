"""agio.bench.page_cache_budget without root: where the cgroup v2 hierarchy is, why a budget
cannot be enforced (each reason on a fake hierarchy), the limit's arithmetic, and how much of a
file the page cache holds."""

from __future__ import annotations

from pathlib import Path

from agio.bench import page_cache_budget as budget

MOUNTS_V1 = """cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""


def test_the_cgroup2_mount_is_found_among_v1_mounts_or_absent():
    assert budget.cgroup2_root(MOUNTS_V1) == Path("/sys/fs/cgroup/unified")
    assert budget.cgroup2_root("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n") == Path("/sys/fs/cgroup")
    assert budget.cgroup2_root("cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n") is None


def test_each_missing_piece_is_named(tmp_path):
    assert "no cgroup v2" in budget.unavailable_reason(None, 0)
    assert "not root" in budget.unavailable_reason(tmp_path, 1000)
    assert "cannot be read" in budget.unavailable_reason(tmp_path, 0)
    (tmp_path / "cgroup.controllers").write_text("cpu io pids\n")
    assert "no memory controller" in budget.unavailable_reason(tmp_path, 0)
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    assert budget.unavailable_reason(tmp_path, 0) is None


def test_the_limit_is_the_child_its_buffers_and_the_budget():
    limit = budget.memory_high(child_bytes=700 << 20, working_bytes=170 << 20, cache_bytes=1 << 30)
    assert limit == (870 << 20) + (1 << 30)


def test_here_gives_a_reason_or_a_usable_root():
    root, reason = budget.here()
    assert reason is None or reason
    assert reason is not None or root is not None


def test_the_cached_bytes_of_a_file_just_read_are_all_of_it(tmp_path):
    from agio.bench.data_file import cached_bytes

    path = tmp_path / "read.bin"
    path.write_bytes(bytes(range(256)) * 4096 + b"tail")  # not a whole number of pages
    assert path.read_bytes()[-4:] == b"tail"  # every page read, so cached
    assert cached_bytes(path) == path.stat().st_size
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    assert cached_bytes(empty) == 0
