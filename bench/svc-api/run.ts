/// <reference path="./autocannon.d.ts" />
// svc API benchmark (issue 2): a database with 1,000 namespaces and 10,000 secrets; authenticated
// GET /secrets/{id} and GET /namespaces with 64 connections (autocannon), against Fastify's bare "hello" route in
// the same run. Prints req/s, p99 latency, the ratio to the peer, and the server's idle RSS.
//
//   node --import tsx bench/svc-api/run.ts [--duration 10] [--connections 64] [--log info|debug] [--tsx]
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { migrate, openDatabase } from '../../packages/svc/src/store/db.js';
import { createSecretBox } from '../../packages/svc/src/crypto/secret-box.js';
import { createNamespace } from '../../packages/svc/src/store/namespaces.js';
import { createSecret } from '../../packages/svc/src/store/secrets.js';
import { freePort, REPO_ROOT, STANDALONE_ENTRY } from '../../packages/svc/test/support/server.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1]! : fallback;
};
const DURATION = Number(option('duration', '10'));
const CONNECTIONS = Number(option('connections', '64'));
const LOG_LEVEL = option('log', 'info');
const NAMESPACES = 1_000;
const SECRETS = 10_000;
const PASSWORD = 'bench-admin-password';

function rssMiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 102.4) / 10 : NaN;
}

async function waitFor(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`process exited (${child.exitCode})`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never became ready`);
}

interface Result {
  name: string;
  rps: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function load(name: string, url: string, headers: Record<string, string>, paths: string[]): Promise<Result> {
  let next = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION,
    headers,
    requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length]! }) }],
  });
  return { name, rps: Math.round(result.requests.average), p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
const children: ChildProcess[] = [];
try {
  // 1. Seed through the same store functions the API uses (fast, and values really are sealed).
  const key = randomBytes(32);
  const dbPath = join(dir, 'svc.db');
  const db = openDatabase(dbPath);
  migrate(db);
  const box = createSecretBox(key);
  const secretIds: string[] = [];
  const started = Date.now();
  db.transaction(() => {
    const now = new Date();
    for (let n = 0; n < NAMESPACES; n++) createNamespace(db, `ns-${n}`, now);
    for (let s = 0; s < SECRETS; s++) {
      const outcome = createSecret(db, box, { namespace: `ns-${s % NAMESPACES}`, name: `secret-${s}`, value: `value-${s}` }, now);
      if (outcome.kind !== 'created') throw new Error(`seed failed: ${outcome.kind}`);
      secretIds.push(outcome.record.id);
    }
  })();
  db.close();
  console.log(`seeded ${NAMESPACES} namespaces and ${SECRETS} secrets in ${Date.now() - started} ms`);

  // 2. The real server process.
  const port = await freePort();
  const configDir = join(dir, 'config');
  mkdirSync(configDir);
  writeFileSync(join(configDir, 'config.toml'), `[contexts.bench]\ncurrent = true\nhost = "127.0.0.1"\n[contexts.bench.api]\nport = ${port}\n`);
  // The built JavaScript (what `npm run build` ships) unless --tsx or no build exists; tsx adds ~30 MiB of RSS.
  const distEntry = join(REPO_ROOT, 'packages/svc/dist/server/standalone.js');
  const useDist = existsSync(distEntry) && !args.includes('--tsx');
  console.log(`server entry: ${useDist ? 'packages/svc/dist/server/standalone.js (built)' : 'src/server/standalone.ts via tsx'}`);
  const server = spawn(process.execPath, useDist ? [distEntry] : ['--import', 'tsx', STANDALONE_ENTRY], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, SVC_CONFIG_DIR: configDir, SVC_DATABASE_PATH: dbPath, SVC_SECRET_KEY: key.toString('base64'), SVC_ADMIN_PASSWORD: PASSWORD, SVC_LOG: LOG_LEVEL },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(server);
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/healthz`, server);
  await new Promise((r) => setTimeout(r, 2000));
  const idleRss = rssMiB(server.pid!);

  const login = (await (await fetch(`${base}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) })).json()) as { token: string };
  const patResponse = await fetch(`${base}/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${login.token}` },
    body: JSON.stringify({ name: 'bench', scopes: ['secrets:read', 'namespaces:read'] }),
  });
  const pat = ((await patResponse.json()) as { token: string }).token;
  const auth = { authorization: `Bearer ${pat}` };
  // Same route with a PAT restricted to one namespace: separates the per-request cost from the 120 KB payload.
  const narrowResponse = await fetch(`${base}/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${login.token}` },
    body: JSON.stringify({ name: 'bench-narrow', scopes: ['namespaces:read'], namespaces: ['ns-7'] }),
  });
  const narrow = { authorization: `Bearer ${((await narrowResponse.json()) as { token: string }).token}` };

  // 3. The peer.
  const peerPort = await freePort();
  const peer = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench/svc-api/hello-peer.ts'), String(peerPort)], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(peer);
  await waitFor(`http://127.0.0.1:${peerPort}/hello`, peer);

  const shuffled = secretIds.sort(() => Math.random() - 0.5).map((id) => `/secrets/${id}`);
  const results: Result[] = [];
  results.push(await load('fastify hello (peer)', `http://127.0.0.1:${peerPort}`, {}, ['/hello']));
  results.push(await load('GET /secrets/{id}', base, auth, shuffled));
  results.push(await load('GET /namespaces (1,000 items, ~120 KB)', base, auth, ['/namespaces']));
  results.push(await load('GET /namespaces (PAT restricted to 1 namespace)', base, narrow, ['/namespaces']));
  const afterRss = rssMiB(server.pid!);

  const peerRps = results[0]!.rps;
  console.log(`\n${CONNECTIONS} connections, ${DURATION} s each, server log level ${LOG_LEVEL}, ${new Date().toISOString()}`);
  console.log('| route | req/s | p99 ms | ratio to peer | errors | non-2xx |');
  console.log('|---|---|---|---|---|---|');
  for (const r of results) console.log(`| ${r.name} | ${r.rps} | ${r.p99} | ${(r.rps / peerRps).toFixed(2)} | ${r.errors} | ${r.non2xx} |`);
  console.log(`\nserver RSS: idle ${idleRss} MiB (seeded database, before load); after load ${afterRss} MiB`);
} finally {
  for (const child of children) child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dir, { recursive: true, force: true });
}
