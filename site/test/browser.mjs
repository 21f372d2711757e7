// Browser test: opens the built pages from disk in a real headless Chromium and checks what a
// reader sees against the result files the pages were built from. Exits non-zero on failure.
//   node test/browser.mjs --site DIR --empty DIR --results DIR --shown FILE --shots DIR

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
for (const k of ['site', 'empty', 'results', 'shown', 'shots']) {
  if (!args[k]) { console.error(`browser test: --${k} is required`); process.exit(2); }
}
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// The source of truth, read here without any of the site's own code.
const shownFile = JSON.parse(fs.readFileSync(path.join(args.results, args.shown), 'utf8'));
const allFiles = fs.readdirSync(args.results).filter((f) => f.endsWith('.json'))
  .map((f) => ({ file: f, doc: JSON.parse(fs.readFileSync(path.join(args.results, f), 'utf8')) }));

const failures = [];
let passed = 0;
function expect(cond, what) {
  if (cond) passed++;
  else { failures.push(what); console.error(`  FAIL ${what}`); }
}

function fixtureRow(name, system, variant) {
  return shownFile.scenarios.find((r) => r.name === name && r.system === system
    && (variant ? (r.provider ?? r.variant ?? r.backend ?? r.store) === variant : true)) || null;
}

/** The first number in a text such as "12,470 appends/s" or "0.31 ms", and its decimals. */
function numberIn(text) {
  const m = String(text).replace(/,/g, '').match(/-?\d+(\.\d+)?/);
  if (!m) return null;
  return { value: Number(m[0]), decimals: m[1] ? m[1].length - 1 : 0 };
}

/** True when `shown` is `value` rounded to the decimals shown. */
function showsValue(shown, value) {
  const p = numberIn(shown);
  if (!p || typeof value !== 'number') return false;
  return Math.abs(p.value - value) <= 0.5 * 10 ** -p.decimals + 1e-9;
}

async function openPage(context, file, label) {
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith('file:') && !u.startsWith('data:')) problems.push(`request off disk: ${u}`);
  });
  const url = pathToFileURL(path.resolve(file)).href;
  const res = await page.goto(url, { waitUntil: 'load', timeout: 15000 });
  expect(res === null || res.ok(), `${label}: loads from disk (${url})`);
  await page.waitForTimeout(150); // let late console messages arrive
  return { page, problems };
}

async function shoot(page, name) {
  const file = path.join(args.shots, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`  screenshot ${file}`);
}

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hypha-site-chromium-'));
let context;
try {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath, headless: true, args: FLAGS, viewport: { width: 1280, height: 900 },
  });
} catch (e) {
  console.error(`browser test: could not start Chromium at ${executablePath}: ${e.message.split('\n')[0]}`);
  process.exit(1);
}

try {
  // ---- headline page -------------------------------------------------------------------------
  console.log('index.html');
  {
    const { page, problems } = await openPage(context, path.join(args.site, 'index.html'), 'index');
    expect((await page.title()).includes('Headline'), 'index: title says Headline');
    const figs = await page.$$eval('table.headline .fig', (els) => els.map((e) => ({
      scenario: e.dataset.scenario, system: e.dataset.system, variant: e.dataset.variant,
      field: e.dataset.field, value: Number(e.dataset.value), text: e.textContent.trim(),
      visible: e.getBoundingClientRect().width > 0,
    })));
    expect(figs.length >= 15, `index: headline shows at least 15 figures (got ${figs.length})`);
    for (const f of figs) {
      const row = fixtureRow(f.scenario, f.system, f.variant);
      const want = row ? row[f.field] : undefined;
      expect(row && typeof want === 'number', `index: headline figure ${f.scenario}/${f.field} exists in ${args.shown}`);
      if (typeof want !== 'number') continue;
      expect(f.value === want, `index: ${f.scenario}/${f.field}${f.variant ? `/${f.variant}` : ''} carries ${want} (got ${f.value})`);
      expect(showsValue(f.text, want), `index: ${f.scenario}/${f.field}${f.variant ? `/${f.variant}` : ''} shows ${want} (text "${f.text}")`);
      expect(f.visible, `index: ${f.scenario}/${f.field} is visible`);
    }
    // The figures a user needs first must all be there, from this file.
    const must = [['rpc.noop.serial', 'p50_ms'], ['rpc.noop.concurrent', 'throughput_per_s'], ['log.append.concurrent', 'throughput_per_s'],
      ['log.append.serial', 'p50_ms'], ['log.replay', 'throughput_per_s'], ['log.tail', 'p50_ms'], ['doc.incr.contended', 'throughput_per_s'],
      ['presence.propagate', 'p50_ms'], ['ws.max', 'peak'], ['artifact.put.8m', 'mb_per_s'], ['artifact.get.8m', 'mb_per_s'],
      ['artifact.multipart.64m', 'mb_per_s'], ['cold.log', 'p50_ms']];
    for (const [name, field] of must) {
      expect(figs.some((f) => f.scenario === name && f.field === field && f.system === 'hypha-mesh'), `index: headline shows our ${name} ${field}`);
    }
    const rows = await page.$$eval('table.headline tbody tr', (els) => els.map((e) => ({ id: e.dataset.headline, meaning: e.querySelector('td.meaning').textContent.trim() })));
    expect(rows.length >= 10, `index: headline has at least 10 rows (got ${rows.length})`);
    for (const r of rows) expect(r.meaning.length > 40, `index: row ${r.id} says what it means for a user`);
    const peerText = await page.$eval('tr[data-headline="rpc"] td.peers', (e) => e.textContent);
    const nats = fixtureRow('rpc.noop.serial', 'nats');
    expect(peerText.includes('NATS') && showsValue(peerText.split(':')[1], nats.p50_ms), `index: RPC row shows NATS p50 ${nats.p50_ms} from the same run ("${peerText.trim()}")`);
    const badges = await page.$$eval('table.headline .badge', (els) => els.map((e) => e.textContent.trim()));
    expect(badges.length >= 8 && badges.every((b) => ['met', 'not met', 'no data'].includes(b)), `index: mark badges present (${badges.join(', ')})`);
    const banner = await page.$('.banner.fixture');
    expect(Boolean(banner) === (shownFile.config?.fixture === true), 'index: fixture banner shown exactly when the file is a fixture');

    // Charts: SVG drawn, with data points whose values come from the file.
    for (const kind of ['throughput', 'bandwidth', 'latency', 'history']) {
      const info = await page.$$eval(`svg[data-chart="${kind}"]`, (svgs) => svgs.map((s) => ({
        width: s.getBoundingClientRect().width,
        points: [...s.querySelectorAll('.datum')].map((d) => ({ v: Number(d.dataset.value), w: d.getBBox().width, h: d.getBBox().height })),
      })));
      expect(info.length > 0, `index: ${kind} chart drawn`);
      expect(info.every((c) => c.width > 100), `index: ${kind} charts have a size`);
      const pts = info.flatMap((c) => c.points);
      expect(pts.length > 0, `index: ${kind} chart has data points (${pts.length})`);
      expect(pts.every((p) => p.w > 0 && p.h > 0), `index: ${kind} points are drawn with a size`);
    }
    const allValues = new Set(allFiles.flatMap((f) => f.doc.scenarios.flatMap((r) => Object.values(r).filter((v) => typeof v === 'number'))));
    const plotted = await page.$$eval('svg .datum', (els) => els.map((e) => Number(e.dataset.value)));
    expect(plotted.every((v) => allValues.has(v)), 'index: every plotted value is a figure from the result files');
    const tp = await page.$$eval('svg[data-chart="throughput"] rect.datum[data-scenario="log.append.concurrent"]', (els) => els.map((e) => e.dataset.system));
    expect(tp.includes('hypha-mesh') && tp.includes('redis') && tp.includes('nats'), `index: throughput chart puts log.append.concurrent beside both peers (${tp.join(', ')})`);
    const hist = await page.$$eval('svg[data-chart="history"][data-scenario="rpc.noop.serial"] circle.datum[data-system="hypha-mesh"]', (els) => els.length);
    const runsWith = allFiles.filter((f) => f.doc.scenarios.some((r) => r.name === 'rpc.noop.serial' && r.system === 'hypha-mesh')).length;
    expect(hist === runsWith, `index: history of rpc.noop.serial has one point per result file (${hist} of ${runsWith})`);
    await shoot(page, 'index');
    expect(problems.length === 0, `index: no console errors or off-disk requests (${problems.join(' | ')})`);
    await page.close();
  }

  // ---- scenarios page ------------------------------------------------------------------------
  console.log('scenarios.html');
  {
    const { page, problems } = await openPage(context, path.join(args.site, 'scenarios.html'), 'scenarios');
    const names = [...new Set(shownFile.scenarios.map((r) => r.name))];
    for (const name of names) {
      const sec = await page.$(`section[data-scenario="${name}"]`);
      expect(Boolean(sec), `scenarios: a table for ${name}`);
      if (!sec) continue;
      const cells = await sec.$$eval('table.figures tbody tr[data-system]', (trs) => trs.map((tr) => ({
        system: tr.dataset.system, variant: tr.dataset.variant, cells: [...tr.querySelectorAll('td')].map((td) => td.textContent.trim()),
      })));
      const rows = shownFile.scenarios.filter((r) => r.name === name);
      expect(cells.length === rows.length, `scenarios: ${name} has a row per system row in the file (${cells.length} of ${rows.length})`);
      for (const r of rows) {
        const variant = String(r.provider ?? r.variant ?? r.backend ?? r.store ?? '');
        const c = cells.find((x) => x.system === r.system && x.variant === variant);
        expect(Boolean(c), `scenarios: ${name} has a row for ${r.system} ${variant}`);
        if (!c) continue;
        // The table's first columns: n, errors, p50, p95, p99, max, throughput.
        ['n', 'errors', 'p50_ms', 'p95_ms', 'p99_ms', 'max_ms', 'throughput_per_s'].forEach((f, k) => {
          if (typeof r[f] === 'number') expect(showsValue(c.cells[k], r[f]), `scenarios: ${name} ${r.system} ${variant} ${f} shows ${r[f]} ("${c.cells[k]}")`);
          else expect(c.cells[k] === '—', `scenarios: ${name} ${r.system} ${f} is blank when the file has none ("${c.cells[k]}")`);
        });
      }
      const refs = await sec.$$eval('tr.ref', (trs) => trs.map((t) => t.className));
      expect(refs.some((c) => c.includes('local')) && refs.some((c) => c.includes('cloud')) || name === 'rpc.noop.openloop', `scenarios: ${name} shows the reference's local and cloud marks`);
    }
    const issueRows = await page.$$eval('tr.ref.issue', (els) => els.length);
    expect(issueRows >= 10, `scenarios: targets shown (${issueRows})`);
    const ratios = await page.$$eval('section[data-scenario="rpc.noop.serial"] tr[data-system="nats"] .ratio', (els) => els.map((e) => Number(e.dataset.ratio)));
    const us = fixtureRow('rpc.noop.serial', 'hypha-mesh').p50_ms, them = fixtureRow('rpc.noop.serial', 'nats').p50_ms;
    expect(ratios.length === 1 && Math.abs(ratios[0] - us / them) < 1e-9, `scenarios: ratio ours ÷ NATS for rpc.noop.serial is ${us / them} (${ratios})`);
    const charts = await page.$$eval('svg[data-chart="latency"] circle.datum', (els) => els.length);
    expect(charts > 20, `scenarios: latency charts drawn with points (${charts})`);
    await shoot(page, 'scenarios');
    expect(problems.length === 0, `scenarios: no console errors (${problems.join(' | ')})`);
    await page.close();
  }

  // ---- history and method --------------------------------------------------------------------
  for (const [file, check] of [
    ['history.html', async (page) => {
      const runs = await page.$$eval('table.runs tbody tr', (els) => els.length);
      expect(runs === allFiles.length, `history: one row per result file (${runs} of ${allFiles.length})`);
      const pts = await page.$$eval('svg[data-chart="history"] circle.datum', (els) => els.length);
      expect(pts > 0, `history: charts drawn (${pts} points)`);
    }],
    ['method.html', async (page) => {
      const text = await page.$eval('main', (e) => e.textContent);
      for (const w of ['loopback', 'fsync', 'Warm-up', 'cores', 'appendfsync always', 'acknowledges before fsync']) expect(text.includes(w), `method: says "${w}"`);
      expect(text.includes(String(shownFile.machine.java)), 'method: shows the machine from the file');
    }],
  ]) {
    console.log(file);
    const { page, problems } = await openPage(context, path.join(args.site, file), file);
    await check(page);
    await shoot(page, file.replace('.html', ''));
    expect(problems.length === 0, `${file}: no console errors (${problems.join(' | ')})`);
    await page.close();
  }

  // ---- no results ----------------------------------------------------------------------------
  console.log('no results');
  {
    const { page, problems } = await openPage(context, path.join(args.empty, 'index.html'), 'empty');
    const h1 = await page.$eval('h1', (e) => e.textContent);
    expect(h1.includes('No results yet'), `empty: says "No results yet" (${h1})`);
    expect((await page.$$('svg .datum')).length === 0 && (await page.$$('.fig')).length === 0, 'empty: shows no figure');
    await shoot(page, 'no-results');
    expect(problems.length === 0, `empty: no console errors (${problems.join(' | ')})`);
    await page.close();
  }
} catch (e) {
  failures.push(`unexpected: ${e.stack || e}`);
  console.error(e);
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}

console.log(`browser test: ${passed} checks passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
