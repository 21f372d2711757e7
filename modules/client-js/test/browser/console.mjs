// The operator's console (/console, served by the server from its jar) in real Chromium
// (playwright-core, Debian's chromium from $CHROMIUM) against a real server started from the built
// jar, with data made by the test through the Node client: sign in as root and see the workspace
// list; create and delete a workspace in the page; a workspace's objects, presence and services;
// a Log's entries and a live append from Node; a Doc CAS edit reaching a Node subscription, a stale
// CAS shown as a conflict, incr; the metrics charts; a read token sees no write control and a write
// forged from the page is refused (forbidden); tokens minted (shown once), listed and revoked; a
// 50 MB upload with progress read back byte-equal, folders, download, delete; the audit trail
// listing what the test did; the cluster page of a single server; console.enabled=false. Screenshots of each page in
// modules/client-js/target/test-output/console/. Prints "console browser test: N checks passed, M
// failed" and exits non-zero on any failure.
import fs from 'node:fs';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { TestServer, until, javaBin, repo } from '../server.mjs';
import { HyphaClient } from '../../dist/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const shots = path.join(root, 'target/test-output/console');
fs.mkdirSync(shots, { recursive: true });
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'];
const STEP_MS = 60_000;
const WAIT = { timeout: 15_000 };
let passed = 0, failed = 0;
const check = (ok, what) => { if (ok) passed++; else { failed++; console.log(`  FAIL: ${what}`); } return ok; };
const step = async (name, fn, bound = STEP_MS) => {
  const t0 = Date.now();
  try {
    await Promise.race([fn(), new Promise((_, rej) => setTimeout(() => rej(new Error(`over ${bound} ms`)), bound))]);
    console.log(`  ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    check(false, `${name}: ${e.stack ?? e}`);
  }
};
const shot = (page, name) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

const server = await TestServer.start();
const base = server.base;
const ws = await server.workspace('acme');
const node = await HyphaClient.connect(server.workspaceUrl(ws), await server.mint(ws, { clientId: 'node-app' }));
const events = node.log('events');
await events.appendAll([{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
await node.doc('config').put({ mode: 'initial', count: 0 });
const readToken = await server.mint(ws, { permission: 'read', clientId: 'viewer' });
// enough to page: 30 more workspaces (25 a page; named to sort after ours) and 60 more Docs (50 a page)
for (let i = 0; i < 30; i++) await server.http('POST', '/v1/workspaces', { name: `zz-fill-${String(i).padStart(2, '0')}-${ws}` });
await Promise.all(Array.from({ length: 60 }, (_, i) => node.doc(`p-${String(i).padStart(2, '0')}`).put({ i })));
await node.doc('a-big').put({ pad: 'x'.repeat(4000) });
const trim = node.log('trim');
await trim.appendAll(Array.from({ length: 10 }, (_, i) => ({ t: i + 1 })));

// a Log of a million entries (CONSOLE_LOG_ENTRIES to change it), in batches of 1000, 4 in flight;
// half-way, a whole second passes between two batches: the time the test jumps to
const MILLION = Number(process.env.CONSOLE_LOG_ENTRIES ?? 1_000_000);
const million = node.log('million');
let markSeq = 0, markAt = 0;
{
  const t0 = Date.now();
  const batches = Math.ceil(MILLION / 1000);
  const half = Math.floor(batches / 2);
  const put = (b) => million.appendAll(Array.from({ length: Math.min(1000, MILLION - b * 1000) }, (_, i) => ({ n: b * 1000 + i + 1 })));
  for (let b = 0; b < half; b += 4) await Promise.all([b, b + 1, b + 2, b + 3].filter((x) => x < half).map(put));
  markAt = Math.ceil((Date.now() + 1) / 1000) * 1000;
  await new Promise((r) => setTimeout(r, markAt - Date.now() + 5));
  markSeq = half * 1000 + 1;
  for (let b = half; b < batches; b += 4) await Promise.all([b, b + 1, b + 2, b + 3].filter((x) => x < batches).map(put));
  console.log(`  made log:million, ${MILLION} entries, in ${Date.now() - t0} ms (seq ${markSeq} is the first at or after ${new Date(markAt).toISOString()})`);
}

// a JVM client (modules/client) subscribed to log:events and doc:config: the console's changes must reach it
const clientJar = (() => {
  const dir = path.join(repo, 'modules/client/target');
  const f = fs.existsSync(dir) ? fs.readdirSync(dir).find((n) => /^hypha-client-.*\.jar$/.test(n) && !/-(sources|javadoc|tests)\.jar$/.test(n)) : null;
  return f ? path.join(dir, f) : null;
})();
const jvmLines = [];
let jvm = null;
if (clientJar) {
  jvm = spawn(javaBin(), ['-cp', `${clientJar}:${path.join(repo, 'modules/runtime/target/lib')}/*`, path.join(root, 'test/browser/JvmWatcher.java'),
    server.workspaceUrl(ws), await server.mint(ws, { permission: 'read', clientId: 'jvm-watcher' }), 'events', 'config'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = '';
  jvm.stdout.on('data', (b) => { buf += b; let i; while ((i = buf.indexOf('\n')) >= 0) { jvmLines.push(buf.slice(0, i)); buf = buf.slice(i + 1); } });
  jvm.stderr.on('data', (b) => process.stdout.write(`  (jvm client: ${b})`));
  await until(() => jvmLines.includes('ready'), 60_000, 'the JVM client subscribed').catch((e) => check(false, e.message));
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, args: FLAGS });
const pages = [];
async function open(context) {
  const page = await context.newPage();
  pages.push(page);
  page.on('pageerror', (e) => check(false, `page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 40[13]/.test(m.text())) console.log(`  (page console: ${m.text()})`); });
  return page;
}
async function signIn(page, token) {
  const t0 = Date.now();
  await page.goto(`${base}/console`);
  await page.waitForSelector('#sign-in #token', WAIT);
  const firstPaint = Date.now() - t0;
  await page.fill('#token', token);
  await page.click('#sign-in button[type=submit]');
  return firstPaint;
}
const text = (page, sel) => page.$eval(sel, (e) => e.textContent);

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await open(context);

  await step('the console is served from the jar: /console, its script and sheet, with a CSP of its own origin', async () => {
    const r = await fetch(`${base}/console`);
    check(r.status === 200 && (r.headers.get('content-type') ?? '').startsWith('text/html'), `GET /console: ${r.status} ${r.headers.get('content-type')}`);
    check((r.headers.get('content-security-policy') ?? '').includes("script-src 'self'"), 'a CSP naming only this origin');
    for (const f of ['console.js', 'console.css']) {
      const a = await fetch(`${base}/console/${f}`);
      check(a.status === 200, `GET /console/${f}: ${a.status}`);
    }
    check((await fetch(`${base}/console/nothing.js`)).status === 404, 'an unknown console file is 404');
  });

  await step('sign in as root and see the workspace list', async () => {
    await page.goto(`${base}/console`);
    await page.waitForSelector('#sign-in', WAIT);
    await shot(page, '1-sign-in');
    const firstPaint = await signIn(page, 'not-a-token');
    check(firstPaint < 3000, `the sign-in page painted in ${firstPaint} ms`);
    console.log(`    the sign-in form was there ${firstPaint} ms after navigating (loopback, first load)`);
    await page.waitForFunction(() => document.getElementById('sign-in-error').textContent.includes('unauthorized'), null, WAIT);
    check(true, 'a bad token is refused with unauthorized');
    await page.fill('#token', server.root);
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector(`#workspaces tr[data-ws="${ws}"]`, WAIT);
    check(await page.evaluate(() => sessionStorage.getItem('hypha.console.token') !== null && localStorage.length === 0), 'the token is in sessionStorage only');
    check((await text(page, '#me')) === 'root', 'signed in as root');
    check((await text(page, '#ws-page')).includes('page 1 of 2 (31 workspaces)'), `paged: ${await text(page, '#ws-page')}`);
    check((await page.$$('#workspaces tbody tr')).length === 25, 'a page shows 25 workspaces');
    await page.click('#ws-page + button');
    await page.waitForSelector('#workspaces tr[data-ws^="zz-fill-29"]', WAIT);
    check((await page.$$('#workspaces tbody tr')).length === 6, 'the second page shows the other 6');
    await page.click('.pager button:first-child');
    await page.waitForSelector(`#workspaces tr[data-ws="${ws}"]`, WAIT);
    await shot(page, '2-workspaces');
  });

  await step('first paint: /console in a fresh tab (no cache), measured against the 300 ms budget', async () => {
    const fctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const fp = await open(fctx);
      const runs = [];
      for (let i = 0; i < 3; i++) {
        await fp.goto(`${base}/console?run=${i}`, { waitUntil: 'load' });
        await fp.waitForSelector('#sign-in #token', WAIT);
        runs.push(await fp.evaluate(() => {
          const paint = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null;
          return { paint: paint === null ? null : Math.round(paint), form: Math.round(performance.now()) };
        }));
        if (i === 0) await fctx.clearCookies();
      }
      console.log(`    first contentful paint (ms from navigation): ${runs.map((r) => r.paint).join(', ')}; the sign-in form there by ${runs.map((r) => r.form).join(', ')} ms (first load cold, then cached)`);
      // the issue's budget is 300 ms on loopback: printed against it here; the check itself is 3 s, since
      // this machine's load (shared cores) moves the figure (252-264 ms quiet, 600 ms under load); speed
      // is measured, not asserted (STYLE 14)
      console.log(`    first paint ${runs[0].paint} ms: ${runs[0].paint !== null && runs[0].paint <= 300 ? 'within' : 'OVER'} the 300 ms budget (load average ${os.loadavg()[0].toFixed(1)})`);
      check(runs[0].paint !== null && runs[0].paint < 3000, `the first (cold) load painted: ${runs[0].paint} ms`);
    } finally {
      await fctx.close();
    }
  });

  await step('create a workspace in the page, then delete it with a typed confirmation', async () => {
    const name = `made${Date.now().toString(36)}`;
    await page.fill('#new-ws', name);
    await page.click('#create-ws button[type=submit]');
    await page.waitForSelector(`#workspaces tr[data-ws="${name}"]`, WAIT);
    const listed = (await server.http('GET', '/v1/workspaces')).workspaces.map((w) => w.name);
    check(listed.includes(name), `the server has the workspace made in the page: ${listed}`);
    await page.click(`button[data-delete="${name}"]`);
    const go = page.locator(`#workspaces tr[data-ws="${name}"] button.danger`);
    check(await go.isDisabled(), 'delete is disabled until the name is typed');
    await page.fill(`#workspaces tr[data-ws="${name}"] input.confirm`, name.slice(0, -1));
    check(await go.isDisabled(), 'a name typed wrong does not enable delete');
    await page.fill(`#workspaces tr[data-ws="${name}"] input.confirm`, name);
    await shot(page, '3-delete-confirm');
    await go.click();
    await page.waitForSelector(`#workspaces tr[data-ws="${name}"]`, { state: 'detached', ...WAIT });
    const after = (await server.http('GET', '/v1/workspaces')).workspaces.map((w) => w.name);
    check(!after.includes(name) && after.includes(ws), `deleted on the server, the others kept: ${after}`);
  });

  await step('a workspace: its Logs and Docs, presence and services updating live', async () => {
    await page.click(`#workspaces a[href="#/w/${ws}"]`);
    await page.waitForSelector('#objects tr[data-object="log:events"]', WAIT);
    await page.waitForSelector('#objects tr[data-object="doc:config"]', WAIT);
    const row = await text(page, '#objects tr[data-object="log:events"]');
    check(row.includes('3 (1–3)'), `the Log's row shows its entries: ${row}`);
    check((await page.$$('#objects tbody tr')).length === 50, 'the listing shows 50 objects a page');
    await page.click('#objects + .pager button:last-child');
    await page.waitForSelector('#objects tr[data-object="doc:p-59"]', WAIT);
    check((await page.$$('#objects tbody tr')).length === 15, 'the next page shows the other 15');
    await page.click('#objects + .pager button:first-child');
    await page.waitForSelector('#objects tr[data-object="log:events"]', WAIT);
    await page.fill('#prefix', 'conf');
    await page.click('#filter-form button');
    await page.waitForSelector('#objects tr[data-object="log:events"]', { state: 'detached', ...WAIT });
    check(await page.$('#objects tr[data-object="doc:config"]') !== null, 'the prefix filter keeps doc:config only');
    await page.fill('#prefix', '');
    await page.click('#filter-form button');
    await page.waitForSelector('#objects tr[data-object="log:events"]', WAIT);
    // sorted by size, largest first: as the server's sorted listing, whose pages chain without a gap
    await page.selectOption('#sort', 'size');
    await page.waitForFunction(() => document.querySelector('#objects tbody tr')?.dataset.object === 'log:million', null, WAIT);
    const shownBySize = await page.$$eval('#objects tbody tr', (rs) => rs.map((r) => r.dataset.object));
    const bySize = [];
    let cur = null;
    for (let i = 0; i < 40; i++) {
      const p = await server.http('GET', `/v1/workspaces/${ws}/objects?sort=size&order=desc&limit=7${cur ? `&cursor=${cur}` : ''}`);
      bySize.push(...p.objects);
      cur = p.next_cursor;
      if (!cur) break;
    }
    const allByName = (await server.http('GET', `/v1/workspaces/${ws}/objects?limit=1000`)).objects;
    check(bySize.length === allByName.length && new Set(bySize.map((o) => `${o.kind}:${o.name}`)).size === allByName.length,
      `pages of 7 by size list every object once: ${bySize.length} of ${allByName.length}`);
    check(bySize.every((o, i) => i === 0 || o.size <= bySize[i - 1].size), 'sizes never rise down the sorted listing');
    check(JSON.stringify(shownBySize) === JSON.stringify(bySize.slice(0, 50).map((o) => `${o.kind}:${o.name}`)), `the page shows the server's order: ${shownBySize.slice(0, 4)}`);
    check(shownBySize[1] === 'doc:a-big', `the 4 KB Doc right after the million-entry Log: ${shownBySize.slice(0, 3)}`);
    await shot(page, '4b-objects-by-size');
    await page.selectOption('#order', 'asc');
    await page.waitForFunction(() => document.querySelector('#objects tbody tr')?.dataset.object !== 'log:million', null, WAIT);
    check(!(await page.$$eval('#objects tbody tr', (rs) => rs.map((r) => r.dataset.object))).includes('log:million'), 'smallest first: the million-entry Log is not on the first page');
    await node.doc('zz-touched').put({ at: Date.now() });
    await page.selectOption('#order', 'desc');
    await page.selectOption('#sort', 'activity');
    await page.waitForFunction(() => document.querySelector('#objects tbody tr')?.dataset.object === 'doc:zz-touched', null, WAIT);
    check(true, 'by last activity, newest first: the Doc just written is first');
    const bad = await fetch(`${base}/v1/workspaces/${ws}/objects?sort=colour`, { headers: { Authorization: `Bearer ${server.root}` } });
    const nameCursor = (await server.http('GET', `/v1/workspaces/${ws}/objects?limit=2`)).next_cursor;
    const mixed = await fetch(`${base}/v1/workspaces/${ws}/objects?sort=size&cursor=${nameCursor}`, { headers: { Authorization: `Bearer ${server.root}` } });
    check(bad.status === 400 && (await bad.json()).code === 'bad_request' && mixed.status === 400,
      `a bad sort and a cursor of another order are 400 bad_request: ${bad.status}, ${mixed.status}`);
    await page.selectOption('#sort', 'name');
    await page.waitForSelector('#objects tr[data-object="log:events"]', WAIT);
    await node.presence.set({ status: 'online' });
    await page.waitForSelector('#presence tr[data-client="node-app"]', WAIT);
    check((await text(page, '#presence tr[data-client="node-app"]')).includes('online'), 'presence shows the Node client with its meta');
    const reg = await node.register('calc', { add: (a, b) => a + b });
    await page.waitForSelector('#services tr[data-service="calc"]', WAIT);
    check((await text(page, '#services tr[data-service="calc"]')).includes('add'), 'the service registry shows calc.add');
    await shot(page, '4-workspace');
    await reg.unregister();
    await page.waitForSelector('#services tr[data-service="calc"]', { state: 'detached', ...WAIT });
    await node.presence.leave();
    await page.waitForSelector('#presence tr[data-client="node-app"]', { state: 'detached', ...WAIT });
    check(true, 'a service unregistered and a presence left disappear');
  });

  await step('a Log: its entries, pages from a seq, a live append from Node, pause, append from the page', async () => {
    await page.click('#objects a[href$="/log/events"]');
    await page.waitForSelector('#entries tr[data-seq="3"]', WAIT);
    check((await text(page, '#entries tr[data-seq="1"]')).includes('"one"'), 'entry 1 shown with its body');
    await page.fill('#from-seq', '2');
    await page.click('#read-form button[type=submit]');
    await page.waitForSelector('#entries tr[data-seq="1"]', { state: 'detached', ...WAIT });
    check(await page.$('#entries tr[data-seq="2"]') !== null, 'reading from seq 2 shows 2 and 3');
    await events.append({ text: 'live from node' });
    await page.waitForFunction(() => document.querySelector('#tail').textContent.includes('live from node'), null, WAIT);
    check(true, 'an append by a Node client appears in the live tail');
    await page.click('#pause');
    await page.waitForFunction(() => document.getElementById('tail-state').textContent.startsWith('paused'), null, WAIT);
    await events.append({ text: 'while paused' });
    await new Promise((r) => setTimeout(r, 500));
    check(!(await text(page, '#tail')).includes('while paused'), 'a paused tail shows nothing new');
    await page.click('#pause');
    await page.waitForFunction(() => document.querySelector('#tail').textContent.includes('while paused'), null, WAIT);
    check(true, 'resuming shows what came while paused');
    const sub = await events.subscribe({});
    await page.fill('#append-body', '{"text": "from the console"}');
    await page.click('#append-form button[type=submit]');
    const got = await Promise.race([sub.next(), new Promise((r) => setTimeout(() => r(null), 10_000))]);
    check(got?.value?.body?.text === 'from the console', `a Node subscription receives the page's append: ${JSON.stringify(got?.value)}`);
    if (check(jvm !== null, `a JVM client is running (modules/client's jar built: ${clientJar})`)) {
      await until(() => jvmLines.some((l) => l.startsWith('log ') && l.includes('"from the console"')), 10_000, 'the JVM client sees the page\'s append')
        .then(() => check(true, ''), (e) => check(false, `${e.message}: ${jvmLines.slice(-3)}`));
    }
    await sub.close();
    await page.waitForFunction(() => document.querySelector('#tail').textContent.includes('from the console'), null, WAIT);
    await shot(page, '5-log');
  });

  await step('a Doc: CAS edit reaches a Node subscription, a stale CAS is a conflict, incr', async () => {
    const seen = [];
    const dsub = await node.doc('config').subscribe((ev, s) => seen.push(s.value));
    await page.goto(`${base}/console#/w/${ws}/doc/config`);
    await page.waitForFunction(() => document.getElementById('doc-value')?.textContent.includes('initial'), null, WAIT);
    const v0 = Number(await text(page, '#doc-version'));
    await page.fill('#doc-editor', '{"mode": "page", "count": 0}');
    await page.click('#doc-save');
    await until(() => seen.some((v) => v?.mode === 'page'), 10_000, 'the Node subscription sees the page\'s CAS');
    check(true, 'the page\'s CAS write reaches the Node subscription');
    if (jvm) {
      await until(() => jvmLines.some((l) => l.startsWith('doc ') && l.includes('"page"')), 10_000, 'the JVM client sees the page\'s CAS')
        .then(() => check(true, ''), (e) => check(false, `${e.message}: ${jvmLines.slice(-3)}`));
    }
    await page.waitForFunction((v) => Number(document.getElementById('doc-version').textContent) === v + 1, v0, WAIT);
    // another writer meanwhile: the page's editor is now stale
    await node.doc('config').put({ mode: 'node', count: 0 });
    await page.waitForFunction(() => document.getElementById('doc-value').textContent.includes('"node"'), null, WAIT);
    await page.fill('#doc-editor', '{"mode": "stale edit"}');
    await page.click('#doc-save');
    await page.waitForSelector('#doc-conflict:not([hidden])', WAIT);
    check((await text(page, '#doc-conflict')).includes('Conflict'), 'a stale CAS shows a conflict');
    check((await node.doc('config').get()).value.mode === 'node', 'the conflict overwrote nothing');
    await shot(page, '6-doc-conflict');
    await page.click('#doc-reload');
    await page.fill('#incr-path', '/count');
    await page.fill('#incr-delta', '5');
    await page.click('#incr-form button[type=submit]');
    await until(async () => (await node.doc('config').get()).value.count === 5, 10_000, 'incr from the page');
    check(true, 'incr on /count from the page');
    await page.waitForFunction(() => document.getElementById('doc-value').textContent.includes('"count": 5'), null, WAIT);
    await shot(page, '7-doc');
    await dsub.close();
  });


  await step(`a Log of ${MILLION} entries pages without loading them: first page, jump to a seq, jump to a time`, async () => {
    const t0 = Date.now();
    await page.goto(`${base}/console#/w/${ws}/log/million`);
    await page.waitForSelector('#entries tr[data-seq="50"]', WAIT);
    const shown = Date.now() - t0;
    check((await page.$$('#entries tbody tr')).length === 50, 'the first page holds 50 entries');
    check((await text(page, '#log-info')).includes(`${MILLION} entries held`), `the info line: ${await text(page, '#log-info')}`);
    const target = Math.floor(MILLION * 0.654321);
    await page.fill('#from-seq', String(target));
    await page.click('#read-form button[type=submit]');
    await page.waitForSelector(`#entries tr[data-seq="${target}"]`, WAIT);
    check((await page.$eval('#entries tbody tr', (r) => r.dataset.seq)) === String(target) && (await page.$$('#entries tbody tr')).length === 50, `from seq ${target}: 50 entries from it`);
    check((await text(page, `#entries tr[data-seq="${target}"]`)).includes(`"n":${target}`), 'with its body');
    await page.click('#older');
    await page.waitForSelector(`#entries tr[data-seq="${target - 1}"]`, WAIT);
    // the time input takes local time to the second; the page turns it into epoch ms
    await page.$eval('#at-time', (el, t) => { const d = new Date(t); el.value = new Date(t - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19); }, markAt);
    await page.click('#time-form button[type=submit]');
    await page.waitForSelector(`#entries tr[data-seq="${markSeq}"]`, WAIT);
    const firstRow = await page.$eval('#entries tbody tr', (r) => r.dataset.seq);
    const reads = await page.evaluate(() => window.hyphaConsole.jumpReads);
    check(firstRow === String(markSeq), `jump to ${new Date(markAt).toISOString()} lands on seq ${markSeq}, the first at or after it: ${firstRow}`);
    check(reads <= Math.ceil(Math.log2(MILLION + 1)) + 1, `found in ${reads} one-entry reads, not a scan`);
    const heap = await page.evaluate(() => performance.memory?.usedJSHeapSize ?? 0);
    check(heap < 64 * 1024 * 1024, `the tab holds ${(heap / 1048576).toFixed(1)} MiB of JS heap (no million entries in it)`);
    console.log(`    log:million: first page shown ${shown} ms after navigating; jump to a time in ${reads} reads; tab heap ${(heap / 1048576).toFixed(1)} MiB`);
    await shot(page, '5b-log-million-jump');
  });

  await step('a Log: truncate and retention (admin), each after typing the Log\'s name; both in the audit trail', async () => {
    await page.goto(`${base}/console#/w/${ws}/log/trim`);
    await page.waitForSelector('#entries tr[data-seq="10"]', WAIT);
    await page.fill('#truncate-before', '4');
    await page.click('#truncate-form button[type=submit]');
    await page.waitForSelector('#log-confirm:not([hidden])', WAIT);
    check(await page.locator('#log-confirm-go').isDisabled(), 'confirm is disabled until the name is typed');
    check((await trim.info()).first === 1, 'nothing removed before confirming');
    await page.fill('#log-confirm-name', 'tri');
    check(await page.locator('#log-confirm-go').isDisabled(), 'a name typed wrong does not enable it');
    await page.fill('#log-confirm-name', 'trim');
    await shot(page, '5c-log-truncate-confirm');
    await page.click('#log-confirm-go');
    await until(async () => (await trim.info()).first === 4, 10_000, 'truncated to seq 4');
    check(true, 'truncate from the page: the Log starts at seq 4');
    await page.waitForSelector('#entries tr[data-seq="3"]', { state: 'detached', ...WAIT });
    await page.fill('#ret-entries', '5');
    await page.fill('#ret-age', '0');
    await page.click('#retention-form button[type=submit]');
    await page.waitForSelector('#log-confirm:not([hidden])', WAIT);
    await page.fill('#log-confirm-name', 'trim');
    await page.click('#log-confirm-go');
    await until(async () => (await trim.info()).retention.maxEntries === 5, 10_000, 'retention set');
    check(true, 'retention set from the page: at most 5 entries');
    await page.waitForFunction(() => document.getElementById('log-info').textContent.includes('at most 5 entries'), null, WAIT);
    await shot(page, '5d-log-admin');
  });

  await step('metrics: charts from /observe/metrics, refreshed every 2 s', async () => {
    await page.goto(`${base}/console#/metrics`);
    await page.waitForFunction(() => [...document.querySelectorAll('.now')].filter((e) => e.textContent !== '–').length >= 3, null, WAIT);
    const sockets = await text(page, '.now[data-series="sockets"]');
    check(Number(sockets) >= 2, `open sockets shown: ${sockets}`);
    // some traffic: the next reads show it as operations and appends per second
    const load = (async () => { for (let i = 0; i < 40; i++) { await events.append({ n: i }); await new Promise((r) => setTimeout(r, 50)); } })();
    await page.waitForFunction(() => parseFloat(document.querySelector('.now[data-series="appends"]').textContent) > 0, null, WAIT);
    await load;
    const ops = await text(page, '.now[data-series="ops"]');
    check(parseFloat(ops) > 0, `operations/s shown: ${ops}`);
    await shot(page, '8-metrics');
  });

  let pageToken = null;
  await step('tokens: mint in the page (shown once, with a copy button), listed, revoked', async () => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.goto(`${base}/console#/w/${ws}/tokens`);
    await page.waitForSelector('#tokens tbody tr[data-token]', WAIT);
    await page.selectOption('#mint-tier', 'read_write');
    await page.fill('#mint-ttl', '600');
    await page.fill('#mint-client', 'minted-in-page');
    await page.click('#mint-form button[type=submit]');
    await page.waitForSelector('#minted-token', WAIT);
    const token = await page.$eval('#minted-token', (e) => e.value);
    check(token.split('.').length === 3, 'the minted token is shown');
    await page.click('#copy-token');
    await page.waitForFunction(() => document.getElementById('copy-token').textContent === 'Copied', null, WAIT);
    const copied = await page.evaluate(() => navigator.clipboard.readText().catch(() => null));
    check(copied === null || copied === token, 'the copy button copies the token');
    const id = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).jti;
    pageToken = { token, id };
    await page.waitForSelector(`#tokens tr[data-token="${id}"]`, WAIT);
    check((await text(page, `#tokens tr[data-token="${id}"]`)).includes('minted-in-page'), 'the new token is listed with its client id');
    check((await fetch(server.workspaceUrl(ws), { headers: { Authorization: `Bearer ${token}` } })).status === 200, 'the minted token works');
    await shot(page, '11-tokens');
    await page.click('#minted button:last-child');
    check(await page.$('#minted-token') === null, 'the token is shown once: gone after Done');
    check(!(await text(page, '#tokens')).includes(token), 'the list never shows a token\'s text');
    await page.click(`button[data-revoke="${id}"]`);
    await page.waitForFunction((i) => document.querySelector(`#tokens tr[data-token="${i}"]`)?.textContent.includes('revoked'), id, WAIT);
    check((await fetch(server.workspaceUrl(ws), { headers: { Authorization: `Bearer ${token}` } })).status === 401, 'the revoked token is refused');
  });

  const bigPath = path.join(os.tmpdir(), `console-upload-${process.pid}.bin`);
  const big = crypto.randomBytes(50 * 1024 * 1024);
  fs.writeFileSync(bigPath, big);
  const bigSha = crypto.createHash('sha256').update(big).digest('hex');
  await step('artifacts: a 50 MB upload shows progress and reads back byte-equal; folders, download, delete', async () => {
    await page.goto(`${base}/console#/w/${ws}/files/`);
    await page.waitForSelector('#upload-form', WAIT);
    await page.setInputFiles('#upload-file', bigPath);
    await page.fill('#upload-path', 'big/blob.bin');
    await page.click('#upload-form button[type=submit]');
    await page.waitForFunction(() => document.getElementById('upload-progress').value > 0 && !document.getElementById('upload-note').dataset.done, null, { timeout: 60_000 }).catch(() => {});
    await page.waitForSelector('#upload-note[data-done="big/blob.bin"]', { timeout: 150_000 });
    const progress = await page.evaluate(() => window.hyphaConsole.progress);
    check(progress.length >= 3 && progress.every((v, i) => i === 0 || v >= progress[i - 1]) && progress.at(-1) === big.length,
      `progress rose in steps to the size: ${progress.join(', ')}`);
    const back = Buffer.from(await (await fetch(`${server.workspaceUrl(ws)}/artifacts/files/big/blob.bin`, { headers: { Authorization: `Bearer ${server.root}` } })).arrayBuffer());
    check(back.length === big.length && crypto.createHash('sha256').update(back).digest('hex') === bigSha, `the server holds it byte-equal (${back.length} bytes)`);
    await page.waitForSelector('#files tr[data-folder="big/"]', WAIT);
    await shot(page, '12-artifacts');
    await page.click('#files tr[data-folder="big/"] a');
    await page.waitForSelector('#files tr[data-file="big/blob.bin"]', WAIT);
    const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.click('button[data-download="big/blob.bin"]')]);
    const got = fs.readFileSync(await dl.path());
    check(crypto.createHash('sha256').update(got).digest('hex') === bigSha, `the page's download is byte-equal (${got.length} bytes)`);
    await node.artifacts.put('big/small.txt', 'small');
    page.once('dialog', (d) => d.accept());
    await page.click('button[data-delete-file="big/blob.bin"]');
    await page.waitForSelector('#files tr[data-file="big/blob.bin"]', { state: 'detached', ...WAIT });
    check(await node.artifacts.head('big/blob.bin') === null, 'deleted on the server');
    check(await page.$('#files tr[data-file="big/small.txt"]') !== null, 'the other file stays');
  }, 240_000);
  fs.rmSync(bigPath, { force: true });

  await step('the audit trail lists what the test did, newest first', async () => {
    await page.goto(`${base}/console#/w/${ws}/audit`);
    await page.waitForSelector('#audit tr[data-action="artifact.delete"][data-target="big/blob.bin"]', WAIT);
    check(await page.$(`#audit tr[data-action="token.mint"][data-target="${pageToken?.id}"]`) !== null, 'the mint made in the page');
    check(await page.$(`#audit tr[data-action="token.revoke"][data-target="${pageToken?.id}"]`) !== null, 'the revocation made in the page');
    const firstRow = await page.$eval('#audit tbody tr', (e) => e.dataset.action);
    check(firstRow === 'artifact.delete', `newest first: ${firstRow}`);
    // the console's edits (its socket asks audit=writes): the append, the CAS and the incr made in the page
    const trail = (await server.http('GET', `/v1/workspaces/${ws}/audit?limit=1000`)).entries.map((e) => e.body);
    const edit = (action, target) => trail.find((b) => b.action === action && b.target === target && b.by.client_id === 'root');
    check(edit('log.append', 'log:events')?.via === 'socket', `the page's append is in the trail: ${JSON.stringify(edit('log.append', 'log:events'))}`);
    check(edit('doc.cas', 'doc:config') !== undefined && edit('doc.incr', 'doc:config')?.params?.path === '/count', 'the page\'s CAS and incr are in the trail');
    check(edit('log.truncate', 'log:trim')?.params?.before === 4 && edit('log.configure', 'log:trim')?.params?.retention?.max_entries === 5, 'the page\'s truncate and retention are in the trail');
    check(!trail.some((b) => b.by.client_id === 'node-app' && b.action.startsWith('log.append')), 'a client that did not ask for it has no data writes recorded');
    const refused = await fetch(`${server.workspaceUrl(ws)}/connect?audit=everything`, { headers: { Authorization: `Bearer ${server.root}` } });
    check(refused.status === 400 && (await refused.json()).message.includes('audit'), `a connect with audit=everything is 400: ${refused.status}`);
    await page.waitForSelector('#audit tr[data-action="log.append"]', WAIT).catch(() => {});
    const row = await text(page, '#audit tr[data-action="artifact.delete"]');
    check(row.includes('root') && row.includes('127.0.0.1'), `who and from where: ${row}`);
    await shot(page, '13-audit');
    await page.goto(`${base}/console#/audit`);
    await page.waitForSelector(`#audit tr[data-action="workspace.create"][data-target="${ws}"]`, WAIT);
    check(await page.$('#audit tr[data-action="workspace.delete"]') !== null, 'the root trail has the workspace deleted in the page');
    await shot(page, '14-root-audit');
  });

  await step('cluster: hidden for a single server; its page shows the server and every partition', async () => {
    check(await page.$('#nav-cluster') === null, 'no Cluster link outside cluster mode');
    await page.goto(`${base}/console#/cluster`);
    await page.waitForSelector('#servers tbody tr[data-node]', WAIT);
    const c = await server.http('GET', '/v1/cluster');
    check((await page.$$('#partitions tbody tr')).length === c.partition_count, `every partition listed (${c.partition_count})`);
    check((await text(page, '#cluster-state')).includes('single server'), 'says it is a single server');
    await shot(page, '15-cluster');
  });


  await step('a read token sees no write control; a write forged from the page is refused with forbidden', async () => {
    const rctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const rp = await open(rctx);
    await signIn(rp, readToken);
    await rp.waitForSelector('#objects tr[data-object="log:events"]', WAIT);
    check((await text(rp, '#my-tier')) === 'read', 'the page says read');
    check(await rp.$('#create-ws') === null && await rp.$('button[data-delete]') === null, 'no workspace create or delete');
    await rp.click('#objects a[href$="/log/events"]');
    await rp.waitForSelector('#entries tr[data-seq="1"]', WAIT);
    check(await rp.$('#append-form') === null && await rp.$('#log-admin') === null, 'a Log shows no append, truncate or retention');
    await shot(rp, '9-read-log');
    const forged = await rp.evaluate(async () => {
      await window.hyphaConsole.act('append', () => window.hyphaConsole.client.log('events').append({ forged: true }));
      const http = await fetch(`/v1/workspaces/${location.hash.split('/')[2]}`, {
        method: 'DELETE', headers: { Authorization: `Bearer ${sessionStorage.getItem('hypha.console.token')}` } });
      return { toast: document.getElementById('toast').textContent, kind: document.getElementById('toast').dataset.kind, http: http.status, code: (await http.json()).code };
    });
    check(forged.kind === 'error' && forged.toast.includes('forbidden'), `the forged append is shown as an error: ${forged.toast}`);
    check(forged.http === 403 && forged.code === 'forbidden', `a forged DELETE of the workspace: ${forged.http} ${forged.code}`);
    await shot(rp, '10-read-forged');
    const all = await events.read({ from: 1, limit: 100 });
    check(!all.entries.some((e) => e.body?.forged), 'nothing forged was written');
    await rp.goto(`${base}/console#/w/${ws}/doc/config`);
    await rp.waitForFunction(() => document.getElementById('doc-value')?.textContent.includes('count'), null, WAIT);
    check(await rp.$('#doc-edit') === null && await rp.$('#incr-form') === null, 'a Doc shows no editor and no incr');
    check(await rp.$('#ws-tabs a[data-tab="tokens"]') === null && await rp.$('#ws-tabs a[data-tab="audit"]') === null, 'no Tokens or Audit tab');
    await rp.goto(`${base}/console#/w/${ws}/files/big%2F`);
    await rp.waitForSelector('#files tr[data-file="big/small.txt"]', WAIT);
    check(await rp.$('#upload-form') === null && await rp.$('button[data-delete-file]') === null, 'artifacts: no upload, no delete');
    check(await rp.$('button[data-download="big/small.txt"]') !== null, 'artifacts: download is there');
    await shot(rp, '16-read-artifacts');
    const forged2 = await rp.evaluate(async (w) => {
      const t = sessionStorage.getItem('hypha.console.token');
      const put = await window.hyphaConsole.client.artifacts.put('forged.txt', 'x').then(() => 'stored', (e) => e.code);
      const del = await window.hyphaConsole.client.artifacts.delete('big/small.txt').then(() => 'deleted', (e) => e.code);
      const mint = await fetch(`/v1/workspaces/${w}/tokens`, { method: 'POST', headers: { Authorization: `Bearer ${t}`, 'Content-Type': 'application/json' }, body: '{"permission":"read"}' });
      const audit = await fetch(`/v1/workspaces/${w}/audit`, { headers: { Authorization: `Bearer ${t}` } });
      return { put, del, mint: mint.status, audit: audit.status };
    }, ws);
    check(forged2.put === 'forbidden' && forged2.del === 'forbidden' && forged2.mint === 403 && forged2.audit === 403,
      `forged upload, delete, mint and audit read are refused: ${JSON.stringify(forged2)}`);
    check(await node.artifacts.head('forged.txt') === null && await node.artifacts.head('big/small.txt') !== null, 'nothing forged changed the files');
    check((await (await fetch(server.workspaceUrl(ws), { headers: { Authorization: `Bearer ${readToken}` } })).json()).name === ws, 'the read token still works');
    await rctx.close();
  });

  await step('a link into a workspace asks for a token, then opens what it links to', async () => {
    const dctx = await browser.newContext();
    const dp = await open(dctx);
    await dp.goto(`${base}/console#/w/${ws}/log/events`);
    await dp.waitForSelector('#sign-in #token', WAIT);
    await dp.fill('#token', readToken);
    await dp.click('#sign-in button[type=submit]');
    await dp.waitForSelector('#entries tr[data-seq="1"]', WAIT);
    check(dp.url().endsWith(`#/w/${ws}/log/events`), `still at the link: ${dp.url()}`);
    await dctx.close();
  });

  await step('sign out forgets the token', async () => {
    await page.goto(`${base}/console#/`);
    await page.waitForSelector(`#workspaces tr[data-ws="${ws}"]`, WAIT);
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in', WAIT);
    check(await page.evaluate(() => sessionStorage.length === 0), 'sessionStorage is empty');
  });

  for (const p of pages) if (!p.isClosed()) await p.close();
} finally {
  await browser.close().catch(() => {});
  if (jvm) { jvm.stdin.end(); setTimeout(() => jvm.kill('SIGKILL'), 5000).unref(); }
  await node.close().catch(() => {});
  await server.close();
}

await step('console.enabled=false: no /console', async () => {
  const off = await TestServer.start({ args: ['--console.enabled=false'] });
  try {
    const r = await fetch(`${off.base}/console`);
    check(r.status === 404, `GET /console with console.enabled=false: ${r.status}`);
  } finally {
    await off.close();
  }
});

console.log(`  screenshots: ${shots}`);
console.log(`console browser test: ${passed} checks passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
