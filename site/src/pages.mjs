// The four pages (headline, scenarios, history, method) and the "no results yet" page, as
// self-contained HTML: styles inline, charts inline SVG, the data they show embedded as JSON.

import fs from 'node:fs';
import { DURABILITY, GROUPS, MARKS, PEER_OPERATION, SCENARIOS, SYSTEM_LABEL, scenarioInfo, scenarioOrder } from './catalogue.mjs';
import { compare, conflictRate, evaluateMark, median, ourRow, peerRow, peersIn, rowLabel, rowsOf, scenarioNames, sharedField, systemLabel, US } from './analysis.mjs';
import { barChart, historyChart, latencyChart } from './charts.mjs';
import { esc, fixed, int, metric, ms, percent, rate, ratio, when } from './format.mjs';
import { headlineRows } from './headline.mjs';

const CSS = fs.readFileSync(new URL('./style.css', import.meta.url), 'utf8');

export const PAGES = [
  ['index.html', 'Headline'],
  ['scenarios.html', 'Scenarios'],
  ['history.html', 'History'],
  ['method.html', 'Method & honesty'],
];

/** JSON safe inside <script>: no "</script>", no HTML comment openers. */
function jsonLiteral(data) {
  return JSON.stringify(data, null, 0).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

function layout({ file, title, body, data, nav = true }) {
  const navHtml = nav
    ? `<nav>${PAGES.map(([f, label]) => `<a href="${f}"${f === file ? ' aria-current="page"' : ''}>${esc(label)}</a>`).join('')}</nav>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · Hypha-Mesh benchmark</title>
<link rel="icon" href="data:,">
<style>${CSS}</style>
</head>
<body>
<header><div class="brand">Hypha-Mesh <span>benchmark</span></div>${navHtml}</header>
<main>
${body}
</main>
<footer>Built by <code>./hypha site</code> from <code>bench/results/*.json</code>. Static page: no server, no network, no script needed.</footer>
<script type="application/json" id="bench-data">${jsonLiteral(data)}</script>
</body>
</html>
`;
}

function runBanner(run, runs) {
  const m = run.machine || {};
  const bits = [
    `<b>${esc(run.label)}</b>`,
    `started ${esc(when(run.started))}`,
    m.cores != null ? `${esc(m.cores)} cores` : null,
    m.java ? `Java ${esc(m.java)}` : null,
    `file <code>${esc(run.file)}</code>`,
    run.config?.git_commit ? `commit <code>${esc(run.config.git_commit)}</code>` : 'commit not recorded',
    run.config?.command ? `command <code>${esc(run.config.command)}</code>` : 'command not recorded in this file',
    runs.length > 1 ? `one of ${runs.length} runs (<a href="history.html">history</a>)` : null,
  ].filter(Boolean);
  let s = `<p class="runinfo">${bits.join(' · ')}</p>`;
  if (run.fixture) s += '<p class="banner fixture"><b>Test fixture, not a measurement.</b> These figures come from a fixture file made up for the page tests; they say nothing about the server.</p>';
  if (run.quick) s += '<p class="banner quick"><b>Quick smoke run.</b> Small sizes and short durations: a check that everything runs, not figures to quote.</p>';
  return s;
}

function markBadge(result) {
  if (!result) return '';
  const word = { met: 'met', missed: 'not met', unknown: 'no data' }[result.status];
  const detail = result.checks.map((c) => `${c.label}: ${c.status === 'unknown' ? 'no figure' : c.status}`).join('; ');
  return `<span class="badge ${result.status}" title="${esc(detail)}">${esc(word)}</span>`;
}

// ---------------------------------------------------------------------------------------------
// Headline

function throughputGroups(run, field) {
  const groups = [];
  const names = scenarioNames(run).filter((n) => scenarioInfo(n).key === field).sort(scenarioOrder);
  for (const name of names) {
    const info = scenarioInfo(name);
    const rows = rowsOf(run, name).filter((r) => r[field] != null);
    const variants = new Map();
    const bars = rows.map((r) => {
      const k = `${r.system}`;
      const vi = variants.get(k) ?? 0;
      variants.set(k, vi + 1);
      return { label: rowLabel(r), sysLabel: systemLabel(r.system), system: r.system, variantIndex: vi, value: r[field] };
    });
    const marks = [];
    const mark = MARKS[name];
    if (mark) for (const c of mark.checks) if (c.field === field && c.value != null) marks.push({ kind: 'issue', label: `target ${c.op.replace('>=', '≥')} ${rate(c.value)}`, value: c.value });
    if (info.ref?.local?.[field] != null) marks.push({ kind: 'ref', label: `reference local ${rate(info.ref.local[field])}`, value: info.ref.local[field] });
    groups.push({ id: name, title: info.title, bars, marks });
  }
  return groups;
}

function latencyRowsFor(run, name) {
  const seen = new Map();
  return rowsOf(run, name).map((r) => {
    const vi = seen.get(r.system) ?? 0;
    seen.set(r.system, vi + 1);
    return { ...r, label: rowLabel(r), variantIndex: vi };
  });
}

function latencyMarks(name) {
  const marks = [];
  const mark = MARKS[name];
  if (mark) {
    for (const c of mark.checks) {
      if (c.field.endsWith('_ms') && c.value != null) marks.push({ kind: 'issue', label: `target ${c.field.replace('_ms', '')} ≤ ${ms(c.value)}`, value: c.value });
    }
  }
  const ref = scenarioInfo(name).ref?.local;
  if (ref?.p50_ms != null) marks.push({ kind: 'ref', label: `ref. local p50 ${ms(ref.p50_ms)}`, value: ref.p50_ms });
  return marks;
}

function hasLatency(run, name) {
  return rowsOf(run, name).some((r) => ['p50_ms', 'p95_ms', 'p99_ms', 'max_ms'].some((f) => r[f] != null));
}

function historySeries(runs, name, field) {
  const bySeries = new Map();
  for (const run of runs) {
    const seen = new Map();
    for (const r of rowsOf(run, name)) {
      if (r[field] == null) continue;
      const vi = seen.get(r.system) ?? 0;
      seen.set(r.system, vi + 1);
      const key = `${r.system}|${r.variant}`;
      if (!bySeries.has(key)) bySeries.set(key, { label: rowLabel(r), system: r.system, variantIndex: vi, points: [] });
      bySeries.get(key).points.push({ t: run.started, value: r[field], run: run.label, quick: run.quick });
    }
  }
  return [...bySeries.values()].sort((a, b) => (a.system === US ? -1 : b.system === US ? 1 : a.label < b.label ? -1 : 1));
}

function historyChartFor(runs, name) {
  const info = scenarioInfo(name);
  const field = info.key;
  const unit = field === 'p50_ms' ? 'ms' : field === 'mb_per_s' ? 'MB/s' : field === 'peak' ? 'sockets' : `${info.per}/s`;
  const marks = [];
  const mark = MARKS[name];
  if (mark) for (const c of mark.checks) if (c.field === field && c.value != null) marks.push({ kind: 'issue', label: `target ${c.op.replace('>=', '≥').replace('<=', '≤')} ${field === 'p50_ms' ? ms(c.value) : rate(c.value)}`, value: c.value });
  return historyChart({ id: name, title: info.title, unit, field, series: historySeries(runs, name, field), marks });
}

function headlineTable(run) {
  const rows = headlineRows(run);
  const body = rows.map((h) => `<tr data-headline="${esc(h.id)}" class="${h.present ? '' : 'absent'}">
<th scope="row">${esc(h.measured)}</th>
<td class="number">${h.number}${h.errors}</td>
<td class="peers">${h.peers || '<span class="muted">no peer for this</span>'}</td>
<td class="marks">${h.markResults.length ? h.markResults.map((m) => `<div>${markBadge(m.result)} <span class="marktext">${h.markResults.length > 1 ? `<code>${esc(m.name)}</code> ` : ''}${esc(m.result.text)}</span></div>`).join('') : '<span class="muted">—</span>'}</td>
<td class="meaning">${h.meaning}</td>
</tr>`).join('\n');
  return `<table class="headline">
<thead><tr><th>measured (this run)</th><th>number</th><th>peers, same run</th><th>target</th><th>what it means for you</th></tr></thead>
<tbody>
${body}
</tbody></table>
<p class="note">Ratios are <i>ours ÷ theirs</i> on the same figure; the word after it says whether that is better or worse for us (lower is better for latency, higher for throughput). Loopback figures: over a network, add the round trip. How each figure was made and what it leaves out: <a href="method.html">method &amp; honesty</a>.</p>`;
}

const HEADLINE_LATENCY = ['rpc.noop.serial', 'log.append.serial', 'log.tail', 'presence.propagate', 'ws.connect', 'cold.log'];
const HEADLINE_HISTORY = ['rpc.noop.serial', 'log.append.concurrent', 'doc.incr.contended'];

function shortHonesty(run) {
  const cores = run.machine?.cores;
  return `<ul class="honesty">
<li><b>Loopback, one machine.</b> Client, server and peers share ${cores != null ? `${esc(cores)} cores` : 'the same cores'}; no network is in any figure.</li>
<li><b>Durability differs:</b> our appends and commits are fsynced before the ack; Redis runs <code>appendfsync always</code> (like for like); NATS as packaged here acknowledges before fsync.</li>
<li><b>Warm-up excluded</b>, errors counted and shown, percentiles from HdrHistogram. One run is noisy on 2 shared cores: read ratios to peers measured minutes apart, and the <a href="history.html">history</a>.</li>
<li><b>The reference figures</b> come from a different implementation (Cloudflare Workers and Durable Objects, a Node.js client, another machine): a yardstick, not a race. Ours are loopback figures, so they are compared with the reference's <i>local</i> run (workerd over loopback); its cloud figures include a network round trip in every operation and are shown only as context, never as a ratio.</li>
</ul>`;
}

export function indexPage(run, runs, skipped) {
  const tp = throughputGroups(run, 'throughput_per_s');
  const mb = throughputGroups(run, 'mb_per_s');
  const lat = HEADLINE_LATENCY.filter((n) => hasLatency(run, n));
  const hist = HEADLINE_HISTORY.filter((n) => runs.some((r) => ourRow(r, n)));
  const body = `<h1>What Hypha-Mesh delivers, measured</h1>
${runBanner(run, runs)}
${headlineTable(run)}
<h2 id="throughput">Throughput against peers</h2>
${tp.length ? barChart({ kind: 'throughput', title: 'Throughput, same run', unit: 'per second', groups: tp }) : '<p class="muted">No throughput figures in this run.</p>'}
${mb.length ? barChart({ kind: 'bandwidth', title: 'Artifact transfer', unit: 'MB/s', groups: mb }) : ''}
${cpuTable(run)}
<h2 id="latency">Latency percentiles</h2>
<p class="note">p50 → p95 → p99 → max, one line per system; dashed lines are our targets, dotted ones the reference's local run (loopback, like ours). Log scale.</p>
<div class="charts">${lat.length ? lat.map((n) => latencyChart({ id: n, title: scenarioInfo(n).title, rows: latencyRowsFor(run, n), marks: latencyMarks(n) })).join('\n') : '<p class="muted">No latency figures in this run.</p>'}</div>
<h2 id="history">History across runs</h2>
<p class="note">One point per result file, placed at its start time; hollow points are quick runs. All ${runs.length} runs on the <a href="history.html">history page</a>.</p>
<div class="charts">${hist.map((n) => historyChartFor(runs, n)).join('\n')}</div>
<h2 id="honesty">Read these figures with</h2>
${shortHonesty(run)}
${skipped.length ? `<p class="warn">${skipped.length} result file(s) could not be read and are left out: see <a href="method.html#skipped">method</a>.</p>` : ''}`;
  return layout({ file: 'index.html', title: 'Headline', body, data: { shown: run.file, run: plainRun(run), headline: headlineFigures(run) } });
}

/** The figures the headline shows, as data (also what the test compares against the source file). */
function headlineFigures(run) {
  return headlineRows(run).map((h) => ({ id: h.id, scenarios: h.scenarios, marks: h.markResults.map((m) => ({ name: m.name, status: m.result.status })) }));
}

function plainRun(run) {
  return { file: run.file, label: run.label, started: run.startedText, machine: run.machine, config: run.config, cost: run.cost, scenarios: run.scenarios };
}

// ---------------------------------------------------------------------------------------------
// Scenarios

/** Server and client CPU per operation; a peer's cells also say ours ÷ theirs (lower is better for us). */
function cpuCells(r, mine) {
  const cell = (field) => {
    const v = r[field];
    if (v == null) return '<td>—</td>';
    const m = mine?.[field];
    const rel = r.system !== US && m != null && v > 0 ? `<br><small class="cpu-ratio" data-ratio="${m / v}">ours ${esc(ratio(m / v))}</small>` : '';
    return `<td class="cpu" data-field="${field}">${esc(cpu(v))}${rel}</td>`;
  };
  return cell('server_cpu_us_per_op') + cell('client_cpu_us_per_op');
}

function cpu(v) {
  return v >= 100 ? int(Math.round(v)) : fixed(v, 1);
}

/** Context switches per operation: a batched path does well under one (a read of pages, per entry), so 4 decimals below 1. */
function switches(v) {
  return v >= 100 ? int(Math.round(v)) : fixed(v, v >= 10 ? 1 : v >= 1 ? 2 : 4);
}

/** Server and client CPU per operation of every scenario that has it, ours beside each peer. */
function cpuTable(run) {
  const names = scenarioNames(run).sort(scenarioOrder).filter((n) => rowsOf(run, n).some((r) => r.server_cpu_us_per_op != null));
  if (!names.length) return '';
  const peers = peersIn(run);
  const rows = names.map((n) => {
    const mine = ourRow(run, n);
    const td = (r, f) => (r?.[f] != null ? esc(cpu(r[f])) : '—');
    const cs = (r) => `<td class="cs" data-field="server_cs_per_op">${r?.server_cs_per_op != null ? esc(switches(r.server_cs_per_op)) : '—'}</td>`;
    const peerCells = peers.map((p) => {
      const r = peerRow(run, n, p);
      const x = r && mine && r.server_cpu_us_per_op > 0 && mine.server_cpu_us_per_op != null ? ` <small>(ours ${esc(ratio(mine.server_cpu_us_per_op / r.server_cpu_us_per_op))})</small>` : '';
      return `<td>${td(r, 'server_cpu_us_per_op')}${x}</td>${cs(r)}<td>${td(r, 'client_cpu_us_per_op')}</td>`;
    }).join('');
    const jit = mine?.server_jit_cpu_us_per_op > 0 ? `<br><small class="cpu-jit">of it JIT ${esc(cpu(mine.server_jit_cpu_us_per_op))}</small>` : '';
    return `<tr data-scenario="${esc(n)}"><th scope="row"><a href="scenarios.html#${esc(n)}">${esc(n)}</a></th><td>${td(mine, 'server_cpu_us_per_op')}${jit}</td>${cs(mine)}<td>${td(mine, 'client_cpu_us_per_op')}</td>${peerCells}</tr>`;
  }).join('\n');
  return `<h2 id="cpu">CPU per operation</h2>
<p class="note">CPU time of the server process and of the load client over each measured phase, divided by the successful operations (µs per operation; lower is better). On 2 shared cores CPU per operation is throughput. For a peer, "ours ×" is our server's CPU ÷ the peer's. "Of it JIT" is the part our server's JIT compiler threads used in the same phase: a JVM still compiling the paths the scenario runs. "Server cs" is the server process's context switches per operation over the same phase (all its threads, voluntary and involuntary, from <code>/proc</code>; runs before the field existed show —): a count, so it holds where the shared machine makes times noisy; the switches of threads that ended during the phase are not counted.</p>
<table class="cpu-table"><thead><tr><th>scenario</th><th>ours, server</th><th>ours, server cs</th><th>ours, client</th>${peers.map((p) => `<th>${esc(systemLabel(p))}, server</th><th>${esc(systemLabel(p))}, server cs</th><th>${esc(systemLabel(p))}, client</th>`).join('')}</tr></thead><tbody>
${rows}
</tbody></table>`;
}

function extraCell(r) {
  const bits = [];
  if (r.mb_per_s != null) bits.push(`${rate(r.mb_per_s)} MB/s`);
  if (r.peak != null) bits.push(`peak ${int(r.peak)}`);
  if (r.failures != null) bits.push(`${int(r.failures)} failures`);
  if (r.conflicts != null) {
    const cr = conflictRate(r);
    bits.push(`${int(r.conflicts)} conflicts${cr != null ? ` (${percent(cr)})` : ''}`);
  }
  if (r.final_exact != null) bits.push(r.final_exact ? 'final exact' : '<b class="bad">final NOT exact</b>');
  return bits.map((b) => (b.startsWith('<') ? b : esc(b))).join('<br>') || '';
}

function ratioCell(name, mine, other) {
  const f = sharedField(name, mine, other);
  if (!f) return '<span class="muted">—</span>';
  const c = compare(mine[f], other[f], f);
  if (!c) return '<span class="muted">—</span>';
  const lab = { p50_ms: 'p50', p99_ms: 'p99', throughput_per_s: 'rate', mb_per_s: 'MB/s', peak: 'peak' }[f];
  return `<span class="ratio ${c.verdict.replace(' ', '-')}" data-field="${f}" data-ratio="${c.value}">${esc(lab)} ${esc(ratio(c.value))}<br><small>${esc(c.verdict)}</small></span>`;
}

function scenarioSection(run, name) {
  const info = scenarioInfo(name);
  // Ours first, then peers; rows of one system keep the file's order (sort is stable).
  const rank = (r) => (r.system === US ? 0 : 1);
  const rows = rowsOf(run, name).slice().sort((a, b) => rank(a) - rank(b));
  const mine = ourRow(run, name);
  const cells = (r) => `<td>${esc(int(r.n))}</td><td class="${r.errors > 0 ? 'bad' : ''}">${esc(int(r.errors))}</td><td>${esc(ms(r.p50_ms))}</td><td>${esc(ms(r.p95_ms))}</td><td>${esc(ms(r.p99_ms))}</td><td>${esc(ms(r.max_ms))}</td><td>${esc(rate(r.throughput_per_s))}</td>${cpuCells(r, mine)}`;
  let body = rows.map((r) => `<tr class="sys-${esc(r.system)}" data-system="${esc(r.system)}" data-variant="${esc(r.variant)}"><th scope="row">${esc(rowLabel(r))}</th>${cells(r)}<td>${extraCell(r)}</td><td>${r.system === US ? '<span class="muted">ours</span>' : mine ? ratioCell(name, mine, r) : '—'}</td><td class="notes">${info.durable ? `<div class="dur">${esc(DURABILITY[r.system] || 'durability not stated')}</div>` : ''}${esc(r.notes)}</td></tr>`).join('\n');
  const refRow = (kind, ref, words) => {
    if (!ref) return '';
    const r = { n: null, errors: null, p50_ms: ref.p50_ms ?? null, p95_ms: null, p99_ms: ref.p99_ms ?? null, max_ms: null, throughput_per_s: ref.throughput_per_s ?? null, mb_per_s: ref.mb_per_s ?? null, peak: ref.peak ?? null };
    return `<tr class="ref ${kind}"><th scope="row">${esc(words)}</th><td colspan="9" class="reftext">${esc(ref.text)}</td><td></td><td>${kind === 'local' ? (mine ? ratioCell(name, mine, r) : '—') : '<span class="muted">no ratio: over a network</span>'}</td><td class="notes">${kind === 'local' ? 'workerd over loopback, like ours: the figure to compare with' : 'context only: real Cloudflare Durable Objects and R2 from one host, a network round trip in every operation'}</td></tr>`;
  };
  body += refRow('local', info.ref?.local, 'reference, local run');
  body += refRow('cloud', info.ref?.cloud, 'reference, cloud');
  const mark = evaluateMark(run, name);
  if (mark) {
    const c0 = mark.checks.find((c) => c.target != null && c.ours != null);
    const r = c0 ? compare(c0.ours, c0.target, c0.field) : null;
    body += `<tr class="ref issue"><th scope="row">target</th><td colspan="9" class="reftext">${esc(mark.text)} ${markBadge(mark)}</td><td></td><td>${r ? `<span class="ratio ${r.verdict.replace(' ', '-')}">${esc({ p50_ms: 'p50', p99_ms: 'p99', throughput_per_s: 'rate', mb_per_s: 'MB/s', peak: 'peak', errors: 'errors', failures: 'failures' }[c0.field] || c0.field)} ${esc(ratio(r.value))}<br><small>${esc(r.verdict)}</small></span>` : '—'}</td><td class="notes">${esc(mark.checks.map((c) => `${c.label}: ${c.status === 'unknown' ? 'no figure' : c.status}`).join('; '))}</td></tr>`;
  }
  const chart = hasLatency(run, name) ? latencyChart({ id: name, title: info.title, rows: latencyRowsFor(run, name), marks: latencyMarks(name) }) : '';
  return `<section class="scenario" id="${esc(name)}" data-scenario="${esc(name)}">
<h3>${esc(info.title)} <code>${esc(name)}</code></h3>
<p class="what">${esc(info.what)}${info.unknown ? ' <span class="muted">(a scenario this page does not know; shown as the file has it)</span>' : ''}</p>
<div class="scn">
<table class="figures">
<thead><tr><th>system</th><th>n</th><th>errors</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>max ms</th><th>${esc(info.per)}/s</th><th title="CPU time of the server process over the measured phase, per successful operation">server CPU µs/op</th><th title="CPU time of the load client (the harness JVM) over the measured phase, per successful operation">client CPU µs/op</th><th>more</th><th>ratio, ours ÷ this</th><th>durability · notes</th></tr></thead>
<tbody>
${body}
</tbody></table>
${chart}
</div>
</section>`;
}

export function scenariosPage(run, runs) {
  const names = scenarioNames(run).sort(scenarioOrder);
  const missing = SCENARIOS.map((s) => s.name).filter((n) => !names.includes(n));
  let body = `<h1>Every scenario, beside peers and targets</h1>${runBanner(run, runs)}
<p class="note">Each table: our row, the peers' rows from the same run, the reference report's local run (workerd over loopback: the like-for-like comparison) and its cloud run (shown as context: it includes network round trips, so it gets no ratio), and our target. The ratio is ours ÷ that row on the figure both have (the scenario's main figure first); "better" or "worse" is from our side. Latency in ms; a blank is a figure the row does not have.</p>
<p class="toc">${GROUPS.map((g) => {
    const inG = names.filter((n) => scenarioInfo(n).group === g);
    return inG.length ? `<b>${esc(g)}</b> ${inG.map((n) => `<a href="#${esc(n)}">${esc(n)}</a>`).join(' ')}` : '';
  }).filter(Boolean).join('<br>')}</p>`;
  for (const g of GROUPS) {
    const inG = names.filter((n) => scenarioInfo(n).group === g);
    if (!inG.length) continue;
    body += `<h2>${esc(g)}</h2>${inG.map((n) => scenarioSection(run, n)).join('\n')}`;
  }
  if (missing.length) body += `<h2>Not in this run</h2><p class="muted">Scenarios of the benchmark this result file has no row for: ${missing.map((n) => `<code>${esc(n)}</code>`).join(', ')}.</p>`;
  return layout({ file: 'scenarios.html', title: 'Scenarios', body, data: { shown: run.file, run: plainRun(run) } });
}

// ---------------------------------------------------------------------------------------------
// History

export function historyPage(run, runs) {
  const names = [...new Set(runs.flatMap((r) => scenarioNames(r)))].sort(scenarioOrder);
  const runRows = runs.slice().reverse().map((r) => `<tr class="${r === run ? 'shown' : ''}"><td>${esc(when(r.started))}</td><td>${esc(r.label)}${r.quick ? ' <span class="tag">quick</span>' : ''}${r.fixture ? ' <span class="tag">fixture</span>' : ''}${r === run ? ' <span class="tag shown">shown</span>' : ''}</td><td><code>${esc(r.file)}</code></td><td>${esc(r.machine?.cores ?? '—')}</td><td>${esc(r.machine?.java ?? '—')}</td><td>${r.scenarios.length}</td><td>${esc(peersIn(r).map(systemLabel).join(', ') || 'none')}</td></tr>`).join('\n');
  const summary = names.map((n) => {
    const info = scenarioInfo(n);
    const f = info.key;
    const vals = runs.map((r) => ourRow(r, n)?.[f]).filter((v) => v != null);
    const fmt = (v) => (f.endsWith('_ms') ? `${ms(v)} ms` : metric(f, v));
    return `<tr><th scope="row"><a href="scenarios.html#${esc(n)}">${esc(n)}</a></th><td>${esc(info.title)}</td><td>${esc({ p50_ms: 'p50', throughput_per_s: 'throughput', mb_per_s: 'MB/s', peak: 'peak' }[f] || f)}</td><td>${vals.length}</td><td>${vals.length ? esc(fmt(Math.min(...vals))) : '—'}</td><td>${vals.length ? esc(fmt(median(vals))) : '—'}</td><td>${vals.length ? esc(fmt(Math.max(...vals))) : '—'}</td><td>${esc(fmt(ourRow(run, n)?.[f] ?? null))}</td></tr>`;
  }).join('\n');
  const body = `<h1>History across runs</h1>${runBanner(run, runs)}
<p class="note">One point per result file in <code>bench/results/</code>, at the time the run started; hollow points are quick runs. Each chart plots the scenario's main figure for us and for every peer that ran it. Runs with different sizes or settings are not strictly comparable: check the label and the <a href="method.html">config</a>.</p>
<h2>Runs</h2>
<table class="runs"><thead><tr><th>started</th><th>label</th><th>file</th><th>cores</th><th>java</th><th>rows</th><th>peers</th></tr></thead><tbody>
${runRows}
</tbody></table>
<h2>Our main figure per scenario, over ${runs.length} run${runs.length === 1 ? '' : 's'}</h2>
<table class="summary"><thead><tr><th>scenario</th><th></th><th>figure</th><th>runs</th><th>min</th><th>median</th><th>max</th><th>shown run</th></tr></thead><tbody>
${summary}
</tbody></table>
<h2>Charts</h2>
<div class="charts">${names.map((n) => historyChartFor(runs, n)).join('\n')}</div>`;
  return layout({ file: 'history.html', title: 'History', body, data: { shown: run.file, runs: runs.map(plainRun) } });
}

// ---------------------------------------------------------------------------------------------
// Method and honesty

function kvTable(obj, cls) {
  const entries = Object.entries(obj || {});
  if (!entries.length) return '<p class="muted">Not recorded in the result file.</p>';
  return `<table class="kv ${cls || ''}"><tbody>${entries.map(([k, v]) => `<tr><th scope="row">${esc(k)}</th><td>${typeof v === 'object' && v !== null ? `<code>${esc(JSON.stringify(v))}</code>` : typeof v === 'number' ? esc(Number.isInteger(v) ? int(v) : String(v)) : esc(String(v))}</td></tr>`).join('')}</tbody></table>`;
}

function warmupWords(config) {
  const keys = Object.keys(config || {}).filter((k) => /warm/i.test(k));
  if (!keys.length) return 'The harness excludes warm-up from every figure; this result file does not record how long it was.';
  return `Warm-up is excluded from every figure; this run recorded ${keys.map((k) => `<code>${esc(k)}</code> = <code>${esc(JSON.stringify(config[k]))}</code>`).join(', ')}.`;
}

export function methodPage(run, runs, skipped) {
  const cores = run.machine?.cores;
  const peers = peersIn(run);
  const missingPeers = ['nats', 'redis'].filter((p) => !peers.includes(p));
  const withErrors = run.scenarios.filter((r) => r.errors > 0);
  const wsMax = ourRow(run, 'ws.max');
  const notes = [
    `<b>Loopback only.</b> The load client, our server and the peers run on one machine and talk over loopback: no network is in any figure. Absolute latencies are a floor; a user across a network adds their round trip (the reference's cloud column shows what that was on Cloudflare: about 12 ms for a call, 36 ms for a durable write).`,
    `<b>${cores != null ? `${esc(cores)} cores` : 'A few cores'}, shared.</b> The client, the server${peers.length ? ' and the peers' : ''} compete for the same CPUs, so a throughput figure is what both sides together get out of ${cores != null ? esc(cores) : 'them'}; the client's own cost is inside every number. Such machines are noisy: one run can be off by tens of percent. Peers run minutes apart in the same run, so the <i>ratios</i> are the figures to quote, and medians over several runs (see <a href="history.html">history</a>).`,
    `<b>Warm-up.</b> ${warmupWords(run.config)}`,
    `<b>Durability is not the same everywhere.</b> ${Object.entries(DURABILITY).map(([s, d]) => `${esc(SYSTEM_LABEL[s])}: ${esc(d)}`).join('; ')}. A faster peer that has not fsynced has not done the same work.`,
    `<b>Errors are counted, never dropped.</b> ${withErrors.length ? `This run has errors in: ${withErrors.map((r) => `<code>${esc(r.name)}</code> ${esc(rowLabel(r))} (${esc(int(r.errors))})`).join(', ')}.` : 'This run reports 0 errors in every row.'} Failed operations are left out of the latency percentiles but shown in the errors column.`,
    `<b>Bounded load.</b> <code>ws.max</code> ramps up to a target; with 0 failures its peak is a floor, not the ceiling.${wsMax ? ` This run: peak ${esc(int(wsMax.peak))}, ${esc(int(wsMax.failures))} failures.` : ''}`,
    `<b>The reference figures are a yardstick, not a race.</b> The reference report measured a different implementation (Cloudflare Workers and Durable Objects, locally on workerd and in the cloud) with a Node.js client on another machine, with its own sizes (e.g. 16 in flight where we run 32, a 200-entry replay where we replay 1,000,000). Like is compared with like: our loopback figures with its local run (workerd over loopback), and even those ratios show the order of magnitude only. Its cloud run (real Cloudflare Durable Objects and R2, from one host) includes a network round trip in every operation, about 12 ms for a call and 36 ms for a durable write; it is shown as context, with no ratio.`,
    missingPeers.length ? `<b>Peers missing from this run:</b> ${missingPeers.map((p) => esc(systemLabel(p))).join(', ')} (not installed, or not asked for with <code>--peers</code>). Targets that compare with them show "no data".` : `<b>Peers:</b> ${peers.map((p) => esc(systemLabel(p))).join(', ')} ran in the same run, through their Java clients, on loopback ports of their own.`,
  ];
  if (run.fixture) notes.unshift('<b>This is a test fixture.</b> The figures on these pages were made up for the page tests.');
  if (run.quick) notes.unshift('<b>Quick smoke run.</b> Sizes and durations were cut down to finish in under a minute; the figures are not comparable with a full run.');
  const body = `<h1>Method, machine and honesty notes</h1>${runBanner(run, runs)}
<h2>How the figures are made</h2>
<p class="note">The config and notes of each result file say what a run actually did; the banner above names the git commit it measured and the command that ran it.</p>
<ul>
<li><code>./hypha bench</code> starts our server in its own JVM on a fresh data directory, provisions a throwaway workspace and a short-lived token, runs every scenario of the reference report (plus a few of our own) through the real JVM client over loopback, then tears down what it made.</li>
<li>Latency percentiles (p50, p95, p99, max) come from HdrHistogram over every operation after warm-up; throughput is operations ÷ wall-clock of the measured batch. Serial scenarios keep 1 operation in flight; concurrent ones the depth their name gives.</li>
<li>With <code>--peers nats,redis</code> the harness starts <code>nats-server -js</code> and <code>redis-server</code> (<code>appendfsync always</code>) and runs the mapped operation of each scenario with the same concurrency and payloads:
<ul>${Object.entries(PEER_OPERATION).map(([p, o]) => `<li>${esc(systemLabel(p))}: ${esc(o)}</li>`).join('')}</ul></li>
<li>The pages are built by <code>./hypha site</code> from the result files; nothing on them is typed by hand except the targets, the reference's figures and the words.</li>
</ul>
<h2>Honesty notes</h2>
<ul class="honesty">${notes.map((x) => `<li>${x}</li>`).join('\n')}</ul>
<h2>Durability of each system</h2>
<table class="kv"><tbody>${Object.entries(DURABILITY).map(([s, d]) => `<tr><th scope="row">${esc(SYSTEM_LABEL[s])}</th><td>${esc(d)}</td></tr>`).join('')}</tbody></table>
<h2>Machine</h2>
${kvTable(run.machine)}
<h2>Config of this run</h2>
${kvTable(run.config)}
<h2>Cost signals</h2>
<p class="note">The server's operation counters over the run: operations spent per useful result (the reference's CAS run spent 5,762 operations for 800 commits).</p>
${kvTable(run.cost, 'cost')}
<h2 id="skipped">Files left out</h2>
${skipped.length ? `<ul>${skipped.map((s) => `<li><code>${esc(s.file)}</code>: ${esc(s.reason)}</li>`).join('')}</ul>` : '<p class="muted">None: every result file was read.</p>'}
${runs.some((r) => r.warnings.length) ? `<h2>Rows left out</h2><ul>${runs.flatMap((r) => r.warnings.map((w) => `<li><code>${esc(r.file)}</code>: ${esc(w)}</li>`)).join('')}</ul>` : ''}
<h2>Rebuild these pages</h2>
<pre>./hypha bench --peers nats,redis   # writes bench/results/&lt;label&gt;-&lt;timestamp&gt;.json and .csv
./hypha site                       # builds site/out/ from bench/results/*.json
xdg-open site/out/index.html       # or open it from disk in any browser</pre>`;
  return layout({ file: 'method.html', title: 'Method & honesty', body, data: { shown: run.file, machine: run.machine, config: run.config, cost: run.cost, skipped } });
}

// ---------------------------------------------------------------------------------------------
// No results

export function noResultsPage(resultsDir, skipped) {
  const body = `<h1 class="noresults">No results yet</h1>
<p>There is no readable benchmark result in <code>${esc(resultsDir)}</code>, so there is no figure to show. The pages show only measured figures; none is made up to fill the gap.</p>
<h2>Make some</h2>
<pre>apt-get install nats-server redis-server   # the peers (optional; skipped with a note when missing)
./hypha bench --peers nats,redis           # writes bench/results/&lt;label&gt;-&lt;timestamp&gt;.json
./hypha site                               # rebuilds these pages</pre>
${skipped.length ? `<h2>Files that could not be read</h2><ul>${skipped.map((s) => `<li><code>${esc(s.file)}</code>: ${esc(s.reason)}</li>`).join('')}</ul>` : ''}`;
  return layout({ file: 'index.html', title: 'No results yet', body, nav: false, data: { shown: null, skipped } });
}
