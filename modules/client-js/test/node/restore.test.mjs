// Restore and fork of Docs and Logs: new versions/generations, undo, forks, subscribers told, gone.
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

test('a Doc restores to a version as a new version, is undone, forks, and subscribers are told', async () => {
  const d = c.doc('d');
  await d.put({ n: 1 });
  await d.put({ n: 2 });
  await d.put({ n: 3 });
  const events = [];
  const sub = await d.subscribe((ev) => events.push(ev));
  assert.deepEqual(await d.restore({ version: 1 }), { version: 4, fromVersion: 1 });
  assert.deepEqual(await d.get(), { version: 4, value: { n: 1 } });
  assert.deepEqual(await d.restore({ version: 3 }), { version: 5, fromVersion: 3 });
  assert.deepEqual(await d.restore({ at: new Date() }), { version: 6, fromVersion: 5 });
  await until(() => events.length === 3, 10_000, 'three restore events');
  assert.deepEqual(events.map((e) => e.op), ['restore', 'restore', 'restore']);
  assert.deepEqual(sub.value, { n: 3 });
  assert.deepEqual(await c.doc('copy').fork('d', { version: 2 }), { version: 1, fromVersion: 2 });
  assert.deepEqual((await c.doc('copy').get()).value, { n: 2 });
  await assert.rejects(d.restore({ version: 99 }), (e) => e.code === 'bad_request');
  await assert.rejects(c.doc('copy').fork('d', { version: 1 }), (e) => e.code === 'conflict');
  await sub.close();
});

test('a Log restores to a seq as a new generation, is undone, forks, and subscribers are told', async () => {
  const l = c.log('l');
  for (let i = 1; i <= 10; i++) await l.append({ i });
  const sub = await l.subscribe({ since: 10 });
  const told = [];
  sub.onRestored((r) => told.push(r));
  assert.deepEqual(await l.restore({ seq: 5 }), { first: 11, last: 15, from: 1, to: 5 });
  const got = [];
  for await (const e of sub) {
    got.push(e);
    if (got.length === 5) break;
  }
  assert.deepEqual(got.map((e) => [e.seq, e.body.i]), [[11, 1], [12, 2], [13, 3], [14, 4], [15, 5]]);
  assert.deepEqual(told, [{ first: 11, last: 15, from: 1, to: 5 }]);
  assert.deepEqual(await l.restore({ seq: 10 }), { first: 16, last: 25, from: 1, to: 10 });
  const page = await l.read({ from: 16 });
  assert.deepEqual(page.entries.map((e) => e.body.i), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.deepEqual(await c.log('f').fork('l', { seq: 15 }), { first: 1, last: 5, from: 11, to: 15 });
  await l.truncate(20);
  await assert.rejects(l.restore({ seq: 17 }), (e) => e.code === 'gone');
});
