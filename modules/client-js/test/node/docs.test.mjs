// Docs: get, put, cas (conflict details), incr with floor, patch, subscribe kept current, delete.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HyphaClient } from '../../dist/index.js';
import { TestServer, until } from '../server.mjs';

let s, ws, c;
before(async () => {
  s = await TestServer.start();
  ws = await s.workspace();
  c = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { permission: 'admin', clientId: 'ann' }));
});
after(async () => { await c.close(); await s.close(); });

test('get, put, cas with conflict details, incr with a floor, patch', async () => {
  const d = c.doc('wallet');
  assert.deepEqual(await d.get(), { version: 0, value: null });
  assert.equal(await d.put({ balance: 10, owner: 'ann' }), 1);
  assert.deepEqual(await d.incr('/balance', -5, { floor: 0 }), { value: 5, version: 2 });
  await assert.rejects(d.incr('/balance', -8, { floor: 0 }), (e) => e.code === 'floor' && e.details.value === 5 && e.details.version === 2);
  await assert.rejects(d.cas(1, { balance: 0 }), (e) => e.code === 'conflict' && e.details.version === 2 && e.details.value.balance === 5);
  assert.equal(await d.cas(2, { balance: 0, tags: [] }), 3);
  assert.equal(await d.patch('/tags/-', 'b'), 4);
  assert.deepEqual(await d.get(), { version: 4, value: { balance: 0, tags: ['b'] } });
  assert.equal(await c.doc('fresh').cas(0, 1), 1, 'cas 0 creates');
  await assert.rejects(c.doc('fresh').cas(0, 2), (e) => e.code === 'conflict');
  assert.equal(await d.delete(), true);
  assert.deepEqual(await d.get(), { version: 0, value: null });
});

test('a subscription keeps value and version current and tells each change', async () => {
  const d = c.doc('live');
  await d.put({ n: 0, list: [] });
  const events = [];
  const sub = await d.subscribe((ev) => events.push(ev.op));
  assert.deepEqual(sub.value, { n: 0, list: [] });
  await d.incr('/n', 2);
  await d.patch('/list/-', 'a');
  await d.patch('/deep/x', true);
  await d.cas(4, { n: 9 });
  await until(() => sub.version === 5, 5000, 'version 5');
  assert.deepEqual(sub.value, { n: 9 });
  assert.deepEqual(events, ['incr', 'patch', 'patch', 'cas']);
  await d.put({ n: 1, list: [] });
  await d.incr('/n', 41);
  await d.patch('/list/-', 'z');
  await until(() => sub.version === 8, 5000, 'version 8');
  assert.deepEqual(sub.value, (await d.get()).value, 'events applied to the snapshot give the document');
  await sub.close();
});

test('incr is atomic: 200 concurrent increments from two clients add up', async () => {
  const other = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'bob' }));
  const d1 = c.doc('counter'), d2 = other.doc('counter');
  await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? d1 : d2).incr('', 1)));
  assert.deepEqual((await d1.get()).value, 200);
  await other.close();
});

test('bad input at the edge: bad pointer, non-finite numbers, undefined values', async () => {
  const d = c.doc('edge');
  await assert.rejects(d.incr('balance', 1), (e) => e.code === 'bad_request');
  await assert.rejects(d.incr('/a', Infinity), (e) => e.code === 'bad_request');
  await assert.rejects(d.incr('/a', 1, { floor: NaN }), (e) => e.code === 'bad_request');
  await assert.rejects(d.put(undefined), (e) => e.code === 'bad_request');
  await assert.rejects(d.cas(-1, 1), (e) => e.code === 'bad_request');
  await d.put('text');
  await assert.rejects(d.incr('', 1), (e) => e.code === 'bad_request', 'the server refuses incr on a string');
  assert.deepEqual(await d.get(), { version: 1, value: 'text' }, 'nothing changed');
});
