#!/usr/bin/env node
// Builds the static benchmark pages from result files (BENCH.md format). No dependencies.
//   node site/build.mjs [--results DIR] [--out DIR] [--run FILE_OR_LABEL]
// Defaults: --results bench/results, --out site/out (relative to the repository root).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chooseRun, loadResults } from './src/load.mjs';
import { PAGES, historyPage, indexPage, methodPage, noResultsPage, scenariosPage } from './src/pages.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function parseArgs(argv) {
  const opts = { results: path.join(root, 'bench/results'), out: path.join(root, 'site/out'), run: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--results') opts.results = path.resolve(value());
    else if (a === '--out') opts.out = path.resolve(value());
    else if (a === '--run') opts.run = value();
    else if (a === '-h' || a === '--help') opts.help = true;
    else throw new Error(`unknown option '${a}' (try --help)`);
  }
  return opts;
}

/** Builds the pages; returns what was written, for the caller and the tests. */
export function build({ results, out, run: wanted }) {
  const { runs, skipped } = loadResults(results);
  fs.mkdirSync(out, { recursive: true });
  // Only our own pages are removed, so a stale page never outlives a rebuild and nothing else is touched.
  for (const [f] of PAGES) fs.rmSync(path.join(out, f), { force: true });
  const rel = path.relative(root, results) || '.';
  if (runs.length === 0 && wanted) throw new Error(`--run ${wanted}: there are no readable result files in ${results}`);
  if (runs.length === 0) {
    fs.writeFileSync(path.join(out, 'index.html'), noResultsPage(rel.startsWith('..') ? results : rel, skipped));
    return { runs, skipped, shown: null, pages: ['index.html'] };
  }
  const run = chooseRun(runs, wanted);
  const pages = {
    'index.html': indexPage(run, runs, skipped),
    'scenarios.html': scenariosPage(run, runs),
    'history.html': historyPage(run, runs),
    'method.html': methodPage(run, runs, skipped),
  };
  for (const [f, html] of Object.entries(pages)) fs.writeFileSync(path.join(out, f), html);
  return { runs, skipped, shown: run, pages: Object.keys(pages) };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const opts = parseArgs(process.argv.slice(2));
    if (opts.help) {
      console.log('usage: ./hypha site [--results DIR] [--out DIR] [--run FILE_OR_LABEL]');
      process.exit(0);
    }
    const { runs, skipped, shown } = build(opts);
    for (const s of skipped) console.error(`site: skipped ${s.file}: ${s.reason}`);
    for (const r of runs) for (const w of r.warnings) console.error(`site: ${r.file}: ${w}`);
    const where = path.relative(process.cwd(), path.join(opts.out, 'index.html'));
    if (!shown) console.log(`site: no results in ${opts.results} — wrote the "no results yet" page: ${where}`);
    else console.log(`site: ${runs.length} run(s); showing ${shown.file} (${shown.label}) — open ${where}`);
  } catch (e) {
    console.error(`site: ${e.message}`);
    process.exit(1);
  }
}
