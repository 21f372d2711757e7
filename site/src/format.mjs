// Number and text formatting shared by the pages. Locale-independent on purpose: the same
// result file gives the same page on every machine.

export function group(intText) {
  return intText.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Fixed decimals with thousands separators; '—' for a missing value. */
export function fixed(v, decimals) {
  if (v == null || !Number.isFinite(v)) return '—';
  const s = Math.abs(v).toFixed(decimals);
  const [i, f] = s.split('.');
  return (v < 0 ? '-' : '') + group(i) + (f ? `.${f}` : '');
}

/** Milliseconds as the reference report writes them: 0.27, 2.52, 13.3, 730. */
export function ms(v) {
  if (v == null || !Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  if (a < 0.1) return fixed(v, 3);
  if (a < 10) return fixed(v, 2);
  if (a < 100) return fixed(v, 1);
  return fixed(v, 0);
}

/** Rates (per second, MB/s): 12,470 · 386 · 27.7 · 9.71. */
export function rate(v) {
  if (v == null || !Number.isFinite(v)) return '—';
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 100) return fixed(v, 0);
  if (a >= 10) return fixed(v, 1);
  return fixed(v, 2);
}

export function int(v) {
  return v == null || !Number.isFinite(v) ? '—' : fixed(Math.round(v), 0);
}

/** A ratio such as 0.82× or 12.4×. */
export function ratio(r) {
  if (r == null || !Number.isFinite(r)) return '—';
  if (r >= 100) return `${fixed(r, 0)}×`;
  if (r >= 10) return `${fixed(r, 1)}×`;
  return `${fixed(r, 2)}×`;
}

/** A duration in seconds, in words a user reads: 850 ms, 4.2 s, 3.5 min, 2.1 h. */
export function duration(seconds) {
  if (seconds == null || !Number.isFinite(seconds)) return '—';
  if (seconds < 1) return `${ms(seconds * 1000)} ms`;
  if (seconds < 120) return `${rate(seconds)} s`;
  if (seconds < 7200) return `${rate(seconds / 60)} min`;
  return `${rate(seconds / 3600)} h`;
}

export function percent(fraction) {
  if (fraction == null || !Number.isFinite(fraction)) return '—';
  return `${fixed(fraction * 100, fraction > 0 && fraction < 0.01 ? 2 : 0)} %`;
}

/** A figure with its unit, by metric field. */
export function metric(field, v) {
  switch (field) {
    case 'p50_ms': case 'p95_ms': case 'p99_ms': case 'max_ms':
      return v == null ? '—' : `${ms(v)} ms`;
    case 'throughput_per_s': return v == null ? '—' : `${rate(v)}/s`;
    case 'mb_per_s': return v == null ? '—' : `${rate(v)} MB/s`;
    case 'peak': return v == null ? '—' : `${int(v)} sockets`;
    default: return v == null ? '—' : String(v);
  }
}

export function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

/** ISO time shown as `2026-11-29 20:21 UTC`. */
export function when(date) {
  const d = date instanceof Date ? date : new Date(date);
  if (Number.isNaN(d.getTime())) return String(date);
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
