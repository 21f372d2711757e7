#!/usr/bin/env node
// The benchmark's TypeScript-client driver: `./hypha bench --client js` starts it under Node 20+
// against the server and workspace the Java harness already runs, and it measures the BENCH.md
// scenarios through @hyphamesh/client (modules/client-js/dist), the way the harness measures them
// through the JVM client (bench/src/main/java/io/hyphamesh/bench/Load.java): a warm-up recorded
// nowhere, then at most `max_ops` operations or `duration_ms`.
//
// Protocol (one JSON object per line; stdout carries nothing else, diagnostics go to stderr):
//   stdin, first line: the config {url, tokens: {role: token}, scenarios: [names to run], ...}
//   stdout {"type":"info","msg"}                     a line for the harness's progress output
//   stdout {"type":"begin","name","total"}           waits for one stdin line: the harness read its counters
//   stdout {"type":"mark","phase":"start"|"end"}     waits for one stdin line: the harness read the server's CPU
//   stdout {"type":"row","name",...}                 the figures: attempts, errors, elapsed_ns, latencies_ns
//                                                    (each successful operation, ns), client_cpu_us, fields, notes
//   stdout {"type":"done"}
// Every scenario is measured between its start and end marks, so the harness's server CPU per
// operation covers the same phase as the client's (process.cpuUsage(), this whole Node process).
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const { HyphaClient } = await import(path.join(here, '../../modules/client-js/dist/index.js'));

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]();

async function line() {
  const r = await input.next();
  if (r.done) {
    process.stderr.write('driver: the harness closed stdin; stopping\n');
    process.exit(3);
  }
  return r.value;
}

function send(o) {
  process.stdout.write(JSON.stringify(o) + '\n');
}

const info = (msg) => send({ type: 'info', msg });
const hr = () => process.hrtime.bigint();
const ns = (a, b) => Number(b - a);

async function mark(phase) {
  send({ type: 'mark', phase });
  await line();
}

function describe(e) {
  if (e == null) return String(e);
  const name = e.code ? `HyphaError(${e.code})` : e.name || 'Error';
  const m = String(e.message ?? e);
  return `${name}: ${m.length > 160 ? m.slice(0, 160) : m}`;
}

const cfg = JSON.parse(await line());
const URL_ = cfg.url;
const WARMUP_OPS = cfg.warmup_ops;
const WARMUP_MS = cfg.warmup_ms;
const MAX_OPS = cfg.max_ops;
const DURATION_MS = cfg.duration_ms;
const QUICK = cfg.quick === true;
const wanted = new Set(cfg.scenarios);
const TIMEOUT = { timeoutMs: 30_000 };
const WARM_NOTE = `warm-up of at least ${WARMUP_OPS} ops and ${WARMUP_MS} ms excluded (V8's JIT as the JVM's)`;
const DURABLE = 'durable: acknowledged after the group commit\'s fsync (storage.durable=true)';
const CLIENT_NOTE = `@hyphamesh/client under Node ${process.versions.node}`;

const clients = [];
async function connect(role, extra = {}) {
  const token = cfg.tokens[role];
  if (!token) throw new Error(`no token for role ${role}`);
  const c = await HyphaClient.connect(URL_, { token, requestTimeoutMs: 30_000, ...extra });
  clients.push(c);
  return c;
}

/** What a measured phase produced, as the harness's Load.Measured. */
class Sink {
  constructor() {
    this.latencies = [];
    this.attempts = 0;
    this.errors = 0;
    this.firstError = null;
    this.start();
  }
  start() {
    this.t0 = hr();
    this.cpu0 = process.cpuUsage();
  }
  ok(d) { this.latencies.push(d); }
  failed(e) {
    this.errors++;
    if (this.firstError === null) this.firstError = describe(e);
  }
  done() {
    this.elapsed = ns(this.t0, hr());
    const c = process.cpuUsage(this.cpu0);
    this.cpuUs = c.user + c.system;
    return this;
  }
}

/** One operation at a time: warm-up, then the measured phase between the marks. */
async function serial(warmup, maxOps, maxMs, op) {
  const warmEnd = warmup === 0 ? 0n : hr() + BigInt(WARMUP_MS) * 1_000_000n;
  for (let i = 0; i < warmup || hr() < warmEnd; i++) {
    try { await op(i); } catch { /* seen again in the measured phase */ }
  }
  await mark('start');
  const s = new Sink();
  const end = s.t0 + BigInt(maxMs) * 1_000_000n;
  for (let i = 0; i < maxOps && hr() < end; i++) {
    s.attempts++;
    const t0 = hr();
    try {
      await op(i);
      s.ok(ns(t0, hr()));
    } catch (e) {
      s.failed(e);
    }
  }
  s.done();
  await mark('end');
  return s;
}

/** `inFlight` operations outstanding at all times (closed loop) until maxOps or maxMs; resolves when all ended. */
function phase(inFlight, maxOps, maxMs, op, sink) {
  return new Promise((resolve) => {
    const end = hr() + BigInt(Math.round(maxMs)) * 1_000_000n;
    let started = 0;
    let outstanding = 0;
    let closed = false;
    const launch = () => {
      while (!closed && outstanding < inFlight) {
        if (started >= maxOps || hr() >= end) { closed = true; break; }
        const i = started++;
        outstanding++;
        if (sink) sink.attempts++;
        const t0 = hr();
        let p;
        try { p = op(i); } catch (e) { p = Promise.reject(e); }
        p.then(() => { if (sink) sink.ok(ns(t0, hr())); settle(); },
          (e) => { if (sink) sink.failed(e); settle(); });
      }
      if (closed && outstanding === 0) resolve();
    };
    const settle = () => { outstanding--; launch(); };
    launch();
  });
}

async function concurrent(inFlight, warmup, maxOps, maxMs, op) {
  if (warmup > 0) {
    const t0 = hr();
    await phase(inFlight, warmup, 60_000, op, null);
    const left = WARMUP_MS - ns(t0, hr()) / 1e6;
    if (left > 0) await phase(inFlight, Infinity, left, op, null);
  }
  await mark('start');
  const s = new Sink();
  await phase(inFlight, maxOps, maxMs, op, s);
  s.done();
  await mark('end');
  return s;
}

/** `workers` async loops, each one operation at a time, until maxOps were claimed in total or maxMs passed. */
async function workers(n, maxOps, maxMs, op, s) {
  let claimed = 0;
  const end = hr() + BigInt(maxMs) * 1_000_000n;
  const loop = async (w) => {
    for (let i; (i = claimed++) < maxOps && hr() < end;) {
      if (s) s.attempts++;
      const t0 = hr();
      try {
        await op(w, i);
        if (s) s.ok(ns(t0, hr()));
      } catch (e) {
        if (s) s.failed(e);
      }
    }
  };
  await Promise.all(Array.from({ length: n }, (_, w) => loop(w)));
}

/** Sends one row: the sink's figures (latencies per successful operation), extra fields and notes. */
function row(name, s, { fields = {}, notes = [], n, throughput, cpuPerOp = true } = {}) {
  const whole = process.cpuUsage(scenarioCpu0);
  send({
    type: 'row', name, attempts: n ?? s.attempts, errors: s.errors, elapsed_ns: s.elapsed,
    latencies_ns: s.latencies, first_error: s.firstError, client_cpu_us: s.cpuUs,
    throughput_per_s: throughput ?? null, cpu_per_op: cpuPerOp, scenario_client_cpu_us: whole.user + whole.system, fields,
    notes: [...notes, CLIENT_NOTE],
  });
}

let scenarioCpu0 = process.cpuUsage();

async function scenario(name, total, body) {
  if (!wanted.has(name)) return;
  send({ type: 'begin', name, total });
  await line();
  scenarioCpu0 = process.cpuUsage();
  try {
    await body();
  } catch (e) {
    process.stderr.write(`driver: ${name} failed: ${e?.stack ?? e}\n`);
    send({ type: 'row', name, failed: true, attempts: Math.max(1, total), errors: Math.max(1, total), notes: [`scenario failed: ${describe(e)}`, CLIENT_NOTE] });
  }
}

const any = (...prefixes) => [...wanted].some((n) => prefixes.some((p) => n.startsWith(p)));
const hex = () => Math.random().toString(16).slice(2, 8);

// ------------------------------------------------------------------ warm-up of V8 (and this client's paths)

async function warmV8() {
  const provider = await connect('warm-provider');
  await provider.register('bench-js-warm', { noop: () => null, echo: (s) => s });
  const c = await connect('warm');
  const log = c.log('bench-js-warm');
  const doc = c.doc('bench-js-warm');
  const payload = 'x'.repeat(1024);
  const end = hr() + BigInt(cfg.v8_warmup_ms) * 1_000_000n;
  let ops = 0;
  for (let i = 0; hr() < end; i++) {
    const burst = [];
    for (let k = 0; k < 32; k++) {
      burst.push(c.call('bench-js-warm', 'noop'), log.append({ n: i }), doc.incr('/n', 1));
    }
    await Promise.allSettled(burst);
    await Promise.allSettled([c.call('bench-js-warm', 'echo', [payload]), log.read({ from: Math.max(1, i * 32 - 200), limit: 100 }), doc.get()]);
    ops += burst.length + 3;
  }
  await provider.close();
  await c.close();
  info(`  js warm-up: ${ops.toLocaleString('en')} operations in ${cfg.v8_warmup_ms} ms (not recorded)`);
}

// ------------------------------------------------------------------ scenarios

async function rpc() {
  if (!any('rpc.')) return;
  const provider = await connect('provider');
  await provider.register('bench-js', { noop: () => null, echo: (s) => s });
  const consumer = await connect('consumer');
  const payload = 'x'.repeat(1024);
  const path = 'consumer socket -> server -> provider socket (another client, same Node process) -> back';
  await scenario('rpc.noop.serial', MAX_OPS, async () => {
    const s = await serial(WARMUP_OPS, MAX_OPS, DURATION_MS, () => consumer.call('bench-js', 'noop', [], TIMEOUT));
    row('rpc.noop.serial', s, { notes: ['1 in flight; ' + path, WARM_NOTE, 'no durable write'] });
  });
  await scenario('rpc.echo1k.serial', MAX_OPS, async () => {
    const s = await serial(WARMUP_OPS, MAX_OPS, DURATION_MS, async () => {
      const r = await consumer.call('bench-js', 'echo', [payload], TIMEOUT);
      if (typeof r !== 'string' || r.length !== 1024) throw new Error('echo answered something else');
    });
    row('rpc.echo1k.serial', s, { notes: ['1 KB string echoed, 1 in flight', WARM_NOTE] });
  });
  await scenario('rpc.noop.concurrent', MAX_OPS * 2, async () => {
    const s = await concurrent(cfg.rpc_in_flight, WARMUP_OPS, MAX_OPS * 2, DURATION_MS, () => consumer.call('bench-js', 'noop', [], TIMEOUT));
    row('rpc.noop.concurrent', s, { notes: [`${cfg.rpc_in_flight} in flight on one consumer socket (closed loop)`, WARM_NOTE] });
  });
  await provider.close();
  await consumer.close();
}

async function logAppend() {
  if (!any('log.append')) return;
  const c = await connect('writer');
  const log = c.log('bench-js-append');
  await scenario('log.append.serial', MAX_OPS, async () => {
    const s = await serial(WARMUP_OPS, MAX_OPS, DURATION_MS, (i) => log.append({ n: i }, TIMEOUT));
    row('log.append.serial', s, { notes: ['1 in flight, body {"n":i}', DURABLE, WARM_NOTE] });
  });
  await scenario('log.append.concurrent', MAX_OPS * 2, async () => {
    const s = await concurrent(cfg.append_in_flight, WARMUP_OPS, MAX_OPS * 2, DURATION_MS, (i) => log.append({ n: i }, TIMEOUT));
    row('log.append.concurrent', s, { notes: [`${cfg.append_in_flight} in flight on one socket, one Log (closed loop)`, DURABLE, WARM_NOTE] });
  });
  await c.close();
}

/** The harness's N-entry Log when its JVM rows filled it, else one filled here the same way. */
async function bigLog(c, n) {
  const theirs = c.log(cfg.big_log);
  const i = await theirs.info(TIMEOUT).catch(() => null);
  if (i && i.first <= 1 && i.last >= n) return { log: theirs, fill: `the Log the JVM rows filled (${cfg.big_log}), read again` };
  const log = c.log(`bench-js-big-${n}-${hex()}`);
  const t0 = hr();
  const firsts = [];
  for (let first = 1; first <= n; first += cfg.page) firsts.push(first);
  let next = 0;
  const fill = async () => {
    while (next < firsts.length) {
      const first = firsts[next++];
      const bodies = [];
      for (let k = first; k < Math.min(n + 1, first + cfg.page); k++) bodies.push({ n: k - 1 });
      await log.appendAll(bodies, TIMEOUT);
    }
  };
  await Promise.all(Array.from({ length: 8 }, fill));
  const secs = ns(t0, hr()) / 1e9;
  return { log, fill: `Log filled here with ${n.toLocaleString('en')} entries by appendAll of ${cfg.page} (8 in flight) in ${secs.toFixed(1)} s = ${Math.round(n / secs).toLocaleString('en')} entries/s durable` };
}

async function logReadReplay() {
  if (!any('log.read', 'log.replay')) return;
  const n = cfg.entries;
  const c = await connect('reader');
  const { log, fill } = await bigLog(c, n);
  await scenario('log.read.page', n, async () => {
    // warm-up: at least 300 pages and the warm-up time, from the start again at the end (as Load.warmPages)
    const warmEnd = hr() + BigInt(WARMUP_MS) * 1_000_000n;
    let warm = 0;
    let failures = 0;
    for (let cursor = 1; (warm < cfg.read_warmup_pages || hr() < warmEnd) && failures < 10;) {
      try {
        const p = await log.read({ from: cursor, limit: cfg.page, ...TIMEOUT });
        cursor = p.entries.length === 0 || p.next === undefined ? 1 : p.next;
        warm++;
      } catch {
        failures++;
      }
    }
    await mark('start');
    const s = new Sink();
    let read = 0;
    let pages = 0;
    let errors = 0;
    for (let from = 1; read < n;) {
      const t0 = hr();
      let page;
      try {
        page = await log.read({ from, limit: cfg.page, ...TIMEOUT });
      } catch (e) {
        s.failed(e);
        if (++errors > 10) break;
        continue;
      }
      s.ok(ns(t0, hr()));
      pages++;
      read += page.entries.length;
      if (page.next === undefined || page.entries.length === 0) break;
      from = page.next;
    }
    s.done();
    await mark('end');
    if (read < n && s.firstError === null) s.failed(new Error(`read only ${read} of ${n} entries`));
    row('log.read.page', s, {
      n: read, throughput: read / (s.elapsed / 1e9), cpuPerOp: false,
      fields: { pages, page_size: cfg.page },
      notes: [`throughput in entries/s; latencies are per page of ${cfg.page} (one request each, serial)`,
        `warm-up of ${warm} pages (at least ${WARMUP_MS} ms, from the start again at the end) excluded; then one pass over the Log`, fill],
    });
  });
  await scenario('log.replay', n, async () => {
    const credit = 10_000;
    const r = await connect('replayer', { logCredit: credit });
    let dropped = false;
    let closing = false;
    r.onState((st) => { if (!closing && (st === 'reconnecting' || st === 'closed')) dropped = true; });
    await mark('start');
    const s = new Sink();
    const budgetMs = Math.max(30, n / 2000) * 1000;
    let got = 0;
    let last = 0;
    let outOfOrder = 0;
    let first = 0n;
    const sub = await log.subscribe({ since: 0, credit });
    const timer = setTimeout(() => { sub.close(); }, budgetMs);
    for await (const e of sub) {
      if (got === 0) first = hr();
      if (e.seq !== last + 1) outOfOrder++;
      last = e.seq;
      if (++got === n) {
        s.done(); // at the last entry delivered, as the JVM row's
        break; // the loop's return() closes the subscription
      }
    }
    clearTimeout(timer);
    if (got < n) s.done();
    await mark('end');
    closing = true;
    await r.close();
    s.attempts = got;
    s.errors = (got < n ? n - got : 0) + outOfOrder;
    const notes = [`subscribe from seq 0 on a ${n.toLocaleString('en')}-entry Log until caught up; entries/s from the subscribe call to the last entry delivered`,
      `client credit ${credit} (the server's max-credit); the for-await loop does no work`,
      dropped ? 'the socket DROPPED during the replay' : 'socket never dropped', fill];
    if (got < n) notes.push(`only ${got} of ${n} entries arrived within ${budgetMs / 1000} s`);
    if (outOfOrder > 0) notes.push(`${outOfOrder} entries out of order or with a gap`);
    row('log.replay', s, {
      throughput: got / (s.elapsed / 1e9), cpuPerOp: false,
      fields: { socket_dropped: dropped, first_entry_ms: got ? Math.round(ns(s.t0, first) / 1e3) / 1e3 : null, credit },
      notes,
    });
  });
  await c.close();
}

async function docs() {
  if (!any('doc.')) return;
  await scenario('doc.cas.serial', MAX_OPS, async () => {
    const c = await connect('doc');
    const d = c.doc(`bench-js-cas-serial-${hex()}`);
    let version = await d.put({ n: 0 }, TIMEOUT);
    const s = await serial(WARMUP_OPS, MAX_OPS, DURATION_MS, async (i) => { version = await d.cas(version, { n: i }, TIMEOUT); });
    row('doc.cas.serial', s, { notes: ['CAS on one Doc with the version of the previous commit, 1 in flight, uncontended', DURABLE, WARM_NOTE] });
    await c.close();
  });
  await scenario('doc.incr.contended', cfg.incr_total, async () => {
    const cs = [];
    for (let i = 0; i < cfg.contenders; i++) cs.push(await connect(`contender-${i}`));
    const total = cfg.incr_total;
    const race = async (name, s) => {
      let floorsOrConflicts = 0;
      await workers(cfg.contenders, total, QUICK ? 20_000 : 120_000, async (w) => {
        try {
          await cs[w].doc(name).incr('/n', 1, TIMEOUT);
        } catch (e) {
          if (e?.code === 'conflict' || e?.code === 'floor') floorsOrConflicts++;
          throw e;
        }
      }, s);
      return floorsOrConflicts;
    };
    const h = hex();
    await race(`bench-js-incr-warm-${h}`, null);
    const name = `bench-js-incr-${h}`;
    await mark('start');
    const s = new Sink();
    const conflicts = await race(name, s);
    s.done();
    await mark('end');
    const v = (await cs[0].doc(name).get(TIMEOUT)).value;
    const fin = v && typeof v.n === 'number' ? v.n : -1;
    const ok = s.attempts - s.errors;
    row('doc.incr.contended', s, {
      fields: { commits: ok, conflicts, final_value: fin, final_exact: fin === ok && ok === total },
      notes: [`${cfg.contenders} connections (one Node process) incr /n of one Doc by 1, one in flight each, ${total} in total`,
        'server-side atomic increment: one request per commit', 'warm-up: the same race once on a scratch key, not recorded', DURABLE],
    });
    for (const c of cs) await c.close();
  });
}

async function wsConnect() {
  const n = QUICK ? 60 : 300;
  const warmup = QUICK ? 10 : 30;
  await scenario('ws.connect', n, async () => {
    const token = cfg.tokens.connect;
    const once = async () => {
      const c = await HyphaClient.connect(URL_, { token, reconnect: false });
      await c.close();
    };
    for (let i = 0; i < warmup; i++) await once().catch(() => {});
    await mark('start');
    const s = new Sink();
    const end = s.t0 + BigInt(QUICK ? 5_000 : 30_000) * 1_000_000n;
    for (let i = 0; i < n && hr() < end; i++) {
      s.attempts++;
      const t0 = hr();
      try {
        await once();
        s.ok(ns(t0, hr()));
      } catch (e) {
        s.failed(e);
      }
    }
    s.done();
    await mark('end');
    row('ws.connect', s, { notes: ['HyphaClient.connect to a warm workspace: TCP + HTTP upgrade + token check + hello frame (the ws package\'s WebSocket under Node 20, the built-in one from Node 22); the close is inside the timing', `warm-up ${warmup} connects excluded`] });
  });
}

async function presence() {
  const n = QUICK ? 100 : 1000;
  const warmup = QUICK ? 10 : 50;
  await scenario('presence.propagate', n, async () => {
    const watchers = [];
    for (let i = 0; i < 3; i++) watchers.push(await connect(`watcher-${i}`));
    const member = await connect('member');
    const me = member.info.client;
    let round = null;
    const subs = [];
    for (const w of watchers) {
      subs.push(await w.presence.subscribe((ev) => {
        const r = round;
        if (!r || ev.member?.client !== me || ev.type !== r.type) return;
        if (r.type === 'join' && ev.member.meta?.i !== r.i) return;
        const t = hr();
        if (t > r.last) r.last = t;
        if (--r.left === 0) r.resolve();
      }));
    }
    const seen = (type, i) => {
      const r = { type, i, left: 3, last: 0n };
      r.done = new Promise((resolve, reject) => {
        r.resolve = resolve;
        r.timer = setTimeout(() => reject(new Error(`${type} not seen by all 3 subscribers within 5 s`)), 5000);
      }).finally(() => clearTimeout(r.timer));
      round = r;
      return r;
    };
    let s = new Sink();
    let started = false;
    const deadline = hr() + BigInt(QUICK ? 8_000 : 60_000) * 1_000_000n;
    for (let i = 0; i < warmup + n && hr() < deadline; i++) {
      const measured = i >= warmup;
      if (i === warmup) {
        await mark('start');
        started = true;
        s = new Sink();
      }
      if (measured) s.attempts++;
      try {
        const join = seen('join', i);
        const t0 = hr();
        await member.presence.set({ i }, TIMEOUT);
        await join.done;
        if (measured) s.ok(ns(t0, join.last));
        const leave = seen('leave', i);
        await member.presence.leave(TIMEOUT);
        await leave.done;
      } catch (e) {
        if (measured) s.failed(e);
      }
    }
    s.done();
    if (!started) await mark('start');
    await mark('end');
    for (const sub of subs) await sub.close();
    row('presence.propagate', s, {
      throughput: s.latencies.length / (s.elapsed / 1e9), cpuPerOp: false,
      notes: ['presence.set (a join) by one client -> the join event seen by the last of 3 subscribers on their own sockets (all 4 clients in one Node process); a leave (not timed) between rounds; throughput counts join+leave cycles',
        `warm-up ${warmup} rounds excluded`],
    });
    await member.close();
    for (const w of watchers) await w.close();
  });
}

async function artifacts() {
  if (!any('artifact.')) return;
  const c = await connect('artifacts');
  const sizes = [[64 << 10, '64k'], [1 << 20, '1m'], [8 << 20, '8m']];
  const counts = QUICK ? [10, 5, 2] : [50, 30, 10];
  const created = [];
  for (let k = 0; k < sizes.length; k++) {
    const [size, label] = sizes[k];
    const n = counts[k];
    const data = new Uint8Array(size);
    for (let i = 0; i < size; i += 65536) crypto.getRandomValues(data.subarray(i, Math.min(size, i + 65536)));
    const p = `bench/js-blob-${label}`;
    const binding = (name, s, note) => row(name, s, {
      fields: { provider: 'filesystem', bytes: size, mb_per_s: (s.attempts - s.errors) * size / (1 << 20) / (s.elapsed / 1e9) },
      notes: [note, 'serial, filesystem provider; MB = 2^20 bytes; 2 warm-up transfers excluded'],
    });
    await scenario(`artifact.put.${label}`, n, async () => {
      const s = await serialFixed(2, n, async () => {
        await c.artifacts.put(p, data);
        if (!created.includes(p)) created.push(p);
      });
      binding(`artifact.put.${label}`, s, 'binding plane: Artifacts.put of a Uint8Array (fetch, one request), the bytes stream through the server to the filesystem provider');
    });
    await scenario(`artifact.get.${label}`, n, async () => {
      const s = await serialFixed(2, n, async (i, measured) => {
        const d = await c.artifacts.get(p);
        const b = await d.bytes();
        if (b.length !== size) throw new Error(`GET gave ${b.length} bytes, not ${size}`);
        if (i === 0 && !measured && Buffer.compare(Buffer.from(b.buffer, b.byteOffset, b.length), Buffer.from(data.buffer)) !== 0) {
          throw new Error('GET answered bytes that differ from the uploaded ones');
        }
      });
      binding(`artifact.get.${label}`, s, 'binding plane download: Artifacts.get, then bytes() (the whole body); the first warm-up one compared byte for byte');
    });
  }
  for (const p of created) await c.artifacts.delete(p).catch(() => {});
  await c.close();
}

/** Serial with a fixed warm-up count and no warm-up time (the artifact rows, as ArtifactScenarios.binding). */
async function serialFixed(warmup, n, op) {
  for (let i = 0; i < warmup; i++) {
    try { await op(i, false); } catch (e) { if (i === 0) throw e; }
  }
  await mark('start');
  const s = new Sink();
  const end = s.t0 + 120_000_000_000n;
  for (let i = 0; i < n && hr() < end; i++) {
    s.attempts++;
    const t0 = hr();
    try {
      await op(i, true);
      s.ok(ns(t0, hr()));
    } catch (e) {
      s.failed(e);
    }
  }
  s.done();
  await mark('end');
  return s;
}

try {
  if (cfg.v8_warmup_ms > 0 && any('rpc.', 'log.', 'doc.')) await warmV8();
  await rpc();
  await logAppend();
  await logReadReplay();
  await docs();
  await wsConnect();
  await presence();
  await artifacts();
} catch (e) {
  process.stderr.write(`driver: stopped: ${e?.stack ?? e}\n`);
  send({ type: 'fatal', msg: describe(e) });
}
for (const c of clients) await c.close().catch(() => {});
// a row of many latencies is more than the pipe holds: libuv may still be writing it, and
// process.exit() would cut it off; exit once the last line (written after it) is flushed
process.stdout.write(JSON.stringify({ type: 'done' }) + '\n', () => process.exit(0));
