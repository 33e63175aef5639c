# Experiment: array readers and the array view fill a miss by claiming the line (as now) and
# posting the fill's request to a ring for another party to submit, instead of submitting it
# themselves: the kernel carries the claim and the wait, not the queue submission. Preloaded
# rows only (nothing serves the ring; a post is never reached when every access hits).
import sys, pathlib
root = pathlib.Path(sys.argv[1])
def patch(rel, old, new, count=1):
    p = root / rel
    s = p.read_text()
    assert s.count(old) == count, (rel, old, s.count(old))
    p.write_text(s.replace(old, new))
C = "include/agio/cache/cache.hpp"
patch(C, """  AGIO_HD status acquire_line(std::uint32_t dev, std::uint64_t block, std::uint32_t& line, deadline limit,
                              const detail::warp::lane_group& crew,""",
      """  template <bool Posts = false>
  AGIO_HD status acquire_line(std::uint32_t dev, std::uint64_t block, std::uint32_t& line, deadline limit,
                              const detail::warp::lane_group& crew,""")
patch(C, "const status inserted = insert(dev, block, tag, fill_mode::reserve, line, turn, limit, crew);",
      "const status inserted = insert<Posts>(dev, block, tag, fill_mode::reserve, line, turn, limit, crew);")
patch(C, """  AGIO_HD status insert(std::uint32_t dev,""", """  template <bool Posts = false>
  AGIO_HD status insert(std::uint32_t dev,""")
patch(C, "const status issued = submit(r, crew);", "const status issued = submit<Posts>(r, crew);")
patch(C, """  AGIO_HD status submit(const line_request& r, [[maybe_unused]] const detail::warp::lane_group& crew) const {
    if constexpr (crew_copies) {""", """  template <bool Posts = false>
  AGIO_HD status submit(const line_request& r, [[maybe_unused]] const detail::warp::lane_group& crew) const {
    if constexpr (Posts) {
      // A ring of requests (here: the cache's orphan-pin words as its ticket, line 0's data as
      // its slots): a ticket, the request's fields, a release of the slot's flag.
      const std::uint32_t ticket = detail::fetch_add<scope::device>(state.orphan_pins[state.line_count - 1], 1u, detail::relaxed);
      auto* slot = reinterpret_cast<std::uint64_t*>(state.data) + (ticket % 64u) * 8u;
      slot[1] = static_cast<std::uint64_t>(r.op) | std::uint64_t{r.dev} << 8 | std::uint64_t{r.lbas} << 32;
      slot[2] = r.lba;
      slot[3] = r.line | std::uint64_t{r.pins} << 32;
      slot[4] = reinterpret_cast<std::uint64_t>(r.signal.word);
      slot[5] = std::uint64_t{r.signal.on_success} | std::uint64_t{r.signal.on_failure} << 32;
      slot[6] = reinterpret_cast<std::uint64_t>(r.signal.status);
      slot[7] = reinterpret_cast<std::uint64_t>(r.signal.failures);
      detail::store<scope::device>(reinterpret_cast<std::uint32_t*>(slot)[0], ticket + 1, detail::release);
      return {outcome::success, 0};
    } else if constexpr (crew_copies) {""")
patch("include/agio/cache/array_reader.hpp",
      "result = cache_.acquire_line(dev_, block, line, limit, crew, contention);",
      "result = cache_.template acquire_line<true>(dev_, block, line, limit, crew, contention);")
patch("include/agio/cache/array_view.hpp",
      ": cache.acquire_line(dev, block, line, limit, crew);",
      ": cache.template acquire_line<true>(dev, block, line, limit, crew);")
patch("eval/cache/overhead.cpp",
      """  warm.reset();
  r.mode = "cold";""",
      """  warm.reset();
  if (blocks != 0) return;
  r.mode = "cold";""")
