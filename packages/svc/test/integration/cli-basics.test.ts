// The built `svc` binary against a real server: global options, contexts, login/logout, tokens from env and
// auth.json, every exit code of the auth and network paths, node, completions, init and doctor.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startTestServer, type TestServer } from '../support/server.js';
import { ANSI, cliEnv, errorLine, SVC_BIN, type CliEnv } from './cli-helpers.js';

let server: TestServer;
let cli: CliEnv;

before(async () => {
  server = await startTestServer();
  cli = cliEnv(server.port);
});

after(async () => {
  cli?.close();
  await server?.close();
});

test('--version, --help, unknown command, missing argument', async () => {
  const version = await cli.run(['--version']);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^svc \d+\.\d+\.\d+\n$/);
  const help = await cli.run(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /deployment/);
  const sub = await cli.run(['token', 'create', '--help']);
  assert.match(sub.stdout, /--scope/);
  const unknown = await cli.run(['frobnicate']);
  assert.equal(unknown.code, 1);
  assert.equal(errorLine(unknown), "error: unknown command 'frobnicate'");
  const missing = await cli.run(['deployment', 'inspect']);
  assert.equal(missing.code, 1);
  assert.match(errorLine(missing), /needs ID/);
});

test('contexts: list, current-context, user-token, --context and unknown context', async () => {
  const list = await cli.run(['context']);
  assert.equal(list.code, 0);
  assert.match(list.stdout, /\*\s+test\s+http:\/\/127\.0\.0\.1:\d+/);
  assert.match(list.stdout, /down\s+http:\/\/127\.0\.0\.1:1/);
  assert.equal((await cli.run(['context', 'current-context'])).stdout, 'test\n');
  assert.equal((await cli.run(['--context', 'down', 'context', 'current-context'])).stdout, 'down\n');
  const none = await cli.run(['context', 'user-token']);
  assert.equal(none.code, 1);
  assert.match(errorLine(none), /no token for context 'test'/);
  assert.equal((await cli.run(['context', 'user-token'], { env: { SVC_TOKEN: 'svc_pat_x' } })).stdout, 'svc_pat_x\n');
  const unknown = await cli.run(['-c', 'nope', 'namespace', 'list']);
  assert.equal(unknown.code, 1);
  assert.match(errorLine(unknown), /context 'nope' is not defined/);
});

test('SVC_CONFIG_FILE selects another config file; --config wins over it', async () => {
  const other = join(cli.configDir, 'other.toml');
  writeFileSync(other, '[contexts.elsewhere]\ncurrent = true\nhost = "127.0.0.1"\n[contexts.elsewhere.api]\nport = 2\n');
  assert.equal((await cli.run(['context', 'current-context'], { env: { SVC_CONFIG_FILE: other } })).stdout, 'elsewhere\n');
  const viaEnv = await cli.run(['namespace', 'list'], { env: { SVC_CONFIG_FILE: other } });
  assert.equal(viaEnv.code, 3);
  assert.match(errorLine(viaEnv), /http:\/\/127\.0\.0\.1:2/);
  const flagWins = await cli.run(['--config', join(cli.configDir, 'config.toml'), 'context', 'current-context'], { env: { SVC_CONFIG_FILE: other } });
  assert.equal(flagWins.stdout, 'test\n');
  writeFileSync(join(cli.configDir, 'broken.toml'), '[contexts.x]\nport = "nope"\n');
  const broken = await cli.run(['--config', join(cli.configDir, 'broken.toml'), 'namespace', 'list']);
  assert.equal(broken.code, 1);
  assert.match(errorLine(broken), /broken\.toml/);
});

test('unreachable server: exit 3 and one line naming the address', async () => {
  const result = await cli.run(['-c', 'down', 'namespace', 'list']);
  assert.equal(result.code, 3);
  assert.equal(errorLine(result), 'error: cannot reach the API at http://127.0.0.1:1: ECONNREFUSED');
  const config = await cli.run(['--config', join(cli.configDir, 'missing.toml'), 'node', 'get']);
  // A missing config file means the defaults: 127.0.0.1:3030 (nothing listens there in tests).
  assert.ok(config.code === 3 || config.code === 2, config.stderr);
});

test('login saves a 0600 token for the current context; logout revokes it and removes it', async () => {
  const bad = await cli.run(['login', '-u', 'admin', '-p', 'wrong-password']);
  assert.equal(bad.code, 2);
  assert.equal(errorLine(bad), "error: not authorized to act on user 'admin'");

  const login = await cli.run(['login', '-u', 'admin', '-p', server.adminPassword]);
  assert.equal(login.code, 0, login.stderr);
  const authPath = join(cli.configDir, 'auth.json');
  assert.equal(statSync(authPath).mode & 0o777, 0o600);
  const token = JSON.parse(readFileSync(authPath, 'utf8')).contexts.test.token as string;
  assert.match(token, /^svc_pat_/);
  assert.equal((await cli.run(['context', 'user-token'])).stdout, `${token}\n`);

  const users = await cli.run(['user', 'list', '-o', 'json']);
  assert.equal(users.code, 0, users.stderr);
  assert.ok((JSON.parse(users.stdout) as { username: string }[]).some((u) => u.username === 'admin'));

  // SVC_TOKEN (non-empty) wins over auth.json; an empty one does not.
  const wrongEnv = await cli.run(['user', 'list'], { env: { SVC_TOKEN: 'svc_pat_invalid' } });
  assert.equal(wrongEnv.code, 2);
  assert.equal(errorLine(wrongEnv), 'error: cannot list users: not authorized');
  assert.equal((await cli.run(['user', 'list'], { env: { SVC_TOKEN: '' } })).code, 0);

  const logout = await cli.run(['logout']);
  assert.equal(logout.code, 0);
  assert.equal(JSON.parse(readFileSync(authPath, 'utf8')).contexts.test, undefined);
  // The session itself is revoked on the server.
  assert.equal((await server.request('GET', '/users', { token })).status, 401);
  // Best effort: logout with nothing stored, or against a dead server, still succeeds.
  assert.equal((await cli.run(['logout'])).code, 0);
});

test('401 without a token and 403 with a too-narrow token: exit 2 with the spec lines', async () => {
  const anonymous = await cli.run(['namespace', 'list']);
  assert.equal(anonymous.code, 2);
  assert.equal(errorLine(anonymous), 'error: cannot list namespaces: not authorized');
  const narrow = await server.createToken({ scopes: ['secrets:read'], namespaces: ['team-a'] });
  const forbidden = await cli.run(['namespace', 'create', 'team-b'], { env: { SVC_TOKEN: narrow.token } });
  assert.equal(forbidden.code, 2);
  assert.equal(errorLine(forbidden), "error: not authorized to act on namespace 'team-b'");
  const listForbidden = await cli.run(['secret', 'list', '-n', 'team-b'], { env: { SVC_TOKEN: narrow.token } });
  // A namespace outside the token's list is either refused or filtered to nothing; never someone else's data.
  if (listForbidden.code !== 0) {
    assert.equal(listForbidden.code, 2);
    assert.equal(errorLine(listForbidden), "error: cannot list secrets in namespace 'team-b': not authorized");
  } else assert.doesNotMatch(listForbidden.stdout, /team-b/);
});

test('node get: table and JSON; piped output carries no ANSI escapes', async () => {
  const env = { SVC_TOKEN: server.adminToken };
  const table = await cli.run(['node', 'get'], { env });
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /Hostname/i);
  assert.doesNotMatch(table.stdout + table.stderr, ANSI);
  const parsed = JSON.parse((await cli.run(['node', 'get', '-o', 'json'], { env })).stdout) as Record<string, unknown>;
  assert.equal(typeof parsed.cpu_count, 'number');
});

test('completions: bash script is valid bash; fish and zsh are printed; unknown shell is an error', async () => {
  const bash = await cli.run(['completions', 'bash']);
  assert.equal(bash.code, 0);
  execFileSync('bash', ['-n'], { input: bash.stdout });
  assert.match((await cli.run(['completions', 'fish'])).stdout, /complete -c svc/);
  assert.match((await cli.run(['completions', 'zsh'])).stdout, /#compdef svc/);
  const bad = await cli.run(['completions', 'powershell']);
  assert.equal(bad.code, 1);
  assert.match(errorLine(bad), /unknown shell 'powershell'/);
});

test('init without a terminal: docker + 3030, 0600 key, export hint; refuses to overwrite; --force warns', async () => {
  const dir = join(cli.configDir, 'fresh');
  const env = { SVC_CONFIG_DIR: dir };
  const first = await cli.run(['init'], { env });
  assert.equal(first.code, 0, first.stderr);
  const toml = readFileSync(join(dir, 'config.toml'), 'utf8');
  assert.match(toml, /port = 3030/);
  assert.match(toml, /enabled = \["docker"\]/);
  const keyPath = join(dir, 'secret.key');
  assert.equal(statSync(keyPath).mode & 0o777, 0o600);
  const key = readFileSync(keyPath, 'utf8').trim();
  assert.equal(Buffer.from(key, 'base64').length, 32);
  assert.ok(first.stdout.includes(`export SVC_SECRET_KEY=$(cat ${keyPath})`));
  assert.ok(!existsSync(join(dir, 'svc.db')), 'init must not create a database');

  const again = await cli.run(['init'], { env });
  assert.equal(again.code, 1);
  assert.match(errorLine(again), /already exist.*--force/);
  assert.equal(readFileSync(keyPath, 'utf8').trim(), key);

  const forced = await cli.run(['init', '--force', '--runtime', 'both', '--port', '4040'], { env });
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stderr, /warning: .*secrets stored with the previous key can no longer be decrypted/);
  assert.notEqual(readFileSync(keyPath, 'utf8').trim(), key);
  const forcedToml = readFileSync(join(dir, 'config.toml'), 'utf8');
  assert.match(forcedToml, /port = 4040/);
  assert.match(forcedToml, /enabled = \["docker", "cloud-hypervisor"\]/);
  // Doctor checks ran as warnings only: exit 0 even though cloud-hypervisor is missing here.
  assert.match(forced.stdout, /cloud-hypervisor binary/);

  const badPort = await cli.run(['init', '--force', '--port', '70000'], { env });
  assert.equal(badPort.code, 1);
});

test('doctor: one line per check, non-zero when the key is missing, zero when all pass', async () => {
  const dir = join(cli.configDir, 'doctor');
  const env = { SVC_CONFIG_DIR: dir };
  assert.equal((await cli.run(['init', '--runtime', 'docker'], { env })).code, 0);
  const noKey = await cli.run(['doctor'], { env });
  assert.equal(noKey.code, 1);
  assert.match(noKey.stdout, /FAIL\s+secret key: SVC_SECRET_KEY is not set/);
  assert.match(noKey.stdout, /ok\s+docker socket/);
  const key = readFileSync(join(dir, 'secret.key'), 'utf8').trim();
  const ok = await cli.run(['doctor'], { env: { ...env, SVC_SECRET_KEY: key } });
  assert.equal(ok.code, 0, ok.stdout);
  const short = await cli.run(['doctor'], { env: { ...env, SVC_SECRET_KEY: Buffer.alloc(31).toString('base64') } });
  assert.equal(short.code, 1);
  assert.match(short.stdout, /got 31/);
  const deadDocker = await cli.run(['doctor'], { env: { ...env, SVC_SECRET_KEY: key, DOCKER_HOST: `unix://${join(dir, 'no.sock')}` } });
  assert.equal(deadDocker.code, 1);
  assert.match(deadDocker.stdout, /FAIL\s+docker socket/);
  // Micro-VM checks when that runtime is enabled: binary, /dev/kvm, firmware/kernel, virtiofsd (SVC_VIRTIOFSD).
  writeFileSync(join(dir, 'config.toml'), `[runtime]\nenabled = ["cloud-hypervisor"]\nfirmware_path = "${join(dir, 'fw.bin')}"\n`);
  const vm = await cli.run(['doctor'], { env: { ...env, SVC_SECRET_KEY: key, SVC_VIRTIOFSD: '/nonexistent/virtiofsd' } });
  assert.equal(vm.code, 1);
  for (const name of ['cloud-hypervisor binary', '/dev/kvm', 'firmware', 'kernel', 'virtiofsd']) assert.match(vm.stdout, new RegExp(`(ok|FAIL)\\s+${name.replace('/', '\\/')}:`));
  assert.match(vm.stdout, /SVC_VIRTIOFSD=\/nonexistent\/virtiofsd is not an executable/);
});

test('server start through the built binary serves the API and stops on SIGTERM with exit 0', async () => {
  const viaCli = await startTestServer({ entry: [SVC_BIN, 'server', 'start'] });
  try {
    const env = cliEnv(viaCli.port, viaCli.adminToken);
    try {
      const list = await env.run(['user', 'list', '-o', 'json']);
      assert.equal(list.code, 0, list.stderr);
      assert.ok((JSON.parse(list.stdout) as { username: string }[]).some((u) => u.username === 'admin'));
    } finally {
      env.close();
    }
    const stopped = await viaCli.stop();
    assert.equal(stopped.code, 0);
  } finally {
    await viaCli.close();
  }
});
