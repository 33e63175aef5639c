#!/bin/bash
# BFS probe (call 6; call 7 adds frontiers of 1 vertex in 8 and 1 in 64): a full-frontier BFS step natively and through array readers on a hand-filled cache,
# timed, then ncu on one launch of each.
set -u
source scripts/deps.sh
start=$(date +%s)
cmake -S .scratch/bfsprobe -B /tmp/bp -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/cfg.log 2>&1 || tail -20 /tmp/cfg.log
cmake --build /tmp/bp -j 16 --target bfsprobe > /tmp/build.log 2>&1; echo "build rc $? at $(( $(date +%s) - start )) s" >> $OUT/log.txt
grep -E "error" -A5 /tmp/build.log | head -20 >> $OUT/log.txt
timeout 60 /tmp/bp/bfsprobe 5 >> $OUT/log.txt 2>&1
echo "timings at $(( $(date +%s) - start )) s" >> $OUT/log.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
timeout 120 $NCU --clock-control none --set full --import-source no -k regex:run --launch-count 2 -o /tmp/prof /tmp/bp/bfsprobe 1 > /tmp/ncu.log 2>&1
echo "ncu rc $? at $(( $(date +%s) - start )) s" >> $OUT/log.txt; tail -3 /tmp/ncu.log >> $OUT/log.txt
$NCU -i /tmp/prof.ncu-rep --page details --csv > /tmp/details.csv 2>&1
python3 - <<'PY' >> $OUT/details.txt
import csv, collections
rows = list(csv.DictReader(open('/tmp/details.csv')))
want = {'Duration','Achieved Occupancy','Theoretical Occupancy','Registers Per Thread','Executed Ipc Active','Issue Slots Busy','No Eligible','Active Warps Per Scheduler','Eligible Warps Per Scheduler','Warp Cycles Per Issued Instruction','Executed Instructions','L1/TEX Hit Rate','L2 Hit Rate','Memory Throughput','DRAM Throughput','L2 Cache Throughput','Avg. Active Threads Per Warp'}
by = collections.OrderedDict()
for r in rows: by.setdefault((r.get('ID'), r.get('Kernel Name','')[:60]), []).append(r)
for k, rs in by.items():
    print('==', k)
    for r in rs:
        if r.get('Metric Name') in want: print('  %-45s %-12s %s' % (r['Metric Name'], r.get('Metric Unit',''), r.get('Metric Value','')))
PY
$NCU -i /tmp/prof.ncu-rep --page raw --csv --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,smsp__inst_executed.sum > /tmp/raw.csv 2>&1
python3 - <<'PY' >> $OUT/details.txt
import csv
rows = list(csv.reader(open('/tmp/raw.csv'))); hdr = rows[0]; ki = hdr.index('Kernel Name')
for d in rows[2:]:
    print('== stalls', d[ki][:60]); vals = []
    for h, v in zip(hdr, d):
        if h.startswith('smsp__'):
            try: vals.append((float(v.replace(',','')), h))
            except: pass
    for v, h in sorted(vals, reverse=True)[:10]: print('  %14.2f %s' % (v, h))
PY
$NCU -i /tmp/prof.ncu-rep --page source --csv --print-source sass -k regex:cached > /tmp/src.csv 2>/tmp/src-err.log || head -3 /tmp/src-err.log >> $OUT/log.txt
python3 - <<'PY' > $OUT/sass-cached.txt
import csv
lines = open('/tmp/src.csv').read().splitlines()
i0 = next(i for i, l in enumerate(lines) if l.startswith('"Address"') or l.startswith('Address'))
rows = list(csv.reader(lines[i0:])); hdr = rows[0]; body = rows[1:]
ex = hdr.index('Instructions Executed'); src = hdr.index('Source'); samp = hdr.index('Warp Stall Sampling (All Samples)')
tot = sum(float(r[samp] or 0) for r in body)
print('total samples', tot, 'static instructions', len(body), 'executed', sum(float(r[ex] or 0) for r in body))
for i, r in enumerate(body):
    e = float(r[ex] or 0); s = float(r[samp] or 0)
    if e > 0: print('%5d %12d %5.1f%% %s' % (i, e, 100 * s / tot, r[src][:90]))
PY
echo "done at $(( $(date +%s) - start )) s" >> $OUT/log.txt
cat $OUT/log.txt
