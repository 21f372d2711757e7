/**
 * The client's side of the server's in-flight limit (hello `limits.max_in_flight`): at most
 * `limit` requests are on the wire unanswered; the rest wait here in order and go as answers come
 * back. The queue is bounded (`maxQueued`): past it a request fails with `limit` at once.
 */
export class InFlightWindow<T> {
  private inFlight = 0;
  private readonly queue: T[] = [];
  private head = 0;

  constructor(public limit: number, readonly maxQueued = 100_000) {}

  /** Whether `item` may go now; if not it is queued (true) or refused (false, the queue is full). */
  offer(item: T): 'send' | 'queued' | 'full' {
    if (this.inFlight < this.limit && this.queued() === 0) {
      this.inFlight++;
      return 'send';
    }
    if (this.queued() >= this.maxQueued) return 'full';
    this.queue.push(item);
    return 'queued';
  }

  /** An answered (or failed) request frees its place: what may go now, in order. */
  release(): T[] {
    if (this.inFlight > 0) this.inFlight--;
    return this.drain();
  }

  /** The requests that may go now (after `limit` grew, or after a release). */
  drain(): T[] {
    const out: T[] = [];
    while (this.inFlight < this.limit && this.head < this.queue.length) {
      out.push(this.queue[this.head++]!);
      this.inFlight++;
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    return out;
  }

  /** Removes a queued item (its request timed out or was aborted before it went). */
  remove(item: T): boolean {
    const i = this.queue.indexOf(item, this.head);
    if (i < 0) return false;
    this.queue.splice(i, 1);
    return true;
  }

  /** Forgets every place on the wire (the socket ended) and hands back what was still queued. */
  reset(): T[] {
    this.inFlight = 0;
    const rest = this.queue.slice(this.head);
    this.queue.length = 0;
    this.head = 0;
    return rest;
  }

  onWire(): number { return this.inFlight; }
  queued(): number { return this.queue.length - this.head; }
}
