// The Metrics page: /observe/metrics (Prometheus text, no token) read every 2 s, and a few values
// drawn as small SVG charts of the last 2 minutes: operations/s, their p99 latency, commits/s,
// Log appends/s and open sockets.
import { h, clear } from './ui.js';

const EVERY_MS = 2000;
const POINTS = 60;
const SVG = 'http://www.w3.org/2000/svg';

/** name -> [{labels, value}] */
export function parse(text) {
  const out = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    const v = Number(m[4]);
    if (!out.has(m[1])) out.set(m[1], []);
    out.get(m[1]).push({ labels, value: v });
  }
  return out;
}

const sum = (m, name) => (m.get(name) ?? []).reduce((a, s) => a + (Number.isFinite(s.value) ? s.value : 0), 0);

/** The histogram's buckets summed over every op: le -> cumulative count. */
function buckets(m) {
  const b = new Map();
  for (const s of m.get('hypha_operation_seconds_bucket') ?? []) {
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    b.set(le, (b.get(le) ?? 0) + s.value);
  }
  return b;
}

/** p99 (seconds) of what was answered between two scrapes, from the bucket counts' differences. */
function p99(prev, cur) {
  const les = [...cur.keys()].sort((a, b) => a - b);
  const total = (cur.get(Infinity) ?? 0) - (prev.get(Infinity) ?? 0);
  if (total <= 0) return null;
  for (const le of les) {
    if ((cur.get(le) ?? 0) - (prev.get(le) ?? 0) >= 0.99 * total) return le === Infinity ? les[les.length - 2] ?? null : le;
  }
  return null;
}

const SERIES = [
  { id: 'ops', title: 'operations / s', unit: '/s' },
  { id: 'p99', title: 'p99 latency (bucket bound)', unit: 'ms' },
  { id: 'commits', title: 'commits / s', unit: '/s' },
  { id: 'appends', title: 'Log appends / s', unit: '/s' },
  { id: 'sockets', title: 'open sockets', unit: '' },
];

export function metricsView(main) {
  const charts = new Map();
  const status = h('p', { class: 'muted', id: 'metrics-status' }, 'reading /observe/metrics…');
  const grid = h('div', { class: 'grid' });
  main.append(h('h1', {}, 'Metrics'), status, grid);
  for (const s of SERIES) {
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', `0 0 ${POINTS * 5} 80`);
    svg.setAttribute('class', 'chart');
    svg.setAttribute('preserveAspectRatio', 'none');
    const now = h('span', { class: 'now', 'data-series': s.id }, '–');
    grid.append(h('section', { class: 'card', id: `chart-${s.id}` }, h('h2', {}, s.title, ' ', now), svg));
    charts.set(s.id, { svg, now, values: [], ...s });
  }
  let prev = null;
  let stopped = false;
  async function scrape() {
    const res = await fetch('/observe/metrics', { cache: 'no-store' });
    const m = parse(await res.text());
    const cur = {
      t: performance.now(), ops: sum(m, 'hypha_operation_seconds_count'), commits: sum(m, 'hypha_storage_commits'),
      appends: sum(m, 'hypha_log_appends_total'), sockets: sum(m, 'hypha_ws_sockets'), buckets: buckets(m),
    };
    if (prev) {
      const dt = (cur.t - prev.t) / 1000;
      const rate = (k) => Math.max(0, (cur[k] - prev[k]) / dt);
      const p = p99(prev.buckets, cur.buckets);
      push('ops', rate('ops'));
      push('p99', p === null ? null : p * 1000);
      push('commits', rate('commits'));
      push('appends', rate('appends'));
    }
    push('sockets', cur.sockets);
    prev = cur;
    status.textContent = `every ${EVERY_MS / 1000} s from /observe/metrics; last read ${new Date().toLocaleTimeString()}`;
  }
  function push(id, v) {
    const c = charts.get(id);
    c.values.push(v);
    if (c.values.length > POINTS) c.values.shift();
    c.now.textContent = v === null ? '–' : `${v < 10 && v % 1 ? v.toFixed(2) : Math.round(v)}${c.unit}`;
    draw(c);
  }
  function draw(c) {
    clear(c.svg);
    const vals = c.values.map((v) => v ?? 0);
    if (vals.length === 1) vals.unshift(vals[0]);
    const max = Math.max(1, ...vals);
    const xy = vals.map((v, i) => `${(i + POINTS - vals.length) * 5},${78 - (v / max) * 74}`);
    const area = document.createElementNS(SVG, 'polygon');
    area.setAttribute('points', `${(POINTS - vals.length) * 5},78 ${xy.join(' ')} ${(POINTS - 1) * 5},78`);
    const line = document.createElementNS(SVG, 'polyline');
    line.setAttribute('points', xy.join(' '));
    c.svg.append(area);
    const label = document.createElementNS(SVG, 'text');
    label.setAttribute('x', '2');
    label.setAttribute('y', '10');
    label.textContent = `max ${Math.round(max * 100) / 100}`;
    c.svg.append(line, label);
  }
  const tick = async () => {
    if (stopped) return;
    try { await scrape(); } catch (e) { status.textContent = `cannot read /observe/metrics: ${e.message}`; }
    if (!stopped) timer = setTimeout(tick, EVERY_MS);
  };
  let timer = 0;
  tick();
  return () => { stopped = true; clearTimeout(timer); };
}
