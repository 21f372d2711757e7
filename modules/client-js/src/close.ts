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
