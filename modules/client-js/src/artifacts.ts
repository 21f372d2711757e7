import { HyphaError, HTTP_STATUS, badRequest, unavailable, type ErrorCode } from './errors.js';
import { checkArtifactPath, encodePath } from './paths.js';

/** A stored file. */
export interface ArtifactInfo {
  path: string;
  size: number;
  etag: string;
  contentType?: string;
  lastModified: Date;
}

export interface ArtifactPage {
  files: ArtifactInfo[];
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

/** A download: the status, the headers that matter, and the body (read it once). */
export interface Download {
  /** 200, or 206 for a range. */
  status: number;
  size: number;
  contentType: string;
  etag: string;
  /** `bytes a-b/size` for a range. */
  contentRange?: string;
  lastModified?: Date;
  /** The body as a stream (fetch's). */
  body: ReadableStream<Uint8Array> | null;
  bytes(): Promise<Uint8Array>;
  text(): Promise<string>;
  blob(): Promise<Blob>;
}

export type ArtifactData = Blob | Uint8Array | ArrayBuffer | string | ReadableStream<Uint8Array>;

export interface UploadOptions {
  contentType?: string;
  /** Bytes per part (default 8 MiB; the server's min-part-bytes is 5 MiB unless one part). */
  partSize?: number;
  /** Parts written at once (default 4). */
  parallel?: number;
  /** Called as parts complete: bytes written so far and the total. */
  onProgress?: (sent: number, total: number) => void;
  signal?: AbortSignal;
}

export type Range = { start: number; end?: number } | { suffix: number };

/**
 * The workspace's artifacts over HTTP (docs/API.md#artifacts): the binding plane (put, get,
 * head, list, delete, through the server) and the direct plane (multipart upload through the
 * presigned part URLs, which carry no token).
 */
export class Artifacts {
  constructor(private readonly base: () => string, private readonly token: () => Promise<string>,
    private readonly fetchFn: typeof fetch | undefined) {}

  private async http(method: string, url: string, init: RequestInit & { auth?: boolean } = {}): Promise<Response> {
    const f = this.fetchFn;
    if (!f) throw unavailable('no fetch here (Node 18+ and browsers have it)');
    const headers = new Headers(init.headers);
    if (init.auth !== false) headers.set('Authorization', `Bearer ${await this.token()}`);
    let res: Response;
    try {
      res = await f(url, { ...init, method, headers });
    } catch (e) {
      if ((e as Error)?.name === 'AbortError') throw e;
      throw unavailable(`${method} ${url.split('?')[0]} failed: ${(e as Error).message}`);
    }
    if (res.status >= 400) throw await errorOf(res);
    return res;
  }

  private fileUrl(path: string): string {
    return `${this.base()}/artifacts/files/${encodePath(checkArtifactPath(path))}`;
  }

  /** Stores `data` at `path` (replacing what was there). */
  async put(path: string, data: ArtifactData, opts: { contentType?: string; signal?: AbortSignal } = {}): Promise<ArtifactInfo> {
    const url = this.fileUrl(path);
    const { body, type, stream } = bodyOf(data);
    const headers: Record<string, string> = { 'Content-Type': opts.contentType ?? type ?? 'application/octet-stream' };
    const init: RequestInit & { duplex?: string } = { body: body as BodyInit, headers, signal: opts.signal };
    if (stream) {
      if (isBrowser()) {
        // browsers stream a request body only over HTTP/2: take the bytes first
        init.body = await new Response(body as ReadableStream).blob();
      } else init.duplex = 'half';
    }
    const res = await this.http('PUT', url, init);
    return info(await res.json());
  }

  /** Reads a file, whole or one byte range. */
  async get(path: string, opts: { range?: Range; signal?: AbortSignal } = {}): Promise<Download> {
    const headers: Record<string, string> = {};
    if (opts.range) headers.Range = rangeHeader(opts.range);
    const res = await this.http('GET', this.fileUrl(path), { headers, signal: opts.signal });
    const h = res.headers;
    const cr = h.get('Content-Range') ?? undefined;
    const total = cr ? Number(cr.split('/')[1]) : Number(h.get('Content-Length') ?? 0);
    return {
      status: res.status, size: total, contentType: h.get('Content-Type') ?? 'application/octet-stream',
      etag: unquote(h.get('ETag') ?? ''), contentRange: cr, lastModified: modified(h),
      body: res.body,
      bytes: async () => new Uint8Array(await res.arrayBuffer()),
      text: () => res.text(),
      blob: () => res.blob(),
    };
  }

  /** The file's metadata, or null when there is none. */
  async head(path: string): Promise<ArtifactInfo | null> {
    try {
      const res = await this.http('HEAD', this.fileUrl(path));
      const h = res.headers;
      return {
        path, size: Number(h.get('Content-Length') ?? 0), etag: unquote(h.get('ETag') ?? ''),
        contentType: h.get('Content-Type') ?? undefined, lastModified: modified(h) ?? new Date(NaN),
      };
    } catch (e) {
      if (e instanceof HyphaError && e.code === 'not_found') return null;
      throw e;
    }
  }

  /** One page of the files under `prefix`, in path order. */
  async list(opts: { prefix?: string; cursor?: string; limit?: number } = {}): Promise<ArtifactPage> {
    const q = new URLSearchParams();
    if (opts.prefix) q.set('prefix', checkArtifactPath(opts.prefix, true));
    if (opts.cursor) q.set('cursor', opts.cursor);
    if (opts.limit !== undefined) {
      if (!Number.isSafeInteger(opts.limit) || opts.limit < 1) throw badRequest(`limit must be an integer >= 1: ${opts.limit}`);
      q.set('limit', String(opts.limit));
    }
    const qs = q.toString();
    const res = await this.http('GET', `${this.base()}/artifacts/files${qs ? '?' + qs : ''}`);
    const j = await res.json();
    return { files: (j.files ?? []).map(info), nextCursor: j.next_cursor ?? undefined };
  }

  /** Every file under `prefix`, page after page. */
  async *listAll(prefix = '', pageSize?: number): AsyncGenerator<ArtifactInfo> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ prefix, cursor, limit: pageSize });
      yield* page.files;
      cursor = page.nextCursor;
    } while (cursor);
  }

  /** Deletes a file; false when there was none. */
  async delete(path: string): Promise<boolean> {
    try {
      await this.http('DELETE', this.fileUrl(path));
      return true;
    } catch (e) {
      if (e instanceof HyphaError && e.code === 'not_found') return false;
      throw e;
    }
  }

  /** A download URL that works without a token until it expires (`ttlSeconds`, default the server's presign-ttl). */
  async presign(path: string, ttlSeconds?: number): Promise<{ url: string; expiresAt: Date }> {
    const q = ttlSeconds === undefined ? '' : `&ttl=${ttlSeconds}`;
    const res = await this.http('GET', `${this.fileUrl(path)}?presign=1${q}`);
    const j = await res.json();
    return { url: j.url, expiresAt: new Date(j.expires_at) };
  }

  /**
   * Uploads through the direct plane: opens a multipart upload, writes its parts to their presigned
   * URLs `parallel` at a time (retrying a failed part twice), then completes it. An upload that
   * fails is aborted (nothing is left behind).
   */
  async upload(path: string, data: Blob | Uint8Array | ArrayBuffer, opts: UploadOptions = {}): Promise<ArtifactInfo> {
    checkArtifactPath(path);
    const blob = data instanceof Blob ? data : new Blob([data as BlobPart]);
    const size = blob.size;
    const partSize = opts.partSize ?? 8 * 1024 * 1024;
    if (!Number.isSafeInteger(partSize) || partSize < 1) throw badRequest(`partSize must be a positive integer: ${partSize}`);
    const parallel = Math.max(1, Math.floor(opts.parallel ?? 4));
    const contentType = opts.contentType ?? (blob.type || 'application/octet-stream');
    const res = await this.http('POST', `${this.base()}/artifacts/uploads`, {
      headers: { 'Content-Type': 'application/json' }, signal: opts.signal,
      body: JSON.stringify({ path, size, part_size: partSize, content_type: contentType }),
    });
    const up = await res.json();
    const parts: { number: number; url: string; offset: number; length: number }[] = up.parts;
    const etags = new Array<string>(parts.length);
    let sent = 0;
    let next = 0;
    const worker = async () => {
      while (next < parts.length) {
        const p = parts[next++]!;
        const body = blob.slice(p.offset, p.offset + p.length);
        for (let attempt = 0; ; attempt++) {
          try {
            const r = await this.http('PUT', p.url, { body, auth: false, signal: opts.signal });
            etags[p.number - 1] = r.headers.get('ETag') ?? '';
            break;
          } catch (e) {
            if (attempt >= 2 || (e as Error)?.name === 'AbortError' || (e instanceof HyphaError && e.code !== 'unavailable')) throw e;
          }
        }
        sent += p.length;
        try { opts.onProgress?.(sent, size); } catch { /* the callback's own */ }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(parallel, parts.length) }, worker));
      const done = await this.http('POST', `${this.base()}/artifacts/uploads/${up.id}/complete`, {
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ parts: parts.map((p, i) => ({ number: p.number, etag: etags[i] })) }),
      });
      return info(await done.json());
    } catch (e) {
      await this.http('DELETE', `${this.base()}/artifacts/uploads/${up.id}`).catch(() => {});
      throw e;
    }
  }
}

function bodyOf(d: ArtifactData): { body: unknown; type?: string; stream: boolean } {
  if (typeof d === 'string') return { body: d, type: 'text/plain; charset=utf-8', stream: false };
  if (d instanceof Blob) return { body: d, type: d.type || undefined, stream: false };
  if (d instanceof Uint8Array || d instanceof ArrayBuffer) return { body: d, stream: false };
  if (d && typeof (d as ReadableStream).getReader === 'function') return { body: d, stream: true };
  throw badRequest('data must be a Blob, Uint8Array, ArrayBuffer, string or ReadableStream');
}

function rangeHeader(r: Range): string {
  if ('suffix' in r) {
    if (!Number.isSafeInteger(r.suffix) || r.suffix < 1) throw badRequest(`range suffix must be >= 1: ${r.suffix}`);
    return `bytes=-${r.suffix}`;
  }
  if (!Number.isSafeInteger(r.start) || r.start < 0) throw badRequest(`range start must be >= 0: ${r.start}`);
  if (r.end !== undefined && (!Number.isSafeInteger(r.end) || r.end < r.start)) throw badRequest(`range end must be >= start: ${r.end}`);
  return `bytes=${r.start}-${r.end ?? ''}`;
}

function info(j: any): ArtifactInfo {
  return { path: j.path, size: j.size, etag: unquote(j.etag ?? ''), contentType: j.content_type, lastModified: new Date(j.last_modified) };
}

function modified(h: Headers): Date | undefined {
  const v = h.get('Hypha-Last-Modified') ?? h.get('Last-Modified');
  return v ? new Date(v) : undefined;
}

function unquote(s: string): string {
  return s.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}

async function errorOf(res: Response): Promise<HyphaError> {
  const headerCode = res.headers.get('Hypha-Error-Code');
  let body: any = null;
  try { body = await res.json(); } catch { /* HEAD, or not JSON */ }
  if (body && typeof body.code === 'string') return HyphaError.fromWire(body);
  const code = (headerCode ?? codeOfStatus(res.status)) as ErrorCode;
  return HyphaError.fromWire({ code, message: `HTTP ${res.status}` });
}

function codeOfStatus(status: number): string {
  for (const [c, s] of Object.entries(HTTP_STATUS)) if (s === status && c !== 'floor') return c;
  return 'internal';
}

function isBrowser(): boolean {
  return typeof (globalThis as any).window !== 'undefined' && typeof (globalThis as any).document !== 'undefined';
}
