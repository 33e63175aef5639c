// Transaction handles and the record pool: a handle collects its own request's result once and
// never another's, every record comes back whatever the caller does, exhaustion is reported at
// once with its cause, and every refused request reaches check().
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "agio/runtime/runtime.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::run_threads;

constexpr std::uint32_t lba_bytes = 512;
constexpr std::uint32_t store_blocks = 2048;  // ram:1M at 512-byte LBAs

// The byte at `offset` of LBA `lba` in the test's data, different for every LBA and offset.
std::byte pattern(std::uint64_t lba, std::uint32_t offset) {
  return static_cast<std::byte>((lba * 131 + offset * 7 + 1) & 0xff);
}

runtime_options on_cpu(runtime_options opt) {
  opt.backend = backend::cpu;
  return opt;
}

struct fixture {
  runtime rt;
  std::byte* buffers = nullptr;

  fixture(runtime_options opt, const std::string& uri, std::uint32_t queue_pairs, std::uint32_t depth,
          std::size_t buffer_blocks)
      : rt(on_cpu(opt)) {
    rt.attach(device_options{uri, queue_pairs, depth});
    rt.start();
    buffers = static_cast<std::byte*>(rt.allocate_device(buffer_blocks * lba_bytes));
  }

  // Writes the pattern to the whole store, around any record-pool limit: one request at a time.
  void fill_store() {
    auto* chunk = static_cast<std::byte*>(rt.allocate_device(16 * lba_bytes));
    for (std::uint64_t first = 0; first < store_blocks; first += 16) {
      for (std::uint32_t b = 0; b < 16; ++b) {
        for (std::uint32_t i = 0; i < lba_bytes; ++i) chunk[b * lba_bytes + i] = pattern(first + b, i);
      }
      const status s = with_io(rt, [&](const auto& io) { return io.write(0, first, 16, chunk); });
      ASSERT_TRUE(s.ok()) << describe(s.result);
    }
    rt.free(chunk);
  }

  std::byte* buffer(std::size_t k) const { return buffers + k * lba_bytes; }

  bool holds(std::size_t k, std::uint64_t lba) const {
    for (std::uint32_t i = 0; i < lba_bytes; ++i) {
      if (buffer(k)[i] != pattern(lba, i)) return false;
    }
    return true;
  }

  std::string check_message() const {
    try {
      rt.check();
    } catch (const io_error& e) {
      return e.what();
    }
    return "";
  }

  io_error checked() const { return test::check_error(rt); }
};

runtime_options options(completion_mode mode) {
  runtime_options o;
  o.completion = mode;
  o.wait_timeout_ms = 20'000;
  return o;
}

std::string mode_name(const ::testing::TestParamInfo<completion_mode>& p) {
  return p.param == completion_mode::service ? "service" : "waiters";
}

class Transactions : public ::testing::TestWithParam<completion_mode> {};

// A second wait on a collected transaction is told so; it neither waits nor collects anything.
TEST_P(Transactions, SecondWaitIsStale) {
  fixture f(options(GetParam()), "ram:1M?lba=512", 1, 8, 1);
  f.fill_store();
  with_io(f.rt, [&](const auto& io) {
    const transaction t = io.async_read(0, 5, 1, f.buffer(0));
    ASSERT_TRUE(io.wait(t).ok());
    EXPECT_TRUE(f.holds(0, 5));
    const status again = io.wait_for(t, deadline::after_ms(500));
    EXPECT_EQ(again.result, outcome::stale) << describe(again.result);
    EXPECT_TRUE(io.ready(t)) << "a stale transaction has nothing left to wait for";
  });
}

// With one record, the second request reuses the first one's: a late wait on the first must
// not collect the second's result, and the second's owner still gets it.
TEST_P(Transactions, WaitOnAReusedRecordIsStaleAndTheOwnerKeepsItsResult) {
  runtime_options opt = options(GetParam());
  opt.transaction_records = 1;
  fixture f(opt, "ram:1M?lba=512&read_us=20000", 1, 8, 2);
  f.fill_store();
  with_io(f.rt, [&](const auto& io) {
    const transaction first = io.async_read(0, 1, 1, f.buffer(0));
    ASSERT_TRUE(io.wait(first).ok());
    const transaction second = io.async_read(0, 2, 1, f.buffer(1));
    ASSERT_TRUE(second.submitted());
    const status late = io.wait_for(first, deadline::after_ms(2'000));
    EXPECT_EQ(late.result, outcome::stale) << describe(late.result);
    const status owner = io.wait_for(second, deadline::after_ms(2'000));
    EXPECT_TRUE(owner.ok()) << describe(owner.result);
    EXPECT_TRUE(f.holds(1, 2));
  });
}

// Requests whose waiters gave up free their records once they finish: with 8 records, 8
// abandoned requests and then 40 more all succeed. A waiter that comes back after its timeout
// still collects its result while its record has not been reused.
TEST_P(Transactions, AbandonedRecordsAreReclaimedAndARetriedWaitStillCollects) {
  runtime_options opt = options(GetParam());
  opt.transaction_records = 8;
  opt.submit_timeout_ms = 2'000;
  fixture f(opt, "ram:1M?lba=512&read_us=20000", 2, 8, 8);
  f.fill_store();
  with_io(f.rt, [&](const auto& io) {
    std::vector<transaction> abandoned;
    for (std::uint32_t k = 0; k < 8; ++k) {
      abandoned.push_back(io.async_read(0, 100 + k, 1, f.buffer(k)));
      ASSERT_TRUE(abandoned.back().submitted());
      EXPECT_EQ(io.wait_for(abandoned.back(), deadline::after_ns(1'000)).result, outcome::timeout);
    }
    // The retry: waiting again after the timeout, before anyone needed the record.
    const status retried = io.wait(abandoned[0]);
    ASSERT_TRUE(retried.ok()) << describe(retried.result);
    EXPECT_TRUE(f.holds(0, 100));
    for (std::uint32_t k = 1; k < 8; ++k) {
      ASSERT_TRUE(detail::poll_until([&] { return io.ready(abandoned[k]); }, deadline::after_ms(10'000)));
    }
    for (std::uint32_t round = 0; round < 5; ++round) {
      std::vector<transaction> mine;
      for (std::uint32_t k = 0; k < 8; ++k) mine.push_back(io.async_read(0, round * 8 + k, 1, f.buffer(k)));
      for (std::uint32_t k = 0; k < 8; ++k) {
        const status s = io.wait(mine[k]);
        ASSERT_TRUE(s.ok()) << "round " << round << " request " << k << ": " << describe(s.result);
        EXPECT_TRUE(f.holds(k, round * 8 + k));
      }
    }
  });
  EXPECT_EQ(f.check_message(), "");
}

// Every record held: the next request is refused at once, not after submit_timeout_ms, and
// check() names the budget and the option that raises it.
TEST_P(Transactions, ExhaustionIsImmediateAndCheckSaysHowToRaiseTheBudget) {
  runtime_options opt = options(GetParam());
  opt.transaction_records = 8;
  opt.submit_timeout_ms = 5'000;
  fixture f(opt, "ram:1M?lba=512", 2, 8, 8);
  f.fill_store();
  with_io(f.rt, [&](const auto& io) {
    std::vector<transaction> held;
    for (std::uint32_t k = 0; k < 8; ++k) held.push_back(io.async_read(0, 40 + k, 1, f.buffer(k)));
    const auto begin = std::chrono::steady_clock::now();
    const transaction refused = io.async_read(0, 0, 1, f.buffer(0));
    const auto elapsed = std::chrono::steady_clock::now() - begin;
    EXPECT_FALSE(refused.submitted());
    EXPECT_EQ(io.wait(refused).result, outcome::no_resources);
    EXPECT_LT(elapsed, std::chrono::milliseconds(1'000));
    for (std::uint32_t k = 0; k < 8; ++k) {
      ASSERT_TRUE(io.wait(held[k]).ok());
      EXPECT_TRUE(f.holds(k, 40 + k));
    }
  });
  const io_error e = f.checked();
  ASSERT_TRUE(e.has_request()) << e.what();
  EXPECT_EQ(e.refusal(), io::failure_cause::no_record);
  EXPECT_EQ(e.result().result, outcome::no_resources);
  EXPECT_EQ(e.lba(), 0u);
  // The message tells the user what to raise.
  const std::string msg = e.what();
  EXPECT_NE(msg.find("all 8 transaction records in use"), std::string::npos) << msg;
  EXPECT_NE(msg.find("runtime_options::transaction_records"), std::string::npos) << msg;
  EXPECT_EQ(f.rt.counters()[0].rejected, 1u);
}

// AGILE's many-outstanding pattern on the default runtime: 16 threads each issue 512 reads
// before waiting on any; every read succeeds with its own block's data.
TEST_P(Transactions, SixteenThreadsEachHoldFiveHundredTwelveReads) {
  constexpr unsigned threads = 16;
  constexpr unsigned per_thread = 512;
  runtime_options opt;
  opt.completion = GetParam();
  fixture f(opt, "ram:1M?lba=512", 4, 256, std::size_t{threads} * per_thread);
  f.fill_store();
  with_io(f.rt, [&](const auto& io) {
    run_threads(threads, [&](unsigned t) {
      std::vector<transaction> mine;
      for (unsigned k = 0; k < per_thread; ++k) {
        const std::uint64_t lba = (t * per_thread + k * 7) % store_blocks;
        mine.push_back(io.async_read(0, lba, 1, f.buffer(std::size_t{t} * per_thread + k)));
      }
      for (unsigned k = 0; k < per_thread; ++k) {
        const status s = io.wait(mine[k]);
        ASSERT_TRUE(s.ok()) << "thread " << t << " read " << k << ": " << describe(s.result);
        ASSERT_TRUE(f.holds(std::size_t{t} * per_thread + k, (t * per_thread + k * 7) % store_blocks));
      }
    });
  });
  EXPECT_EQ(f.check_message(), "");
}

INSTANTIATE_TEST_SUITE_P(Modes, Transactions, ::testing::Values(completion_mode::service, completion_mode::waiters),
                         mode_name);

// Requests refused before submission are failures like any other: counted, and the first one
// reaches check() with its cause.
class Refused : public ::testing::Test {
 protected:
  Refused() : f(options(completion_mode::service), "ram:1M?lba=512", 1, 8, 300) {}
  fixture f;
};

TEST_F(Refused, ZeroBlocks) {
  EXPECT_EQ(f.rt.io().read(0, 9, 0, f.buffer(0)).result, outcome::invalid_argument);
  const io_error e = f.checked();
  ASSERT_TRUE(e.has_request()) << e.what();
  EXPECT_EQ(e.refusal(), io::failure_cause::zero_blocks);
  EXPECT_EQ(e.result().result, outcome::invalid_argument);
  EXPECT_EQ(e.device(), 0u);
  EXPECT_EQ(e.uri(), "ram:1M?lba=512");
  EXPECT_EQ(e.opcode(), spec::opcode::read);
  EXPECT_EQ(e.lba(), 9u);
  EXPECT_EQ(e.blocks(), 0u);
  EXPECT_EQ(e.request().buffer, 0u) << "a refused request's buffer is not recorded";
  EXPECT_EQ(f.rt.counters()[0].rejected, 1u);
}

TEST_F(Refused, TooManyBlocks) {
  EXPECT_EQ(f.rt.io().write(0, 0, 300, f.buffer(0)).result, outcome::invalid_argument);
  const io_error e = f.checked();
  EXPECT_EQ(e.refusal(), io::failure_cause::too_many_blocks);
  EXPECT_EQ(e.opcode(), spec::opcode::write);
  EXPECT_EQ(e.blocks(), 300u);
  // The message gives the maximum and the option that sets it.
  const std::string msg = e.what();
  EXPECT_NE(msg.find("transfer of 300 blocks exceeds the device's maximum of 256 (max_transfer_bytes)"),
            std::string::npos)
      << msg;
  EXPECT_EQ(f.rt.counters()[0].rejected, 1u);
}

TEST_F(Refused, NoSuchDeviceIsCountedRuntimeWide) {
  EXPECT_EQ(f.rt.io().read(7, 0, 1, f.buffer(0)).result, outcome::invalid_argument);
  const spec::command cmd = spec::make_rw(spec::opcode::read, 0, 1, 0, 1, 0, 0);
  EXPECT_EQ(f.rt.io().wait(f.rt.io().async_passthrough(3, cmd, f.buffer(0), lba_bytes)).result,
            outcome::invalid_argument);
  const io_error e = f.checked();
  EXPECT_EQ(e.refusal(), io::failure_cause::no_such_device);
  EXPECT_EQ(e.device(), 7u);
  EXPECT_EQ(e.uri(), "");
  EXPECT_NE(std::string(e.what()).find("device 7 does not exist (1 attached)"), std::string::npos) << e.what();
  EXPECT_EQ(f.rt.requests_for_unknown_devices(), 2u);
  EXPECT_EQ(f.rt.counters()[0].rejected, 0u);
}

// The first failure is the one reported, whichever kind it is.
TEST_F(Refused, FirstFailureWinsOverLaterOnes) {
  EXPECT_EQ(f.rt.io().read(0, 0, 0, f.buffer(0)).result, outcome::invalid_argument);
  EXPECT_EQ(f.rt.io().read(0, store_blocks, 1, f.buffer(0)).result, outcome::nvme_error);
  const io_error e = f.checked();
  EXPECT_EQ(e.refusal(), io::failure_cause::zero_blocks);
  EXPECT_EQ(e.lba(), 0u);
  const auto c = f.rt.counters()[0];
  EXPECT_EQ(c.rejected, 1u);
  EXPECT_EQ(c.errors, 1u);
}

// A controller that fails after a request error was recorded: check() names the failure,
// which explains whatever the failed controller's requests report, and still the request.
TEST(CheckNames, ControllerFailureAfterARequestError) {
  fixture f(options(completion_mode::service), "ram:1M?lba=512&fault=crash@5", 1, 8, 1);
  EXPECT_EQ(f.rt.io().read(0, store_blocks, 1, f.buffer(0)).result, outcome::nvme_error);
  const status crashed = f.rt.io().wait_for(f.rt.io().async_read(0, 5, 1, f.buffer(0)), deadline::after_ms(5'000));
  EXPECT_FALSE(crashed.ok());
  const io_error e = f.checked();
  EXPECT_NE(e.controller_failure().find("injected crash at LBA 5"), std::string::npos) << e.controller_failure();
  ASSERT_TRUE(e.has_request()) << e.what();
  EXPECT_EQ(e.lba(), store_blocks);
  EXPECT_EQ(e.nvme_status(), spec::make_status(spec::status_type::generic, spec::generic::lba_out_of_range));
  EXPECT_NE(std::string(e.what()).find("controller failure"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace agio
