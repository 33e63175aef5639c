#!/usr/bin/env bash
# The agio tool's command line on CPU threads: help at every level (stdout, exit 0), option
# errors that name the option (exit 2), info that never creates a file, and staging a file into
# a store and back out, byte for byte. Usage: tool_cli.sh PATH/TO/agio
set -uo pipefail
agio=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect RC OUTPUT_PATTERN ARGS...: exit status RC, stdout+stderr matching the pattern.
expect() {
  local rc=$1 pattern=$2; shift 2
  local out status
  out=$("$agio" "$@" 2>&1); status=$?
  [ "$status" -eq "$rc" ] || fail "agio $* exited $status, not $rc: $out"
  grep -qE -- "$pattern" <<<"$out" || fail "agio $* did not say /$pattern/: $out"
}

for h in -h --help help; do expect 0 'usage: agio <command>' $h; done
for cmd in info "stage in" "stage out" "bench io" "bench randrw" "bench gather" soak demo; do
  # shellcheck disable=SC2086
  for h in -h --help; do expect 0 "usage: agio ${cmd%% *}" $cmd $h; done
done
expect 0 'bench io' bench --help
expect 2 'bench io' bench
expect 2 "unknown command 'frobnicate'" frobnicate
expect 2 'usage: agio <command>'
expect 2 -- "--seconds: 'abc' is not a number" bench io --seconds abc
expect 2 -- "--threads: '-3' is not a whole number" soak --threads -3
expect 2 -- '--queue-depth is 2 to 4096' bench io --queue-depth 1
expect 2 'unknown option --bogus' demo --bogus 1
expect 2 -- "--backend is cpu, gpu or auto, not 'tpu'" demo --backend tpu
expect 2 -- '--mib is a whole number' demo --mib 0
expect 2 'agio-eval dlrm' bench dlrm
expect 2 -- "--policy is clock, lfu_da, s3_fifo or direct_mapped, not 'lru'" bench gather --backend cpu --rows 10 --cache 64K --policy lru

# info looks and never creates.
expect 2 'never creates' info "file:$work/new.bin?create=64M"
[ -e "$work/new.bin" ] && fail "agio info created $work/new.bin"
head -c 1048576 /dev/urandom > "$work/store.bin"
expect 0 '2048 blocks of 512 bytes' info "file:$work/store.bin"

# A file staged in at an offset comes back out unchanged; the store's bytes after a partial last
# block are kept.
head -c 300001 /dev/urandom > "$work/in.bin"
cp "$work/store.bin" "$work/before.bin"
expect 0 'staged and verified' stage in --backend cpu --file "$work/in.bin" --store "file:$work/store.bin" --offset 4096
expect 0 'copied' stage out --backend cpu --store "file:$work/store.bin" --file "$work/out.bin" --offset 4096 --length 300001
cmp -s "$work/in.bin" "$work/out.bin" || fail "stage out did not give back what stage in put"
expect 0 'copied' stage out --backend cpu --store "file:$work/store.bin" --file "$work/tail.bin" --offset 304097
cmp -s <(tail -c +304098 "$work/before.bin") "$work/tail.bin" || fail "stage in changed bytes after the file's end"
expect 2 'not a multiple' stage in --backend cpu --file "$work/in.bin" --store "file:$work/store.bin" --offset 100
expect 2 'more than the' stage in --backend cpu --file "$work/in.bin" --store "file:$work/store.bin" --offset 1000448
expect 2 'runs past the end' stage out --backend cpu --store "file:$work/store.bin" --file "$work/x" --offset 4096 --length 2M

[ "$failures" -eq 0 ] && echo "tool_cli: all checks passed"
exit $((failures != 0))
