// Crash consistency: a child process writes records (block_record.hpp) to a file: store through
// agio and reports each write once agio has made it durable; the parent ends the child and then
// checks the file: every reported write (or a later one of the same block) is there, whole.
//
//   agio_crash_test --writer direct|cache --ending kill|stop [--rounds N] [--seed S]
//
// writer direct: io_handle::write, then async_flush + wait, then report (two threads).
// writer cache:  writes through a small software_cache (evicting as it goes), then flush(),
//                then report.
// ending kill:   SIGKILL at a random moment after the first report.
// ending stop:   the child reports every acknowledged write at once (no flush of its own); the
//                parent asks it to stop, and it calls runtime::stop() while its writers go on
//                writing. stop() must make every acknowledged write durable.
//
// The parent stays single-threaded and execs the child as a mode of this binary, so no
// runtime's threads are ever forked.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "agio/cache/policies/clock.hpp"
#include "agio/runtime/software_cache.hpp"
#include "agio/runtime/runtime.hpp"
#include "crash/block_record.hpp"

namespace agio::crash {
namespace {

constexpr std::uint64_t store_blocks = 64;
constexpr std::uint32_t writer_threads = 2;

struct settings {
  std::string writer = "direct";
  std::string ending = "kill";
  unsigned rounds = 20;
  std::uint64_t seed = 0;
  // Child only.
  std::string path;
  std::uint64_t round = 0;
  int report_fd = -1;
};

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "agio_crash_test: %s\n", why.c_str());
  std::exit(1);
}

settings parse(int argc, char** argv) {
  settings s;
  s.seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const std::string value = argv[i + 1];
    if (key == "--writer") s.writer = value;
    else if (key == "--ending") s.ending = value;
    else if (key == "--rounds") s.rounds = static_cast<unsigned>(std::stoul(value));
    else if (key == "--seed") s.seed = std::stoull(value);
    else if (key == "--path") s.path = value;
    else if (key == "--round") s.round = std::stoull(value);
    else if (key == "--report-fd") s.report_fd = std::stoi(value);
    else fail("unknown option " + key);
  }
  if (s.writer != "direct" && s.writer != "cache") fail("--writer is direct or cache");
  if (s.ending != "kill" && s.ending != "stop") fail("--ending is kill or stop");
  return s;
}

// ---- child ----------------------------------------------------------------------------------

class reporter {
 public:
  explicit reporter(int fd) : fd_(fd) {}
  void sent(std::uint64_t block, std::uint64_t sequence) const {
    const report r{block, sequence};
    if (::write(fd_, &r, sizeof r) != static_cast<ssize_t>(sizeof r)) fail("child: report pipe closed");
  }

 private:
  int fd_;
};

// Each of `threads` writers owns the blocks b with b % threads == its index, so the sequences
// of a block grow in the order their writes were acknowledged.
class block_picker {
 public:
  block_picker(std::uint64_t seed, std::uint32_t thread, std::uint32_t threads, std::uint64_t round)
      : random_(seed * threads + thread), thread_(thread), threads_(threads), round_(round), counts_(store_blocks) {}
  // Next block of this thread and the sequence of its next write.
  std::pair<std::uint64_t, std::uint64_t> next() {
    const std::uint64_t block = random_() % (store_blocks / threads_) * threads_ + thread_;
    return {block, (round_ << 32) | ++counts_[block]};
  }

 private:
  std::mt19937_64 random_;
  std::uint32_t thread_;
  std::uint32_t threads_;
  std::uint64_t round_;
  std::vector<std::uint64_t> counts_;
};

runtime_options child_options() {
  runtime_options o;
  o.backend = backend::cpu;
  o.max_transfer_bytes = 16 * 1024;
  o.wait_timeout_ms = 20'000;
  o.stop_timeout_ms = 20'000;
  return o;
}

void check_status(status s, const char* what) {
  if (!s.ok()) fail(std::string("child: ") + what + " failed: " + describe(s.result));
}

// Kill ending, direct writer: write, flush, report, forever (until the parent's SIGKILL).
void direct_until_killed(runtime& rt, const settings& s, const reporter& out) {
  const io_handle io = rt.io();
  auto* buffers = static_cast<std::byte*>(rt.allocate_device(writer_threads * block_bytes));
  std::vector<std::thread> threads;
  for (std::uint32_t t = 0; t < writer_threads; ++t) {
    threads.emplace_back([&, t] {
      std::byte* buffer = buffers + t * block_bytes;
      block_picker picker(s.seed, t, writer_threads, s.round);
      const std::uint32_t lbas = block_bytes / io.lba_bytes(0);
      for (;;) {
        const auto [block, sequence] = picker.next();
        make_record(block, sequence, buffer);
        check_status(io.write(0, block * lbas, lbas, buffer), "write");
        check_status(io.wait(io.async_flush(0)), "flush");
        out.sent(block, sequence);
      }
    });
  }
  for (auto& t : threads) t.join();
}

// Kill ending, cache writer: a batch of writes into a 16-line cache, flush(), report the batch.
void cache_until_killed(runtime& rt, const settings& s, const reporter& out) {
  software_cache<cache::clock> cache(rt, {16 * block_bytes, block_bytes, 4});
  const auto handle = cache.device();
  std::vector<std::byte> buffer(block_bytes);
  std::vector<report> batch;
  block_picker picker(s.seed, 0, 1, s.round);
  std::mt19937_64 random(s.seed);
  for (;;) {
    batch.clear();
    for (std::uint64_t n = 1 + random() % 24; n > 0; --n) {
      const auto [block, sequence] = picker.next();
      make_record(block, sequence, buffer.data());
      check_status(
          handle.write_bytes(0, block, 0, block_bytes, buffer.data(), deadline::after_ns(handle.wait_timeout_ns)),
          "cache write");
      batch.push_back({block, sequence});
    }
    cache.flush();
    for (const report& r : batch) out.sent(r.block, r.sequence);
  }
}

// Stop ending: writers report every acknowledged write; stdin closing means "stop now".
// Writers keep going through stop() and a while after it: each write that succeeds then must
// be durable too, or be refused.
template <class Write>
void write_until_stopped(runtime& rt, const settings& s, const reporter& out, Write&& write_block) {
  // Set by main a while after stop() returns, read by the writers; relaxed, as it publishes no
  // data: it only ends their loops.
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (std::uint32_t t = 0; t < writer_threads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::byte> buffer(block_bytes);
      block_picker picker(s.seed, t, writer_threads, s.round);
      while (!done.load(std::memory_order_relaxed)) {
        const auto [block, sequence] = picker.next();
        make_record(block, sequence, buffer.data());
        const status written = write_block(t, block, buffer.data());
        if (written.result == outcome::stopped) continue;
        check_status(written, "write");
        out.sent(block, sequence);
      }
    });
  }
  char byte = 0;
  while (::read(STDIN_FILENO, &byte, 1) > 0) {
  }
  rt.stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  done.store(true, std::memory_order_relaxed);
  for (auto& t : threads) t.join();
}

int child_main(const settings& s) {
  const reporter out(s.report_fd);
  runtime rt(child_options());
  rt.attach(device_options{"file:" + s.path + "?lba=512", 2, 64});
  rt.start();
  if (s.ending == "kill") {
    if (s.writer == "direct") direct_until_killed(rt, s, out);
    cache_until_killed(rt, s, out);
    return 0;
  }
  if (s.writer == "direct") {
    const io_handle io = rt.io();
    auto* buffers = static_cast<std::byte*>(rt.allocate_device(writer_threads * block_bytes));
    write_until_stopped(rt, s, out, [&](std::uint32_t thread, std::uint64_t block, const std::byte* data) {
      std::byte* mine = buffers + thread * block_bytes;
      std::memcpy(mine, data, block_bytes);
      const std::uint32_t lbas = block_bytes / io.lba_bytes(0);
      return io.write(0, block * lbas, lbas, mine);
    });
    return 0;
  }
  software_cache<cache::clock> cache(rt, {16 * block_bytes, block_bytes, 4});
  const auto handle = cache.device();
  write_until_stopped(rt, s, out, [&](std::uint32_t, std::uint64_t block, const std::byte* data) {
    return handle.write_bytes(0, block, 0, block_bytes, data, deadline::after_ns(handle.wait_timeout_ns));
  });
  return 0;
}

// ---- parent ---------------------------------------------------------------------------------

struct child_process {
  pid_t pid = -1;
  int reports = -1;  // read end of the report pipe
  int control = -1;  // write end of the child's stdin
};

child_process spawn(const settings& s, std::uint64_t round, std::uint64_t seed) {
  int report_pipe[2];
  int control_pipe[2];
  if (::pipe(report_pipe) != 0 || ::pipe(control_pipe) != 0) fail("pipe: " + std::string(std::strerror(errno)));
  const std::vector<std::string> args = {"/proc/self/exe", "child",
                                         "--writer",       s.writer,
                                         "--ending",       s.ending,
                                         "--path",         s.path,
                                         "--round",        std::to_string(round),
                                         "--seed",         std::to_string(seed),
                                         "--report-fd",    std::to_string(report_pipe[1])};
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) fail("fork: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    ::dup2(control_pipe[0], STDIN_FILENO);
    ::close(control_pipe[0]);
    ::close(control_pipe[1]);
    ::close(report_pipe[0]);
    ::execv(argv[0], argv.data());
    std::_Exit(127);
  }
  ::close(report_pipe[1]);
  ::close(control_pipe[0]);
  return {pid, report_pipe[0], control_pipe[1]};
}

// Reads reports until `until` (or EOF, when the child is gone); returns false at EOF.
bool collect(int fd, std::vector<std::uint64_t>& reported, std::size_t& count,
             std::chrono::steady_clock::time_point until) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return true;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    report r;
    const ssize_t n = ::read(fd, &r, sizeof r);
    if (n == 0) return false;
    if (n != static_cast<ssize_t>(sizeof r)) fail("short report from the child");
    if (r.block >= store_blocks) fail("child reported block " + std::to_string(r.block));
    if (r.sequence <= reported[r.block]) fail("child reported block " + std::to_string(r.block) + " out of order");
    reported[r.block] = r.sequence;
    ++count;
  }
}

void verify_file(const std::string& path, const std::vector<std::uint64_t>& reported, unsigned round) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::byte> data(store_blocks * block_bytes);
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!in) fail("cannot read back " + path);
  for (std::uint64_t b = 0; b < store_blocks; ++b) {
    const std::optional<std::uint64_t> stored = read_record(b, data.data() + b * block_bytes);
    const std::string where = "round " + std::to_string(round) + ", block " + std::to_string(b);
    if (!stored) fail(where + ": torn or foreign content");
    if (*stored < reported[b]) {
      fail(where + ": lost write: the child reported sequence " + std::to_string(reported[b] >> 32) + ":" +
           std::to_string(reported[b] & 0xffffffffu) + " durable, the file holds " + std::to_string(*stored >> 32) +
           ":" + std::to_string(*stored & 0xffffffffu));
    }
  }
}

int parent_main(settings s) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("agio-crash-" + std::to_string(::getpid()) + "-" + s.writer + "-" + s.ending);
  s.path = file.string();
  {
    std::ofstream create(s.path, std::ios::binary | std::ios::trunc);
    create.seekp(static_cast<std::streamoff>(store_blocks * block_bytes - 1));
    create.put('\0');
  }
  std::printf("agio_crash_test: writer %s, ending %s, %u rounds, seed %llu, file %s\n", s.writer.c_str(),
              s.ending.c_str(), s.rounds, static_cast<unsigned long long>(s.seed), s.path.c_str());
  std::mt19937_64 random(s.seed);
  std::vector<std::uint64_t> reported(store_blocks, 0);
  std::size_t total = 0;
  for (unsigned round = 1; round <= s.rounds; ++round) {
    child_process child = spawn(s, round, random());
    std::size_t count = 0;
    const auto start = std::chrono::steady_clock::now();
    // Let the child get going (runtime start-up under a sanitizer takes a while), then end it
    // at a random moment of its writing.
    while (count == 0 &&
           collect(child.reports, reported, count, std::chrono::steady_clock::now() + std::chrono::milliseconds(10))) {
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60)) fail("child reported nothing in 60 s");
    }
    const auto delay = std::chrono::milliseconds(random() % 200);
    bool open = collect(child.reports, reported, count, std::chrono::steady_clock::now() + delay);
    if (s.ending == "kill") {
      ::kill(child.pid, SIGKILL);
    }
    ::close(child.control);
    const auto ended = std::chrono::steady_clock::now();
    while (open) {
      open = collect(child.reports, reported, count, std::chrono::steady_clock::now() + std::chrono::seconds(1));
      if (open && std::chrono::steady_clock::now() - ended > std::chrono::seconds(60)) {
        ::kill(child.pid, SIGKILL);
        fail("round " + std::to_string(round) + ": the child did not finish within 60 s of being asked to stop");
      }
    }
    int wstatus = 0;
    ::waitpid(child.pid, &wstatus, 0);
    ::close(child.reports);
    const bool killed = WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL;
    const bool clean = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    if (s.ending == "kill" ? !killed : !clean) {
      fail("round " + std::to_string(round) + ": child ended with wait status " + std::to_string(wstatus));
    }
    verify_file(s.path, reported, round);
    total += count;
    std::printf(
        "  round %u: %zu durable writes reported after %lld ms, all on the file\n", round, count,
        static_cast<long long>(
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count()));
  }
  std::filesystem::remove(file);
  std::printf("agio_crash_test: %zu reported writes over %u rounds, none lost or torn\n", total, s.rounds);
  return 0;
}

}  // namespace
}  // namespace agio::crash

int main(int argc, char** argv) {
  const bool child = argc > 1 && std::string(argv[1]) == "child";
  const agio::crash::settings s = agio::crash::parse(argc - (child ? 1 : 0), argv + (child ? 1 : 0));
  try {
    return child ? agio::crash::child_main(s) : agio::crash::parent_main(s);
  } catch (const std::exception& e) {
    agio::crash::fail(std::string(child ? "child: " : "") + e.what());
  }
}
