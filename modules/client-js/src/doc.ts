import { badRequest } from './errors.js';
import { checkInt, checkPointer } from './names.js';
import type { RequestOptions, Requester, Resumable } from './types.js';

export interface DocValue<T = unknown> {
  version: number;
  value: T;
  /** When the Doc expires (epoch ms), present only when it has an expiry (`ttlMs`). */
  expiresAt?: number;
}

/** Options of `put`, `cas` and `patch`: `ttlMs` gives the Doc an expiry, counted from the write. */
export type WriteOptions = RequestOptions & { ttlMs?: number };

function withTtl(f: Record<string, unknown>, opts?: WriteOptions): Record<string, unknown> {
  if (opts?.ttlMs !== undefined) f.ttl_ms = checkInt('ttlMs', opts.ttlMs, 1);
  return f;
}

/** A point of a Doc's history: a version, or a time (epoch millis of the server's clock). */
export type DocPoint = { version: number; at?: undefined } | { at: number | Date; version?: undefined };

/** The answer of `restore` and `fork`: the new version and the version whose value it took. */
export interface DocRestore {
  version: number;
  fromVersion: number;
}

function docPoint(f: Record<string, unknown>, p: DocPoint): Record<string, unknown> {
  if (p.version !== undefined && p.at === undefined) f.version = checkInt('version', p.version);
  else if (p.at !== undefined && p.version === undefined) f.at = checkInt('at', p.at instanceof Date ? p.at.getTime() : p.at);
  else throw badRequest('name the point with exactly one of version and at');
  return f;
}

export interface Increment {
  /** The new number. */
  value: number;
  version: number;
}

/** One change, as a subscription sees it; `snapshot` after a reconnect when something changed meanwhile. */
export type DocEvent =
  | { op: 'put' | 'cas' | 'snapshot' | 'restore' | 'fork'; version: number; value: unknown }
  | { op: 'incr' | 'patch'; version: number; path: string; value: unknown }
  | { op: 'deleted'; version: 0; value: null }
  /** The Doc's expiry passed: it is gone; the subscription goes on (the next write is version 1). */
  | { op: 'expired'; version: 0; value: null };

/** A Doc of the workspace (docs/PROTOCOL.md#docs-docname): one JSON value with a version. */
export class Doc {
  private readonly to: string;

  constructor(private readonly rq: Requester, readonly name: string) {
    this.to = 'doc:' + name;
  }

  /** The value and version (version 0 and null for a Doc never written). */
  async get<T = unknown>(opts?: RequestOptions): Promise<DocValue<T>> {
    const ok = await this.rq.request<{ version: number; value: T; expires_at?: number }>({ to: this.to, op: 'get' }, true, opts);
    const v: DocValue<T> = { version: ok.version, value: ok.value };
    if (ok.expires_at !== undefined) v.expiresAt = ok.expires_at;
    return v;
  }

  /** Replaces the value; resolves with the new version. */
  async put(value: unknown, opts?: WriteOptions): Promise<number> {
    if (value === undefined) throw badRequest('value is required (null is a value; undefined is not)');
    // without ttlMs a put removes any expiry (it replaces the value and its lifetime)
    const ok = await this.rq.request<{ version: number }>(withTtl({ to: this.to, op: 'put', value }, opts), false, opts);
    return ok.version;
  }

  /**
   * Replaces the value only if the version is still `version` (0: create only if absent).
   * Otherwise rejects with `conflict`, whose details carry the current `version` and `value`.
   */
  async cas(version: number, value: unknown, opts?: WriteOptions): Promise<number> {
    checkInt('version', version);
    if (value === undefined) throw badRequest('value is required');
    const ok = await this.rq.request<{ version: number }>(withTtl({ to: this.to, op: 'cas', version, value }, opts), false, opts);
    return ok.version;
  }

  /** Adds `delta` to the number at `path`, atomically; with `floor`, refuses (code `floor`) to go below it. */
  async incr(path: string, delta: number, opts: { floor?: number } & RequestOptions = {}): Promise<Increment> {
    checkPointer(path);
    if (typeof delta !== 'number' || !Number.isFinite(delta)) throw badRequest(`delta must be a finite number: ${delta}`);
    const f: Record<string, unknown> = { to: this.to, op: 'incr', path, delta };
    if (opts.floor !== undefined) {
      if (typeof opts.floor !== 'number' || !Number.isFinite(opts.floor)) throw badRequest(`floor must be a finite number: ${opts.floor}`);
      f.floor = opts.floor;
    }
    return this.rq.request<Increment>(f, false, opts);
  }

  /** Sets `value` at `path` (`/items/-` appends to an array, "" replaces the whole value). */
  async patch(path: string, value: unknown, opts?: WriteOptions): Promise<number> {
    checkPointer(path);
    if (value === undefined) throw badRequest('value is required');
    const ok = await this.rq.request<{ version: number }>(withTtl({ to: this.to, op: 'patch', path, value }, opts), false, opts);
    return ok.version;
  }

  /**
   * Makes the value what it was at a version or a time, as a new version (undo it by restoring the
   * version before). Rejects with `gone` outside the restore window (docs/PROTOCOL.md#docs-docname).
   */
  async restore(point: DocPoint, opts?: RequestOptions): Promise<DocRestore> {
    const ok = await this.rq.request<any>(docPoint({ to: this.to, op: 'restore' }, point), false, opts);
    return { version: ok.version, fromVersion: ok.from_version };
  }

  /** Sets this Doc, which must not exist yet, to Doc `from`'s value at a version or a time. */
  async fork(from: string, point: DocPoint, opts?: RequestOptions): Promise<DocRestore> {
    const ok = await this.rq.request<any>(docPoint({ to: this.to, op: 'fork', from }, point), false, opts);
    return { version: ok.version, fromVersion: ok.from_version };
  }

  /**
   * Sets the expiry of an existing Doc to `ttlMs` from now (0: it no longer expires); the version
   * stays. Resolves with the new deadline (epoch ms), or undefined when it no longer expires.
   * Rejects with `not_found` when the Doc does not exist.
   */
  async touch(ttlMs: number, opts?: RequestOptions): Promise<number | undefined> {
    checkInt('ttlMs', ttlMs, 0);
    const ok = await this.rq.request<{ version: number; expires_at?: number }>({ to: this.to, op: 'touch', ttl_ms: ttlMs }, true, opts);
    return ok.expires_at;
  }

  /** Deletes the Doc (admin); it starts again at version 0. */
  async delete(opts?: RequestOptions): Promise<boolean> {
    const ok = await this.rq.request<{ deleted: boolean }>({ to: this.to, op: 'delete' }, false, opts);
    return ok.deleted;
  }

  /**
   * Subscribes: `value` and `version` stay current as changes arrive, and `listener` (if any) gets
   * each change after it is applied. After a reconnect a fresh snapshot replaces the value.
   */
  async subscribe<T = unknown>(listener?: (ev: DocEvent, sub: DocSubscription<T>) => void): Promise<DocSubscription<T>> {
    const sub = new DocSubscription<T>(this.rq, this.to, listener);
    await sub.open();
    return sub;
  }
}

/** A Doc kept current from its events. */
export class DocSubscription<T = unknown> implements Resumable {
  version = 0;
  value: T = null as T;
  private sub = -1;
  private ended = false;

  constructor(private readonly rq: Requester, private readonly to: string,
    private readonly listener?: (ev: DocEvent, sub: DocSubscription<T>) => void) {}

  /** @internal */
  async open(): Promise<void> {
    await this.rq.request({ to: this.to, op: 'subscribe' }, true, {}, (ok) => this.bound(ok, false));
    this.rq.addSubscription(this);
  }

  private bound(ok: { sub: number; version: number; value: T }, again: boolean): void {
    if (this.ended) {
      // closed while this (re)subscribe was on its way: end the server's side too (see LogSubscription)
      this.rq.request({ op: 'unsubscribe', sub: ok.sub }, false).catch(() => {});
      return;
    }
    this.sub = ok.sub;
    const changed = ok.version !== this.version;
    this.version = ok.version;
    this.value = ok.value;
    this.rq.bindSub(ok.sub, (ev) => this.onEvent(ev));
    if (again && changed) this.tell({ op: 'snapshot', version: ok.version, value: ok.value });
  }

  private onEvent(ev: Record<string, any>): void {
    if (ev.deleted) {
      this.version = 0;
      this.value = null as T;
      this.tell({ op: 'deleted', version: 0, value: null });
      // a deleted Doc can be written again: follow it with a fresh subscription
      this.rq.unbindSub(this.sub);
      this.restore().catch(() => {});
      return;
    }
    if (ev.expired) {
      // the subscription goes on: the next write starts again at version 1
      this.version = 0;
      this.value = null as T;
      this.tell({ op: 'expired', version: 0, value: null });
      return;
    }
    if (ev.closed) {
      this.rq.unbindSub(this.sub);
      setTimeout(() => { if (!this.ended) this.restore().catch(() => {}); }, 100);
      return;
    }
    if (typeof ev.version !== 'number' || ev.version <= this.version) return;
    this.version = ev.version;
    if (ev.op === 'put' || ev.op === 'cas' || ev.op === 'restore' || ev.op === 'fork') {
      this.value = ev.value;
      this.tell({ op: ev.op, version: ev.version, value: ev.value });
    } else if (ev.op === 'incr' || ev.op === 'patch') {
      this.value = setAt(this.value, ev.path, ev.value) as T;
      this.tell({ op: ev.op, version: ev.version, path: ev.path, value: ev.value });
    }
  }

  private tell(ev: DocEvent): void {
    if (!this.listener) return;
    try { this.listener(ev, this); } catch { /* the listener's own fault */ }
  }

  /** @internal */
  async restore(): Promise<void> {
    if (this.ended) return;
    await this.rq.request({ to: this.to, op: 'subscribe' }, true, {}, (ok) => this.bound(ok, true));
  }

  /** @internal */
  detach(): void { this.sub = -1; }

  /** @internal */
  end(): void { this.ended = true; }

  async close(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.rq.removeSubscription(this);
    if (this.sub >= 0) {
      const sub = this.sub;
      this.rq.unbindSub(sub);
      await this.rq.request({ op: 'unsubscribe', sub }, false).catch(() => {});
    }
  }
}

/** Sets `v` at JSON Pointer `path` in a copy of `doc`, creating members along the way ('-' appends). */
export function setAt(doc: unknown, path: string, v: unknown): unknown {
  if (path === '') return v;
  const tokens = path.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  const root: any = clone(doc) ?? {};
  let cur: any = root;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const last = i === tokens.length - 1;
    if (Array.isArray(cur)) {
      const idx = t === '-' ? cur.length : Number(t);
      if (last) { if (t === '-') cur.push(v); else cur[idx] = v; return root; }
      cur = cur[idx] ??= {};
    } else {
      if (last) { cur[t] = v; return root; }
      if (cur[t] === null || typeof cur[t] !== 'object') cur[t] = {};
      cur = cur[t];
    }
  }
  return root;
}

function clone(v: unknown): any {
  return v === null || typeof v !== 'object' ? v : (typeof structuredClone === 'function' ? structuredClone(v) : JSON.parse(JSON.stringify(v)));
}
