// TLS from Node: a server with a PKCS#12 key store (tls.keystore-file), reached over wss:// and
// https:// (socket and artifacts). The certificate is the test's own, self-signed: this file's
// process trusts it by turning Node's verification off (never do that outside a test).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HyphaClient } from '../../dist/index.js';
import { TestServer } from '../server.mjs';

process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
let s, tmp;
before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hypha-js-tls-node-'));
  const p12 = path.join(tmp, 'server.p12');
  const keytool = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin/keytool') : 'keytool';
  execFileSync(keytool, ['-genkeypair', '-alias', 'server', '-keyalg', 'EC', '-groupname', 'secp256r1', '-dname', 'CN=localhost',
    '-ext', 'SAN=dns:localhost,ip:127.0.0.1', '-validity', '2', '-storetype', 'PKCS12', '-keystore', p12,
    '-storepass', 'changeit', '-keypass', 'changeit'], { stdio: 'pipe' });
  s = await TestServer.start({ scheme: 'https', args: [`--tls.keystore-file=${p12}`, '--tls.keystore-password=changeit'] });
});
after(async () => { await s.close(); fs.rmSync(tmp, { recursive: true, force: true }); });

test('wss:// and https:// against a TLS listener', async () => {
  const ws = await s.workspace('tls');
  const c = await HyphaClient.connect(s.workspaceUrl(ws).replace('https:', 'wss:'), await s.mint(ws, { clientId: 'sec' }));
  assert.ok(c.info.server.startsWith('https://'));
  assert.equal(await c.log('secure').append({ over: 'wss' }), 1);
  const info = await c.artifacts.put('a.txt', 'over https');
  assert.equal(await (await c.artifacts.get('a.txt')).text(), 'over https');
  assert.equal(info.size, 10);
  await c.close();
});
