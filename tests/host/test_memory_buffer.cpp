// LMB's memory buffer on CPU threads: regions up to the buffer's capacity, a store reading into
// a region with no bounce copy, and sharing a region with another runtime and another process,
// which reach that region and nothing else of the buffer.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "agio/runtime/host_memory_nodes.hpp"
#include "agio/runtime/memory_buffer.hpp"
#include "memory_buffer_scenario.hpp"
#include "test_support.hpp"

extern char** environ;

namespace agio {
namespace {

constexpr std::uint32_t block = test::region_block_bytes;

std::size_t page() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

using test::error_of;

TEST(MemoryBuffer, AllocatesZeroedRegionsUpToItsCapacityAndTakesBackWhatIsFreed) {
  runtime rt(test::cpu_options());
  memory_buffer buffer(rt, 3 * page());
  const host_region a = buffer.allocate(page() + 1);  // rounded up to two pages
  EXPECT_EQ(a.bytes, 2 * page());
  EXPECT_EQ(buffer.used(), 2 * page());
  const std::vector<std::byte> zeros(a.bytes);
  EXPECT_EQ(std::memcmp(a.data, zeros.data(), a.bytes), 0);
  EXPECT_TRUE(rt.registered(a.data, a.bytes));

  const std::string full = error_of([&] { buffer.allocate(2 * page()); });
  EXPECT_NE(full.find(std::to_string(2 * page()) + " bytes asked, " + std::to_string(page()) + " of " +
                      std::to_string(3 * page()) + " free"),
            std::string::npos)
      << full;
  EXPECT_THROW(buffer.allocate(0), std::invalid_argument);

  const host_region b = buffer.allocate(page());
  EXPECT_NE(b.id, a.id);
  EXPECT_EQ(buffer.region(b.id).data, b.data);
  buffer.free(a.id);
  EXPECT_FALSE(rt.registered(a.data, 1));
  EXPECT_EQ(buffer.used(), page());
  EXPECT_NE(error_of([&] { buffer.free(a.id); }).find("no region " + std::to_string(a.id)), std::string::npos);
  EXPECT_THROW(buffer.descriptor(a.id), std::invalid_argument);
  EXPECT_EQ(buffer.allocate(2 * page()).bytes, 2 * page());
}

TEST(MemoryBuffer, AStoreReadsIntoARegionAndThreadsReadItThere) {
  test::check_a_store_reads_into_a_region(test::cpu_options());
}

// A file store of random blocks and a runtime over it.
class SharedRegion : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(file.path(), std::ios::binary).write(reinterpret_cast<const char*>(data.data()), data.size());
  }
  std::string uri() const { return "file:" + file.path() + "?lba=4096"; }
  const std::byte* block_of(std::uint64_t b) const { return data.data() + b * block; }

  test::temp_file file{"shared-region-store.bin"};
  std::vector<std::byte> data = test::random_bytes(16 * block, 17);
};

// A second runtime of the process gets one region: its store's reads land there and the first
// runtime sees them, but the buffer's other region is not its to read into.
TEST_F(SharedRegion, AnotherRuntimeReachesTheRegionSharedAndNothingElseOfTheBuffer) {
  runtime owner(test::cpu_options());
  memory_buffer buffer(owner, 1 << 20);
  const host_region shared = buffer.allocate(2 * block);
  const host_region other = buffer.allocate(block);

  runtime guest(test::cpu_options());
  guest.attach(uri());
  guest.start();
  const shared_region view(guest, buffer.descriptor(shared.id));
  EXPECT_EQ(view.bytes(), shared.bytes);
  ASSERT_TRUE(guest.io().read(0, 3, 1, view.data()).ok());
  EXPECT_EQ(std::memcmp(shared.data, block_of(3), block), 0) << "the owner's mapping holds the guest's read";

  EXPECT_FALSE(guest.registered(other.data, 1));
  const status refused = guest.io().read(0, 4, 1, other.data);
  EXPECT_EQ(refused.result, outcome::nvme_error);
  EXPECT_EQ(refused.nvme_status, spec::make_status(spec::status_type::generic, spec::generic::data_transfer_error));
  const std::vector<std::byte> zeros(block);
  EXPECT_EQ(std::memcmp(other.data, zeros.data(), block), 0) << "a refused read wrote into another region";
  const std::string why = error_of([&] { guest.check(); });
  EXPECT_NE(why.find("buffer not registered with the runtime"), std::string::npos) << why;

  const status past_end = guest.io().read(0, 5, 2, static_cast<std::byte*>(view.data()) + block);
  EXPECT_EQ(past_end.nvme_status, spec::make_status(spec::status_type::generic, spec::generic::data_transfer_error));
}

// Run by the test below in a process of its own, given one region's descriptor and the store:
// it holds that region's memory object and no other of the buffer's, and reads a block into it.
TEST(MemoryBufferChildProcess, ReadsIntoTheRegionItWasSent) {
  const char* given = std::getenv("AGIO_TEST_SHARED_REGION");
  if (given == nullptr) GTEST_SKIP() << "run by SharedRegion.AnotherProcessMapsTheRegionItIsSentAndOnlyThatOne";
  const std::string spec(given);
  const int descriptor = std::stoi(spec.substr(0, spec.find(' ')));
  const std::string uri = spec.substr(spec.find(' ') + 1);

  int regions = 0;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ignored;
    const std::string target = std::filesystem::read_symlink(fd.path(), ignored).string();
    if (target.find("memfd:agio-region-") != std::string::npos) ++regions;
  }
  EXPECT_EQ(regions, 1) << "memory objects of the buffer this process holds";

  runtime rt(test::cpu_options());
  rt.attach(uri);
  rt.start();
  const shared_region view(rt, descriptor);
  ASSERT_TRUE(rt.io().read(0, 5, 1, view.data()).ok());
  rt.check();
}

TEST_F(SharedRegion, AnotherProcessMapsTheRegionItIsSentAndOnlyThatOne) {
  runtime owner(test::cpu_options());
  memory_buffer buffer(owner, 1 << 20);
  const host_region kept = buffer.allocate(block);
  const host_region sent = buffer.allocate(block);
  (void)kept;
  const int descriptor = buffer.descriptor(sent.id);

  // Everything the child needs is made before fork: between fork and exec only calls that are
  // safe in a child of a threaded process.
  std::vector<std::string> env_strings = {"AGIO_TEST_SHARED_REGION=" + std::to_string(descriptor) + " " + uri()};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "AGIO_TEST_SHARED_REGION=", 24) != 0) env_strings.emplace_back(*e);
  }
  std::vector<char*> env;
  for (auto& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  std::string program = "/proc/self/exe";
  std::string filter = "--gtest_filter=MemoryBufferChildProcess.ReadsIntoTheRegionItWasSent";
  char* argv[] = {program.data(), filter.data(), nullptr};

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::fcntl(descriptor, F_SETFD, 0);  // this one descriptor survives exec; the buffer's others close
    ::execve(argv[0], argv, env.data());
    ::_exit(127);
  }
  int how = 0;
  ASSERT_EQ(::waitpid(child, &how, 0), child);
  ASSERT_TRUE(WIFEXITED(how));
  EXPECT_EQ(WEXITSTATUS(how), 0) << "the child process's test failed (its output is above)";
  EXPECT_EQ(std::memcmp(sent.data, block_of(5), block), 0) << "the child's read is in the region";
}

TEST(MemoryBuffer, IsBoundToANodeOfThisMachineAndRefusesOneItLacks) {
  runtime rt(test::cpu_options());
  const std::vector<host_memory_node> nodes = host_memory_nodes();
  if (!nodes.empty()) {
    memory_buffer bound(rt, 1 << 20, nodes.front().id);
    EXPECT_EQ(bound.numa_node(), nodes.front().id);
    EXPECT_NE(bound.allocate(1 << 16).data, nullptr);
  }
  memory_buffer absent(rt, 1 << 20, 1000);
  const std::string why = error_of([&] { absent.allocate(1 << 16); });
  EXPECT_NE(why.find("NUMA node 1000"), std::string::npos) << why;
  EXPECT_EQ(absent.used(), 0u);
}

}  // namespace
}  // namespace agio
