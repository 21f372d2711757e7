import { CreditGate } from './credit.js';
import { HyphaError, badRequest } from './errors.js';
import { checkInt, checkName } from './names.js';
import type { RequestOptions, Requester, Resumable } from './types.js';

/** One entry of a Log. */
export interface LogEntry<T = unknown> {
  seq: number;
  /** The server's timestamp, epoch ms (an append_all's entries share it). */
  ts: number;
  body: T;
}

/** One page of `read`: pass `next` as `from` (forward) or `before` as `before` (backward) for the next. */
export interface LogPage<T = unknown> {
  entries: LogEntry<T>[];
  first: number;
  last: number;
  next?: number;
  before?: number;
}

export interface Retention {
  /** Keep at most this many entries (0: no limit). */
  maxEntries?: number;
  /** Remove entries older than this (0: no limit). */
  maxAgeSeconds?: number;
}

/** A point of a Log: a seq (the Log when it was its last entry; 0 is empty), or a time (epoch millis). */
export type LogPoint = { seq: number; at?: undefined } | { at: number | Date; seq?: undefined };

/** Where restored content now is (`first..last`) and where it came from (`from..to`, as numbered then). */
export interface LogRestore {
  first: number;
  last: number;
  from: number;
  to: number;
}

function logPoint(f: Record<string, unknown>, p: LogPoint): Record<string, unknown> {
  if (p.seq !== undefined && p.at === undefined) f.seq = checkInt('seq', p.seq);
  else if (p.at !== undefined && p.seq === undefined) f.at = checkInt('at', p.at instanceof Date ? p.at.getTime() : p.at);
  else throw badRequest('name the point with exactly one of seq and at');
  return f;
}

function restored(ok: any): LogRestore {
  return { first: ok.first, last: ok.last, from: ok.from, to: ok.to };
}

export interface LogInfo {
  first: number;
  last: number;
  entries: number;
  bytes: number;
  retention: Required<Retention>;
}

/** An idempotent append's identity: a retry with the same pair is written once. */
export interface Idempotence {
  producer: string;
  pseq: number;
}

export interface AppendOptions extends RequestOptions, Partial<Idempotence> {}

export interface Appended {
  /** The first (or only) entry's seq. */
  first: number;
  last: number;
  /** A retry of an idempotent append that was already written: nothing new was written. */
  duplicate: boolean;
}

export interface SubscribeOptions {
  /** Deliver entries with seq > since (0: everything; default: from now on). */
  since?: number;
  /** Entries the server may send ahead of the application (default: the client's logCredit). */
  credit?: number;
}

/** A Log of the workspace (docs/PROTOCOL.md#logs-logname). */
export class Log {
  private readonly to: string;

  constructor(private readonly rq: Requester, readonly name: string) {
    this.to = 'log:' + name;
  }

  /** Appends one entry; resolves with its seq after the commit that holds it. */
  async append(body: unknown, opts: AppendOptions = {}): Promise<number> {
    if (body === undefined) throw badRequest('body is required (null is a value; undefined is not)');
    const f: Record<string, unknown> = { to: this.to, op: 'append', body };
    const safe = idempotence(f, opts);
    const ok = await this.rq.request<{ seq: number }>(f, safe, opts);
    return ok.seq;
  }

  /** Appends like append() and also says whether it was a retry already written. */
  async appendEx(body: unknown, opts: AppendOptions = {}): Promise<Appended> {
    if (body === undefined) throw badRequest('body is required');
    const f: Record<string, unknown> = { to: this.to, op: 'append', body };
    const safe = idempotence(f, opts);
    const ok = await this.rq.request<{ seq: number; duplicate?: boolean }>(f, safe, opts);
    return { first: ok.seq, last: ok.seq, duplicate: ok.duplicate === true };
  }

  /** Appends a batch atomically (consecutive seqs, all or none). */
  async appendAll(bodies: readonly unknown[], opts: AppendOptions = {}): Promise<Appended> {
    if (!Array.isArray(bodies) || bodies.length === 0) throw badRequest('bodies must be a non-empty array');
    if (bodies.some((b) => b === undefined)) throw badRequest('bodies must not hold undefined');
    const max = this.rq.hello()?.limits.maxBatch;
    if (max && bodies.length > max) throw new HyphaError('limit', `a batch holds at most ${max} entries (max_batch); this one has ${bodies.length}`);
    const f: Record<string, unknown> = { to: this.to, op: 'append_all', bodies };
    const safe = idempotence(f, opts);
    const ok = await this.rq.request<{ seq: number; last?: number; duplicate?: boolean }>(f, safe, opts);
    return { first: ok.seq, last: ok.last ?? ok.seq, duplicate: ok.duplicate === true };
  }

  /** Reads a page: forward `from` (default the first), or backward `before` (newest first). */
  async read<T = unknown>(q: { from?: number; before?: number; limit?: number } & RequestOptions = {}): Promise<LogPage<T>> {
    const f: Record<string, unknown> = { to: this.to, op: 'read' };
    if (q.before !== undefined) f.before = checkInt('before', q.before);
    else if (q.from !== undefined) f.from = checkInt('from', q.from);
    if (q.limit !== undefined) f.limit = checkInt('limit', q.limit, 1);
    return this.rq.request<LogPage<T>>(f, true, q);
  }

  async info(opts?: RequestOptions): Promise<LogInfo> {
    const ok = await this.rq.request<any>({ to: this.to, op: 'info' }, true, opts);
    return {
      first: ok.first, last: ok.last, entries: ok.entries, bytes: ok.bytes,
      retention: { maxEntries: ok.retention?.max_entries ?? 0, maxAgeSeconds: ok.retention?.max_age_seconds ?? 0 },
    };
  }

  /** Removes every entry with seq < before; resolves with the new first. */
  async truncate(before: number, opts?: RequestOptions): Promise<number> {
    checkInt('before', before, 1);
    const ok = await this.rq.request<{ first: number }>({ to: this.to, op: 'truncate', before }, false, opts);
    return ok.first;
  }

  /** Replaces the Log's retention. */
  async configure(retention: Retention, opts?: RequestOptions): Promise<Required<Retention>> {
    const r: Record<string, number> = {};
    if (retention?.maxEntries !== undefined) r.max_entries = checkInt('maxEntries', retention.maxEntries);
    if (retention?.maxAgeSeconds !== undefined) r.max_age_seconds = checkInt('maxAgeSeconds', retention.maxAgeSeconds);
    const ok = await this.rq.request<any>({ to: this.to, op: 'configure', retention: r }, false, opts);
    return { maxEntries: ok.retention?.max_entries ?? 0, maxAgeSeconds: ok.retention?.max_age_seconds ?? 0 };
  }

  /**
   * Makes the Log's content its content at a seq or a time again, copied after its end as a new
   * generation (undo it by restoring the seq before). Rejects with `gone` outside the restore window
   * or when truncate/retention removed the point (docs/PROTOCOL.md#logs-logname).
   */
  async restore(point: LogPoint, opts?: RequestOptions): Promise<LogRestore> {
    return restored(await this.rq.request<any>(logPoint({ to: this.to, op: 'restore' }, point), false, opts));
  }

  /** Fills this Log, which must have no entries, with Log `from`'s content at a seq or a time (from seq 1). */
  async fork(from: string, point: LogPoint, opts?: RequestOptions): Promise<LogRestore> {
    return restored(await this.rq.request<any>(logPoint({ to: this.to, op: 'fork', from }, point), false, opts));
  }

  /** Deletes the Log (admin); resolves false when there was nothing. */
  async delete(opts?: RequestOptions): Promise<boolean> {
    const ok = await this.rq.request<{ deleted: boolean }>({ to: this.to, op: 'delete' }, false, opts);
    return ok.deleted;
  }

  /**
   * Subscribes: replay after `since`, then the live tail, as an async iterator. Credit is granted
   * back as the application takes entries, so a slow reader never grows anyone's memory. After a
   * reconnect it resumes from the last seq received: no gap, no duplicate.
   */
  async subscribe<T = unknown>(opts: SubscribeOptions = {}): Promise<LogSubscription<T>> {
    if (opts.since !== undefined) checkInt('since', opts.since);
    const asked = checkInt('credit', opts.credit ?? this.rq.logCredit, 1);
    // the server caps credit at its max_credit (no error): the gate must count the same window, or
    // it waits for half of a window the server never sends and the subscription stalls
    const max = this.rq.hello()?.limits.maxCredit;
    const credit = max !== undefined && max > 0 ? Math.min(asked, max) : asked;
    const sub = new LogSubscription<T>(this.rq, this.to, credit);
    await sub.open(opts.since);
    return sub;
  }
}

function idempotence(f: Record<string, unknown>, o: Partial<Idempotence>): boolean {
  if (o.producer === undefined && o.pseq === undefined) return false;
  if (o.producer === undefined || o.pseq === undefined) throw badRequest('an idempotent append needs both producer and pseq');
  f.producer = checkName('producer', o.producer);
  f.pseq = checkInt('pseq', o.pseq);
  return true;
}

/** A live Log subscription: `for await (const e of sub)`, or `await sub.next()`. */
export class LogSubscription<T = unknown> implements AsyncIterableIterator<LogEntry<T>>, Resumable {
  /** The last seq received (the resume point). */
  lastSeq = 0;
  /** The Log's first and last seq when the subscription (or its latest restore) was answered. */
  first = 0;
  last = 0;
  private sub = -1;
  private readonly buffer: LogEntry<T>[] = [];
  private readonly waiters: { resolve(r: IteratorResult<LogEntry<T>>): void; reject(e: unknown): void }[] = [];
  private ended: { error?: unknown } | null = null;
  private readonly gate: CreditGate;
  private readonly truncations: ((from: number, to: number) => void)[] = [];
  private readonly restorations: ((r: LogRestore) => void)[] = [];

  constructor(private readonly rq: Requester, private readonly to: string, readonly credit: number) {
    this.gate = new CreditGate(credit);
  }

  /** @internal */
  async open(since: number | undefined): Promise<void> {
    const f: Record<string, unknown> = { to: this.to, op: 'subscribe', credit: this.credit };
    if (since !== undefined) f.since = since;
    await this.rq.request(f, true, {}, (ok) => this.bound(ok, since));
    this.rq.addSubscription(this);
  }

  private bound(ok: { sub: number; first: number; last: number }, since: number | undefined): void {
    if (this.ended) {
      // closed while this (re)subscribe was on its way: end the server's side too, on the socket
      // whose id this is (the close had no id to name)
      this.rq.request({ op: 'unsubscribe', sub: ok.sub }, false).catch(() => {});
      return;
    }
    this.sub = ok.sub;
    this.first = ok.first;
    this.last = ok.last;
    if (since === undefined && this.lastSeq === 0) this.lastSeq = ok.last;
    this.rq.bindSub(ok.sub, (ev) => this.onEvent(ev));
  }

  /** Called when entries were removed before this subscription received them (truncate or retention). */
  /** Calls `fn` when the Log is restored (its content goes on at `first`; the copied entries follow). */
  onRestored(fn: (r: LogRestore) => void): this {
    this.restorations.push(fn);
    return this;
  }

  onTruncated(fn: (from: number, to: number) => void): this {
    this.truncations.push(fn);
    return this;
  }

  private onEvent(ev: Record<string, any>): void {
    if (typeof ev.seq === 'number') {
      if (ev.seq <= this.lastSeq) return; // a defence: never a duplicate
      this.lastSeq = ev.seq;
      const e: LogEntry<T> = { seq: ev.seq, ts: ev.ts, body: ev.body };
      const w = this.waiters.shift();
      if (w) { this.took(); w.resolve({ value: e, done: false }); } else this.buffer.push(e);
    } else if (ev.truncated) {
      const { from, to } = ev.truncated;
      if (to > this.lastSeq) this.lastSeq = to;
      for (const fn of this.truncations) { try { fn(from, to); } catch { /* its own */ } }
    } else if (ev.restored) {
      // a restore: the content goes on at 'first', the copied entries follow as entries
      const r = restored(ev.restored);
      if (r.first - 1 > this.lastSeq) this.lastSeq = r.first - 1;
      for (const fn of this.restorations) { try { fn(r); } catch { /* its own */ } }
    } else if (ev.deleted) {
      this.rq.unbindSub(this.sub);
      this.rq.removeSubscription(this);
      this.end();
    } else if (ev.closed) {
      // the Log is reloading after a failed commit: subscribe again from the last seq received
      this.rq.unbindSub(this.sub);
      setTimeout(() => { if (!this.ended) this.restore().catch((e) => this.end(e)); }, 100);
    }
  }

  private took(): void {
    const n = this.gate.taken();
    if (n > 0 && this.sub >= 0) this.rq.fire({ op: 'credit', sub: this.sub, n });
  }

  /** @internal: resubscribe on a new socket from the last seq received. */
  async restore(): Promise<void> {
    if (this.ended) return;
    const credit = this.gate.resume(this.buffer.length);
    const since = this.lastSeq;
    try {
      await this.rq.request({ to: this.to, op: 'subscribe', since, credit }, true, {}, (ok) => this.bound(ok, since));
    } catch (e) {
      if (e instanceof HyphaError && e.code === 'conflict') {
        // the Log was deleted and began again while we were away: this subscription ends
        this.rq.removeSubscription(this);
        this.end(e);
        return;
      }
      throw e;
    }
  }

  /** @internal */
  detach(): void { this.sub = -1; }

  /** @internal */
  end(error?: unknown): void {
    if (this.ended) return;
    this.ended = { error };
    for (const w of this.waiters.splice(0)) {
      if (error) w.reject(error); else w.resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<LogEntry<T>>> {
    const e = this.buffer.shift();
    if (e) {
      this.took();
      return Promise.resolve({ value: e, done: false });
    }
    if (this.ended) {
      return this.ended.error ? Promise.reject(this.ended.error) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Ends the subscription (unsubscribe); an iterator loop ends. */
  async close(): Promise<void> {
    if (this.ended) return;
    this.rq.removeSubscription(this);
    const sub = this.sub;
    this.end();
    this.buffer.length = 0;
    if (sub >= 0) {
      this.rq.unbindSub(sub);
      await this.rq.request({ op: 'unsubscribe', sub }, false).catch(() => {});
    }
  }

  async return(): Promise<IteratorResult<LogEntry<T>>> {
    await this.close();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this { return this; }
}
