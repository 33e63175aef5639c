#include "cache.hpp"

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
#include "array.hpp"
#include "array_cache.hpp"
#include "array_indices.hpp"
#include "arrays.hpp"
#include "core.hpp"

namespace nb = nanobind;

namespace agio::python {
namespace {

// One table's part of a call, as Python hands it in: (RowTable, index, rows or None, name).
// `name` starts the names of its arguments in messages: "" for an Array's own call, "pairs[1] "
// for the second pair of agio.gather.
struct segment_arguments {
  const array_table* table;
  nb::ndarray<> index;
  nb::ndarray<> rows;
  std::string name;
};

class shared_cache {
 public:
  shared_cache(nb::object core_object, const std::string& policy, std::size_t cache_bytes, std::uint32_t line_bytes,
               std::uint32_t ways, std::size_t host_tier_bytes, const std::string& host_tier_admission,
               int host_tier_numa_node, std::uint32_t host_tier_latency_ns)
      : core_object_(std::move(core_object)), core_(nb::cast<core*>(core_object_)) {
    runtime& rt = core_->rt();
    if (!rt.running()) throw std::logic_error("agio: a Cache needs a started runtime");
    cache_options options;
    options.bytes = cache_bytes;
    options.line_bytes = line_bytes;
    options.ways = ways;
    const host_tier_settings tier{host_tier_bytes, host_tier_admission, host_tier_numa_node, host_tier_latency_ns};
    has_tier_ = host_tier_bytes != 0;
    nb::gil_scoped_release unlocked;
    cache_ = make_array_cache(rt, policy, options, tier);
    failure_ = static_cast<cache::row_failure*>(rt.allocate_device(sizeof(cache::row_failure)));
  }
  ~shared_cache() { free_cache(); }  // no call can be running: Python holds no reference
  shared_cache(const shared_cache&) = delete;
  shared_cache& operator=(const shared_cache&) = delete;

  // Indices and rows may be read-only arrays (nb::ro) where nothing writes them; the checks
  // take them as plain ndarrays (the same DLPack tensor).
  void gather(const nb::list& segments) { copy(segments, "gather", "out"); }
  void scatter(const nb::list& segments) { copy(segments, "scatter", "values"); }
  void prefetch(const nb::list& segments) {
    const auto held = hold();
    runtime& rt = live();
    const std::vector<segment_arguments> parts = parse(segments, false);
    std::uint64_t count = 0;
    const std::vector<cache::row_segment> checked = check(rt, parts, nullptr, count);
    run(parts, checked, count, "prefetch", [&](auto* at, auto n) { cache_->prefetch(at, n, count, failure_); });
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
    return as_dict(cache_->counters());
  }
  // The host tier's counts, or None without a tier.
  nb::object host_tier_counters() {
    const auto held = hold();
    live();
    if (!has_tier_) return nb::none();
    return as_dict(cache_->host_tier_counters());
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
  static nb::dict as_dict(const cache_counters& c) {
    nb::dict out;
    out["hits"] = c.hits;
    out["misses"] = c.misses;
    out["hits_on_busy"] = c.hits_on_busy;
    out["coalesced_in_warp"] = c.coalesced_in_warp;
    out["evictions"] = c.evictions;
    out["write_backs"] = c.write_backs;
    out["fill_failures"] = c.fill_failures;
    out["write_back_failures"] = c.write_back_failures;
    out["demotions"] = c.demotions;
    return out;
  }

  void free_cache() {
    if (!cache_) return;
    runtime& rt = core_->rt();
    cache_.reset();
    for (device_scratch& s : indices_) s.release(rt);
    segments_.release(rt);
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
    if (!cache_) throw std::logic_error("agio: this Cache is closed: its runtime stopped or close() was called");
    return core_->rt();
  }

  void copy(const nb::list& segments, const char* what, const char* rows_name) {
    const auto held = hold();
    runtime& rt = live();
    const std::vector<segment_arguments> parts = parse(segments, true);
    std::uint64_t count = 0;
    const std::vector<cache::row_segment> checked = check(rt, parts, rows_name, count);
    const bool writes = std::string(what) == "scatter";
    run(parts, checked, count, what, [&](const cache::row_segment* at, std::uint32_t n) {
      if (writes) {
        cache_->scatter(at, n, count, failure_);
      } else {
        cache_->gather(at, n, count, failure_);
      }
    });
  }

  std::vector<segment_arguments> parse(const nb::list& segments, bool with_rows) const {
    std::vector<segment_arguments> parts;
    for (nb::handle item : segments) {
      const nb::tuple t = nb::cast<nb::tuple>(item);
      if (t.size() != 4) throw std::invalid_argument("agio: a segment is (RowTable, index, rows, name)");
      segment_arguments part{&nb::cast<const array_table&>(t[0]),
                             nb::ndarray<>(nb::cast<nb::ndarray<nb::ro>>(t[1])),
                             {},
                             nb::cast<std::string>(t[3])};
      if (with_rows) part.rows = nb::ndarray<>(nb::cast<nb::ndarray<nb::ro>>(t[2]));
      parts.push_back(std::move(part));
    }
    if (parts.size() > UINT32_MAX) throw std::invalid_argument("agio: too many arrays in one call");
    return parts;
  }

  // Checks every segment's table, rows (`rows_name`, unless a prefetch) and indices before
  // anything runs, and returns the job's segments, the indices converted into scratch memory
  // where needed; `count` gets the positions in all.
  std::vector<cache::row_segment> check(runtime& rt, const std::vector<segment_arguments>& parts, const char* rows_name,
                                        std::uint64_t& count) {
    if (indices_.size() < parts.size()) indices_.resize(parts.size());
    std::vector<cache::row_segment> out;
    count = 0;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const segment_arguments& part = parts[k];
      if (part.table->owner() != core_) {
        throw std::invalid_argument("agio: " + part.name + "array lives on another runtime than its cache");
      }
      const cache::row_table& table = part.table->table();
      const std::string index_name = part.name + "index";
      if (rows_name != nullptr) checked_rows((part.name + rows_name).c_str(), part.rows, part.index, table.row_bytes);
      const std::uint64_t* at = checked_indices(rt, index_name.c_str(), part.index, table.rows, indices_[k], failure_);
      out.push_back({table, at, static_cast<std::byte*>(part.rows.data()), count});
      count += part.index.shape(0);
    }
    return out;
  }

  // The rows of `data` for `indices`: as many as indices, row_bytes each, C-contiguous, in the
  // memory the backend's threads use.
  void checked_rows(const std::string& name, const nb::ndarray<>& data, const nb::ndarray<>& indices,
                    std::uint64_t row_bytes) const {
    if (indices.ndim() != 1) {
      throw std::invalid_argument("agio: index must be one-dimensional, got " + what_array("index", indices));
    }
    const std::uint64_t count = indices.shape(0);
    if (data.ndim() == 0 || data.shape(0) != count || data.nbytes() != count * row_bytes) {
      throw std::invalid_argument("agio: " + what_array(name.c_str(), data) + " must hold " + std::to_string(count) +
                                  " rows of " + std::to_string(row_bytes) + " bytes, one per index");
    }
    if (!c_contiguous(data)) {
      throw std::invalid_argument("agio: " + name +
                                  " must be C-contiguous (call .contiguous() or numpy.ascontiguousarray)");
    }
    const bool on_gpu = core_->rt().backend() == backend::gpu;
    if (on_gpu != (data.device_type() == nb::device::cuda::value)) {
      throw std::invalid_argument("agio: " + what_array(name.c_str(), data) + " must be in " +
                                  (on_gpu ? "CUDA memory on the GPU backend" : "host memory on the CPU backend"));
    }
  }

  // Runs `job(segments in device memory, how many)` (which fills failure_) and raises for the
  // rows that failed: agio.IOError naming device, LBA and cause when storage failed, else the
  // first failed row's segment and index.
  template <class Job>
  void run(const std::vector<segment_arguments>& parts, const std::vector<cache::row_segment>& segments,
           std::uint64_t count, const char* what, Job&& job) {
    if (count == 0) return;
    runtime& rt = core_->rt();
    const cache::row_failure none = cache::row_failure::none(count);
    cache::row_failure found;
    {
      nb::gil_scoped_release unlocked;
      auto* at = static_cast<cache::row_segment*>(segments_.get(rt, segments.size() * sizeof(cache::row_segment)));
      rt.copy_to_device(at, segments.data(), segments.size() * sizeof(cache::row_segment));
      rt.copy_to_device(failure_, &none, sizeof none);
      job(at, static_cast<std::uint32_t>(segments.size()));
      rt.copy_to_host(&found, failure_, sizeof found);
    }
    if (found.failed == 0) return;
    rt.check();
    std::size_t k = 0;
    while (k + 1 < segments.size() && segments[k + 1].first <= found.lowest) ++k;
    throw io_error("agio: " + std::string(what) + " of " + std::to_string(found.failed) + " of " +
                   std::to_string(count) + " rows failed, the first at " + parts[k].name + "index[" +
                   std::to_string(found.lowest - segments[k].first) + "]: " + to_string(status::unpack(found.status)));
  }

  nb::object core_object_;  // keeps the runtime alive as long as the cache needs it
  core* core_;
  std::unique_ptr<array_cache> cache_;
  bool has_tier_ = false;
  cache::row_failure* failure_ = nullptr;
  std::vector<device_scratch> indices_;  // one for each segment of the largest call so far
  device_scratch segments_;
  std::mutex mutex_;
};

}  // namespace

void bind_cache(nb::module_& m) {
  nb::class_<shared_cache>(m, "Cache")
      .def(nb::init<nb::object, const std::string&, std::size_t, std::uint32_t, std::uint32_t, std::size_t,
                    const std::string&, int, std::uint32_t>())
      .def("gather", &shared_cache::gather)
      .def("scatter", &shared_cache::scatter)
      .def("prefetch", &shared_cache::prefetch)
      .def("flush", &shared_cache::flush)
      .def("counters", &shared_cache::counters)
      .def("host_tier_counters", &shared_cache::host_tier_counters)
      .def("reset_counters", &shared_cache::reset_counters)
      .def("close", &shared_cache::close)
      .def("closed", &shared_cache::closed);
}

}  // namespace agio::python
