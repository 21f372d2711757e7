// What the pages know about each scenario: its title, the metric that sums it up, the marks it is
// read against. Figures come only from result files; this file holds words and marks.
//
// Sources: ../shared/BENCH.md (scenario names, reference local floor and cloud marks, peers and
// durability), the reference report's §2.1/§2.2 tables (artifact sizes other than 8 MB), and
// issue 6's "Marks" table. Keep this file in step with BENCH.md when a scenario is added.

/** Metric kinds: which field sums a scenario up, and which way is better. */
export const METRICS = {
  p50_ms: { field: 'p50_ms', label: 'p50', unit: 'ms', better: 'lower' },
  p99_ms: { field: 'p99_ms', label: 'p99', unit: 'ms', better: 'lower' },
  throughput_per_s: { field: 'throughput_per_s', label: 'throughput', unit: '/s', better: 'higher' },
  mb_per_s: { field: 'mb_per_s', label: 'MB/s', unit: 'MB/s', better: 'higher' },
  peak: { field: 'peak', label: 'peak sockets', unit: 'sockets', better: 'higher' },
};

export const GROUPS = ['RPC', 'Log', 'Doc', 'Sockets', 'Presence', 'Artifacts', 'Cold start', 'Server start', 'Other'];

/**
 * Known scenarios. `key` is the metric the charts, history and ratios use; `per` names what the
 * throughput counts; `durable` marks writes whose durability differs between systems.
 * `ref.local` / `ref.cloud`: the reference report's figures (`text` as BENCH.md words them, plus
 * the numbers that can be compared).
 */
export const SCENARIOS = [
  { name: 'rpc.noop.serial', group: 'RPC', title: 'RPC round trip, serial',
    what: 'consumer → workspace → provider → back, 1 in flight', key: 'p50_ms', per: 'calls',
    ref: { local: { text: 'p50 0.27 ms · 3,147/s', p50_ms: 0.27, throughput_per_s: 3147 },
           cloud: { text: 'p50 12.5 ms', p50_ms: 12.5 } } },
  { name: 'rpc.echo1k.serial', group: 'RPC', title: 'RPC round trip, 1 KB echo',
    what: 'same with a 1 KB payload echoed', key: 'p50_ms', per: 'calls',
    ref: { local: { text: 'p50 0.27 ms · 3,598/s', p50_ms: 0.27, throughput_per_s: 3598 },
           cloud: { text: 'p50 12.9 ms', p50_ms: 12.9 } } },
  { name: 'rpc.noop.concurrent', group: 'RPC', title: 'RPC, 32 in flight on one socket',
    what: 'one consumer socket, 32 in flight', key: 'throughput_per_s', per: 'calls',
    ref: { local: { text: '12,470/s (16 in flight)', throughput_per_s: 12470 },
           cloud: { text: '980/s', throughput_per_s: 980 } } },
  { name: 'log.append.serial', group: 'Log', title: 'Durable append, serial',
    what: 'durable append, 1 in flight', key: 'p50_ms', per: 'appends', durable: true,
    ref: { local: { text: 'p50 0.24 ms · 4,117/s', p50_ms: 0.24, throughput_per_s: 4117 },
           cloud: { text: 'p50 36.1 ms', p50_ms: 36.1 } } },
  { name: 'log.append.concurrent', group: 'Log', title: 'Durable append, 32 in flight',
    what: 'durable append, 32 in flight, one Log', key: 'throughput_per_s', per: 'appends', durable: true,
    ref: { local: { text: '7,100/s · p99 13.3 ms', throughput_per_s: 7100, p99_ms: 13.3 },
           cloud: { text: '605/s', throughput_per_s: 605 } } },
  { name: 'log.read.page', group: 'Log', title: 'Read history in pages',
    what: 'read 1,000,000 entries in pages of 1,000', key: 'throughput_per_s', per: 'entries',
    ref: { local: { text: '22,946 entries/s (100/page)', throughput_per_s: 22946 },
           cloud: { text: '809 entries/s', throughput_per_s: 809 } } },
  { name: 'log.replay', group: 'Log', title: 'Replay from seq 0',
    what: 'subscribe from seq 0 on a 1,000,000-entry Log until caught up', key: 'throughput_per_s', per: 'entries',
    ref: { local: { text: '12,652 entries/s (200 entries)', throughput_per_s: 12652 },
           cloud: { text: '7,593/s; a full replay dropped the socket', throughput_per_s: 7593 } } },
  { name: 'log.tail', group: 'Log', title: 'Live tail delivery',
    what: 'append → delivery to a live subscriber', key: 'p50_ms', per: 'deliveries',
    ref: { local: { text: 'p50 0.45 ms', p50_ms: 0.45 }, cloud: { text: 'p50 36.2 ms', p50_ms: 36.2 } } },
  { name: 'doc.cas.serial', group: 'Doc', title: 'CAS on one Doc, serial',
    what: 'CAS on one Doc, 1 in flight', key: 'throughput_per_s', per: 'commits', durable: true,
    ref: { local: { text: '3,301 commits/s', throughput_per_s: 3301 },
           cloud: { text: '28/s', throughput_per_s: 28 } } },
  { name: 'doc.cas.contended', group: 'Doc', title: 'CAS, 16 writers on one counter',
    what: '16 connections CAS one counter, 800 commits', key: 'throughput_per_s', per: 'commits', durable: true,
    ref: { local: { text: '951 commits/s, 89 % conflicts', throughput_per_s: 951 },
           cloud: { text: '27.7/s, 85 % conflicts', throughput_per_s: 27.7 } } },
  { name: 'doc.incr.contended', group: 'Doc', title: 'Atomic incr, 16 writers on one counter',
    what: '16 connections incr one counter, final value exact', key: 'throughput_per_s', per: 'commits', durable: true,
    ref: { local: { text: '—' }, cloud: { text: '386/s, 0 % conflicts', throughput_per_s: 386 } } },
  { name: 'doc.incr.spread', group: 'Doc', title: 'Atomic incr, 16 writers over 1,000 Docs',
    what: '16 connections incr 1,000 different Docs (nothing contended: the per-object ceiling), sum exact',
    key: 'throughput_per_s', per: 'commits', durable: true,
    ref: { local: { text: '— (not in the reference report)' }, cloud: { text: '—' } } },
  { name: 'ws.connect', group: 'Sockets', title: 'Connect to a warm workspace',
    what: 'connect latency to a warm workspace', key: 'p50_ms', per: 'connects',
    ref: { local: { text: 'p50 1.38 ms', p50_ms: 1.38 }, cloud: { text: 'p50 71 ms', p50_ms: 71 } } },
  { name: 'ws.max', group: 'Sockets', title: 'Sockets held on one workspace',
    what: 'concurrent sockets on one workspace, ramped until failure or target', key: 'peak', per: 'sockets',
    ref: { local: { text: '≥ 200 (not reached)', peak: 200 }, cloud: { text: '≥ 200', peak: 200 } } },
  { name: 'presence.propagate', group: 'Presence', title: 'Presence propagation',
    what: 'register → seen by 3 subscribers', key: 'p50_ms', per: 'registrations',
    ref: { local: { text: 'p50 0.93 ms', p50_ms: 0.93 }, cloud: { text: 'p50 42.7 ms', p50_ms: 42.7 } } },
  ...['64k', '1m', '8m'].flatMap((size) => {
    const r = { '64k': [14.2, 37.4, 0.2, 0.35], '1m': [94.7, 325.8, 2.43, 2.74], '8m': [115, 732, 9.71, 17.8] }[size];
    const bytes = { '64k': '64 KB', '1m': '1 MB', '8m': '8 MB' }[size];
    return [
      { name: `artifact.put.${size}`, group: 'Artifacts', title: `Artifact upload, ${bytes}`,
        what: `binding plane: ${bytes} streamed through the server to the store`, key: 'mb_per_s', per: 'uploads', durable: true,
        ref: { local: { text: `${r[0]} MB/s up`, mb_per_s: r[0] }, cloud: { text: `${r[2]} MB/s (client-bound)`, mb_per_s: r[2] } } },
      { name: `artifact.get.${size}`, group: 'Artifacts', title: `Artifact download, ${bytes}`,
        what: `binding plane: ${bytes} streamed from the store through the server`, key: 'mb_per_s', per: 'downloads',
        ref: { local: { text: `${r[1]} MB/s down`, mb_per_s: r[1] }, cloud: { text: `${r[3]} MB/s (client-bound)`, mb_per_s: r[3] } } },
    ];
  }),
  { name: 'artifact.multipart.64m', group: 'Artifacts', title: 'Multipart upload, 64 MB',
    what: '8 × 8 MB parts on presigned URLs, completed, downloaded and compared', key: 'mb_per_s', per: 'uploads', durable: true,
    ref: { local: { text: '— (local had no S3)' }, cloud: { text: '13.4 MB/s', mb_per_s: 13.4 } } },
  { name: 'cold.log', group: 'Cold start', title: 'First touch of a hibernated Log',
    what: 'first touch of a hibernated Log', key: 'p50_ms', per: 'touches',
    ref: { local: { text: 'p50 2.5 ms', p50_ms: 2.5 }, cloud: { text: 'p50 730 ms', p50_ms: 730 } } },
  { name: 'cold.workspace', group: 'Cold start', title: 'First touch of a hibernated workspace',
    what: 'first touch of a hibernated workspace', key: 'p50_ms', per: 'touches',
    ref: { local: { text: 'p50 2.61 ms', p50_ms: 2.61 }, cloud: { text: 'p50 747 ms', p50_ms: 747 } } },
  { name: 'server.start.empty', group: 'Server start', title: 'Server start, empty data directory',
    what: 'java -jar → first 200 of /observe/health, fresh data directory', key: 'p50_ms', per: 'starts',
    ref: { local: { text: '— (not in the reference report)' }, cloud: { text: '—' } } },
  { name: 'server.start.kill9', group: 'Server start', title: 'Server restart after kill -9',
    what: 'java -jar → healthy on a data directory left by SIGKILL under load (1,000,000-entry Log, 1,000 Docs); every acknowledged append checked',
    key: 'p50_ms', per: 'starts',
    ref: { local: { text: '— (not in the reference report)' }, cloud: { text: '—' } } },
  { name: 'ws.storm', group: 'Sockets', title: 'Connected clients during a reconnect storm',
    what: 'RPC latency of 8 connected clients while 10,000 sockets arrive within a second on a server with ws.admit-rate; refused ones wait their retry_after_ms and come back',
    key: 'p99_ms', per: 'calls',
    ref: { local: { text: '— (not in the reference report)' }, cloud: { text: '—' } } },
  { name: 'server.restart', group: 'Server start', title: 'Graceful restart under load (drain, 1012)',
    what: 'each of 100 clients\' longest gap between acknowledged appends around a restart (as ./hypha restart: the new process boots, then SIGTERMs the old: drain, 1012); failed requests counted',
    key: 'p99_ms', per: 'client pauses',
    ref: { local: { text: '— (not in the reference report)' }, cloud: { text: '—' } } },
  { name: 'cluster.upgrade', group: 'Cluster', title: 'Cluster upgrade under load (every server in turn)',
    what: 'latency of every request 100 clients over 12 workspaces sent while each server in turn was stopped with SIGTERM (hand-over, 1012) and started again; failed requests, lost and duplicated writes counted',
    key: 'p99_ms', per: 'requests',
    ref: { local: { text: '— (not in the reference report)' }, cloud: { text: '—' } } },
  { name: 'cluster.failover', group: 'Cluster', title: 'Failover after kill -9 (default settings)',
    what: 'kill -9 of the busiest of 3 servers → first acknowledgement of an append sent after the kill, per affected workspace (24 workspaces, 6 s ZooKeeper session, 200 ms port probes); lost and duplicated writes counted',
    key: 'p50_ms', per: 'workspaces per kill',
    ref: { local: { text: '— (not in the reference report)' }, cloud: { text: '—' } } },
];

const BY_NAME = new Map(SCENARIOS.map((s) => [s.name, s]));

/** The catalogue entry for a scenario name; unknown names get a plain entry so they still show. */
export function scenarioInfo(name) {
  if (BY_NAME.has(name)) return BY_NAME.get(name);
  const prefix = String(name).split('.')[0];
  const group = { rpc: 'RPC', log: 'Log', doc: 'Doc', ws: 'Sockets', presence: 'Presence',
    artifact: 'Artifacts', cold: 'Cold start', server: 'Server start' }[prefix] || 'Other';
  return { name, group, title: name, what: 'not in the benchmark\'s catalogue', key: 'p50_ms', per: 'ops',
    ref: { local: { text: '—' }, cloud: { text: '—' } }, unknown: true };
}

/** Order of scenarios on the pages: catalogue order, unknown ones after, by name. */
export function scenarioOrder(a, b) {
  const ia = SCENARIOS.findIndex((s) => s.name === a);
  const ib = SCENARIOS.findIndex((s) => s.name === b);
  if (ia >= 0 && ib >= 0) return ia - ib;
  if (ia >= 0) return -1;
  if (ib >= 0) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Issue 6's marks. Each check is one comparison the pages can evaluate against a run:
 * `value` (a fixed number), `peer` (that peer's same metric in the same run), or `equals`
 * (a field that must hold exactly that value). A check that needs data the run lacks is "no data".
 * `all: true` — every hypha-mesh row of the scenario must pass (e.g. both artifact providers).
 */
export const MARKS = {
  'rpc.noop.serial': { text: 'p50 ≤ NATS request/reply p50 in the same run',
    checks: [{ field: 'p50_ms', op: '<=', peer: 'nats' }] },
  'rpc.noop.concurrent': { text: '≥ NATS request/reply at the same depth',
    checks: [{ field: 'throughput_per_s', op: '>=', peer: 'nats' }] },
  'log.append.serial': { text: 'p50 ≤ 0.35 ms, fsynced',
    checks: [{ field: 'p50_ms', op: '<=', value: 0.35 }] },
  'log.append.concurrent': { text: '≥ 100,000 appends/s fsynced, p99 ≤ 5 ms, ≥ Redis always',
    checks: [{ field: 'throughput_per_s', op: '>=', value: 100000 }, { field: 'p99_ms', op: '<=', value: 5 },
      { field: 'throughput_per_s', op: '>=', peer: 'redis' }] },
  'log.replay': { text: '≥ 1,000,000 entries/s, socket never dropped',
    checks: [{ field: 'throughput_per_s', op: '>=', value: 1000000 }, { field: 'errors', op: '==', value: 0 }] },
  'log.read.page': { text: '≥ 1,000,000 entries/s, socket never dropped',
    checks: [{ field: 'throughput_per_s', op: '>=', value: 1000000 }, { field: 'errors', op: '==', value: 0 }] },
  'doc.incr.contended': { text: '≥ 50,000 commits/s, final value exact, ≥ Redis always INCRBY',
    checks: [{ field: 'throughput_per_s', op: '>=', value: 50000 }, { field: 'final_exact', op: '==', value: true },
      { field: 'throughput_per_s', op: '>=', peer: 'redis' }] },
  'doc.incr.spread': { text: '≥ Redis INCRBY on 1,000 keys in the same run, final sum exact',
    checks: [{ field: 'throughput_per_s', op: '>=', peer: 'redis' }, { field: 'final_exact', op: '==', value: true }] },
  'doc.cas.serial': { text: '≥ Redis Lua CAS in the same run',
    checks: [{ field: 'throughput_per_s', op: '>=', peer: 'redis' }] },
  'doc.cas.contended': { text: '≥ Redis CAS script in the same run, 16 contenders',
    checks: [{ field: 'throughput_per_s', op: '>=', peer: 'redis' }] },
  'server.start.empty': { text: '≤ 1 s from process start to healthy, empty data directory',
    checks: [{ field: 'p50_ms', op: '<=', value: 1000 }] },
  'server.start.kill9': { text: '≤ 1.5 s from process start to healthy after kill -9, nothing acknowledged lost',
    checks: [{ field: 'p50_ms', op: '<=', value: 1500 }, { field: 'acknowledged_lost', op: '==', value: 0 }] },
  'server.restart': { text: 'client-visible pause p99 ≤ 1.5 s with 100 clients, 0 failed requests, 0 lost',
    checks: [{ field: 'p99_ms', op: '<=', value: 1500 }, { field: 'failed_requests', op: '==', value: 0 }, { field: 'acknowledged_lost', op: '==', value: 0 }] },
  'cluster.failover': { text: 'kill -9 → first ack on a survivor p50 ≤ 1.5 s, max ≤ 2 s at the default settings, 0 lost, 0 duplicates',
    checks: [{ field: 'p50_ms', op: '<=', value: 1500 }, { field: 'max_ms', op: '<=', value: 2000 },
      { field: 'lost', op: '==', value: 0 }, { field: 'duplicates', op: '==', value: 0 }] },
  'cluster.upgrade': { text: '0 failed requests (outcome unknown counted apart), p99 ≤ 1 s during the roll, 0 lost, 0 duplicates',
    checks: [{ field: 'p99_ms', op: '<=', value: 1000 }, { field: 'failed_requests', op: '==', value: 0 },
      { field: 'lost', op: '==', value: 0 }, { field: 'duplicates', op: '==', value: 0 }] },
  'presence.propagate': { text: 'p50 ≤ 0.3 ms', checks: [{ field: 'p50_ms', op: '<=', value: 0.3 }] },
  'ws.storm': { text: 'connected clients\' RPC p99 during the storm ≤ 2× its idle value',
    checks: [{ field: 'storm_p99_over_idle', op: '<=', value: 2 }, { field: 'storm_p99_over_idle', op: '>=', value: 0 }] },
  'ws.max': { text: '≥ 50,000 sockets, 0 failures',
    checks: [{ field: 'peak', op: '>=', value: 50000 }, { field: 'failures', op: '==', value: 0 }] },
  'cold.log': { text: 'p50 ≤ 0.5 ms', checks: [{ field: 'p50_ms', op: '<=', value: 0.5 }] },
  'artifact.put.8m': { text: 'put ≥ 300 MB/s', all: true, checks: [{ field: 'mb_per_s', op: '>=', value: 300 }] },
  'artifact.get.8m': { text: 'get ≥ 1 GB/s (1,000 MB/s)', all: true, checks: [{ field: 'mb_per_s', op: '>=', value: 1000 }] },
  'artifact.multipart.64m': { text: '≥ 300 MB/s on both providers', all: true,
    checks: [{ field: 'mb_per_s', op: '>=', value: 300 }] },
};

/** Durability of each system's writes, as BENCH.md states it. */
export const DURABILITY = {
  'hypha-mesh': 'fsynced: acknowledged only after its group commit is on disk',
  redis: 'AOF appendfsync always: fsync before the reply (the like-for-like peer)',
  nats: 'JetStream as packaged here acknowledges before fsync (less durable than ours)',
};

export const SYSTEM_LABEL = { 'hypha-mesh': 'Hypha-Mesh', nats: 'NATS', redis: 'Redis' };
export const PEER_OPERATION = {
  nats: 'request/reply ↔ RPC; JetStream publish with ack ↔ append; ordered consumer ↔ replay; KV update with expected revision ↔ CAS',
  redis: 'XADD ↔ append; XRANGE ↔ read; INCRBY ↔ incr; WATCH/MULTI or a script ↔ CAS',
};
