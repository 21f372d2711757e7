// The console's management pages: tokens, artifacts, the audit trail and the cluster. Each gets the
// app's context {api, me, socketFor, allowed, leaving} and draws into `main`; like every page, it
// only calls routes any client may call (docs/API.md), so the server decides what it may do.
import { h, clear, fmtTime, fmtBytes, json, toast, act } from './ui.js';

const enc = encodeURIComponent;

/** The links of a workspace's pages, above each of them. */
export function wsTabs(ctx, ws, current) {
  const tabs = [['', 'Logs and Docs'], ['files', 'Artifacts']];
  if (ctx.allowed('admin')) tabs.push(['tokens', 'Tokens'], ['audit', 'Audit']);
  return h('nav', { class: 'tabs', id: 'ws-tabs' }, ...tabs.map(([k, label]) =>
    h('a', { href: `#/w/${enc(ws)}${k ? `/${k}` : ''}`, class: k === current ? 'current' : undefined, 'data-tab': k || 'objects' }, label)));
}

function heading(ctx, ws, what) {
  return h('div', {},
    h('div', { class: 'crumbs' }, ctx.me.root ? h('a', { href: '#/workspaces' }, 'Workspaces') : '', ctx.me.root ? ' / ' : '',
      h('a', { href: `#/w/${enc(ws)}` }, ws), ` / ${what}`),
    h('h1', {}, `${what} of `, h('span', { class: 'mono' }, ws)));
}

// ---------- tokens

const TIER_ORDER = ['read', 'read_write', 'admin'];

export async function tokensView(ctx, main, ws) {
  main.append(heading(ctx, ws, 'Tokens'), wsTabs(ctx, ws, 'tokens'));
  if (!ctx.allowed('admin')) {
    main.append(h('p', { class: 'muted' }, 'Tokens are listed and minted with an admin token.'));
    return;
  }
  const grid = h('div', { class: 'grid' });
  main.append(grid);
  const mine = TIER_ORDER.indexOf(ctx.me.perm);
  const tier = h('select', { id: 'mint-tier' }, ...TIER_ORDER.filter((_, i) => i <= mine).map((t) => h('option', { value: t }, t)));
  const ttl = h('input', { id: 'mint-ttl', type: 'number', min: 1, value: '3600' });
  const client = h('input', { id: 'mint-client', placeholder: 'client id', value: 'console-user', pattern: '[A-Za-z0-9][A-Za-z0-9._\\-]{0,127}' });
  const shown = h('div', { id: 'minted', hidden: true, class: 'minted' });
  const form = h('form', { id: 'mint-form', class: 'card write' }, h('h2', {}, 'Mint a token'),
    h('div', { class: 'row' }, h('label', {}, 'tier ', tier), h('label', {}, 'ttl (s) ', ttl), h('label', {}, 'client id ', client),
      h('button', { type: 'submit' }, 'Mint')), shown,
    h('p', { class: 'muted' }, 'The token is shown once, here: the server keeps only its id.'));
  form.onsubmit = (ev) => {
    ev.preventDefault();
    act('mint', async () => {
      const m = await ctx.api('POST', `/v1/workspaces/${enc(ws)}/tokens`, { permission: tier.value, ttl_seconds: Number(ttl.value), client_id: client.value.trim() });
      clear(shown);
      const text = h('input', { id: 'minted-token', class: 'mono', readonly: true, value: m.token, 'aria-label': 'the new token' });
      const copy = h('button', { type: 'button', id: 'copy-token' }, 'Copy');
      copy.onclick = () => act('copy', async () => {
        try { await navigator.clipboard.writeText(m.token); } catch { text.select(); document.execCommand('copy'); }
        copy.textContent = 'Copied';
      });
      shown.append(h('p', {}, h('strong', {}, `${m.permission} token for ${m.client_id}`), `, id ${m.id}, expires ${fmtTime(m.expires_at)}. Copy it now: it is not shown again.`),
        h('div', { class: 'row' }, text, copy, h('button', { type: 'button', onclick: () => { clear(shown); shown.hidden = true; } }, 'Done')));
      shown.hidden = false;
      toast(`minted ${m.id}`);
      await load();
    });
  };
  const rows = h('tbody');
  grid.append(form, h('section', { class: 'card wide' }, h('h2', {}, 'Tokens'),
    h('table', { id: 'tokens' }, h('thead', {}, h('tr', {}, ...['id', 'tier', 'client', 'issued', 'expires', 'state', ''].map((t) => h('th', {}, t)))), rows)));
  async function load() {
    const list = (await ctx.api('GET', `/v1/workspaces/${enc(ws)}/tokens`)).tokens;
    clear(rows);
    const now = Date.now();
    for (const t of [...list].reverse()) {
      const state = t.revoked_at ? `revoked ${fmtTime(t.revoked_at)}` : Date.parse(t.expires_at) <= now ? 'expired' : 'valid';
      const cell = h('td', { class: 'actions' });
      if (!t.revoked_at && state === 'valid') {
        cell.append(h('button', { type: 'button', class: 'danger', 'data-revoke': t.id, onclick: () => act('revoke', async () => {
          await ctx.api('DELETE', `/v1/workspaces/${enc(ws)}/tokens/${enc(t.id)}`);
          toast(`revoked ${t.id}`);
          await load();
        }) }, 'Revoke'));
      }
      rows.append(h('tr', { 'data-token': t.id }, h('td', { class: 'mono' }, t.id), h('td', {}, t.permission), h('td', {}, t.client_id),
        h('td', {}, fmtTime(t.issued_at)), h('td', {}, fmtTime(t.expires_at)), h('td', { class: `tok-${state.split(' ')[0]}` }, state), cell));
    }
    if (!list.length) rows.append(h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'no tokens')));
  }
  await load();
}

// ---------- artifacts

/** Files at least this big go through the direct plane (multipart, with progress); smaller ones through one PUT. */
const MULTIPART_FROM = 8 * 1024 * 1024;

export async function artifactsView(ctx, main, ws, prefix) {
  main.append(heading(ctx, ws, 'Artifacts'), wsTabs(ctx, ws, 'files'));
  const client = await ctx.socketFor(ws);
  const art = client.artifacts;
  const grid = h('div', { class: 'grid' });
  main.append(grid);
  const crumbs = h('div', { class: 'crumbs', id: 'folder' });
  const link = (p) => `#/w/${enc(ws)}/files/${enc(p)}`;
  crumbs.append(h('a', { href: link('') }, '/'));
  let acc = '';
  for (const seg of prefix.split('/').filter(Boolean)) {
    acc += `${seg}/`;
    crumbs.append(' ', h('a', { href: link(acc) }, `${seg}/`));
  }
  const rows = h('tbody');
  const pager = h('div', { class: 'pager' });
  grid.append(h('section', { class: 'card wide' }, h('h2', {}, 'Files'), crumbs,
    h('table', { id: 'files' }, h('thead', {}, h('tr', {}, ...['name', 'size', 'type', 'modified', ''].map((t) => h('th', {}, t)))), rows), pager));
  let cursors = [undefined];
  async function show(cursor) {
    const page = await art.list({ prefix: prefix || undefined, cursor, limit: 1000 });
    clear(rows);
    const folders = new Map();
    const files = [];
    for (const f of page.files) {
      const rest = f.path.slice(prefix.length);
      const cut = rest.indexOf('/');
      if (cut >= 0) {
        const name = rest.slice(0, cut + 1);
        const d = folders.get(name) ?? { n: 0, bytes: 0 };
        d.n++; d.bytes += f.size;
        folders.set(name, d);
      } else files.push(f);
    }
    for (const [name, d] of folders) {
      rows.append(h('tr', { 'data-folder': prefix + name }, h('td', {}, h('span', { class: 'kind' }, 'folder '), h('a', { href: link(prefix + name) }, name)),
        h('td', { class: 'num' }, `${d.n} files, ${fmtBytes(d.bytes)}`), h('td', {}), h('td', {}), h('td', {})));
    }
    for (const f of files) {
      const cell = h('td', { class: 'actions' },
        h('button', { type: 'button', 'data-download': f.path, onclick: () => act('download', () => download(f.path)) }, 'Download'));
      if (ctx.allowed('read_write')) {
        cell.append(' ', h('button', { type: 'button', class: 'danger', 'data-delete-file': f.path, onclick: () => act('delete', async () => {
          if (!confirm(`Delete ${f.path}?`)) return;
          await art.delete(f.path);
          toast(`deleted ${f.path}`);
          await show(cursors[cursors.length - 1]);
        }) }, 'Delete'));
      }
      rows.append(h('tr', { 'data-file': f.path }, h('td', { class: 'mono' }, f.path.slice(prefix.length)), h('td', { class: 'num' }, fmtBytes(f.size)),
        h('td', {}, f.contentType ?? ''), h('td', {}, fmtTime(f.lastModified)), cell));
    }
    if (!page.files.length) rows.append(h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'no files here')));
    clear(pager);
    pager.append(
      h('button', { type: 'button', disabled: cursors.length <= 1, onclick: () => act('list', async () => { cursors.pop(); await show(cursors[cursors.length - 1]); }) }, '‹ previous'),
      h('span', {}, ` page ${cursors.length} `),
      h('button', { type: 'button', disabled: !page.nextCursor, onclick: () => act('list', async () => { cursors.push(page.nextCursor); await show(page.nextCursor); }) }, 'next ›'));
  }
  async function download(path) {
    const d = await art.get(path);
    const url = URL.createObjectURL(await d.blob());
    const a = h('a', { href: url, download: path.split('/').pop() });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
  await show(undefined);

  if (ctx.allowed('read_write')) {
    const file = h('input', { type: 'file', id: 'upload-file' });
    const name = h('input', { id: 'upload-path', placeholder: 'path (default: folder + file name)' });
    const bar = h('progress', { id: 'upload-progress', max: 1, value: 0, hidden: true });
    const note = h('span', { id: 'upload-note', class: 'muted' });
    const form = h('form', { id: 'upload-form', class: 'card write' }, h('h2', {}, 'Upload'),
      h('div', { class: 'row' }, file), h('div', { class: 'row' }, name, h('button', { type: 'submit' }, 'Upload')),
      h('div', { class: 'row' }, bar, note),
      h('p', { class: 'muted' }, `Files of ${fmtBytes(MULTIPART_FROM)} or more go in parts straight to the blob store, with progress.`));
    file.onchange = () => { if (file.files[0] && !name.value) name.value = prefix + file.files[0].name; };
    form.onsubmit = (ev) => {
      ev.preventDefault();
      act('upload', async () => {
        const f = file.files[0];
        if (!f) throw new Error('choose a file');
        const path = name.value.trim() || prefix + f.name;
        const t0 = performance.now();
        bar.hidden = false; bar.max = f.size || 1; bar.value = 0;
        window.hyphaConsole.progress = [];
        const progress = (sent, total) => {
          bar.max = total || 1; bar.value = sent;
          note.textContent = `${fmtBytes(sent)} of ${fmtBytes(total)}`;
          window.hyphaConsole.progress.push(sent);
        };
        let info;
        if (f.size >= MULTIPART_FROM) info = await art.upload(path, f, { onProgress: progress, contentType: f.type || undefined });
        else { info = await art.put(path, f, { contentType: f.type || undefined }); progress(f.size, f.size); }
        note.textContent = `stored ${info.path}, ${fmtBytes(info.size)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
        note.dataset.done = info.path;
        toast(`uploaded ${info.path}`);
        name.value = '';
        await show(cursors[cursors.length - 1]);
      });
    };
    grid.append(form);
  }
}

// ---------- the audit trail

export async function auditView(ctx, main, ws) {
  const route = ws ? `/v1/workspaces/${enc(ws)}/audit` : '/v1/audit';
  if (ws) main.append(heading(ctx, ws, 'Audit trail'), wsTabs(ctx, ws, 'audit'));
  else main.append(h('h1', {}, 'Root audit trail'), h('p', { class: 'muted' }, 'Workspace create and delete, backups. A workspace\'s own changes are in its trail.'));
  const rows = h('tbody');
  const note = h('span', { id: 'audit-page', class: 'muted' });
  let page = null;
  const older = h('button', { type: 'button', id: 'audit-older' }, '‹ older');
  const newer = h('button', { type: 'button', id: 'audit-newer' }, 'newer ›');
  main.append(h('section', { class: 'card wide' },
    h('div', { class: 'row' }, h('button', { type: 'button', id: 'audit-latest', onclick: () => act('audit', () => read({})) }, 'Latest'), older, note, newer),
    h('table', { id: 'audit' }, h('thead', {}, h('tr', {}, ...['seq', 'when', 'action', 'target', 'by', 'from', 'details'].map((t) => h('th', {}, t)))), rows),
    h('p', { class: 'muted' }, 'Newest first. Every change made through the control plane, recorded by the server after it succeeded (docs/API.md#audit).')));
  async function read(q) {
    const p = new URLSearchParams({ limit: '50' });
    if (q.before !== undefined) p.set('before', String(q.before));
    if (q.from !== undefined) p.set('from', String(q.from));
    // the newest page: backwards from past the end
    if (q.before === undefined && q.from === undefined) p.set('before', String(Number.MAX_SAFE_INTEGER));
    const r = await ctx.api('GET', `${route}?${p}`);
    const entries = q.from !== undefined ? [...r.entries].reverse() : r.entries;
    page = { entries, first: r.first, last: r.last };
    clear(rows);
    for (const e of entries) {
      const b = e.body;
      rows.append(h('tr', { 'data-action': b.action, 'data-target': b.target ?? '' },
        h('td', { class: 'num' }, String(e.seq)), h('td', {}, fmtTime(b.at)), h('td', { class: 'mono' }, b.action),
        h('td', { class: 'mono' }, b.target ?? b.workspace ?? ''),
        h('td', {}, `${b.by.client_id} (${b.by.permission}${b.by.token_id ? `, ${b.by.token_id}` : ''})`),
        h('td', { class: 'mono' }, `${b.from ?? ''} ${b.via}`), h('td', { class: 'mono' }, b.params ? json(b.params) : '')));
    }
    if (!entries.length) rows.append(h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'nothing recorded yet')));
    const hi = entries[0]?.seq, lo = entries[entries.length - 1]?.seq;
    note.textContent = entries.length ? ` seq ${lo}–${hi} of ${r.first}–${r.last} ` : '';
    older.disabled = !entries.length || lo <= r.first;
    newer.disabled = !entries.length || hi >= r.last;
  }
  older.onclick = () => act('audit', () => read({ before: page.entries[page.entries.length - 1].seq }));
  newer.onclick = () => act('audit', () => read({ from: page.entries[0].seq + 1 }));
  await read({});
}

// ---------- the cluster

export async function clusterView(ctx, main) {
  // kept, not looked up: a refresh still awaiting its answer when the view is left would find no
  // element by id (the view is gone) and throw from a timer
  const state = h('span', { id: 'cluster-state', class: 'pill' }, 'loading');
  main.append(h('h1', {}, 'Cluster'), state);
  const servers = h('tbody');
  const parts = h('tbody');
  const moves = h('ol', { id: 'moves', reversed: true });
  const summary = h('p', { id: 'cluster-summary', class: 'muted' });
  const grid = h('div', { class: 'grid' });
  main.append(summary, grid);
  grid.append(
    h('section', { class: 'card' }, h('h2', {}, 'Servers'), h('table', { id: 'servers' }, h('thead', {}, h('tr', {}, ...['node', 'url', 'coordinator', 'partitions', 'assigned'].map((t) => h('th', {}, t)))), servers)),
    h('section', { class: 'card' }, h('h2', {}, 'Moves seen'), moves, h('p', { class: 'muted' }, 'A partition whose owner or epoch changed between two refreshes (every 2 s) while this page was open.')),
    h('section', { class: 'card wide' }, h('h2', {}, 'Partitions'), h('table', { id: 'partitions' }, h('thead', {}, h('tr', {}, ...['partition', 'owner', 'url', 'epoch'].map((t) => h('th', {}, t)))), parts)));
  let before = null;
  async function refresh() {
    const c = await ctx.api('GET', '/v1/cluster');
    state.textContent = c.cluster ? `cluster mode, seen from ${c.node}` : 'single server (not in cluster mode)';
    summary.textContent = `${c.servers.length} server(s), ${c.partition_count} partitions, ${c.partitions.filter((p) => !p.owner).length} without an owner. Refreshed ${new Date().toLocaleTimeString()}.`;
    clear(servers);
    for (const s of c.servers) {
      servers.append(h('tr', { 'data-node': s.node }, h('td', { class: 'mono' }, s.node), h('td', { class: 'mono' }, s.url), h('td', {}, s.coordinator ? 'yes' : ''),
        h('td', { class: 'num' }, String(s.partitions)), h('td', { class: 'num' }, String(s.assigned))));
    }
    clear(parts);
    const now = new Map();
    for (const p of c.partitions) {
      now.set(p.partition, p);
      const was = before?.get(p.partition);
      if (was && (was.owner !== p.owner || was.epoch !== p.epoch)) {
        moves.prepend(h('li', {}, `${new Date().toLocaleTimeString()} partition ${p.partition}: ${was.owner ?? 'none'} (epoch ${was.epoch}) → ${p.owner ?? 'none'} (epoch ${p.epoch})`));
      }
      parts.append(h('tr', { 'data-partition': String(p.partition), class: was && was.owner !== p.owner ? 'moved' : undefined },
        h('td', { class: 'num' }, String(p.partition)), h('td', { class: 'mono' }, p.owner ?? '—'), h('td', { class: 'mono' }, p.url ?? ''), h('td', { class: 'num' }, String(p.epoch))));
    }
    before = now;
  }
  await refresh();
  const timer = setInterval(() => refresh().catch((e) => { state.textContent = `${e.code}: ${e.message}`; }), 2000);
  ctx.leaving.push(() => clearInterval(timer));
}
