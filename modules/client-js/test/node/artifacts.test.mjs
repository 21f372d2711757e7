// Artifacts: put (Blob, ReadableStream, Uint8Array, string), get (stream, Range), head, list pages,
// delete, multipart through the presigned URLs with parallel parts and progress.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { HyphaClient } from '../../dist/index.js';
import { TestServer } from '../server.mjs';

let s, ws, c, reader;
before(async () => {
  s = await TestServer.start();
  ws = await s.workspace();
  c = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'up' }));
  reader = await HyphaClient.connect(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'ro', permission: 'read' }));
});
after(async () => { await c.close(); await reader.close(); await s.close(); });

const md5 = (b) => crypto.createHash('md5').update(b).digest('hex');

test('put from a Uint8Array, a Blob, a string and a ReadableStream; get, head, delete', async () => {
  const a = c.artifacts;
  const bytes = crypto.randomBytes(100_000);
  const i1 = await a.put('bin/u8.bin', new Uint8Array(bytes));
  assert.equal(i1.size, 100_000);
  assert.equal(i1.etag, md5(bytes));
  const i2 = await a.put('bin/blob.txt', new Blob(['hello'], { type: 'text/plain' }));
  assert.equal(i2.contentType, 'text/plain');
  await a.put('bin/s.txt', 'héllo');
  const stream = new ReadableStream({
    start(ctl) { ctl.enqueue(new Uint8Array([1, 2, 3])); ctl.enqueue(new Uint8Array([4, 5])); ctl.close(); },
  });
  const i4 = await a.put('bin/stream.bin', stream);
  assert.equal(i4.size, 5);
  const whole = await a.get('bin/u8.bin');
  assert.equal(whole.status, 200);
  assert.ok(Buffer.from(await whole.bytes()).equals(bytes));
  assert.equal(await (await a.get('bin/s.txt')).text(), 'héllo');
  const part = await a.get('bin/u8.bin', { range: { start: 10, end: 19 } });
  assert.equal(part.status, 206);
  assert.equal(part.contentRange, 'bytes 10-19/100000');
  assert.ok(Buffer.from(await part.bytes()).equals(bytes.subarray(10, 20)));
  const tail = await a.get('bin/u8.bin', { range: { suffix: 5 } });
  assert.ok(Buffer.from(await tail.bytes()).equals(bytes.subarray(99_995)));
  // the body as a stream
  const r = (await a.get('bin/stream.bin')).body.getReader();
  const chunks = [];
  for (let x = await r.read(); !x.done; x = await r.read()) chunks.push(...x.value);
  assert.deepEqual(chunks, [1, 2, 3, 4, 5]);
  const h = await a.head('bin/u8.bin');
  assert.equal(h.size, 100_000);
  assert.equal(h.etag, md5(bytes));
  assert.equal(h.lastModified.getTime(), i1.lastModified.getTime(), 'head gives the instant put gave');
  assert.equal(await a.head('bin/none'), null);
  await assert.rejects(a.get('bin/u8.bin', { range: { start: 200_000 } }), (e) => e.code === 'bad_range');
  assert.equal(await a.delete('bin/s.txt'), true);
  assert.equal(await a.delete('bin/s.txt'), false);
  await assert.rejects(a.get('bin/s.txt'), (e) => e.code === 'not_found');
});

test('list pages in path order; listAll follows the cursor', async () => {
  for (let i = 0; i < 5; i++) await c.artifacts.put(`logs/day-${i}.txt`, String(i));
  const p1 = await reader.artifacts.list({ prefix: 'logs/', limit: 2 });
  assert.deepEqual(p1.files.map((f) => f.path), ['logs/day-0.txt', 'logs/day-1.txt']);
  assert.ok(p1.nextCursor);
  const p2 = await reader.artifacts.list({ prefix: 'logs/', limit: 2, cursor: p1.nextCursor });
  assert.deepEqual(p2.files.map((f) => f.path), ['logs/day-2.txt', 'logs/day-3.txt']);
  const all = [];
  for await (const f of reader.artifacts.listAll('logs/', 2)) all.push(f.path);
  assert.equal(all.length, 5);
  await assert.rejects(reader.artifacts.put('logs/x', 'no'), (e) => e.code === 'forbidden');
});

test('multipart upload: parallel parts through the presigned URLs, progress, byte-equal read back', async () => {
  const size = 12 * 1024 * 1024 + 123;
  const bytes = crypto.randomBytes(size);
  const progress = [];
  const info = await c.artifacts.upload('big/file.bin', new Blob([bytes]), {
    partSize: 5 * 1024 * 1024, parallel: 3, onProgress: (sent, total) => progress.push([sent, total]),
  });
  assert.equal(info.size, size);
  assert.match(info.etag, /^[0-9a-f]{32}-3$/);
  assert.equal(progress.length, 3);
  assert.deepEqual(progress.at(-1), [size, size]);
  const back = Buffer.from(await (await c.artifacts.get('big/file.bin')).bytes());
  assert.ok(back.equals(bytes), 'byte-equal');
});

test('bad paths are refused by the client with bad_request, nothing sent', async () => {
  for (const p of ['', '/abs', 'a//b', 'a/../b', 'a/./b', 'end/', 'back\\slash', 'ctl\u0001', 'e\u0301', 'x_$folder$']) {
    await assert.rejects(c.artifacts.put(p, 'x'), (e) => e.code === 'bad_request', JSON.stringify(p));
  }
  await assert.rejects(c.artifacts.list({ prefix: '../' }), (e) => e.code === 'bad_request');
  await assert.rejects(c.artifacts.put('ok.txt', 42), (e) => e.code === 'bad_request');
  assert.equal((await c.artifacts.list({ prefix: 'ok' })).files.length, 0);
});
