#!/usr/bin/env node
// Bundles the console (app.js and the modules it imports, with @hyphamesh/client taken from
// modules/client-js/src) into one minified ES module, console.js, and minifies console.css, beside a
// copy of index.html, into the directory given (build.sh calls it). Prints the sizes and fails over
// the budget: the pages' JavaScript and CSS at most 100 KiB gzip together.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const cjs = path.resolve(here, '../../../../client-js');
const out = path.resolve(process.argv[2] ?? path.join(here, 'out'));
const BUDGET_GZIP = 100 * 1024;
const esbuild = createRequire(path.join(cjs, 'package.json'))('esbuild');

fs.mkdirSync(out, { recursive: true });
await esbuild.build({
  entryPoints: [path.join(here, 'app.js')], bundle: true, minify: true, format: 'esm', target: 'es2022',
  outfile: path.join(out, 'console.js'), legalComments: 'none', logLevel: 'warning',
  alias: { '@hyphamesh/client': path.join(cjs, 'src/index.ts') },
});
await esbuild.build({
  entryPoints: [path.join(here, 'console.css')], bundle: true, minify: true,
  outfile: path.join(out, 'console.css'), logLevel: 'warning',
});
fs.copyFileSync(path.join(here, 'index.html'), path.join(out, 'index.html'));
let gz = 0, min = 0;
for (const f of ['console.js', 'console.css', 'index.html']) {
  const b = fs.readFileSync(path.join(out, f));
  min += b.length;
  gz += zlib.gzipSync(b, { level: 9 }).length;
}
console.log(`[console] built into ${out}: ${(min / 1024).toFixed(1)} KiB, ${(gz / 1024).toFixed(1)} KiB gzip (budget ${BUDGET_GZIP / 1024} KiB)`);
if (gz > BUDGET_GZIP) { console.error('[console] the pages are over their gzip budget'); process.exit(1); }
