// The operator's console (issue 36; docs/OPERATIONS.md#console). Plain ES modules, bundled by
// build.mjs with the TypeScript client. It has no power of its own: it signs in with a token the
// operator gives, keeps it in this tab's sessionStorage only, and calls the same HTTP routes
// (docs/API.md) and socket (docs/PROTOCOL.md) as any client, so the server decides what it may do.
// Routes (the URL's fragment): #/ (sign in), #/workspaces, #/w/WS, #/w/WS/log/NAME, #/w/WS/doc/NAME,
// #/w/WS/tokens, #/w/WS/files/PREFIX, #/w/WS/audit, #/audit (root), #/cluster (root), #/metrics.
import { HyphaClient, HyphaError } from '@hyphamesh/client';
import { h, clear, fmtTime, fmtBytes, json, toast, act } from './ui.js';
import { metricsView } from './metrics.js';
import { wsTabs, tokensView, artifactsView, auditView, clusterView } from './pages.js';

const KEY = 'hypha.console.token';
const TIERS = { read: 0, read_write: 1, admin: 2 };
const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');

/** Who is signed in: {token, root, ws, perm, client} (perm and client from the token; the socket's hello confirms). */
let me = null;
/** The socket of the workspace being looked at: {ws, client}. */
let sock = null;
/** Undo functions of the page shown (subscriptions, timers), run when it is left. */
let leaving = [];

// ---------- the token

function claims(token) {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    return JSON.parse(atob(parts[1].replace(/-/g, '+').replace(/_/g, '/')));
  } catch {
    return null;
  }
}

/**
 * Where each workspace is served: '' for this server, else the origin of the cluster's server that
 * serves it (cluster mode: another server answers its routes with 307, which a page cannot follow
 * with its token, so the console asks `locate` and calls that server itself; the servers of a
 * cluster allow each other's pages, docs/DECISIONS.md).
 */
const owners = new Map();

async function baseOf(ws, token = me?.token) {
  if (owners.has(ws)) return owners.get(ws);
  let base = '';
  const probe = await fetch(`/v1/workspaces/${encodeURIComponent(ws)}/objects?limit=1`, { redirect: 'manual', headers: { Authorization: `Bearer ${token}` } })
    .catch((e) => { throw new HyphaError('unavailable', `the server is not reachable (${e.message})`); });
  if (probe.type === 'opaqueredirect') {
    const where = await api('GET', `/v1/workspaces/${encodeURIComponent(ws)}/locate`, undefined, token, '');
    base = new URL(where.url).origin;
    if (base === location.origin) base = '';
  }
  owners.set(ws, base);
  return base;
}

/** The server of the root audit trail (the reserved workspace _root's partition) in cluster mode. */
async function rootTrailBase() {
  const c = await api('GET', '/v1/cluster', undefined, me.token, '');
  const url = c.partitions.find((p) => p.partition === c.root_partition)?.url;
  const base = url ? new URL(url).origin : '';
  return base === location.origin ? '' : base;
}

async function api(method, path, body, token = me?.token, base) {
  // a workspace's own routes (not /v1/workspaces/{ws} itself) go to the server that serves it
  const m = /^\/v1\/workspaces\/([^/?]+)\/(?!locate)/.exec(path);
  if (base === undefined) base = m ? await baseOf(decodeURIComponent(m[1]), token) : path.startsWith('/v1/audit') && me?.cluster ? await rootTrailBase() : '';
  let res;
  try {
    res = await fetch(base + path, {
      method, redirect: 'manual',
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new HyphaError('unavailable', `the server is not reachable (${e.message})`);
  }
  if (res.type === 'opaqueredirect') {
    // the workspace moved to another server meanwhile: find it again, once
    if (m && owners.has(decodeURIComponent(m[1]))) { owners.delete(decodeURIComponent(m[1])); return api(method, path, body, token); }
    throw new HyphaError('unavailable', 'the server sent this request elsewhere; retry');
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let j = null;
  try { j = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (!res.ok) throw new HyphaError(j?.code ?? 'internal', j?.message ?? `HTTP ${res.status}`);
  return j;
}

async function signIn(token) {
  const c = claims(token);
  if (c && typeof c.ws === 'string') {
    await api('GET', `/v1/workspaces/${encodeURIComponent(c.ws)}`, undefined, token);
    return { token, root: false, ws: c.ws, perm: c.perm, client: c.sub };
  }
  // not a workspace token: the root token is the only other kind, and only it may list the cluster
  const list = await api('GET', '/v1/workspaces', undefined, token);
  if (!list) throw new HyphaError('unauthorized', 'not a token of this server');
  // the Cluster page is shown in cluster mode only
  const cluster = await api('GET', '/v1/cluster', undefined, token).then((c) => c.cluster === true, () => false);
  return { token, root: true, ws: null, perm: 'admin', client: 'root', cluster };
}

function signOut() {
  sessionStorage.removeItem(KEY);
  me = null;
  closeSocket();
  if (location.hash === '#/' || location.hash === '') navigate(); else location.hash = '#/';
}

const allowed = (need) => me && TIERS[me.perm] >= TIERS[need];

async function socketFor(ws) {
  const c = await connectTo(ws);
  const el = document.getElementById('sock-state');
  if (el) el.textContent = 'connected';
  return c;
}

async function connectTo(ws) {
  if (sock?.ws === ws) return sock.client ?? sock.promise;
  closeSocket();
  const entry = { ws, client: null };
  sock = entry;
  entry.promise = HyphaClient.connect(`${(await baseOf(ws)) || location.origin}/v1/workspaces/${encodeURIComponent(ws)}`,
    // audit=writes: the server records the console's appends and Doc writes in the audit trail
    { token: me.token, auditWrites: true });
  try {
    entry.client = await entry.promise;
  } catch (e) {
    if (sock === entry) sock = null;
    throw e;
  }
  if (sock !== entry) { entry.client.close(); throw new HyphaError('unavailable', 'left the workspace'); }
  // the hello says what the socket may do: the token's tier as the server sees it
  me.perm = entry.client.info.permission;
  entry.client.onState((s) => {
    const el = document.getElementById('sock-state');
    if (el) el.textContent = s;
  });
  window.hyphaConsole.client = entry.client;
  return entry.client;
}

function closeSocket() {
  const s = sock;
  sock = null;
  window.hyphaConsole.client = null;
  if (s?.client) s.client.close().catch(() => {});
  else s?.promise?.then((c) => c.close(), () => {});
}

// ---------- routing

function header() {
  clear(nav);
  if (!me) { who.textContent = ''; return; }
  if (me.root) nav.append(h('a', { href: '#/workspaces' }, 'Workspaces'), h('a', { href: '#/audit', id: 'nav-audit' }, 'Audit'));
  else nav.append(h('a', { href: `#/w/${me.ws}` }, me.ws));
  if (me.root && me.cluster) nav.append(h('a', { href: '#/cluster', id: 'nav-cluster' }, 'Cluster'));
  nav.append(h('a', { href: '#/metrics' }, 'Metrics'));
  who.textContent = '';
  who.append(
    h('span', { id: 'me' }, me.root ? 'root' : `${me.client} @ ${me.ws}`),
    h('span', { class: `tier tier-${me.perm}`, id: 'my-tier' }, me.perm),
    h('button', { type: 'button', class: 'link', id: 'sign-out', onclick: signOut }, 'Sign out'));
}

async function route() {
  for (const undo of leaving.splice(0)) { try { undo(); } catch { /* gone */ } }
  if (!me) {
    const saved = sessionStorage.getItem(KEY);
    if (saved) {
      try { me = await signIn(saved); } catch { sessionStorage.removeItem(KEY); }
    }
  }
  header();
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  clear(main);
  if (!me) { signInView(); return; }
  const [top, ws, kind, name] = parts;
  try {
    if (top === 'metrics') { leaving.push(metricsView(main)); return; }
    const ctx = { api, me, socketFor, allowed, leaving };
    if (top === 'cluster' && me.root) { closeSocket(); await clusterView(ctx, main); return; }
    if (top === 'audit' && me.root) { closeSocket(); await auditView(ctx, main, null); return; }
    if (top === 'w' && ws) {
      if (kind === 'tokens') await tokensView(ctx, main, ws);
      else if (kind === 'audit') await auditView(ctx, main, ws);
      else if (kind === 'files') await artifactsView(ctx, main, ws, name ?? '');
      else if (kind === 'log' && name) await logView(ws, name);
      else if (kind === 'doc' && name) await docView(ws, name);
      else await workspaceView(ws);
      return;
    }
    if (!me.root) { location.replace(`#/w/${encodeURIComponent(me.ws)}`); return; }
    closeSocket();
    await workspacesView();
  } catch (e) {
    main.append(h('p', { class: 'error' }, `${e.code ?? 'error'}: ${e.message}`));
  }
}

// ---------- sign in

function signInView() {
  const input = h('input', { type: 'password', id: 'token', autocomplete: 'off', placeholder: 'hr_… or eyJ…', required: true });
  const err = h('p', { class: 'error', id: 'sign-in-error' });
  const form = h('form', { class: 'card narrow', id: 'sign-in' },
    h('h1', {}, 'Sign in'),
    h('p', { class: 'muted' }, 'With the root token, or a token of a workspace (any tier). It stays in this tab only (sessionStorage) and goes to this server only.'),
    h('label', {}, 'Token ', input),
    h('button', { type: 'submit' }, 'Sign in'), err);
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    err.textContent = '';
    try {
      me = await signIn(input.value.trim());
      sessionStorage.setItem(KEY, me.token);
      navigate(); // the page asked for (a link into a workspace keeps working after signing in)
    } catch (e) {
      err.textContent = `${e.code}: ${e.message}`;
    }
  };
  main.append(form);
  input.focus();
}

// ---------- workspaces

const PAGE = 25;

async function workspacesView() {
  let all = [];
  let page = 0;
  const tbody = h('tbody');
  const pager = h('div', { class: 'pager' });
  const box = h('section', { class: 'card' }, h('h1', {}, 'Workspaces'));
  if (me.root) {
    const name = h('input', { id: 'new-ws', placeholder: 'name (A-Z a-z 0-9 . _ -)', required: true, pattern: '[A-Za-z0-9][A-Za-z0-9._\\-]{0,127}' });
    const form = h('form', { class: 'row', id: 'create-ws' }, name, h('button', { type: 'submit' }, 'Create workspace'));
    form.onsubmit = (ev) => {
      ev.preventDefault();
      act('create workspace', async () => {
        await api('POST', '/v1/workspaces', { name: name.value.trim() });
        toast(`created ${name.value.trim()}`);
        name.value = '';
        await load();
      });
    };
    box.append(form);
  }
  box.append(h('table', { id: 'workspaces' }, h('thead', {}, h('tr', {}, h('th', {}, 'name'), h('th', {}, 'created'), h('th', {}, ''))), tbody), pager);
  main.append(box);

  function render() {
    clear(tbody);
    const pages = Math.max(1, Math.ceil(all.length / PAGE));
    page = Math.min(page, pages - 1);
    for (const w of all.slice(page * PAGE, page * PAGE + PAGE)) {
      const cell = h('td', { class: 'actions' });
      if (me.root) {
        cell.append(h('button', { type: 'button', class: 'danger', 'data-delete': w.name, onclick: () => confirmDelete(cell, w.name) }, 'Delete…'));
      }
      tbody.append(h('tr', { 'data-ws': w.name }, h('td', {}, h('a', { href: `#/w/${encodeURIComponent(w.name)}` }, w.name)), h('td', {}, fmtTime(w.created_at)), cell));
    }
    if (!all.length) tbody.append(h('tr', {}, h('td', { colspan: 3, class: 'muted' }, 'no workspaces yet')));
    clear(pager);
    pager.append(
      h('button', { type: 'button', disabled: page === 0, onclick: () => { page--; render(); } }, '‹ previous'),
      h('span', { id: 'ws-page' }, ` page ${page + 1} of ${pages} (${all.length} workspaces) `),
      h('button', { type: 'button', disabled: page >= pages - 1, onclick: () => { page++; render(); } }, 'next ›'));
  }

  function confirmDelete(cell, name) {
    clear(cell);
    const typed = h('input', { placeholder: `type ${name}`, class: 'confirm', 'aria-label': `type ${name} to delete it` });
    const go = h('button', { type: 'button', class: 'danger', disabled: true }, 'Delete for good');
    typed.oninput = () => { go.disabled = typed.value !== name; };
    go.onclick = () => act('delete workspace', async () => {
      if (typed.value !== name) return;
      await api('DELETE', `/v1/workspaces/${encodeURIComponent(name)}`);
      toast(`deleted ${name} and everything in it`);
      await load();
    });
    cell.append(h('span', { class: 'muted' }, 'This deletes every Log, Doc, token and file of it. '), typed, go,
      h('button', { type: 'button', onclick: render }, 'Cancel'));
    typed.focus();
  }

  async function load() {
    all = (await api('GET', '/v1/workspaces')).workspaces;
    render();
  }
  await load();
}

// ---------- a workspace

async function workspaceView(ws) {
  const title = h('h1', {}, 'Workspace ', h('span', { class: 'mono' }, ws));
  const state = h('span', { id: 'sock-state', class: 'pill' }, 'connecting');
  main.append(h('div', { class: 'crumbs' }, me.root ? h('a', { href: '#/workspaces' }, 'Workspaces') : '', me.root ? ' / ' : '', ws), title, state);
  const client = await socketFor(ws);
  main.append(wsTabs({ allowed }, ws, ''));
  state.textContent = 'connected';
  const grid = h('div', { class: 'grid' });
  main.append(grid);

  // Logs and Docs: the control plane's listing, a page at a time, filtered by a name prefix
  const prefix = h('input', { id: 'prefix', placeholder: 'name prefix' });
  const sortBy = h('select', { id: 'sort', 'aria-label': 'sort by' },
    h('option', { value: 'name' }, 'by kind and name'), h('option', { value: 'size' }, 'by size'), h('option', { value: 'activity' }, 'by last activity'));
  const order = h('select', { id: 'order', 'aria-label': 'order' }, h('option', { value: 'desc' }, 'largest / newest first'), h('option', { value: 'asc' }, 'smallest / oldest first'));
  order.disabled = true;
  sortBy.onchange = () => { order.disabled = sortBy.value === 'name'; first(); };
  order.onchange = () => first();
  const tbody = h('tbody');
  const pager = h('div', { class: 'pager' });
  const openName = h('input', { id: 'open-name', placeholder: 'a Log or Doc name', pattern: '[A-Za-z0-9][A-Za-z0-9._\\-]{0,127}' });
  const objects = h('section', { class: 'card wide' }, h('h2', {}, 'Logs and Docs'),
    h('form', { class: 'row', id: 'filter-form', onsubmit: (ev) => { ev.preventDefault(); first(); } }, prefix, h('button', { type: 'submit' }, 'Filter'), sortBy, order),
    h('table', { id: 'objects' }, h('thead', {}, h('tr', {}, ...['kind', 'name', 'size', 'last activity', 'entries / version'].map((t) => h('th', {}, t)))), tbody),
    pager,
    h('form', { class: 'row', onsubmit: (ev) => ev.preventDefault() }, openName,
      h('button', { type: 'button', onclick: () => openName.value && (location.hash = `#/w/${encodeURIComponent(ws)}/log/${encodeURIComponent(openName.value)}`) }, 'Open Log'),
      h('button', { type: 'button', onclick: () => openName.value && (location.hash = `#/w/${encodeURIComponent(ws)}/doc/${encodeURIComponent(openName.value)}`) }, 'Open Doc')),
    h('p', { class: 'muted' }, 'A Log or Doc is listed from its first write.'));
  grid.append(objects);
  const SHOW = 50;
  let cursors = [];   // the cursor each shown page started from
  let next;           // where the next page starts (undefined: no more)
  async function fetchPage(from) {
    // pages of the listing until SHOW names match the prefix, or the listing ends: never everything at once
    const p = prefix.value.trim();
    const rows = [];
    let cursor = from;
    for (let rounds = 0; rounds < 20; rounds++) {
      const q = new URLSearchParams({ limit: String(p ? 200 : SHOW) });
      if (sortBy.value !== 'name') { q.set('sort', sortBy.value); q.set('order', order.value); }
      if (cursor) q.set('cursor', cursor);
      const page = await api('GET', `/v1/workspaces/${encodeURIComponent(ws)}/objects?${q}`);
      for (const o of page.objects) if (o.name.startsWith(p)) rows.push(o);
      cursor = page.next_cursor;
      if (!cursor || rows.length >= SHOW) break;
    }
    return { rows, next: cursor };
  }
  async function show(from) {
    const { rows, next: n } = await fetchPage(from);
    next = n;
    clear(tbody);
    for (const o of rows) {
      tbody.append(h('tr', { 'data-object': `${o.kind}:${o.name}` },
        h('td', {}, h('span', { class: `kind kind-${o.kind}` }, o.kind)),
        h('td', {}, h('a', { href: `#/w/${encodeURIComponent(ws)}/${o.kind}/${encodeURIComponent(o.name)}` }, o.name)),
        h('td', { class: 'num' }, fmtBytes(o.size)), h('td', {}, fmtTime(o.last_activity)),
        h('td', { class: 'num' }, o.kind === 'log' ? `${o.entries} (${o.first_seq}–${o.last_seq})` : `v${o.version}`)));
    }
    if (!rows.length) tbody.append(h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'none')));
    clear(pager);
    pager.append(
      h('button', { type: 'button', disabled: cursors.length <= 1, onclick: () => act('list', async () => { cursors.pop(); await show(cursors[cursors.length - 1]); }) }, '‹ previous'),
      h('span', {}, ` page ${cursors.length} `),
      h('button', { type: 'button', disabled: !next, onclick: () => act('list', async () => { cursors.push(next); await show(next); }) }, 'next ›'));
  }
  const first = () => act('list', async () => { cursors = [undefined]; await show(undefined); });
  await first();

  // connected clients and presence, live
  const members = h('tbody');
  grid.append(h('section', { class: 'card' }, h('h2', {}, 'Presence'),
    h('table', { id: 'presence' }, h('thead', {}, h('tr', {}, h('th', {}, 'client'), h('th', {}, 'state'), h('th', {}, 'meta'), h('th', {}, 'since'))), members)));
  const renderMembers = (map) => {
    clear(members);
    for (const m of [...map.values()].sort((a, b) => a.client.localeCompare(b.client))) {
      members.append(h('tr', { 'data-client': m.client }, h('td', {}, m.client), h('td', {}, h('span', { class: `state-${m.state}` }, m.state)),
        h('td', { class: 'mono' }, json(m.meta)), h('td', {}, fmtTime(m.since))));
    }
    if (!map.size) members.append(h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'nobody has set presence')));
  };
  const psub = await client.presence.subscribe((ev) => renderMembers(ev.members));
  renderMembers(psub.members);
  leaving.push(() => psub.close());

  // the service registry: the protocol has no event for it, so it is listed again every 2 s
  const services = h('tbody');
  grid.append(h('section', { class: 'card' }, h('h2', {}, 'Services'),
    h('table', { id: 'services' }, h('thead', {}, h('tr', {}, h('th', {}, 'service'), h('th', {}, 'provider'), h('th', {}, 'methods'))), services),
    h('p', { class: 'muted' }, 'Listed again every 2 s.')));
  const listServices = async () => {
    const list = await client.services();
    clear(services);
    for (const s of list) {
      for (const p of s.providers) {
        services.append(h('tr', { 'data-service': s.service }, h('td', {}, s.service), h('td', {}, `${p.client} #${p.session}${p.visibility === 'private' ? ' (private)' : ''}`),
          h('td', { class: 'mono' }, p.methods.length ? p.methods.join(', ') : 'any')));
      }
    }
    if (!list.length) services.append(h('tr', {}, h('td', { colspan: 3, class: 'muted' }, 'no services registered')));
  };
  await listServices();
  const timer = setInterval(() => listServices().catch(() => {}), 2000);
  leaving.push(() => clearInterval(timer));
}

// ---------- a Log

function entryRow(e) {
  return h('tr', { 'data-seq': String(e.seq) }, h('td', { class: 'num' }, String(e.seq)), h('td', {}, fmtTime(e.ts)), h('td', { class: 'mono body' }, json(e.body)));
}

async function logView(ws, name) {
  main.append(crumbs(ws, 'Log', name));
  const client = await socketFor(ws);
  const log = client.log(name);
  const info = await log.info();
  const infoLine = h('p', { id: 'log-info', class: 'muted' });
  const retentionText = (r) => (r && (r.maxEntries || r.maxAgeSeconds)
    ? `retention: ${r.maxEntries ? `at most ${r.maxEntries} entries` : ''}${r.maxEntries && r.maxAgeSeconds ? ', ' : ''}${r.maxAgeSeconds ? `at most ${r.maxAgeSeconds} s old` : ''}`
    : 'no retention limit');
  const showInfo = (i) => { infoLine.textContent = `${i.entries} entries held, seq ${i.first}–${i.last}, ${fmtBytes(i.bytes)}; ${retentionText(i.retention)}`; };
  showInfo(info);
  main.append(infoLine);
  const grid = h('div', { class: 'grid' });
  main.append(grid);

  // pages from any seq
  const from = h('input', { id: 'from-seq', type: 'number', min: 1, value: String(Math.max(info.first, 1)) });
  const rows = h('tbody');
  const pageNote = h('span', { class: 'muted' });
  let shown = null;
  async function read(q) {
    const p = await log.read({ ...q, limit: 50 });
    shown = p;
    clear(rows);
    for (const e of p.entries) rows.append(entryRow(e));
    if (!p.entries.length) rows.append(h('tr', {}, h('td', { colspan: 3, class: 'muted' }, 'no entries there')));
    pageNote.textContent = p.entries.length ? ` seq ${p.entries[0].seq}–${p.entries[p.entries.length - 1].seq} of ${p.first}–${p.last} ` : ` (the Log holds ${p.first}–${p.last}) `;
  }
  // jump to a time: the first entry at or after it, found by bisecting seq (about 20 one-entry reads
  // for a million entries): entries' ts are the server's commit clock, rising with seq
  const at = h('input', { id: 'at-time', type: 'datetime-local', step: 1 });
  const jumpNote = h('span', { id: 'jump-note', class: 'muted' });
  async function jumpToTime(t) {
    const i = await log.info();
    if (i.last < i.first) { jumpNote.textContent = ' the Log holds no entries'; return; }
    let lo = i.first, hi = i.last + 1, reads = 0;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const p = await log.read({ from: mid, limit: 1 });
      reads++;
      const e = p.entries[0];
      if (!e) { hi = mid; continue; }
      if (e.ts >= t) hi = mid; else lo = e.seq + 1;
    }
    window.hyphaConsole.jumpReads = reads;
    if (lo > i.last) { jumpNote.textContent = ` nothing at or after ${fmtTime(t)} (the last entry is older; ${reads} reads)`; await read({ before: i.last + 1 }); return; }
    jumpNote.textContent = ` seq ${lo} is the first entry at or after ${fmtTime(t)} (${reads} reads)`;
    from.value = String(lo);
    await read({ from: lo });
  }
  grid.append(h('section', { class: 'card wide' }, h('h2', {}, 'Entries'),
    h('form', { class: 'row', id: 'time-form', onsubmit: (ev) => {
      ev.preventDefault();
      act('jump', async () => {
        const t = new Date(at.value).getTime();
        if (Number.isNaN(t)) throw new HyphaError('bad_request', 'pick a date and time');
        await jumpToTime(t);
      });
    } }, h('label', {}, 'at or after ', at), h('button', { type: 'submit' }, 'Jump to time'), jumpNote),
    h('form', { class: 'row', id: 'read-form', onsubmit: (ev) => { ev.preventDefault(); act('read', () => read({ from: Number(from.value) || 1 })); } },
      h('label', {}, 'from seq ', from), h('button', { type: 'submit' }, 'Read'),
      h('button', { type: 'button', id: 'older', onclick: () => act('read', () => (shown?.entries.length ? read({ before: shown.entries[0].seq }) : read({ from: 1 }))) }, '‹ older'),
      pageNote,
      h('button', { type: 'button', id: 'newer', onclick: () => act('read', () => (shown?.next ? read({ from: shown.next }) : read({ before: (shown?.last ?? 0) + 1 }))) }, 'newer ›')),
    h('table', { id: 'entries' }, h('thead', {}, h('tr', {}, h('th', {}, 'seq'), h('th', {}, 'time'), h('th', {}, 'body'))), rows)));
  await read({ from: Math.max(info.first, 1) });

  // the live tail, which can be paused (a paused tail is unsubscribed; resuming replays what it missed)
  const tail = h('tbody');
  const tailState = h('span', { id: 'tail-state', class: 'pill' }, 'live');
  const pause = h('button', { type: 'button', id: 'pause' }, 'Pause');
  let sub = null;
  let last = info.last;
  let paused = false;
  async function follow() {
    const s = await log.subscribe({ since: last, credit: 200 });
    sub = s;
    (async () => {
      for await (const e of s) {
        last = e.seq;
        tail.prepend(entryRow(e));
        while (tail.children.length > 200) tail.lastChild.remove();
      }
      if (sub === s && !paused) tailState.textContent = 'ended (the Log was deleted)';
    })().catch((e) => { tailState.textContent = `ended: ${e.code ?? ''} ${e.message}`; });
  }
  pause.onclick = () => act('tail', async () => {
    paused = !paused;
    pause.textContent = paused ? 'Resume' : 'Pause';
    tailState.textContent = paused ? `paused at seq ${last}` : 'live';
    if (paused) { const s = sub; sub = null; await s?.close(); } else await follow();
  });
  await follow();
  leaving.push(() => { paused = true; sub?.close(); });
  grid.append(h('section', { class: 'card' }, h('h2', {}, 'Live tail ', tailState), h('div', { class: 'row' }, pause),
    h('table', { id: 'tail' }, h('thead', {}, h('tr', {}, h('th', {}, 'seq'), h('th', {}, 'time'), h('th', {}, 'body'))), tail)));

  if (allowed('admin')) grid.append(logAdmin(name, log, info, showInfo, () => read({ from: Number(from.value) || 1 })));

  if (allowed('read_write')) {
    const body = h('textarea', { id: 'append-body', rows: 4, spellcheck: false }, '{"text": "hello"}');
    const form = h('form', { id: 'append-form', class: 'card write' }, h('h2', {}, 'Append'), body,
      h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Append'), h('span', { class: 'muted' }, 'one JSON value')));
    form.onsubmit = (ev) => {
      ev.preventDefault();
      act('append', async () => {
        const seq = await log.append(parseJson(body.value));
        toast(`appended at seq ${seq}`);
        showInfo(await log.info());
      });
    };
    grid.append(form);
  }
}

/**
 * Truncate and retention (shown to admins: the server lets read_write do both, the console keeps
 * destructive controls to admins), each after a typed confirmation: the Log's name.
 */
function logAdmin(name, log, info, showInfo, reload) {
  const before = h('input', { id: 'truncate-before', type: 'number', min: 1, placeholder: 'seq' });
  const maxEntries = h('input', { id: 'ret-entries', type: 'number', min: 0, value: String(info.retention?.maxEntries ?? 0) });
  const maxAge = h('input', { id: 'ret-age', type: 'number', min: 0, value: String(info.retention?.maxAgeSeconds ?? 0) });
  const confirmBox = h('div', { id: 'log-confirm', class: 'conflict', hidden: true });
  function confirmThen(what, fn) {
    clear(confirmBox);
    const typed = h('input', { id: 'log-confirm-name', class: 'confirm', placeholder: `type ${name}`, 'aria-label': `type ${name} to confirm` });
    const go = h('button', { type: 'button', id: 'log-confirm-go', class: 'danger', disabled: true }, 'Confirm');
    typed.oninput = () => { go.disabled = typed.value !== name; };
    go.onclick = () => act(what.split(':')[0], async () => {
      if (typed.value !== name) return;
      await fn();
      confirmBox.hidden = true;
      const i = await log.info();
      showInfo(i);
      await reload();
    });
    confirmBox.append(h('p', {}, h('strong', {}, what)), typed, go, h('button', { type: 'button', onclick: () => { confirmBox.hidden = true; } }, 'Cancel'));
    confirmBox.hidden = false;
    typed.focus();
  }
  const truncate = h('form', { class: 'row', id: 'truncate-form', onsubmit: (ev) => {
    ev.preventDefault();
    const b = Number(before.value);
    if (!Number.isInteger(b) || b < 1) { toast('truncate failed: bad_request: a seq of 1 or more', 'error'); return; }
    confirmThen(`truncate: remove every entry before seq ${b} for good`, async () => {
      const first = await log.truncate(b);
      toast(`truncated: the Log now starts at seq ${first}`);
    });
  } }, h('label', {}, 'remove entries before seq ', before), h('button', { type: 'submit', class: 'danger' }, 'Truncate…'));
  const retention = h('form', { class: 'row', id: 'retention-form', onsubmit: (ev) => {
    ev.preventDefault();
    const r = { maxEntries: Number(maxEntries.value) || 0, maxAgeSeconds: Number(maxAge.value) || 0 };
    confirmThen(`retention: keep at most ${r.maxEntries || 'any number of'} entries, ${r.maxAgeSeconds ? `none older than ${r.maxAgeSeconds} s` : 'of any age'} (older ones are removed for good)`, async () => {
      await log.configure(r);
      toast('retention set');
    });
  } }, h('label', {}, 'max entries ', maxEntries), h('label', {}, 'max age (s) ', maxAge), h('button', { type: 'submit', class: 'danger' }, 'Set retention…'),
  h('span', { class: 'muted' }, '0: no limit'));
  return h('section', { class: 'card write', id: 'log-admin' }, h('h2', {}, 'Truncate and retention'), truncate, retention, confirmBox);
}

// ---------- a Doc

async function docView(ws, name) {
  main.append(crumbs(ws, 'Doc', name));
  const client = await socketFor(ws);
  const doc = client.doc(name);
  const version = h('span', { id: 'doc-version' });
  const value = h('pre', { id: 'doc-value', class: 'mono' });
  const changes = h('ol', { id: 'doc-changes', reversed: true });
  const drift = h('p', { id: 'doc-drift', class: 'warn', hidden: true });
  let editor = null;
  let base = 0;
  const sub = await doc.subscribe((ev, s) => {
    version.textContent = String(s.version);
    value.textContent = json(s.value, 2);
    changes.prepend(h('li', {}, `${new Date().toLocaleTimeString()} ${ev.op}${ev.path ? ` ${ev.path}` : ''} → version ${ev.version}`));
    while (changes.children.length > 50) changes.lastChild.remove();
    if (editor && s.version !== base) { drift.hidden = false; drift.textContent = `The Doc changed since you loaded version ${base}: it is at version ${s.version}. Saving will be refused as a conflict.`; }
  });
  leaving.push(() => sub.close());
  version.textContent = String(sub.version);
  value.textContent = json(sub.value, 2);
  const grid = h('div', { class: 'grid' });
  main.append(grid);
  grid.append(h('section', { class: 'card wide' }, h('h2', {}, 'Value at version ', version), value),
    h('section', { class: 'card' }, h('h2', {}, 'Live changes'), changes));

  if (allowed('read_write')) {
    const baseEl = h('span', { id: 'doc-base' });
    editor = h('textarea', { id: 'doc-editor', rows: 10, spellcheck: false });
    const conflict = h('div', { id: 'doc-conflict', class: 'conflict', hidden: true });
    const load = () => {
      base = sub.version;
      baseEl.textContent = String(base);
      editor.value = json(sub.value, 2);
      conflict.hidden = true;
      drift.hidden = true;
    };
    load();
    const save = h('button', { type: 'submit', id: 'doc-save' }, 'Save (compare-and-set)');
    const form = h('form', { id: 'doc-edit', class: 'card wide write' }, h('h2', {}, 'Edit (from version ', baseEl, ')'), editor, drift, conflict,
      h('div', { class: 'row' }, save, h('button', { type: 'button', id: 'doc-reload', onclick: load }, 'Load the current value')));
    form.onsubmit = (ev) => {
      ev.preventDefault();
      act('save', async () => {
        const v = parseJson(editor.value);
        try {
          const nv = await doc.cas(base, v);
          base = nv;
          baseEl.textContent = String(nv);
          conflict.hidden = true;
          drift.hidden = true;
          toast(`saved: version ${nv}`);
        } catch (e) {
          if (!(e instanceof HyphaError) || e.code !== 'conflict') throw e;
          clear(conflict);
          conflict.append(h('strong', {}, 'Conflict: nothing was overwritten. '),
            `You edited version ${base}; the Doc is at version ${e.details?.version}. Its value now:`,
            h('pre', { class: 'mono' }, json(e.details?.value, 2)),
            h('button', { type: 'button', onclick: load }, 'Discard my edit and load it'));
          conflict.hidden = false;
        }
      });
    };
    const path = h('input', { id: 'incr-path', placeholder: '/counter', value: '/count' });
    const delta = h('input', { id: 'incr-delta', type: 'number', value: '1', step: 'any' });
    const incr = h('form', { id: 'incr-form', class: 'card write' }, h('h2', {}, 'Increment'),
      h('div', { class: 'row' }, h('label', {}, 'path ', path), h('label', {}, 'by ', delta), h('button', { type: 'submit' }, 'incr')),
      h('p', { class: 'muted' }, 'A JSON Pointer to a number (made 0 when missing).'));
    incr.onsubmit = (ev) => {
      ev.preventDefault();
      act('incr', async () => {
        const r = await doc.incr(path.value, Number(delta.value));
        toast(`${path.value} is ${r.value} at version ${r.version}`);
      });
    };
    grid.append(form, incr);
  }
}

function crumbs(ws, kind, name) {
  return h('div', {},
    h('div', { class: 'crumbs' }, me.root ? h('a', { href: '#/workspaces' }, 'Workspaces') : '', me.root ? ' / ' : '',
      h('a', { href: `#/w/${encodeURIComponent(ws)}` }, ws), ` / ${kind}`),
    h('h1', {}, `${kind} `, h('span', { class: 'mono' }, name), ' ', h('span', { id: 'sock-state', class: 'pill' }, 'connecting')));
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HyphaError('bad_request', `not JSON: ${e.message}`);
  }
}

// ---------- start

// for the tests and the curious: the socket in use, and the page's own error display
window.hyphaConsole = { client: null, act };
// one page at a time: a page still loading finishes (and its undo functions are recorded) before the next starts
let routing = Promise.resolve();
const navigate = () => { routing = routing.then(route, route); };
window.addEventListener('hashchange', navigate);
navigate();
