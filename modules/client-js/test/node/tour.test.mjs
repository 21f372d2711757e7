// The tour (examples/tour.mjs) runs against a real server and prints what docs/CLIENT-JS.md says
// it prints; every ```js block of docs/CLIENT-JS.md is, character for character, a region of it,
// and every region is shown there.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { TestServer, repo } from '../server.mjs';
import { tour } from '../../examples/tour.mjs';

let s;
before(async () => { s = await TestServer.start(); });
after(() => s.close());

function regions() {
  const src = fs.readFileSync(path.join(repo, 'modules/client-js/examples/tour.mjs'), 'utf8');
  const out = new Map();
  for (const m of src.matchAll(/\/\/ js:([a-z0-9-]+)\n([\s\S]*?)\n\s*\/\/ end:\1/g)) {
    const lines = m[2].split('\n');
    const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
    out.set(m[1], lines.map((l) => (l.trim() ? l.slice(indent) : '')).join('\n').trimEnd());
  }
  return out;
}

test('every js block of docs/CLIENT-JS.md is a region of the tour, and every region is shown', () => {
  const doc = fs.readFileSync(path.join(repo, 'docs/CLIENT-JS.md'), 'utf8');
  const marked = [...doc.matchAll(/<!-- js:([a-z0-9-]+) -->\n```js\n([\s\S]*?)\n```/g)];
  const blocks = [...doc.matchAll(/```js\n/g)];
  assert.equal(marked.length, blocks.length, 'every ```js block is preceded by <!-- js:NAME -->');
  const r = regions();
  for (const [, name, code] of marked) {
    assert.ok(r.has(name), `CLIENT-JS.md shows '${name}', which the tour does not define`);
    assert.equal(code, r.get(name), `'${name}' differs from the tour`);
  }
  assert.deepEqual([...r.keys()].sort(), [...new Set(marked.map((m) => m[1]))].sort(), 'every region is shown');
});

test('the tour runs and prints what it should', async () => {
  const ws = await s.workspace();
  const lines = [];
  await tour(s.workspaceUrl(ws), await s.mint(ws, { clientId: 'tourist' }), (l) => lines.push(l));
  const has = (re) => assert.ok(lines.some((l) => re.test(l)), `${re} in:\n${lines.join('\n')}`);
  has(/^connected as tourist \(read_write\), round trip \d/);
  has(/^read 4 entries, next from 5$/);
  has(/^entry 4: \{"text":"once"\}$/);
  has(/^balance 5 at version 2$/);
  has(/^conflict: the Doc is at version 2$/);
  has(/^1 \+ 2 = 3$/);
  has(/^here: tourist$/);
  has(/^read back: hello$/);
  has(/^uploaded 6291456 of 6291456$/);
  has(/^stored big\/zeros.bin: 6291456 bytes, ETag [0-9a-f]{32}-2$/);
  has(/^alice 5, transfer at seq 1$/);
  has(/^sent again: duplicate true$/);
  has(/^not_found: /);
});
