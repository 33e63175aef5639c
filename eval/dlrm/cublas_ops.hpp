#pragma once
// tensor_ops on the GPU: the matrix products through cuBLAS (as the paper does), the bias,
// activation and interaction reshaping as small kernels, all on one stream. Included by
// dlrm.cpp alone (it defines kernels), compiled by nvcc.
#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "agio/runtime/launch.hpp"  // throw_on_cuda_error
#include "dlrm/network.hpp"

namespace agio::bench::dlrm {

inline void throw_on_cublas_error(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS: ") + what + " failed (status " + std::to_string(s) + ")");
}

__global__ void bias_activation_kernel(float* y, std::uint32_t ldy, const float* bias, std::uint32_t out,
                                       std::uint32_t n, activation act) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= std::uint64_t{out} * n) return;
  const std::uint32_t o = static_cast<std::uint32_t>(i % out);
  float& v = y[i / out * ldy + o];
  const float z = v + bias[o];
  v = act == activation::relu ? fmaxf(z, 0.0f) : 1.0f / (1.0f + expf(-z));
}

__global__ void interaction_output_kernel(const float* t, const float* g, float* top_in, std::uint32_t dim,
                                          std::uint32_t vectors, std::uint32_t n) {
  const std::uint32_t width = dim + vectors * (vectors - 1) / 2;
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= std::uint64_t{width} * n) return;
  const std::uint64_t j = i / width;
  const std::uint32_t k = static_cast<std::uint32_t>(i % width);
  if (k < dim) {
    top_in[i] = t[j * vectors * dim + k];
    return;
  }
  // Pair number p = a (a - 1) / 2 + c with c < a: invert for a, the row of the triangle.
  const std::uint32_t p = k - dim;
  std::uint32_t a = static_cast<std::uint32_t>((1.0f + sqrtf(1.0f + 8.0f * static_cast<float>(p))) / 2.0f);
  while (a * (a - 1) / 2 > p) --a;
  while ((a + 1) * a / 2 <= p) ++a;
  const std::uint32_t c = p - a * (a - 1) / 2;
  top_in[i] = g[(j * vectors + c) * vectors + a];
}

// Create it before agio's runtime starts and destroy it after the runtime stops: creating the
// handle loads cuBLAS's kernels and allocates with cudaMalloc, and destroying it frees with
// cudaFree, and each of those would wait forever for the completion service's persistent
// kernel. The workspace is ours, allocated here, so no product allocates later.
class cublas_ops final : public tensor_ops {
 public:
  explicit cublas_ops(cudaStream_t stream) : stream_(stream) {
    throw_on_cublas_error(cublasCreate(&handle_), "cublasCreate");
    throw_on_cublas_error(cublasSetStream(handle_, stream), "cublasSetStream");
    throw_on_cuda_error(cudaMalloc(&workspace_, workspace_bytes), "cudaMalloc (cuBLAS workspace)");
    throw_on_cublas_error(cublasSetWorkspace(handle_, workspace_, workspace_bytes), "cublasSetWorkspace");
  }
  ~cublas_ops() override {
    cublasDestroy(handle_);
    cudaFree(workspace_);
  }
  cublas_ops(const cublas_ops&) = delete;
  cublas_ops& operator=(const cublas_ops&) = delete;

  void dense_layer(const float* wb, const float* x, std::uint32_t ldx, float* y, std::uint32_t ldy, layer_shape l,
                   std::uint32_t n, activation act) override {
    const float one = 1, zero = 0;
    throw_on_cublas_error(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(l.out), static_cast<int>(n),
                                      static_cast<int>(l.in), &one, wb, static_cast<int>(l.out), x,
                                      static_cast<int>(ldx), &zero, y, static_cast<int>(ldy)),
                          "cublasSgemm");
    const std::uint64_t elements = std::uint64_t{l.out} * n;
    bias_activation_kernel<<<static_cast<unsigned>((elements + 255) / 256), 256, 0, stream_>>>(
        y, ldy, wb + std::size_t{l.in} * l.out, l.out, n, act);
    throw_on_cuda_error(cudaGetLastError(), "bias and activation kernel");
  }
  void gram(const float* t, float* g, std::uint32_t dim, std::uint32_t vectors, std::uint32_t n) override {
    const float one = 1, zero = 0;
    const auto v = static_cast<int>(vectors), d = static_cast<int>(dim);
    throw_on_cublas_error(
        cublasSgemmStridedBatched(handle_, CUBLAS_OP_T, CUBLAS_OP_N, v, v, d, &one, t, d, std::int64_t{v} * d, t, d,
                                  std::int64_t{v} * d, &zero, g, v, std::int64_t{v} * v, static_cast<int>(n)),
        "cublasSgemmStridedBatched");
  }
  void interaction_output(const float* t, const float* g, float* top_in, std::uint32_t dim, std::uint32_t vectors,
                          std::uint32_t n) override {
    const std::uint64_t elements = std::uint64_t{dim + vectors * (vectors - 1) / 2} * n;
    interaction_output_kernel<<<static_cast<unsigned>((elements + 255) / 256), 256, 0, stream_>>>(t, g, top_in, dim,
                                                                                                  vectors, n);
    throw_on_cuda_error(cudaGetLastError(), "interaction kernel");
  }

 private:
  static constexpr std::size_t workspace_bytes = std::size_t{32} << 20;  // cuBLAS's advice for Hopper
  cudaStream_t stream_;
  cublasHandle_t handle_{};
  void* workspace_ = nullptr;
};

}  // namespace agio::bench::dlrm
