// The calls a user reaches for first: waits that need no retry loop, batches, byte-addressed
// transfers, statuses in words, and io_error's fields. Each runs in every completion mode.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "agio/agio.hpp"  // the one header a user includes: this suite checks it builds alone
#include "test_support.hpp"

namespace agio {
namespace {

constexpr std::uint16_t generic(std::uint8_t sc) { return spec::make_status(spec::status_type::generic, sc); }

// The byte at byte offset `at` of the test's data, as fill() writes it.
std::byte pattern(std::uint64_t at) { return static_cast<std::byte>((at * 131 + (at >> 12) * 7 + 1) & 0xff); }

std::string mode_name(const ::testing::TestParamInfo<completion_mode>& p) {
  switch (p.param) {
    case completion_mode::service: return "service";
    case completion_mode::waiters: return "waiters";
    case completion_mode::on_demand: return "on_demand";
  }
  return "?";
}

class Api : public ::testing::TestWithParam<completion_mode> {
 protected:
  // Transfers of up to 16 KiB: four 4 KiB blocks.
  void start(const std::string& uri, runtime_options opt = {}) {
    opt.backend = backend::cpu;
    opt.completion = GetParam();
    opt.max_transfer_bytes = 16 * 1024;
    if (opt.wait_timeout_ms == runtime_options{}.wait_timeout_ms) opt.wait_timeout_ms = 20'000;
    lease.reset();
    rt = std::make_unique<runtime>(opt);
    rt->attach(device_options{uri, 2, 16});
    rt->start();
    // On demand, this thread's requests need a lease held, as a job's would.
    if (GetParam() == completion_mode::on_demand) lease = std::make_unique<service_lease>(*rt);
    capacity = rt->devices()[0].capacity_blocks * rt->devices()[0].lba_bytes;
    buffer = static_cast<std::byte*>(rt->allocate_device(capacity));
  }

  template <class Body>
  decltype(auto) with(Body&& body) {
    return with_io(*rt, std::forward<Body>(body));
  }

  // Writes the pattern over the whole device, through the LBA calls.
  void fill() {
    for (std::uint64_t at = 0; at < capacity; ++at) buffer[at] = pattern(at);
    const std::uint32_t lba = rt->devices()[0].lba_bytes;
    const std::uint32_t per = 16 * 1024 / lba;
    with([&](const auto& io) {
      for (std::uint64_t b = 0; b < capacity / lba; b += per) {
        ASSERT_TRUE(io.write(0, b, per, buffer + b * lba).ok());
      }
    });
    std::memset(buffer, 0, capacity);
  }

  // Whether `bytes` at `where` hold the pattern of byte offset `at`.
  static bool holds(const std::byte* where, std::uint64_t at, std::uint64_t bytes) {
    for (std::uint64_t i = 0; i < bytes; ++i) {
      if (where[i] != pattern(at + i)) return false;
    }
    return true;
  }

  std::uint64_t submitted() const { return rt->counters()[0].submitted; }
  std::uint64_t rejected() const { return rt->counters()[0].rejected; }

  io_error checked() const { return test::check_error(*rt); }

  std::unique_ptr<runtime> rt;
  std::unique_ptr<service_lease> lease;  // given back before rt goes
  std::uint64_t capacity = 0;
  std::byte* buffer = nullptr;
};

// wait() gives up at wait_timeout_ms; wait_until_done and the synchronous calls wait through it
// for as long as the request takes, and collect its data.
TEST_P(Api, WaitUntilDoneWaitsThroughTheWaitTimeout) {
  runtime_options opt;
  opt.wait_timeout_ms = 30;
  start("ram:64K?lba=4096&read_us=150000", opt);
  fill();
  with([&](const auto& io) {
    const transaction t = io.async_read(0, 3, 1, buffer);
    EXPECT_EQ(io.wait(t).result, outcome::timeout);
    const status done = io.wait_until_done(t);
    EXPECT_TRUE(done.ok()) << to_string(done);
    EXPECT_TRUE(holds(buffer, 3 * 4096, 4096));
    EXPECT_EQ(io.wait_until_done(t).result, outcome::stale) << "collected once";

    const auto begin = std::chrono::steady_clock::now();
    const status read = io.read(0, 5, 1, buffer + 4096);
    EXPECT_TRUE(read.ok()) << to_string(read);
    EXPECT_GE(std::chrono::steady_clock::now() - begin, std::chrono::milliseconds(100));
    EXPECT_TRUE(holds(buffer + 4096, 5 * 4096, 4096));
  });
  EXPECT_NO_THROW(rt->check());
}

// A request that never finishes: wait_until_done keeps waiting, through many times
// wait_timeout_ms and through stop()'s grace time, until stop() aborts the request, and then
// returns what stop() made of it.
TEST_P(Api, WaitUntilDoneEndsWhenStopGivesUpOnTheRequest) {
  runtime_options opt;
  opt.wait_timeout_ms = 20;
  opt.stop_timeout_ms = 300;
  start("ram:64K?lba=4096&fault=hang@2", opt);
  status waited;
  const auto begin = std::chrono::steady_clock::now();
  auto returned = begin;
  with([&](const auto& io) {
    const transaction hung = io.async_read(0, 2, 1, buffer);
    std::thread waiter([&, io] {
      waited = io.wait_until_done(hung);
      returned = std::chrono::steady_clock::now();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // ten times wait_timeout_ms
    EXPECT_THROW(rt->stop(), io_error);                           // the hung read is aborted and its memory leaked
    waiter.join();
  });
  EXPECT_GE(returned - begin, std::chrono::milliseconds(200 + 300 - 50)) << "returned before stop() aborted the read";
  EXPECT_EQ(waited.result, outcome::nvme_error) << to_string(waited);
  EXPECT_EQ(waited.nvme_status, generic(spec::generic::aborted_sq_deletion)) << to_string(waited);
}

// wait_all collects every transaction (their records all come back) and returns the first
// failure in their order, with its index.
TEST_P(Api, WaitAllCollectsEveryTransactionAndReturnsTheFirstFailure) {
  runtime_options opt;
  opt.transaction_records = 8;
  start("ram:64K?lba=4096", opt);
  fill();
  with([&](const auto& io) {
    for (int round = 0; round < 3; ++round) {
      std::vector<transaction> ts;
      for (std::uint64_t k = 0; k < 8; ++k) {
        // Request 2 reads past the end, request 5 has zero blocks (refused before submission).
        const std::uint64_t lba = k == 2 ? 16 : k;
        ts.push_back(io.async_read(0, lba, k == 5 ? 0 : 1, buffer + k * 4096));
      }
      std::uint32_t failed = 99;
      const status s = io.wait_all(ts, &failed);
      EXPECT_EQ(failed, 2u);
      EXPECT_EQ(s.result, outcome::nvme_error) << to_string(s);
      EXPECT_EQ(s.nvme_status, generic(spec::generic::lba_out_of_range));
      for (std::uint64_t k : {0, 1, 3, 4, 6, 7}) EXPECT_TRUE(holds(buffer + k * 4096, k * 4096, 4096)) << k;
      for (const transaction& t : ts) EXPECT_TRUE(io.ready(t));
    }
    // Every record came back: eight more requests are all accepted.
    std::vector<transaction> ts;
    for (std::uint64_t k = 0; k < 8; ++k) ts.push_back(io.async_read(0, k, 1, buffer + k * 4096));
    std::uint32_t failed = 99;
    EXPECT_TRUE(io.wait_all(ts, &failed).ok());
    EXPECT_EQ(failed, 8u);
  });
}

// read_all/write_all run more requests than a thread keeps in flight, and every one of them.
TEST_P(Api, BatchesWriteAndReadEveryRequest) {
  start("ram:256K?lba=512");
  constexpr std::uint32_t count = 100;  // more than batch_window()
  std::vector<block_request> writes;
  std::vector<block_request> reads;
  auto* source = static_cast<std::byte*>(rt->allocate_device(count * 1024));
  for (std::uint32_t k = 0; k < count; ++k) {
    // Two blocks at LBA 5k + 1: scattered, not overlapping.
    const std::uint64_t lba = 5 * k + 1;
    for (std::uint32_t i = 0; i < 1024; ++i) source[k * 1024 + i] = pattern(lba * 512 + i);
    writes.push_back({0, lba, 2, source + k * 1024});
    reads.push_back({0, lba, 2, buffer + k * 1024});
  }
  with([&](const auto& io) {
    EXPECT_LT(io.batch_window(), count);
    const std::uint64_t before = submitted();
    std::uint32_t failed = 0;
    EXPECT_TRUE(io.write_all(writes, &failed).ok());
    EXPECT_EQ(failed, count);
    EXPECT_TRUE(io.read_all(reads).ok());
    EXPECT_EQ(submitted() - before, 2 * count);
    for (std::uint32_t k = 0; k < count; ++k) EXPECT_TRUE(holds(buffer + k * 1024, reads[k].lba * 512, 1024)) << k;

    // One bad request among them: the rest still run, and its index comes back.
    reads[40].lba = 1'000'000;
    std::memset(buffer, 0, count * 1024);
    const status s = io.read_all(reads, &failed);
    EXPECT_EQ(s.nvme_status, generic(spec::generic::lba_out_of_range)) << to_string(s);
    EXPECT_EQ(failed, 40u);
    EXPECT_TRUE(holds(buffer + 99 * 1024, reads[99].lba * 512, 1024));
  });
}

// Byte-addressed calls: aligned ranges move the right bytes, ranges longer than one transfer are
// split, and a misaligned offset or size is refused before anything is issued.
TEST_P(Api, ByteAddressedCallsCheckAlignmentAndSplitLongRanges) {
  start("ram:256K?lba=4096");
  fill();
  with([&](const auto& io) {
    EXPECT_EQ(io.lba_bytes(0), 4096u);
    const transaction t = io.async_read_bytes(0, 3 * 4096, 2 * 4096, buffer);
    EXPECT_TRUE(io.wait_until_done(t).ok());
    EXPECT_TRUE(holds(buffer, 3 * 4096, 2 * 4096));

    // 200 KiB from offset 8 KiB: thirteen transfers of at most 16 KiB.
    std::uint64_t before = submitted();
    EXPECT_TRUE(io.read_bytes(0, 8192, 200 * 1024, buffer).ok());
    EXPECT_EQ(submitted() - before, 13u);
    EXPECT_TRUE(holds(buffer, 8192, 200 * 1024));

    // Write a range back shifted by one block, and read it.
    EXPECT_TRUE(io.write_bytes(0, 4096, 40 * 1024, buffer).ok());
    std::memset(buffer, 0, 64 * 1024);
    EXPECT_TRUE(io.read_bytes(0, 4096, 40 * 1024, buffer).ok());
    EXPECT_TRUE(holds(buffer, 8192, 40 * 1024));

    before = submitted();
    const std::uint64_t refused = rejected();
    for (const status s :
         {io.read_bytes(0, 100, 4096, buffer), io.read_bytes(0, 4096, 4095, buffer),
          io.write_bytes(0, 4097, 1 << 20, buffer), io.wait_until_done(io.async_read_bytes(0, 512, 4096, buffer)),
          io.wait_until_done(io.async_write_bytes(0, 0, 1, buffer))}) {
      EXPECT_EQ(s.result, outcome::misaligned) << to_string(s);
    }
    EXPECT_EQ(submitted(), before) << "a misaligned request issued something";
    EXPECT_EQ(rejected() - refused, 5u);

    // Zero bytes is refused as zero blocks is; one transfer at most for the async form.
    EXPECT_EQ(io.read_bytes(0, 0, 0, buffer).result, outcome::invalid_argument);
    EXPECT_EQ(io.wait_until_done(io.async_read_bytes(0, 0, 20 * 1024, buffer)).result, outcome::invalid_argument);
    EXPECT_EQ(io.read_bytes(7, 0, 4096, buffer).result, outcome::invalid_argument);
    // Past the end: the pieces beyond it fail with the NVMe status.
    EXPECT_EQ(io.read_bytes(0, capacity - 8192, 16384, buffer).nvme_status, generic(spec::generic::lba_out_of_range));
  });
  const io_error e = checked();
  ASSERT_TRUE(e.has_request()) << e.what();
  EXPECT_EQ(e.refusal(), io::failure_cause::misaligned);
  EXPECT_EQ(e.result().result, outcome::misaligned);
  EXPECT_EQ(e.request().byte_offset, 100u);
  EXPECT_EQ(e.request().byte_count, 4096u);
  EXPECT_EQ(e.opcode(), spec::opcode::read);
  EXPECT_EQ(e.uri(), "ram:256K?lba=4096");
  EXPECT_NE(std::string(e.what()).find("byte offset 100 is not a multiple of the device's 4096-byte LBA"),
            std::string::npos)
      << e.what();
}

// An unregistered buffer and a misaligned one: the controller answers with NVMe statuses, and
// check() says what the caller did, with the status beside it.
TEST_P(Api, CheckSaysWhatWasWrongWithTheBuffer) {
  start("ram:64K?lba=512");
  std::vector<std::byte> unregistered(4096);
  with([&](const auto& io) {
    const status s = io.read(0, 3, 2, unregistered.data());
    EXPECT_EQ(s.nvme_status, generic(spec::generic::data_transfer_error)) << to_string(s);
  });
  const io_error e = checked();
  ASSERT_TRUE(e.has_request()) << e.what();
  EXPECT_EQ(e.device(), 0u);
  EXPECT_EQ(e.uri(), "ram:64K?lba=512");
  EXPECT_EQ(e.opcode(), spec::opcode::read);
  EXPECT_EQ(e.lba(), 3u);
  EXPECT_EQ(e.blocks(), 2u);
  EXPECT_EQ(e.result().result, outcome::nvme_error);
  EXPECT_EQ(e.nvme_status(), generic(spec::generic::data_transfer_error));
  EXPECT_EQ(e.refusal(), io::failure_cause::completed);
  EXPECT_EQ(e.request().buffer, reinterpret_cast<std::uint64_t>(unregistered.data()));
  EXPECT_EQ(e.error_number(), 0);
  const std::string what = e.what();
  EXPECT_NE(what.find("buffer not registered with the runtime"), std::string::npos) << what;
  EXPECT_NE(what.find("NVMe status 0x4004 (data transfer error)"), std::string::npos) << what;
}

TEST_P(Api, CheckSaysABufferIsMisaligned) {
  start("ram:64K?lba=512");
  with([&](const auto& io) { EXPECT_FALSE(io.write(0, 1, 1, buffer + 1).ok()); });
  const io_error e = checked();
  EXPECT_EQ(e.opcode(), spec::opcode::write);
  EXPECT_EQ(e.nvme_status(), generic(spec::generic::prp_offset_invalid));
  const std::string what = e.what();
  EXPECT_NE(what.find("buffer misaligned: offset 1, needs 4-byte alignment"), std::string::npos) << what;
  EXPECT_NE(what.find("NVMe status 0x4013 (PRP offset invalid)"), std::string::npos) << what;
}

TEST_P(Api, CheckSaysABufferRunsPastItsRegisteredMemory) {
  start("ram:64K?lba=512");
  with([&](const auto& io) { EXPECT_FALSE(io.read(0, 0, 2, buffer + capacity - 512).ok()); });
  const std::string what = checked().what();
  EXPECT_NE(what.find("runs past the end of the memory registered with the runtime"), std::string::npos) << what;
}

// A store error carries its errno as a field.
TEST_P(Api, StoreErrorsCarryTheirErrno) {
  start("ram:64K?lba=512&fault=eio@7");
  with([&](const auto& io) { EXPECT_FALSE(io.read(0, 6, 2, buffer).ok()); });
  const io_error e = checked();
  EXPECT_EQ(e.error_number(), EIO);
  EXPECT_EQ(e.lba(), 6u);
  EXPECT_EQ(e.nvme_status(), spec::make_status(spec::status_type::media, spec::media::unrecovered_read_error));
  EXPECT_NE(e.request().store_error.find(std::strerror(EIO)), std::string::npos) << e.request().store_error;
}

INSTANTIATE_TEST_SUITE_P(EveryCompletionMode, Api,
                         ::testing::Values(completion_mode::service, completion_mode::waiters,
                                           completion_mode::on_demand),
                         mode_name);

// The end of wait_until_done, on a handle over hand-made state: a request nobody will finish
// (as after a stop() that could not retire it) is waited for until stop() is over, and then
// ends with `stopped`; wait_for still ends with `timeout` at its deadline.
TEST(WaitUntilDone, EndsWithStoppedOnceStopIsOverAndTheRequestUnfinished) {
  io::transaction_record record{};
  record.state = io::record_state::taken_from(0);
  io::runtime_control control{};
  io::io_state state{};
  state.records = &record;
  state.record_count = 1;
  state.control = &control;
  state.wait_timeout_ns = 1'000'000;
  const io_handle io{state};
  const transaction t{0, io::record_state::generation(record.state)};

  EXPECT_EQ(io.wait_for(t, deadline::after_ms(20)).result, outcome::timeout);
  status waited;
  const auto begin = std::chrono::steady_clock::now();
  std::thread waiter([&] { waited = io.wait_until_done(t); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a hundred wait_timeouts
  std::atomic_ref<std::uint32_t>(control.stopped).store(1, std::memory_order_relaxed);
  waiter.join();
  EXPECT_GE(std::chrono::steady_clock::now() - begin, std::chrono::milliseconds(100));
  EXPECT_EQ(waited.result, outcome::stopped) << to_string(waited);

  // A request that did finish still gives its result after the stop.
  const auto result = static_cast<std::uint64_t>(status{outcome::success, 0}.pack());
  std::atomic_ref<std::uint64_t>(record.state).fetch_or(result, std::memory_order_release);
  EXPECT_TRUE(io.wait_until_done(t).ok());
}

TEST(RuntimeOptions, LanesPerQueueIsAPowerOfTwoUpToAWarp) {
  for (const std::uint32_t lanes : {0u, 3u, 12u, 64u}) {
    runtime_options opt;
    opt.backend = backend::cpu;
    opt.lanes_per_queue = lanes;
    EXPECT_THROW(runtime{opt}, std::invalid_argument) << lanes;
  }
  for (const std::uint32_t lanes : {1u, 8u, 32u}) {
    runtime_options opt;
    opt.backend = backend::cpu;
    opt.lanes_per_queue = lanes;
    EXPECT_NO_THROW(runtime{opt}) << lanes;
  }
}

TEST(RuntimeOptions, ServiceStagingIsWholeSlotsUpToThirtyTwo) {
  for (const std::uint32_t bytes : {1u, 4095u, 6144u, 33u * 4096u}) {
    runtime_options opt;
    opt.backend = backend::cpu;
    opt.service_staging_bytes = bytes;
    EXPECT_THROW(runtime{opt}, std::invalid_argument) << bytes;
  }
  for (const std::uint32_t bytes : {0u, 4096u, 32u * 4096u}) {
    runtime_options opt;
    opt.backend = backend::cpu;
    opt.service_staging_bytes = bytes;
    EXPECT_NO_THROW(runtime{opt}) << bytes;
  }
}

// Statuses in words: describe() for a kernel's printf, to_string() for the host.
TEST(StatusText, EveryOutcomeHasItsOwnWordsAndNvmeStatusesAreDecoded) {
  const status lba{outcome::nvme_error, spec::make_status(spec::status_type::generic, spec::generic::lba_out_of_range)};
  EXPECT_EQ(to_string(lba), "NVMe status 0x4080 (LBA out of range)");
  EXPECT_STREQ(describe(lba), "LBA out of range");
  const status media{outcome::nvme_error,
                     spec::make_status(spec::status_type::media, spec::media::unrecovered_read_error, false)};
  EXPECT_EQ(to_string(media), "NVMe status 0x0281 (unrecovered read error)");
  EXPECT_EQ(to_string({outcome::success, 0}), "success");
  EXPECT_EQ(to_string({outcome::timeout, 0}), "deadline passed");
  EXPECT_EQ(to_string({outcome::stopped, 0}), "runtime stopped");
  EXPECT_EQ(to_string({outcome::misaligned, 0}), "byte offset or size not a multiple of the device's LBA size");
  std::vector<std::string> seen;
  for (std::uint8_t o = 0; o <= static_cast<std::uint8_t>(outcome::misaligned); ++o) {
    const std::string text = describe(status{static_cast<outcome>(o), generic(spec::generic::internal_error)});
    EXPECT_NE(text, "unknown") << int{o};
    for (const std::string& other : seen) EXPECT_NE(text, other) << int{o};
    seen.push_back(text);
  }
  // A packed status, as a kernel stores it, comes back with the same words.
  EXPECT_EQ(to_string(status::unpack(lba.pack())), to_string(lba));
}

}  // namespace
}  // namespace agio
