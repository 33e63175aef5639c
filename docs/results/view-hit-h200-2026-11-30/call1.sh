#!/bin/bash
# Hit-path probe, call 1: timings of the view and minimal hit paths, then ncu on each kernel.
set -u
source scripts/deps.sh
start=$(date +%s)
cmake -S .scratch/hitprobe -B /tmp/hp -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/cfg.log 2>&1 || tail -20 /tmp/cfg.log
cmake --build /tmp/hp -j 16 --target hitprobe > /tmp/build.log 2>&1; echo "build rc $? at $(( $(date +%s) - start )) s"
grep -E "error" -A5 /tmp/build.log | head -30
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
/tmp/hp/hitprobe 5 2>&1 | tee $OUT/timings.txt
echo "timings at $(( $(date +%s) - start )) s"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
timeout 300 $NCU --clock-control none --set full --import-source no -k regex:"native_mean|view_mean|minimal_mean" --launch-count 8 -o /tmp/prof /tmp/hp/hitprobe 1 > /tmp/ncu.log 2>&1
echo "ncu rc $? at $(( $(date +%s) - start )) s"; tail -5 /tmp/ncu.log
$NCU -i /tmp/prof.ncu-rep --page details --csv > /tmp/details.csv 2>&1
python3 - <<'PY' > $OUT/details.txt
import csv, collections
rows = list(csv.DictReader(open('/tmp/details.csv')))
want = ['Duration','Achieved Occupancy','Theoretical Occupancy','Registers Per Thread','Executed Ipc Active','Issue Slots Busy','No Eligible','Active Warps Per Scheduler','Eligible Warps Per Scheduler','Issued Warp Per Scheduler','Warp Cycles Per Issued Instruction','Warp Cycles Per Executed Instruction','Executed Instructions','L1/TEX Hit Rate','L2 Hit Rate','Memory Throughput','DRAM Throughput','L1/TEX Cache Throughput','L2 Cache Throughput','Compute (SM) Throughput','Avg. Active Threads Per Warp','Avg. Not Predicated Off Threads Per Warp','Mem Busy','Max Bandwidth','Mem Pipes Busy']
by = collections.OrderedDict()
for r in rows:
    k = (r.get('ID'), r.get('Kernel Name','')[:40])
    by.setdefault(k, []).append(r)
for k, rs in by.items():
    print('==', k)
    for r in rs:
        if r.get('Metric Name') in want:
            print('  %-45s %-12s %s' % (r['Metric Name'], r.get('Metric Unit',''), r.get('Metric Value','')))
    for r in rs:
        if r.get('Rule Name') or r.get('Section Name') == 'WarpStateStats':
            pass
PY
cat $OUT/details.txt | head -300
# warp state (stall reasons) per kernel
$NCU -i /tmp/prof.ncu-rep --page raw --csv --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,smsp__inst_executed.sum,smsp__warps_launched.sum > /tmp/raw.csv 2>&1
python3 - <<'PY' > $OUT/stalls.txt
import csv
rows = list(csv.reader(open('/tmp/raw.csv')))
hdr = rows[0]; units = rows[1]; data = rows[2:]
ki = hdr.index('Kernel Name')
for d in data:
    print('==', d[ki][:60])
    vals = []
    for h, v in zip(hdr, d):
        if h.startswith('smsp__'):
            try: vals.append((float(v.replace(',','')), h))
            except: pass
    for v, h in sorted(vals, reverse=True)[:14]:
        print('  %12.2f %s' % (v, h))
PY
cat $OUT/stalls.txt
# per-instruction stall samples for the view and minimal_mean<1>
for k in view_mean "minimal_meanILi1"; do
  $NCU -i /tmp/prof.ncu-rep --page source --csv --print-source sass -k regex:$k > /tmp/src-$k.csv 2>/tmp/src-err.log || head -3 /tmp/src-err.log
done
python3 - <<'PY' > $OUT/source-top.txt
import csv, glob
for f in sorted(glob.glob('/tmp/src-*.csv')):
    print('####', f)
    lines = open(f).read().splitlines()
    # find header row
    start = next((i for i, l in enumerate(lines) if l.startswith('"#') or 'Address' in l or 'Source' in l), 0)
    rows = list(csv.reader(lines[start:]))
    if not rows: continue
    hdr = rows[0]; print('columns:', hdr[:20])
    def col(name):
        for i, h in enumerate(hdr):
            if name.lower() in h.lower(): return i
        return None
    src = col('Source'); samp = col('Warp Stall Sampling (All'); ex = col('Instructions Executed')
    tot = 0; body = []
    for r in rows[1:]:
        try: s = float(r[samp].replace(',','')) if samp is not None else 0
        except: s = 0
        tot += s; body.append((s, r))
    print('total samples', tot, 'instructions', len(body))
    # executed instructions per warp-access proxy
    if ex is not None:
        exs = sum(float(r[ex].replace(',','') or 0) for _, r in body if r[ex].replace(',','').replace('.','').isdigit())
        print('instructions executed (warp-level) sum', exs)
    for i, (s, r) in enumerate(body):
        if s >= 0.005 * tot:
            print('%5d %6.1f%% %s | %s' % (i, 100*s/tot, r[src][:90] if src is not None else '', ' '.join(x for x in r[ex:ex+1]) if ex is not None else ''))
PY
head -150 $OUT/source-top.txt
gzip -c /tmp/src-view_mean.csv > $OUT/src-view.csv.gz
echo "done at $(( $(date +%s) - start )) s"
