#include "array.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "agio/cache/row_access.hpp"
#include "array_cache.hpp"
#include "array_indices.hpp"
#include "arrays.hpp"
#include "core.hpp"

namespace nb = nanobind;

namespace agio::python {
namespace {

class array {
 public:
  array(nb::object core_object, std::uint32_t dev, std::uint64_t offset, std::uint64_t row_bytes, std::uint64_t rows,
        const std::string& policy, std::size_t cache_bytes, std::uint32_t line_bytes, std::uint32_t ways)
      : core_object_(std::move(core_object)), core_(nb::cast<core*>(core_object_)) {
    runtime& rt = core_->rt();
    if (!rt.running()) throw std::logic_error("agio: an Array needs a started runtime");
    const std::vector<device_description> devices = rt.devices();
    if (dev >= devices.size()) throw std::invalid_argument("agio: no device " + std::to_string(dev));
    if (row_bytes == 0) throw std::invalid_argument("agio: an Array's rows need at least one byte");
    const device_description& d = devices[dev];
    const std::uint64_t capacity = d.capacity_blocks * d.lba_bytes;
    if (offset > capacity || rows > (capacity - offset) / row_bytes) {
      throw std::invalid_argument("agio: " + std::to_string(rows) + " rows of " + std::to_string(row_bytes) +
                                  " bytes from byte " + std::to_string(offset) + " run past the end of " + d.uri +
                                  " (" + std::to_string(capacity) + " bytes)");
    }
    table_ = {dev, offset, row_bytes, rows};
    cache_options options;
    options.bytes = cache_bytes;
    options.line_bytes = line_bytes;
    options.ways = ways;
    {
      nb::gil_scoped_release unlocked;
      cache_ = make_array_cache(rt, policy, options);
      failure_ = static_cast<cache::row_failure*>(rt.allocate_device(sizeof(cache::row_failure)));
    }
  }
  ~array() { free_cache(); }  // no call can be running: Python holds no reference
  array(const array&) = delete;
  array& operator=(const array&) = delete;

  // Indices and values may be read-only arrays (nb::ro); nothing writes them. The checks take
  // them as plain ndarrays (the same DLPack tensor).
  void gather(const nb::ndarray<nb::ro>& index, const nb::ndarray<>& out) {
    const nb::ndarray<> indices(index);
    const auto held = hold();
    runtime& rt = live();
    const std::uint64_t count = checked_rows("out", out, indices);
    const std::uint64_t* at = checked_indices(rt, "index", indices, table_.rows, indices_, failure_);
    run(count, "gather", [&] { cache_->gather(table_, at, count, static_cast<std::byte*>(out.data()), failure_); });
  }
  void scatter(const nb::ndarray<nb::ro>& index, const nb::ndarray<nb::ro>& source) {
    const nb::ndarray<> indices(index);
    const nb::ndarray<> values(source);
    const auto held = hold();
    runtime& rt = live();
    const std::uint64_t count = checked_rows("values", values, indices);
    const std::uint64_t* at = checked_indices(rt, "index", indices, table_.rows, indices_, failure_);
    run(count, "scatter",
        [&] { cache_->scatter(table_, at, count, static_cast<const std::byte*>(values.data()), failure_); });
  }
  void prefetch(const nb::ndarray<nb::ro>& index) {
    const nb::ndarray<> indices(index);
    const auto held = hold();
    runtime& rt = live();
    const std::uint64_t* at = checked_indices(rt, "index", indices, table_.rows, indices_, failure_);
    const std::uint64_t count = indices.shape(0);
    run(count, "prefetch", [&] { cache_->prefetch(table_, at, count, failure_); });
  }
  void flush() {
    const auto held = hold();
    live();
    nb::gil_scoped_release unlocked;
    cache_->flush();
  }
  nb::dict counters() {
    const auto held = hold();
    live();
    const cache_counters c = cache_->counters();
    nb::dict out;
    out["hits"] = c.hits;
    out["misses"] = c.misses;
    out["hits_on_busy"] = c.hits_on_busy;
    out["coalesced_in_warp"] = c.coalesced_in_warp;
    out["evictions"] = c.evictions;
    out["write_backs"] = c.write_backs;
    out["fill_failures"] = c.fill_failures;
    out["write_back_failures"] = c.write_back_failures;
    return out;
  }
  void reset_counters() {
    const auto held = hold();
    live();
    cache_->reset_counters();
  }
  // Frees the cache (after the runtime's stop hook wrote it back, or flushing it now while the
  // runtime runs) and lets go of the runtime; every later call raises.
  void close() {
    const auto held = hold();
    {
      nb::gil_scoped_release unlocked;
      free_cache();
    }
    core_ = nullptr;
    core_object_.reset();
  }
  bool closed() const { return !cache_; }

 private:
  void free_cache() {
    if (!cache_) return;
    runtime& rt = core_->rt();
    cache_.reset();
    indices_.release(rt);
    rt.free(failure_);
    failure_ = nullptr;
  }

  // One call at a time: calls share the scratch memory, and close() frees what they use. Python
  // threads may call at once (the GIL is let go while jobs run), so the lock is taken with the
  // GIL let go: a thread waiting for it must not keep the holder from taking the GIL back.
  std::unique_lock<std::mutex> hold() {
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    nb::gil_scoped_release unlocked;
    lock.lock();
    return lock;
  }

  runtime& live() {
    if (!cache_) throw std::logic_error("agio: this Array is closed: its runtime stopped; make a new agio.Runtime");
    return core_->rt();
  }

  // The rows of `data` for `indices`: as many as indices, row_bytes each, C-contiguous, in the
  // memory the backend's threads use.
  std::uint64_t checked_rows(const char* name, const nb::ndarray<>& data, const nb::ndarray<>& indices) const {
    if (indices.ndim() != 1) {
      throw std::invalid_argument("agio: index must be one-dimensional, got " + what_array("index", indices));
    }
    const std::uint64_t count = indices.shape(0);
    if (data.ndim() == 0 || data.shape(0) != count || data.nbytes() != count * table_.row_bytes) {
      throw std::invalid_argument("agio: " + what_array(name, data) + " must hold " + std::to_string(count) +
                                  " rows of " + std::to_string(table_.row_bytes) + " bytes, one per index");
    }
    if (!c_contiguous(data)) {
      throw std::invalid_argument(std::string("agio: ") + name +
                                  " must be C-contiguous (call .contiguous() or numpy.ascontiguousarray)");
    }
    const bool on_gpu = core_->rt().backend() == backend::gpu;
    if (on_gpu != (data.device_type() == nb::device::cuda::value)) {
      throw std::invalid_argument("agio: " + what_array(name, data) + " must be in " +
                                  (on_gpu ? "CUDA memory on the GPU backend" : "host memory on the CPU backend"));
    }
    return count;
  }

  // Runs `job` (which fills failure_) and raises for the rows that failed: agio.IOError naming
  // device, LBA and cause when storage failed.
  template <class Job>
  void run(std::uint64_t count, const char* what, Job&& job) {
    if (count == 0) return;
    runtime& rt = core_->rt();
    const cache::row_failure none = cache::row_failure::none(count);
    cache::row_failure found;
    {
      nb::gil_scoped_release unlocked;
      rt.copy_to_device(failure_, &none, sizeof none);
      job();
      rt.copy_to_host(&found, failure_, sizeof found);
    }
    if (found.failed == 0) return;
    rt.check();
    throw io_error("agio: Array " + std::string(what) + " of " + std::to_string(found.failed) + " of " +
                   std::to_string(count) + " rows failed, the first at position " + std::to_string(found.lowest) +
                   ": " + to_string(status::unpack(found.status)));
  }

  nb::object core_object_;  // keeps the runtime alive as long as the cache needs it
  core* core_;
  cache::row_table table_;
  std::unique_ptr<array_cache> cache_;
  cache::row_failure* failure_ = nullptr;
  device_scratch indices_;
  std::mutex mutex_;
};

}  // namespace

void bind_array(nb::module_& m) {
  nb::class_<array>(m, "ArrayCache")
      .def(nb::init<nb::object, std::uint32_t, std::uint64_t, std::uint64_t, std::uint64_t, const std::string&,
                    std::size_t, std::uint32_t, std::uint32_t>())
      .def("gather", &array::gather)
      .def("scatter", &array::scatter)
      .def("prefetch", &array::prefetch)
      .def("flush", &array::flush)
      .def("counters", &array::counters)
      .def("reset_counters", &array::reset_counters)
      .def("close", &array::close)
      .def("closed", &array::closed);
}

}  // namespace agio::python
