// RPC: register (a provider), call with timeout and AbortSignal, services(), errors through the server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HyphaClient, HyphaError } from '../../dist/index.js';
import { TestServer } from '../server.mjs';

let s, ws, alice, bob;
before(async () => {
  s = await TestServer.start();
  ws = await s.workspace();
  alice = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'alice' }));
  bob = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'bob', permission: 'read' }));
});
after(async () => { await alice.close(); await bob.close(); await s.close(); });

test('a call reaches the provider with its arguments and the caller gets the answer', async () => {
  const reg = await alice.register('calc', {
    add: (a, b) => a + b,
    who() { return this.from; },
    slow: () => new Promise((r) => setTimeout(() => r('late'), 3000)),
    fail: () => { throw new Error('boom'); },
    typed: () => { throw new HyphaError('not_found', 'no such user', { user: 'x' }); },
  });
  assert.equal(await bob.call('calc', 'add', [1, 2]), 3);
  assert.equal(await bob.call('calc', 'who'), 'bob');
  const list = await bob.services();
  const calc = list.find((x) => x.service === 'calc');
  assert.equal(calc.providers[0].client, 'alice');
  assert.deepEqual(calc.providers[0].methods.sort(), ['add', 'fail', 'slow', 'typed', 'who']);
  await assert.rejects(bob.call('calc', 'fail'), (e) => e.code === 'application' && /boom/.test(e.message));
  await assert.rejects(bob.call('calc', 'typed'), (e) => e.code === 'not_found' && e.details.user === 'x');
  await assert.rejects(bob.call('calc', 'nope'), (e) => e.code === 'not_found');
  await assert.rejects(bob.call('calc', 'slow', [], { timeoutMs: 300 }), (e) => e.code === 'timeout');
  const ac = new AbortController();
  const p = bob.call('calc', 'slow', [], { signal: ac.signal });
  ac.abort(new Error('user left'));
  await assert.rejects(p, /user left/);
  assert.equal(await reg.unregister(), true);
  await assert.rejects(bob.call('calc', 'add', [1, 2]), (e) => e.code === 'not_found');
});

test('a read token cannot register: forbidden', async () => {
  await assert.rejects(bob.register('x', { m: () => 1 }), (e) => e.code === 'forbidden');
});

test('many calls in flight are answered each to its own caller', async () => {
  await alice.register('echo', { echo: async (v) => v });
  const n = 2000;
  const got = await Promise.all(Array.from({ length: n }, (_, i) => bob.call('echo', 'echo', [i])));
  assert.deepEqual(got, Array.from({ length: n }, (_, i) => i));
});

test('bad input: names, non-JSON args, bad timeouts are bad_request and nothing is sent', async () => {
  await assert.rejects(bob.call('bad name', 'm'), (e) => e.code === 'bad_request');
  await assert.rejects(bob.call('calc', 'add', [1n]), (e) => e.code === 'bad_request');
  await assert.rejects(bob.call('calc', 'add', [], { timeoutMs: 0 }), (e) => e.code === 'bad_request');
  await assert.rejects(alice.register('x', { m: 5 }), (e) => e.code === 'bad_request');
});
