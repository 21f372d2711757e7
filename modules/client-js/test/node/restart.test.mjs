// A graceful restart (SIGTERM, then the server started again on its port and data): the server
// drains and closes with 1012; the client comes back soon, resends what had no answer (it was not
// applied) and lets requests made meanwhile wait, so no request fails, none is lost or repeated,
// plain appends included, and a subscription sees every seq once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HyphaClient } from '../../dist/index.js';
import { TestServer, until } from '../server.mjs';

let s;
before(async () => { s = await TestServer.start(); });
after(() => s.close());

test('a restart under load: 0 failed requests, 0 lost, 0 duplicates', async () => {
  const ws = await s.workspace();
  const url = s.workspaceUrl(ws);
  const writer = await HyphaClient.connect(url, await s.mint(ws, { clientId: 'w' }));
  const reader = await HyphaClient.connect(url, await s.mint(ws, { clientId: 'r' }));
  const closes = [];
  writer.onState((st, d) => { if (st === 'reconnecting') closes.push(d?.code); });
  const seen = [];
  const sub = await reader.log('roll').subscribe({ since: 0 });
  (async () => { for await (const e of sub) seen.push(e.seq); })();
  try {
  const acked = [];
  const failures = [];
  let go = true;
  const workers = Array.from({ length: 4 }, async () => {
    while (go) {
      try {
        acked.push(await writer.log('roll').append({}));
        await writer.doc('n').incr('', 1);
      } catch (e) { failures.push(e); }
    }
  });
  await until(() => acked.length > 200, 20_000, '200 appends');
  await s.stop();
  await s.launch();
  const atRestart = acked.length;
  await until(() => acked.length > atRestart + 200, 30_000, '200 more appends after the restart');
  go = false;
  await Promise.all(workers);
  assert.deepEqual(failures.map(String), [], 'no request failed');
  assert.deepEqual(closes, [1012], 'one 1012 close');
  assert.equal((await writer.log('roll').info()).last, acked.length, 'every acked append is there, nothing else');
  assert.equal(new Set(acked).size, acked.length);
  assert.equal((await writer.doc('n').get()).value, acked.length, 'each incr applied once');
  await until(() => seen.length === acked.length, 10_000, 'the subscriber has all');
  assert.ok(seen.every((q, i) => q === i + 1), '0 gaps, 0 duplicates');
  } finally {
    // closed also when an assertion failed: a client left open keeps reconnecting and the file never ends
    await writer.close();
    await reader.close();
  }
});
