#!/usr/bin/env node
// Builds the package: tsc (ES modules and type declarations into dist/), then one minified ES
// module for pages (dist/hypha-client.min.js, esbuild; the `ws` import stays out of it) and its
// size, minified and gzip (budget: 15 KB gzip). `node build.mjs --size` prints the sizes only.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const BUDGET_GZIP = 15 * 1024;

if (!process.argv.includes('--size')) {
  execFileSync(process.execPath, [path.join(here, 'node_modules/typescript/bin/tsc'), '-p', path.join(here, 'tsconfig.json')], { stdio: 'inherit' });
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: [path.join(here, 'src/index.ts')], bundle: true, minify: true, format: 'esm',
    target: 'es2022', outfile: path.join(here, 'dist/hypha-client.min.js'), legalComments: 'none', logLevel: 'warning',
  });
}
const min = fs.readFileSync(path.join(here, 'dist/hypha-client.min.js'));
const gz = zlib.gzipSync(min, { level: 9 }).length;
const sizes = { minified_bytes: min.length, gzip_bytes: gz, budget_gzip_bytes: BUDGET_GZIP };
fs.writeFileSync(path.join(here, 'dist/size.json'), JSON.stringify(sizes) + '\n');
console.log(`client-js: browser bundle ${(min.length / 1024).toFixed(1)} KiB minified, ${(gz / 1024).toFixed(1)} KiB gzip (budget ${BUDGET_GZIP / 1024} KiB)`);
if (gz > BUDGET_GZIP) { console.error('client-js: the browser bundle is over its gzip budget'); process.exit(1); }
