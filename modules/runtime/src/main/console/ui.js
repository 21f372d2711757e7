// Small DOM helpers of the console: h() builds elements (text always as text, never as HTML),
// formatting, the toast, and act(), which runs an action and shows its error.

/** h('a', {href, onclick, class, ...}, ...children): attributes, on* handlers, booleans; strings as text nodes. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el[k] = v;
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== undefined && c !== null && c !== '') el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  if (tag === 'textarea' && children.length) el.value = children.join('');
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
}

/** An ISO text or epoch ms, in the browser's time zone with seconds. */
export function fmtTime(t) {
  if (t === undefined || t === null || t === '') return '';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString(undefined, { hour12: false });
}

export function fmtBytes(n) {
  if (typeof n !== 'number') return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function json(v, indent) {
  return v === undefined ? '' : JSON.stringify(v, null, indent);
}

let toastTimer = 0;
/** A message at the foot of the page; errors stay until the next message (and carry data-kind="error"). */
export function toast(text, kind = 'info') {
  const t = document.getElementById('toast');
  t.textContent = text;
  t.dataset.kind = kind;
  t.classList.add('shown');
  clearTimeout(toastTimer);
  if (kind !== 'error') toastTimer = setTimeout(() => t.classList.remove('shown'), 4000);
}

/** Runs an action; a failure is shown as "<what> failed: <code>: <message>" (the server's code, as any client sees it). */
export async function act(what, fn) {
  try {
    return await fn();
  } catch (e) {
    toast(`${what} failed: ${e?.code ?? 'error'}: ${e?.message ?? e}`, 'error');
    return undefined;
  }
}
