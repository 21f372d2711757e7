import { badRequest } from './errors.js';

/**
 * The artifact path rule of docs/API.md#paths, applied before anything is sent (as the JVM
 * client's ArtifactPathRule): relative, '/'-separated, NFC, at most 1024 bytes of UTF-8 and 255
 * per segment; no empty, '.' or '..' segment, no leading or trailing '/', no backslash, no control
 * character, no unpaired surrogate, no `_$folder$` suffix. A prefix may end with '/' or be empty.
 */
export function checkArtifactPath(path: unknown, prefix = false): string {
  if (typeof path !== 'string') throw badRequest(`artifact path must be a string: ${typeof path}`);
  if (prefix && path === '') return path;
  const what = prefix ? 'prefix' : 'path';
  const fail = (why: string) => badRequest(`artifact ${what} ${JSON.stringify(path)}: ${why}`);
  if (path === '') throw fail('is empty');
  if (!isWellFormed(path)) throw fail('has an unpaired surrogate');
  if (utf8Bytes(path) > 1024) throw fail('is longer than 1024 bytes of UTF-8');
  if (path.normalize('NFC') !== path) throw fail('is not in Unicode NFC: normalize it first');
  if (/[\u0000-\u001f\u007f-\u009f]/.test(path)) throw fail('has a control character');
  if (path.includes('\\')) throw fail('has a backslash');
  if (path.startsWith('/')) throw fail("starts with '/'");
  if (!prefix && path.endsWith('/')) throw fail("ends with '/'");
  if (!prefix && path.endsWith('_$folder$')) throw fail("ends with '_$folder$'");
  const segs = path.split('/');
  segs.forEach((seg, i) => {
    if (utf8Bytes(seg) > 255) throw fail('has a segment longer than 255 bytes');
    if (prefix && i === segs.length - 1) {
      // a prefix's last segment is partial: "" (a trailing '/') or "." may start a name; ".." may not
      if (seg === '..') throw fail("has a '..' segment");
      return;
    }
    if (seg === '') throw fail('has an empty segment');
    if (seg === '.' || seg === '..') throw fail(`has a '${seg}' segment`);
  });
  return path;
}

/** The path's URL form: each segment percent-encoded, '/' kept. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

function utf8Bytes(s: string): number {
  return new TextEncoder().encode(s).length;
}

function isWellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}
