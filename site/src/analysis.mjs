// Reading a run: which row is ours, which peer compares, whether a mark is met, and ratios.
// No formatting here, so the pages and the tests agree on what a figure is.

import { MARKS, METRICS, SYSTEM_LABEL, scenarioInfo } from './catalogue.mjs';
import { fixed, ms, rate } from './format.mjs';

const FIELD_WORD = { p50_ms: 'p50', p99_ms: 'p99', throughput_per_s: 'throughput', mb_per_s: 'MB/s', peak: 'peak sockets',
  errors: 'errors', failures: 'failures', final_exact: 'final value exact' };
const OP_WORD = { '<=': '≤', '>=': '≥', '==': '=' };

function targetWords(field, value) {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (field.endsWith('_ms')) return `${ms(value)} ms`;
  return value >= 1000 ? fixed(value, 0) : rate(value);
}

export const US = 'hypha-mesh';

export function rowsOf(run, name) {
  return run ? run.scenarios.filter((r) => r.name === name) : [];
}

/**
 * Our rows for a scenario (several when it ran on several providers), in file order: those run
 * through the JVM client, which the marks and the headline speak of. Rows run through another
 * client (`--client js`) are shown beside them in the scenario tables and charts, labelled.
 */
export function ourRows(run, name) {
  return rowsOf(run, name).filter((r) => r.system === US && !r.client);
}

export function ourRow(run, name) {
  return ourRows(run, name)[0] || null;
}

export function peerRow(run, name, system) {
  return rowsOf(run, name).find((r) => r.system === system) || null;
}

/** A value of ours, or null. */
export function ours(run, name, field) {
  const r = ourRow(run, name);
  return r && r[field] != null ? r[field] : null;
}

export function systemLabel(system) {
  return SYSTEM_LABEL[system] || system;
}

export function rowLabel(row) {
  return systemLabel(row.system) + (row.variant ? ` (${row.variant})` : '');
}

/** Systems that appear anywhere in the run other than ours. */
export function peersIn(run) {
  return [...new Set(run.scenarios.map((r) => r.system).filter((s) => s !== US))].sort();
}

export function scenarioNames(run) {
  return [...new Set(run.scenarios.map((r) => r.name))];
}

/**
 * Ratio of `a` to `b` on a field: {value: a/b, verdict: 'better'|'worse'|'about equal'} from
 * `a`'s side, given which way the field is better. Null when either side lacks the figure.
 */
export function compare(a, b, field) {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null;
  const value = a / b;
  const better = (METRICS[field] || { better: 'lower' }).better;
  let verdict = 'about equal';
  if (value > 1.02) verdict = better === 'higher' ? 'better' : 'worse';
  else if (value < 0.98) verdict = better === 'higher' ? 'worse' : 'better';
  return { value, verdict, field };
}

/** The field two figure-sets share, preferring the scenario's key metric. */
export function sharedField(name, a, b) {
  const key = scenarioInfo(name).key;
  for (const f of [key, 'p50_ms', 'throughput_per_s', 'mb_per_s', 'p99_ms', 'peak']) {
    if (a && b && a[f] != null && b[f] != null) return f;
  }
  return null;
}

function check(op, a, b) {
  if (op === '<=') return a <= b;
  if (op === '>=') return a >= b;
  return a === b;
}

/**
 * Evaluates issue 6's mark for a scenario against a run.
 * Returns null when the scenario has no mark; else {text, status: 'met'|'missed'|'unknown', checks:
 * [{label, status, ours, target}]}. 'unknown' means a figure the mark needs is not in the run.
 */
export function evaluateMark(run, name) {
  const mark = MARKS[name];
  if (!mark) return null;
  const mine = mark.all ? ourRows(run, name) : ourRows(run, name).slice(0, 1);
  const checks = [];
  for (const c of mark.checks) {
    const targets = mine.length ? mine : [null];
    for (const row of targets) {
      const who = row && row.variant ? ` (${row.variant})` : '';
      let target = c.value;
      let label;
      if (c.peer) {
        const p = peerRow(run, name, c.peer);
        target = p ? p[c.field] : null;
        label = `${FIELD_WORD[c.field] || c.field} ${OP_WORD[c.op]} ${systemLabel(c.peer)}'s${who}`;
      } else {
        label = `${FIELD_WORD[c.field] || c.field} ${OP_WORD[c.op]} ${targetWords(c.field, c.value)}${who}`;
      }
      const mineV = row ? row[c.field] : null;
      let status;
      if (mineV == null || target == null) status = 'unknown';
      else status = check(c.op, mineV, target) ? 'met' : 'missed';
      checks.push({ label, status, field: c.field, ours: mineV, target, peer: c.peer || null, op: c.op });
    }
  }
  let status = 'met';
  if (checks.some((c) => c.status === 'missed')) status = 'missed';
  else if (checks.some((c) => c.status === 'unknown')) status = 'unknown';
  return { text: mark.text, status, checks };
}

/** Fraction of attempts that conflicted: conflicts ÷ (conflicts + commits), as the reference counts it. */
export function conflictRate(row) {
  if (!row || row.conflicts == null || row.n == null || row.conflicts + row.n === 0) return null;
  return row.conflicts / (row.conflicts + row.n);
}

export function median(values) {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}
