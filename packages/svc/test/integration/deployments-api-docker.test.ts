// The deployments API's runtime-backed routes against the real server, its scheduler and the real dockerd with
// the local busybox image: logs (tail, since, container, level, SSE follow with new lines, a ticket instead of
// the header, riding out an instance replaced behind our back), metrics of a running worker, and exec over the
// WebSocket (stdin echo, exit code 3, stderr, TTY size, refusals before the handshake, tickets).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { ensureBusyboxImage, BUSYBOX_IMAGE } from '../support/busybox-image.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { cleanUp, runPrefix } from './deployments-api-support.js';

const run = promisify(execFile);
const PREFIX = runPrefix('d');
const NS = `${PREFIX}-ns`;

interface Deployment {
  id: string;
  status: string;
  restart_count: number;
  instances: { id: string; address?: string }[];
}

interface LogEntry {
  instance: string;
  message: string;
  level: string;
  timestamp: string;
}

let server: TestServer;

before(async () => {
  await ensureBusyboxImage();
  server = await startTestServer({ env: { SVC_SCHEDULER_INTERVAL: '1' }, configToml: '[server.exec]\nenabled = true\n' });
});
after(async () => {
  await cleanUp(server, PREFIX);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function deploy(name: string, command: string[], replicas = 1): Promise<Deployment> {
  const created = await server.request<Deployment>('POST', '/deployments', {
    body: { name, runtime: 'docker', namespace: NS, image: BUSYBOX_IMAGE, command, replicas, config: { image_pull_policy: 'Never' } },
  });
  assert.equal(created.status, 201, created.text);
  return created.body;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}\n${server.stderr().slice(-2000)}`);
}

async function waitRunning(id: string, replicas: number): Promise<Deployment> {
  return waitFor(`deployment ${id} running with ${replicas} instances`, async () => {
    const got = await server.request<Deployment>('GET', `/deployments/${id}`);
    return got.body.status === 'running' && got.body.instances.length === replicas ? got.body : undefined;
  });
}

async function logs(id: string, query: string): Promise<LogEntry[]> {
  const response = await server.request<LogEntry[]>('GET', `/deployments/${id}/logs?${query}`);
  assert.equal(response.status, 200, response.text);
  return response.body;
}

// Prints marked lines once, then a numbered tick every 200 ms; exits at once on SIGTERM.
const CHATTY = ['sh', '-c', 'trap "exit 0" TERM; echo "[error] boom"; echo "[warning] careful" >&2; echo "info: hello"; i=0; while true; i=$((i+1)); do echo "tick $i"; sleep 0.2; done'];

let chatty: Deployment;
let instanceNames: string[] = [];

test('logs: tail across instances, container filter, since, inferred levels', async () => {
  chatty = await deploy('chatty', CHATTY, 2);
  await waitRunning(chatty.id, 2);
  await sleep(1200);
  const all = await logs(chatty.id, 'tail=10000');
  instanceNames = [...new Set(all.map((e) => e.instance))].sort();
  assert.equal(instanceNames.length, 2, JSON.stringify(instanceNames));
  for (const name of instanceNames) assert.match(name, new RegExp(`^${NS}_chatty_[0-9a-f]{8}$`));
  for (const entry of all) {
    assert.deepEqual(Object.keys(entry).sort(), ['instance', 'level', 'message', 'timestamp']);
    assert.ok(Number.isFinite(Date.parse(entry.timestamp)), entry.timestamp);
  }
  const level = (message: string) => all.filter((e) => e.message === message).map((e) => e.level);
  assert.deepEqual(level('[error] boom'), ['error', 'error']);
  assert.deepEqual(level('[warning] careful'), ['warning', 'warning'], 'stderr lines are included');
  assert.deepEqual(level('info: hello'), ['info', 'info']);
  assert.equal(level('tick 1')[0], 'info');
  const times = all.map((e) => Date.parse(e.timestamp));
  assert.deepEqual(times, [...times].sort((a, b) => a - b), 'merged in time order');

  const last3 = await logs(chatty.id, 'tail=3');
  assert.equal(last3.length, 3);
  assert.ok(last3.every((e) => e.message.startsWith('tick ')));
  const defaultTail = await logs(chatty.id, '');
  assert.ok(defaultTail.length <= 100);

  const first = instanceNames[0] ?? '';
  const onlyFirst = await logs(chatty.id, `container=${first}&tail=10000`);
  assert.ok(onlyFirst.length > 3 && onlyFirst.every((e) => e.instance === first));

  const cut = new Date().toISOString();
  await sleep(1100);
  const recent = await logs(chatty.id, `since=${encodeURIComponent(cut)}&tail=10000`);
  assert.ok(recent.length > 0, 'lines after the cut');
  assert.ok(recent.every((e) => Date.parse(e.timestamp) >= Date.parse(cut) && e.message.startsWith('tick ')), JSON.stringify(recent.slice(0, 3)));
  const lastHour = await logs(chatty.id, 'since=1h&tail=10000');
  assert.ok(lastHour.some((e) => e.message === '[error] boom'));
});

test('logs of a finished job stay readable after it completed', async () => {
  const job = await server.request<Deployment>('POST', '/deployments', {
    body: { name: 'once', kind: 'job', runtime: 'docker', namespace: NS, image: BUSYBOX_IMAGE, command: ['sh', '-c', 'echo "job [notice] done"'], config: { image_pull_policy: 'Never' } },
  });
  assert.equal(job.status, 201, job.text);
  await waitFor('job completed', async () => {
    const got = await server.request<Deployment>('GET', `/deployments/${job.body.id}`);
    return got.body.status === 'completed' ? true : undefined;
  });
  const entries = await logs(job.body.id, '');
  assert.deepEqual(entries.map((e) => [e.message, e.level]), [['job [notice] done', 'notice']]);
});

/** Reads an SSE response until `done(entries)` says so (or the time runs out); then aborts the request. */
async function readEvents(url: string, headers: Record<string, string>, done: (entries: LogEntry[]) => boolean, timeoutMs = 30_000) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const entries: LogEntry[] = [];
  const comments: string[] = [];
  const response = await fetch(url, { headers, signal: abort.signal });
  try {
    assert.equal(response.status, 200, await (response.status === 200 ? Promise.resolve('') : response.text()));
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = response.body?.getReader();
    assert.ok(reader);
    let buffer = '';
    const decoder = new TextDecoder();
    while (!done(entries)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      buffer += decoder.decode(value, { stream: true });
      let split: number;
      while ((split = buffer.indexOf('\n\n')) !== -1) {
        const event = buffer.slice(0, split);
        buffer = buffer.slice(split + 2);
        for (const line of event.split('\n')) {
          if (line.startsWith('data: ')) entries.push(JSON.parse(line.slice(6)) as LogEntry);
          else if (line.startsWith(': ')) comments.push(line.slice(2));
        }
      }
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return { entries, comments, headers: response.headers };
}

test('logs follow: an SSE stream of the tail then new lines, also with a ticket instead of the header', async () => {
  const started = Date.now();
  const stream = await readEvents(
    `${server.baseUrl}/deployments/${chatty.id}/logs?follow=true&tail=2`,
    { authorization: `Bearer ${server.adminToken}` },
    (entries) => entries.filter((e) => Date.parse(e.timestamp) > started + 500).length >= 4,
  );
  assert.ok(stream.comments.includes('connected'));
  const fresh = stream.entries.filter((e) => Date.parse(e.timestamp) > started + 500);
  assert.ok(fresh.length >= 4, `new lines arrive on the open stream (${stream.entries.length} events)`);
  assert.ok(fresh.every((e) => e.message.startsWith('tick ') && instanceNames.includes(e.instance)));
  assert.ok(stream.entries.length >= fresh.length + 2, 'the tail comes first');

  const ticket = await server.request<{ ticket: string }>('POST', '/auth/stream-ticket', { body: { deployment_id: chatty.id, stream: 'logs' } });
  assert.equal(ticket.status, 200, ticket.text);
  const url = `${server.baseUrl}/deployments/${chatty.id}/logs?follow=true&tail=1&container=${instanceNames[0]}&ticket=${ticket.body.ticket}`;
  const viaTicket = await readEvents(url, {}, (entries) => entries.length >= 2);
  assert.ok(viaTicket.entries.length >= 2 && viaTicket.entries.every((e) => e.instance === instanceNames[0]));
  const reused = await fetch(url);
  assert.equal(reused.status, 401, 'a ticket is single-use');
  await reused.text();
  // A stream that outlives the 10 s handler timeout is not cut with a 408.
  assert.ok(server.stderr().indexOf('handler timed out') === -1);
});

test('logs follow rides out an instance replaced behind our back', async () => {
  const solo = await deploy('solo', CHATTY, 1);
  const running = await waitRunning(solo.id, 1);
  const oldId = running.instances[0]?.id ?? '';
  let removed = false;
  const stream = await readEvents(
    `${server.baseUrl}/deployments/${solo.id}/logs?follow=true&tail=1`,
    { authorization: `Bearer ${server.adminToken}` },
    (entries) => {
      if (!removed && entries.length > 0) {
        removed = true;
        void run('docker', ['rm', '-f', oldId]);
      }
      return new Set(entries.map((e) => e.instance)).size >= 2 && entries.at(-1)?.message.startsWith('tick ') === true;
    },
    60_000,
  );
  const names = [...new Set(stream.entries.map((e) => e.instance))];
  assert.equal(names.length, 2, `lines from the replacement instance arrive on the same stream: ${JSON.stringify(names)}`);
  assert.ok(stream.entries.some((e) => e.instance === names[1] && e.message === '[error] boom'), 'the new instance from its first line');
});

test('a follow stream ends by itself once its deployment is deleted and purged', async () => {
  const brief = await deploy('brief', CHATTY, 1);
  await waitRunning(brief.id, 1);
  let deleted = false;
  const stream = await readEvents(
    `${server.baseUrl}/deployments/${brief.id}/logs?follow=true&tail=1`,
    { authorization: `Bearer ${server.adminToken}` },
    (entries) => {
      if (!deleted && entries.length > 0) {
        deleted = true;
        void server.request('DELETE', `/deployments/${brief.id}`);
      }
      return false;
    },
    45_000,
  );
  assert.ok(deleted);
  assert.ok(stream.comments.includes('deployment deleted'), JSON.stringify(stream.comments));
  assert.equal((await server.request('GET', `/deployments/${brief.id}/logs?follow=true`)).status, 404);
});

test('metrics: every field populated for a running busybox worker', async () => {
  const busy = await deploy('busy', ['sh', '-c', 'trap "exit 0" TERM; gw=$(ip route | awk "/default/ {print \\$3}"); while true; do ping -c 1 -W 1 $gw >/dev/null; dd if=/dev/zero of=/tmp/f bs=64k count=16 conv=fsync 2>/dev/null; sleep 0.5; done']);
  await waitRunning(busy.id, 1);
  const metrics = await waitFor('network traffic in the metrics', async () => {
    const response = await server.request<Record<string, unknown> & { instances: Record<string, unknown>[]; total_network: Record<string, number> }>('GET', `/deployments/${busy.id}/metrics`);
    assert.equal(response.status, 200, response.text);
    return response.body.instance_count === 1 && (response.body.total_network.tx_packets ?? 0) > 0 ? response.body : undefined;
  }, 30_000);
  assert.equal(metrics.deployment_id, busy.id);
  assert.equal(metrics.deployment_name, 'busy');
  assert.equal(typeof metrics.total_cpu_usage_percent, 'number');
  const instance = metrics.instances[0] as {
    instance_id: string;
    instance_name: string;
    cpu_usage_percent: number;
    memory: { usage_bytes: number; limit_bytes: number; usage_percent: number };
    network: { rx_bytes: number; tx_bytes: number; rx_packets: number; tx_packets: number };
    disk_io: { read_bytes: number; write_bytes: number };
    pids: { current: number; limit: number };
    restart_count: number;
  };
  assert.match(instance.instance_name, new RegExp(`^${NS}_busy_[0-9a-f]{8}$`));
  assert.match(instance.instance_id, /^[0-9a-f]{64}$/);
  assert.ok(instance.cpu_usage_percent >= 0);
  assert.ok(instance.memory.usage_bytes > 0 && instance.memory.limit_bytes >= instance.memory.usage_bytes);
  assert.ok(instance.memory.usage_percent > 0 && instance.memory.usage_percent <= 100);
  assert.ok(instance.network.rx_bytes > 0 && instance.network.tx_bytes > 0 && instance.network.rx_packets > 0 && instance.network.tx_packets > 0);
  assert.equal(typeof instance.disk_io.read_bytes, 'number');
  assert.equal(typeof instance.disk_io.write_bytes, 'number');
  assert.ok(instance.pids.current >= 1);
  assert.equal(typeof instance.pids.limit, 'number');
  assert.equal(instance.restart_count, 0);
  assert.deepEqual(metrics.total_memory, instance.memory);
  assert.equal(metrics.total_pids, instance.pids.current);
  assert.deepEqual(metrics.total_disk_io, instance.disk_io);
});

interface ExecResult {
  stdout: string;
  stderr: string;
  exit: number | null | undefined;
  errors: string[];
  status?: number;
  body?: string;
}

function execUrl(id: string, query: string): string {
  return `${server.baseUrl.replace(/^http/, 'ws')}/deployments/${id}/exec?${query}`;
}

/**
 * Opens the exec WebSocket, sends `frames` once open (and `afterOutput` once the first stdout arrived), and
 * collects everything until the server closes.
 */
async function exec(
  url: string,
  frames: unknown[],
  headers: Record<string, string> = { authorization: `Bearer ${server.adminToken}` },
  afterOutput: unknown[] = [],
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const result: ExecResult = { stdout: '', stderr: '', exit: undefined, errors: [] };
    const ws = new WebSocket(url, { headers, handshakeTimeout: 10_000 });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`exec did not finish: ${JSON.stringify(result)}`));
    }, 30_000);
    ws.on('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ ...result, status: response.statusCode, body });
      });
    });
    ws.on('open', () => {
      for (const frame of frames) ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
    });
    let pendingAfterOutput = afterOutput.length > 0;
    ws.on('message', (raw: Buffer) => {
      const frame = JSON.parse(raw.toString()) as { type: string; data?: string; code?: number | null; message?: string };
      if (pendingAfterOutput && frame.type === 'stdout') {
        pendingAfterOutput = false;
        for (const next of afterOutput) ws.send(typeof next === 'string' ? next : JSON.stringify(next));
      }
      if (frame.type === 'stdout') result.stdout += Buffer.from(frame.data ?? '', 'base64').toString();
      else if (frame.type === 'stderr') result.stderr += Buffer.from(frame.data ?? '', 'base64').toString();
      else if (frame.type === 'exit') result.exit = frame.code;
      else if (frame.type === 'error') result.errors.push(frame.message ?? '');
    });
    ws.on('close', () => {
      clearTimeout(timer);
      resolve(result);
    });
    ws.on('error', (error) => {
      if (result.status === undefined) {
        clearTimeout(timer);
        reject(error);
      }
    });
  });
}

const stdin = (text: string) => ({ type: 'stdin', data: Buffer.from(text).toString('base64') });

let worker: Deployment;

test('exec: stdin is echoed, stdin_close ends input, exit code 0; `exit 3` gives code 3; stderr is its own stream', async () => {
  worker = await deploy('shell', ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done']);
  await waitRunning(worker.id, 1);
  const echoed = await exec(execUrl(worker.id, 'command=cat'), [stdin('hello '), stdin('world\n'), { type: 'stdin_close' }]);
  assert.deepEqual(echoed, { stdout: 'hello world\n', stderr: '', exit: 0, errors: [] });

  const three = await exec(execUrl(worker.id, `command=sh&command=-c&command=${encodeURIComponent('exit 3')}`), []);
  assert.equal(three.exit, 3);

  const split = await exec(execUrl(worker.id, `command=sh&command=-c&command=${encodeURIComponent('echo out; echo err >&2; exit 7')}`), []);
  assert.deepEqual(split, { stdout: 'out\n', stderr: 'err\n', exit: 7, errors: [] });

  // An unknown program: Docker reports it on the output and the exit code is 126/127 (or unknown on old engines).
  const missing = await exec(execUrl(worker.id, 'command=/no/such/program'), []);
  assert.ok(missing.exit === null || (typeof missing.exit === 'number' && missing.exit !== 0), JSON.stringify(missing));
});

test('exec: TTY with initial size and resize; invalid frames get an error frame and the session goes on', async () => {
  // The short sleep lets Docker apply the initial size, which it does only after the exec has started.
  const sized = await exec(
    execUrl(worker.id, `tty=true&cols=100&rows=40&command=sh&command=-c&command=${encodeURIComponent('sleep 0.5; stty size; read x; stty size')}`),
    ['not json', { type: 'stdin', data: '***' }],
    { authorization: `Bearer ${server.adminToken}` },
    [{ type: 'resize', cols: 90, rows: 30 }, stdin('go\r')],
  );
  assert.match(sized.stdout, /^40 100\r\n/, JSON.stringify(sized));
  assert.match(sized.stdout, /30 90\r\n$/, JSON.stringify(sized));
  assert.equal(sized.exit, 0);
  assert.deepEqual(sized.errors, ['frame is not JSON', 'stdin frame needs base64 data']);
});

test('exec refusals are HTTP answers before the handshake; tickets work once', async () => {
  const reader = (await server.createToken({ scopes: ['deployments:read', 'deployments:write'] })).token;
  const forbidden = await exec(execUrl(worker.id, 'command=true'), [], { authorization: `Bearer ${reader}` });
  assert.equal(forbidden.status, 403);
  const anonymous = await exec(execUrl(worker.id, 'command=true'), [], {});
  assert.equal(anonymous.status, 401);
  const unknown = await exec(execUrl('00000000-0000-4000-8000-000000000000', 'command=true'), []);
  assert.equal(unknown.status, 404);
  const badQuery = await exec(execUrl(worker.id, 'tty=perhaps'), []);
  assert.equal(badQuery.status, 400);
  const noContainer = await exec(execUrl(worker.id, `container=${NS}_shell_00000000`), []);
  assert.equal(noContainer.status, 404);
  const idle = await deploy('idle', ['sleep', '3600'], 0);
  const noInstance = await exec(execUrl(idle.id, 'command=true'), []);
  assert.equal(noInstance.status, 409);
  assert.match(noInstance.body ?? '', /no running instance/);

  const plain = await server.request('GET', `/deployments/${worker.id}/exec`);
  assert.equal(plain.status, 426);
  assert.equal(plain.headers.get('upgrade'), 'websocket');

  const ticket = await server.request<{ ticket: string }>('POST', '/auth/stream-ticket', { body: { deployment_id: worker.id, stream: 'exec' } });
  assert.equal(ticket.status, 200);
  const url = execUrl(worker.id, `command=sh&command=-c&command=${encodeURIComponent('echo via-ticket')}&ticket=${ticket.body.ticket}`);
  const viaTicket = await exec(url, [], {});
  assert.equal(viaTicket.stdout, 'via-ticket\n');
  assert.equal(viaTicket.exit, 0);
  assert.equal((await exec(url, [], {})).status, 401, 'single use');
  const logsTicket = await server.request<{ ticket: string }>('POST', '/auth/stream-ticket', { body: { deployment_id: worker.id, stream: 'logs' } });
  assert.equal((await exec(execUrl(worker.id, `command=true&ticket=${logsTicket.body.ticket}`), [], {})).status, 401, 'a logs ticket opens no exec');

  // An upgrade on any other route is answered like a plain request, and the server stays healthy.
  const elsewhere = await exec(`${server.baseUrl.replace(/^http/, 'ws')}/deployments`, []);
  assert.equal(elsewhere.status, 200);
  assert.equal((await server.request('GET', '/healthz')).status, 200);
});

test('a secretRef value reaches the container but never an API answer, event or server log', async () => {
  const value = `d1t-secret-${process.pid}-value`;
  const namespace = await server.request('POST', '/namespaces', { body: { name: NS } });
  assert.ok(namespace.status === 201 || namespace.status === 409, namespace.text);
  const secret = await server.request('POST', '/secrets', { body: { namespace: NS, name: 'api-token', value } });
  assert.equal(secret.status, 201, secret.text);
  const created = await server.request<Deployment>('POST', '/deployments', {
    body: {
      name: 'secretive', runtime: 'docker', namespace: NS, image: BUSYBOX_IMAGE, config: { image_pull_policy: 'Never' },
      command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'], environment: { TOKEN: { secretRef: 'api-token' }, MODE: 'plain' },
    },
  });
  assert.equal(created.status, 201);
  assert.ok(!created.text.includes(value));
  await waitRunning(created.body.id, 1);
  const shown = await exec(execUrl(created.body.id, `command=sh&command=-c&command=${encodeURIComponent('echo "$MODE:${#TOKEN}"')}`), []);
  assert.equal(shown.stdout, `plain:${value.length}\n`, 'resolved inside the container');
  for (const path of ['/deployments', `/deployments/${created.body.id}`, `/deployments/${created.body.id}/events?limit=1000`, `/deployments/${created.body.id}/metrics`, `/deployments/${created.body.id}/logs`, '/secrets']) {
    const response = await server.request('GET', path);
    assert.equal(response.status, 200, path);
    assert.ok(!response.text.includes(value), path);
  }
  assert.ok(!server.stdout().includes(value) && !server.stderr().includes(value));
});

test('re-applying through the API rolls over: the child carries parent_id, runs, and replaces the parent', async () => {
  const sleeper = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];
  const parent = await deploy('roll', sleeper, 1);
  await waitRunning(parent.id, 1);
  const child = await server.request<Deployment & { parent_id: string | null; environment: Record<string, unknown> }>('POST', '/deployments', {
    body: { name: 'roll', runtime: 'docker', namespace: NS, image: BUSYBOX_IMAGE, command: sleeper, environment: { VERSION: '2' }, config: { image_pull_policy: 'Never' } },
  });
  assert.equal(child.status, 201, child.text);
  assert.equal(child.body.parent_id, parent.id);
  await waitRunning(child.body.id, 1);
  await waitFor('the parent to be replaced', async () => {
    const got = await server.request<Deployment>('GET', `/deployments/${parent.id}`);
    return got.status === 404 || (got.body.status === 'deleted' && got.body.instances.length === 0) ? true : undefined;
  });
  const listed = await server.request<Deployment[]>('GET', `/deployments?namespace=${NS}&status=running`);
  assert.deepEqual(listed.body.filter((d) => d.id === parent.id || d.id === child.body.id).map((d) => d.id), [child.body.id]);
  const { stdout } = await run('docker', ['ps', '-q', '--filter', `name=^/${NS}_roll_`]);
  assert.equal(stdout.trim().split('\n').filter(Boolean).length, 1, 'exactly one container serves the name');
});

test('instances show their private address on the namespace network', async () => {
  const sleeper = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];
  const bridged = await waitRunning((await deploy('addressed', sleeper, 1)).id, 1);
  assert.match(bridged.instances[0]?.id ?? '', /^[0-9a-f]{64}$/);
  assert.match(bridged.instances[0]?.address ?? '', /^\d+\.\d+\.\d+\.\d+$/);
  const { stdout } = await run('docker', ['inspect', '-f', `{{(index .NetworkSettings.Networks "svc_${NS}").IPAddress}}`, bridged.instances[0]?.id ?? '']);
  assert.equal(bridged.instances[0]?.address, stdout.trim());
});

test('a graceful stop ends open log streams and exec sessions within the 10 s budget; a restart serves again', async () => {
  const follower = fetch(`${server.baseUrl}/deployments/${chatty.id}/logs?follow=true&tail=1`, { headers: { authorization: `Bearer ${server.adminToken}` } });
  const response = await follower;
  assert.equal(response.status, 200);
  const drained = response.text().then(
    () => 'ended',
    () => 'ended',
  );
  const session = exec(execUrl(worker.id, 'command=sleep&command=300'), []);
  await sleep(500);
  const stopped = await server.stop();
  assert.equal(stopped.code, 0, server.stderr().slice(-2000));
  assert.ok(stopped.ms < 10_000, `stopped in ${stopped.ms} ms`);
  assert.equal(await drained, 'ended');
  const result = await session;
  assert.equal(result.exit, undefined, 'no exit frame for a session cut by the stop');
  await server.restart();
  const back = await server.request<Deployment>('GET', `/deployments/${worker.id}`);
  assert.equal(back.status, 200);
});
