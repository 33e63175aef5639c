"""The runtime from Python: options, devices, start and stop, counters, errors."""

import errno
import os

import numpy as np
import pytest

import agio
from conftest import in_threads


def test_context_manager_starts_and_stops(backend):
    rt = agio.Runtime(backend=backend, devices=["ram:1M"])
    assert not rt.running
    with rt:
        assert rt.running
        assert rt.backend == backend
    assert not rt.running
    rt.stop()  # idempotent


def test_every_cpp_option_is_a_keyword(backend, arrays):
    expected = {
        "backend", "mover", "completion", "max_transfer_bytes", "controller_threads", "service_warps",
        "transaction_records", "submit_timeout_ms", "posted_slots", "wait_timeout_ms", "stop_timeout_ms",
        "controller_spin_us", "controller_copy_depth", "lanes_per_queue", "wait_together_ns",
        "gpu_thread_stack_bytes", "job_start_timeout_ms", "host_tier_bytes", "host_tier_numa_node",
        "trip_stamps", "service_staging_bytes",
    }
    assert set(agio.runtime_option_names) == expected
    with agio.Runtime(backend=backend, devices=["ram:1M"], completion="waiters", wait_timeout_ms=5000,
                      max_transfer_bytes=64 * 1024) as rt:
        rt.devices[0].write([0], arrays.put(np.ones((1, 4096), np.uint8)))


def test_unknown_or_bad_options_are_refused():
    with pytest.raises(TypeError, match="unknown option 'queue_depth'"):
        agio.Runtime(queue_depth=8)
    with pytest.raises(ValueError, match="backend must be"):
        agio.Runtime(backend="tpu")
    with pytest.raises(ValueError, match="completion must be"):
        agio.Runtime(completion="sometimes")
    with pytest.raises(ValueError, match="service_staging_bytes must be a multiple of 4096"):
        agio.Runtime(service_staging_bytes=1000)
    with pytest.raises(ValueError, match="host_tier_admission must be 'always', 'on_reuse' or 'on_eviction'"):
        agio.Runtime(host_tier_admission="sometimes")


def test_devices_describe_their_store(backend, tmp_path):
    path = tmp_path / "store.bin"
    path.write_bytes(b"\0" * (1 << 20))
    with agio.Runtime(backend=backend, devices=[f"file:{path}", "ram:2M?lba=512"]) as rt:
        file_dev, ram_dev = rt.devices
        assert file_dev.uri == f"file:{path}"
        assert file_dev.capacity_bytes == 1 << 20
        assert ram_dev.capacity_bytes == 2 << 20
        assert ram_dev.lba_bytes == 512


def test_a_store_that_cannot_open_names_its_uri(backend, tmp_path):
    rt = agio.Runtime(backend=backend)
    with pytest.raises(OSError, match="no-such-dir") as caught:
        rt.attach(f"file:{tmp_path}/no-such-dir/x.bin")
    assert caught.value.errno == errno.ENOENT
    with pytest.raises(ValueError, match="ram:"):
        rt.attach("ram:lots")


def test_attach_after_start_is_refused(backend):
    with agio.Runtime(backend=backend, devices=["ram:1M"]) as rt:
        with pytest.raises(RuntimeError, match="before the runtime starts"):
            rt.attach("ram:1M")


def test_counters_are_plain_dicts(backend, arrays):
    with agio.Runtime(backend=backend, devices=["ram:1M"]) as rt:
        rt.devices[0].read(np.arange(4) * 4096, arrays.empty((4, 4096), np.uint8))
        (c,) = rt.counters()
        assert isinstance(c, dict)
        assert c["uri"] == "ram:1M"
        assert c["completed"] >= 4 and c["errors"] == 0
        assert c["bytes"] >= 4 * 4096


def test_a_failed_read_raises_agio_ioerror_with_the_cpp_fields(backend, arrays):
    uri = "ram:1M?lba=4096&fault=eio@3"
    with agio.Runtime(backend=backend, devices=[uri]) as rt:
        out = arrays.empty((2, 4096), np.uint8)
        with pytest.raises(agio.IOError) as caught:
            rt.devices[0].read([0, 3 * 4096], out)
        e = caught.value
        assert isinstance(e, OSError)
        assert e.has_request
        assert (e.device, e.uri, e.opcode, e.lba, e.blocks) == (0, uri, "read", 3, 1)
        assert e.errno == errno.EIO
        assert "3" in str(e) and uri in str(e)
        with pytest.raises(agio.IOError):
            rt.check()
    with pytest.raises(agio.IOError, match="LBA 3"):
        rt.check()  # the run's failure, after stop
    assert rt.counters()[0]["errors"] >= 1


def test_several_python_threads_share_a_runtime(backend, arrays):
    rows = 64
    with agio.Runtime(backend=backend, devices=["ram:8M"]) as rt:
        dev = rt.devices[0]

        def worker(k):
            data = np.full((rows, 4096), k, np.uint8)
            offsets = (np.arange(rows) + k * rows) * 4096
            dev.write(offsets, arrays.put(data))
            back = arrays.get(dev.read(offsets, arrays.empty((rows, 4096), np.uint8)))
            assert (back == data).all()

        in_threads(8, worker)
