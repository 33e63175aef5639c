// host_memory_nodes(): the NUMA nodes a host tier can be bound to, read from a sysfs tree. A
// fake tree stands for a machine with a CXL expander (a node with memory and no CPUs) beside
// the entries that are not nodes; the machine's own tree lists nodes a tier can really bind to.
#include "agio/runtime/host_memory_nodes.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "agio/runtime/runtime.hpp"

namespace agio {
namespace {

namespace fs = std::filesystem;

class FakeNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() / ("agio-nodes-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                     "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const fs::path& relative, const std::string& text) const {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  void node(int id, std::uint64_t total_kib, std::uint64_t free_kib, const std::string& cpus) const {
    const std::string n = "node" + std::to_string(id);
    write(n + "/meminfo", "Node " + std::to_string(id) + " MemTotal:       " + std::to_string(total_kib) +
                              " kB\nNode " + std::to_string(id) + " MemFree:        " + std::to_string(free_kib) +
                              " kB\nNode " + std::to_string(id) + " MemUsed:        1 kB\n");
    write(n + "/cpulist", cpus + "\n");
  }

  fs::path root_;
};

TEST_F(FakeNodes, ACxlExpanderIsANodeWithMemoryAndNoCpus) {
  node(10, 64 << 20, 60 << 20, "");  // listed before node 0 by nothing but its id
  node(0, 32 << 20, 16 << 20, "0-15");
  write("online", "0,10\n");
  write("possible", "0-15\n");
  write("power/autosuspend", "\n");
  write("node3/cpulist", "16-31\n");  // a node folder without meminfo is not listed
  const std::vector<host_memory_node> nodes = host_memory_nodes(root_.string());
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].id, 0);
  EXPECT_EQ(nodes[0].total_bytes, std::uint64_t{32} << 30);
  EXPECT_EQ(nodes[0].free_bytes, std::uint64_t{16} << 30);
  EXPECT_EQ(nodes[0].cpus, "0-15");
  EXPECT_FALSE(nodes[0].memory_only());
  EXPECT_EQ(nodes[1].id, 10);
  EXPECT_EQ(nodes[1].total_bytes, std::uint64_t{64} << 30);
  EXPECT_TRUE(nodes[1].memory_only());
}

TEST_F(FakeNodes, AMeminfoWithoutItsSizesIsAnErrorNamingTheFile) {
  write("node1/meminfo", "Node 1 Active:    5 kB\n");
  try {
    host_memory_nodes(root_.string());
    FAIL() << "a meminfo without MemTotal was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("node1/meminfo"), std::string::npos) << e.what();
  }
}

TEST_F(FakeNodes, AKernelWithoutNumaListsNone) { EXPECT_TRUE(host_memory_nodes((root_ / "absent").string()).empty()); }

// Every node this machine lists holds memory, and the first one takes a host allocation bound
// to it (what a host tier with cache_options::numa_node does).
TEST(HostMemoryNodes, ThisMachinesNodesTakeABoundAllocation) {
  const std::vector<host_memory_node> nodes = host_memory_nodes();
  if (nodes.empty()) GTEST_SKIP() << "this kernel reports no NUMA nodes";
  for (const host_memory_node& n : nodes) EXPECT_GT(n.total_bytes, 0u) << "node " << n.id;
  runtime_options options;
  options.backend = backend::cpu;
  runtime rt(options);
  void* p = rt.allocate_host(1 << 20, nodes.front().id);
  ASSERT_NE(p, nullptr);
  rt.free(p);
}

}  // namespace
}  // namespace agio
