// Logs: append, appendAll, idempotent append, read pages both ways, info, subscribe as an async
// iterator with credit pacing, truncate, configure, delete.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HyphaClient } from '../../dist/index.js';
import { TestServer, until } from '../server.mjs';

let s, ws, c, admin;
before(async () => {
  s = await TestServer.start();
  ws = await s.workspace();
  c = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'writer' }));
  admin = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { permission: 'admin', clientId: 'adm' }));
});
after(async () => { await c.close(); await admin.close(); await s.close(); });

test('append, appendAll and read pages forward and backward', async () => {
  const log = c.log('chat');
  assert.equal(await log.append({ text: 'hi' }), 1);
  assert.deepEqual(await log.appendAll([1, 2, 3]), { first: 2, last: 4, duplicate: false });
  const page = await log.read({ from: 1, limit: 2 });
  assert.deepEqual(page.entries.map((e) => e.body), [{ text: 'hi' }, 1]);
  assert.equal(page.next, 3);
  assert.equal(page.last, 4);
  const back = await log.read({ before: 5, limit: 2 });
  assert.deepEqual(back.entries.map((e) => e.seq), [4, 3]);
  assert.equal(back.before, 3);
  const info = await log.info();
  assert.equal(info.first, 1);
  assert.equal(info.last, 4);
  assert.equal(info.entries, 4);
  assert.deepEqual(info.retention, { maxEntries: 0, maxAgeSeconds: 0 });
});

test('an idempotent append sent twice is written once', async () => {
  const log = c.log('idem');
  const a = await log.appendEx({ n: 1 }, { producer: 'p1', pseq: 7 });
  const b = await log.appendEx({ n: 1 }, { producer: 'p1', pseq: 7 });
  assert.equal(a.duplicate, false);
  assert.equal(b.duplicate, true);
  assert.equal(b.first, a.first);
  const batch = await log.appendAll([1, 2], { producer: 'p1', pseq: 8 });
  assert.deepEqual(await log.appendAll([1, 2], { producer: 'p1', pseq: 8 }), { ...batch, duplicate: true });
  assert.equal((await log.info()).entries, 3);
  await assert.rejects(log.append(1, { producer: 'p1', pseq: 2 }), (e) => e.code === 'conflict' && e.details.pseq === 8);
  await assert.rejects(log.append(1, { producer: 'p1' }), (e) => e.code === 'bad_request');
});

test('subscribe replays then follows live, as an async iterator, with no gap and no duplicate', async () => {
  const log = c.log('tail');
  await log.appendAll([1, 2, 3]);
  const sub = await log.subscribe({ since: 1 });
  const got = [];
  const reader = (async () => { for await (const e of sub) { got.push(e.seq); if (got.length === 5) break; } })();
  await log.append(4);
  await log.appendAll([5, 6]);
  await reader;
  assert.deepEqual(got, [2, 3, 4, 5, 6]);
  // the loop's break closed the subscription: a later entry goes nowhere
  await log.append(7);
  assert.equal((await sub.next()).done, true);
});

test('credit pacing: an application that does not read holds at most its credit', async () => {
  const log = c.log('paced');
  const bodies = Array.from({ length: 500 }, (_, i) => i);
  await log.appendAll(bodies);
  const sub = await log.subscribe({ since: 0, credit: 20 });
  await until(() => sub.buffer.length === 20, 5000, '20 entries buffered');
  await c.ping();
  assert.equal(sub.buffer.length, 20, 'the server stopped at the credit');
  const seen = [];
  for await (const e of sub) { seen.push(e.seq); if (seen.length === 500) break; }
  assert.deepEqual(seen, bodies.map((i) => i + 1));
});

test('subscribe without since follows only new entries', async () => {
  const log = c.log('fresh');
  await log.append('old');
  const sub = await log.subscribe();
  await log.append('new');
  const first = await sub.next();
  assert.equal(first.value.body, 'new');
  await sub.close();
});

test('truncate, the truncated event, configure and delete', async () => {
  const log = c.log('trim');
  await log.appendAll([1, 2, 3, 4, 5]);
  const sub = await log.subscribe({ since: 0, credit: 1 });
  const truncated = [];
  sub.onTruncated((from, to) => truncated.push([from, to]));
  await until(() => sub.buffer.length === 1, 5000, 'one entry buffered');
  assert.equal(await log.truncate(4), 4);
  assert.equal((await sub.next()).value.seq, 1);
  assert.equal((await sub.next()).value.seq, 4, 'delivery goes on after the truncated range');
  assert.deepEqual(truncated, [[2, 3]]);
  assert.deepEqual(await log.configure({ maxEntries: 2 }), { maxEntries: 2, maxAgeSeconds: 0 });
  await log.append(6);
  const info = await log.info();
  assert.equal(info.entries, 2);
  assert.equal(info.retention.maxEntries, 2);
  await assert.rejects(log.delete(), (e) => e.code === 'forbidden');
  const ended = sub.next().then(() => sub.next()).then(() => sub.next());
  assert.equal(await admin.log('trim').delete(), true);
  assert.equal((await ended).done, true, 'the subscription ends with the deleted Log');
  assert.equal((await log.info()).last, 0);
});

test('limits and bad input at the client edge', async () => {
  const log = c.log('edge');
  const big = 'x'.repeat(c.info.limits.maxFrameBytes + 10);
  await assert.rejects(log.append(big), (e) => e.code === 'too_large');
  await assert.rejects(log.append('x'.repeat(c.info.limits.maxEntryBytes + 10)), (e) => e.code === 'too_large');
  await assert.rejects(log.append(undefined), (e) => e.code === 'bad_request');
  await assert.rejects(log.appendAll([]), (e) => e.code === 'bad_request');
  await assert.rejects(log.appendAll(new Array(c.info.limits.maxBatch + 1).fill(0)), (e) => e.code === 'limit');
  await assert.rejects(log.read({ limit: 0 }), (e) => e.code === 'bad_request');
  await assert.rejects(log.read({ limit: 5000 }), (e) => e.code === 'limit');
  const cyc = {}; cyc.self = cyc;
  await assert.rejects(log.append(cyc), (e) => e.code === 'bad_request');
  assert.throws(() => c.log('no/slash'), (e) => e.code === 'bad_request');
  await assert.rejects(log.subscribe({ since: 99 }), (e) => e.code === 'conflict' && e.details.last === 0);
  assert.equal((await log.info()).last, 0, 'nothing was written');
});

test('5,000 appends at once: the client keeps the server in-flight window and all succeed', async () => {
  const log = c.log('many');
  const seqs = await Promise.all(Array.from({ length: 5000 }, (_, i) => log.append(i)));
  assert.equal(new Set(seqs).size, 5000);
  assert.equal(Math.max(...seqs), 5000);
});
