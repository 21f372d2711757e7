// A real Hypha-Mesh server for the client's tests: the built jar (modules/runtime/target/hypha-mesh.jar)
// on a random port with its own data directory in a temp dir. HYPHA_JAR and JAVA (or JAVA_HOME) override
// where they are found. start() resolves once the server logs that it listens; kill() is kill -9;
// restart() starts it again on the same port and data directory.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '../../..');
export const JAR = process.env.HYPHA_JAR ?? path.join(repo, 'modules/runtime/target/hypha-mesh.jar');

export function javaBin() {
  if (process.env.JAVA) return process.env.JAVA;
  if (process.env.JAVA_HOME) return path.join(process.env.JAVA_HOME, 'bin/java');
  const jvm = '/usr/lib/jvm';
  const found = fs.existsSync(jvm) ? fs.readdirSync(jvm).filter((d) => /(2[1-9]|[3-9]\d)/.test(d)).sort().reverse() : [];
  for (const d of found) if (fs.existsSync(path.join(jvm, d, 'bin/java'))) return path.join(jvm, d, 'bin/java');
  return 'java';
}

const START_BOUND_MS = 60_000;

export class TestServer {
  constructor(opts = {}) {
    this.args = opts.args ?? [];
    this.env = opts.env ?? {};
    this.dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'hypha-js-'));
    this.port = opts.port ?? 0;
    this.scheme = opts.scheme ?? 'http';
    this.proc = null;
    this.log = '';
  }

  static async start(opts) {
    const s = new TestServer(opts);
    await s.launch();
    return s;
  }

  get base() { return `${this.scheme}://127.0.0.1:${this.port}`; }
  get root() { return fs.readFileSync(path.join(this.dataDir, 'root-token'), 'utf8').trim(); }
  workspaceUrl(ws) { return `${this.base}/v1/workspaces/${ws}`; }

  launch() {
    if (!fs.existsSync(JAR)) throw new Error(`no server jar at ${JAR}: build it first (mvn -pl modules/runtime -am package, or ./hypha test)`);
    const args = ['-XX:TieredStopAtLevel=1', '-Xmx512m', '-jar', JAR, `--port=${this.port}`, `--data-dir=${this.dataDir}`, ...this.args];
    const proc = spawn(javaBin(), args, { env: { ...process.env, HYPHA_AOT: 'off', ...this.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`the server did not start within ${START_BOUND_MS} ms:\n${this.log}`)); }, START_BOUND_MS);
      const onData = (b) => {
        this.log += b.toString();
        if (this.log.length > 200_000) this.log = this.log.slice(-100_000);
        const m = /Hypha-Mesh listening on (https?):\/\/[^:]+:(\d+)/.exec(this.log);
        if (m && this.proc === proc && !proc.started) {
          proc.started = true;
          this.port = Number(m[2]);
          clearTimeout(timer);
          resolve(this);
        }
      };
      proc.stdout.on('data', onData);
      proc.stderr.on('data', onData);
      proc.on('exit', (code) => {
        if (!proc.started) { clearTimeout(timer); reject(new Error(`the server exited with ${code} before it listened:\n${this.log}`)); }
      });
    });
  }

  /** kill -9, and wait until the process is gone. */
  async kill() {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await gone;
  }

  /** SIGTERM (a graceful stop), and wait. */
  async stop() {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 20_000);
    await gone;
    clearTimeout(t);
  }

  async restart() {
    await this.kill();
    this.log = '';
    await this.launch();
  }

  async close() {
    await this.kill();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }

  async http(method, pathname, body, token = this.root) {
    const res = await fetch(this.base + pathname, {
      method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  }

  /** A new workspace with a unique name. */
  async workspace(prefix = 'w') {
    const name = `${prefix}${Math.random().toString(36).slice(2, 10)}`;
    await this.http('POST', '/v1/workspaces', { name });
    return name;
  }

  async mint(ws, { permission = 'read_write', clientId, ttlSeconds = 3600 } = {}) {
    const body = { permission, ttl_seconds: ttlSeconds };
    if (clientId) body.client_id = clientId;
    const t = await this.http('POST', `/v1/workspaces/${ws}/tokens`, body);
    return t.token;
  }
}

/** Awaits `cond()` (sync or async) to be truthy, polling every 20 ms, at most `ms`. */
export async function until(cond, ms = 10_000, what = 'condition') {
  const end = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what} not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
