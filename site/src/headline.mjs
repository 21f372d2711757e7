// The headline table: each figure of the shown run with what it means for a user, after the
// reference report's §0. Every sentence is built from the run's own figures; where a figure is
// missing the row says so instead of borrowing one.

import { duration, esc, int, metric, ms, percent, rate } from './format.mjs';
import { compare, conflictRate, evaluateMark, ourRow, ourRows, peerRow, systemLabel } from './analysis.mjs';

/** A figure of ours in a span the test can find: data-* say what it is, the text is what it shows. */
function fig(row, field, text) {
  if (!row || row[field] == null) return '<span class="missing">not in this run</span>';
  return `<span class="fig" data-scenario="${esc(row.name)}" data-system="${esc(row.system)}" data-variant="${esc(row.variant)}" data-field="${field}" data-value="${row[field]}">${esc(text ?? metric(field, row[field]))}</span>`;
}

function peerLine(run, name, system, field, words = '') {
  const p = peerRow(run, name, system);
  if (!p || p[field] == null) return '';
  const c = compare(ourRow(run, name)?.[field], p[field], field);
  const verdict = c ? ` <span class="ratio ${c.verdict.replace(' ', '-')}">ours ${c.value >= 100 ? int(c.value) : rate(c.value)}× · ${c.verdict}</span>` : '';
  return `<div class="peer">${esc(systemLabel(system))}${words ? ` ${esc(words)}` : ''}: ${esc(metric(field, p[field]))}${verdict}</div>`;
}

function errorsNote(rows) {
  const bad = rows.filter((r) => r && r.errors > 0);
  return bad.map((r) => ` <span class="errors">${esc(int(r.errors))} errors in ${esc(r.name)}${r.variant ? ` (${esc(r.variant)})` : ''}</span>`).join('');
}

function latencyWords(p50) {
  if (p50 == null) return '';
  if (p50 < 1) return 'the server\'s share is under a millisecond, so users feel their own network round trip, not the server';
  if (p50 < 10) return 'a few milliseconds of server work on top of the network round trip';
  return 'tens of milliseconds of server work before any network: noticeable in an interactive UI';
}

/** Headline rows: [{id, measured, number, peers, marks: [name], meaning}] for one run. */
export function headlineRows(run) {
  const r = (name) => ourRow(run, name);
  const rows = [];

  {
    const s = r('rpc.noop.serial');
    const c = r('rpc.noop.concurrent');
    rows.push({
      id: 'rpc', measured: 'RPC round trip · p50', scenarios: ['rpc.noop.serial', 'rpc.noop.concurrent'],
      number: `${fig(s, 'p50_ms')}${s && s.p99_ms != null ? ` (p99 ${fig(s, 'p99_ms')})` : ''}<div class="sub">${fig(c, 'throughput_per_s', c ? `${rate(c.throughput_per_s)} calls/s` : '')} with 32 in flight on one socket</div>`,
      peers: peerLine(run, 'rpc.noop.serial', 'nats', 'p50_ms', 'request/reply') + peerLine(run, 'rpc.noop.concurrent', 'nats', 'throughput_per_s', 'at the same depth'),
      marks: ['rpc.noop.serial', 'rpc.noop.concurrent'],
      meaning: s
        ? `<b>Real-time calls between agents and UIs.</b> A call routed through the workspace to a provider and back takes ${esc(ms(s.p50_ms))} ms at the median on loopback: ${esc(latencyWords(s.p50_ms))}.${c && c.throughput_per_s != null ? ` One socket with 32 calls in flight carries ${esc(rate(c.throughput_per_s))} calls/s.` : ''}`
        : '<b>Real-time calls</b> — not measured in this run.',
      errors: errorsNote([s, c]),
    });
  }
  {
    const a = r('log.append.concurrent');
    rows.push({
      id: 'append', measured: 'Durable appends per Log', scenarios: ['log.append.concurrent'],
      number: `${fig(a, 'throughput_per_s', a ? `${rate(a.throughput_per_s)} appends/s` : '')}${a && a.p99_ms != null ? `<div class="sub">p99 ${fig(a, 'p99_ms')}, 32 in flight, fsynced</div>` : ''}`,
      peers: peerLine(run, 'log.append.concurrent', 'redis', 'throughput_per_s', '(fsync always)') + peerLine(run, 'log.append.concurrent', 'nats', 'throughput_per_s', '(acks before fsync)'),
      marks: ['log.append.concurrent'],
      meaning: a
        ? `<b>Chat and event streams that survive disconnects.</b> One Log accepts ${esc(rate(a.throughput_per_s))} appends/s from one busy client, each on disk before it is acknowledged${a.p99_ms != null ? ` (99 % acknowledged within ${esc(ms(a.p99_ms))} ms)` : ''}: a client that drops and reconnects loses nothing it was told was stored.`
        : '<b>Event streams</b> — not measured in this run.',
      errors: errorsNote([a]),
    });
  }
  {
    const a = r('log.append.serial');
    const d = r('doc.cas.serial');
    rows.push({
      id: 'durable', measured: 'Durable write · p50', scenarios: ['log.append.serial', 'doc.cas.serial'],
      number: `${fig(a, 'p50_ms')} <span class="sub-inline">Log append</span>${d && d.p50_ms != null ? `<div class="sub">${fig(d, 'p50_ms')} Doc CAS</div>` : ''}`,
      peers: peerLine(run, 'log.append.serial', 'redis', 'p50_ms', 'XADD, fsync always') + peerLine(run, 'log.append.serial', 'nats', 'p50_ms', 'publish, acks before fsync'),
      marks: ['log.append.serial'],
      meaning: a
        ? `<b>Authoritative state in one round trip.</b> A writer that waits for each acknowledgement persists one entry every ${esc(ms(a.p50_ms))} ms at the median${a.throughput_per_s != null ? ` (${esc(rate(a.throughput_per_s))}/s from a single writer)` : ''}, fsynced before the reply.`
        : '<b>Durable writes</b> — not measured in this run.',
      errors: errorsNote([a, d]),
    });
  }
  {
    const p = r('log.replay');
    const g = r('log.read.page');
    const dropped = p && p.errors > 0;
    rows.push({
      id: 'replay', measured: 'Catch-up after a disconnect', scenarios: ['log.replay', 'log.read.page'],
      number: `${fig(p, 'throughput_per_s', p ? `${rate(p.throughput_per_s)} entries/s` : '')} replay${g && g.throughput_per_s != null ? `<div class="sub">${fig(g, 'throughput_per_s', `${rate(g.throughput_per_s)} entries/s`)} reading pages</div>` : ''}`,
      peers: peerLine(run, 'log.replay', 'nats', 'throughput_per_s', 'ordered consumer') + peerLine(run, 'log.read.page', 'redis', 'throughput_per_s', 'XRANGE'),
      marks: ['log.replay', 'log.read.page'],
      meaning: !p || p.throughput_per_s == null
        ? '<b>Replay after a disconnect</b> — not measured in this run.'
        : p.throughput_per_s > 0
          ? `<b>Gap-free replay on reconnect.</b> A client that subscribes from the start catches up ${esc(rate(p.throughput_per_s))} entries/s: a 1,000,000-entry backlog in about ${esc(duration(1e6 / p.throughput_per_s))}${dropped ? `, but the run counted ${esc(int(p.errors))} errors (dropped sockets or failed reads)` : p.errors === 0 ? ', and the socket was never dropped' : ''}.`
          : `<b>Replay after a disconnect did not catch up in this run</b> (0 entries/s${dropped ? `, ${esc(int(p.errors))} errors` : ''}).`,
      errors: errorsNote([p, g]),
    });
  }
  {
    const t = r('log.tail');
    rows.push({
      id: 'tail', measured: 'Live tail · p50', scenarios: ['log.tail'],
      number: `${fig(t, 'p50_ms')}${t && t.p99_ms != null ? ` (p99 ${fig(t, 'p99_ms')})` : ''}`,
      peers: peerLine(run, 'log.tail', 'nats', 'p50_ms') + peerLine(run, 'log.tail', 'redis', 'p50_ms'),
      marks: [],
      meaning: t
        ? `<b>Live feeds.</b> A subscriber sees an appended entry ${esc(ms(t.p50_ms))} ms after the append at the median, pushed to it, without polling.`
        : '<b>Live feeds</b> — not measured in this run.',
      errors: errorsNote([t]),
    });
  }
  {
    const i = r('doc.incr.contended');
    const c = r('doc.cas.contended');
    const cr = conflictRate(c);
    const exact = i && i.final_exact === true;
    rows.push({
      id: 'counter', measured: 'Atomic counter commits', scenarios: ['doc.incr.contended', 'doc.cas.contended'],
      number: `${fig(i, 'throughput_per_s', i ? `${rate(i.throughput_per_s)} commits/s` : '')}${i ? `<div class="sub">16 writers, one key, final value ${i.final_exact === true ? '<span class="ok">exact</span>' : i.final_exact === false ? '<span class="bad">NOT exact</span>' : 'not reported'}</div>` : ''}`,
      peers: peerLine(run, 'doc.incr.contended', 'redis', 'throughput_per_s', 'INCRBY, fsync always') + peerLine(run, 'doc.incr.contended', 'nats', 'throughput_per_s', 'KV update'),
      marks: ['doc.incr.contended'],
      meaning: i
        ? `<b>${i.final_exact === false ? 'Counters under contention: the final value was NOT exact in this run.' : 'Counters and ledgers that stay exact under contention.'}</b> 16 writers incrementing one counter commit ${esc(rate(i.throughput_per_s))}/s${exact ? ' and the final value is exact' : i.final_exact === false ? ', and updates were lost or doubled' : ' (exactness not reported)'}.${c && c.throughput_per_s != null ? ` The same counter by optimistic CAS: ${esc(rate(c.throughput_per_s))} commits/s${cr != null ? ` with ${esc(percent(cr))} of attempts conflicting` : ''}${c.throughput_per_s < i.throughput_per_s ? ' — use incr for counters' : ''}.` : ''}`
        : '<b>Counters under contention</b> — not measured in this run.',
      errors: errorsNote([i, c]),
    });
  }
  {
    const p = r('presence.propagate');
    rows.push({
      id: 'presence', measured: 'Presence propagation · p50', scenarios: ['presence.propagate'],
      number: `${fig(p, 'p50_ms')}${p && p.p99_ms != null ? ` (p99 ${fig(p, 'p99_ms')})` : ''}<div class="sub">register → 3 subscribers</div>`,
      peers: '',
      marks: ['presence.propagate'],
      meaning: p
        ? `<b>Live, authoritative presence.</b> "Who's online" reaches 3 subscribers ${esc(ms(p.p50_ms))} ms after a client registers (median), with no polling.`
        : '<b>Presence</b> — not measured in this run.',
      errors: errorsNote([p]),
    });
  }
  {
    const m = r('ws.max');
    const c = r('ws.connect');
    let words = '';
    if (m && m.peak != null) {
      words = m.failures > 0
        ? `It held ${esc(int(m.peak))} sockets at once before ${esc(int(m.failures))} connections failed: that is the ceiling on this machine.`
        : m.failures === 0
          ? `It held ${esc(int(m.peak))} sockets at once with 0 failures: the ramp stopped before any failure, so the ceiling is at least that.`
          : `It held ${esc(int(m.peak))} sockets at once (failures not reported).`;
    }
    rows.push({
      id: 'sockets', measured: 'Sockets on one workspace', scenarios: ['ws.max', 'ws.connect'],
      number: `${fig(m, 'peak', m ? `${int(m.peak)}` : '')}${m ? ` sockets, <span class="${m.failures > 0 ? 'bad' : ''}">${esc(int(m.failures))} failures</span>` : ''}${c && c.p50_ms != null ? `<div class="sub">connect p50 ${fig(c, 'p50_ms')}</div>` : ''}`,
      peers: '',
      marks: ['ws.max'],
      meaning: m
        ? `<b>Many clients on one object</b> — one room, document or device fleet per workspace. ${words}${c && c.p50_ms != null ? ` Opening a connection to a warm workspace takes ${esc(ms(c.p50_ms))} ms plus the network.` : ''}`
        : '<b>Many clients on one object</b> — not measured in this run.',
      errors: errorsNote([m, c]),
    });
  }
  {
    const puts = ourRows(run, 'artifact.put.8m');
    const gets = ourRows(run, 'artifact.get.8m');
    const up = puts[0] || null;
    const down = gets[0] || null;
    const list = (rows2, what) => rows2.map((x) => `<div class="sub">${fig(x, 'mb_per_s', `${rate(x.mb_per_s)} MB/s`)} ${what}${x.variant ? ` (${esc(x.variant)})` : ''}</div>`).join('');
    rows.push({
      id: 'artifacts', measured: 'Files through the server, 8 MB', scenarios: ['artifact.put.8m', 'artifact.get.8m'],
      number: (puts.length || gets.length) ? list(puts, 'up') + list(gets, 'down') : '<span class="missing">not in this run</span>',
      peers: '',
      marks: ['artifact.put.8m', 'artifact.get.8m'],
      meaning: up || down
        ? `<b>Files next to the data.</b> ${up && up.mb_per_s ? `An 8 MB file uploads in about ${esc(duration(8 / up.mb_per_s))}` : 'Upload not measured'}${down && down.mb_per_s ? ` and downloads in about ${esc(duration(8 / down.mb_per_s))}` : ''} through the server on loopback; across a real network the link is usually the limit.`
        : '<b>Files through the server</b> — not measured in this run.',
      errors: errorsNote([...puts, ...gets]),
    });
  }
  {
    const mp = ourRows(run, 'artifact.multipart.64m');
    rows.push({
      id: 'multipart', measured: 'Multipart upload, 64 MB', scenarios: ['artifact.multipart.64m'],
      number: mp.length ? mp.map((x) => `<div>${fig(x, 'mb_per_s', `${rate(x.mb_per_s)} MB/s`)}${x.variant ? ` ${esc(x.variant)}` : ''}</div>`).join('') : '<span class="missing">not in this run</span>',
      peers: '',
      marks: ['artifact.multipart.64m'],
      meaning: mp.length
        ? `<b>Large files straight to the store.</b> 8 × 8 MB parts go to presigned URLs, are completed, downloaded and compared: ${mp.map((x) => `${esc(rate(x.mb_per_s))} MB/s${x.variant ? ` on ${esc(x.variant)}` : ''} with ${x.errors > 0 ? `<b>${esc(int(x.errors))} errors</b>` : x.errors === 0 ? '0 errors' : 'errors not reported'}`).join('; ')}; the parts go straight to the blob store, not through the server.`
        : '<b>Large uploads</b> — not measured in this run.',
      errors: errorsNote(mp),
    });
  }
  {
    const l = r('cold.log');
    const w = r('cold.workspace');
    rows.push({
      id: 'cold', measured: 'Cold first touch · p50', scenarios: ['cold.log', 'cold.workspace'],
      number: `${fig(l, 'p50_ms')} <span class="sub-inline">Log</span>${w && w.p50_ms != null ? `<div class="sub">${fig(w, 'p50_ms')} workspace</div>` : ''}`,
      peers: '',
      marks: ['cold.log'],
      meaning: l
        ? `<b>Idle objects hibernate and wake on demand.</b> The first call to a hibernated Log pays ${esc(ms(l.p50_ms))} ms once (median); every call after is warm.`
        : '<b>Waking idle objects</b> — not measured in this run.',
      errors: errorsNote([l, w]),
    });
  }
  for (const row of rows) {
    row.markResults = row.marks.map((m) => ({ name: m, result: evaluateMark(run, m) })).filter((x) => x.result);
    row.present = row.scenarios.some((n) => ourRow(run, n));
  }
  return rows;
}

