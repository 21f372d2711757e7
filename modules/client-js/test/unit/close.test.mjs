// The client's close-code table mirrors the server's (modules/api CloseCode.java): same codes,
// same reconnect rule, same error code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLOSE_CODES, reconnectAfter } from '../../dist/close.js';

const java = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)),
  '../../../api/src/main/java/io/hyphamesh/api/CloseCode.java'), 'utf8');

test('CLOSE_CODES is CloseCode.java, entry for entry', () => {
  const rows = [...java.matchAll(/^\s{4}([A-Z_]+)\((\d+), "[^"]*", Reconnect\.([A-Z_]+), ErrorCode\.([A-Z_]+)\)[,;]/gm)];
  assert.ok(rows.length >= 14, `read ${rows.length} entries from CloseCode.java`);
  const fromJava = Object.fromEntries(rows.map(([, name, code, rc, err]) => [code, { name, reconnect: rc.toLowerCase(), error: err.toLowerCase() }]));
  assert.deepEqual(CLOSE_CODES, fromJava);
  assert.equal(reconnectAfter(1012), 'soon');
  assert.equal(reconnectAfter(4999), 'backoff', 'a code not in the table: backoff');
});

test('ERROR_CODES is ErrorCode.java, code for code, with the same HTTP statuses', async () => {
  const { ERROR_CODES, HTTP_STATUS } = await import('../../dist/errors.js');
  const src = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)),
    '../../../api/src/main/java/io/hyphamesh/api/ErrorCode.java'), 'utf8');
  const rows = [...src.matchAll(/^\s{4}([A-Z_]+)\((\d{3})\)[,;]/gm)].map(([, name, status]) => [name.toLowerCase(), Number(status)]);
  assert.ok(rows.length >= 14, `read ${rows.length} codes from ErrorCode.java`);
  assert.deepEqual([...ERROR_CODES], rows.map(([c]) => c));
  assert.deepEqual(HTTP_STATUS, Object.fromEntries(rows));
});
