import { Backoff, type BackoffOptions } from './backoff.js';
import { HyphaError, badRequest, unavailable } from './errors.js';
import { pack, unpack, utf8Length } from './framing.js';
import { checkInt, checkName, jsonText } from './names.js';
import { InFlightWindow } from './window.js';
import { Log } from './log.js';
import { Doc } from './doc.js';
import { Batch, type BatchOpResult, type BatchResult } from './batch.js';
import { Presence } from './presence.js';
import { Schedules } from './schedules.js';
import { Artifacts } from './artifacts.js';
import { CLOSE_CODES, RESTART_DELAY_MS, reconnectAfter, retryAfterFromReason, withJitter } from './close.js';
import type { ConnectionState, Hello, Limits, Permission, RequestOptions, Requester, Resumable } from './types.js';

/** A token, or a function the client asks for a fresh one (before expiry, and for every new socket). */
export type TokenSupplier = () => string | Promise<string>;

export interface ClientOptions {
  /** The token (`read`, `read_write` or `admin` of the workspace, or the root token), or a supplier of fresh ones. */
  token: string | TokenSupplier;
  /** How long connect() waits for the first hello (default 10,000 ms). */
  connectTimeoutMs?: number;
  /** A request's default timeout (default 30,000 ms). */
  requestTimeoutMs?: number;
  /** Reconnect when the socket ends (default true). */
  reconnect?: boolean;
  /** Requests made while reconnecting wait for the next socket instead of failing at once (default false). */
  waitForReconnect?: boolean;
  /** Reconnect delays (default 100 ms .. 5 s with jitter). */
  backoff?: BackoffOptions;
  /** Credit of each Log subscription (default 1000; the server caps it at its max_credit). */
  logCredit?: number;
  /** Presence heartbeat period in ms (default: the hello's heartbeat_ms). */
  heartbeatMs?: number;
  /** The WebSocket class (default: globalThis.WebSocket, else the `ws` package in Node 20). */
  WebSocket?: unknown;
  /** The fetch function for artifacts and refused upgrades (default: globalThis.fetch). */
  fetch?: typeof fetch;
  /**
   * Ask the server to record this socket's data writes (appends, Doc writes) in the workspace's
   * audit trail (`audit=writes` on the connect URL; docs/PROTOCOL.md). The operator's console does.
   * Default false.
   */
  auditWrites?: boolean;
}

/** What a provider's handler sees as `this`: who called, and the time left. */
export interface CallContext {
  from: string;
  service: string;
  method: string;
  timeoutMs: number;
}

export type Handler = (this: CallContext, ...args: any[]) => unknown;

export interface ServiceOptions {
  /** `workspace` (default: every client of the workspace) or `private` (only this client id). */
  visibility?: 'workspace' | 'private';
}

export interface ServiceInfo {
  service: string;
  providers: { client: string; session: number; visibility: string; methods: string[] }[];
}

export interface Registration {
  readonly service: string;
  /** Ends this registration (other providers of the service stay). */
  unregister(): Promise<boolean>;
}

export interface CallOptions {
  /** The call's timeout, sent as timeout_ms (default: the client's requestTimeoutMs). */
  timeoutMs?: number;
  /** Stop waiting: the promise rejects with the signal's reason (the provider is not told). */
  signal?: AbortSignal;
  waitForReconnect?: boolean;
}

interface Pending {
  id: number;
  op: string;
  text: string;
  safe: boolean;
  /**
   * It names a subscription id of the socket it was made on (`credit`, `unsubscribe`): it means
   * nothing on another socket (whose ids start again at 1 and may name another subscription), so
   * it is never held for, nor sent again on, a next socket.
   */
  bound: boolean;
  wait: boolean;
  sent: boolean;
  /** Timed out or aborted after it was sent: its answer only frees its place in the window. */
  abandoned: boolean;
  resolve(v: unknown): void;
  reject(e: unknown): void;
  onOk?: (ok: any) => void;
  timer?: ReturnType<typeof setTimeout>;
  /** When its timeout ends (performance.now() clock). */
  deadline?: number;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface ServiceEntry {
  name: string;
  handlers: Record<string, Handler>;
  visibility: 'workspace' | 'private';
}

const DEFAULT_LIMITS: Limits = {
  maxFrameBytes: 1_114_112, maxInFlight: 1024, maxCredit: 10_000, maxEntryBytes: 1_048_576,
  maxBatch: 1000, maxPage: 1000, maxDocBytes: 1_048_576, heartbeatMs: 5000,
};
const SILENCE_PING_MS = 2000;
const SILENCE_DEAD_MS = 5000;

type WsLike = {
  readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: any) => void) | null;
  onmessage: ((ev: any) => void) | null;
  onclose: ((ev: any) => void) | null;
  onerror: ((ev: any) => void) | null;
};

/**
 * A connection to one workspace: one multiplexed WebSocket carrying RPC, presence, Logs and
 * Docs (docs/PROTOCOL.md), plus the HTTP artifacts. It reconnects by itself and restores what it
 * had (services, presence, subscriptions); see docs/CLIENT-JS.md.
 */
export class HyphaClient {
  /** The workspace's artifacts (HTTP). */
  readonly artifacts: Artifacts;
  /** This client's presence entry and the workspace's presence list. */
  readonly presence: Presence;
  readonly logCredit: number;

  private readonly servers: string[];
  private serverIndex = 0;
  private readonly opts: Required<Pick<ClientOptions, 'connectTimeoutMs' | 'requestTimeoutMs' | 'reconnect' | 'waitForReconnect'>> & ClientOptions;
  private readonly backoff: Backoff;
  private WS: any;
  private socket: WsLike | null = null;
  private current: Hello | null = null;
  private token: string | null = null;
  private state: ConnectionState = 'connecting';
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly window = new InFlightWindow<Pending>(DEFAULT_LIMITS.maxInFlight);
  /** Requests to send when the next socket says hello (made while reconnecting, or safe ones that were in flight). */
  private readonly held: Pending[] = [];
  private outbox: string[] = [];
  private flushQueued = false;
  private readonly subs = new Map<number, (frame: Record<string, any>) => void>();
  private readonly subscriptions = new Set<Resumable>();
  private readonly provided = new Map<string, ServiceEntry>();
  private readonly stateListeners = new Set<(s: ConnectionState, detail?: unknown) => void>();
  private readonly errorListeners = new Set<(e: HyphaError) => void>();
  private closedForGood: HyphaError | null = null;
  private attempt = 0;
  private outageStart = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private silenceTimer: ReturnType<typeof setInterval> | null = null;
  /** The server's ping cadence for an idle socket (the hello's ping_interval_ms; 0: not told). */
  private pingIntervalMs = 0;
  private renewTimer: ReturnType<typeof setTimeout> | null = null;
  private lastReceived = 0;
  /** Since when the last socket ended with 1012 (0: not restarting): requests wait, attempts come soon. */
  private restartingSince = 0;
  private silencePingAt = 0;
  private firstHello: { resolve(): void; reject(e: unknown): void } | null = null;

  private constructor(servers: string[], opts: ClientOptions) {
    this.servers = servers;
    this.opts = {
      connectTimeoutMs: 10_000, requestTimeoutMs: 30_000, reconnect: true, waitForReconnect: false, ...opts,
    };
    this.backoff = new Backoff(opts.backoff);
    this.logCredit = Math.max(1, Math.floor(opts.logCredit ?? 1000));
    const fetchFn = opts.fetch ?? globalThis.fetch?.bind(globalThis);
    this.artifacts = new Artifacts(() => this.workspaceUrl(), () => this.currentToken(), fetchFn);
    this.presence = new Presence(this.requester(), () => this.opts.heartbeatMs ?? this.current?.limits.heartbeatMs ?? 5000);
  }

  /**
   * Connects to a workspace: `url` is its URL (`http://host:8080/v1/workspaces/demo`; `https://`
   * or `ws(s)://` too), or several of them (servers of one cluster) tried in turn. Resolves on the
   * first hello; rejects with the server's refusal (`unauthorized`, `forbidden`, `not_found`, …).
   */
  static async connect(url: string | readonly string[], options: ClientOptions | string): Promise<HyphaClient> {
    const opts: ClientOptions = typeof options === 'string' ? { token: options } : options;
    const urls = (typeof url === 'string' ? [url] : [...url]).map(workspaceBase);
    if (urls.length === 0) throw badRequest('no server URL given');
    const ws = new Set(urls.map((u) => u.slice(u.lastIndexOf('/') + 1)));
    if (ws.size !== 1) throw badRequest(`the URLs name different workspaces: ${[...ws].join(', ')}`);
    if (opts.token === undefined || opts.token === null || opts.token === '') throw badRequest('a token is needed');
    const c = new HyphaClient(urls, opts);
    await c.start();
    return c;
  }

  // ---------------------------------------------------------------- public API

  /** The current socket's hello (null while reconnecting). */
  get info(): Hello | null { return this.current; }
  get connectionState(): ConnectionState { return this.state; }
  /** The workspace's name. */
  get workspace(): string { const u = this.workspaceUrl(); return u.slice(u.lastIndexOf('/') + 1); }

  /** Listens to state changes: connecting, connected, reconnecting, restored, closed. Returns the remover. */
  onState(fn: (state: ConnectionState, detail?: unknown) => void): () => void {
    this.stateListeners.add(fn);
    return () => this.stateListeners.delete(fn);
  }

  /** Listens to errors nothing else receives: an uncorrelated `{"re":null}` error, a failed restore, the close for good. */
  onError(fn: (e: HyphaError) => void): () => void {
    this.errorListeners.add(fn);
    return () => this.errorListeners.delete(fn);
  }

  /** A Log of the workspace (nothing is sent until an operation). */
  log(name: string): Log { return new Log(this.requester(), checkName('Log', name)); }
  /** A Doc of the workspace. */
  doc(name: string): Doc { return new Doc(this.requester(), checkName('Doc', name)); }

  /**
   * Applies `batch` all or nothing, in one commit (docs/PROTOCOL.md, `batch`). Rejects with the
   * first failing operation's error (its `details.op` is the operation's index); nothing was applied.
   * Sent again after a reconnect only when it has a key.
   */
  async batch(batch: Batch, opts?: RequestOptions): Promise<BatchResult> {
    if (batch.ops.length === 0) throw badRequest('a batch needs at least one operation');
    const f: Record<string, unknown> = { to: 'ws', op: 'batch', ops: batch.ops };
    if (batch.idempotencyKey !== undefined) f.key = batch.idempotencyKey;
    const ok = await this.request<{ results: BatchOpResult[]; duplicate?: boolean }>(f, batch.idempotencyKey !== undefined, opts);
    return { results: ok.results, duplicate: ok.duplicate === true };
  }
  /** The workspace's schedules (docs/PROTOCOL.md#schedules-on-ws). */
  schedules(): Schedules { return new Schedules(this.requester()); }

  /** The round trip through the server, in ms. */
  async ping(opts?: RequestOptions): Promise<number> {
    const t0 = now();
    await this.request({ op: 'ping' }, true, opts);
    return now() - t0;
  }

  /** Calls `service.method(...args)` on a provider; resolves with its answer. */
  async call<T = unknown>(service: string, method: string, args: readonly unknown[] | unknown = [], opts: CallOptions = {}): Promise<T> {
    checkName('service', service);
    checkName('method', method);
    const timeoutMs = opts.timeoutMs ?? this.opts.requestTimeoutMs;
    checkInt('timeoutMs', timeoutMs, 1);
    // the server answers timeout itself at timeout_ms; the local bound only covers a lost socket
    return this.request<T>({ to: 'ws', op: 'call', service, method, args, timeout_ms: timeoutMs }, false,
      { timeoutMs: timeoutMs + 2000, signal: opts.signal, waitForReconnect: opts.waitForReconnect });
  }

  /**
   * Offers `service` with one handler per method: `register('calc', { add: (a, b) => a + b })`.
   * A handler gets the call's arguments (an array is spread), `this` is the CallContext, and it may
   * return a value or a promise; a thrown HyphaError reaches the caller with its code, anything
   * else as `application`. Restored after every reconnect.
   */
  async register(service: string, handlers: Record<string, Handler>, opts: ServiceOptions = {}): Promise<Registration> {
    checkName('service', service);
    if (handlers === null || typeof handlers !== 'object') throw badRequest('handlers must be an object of functions');
    for (const [m, h] of Object.entries(handlers)) {
      checkName('method', m);
      if (typeof h !== 'function') throw badRequest(`handler of '${m}' is not a function`);
    }
    const visibility = opts.visibility ?? 'workspace';
    if (visibility !== 'workspace' && visibility !== 'private') throw badRequest(`visibility must be 'workspace' or 'private': ${visibility}`);
    const entry: ServiceEntry = { name: service, handlers: { ...handlers }, visibility };
    await this.request(this.registerFrame(entry), true);
    this.provided.set(service, entry);
    return {
      service,
      unregister: async () => {
        if (this.provided.get(service) === entry) this.provided.delete(service);
        const ok = await this.request<{ removed: boolean }>({ to: 'ws', op: 'unregister', service }, true);
        return ok.removed;
      },
    };
  }

  /** The workspace's service registry. */
  async services(opts?: RequestOptions): Promise<ServiceInfo[]> {
    const ok = await this.request<{ services: ServiceInfo[] }>({ to: 'ws', op: 'services' }, true, opts);
    return ok.services;
  }

  /** Closes the socket (code 1000) and ends everything: pending requests fail with unavailable. */
  async close(): Promise<void> {
    if (this.closedForGood) return;
    this.finish(unavailable('the client was closed'), true);
  }

  // ---------------------------------------------------------------- requests

  private requester(): Requester {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    return {
      request: (f, safe, o, onOk) => self.request(f, safe, o, onOk),
      fire: (f) => { self.request(f, true, { timeoutMs: self.opts.requestTimeoutMs }).catch(() => {}); },
      addSubscription: (s) => { self.subscriptions.add(s); },
      removeSubscription: (s) => { self.subscriptions.delete(s); },
      bindSub: (id, h) => { self.subs.set(id, h); },
      unbindSub: (id) => { self.subs.delete(id); },
      hello: () => self.current,
      get logCredit() { return self.logCredit; },
    };
  }

  /**
   * Sends one request and resolves with its `ok` (or rejects with its `err` as a HyphaError).
   * `safe`: it may be sent again on a new socket if this one ends before the answer. `onOk` runs
   * synchronously as the answer is read, before the next frame of its message (subscriptions).
   */
  request<T = any>(frame: Record<string, unknown>, safe: boolean, opts: RequestOptions = {}, onOk?: (ok: any) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closedForGood) {
        reject(this.closedForGood);
        return;
      }
      const id = this.nextId++;
      let body: string;
      try {
        body = jsonText('request', frame);
      } catch (e) {
        reject(e);
        return;
      }
      const text = body === '{}' ? `{"id":${id}}` : `{"id":${id},${body.slice(1)}`;
      const max = (this.current?.limits ?? DEFAULT_LIMITS).maxFrameBytes;
      if (text.length > max / 3 && utf8Length(text) > max) {
        reject(new HyphaError('too_large', `the request is ${utf8Length(text)} bytes; the server takes messages of at most ${max} bytes (max_frame_bytes); nothing was sent`, { max_frame_bytes: max }));
        return;
      }
      const bound = frame.op === 'credit' || frame.op === 'unsubscribe';
      if (bound && !this.current) {
        // its subscription id was the ended socket's: the new socket restores the subscription itself
        reject(unavailable(`'${String(frame.op)}' names a subscription of a socket that ended; not sent`));
        return;
      }
      const p: Pending = {
        id, op: String(frame.op), text, safe: safe && !bound, bound, sent: false, abandoned: false,
        wait: opts.waitForReconnect ?? this.opts.waitForReconnect,
        resolve: resolve as (v: unknown) => void, reject, onOk, signal: opts.signal,
      };
      if (opts.signal?.aborted) {
        reject(opts.signal.reason);
        return;
      }
      const timeoutMs = opts.timeoutMs ?? this.opts.requestTimeoutMs;
      p.timer = setTimeout(() => this.giveUp(p, new HyphaError('timeout', `no answer to '${p.op}' within ${timeoutMs} ms`)), timeoutMs);
      p.deadline = now() + timeoutMs;
      if (opts.signal) {
        p.onAbort = () => this.giveUp(p, opts.signal!.reason);
        opts.signal.addEventListener('abort', p.onAbort, { once: true });
      }
      if (!this.current) {
        if (!p.wait && this.state !== 'connecting' && this.restartingSince === 0) {
          this.settle(p);
          reject(unavailable(`not connected to ${this.workspaceUrl()} (${this.state}); '${p.op}' was not sent`));
          return;
        }
        this.held.push(p);
        return;
      }
      this.admit(p);
    });
  }

  private admit(p: Pending): void {
    this.pending.set(p.id, p);
    const verdict = this.window.offer(p);
    if (verdict === 'send') this.put(p);
    else if (verdict === 'full') {
      this.pending.delete(p.id);
      this.settle(p);
      p.reject(new HyphaError('limit', `more than ${this.window.maxQueued} requests wait for the server's in-flight window; '${p.op}' was not sent`));
    }
  }

  private put(p: Pending): void {
    p.sent = true;
    this.outbox.push(p.text);
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => this.flush());
    }
  }

  private flush(): void {
    this.flushQueued = false;
    const s = this.socket;
    if (!s || s.readyState !== 1 || this.outbox.length === 0) return;
    const frames = this.outbox;
    this.outbox = [];
    for (const m of pack(frames)) s.send(m);
  }

  /** A request's own timeout or abort. */
  private giveUp(p: Pending, error: unknown): void {
    if (p.abandoned) return;
    this.settle(p);
    const i = this.held.indexOf(p);
    if (i >= 0) this.held.splice(i, 1);
    if (!p.sent && this.window.remove(p)) this.pending.delete(p.id);
    else if (p.sent) p.abandoned = true; // its place in the server's window is freed by its answer
    else this.pending.delete(p.id);
    p.reject(error);
  }

  private settle(p: Pending): void {
    if (p.timer) clearTimeout(p.timer);
    if (p.onAbort && p.signal) p.signal.removeEventListener('abort', p.onAbort);
    p.timer = undefined;
  }

  private answered(re: number, frame: Record<string, any>): void {
    const p = this.pending.get(re);
    if (!p) return;
    this.pending.delete(re);
    for (const next of this.window.release()) this.put(next);
    if (p.abandoned) return;
    if ('err' in frame && frame.err?.code === 'unavailable' && frame.err?.not_applied === true && this.sendAgainLater(p)) return;
    p.abandoned = true;
    this.settle(p);
    if ('err' in frame) p.reject(HyphaError.fromWire(frame.err));
    else {
      try {
        p.onOk?.(frame.ok);
      } catch (e) {
        p.reject(e);
        return;
      }
      p.resolve(frame.ok);
    }
  }

  /**
   * An `unavailable` answer with `not_applied` (the object or workspace was moving or reloading, the
   * server shutting down): the request did not run, so it goes again, whatever its kind, after a
   * short jittered pause (as after a 1012), on the socket then live or the next one. False when its
   * timeout would end first: the caller gets the error.
   */
  private sendAgainLater(p: Pending): boolean {
    const delay = RESTART_DELAY_MS.min + Math.floor(Math.random() * (RESTART_DELAY_MS.max - RESTART_DELAY_MS.min + 1));
    if (this.closedForGood || p.bound || p.deadline === undefined || p.deadline - now() <= delay) return false;
    p.sent = false;
    setTimeout(() => {
      if (p.timer === undefined || this.closedForGood) return; // timed out, aborted or failed meanwhile
      if (this.current) this.admit(p);
      else this.held.push(p);
    }, delay);
    return true;
  }

  // ---------------------------------------------------------------- the socket

  private async start(): Promise<void> {
    this.WS = await webSocketClass(this.opts.WebSocket);
    this.emit('connecting');
    const first = new Promise<void>((resolve, reject) => { this.firstHello = { resolve, reject }; });
    // each server is tried once, each attempt bounded by connectTimeoutMs (open): the first connect
    // as a whole by that many attempts
    const total = this.opts.connectTimeoutMs * Math.max(1, this.servers.length);
    const timer = setTimeout(() => this.failFirst(new HyphaError('timeout', `no hello from ${this.workspaceUrl()} within ${total} ms`)), total);
    this.open();
    try {
      await first;
    } finally {
      clearTimeout(timer);
    }
  }

  private failFirst(e: HyphaError): void {
    const f = this.firstHello;
    if (!f) return;
    this.firstHello = null;
    this.finish(e, true);
    f.reject(e);
  }

  private workspaceUrl(): string { return this.servers[this.serverIndex % this.servers.length]!; }

  private async currentToken(): Promise<string> {
    if (typeof this.opts.token === 'function') {
      if (this.token) return this.token;
      this.token = String(await this.opts.token());
    } else this.token = this.opts.token;
    return this.token;
  }

  private async freshToken(): Promise<string> {
    if (typeof this.opts.token === 'function') this.token = String(await this.opts.token());
    else this.token = this.opts.token;
    return this.token;
  }

  private async open(): Promise<void> {
    if (this.closedForGood) return;
    const base = this.workspaceUrl();
    let token: string;
    try {
      token = await this.freshToken();
    } catch (e) {
      this.lost(null, 1006, `the token supplier failed: ${(e as Error).message}`, false);
      return;
    }
    if (this.closedForGood) return;
    const url = base.replace(/^http/, 'ws') + '/connect?access_token=' + encodeURIComponent(token)
      + (this.opts.auditWrites ? '&audit=writes' : '');
    let s: WsLike;
    try {
      s = new this.WS(url) as WsLike;
    } catch (e) {
      this.failFirst(badRequest(`cannot open a WebSocket to ${base}: ${(e as Error).message}`));
      return;
    }
    this.socket = s;
    let opened = false;
    // one attempt (TCP, upgrade, hello) is bounded, as the JVM client's connectTimeout: a server that
    // accepts and then says nothing (frozen, overloaded) must not hold the client on it for ever
    const attemptTimer = setTimeout(() => {
      if (this.socket === s && this.current === null) this.attemptTimedOut(s, base);
    }, this.opts.connectTimeoutMs);
    s.onopen = () => { opened = true; this.lastReceived = now(); };
    s.onmessage = (ev: { data: unknown }) => {
      if (this.socket !== s) return;
      this.lastReceived = now();
      this.silencePingAt = 0;
      if (typeof ev.data !== 'string') return;
      this.onMessage(s, ev.data, base);
    };
    s.onerror = () => {};
    s.onclose = (ev: { code: number; reason: string }) => {
      clearTimeout(attemptTimer);
      if (this.socket !== s) return;
      this.lost(s, ev.code || 1006, ev.reason || '', opened);
    };
  }

  /** No hello within connectTimeoutMs on this attempt: give it up and go on to the next server. */
  private attemptTimedOut(s: WsLike, base: string): void {
    const why = `no hello from ${base} within ${this.opts.connectTimeoutMs} ms`;
    this.socket = null;
    try { s.close(); } catch { /* already closing */ }
    if (this.closedForGood) return;
    if (this.firstHello) {
      // the first connect tries each server once
      if (this.attempt + 1 < this.servers.length) {
        this.attempt++;
        this.serverIndex++;
        this.open();
        return;
      }
      this.failFirst(new HyphaError('timeout', why));
      return;
    }
    // a reconnect: the next attempt goes to the next server when there are several (retry)
    this.lost(null, 1006, why, false, true);
  }

  private onMessage(s: WsLike, text: string, base: string): void {
    let frames: unknown[];
    try {
      frames = unpack(text);
    } catch {
      this.report(new HyphaError('internal', `the server sent a message that is not JSON: ${text.slice(0, 200)}`));
      return;
    }
    for (const f of frames) {
      if (this.socket !== s) return;
      if (f === null || typeof f !== 'object') continue;
      const frame = f as Record<string, any>;
      if (typeof frame.ev === 'number') this.subs.get(frame.ev)?.(frame);
      else if (typeof frame.re === 'number') this.answered(frame.re, frame);
      else if ('re' in frame && frame.re === null) this.report(HyphaError.fromWire(frame.err));
      else if (typeof frame.call === 'number') this.onCall(frame);
      else if (frame.hello) this.onHello(s, frame.hello, base);
    }
  }

  private onHello(s: WsLike, h: Record<string, any>, base: string): void {
    const l = h.limits ?? {};
    this.current = {
      protocol: h.protocol, session: h.session, workspace: h.workspace, client: h.client,
      permission: h.permission as Permission, expiresAt: h.expires_at ?? null, server: base,
      limits: {
        maxFrameBytes: l.max_frame_bytes ?? DEFAULT_LIMITS.maxFrameBytes,
        maxInFlight: l.max_in_flight ?? DEFAULT_LIMITS.maxInFlight,
        maxCredit: l.max_credit ?? DEFAULT_LIMITS.maxCredit,
        maxEntryBytes: l.max_entry_bytes ?? DEFAULT_LIMITS.maxEntryBytes,
        maxBatch: l.max_batch ?? DEFAULT_LIMITS.maxBatch,
        maxPage: l.max_page ?? DEFAULT_LIMITS.maxPage,
        maxDocBytes: l.max_doc_bytes ?? DEFAULT_LIMITS.maxDocBytes,
        heartbeatMs: l.heartbeat_ms ?? DEFAULT_LIMITS.heartbeatMs,
      },
    };
    this.window.limit = this.current.limits.maxInFlight;
    this.pingIntervalMs = typeof l.ping_interval_ms === 'number' && l.ping_interval_ms > 0 ? l.ping_interval_ms : 0;
    this.restartingSince = 0;
    const reconnected = this.firstHello === null;
    this.attempt = 0;
    this.startSilenceWatch(s);
    this.scheduleRenewal();
    this.emit('connected', this.current);
    if (!reconnected) {
      const f = this.firstHello!;
      this.firstHello = null;
      this.sendHeld();
      f.resolve();
      return;
    }
    // restore first (services, presence, subscriptions), then what waited for this socket
    const restoring: Promise<unknown>[] = [];
    for (const e of this.provided.values()) restoring.push(this.request(this.registerFrame(e), true));
    restoring.push(this.presence.restore());
    for (const sub of this.subscriptions) restoring.push(sub.restore());
    this.sendHeld();
    Promise.allSettled(restoring).then((results) => {
      for (const r of results) if (r.status === 'rejected') this.report(asHyphaError(r.reason, 'restore failed'));
      if (this.socket === s && this.current) this.emit('restored');
    });
  }

  private sendHeld(): void {
    const held = this.held.splice(0);
    for (const p of held) this.admit(p);
  }

  /** The socket ended (a close frame, or none: 1006). */
  private lost(s: WsLike | null, code: number, reason: string, opened: boolean, timedOut = false): void {
    if (s && this.socket !== s) return;
    this.socket = null;
    const hadHello = this.current !== null;
    this.current = null;
    this.stopTimers();
    this.subs.clear();
    for (const sub of this.subscriptions) sub.detach();
    this.presence.detach();
    // what was on the wire: safe requests wait for the next socket, the rest have an unknown outcome
    const why = code === 1006
      ? `the connection to ${this.workspaceUrl()} ended without a close frame`
      : `${this.workspaceUrl()} closed the socket (${code}${reason ? ' ' + reason : ''})`;
    const how = code === 1006 ? 'backoff' : reconnectAfter(code);
    // after a 1012 the server answered all it had started: what has no answer was not applied
    const notApplied = how === 'soon';
    if (notApplied && this.restartingSince === 0) this.restartingSince = now();
    const queued = this.window.reset();
    // what waits here to be written was meant for the socket that ended: its requests go again
    // from `held` below (left here as well, a request put while the close frame arrived in the same
    // read went out twice on the next socket and ran twice: restart.test.mjs), and answers to its
    // calls have no one to take them
    this.outbox = [];
    const again: Pending[] = [];
    for (const p of [...this.pending.values(), ...queued]) {
      if (p.abandoned) continue;
      if (p.bound) {
        // whatever happened to it, its subscription id means nothing on the next socket
        this.settle(p);
        p.abandoned = true;
        p.reject(unavailable(`${why}; '${p.op}' named a subscription of that socket`, { close_code: code }));
        continue;
      }
      if (again.includes(p)) continue;
      if (!p.sent || p.safe || notApplied) { p.sent = false; again.push(p); continue; }
      this.settle(p);
      p.abandoned = true;
      p.reject(unavailable(`${why}; outcome unknown`, { close_code: code }));
    }
    this.pending.clear();
    again.sort((a, b) => a.id - b.id);
    this.held.unshift(...again);

    if (this.closedForGood) return;
    // "moved" first: a browser may report a socket closed right after its upgrade as never opened
    if (code === 4307 && /^https?:\/\//.test(reason)) {
      this.moveTo(reason);
      if (hadHello) this.emit('reconnecting', { code, reason });
      this.open();
      return;
    }
    if (!hadHello && !opened && !timedOut) {
      this.refused(code, reason);
      return;
    }
    if (how === 'never' && code !== 1000 && !(code === 4001 && typeof this.opts.token === 'function' && hadHello)) {
      this.finish(new HyphaError(CLOSE_CODES[code]!.error, `${why}; not reconnecting`, { close_code: code }), false);
      return;
    }
    if (!hadHello && this.firstHello) {
      // a 1013 that says when to come back is obeyed on the first connect too, within its timeout
      const asked = code === 1013 ? retryAfterFromReason(reason) : null;
      if (asked !== null) {
        this.reconnectTimer = setTimeout(() => { this.reconnectTimer = null; this.open(); }, withJitter(asked));
        return;
      }
      this.failFirst(unavailable(`${why} before its hello`, { close_code: code }));
      return;
    }
    // a 1013 that says when to come back (retry_after_ms in its reason) is obeyed
    this.retry(code, reason, code === 1013 ? retryAfterFromReason(reason) : null);
  }

  /** An upgrade that failed: ask the same URL over HTTP why (the server runs the same checks). */
  private async refused(code: number, reason: string): Promise<void> {
    const base = this.workspaceUrl();
    let error: HyphaError | null = null;
    try {
      const fetchFn = this.opts.fetch ?? globalThis.fetch;
      // bounded like the attempt itself: a server that does not answer must not hold the client
      const signal = typeof AbortSignal !== 'undefined' && 'timeout' in AbortSignal
        ? AbortSignal.timeout(this.opts.connectTimeoutMs) : undefined;
      const res = await fetchFn(base + '/connect', { headers: { Authorization: `Bearer ${this.token ?? ''}` }, signal });
      const body = await res.json().catch(() => null);
      if (res.status !== 400 || body?.code !== 'bad_request') error = HyphaError.fromWire(body ?? { code: 'unavailable', message: `HTTP ${res.status}` });
    } catch (e) {
      error = unavailable(`cannot reach ${base}: ${(e as Error).message}`);
    }
    if (this.closedForGood) return;
    const fatal = error && ['unauthorized', 'forbidden', 'not_found', 'bad_request'].includes(error.code);
    // a server that says when to come back (admission control's 503, retry_after_ms) is waited for,
    // with jitter; on the first connect within connectTimeoutMs (its timer still runs)
    const asked = !fatal && error ? error.retryAfterMs : null;
    if (this.firstHello && asked !== null) {
      this.reconnectTimer = setTimeout(() => { this.reconnectTimer = null; this.open(); }, withJitter(asked));
      return;
    }
    if (this.firstHello) {
      // the first connect tries each server once
      if (!fatal && this.attempt + 1 < this.servers.length) {
        this.attempt++;
        this.serverIndex++;
        this.open();
        return;
      }
      this.failFirst(error ?? unavailable(`the upgrade to ${base} failed (${code} ${reason})`));
      return;
    }
    if (fatal) {
      this.finish(error!, false);
      return;
    }
    this.retry(code, reason, asked);
  }

  /** Schedules the next attempt; `askedMs` (a 503's or a 1013's retry_after_ms): not before it, plus jitter. */
  private retry(code: number, reason: string, askedMs: number | null = null): void {
    if (!this.opts.reconnect) {
      this.finish(unavailable(`the socket to ${this.workspaceUrl()} ended (${code}${reason ? ' ' + reason : ''}) and reconnect is off`, { close_code: code }), false);
      return;
    }
    if (this.attempt === 0) this.outageStart = now();
    const restarting = this.restartingSince > 0 && now() - this.restartingSince < RESTART_DELAY_MS.patience;
    if (this.restartingSince > 0 && !restarting) this.restartingSince = 0; // an ordinary outage from now on
    const computed = restarting
      ? RESTART_DELAY_MS.min + Math.floor(Math.random() * (RESTART_DELAY_MS.max - RESTART_DELAY_MS.min + 1))
      : this.backoff.delayMs(this.attempt, now() - this.outageStart);
    const delay = askedMs === null ? computed : Math.max(computed, withJitter(askedMs));
    if ((restarting && this.attempt === 0) || (this.attempt > 0 && this.servers.length > 1)) this.serverIndex++;
    this.attempt++;
    if (this.state !== 'reconnecting') this.emit('reconnecting', { code, reason });
    this.reconnectTimer = setTimeout(() => { this.reconnectTimer = null; this.open(); }, delay);
  }

  private moveTo(base: string): void {
    const ws = this.workspace;
    const target = base.replace(/\/+$/, '') + '/v1/workspaces/' + ws;
    let i = this.servers.indexOf(target);
    if (i < 0) { this.servers.push(target); i = this.servers.length - 1; }
    this.serverIndex = i;
  }

  private finish(error: HyphaError, byUs: boolean): void {
    if (this.closedForGood) return;
    this.closedForGood = error;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.stopTimers();
    const s = this.socket;
    this.socket = null;
    this.current = null;
    if (s) { try { s.close(1000, byUs ? 'client closed' : undefined); } catch { /* already closing */ } }
    for (const p of [...this.pending.values(), ...this.held]) {
      if (p.abandoned) continue;
      p.abandoned = true;
      this.settle(p);
      p.reject(error);
    }
    this.pending.clear();
    this.held.length = 0;
    this.outbox = [];
    this.window.reset();
    for (const sub of this.subscriptions) sub.end(byUs ? undefined : error);
    this.subscriptions.clear();
    this.presence.end();
    this.emit('closed', error);
    if (!byUs) this.report(error);
  }

  private stopTimers(): void {
    if (this.silenceTimer) clearInterval(this.silenceTimer);
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.silenceTimer = null;
    this.renewTimer = null;
  }

  /** A socket silent while answers are owed is pinged after 2 s and taken as dead 5 s after the ping. */
  private startSilenceWatch(s: WsLike): void {
    if (this.silenceTimer) clearInterval(this.silenceTimer);
    this.lastReceived = now();
    this.silenceTimer = setInterval(() => {
      if (this.socket !== s) return;
      const t = now();
      if (this.silencePingAt > 0 && t - this.silencePingAt > SILENCE_DEAD_MS) {
        try { s.close(4000, 'no answer to a ping'); } catch { /* ignore */ }
        this.lost(s, 1006, 'silent', true);
        return;
      }
      // answers owed and 2 s of silence, or more silence than the server's pings of an idle socket
      // leave (a client that only subscribes would not notice a frozen server otherwise; a page
      // cannot see those pings, so an idle page sends one ping of its own per interval)
      const pingMs = this.pingIntervalMs;
      const overdue = pingMs > 0 && t - this.lastReceived > pingMs + SILENCE_PING_MS;
      if (this.silencePingAt === 0 && (overdue || (this.pending.size > 0 && t - this.lastReceived > SILENCE_PING_MS))) {
        this.silencePingAt = t;
        this.request({ op: 'ping' }, true, { timeoutMs: SILENCE_DEAD_MS + 1000 }).catch(() => {});
      }
    }, 500);
    (this.silenceTimer as any).unref?.();
  }

  /** With a token supplier, a fresh token is presented on the live socket (op auth) ahead of expiry. */
  private scheduleRenewal(): void {
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.renewTimer = null;
    const exp = this.current?.expiresAt;
    if (typeof this.opts.token !== 'function' || !exp) return;
    const left = exp - Date.now();
    const ahead = Math.max(1000, Math.min(60_000, left / 5));
    this.renewTimer = setTimeout(() => this.renew(), Math.max(0, left - ahead));
    (this.renewTimer as any).unref?.();
  }

  private async renew(): Promise<void> {
    try {
      const token = await this.freshToken();
      const ok = await this.request<{ expires_at: number | null; permission: Permission }>({ op: 'auth', token }, true);
      if (this.current) {
        this.current = { ...this.current, expiresAt: ok.expires_at, permission: ok.permission };
        this.scheduleRenewal();
      }
    } catch (e) {
      this.report(asHyphaError(e, 'token renewal failed'));
      if (this.current && this.current.expiresAt && this.current.expiresAt - Date.now() > 2000) {
        this.renewTimer = setTimeout(() => this.renew(), 1000);
      }
    }
  }

  // ---------------------------------------------------------------- provider side

  private registerFrame(e: ServiceEntry): Record<string, unknown> {
    return { to: 'ws', op: 'register', service: e.name, methods: Object.keys(e.handlers), visibility: e.visibility };
  }

  private onCall(frame: Record<string, any>): void {
    const s = this.socket;
    const answer = (body: Record<string, unknown>) => {
      if (this.socket !== s || !s) return;
      let text: string;
      try {
        text = JSON.stringify({ 're-call': frame.call, ...body });
      } catch (e) {
        text = JSON.stringify({ 're-call': frame.call, err: { code: 'application', message: `the handler's answer is not JSON: ${(e as Error).message}` } });
      }
      this.outbox.push(text);
      if (!this.flushQueued) { this.flushQueued = true; queueMicrotask(() => this.flush()); }
    };
    const entry = this.provided.get(frame.service);
    const h = entry?.handlers[frame.method];
    if (!h) {
      answer({ err: { code: 'not_found', message: `service '${frame.service}' has no method '${frame.method}' here` } });
      return;
    }
    const ctx: CallContext = { from: frame.from, service: frame.service, method: frame.method, timeoutMs: frame.timeout_ms };
    const args = Array.isArray(frame.args) ? frame.args : [frame.args];
    Promise.resolve()
      .then(() => h.apply(ctx, args))
      .then((v) => answer({ ok: v === undefined ? null : v }),
        (e) => answer({ err: e instanceof HyphaError ? e.toWire() : { code: 'application', message: String(e?.message ?? e) } }));
  }

  // ---------------------------------------------------------------- listeners

  private emit(state: ConnectionState, detail?: unknown): void {
    this.state = state;
    for (const fn of this.stateListeners) {
      try { fn(state, detail); } catch { /* a listener's fault is its own */ }
    }
  }

  private report(e: HyphaError): void {
    if (this.errorListeners.size === 0) return;
    for (const fn of this.errorListeners) {
      try { fn(e); } catch { /* ignore */ }
    }
  }
}

function now(): number {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}

function asHyphaError(e: unknown, what: string): HyphaError {
  return e instanceof HyphaError ? e : new HyphaError('internal', `${what}: ${(e as Error)?.message ?? e}`);
}

/** `http(s)://host/v1/workspaces/NAME` from what the caller gave (http, https, ws, wss; a trailing /connect or / dropped). */
export function workspaceBase(url: string): string {
  if (typeof url !== 'string') throw badRequest(`a server URL must be a string: ${typeof url}`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw badRequest(`not a URL: ${JSON.stringify(url)}`);
  }
  const scheme = { 'http:': 'http:', 'https:': 'https:', 'ws:': 'http:', 'wss:': 'https:' }[u.protocol];
  if (!scheme) throw badRequest(`a server URL is http, https, ws or wss: ${url}`);
  const path = u.pathname.replace(/\/+$/, '').replace(/\/connect$/, '');
  const m = /^(.*\/v1\/workspaces)\/([^/]+)$/.exec(path);
  if (!m) throw badRequest(`a workspace URL ends with /v1/workspaces/<name>: ${url}`);
  checkName('workspace', decodeURIComponent(m[2]!));
  return `${scheme}//${u.host}${m[1]}/${m[2]}`;
}

async function webSocketClass(given: unknown): Promise<any> {
  if (given) return given;
  const g = (globalThis as any).WebSocket;
  if (g) return g;
  const name = 'ws'; // kept out of bundlers' sight: browsers never load it
  try {
    const mod: any = await import(/* @vite-ignore */ name);
    return mod.WebSocket ?? mod.default;
  } catch {
    throw new HyphaError('unavailable', "no WebSocket here: Node 20 needs the 'ws' package (npm install ws), Node 22+ and browsers have one built in");
  }
}
