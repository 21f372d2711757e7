// connect: workspace URL + token, hello info, ping, state events, refusals with their codes, several URLs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HyphaClient, HyphaError } from '../../dist/index.js';
import { TestServer, until } from '../server.mjs';

let s, ws, token;
before(async () => {
  s = await TestServer.start();
  ws = await s.workspace();
  token = await s.mint(ws, { clientId: 'alice' });
});
after(() => s.close());

test('connect gives the hello: client id, permission, limits; ping measures the round trip', async () => {
  const c = await HyphaClient.connect(s.workspaceUrl(ws), token);
  try {
    assert.equal(c.info.workspace, ws);
    assert.equal(c.info.client, 'alice');
    assert.equal(c.info.permission, 'read_write');
    assert.ok(c.info.expiresAt > Date.now());
    assert.equal(c.info.limits.maxFrameBytes, 1114112);
    assert.equal(c.info.limits.maxInFlight, 1024);
    assert.ok(c.info.session > 0);
    const rtt = await c.ping();
    assert.ok(rtt >= 0 && rtt < 5000, `rtt ${rtt}`);
  } finally {
    await c.close();
  }
});

test('the token rides as ?access_token= and ws:// and /connect URLs are accepted too', async () => {
  const c = await HyphaClient.connect(`ws://127.0.0.1:${s.port}/v1/workspaces/${ws}/connect`, { token });
  assert.equal(c.info.workspace, ws);
  await c.close();
});

test('state events: connected on connect, closed after close()', async () => {
  const c = await HyphaClient.connect(s.workspaceUrl(ws), token);
  const states = [];
  c.onState((st) => states.push(st));
  assert.equal(c.connectionState, 'connected');
  await c.close();
  assert.deepEqual(states, ['closed']);
  await assert.rejects(c.ping(), (e) => e instanceof HyphaError && e.code === 'unavailable');
});

test('refusals carry the server code: unauthorized, forbidden, not_found', async () => {
  await assert.rejects(HyphaClient.connect(s.workspaceUrl(ws), 'not-a-token'),
    (e) => e instanceof HyphaError && e.code === 'unauthorized');
  const other = await s.workspace();
  await assert.rejects(HyphaClient.connect(s.workspaceUrl(other), token),
    (e) => e instanceof HyphaError && e.code === 'forbidden');
  await assert.rejects(HyphaClient.connect(s.workspaceUrl('nosuchws'), s.root),
    (e) => e instanceof HyphaError && e.code === 'not_found');
});

test('bad input at the edge is bad_request before anything is sent', async () => {
  await assert.rejects(HyphaClient.connect('ftp://x/v1/workspaces/a', token), (e) => e.code === 'bad_request');
  await assert.rejects(HyphaClient.connect('http://127.0.0.1:1/nope', token), (e) => e.code === 'bad_request');
  await assert.rejects(HyphaClient.connect(s.workspaceUrl('..x'), token), (e) => e.code === 'bad_request');
  await assert.rejects(HyphaClient.connect(s.workspaceUrl(ws), ''), (e) => e.code === 'bad_request');
});

test('several servers: a dead one is skipped and the next one serves', async () => {
  const dead = 'http://127.0.0.1:9/v1/workspaces/' + ws;
  const c = await HyphaClient.connect([dead, s.workspaceUrl(ws)], { token });
  assert.equal(c.info.server, s.workspaceUrl(ws));
  await c.close();
});

test('the root token connects as admin with client id root', async () => {
  const c = await HyphaClient.connect(s.workspaceUrl(ws), s.root);
  assert.equal(c.info.client, 'root');
  assert.equal(c.info.permission, 'admin');
  assert.equal(c.info.expiresAt, null);
  await c.close();
});

test('a token supplier renews the socket token with auth before expiry: the socket outlives its first token', async () => {
  let calls = 0;
  const supplier = async () => { calls++; return s.mint(ws, { clientId: 'renewer', ttlSeconds: 3 }); };
  const c = await HyphaClient.connect(s.workspaceUrl(ws), { token: supplier });
  const states = [];
  c.onState((st) => states.push(st));
  const firstExpiry = c.info.expiresAt;
  await until(() => Date.now() > firstExpiry + 1000, 10_000, 'past the first expiry');
  assert.ok(calls >= 2, `supplier calls ${calls}`);
  assert.ok(c.info && c.info.expiresAt > firstExpiry, 'a later expiry');
  await c.ping();
  assert.deepEqual(states, [], 'no reconnect: the same socket');
  await c.close();
});
