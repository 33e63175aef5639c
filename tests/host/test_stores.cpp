// The proxy's stores: URI parsing, data integrity through RAM and io_uring channels, fault
// injection, the SSD profile's timing, and the channel contract the controller relies on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "agio/detail/backoff.hpp"
#include "agio/detail/clock.hpp"
#include "proxy/store_impl.hpp"

namespace agio::proxy {
namespace {

constexpr std::size_t page = 4096;

host_memory aligned_host_memory() {
  return {[](std::size_t bytes) -> void* { return ::operator new (bytes, std::align_val_t{page}); },
          [](void* p) { ::operator delete (p, std::align_val_t{page}); }};
}

struct free_deleter {
  void operator()(std::byte* p) const { std::free(p); }
};
using aligned_buffer = std::unique_ptr<std::byte[], free_deleter>;

// O_DIRECT wants page-aligned memory, so every test buffer is.
aligned_buffer make_buffer(std::size_t bytes, std::byte fill = std::byte{0}) {
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + page - 1) / page * page;
  aligned_buffer b(static_cast<std::byte*>(std::aligned_alloc(page, rounded)));
  std::memset(b.get(), static_cast<int>(fill), rounded);
  return b;
}

void fill_random(std::byte* p, std::size_t bytes, std::mt19937_64& rng) {
  for (std::size_t i = 0; i < bytes; ++i) p[i] = static_cast<std::byte>(rng());
}

// A file under the temp directory, removed when the test ends however it ends.
class temp_file {
 public:
  temp_file() {
    static std::atomic<unsigned> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("agio_test_stores_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove(path_);
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// Feeds `ios` through the channel as fast as its depth allows; results come back indexed by
// tag, which callers set to the I/O's position.
std::vector<std::int64_t> run_all(store_channel& channel, const std::vector<store_io>& ios) {
  std::vector<std::int64_t> results(ios.size(), std::numeric_limits<std::int64_t>::min());
  std::size_t submitted = 0;
  std::size_t completed = 0;
  std::array<store_result, 16> reaped{};
  const deadline limit = deadline::after_ms(20'000);
  while (completed < ios.size() && !limit.passed()) {
    while (submitted < ios.size() && channel.submit(ios[submitted])) ++submitted;
    channel.push();
    const std::size_t count = channel.reap(reaped);
    for (std::size_t i = 0; i < count; ++i) results.at(reaped[i].tag) = reaped[i].result;
    completed += count;
  }
  EXPECT_EQ(completed, ios.size()) << "timed out waiting for completions";
  EXPECT_EQ(channel.in_flight(), 0u);
  return results;
}

std::int64_t run_one(store_channel& channel, const store_io& io) {
  store_io tagged = io;
  tagged.tag = 0;
  return run_all(channel, {tagged}).front();
}

store_io read_io(std::uint64_t offset, std::uint32_t length, std::byte* buffer, std::uint64_t tag = 0) {
  return {store_op::read, offset, length, buffer, tag};
}

store_io write_io(std::uint64_t offset, std::uint32_t length, std::byte* buffer, std::uint64_t tag = 0) {
  return {store_op::write, offset, length, buffer, tag};
}

std::unique_ptr<store> open_uri(const std::string& uri) { return open_store(uri, aligned_host_memory()); }

// ---------------------------------------------------------------------------------------
// URI parsing

TEST(StoreUri, ParsesSizes) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("512B"), 512u);
  EXPECT_EQ(parse_size("64K"), 64u << 10);
  EXPECT_EQ(parse_size("64k"), 64u << 10);
  EXPECT_EQ(parse_size("64M"), 64u << 20);
  EXPECT_EQ(parse_size("64MB"), 64u << 20);
  EXPECT_EQ(parse_size("1GiB"), 1ull << 30);
  EXPECT_EQ(parse_size("2T"), 2ull << 40);
  EXPECT_EQ(parse_size("16777215T"), 16777215ull << 40);
  for (const char* bad :
       {"", "K", "1.5M", "-1", "+1", "1Mi", "1MiBx", "1 M", "16777216T", "99999999999999999999", "1X"}) {
    EXPECT_FALSE(parse_size(bad).has_value()) << bad;
  }
}

TEST(StoreUri, ParsesRam) {
  const store_spec plain = parse_store_uri("ram:64M");
  EXPECT_EQ(plain.what, store_spec::kind::ram);
  EXPECT_EQ(plain.ram_bytes, 64u << 20);
  EXPECT_EQ(plain.options.lba_bytes, 512u);
  EXPECT_FALSE(plain.options.profile.any());
  EXPECT_TRUE(plain.options.faults.empty());
  EXPECT_EQ(plain.options.uri, "ram:64M");

  const store_spec shaped =
      parse_store_uri("ram:1GiB?lba=4096&read_us=12.5&write_us=3&read_gbps=6.5&write_gbps=2&iops=1e6&fault=short@7");
  EXPECT_EQ(shaped.ram_bytes, 1ull << 30);
  EXPECT_EQ(shaped.options.lba_bytes, 4096u);
  EXPECT_DOUBLE_EQ(shaped.options.profile.read_latency_us, 12.5);
  EXPECT_DOUBLE_EQ(shaped.options.profile.write_latency_us, 3);
  EXPECT_DOUBLE_EQ(shaped.options.profile.read_gbps, 6.5);
  EXPECT_DOUBLE_EQ(shaped.options.profile.write_gbps, 2);
  EXPECT_DOUBLE_EQ(shaped.options.profile.max_iops, 1e6);
  ASSERT_EQ(shaped.options.faults.size(), 1u);
  EXPECT_EQ(shaped.options.faults[0].what, fault_injection::kind::short_transfer);
  EXPECT_EQ(shaped.options.faults[0].lba, 7u);
}

TEST(StoreUri, NamedProfileIsRefinedByExplicitCaps) {
  const ssd_profile named = parse_store_uri("ram:1M?profile=agile-ssd").options.profile;
  EXPECT_DOUBLE_EQ(named.read_gbps, 3.7);
  EXPECT_DOUBLE_EQ(named.write_gbps, 2.2);
  EXPECT_DOUBLE_EQ(named.read_latency_us, 80);
  EXPECT_DOUBLE_EQ(named.write_latency_us, 20);
  // Whatever the order, an explicit cap wins over the profile's.
  const ssd_profile refined = parse_store_uri("ram:1M?read_gbps=2&profile=agile-ssd&iops=5").options.profile;
  EXPECT_DOUBLE_EQ(refined.read_gbps, 2);
  EXPECT_DOUBLE_EQ(refined.write_gbps, 2.2);
  EXPECT_DOUBLE_EQ(refined.max_iops, 5);
}

TEST(StoreUri, ParsesFile) {
  const store_spec spec = parse_store_uri("file:/data/x.img?lba=4096&create=1G&fault=eio@3");
  EXPECT_EQ(spec.what, store_spec::kind::file);
  EXPECT_EQ(spec.path, "/data/x.img");
  EXPECT_EQ(spec.options.lba_bytes, 4096u);
  EXPECT_EQ(spec.options.create_bytes, 1ull << 30);
  ASSERT_EQ(spec.options.faults.size(), 1u);
  EXPECT_EQ(spec.options.faults[0].what, fault_injection::kind::eio);
  EXPECT_EQ(spec.options.faults[0].lba, 3u);
  EXPECT_FALSE(parse_store_uri("file:relative/path").options.create_bytes.has_value());
}

// Every kind parses, and fault= may repeat: all of them apply.
TEST(StoreUri, ParsesEveryFaultKindAndRepeatedFaults) {
  const store_spec spec = parse_store_uri(
      "ram:1M?fault=eio@1&fault=short@2&fault=hang@3&fault=crash@4&fault=random@0.25:7&"
      "fault=random_read@1:0&fault=random_write@0:18446744073709551615");
  using kind = fault_injection::kind;
  ASSERT_EQ(spec.options.faults.size(), 7u);
  const kind kinds[] = {kind::eio, kind::short_transfer, kind::hang, kind::crash};
  for (std::uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(spec.options.faults[i].what, kinds[i]);
    EXPECT_EQ(spec.options.faults[i].lba, i + 1);
  }
  EXPECT_EQ(spec.options.faults[4].what, kind::random);
  EXPECT_DOUBLE_EQ(spec.options.faults[4].probability, 0.25);
  EXPECT_EQ(spec.options.faults[4].seed, 7u);
  EXPECT_EQ(spec.options.faults[5].what, kind::random_read);
  EXPECT_DOUBLE_EQ(spec.options.faults[5].probability, 1);
  EXPECT_EQ(spec.options.faults[6].what, kind::random_write);
  EXPECT_EQ(spec.options.faults[6].seed, std::numeric_limits<std::uint64_t>::max());
}

struct bad_uri_case {
  const char* uri;
  const char* fragment;  // what the message must point at
};

TEST(StoreUri, RejectsMalformedUrisNamingTheBadPart) {
  const bad_uri_case cases[] = {
      {"ram", "expected ram:SIZE or file:PATH"},
      {"disk:/dev/sda", "\"disk\""},
      {"ram:", "bad size"},
      {"ram:12Q", "\"12Q\""},
      {"ram:0", "must not be zero"},
      {"ram:1000", "1000 is not a multiple of the 512-byte LBA"},
      {"ram:6K?lba=4096", "not a multiple of the 4096-byte LBA"},
      {"ram:4K?lba=1024", "\"1024\""},
      {"ram:4K?lba=abc", "\"abc\""},
      {"ram:4K?foo=1", "\"foo\""},
      {"ram:4K?read_us=abc", "\"abc\""},
      {"ram:4K?write_us=1x", "\"1x\""},
      {"ram:4K?read_gbps=-1", "\"-1\""},
      {"ram:4K?write_gbps=nan", "\"nan\""},
      {"ram:4K?iops=inf", "\"inf\""},
      {"ram:4K?lba", "\"lba\" is not key=value"},
      {"ram:4K?=512", "\"=512\" is not key=value"},
      {"ram:4K?", "empty parameter"},
      {"ram:4K?lba=512&&iops=1", "empty parameter"},
      {"ram:4K?lba=512&lba=4096", "\"lba\" given twice"},
      {"ram:4K?fault=boom@3", "\"boom@3\""},
      {"ram:4K?fault=eio@x", "\"eio@x\""},
      {"ram:4K?fault=eio", "\"eio\""},
      {"ram:4K?profile=nope", "\"nope\" (known: agile-ssd)"},
      {"ram:4K?create=1M", "\"create\" applies to file"},
      {"file:", "empty path"},
      {"file:/tmp/x?read_us=3", "\"read_us\" applies to ram"},
      {"file:/tmp/x?profile=agile-ssd", "\"profile\" applies to ram"},
      {"file:/tmp/x?create=0", "create size must not be zero"},
      {"file:/tmp/x?create=1000", "1000 is not a multiple"},
      {"file:/tmp/x?create=12Q", "\"12Q\""},
      {"ram:4K?fault=eio@8", "fault LBA 8 is past the store's 8 blocks"},
      {"ram:4K?fault=hang@8", "fault LBA 8 is past the store's 8 blocks"},
      {"ram:4K?fault=eio@1&fault=crash@9", "fault LBA 9 is past"},
      {"ram:4K?fault=hang@", "\"hang@\""},
      {"ram:4K?fault=crash", "\"crash\""},
      {"ram:4K?fault=eio@1&fault=boom@2", "\"boom@2\""},
      {"ram:4K?fault=random@0.5", "\"random@0.5\""},
      {"ram:4K?fault=random@1.5:3", "\"random@1.5:3\""},
      {"ram:4K?fault=random@-0.1:3", "\"random@-0.1:3\""},
      {"ram:4K?fault=random@nan:3", "\"random@nan:3\""},
      {"ram:4K?fault=random_read@0.5:x", "\"random_read@0.5:x\""},
      {"ram:4K?fault=random_write@:1", "\"random_write@:1\""},
      {"ram:4K?fault=random@0.5:1:2", "\"random@0.5:1:2\""},
      {"ram:4K?fault=", "\"\""},
  };
  for (const bad_uri_case& c : cases) {
    try {
      open_uri(c.uri);
      ADD_FAILURE() << c.uri << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(std::string("\"") + c.uri + "\""), std::string::npos) << message;
      EXPECT_NE(message.find(c.fragment), std::string::npos) << c.uri << " -> " << message;
    }
  }
}

TEST(StoreUri, MissingFileIsASystemErrorNamingThePath) {
  const std::string path = (std::filesystem::temp_directory_path() / "agio_no_such_dir" / "store.img").string();
  try {
    open_uri("file:" + path);
    ADD_FAILURE() << "opened a missing file";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(std::strerror(ENOENT)), std::string::npos) << message;
  }
}

TEST(StoreUri, FileStoreRejectsWhatIsNotAStore) {
  temp_file empty;
  std::FILE* created = std::fopen(empty.path().c_str(), "w");
  ASSERT_NE(created, nullptr);
  std::fclose(created);
  EXPECT_THROW(open_uri("file:" + empty.path()), std::invalid_argument);  // no whole block
  EXPECT_THROW(open_uri("file:" + std::filesystem::temp_directory_path().string()), std::system_error);  // EISDIR
  temp_file small;
  EXPECT_THROW(open_uri("file:" + small.path() + "?create=4K&fault=eio@8"), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// Data integrity

// Random data at several offsets and lengths from 512 B to 1 MiB, read back through the
// same channel into a fresh buffer.
void check_roundtrip(store& s) {
  std::mt19937_64 rng(42);
  auto channel = s.open_channel(8);
  const std::uint32_t lba = s.lba_bytes();
  const std::uint32_t lengths[] = {lba, 4096, 3 * lba, 64 << 10, 1 << 20, 12 << 10};
  std::uint64_t tag = 0;
  for (const std::uint32_t length : lengths) {
    const std::uint64_t blocks = (s.capacity_bytes() - length) / lba;
    const std::uint64_t offset = rng() % (blocks + 1) * lba;
    aligned_buffer written = make_buffer(length);
    aligned_buffer read = make_buffer(length, std::byte{0xEE});
    fill_random(written.get(), length, rng);
    ASSERT_EQ(run_one(*channel, write_io(offset, length, written.get(), tag++)), length);
    ASSERT_EQ(run_one(*channel, read_io(offset, length, read.get(), tag++)), length);
    ASSERT_EQ(std::memcmp(written.get(), read.get(), length), 0) << "offset " << offset << " length " << length;
    if (s.host_view() != nullptr) {
      ASSERT_EQ(std::memcmp(written.get(), s.host_view() + offset, length), 0);
    }
  }
}

TEST(RamStore, StartsZeroedAndRoundTrips) {
  auto s = open_uri("ram:4M");
  EXPECT_EQ(s->uri(), "ram:4M");
  EXPECT_EQ(s->capacity_bytes(), 4u << 20);
  EXPECT_EQ(s->lba_bytes(), 512u);
  EXPECT_EQ(s->buffer_alignment(), 1u);
  ASSERT_NE(s->host_view(), nullptr);
  EXPECT_TRUE(
      std::all_of(s->host_view(), s->host_view() + s->capacity_bytes(), [](std::byte b) { return b == std::byte{0}; }));
  check_roundtrip(*s);
}

TEST(RamStore, RoundTripsWith4KBlocks) {
  auto s = open_uri("ram:4M?lba=4096");
  EXPECT_EQ(s->lba_bytes(), 4096u);
  auto channel = s->open_channel(4);
  aligned_buffer data = make_buffer(8192);
  EXPECT_EQ(run_one(*channel, write_io(512, 4096, data.get())), -EINVAL);  // not on a 4K block
  check_roundtrip(*s);
}

TEST(FileStore, CreatesRoundTripsAndPersists) {
  temp_file file;
  const std::string uri = "file:" + file.path() + "?create=4M";
  aligned_buffer kept = make_buffer(8192);
  std::mt19937_64 rng(7);
  fill_random(kept.get(), 8192, rng);
  {
    auto s = open_uri(uri);
    EXPECT_EQ(s->uri(), uri);
    EXPECT_EQ(s->capacity_bytes(), 4u << 20);
    EXPECT_EQ(s->host_view(), nullptr);
    EXPECT_EQ(std::filesystem::file_size(file.path()), 4u << 20);
    EXPECT_TRUE(s->buffer_alignment() == 4096 || s->buffer_alignment() == 1) << s->buffer_alignment();
    check_roundtrip(*s);
    auto channel = s->open_channel(2);
    EXPECT_EQ(run_one(*channel, write_io(1 << 20, 8192, kept.get())), 8192);
    EXPECT_EQ(run_one(*channel, {store_op::flush, 0, 0, nullptr, 0}), 0);
    s->sync();
  }
  auto reopened = open_uri("file:" + file.path());  // no create=: the file exists now
  EXPECT_EQ(reopened->capacity_bytes(), 4u << 20);
  auto channel = reopened->open_channel(1);
  aligned_buffer read = make_buffer(8192);
  EXPECT_EQ(run_one(*channel, read_io(1 << 20, 8192, read.get())), 8192);
  EXPECT_EQ(std::memcmp(read.get(), kept.get(), 8192), 0);
}

TEST(FileStore, ReportsShortReadsFromTheKernel) {
  temp_file file;
  auto s = open_uri("file:" + file.path() + "?create=1M");
  auto channel = s->open_channel(2);
  // The file shrinks behind the store's back, as when another process truncates it.
  std::filesystem::resize_file(file.path(), 512 << 10);
  aligned_buffer read = make_buffer(8192);
  EXPECT_EQ(run_one(*channel, read_io((512 << 10) - 4096, 8192, read.get())), 4096);
  EXPECT_EQ(run_one(*channel, read_io(600 << 10, 4096, read.get())), 0);
}

TEST(FileStore, ExistingLargerFileKeepsItsSize) {
  temp_file file;
  open_uri("file:" + file.path() + "?create=2M");
  EXPECT_EQ(open_uri("file:" + file.path() + "?create=1M")->capacity_bytes(), 2u << 20);
  std::filesystem::resize_file(file.path(), (1 << 20) + 700);  // rounds down to whole blocks
  EXPECT_EQ(open_uri("file:" + file.path() + "?lba=4096")->capacity_bytes(), 1u << 20);
}

// Four controller threads, each with its own channel, write their own quarter of the store
// in random-sized chunks and read it back in differently cut chunks.
void check_concurrent_threads(store& s) {
  constexpr unsigned threads = 4;
  const std::uint64_t region = s.capacity_bytes() / threads;
  std::vector<std::thread> workers;
  std::atomic<unsigned> mismatches{0};
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&s, &mismatches, region, t] {
      std::mt19937_64 rng(100 + t);
      auto channel = s.open_channel(8);
      aligned_buffer expected = make_buffer(region);
      aligned_buffer actual = make_buffer(region, std::byte{0xEE});
      fill_random(expected.get(), region, rng);
      const auto cut = [&](std::byte* base, store_op op) {
        std::vector<store_io> ios;
        for (std::uint64_t at = 0; at < region;) {
          const std::uint64_t length = std::min<std::uint64_t>(region - at, (1 + rng() % 128) * page);
          ios.push_back({op, t * region + at, static_cast<std::uint32_t>(length), base + at, ios.size()});
          at += length;
        }
        return ios;
      };
      const std::vector<store_io> writes = cut(expected.get(), store_op::write);
      const std::vector<std::int64_t> written = run_all(*channel, writes);
      const std::vector<store_io> reads = cut(actual.get(), store_op::read);
      const std::vector<std::int64_t> read = run_all(*channel, reads);
      for (std::size_t i = 0; i < writes.size(); ++i) mismatches += written[i] != writes[i].length;
      for (std::size_t i = 0; i < reads.size(); ++i) mismatches += read[i] != reads[i].length;
      mismatches += std::memcmp(expected.get(), actual.get(), region) != 0;
    });
  }
  for (std::thread& w : workers) w.join();
  EXPECT_EQ(mismatches.load(), 0u);
}

TEST(RamStore, FourThreadsOwnChannels) {
  auto s = open_uri("ram:8M");
  check_concurrent_threads(*s);
}

TEST(FileStore, FourThreadsOwnChannels) {
  temp_file file;
  auto s = open_uri("file:" + file.path() + "?create=8M");
  check_concurrent_threads(*s);
}

// ---------------------------------------------------------------------------------------
// Channel contract

void check_depth_limit(store& s) {
  auto channel = s.open_channel(4);
  aligned_buffer data = make_buffer(4 * 4096);
  for (std::uint64_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(channel->submit(write_io(i * 4096, 4096, data.get() + i * 4096, i)));
  }
  EXPECT_FALSE(channel->submit(write_io(0, 4096, data.get(), 9)));
  EXPECT_EQ(channel->in_flight(), 4u);
  channel->push();
  std::array<store_result, 8> out{};
  std::size_t reaped = 0;
  for (const deadline limit = deadline::after_ms(10'000); reaped < 4 && !limit.passed();) {
    reaped += channel->reap(std::span(out).subspan(reaped));
  }
  EXPECT_EQ(reaped, 4u);
  EXPECT_EQ(channel->in_flight(), 0u);
  EXPECT_TRUE(channel->submit(read_io(0, 4096, data.get(), 5)));
  EXPECT_EQ(channel->in_flight(), 1u);
  channel->push();
  for (const deadline limit = deadline::after_ms(10'000); channel->in_flight() > 0 && !limit.passed();) {
    channel->reap(out);
  }
}

TEST(RamStore, ChannelDepthLimit) {
  auto s = open_uri("ram:1M");
  check_depth_limit(*s);
  EXPECT_THROW(s->open_channel(0), std::invalid_argument);
}

TEST(FileStore, ChannelDepthLimit) {
  temp_file file;
  auto s = open_uri("file:" + file.path() + "?create=1M");
  check_depth_limit(*s);
  EXPECT_THROW(s->open_channel(0), std::invalid_argument);
}

void check_bounds(store& s) {
  auto channel = s.open_channel(4);
  aligned_buffer data = make_buffer(8192);
  const std::uint64_t end = s.capacity_bytes();
  EXPECT_EQ(run_one(*channel, read_io(end - 4096, 8192, data.get())), -EINVAL);
  EXPECT_EQ(run_one(*channel, write_io(end, 512, data.get())), -EINVAL);
  EXPECT_EQ(run_one(*channel, read_io(~std::uint64_t{0} - 511, 1024, data.get())), -EINVAL);
  EXPECT_EQ(run_one(*channel, read_io(100, 512, data.get())), -EINVAL);
  EXPECT_EQ(run_one(*channel, read_io(0, 100, data.get())), -EINVAL);
  EXPECT_EQ(run_one(*channel, write_io(0, 512, nullptr)), -EFAULT);
  EXPECT_EQ(run_one(*channel, read_io(end - 512, 512, data.get())), 512);
  EXPECT_EQ(run_one(*channel, {store_op::flush, 0, 0, nullptr, 0}), 0);
}

TEST(RamStore, RejectsOutOfRangeAndMisalignedIo) {
  auto s = open_uri("ram:1M");
  check_bounds(*s);
}

// The kernel may still be writing into these buffers when the channel goes, so the channel
// must wait for them before the test frees the buffers.
TEST(FileStore, ChannelWaitsOutItsIoWhenDestroyed) {
  temp_file file;
  auto s = open_uri("file:" + file.path() + "?create=1M");
  aligned_buffer data = make_buffer(8 * (64 << 10));
  const std::uint64_t start = now_ns();
  {
    auto channel = s->open_channel(8);
    for (std::uint64_t i = 0; i < 6; ++i) {
      ASSERT_TRUE(channel->submit(read_io(i * (64 << 10), 64 << 10, data.get() + i * (64 << 10), i)));
    }
    channel->push();
    ASSERT_TRUE(channel->submit(read_io(0, 64 << 10, data.get() + 6 * (64 << 10), 6)));  // never pushed
    ASSERT_TRUE(channel->submit(read_io(1u << 20, 512, data.get(), 7)));                 // decided at submit
  }
  EXPECT_LT(now_ns() - start, 1'000'000'000u);  // well inside the drain limit: nothing hung
  auto again = s->open_channel(1);
  EXPECT_EQ(run_one(*again, read_io(0, 4096, data.get())), 4096);
}

TEST(FileStore, RejectsOutOfRangeAndMisalignedIo) {
  temp_file file;
  auto s = open_uri("file:" + file.path() + "?create=1M");
  check_bounds(*s);
}

TEST(RamStore, AccountOnlyReadCopiesNothing) {
  auto s = open_uri("ram:1M?read_us=50");
  auto channel = s->open_channel(2);
  aligned_buffer data = make_buffer(8192, std::byte{0x5A});
  ASSERT_EQ(run_one(*channel, write_io(4096, 8192, data.get())), 8192);
  const std::uint64_t start = now_ns();
  EXPECT_EQ(run_one(*channel, read_io(4096, 8192, nullptr)), 8192);
  EXPECT_GE(now_ns() - start, 50'000u);  // still timed like a real read
  EXPECT_EQ(std::memcmp(s->host_view() + 4096, data.get(), 8192), 0);
}

TEST(FileStore, NullBufferReadIsAnError) {
  temp_file file;
  auto s = open_uri("file:" + file.path() + "?create=1M");
  auto channel = s->open_channel(2);
  EXPECT_EQ(run_one(*channel, read_io(0, 4096, nullptr)), -EFAULT);
}

// ---------------------------------------------------------------------------------------
// Fault injection: block 10 of 512-byte blocks

void check_eio(store& s) {
  auto channel = s.open_channel(4);
  aligned_buffer data = make_buffer(8 * 512, std::byte{0x11});
  aligned_buffer read = make_buffer(8 * 512, std::byte{0xEE});
  EXPECT_EQ(run_one(*channel, write_io(8 * 512, 4 * 512, data.get())), -EIO);
  EXPECT_EQ(run_one(*channel, read_io(10 * 512, 512, read.get())), -EIO);
  EXPECT_EQ(run_one(*channel, read_io(9 * 512, 2 * 512, read.get())), -EIO);
  EXPECT_EQ(read[0], std::byte{0xEE});                                            // nothing was copied
  EXPECT_EQ(run_one(*channel, write_io(2 * 512, 8 * 512, data.get())), 8 * 512);  // ends before block 10
  EXPECT_EQ(run_one(*channel, read_io(11 * 512, 4 * 512, read.get())), 4 * 512);
}

void check_short(store& s) {
  auto channel = s.open_channel(4);
  aligned_buffer data = make_buffer(4 * 512, std::byte{0x22});
  aligned_buffer read = make_buffer(4 * 512, std::byte{0xEE});
  EXPECT_EQ(run_one(*channel, write_io(8 * 512, 4 * 512, data.get())), 2 * 512);
  EXPECT_EQ(run_one(*channel, read_io(8 * 512, 4 * 512, read.get())), 2 * 512);
  EXPECT_TRUE(std::all_of(read.get(), read.get() + 2 * 512, [](std::byte b) { return b == std::byte{0x22}; }));
  EXPECT_TRUE(
      std::all_of(read.get() + 2 * 512, read.get() + 4 * 512, [](std::byte b) { return b == std::byte{0xEE}; }));
  EXPECT_EQ(run_one(*channel, read_io(10 * 512, 512, read.get())), 0);
  EXPECT_EQ(run_one(*channel, read_io(11 * 512, 512, read.get())), 512);
  // Blocks 10 and 11 were never written: the short write stopped before them.
  aligned_buffer after = make_buffer(2 * 512, std::byte{0xEE});
  EXPECT_EQ(run_one(*channel, read_io(11 * 512, 512, after.get())), 512);
  EXPECT_EQ(after[0], std::byte{0});
}

TEST(RamStore, FaultEio) {
  auto s = open_uri("ram:1M?fault=eio@10");
  check_eio(*s);
}

TEST(RamStore, FaultShort) {
  auto s = open_uri("ram:1M?fault=short@10");
  check_short(*s);
  EXPECT_EQ(s->host_view()[10 * 512], std::byte{0});
}

TEST(FileStore, FaultEio) {
  temp_file file;
  auto s = open_uri("file:" + file.path() + "?create=1M&fault=eio@10");
  check_eio(*s);
}

TEST(FileStore, FaultShort) {
  temp_file file;
  auto s = open_uri("file:" + file.path() + "?create=1M&fault=short@10");
  check_short(*s);
}

// Block 10 hangs: an I/O touching it stays in flight, the others still complete.
void check_hang(store& s) {
  auto channel = s.open_channel(4);
  aligned_buffer data = make_buffer(4 * 512, std::byte{0x33});
  ASSERT_TRUE(channel->submit(read_io(9 * 512, 2 * 512, data.get(), 1)));
  ASSERT_TRUE(channel->submit(write_io(11 * 512, 512, data.get(), 2)));
  channel->push();
  std::array<store_result, 4> reaped{};
  std::size_t got = 0;
  detail::poll_until([&] { return (got = channel->reap(reaped)) != 0; }, deadline::after_ms(5'000));
  ASSERT_EQ(got, 1u);
  EXPECT_EQ(reaped[0].tag, 2u);
  EXPECT_EQ(reaped[0].result, 512);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(channel->reap(reaped), 0u);
  EXPECT_EQ(channel->in_flight(), 1u);
}

// Block 10 crashes the thread that submits an I/O touching it, naming the store and block.
void check_crash(store& s) {
  auto channel = s.open_channel(4);
  aligned_buffer data = make_buffer(4 * 512, std::byte{0x44});
  EXPECT_EQ(run_one(*channel, read_io(11 * 512, 512, data.get())), 512);
  try {
    channel->submit(read_io(8 * 512, 4 * 512, data.get()));
    ADD_FAILURE() << "an I/O touching the crash block was accepted";
  } catch (const std::exception& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(s.uri()), std::string::npos) << message;
    EXPECT_NE(message.find("injected crash at LBA 10"), std::string::npos) << message;
  }
}

// Which of `count` one-block I/Os (reads, then writes) fail with EIO; a fresh store each time.
std::vector<bool> random_failures(const std::string& uri, std::size_t count) {
  auto s = open_uri(uri);
  auto channel = s->open_channel(16);
  aligned_buffer data = make_buffer(512, std::byte{0x55});
  std::vector<store_io> ios;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t offset = (i * 7 % 2048) * 512;
    ios.push_back(i < count / 2 ? read_io(offset, 512, data.get(), i) : write_io(offset, 512, data.get(), i));
  }
  std::vector<bool> failed;
  for (const std::int64_t r : run_all(*channel, ios)) {
    EXPECT_TRUE(r == 512 || r == -EIO) << r;
    failed.push_back(r == -EIO);
  }
  return failed;
}

double failure_rate(const std::vector<bool>& failed, std::size_t begin, std::size_t end) {
  return static_cast<double>(std::count(failed.begin() + static_cast<std::ptrdiff_t>(begin),
                                        failed.begin() + static_cast<std::ptrdiff_t>(end), true)) /
         static_cast<double>(end - begin);
}

// About a fraction P fails, the same I/Os for the same seed, others for another seed; the
// one-direction kinds leave the other direction alone.
void check_random(const std::string& prefix) {
  constexpr std::size_t count = 4000;
  const std::vector<bool> first = random_failures(prefix + "fault=random@0.2:11", count);
  EXPECT_NEAR(failure_rate(first, 0, count), 0.2, 0.03);
  EXPECT_EQ(random_failures(prefix + "fault=random@0.2:11", count), first);
  EXPECT_NE(random_failures(prefix + "fault=random@0.2:12", count), first);
  const std::vector<bool> reads = random_failures(prefix + "fault=random_read@0.3:5", count);
  EXPECT_NEAR(failure_rate(reads, 0, count / 2), 0.3, 0.04);
  EXPECT_EQ(failure_rate(reads, count / 2, count), 0.0);
  const std::vector<bool> writes = random_failures(prefix + "fault=random_write@0.3:5", count);
  EXPECT_EQ(failure_rate(writes, 0, count / 2), 0.0);
  EXPECT_NEAR(failure_rate(writes, count / 2, count), 0.3, 0.04);
  EXPECT_EQ(failure_rate(random_failures(prefix + "fault=random@1:3", 64), 0, 64), 1.0);
  EXPECT_EQ(failure_rate(random_failures(prefix + "fault=random@0:3", 64), 0, 64), 0.0);
}

TEST(RamStore, FaultHang) {
  auto s = open_uri("ram:1M?fault=hang@10");
  check_hang(*s);
}

TEST(RamStore, FaultCrash) {
  auto s = open_uri("ram:1M?fault=crash@10");
  check_crash(*s);
}

TEST(RamStore, FaultRandom) { check_random("ram:1M?"); }

// Repeated faults all apply: EIO at block 10 and a short transfer before block 20.
TEST(RamStore, RepeatedFaultsAllApply) {
  auto s = open_uri("ram:1M?fault=eio@10&fault=short@20");
  auto channel = s->open_channel(4);
  aligned_buffer data = make_buffer(4 * 512, std::byte{0x66});
  EXPECT_EQ(run_one(*channel, read_io(9 * 512, 2 * 512, data.get())), -EIO);
  EXPECT_EQ(run_one(*channel, read_io(18 * 512, 4 * 512, data.get())), 2 * 512);
}

TEST(FileStore, FaultHang) {
  temp_file file;
  auto s = open_uri("file:" + file.path() + "?create=1M&fault=hang@10");
  check_hang(*s);
}

TEST(FileStore, FaultCrash) {
  temp_file file;
  auto s = open_uri("file:" + file.path() + "?create=1M&fault=crash@10");
  check_crash(*s);
}

TEST(FileStore, FaultRandom) {
  temp_file file;
  check_random("file:" + file.path() + "?create=1M&");
}

// ---------------------------------------------------------------------------------------
// SSD profile timing

TEST(RamStore, BandwidthCapPacesReads) {
  auto s = open_uri("ram:8M?read_gbps=1");
  auto channel = s->open_channel(64);
  std::vector<store_io> reads;
  for (std::uint64_t i = 0; i < 64; ++i) reads.push_back(read_io(i * (64 << 10), 64 << 10, nullptr, i));
  const std::uint64_t start = now_ns();
  const std::vector<std::int64_t> results = run_all(*channel, reads);
  const std::uint64_t elapsed = now_ns() - start;
  const double expected_ns = 64.0 * (64 << 10) / 1.0;  // bytes at 1 byte/ns
  EXPECT_GE(static_cast<double>(elapsed), 0.9 * expected_ns);
  for (const std::int64_t r : results) EXPECT_EQ(r, 64 << 10);
}

TEST(RamStore, BandwidthIsSharedAcrossChannels) {
  auto s = open_uri("ram:8M?read_gbps=1");
  const std::uint64_t start = now_ns();
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < 4; ++t) {
    workers.emplace_back([&s, t] {
      auto channel = s->open_channel(16);
      std::vector<store_io> reads;
      for (std::uint64_t i = 0; i < 16; ++i) reads.push_back(read_io((t * 16 + i) * (64 << 10), 64 << 10, nullptr, i));
      run_all(*channel, reads);
    });
  }
  for (std::thread& w : workers) w.join();
  EXPECT_GE(static_cast<double>(now_ns() - start), 0.9 * 64.0 * (64 << 10));
}

TEST(RamStore, IopsCapPacesSmallIo) {
  auto s = open_uri("ram:1M?iops=20000");
  auto channel = s->open_channel(32);
  std::vector<store_io> ios;
  for (std::uint64_t i = 0; i < 40; ++i) ios.push_back(read_io(i * 512, 512, nullptr, i));
  const std::uint64_t start = now_ns();
  run_all(*channel, ios);
  EXPECT_GE(static_cast<double>(now_ns() - start), 0.9 * 40 / 20000.0 * 1e9);
}

TEST(RamStore, LatencyHoldsBackCompletion) {
  auto s = open_uri("ram:1M?read_us=200");
  auto channel = s->open_channel(4);
  aligned_buffer data = make_buffer(4096);
  std::array<store_result, 4> out{};
  const std::uint64_t start = now_ns();
  ASSERT_TRUE(channel->submit(read_io(0, 4096, data.get(), 1)));
  channel->push();
  std::size_t reaped = 0;
  std::uint64_t reaped_at = 0;
  for (const deadline limit = deadline::after_ms(5'000); reaped == 0 && !limit.passed();) {
    reaped = channel->reap(out);
    reaped_at = now_ns();
  }
  ASSERT_EQ(reaped, 1u);
  EXPECT_GE(reaped_at - start, 200'000u);
  EXPECT_EQ(out[0].tag, 1u);
  EXPECT_EQ(out[0].result, 4096);
  // Writes have no latency in this profile, and flushes never wait.
  EXPECT_TRUE(channel->submit(write_io(0, 4096, data.get(), 2)));
  EXPECT_TRUE(channel->submit({store_op::flush, 0, 0, nullptr, 3}));
  EXPECT_EQ(channel->reap(out), 2u);
}

// The read's latency is long enough that it is still pending at the reap however slowly the
// machine runs (sanitizers, two shared cores); nothing waits it out, since a ram: channel's
// destructor drops what is pending.
TEST(RamStore, FasterCompletionsOvertakeSlowerOnes) {
  auto s = open_uri("ram:1M?read_us=10000000");
  auto channel = s->open_channel(4);
  aligned_buffer data = make_buffer(4096);
  ASSERT_TRUE(channel->submit(read_io(0, 4096, data.get(), 1)));
  ASSERT_TRUE(channel->submit(write_io(0, 4096, data.get(), 2)));
  std::array<store_result, 4> out{};
  ASSERT_EQ(channel->reap(out), 1u);
  EXPECT_EQ(out[0].tag, 2u);
  EXPECT_EQ(channel->in_flight(), 1u);
}

}  // namespace
}  // namespace agio::proxy
