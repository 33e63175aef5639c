import json,glob,statistics as st,collections,sys
vs=sys.argv[1].split(',')
rows=collections.OrderedDict()
def add(k,v,x): rows.setdefault(k,{}).setdefault(v,[]).append(x)
for v in vs:
    for f in sorted(glob.glob(f'trip-{v}-run*.json')):
        d=json.load(open(f))
        fl=d['config']['flag_round_trip_us']
        for p in d['points']:
            if p['system']!='agio': continue
            k=f"{p['series']} {p['op']}"
            add(k+' added/flag',v,p['added_over_flag']); add(k+' added us',v,p['added_us']); add(k+' submission us',v,p['submission_us'])
        add('flag us',v,fl)
    for f in sorted(glob.glob(f'depth-{v}-run*.json')):
        d=json.load(open(f))
        for p in d['points']:
            if p['system']!='agio': continue
            add(f"{p['op']} 4K @{p['outstanding']} K/s",v,p['iops']/1e3)
print('| | '+' | '.join(vs)+' |'); print('|---'*(len(vs)+1)+'|')
for k,d in rows.items():
    print('| '+k+' | '+' | '.join((f"{st.median(d[v]):.2f} ("+'/'.join(f'{x:.1f}' for x in d[v])+')') if v in d else '' for v in vs)+' |')
