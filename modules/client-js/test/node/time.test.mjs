// Doc expiry (ttlMs, touch, the expired event) and schedules (at, everyMs, cron, list, cancel).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HyphaClient } from '../../dist/index.js';
import { TestServer, until } from '../server.mjs';

let s, ws, c;
before(async () => {
  s = await TestServer.start();
  ws = await s.workspace();
  c = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { permission: 'read_write', clientId: 'ann' }));
});
after(async () => { await c.close(); await s.close(); });

test('a Doc with ttlMs is there before its deadline, gone after it, and subscribers hear expired', async () => {
  const d = c.doc('session');
  const events = [];
  const sub = await d.subscribe((ev) => events.push(ev));
  const t0 = Date.now();
  assert.equal(await d.put({ user: 'ann' }, { ttlMs: 800 }), 1);
  const v = await d.get();
  assert.equal(v.version, 1);
  assert.ok(v.expiresAt >= t0 + 800 && v.expiresAt <= Date.now() + 800, `expiresAt ${v.expiresAt}`);
  await until(() => events.some((e) => e.op === 'expired'), 10000, 'the expired event');
  assert.deepEqual(await d.get(), { version: 0, value: null });
  assert.equal(sub.version, 0);
  assert.equal(sub.value, null);
  // the subscription goes on
  await d.put('again');
  await until(() => sub.version === 1, 10000, 'the write after expiry seen');
  await sub.close();
});

test('touch extends or removes the expiry; put without ttlMs removes it; a bad ttl is refused', async () => {
  const d = c.doc('lease');
  await d.put({ who: 'me' }, { ttlMs: 60000 });
  const at = await d.touch(120000);
  assert.ok(at > Date.now() + 100000);
  assert.equal((await d.get()).version, 1, 'touch keeps the version');
  assert.equal(await d.touch(0), undefined);
  assert.equal((await d.get()).expiresAt, undefined);
  await d.patch('/x', 1, { ttlMs: 5000 });
  assert.ok((await d.get()).expiresAt > Date.now());
  await d.put('plain');
  assert.equal((await d.get()).expiresAt, undefined);
  await assert.rejects(c.doc('never').touch(1000), (e) => e.code === 'not_found');
  await assert.rejects(d.put(1, { ttlMs: 0 }), (e) => e.code === 'bad_request');
});

test('schedules: every fires and cancel stops it; at fires once; list shows them; bad input refused', async () => {
  const sch = c.schedules();
  const info = await sch.schedule('beat', { everyMs: 200 }, { to: 'log:beats', op: 'append', body: { b: 1 } });
  assert.equal(info.name, 'beat');
  assert.equal(info.every_ms, 200);
  await until(async () => (await c.log('beats').info()).entries >= 3, 10000, 'three beats');
  assert.equal(await sch.cancel('beat'), true);
  const n = (await c.log('beats').info()).entries;
  await new Promise((r) => setTimeout(r, 600));
  assert.equal((await c.log('beats').info()).entries, n, 'nothing after cancel');

  await sch.schedule('once', { at: new Date(Date.now() + 300).toISOString() }, { to: 'doc:flag', op: 'put', value: true });
  assert.deepEqual((await sch.list()).map((x) => x.name), ['once']);
  await until(async () => (await c.doc('flag').get()).value === true, 10000, 'the at schedule fired');
  await until(async () => (await sch.list()).length === 0, 10000, 'the at schedule is gone');

  const cron = await sch.schedule('daily', { cron: '0 9 * * MON-FRI', tz: 'America/New_York' }, { to: 'doc:d', op: 'incr', path: '/n', delta: 1 });
  assert.ok(cron.next > Date.now());
  assert.equal(await sch.cancel('daily'), true);
  await assert.rejects(sch.schedule('bad', { cron: '0 25 * * *' }, { to: 'log:l', op: 'append', body: 1 }), (e) => e.code === 'bad_request');
  await assert.rejects(sch.schedule('del', { everyMs: 1000 }, { to: 'doc:d', op: 'delete' }), (e) => e.code === 'bad_request');
  assert.throws(() => sch.schedule('two', { everyMs: 1000, cron: '* * * * *' }, {}), (e) => e.code === 'bad_request');
});
