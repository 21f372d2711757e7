// The README's two set-up commands, run as written: a fresh copy of the tree (the files git tracks,
// plus the server jar this run built, so the copy does not build again), `./hypha serve` in it with
// its default data directory (./data) and port (8080) until /observe/health answers, then every
// command of the README's "A first session" block, each output compared with the one the README
// shows (the same JSON members; the same values but for times, ids and tokens). The second command,
// `./hypha test`, is the run this script is part of. Exits 1 on any failure; prints
// "readme test: N checks passed, M failed". Needs Node 20+, bash, curl (installed when missing).
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PORT = 8080; // the README's
const HEALTH_BOUND_MS = 240_000; // a first ./hypha serve on JDK 25 also makes the AOT cache
const STOP_BOUND_MS = 30_000;
let passed = 0, failed = 0;
const check = (ok, what) => {
  if (ok) { passed++; } else { failed++; console.log(`  FAIL: ${what}`); }
  return ok;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const finish = (code) => {
  console.log(`readme test: ${passed} checks passed, ${failed} failed`);
  process.exit(code ?? (failed > 0 ? 1 : 0));
};

// --- the README's first session: commands and the outputs shown under them
function firstSession(readme) {
  const section = readme.split('\n## A first session')[1];
  if (!section) throw new Error('README.md has no "## A first session" section');
  return session(section.split('```sh\n')[1].split('\n```')[0]);
}

// the web page's commands: the block after <!-- web-session --> in "## From a web page"
function webSession(readme) {
  const block = readme.split('<!-- web-session -->\n```sh\n')[1];
  if (!block) throw new Error('README.md has no <!-- web-session --> block');
  return session(block.split('\n```')[0]);
}

function session(text) {
  const block = text.split('\n');
  const steps = [];
  for (let i = 0; i < block.length; i++) {
    if (!block[i].startsWith('$ ')) {
      if (steps.length === 0) throw new Error(`README's first session starts with output: ${block[i]}`);
      if (block[i].trim()) steps[steps.length - 1].expected.push(block[i]);
      continue;
    }
    let cmd = block[i].slice(2);
    while (cmd.endsWith('\\') && i + 1 < block.length) cmd = cmd.slice(0, -1) + ' ' + block[++i].trim();
    steps.push({ cmd, expected: [] });
  }
  return steps;
}

// values that differ at every run: compared by kind, not by value
const VOLATILE = new Set(['created_at', 'expires_at', 'last_modified', 'token', 'id']);
function compare(i, step, actual) {
  const want = step.expected.join('\n');
  if (!want) return check(actual.trim() === '', `step ${i} (${step.cmd}) printed ${JSON.stringify(actual)}; the README shows nothing`);
  let a, w;
  try { w = JSON.parse(want); } catch { return check(actual.trim() === want.trim(), `step ${i}: ${actual} != ${want}`); }
  try { a = JSON.parse(actual); } catch { return check(false, `step ${i} (${step.cmd}) printed no JSON: ${JSON.stringify(actual)}`); }
  check(JSON.stringify(Object.keys(a).sort()) === JSON.stringify(Object.keys(w).sort()),
    `step ${i} (${step.cmd}): members ${Object.keys(a)} where the README shows ${Object.keys(w)}`);
  for (const k of Object.keys(w)) {
    if (!(k in a)) continue;
    if (VOLATILE.has(k)) check(typeof a[k] === typeof w[k] && (k !== 'token' || String(a[k]).startsWith('eyJ')),
      `step ${i}: "${k}" is ${JSON.stringify(a[k])}, the README's kind is ${typeof w[k]}`);
    else check(JSON.stringify(a[k]) === JSON.stringify(w[k]), `step ${i}: "${k}" is ${JSON.stringify(a[k])}, the README shows ${JSON.stringify(w[k])}`);
  }
}

async function healthy() {
  try { return (await fetch(`http://127.0.0.1:${PORT}/observe/health`)).status === 200; } catch { return false; }
}

async function main() {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const steps = firstSession(readme);
  const web = webSession(readme);
  check(steps.length >= 3, `README's first session has ${steps.length} commands`);
  if (spawnSync('curl', ['--version']).status !== 0) {
    console.log('readme test: installing curl (apt-get install -y curl)...');
    spawnSync('bash', ['-c', 'apt-get install -y -q curl >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1; apt-get install -y -q curl >/dev/null 2>&1)']);
    if (!check(spawnSync('curl', ['--version']).status === 0, 'curl is missing and could not be installed')) finish(1);
  }
  const jar = path.join(root, 'modules/runtime/target/hypha-mesh.jar');
  if (!check(fs.existsSync(jar), `${jar} is missing: build first (./hypha build)`)) finish(1);
  if (!check(!(await healthy()), `port ${PORT} already answers: stop what serves it (the README's commands use ${PORT})`)) finish(1);

  // a fresh copy: what git tracks, then the built jar and its lib/ newer than every source
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'hypha-readme-'));
  const files = execFileSync('git', ['-C', root, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'])
    .toString().split('\0').filter(Boolean);
  for (const f of files) {
    const from = path.join(root, f);
    if (!fs.existsSync(from)) continue; // deleted in the work tree, not yet committed
    fs.mkdirSync(path.dirname(path.join(copy, f)), { recursive: true });
    fs.cpSync(from, path.join(copy, f), { preserveTimestamps: false, verbatimSymlinks: true });
  }
  const target = path.join(copy, 'modules/runtime/target');
  fs.mkdirSync(target, { recursive: true });
  fs.cpSync(path.join(root, 'modules/runtime/target/lib'), path.join(target, 'lib'), { recursive: true });
  fs.copyFileSync(jar, path.join(target, 'hypha-mesh.jar'));
  const later = new Date(Date.now() + 2000);
  fs.utimesSync(path.join(target, 'hypha-mesh.jar'), later, later);
  check(!fs.existsSync(path.join(copy, 'data')), 'the copy holds no data directory');
  console.log(`readme test: ./hypha serve in a fresh copy of the tree (${files.length} files) at ${copy}`);

  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HYPHA_')));
  const logFile = path.join(root, 'target', 'readme-test-serve.log');
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const log = fs.openSync(logFile, 'w');
  const server = spawn('./hypha', ['serve'], { cwd: copy, env, stdio: ['ignore', log, log], detached: true });
  let exited = null;
  server.on('exit', (code, signal) => { exited = { code, signal }; });
  const tail = () => fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n');
  const stop = async () => {
    if (exited) return;
    try { process.kill(-server.pid, 'SIGTERM'); } catch { /* gone */ }
    for (const t0 = Date.now(); !exited && Date.now() - t0 < STOP_BOUND_MS;) await sleep(100);
    if (!exited) { try { process.kill(-server.pid, 'SIGKILL'); } catch { /* gone */ } }
  };
  try {
    const t0 = Date.now();
    while (!exited && !(await healthy()) && Date.now() - t0 < HEALTH_BOUND_MS) await sleep(200);
    if (!check(!exited && await healthy(), `./hypha serve did not become healthy (${exited ? 'exited ' + JSON.stringify(exited) : 'timed out'}); its log ends:\n${tail()}`)) {
      return;
    }
    console.log(`readme test: healthy after ${Date.now() - t0} ms; running the README's first session`);
    check(fs.existsSync(path.join(copy, 'data/root-token')), 'data/root-token was made in the default data directory');

    // one bash runs every command (ROOT=... carries over), each output after a marker line
    const script = ['set -u'];
    steps.forEach((s, i) => { script.push(`printf '\\n@@step ${i}@@\\n'`, s.cmd); });
    const run = spawnSync('bash', ['-c', script.join('\n')], { cwd: copy, env, encoding: 'utf8', timeout: 60_000 });
    check(run.status === 0, `the session's commands exited ${run.status}: ${run.stderr}`);
    const outputs = run.stdout.split(/\n@@step (\d+)@@\n/);
    steps.forEach((s, i) => {
      const at = outputs.indexOf(String(i));
      const out = at >= 0 ? outputs[at + 1].replace(/\n$/, '') : '';
      compare(i, s, out);
    });
    await webPage(copy, env, web);
  } finally {
    await stop();
    check(exited !== null, `./hypha serve did not stop within ${STOP_BOUND_MS} ms of SIGTERM`);
    check(!/cannot start/.test(fs.readFileSync(logFile, 'utf8')), `the server log says it could not start:\n${tail()}`);
    if (failed === 0) fs.rmSync(copy, { recursive: true, force: true });
    else console.log(`readme test: the copy is kept at ${copy}; the server's log is ${logFile}`);
  }
}

// the web page's commands in one bash (its own process group: the page server it starts in the
// background is stopped with it), outputs compared with the README's (sizes and the token as
// kinds), then the printed URL opened in two Chromium tabs that chat and see each other's presence
async function webPage(copy, env, steps) {
  check(steps.length >= 4, `README's web session has ${steps.length} commands`);
  const script = ['set -u'];
  steps.forEach((s, i) => { script.push(`printf '\\n@@step ${i}@@\\n'`, s.cmd); });
  script.push("printf '\\n@@end@@\\n'", 'sleep 600'); // keeps the group (and the page server) until the test ends
  const sh = spawn('bash', ['-c', script.join('\n')], { cwd: copy, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  sh.stdout.on('data', (b) => { out += b; });
  sh.stderr.on('data', (b) => { err += b; });
  try {
    for (const t0 = Date.now(); !out.includes('@@end@@') && sh.exitCode === null && Date.now() - t0 < 300_000;) await sleep(100);
    if (!check(out.includes('@@end@@'), `the web session's commands did not finish: ${out}\n${err}`)) return;
    const outputs = out.split('@@end@@')[0].split(/\n@@step (\d+)@@\n/);
    const masked = (t) => t.replace(/\d+(\.\d+)?/g, 'N').replace(/token=eyJ[^\s]*/g, 'token=T');
    let url = null;
    steps.forEach((s, i) => {
      const at = outputs.indexOf(String(i));
      const got = at >= 0 ? outputs[at + 1].replace(/\n+$/, '') : '';
      check(masked(got) === masked(s.expected.join('\n')), `web step ${i} (${s.cmd}) printed ${JSON.stringify(got)}; the README shows ${JSON.stringify(s.expected.join('\n'))}`);
      if (/^https?:\/\/.*chat\.html#/.test(got)) url = got;
    });
    if (!check(url !== null, 'the web session printed the page URL')) return;
    if (process.env.HYPHA_TEST_BROWSER === '0') {
      console.log('readme test: the web page in Chromium: skipped (--no-browser)');
      return;
    }
    const { chromium } = await import(path.join(copy, 'modules/client-js/node_modules/playwright-core/index.mjs'));
    const executablePath = execFileSync('bash', [path.join(root, 'scripts/ensure-chromium.sh')]).toString().trim();
    const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const tabs = [];
      for (let i = 0; i < 2; i++) {
        const p = await browser.newPage();
        p.on('pageerror', (e) => check(false, `the chat page failed: ${e.message}`));
        await p.goto(url);
        await p.waitForFunction(() => document.getElementById('state').textContent.startsWith('connected'), null, { timeout: 30_000 });
        tabs.push(p);
      }
      await tabs[0].fill('#text', 'hello from the README');
      await tabs[0].click('button');
      for (const p of tabs) {
        const ok = await p.waitForFunction(() => [...document.querySelectorAll('#log li')].some((li) => li.textContent === 'web: hello from the README')
          && [...document.querySelectorAll('#who li')].some((li) => li.textContent === 'web'), null, { timeout: 15_000 }).then(() => true, () => false);
        check(ok, 'both tabs show the message and who is here');
      }
      console.log('readme test: the web page chatted in two Chromium tabs');
    } finally {
      await browser.close();
    }
  } finally {
    try { process.kill(-sh.pid, 'SIGTERM'); } catch { /* gone */ }
  }
}

main().then(() => finish(), (e) => { console.log(`readme test: ${e.stack}`); failed++; finish(1); });
