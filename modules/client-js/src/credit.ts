/**
 * Credit pacing of one Log subscription (docs/PROTOCOL.md#credit-pacing): the server may send
 * `window` entries; each entry the application has taken is owed back, and once half the window
 * is owed it is granted in one `credit`. Entries received but not yet taken never exceed the window.
 */
export class CreditGate {
  private owed = 0;

  constructor(readonly window: number) {}

  /** The application took one entry: the credit to grant now (0 = not yet). */
  taken(): number {
    this.owed++;
    if (this.owed * 2 >= this.window) {
      const n = this.owed;
      this.owed = 0;
      return n;
    }
    return 0;
  }

  /** The credit a fresh subscription starts with when `buffered` entries still wait for the application. */
  resume(buffered: number): number {
    this.owed = 0;
    return Math.max(0, this.window - buffered);
  }
}
