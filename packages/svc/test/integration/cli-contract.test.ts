// Contract tests of the client side of the deployments API, run with the built binary against a small local
// server that speaks exactly the spec's routes and DESIGN.md's exec frames. They pin down what the CLI does with
// those answers (apply progress and exit codes, logs -f de-duplication and riding out an outage, exec exit codes
// and stdin) while the real deployments API is not served yet; cli-deployments.test.ts runs the same commands
// against the real server as soon as it is.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { freePort } from '../support/server.js';
import { cliEnv, errorLine, SVC_BIN, type CliEnv } from './cli-helpers.js';

const TOKEN = 'svc_pat_contract';

interface Dep {
  id: string;
  name: string;
  namespace: string;
  status: string;
  created_at: string;
  [key: string]: unknown;
}

/** Status sequences by deployment name: each GET /deployments/{id} moves one step (the last one sticks). */
const SCRIPTS: Record<string, string[]> = {
  web: ['pending', 'creating', 'running'],
  job: ['pending', 'running', 'completed'],
  bad: ['pending', 'creating', 'failed'],
  slow: ['pending'],
};

let port = 0;
let server: Server;
let cli: CliEnv;
const namespaces = new Set<string>(['existing']);
const deployments: Dep[] = [];
const posts: { query: string; body: Record<string, unknown> }[] = [];
const steps = new Map<string, number>();
let logLines: { instance: string; message: string; timestamp: string }[] = [];
const logQueries: string[] = [];

function send(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  const type = status >= 400 ? 'application/problem+json' : 'application/json';
  res.writeHead(status, { 'content-type': type }).end(JSON.stringify(body));
}

function problem(status: number, detail: string, violations: unknown[] = []) {
  return { type: 'about:blank', title: status === 422 ? 'Validation failed' : 'Error', status, detail, violations };
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? (JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>) : {};
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(res, 401, problem(401, 'missing or invalid bearer token'));
  const parts = url.pathname.split('/').filter(Boolean);
  if (url.pathname === '/namespaces' && req.method === 'GET') return send(res, 200, [...namespaces].map((name) => ({ id: name, name })));
  if (url.pathname === '/namespaces' && req.method === 'POST') {
    const { name } = await readBody(req);
    namespaces.add(String(name));
    return send(res, 201, { id: randomUUID(), name });
  }
  if (url.pathname === '/deployments' && req.method === 'GET') {
    const ns = url.searchParams.get('namespace');
    return send(res, 200, deployments.filter((d) => !ns || d.namespace === ns));
  }
  if (url.pathname === '/deployments' && req.method === 'POST') {
    const body = await readBody(req);
    posts.push({ query: url.search, body });
    if (body.replicas === 2 && body.kind === 'job') {
      return send(res, 422, problem(422, 'replicas: must be 1', [{ property_path: 'replicas', message: 'must be 1 for a job', code: 'deployment.replicas.job_must_be_one' }]));
    }
    namespaces.add(String(body.namespace));
    const dep: Dep = { ...body, id: randomUUID(), name: String(body.name), namespace: String(body.namespace), status: 'pending', created_at: new Date().toISOString(), instances: [] };
    deployments.push(dep);
    return send(res, 201, dep);
  }
  const dep = deployments.find((d) => d.id === parts[1]);
  if (parts[0] === 'deployments' && !dep) return send(res, 404, problem(404, `deployment '${parts[1]}' not found`));
  if (dep && parts.length === 2 && req.method === 'GET') {
    const script = SCRIPTS[dep.name] ?? ['running'];
    const step = Math.min((steps.get(dep.id) ?? -1) + 1, script.length - 1);
    steps.set(dep.id, step);
    dep.status = script[step]!;
    return send(res, 200, dep);
  }
  if (dep && parts[2] === 'events') return send(res, 200, [{ id: 'e1', deployment_id: dep.id, timestamp: new Date().toISOString(), level: 'error', component: 'docker', reason: 'Failed', message: 'exited with code 3' }]);
  if (dep && parts[2] === 'logs') {
    logQueries.push(url.search);
    const since = url.searchParams.get('since');
    const tail = Number(url.searchParams.get('tail') ?? 100);
    // `since` is RFC 3339 or relative (`10m`); the relative form keeps everything here.
    const sinceMs = since ? Date.parse(since) : NaN;
    const lines = logLines.filter((l) => Number.isNaN(sinceMs) || Date.parse(l.timestamp) >= sinceMs);
    return send(res, 200, lines.slice(-tail));
  }
  send(res, 404, problem(404, 'no route'));
}

function startServer(): Promise<void> {
  server = createServer((req, res) => void handle(req, res));
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const id = url.pathname.split('/')[2];
    const reject = (status: number, text: string) => {
      const body = JSON.stringify(problem(status, text));
      socket.end(`HTTP/1.1 ${status} X\r\ncontent-type: application/problem+json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
    };
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return reject(401, 'unauthorized');
    if (id === 'disabled') return reject(501, 'exec is disabled');
    if (!deployments.some((d) => d.id === id)) return reject(404, 'not found');
    wss.handleUpgrade(req, socket, head, (ws) => {
      const command = url.searchParams.getAll('command');
      const frame = (type: string, extra: Record<string, unknown>) => ws.send(JSON.stringify({ type, ...extra }));
      const b64 = (s: string) => Buffer.from(s).toString('base64');
      if (command.join(' ') === 'sh -c exit 7') {
        frame('stdout', { data: b64('out\n') });
        frame('stderr', { data: b64('err\n') });
        frame('exit', { code: 7 });
      } else if (command[0] === 'cat') {
        ws.on('message', (raw) => {
          const msg = JSON.parse(raw.toString()) as { type: string; data?: string };
          if (msg.type === 'stdin') frame('stdout', { data: msg.data });
          if (msg.type === 'stdin_close') frame('exit', { code: 0 });
        });
      } else if (command[0] === 'args') {
        frame('stdout', { data: b64(`${JSON.stringify({ command, tty: url.searchParams.get('tty'), container: url.searchParams.get('container') })}\n`) });
        frame('exit', { code: 0 });
      } else if (command[0] === 'vanish') {
        ws.terminate();
      } else {
        frame('error', { message: 'no such command' });
        ws.close();
      }
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
}

before(async () => {
  port = await freePort();
  await startServer();
  cli = cliEnv(port, TOKEN);
});

after(async () => {
  cli?.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function file(name: string, text: string): string {
  const path = join(cli.configDir, name);
  writeFileSync(path, text);
  return path;
}

test('apply: namespaces first, follows each deployment to running/completed, one summary line each, exit 0', async () => {
  const manifest = file(
    'ok.yaml',
    `namespaces:\n  existing: {}\n  fresh: {}\ndeployments:\n  web: { namespace: fresh, image: "img:$TAG" }\n  job: { namespace: fresh, kind: job, image: img }\n`,
  );
  const result = await cli.run(['apply', '-f', manifest], { env: { TAG: '7' } });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^namespace existing: exists, skipped$/m);
  assert.match(result.stdout, /^namespace fresh: created$/m);
  assert.match(result.stdout, /^deployment fresh\/web: created, running \([0-9a-f-]{36}\)$/m);
  // A job is followed through `running` to its outcome.
  assert.match(result.stdout, /^deployment fresh\/job: created, completed \(/m);
  // Progress (status changes) on stderr, in order.
  assert.match(result.stderr, /fresh\/web: pending\n(.*\n)*.*fresh\/web: creating\n(.*\n)*.*fresh\/web: running/);
  const web = posts.find((p) => p.body.name === 'web')!;
  assert.equal(web.body.image, 'img:7');
  assert.deepEqual(web.body.volumes, []);
  assert.equal(web.query, '');

  // Same manifest again: nothing posted; --force re-posts with ?force=true.
  const count = posts.length;
  const again = await cli.run(['apply', '-f', manifest], { env: { TAG: '7' } });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /deployment fresh\/web: unchanged/);
  assert.equal(posts.length, count);
  const forced = await cli.run(['apply', '-f', manifest, '--force'], { env: { TAG: '7' } });
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(posts.length, count + 2);
  assert.equal(posts.at(-1)!.query, '?force=true');
  // A change is an update (POST of the same name), reported as such.
  const updated = await cli.run(['apply', '-f', manifest, '--verbose'], { env: { TAG: '8' } });
  assert.equal(updated.code, 0, updated.stderr);
  assert.match(updated.stdout, /deployment fresh\/web: updated, running/);
  assert.match(updated.stderr, /would be updated: image: img:7 -> img:8/);
  assert.match(updated.stderr, /> POST \/deployments \{.*"image":"img:8"/);
});

test('apply: the first failure gives the exit code; other deployments still proceed; violations carry the entry path', async () => {
  const manifest = file(
    'mixed.yaml',
    `deployments:\n  bad: { namespace: mixed, image: img }\n  web: { namespace: mixed, image: img }\n  two: { namespace: mixed, kind: job, replicas: 2, image: img }\n`,
  );
  const result = await cli.run(['apply', '-f', manifest]);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(result.stderr, /^error: deployment 'mixed\/two': request failed \(422\)$/m);
  assert.match(result.stderr, /^ {2}deployments\.two\.replicas: must be 1 for a job \(deployment\.replicas\.job_must_be_one\)$/m);
  assert.match(result.stdout, /deployment mixed\/bad: created, failed: exited with code 3 \(/);
  assert.match(result.stdout, /deployment mixed\/web: created, running/);
  assert.match(result.stdout, /deployment mixed\/two: not applied/);
});

test('apply: a deployment that never settles times out after SVC_APPLY_TIMEOUT', async () => {
  const manifest = file('slow.yaml', `deployments:\n  slow: { namespace: slowns, image: img }\n`);
  const started = Date.now();
  const result = await cli.run(['apply', '-f', manifest], { env: { SVC_APPLY_TIMEOUT: '2' } });
  assert.equal(result.code, 1);
  assert.match(result.stdout, /deployment slowns\/slow: created, still pending after 2 s/);
  assert.ok(Date.now() - started < 10_000);
});

test('logs -f: no duplicates, new lines appear, and an outage is ridden out', async () => {
  const dep: Dep = { id: randomUUID(), name: 'logger', namespace: 'logs', status: 'running', created_at: new Date().toISOString() };
  deployments.push(dep);
  const t0 = Date.now();
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  logLines = [
    { instance: 'fresh_web_1', message: 'one', timestamp: at(0) },
    { instance: 'fresh_web_1', message: 'two', timestamp: at(1) },
    { instance: 'fresh_web_1', message: 'two-same-ts', timestamp: at(1) },
  ];
  const plain = await cli.run(['deployment', 'logs', dep.id, '--tail', '2', '--since', '10m', '-c', 'fresh_web_1']);
  assert.equal(plain.code, 0);
  assert.equal(plain.stdout, 'fresh_web_1 | two\nfresh_web_1 | two-same-ts\n');
  assert.match(logQueries.at(-1)!, /tail=2&since=10m&container=fresh_web_1/);

  const child = spawn(process.execPath, [SVC_BIN, 'deployment', 'logs', dep.id, '-f'], { env: cli.env as NodeJS.ProcessEnv });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const waitFor = async (what: string, check: () => boolean, ms = 15_000) => {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nstdout:${out}\nstderr:${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  try {
    await waitFor('initial lines', () => out.includes('two-same-ts'));
    logLines.push({ instance: 'fresh_web_1', message: 'three', timestamp: at(2) });
    await waitFor('new line', () => out.includes('three'));
    // Outage: the server goes away, comes back, and new lines still arrive.
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await waitFor('warning', () => /warning: cannot reach the API/.test(err));
    logLines.push({ instance: 'fresh_web_1', message: 'four', timestamp: at(3) });
    await startServer();
    await waitFor('line after outage', () => out.includes('four'));
    assert.match(err, /info: reconnected/);
    assert.equal(out, 'fresh_web_1 | one\nfresh_web_1 | two\nfresh_web_1 | two-same-ts\nfresh_web_1 | three\nfresh_web_1 | four\n');
    assert.equal(child.exitCode, null, 'follow mode is still running');
  } finally {
    child.kill('SIGTERM');
  }
});

test('exec: remote exit code, stdout/stderr split, stdin forwarded then closed, parameters, lost connection → 1', async () => {
  const dep: Dep = { id: randomUUID(), name: 'shell', namespace: 'exec', status: 'running', created_at: new Date().toISOString() };
  deployments.push(dep);
  const seven = await cli.run(['deployment', 'exec', dep.id, '--', 'sh', '-c', 'exit 7']);
  assert.equal(seven.code, 7);
  assert.equal(seven.stdout, 'out\n');
  assert.equal(seven.stderr, 'err\n');
  const cat = await cli.run(['deployment', 'exec', dep.id, '-T', '--', 'cat'], { input: 'hello through stdin\n' });
  assert.equal(cat.code, 0, cat.stderr);
  assert.equal(cat.stdout, 'hello through stdin\n');
  const args = await cli.run(['deployment', 'exec', dep.id, '-c', 'fresh_web_2', '--', 'args', '-x', '--y']);
  assert.deepEqual(JSON.parse(args.stdout), { command: ['args', '-x', '--y'], tty: 'false', container: 'fresh_web_2' });
  const vanished = await cli.run(['deployment', 'exec', dep.id, '--', 'vanish']);
  assert.equal(vanished.code, 1);
  const remoteError = await cli.run(['deployment', 'exec', dep.id, '--', 'unknown']);
  assert.equal(remoteError.code, 1);
  assert.equal(errorLine(remoteError), `error: deployment '${dep.id}': exec failed: no such command`);
  const disabled = await cli.run(['deployment', 'exec', 'disabled']);
  assert.equal(disabled.code, 1);
  assert.equal(errorLine(disabled), "error: deployment 'disabled': request failed (501): exec is disabled");
  const unauthorized = await cli.run(['deployment', 'exec', dep.id], { env: { SVC_TOKEN: 'svc_pat_wrong' } });
  assert.equal(unauthorized.code, 2);
});

test('namespace prune deletes by the prune rule through the deployments API', async () => {
  // mixed/bad is failed, mixed/web is running (see the scripts above).
  const deleted: string[] = [];
  const original = server.listeners('request')[0] as (req: IncomingMessage, res: ServerResponse) => void;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'DELETE') {
      deleted.push(req.url ?? '');
      return send(res, 204);
    }
    original(req, res);
  });
  try {
    const pruned = await cli.run(['namespace', 'prune', 'mixed']);
    assert.equal(pruned.code, 0, pruned.stderr);
    const bad = deployments.find((d) => d.name === 'bad')!;
    assert.deepEqual(deleted, [`/deployments/${bad.id}`]);
    assert.match(pruned.stderr, /pruned 1 of 2 deployment\(s\) in namespace 'mixed'/);
    deleted.length = 0;
    const all = await cli.run(['namespace', 'prune', 'mixed', '--all']);
    assert.equal(all.code, 0);
    assert.equal(deleted.length, 2);
  } finally {
    server.removeAllListeners('request');
    server.on('request', original);
  }
});
