# Medians of agio's points per staging size, io size and depth, over every depth-*.json given.
import json, sys, collections, statistics, re
rows = collections.defaultdict(list)
for f in sys.argv[1:]:
    v = int(re.search(r'-s(\d+)-', f).group(1)) // 1024
    for p in json.load(open(f))['points']:
        if p['system'] != 'agio': continue
        rows[(p['io_bytes'], p['outstanding'], v)].append(p['iops'] if p['io_bytes'] == 4096 else p['gbps'])
vs = sorted({k[2] for k in rows})
print('size  depth  ' + '  '.join(f'{v:>3} KiB' for v in vs), '(4 KiB: K IOPS; 64 KiB: GB/s; median, n)')
for (b, o) in sorted({(k[0], k[1]) for k in rows}):
    cells = []
    for v in vs:
        x = rows.get((b, o, v), [])
        m = statistics.median(x) if x else float('nan')
        cells.append(f'{m/1e3:7.0f}' if b == 4096 else f'{m:7.2f}')
    print(f'{b//1024:3}K  {o:6}  ' + '  '.join(cells), 'runs ' + '/'.join(str(len(rows[(b, o, v)])) for v in vs))
