// Scheduler benchmark (issue 3, "Performance"). Not part of npm test. Three measurements, each with its peer:
//
// 1. POST → running for 20 deployments through the REAL server (API + scheduler + dockerd), against a peer
//    script that creates the namespace network and creates + starts the same 20 containers with direct Docker
//    Engine API calls (dockerode, 20 at once). Alternated, several rounds; medians and the ratio (target ≤ 1.3).
// 2. Scheduler CPU per pass with 500 deployments and 1,000 containers: the real loop, plan, executor and SQLite
//    store over an in-memory runtime double holding 1,000 instances (steady state: nothing to do but observe,
//    plan, probe-schedule). The real `docker` list() call is timed separately on this host's containers.
// 3. Server RSS with 500 deployments stored and reconciled (the real server process, real dockerd; the image
//    is absent with policy Never so the 500 deployments cycle through image_pull_back_off retries instead of
//    starting 500 containers on a 2-core machine).
//
//   npm run build   # the server runs from packages/svc/dist when it exists (as `svc server start` does); --tsx forces the sources
//   node --import tsx bench/scheduler/run.ts [--rounds 3] [--skip-post] [--skip-cpu] [--skip-rss] [--tsx]
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Docker from 'dockerode';
import { createSecretBox } from '../../packages/svc/src/crypto/secret-box.js';
import type { DeploymentSpec } from '../../packages/svc/src/domain/deployment.js';
import { createDockerRuntime } from '../../packages/svc/src/runtime/docker/index.js';
import { createScheduler } from '../../packages/svc/src/scheduler/loop.js';
import { deploymentSpecHash } from '../../packages/svc/src/scheduler/spec-hash.js';
import { migrate, openDatabase } from '../../packages/svc/src/store/db.js';
import { applyDeployment, getDeployment, saveSchedulerState } from '../../packages/svc/src/store/deployments.js';
import { FakeRuntime } from '../../packages/svc/test/support/fake-runtime.js';
import { ensureBusyboxImage, BUSYBOX_IMAGE } from '../../packages/svc/test/support/busybox-image.js';

const ROOT = resolve(import.meta.dirname, '../..');
const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1] ?? 3) || 3;
const skip = (name: string) => args.includes(`--skip-${name}`);
const WORKER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function spec(namespace: string, name: string, overrides: Partial<DeploymentSpec> = {}): DeploymentSpec {
  return {
    name, runtime: 'docker', namespace, kind: 'worker', image: BUSYBOX_IMAGE, command: WORKER,
    config: { image_pull_policy: 'Never' }, replicas: 1, ports: [], labels: {}, environment: {}, volumes: [],
    resources: { limits: {}, requests: {} }, health_checks: [], network: { mode: 'bridge' }, ...overrides,
  };
}

// -------------------------------------------------------------------------------------------------------------
// A real server process
// -------------------------------------------------------------------------------------------------------------

interface Server {
  url: string;
  token: string;
  process: ChildProcess;
  dir: string;
  stop(): Promise<void>;
}

async function startServer(interval: number, extraEnv: Record<string, string> = {}): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-d2t-bench-'));
  const port = 20_000 + Math.floor(Math.random() * 10_000);
  mkdirSync(join(dir, 'config'));
  writeFileSync(join(dir, 'config', 'config.toml'), `[contexts.b]\ncurrent = true\nhost = "127.0.0.1"\n[contexts.b.api]\nscheme = "http"\nport = ${port}\n`);
  const dist = join(ROOT, 'packages/svc/dist/server/standalone.js');
  const entry = !args.includes('--tsx') && existsSync(dist) ? [dist] : ['--import', 'tsx', join(ROOT, 'packages/svc/src/server/standalone.ts')];
  const child = spawn(process.execPath, entry, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, SVC_CONFIG_DIR: join(dir, 'config'), SVC_DATABASE_PATH: join(dir, 'svc.db'),
      SVC_SECRET_KEY: randomBytes(32).toString('base64'), SVC_ADMIN_PASSWORD: 'bench-password-1', SVC_LOG: 'warn',
      SVC_SCHEDULER_INTERVAL: String(interval), ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i += 1) {
    if (i > 300) throw new Error('server did not start');
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const login = await fetch(`${url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'bench-password-1' }) });
  const { token } = (await login.json()) as { token: string };
  return {
    url, token, process: child, dir,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function api<T>(server: Server, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json().catch(() => null)) as T };
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

async function removeNamespaceObjects(docker: Docker, namespace: string): Promise<void> {
  const containers = await docker.listContainers({ all: true, filters: { name: [`^/${namespace}_`] } });
  await Promise.all(containers.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  await docker.getNetwork(`svc_${namespace}`).remove().catch(() => undefined);
}

// -------------------------------------------------------------------------------------------------------------
// 1. POST → running, 20 deployments, vs direct Docker API
// -------------------------------------------------------------------------------------------------------------

async function svcRound(server: Server, docker: Docker): Promise<number> {
  const namespace = `d2t-b${randomBytes(3).toString('hex')}`;
  const started = performance.now();
  const posted = await Promise.all(
    Array.from({ length: 20 }, (_, k) => api<{ id: string }>(server, 'POST', '/deployments', spec(namespace, `w${k}`))),
  );
  for (const p of posted) if (p.status !== 201 && p.status !== 200) throw new Error(`POST /deployments: ${p.status} ${JSON.stringify(p.body)}`);
  for (;;) {
    const list = await api<{ status: string }[]>(server, 'GET', `/deployments?namespace=${namespace}`);
    if (list.body.length === 20 && list.body.every((d) => d.status === 'running')) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const elapsed = performance.now() - started;
  for (const p of posted) await api(server, 'DELETE', `/deployments/${p.body.id}`);
  await new Promise((r) => setTimeout(r, 3_000));
  await removeNamespaceObjects(docker, namespace);
  return elapsed;
}

async function peerRound(docker: Docker): Promise<number> {
  const namespace = `d2t-p${randomBytes(3).toString('hex')}`;
  const started = performance.now();
  const network = `svc_${namespace}`;
  await docker.createNetwork({ Name: network, Driver: 'bridge' });
  await Promise.all(
    Array.from({ length: 20 }, async (_, k) => {
      const container = await docker.createContainer({
        name: `${namespace}_w${k}_${randomBytes(4).toString('hex')}`,
        Image: BUSYBOX_IMAGE,
        Cmd: WORKER,
        Labels: { bench: namespace },
        HostConfig: { NetworkMode: network },
        NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: [`w${k}`] } } },
      });
      await container.start();
    }),
  );
  const elapsed = performance.now() - started;
  await removeNamespaceObjects(docker, namespace);
  return elapsed;
}

async function benchPostToRunning(): Promise<void> {
  const docker = new Docker();
  const server = await startServer(10);
  const svc: number[] = [];
  const peer: number[] = [];
  try {
    for (let round = 0; round < rounds; round += 1) {
      peer.push(await peerRound(docker));
      svc.push(await svcRound(server, docker));
      console.log(`  round ${round + 1}: svc ${svc.at(-1)?.toFixed(0)} ms, direct Docker API ${peer.at(-1)?.toFixed(0)} ms`);
    }
  } finally {
    await server.stop();
  }
  const ratio = median(svc) / median(peer);
  console.log(`POST→running, 20 deployments: svc median ${median(svc).toFixed(0)} ms, direct Docker API median ${median(peer).toFixed(0)} ms, ratio ${ratio.toFixed(2)} (target ≤ 1.3)`);
}

// -------------------------------------------------------------------------------------------------------------
// 2. CPU per pass: 500 deployments, 1,000 containers
// -------------------------------------------------------------------------------------------------------------

async function benchCpuPerPass(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-d2t-bench-cpu-'));
  const db = openDatabase(join(dir, 'svc.db'));
  migrate(db);
  const runtime = new FakeRuntime();
  const now = Date.now();
  for (let k = 0; k < 500; k += 1) {
    // Half with a health check (probes are scheduled by the pass), two instances each.
    const check = { type: 'tcp' as const, port: 80, interval: '10s', timeout: '1s', threshold: 3, on_failure: 'restart' as const };
    const record = applyDeployment(db, spec(`ns${k % 50}`, `d${k}`, { replicas: 2, health_checks: k % 2 === 0 ? [check] : [] }), false);
    saveSchedulerState(db, record.id, { status: 'running', restartCount: 0, retryCount: 0, statusSince: now, backoffUntil: null });
    const hash = deploymentSpecHash(record.spec);
    runtime.seed(record.id, hash);
    runtime.seed(record.id, hash);
  }
  // Probes would hit 10.0.0.1 for real: point them at a closed local port instead, quickly refused.
  for (const instance of runtime.instances.values()) instance.address = '127.0.0.1';
  const scheduler = createScheduler({ db, secretBox: createSecretBox(randomBytes(32)), runtimes: [runtime], intervalMs: 3_600_000, dataDir: join(dir, 'data') });
  scheduler.start();
  await scheduler.settled();
  for (let k = 0; k < 5; k += 1) await scheduler.reconcileNow(); // warm-up (JIT, caches)
  await scheduler.settled();
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let k = 0; k < 30; k += 1) {
    const before = process.cpuUsage();
    const t0 = performance.now();
    await scheduler.reconcileNow();
    wall.push(performance.now() - t0);
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 1000);
  }
  await scheduler.settled();
  await scheduler.stop();
  if (runtime.calls.create !== 0 || runtime.calls.remove !== 0) throw new Error('steady state expected: the pass should change nothing');
  if (getDeployment(db, (db.prepare('SELECT id FROM deployments LIMIT 1').get() as { id: string }).id)?.status !== 'running') throw new Error('status moved');
  db.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(`CPU per pass, 500 deployments / 1,000 containers (runtime double): median ${median(cpu).toFixed(1)} ms CPU, ${median(wall).toFixed(1)} ms wall, max ${Math.max(...cpu).toFixed(1)} ms CPU (target < 50 ms)`);

  // The real list call on this host's containers (filtered by the svc_deployment label, ONE call per pass).
  const docker = createDockerRuntime();
  const times: number[] = [];
  let count = 0;
  for (let k = 0; k < 10; k += 1) {
    const t0 = performance.now();
    count = (await docker.list()).length;
    times.push(performance.now() - t0);
  }
  console.log(`  real docker list(): ${count} containers, median ${median(times.slice(1)).toFixed(1)} ms wall (first call ${times[0]?.toFixed(0)} ms inspects each once)`);
}

// -------------------------------------------------------------------------------------------------------------
// 3. Server RSS with 500 deployments
// -------------------------------------------------------------------------------------------------------------

async function rssWith500(scheduler: boolean): Promise<{ idle: number; max: number; statuses: Record<string, number> }> {
  const server = await startServer(2, scheduler ? {} : { SVC_SCHEDULER: 'off' });
  const namespace = `d2t-r${randomBytes(3).toString('hex')}`;
  try {
    await new Promise((r) => setTimeout(r, 1_000));
    const idle = rssMb(server.process.pid ?? 0);
    for (let k = 0; k < 500; k += 25) {
      await Promise.all(
        Array.from({ length: 25 }, (_, j) => api(server, 'POST', '/deployments', spec(namespace, `r${k + j}`, { image: 'svc-test/busybox:absent' }))),
      );
    }
    // Several passes (interval 2 s) with the retries, and GET /deployments of all 500.
    const samples: number[] = [];
    for (let k = 0; k < 12; k += 1) {
      await api(server, 'GET', `/deployments?namespace=${namespace}`);
      await new Promise((r) => setTimeout(r, 1_000));
      samples.push(rssMb(server.process.pid ?? 0));
    }
    const list = await api<{ status: string }[]>(server, 'GET', `/deployments?namespace=${namespace}`);
    const statuses: Record<string, number> = {};
    for (const d of list.body) statuses[d.status] = (statuses[d.status] ?? 0) + 1;
    return { idle, max: Math.max(...samples), statuses };
  } finally {
    await server.stop();
  }
}

async function benchRss(): Promise<void> {
  const peer = await rssWith500(false);
  const svc = await rssWith500(true);
  console.log(`Server RSS with 500 deployments: scheduler on: idle ${svc.idle.toFixed(0)} MB, max ${svc.max.toFixed(0)} MB (target < 200 MB), statuses ${JSON.stringify(svc.statuses)}`);
  console.log(`  peer, same server with SVC_SCHEDULER=off: idle ${peer.idle.toFixed(0)} MB, max ${peer.max.toFixed(0)} MB; scheduler share ${(svc.max - peer.max).toFixed(0)} MB`);
}

await ensureBusyboxImage();
console.log(`scheduler bench, node ${process.version}, ${rounds} rounds`);
if (!skip('post')) await benchPostToRunning();
if (!skip('cpu')) await benchCpuPerPass();
if (!skip('rss')) await benchRss();
