#include "workloads.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "workloads/criteo.hpp"

namespace nb = nanobind;

namespace agio::python {
namespace {

namespace criteo = bench::criteo;

template <class T>
using numpy_array = nb::ndarray<nb::numpy, T>;

// A NumPy array of `shape` that owns `data` (freed with the array).
template <class T>
numpy_array<T> owned(std::vector<T>&& data, std::initializer_list<std::size_t> shape) {
  auto* held = new std::vector<T>(std::move(data));
  nb::capsule owner(held, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return numpy_array<T>(held->data(), shape.size(), shape.begin(), owner);
}

class criteo_generator {
 public:
  criteo_generator(std::vector<std::uint32_t> vocab, double alpha, std::uint64_t seed)
      : gen_(std::move(vocab), alpha, seed) {}

  // The next n samples as (dense [n, 13] float32, sparse [n, 26] int64, labels [n] float32).
  nb::tuple batch(std::size_t n) {
    std::vector<float> dense(n * criteo::dense_features), labels(n);
    std::vector<std::int64_t> sparse(n * criteo::sparse_features);
    {
      // Generating is the long part (rejection sampling per lookup): other Python threads run.
      nb::gil_scoped_release unlocked;
      std::vector<criteo::sample> samples(n);
      gen_.fill(samples);
      for (std::size_t i = 0; i < n; ++i) {
        const criteo::sample& s = samples[i];
        labels[i] = s.label;
        for (std::size_t f = 0; f < criteo::dense_features; ++f) dense[i * criteo::dense_features + f] = s.dense[f];
        for (std::size_t t = 0; t < criteo::sparse_features; ++t) sparse[i * criteo::sparse_features + t] = s.sparse[t];
      }
    }
    return nb::make_tuple(owned(std::move(dense), {n, criteo::dense_features}),
                          owned(std::move(sparse), {n, criteo::sparse_features}), owned(std::move(labels), {n}));
  }

  const std::vector<std::uint32_t>& vocab() const { return gen_.vocab(); }
  double alpha() const { return gen_.alpha(); }

 private:
  criteo::generator gen_;
};

}  // namespace

void bind_workloads(nb::module_& m) {
  m.attr("criteo_dense_features") = criteo::dense_features;
  m.attr("criteo_sparse_features") = criteo::sparse_features;
  m.def(
      "criteo_vocab_sizes", [](double scale, std::uint32_t cap) { return criteo::criteo_vocab_sizes(scale, cap); },
      nb::arg("scale"), nb::arg("cap"));
  nb::class_<criteo_generator>(m, "CriteoGenerator")
      .def(nb::init<std::vector<std::uint32_t>, double, std::uint64_t>(), nb::arg("vocab"), nb::arg("alpha"),
           nb::arg("seed"))
      .def("batch", &criteo_generator::batch, nb::arg("n"))
      .def_prop_ro("vocab", &criteo_generator::vocab)
      .def_prop_ro("alpha", &criteo_generator::alpha);
}

}  // namespace agio::python
