import type { ErrorCode } from './errors.js';

/** How a client comes back after a close (the server's `CloseCode.Reconnect`). */
export type Reconnect = 'never' | 'at_once' | 'soon' | 'backoff';

/**
 * The close codes and what the client does after each: a mirror of `CloseCode` in the server's
 * `api` module (docs/PROTOCOL.md#close-codes); test/unit/close.test.mjs compares the two.
 */
export const CLOSE_CODES: Readonly<Record<number, { name: string; reconnect: Reconnect; error: ErrorCode }>> = {
  1000: { name: 'NORMAL', reconnect: 'never', error: 'unavailable' },
  1001: { name: 'GOING_AWAY', reconnect: 'backoff', error: 'unavailable' },
  1002: { name: 'PROTOCOL_ERROR', reconnect: 'backoff', error: 'bad_request' },
  1006: { name: 'ABNORMAL', reconnect: 'backoff', error: 'unavailable' },
  1007: { name: 'INVALID_DATA', reconnect: 'backoff', error: 'bad_request' },
  1009: { name: 'MESSAGE_TOO_BIG', reconnect: 'backoff', error: 'too_large' },
  1011: { name: 'INTERNAL_ERROR', reconnect: 'backoff', error: 'internal' },
  1012: { name: 'SERVICE_RESTART', reconnect: 'soon', error: 'unavailable' },
  1013: { name: 'TRY_AGAIN_LATER', reconnect: 'backoff', error: 'unavailable' },
  4000: { name: 'IDLE', reconnect: 'backoff', error: 'unavailable' },
  4001: { name: 'TOKEN_ENDED', reconnect: 'never', error: 'unauthorized' },
  4004: { name: 'WORKSPACE_DELETED', reconnect: 'never', error: 'not_found' },
  4008: { name: 'SLOW_CONSUMER', reconnect: 'backoff', error: 'unavailable' },
  4307: { name: 'MOVED', reconnect: 'at_once', error: 'unavailable' },
};

/** After a 1012, attempts come a random time in [min, max] ms apart, for at most PATIENCE ms. */
export const RESTART_DELAY_MS = { min: 25, max: 200, patience: 30_000 } as const;

export function reconnectAfter(code: number): Reconnect {
  return CLOSE_CODES[code]?.reconnect ?? 'backoff';
}

/** The wait a close reason asks for (`…; retry_after_ms=<n>`, as the server's 1013s carry it), or null. */
export function retryAfterFromReason(reason: string): number | null {
  const m = /retry_after_ms=(\d{1,10})/.exec(reason ?? '');
  return m ? Number(m[1]) : null;
}

/** The longest wait a server's retry_after_ms is followed for. */
export const MAX_ASKED_WAIT_MS = 60_000;

/**
 * `ms` (a server's retry_after_ms) plus jitter of up to a quarter of it (at least 50 ms), so that the
 * clients a storm sent away do not come back in step; as the JVM client's Connector does.
 */
export function withJitter(ms: number, random: () => number = Math.random): number {
  const base = Math.min(Math.max(0, ms), MAX_ASKED_WAIT_MS);
  return base + Math.floor(random() * (Math.max(50, base / 4) + 1));
}
