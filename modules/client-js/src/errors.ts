/**
 * The one error class of the client: every failure, from the server (socket or HTTP) or from the
 * client's own checks, is a HyphaError whose `code` is one of the wire's codes (`ErrorCode` in the
 * server's `api` module; docs/PROTOCOL.md#errors). Switch on `code`, never on `message`.
 */

/** Every code of the catalogue. A code the client does not know is read as `internal`. */
export const ERROR_CODES = [
  'bad_request', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'floor', 'too_large',
  'limit', 'rate_limited', 'peer_gone', 'application', 'timeout', 'unavailable', 'bad_range', 'gone', 'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const KNOWN = new Set<string>(ERROR_CODES);

/** The HTTP status of each code, as the server uses it. */
export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  bad_request: 400, unauthorized: 401, forbidden: 403, not_found: 404, conflict: 409, floor: 409,
  too_large: 413, limit: 429, rate_limited: 429, peer_gone: 502, application: 422, timeout: 504, unavailable: 503,
  bad_range: 416, gone: 410, internal: 500,
};

export class HyphaError extends Error {
  /** The stable code. */
  readonly code: ErrorCode;
  /** The detail fields of the wire's error object (for `conflict`: `version`, `value`, `last`, `pseq`; …). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'HyphaError';
    this.code = code;
    this.details = details;
  }

  /**
   * How long to wait before trying again, in ms, when the server said (`retry_after_ms`: a
   * `rate_limited` answer, or an `unavailable` admission refusal); else null.
   */
  get retryAfterMs(): number | null {
    const v = this.details.retry_after_ms;
    return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
  }

  /** Reads a wire error object (`{"code","message",…details}`); anything else is `internal`. */
  static fromWire(err: unknown, fallbackMessage = 'error'): HyphaError {
    if (err === null || typeof err !== 'object' || Array.isArray(err)) {
      return new HyphaError('internal', `${fallbackMessage}: ${JSON.stringify(err)}`);
    }
    const { code, message, ...details } = err as Record<string, unknown>;
    const c = typeof code === 'string' && KNOWN.has(code) ? (code as ErrorCode) : 'internal';
    const m = typeof message === 'string' ? message : fallbackMessage;
    if (c === 'internal' && typeof code === 'string' && code !== 'internal') details.wire_code = code;
    return new HyphaError(c, m, details);
  }

  /** The wire form, as a provider answers a call with it. */
  toWire(): Record<string, unknown> {
    return { ...this.details, code: this.code, message: this.message };
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) => new HyphaError('bad_request', message, details);
export const unavailable = (message: string, details?: Record<string, unknown>) => new HyphaError('unavailable', message, details);
