// `./hypha restart` as OPERATIONS.md gives it: `./hypha serve` on a data directory, clients under
// load, then `./hypha restart --data-dir DIR`: a new process, the old one drained (1012), and the
// clients ride through with 0 failed requests; prints the pause the clients saw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HyphaClient } from '../../dist/index.js';
import { repo, until } from '../server.mjs';

test('./hypha restart: a new process serves, the clients see a pause and no failure', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hypha-restart-'));
  const port = 20000 + Math.floor(Math.random() * 12000); // below the kernel's ephemeral range (32768..)
  const env = { ...process.env, HYPHA_AOT: 'off' };
  const log = fs.openSync(path.join(dir, 'serve.log'), 'w');
  const serve = spawn(path.join(repo, 'hypha'), ['serve', `--port=${port}`, `--data-dir=${dir}/data`], { env, stdio: ['ignore', log, log], detached: true });
  const base = `http://127.0.0.1:${port}`;
  try {
    await until(async () => { try { return (await fetch(`${base}/observe/health`)).ok; } catch { return false; } }, 120_000, './hypha serve healthy');
    const root = fs.readFileSync(path.join(dir, 'data/root-token'), 'utf8').trim();
    const api = async (p, body) => (await fetch(base + p, { method: 'POST', headers: { Authorization: `Bearer ${root}` }, body: JSON.stringify(body) })).json();
    await api('/v1/workspaces', { name: 'rs' });
    const clients = await Promise.all(Array.from({ length: 10 }, async (_, i) =>
      HyphaClient.connect(`${base}/v1/workspaces/rs`, (await api('/v1/workspaces/rs/tokens', { permission: 'read_write', client_id: `c${i}` })).token)));
    const acks = [];
    const failures = [];
    let go = true;
    const load = clients.map(async (c, i) => {
      while (go) {
        try { await c.log(`l${i}`).append({ t: Date.now() }); acks.push(performance.now()); } catch (e) { failures.push(String(e)); }
      }
    });
    await until(() => acks.length > 300, 30_000, 'load runs');
    const oldPid = fs.readFileSync(path.join(dir, 'data/server.lock'), 'utf8').trim();
    const r = spawnSync(path.join(repo, 'hypha'), ['restart', '--data-dir', `${dir}/data`], { env, encoding: 'utf8', timeout: 90_000 });
    assert.equal(r.status, 0, `./hypha restart: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, new RegExp(`pid ${oldPid} -> \\d+, serving on port ${port} after \\d+ ms`));
    const after = acks.length;
    await until(() => acks.length > after + 300, 30_000, 'load after the restart');
    go = false;
    await Promise.all(load);
    let pause = 0;
    for (let i = 1; i < acks.length; i++) pause = Math.max(pause, acks[i] - acks[i - 1]);
    console.log(`# ./hypha restart: ${r.stdout.trim()}; the longest gap between acknowledged appends of 10 clients: ${pause.toFixed(0)} ms`);
    assert.deepEqual(failures, [], 'no request failed');
    for (const c of clients) await c.close();
    const newPid = fs.readFileSync(path.join(dir, 'data/server.lock'), 'utf8').trim();
    assert.notEqual(newPid, oldPid, 'another process holds the data directory');
    // ./hypha serve stays the parent (a later ./hypha restart or Ctrl-C reaches the server through it)
    assert.equal(serve.exitCode, null, `./hypha serve still runs after the restart: ${fs.readFileSync(path.join(dir, 'serve.log'), 'utf8').slice(-2000)}`);
    assert.equal(fs.readFileSync(`/proc/${newPid}/stat`, 'utf8').split(' ')[3], String(serve.pid), 'the new server is a child of ./hypha serve');
  } finally {
    try { process.kill(-serve.pid, 'SIGTERM'); } catch { /* gone */ }
    await until(() => serve.exitCode !== null || serve.signalCode !== null, 30_000, './hypha serve stopped')
      .catch(() => { try { process.kill(-serve.pid, 'SIGKILL'); } catch { /* gone */ } });
    // a server of the group may still be writing its data directory as it ends: remove it once it is quiet
    await until(() => { try { fs.rmSync(dir, { recursive: true, force: true }); return true; } catch { return false; } }, 30_000, 'the temp directory removed');
  }
});
