// A warp's copies through a staging area in shared memory (detail/bulk_copy.hpp), the completion
// service's way of moving a window's data, in a kernel of their own so that compute-sanitizer,
// which runs one kernel at a time and so never sees the service beside a test's kernel, checks
// them too: copies from pinned host memory of every length from 16 bytes to over three slots,
// 16-byte aligned (bulk copies) and only 4-byte aligned (the lanes' loads), through areas of
// slot counts up to the most that four warps fit in a block, each warp with its own, used for
// several batches in a row. Every copy lands exactly, and nothing around it changes.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "agio/detail/bulk_copy.hpp"
#include "agio/runtime/cuda_error.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using detail::warp::bulk_copies;
using detail::warp::bulk_staging;

constexpr std::uint32_t warps = 4, copies_per_warp = 48, batches = 3;
constexpr std::uint32_t copies = warps * copies_per_warp;

struct copy_list {
  const std::uint64_t* source;
  const std::uint64_t* destination;
  const std::uint32_t* bytes;
};

// Warp w makes copies w * copies_per_warp, ... in `batches` batches through its own area.
__global__ void copy_in_batches(copy_list list, std::uint32_t slots) {
  extern __shared__ __align__(128) unsigned char areas[];
#if __CUDA_ARCH__ >= 900
  const std::uint32_t warp = threadIdx.x / detail::warp::size;
  bulk_staging staging;
  if (slots != 0) staging = bulk_staging(areas + warp * bulk_staging::bytes_for(slots), slots);
  for (std::uint32_t b = 0; b < batches; ++b) {
    bulk_copies batch(staging);
    for (std::uint32_t i = b; i < copies_per_warp; i += batches) {
      const std::uint32_t k = warp * copies_per_warp + i;
      batch.copy(reinterpret_cast<void*>(list.destination[k]), reinterpret_cast<const void*>(list.source[k]),
                 list.bytes[k]);
    }
    batch.finish();
  }
#else
  (void)list;
  (void)slots;
  (void)areas;
#endif
}

class GpuBulkCopies : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(GpuBulkCopies, EveryLengthAndAlignmentLandsExactlyAndNothingElse) {
  int device = 0;
  cudaDeviceProp props{};
  throw_on_cuda_error(cudaGetDevice(&device), "cudaGetDevice");
  throw_on_cuda_error(cudaGetDeviceProperties(&props, device), "cudaGetDeviceProperties");
  if (props.major < 9) GTEST_SKIP() << "bulk copies need sm_90";
  const std::uint32_t slots = GetParam();
  // Copy k: 16 bytes to a little over three slots, every seventh from a source and to a
  // destination only 4-byte aligned; destinations apart by a gap of 64 bytes.
  std::vector<std::uint64_t> source_at(copies), destination_at(copies);
  std::vector<std::uint32_t> bytes(copies);
  std::uint64_t source_total = 0, destination_total = 0;
  for (std::uint32_t k = 0; k < copies; ++k) {
    bytes[k] = 16 * (1 + (k * 97) % 830);
    const std::uint64_t skew = k % 7 == 3 ? 4 : 0;
    source_at[k] = source_total + skew;
    destination_at[k] = destination_total + skew;
    source_total += bytes[k] + 16;
    destination_total += bytes[k] + 64;
  }
  const std::vector<std::byte> data = test::random_bytes(source_total, 21);
  const std::vector<std::byte> before = test::random_bytes(destination_total, 22);
  void* host = nullptr;
  throw_on_cuda_error(cudaHostAlloc(&host, source_total, cudaHostAllocMapped), "cudaHostAlloc");
  std::memcpy(host, data.data(), source_total);
  void* host_on_device = nullptr;
  throw_on_cuda_error(cudaHostGetDevicePointer(&host_on_device, host, 0), "cudaHostGetDevicePointer");
  std::byte* out = nullptr;
  throw_on_cuda_error(cudaMalloc(&out, destination_total), "cudaMalloc");
  throw_on_cuda_error(cudaMemcpy(out, before.data(), destination_total, cudaMemcpyHostToDevice), "cudaMemcpy");
  std::vector<std::uint64_t> src(copies), dst(copies);
  for (std::uint32_t k = 0; k < copies; ++k) {
    src[k] = reinterpret_cast<std::uint64_t>(host_on_device) + source_at[k];
    dst[k] = reinterpret_cast<std::uint64_t>(out) + destination_at[k];
  }
  std::uint64_t* table = nullptr;
  throw_on_cuda_error(cudaMalloc(&table, copies * (2 * sizeof(std::uint64_t) + sizeof(std::uint32_t))), "cudaMalloc");
  throw_on_cuda_error(cudaMemcpy(table, src.data(), copies * 8, cudaMemcpyHostToDevice), "cudaMemcpy");
  throw_on_cuda_error(cudaMemcpy(table + copies, dst.data(), copies * 8, cudaMemcpyHostToDevice), "cudaMemcpy");
  auto* lengths = reinterpret_cast<std::uint32_t*>(table + 2 * copies);
  throw_on_cuda_error(cudaMemcpy(lengths, bytes.data(), copies * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
  const std::uint32_t shared = warps * bulk_staging::bytes_for(slots);
  throw_on_cuda_error(
      cudaFuncSetAttribute(copy_in_batches, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)),
      "cudaFuncSetAttribute");
  copy_in_batches<<<1, warps * detail::warp::size, shared>>>(copy_list{table, table + copies, lengths}, slots);
  throw_on_cuda_error(cudaGetLastError(), "launch");
  throw_on_cuda_error(cudaDeviceSynchronize(), "copy_in_batches");
  std::vector<std::byte> got(destination_total);
  throw_on_cuda_error(cudaMemcpy(got.data(), out, destination_total, cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::uint64_t checked = 0;
  for (std::uint32_t k = 0; k < copies; ++k) {
    const std::uint64_t at = destination_at[k];
    ASSERT_EQ(0, std::memcmp(got.data() + checked, before.data() + checked, at - checked))
        << "the bytes before copy " << k;
    ASSERT_EQ(0, std::memcmp(got.data() + at, data.data() + source_at[k], bytes[k]))
        << "copy " << k << " of " << bytes[k] << " bytes";
    checked = at + bytes[k];
  }
  EXPECT_EQ(0, std::memcmp(got.data() + checked, before.data() + checked, destination_total - checked));
  cudaFree(table);
  cudaFree(out);
  cudaFreeHost(host);
}

INSTANTIATE_TEST_SUITE_P(SlotCounts, GpuBulkCopies, ::testing::Values(0u, 1u, 3u, 8u, 13u),
                         [](const auto& p) { return std::to_string(p.param) + "_slots"; });

}  // namespace
}  // namespace agio
