#!/usr/bin/env python3
# Usage (from the repository root, with the study installed: make study-ecosystem):
#   python3 studies/ecosystem/crosscheck.py studies/ecosystem/results.json [ROW...] > studies/ecosystem/crosscheck.txt
# Python 3 standard library only.
# Second method for the study's claims about packages: list each release's
# tools with a raw JSON-RPC client of its own (not mcpdrill's), then check
# every breaking change at its pointer (old value vs new value) and every
# removed tool (absent from the newer listing, and its name absent from the
# newer package's own files).
import json, os, queue, subprocess, sys, tempfile, threading, time, re
spec_dir = os.path.abspath('studies/ecosystem')
servers = json.load(open(os.path.join(spec_dir, 'servers.json')))['mcpServers']
res = json.load(open(sys.argv[1]))

def expand(s, work):
    s = s.replace('${SPEC_DIR}', spec_dir).replace('${WORK_DIR}', work)
    return re.sub(r'\$\{([A-Za-z_][A-Za-z0-9_]*)\}', lambda m: os.environ.get(m.group(1), ''), s)

def listing(name, env_extra=None):
    e = servers[name]
    work = tempfile.mkdtemp()
    env = {'PATH': os.environ['PATH']}
    for k, v in (e.get('env') or {}).items():
        env[k] = expand(v, work)
    env.update(env_extra or {})
    cmd = [expand(e['command'], work)] + [expand(a, work) for a in e.get('args', [])]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=work)
    def send(o):
        p.stdin.write((json.dumps(o) + '\n').encode()); p.stdin.flush()
    lines = queue.Queue()
    def pump():
        for line in p.stdout:
            lines.put(line)
        lines.put(None)
    threading.Thread(target=pump, daemon=True).start()
    def recv(i, deadline):
        while True:
            left = deadline - time.time()
            if left <= 0: return None
            try: line = lines.get(timeout=left)
            except queue.Empty: return None
            if line is None: return None
            try: m = json.loads(line)
            except Exception: continue
            if m.get('id') == i: return m
    try:
        send({'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {'protocolVersion': '2025-06-18', 'capabilities': {}, 'clientInfo': {'name': 'crosscheck', 'version': '0'}}})
        if not recv(1, time.time() + 60): return None
        send({'jsonrpc': '2.0', 'method': 'notifications/initialized'})
        tools, cursor, i = [], None, 2
        while True:
            send({'jsonrpc': '2.0', 'id': i, 'method': 'tools/list', 'params': ({'cursor': cursor} if cursor else {})})
            m = recv(i, time.time() + 60)
            if not m or 'result' not in m: return None
            tools += m['result'].get('tools', [])
            cursor = m['result'].get('nextCursor')
            i += 1
            if not cursor or i > 50: break
        return {t['name']: t for t in tools}
    finally:
        p.kill()

def at(doc, ptr):
    for part in ptr.split('/')[1:]:
        part = part.replace('~1', '/').replace('~0', '~')
        if isinstance(doc, dict) and part in doc: doc = doc[part]
        elif isinstance(doc, list) and part.isdigit() and int(part) < len(doc): doc = doc[int(part)]
        else: return '<absent>'
    return doc

def pkgdir(name):
    a = servers[name]['args'][0] if servers[name].get('args') else servers[name]['command']
    a = a.replace('${SPEC_DIR}', spec_dir)
    pkg = servers[name]['package'].rsplit('@', 1)[0]
    i = a.find('/node_modules/' + pkg + '/')
    return a[:i + len('/node_modules/' + pkg)] if i >= 0 else None

def name_in_files(d, tool):
    if not d: return None
    r = subprocess.run(['grep', '-rlF', '--exclude-dir=node_modules', '"' + tool + '"', d], capture_output=True, text=True)
    r2 = subprocess.run(['grep', '-rlF', '--exclude-dir=node_modules', "'" + tool + "'", d], capture_output=True, text=True)
    return bool(r.stdout.strip() or r2.stdout.strip())

rows = {r['name']: r for r in res['servers']}
out = []
only = sys.argv[2:]
for name, r in sorted(rows.items()):
    if only and name not in only: continue
    vd = r.get('version_drift')
    if not vd or not vd.get('compared') or not (vd['breaking'] or vd['tools_removed']): continue
    old, new = listing(vd['previous']), listing(name)
    if old is None or new is None:
        out.append((name, 'not re-listed by the second client', '')); continue
    confirmed, refuted, notes = 0, 0, []
    for c in vd['changes']:
        if not c['breaking']: continue
        if c['kind'] == 'CHG-TOOL-REMOVED':
            absent = c['tool'] not in new and c['tool'] in old
            infiles = name_in_files(pkgdir(name), c['tool'])
            if absent: confirmed += 1
            else: refuted += 1; notes.append('removed? ' + c['tool'])
            if infiles: notes.append(c['tool'] + ' still named in the newer package files')
        else:
            t0, t1 = old.get(c['tool']), new.get(c['tool'])
            if t0 is None or t1 is None:
                refuted += 1; notes.append('tool missing ' + c['tool']); continue
            v0, v1 = at(t0, c['pointer']), at(t1, c['pointer'])
            if c['kind'] == 'CHG-REQUIRED-ADDED':
                base, _, prop = c['pointer'].rpartition('/')
                parent = base.rpartition('/')[0]
                r0, r1 = at(t0, parent + '/required'), at(t1, parent + '/required')
                v0 = prop in (r0 if isinstance(r0, list) else [])
                v1 = prop in (r1 if isinstance(r1, list) else [])
                if not v0 and v1: confirmed += 1
                else: refuted += 1; notes.append('required unchanged %s %s' % (c['tool'], c['pointer']))
                continue
            if c['kind'] == 'CHG-PROPERTY-RENAMED':
                m = re.match(r'property "(.*)" renamed to "(.*)"', c['message'])
                base = c['pointer'].rpartition('/')[0]
                p0, p1 = at(t0, base), at(t1, base)
                ok = m and isinstance(p0, dict) and isinstance(p1, dict) and m.group(1) in p0 and m.group(2) not in p0 and m.group(2) in p1 and m.group(1) not in p1
                if ok: confirmed += 1
                else: refuted += 1; notes.append('rename not seen %s %s' % (c['tool'], c['pointer']))
                continue
            if v0 != v1: confirmed += 1
            else: refuted += 1; notes.append('same at %s %s' % (c['tool'], c['pointer']))
    out.append((name, '%d confirmed, %d not' % (confirmed, refuted), '; '.join(notes[:6])))
for o in out: print(' | '.join(o))
