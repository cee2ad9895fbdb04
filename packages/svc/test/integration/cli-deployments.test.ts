// Deployment commands and `apply` through the built binary against a real server and real Docker.
// The error paths and manifest handling run always; the lifecycle tests need the deployments API and are
// skipped (with that reason) while the server does not serve GET /deployments.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../support/server.js';
import { BUSYBOX_IMAGE, ensureBusyboxImage } from '../support/busybox-image.js';
import { ANSI, cliEnv, errorLine, removeDockerLeftovers, SVC_BIN, Terminals, type CliEnv } from './cli-helpers.js';

let server: TestServer;
let cli: CliEnv;
let deploymentsServed = false;
const MISSING = '00000000-0000-4000-8000-000000000000';
// Unique per test process: another run of this file (another server, same Docker) must not share containers.
const NS = `cliit-${process.pid}-apps`;
const NS2 = `cliit-${process.pid}-jobs`;
const NS3 = `cliit-${process.pid}-team`;

before(async () => {
  server = await startTestServer({ env: { SVC_SCHEDULER_INTERVAL: '1' }, configToml: '[server.exec]\nenabled = true\n' });
  cli = cliEnv(server.port, server.adminToken);
  deploymentsServed = (await server.request('GET', '/deployments')).status === 200;
  if (deploymentsServed) await ensureBusyboxImage();
});

after(async () => {
  try {
    if (deploymentsServed) for (const ns of [NS, NS2, NS3]) await cli.run(['namespace', 'prune', ns, '--all']);
  } finally {
    cli?.close();
    await server?.close();
    // With the server stopped nothing re-creates them.
    if (deploymentsServed) await removeDockerLeftovers([NS, NS2, NS3]);
  }
});

function manifestFile(name: string, text: string): string {
  const path = join(cli.configDir, name);
  writeFileSync(path, text);
  return path;
}

async function namespaces(): Promise<string[]> {
  const list = (await server.request<{ name: string }[]>('GET', '/namespaces')).body;
  return list.map((n) => n.name).sort();
}

test('unknown deployment id: exit 4 and one "not found" line for every per-deployment command', async () => {
  for (const args of [
    ['inspect', MISSING],
    ['delete', MISSING],
    ['logs', MISSING],
    ['logs', MISSING, '-f'],
    ['events', MISSING],
    ['events', MISSING, '-f'],
    ['metrics', MISSING],
    ['health-checks', MISSING, '--latest'],
    ['exec', MISSING, '-T', '--', 'true'],
  ]) {
    const result = await cli.run(['deployment', ...args]);
    assert.equal(result.code, 4, `${args.join(' ')}: ${result.stderr}`);
    assert.equal(errorLine(result), `error: deployment '${MISSING}' not found`);
  }
});

test('deployment commands: unreachable server exits 3, bad flags exit 1', async () => {
  const down = await cli.run(['-c', 'down', 'deployment', 'list']);
  assert.equal(down.code, 3);
  assert.match(errorLine(down), /cannot reach the API at http:\/\/127\.0\.0\.1:1/);
  const downExec = await cli.run(['-c', 'down', 'deployment', 'exec', MISSING, '-T']);
  assert.equal(downExec.code, 3);
  assert.equal((await cli.run(['deployment', 'list', '--type', 'daemon'])).code, 1);
  assert.equal((await cli.run(['deployment', 'logs', MISSING, '--tail', 'many'])).code, 1);
});

test('apply: an invalid manifest lists every problem with its path and changes nothing', async () => {
  const before = await namespaces();
  const file = manifestFile(
    'bad.yaml',
    `namespaces:
  cliit-never: {}
deployments:
  web:
    namespace: cliit-never
    image: busybox:$UNDEFINED_TAG
    replicas: many
    volumes: [{ type: tmpfs, destination: /x }]
    enviroment: {}
`,
  );
  const result = await cli.run(['apply', '-f', file]);
  assert.equal(result.code, 1);
  assert.match(errorLine(result), /manifest '.*bad\.yaml' is invalid \(5 problems\)/);
  for (const path of ['deployments.web.image', 'deployments.web.replicas', 'deployments.web.volumes[0].type', 'deployments.web.volumes[0].source', 'deployments.web.enviroment']) {
    assert.ok(result.stderr.includes(`  ${path}: `), `${path} in\n${result.stderr}`);
  }
  assert.match(result.stderr, /variable 'UNDEFINED_TAG' is not defined/);
  assert.deepEqual(await namespaces(), before);

  const broken = await cli.run(['apply', '-f', manifestFile('broken.yaml', 'deployments: [oops')]);
  assert.equal(broken.code, 1);
  assert.match(errorLine(broken), /invalid/);
  const absent = await cli.run(['apply', '-f', join(cli.configDir, 'absent.yaml')]);
  assert.equal(absent.code, 1);
  assert.match(errorLine(absent), /cannot read .*ENOENT/);
  const noFile = await cli.run(['apply']);
  assert.equal(noFile.code, 1);
  const badEnv = await cli.run(['apply', '-f', file, '-e', manifestFile('bad.env', 'not a pair\n')]);
  assert.equal(badEnv.code, 1);
  assert.match(badEnv.stderr, /bad\.env:1: expected KEY=VALUE/);
});

test('apply --dry-run: shows what would be created and changes nothing', async () => {
  const before = await namespaces();
  const file = manifestFile(
    'dry.yaml',
    `namespaces:
  cliit-dry: {}
deployments:
  web:
    namespace: cliit-dry
    image: \${IMAGE}
    replicas: 2
`,
  );
  const envFile = manifestFile('dry.env', `IMAGE=${BUSYBOX_IMAGE}\n`);
  const result = await cli.run(['apply', '-f', file, '-e', envFile, '--dry-run']);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /\(dry run\) namespace cliit-dry: would be created/);
  assert.ok(result.stdout.includes(`(dry run) deployment cliit-dry/web: would be created (image ${BUSYBOX_IMAGE}, 2 replicas)`), result.stdout);
  assert.deepEqual(await namespaces(), before);
  // From stdin, as JSON.
  const json = await cli.run(['apply', '-f', '-', '-d'], { input: JSON.stringify({ namespaces: { 'cliit-dry2': null } }) });
  assert.equal(json.code, 0, json.stderr);
  assert.match(json.stdout, /namespace cliit-dry2: would be created/);
  assert.deepEqual(await namespaces(), before);
});

test('namespace prune of an unknown or empty namespace and its error paths', async () => {
  const down = await cli.run(['-c', 'down', 'namespace', 'prune', 'x1']);
  assert.equal(down.code, 3);
  if (!deploymentsServed) {
    const result = await cli.run(['namespace', 'prune', 'cliit-none']);
    assert.notEqual(result.code, 0);
    assert.equal(result.stderr.split('\n').filter((l) => l.startsWith('error:')).length, 1);
    return;
  }
  const result = await cli.run(['namespace', 'prune', 'cliit-none']);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /pruned 0 of 0/);
});

/** Lifecycle tests run only when the server serves the deployments API (decided in before(), so at run time). */
function needsDeploymentsApi(t: { skip(message?: string): void }): boolean {
  if (deploymentsServed) return true;
  t.skip('the server does not serve the deployments API yet');
  return false;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

interface Dep {
  id: string;
  name: string;
  namespace: string;
  status: string;
  kind: string;
  labels: Record<string, string>;
  replicas: number;
}

test('apply → list (filters, table, JSON) → inspect → logs → events → metrics → health-checks → re-apply → dry-run update', async (t) => {
  if (!needsDeploymentsApi(t)) return;
  const file = manifestFile(
    'app.yaml',
    `namespaces:
  ${NS}: {}
  \${JOBS_NS}: {}
deployments:
  web:
    namespace: ${NS}
    image: \${IMAGE}
    command: ["sh", "-c", "echo started \${GREETING}; echo $$HOME-literal; sleep 3600"]
    labels:
      - app: web
      - tier: front
    environment:
      GREETING: \${GREETING}
  hello:
    namespace: \${JOBS_NS}
    kind: job
    image: \${IMAGE}
    command: ["sh", "-c", "echo hello-from-job"]
    labels: { app: hello }
`,
  );
  const env = { IMAGE: BUSYBOX_IMAGE, GREETING: 'hi', JOBS_NS: NS2, SVC_APPLY_TIMEOUT: '120' };
  const applied = await cli.run(['apply', '-f', file], { env, timeoutMs: 180_000 });
  assert.equal(applied.code, 0, `${applied.stdout}\n${applied.stderr}`);
  assert.match(applied.stdout, new RegExp(`namespace ${NS}: created`));
  assert.match(applied.stdout, new RegExp(`deployment ${NS}/web: created, running \\(`));
  assert.match(applied.stdout, new RegExp(`deployment ${NS2}/hello: created, completed \\(`));
  assert.doesNotMatch(applied.stdout, ANSI);

  const all = JSON.parse((await cli.run(['deployment', 'list', '-o', 'json'])).stdout) as Dep[];
  const web = all.find((d) => d.name === 'web' && d.namespace === NS)!;
  const hello = all.find((d) => d.name === 'hello')!;
  assert.ok(web && hello);
  const ids = async (...args: string[]) => (JSON.parse((await cli.run(['deployment', 'list', '-o', 'json', ...args])).stdout) as Dep[]).map((d) => d.id).sort();
  assert.deepEqual(await ids('-n', NS), [web.id]);
  assert.deepEqual(await ids('--type', 'job', '-n', NS2), [hello.id]);
  assert.deepEqual(await ids('-l', 'app=web', '-l', 'tier'), [web.id]);
  assert.deepEqual(await ids('-l', 'app=web', '-l', 'zone'), []);
  assert.deepEqual(await ids('-n', NS, '-s', 'running', '-s', 'creating'), [web.id]);
  assert.deepEqual(await ids('-n', NS, '-s', 'failed'), []);

  const table = await cli.run(['deployment', 'list', '-n', NS]);
  assert.match(table.stdout, /^ID\s+CREATED AT \(UTC\)\s+UPDATED AT \(UTC\)\s+NAMESPACE\s+NAME\s+IMAGE\s+RUNTIME\s+KIND\s+REPLICAS\s+STATUS/);
  assert.match(table.stdout, new RegExp(`${web.id}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+\\S+ \\S+\\s+${NS}\\s+web\\s+\\S+\\s+docker\\s+worker\\s+\\d+/1\\s+running`));
  assert.doesNotMatch(table.stdout, ANSI);

  const inspected = JSON.parse((await cli.run(['deployment', 'inspect', web.id])).stdout) as Dep & { environment: Record<string, string>; command: string[] };
  assert.equal(inspected.environment.GREETING, 'hi');
  assert.deepEqual(inspected.command, ['sh', '-c', 'echo started hi; echo $HOME-literal; sleep 3600']);

  const logs = await waitFor('web logs', async () => {
    const r = await cli.run(['deployment', 'logs', web.id, '--tail', '10']);
    return r.code === 0 && r.stdout.includes('started hi') ? r : undefined;
  });
  // `$$HOME` reached the container as `$HOME`, which its shell expanded.
  assert.match(logs.stdout, /\/root-literal/);
  const jobLogs = await waitFor('job logs', async () => {
    const r = await cli.run(['deployment', 'logs', hello.id]);
    return r.stdout.includes('hello-from-job') ? r : undefined;
  });
  assert.equal(jobLogs.code, 0);

  const events = await cli.run(['deployment', 'events', web.id, '-o', 'json', '--limit', '5']);
  assert.equal(events.code, 0, events.stderr);
  assert.ok(Array.isArray(JSON.parse(events.stdout)));
  assert.equal((await cli.run(['deployment', 'events', web.id, '-l', 'info'])).code, 0);
  const metrics = await cli.run(['deployment', 'metrics', web.id, '-o', 'json']);
  assert.equal(metrics.code, 0, metrics.stderr);
  assert.equal((JSON.parse(metrics.stdout) as { deployment_id: string }).deployment_id, web.id);
  assert.match((await cli.run(['deployment', 'metrics', web.id])).stdout, /INSTANCE\s+CPU/);
  const checks = await cli.run(['deployment', 'health-checks', web.id, '--latest', '-o', 'json']);
  assert.equal(checks.code, 0, checks.stderr);
  assert.deepEqual(JSON.parse(checks.stdout), []);

  // Same manifest again: unchanged, nothing posted.
  const again = await cli.run(['apply', '-f', file], { env });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`deployment ${NS}/web: unchanged \\(${web.id}\\)`));
  // A changed variable: the dry run names the change and posts nothing.
  const dry = await cli.run(['apply', '-f', file, '--dry-run'], { env: { ...env, GREETING: 'hello' } });
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, new RegExp(`deployment ${NS}/web: would be updated: command changed; environment changed`));
  assert.match(dry.stdout, new RegExp(`namespace ${NS}: exists, skipped`));
  const afterDry = JSON.parse((await cli.run(['deployment', 'list', '-n', NS, '-o', 'json'])).stdout) as Dep[];
  assert.deepEqual(afterDry.map((d) => d.id), [web.id]);
});

test('logs -f follows new lines and survives until interrupted', async (t) => {
  if (!needsDeploymentsApi(t)) return;
  const web = (JSON.parse((await cli.run(['deployment', 'list', '-n', NS, '-o', 'json'])).stdout) as Dep[]).find((d) => d.name === 'web')!;
  const child = spawn(process.execPath, [SVC_BIN, 'deployment', 'logs', web.id, '-f', '--tail', '5'], { env: cli.env as NodeJS.ProcessEnv });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  try {
    await waitFor('first lines', async () => (out.includes('started hi') ? true : undefined), 20_000);
    // A new line on the container's PID 1 stdout is what the runtime's log stream carries.
    execFileSync('docker', ['ps', '-q', '--filter', `name=${NS}_web_`], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .forEach((id) => execFileSync('docker', ['exec', id, 'sh', '-c', 'echo followed-line > /proc/1/fd/1']));
    await waitFor('followed line', async () => (out.includes('followed-line') ? true : undefined), 20_000);
    // No line is printed twice while following (each instance prints `started hi` once).
    const started = out.split('\n').filter((l) => l.includes('started hi'));
    assert.equal(new Set(started).size, started.length, `duplicate lines while following:\n${out}`);
  } finally {
    child.kill('SIGINT');
  }
});

test('exec: remote exit code becomes ours; stdout is forwarded; default container', async (t) => {
  if (!needsDeploymentsApi(t)) return;
  const web = (JSON.parse((await cli.run(['deployment', 'list', '-n', NS, '-o', 'json'])).stdout) as Dep[]).find((d) => d.name === 'web')!;
  const seven = await cli.run(['deployment', 'exec', web.id, '-T', '--', 'sh', '-c', 'echo out; echo err >&2; exit 7']);
  assert.equal(seven.code, 7, seven.stderr);
  assert.equal(seven.stdout, 'out\n');
  assert.match(seven.stderr, /err/);
  const piped = await cli.run(['deployment', 'exec', web.id, '-T', '--', 'cat'], { input: 'through stdin\n' });
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stdout, 'through stdin\n');
});

test('exec on a terminal: raw mode, default /bin/sh, remote exit code', async (t) => {
  if (!needsDeploymentsApi(t)) return;
  const web = (JSON.parse((await cli.run(['deployment', 'list', '-n', NS, '-o', 'json'])).stdout) as Dep[]).find((d) => d.name === 'web')!;
  const terminals = new Terminals(cli.env);
  try {
    const name = terminals.start(['deployment', 'exec', web.id]);
    await terminals.waitFor(name, /^\/ [#$]\s*$/m);
    terminals.type(name, 'echo tty-$((40+2)); [ -t 0 ] && echo stdin-is-a-tty');
    await terminals.waitFor(name, /^tty-42\s*$/m);
    await terminals.waitFor(name, /^stdin-is-a-tty\s*$/m);
    terminals.type(name, 'exit 3');
    const done = await terminals.waitFor(name, /EXIT=\d+/);
    assert.match(done, /EXIT=3/);
  } finally {
    terminals.close();
  }
});

test('apply with a token limited to deployments of one namespace (no namespaces:read) works', async (t) => {
  if (!needsDeploymentsApi(t)) return;
  const limited = await server.createToken({ scopes: ['deployments:read', 'deployments:write'], namespaces: [NS3] });
  const file = manifestFile('team.yaml', `deployments:\n  once:\n    namespace: ${NS3}\n    kind: job\n    image: ${BUSYBOX_IMAGE}\n    command: ["true"]\n`);
  const env = { SVC_TOKEN: limited.token, SVC_APPLY_TIMEOUT: '120' };
  const dry = await cli.run(['apply', '-f', file, '-d'], { env });
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, new RegExp(`deployment ${NS3}/once: would be created`));
  const applied = await cli.run(['apply', '-f', file], { env, timeoutMs: 180_000 });
  assert.equal(applied.code, 0, applied.stdout + applied.stderr);
  assert.match(applied.stdout, new RegExp(`deployment ${NS3}/once: created, completed`));
  const [once] = JSON.parse((await cli.run(['deployment', 'list', '-n', NS3, '-o', 'json'], { env })).stdout) as Dep[];
  const deleted = await cli.run(['deployment', 'delete', once!.id], { env });
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.equal(deleted.stdout, `${once!.id}\n`);
  const after = await cli.run(['deployment', 'inspect', once!.id], { env });
  // Marked deleted, or already purged by the scheduler.
  if (after.code === 0) assert.equal((JSON.parse(after.stdout) as Dep).status, 'deleted');
  else assert.equal(after.code, 4);
  // Outside its namespace the same token is refused with the spec's line and exit 2.
  const outside = await cli.run(['deployment', 'list', '-n', NS], { env });
  assert.equal(outside.code, 2);
  assert.equal(errorLine(outside), `error: cannot list deployments in namespace '${NS}': not authorized`);
});

test('a failing job: apply exits 1 with a failed summary; prune removes finished ones and keeps running ones', async (t) => {
  if (!needsDeploymentsApi(t)) return;
  const file = manifestFile(
    'fail.yaml',
    `deployments:
  broken:
    namespace: ${NS2}
    kind: job
    image: ${BUSYBOX_IMAGE}
    command: ["sh", "-c", "exit 3"]
`,
  );
  const result = await cli.run(['apply', '-f', file], { env: { SVC_APPLY_TIMEOUT: '120' }, timeoutMs: 180_000 });
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(result.stdout, new RegExp(`deployment ${NS2}/broken: created, failed`));

  const invalid = await cli.run(['apply', '-f', '-'], { input: JSON.stringify({ deployments: { bad: { namespace: NS2, image: BUSYBOX_IMAGE, kind: 'job', replicas: 2 } } }) });
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /deployments\.bad\.replicas: .*\(deployment\.replicas\.job_must_be_one\)/);

  const pruned = await cli.run(['namespace', 'prune', NS2]);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.match(pruned.stdout, /broken \(failed\)/);
  const left = JSON.parse((await cli.run(['deployment', 'list', '-n', NS, '-o', 'json'])).stdout) as Dep[];
  assert.ok(left.some((d) => d.name === 'web' && d.status === 'running'));
  const all = await cli.run(['namespace', 'prune', NS, '--all']);
  assert.equal(all.code, 0, all.stderr);
  assert.match(all.stdout, /web \(running\)/);
  const web = left.find((d) => d.name === 'web')!;
  const afterDelete = JSON.parse((await cli.run(['deployment', 'inspect', web.id])).stdout) as Dep;
  assert.equal(afterDelete.status, 'deleted');
});
