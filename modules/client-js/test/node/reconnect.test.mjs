// Reconnect: a server killed (kill -9) and started again on its port; the client backs off with
// jitter, comes back, restores subscriptions from the last seq (0 gaps, 0 duplicates),
// registrations and presence; requests made meanwhile wait or fail fast as the caller chose;
// idempotent appends in flight are resent with the same producer/pseq; 4004 ends it for good.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HyphaClient, HyphaError } from '../../dist/index.js';
import { TestServer, until } from '../server.mjs';

let s, ws;
before(async () => {
  s = await TestServer.start();
  ws = await s.workspace();
});
after(() => s.close());

const opts = async (clientId, extra = {}) => ({ token: await s.mint(ws, { clientId }), backoff: { minMs: 50, maxMs: 500 }, ...extra });

test('after a kill -9 and restart: states in order, the subscription resumes with no gap and no duplicate, services and presence come back', async () => {
  const writer = await HyphaClient.connect(s.workspaceUrl(ws), await opts('writer', { waitForReconnect: true }));
  const sub = await HyphaClient.connect(s.workspaceUrl(ws), await opts('reader'));
  const states = [];
  sub.onState((st) => states.push(st));
  await sub.register('svc', { hello: () => 'back' });
  await sub.presence.set({ where: 'here' });
  const log = writer.log('events');
  const stream = await sub.log('events').subscribe({ since: 0, credit: 50 });
  const seen = [];
  const reading = (async () => { for await (const e of stream) { seen.push(e.seq); if (seen.length === 400) break; } })();
  for (let i = 0; i < 200; i++) await log.append(i, { producer: 'w', pseq: i });
  await until(() => seen.length >= 100, 10_000, '100 received');
  await s.restart();
  for (let i = 200; i < 400; i++) await log.append(i, { producer: 'w', pseq: i });
  await reading;
  assert.deepEqual(seen, Array.from({ length: 400 }, (_, i) => i + 1), '0 gaps, 0 duplicates');
  await until(() => states.includes('restored'), 10_000, 'restored');
  assert.deepEqual(states.slice(0, 3), ['reconnecting', 'connected', 'restored']);
  assert.equal(await writer.call('svc', 'hello'), 'back', 'the registration is back');
  const members = await writer.presence.list();
  assert.deepEqual(members.map((m) => [m.client, m.meta.where]), [['reader', 'here']], 'presence is back');
  await writer.close();
  await sub.close();
});

test('while reconnecting: a request that may wait waits for the new socket; one that may not fails at once with unavailable', async () => {
  const c = await HyphaClient.connect(s.workspaceUrl(ws), await opts('waiter', { backoff: { minMs: 300, maxMs: 1000 } }));
  await c.log('w').append(0);
  await s.kill();
  await until(() => c.connectionState === 'reconnecting', 5000, 'reconnecting');
  const t0 = Date.now();
  await assert.rejects(c.log('w').append(1), (e) => e instanceof HyphaError && e.code === 'unavailable' && /was not sent/.test(e.message));
  assert.ok(Date.now() - t0 < 200, 'at once');
  const waiting = c.log('w').append(2, { waitForReconnect: true, timeoutMs: 30_000 });
  await s.launch();
  assert.equal(await waiting, 2);
  await c.close();
});

test('requests in flight when the socket breaks: an idempotent append is resent with its pseq and written once; a plain one fails as outcome unknown', async () => {
  const c = await HyphaClient.connect(s.workspaceUrl(ws), await opts('cutter'));
  const log = c.log('cut');
  await log.append('first');
  const idem = log.append('idem', { producer: 'p', pseq: 1 });
  const plain = log.append('plain');
  const read = log.read({ from: 1 });
  await new Promise((r) => setTimeout(r, 0)); // the frames leave in this turn
  c.socket.terminate?.() ?? c.socket.close(); // the TCP connection is cut under the client
  const [i, p, r] = await Promise.allSettled([idem, plain, read]);
  assert.equal(i.status, 'fulfilled', String(i.reason));
  assert.equal(r.status, 'fulfilled', 'a read is resent');
  if (p.status === 'rejected') assert.match(p.reason.message, /outcome unknown/);
  const all = (await log.read({ from: 1 })).entries.map((e) => e.body);
  assert.equal(all.filter((b) => b === 'idem').length, 1, `written once: ${JSON.stringify(all)}`);
  await c.close();
});

test('the workspace deleted (4004): the client closes for good and tells onError', async () => {
  const name = await s.workspace('gone');
  const c = await HyphaClient.connect(s.workspaceUrl(name), { token: await s.mint(name, { clientId: 'x' }) });
  const errors = [];
  c.onError((e) => errors.push(e));
  const states = [];
  c.onState((st) => states.push(st));
  await s.http('DELETE', `/v1/workspaces/${name}`);
  await until(() => c.connectionState === 'closed', 10_000, 'closed');
  assert.deepEqual(states, ['closed']);
  assert.equal(errors[0]?.details.close_code, 4004);
  await assert.rejects(c.ping(), (e) => e.code === 'not_found');
});
