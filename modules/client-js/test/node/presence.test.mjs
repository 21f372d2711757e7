// Presence: set (join), update, heartbeat, list, the events present/stale/absent, leave.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HyphaClient } from '../../dist/index.js';
import { TestServer, until } from '../server.mjs';

let s, ws;
before(async () => {
  s = await TestServer.start({ args: ['--presence.stale-after=1s', '--presence.absent-after=2s', '--presence.sweep-interval=200ms'] });
  ws = await s.workspace();
});
after(() => s.close());

test('join, update, list, leave, seen by a watcher', async () => {
  const carol = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'carol' }));
  const bob = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'bob', permission: 'read' }));
  const events = [];
  const watch = await bob.presence.subscribe((ev) => events.push(`${ev.type}:${ev.member?.client}`));
  const me = await carol.presence.set({ status: 'online' });
  assert.equal(me.state, 'present');
  await carol.presence.set({ status: 'busy' });
  await until(() => watch.members.get('carol')?.meta.status === 'busy', 5000, 'busy seen');
  assert.deepEqual((await bob.presence.list()).map((m) => m.client), ['carol']);
  assert.equal(await carol.presence.leave(), true);
  await until(() => !watch.members.has('carol'), 5000, 'carol gone');
  assert.deepEqual(events, ['join:carol', 'update:carol', 'leave:carol']);
  await watch.close();
  await carol.close();
  await bob.close();
});

test('the client heartbeats by itself; a client that stops goes stale, then absent', async () => {
  const dave = await HyphaClient.connect(s.workspaceUrl(ws), { token: await s.mint(ws, { clientId: 'dave' }), heartbeatMs: 300 });
  const eve = await HyphaClient.connect(s.workspaceUrl(ws), { token: await s.mint(ws, { clientId: 'eve' }), heartbeatMs: 300 });
  const watcher = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'w', permission: 'read' }));
  const events = [];
  await watcher.presence.subscribe((ev) => events.push(`${ev.type}:${ev.member?.client}`));
  await dave.presence.set({});
  await eve.presence.set({});
  await until(() => events.includes('join:eve'), 5000, 'eve joined');
  await eve.close(); // stops heartbeating; the entry stays, then goes stale and absent
  await until(() => events.includes('leave:eve'), 10_000, 'eve swept');
  assert.ok(events.indexOf('stale:eve') > events.indexOf('join:eve') && events.indexOf('stale:eve') < events.indexOf('leave:eve'), events.join(' '));
  assert.ok(!events.includes('stale:dave'), `dave heartbeats: ${events.join(' ')}`);
  assert.deepEqual((await watcher.presence.list()).map((m) => m.client), ['dave']);
  await dave.close();
  await watcher.close();
});

test('a read token cannot set presence; meta is checked', async () => {
  const r = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'ro', permission: 'read' }));
  await assert.rejects(r.presence.set({}), (e) => e.code === 'forbidden');
  const w = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'big' }));
  await assert.rejects(w.presence.set({ x: 'y'.repeat(5000) }), (e) => e.code === 'too_large');
  await assert.rejects(w.presence.heartbeat(), (e) => e.code === 'not_found');
  await r.close();
  await w.close();
});
