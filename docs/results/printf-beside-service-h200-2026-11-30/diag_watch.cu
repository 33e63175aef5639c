// Appended to tests/gpu/test_gpu_cache.cu for the calls in this folder (with <chrono> and
// <cstdio> included): the two-readers pattern with short waits, stopped after 6 s, its
// progress, outcomes, counters, every line's word and the posted rings' cursors. The PHASE
// --- Throwaway diagnosis of pins by add (not for main) ---
namespace agio {
namespace {
template <class IO, bool Speaks>
struct diag_paired_job {
  cache::array_view<std::uint32_t, cache::clock, cache::no_lock_chain, cache::no_share_table, IO> arr;
  std::uint32_t blocks;
  std::uint32_t* failures;
  std::uint32_t* done;
  std::uint32_t* timeouts;
  std::uint32_t* reports;
  AGIO_HD void report(std::uint32_t t, int which, std::uint64_t i) const {
    if (detail::fetch_add<detail::scope::device>(*reports, 1u, detail::relaxed) >= 6 || !Speaks) return;
    const cache::cache_state& st = arr.cache.state;
    printf("DEV timeout t %u reader %d index %llu block %llu lock %u\n", t, which, (unsigned long long)i,
           (unsigned long long)(i / 1024), detail::load<detail::scope::device>(st.set_locks[0], detail::relaxed));
    for (int l = 0; l < 8; ++l)
      printf("DEV   line %d word %#x tag %#llx orphans %u\n", l,
             detail::load<detail::scope::device>(st.words[l], detail::relaxed),
             (unsigned long long)detail::load<detail::scope::device>(st.tags[l], detail::relaxed),
             detail::load<detail::scope::device>(st.orphan_pins[l], detail::relaxed));
  }
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    const deadline stop = deadline::after_ms(6000);
    auto columns = arr.reader(0);
    auto values = arr.reader(0);
    const std::uint64_t half = std::uint64_t{blocks} / 2 * 1024;
    std::uint32_t wrong = 0, fine = 0, late = 0;
    for (std::uint32_t k = 0; k < 4 && !stop.passed(); ++k) {
      const std::uint64_t first = ((t / 32 + k * 5) % (blocks / 2)) * 1024 + (t % 32) * 32;
      for (std::uint64_t i = first; i < first + 32 && !stop.passed(); ++i) {
        std::uint32_t c = 0, v = 0;
        const status a = columns.get(i, c, values);
        if (a.result == outcome::timeout) {
          late++;
          report(t, 0, i);
        }
        detail::fetch_add<detail::scope::device>(reports[1 + static_cast<int>(a.result) % 16], 1u, detail::relaxed);
        if (!a.ok() || c != static_cast<std::uint32_t>(i * 7 + 3)) wrong++;
        else fine++;
        const status b = values.get(half + i, v, columns);
        if (b.result == outcome::timeout) {
          late++;
          report(t, 1, half + i);
        }
        detail::fetch_add<detail::scope::device>(reports[1 + static_cast<int>(b.result) % 16], 1u, detail::relaxed);
        if (!b.ok() || v != static_cast<std::uint32_t>((half + i) * 7 + 3)) wrong++;
        else fine++;
      }
    }
    columns.release();
    values.release();
    detail::fetch_add<detail::scope::device>(*failures, wrong, detail::relaxed);
    detail::fetch_add<detail::scope::device>(*done, fine, detail::relaxed);
    detail::fetch_add<detail::scope::device>(*timeouts, late, detail::relaxed);
  }
};

void diag_peek(void* host, const void* device, std::size_t bytes) {
  static cudaStream_t s = [] {
    cudaStream_t made;
    cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking);
    return made;
  }();
  static void* pinned = [] {
    void* p = nullptr;
    cudaHostAlloc(&p, 1 << 22, cudaHostAllocDefault);
    return p;
  }();
  cudaMemcpyAsync(pinned, device, bytes, cudaMemcpyDefault, s);
  cudaStreamSynchronize(s);
  std::memcpy(host, pinned, bytes);
}

template <bool Speaks>
void diag_run() {
  runtime_options o = gpu_options();
  o.wait_timeout_ms = 1'000;
  o.submit_timeout_ms = 2'000;
  runtime rt(o);
  rt.attach(device_options{"ram:1M?lba=4096", 4, 32});
  rt.start();
  constexpr std::uint32_t blocks = 32, lines = 8;
  std::vector<std::uint32_t> words(blocks * 1024);
  for (std::uint32_t e = 0; e < words.size(); ++e) words[e] = e * 7 + 3;
  auto* data = static_cast<std::byte*>(rt.allocate_device(blocks * 4096));
  auto* counts = static_cast<std::uint32_t*>(rt.allocate_device(96));
  rt.copy_to_device(data, words.data(), blocks * 4096);
  const std::uint32_t zero[24] = {};
  rt.copy_to_device(counts, zero, 96);
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    std::printf("PHASE write\n");
    std::fflush(stdout);
    run_job(rt, 16, bench::chunk_job<IO>{io, 0, 1, data, 4096, blocks, counts});
    std::printf("PHASE cache\n");
    std::fflush(stdout);
    software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache(rt,
                                                                                        {lines * 4096, 4096, lines});
    const auto arr = cache.template array<std::uint32_t>();
    std::printf("PHASE job\n");
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    std::atomic<bool> finished{false};
    std::thread watch([&] {
      for (int waited = 0; waited < 60000 && !finished.load(); waited += 10) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if ((waited + 10) % 1000 != 0) continue;
        std::uint32_t outs[24], w[lines], lock = 0;
        diag_peek(outs, counts, 96);
        diag_peek(w, arr.cache.state.words, sizeof w);
        diag_peek(&lock, arr.cache.state.set_locks, 4);
        std::printf("WATCH %d ms reports %u outcomes", waited + 1, outs[3]);
        for (int k = 0; k < 10; ++k) std::printf(" %u", outs[4 + k]);
        std::printf(" lock %u words", lock);
        for (std::uint32_t l = 0; l < lines; ++l) std::printf(" %#x", w[l]);
        std::printf("\n");
        std::fflush(stdout);
      }
    });
    run_job(rt, 1024, diag_paired_job<IO, Speaks>{arr, blocks, counts, counts + 1, counts + 2, counts + 3});
    finished = true;
    watch.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::uint32_t got[3];
    rt.copy_to_host(got, counts, 12);
    const cache_counters c = cache.counters();
    std::printf("DIAG job %.3f s: wrong %u fine %u (of %u) timeouts %u\n", s, got[0], got[1], 1024u * 256u, got[2]);
    std::printf("DIAG hits %llu misses %llu hits_on_busy %llu coalesced %llu evictions %llu\n",
                (unsigned long long)c.hits, (unsigned long long)c.misses, (unsigned long long)c.hits_on_busy,
                (unsigned long long)c.coalesced_in_warp, (unsigned long long)c.evictions);
    const cache::cache_state& st = arr.cache.state;
    std::uint32_t w[lines], orph[lines], locks1[1];
    std::uint64_t tags[lines], turn[1];
    rt.copy_to_host(w, st.words, sizeof w);
    rt.copy_to_host(orph, st.orphan_pins, sizeof orph);
    rt.copy_to_host(tags, st.tags, sizeof tags);
    rt.copy_to_host(turn, st.set_turns, sizeof turn);
    rt.copy_to_host(locks1, st.set_locks, sizeof locks1);
    for (std::uint32_t l = 0; l < lines; ++l)
      std::printf("DIAG line %u word %#x state %u pins %u orphans %u tag %#llx\n", l, w[l], w[l] & 7, w[l] / 8, orph[l],
                  (unsigned long long)tags[l]);
    std::printf("DIAG set turn %#llx lock %u\n", (unsigned long long)turn[0], locks1[0]);
    std::uint32_t outs[24];
    rt.copy_to_host(outs, counts, 96);
    for (int k = 0; k < 10; ++k)
      if (outs[4 + k] != 0) std::printf("DIAG outcome %d: %u\n", k, outs[4 + k]);
    const auto& posted = arr.cache.io.posted;
    std::printf("DIAG rings %u slots %u\n", posted.count, posted.slots_per_ring);
    std::vector<queue::posted_cursor> cur(posted.count);
    rt.copy_to_host(cur.data(), posted.cursors, cur.size() * sizeof(queue::posted_cursor));
    for (std::uint32_t r = 0; r < posted.count; ++r)
      if (cur[r].tail != cur[r].head || cur[r].tail != 0)
        std::printf("DIAG ring %u head %llu tail %llu\n", r, (unsigned long long)cur[r].head,
                    (unsigned long long)cur[r].tail);
    try {
      rt.check();
    } catch (const std::exception& e) {
      std::printf("DIAG check: %s\n", e.what());
    }
  });
  rt.stop();
}
TEST(GpuCacheDiag, TwoReadersProgressPrinting) { diag_run<true>(); }
TEST(GpuCacheDiag, TwoReadersProgressQuiet) { diag_run<false>(); }
}  // namespace
}  // namespace agio
