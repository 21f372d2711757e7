// Unit tests of the page build: reading result files, choosing the run, marks, formatting, and
// the pages written for a folder with results, with none, and with broken files.
// Run: node --test test/unit/

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from '../../build.mjs';
import { chooseRun, loadResults, parseRun } from '../../src/load.mjs';
import { compare, conflictRate, evaluateMark } from '../../src/analysis.mjs';
import { ms, rate, ratio } from '../../src/format.mjs';
import { headlineRows } from '../../src/headline.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.join(here, '../fixtures/results');

function tmp() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'hypha-site-unit-'));
}

function minimal(overrides = {}) {
  return JSON.stringify({
    label: 'one', started: '2026-11-01T00:00:00Z', machine: { cores: 2 }, config: {},
    scenarios: [{ name: 'rpc.noop.serial', system: 'hypha-mesh', n: 10, errors: 0, p50_ms: 0.3, p95_ms: 0.4, p99_ms: 0.5, max_ms: 1, throughput_per_s: 3000, notes: '' }],
    cost: {}, ...overrides,
  });
}

test('a broken, an undated and an empty result file are skipped with a reason; sub-folders and CSV are ignored', () => {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, 'good.json'), minimal());
  fs.writeFileSync(path.join(dir, 'broken.json'), '{ "label": ');
  fs.writeFileSync(path.join(dir, 'undated.json'), minimal({ started: 'yesterday' }));
  fs.writeFileSync(path.join(dir, 'empty.json'), minimal({ scenarios: [] }));
  fs.writeFileSync(path.join(dir, 'good.csv'), 'name,system\n');
  fs.mkdirSync(path.join(dir, 'raw'));
  fs.writeFileSync(path.join(dir, 'raw', 'samples.json'), '[1,2,3]');
  const { runs, skipped } = loadResults(dir);
  assert.deepEqual(runs.map((r) => r.file), ['good.json']);
  assert.deepEqual(skipped.map((s) => s.file).sort(), ['broken.json', 'empty.json', 'undated.json']);
  assert.match(skipped.find((s) => s.file === 'undated.json').reason, /started/);
});

test('a missing results folder is no results, not an error', () => {
  const { runs, skipped } = loadResults(path.join(tmp(), 'nope'));
  assert.equal(runs.length, 0);
  assert.equal(skipped.length, 0);
});

test('rows without name or system are left out with a warning; numbers given as text are read, junk is null', () => {
  const { run } = parseRun(minimal({ scenarios: [
    { name: 'log.tail', system: 'hypha-mesh', p50_ms: '0.4', p99_ms: 'fast' },
    { system: 'nats', p50_ms: 1 },
  ] }), 'x.json');
  assert.equal(run.scenarios.length, 1);
  assert.equal(run.scenarios[0].p50_ms, 0.4);
  assert.equal(run.scenarios[0].p99_ms, null);
  assert.equal(run.warnings.length, 1);
});

test('rows run through the TypeScript client are labelled beside ours, and the marks keep to the JVM client', () => {
  const { run } = parseRun(minimal({ scenarios: [
    { name: 'log.append.serial', system: 'hypha-mesh', p50_ms: 0.3, throughput_per_s: 3000 },
    { name: 'log.append.serial', system: 'hypha-mesh', client: 'js', p50_ms: 0.9, throughput_per_s: 1000, client_cpu_us_per_op: 40, p50_ratio_to_jvm: 3 },
    { name: 'artifact.put.8m', system: 'hypha-mesh', provider: 'filesystem', mb_per_s: 100 },
    { name: 'artifact.put.8m', system: 'hypha-mesh', provider: 'filesystem', client: 'js', mb_per_s: 50 },
  ] }), 'x.json');
  const js = run.scenarios.filter((r) => r.client === 'js');
  assert.deepEqual(js.map((r) => r.variant), ['TypeScript client', 'filesystem, TypeScript client']);
  assert.equal(js[0].client_cpu_us_per_op, 40);
  assert.deepEqual(run.scenarios.filter((r) => !r.client).map((r) => r.variant), ['', 'filesystem']);
  const mark = evaluateMark(run, 'log.append.serial');
  assert.equal(mark.checks.length, 1);
  assert.equal(mark.checks[0].ours, 0.3);
  const dir = tmp();
  fs.writeFileSync(path.join(dir, 'js.json'), minimal({ scenarios: [
    { name: 'rpc.noop.serial', system: 'hypha-mesh', n: 10, errors: 0, p50_ms: 0.3, throughput_per_s: 3000 },
    { name: 'rpc.noop.serial', system: 'hypha-mesh', client: 'js', n: 10, errors: 0, p50_ms: 0.4, throughput_per_s: 2500, mark: 'JS p50 ≤ 1.5 × the JVM client\'s (same run)', mark_ratio: 1.1 },
  ], config: { client_js: { node: 'v20.20.2', browser_bundle: { minified_bytes: 35676, gzip_bytes: 11863 } } } }));
  const out = path.join(dir, 'site');
  build({ results: dir, out });
  const page = fs.readFileSync(path.join(out, 'scenarios.html'), 'utf8');
  assert.match(page, /Hypha-Mesh \(TypeScript client\)/);
});

test('the headline\'s CPU table shows the server\'s context switches per operation, ours and a peer\'s, and — where a run has none', () => {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, 'cs.json'), minimal({ scenarios: [
    { name: 'log.read.page', system: 'hypha-mesh', n: 1000, errors: 0, throughput_per_s: 900000, server_cpu_us_per_op: 1.5, client_cpu_us_per_op: 2, server_cs_per_op: 0.00425 },
    { name: 'log.read.page', system: 'redis', n: 1000, errors: 0, throughput_per_s: 800000, server_cpu_us_per_op: 1.2, client_cpu_us_per_op: 1 },
  ] }));
  const out = path.join(dir, 'site');
  build({ results: dir, out });
  const page = fs.readFileSync(path.join(out, 'index.html'), 'utf8');
  assert.match(page, /<th>ours, server cs<\/th>/);
  const cells = [...page.matchAll(/<td class="cs" data-field="server_cs_per_op">([^<]*)<\/td>/g)].map((m) => m[1]);
  assert.deepEqual(cells, ['0.0043', '—']);
});

test('the shown run is the latest full run, or the one asked for', () => {
  const { runs } = loadResults(FIXTURES);
  assert.equal(runs.length, 3);
  assert.equal(chooseRun(runs).label, 'fixture-full');
  assert.equal(chooseRun(runs, 'fixture-quick').label, 'fixture-quick');
  assert.throws(() => chooseRun(runs, 'nothing'), /no result file or label/);
  const onlyQuick = runs.filter((r) => r.quick);
  assert.equal(chooseRun(onlyQuick).label, 'fixture-quick');
});

test('marks: fixed values, peers in the same run, and missing figures', () => {
  const { runs } = loadResults(FIXTURES);
  const run = chooseRun(runs);
  assert.equal(evaluateMark(run, 'log.append.serial').status, 'met'); // 0.29 ≤ 0.35
  assert.equal(evaluateMark(run, 'rpc.noop.serial').status, 'missed'); // 0.31 > NATS 0.21
  const incr = evaluateMark(run, 'doc.incr.contended'); // 22,600 < 50,000 but ≥ Redis 21,100, exact
  assert.equal(incr.status, 'missed');
  assert.deepEqual(incr.checks.map((c) => c.status), ['missed', 'met', 'met']);
  const early = runs.find((r) => r.label === 'fixture-early');
  assert.equal(evaluateMark(early, 'presence.propagate').status, 'unknown');
  const mp = evaluateMark(run, 'artifact.multipart.64m'); // both providers checked
  assert.equal(mp.checks.length, 2);
  assert.equal(evaluateMark(run, 'log.tail'), null);
});

test('ratios say which way is better', () => {
  assert.equal(compare(0.31, 0.21, 'p50_ms').verdict, 'worse');
  assert.equal(compare(41800, 38900, 'throughput_per_s').verdict, 'better');
  assert.equal(compare(100, 101, 'throughput_per_s').verdict, 'about equal');
  assert.equal(compare(1, null, 'p50_ms'), null);
  assert.equal(conflictRate({ n: 800, conflicts: 6595 }).toFixed(3), '0.892'); // the reference's 89 %
});

test('numbers are written as the reference writes them', () => {
  assert.equal(ms(0.27), '0.27');
  assert.equal(ms(13.33), '13.3');
  assert.equal(ms(730), '730');
  assert.equal(ms(0.045), '0.045');
  assert.equal(rate(12470), '12,470');
  assert.equal(rate(27.7), '27.7');
  assert.equal(rate(9.71), '9.71');
  assert.equal(rate(1210000), '1,210,000');
  assert.equal(ratio(0.6774), '0.68×');
  assert.equal(ms(null), '—');
});

test('every headline row is built, and a run without a scenario says so rather than inventing it', () => {
  const { runs } = loadResults(FIXTURES);
  const full = headlineRows(chooseRun(runs));
  assert.ok(full.length >= 10);
  assert.ok(full.every((r) => r.present));
  const early = headlineRows(runs.find((r) => r.label === 'fixture-early'));
  const presence = early.find((r) => r.id === 'presence');
  assert.equal(presence.present, false);
  assert.match(presence.number, /not in this run/);
  assert.match(presence.meaning, /not measured in this run/);
});

test('build writes four pages from results, and only a "no results yet" page from none, removing stale pages', () => {
  const out = tmp();
  const withResults = build({ results: FIXTURES, out, run: null });
  assert.deepEqual(withResults.pages.sort(), ['history.html', 'index.html', 'method.html', 'scenarios.html']);
  const index = fs.readFileSync(path.join(out, 'index.html'), 'utf8');
  assert.match(index, /id="bench-data"/);
  assert.doesNotMatch(index, /<script(?! type="application\/json")/); // no executable script
  assert.doesNotMatch(index, /https?:\/\/(?!www\.w3\.org\/2000\/svg)/); // nothing fetched from the network
  const empty = path.join(tmp(), 'results');
  fs.mkdirSync(empty);
  fs.writeFileSync(path.join(empty, 'broken.json'), 'nope');
  const none = build({ results: empty, out, run: null });
  assert.deepEqual(none.pages, ['index.html']);
  assert.ok(!fs.existsSync(path.join(out, 'scenarios.html')), 'stale scenarios page removed');
  const page = fs.readFileSync(path.join(out, 'index.html'), 'utf8');
  assert.match(page, /No results yet/);
  assert.match(page, /broken\.json/);
});

test('text from result files is escaped, also inside the embedded data', () => {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, 'x.json'), minimal({ label: '<img src=x onerror=alert(1)>', scenarios: [
    { name: 'rpc.noop.serial', system: 'hypha-mesh', p50_ms: 0.3, notes: '</script><script>alert(1)</script>' }] }));
  const out = tmp();
  build({ results: dir, out, run: null });
  for (const f of ['index.html', 'scenarios.html', 'history.html', 'method.html']) {
    const html = fs.readFileSync(path.join(out, f), 'utf8');
    assert.doesNotMatch(html, /<img src=x/, f);
    assert.doesNotMatch(html, /<script>alert/, f);
  }
});

test('a replay that did not catch up, a counter that ended wrong and a socket ceiling are said plainly', () => {
  const { run } = parseRun(minimal({ scenarios: [
    { name: 'log.replay', system: 'hypha-mesh', n: 1000000, errors: 2, throughput_per_s: 0 },
    { name: 'doc.incr.contended', system: 'hypha-mesh', n: 800, throughput_per_s: 100, conflicts: 0, final_exact: false },
    { name: 'ws.max', system: 'hypha-mesh', peak: 1200, failures: 17 },
  ] }), 'odd.json');
  const rows = Object.fromEntries(headlineRows(run).map((r) => [r.id, r]));
  assert.match(rows.replay.meaning, /did not catch up/);
  assert.match(rows.replay.errors, /2 errors/);
  assert.match(rows.counter.meaning, /NOT exact/);
  assert.doesNotMatch(rows.counter.meaning, /stay exact/);
  assert.match(rows.sockets.meaning, /17 connections failed/);
  assert.equal(evaluateMark(run, 'ws.max').status, 'missed');
  assert.equal(evaluateMark(run, 'doc.incr.contended').status, 'missed');
});

test('the pages speak to readers: targets, no tracker words or internal files, like compared with like, the run named', () => {
  const dir = tmp();
  const out = tmp();
  fs.writeFileSync(path.join(dir, 'run.json'), minimal({ config: { git_commit: 'abc1234', command: './hypha bench --peers nats,redis' } }));
  build({ results: dir, out, run: null });
  for (const page of ['index.html', 'scenarios.html', 'history.html', 'method.html']) {
    const html = fs.readFileSync(path.join(out, page), 'utf8');
    const text = html.replace(/<(script|style)[\s\S]*?<\/\1>/g, '').replace(/<[^>]+>/g, ' ');
    assert.doesNotMatch(text, /issue \d|BENCH\.md|\bmarks?\b/i, `${page} speaks of the tracker or its files`);
    assert.match(html, /commit <code>abc1234<\/code>/, `${page} names the measured commit`);
    assert.match(html, /command <code>\.\/hypha bench --peers nats,redis<\/code>/, `${page} names the exact command`);
  }
  const scenarios = fs.readFileSync(path.join(out, 'scenarios.html'), 'utf8');
  const cloud = scenarios.match(/<tr class="ref cloud">[\s\S]*?<\/tr>/);
  assert.ok(cloud, 'the cloud figures are shown as context');
  assert.doesNotMatch(cloud[0], /class="ratio/, 'no ratio of a loopback figure to a cloud figure');
  assert.match(scenarios.match(/<tr class="ref local">[\s\S]*?<\/tr>/)[0], /class="ratio/, 'the local run is the one compared');
});
