# Experiment: an array reader tries acquire_present (the hit path alone) before acquire_line.
import sys, pathlib
p = pathlib.Path(sys.argv[1]) / "include/agio/cache/array_reader.hpp"
s = p.read_text()
old = "result = cache_.acquire_line(dev_, block, line, limit, crew, contention);"
new = """result = cache_.acquire_present(dev_, block, line) == cache_type::presence::pinned
                     ? status{outcome::success, 0}
                     : cache_.acquire_line(dev_, block, line, limit, crew, contention);"""
assert s.count(old) == 1
p.write_text(s.replace(old, new))
