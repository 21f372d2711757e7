// The order of events that stored a plain append twice at a restart (restart.test.mjs under load):
// an answer and the server's 1012 close frame arrive in one read, so the request that the answer's
// continuation puts is still waiting to be written when the socket is already closing; when the
// close event comes, that request goes again on the next socket (the 1012 says it was not applied)
// and must go once. The socket here is scripted (the client's `WebSocket` option) because the
// interleaving is a matter of one read; restart.test.mjs shows the same against the real server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HyphaClient } from '../../dist/index.js';

/** A WebSocket whose server side the test plays; every instance is kept in `sockets`. */
function scriptedWebSocket(sockets) {
  return class ScriptedSocket {
    constructor(url) {
      this.url = url;
      this.readyState = 0;
      this.sent = [];
      this.onopen = null;
      this.onmessage = null;
      this.onclose = null;
      this.onerror = null;
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
    }
    close() { this.readyState = 3; }
    receive(frame) { this.onmessage?.({ data: JSON.stringify(frame) }); }
    /** The frames this socket carried to the server. */
    frames() { return this.sent.flatMap((m) => { const v = JSON.parse(m); return Array.isArray(v) ? v : [v]; }); }
  };
}

const tick = () => new Promise((r) => setImmediate(r));

test('a request put while the 1012 close frame is being read goes once on the next socket', async () => {
  const sockets = [];
  const c = await HyphaClient.connect('http://127.0.0.1:1/v1/workspaces/w', { token: 't', WebSocket: scriptedWebSocket(sockets) });
  try {
    const log = c.log('roll');
    const first = log.append({ n: 1 });
    await tick();
    const s1 = sockets[0];
    const a1 = s1.frames().find((f) => f.op === 'append');
    assert.ok(a1, 'the first append went on the first socket');
    let second = null;
    // one read: the answer (whose continuation appends again), then the close frame (the socket is
    // closing from here on, so nothing more is written to it)
    s1.receive({ re: a1.id, ok: { seq: 1 } });
    first.then(() => { second = log.append({ n: 2 }); });
    s1.readyState = 2;
    await tick();
    assert.equal(await first, 1);
    assert.ok(second, 'the second append was made');
    assert.equal(s1.frames().filter((f) => f.op === 'append').length, 1, 'nothing written to the closing socket');
    s1.readyState = 3;
    s1.onclose?.({ code: 1012, reason: 'server restarting' });
    const deadline = Date.now() + 5000;
    while (sockets.length < 2 || sockets[1].readyState !== 1) {
      assert.ok(Date.now() < deadline, 'the client came back within 5 s');
      await new Promise((r) => setTimeout(r, 10));
    }
    await tick();
    const s2 = sockets[1];
    const appends = s2.frames().filter((f) => f.op === 'append');
    assert.equal(appends.length, 1, `the second append goes once on the new socket: ${JSON.stringify(appends)}`);
    assert.deepEqual(appends[0].body, { n: 2 });
    s2.receive({ re: appends[0].id, ok: { seq: 2 } });
    assert.equal(await second, 2);
  } finally {
    await c.close();
  }
});
