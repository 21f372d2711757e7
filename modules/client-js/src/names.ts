import { badRequest } from './errors.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The protocol's name rule (workspace, Log, Doc, service, method, producer): refused with bad_request. */
export function checkName(kind: string, name: unknown): string {
  if (typeof name !== 'string' || !NAME.test(name) || name.includes('..')) {
    throw badRequest(`${kind} name must be 1-128 characters of A-Z a-z 0-9 . _ -, start with a letter or digit and not contain '..': ${JSON.stringify(name)}`);
  }
  return name;
}

/** A non-negative safe integer (seq, pseq, version, limits), else bad_request naming the field. */
export function checkInt(field: string, v: unknown, min = 0): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) {
    throw badRequest(`${field} must be an integer >= ${min}: ${JSON.stringify(v)}`);
  }
  return v;
}

/** A JSON Pointer (RFC 6901): "" or starting with '/', at most 64 tokens. */
export function checkPointer(path: unknown): string {
  if (typeof path !== 'string' || (path !== '' && !path.startsWith('/'))) {
    throw badRequest(`path must be a JSON Pointer ("" or starting with '/'): ${JSON.stringify(path)}`);
  }
  if (path.split('/').length - 1 > 64) throw badRequest('path has more than 64 tokens');
  return path;
}

/** JSON text of a value, or bad_request when it has none (undefined, a function, BigInt, a cycle). */
export function jsonText(field: string, v: unknown): string {
  let s: string | undefined;
  try {
    s = JSON.stringify(v);
  } catch (e) {
    throw badRequest(`${field} is not JSON: ${(e as Error).message}`);
  }
  if (s === undefined) throw badRequest(`${field} is not a JSON value: ${typeof v}`);
  return s;
}
