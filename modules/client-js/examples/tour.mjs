// A tour of the TypeScript client, run by test/node/tour.test.mjs against a real server; every
// region between "// js:NAME" and "// end:NAME" is a code block of docs/CLIENT-JS.md (the test
// compares them). Run it yourself: node examples/tour.mjs <workspace URL> <read_write token>
import { Batch, HyphaClient, HyphaError } from '../dist/index.js';

export async function tour(workspaceUrl, token, print = console.log) {
  // js:connect
  const client = await HyphaClient.connect(workspaceUrl, { token, requestTimeoutMs: 10_000 });
  print(`connected as ${client.info.client} (${client.info.permission}), round trip ${(await client.ping()).toFixed(1)} ms`);
  client.onState((state) => print(`state: ${state}`));
  // end:connect

  // js:logs
  const chat = client.log('chat');
  const seq = await chat.append({ text: 'hi' });                 // acknowledged after its commit
  await chat.appendAll([{ text: 'a' }, { text: 'b' }]);          // one batch, consecutive seqs
  await chat.append({ text: 'once' }, { producer: 'tab-1', pseq: 1 }); // idempotent: resent safely
  const page = await chat.read({ from: seq, limit: 10 });
  print(`read ${page.entries.length} entries, next from ${page.next}`);
  const entries = await chat.subscribe({ since: 0 });            // replay, then live
  for await (const entry of entries) {
    print(`entry ${entry.seq}: ${JSON.stringify(entry.body)}`);
    if (entry.seq === 4) break;                                  // leaving the loop unsubscribes
  }
  // end:logs

  // js:docs
  const wallet = client.doc('wallet');
  await wallet.put({ balance: 10 });
  const left = await wallet.incr('/balance', -5, { floor: 0 });  // never below 0
  print(`balance ${left.value} at version ${left.version}`);
  try {
    await wallet.cas(1, { balance: 100 });                       // version 1 is stale
  } catch (e) {
    if (!(e instanceof HyphaError) || e.code !== 'conflict') throw e;
    print(`conflict: the Doc is at version ${e.details.version}`);
  }
  const live = await wallet.subscribe((change) => print(`change ${change.op} -> version ${change.version}`));
  await wallet.patch('/owner', 'ann');
  // end:docs

  // js:rpc
  await client.register('calc', {
    add: (a, b) => a + b,
    whoAsks() { return this.from; },                             // `this` is the call's context
  });
  const sum = await client.call('calc', 'add', [1, 2], { timeoutMs: 5000 });
  print(`1 + 2 = ${sum}`);
  // end:rpc

  // js:presence
  await client.presence.set({ status: 'online' });               // heartbeats run by themselves
  const here = await client.presence.subscribe((ev) => print(`presence ${ev.type}: ${ev.member?.client}`));
  print(`here: ${[...here.members.keys()].join(', ')}`);
  // end:presence

  // js:artifacts
  const files = client.artifacts;
  await files.put('notes/hello.txt', 'hello', { contentType: 'text/plain' });
  print(`read back: ${await (await files.get('notes/hello.txt')).text()}`);
  const big = new Blob([new Uint8Array(6 * 1024 * 1024)]);
  const info = await files.upload('big/zeros.bin', big, {
    partSize: 5 * 1024 * 1024, parallel: 2, onProgress: (sent, total) => print(`uploaded ${sent} of ${total}`),
  });
  print(`stored ${info.path}: ${info.size} bytes, ETag ${info.etag}`);
  // end:artifacts

  await client.doc('wallet-alice').put({ balance: 10 }); // version 1
  await client.doc('wallet-bob').put({ balance: 0 });
  // js:batch
  const transferOnce = new Batch()
    .incr('wallet-alice', '/balance', -5, { floor: 0 }).expectVersion(1) // precondition on the Doc before the batch
    .incr('wallet-bob', '/balance', 5)
    .append('transfers', { from: 'alice', amount: 5 }).expectLast(0)     // precondition on the Log before the batch
    .key('transfer-8812');                                               // applied once, however often it is sent
  const r = await client.batch(transferOnce);
  print(`alice ${r.results[0].value}, transfer at seq ${r.results[2].seq}`); // each operation's own answer, in order
  print(`sent again: duplicate ${(await client.batch(transferOnce)).duplicate}`);
  // end:batch

  // js:errors
  try {
    await client.call('nobody', 'home');
  } catch (e) {
    if (e instanceof HyphaError) print(`${e.code}: ${e.message}`); // switch on code, never on message
  }
  // end:errors

  await live.close();
  await here.close();
  // js:close
  await client.close();
  // end:close
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const [url, token] = process.argv.slice(2);
  if (!url || !token) {
    console.error('usage: node examples/tour.mjs <workspace URL> <read_write token>');
    process.exit(2);
  }
  await tour(url, token);
}
