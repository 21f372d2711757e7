// A batch: writes to several Docs and Logs of the workspace, all or nothing, in one commit
// (docs/PROTOCOL.md, `batch`). Same operations and words as the JVM client's Batch.
import { badRequest } from './errors.js';
import { checkInt, checkName, checkPointer } from './names.js';

/** One operation's result, as the operation alone answers it: `version`; `value` and `version` (incr); `deleted`; `seq` (and `last`). */
export type BatchOpResult = { version?: number; value?: number; deleted?: boolean; seq?: number; last?: number };

/** A committed batch: one result per operation, in order; `duplicate` when its key had already been applied. */
export interface BatchResult {
  results: BatchOpResult[];
  duplicate: boolean;
}

/**
 * The operations of a batch, built in order; `expectVersion`/`expectLast` set a precondition on the
 * previous operation (on the object's state before the batch); `key` makes it idempotent.
 *
 *   await c.batch(new Batch()
 *     .incr('wallet-alice', '/balance', -5, { floor: 0 }).expectVersion(17)
 *     .incr('wallet-bob', '/balance', 5)
 *     .append('transfers', { from: 'alice', amount: 5 })
 *     .key('transfer-8812'));
 */
export class Batch {
  /** @internal */ readonly ops: Record<string, unknown>[] = [];
  /** @internal */ idempotencyKey: string | undefined;

  private doc(name: string, op: string, fields: Record<string, unknown> = {}): this {
    this.ops.push({ to: `doc:${checkName('Doc', name)}`, op, ...fields });
    return this;
  }

  private log(name: string, op: string, fields: Record<string, unknown>): this {
    this.ops.push({ to: `log:${checkName('Log', name)}`, op, ...fields });
    return this;
  }

  private last(kind: 'doc' | 'log', what: string): Record<string, unknown> {
    const op = this.ops[this.ops.length - 1];
    if (op === undefined) throw badRequest(`${what} follows an operation`);
    if (!(op.to as string).startsWith(`${kind}:`)) throw badRequest(`${what} follows an operation on a ${kind === 'doc' ? 'Doc' : 'Log'}`);
    return op;
  }

  /** Replaces a Doc's value. */
  put(doc: string, value: unknown): this {
    if (value === undefined) throw badRequest('value is required');
    return this.doc(doc, 'put', { value });
  }

  /** Replaces a Doc's value if its version is `version` when the batch runs. */
  cas(doc: string, version: number, value: unknown): this {
    checkInt('version', version);
    if (value === undefined) throw badRequest('value is required');
    return this.doc(doc, 'cas', { version, value });
  }

  /** Adds `delta` at `path` of a Doc; with `floor`, never below it. */
  incr(doc: string, path: string, delta: number, opts: { floor?: number } = {}): this {
    checkPointer(path);
    if (typeof delta !== 'number' || !Number.isFinite(delta)) throw badRequest(`delta must be a finite number: ${delta}`);
    const f: Record<string, unknown> = { path, delta };
    if (opts.floor !== undefined) {
      if (typeof opts.floor !== 'number' || !Number.isFinite(opts.floor)) throw badRequest(`floor must be a finite number: ${opts.floor}`);
      f.floor = opts.floor;
    }
    return this.doc(doc, 'incr', f);
  }

  /** Sets `value` at a JSON Pointer of a Doc. */
  patch(doc: string, path: string, value: unknown): this {
    checkPointer(path);
    if (value === undefined) throw badRequest('value is required');
    return this.doc(doc, 'patch', { path, value });
  }

  /** Deletes a Doc (admin); it must be the Doc's last operation in the batch. */
  delete(doc: string): this {
    return this.doc(doc, 'delete');
  }

  /** Appends one entry to a Log. */
  append(log: string, body: unknown): this {
    if (body === undefined) throw badRequest('body is required');
    return this.log(log, 'append', { body });
  }

  /** Appends entries to a Log, in order. */
  appendAll(log: string, bodies: unknown[]): this {
    if (!Array.isArray(bodies) || bodies.length === 0) throw badRequest('bodies must be a non-empty array');
    return this.log(log, 'append_all', { bodies });
  }

  /** The previous operation (on a Doc) runs only if the Doc's version before the batch is `version`. */
  expectVersion(version: number): this {
    this.last('doc', 'expectVersion').expect_version = checkInt('expect_version', version);
    return this;
  }

  /** The previous operation (on a Log) runs only if the Log's last sequence before the batch is `last`. */
  expectLast(last: number): this {
    this.last('log', 'expectLast').expect_last = checkInt('expect_last', last);
    return this;
  }

  /** An idempotency key (a name): the batch sent again with it is applied once. */
  key(key: string): this {
    this.idempotencyKey = checkName('batch key', key);
    return this;
  }
}
