// The built `svc` binary against a real server for every resource command the server serves: namespaces,
// secrets (incl. referrers), configs, webhooks, users, tokens. Exit codes 0/1/2/4/5 and JSON that parses.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUSYBOX_IMAGE, ensureBusyboxImage } from '../support/busybox-image.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ANSI, cliEnv, errorLine, removeDockerLeftovers, type CliEnv } from './cli-helpers.js';

let server: TestServer;
let cli: CliEnv;
const MISSING = '00000000-0000-4000-8000-000000000000';
// Unique per process: the referencing deployment runs a real container named after its namespace.
const SEC_NS = `clisec-${process.pid}`;

before(async () => {
  server = await startTestServer();
  cli = cliEnv(server.port, server.adminToken);
});

after(async () => {
  try {
    await cli?.run(['namespace', 'prune', SEC_NS, '--all']);
  } finally {
    cli?.close();
    await server?.close();
    // With the server stopped nothing re-creates them.
    await removeDockerLeftovers([SEC_NS]);
  }
});

function json<T>(text: string): T {
  return JSON.parse(text) as T;
}

test('namespace create / list / duplicate (5) / invalid (1)', async () => {
  const created = await cli.run(['namespace', 'create', 'cli-ns']);
  assert.equal(created.code, 0, created.stderr);
  const id = created.stdout.trim();
  assert.match(id, /^[0-9a-f-]{36}$/);
  const list = json<{ id: string; name: string }[]>((await cli.run(['namespace', 'list', '-o', 'json'])).stdout);
  assert.ok(list.some((n) => n.id === id && n.name === 'cli-ns'));
  const table = await cli.run(['namespace', 'list']);
  assert.match(table.stdout, /^ID\s+NAME\s+CREATED AT \(UTC\)/);
  assert.match(table.stdout, /cli-ns\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/);
  assert.doesNotMatch(table.stdout, ANSI);
  const dup = await cli.run(['namespace', 'create', 'cli-ns']);
  assert.equal(dup.code, 5);
  assert.equal(errorLine(dup), "error: namespace 'cli-ns' already exists or still has dependents");
  const invalid = await cli.run(['namespace', 'create', 'Bad_Name']);
  assert.equal(invalid.code, 1);
  assert.match(errorLine(invalid), /^error: namespace 'Bad_Name': request failed \(422\)/);
  assert.match(invalid.stderr, /name: .*\(namespace\.name\.format\)/);
});

test('secret create / list / delete, 404, and referrers block deletion without --force', async () => {
  assert.equal((await cli.run(['namespace', 'create', SEC_NS])).code, 0);
  const created = await cli.run(['secret', 'create', 'db-pass', '-n', SEC_NS, '-v', 's3cret-value']);
  assert.equal(created.code, 0, created.stderr);
  const id = created.stdout.trim();
  const fromStdin = await cli.run(['secret', 'create', 'api-key', '-n', SEC_NS, '-v', '-'], { input: 'piped-value\n' });
  assert.equal(fromStdin.code, 0, fromStdin.stderr);

  const list = await cli.run(['secret', 'list', '-n', SEC_NS, '-o', 'json']);
  const secrets = json<{ name: string }[]>(list.stdout);
  assert.deepEqual(secrets.map((s) => s.name).sort(), ['api-key', 'db-pass']);
  assert.doesNotMatch(list.stdout, /s3cret-value|piped-value/);

  const dup = await cli.run(['secret', 'create', 'db-pass', '-n', SEC_NS, '-v', 'x']);
  assert.equal(dup.code, 5);
  const noNs = await cli.run(['secret', 'create', 'x1', '-n', 'no-such-ns', '-v', 'x']);
  assert.equal(noNs.code, 4);
  assert.equal(errorLine(noNs), "error: secret 'no-such-ns/x1' not found");
  const missingFlag = await cli.run(['secret', 'create', 'x1', '-v', 'x']);
  assert.equal(missingFlag.code, 1);

  // A deployment that references the secret, applied through the CLI itself.
  await ensureBusyboxImage();
  const manifest = join(cli.configDir, 'secret-user.yaml');
  writeFileSync(
    manifest,
    `deployments:\n  web:\n    namespace: ${SEC_NS}\n    image: ${BUSYBOX_IMAGE}\n    command: ["sleep", "3600"]\n    environment:\n      DB: { secretRef: db-pass }\n`,
  );
  const applied = await cli.run(['apply', '-f', manifest], { env: { SVC_APPLY_TIMEOUT: '120' }, timeoutMs: 180_000 });
  assert.equal(applied.code, 0, applied.stdout + applied.stderr);

  const refused = await cli.run(['secret', 'delete', id]);
  assert.equal(refused.code, 5);
  assert.equal(errorLine(refused), `error: secret '${id}' already exists or still has dependents`);
  assert.ok(refused.stderr.includes(`referenced by:\n  ${SEC_NS}/web\n`), refused.stderr);
  assert.ok(json<{ id: string; name: string }[]>((await cli.run(['secret', 'list', '-o', 'json'])).stdout).some((s) => s.name === 'db-pass'));

  const forced = await cli.run(['secret', 'delete', id, '--force']);
  assert.equal(forced.code, 0, forced.stderr);
  const gone = await cli.run(['secret', 'delete', id]);
  assert.equal(gone.code, 4);
  assert.equal(errorLine(gone), `error: secret '${id}' not found`);
});

test('config list / inspect / delete (creation is API-only)', async () => {
  assert.equal((await cli.run(['namespace', 'create', 'cfg-ns'])).code, 0);
  const created = await server.request<{ id: string }>('POST', '/configs', { body: { name: 'app', namespace: 'cfg-ns', data: '{"a":1}', labels: 'x' } });
  assert.equal(created.status, 201, created.text);
  const list = json<{ id: string; name: string }[]>((await cli.run(['config', 'list', '-n', 'cfg-ns', '-o', 'json'])).stdout);
  const entry = list.find((c) => c.name === 'app');
  assert.ok(entry);
  assert.equal(json<{ data: string }[]>((await cli.run(['config', 'list', '-n', 'other-ns', '-o', 'json'])).stdout).length, 0);
  const table = await cli.run(['config', 'list']);
  assert.match(table.stdout, /cfg-ns\s+app\s+7 B/);
  const inspected = json<{ data: string; labels: string }>((await cli.run(['config', 'inspect', entry.id])).stdout);
  assert.equal(inspected.data, '{"a":1}');
  assert.equal((await cli.run(['config', 'delete', entry.id])).code, 0);
  const gone = await cli.run(['config', 'inspect', entry.id]);
  assert.equal(gone.code, 4);
  assert.equal(errorLine(gone), `error: config '${entry.id}' not found`);
});

test('webhook create: id on stdout, generated secret on stderr once; list; delete; invalid URL', async () => {
  const created = await cli.run(['webhook', 'create', 'http://10.255.0.1:9/hook', '-e', 'deployment.status_changed', '-e', 'deployment.*']);
  assert.equal(created.code, 0, created.stderr);
  const id = created.stdout.trim();
  assert.match(id, /^[0-9a-f-]{36}$/);
  assert.match(created.stderr, /secret: \S+/);
  const given = await cli.run(['webhook', 'create', 'http://10.255.0.1:9/other', '-s', 'my-own-secret']);
  assert.equal(given.code, 0);
  assert.doesNotMatch(given.stdout + given.stderr, /my-own-secret/);

  const list = json<{ id: string; events: string[]; secret?: string }[]>((await cli.run(['webhook', 'list', '-o', 'json'])).stdout);
  const hook = list.find((w) => w.id === id);
  assert.deepEqual(hook?.events, ['deployment.status_changed', 'deployment.*']);
  assert.equal(hook?.secret, undefined);
  assert.match((await cli.run(['webhook', 'list'])).stdout, /active/);

  assert.equal((await cli.run(['webhook', 'delete', id])).code, 0);
  assert.match((await cli.run(['webhook', 'list'])).stdout, new RegExp(`${id}.*revoked`));
  const loopback = await cli.run(['webhook', 'create', 'http://127.0.0.1/x']);
  assert.equal(loopback.code, 1);
  assert.match(loopback.stderr, /\(webhook\.url\.format\)/);
  const unknownKind = await cli.run(['webhook', 'create', 'http://10.0.0.1/x', '-e', 'deployment.nope']);
  assert.equal(unknownKind.code, 1);
  assert.equal((await cli.run(['webhook', 'delete', MISSING])).code, 4);
});

test('user create / list / update (current user) / delete, with every violation rendered', async () => {
  const invalid = await cli.run(['user', 'create', '--username', '-x', '--password', 'short']);
  assert.equal(invalid.code, 1);
  assert.match(errorLine(invalid), /^error: user '-x': request failed \(422\)/);
  assert.match(invalid.stderr, /username: .*\(user\.username\.format\)/);
  assert.match(invalid.stderr, /password: .*\(user\.password\.length\)/);

  const created = await cli.run(['user', 'create', '-u', 'alice', '-p', 'alice-password-1']);
  assert.equal(created.code, 0, created.stderr);
  const id = created.stdout.trim();
  assert.equal((await cli.run(['user', 'create', '-u', 'alice', '-p', 'alice-password-1'])).code, 5);
  const users = json<{ id: string; username: string }[]>((await cli.run(['user', 'list', '-o', 'json'])).stdout);
  assert.ok(users.some((u) => u.id === id && u.username === 'alice'));

  // `update` changes the user of the token: log in as alice with her own config dir.
  const alice = await server.login('alice', 'alice-password-1');
  const renamed = await cli.run(['user', 'update', '--username', 'alice2', '--password', 'alice-password-2'], { env: { SVC_TOKEN: alice } });
  assert.equal(renamed.code, 0, renamed.stderr);
  assert.equal(renamed.stdout.trim(), id);
  await server.login('alice2', 'alice-password-2');
  const nothing = await cli.run(['user', 'update'], { env: { SVC_TOKEN: alice } });
  assert.equal(nothing.code, 1);

  assert.equal((await cli.run(['user', 'delete', id])).code, 0);
  const gone = await cli.run(['user', 'delete', id]);
  assert.equal(gone.code, 4);
  assert.equal(errorLine(gone), `error: user '${id}' not found`);
});

test('token create (token on stdout, summary on stderr) / list status / rotate / revoke', async () => {
  const created = await cli.run(['token', 'create', 'ci-bot', '-s', 'namespaces:read', '-s', 'secrets:read', '-n', SEC_NS, '-e', '12h']);
  assert.equal(created.code, 0, created.stderr);
  const token = created.stdout.trim();
  assert.match(token, /^svc_pat_[0-9a-f]{64}$/);
  assert.doesNotMatch(created.stderr, new RegExp(token));
  assert.match(created.stderr, /scopes: +namespaces:read, secrets:read/);
  assert.match(created.stderr, new RegExp(`namespaces: ${SEC_NS}`));

  // The new token works with its own rights and no more.
  assert.equal((await cli.run(['namespace', 'list'], { env: { SVC_TOKEN: token } })).code, 0);
  assert.equal((await cli.run(['namespace', 'create', 'nope-ns'], { env: { SVC_TOKEN: token } })).code, 2);

  const list = json<{ id: string; name: string; expire_at: string | null }[]>((await cli.run(['token', 'list', '-o', 'json'])).stdout);
  const entry = list.find((t) => t.name === 'ci-bot');
  assert.ok(entry);
  const hours = (Date.parse(entry.expire_at ?? '') - Date.now()) / 3_600_000;
  assert.ok(hours > 11.9 && hours <= 12, `expiry in ${hours} h`);
  assert.match((await cli.run(['token', 'list'])).stdout, new RegExp(`${entry.id}\\s+ci-bot.*active`));

  const bad = await cli.run(['token', 'create', 'x-bot', '-s', 'nonsense:scope']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /token\.scopes\.unknown/);
  assert.equal((await cli.run(['token', 'create', 'x-bot', '-s', 'admin', '-e', '2w'])).code, 1);
  assert.equal((await cli.run(['token', 'create', 'x-bot'])).code, 1);

  const rotated = await cli.run(['token', 'rotate', entry.id]);
  assert.equal(rotated.code, 0, rotated.stderr);
  const fresh = rotated.stdout.trim();
  assert.notEqual(fresh, token);
  assert.equal((await cli.run(['namespace', 'list'], { env: { SVC_TOKEN: token } })).code, 2);
  assert.equal((await cli.run(['namespace', 'list'], { env: { SVC_TOKEN: fresh } })).code, 0);

  const freshId = json<{ id: string; name: string; revoked_at: string | null }[]>((await cli.run(['token', 'list', '-o', 'json'])).stdout).find(
    (t) => t.name === 'ci-bot' && t.revoked_at === null,
  )!.id;
  // In a pipe, revoke refuses without --yes and changes nothing.
  const refused = await cli.run(['token', 'revoke', freshId]);
  assert.equal(refused.code, 1);
  assert.match(errorLine(refused), /refusing to revoke .* --yes/);
  assert.equal((await cli.run(['namespace', 'list'], { env: { SVC_TOKEN: fresh } })).code, 0);
  const revoked = await cli.run(['token', 'revoke', freshId, '--yes']);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal((await cli.run(['namespace', 'list'], { env: { SVC_TOKEN: fresh } })).code, 2);
  assert.match((await cli.run(['token', 'list'])).stdout, new RegExp(`${freshId}.*revoked`));
  assert.equal((await cli.run(['token', 'revoke', MISSING, '-y'])).code, 4);
  assert.equal((await cli.run(['token', 'rotate', MISSING])).code, 4);
});
