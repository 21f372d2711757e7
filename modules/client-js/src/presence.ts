import { HyphaError, badRequest } from './errors.js';
import type { RequestOptions, Requester, Resumable } from './types.js';

export interface PresenceMember<M = unknown> {
  client: string;
  state: 'present' | 'stale' | 'absent';
  meta: M;
  /** When the entry joined, epoch ms. */
  since: number;
  lastHeartbeat: number;
}

/** A change: join, update (meta changed, or back from stale), stale, leave; `reset` after a reconnect (members replaced). */
export interface PresenceEvent<M = unknown> {
  type: 'join' | 'update' | 'stale' | 'leave' | 'reset';
  member?: PresenceMember<M>;
  members: ReadonlyMap<string, PresenceMember<M>>;
}

const member = (m: any): PresenceMember => ({
  client: m.client, state: m.state, meta: m.meta, since: m.since, lastHeartbeat: m.last_heartbeat,
});

/**
 * This client's presence entry (keyed by its client id) and the workspace's list. After set()
 * the client heartbeats every hello heartbeat_ms, sets the entry again if it was swept, and sets it
 * again after a reconnect, until leave().
 */
export class Presence {
  private meta: unknown = undefined;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly watchers = new Set<PresenceSubscription>();

  constructor(private readonly rq: Requester, private readonly heartbeatMs: () => number) {}

  /** Joins (or replaces this client's meta) and keeps the entry alive. */
  async set<M = unknown>(meta: M = {} as M, opts?: RequestOptions): Promise<PresenceMember<M>> {
    if (meta === undefined) throw badRequest('meta must be a JSON value');
    const ok = await this.rq.request({ to: 'ws', op: 'presence.set', meta }, true, opts);
    this.meta = meta;
    this.startHeartbeat();
    return member(ok) as PresenceMember<M>;
  }

  /** Leaves at once (watchers see `leave`) and stops heartbeating. */
  async leave(opts?: RequestOptions): Promise<boolean> {
    this.meta = undefined;
    this.stopHeartbeat();
    const ok = await this.rq.request<{ left: boolean }>({ to: 'ws', op: 'presence.leave' }, true, opts);
    return ok.left;
  }

  /** One heartbeat now (the client sends them by itself after set()). */
  async heartbeat(opts?: RequestOptions): Promise<string> {
    const ok = await this.rq.request<{ state: string }>({ to: 'ws', op: 'presence.heartbeat' }, true, opts);
    return ok.state;
  }

  /** The members, in join order. */
  async list<M = unknown>(opts?: RequestOptions): Promise<PresenceMember<M>[]> {
    const ok = await this.rq.request<{ members: unknown[] }>({ to: 'ws', op: 'presence.list' }, true, opts);
    return ok.members.map(member) as PresenceMember<M>[];
  }

  /** Watches the list: `members` stays current, and `listener` gets each change. */
  async subscribe<M = unknown>(listener?: (ev: PresenceEvent<M>) => void): Promise<PresenceSubscription<M>> {
    const sub = new PresenceSubscription<M>(this.rq, listener);
    await sub.open();
    return sub;
  }

  private startHeartbeat(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.beat(), Math.max(200, this.heartbeatMs()));
    (this.timer as any).unref?.();
  }

  private stopHeartbeat(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private beat(): void {
    if (this.meta === undefined || !this.rq.hello()) return;
    this.heartbeat({ timeoutMs: 10_000 }).catch((e) => {
      if (e instanceof HyphaError && e.code === 'not_found' && this.meta !== undefined) {
        this.rq.request({ to: 'ws', op: 'presence.set', meta: this.meta }, true).catch(() => {});
      }
    });
  }

  /** @internal: sets the entry again on a new socket. */
  async restore(): Promise<void> {
    if (this.meta === undefined) return;
    await this.rq.request({ to: 'ws', op: 'presence.set', meta: this.meta }, true);
  }

  /** @internal */
  detach(): void {}

  /** @internal */
  end(): void { this.stopHeartbeat(); }
}

export class PresenceSubscription<M = unknown> implements Resumable {
  readonly members = new Map<string, PresenceMember<M>>();
  private sub = -1;
  private ended = false;

  constructor(private readonly rq: Requester, private readonly listener?: (ev: PresenceEvent<M>) => void) {}

  /** @internal */
  async open(): Promise<void> {
    await this.rq.request({ to: 'ws', op: 'presence.subscribe' }, true, {}, (ok) => this.bound(ok, false));
    this.rq.addSubscription(this);
  }

  private bound(ok: { sub: number; members: unknown[] }, again: boolean): void {
    if (this.ended) {
      // closed while this (re)subscribe was on its way: end the server's side too (see LogSubscription)
      this.rq.request({ op: 'unsubscribe', sub: ok.sub }, false).catch(() => {});
      return;
    }
    this.sub = ok.sub;
    this.members.clear();
    for (const m of ok.members.map(member)) this.members.set(m.client, m as PresenceMember<M>);
    this.rq.bindSub(ok.sub, (ev) => this.onEvent(ev));
    if (again) this.tell({ type: 'reset', members: this.members });
  }

  private onEvent(ev: Record<string, any>): void {
    const m = member(ev.member ?? {}) as PresenceMember<M>;
    if (ev.type === 'leave') this.members.delete(m.client);
    else this.members.set(m.client, m);
    this.tell({ type: ev.type, member: m, members: this.members });
  }

  private tell(ev: PresenceEvent<M>): void {
    if (!this.listener) return;
    try { this.listener(ev); } catch { /* its own */ }
  }

  /** @internal */
  async restore(): Promise<void> {
    if (this.ended) return;
    await this.rq.request({ to: 'ws', op: 'presence.subscribe' }, true, {}, (ok) => this.bound(ok, true));
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
