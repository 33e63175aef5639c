#!/usr/bin/env python3
"""Fails when a file includes a header of a layer above its own (docs/ARCHITECTURE.md, "Layers").

Layers, bottom up: the public headers by folder (detail, spec, queue, service, io, store,
cache, runtime, then the umbrella headers agio.hpp and portable.hpp), the library's sources
(src/proxy, src/runtime), the Python extension (python/) and the tool and its harness (tools/),
the evaluation (eval/ or bench/). A file may include headers of its own layer and of the layers
below it. Code outside include/ and src/ (Python extension, tools, evaluation, examples) uses
public headers only: never src/, never agio/detail/.
tests/ may include anything. Prints every violation; exit status 1 if there is one.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAYERS = [
    "include/agio/detail", "include/agio/spec", "include/agio/queue", "include/agio/service",
    "include/agio/io", "include/agio/store", "include/agio/cache", "include/agio/runtime",
    "include/agio/agio.hpp include/agio/portable.hpp", "src/proxy", "src/runtime",
    "python tools", "eval bench",
]
PUBLIC_ONLY = ("python", "tools", "eval", "bench", "examples")
SOURCES = (".hpp", ".h", ".cpp", ".cu", ".cuh")
# Where quoted includes are looked up, after the including file's own folder.
INCLUDE_ROOTS = ["include", "src", "tools", "eval", "bench"]
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def layer_of(rel: str):
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes.split():
            if rel == prefix or rel.startswith(prefix + "/"):
                return rank
    return None


def resolve(source: pathlib.Path, name: str):
    for base in [source.parent] + [ROOT / r for r in INCLUDE_ROOTS]:
        candidate = (base / name).resolve()
        if candidate.is_file() and ROOT in candidate.parents:
            return candidate.relative_to(ROOT).as_posix()
    return None


def violations():
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT).as_posix()
        if path.suffix not in SOURCES or rel.startswith(("build", ".", "tests/")) or "/build" in rel:
            continue
        own = layer_of(rel)
        public_only = rel.split("/")[0] in PUBLIC_ONLY
        for name in INCLUDE.findall(path.read_text(errors="replace")):
            target = resolve(path, name)
            if target is None:
                continue
            if public_only and (target.startswith("src/") or target.startswith("include/agio/detail/")):
                yield f"{rel}: includes {target}, which is not public (use the public headers)"
                continue
            theirs = layer_of(target)
            if own is not None and theirs is not None and theirs > own:
                yield f"{rel}: includes {target}, a layer above its own"


def main():
    found = list(violations())
    for v in found:
        print(v)
    if found:
        print(f"check_layers: {len(found)} upward or private include(s)", file=sys.stderr)
        return 1
    print("check_layers: every include points down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
