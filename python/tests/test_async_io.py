"""Non-blocking reads and writes (futures), KvikIO-shaped pread/pwrite, requests in flight,
registration caching, and the on-demand completion
service: a device-wide synchronize returns while the runtime is started, and CUDA graph capture
is refused clearly."""

import threading

import numpy as np
import pytest

import agio
from conftest import random_rows

ROW = 4096


@pytest.fixture
def rt(backend):
    with agio.Runtime(backend=backend, devices=["ram:8M?lba=4096"]) as runtime:
        yield runtime


def test_non_blocking_calls_return_futures_that_give_the_data(rt, arrays):
    dev = rt.devices[0]
    data = random_rows(64, 1)
    offsets = np.arange(64) * ROW * 2
    wrote = dev.write(offsets, arrays.put(data), blocking=False)
    assert isinstance(wrote, agio.Future)
    assert wrote.wait() is None
    assert wrote.done()
    pending = dev.read(arrays.put(offsets[::-1].copy()), arrays.empty(data.shape, np.uint8), blocking=False)
    out = pending.wait()
    np.testing.assert_array_equal(arrays.get(out), data[::-1])
    assert pending.done()


def test_a_failed_row_surfaces_at_wait_with_the_request_fields(backend, arrays):
    with agio.Runtime(backend=backend, devices=["ram:1M?lba=4096&fault=eio@5"]) as rt:
        future = rt.devices[0].read(np.arange(8) * ROW, arrays.empty((8, ROW), np.uint8), blocking=False)
        with pytest.raises(agio.IOError) as caught:
            future.wait()
        assert caught.value.lba == 5 and caught.value.opcode == "read"


def test_pread_and_pwrite_move_a_range_larger_than_one_transfer(backend, arrays):
    with agio.Runtime(backend=backend, devices=["ram:4M"], max_transfer_bytes=16 * 1024) as rt:
        dev = rt.devices[0]
        data = np.random.default_rng(2).integers(0, 255, size=300 * 1024, dtype=np.uint8)  # 18.75 transfers
        assert dev.pwrite(arrays.put(data), file_offset=1 << 20).get() == data.size
        back = arrays.empty(data.size + 8192, np.uint8)
        assert dev.pread(back, data.size, 1 << 20, 4096).get() == data.size
        np.testing.assert_array_equal(arrays.get(back)[4096 : 4096 + data.size], data)


def test_pread_refuses_an_unaligned_range_and_one_past_the_end(rt, arrays):
    dev = rt.devices[0]
    buf = arrays.empty(3 * ROW, np.uint8)
    with pytest.raises(ValueError, match="multiples of .*4096-byte LBA"):
        dev.pread(buf, ROW, 100)
    with pytest.raises(ValueError, match="run past the end"):
        dev.pread(buf, 2 * ROW, dev.capacity_bytes - ROW)
    with pytest.raises(ValueError, match="do not fit"):
        dev.pread(buf, 3 * ROW, 0, 4096)


@pytest.mark.parametrize("in_flight", [1, 3, 1000])
def test_any_number_in_flight_reads_every_row(rt, arrays, in_flight):
    dev = rt.devices[0]
    data = random_rows(40, 3)
    offsets = np.arange(40) * ROW
    dev.write(offsets, arrays.put(data), in_flight=in_flight)
    out = dev.read(offsets, arrays.empty(data.shape, np.uint8), in_flight=in_flight)
    np.testing.assert_array_equal(arrays.get(out), data)


def test_a_buffer_used_again_is_registered_once(rt, arrays):
    dev = rt.devices[0]
    out = arrays.empty((16, ROW), np.uint8)
    for _ in range(5):
        dev.read(np.arange(16) * ROW, out)
    assert rt._core.registered_regions() == 1
    dev.read(np.arange(4) * ROW, out[4:8])  # inside the registered buffer
    assert rt._core.registered_regions() == 1


def test_a_read_only_out_is_refused(rt):
    if rt.backend != "cpu":
        pytest.skip("NumPy arrays are the read-only case")
    out = np.zeros((1, ROW), np.uint8)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        rt.devices[0].read([0], out)
    source = np.frombuffer(bytes(ROW), np.uint8).reshape(1, ROW)  # read-only, and fine to write from
    rt.devices[0].write([0], source)


def test_stop_waits_for_a_future_in_flight(backend, arrays):
    rt = agio.Runtime(backend=backend, devices=["ram:8M"]).start()
    data = random_rows(256, 4)
    rt.devices[0].write(np.arange(256) * ROW, arrays.put(data))
    future = rt.devices[0].read(np.arange(256) * ROW, arrays.empty(data.shape, np.uint8), blocking=False)
    rt.stop()
    np.testing.assert_array_equal(arrays.get(future.wait()), data)


def test_the_default_completion_is_on_demand():
    assert agio.Runtime(backend="cpu", devices=["ram:1M"])._core is not None
    opts = agio._runtime._agio.RuntimeOptions()
    opts.completion = "on_demand"
    assert opts.completion == "on_demand"
    with pytest.raises(ValueError, match="'on_demand', 'service' or 'waiters'"):
        opts.completion = "sometimes"


def gpu_only(backend):
    if backend != "gpu":
        pytest.skip("CUDA streams, graphs and device-wide synchronization are the GPU backend's")
    return pytest.importorskip("torch")


def test_a_device_wide_synchronize_returns_while_the_runtime_is_started(backend, arrays):
    torch = gpu_only(backend)
    with agio.Runtime(backend="gpu", devices=["ram:8M"]) as rt:
        rt.devices[0].write(np.arange(8) * ROW, arrays.put(random_rows(8, 5)))
        finished = threading.Event()
        threading.Thread(target=lambda: (torch.cuda.synchronize(), finished.set()), daemon=True).start()
        assert finished.wait(timeout=20), "torch.cuda.synchronize() did not return beside the started runtime"


def test_reads_queue_on_the_current_stream_after_its_earlier_work(backend, arrays):
    torch = gpu_only(backend)
    with agio.Runtime(backend="gpu", devices=["ram:8M"]) as rt:
        data = random_rows(32, 6)
        rt.devices[0].write(np.arange(32) * ROW, arrays.put(data))
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            offsets = torch.arange(32, device="cuda", dtype=torch.int64) * ROW  # made on the stream
            out = torch.empty((32, ROW), dtype=torch.uint8, device="cuda")
            future = rt.devices[0].read(offsets, out, blocking=False)
            total = out.to(torch.int64).sum()  # queued after the read on the same stream
        future.wait()
        stream.synchronize()
        assert int(total) == int(data.astype(np.int64).sum())


def test_offsets_in_cuda_memory_are_checked_on_the_gpu(backend, arrays):
    torch = gpu_only(backend)
    with agio.Runtime(backend="gpu", devices=["ram:1M?lba=4096"]) as rt:
        offsets = torch.tensor([0, 4096, 4100, 1 << 30], device="cuda", dtype=torch.int32)
        with pytest.raises(ValueError, match=r"offsets\[2\] = 4100 is not a multiple"):
            rt.devices[0].read(offsets, torch.empty((4, ROW), dtype=torch.uint8, device="cuda"))
        assert rt.counters()[0]["submitted"] == 0


def test_cuda_graph_capture_of_a_read_is_refused(backend, arrays):
    torch = gpu_only(backend)
    with agio.Runtime(backend="gpu", devices=["ram:1M"]) as rt:
        out = torch.empty((1, ROW), dtype=torch.uint8, device="cuda")
        offsets = torch.zeros(1, dtype=torch.int64, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with pytest.raises(RuntimeError, match="cannot be captured into a CUDA graph"):
            with torch.cuda.graph(graph):
                out.zero_()  # the capture holds work of its own, as a user's would
                rt.devices[0].read(offsets, out)
        graph.replay()  # what was captured still runs; the read was never part of it
        torch.cuda.synchronize()
        del graph


def test_an_array_with_only_the_cuda_array_interface_is_accepted(backend, arrays):
    torch = gpu_only(backend)

    class Interface:
        def __init__(self, tensor):
            self.tensor = tensor
            self.__cuda_array_interface__ = tensor.__cuda_array_interface__

    with agio.Runtime(backend="gpu", devices=["ram:1M"]) as rt:
        data = random_rows(2, 7)
        rt.devices[0].write([0, ROW], torch.from_numpy(data).cuda())
        out = torch.empty((2, ROW), dtype=torch.uint8, device="cuda")
        rt.devices[0].read([0, ROW], Interface(out))
        np.testing.assert_array_equal(out.cpu().numpy(), data)
