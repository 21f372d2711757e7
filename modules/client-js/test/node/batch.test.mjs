// Batches: all or nothing across Docs and Logs, preconditions, the failing operation's index, the key.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Batch, HyphaClient } from '../../dist/index.js';
import { TestServer } from '../server.mjs';

let s, ws, c;
before(async () => {
  s = await TestServer.start();
  ws = await s.workspace();
  c = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { permission: 'admin', clientId: 'ann' }));
});
after(async () => { await c.close(); await s.close(); });

test('a transfer lands whole, with each result, or not at all', async () => {
  const v = await c.doc('alice').put({ balance: 10 });
  const r = await c.batch(new Batch()
    .incr('alice', '/balance', -7, { floor: 0 }).expectVersion(v)
    .incr('bob', '/balance', 7)
    .append('transfers', { amount: 7 }).expectLast(0));
  assert.equal(r.duplicate, false);
  assert.deepEqual(r.results, [{ value: 3, version: 2 }, { value: 7, version: 1 }, { seq: 1 }]);
  await assert.rejects(c.batch(new Batch()
    .incr('bob', '/balance', 7)
    .incr('alice', '/balance', -7, { floor: 0 })
    .append('transfers', { amount: 7 })), (e) => e.code === 'floor' && e.details.op === 1);
  await assert.rejects(c.batch(new Batch().put('bob', 1).expectVersion(5)), (e) => e.code === 'conflict' && e.details.version === 1);
  assert.deepEqual((await c.doc('alice').get()).value, { balance: 3 });
  assert.deepEqual((await c.doc('bob').get()).value, { balance: 7 });
  assert.equal((await c.log('transfers').info()).last, 1);
});

test('a batch with a key is applied once, from any client; another batch with its key is a conflict', async () => {
  const other = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { permission: 'read_write', clientId: 'bob' }));
  const b = new Batch().incr('once', '/n', 1).appendAll('once-log', [1, 2]).key('k-1');
  const first = await c.batch(b);
  const again = await other.batch(b);
  assert.equal(first.duplicate, false);
  assert.equal(again.duplicate, true);
  assert.deepEqual(again.results[1], { seq: 1, last: 2 });
  assert.deepEqual((await c.doc('once').get()).value, { n: 1 });
  await assert.rejects(other.batch(new Batch().incr('once', '/n', 5).key('k-1')), (e) => e.code === 'conflict');
  await other.close();
});

test('bad batches are refused before sending', async () => {
  await assert.rejects(c.batch(new Batch()), (e) => e.code === 'bad_request');
  assert.throws(() => new Batch().expectVersion(1), (e) => e.code === 'bad_request');
  assert.throws(() => new Batch().append('l', 1).expectVersion(1), (e) => e.code === 'bad_request');
  assert.throws(() => new Batch().key('not a name'), (e) => e.code === 'bad_request');
});
