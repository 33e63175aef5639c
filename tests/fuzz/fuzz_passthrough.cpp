// libFuzzer target: the proxy controller's command validation. Each input is one 64-byte
// submission entry, a control byte and up to two pages of PRP list, submitted through
// io_handle::async_passthrough to a runtime on CPU threads with a small RAM store.
// Required: no crash, no sanitizer report, an answer by the deadline (never a hang), an NVMe
// error for every command the NVMe rules make invalid (invalid_by_spec), a successful write that stored exactly
// the memory its PRPs describe (not the passed buffer's bytes, nor a stale bounce slot's), and a
// controller that still serves a plain write and read afterwards.
//
// Input layout:
//   [0, 64)   the command (its CID is replaced by the queue's)
//   [64]      control: bits 1:0 how PRP1 is placed, 3:2 how PRP2 is placed, 5:4 which buffer
//             is passed, 7:6 how many bytes it is said to hold
//   [65, ...) the PRP list pages, copied into registered host memory
// Addresses the input gives are placed (see place()) in this process's registered regions or
// where nothing is ever registered, never at random: a random address could land in memory
// the runtime registered for itself, and a DMA there is the caller's doing, not a bug.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <vector>

#include "agio/runtime/runtime.hpp"
#include "agio/spec/nvme.hpp"

namespace {

constexpr std::uint32_t max_transfer = 2u << 20;  // the largest MDTS: PRP lists chain at this size
constexpr std::size_t data_bytes = max_transfer + 4096;
constexpr std::size_t list_bytes = 2 * 4096;
constexpr std::uint32_t test_lba = 7;

struct harness {
  agio::runtime rt;
  std::byte* host_data = nullptr;    // registered host memory
  std::byte* device_data = nullptr;  // registered memory playing GPU memory
  std::byte* list = nullptr;         // registered host memory holding the input's PRP lists
  std::unique_ptr<std::byte[]> unregistered{new std::byte[data_bytes]};
  std::byte* probe = nullptr;   // for the after-each-command health check
  std::byte* stored = nullptr;  // what a successful write left on the store, read back

  harness() : rt(options()) {
    rt.attach(agio::device_options{"ram:4M?lba=512", 1, 8});
    rt.start();
    host_data = static_cast<std::byte*>(rt.allocate_host(data_bytes));
    device_data = static_cast<std::byte*>(rt.allocate_device(data_bytes));
    list = static_cast<std::byte*>(rt.allocate_host(list_bytes));
    probe = static_cast<std::byte*>(rt.allocate_host(2 * 512));
    stored = static_cast<std::byte*>(rt.allocate_host(max_transfer));
  }

  static agio::runtime_options options() {
    agio::runtime_options o;
    o.backend = agio::backend::cpu;
    o.max_transfer_bytes = max_transfer;
    o.submit_timeout_ms = 5'000;
    o.wait_timeout_ms = 5'000;
    o.stop_timeout_ms = 5'000;
    return o;
  }

  // An input's 64-bit address, placed by `mode`: 0 where nothing is registered (a low address
  // as given, else a non-canonical one), 1 into the host data, 2 into the device data, 3 into
  // the PRP list pages. The low 12 bits survive, so misaligned addresses stay reachable; a
  // placed address may run past the end of its region.
  std::uint64_t place(std::uint64_t value, unsigned mode) const {
    const auto base = [](const std::byte* p) { return reinterpret_cast<std::uint64_t>(p); };
    switch (mode & 3u) {
      case 0: return value < 0x10000 ? value : (std::uint64_t{1} << 63) | (value & 0xffff'ffffu);
      case 1: return base(host_data) + value % (data_bytes + 4096);
      case 2: return base(device_data) + value % (data_bytes + 4096);
      default: return base(list) + value % (list_bytes + 4096);
    }
  }

  // True when [address, address + bytes) lies inside one of this process's regions.
  bool in_mine(std::uint64_t address, std::uint64_t bytes = 1) const {
    const auto inside = [=](const std::byte* p, std::size_t n) {
      const auto b = reinterpret_cast<std::uint64_t>(p);
      return address >= b && address - b <= n && bytes <= n - (address - b);
    };
    return inside(host_data, data_bytes) || inside(device_data, data_bytes) || inside(list, list_bytes);
  }
};

void stop_at_exit();

// Made on the first input and stopped when libFuzzer exits, so that no controller thread is
// still running while the process tears down.
harness& the_harness() {
  static harness* h = [] {
    auto* made = new harness;
    std::atexit(stop_at_exit);
    return made;
  }();
  return *h;
}

void stop_at_exit() {
  try {
    the_harness().rt.stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_passthrough: stop at exit: %s\n", e.what());
  }
}

struct segment {
  std::uint64_t address;
  std::uint32_t bytes;
};

// The memory a read or write of `bytes` describes by its PRPs, walked here by the NVMe rules
// independently of the controller (Base 2.0 §4.1.1). Empty when a PRP or list entry lies outside
// this process's regions: such a command has no memory to compare with.
std::vector<segment> prp_segments(const agio::spec::command& cmd, std::uint32_t bytes, const harness& h) {
  constexpr std::uint32_t page = 4096;
  std::vector<segment> out;
  const auto first = static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes, page - cmd.prp1 % page));
  out.push_back({cmd.prp1, first});
  std::uint32_t remaining = bytes - first;
  if (remaining != 0 && remaining <= page) {
    out.push_back({cmd.prp2, remaining});
    remaining = 0;
  }
  for (std::uint64_t list = cmd.prp2; remaining != 0; list += 8) {
    if (!h.in_mine(list, 8)) return {};
    std::uint64_t entry = 0;
    std::memcpy(&entry, reinterpret_cast<const void*>(list), 8);
    if (list % page == page - 8 && remaining > page) {
      list = entry - 8;  // a full list page's last entry chains to the next page
      continue;
    }
    const std::uint32_t length = std::min(remaining, page);
    out.push_back({entry, length});
    remaining -= length;
  }
  for (const segment& s : out) {
    if (!h.in_mine(s.address, s.bytes)) return {};
  }
  return out;
}

// True when the NVMe rules make `cmd` invalid: opcode, namespace, PSDT, LBA range, size, PRP1
// alignment, or a PRP or list entry that points to no registered memory (every address comes
// from place(), so "outside this process's regions" means "registered by nobody").
bool invalid_by_spec(const agio::spec::command& cmd, const agio::io::device_info& dev, const harness& h) {
  const auto op = static_cast<agio::spec::opcode>(cmd.opc());
  if (cmd.nsid != dev.nsid || ((cmd.cdw0 >> 14) & 3u) != 0) return true;
  if (op == agio::spec::opcode::flush) return false;
  if (op != agio::spec::opcode::read && op != agio::spec::opcode::write) return true;
  if (cmd.slba() >= dev.capacity_blocks || cmd.blocks() > dev.capacity_blocks - cmd.slba()) return true;
  if (std::uint64_t{cmd.blocks()} * dev.lba_bytes > max_transfer) return true;
  const auto bytes = static_cast<std::uint32_t>(cmd.blocks() * dev.lba_bytes);
  return cmd.prp1 % 4 != 0 || prp_segments(cmd, bytes, h).empty();
}

[[noreturn]] void bug(const char* what) {
  std::fprintf(stderr, "fuzz_passthrough: %s\n", what);
  std::abort();
}

// A successful write stored what its PRPs describe.
void check_written(harness& h, const agio::io_handle& io, const agio::spec::command& cmd, std::uint32_t bytes) {
  const std::vector<segment> described = prp_segments(cmd, bytes, h);
  if (described.empty()) return;
  const agio::status s =
      io.wait_for(io.async_read(0, cmd.slba(), cmd.blocks(), h.stored), agio::deadline::after_ns(5'000'000'000));
  if (!s.ok()) bug("reading back a successful write failed");
  std::uint32_t at = 0;
  for (const segment& piece : described) {
    if (std::memcmp(h.stored + at, reinterpret_cast<const void*>(piece.address), piece.bytes) != 0) {
      bug("a successful write stored bytes other than those its PRPs describe");
    }
    at += piece.bytes;
  }
}

void check_still_serving(harness& h, const agio::io_handle& io) {
  for (std::uint32_t i = 0; i < 512; ++i) h.probe[i] = static_cast<std::byte>(i * 7 + 1);
  const auto wait = [&](agio::transaction t) { return io.wait_for(t, agio::deadline::after_ns(5'000'000'000)); };
  if (!wait(io.async_write(0, test_lba, 1, h.probe)).ok()) bug("a plain write failed after the command");
  if (!wait(io.async_read(0, test_lba, 1, h.probe + 512)).ok()) bug("a plain read failed after the command");
  if (std::memcmp(h.probe, h.probe + 512, 512) != 0) bug("a plain write and read disagree after the command");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  harness& h = the_harness();
  std::uint8_t head[65] = {};
  std::memcpy(head, data, size < sizeof head ? size : sizeof head);
  const std::size_t list_given = size > sizeof head ? size - sizeof head : 0;
  std::memset(h.list, 0, list_bytes);
  std::memcpy(h.list, data + sizeof head, list_given < list_bytes ? list_given : list_bytes);

  agio::spec::command cmd;
  std::memcpy(&cmd, head, sizeof cmd);
  const std::uint8_t control = head[64];
  cmd.prp1 = h.place(cmd.prp1, control);
  cmd.prp2 = h.place(cmd.prp2, control >> 2);
  for (std::size_t at = 0; at < list_bytes; at += 8) {
    std::uint64_t entry = 0;
    std::memcpy(&entry, h.list + at, 8);
    entry = h.place(entry & ~(std::uint64_t{3} << 62), static_cast<unsigned>(entry >> 62));
    std::memcpy(h.list + at, &entry, 8);
  }

  std::byte* const buffers[] = {nullptr, h.host_data, h.device_data, h.unregistered.get()};
  std::byte* const buffer = buffers[(control >> 4) & 3u];
  const agio::io_handle& io = h.rt.io();
  const agio::io::device_info& dev = io.devices[0];
  const std::uint64_t command_bytes = std::uint64_t{cmd.blocks()} * dev.lba_bytes;
  const std::uint64_t said[] = {0, command_bytes, data_bytes, cmd.cdw13};
  const auto bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(said[control >> 6], data_bytes));
  const bool write = static_cast<agio::spec::opcode>(cmd.opc()) == agio::spec::opcode::write;
  if (write && command_bytes <= max_transfer) {
    // Bytes no earlier command wrote, so that a write of anything but its PRPs' memory (a stale
    // bounce slot, the passed buffer) cannot match by chance.
    static std::uint32_t writes = 0;
    const int fill = static_cast<int>(1 + ++writes % 255);
    for (const segment& piece : prp_segments(cmd, static_cast<std::uint32_t>(command_bytes), h)) {
      std::memset(reinterpret_cast<void*>(piece.address), fill, piece.bytes);
    }
  }

  // Judged before the command runs: a read may overwrite its own PRP list (a list page may
  // also be a data page), after which the list no longer says what the command was.
  const bool invalid = invalid_by_spec(cmd, dev, h);
  const agio::status s =
      io.wait_for(io.async_passthrough(0, cmd, buffer, bytes), agio::deadline::after_ns(5'000'000'000));
  if (!s.finished() || s.result == agio::outcome::timeout) bug("a command was not answered within 5 s");
  if (invalid && s.result != agio::outcome::nvme_error) {
    bug("an invalid command was not answered with an NVMe error");
  }
  if (s.ok() && write) {
    check_written(h, io, cmd, static_cast<std::uint32_t>(command_bytes));
  }
  check_still_serving(h, io);
  return 0;
}
