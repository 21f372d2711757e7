// Unit tests of the client's parts: framing, the in-flight window, backoff, credit pacing, the
// artifact path rule, errors, JSON Pointer application.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pack, unpack, utf8Length, MAX_FRAMES } from '../../dist/framing.js';
import { InFlightWindow } from '../../dist/window.js';
import { Backoff } from '../../dist/backoff.js';
import { CreditGate } from '../../dist/credit.js';
import { checkArtifactPath, encodePath } from '../../dist/paths.js';
import { HyphaError, ERROR_CODES } from '../../dist/errors.js';
import { setAt } from '../../dist/doc.js';
import { workspaceBase } from '../../dist/client.js';

test('framing: one frame leaves as an object, several as one array, split at 512 frames or 256 KiB', () => {
  assert.deepEqual(pack(['{"id":1}']), ['{"id":1}']);
  assert.deepEqual(pack(['{"id":1}', '{"id":2}']), ['[{"id":1},{"id":2}]']);
  const many = Array.from({ length: 1300 }, (_, i) => `{"id":${i}}`);
  const msgs = pack(many);
  assert.equal(msgs.length, 3);
  assert.equal(unpack(msgs[0]).length, MAX_FRAMES);
  assert.deepEqual(msgs.flatMap(unpack).map((f) => f.id), many.map((_, i) => i));
  const big = '"' + 'x'.repeat(100 * 1024) + '"';
  assert.equal(pack([big, big, big]).length, 2, 'about 256 KiB per message');
  assert.equal(pack(['"' + 'x'.repeat(300 * 1024) + '"']).length, 1, 'one large frame alone');
  assert.deepEqual(unpack('{"re":1}'), [{ re: 1 }]);
});

test('utf8Length counts UTF-8 bytes without encoding', () => {
  for (const s of ['', 'abc', 'héllo', '€', '😀', 'a\ud800b', 'x😀y€é']) {
    assert.equal(utf8Length(s), new TextEncoder().encode(s).length, s);
  }
});

test('in-flight window: at most limit on the wire, the rest in order, a bounded queue', () => {
  const w = new InFlightWindow(2, 3);
  assert.equal(w.offer('a'), 'send');
  assert.equal(w.offer('b'), 'send');
  assert.equal(w.offer('c'), 'queued');
  assert.equal(w.offer('d'), 'queued');
  assert.equal(w.offer('e'), 'queued');
  assert.equal(w.offer('f'), 'full');
  assert.deepEqual(w.release(), ['c']);
  assert.equal(w.remove('d'), true);
  assert.deepEqual(w.release(), ['e']);
  assert.equal(w.onWire(), 2);
  w.limit = 5;
  assert.equal(w.offer('g'), 'send');
  assert.deepEqual(w.reset(), []);
  assert.equal(w.onWire(), 0);
});

test('backoff: first attempt within [0, min]; then [min/2, min(cap, min*2^n)], cap 250 ms in the first 3 s, 1 s until 30 s, max later', () => {
  const lo = new Backoff({ minMs: 100, maxMs: 5000 }, () => 0);
  const hi = new Backoff({ minMs: 100, maxMs: 5000 }, () => 0.999999);
  assert.equal(lo.delayMs(0, 0), 0);
  assert.equal(hi.delayMs(0, 0), 100);
  assert.equal(lo.delayMs(1, 0), 50);
  assert.equal(hi.delayMs(1, 0), 199);
  assert.equal(hi.delayMs(10, 1000), 249, 'capped at 250 ms in the first 3 s');
  assert.equal(hi.delayMs(10, 3000), 999, 'capped at 1 s from 3 s to 30 s');
  assert.equal(hi.delayMs(10, 31_000), 4999, 'max after 30 s');
  const r = new Backoff();
  for (let i = 0; i < 1000; i++) { const d = r.delayMs(3, 0); assert.ok(d >= 50 && d <= 250, String(d)); }
  for (let i = 0; i < 1000; i++) { const d = r.delayMs(3, 5000); assert.ok(d >= 50 && d <= 800, String(d)); }
});

test('credit: granted back half a window at a time; a resume starts with the window less what is buffered', () => {
  const g = new CreditGate(10);
  const grants = [];
  for (let i = 0; i < 12; i++) grants.push(g.taken());
  assert.deepEqual(grants, [0, 0, 0, 0, 5, 0, 0, 0, 0, 5, 0, 0]);
  assert.equal(g.resume(3), 7);
  assert.equal(g.resume(12), 0);
  assert.equal(g.taken(), 0, 'owed starts over after a resume');
});

test('artifact paths: the server rule, applied by the client', () => {
  for (const ok of ['a', 'a/b.txt', 'é/ü', 'x'.repeat(255), '.hidden/x', 'a..b']) assert.equal(checkArtifactPath(ok), ok);
  for (const bad of ['', '/a', 'a/', 'a//b', 'a/./b', '../a', 'a\\b', 'a\u0000', 'e\u0301', 'x_$folder$', 'x'.repeat(256), 'a/\ud800']) {
    assert.throws(() => checkArtifactPath(bad), (e) => e.code === 'bad_request', JSON.stringify(bad));
  }
  for (const ok of ['', 'logs/', 'logs/da', 'a/.']) assert.equal(checkArtifactPath(ok, true), ok);
  for (const bad of ['/x', 'a//b', 'a/..', '../']) assert.throws(() => checkArtifactPath(bad, true), (e) => e.code === 'bad_request', bad);
  assert.equal(encodePath('a b/c?d#e/%'), 'a%20b/c%3Fd%23e/%25');
});

test('errors: wire objects become HyphaError; an unknown code is internal; every code is known', () => {
  const e = HyphaError.fromWire({ code: 'conflict', message: 'version is 2, not 1', version: 2, value: { a: 1 } });
  assert.equal(e.code, 'conflict');
  assert.deepEqual(e.details, { version: 2, value: { a: 1 } });
  assert.equal(HyphaError.fromWire({ code: 'weird', message: 'm' }).code, 'internal');
  assert.equal(HyphaError.fromWire('nope').code, 'internal');
  assert.deepEqual(new HyphaError('floor', 'm', { value: 5 }).toWire(), { value: 5, code: 'floor', message: 'm' });
  assert.equal(ERROR_CODES.length, 16); // gone (restore and fork) is the 16th
  // rate_limited carries how long to wait; the client surfaces it as retryAfterMs
  const limited = HyphaError.fromWire({ code: 'rate_limited', message: 'slow down', retry_after_ms: 250, limit: 'socket.ops' });
  assert.equal(limited.code, 'rate_limited');
  assert.equal(limited.retryAfterMs, 250);
  assert.equal(limited.details.limit, 'socket.ops');
  assert.equal(e.retryAfterMs, null);
});

test('retry_after_ms: read from a 1013 reason, waited for with jitter of a quarter (at least 50 ms)', async () => {
  const { retryAfterFromReason, withJitter } = await import('../../dist/close.js');
  assert.equal(retryAfterFromReason('too many sockets on this workspace; retry_after_ms=1000'), 1000);
  assert.equal(retryAfterFromReason('workspace is moving to another server; reconnect'), null);
  assert.equal(withJitter(1000, () => 0), 1000);
  assert.equal(withJitter(1000, () => 0.999999), 1250);
  assert.equal(withJitter(0, () => 0.999999), 50);
  assert.equal(withJitter(10_000_000, () => 0), 60_000, 'capped');
});

test('JSON Pointer application mirrors the server: members created, "-" appends, ~0 ~1 decoded', () => {
  assert.deepEqual(setAt({ a: 1 }, '/b/c', 2), { a: 1, b: { c: 2 } });
  assert.deepEqual(setAt({ l: [1] }, '/l/-', 2), { l: [1, 2] });
  assert.deepEqual(setAt({ l: [1, 2] }, '/l/0', 9), { l: [9, 2] });
  assert.deepEqual(setAt({}, '/a~1b/~0c', 1), { 'a/b': { '~c': 1 } });
  assert.equal(setAt({ a: 1 }, '', 5), 5);
  const orig = { a: { b: 1 } };
  setAt(orig, '/a/b', 2);
  assert.equal(orig.a.b, 1, 'the original is not changed');
});

test('workspace URLs: http, https, ws, wss, with or without /connect', () => {
  assert.equal(workspaceBase('http://h:1/v1/workspaces/demo'), 'http://h:1/v1/workspaces/demo');
  assert.equal(workspaceBase('wss://h/v1/workspaces/demo/connect'), 'https://h/v1/workspaces/demo');
  assert.equal(workspaceBase('ws://h:2/p/v1/workspaces/demo/'), 'http://h:2/p/v1/workspaces/demo');
  assert.throws(() => workspaceBase('http://h/v1/workspaces'), (e) => e.code === 'bad_request');
});
