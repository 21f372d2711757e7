// Edges found by probing the client against CLIENT-JS.md and PROTOCOL.md: a credit over the
// server's cap, an unsubscribe caught by a restart, a subscription closed while it is restored,
// and a server that accepts connections and then says nothing.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { HyphaClient } from '../../dist/index.js';
import { TestServer, until } from '../server.mjs';

const servers = [];
after(async () => { for (const s of servers) { try { s.proc?.kill('SIGCONT'); } catch { /* gone */ } await s.close(); } });

async function server(opts) {
  const s = await TestServer.start(opts);
  servers.push(s);
  return s;
}

test('a subscription asking more credit than the server gives reads everything (it stalled at the cap)', async () => {
  const s = await server();
  const ws = await s.workspace();
  const c = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws));
  try {
    const max = c.info.limits.maxCredit;
    const total = max + 2000;
    const sub = await c.log('many').subscribe({ since: 0, credit: 2 * max + 5000 });
    for (let from = 0; from < total; from += 1000) {
      await c.log('many').appendAll(Array.from({ length: Math.min(1000, total - from) }, (_, i) => from + i));
    }
    let seen = 0;
    const reading = (async () => { for await (const e of sub) { seen = e.seq; if (seen === total) break; } })();
    await until(() => seen === total, 60_000, `all ${total} entries (read ${seen})`);
    await reading;
  } finally {
    await c.close();
  }
});

test('an unsubscribe caught by a restart is not sent on the next socket, where its id names another subscription', async () => {
  const s = await server();
  const ws = await s.workspace();
  const url = s.workspaceUrl(ws);
  const provider = await HyphaClient.connect(url, await s.mint(ws, { clientId: 'prov' }));
  const c = await HyphaClient.connect(url, await s.mint(ws, { clientId: 'subr' }));
  const states = [];
  c.onState((st) => states.push(st));
  try {
    await provider.register('slow', { wait: () => new Promise((r) => setTimeout(() => r('late'), 8000)) });
    const a = await c.log('A').subscribe();
    const b = await c.log('B').subscribe();
    const d = await c.log('C').subscribe();
    // a call keeps the drain busy, so that the unsubscribe below is held unanswered by the stopping server
    c.call('slow', 'wait', [], { timeoutMs: 20_000 }).catch(() => {});
    const stopping = s.stop();
    await new Promise((r) => setTimeout(r, 300));
    const closing = a.close();
    await stopping;
    await s.launch();
    await closing;
    await until(() => states.at(-1) === 'restored', 30_000, 'restored after the restart');
    const w = await HyphaClient.connect(url, await s.mint(ws, { clientId: 'w' }));
    try {
      await w.log('B').append('to-B');
      await w.log('C').append('to-C');
    } finally {
      await w.close();
    }
    const take = (sub) => Promise.race([sub.next().then((r) => r.value?.body), new Promise((r) => setTimeout(() => r('(nothing within 10 s)'), 10_000))]);
    assert.deepEqual(await Promise.all([take(b), take(d)]), ['to-B', 'to-C'], 'both restored subscriptions still live');
  } finally {
    await c.close();
    await provider.close();
  }
});

test('a subscription closed while it is restored stays closed', async () => {
  const s = await server();
  const ws = await s.workspace();
  const url = s.workspaceUrl(ws);
  const c = await HyphaClient.connect(url, await s.mint(ws, { clientId: 'subr' }));
  try {
    const events = [];
    const doc = await c.doc('d').subscribe((ev) => events.push(ev.op));
    const log = await c.log('l').subscribe();
    let closedAt = -1;
    c.onState((st) => {
      // as soon as the new socket says hello, before the restore's answers: close both
      if (st === 'connected' && closedAt < 0) setTimeout(() => { closedAt = events.length; doc.close(); log.close(); }, 0);
    });
    await s.restart();
    await until(() => closedAt >= 0, 30_000, 'the subscriptions closed after the reconnect');
    await new Promise((r) => setTimeout(r, 500)); // let the restore's answers arrive (they did, and bound again)
    const w = await HyphaClient.connect(url, await s.mint(ws, { clientId: 'w' }));
    try {
      await w.doc('d').put(1);
      await w.log('l').append('after');
    } finally {
      await w.close();
    }
    const done = await Promise.race([log.next().then((r) => r.done), new Promise((r) => setTimeout(() => r('an entry came'), 3000))]);
    assert.equal(done, true, 'the closed Log subscription ends and gets nothing');
    assert.equal(events.length, closedAt, `the closed Doc subscription got ${JSON.stringify(events.slice(closedAt))}`);
  } finally {
    await c.close();
  }
});

test('a server that accepts and then says nothing is given up after connectTimeoutMs for the next one', async () => {
  const token = 'edges-root-token-0123456789';
  const a = await server({ args: [`--root-token=${token}`] });
  const b = await server({ args: [`--root-token=${token}`] });
  for (const s of [a, b]) await s.http('POST', '/v1/workspaces', { name: 'shared' }, token);
  const c = await HyphaClient.connect([a.workspaceUrl('shared'), b.workspaceUrl('shared')], { token, connectTimeoutMs: 4000 });
  // the one it is on (the first, unless that took longer than an attempt may on a loaded machine) freezes
  const [frozen, other] = c.info.server === a.workspaceUrl('shared') ? [a, b] : [b, a];
  try {
    frozen.proc.kill('SIGSTOP');
    // a read in flight makes the silence watch take the frozen socket for dead; it is sent again
    const read = c.log('x').info({ waitForReconnect: true, timeoutMs: 90_000 });
    await until(() => c.info?.server === other.workspaceUrl('shared'), 60_000, 'on the other server');
    assert.equal((await read).last, 0);
  } finally {
    frozen.proc.kill('SIGCONT');
    await c.close();
  }
});

test('a client that only subscribes notices a frozen server (it stayed connected, silent, for good)', async () => {
  const s = await server({ args: ['--ws.ping-interval=1s'] });
  const ws = await s.workspace();
  const c = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws));
  const states = [];
  c.onState((st) => states.push(st));
  try {
    assert.equal(c.info.limits !== undefined, true);
    await c.log('l').subscribe();
    // idle with a live server: no reconnect (the server's pings, or the client's own when it cannot see them)
    await new Promise((r) => setTimeout(r, 5000)); // an interval to observe, not a wait for a condition
    assert.deepEqual(states, [], 'an idle client of a live server stays connected');
    s.proc.kill('SIGSTOP');
    await until(() => states.includes('reconnecting'), 30_000, 'the frozen server noticed');
  } finally {
    s.proc.kill('SIGCONT');
    await c.close();
  }
});
