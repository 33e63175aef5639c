"""LMB's memory buffer from Python: regions allocated, freed and counted against the buffer's
capacity; a store reads straight into a region (on the GPU backend too: the region is pinned host
memory the GPU reaches); a region shared with a second runtime and with another process holds the
same bytes there; a region is not unmapped while a NumPy view of it lives."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import agio
from conftest import random_rows

ROW = 4096


@pytest.fixture
def rt(backend):
    with agio.Runtime(backend=backend, devices=["ram:4M?lba=4096"]) as runtime:
        yield runtime


def test_regions_come_from_the_buffers_capacity(rt):
    buffer = agio.MemoryBuffer(rt, 1 << 20)
    assert (buffer.capacity_bytes, buffer.used_bytes, buffer.numa_node) == (1 << 20, 0, -1)
    a = buffer.allocate(100)  # whole pages
    b = buffer.allocate(3 * ROW)
    assert a.nbytes == ROW and b.nbytes == 3 * ROW and a.id != b.id
    assert buffer.used_bytes == 4 * ROW
    view = a.numpy()
    assert not view.any(), "a new region is zeroed"
    with pytest.raises(ValueError, match="free"):
        buffer.allocate(1 << 20)
    buffer.free(b)
    assert buffer.used_bytes == ROW
    with pytest.raises(ValueError, match="not one of this memory buffer's"):
        buffer.free(b)
    with pytest.raises(BufferError, match="views of the region are still alive"):
        buffer.free(a)
    del view
    buffer.free(a)
    assert buffer.used_bytes == 0


def test_a_store_reads_straight_into_a_region(rt, arrays):
    dev = rt.devices[0]
    data = random_rows(16, 1)
    dev.write(np.arange(16) * ROW, arrays.put(data))
    buffer = agio.MemoryBuffer(rt, 1 << 20)
    region = buffer.allocate(16 * ROW)
    out = region.numpy(shape=(16, ROW))
    offsets = (np.arange(16)[::-1] * ROW).copy()
    dev.read(offsets, out)
    np.testing.assert_array_equal(out, data[::-1])
    # And the other way: a region is written to the store as it is.
    out[:] = data[::-1] ^ 0xFF
    dev.write(np.arange(16) * ROW, out)
    back = dev.read(np.arange(16) * ROW, arrays.empty((16, ROW), np.uint8))
    np.testing.assert_array_equal(arrays.get(back), data[::-1] ^ 0xFF)


def test_a_region_shared_with_a_second_runtime_holds_the_same_bytes(rt, backend):
    buffer = agio.MemoryBuffer(rt, 1 << 20)
    region = buffer.allocate(4 * ROW)
    mine = region.numpy(shape=(4, ROW))
    with agio.Runtime(backend=backend, devices=["ram:1M?lba=4096"]) as other:
        shared = agio.SharedRegion(other, buffer.descriptor(region))
        assert shared.nbytes == region.nbytes and shared.address != region.address
        theirs = shared.numpy(shape=(4, ROW))
        data = random_rows(4, 2)
        theirs[:] = data
        other.devices[0].write(np.arange(4) * ROW, theirs)  # from the region, on either backend
        theirs[:] = 0
        assert not mine.any()
        other.devices[0].read(np.arange(4) * ROW, theirs)
        np.testing.assert_array_equal(mine, data)
        with pytest.raises(BufferError):
            other.stop()  # a view of its shared region lives
        del theirs
    with pytest.raises(ValueError, match="freed or closed"):
        shared.numpy()  # the runtime closed it when it stopped


def test_a_region_shared_with_another_process_holds_the_same_bytes(rt, backend):
    buffer = agio.MemoryBuffer(rt, 1 << 20)
    region = buffer.allocate(2 * ROW)
    descriptor = buffer.descriptor(region)
    child = textwrap.dedent(f"""
        import numpy as np, agio
        with agio.Runtime(backend="{backend}", devices=["ram:1M?lba=4096"]) as rt:
            shared = agio.SharedRegion(rt, {descriptor})
            view = shared.numpy(shape=(2, {ROW}))
            view[:] = np.arange(2 * {ROW}, dtype=np.uint32).astype(np.uint8).reshape(2, {ROW})
            rt.devices[0].write(np.array([0, {ROW}]), view)
            view[:] = 0
            rt.devices[0].read(np.array([{ROW}, 0]), view)  # the store's blocks, swapped
            del view
    """)
    done = subprocess.run([sys.executable, "-c", child], pass_fds=(descriptor,), capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    expected = np.arange(2 * ROW, dtype=np.uint32).astype(np.uint8).reshape(2, ROW)[::-1]
    np.testing.assert_array_equal(region.numpy(shape=(2, ROW)), expected)


def test_stop_waits_for_views_of_regions_to_go(backend):
    runtime = agio.Runtime(backend=backend, devices=["ram:1M?lba=4096"]).start()
    buffer = agio.MemoryBuffer(runtime, 1 << 20)
    view = buffer.allocate(ROW).numpy()
    with pytest.raises(BufferError, match="delete them first"):
        runtime.stop()
    assert runtime.running
    del view
    runtime.stop()
    with pytest.raises(RuntimeError, match="closed"):
        buffer.allocate(ROW)
