#!/usr/bin/env bash
# The agio tool's command line on CPU threads: help at every level (stdout, exit 0), option
# errors that name the option (exit 2), info that never creates a file and lists the host's
# memory without one, staging a file into a store and back out byte for byte, and a .npy file
# staged as a record and exported again (checked by NumPy where python3 has it). Usage: tool_cli.sh PATH/TO/agio
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
for cmd in info stage export "bench io" "bench randrw" "bench gather" soak demo; do
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
expect 2 -- "--ops: 'read' or 'write', not 'rd'" bench io --ops rd
expect 2 -- '--io-bytes values are multiples of 512' bench io --io-bytes 1000
expect 2 -- '--outstanding values are 1 to' bench io --outstanding 0
expect 2 -- '--controller-threads must be positive' bench io --controller-threads 0

# bench io pinned to one point measures that point only: 4 KiB reads, 4 in flight, beside the
# store's ceiling.
expect 0 'results:' bench io --backend cpu --experiments ram --io-bytes 4096 --ops read --outstanding 4 \
  --ram-gib 0.0625 --seconds 0.05 --queue-pairs 2 --controller-threads 1 --out "$work/io.json"
points=$(grep -c '"outstanding": 4, "iops"' "$work/io.json")
others=$(grep -c '"io_bytes": 65536\|"op": "write"\|"outstanding": 1, \|"outstanding": 16, ' "$work/io.json")
[ "$points" -eq 2 ] && [ "$others" -eq 0 ] || fail "bench io --outstanding 4 --ops read measured other points: $(cat "$work/io.json")"
# At one request in flight it sets the trip's added time against a flag round trip it measures.
expect 0 'flag round trip .*: [0-9]' bench io --backend cpu \
  --experiments ram --io-bytes 4096 --ops read --outstanding 1 --ram-gib 0.0625 --seconds 0.05 --queue-pairs 2 \
  --controller-threads 1 --out "$work/trip.json"
grep -q '"added_over_flag": [0-9]' "$work/trip.json" && grep -q '"flag_round_trip_us": [0-9]' "$work/trip.json" ||
  fail "bench io --outstanding 1 gave no trip against the flag: $(cat "$work/trip.json")"
# The trip experiment splits it leg by leg from the runtime's trip stamps, on a ram: store and
# a file: store.
expect 0 'legs \(us\): submission' bench io --backend cpu --experiments trip --ops read --ram-gib 0.0625 \
  --file-gib 0.01 --seconds 0.05 --queue-pairs 2 --controller-threads 1 --out "$work/legs.json"
[ "$(grep -c '"to_retirer_us"' "$work/legs.json")" -eq 2 ] ||
  fail "bench io --experiments trip did not split both stores' trips: $(cat "$work/legs.json")"
expect 2 -- "--policy is clock, lfu_da, s3_fifo or direct_mapped, not 'lru'" bench gather --backend cpu --rows 10 --cache 64K --policy lru

# info looks and never creates.
expect 2 'never creates' info "file:$work/new.bin?create=64M"
[ -e "$work/new.bin" ] && fail "agio info created $work/new.bin"
head -c 1048576 /dev/urandom > "$work/store.bin"
expect 0 '2048 blocks of 512 bytes' info "file:$work/store.bin"
# Without a URI, info lists the memory tiers: the GPUs' memory (none on a machine without a GPU or
# in a build without the GPU backend), then the host's memory for a host tier: its NUMA nodes, or
# that there are none.
expect 0 '^GPU memory' info
expect 0 '^host memory' info
expect 2 'give one store URI' info "file:$work/store.bin" "file:$work/store.bin"

# A file staged at an offset comes back out unchanged; the store's bytes after a partial last
# block are kept.
head -c 300001 /dev/urandom > "$work/in.bin"
cp "$work/store.bin" "$work/before.bin"
expect 0 'staged and verified' stage --backend cpu --file "$work/in.bin" --store "file:$work/store.bin" --offset 4096
expect 0 'copied' export --backend cpu --store "file:$work/store.bin" --file "$work/out.bin" --offset 4096 --length 300001
cmp -s "$work/in.bin" "$work/out.bin" || fail "export did not give back what stage put"
expect 0 'copied' export --backend cpu --store "file:$work/store.bin" --file "$work/tail.bin" --offset 304097
cmp -s <(tail -c +304098 "$work/before.bin") "$work/tail.bin" || fail "stage changed bytes after the file's end"
[ "$(stat -c %s "$work/store.bin")" -eq 1048576 ] || fail "stage resized a store large enough"
expect 2 'not a multiple' stage --backend cpu --file "$work/in.bin" --store "file:$work/store.bin" --offset 100
expect 2 'more than the' stage --backend cpu --file "$work/in.bin" --store "ram:256K"
expect 2 'run past the end' export --backend cpu --store "file:$work/store.bin" --file "$work/x" --offset 4096 --length 2M
expect 2 'one of --npy FILE.npy and --file PATH' stage --backend cpu --store "file:$work/store.bin"
expect 2 'one of --npy FILE.npy and --file PATH' export --backend cpu --store "file:$work/store.bin" --npy a --file b
expect 2 'is now agio stage --file PATH --store URI' stage in --file "$work/in.bin" --store "file:$work/store.bin"
expect 2 'is now agio export --store URI --file PATH' stage out --file "$work/in.bin" --store "file:$work/store.bin"

# A file: store without create= is created to the size the data needs.
expect 0 'staged and verified' stage --backend cpu --file "$work/in.bin" --store "file:$work/new-store.bin?lba=4096"
[ "$(stat -c %s "$work/new-store.bin")" -eq 303104 ] || fail "stage did not create a 303104-byte store"
cmp -s "$work/in.bin" <(head -c 300001 "$work/new-store.bin") || fail "the created store does not hold the file"

# .npy files: a record whose header is padded to 4096 bytes and whose data is the file's; the
# record exported is a .npy file NumPy loads, and a store that holds no record is refused.
npy_case() {  # npy_case NAME DTYPE SHAPE: a .npy file written by NumPy, staged and exported
  local name=$1
  python3 -c "import numpy as np, sys; n = int(np.prod($3)); np.save(sys.argv[1], (np.arange(n) % 251).astype('$2').reshape($3))" "$work/$name.npy"
  expect 0 'staged and verified' stage --backend cpu --npy "$work/$name.npy" --store "file:$work/$name.store?lba=512" --offset 8192
  expect 0 'copied' export --backend cpu --store "file:$work/$name.store" --npy "$work/$name.out.npy" --offset 8192
  python3 - "$work/$name.npy" "$work/$name.out.npy" "$work/$name.store" <<'PY' || fail "$name: the exported .npy file differs"
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), (a, b)
out = open(sys.argv[2], "rb").read()
assert len(out) == 4096 + a.nbytes, len(out)  # a header padded to 4096 bytes, then the data
assert open(sys.argv[3], "rb").read()[8192 : 8192 + len(out)] == out  # a byte copy of the record
PY
}
if python3 -c 'import numpy' 2>/dev/null; then
  npy_case f32 float32 '(1000,)'
  npy_case f16 float16 '(7, 33, 5)'
  npy_case i64 int64 '(300, 1025)'
  npy_case u4 '<U3' '(17,)'
  npy_case dt 'datetime64[ns]' '(5, 2)'
  npy_case scalar float64 '()'
  expect 0 'staged and verified' stage --backend cpu --npy "$work/f32.npy" --store "file:$work/plain.npy"
  python3 -c "import numpy as np, sys; assert (np.load(sys.argv[1]) == np.load(sys.argv[2])).all()" \
    "$work/f32.npy" "$work/plain.npy" || fail "a store staged at offset 0 is not the .npy file NumPy loads"
  python3 -c "import numpy as np; np.save('$work/fortran.npy', np.asfortranarray(np.zeros((3, 4))))"
  expect 2 'Fortran order' stage --backend cpu --npy "$work/fortran.npy" --store "file:$work/x.store"
  python3 -c "import numpy as np; np.save('$work/records.npy', np.zeros(3, 'i4,f8'))"
  expect 2 'structured records' stage --backend cpu --npy "$work/records.npy" --store "file:$work/x.store"
  python3 -c "import numpy as np; np.save('$work/objects.npy', np.array([None, 1]), allow_pickle=True)"
  expect 2 'Python objects' stage --backend cpu --npy "$work/objects.npy" --store "file:$work/x.store"
else
  echo "tool_cli: python3 has no NumPy; the .npy checks against NumPy's own files are skipped"
fi
expect 2 "no staged array or .npy file: it starts with b'.x00.x00" export --backend cpu --store "ram:64K" --npy "$work/x.npy"
printf 'PK\003\004 a zip file' > "$work/zip.npy"
expect 2 "it starts with b'PK.x03.x04 a zip f'" stage --backend cpu --npy "$work/zip.npy" --store "ram:64K"

[ "$failures" -eq 0 ] && echo "tool_cli: all checks passed"
exit $((failures != 0))
