/**
 * How queued frames become WebSocket messages: the frames queued in one turn of the event loop
 * leave together, as one JSON array of at most MAX_FRAMES frames or about MAX_BYTES (one large
 * frame alone may be larger, up to the server's max_frame_bytes); a single frame leaves as a plain
 * object (docs/PROTOCOL.md#messages-and-frames). Frames are JSON text already.
 */
export const MAX_FRAMES = 512;
export const MAX_BYTES = 256 * 1024;

/** Groups frame texts into message texts, in order. */
export function pack(frames: readonly string[], maxFrames = MAX_FRAMES, maxBytes = MAX_BYTES): string[] {
  const out: string[] = [];
  let group: string[] = [];
  let bytes = 0;
  const flush = () => {
    if (group.length === 1) out.push(group[0]!);
    else if (group.length > 1) out.push('[' + group.join(',') + ']');
    group = [];
    bytes = 0;
  };
  for (const f of frames) {
    const n = utf8Length(f);
    if (group.length > 0 && (group.length >= maxFrames || bytes + n + 1 > maxBytes)) flush();
    group.push(f);
    bytes += n + 1;
  }
  flush();
  return out;
}

/** The UTF-8 length of a string, without encoding it. */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) { n += 2; i++; } else n += 2;
    } else n += 2;
  }
  return n;
}

/** A received message: one frame or an array of frames. */
export function unpack(text: string): unknown[] {
  const v: unknown = JSON.parse(text);
  return Array.isArray(v) ? v : [v];
}
