// An `unavailable` answer with `not_applied: true` (the object or workspace was moving or reloading,
// the server shutting down) means the request did not run: the client sends it again, a plain append
// included, after a short jittered pause and within its timeout; an `unavailable` without it, or a
// timeout shorter than the pause, reaches the caller. The socket is scripted (the client's `WebSocket`
// option); the cluster roll in the Java suite (ClusterUpgradeTest) meets these answers for real.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HyphaClient } from '../../dist/index.js';

/** A WebSocket whose server side is `answer(frame, socket)`; every instance is kept in `sockets`. */
function scriptedWebSocket(sockets, answer) {
  return class ScriptedSocket {
    constructor(url) {
      this.url = url;
      this.readyState = 0;
      this.sent = [];
      sockets.push(this);
      setTimeout(() => {
        this.readyState = 1;
        this.onopen?.();
        this.receive({ hello: { protocol: 1, session: sockets.length, workspace: 'w', client: 'c', permission: 'read_write', limits: {} } });
      }, 0);
    }
    send(m) {
      if (this.readyState !== 1) throw new Error('send on a socket that is not open');
      this.sent.push(m);
      const v = JSON.parse(m);
      for (const f of Array.isArray(v) ? v : [v]) {
        const a = answer(f);
        if (a) setTimeout(() => this.receive(a), 0);
      }
    }
    close() { this.readyState = 3; }
    receive(frame) { this.onmessage?.({ data: JSON.stringify(frame) }); }
    frames() { return this.sent.flatMap((m) => { const v = JSON.parse(m); return Array.isArray(v) ? v : [v]; }); }
  };
}

const notApplied = (id) => ({ re: id, err: { code: 'unavailable', message: 'object is reloading after a failed commit; retry', not_applied: true } });

test('a not_applied answer is sent again within the timeout; other unavailable answers are not', async () => {
  const sockets = [];
  let refusals = 2;
  let seq = 0;
  const answer = (f) => {
    if (f.op === 'append') return refusals-- > 0 ? notApplied(f.id) : { re: f.id, ok: { seq: ++seq } };
    if (f.op === 'incr') return { re: f.id, err: { code: 'unavailable', message: 'down' } };
    return null;
  };
  const c = await HyphaClient.connect('http://127.0.0.1:1/v1/workspaces/w', { token: 't', WebSocket: scriptedWebSocket(sockets, answer) });
  try {
    assert.equal(await c.log('l').append({ n: 1 }), 1, 'a plain append answered after two not_applied refusals');
    const appends = sockets[0].frames().filter((f) => f.op === 'append');
    assert.equal(appends.length, 3, 'it went three times');
    assert.equal(new Set(appends.map((f) => JSON.stringify({ ...f, id: 0 }))).size, 1, 'the same request each time');

    await assert.rejects(c.doc('d').incr('/n', 1), (e) => e.code === 'unavailable' && e.details.not_applied === undefined,
      'an unavailable without not_applied reaches the caller');

    refusals = 1_000_000;
    await assert.rejects(c.log('l').append({ n: 2 }, { timeoutMs: 20 }), (e) => e.code === 'unavailable' && e.details.not_applied === true,
      'a timeout shorter than the pause: the error itself');
  } finally {
    await c.close();
  }
});
