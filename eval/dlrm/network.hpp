#pragma once
// The DLRM network of AGILE §4.4 (after Naumov et al.'s DLRM): a bottom MLP over the dense
// features, a pairwise dot-product interaction between its output and the sample's embedding
// rows, and a top MLP that ends in a click probability. Configurations (§4.4):
//   1: bottom 512-512-512, top 1024-1024-1024 (three products each, as in the paper);
//   2: one product in each MLP (less computation);
//   3: six products in each MLP (more computation).
// Projection layers in front of and behind the products match their widths to the dense
// features, the embedding dimension and the interaction's output, as the paper describes.
// Every layer is y = act(W x + b); ReLU everywhere except the last, which is a sigmoid.
//
// The forward pass is written once over `tensor_ops`, which cuBLAS implements on the GPU and
// plain loops on CPU threads. Activations are column-major: one column per sample.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "harness/mix.hpp"

namespace agio::bench::dlrm {

enum class activation { relu, sigmoid };

struct layer_shape {
  std::uint32_t in = 0, out = 0;
};

struct network_shape {
  std::uint32_t dense = 13;
  std::uint32_t tables = 26;
  std::uint32_t dim = 64;
  std::vector<layer_shape> bottom, top;

  std::uint32_t vectors() const { return tables + 1; }  // the bottom output and one row per table
  std::uint32_t pairs() const { return vectors() * (vectors() - 1) / 2; }
  std::uint32_t top_input() const { return dim + pairs(); }
  std::uint32_t widest() const {
    std::uint32_t w = 0;
    for (const auto& l : bottom) w = std::max(w, l.out);
    for (const auto& l : top) w = std::max(w, l.out);
    return w;
  }
  // Multiply-adds per sample in the MLPs and the interaction, times two: FLOPs.
  double flops_per_sample() const {
    double f = 2.0 * vectors() * vectors() * dim;
    for (const auto& l : bottom) f += 2.0 * l.in * l.out;
    for (const auto& l : top) f += 2.0 * l.in * l.out;
    return f;
  }
};

inline network_shape dlrm_config(int config, std::uint32_t dim, std::uint32_t bottom_width, std::uint32_t top_width,
                                 std::uint32_t tables, std::uint32_t dense) {
  if (config < 1 || config > 3) throw std::invalid_argument("DLRM configuration is 1, 2 or 3");
  const std::uint32_t products = config == 1 ? 3 : config == 2 ? 1 : 6;
  network_shape s;
  s.dense = dense;
  s.tables = tables;
  s.dim = dim;
  s.bottom.push_back({dense, bottom_width});
  for (std::uint32_t i = 0; i < products; ++i) s.bottom.push_back({bottom_width, bottom_width});
  s.bottom.push_back({bottom_width, dim});
  s.top.push_back({s.top_input(), top_width});
  for (std::uint32_t i = 0; i < products; ++i) s.top.push_back({top_width, top_width});
  s.top.push_back({top_width, 1});
  return s;
}

// Deterministic weights: W (out x in, column-major) then the bias, per layer, Xavier-uniform.
inline std::vector<std::vector<float>> network_weights(const network_shape& s, std::uint64_t seed) {
  std::vector<std::vector<float>> w;
  std::uint64_t layer = 0;
  const auto add = [&](const layer_shape& l) {
    std::vector<float> p(std::size_t{l.in} * l.out + l.out);
    const float a = std::sqrt(6.0f / static_cast<float>(l.in + l.out));
    for (std::size_t i = 0; i < p.size(); ++i) {
      const float u = static_cast<float>(mix64(seed ^ (layer << 48) ^ i) >> 40) * (1.0f / 16777216.0f);
      p[i] = (2 * u - 1) * (i < std::size_t{l.in} * l.out ? a : 0.01f);
    }
    w.push_back(std::move(p));
    ++layer;
  };
  for (const auto& l : s.bottom) add(l);
  for (const auto& l : s.top) add(l);
  return w;
}

// The three operations the forward pass needs.
class tensor_ops {
 public:
  virtual ~tensor_ops() = default;
  // y = act(W x + b) for n columns: W is out x in (column-major), b follows W; column j of x
  // is at x + j * ldx and of y at y + j * ldy.
  virtual void dense_layer(const float* w_and_b, const float* x, std::uint32_t ldx, float* y, std::uint32_t ldy,
                           layer_shape l, std::uint32_t n, activation act) = 0;
  // For each of n samples, with Z its `vectors` columns of `dim` floats in t: G = Z^T Z.
  virtual void gram(const float* t, float* g, std::uint32_t dim, std::uint32_t vectors, std::uint32_t n) = 0;
  // Column j of top_in: the bottom output (Z's first column), then G's strictly lower triangle.
  virtual void interaction_output(const float* t, const float* g, float* top_in, std::uint32_t dim,
                                  std::uint32_t vectors, std::uint32_t n) = 0;
};

// Device (or, on CPU threads, host) buffers for a forward pass of up to `batch` samples.
struct forward_buffers {
  const std::vector<const float*>* layers;  // weights per layer, bottom first
  float* t;                                 // batch x vectors x dim: the gather fills vectors 1..
  float* g;                                 // batch x vectors x vectors
  float* top_in;                            // top_input x batch
  float* ping;                              // widest x batch
  float* pong;                              // widest x batch
};

// Runs the network over n samples: dense (dense x n) in, probabilities (n) out. The
// embeddings must already be in b.t.
inline void forward(tensor_ops& ops, const network_shape& s, const forward_buffers& b, const float* dense,
                    std::uint32_t n, float* probabilities) {
  const std::vector<const float*>& w = *b.layers;
  const float* x = dense;
  std::uint32_t ldx = s.dense;
  std::size_t layer = 0;
  for (std::size_t i = 0; i < s.bottom.size(); ++i, ++layer) {
    const bool last = i + 1 == s.bottom.size();
    float* y = last ? b.t : (i % 2 == 0 ? b.ping : b.pong);  // the last writes vector 0 of each sample
    const std::uint32_t ldy = last ? s.vectors() * s.dim : s.bottom[i].out;
    ops.dense_layer(w[layer], x, ldx, y, ldy, s.bottom[i], n, activation::relu);
    x = y;
    ldx = ldy;
  }
  ops.gram(b.t, b.g, s.dim, s.vectors(), n);
  ops.interaction_output(b.t, b.g, b.top_in, s.dim, s.vectors(), n);
  x = b.top_in;
  ldx = s.top_input();
  for (std::size_t i = 0; i < s.top.size(); ++i, ++layer) {
    const bool last = i + 1 == s.top.size();
    float* y = last ? probabilities : (i % 2 == 0 ? b.ping : b.pong);
    ops.dense_layer(w[layer], x, ldx, y, s.top[i].out, s.top[i], n, last ? activation::sigmoid : activation::relu);
    x = y;
    ldx = s.top[i].out;
  }
}

// The operations as plain loops, for CPU threads (and small sizes).
class host_ops final : public tensor_ops {
 public:
  void dense_layer(const float* wb, const float* x, std::uint32_t ldx, float* y, std::uint32_t ldy, layer_shape l,
                   std::uint32_t n, activation act) override {
    const float* bias = wb + std::size_t{l.in} * l.out;
    for (std::uint32_t j = 0; j < n; ++j) {
      for (std::uint32_t o = 0; o < l.out; ++o) {
        float acc = 0;
        for (std::uint32_t i = 0; i < l.in; ++i) acc += wb[o + std::size_t{i} * l.out] * x[std::size_t{j} * ldx + i];
        acc += bias[o];
        y[std::size_t{j} * ldy + o] = act == activation::relu ? std::max(acc, 0.0f) : 1.0f / (1.0f + std::exp(-acc));
      }
    }
  }
  void gram(const float* t, float* g, std::uint32_t dim, std::uint32_t vectors, std::uint32_t n) override {
    for (std::uint32_t j = 0; j < n; ++j) {
      const float* z = t + std::size_t{j} * vectors * dim;
      for (std::uint32_t a = 0; a < vectors; ++a) {
        for (std::uint32_t c = 0; c < vectors; ++c) {
          float acc = 0;
          for (std::uint32_t k = 0; k < dim; ++k) acc += z[a * dim + k] * z[c * dim + k];
          g[(std::size_t{j} * vectors + c) * vectors + a] = acc;
        }
      }
    }
  }
  void interaction_output(const float* t, const float* g, float* top_in, std::uint32_t dim, std::uint32_t vectors,
                          std::uint32_t n) override {
    const std::uint32_t width = dim + vectors * (vectors - 1) / 2;
    for (std::uint32_t j = 0; j < n; ++j) {
      float* out = top_in + std::size_t{j} * width;
      std::copy_n(t + std::size_t{j} * vectors * dim, dim, out);
      std::uint32_t k = dim;
      for (std::uint32_t a = 1; a < vectors; ++a) {
        for (std::uint32_t c = 0; c < a; ++c) out[k++] = g[(std::size_t{j} * vectors + c) * vectors + a];
      }
    }
  }
};

}  // namespace agio::bench::dlrm
