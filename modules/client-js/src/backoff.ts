/**
 * Reconnect delays, as the JVM client and docs/PROTOCOL.md#reconnect-and-resume give them: the
 * first attempt after a random time in [0, min]; later ones a random time in
 * [min/2, min(cap, min * 2^attempt)], where cap is 250 ms during the first 3 s of an outage (a
 * killed cluster member's workspaces move to a survivor in about a second), 1 s until 30 s (both
 * bounded by min and max) and max after it.
 */
export interface BackoffOptions {
  /** First bound in ms (default 100). */
  minMs?: number;
  /** Largest bound in ms (default 5000). */
  maxMs?: number;
}

export class Backoff {
  readonly minMs: number;
  readonly maxMs: number;
  static readonly EARLY_MS = 30_000;
  static readonly EARLY_CAP_MS = 1_000;
  static readonly FIRST_MS = 3_000;
  static readonly FIRST_CAP_MS = 250;

  constructor(opts: BackoffOptions = {}, private readonly random: () => number = Math.random) {
    this.minMs = Math.max(1, opts.minMs ?? 100);
    this.maxMs = Math.max(this.minMs, opts.maxMs ?? 5000);
  }

  /** The delay before attempt `attempt` (0 = the first) of an outage that began `outageMs` ago. */
  delayMs(attempt: number, outageMs: number): number {
    if (attempt <= 0) return Math.floor(this.random() * (this.minMs + 1));
    const early = Math.min(this.maxMs, Math.max(this.minMs, Backoff.EARLY_CAP_MS));
    const cap = outageMs < Backoff.FIRST_MS ? Math.max(this.minMs, Math.min(early, Backoff.FIRST_CAP_MS))
      : outageMs < Backoff.EARLY_MS ? early
      : this.maxMs;
    const hi = Math.min(cap, this.minMs * 2 ** Math.min(attempt, 30));
    const lo = Math.min(hi, this.minMs / 2);
    return Math.floor(lo + this.random() * (hi - lo));
  }
}
