// Reads bench/results/*.json (the BENCH.md result format) into runs the pages can show.
// Lenient on what is optional, strict on what the pages cannot do without: a file that is not
// JSON, has no `scenarios` array or no valid `started` is skipped and reported, never guessed.

import fs from 'node:fs';
import path from 'node:path';

const NUMERIC = ['n', 'errors', 'p50_ms', 'p95_ms', 'p99_ms', 'max_ms', 'throughput_per_s',
  'mb_per_s', 'peak', 'failures', 'conflicts', 'server_cpu_us_per_op', 'client_cpu_us_per_op', 'server_jit_cpu_us_per_op', 'server_cs_per_op', 'acknowledged_lost'];

const CLIENT_LABEL = { js: 'TypeScript client' };

function num(v) {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** One scenario row with every metric either a finite number or null. */
function normaliseRow(raw) {
  const row = { name: String(raw.name), system: String(raw.system).toLowerCase() };
  for (const f of NUMERIC) row[f] = num(raw[f]);
  row.final_exact = typeof raw.final_exact === 'boolean' ? raw.final_exact : null;
  row.notes = raw.notes == null ? '' : String(raw.notes);
  // The artifact scenarios run on more than one provider; the harness may name it in any of these.
  const variant = raw.provider ?? raw.variant ?? raw.backend ?? raw.store ?? null;
  // A row run through another client than the JVM one (`./hypha bench --client js`): "" for the JVM client.
  row.client = raw.client == null || raw.client === 'jvm' ? '' : String(raw.client);
  const parts = [variant == null ? '' : String(variant), row.client ? CLIENT_LABEL[row.client] || `${row.client} client` : ''];
  row.variant = parts.filter(Boolean).join(', ');
  return row;
}

/**
 * Parses one result file's text. Returns {run} or {error} (a reason a person can act on).
 */
export function parseRun(text, file) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { error: `not valid JSON (${e.message})` };
  }
  if (!isObject(doc)) return { error: 'not a JSON object' };
  if (!Array.isArray(doc.scenarios)) return { error: 'no "scenarios" array' };
  const started = typeof doc.started === 'string' ? new Date(doc.started) : null;
  if (!started || Number.isNaN(started.getTime())) return { error: 'no valid ISO-8601 "started"' };
  const warnings = [];
  const scenarios = [];
  doc.scenarios.forEach((raw, i) => {
    if (!isObject(raw) || typeof raw.name !== 'string' || !raw.name || typeof raw.system !== 'string' || !raw.system) {
      warnings.push(`scenario row ${i} has no "name" or "system"; left out`);
      return;
    }
    scenarios.push(normaliseRow(raw));
  });
  if (scenarios.length === 0) return { error: 'no scenario row with a "name" and a "system"' };
  const config = isObject(doc.config) ? doc.config : {};
  const label = typeof doc.label === 'string' && doc.label ? doc.label : path.basename(file, '.json');
  return {
    run: {
      file: path.basename(file),
      label,
      started,
      startedText: doc.started,
      machine: isObject(doc.machine) ? doc.machine : {},
      config,
      cost: isObject(doc.cost) ? doc.cost : {},
      scenarios,
      warnings,
      quick: config.quick === true || /(^|[^a-z])quick([^a-z]|$)/i.test(label),
      fixture: config.fixture === true,
    },
  };
}

/**
 * Loads every *.json directly in `dir` (not sub-folders: raw samples and scratch runs live there).
 * Returns {runs (oldest first), skipped: [{file, reason}]}. A missing folder is no results.
 */
export function loadResults(dir) {
  const runs = [];
  const skipped = [];
  let names = [];
  try {
    names = fs.readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isFile() && d.name.toLowerCase().endsWith('.json'))
      .map((d) => d.name)
      .sort();
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    const { run, error } = parseRun(fs.readFileSync(file, 'utf8'), file);
    if (error) skipped.push({ file: name, reason: error });
    else runs.push(run);
  }
  runs.sort((a, b) => a.started - b.started || (a.file < b.file ? -1 : 1));
  return { runs, skipped };
}

/**
 * The run the headline and tables show: `wanted` (a file name or label) when given, else the
 * latest full run, else the latest quick one. Throws when `wanted` matches nothing.
 */
export function chooseRun(runs, wanted) {
  if (runs.length === 0) return null;
  if (wanted) {
    const hits = runs.filter((r) => r.file === wanted || r.file === `${wanted}.json` || r.label === wanted);
    if (hits.length === 0) throw new Error(`no result file or label '${wanted}' among: ${runs.map((r) => r.file).join(', ')}`);
    return hits[hits.length - 1];
  }
  const full = runs.filter((r) => !r.quick);
  return (full.length ? full : runs)[(full.length ? full : runs).length - 1];
}
