import { badRequest } from './errors.js';
import { checkInt, checkName } from './names.js';
import type { RequestOptions, Requester } from './types.js';

/**
 * An action a schedule runs: a request without `id`, e.g.
 * `{ to: 'log:ticks', op: 'append', body: {...} }`, a Doc `put`/`patch`/`incr`/`touch`, or
 * `{ op: 'call', service, method, args }`.
 */
export type ScheduleAction = Record<string, unknown>;

/** When a schedule fires: exactly one of `at` (epoch ms or ISO string), `everyMs`, or `cron` (+ `tz`). */
export interface ScheduleTime {
  at?: number | string;
  everyMs?: number;
  cron?: string;
  /** A time zone id for `cron` (default UTC). */
  tz?: string;
}

/** A schedule as the server lists it (docs/PROTOCOL.md#schedules-on-ws). */
export interface ScheduleInfo {
  name: string;
  action: ScheduleAction;
  at?: number;
  every_ms?: number;
  anchor?: number;
  cron?: string;
  tz?: string;
  tier: string;
  created_by: string;
  /** The next occurrence, epoch ms (0: none). */
  next: number;
  /** The last occurrence recorded as fired, epoch ms (0: none yet). */
  fired: number;
  fires: number;
  last_error?: { at: number; error: { code: string; message: string } };
}

/** The workspace's schedules: named actions the server runs at a time, every interval or on a cron. */
export class Schedules {
  constructor(private readonly rq: Requester) {}

  /** Creates or replaces schedule `name` (safe to resend: a repeat replaces it with the same definition). */
  schedule(name: string, when: ScheduleTime, action: ScheduleAction, opts?: RequestOptions): Promise<ScheduleInfo> {
    checkName('schedule', name);
    const f: Record<string, unknown> = { to: 'ws', op: 'schedule', name, action };
    const given = [when.at, when.everyMs, when.cron].filter((v) => v !== undefined).length;
    if (given !== 1) throw badRequest('a schedule needs exactly one of at, everyMs or cron');
    if (when.at !== undefined) f.at = when.at;
    if (when.everyMs !== undefined) f.every_ms = checkInt('everyMs', when.everyMs, 100);
    if (when.cron !== undefined) f.cron = when.cron;
    if (when.tz !== undefined) f.tz = when.tz;
    if (action === null || typeof action !== 'object') throw badRequest('action must be an object');
    return this.rq.request<ScheduleInfo>(f, true, opts);
  }

  /** Every schedule, in name order (read page by page). */
  async list(opts?: RequestOptions): Promise<ScheduleInfo[]> {
    const out: ScheduleInfo[] = [];
    let after = '';
    for (;;) {
      const page = await this.rq.request<{ schedules: ScheduleInfo[]; next_after?: string }>(
        { to: 'ws', op: 'schedules', after, limit: 1000 }, true, opts);
      out.push(...page.schedules);
      if (page.next_after === undefined) return out;
      after = page.next_after;
    }
  }

  /** Cancels a schedule; false when there was none. Nothing of it fires after the answer. */
  async cancel(name: string, opts?: RequestOptions): Promise<boolean> {
    checkName('schedule', name);
    const ok = await this.rq.request<{ cancelled: boolean }>({ to: 'ws', op: 'unschedule', name }, true, opts);
    return ok.cancelled;
  }
}
