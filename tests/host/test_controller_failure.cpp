// A controller thread that fails, and a store I/O that never completes: every request still
// gets an answer, the cause reaches check(), and stop() keeps to its timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>

#include "agio/runtime/runtime.hpp"
#include "agio/spec/status.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

constexpr std::uint16_t generic(std::uint8_t sc) { return spec::make_status(spec::status_type::generic, sc); }

constexpr std::uint32_t stop_timeout_ms = 600;
// Thread start-up and sanitizer overhead on a shared CI machine, beyond stop_timeout_ms.
constexpr std::uint32_t stop_slack_ms = 700;

class ControllerFailure : public ::testing::TestWithParam<completion_mode> {
 protected:
  // One queue pair, so one controller thread serves every request of the test.
  void start(const std::string& uri) {
    runtime_options opt;
    opt.backend = backend::cpu;
    opt.completion = GetParam();
    opt.max_transfer_bytes = 4096;
    opt.stop_timeout_ms = stop_timeout_ms;
    opt.wait_timeout_ms = 5'000;
    rt = std::make_unique<runtime>(opt);
    rt->attach(device_options{uri, 1, 16});
    rt->start();
    buffer = static_cast<std::byte*>(rt->allocate_device(16 * 4096));
  }

  template <class Body>
  decltype(auto) with(Body&& body) {
    return with_io(*rt, std::forward<Body>(body));
  }

  io_error checked() const { return test::check_error(*rt); }

  struct stop_outcome {
    std::uint64_t elapsed_ms = 0;
    std::string report;  // what stop() threw, or empty
  };

  // A stop() that does not return in time would hang the suite, so the watchdog ends the
  // process with a message instead.
  stop_outcome timed_stop() {
    const auto begin = std::chrono::steady_clock::now();
    auto done = std::async(std::launch::async, [this]() -> std::string {
      try {
        rt->stop();
      } catch (const io_error& e) {
        return e.what();
      }
      return "";
    });
    if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
      std::fprintf(stderr, "stop() has not returned after 20 s (stop_timeout_ms %u)\n", stop_timeout_ms);
      std::abort();
    }
    stop_outcome out;
    out.report = done.get();
    out.elapsed_ms = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begin).count());
    return out;
  }

  std::unique_ptr<runtime> rt;
  std::byte* buffer = nullptr;
};

// The request that touches the crash block, one already in the store beside it and one
// submitted after the failure all end with an error at once, and check() names the cause.
TEST_P(ControllerFailure, CrashFailsEveryRequestOfTheThreadAndCheckNamesTheCause) {
  start("ram:1M?lba=4096&read_us=300000&fault=crash@5");
  with([&](const auto& io) {
    const auto begin = std::chrono::steady_clock::now();
    const transaction in_store = io.async_read(0, 1, 1, buffer);
    const transaction crashing = io.async_read(0, 5, 1, buffer + 4096);
    const status crashed = io.wait(crashing);
    const status beside = io.wait(in_store);
    const status later = io.read(0, 2, 1, buffer + 2 * 4096);
    const auto waited = std::chrono::steady_clock::now() - begin;
    for (const status& s : {crashed, beside, later}) {
      EXPECT_EQ(s.result, outcome::nvme_error) << describe(s.result);
      EXPECT_EQ(s.nvme_status, generic(spec::generic::internal_error)) << std::hex << s.nvme_status;
    }
    // Failed at once: neither the store's 300 ms latency nor a wait deadline ran out.
    EXPECT_LT(waited, std::chrono::milliseconds(250));
  });
  const io_error e = checked();
  EXPECT_NE(e.controller_failure().find("injected crash at LBA 5"), std::string::npos) << e.what();
  ASSERT_TRUE(e.has_request()) << e.what();
  EXPECT_EQ(e.nvme_status(), generic(spec::generic::internal_error));
  const stop_outcome stopped = timed_stop();
  EXPECT_LT(stopped.elapsed_ms, stop_timeout_ms) << stopped.report;
}

// A request touching the hung block times out by its waiter's deadline while others are
// served; stop() gives up on it at its timeout, aborts it and says so.
TEST_P(ControllerFailure, HungStoreIoTimesOutAndStopKeepsToItsTimeout) {
  start("ram:1M?lba=4096&fault=hang@5");
  with([&](const auto& io) {
    const transaction hung = io.async_read(0, 5, 1, buffer);
    EXPECT_EQ(io.wait_for(hung, deadline::after_ms(100)).result, outcome::timeout);
    EXPECT_TRUE(io.read(0, 4, 1, buffer + 4096).ok());
    EXPECT_TRUE(io.write(0, 6, 1, buffer + 4096).ok());
  });
  const stop_outcome stopped = timed_stop();
  EXPECT_GE(stopped.elapsed_ms, stop_timeout_ms - 50) << "stop() let the hung I/O go before its timeout";
  EXPECT_LT(stopped.elapsed_ms, stop_timeout_ms + stop_slack_ms);
  EXPECT_NE(stopped.report.find("aborted"), std::string::npos) << stopped.report;
  EXPECT_NE(stopped.report.find("leak"), std::string::npos) << stopped.report;
}

INSTANTIATE_TEST_SUITE_P(BothCompletionModes, ControllerFailure,
                         ::testing::Values(completion_mode::service, completion_mode::waiters), [](const auto& test) {
                           return std::string(test.param == completion_mode::service ? "Service" : "Waiters");
                         });

}  // namespace
}  // namespace agio
