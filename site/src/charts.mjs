// Inline SVG charts drawn at build time: no script, no library, readable without a server.
// Every plotted value is an element with class "datum" and data-* attributes naming what it is,
// plus a <title> tooltip, so a reader (or a test) can tell what each mark stands for.

import { esc, ms, rate, when } from './format.mjs';

export const COLOURS = { 'hypha-mesh': '#0b7a5a', nats: '#2f62c8', redis: '#c8402f' };
const OTHER = ['#7a4fb0', '#b07a1a', '#4f8fa0', '#777777'];
const DASHES = ['', '5 3', '2 3', '8 3 2 3'];

/** Colour and dash for a series: colour by system, dash by variant (e.g. artifact provider). */
export function seriesStyle(system, variantIndex = 0) {
  const colour = COLOURS[system] || OTHER[Math.abs(hash(system)) % OTHER.length];
  return { colour, dash: DASHES[variantIndex % DASHES.length] };
}

function hash(s) {
  let h = 0;
  for (const c of String(s)) h = (h * 31 + c.charCodeAt(0)) | 0;
  return h;
}

function n(v) {
  return Number.isFinite(v) ? Math.round(v * 10) / 10 : 0;
}

/** Log scale over positive values: domain in whole decades, ticks at 1-2-5 when few decades. */
export function logScale(values, from, to) {
  const pos = values.filter((v) => Number.isFinite(v) && v > 0);
  let lo = pos.length ? 10 ** Math.floor(Math.log10(Math.min(...pos))) : 1;
  let hi = pos.length ? 10 ** Math.ceil(Math.log10(Math.max(...pos))) : 10;
  if (hi <= lo) hi = lo * 10;
  const L = Math.log10(lo);
  const H = Math.log10(hi);
  const f = (v) => from + ((Math.log10(Math.max(v, lo)) - L) / (H - L)) * (to - from);
  const ticks = [];
  const decades = H - L;
  for (let e = L; e <= H; e++) {
    for (const m of decades <= 2 ? [1, 2, 5] : decades <= 4 ? [1, 3] : [1]) {
      const t = m * 10 ** e;
      if (t >= lo * 0.999 && t <= hi * 1.001) ticks.push(Number(t.toPrecision(6)));
    }
  }
  return { f, ticks, lo, hi };
}

/** Linear scale from 0 to a round maximum. */
export function linearScale(values, from, to) {
  const max = Math.max(0, ...values.filter(Number.isFinite));
  const step = niceStep(max / 4 || 1);
  const hi = Math.max(step, Math.ceil(max / step) * step);
  const f = (v) => from + (v / hi) * (to - from);
  const ticks = [];
  for (let t = 0; t <= hi + step / 2; t += step) ticks.push(Number(t.toPrecision(6)));
  return { f, ticks, lo: 0, hi };
}

function niceStep(raw) {
  const e = 10 ** Math.floor(Math.log10(raw));
  const m = raw / e;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * e;
}

/** Axis labels: as short as the value allows (0.2, 1, 50k, 1.5M). */
function tickLabel(v) {
  const short = (x) => String(Number(x.toPrecision(3)));
  if (v >= 1e6) return `${short(v / 1e6)}M`;
  if (v >= 1e3) return `${short(v / 1e3)}k`;
  return short(v);
}

function open(w, h, kind, label, extra = '') {
  return `<svg class="chart" data-chart="${esc(kind)}" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="${esc(label)}" xmlns="http://www.w3.org/2000/svg"${extra}><title>${esc(label)}</title>`;
}

/** Legend entries in a row, wrapping to a second row (14 px lower) when the first is full. */
function legend(series, x, y, maxX = 370) {
  let out = '';
  let cx = x;
  let cy = y;
  for (const s of series) {
    const text = s.label;
    const width = 36 + text.length * 6.8;
    if (cx > x && cx + width > maxX) { cx = x; cy += 14; }
    out += `<g class="legend"><line x1="${cx}" y1="${cy}" x2="${cx + 16}" y2="${cy}" stroke="${s.colour}" stroke-width="2.5"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`
      + `<text x="${cx + 20}" y="${cy + 4}">${esc(text)}</text></g>`;
    cx += width;
  }
  return out;
}

/**
 * Latency percentiles of one scenario: p50 → p95 → p99 → max on a log axis, one line per row,
 * with horizontal lines for the marks that are fixed latencies.
 * rows: [{label, system, variantIndex, p50_ms, p95_ms, p99_ms, max_ms}]; marks: [{label, value, kind}]
 */
export function latencyChart({ id, title, rows, marks = [] }) {
  const W = 380, H = 240, L = 52, R = 12, T = 40, B = 62;
  const cats = [['p50_ms', 'p50'], ['p95_ms', 'p95'], ['p99_ms', 'p99'], ['max_ms', 'max']];
  const values = rows.flatMap((r) => cats.map(([f]) => r[f])).concat(marks.map((m) => m.value));
  const y = logScale(values, T + (H - T - B), T);
  const xAt = (i) => L + 24 + i * ((W - L - R - 48) / (cats.length - 1));
  let s = open(W, H, 'latency', `${title}: latency percentiles (ms, log scale)`, ` data-scenario="${esc(id)}"`);
  s += `<text class="ctitle" x="10" y="16">${esc(title)}</text><text class="csub" x="10" y="30">latency percentiles, ms (log scale)</text>`;
  for (const t of y.ticks) {
    s += `<line class="grid" x1="${L}" x2="${W - R}" y1="${n(y.f(t))}" y2="${n(y.f(t))}"/><text class="tick" x="${L - 6}" y="${n(y.f(t)) + 4}" text-anchor="end">${esc(tickLabel(t))}</text>`;
  }
  cats.forEach(([, lab], i) => {
    s += `<text class="tick" x="${n(xAt(i))}" y="${H - B + 16}" text-anchor="middle">${lab}</text>`;
  });
  for (const m of marks) {
    const yy = n(y.f(m.value));
    s += `<g class="mark datum-mark" data-kind="${esc(m.kind)}" data-value="${m.value}"><line x1="${L}" x2="${W - R}" y1="${yy}" y2="${yy}" class="markline ${esc(m.kind)}"/>`
      + (m.kind === 'ref'
        ? `<text class="marklabel ref" x="${W - R - 2}" y="${yy + 12}" text-anchor="end">${esc(m.label)}</text>`
        : `<text class="marklabel" x="${W - R - 2}" y="${yy - 4}" text-anchor="end">${esc(m.label)}</text>`)
      + `<title>${esc(m.label)}</title></g>`;
  }
  const series = [];
  for (const r of rows) {
    const st = seriesStyle(r.system, r.variantIndex);
    series.push({ label: r.label, ...st });
    const pts = cats.map(([f], i) => [xAt(i), r[f], f]).filter(([, v]) => Number.isFinite(v) && v > 0);
    if (pts.length > 1) {
      s += `<polyline fill="none" stroke="${st.colour}" stroke-width="2"${st.dash ? ` stroke-dasharray="${st.dash}"` : ''} points="${pts.map(([x, v]) => `${n(x)},${n(y.f(v))}`).join(' ')}"/>`;
    }
    for (const [x, v, f] of pts) {
      s += `<circle class="datum" data-system="${esc(r.system)}" data-metric="${f}" data-value="${v}" cx="${n(x)}" cy="${n(y.f(v))}" r="3.5" fill="${st.colour}"><title>${esc(`${r.label} ${f.replace('_ms', '')}: ${ms(v)} ms`)}</title></circle>`;
    }
  }
  if (rows.every((r) => cats.every(([f]) => !Number.isFinite(r[f])))) {
    s += `<text class="empty" x="${W / 2}" y="${H / 2}" text-anchor="middle">no latency figures in this run</text>`;
  }
  s += legend(series, 10, H - 24, W - 4);
  return `${s}</svg>`;
}

/**
 * Throughput of several scenarios against peers and marks: one band per scenario, a horizontal
 * bar per row on a log axis, and a tick per mark.
 * groups: [{id, title, bars: [{label, system, variantIndex, value}], marks: [{label, value, kind}]}]
 */
export function barChart({ kind, title, unit, groups }) {
  const W = 820, L = 250, R = 24, T = 30, barH = 14, gap = 3, bandPad = 14;
  const bands = groups.map((g) => Math.max(1, g.bars.length) * (barH + gap) + bandPad + (g.marks.length ? 4 : 0));
  const H = T + bands.reduce((a, b) => a + b, 0) + 48;
  const values = groups.flatMap((g) => g.bars.map((b) => b.value).concat(g.marks.map((m) => m.value)));
  const x = logScale(values, L, W - R);
  let s = open(W, H, kind, `${title} (log scale)`);
  s += `<text class="ctitle" x="10" y="16">${esc(title)}</text><text class="csub" x="${L}" y="16">${esc(unit)}, log scale; longer is better</text>`;
  for (const t of x.ticks) {
    s += `<line class="grid" y1="${T}" y2="${H - 40}" x1="${n(x.f(t))}" x2="${n(x.f(t))}"/><text class="tick" y="${H - 26}" x="${n(x.f(t))}" text-anchor="middle">${esc(tickLabel(t))}</text>`;
  }
  let yy = T;
  groups.forEach((g, gi) => {
    s += `<text class="band" x="${L - 8}" y="${yy + 11}" text-anchor="end">${esc(g.title)}</text>`;
    let labels = '';
    if (g.bars.length === 0) s += `<text class="empty" x="${L + 4}" y="${yy + 11}">not in this run</text>`;
    g.bars.forEach((b, i) => {
      const st = seriesStyle(b.system, b.variantIndex);
      const by = yy + i * (barH + gap);
      const ok = Number.isFinite(b.value) && b.value > 0;
      const w = ok ? Math.max(1, x.f(b.value) - L) : 0;
      s += `<rect class="datum" data-scenario="${esc(g.id)}" data-system="${esc(b.system)}" data-value="${ok ? b.value : ''}" x="${L}" y="${n(by)}" width="${n(w)}" height="${barH}" fill="${st.colour}"${st.dash ? ' fill-opacity="0.6"' : ''}><title>${esc(`${g.title} — ${b.label}: ${ok ? rate(b.value) : 'no figure'} ${unit}`)}</title></rect>`;
      const text = `${b.label} ${ok ? rate(b.value) : '—'}`;
      // Outside the bar when it fits, else inside its end in white.
      labels += L + w + 6 + text.length * 6.2 < W - 2
        ? `<text class="barlabel" x="${n(L + w + 4)}" y="${n(by + barH - 3)}">${esc(text)}</text>`
        : `<text class="barlabel inside" x="${n(L + w - 4)}" y="${n(by + barH - 3)}" text-anchor="end">${esc(text)}</text>`;
    });
    // Marks over the bars, labels (with a white halo) over the marks.
    const bottom = yy + Math.max(1, g.bars.length) * (barH + gap);
    for (const m of g.marks) {
      const mx = n(x.f(m.value));
      s += `<g class="mark" data-kind="${esc(m.kind)}" data-value="${m.value}"><line class="markline ${esc(m.kind)}" x1="${mx}" x2="${mx}" y1="${yy - 3}" y2="${n(bottom + 2)}"/><title>${esc(`${g.title} — ${m.label}`)}</title></g>`;
    }
    s += labels;
    yy += bands[gi];
    if (gi < groups.length - 1) s += `<line class="sep" x1="20" x2="${W - 10}" y1="${n(yy - bandPad / 2)}" y2="${n(yy - bandPad / 2)}"/>`;
  });
  const systems = [];
  for (const g of groups) for (const b of g.bars) if (!systems.some((x2) => x2.label === b.sysLabel)) systems.push({ label: b.sysLabel, ...seriesStyle(b.system, 0) });
  s += legend(systems, 20, H - 8, W - 270);
  s += `<g class="legend"><line class="markline issue" x1="${W - 250}" x2="${W - 250}" y1="${H - 16}" y2="${H - 2}"/><text x="${W - 244}" y="${H - 5}">target</text>`
    + `<line class="markline ref" x1="${W - 150}" x2="${W - 150}" y1="${H - 16}" y2="${H - 2}"/><text x="${W - 144}" y="${H - 5}">reference, local run</text></g>`;
  return `${s}</svg>`;
}

/**
 * A scenario's key figure across runs: one point per result file at its `started` time, one line
 * per system. series: [{label, system, variantIndex, points: [{t: Date, value, run, quick}]}]
 */
export function historyChart({ id, title, unit, field, series, marks = [] }) {
  const W = 380, H = 220, L = 56, R = 14, T = 40, B = 58;
  const all = series.flatMap((s) => s.points);
  const times = all.map((p) => p.t.getTime());
  let t0 = Math.min(...times), t1 = Math.max(...times);
  if (!Number.isFinite(t0)) { t0 = 0; t1 = 1; }
  const span = t1 - t0;
  const xf = (t) => (span > 0 ? L + 10 + ((t - t0) / span) * (W - L - R - 20) : (L + W - R) / 2);
  const y = linearScale(all.map((p) => p.value).concat(marks.map((m) => m.value)), H - B, T);
  let s = open(W, H, 'history', `${title}: ${field} per run`, ` data-scenario="${esc(id)}"`);
  s += `<text class="ctitle" x="10" y="16">${esc(title)}</text><text class="csub" x="10" y="30">${esc(unit)}, one point per run</text>`;
  for (const t of y.ticks) {
    s += `<line class="grid" x1="${L}" x2="${W - R}" y1="${n(y.f(t))}" y2="${n(y.f(t))}"/><text class="tick" x="${L - 6}" y="${n(y.f(t)) + 4}" text-anchor="end">${esc(tickLabel(t))}</text>`;
  }
  const first = new Date(t0), last = new Date(t1);
  s += span > 0
    ? `<text class="tick" x="${L + 10}" y="${H - B + 16}">${esc(when(first).slice(0, 10))}</text>`
    : `<text class="tick" x="${n(xf(t0))}" y="${H - B + 16}" text-anchor="middle">${esc(when(first).slice(0, 10))}</text>`;
  if (span > 0) s += `<text class="tick" x="${W - R - 10}" y="${H - B + 16}" text-anchor="end">${esc(when(last).slice(0, 10))}</text>`;
  for (const m of marks) {
    const yy = n(y.f(m.value));
    s += `<g class="mark" data-kind="${esc(m.kind)}" data-value="${m.value}"><line class="markline ${esc(m.kind)}" x1="${L}" x2="${W - R}" y1="${yy}" y2="${yy}"/><text class="marklabel" x="${W - R - 2}" y="${yy - 4}" text-anchor="end">${esc(m.label)}</text></g>`;
  }
  const leg = [];
  for (const se of series) {
    const st = seriesStyle(se.system, se.variantIndex);
    leg.push({ label: se.label, ...st });
    const pts = se.points.filter((p) => Number.isFinite(p.value)).sort((a, b) => a.t - b.t);
    if (pts.length > 1) s += `<polyline fill="none" stroke="${st.colour}" stroke-width="1.8"${st.dash ? ` stroke-dasharray="${st.dash}"` : ''} points="${pts.map((p) => `${n(xf(p.t.getTime()))},${n(y.f(p.value))}`).join(' ')}"/>`;
    for (const p of pts) {
      s += `<circle class="datum" data-system="${esc(se.system)}" data-run="${esc(p.run)}" data-value="${p.value}" cx="${n(xf(p.t.getTime()))}" cy="${n(y.f(p.value))}" r="3.5" fill="${p.quick ? '#fff' : st.colour}" stroke="${st.colour}" stroke-width="1.5"><title>${esc(`${se.label} · ${p.run} · ${when(p.t)}${p.quick ? ' (quick run)' : ''}: ${unit === 'ms' ? ms(p.value) : rate(p.value)} ${unit}`)}</title></circle>`;
    }
  }
  s += legend(leg, 10, H - 22, W - 4);
  return `${s}</svg>`;
}
