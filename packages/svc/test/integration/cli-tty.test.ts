// `svc` on a real pseudo-terminal (tmux): the interactive init, the token revoke confirmation, and colour
// only on a terminal without NO_COLOR.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../support/server.js';
import { cliEnv, Terminals, type CliEnv } from './cli-helpers.js';

let server: TestServer;
let cli: CliEnv;
let terminals: Terminals;

before(async () => {
  server = await startTestServer();
  cli = cliEnv(server.port, server.adminToken);
  terminals = new Terminals(cli.env);
});

after(async () => {
  terminals?.close();
  cli?.close();
  await server?.close();
});

const startInTerminal = (args: string[], env: Record<string, string>) => terminals.start(args, env);
const screen = (name: string, escapes = false) => terminals.screen(name, escapes);
const waitForScreen = (name: string, pattern: RegExp, timeoutMs?: number) => terminals.waitFor(name, pattern, timeoutMs);
const type = (name: string, text: string) => terminals.type(name, text);

test('init on a terminal prompts for runtime and port, re-asks on a bad answer', async () => {
  const dir = join(cli.configDir, 'tty-init');
  const name = startInTerminal(['init'], { SVC_CONFIG_DIR: dir });
  await waitForScreen(name, /Runtime \(docker, podman, cloud-hypervisor, firecracker, both\) \[docker\]:\s*$/m);
  type(name, 'kvm');
  await waitForScreen(name, /invalid answer, try again/);
  type(name, 'podman');
  await waitForScreen(name, /API port \[3030\]:\s*$/m);
  type(name, '4242');
  const done = await waitForScreen(name, /EXIT=\d+/);
  assert.match(done, /EXIT=0/);
  // Typed answers are echoed once (one readline dialogue, not one per question).
  assert.match(done, /^API port \[3030\]: 4242$/m);
  assert.match(done, /export SVC_SECRET_KEY=\$\(cat /);
  const toml = readFileSync(join(dir, 'config.toml'), 'utf8');
  assert.match(toml, /port = 4242/);
  assert.match(toml, /enabled = \["podman"\]/);
  assert.equal(statSync(join(dir, 'secret.key')).mode & 0o777, 0o600);
  // Podman is not installed here: the doctor line is a warning, not a failure of init.
  assert.match(done, /warn\s+podman binary/);
});

test('init on a terminal with --runtime and --port asks nothing', async () => {
  const dir = join(cli.configDir, 'tty-init-flags');
  const name = startInTerminal(['init', '--runtime', 'docker', '--port', '3131'], { SVC_CONFIG_DIR: dir });
  const done = await waitForScreen(name, /EXIT=\d+/);
  assert.match(done, /EXIT=0/);
  assert.doesNotMatch(done, /Runtime \(/);
  assert.match(readFileSync(join(dir, 'config.toml'), 'utf8'), /port = 3131/);
});

test('token revoke asks on a terminal: "n" keeps the token, "y" revokes it', async () => {
  const token = await server.createToken({ scopes: ['namespaces:read'], name: 'tty-token' });
  const works = async () => (await server.request('GET', '/namespaces', { token: token.token })).status;

  const no = startInTerminal(['token', 'revoke', token.id], {});
  await waitForScreen(no, /Revoke token 'tty-token' \(.+\)\? .*\[y\/N\]\s*$/m);
  type(no, 'n');
  const kept = await waitForScreen(no, /EXIT=\d+/);
  assert.match(kept, /aborted: nothing revoked/);
  assert.match(kept, /EXIT=1/);
  assert.equal(await works(), 200);

  const yes = startInTerminal(['token', 'revoke', token.id], {});
  await waitForScreen(yes, /\[y\/N\]\s*$/m);
  type(yes, 'y');
  const revoked = await waitForScreen(yes, /EXIT=\d+/);
  assert.match(revoked, /EXIT=0/);
  assert.equal(await works(), 401);
});

test('login on a terminal asks for what is missing; the password is not echoed', async () => {
  const dir = join(cli.configDir, 'tty-login');
  const env = { SVC_CONFIG_DIR: dir, SVC_TOKEN: '' };
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(cli.configDir, 'config.toml'), join(dir, 'config.toml'));
  const name = startInTerminal(['login'], env);
  await waitForScreen(name, /Username:\s*$/m);
  type(name, 'admin');
  await waitForScreen(name, /Password:\s*$/m);
  type(name, server.adminPassword);
  const done = await waitForScreen(name, /EXIT=\d+/);
  assert.match(done, /EXIT=0/);
  assert.ok(!done.includes(server.adminPassword), 'password echoed');
  const token = JSON.parse(readFileSync(join(dir, 'auth.json'), 'utf8')).contexts.test.token as string;
  assert.equal((await server.request('GET', '/users/me', { token })).status, 200);
});

test('colour on a terminal; none with NO_COLOR', async () => {
  await server.createToken({ scopes: ['namespaces:read'], name: 'colour-token' });
  const coloured = startInTerminal(['token', 'list'], {});
  await waitForScreen(coloured, /EXIT=0/);
  assert.match(screen(coloured, true), /\x1b\[32mactive/);
  const plain = startInTerminal(['token', 'list'], { NO_COLOR: '1' });
  await waitForScreen(plain, /EXIT=0/);
  assert.doesNotMatch(screen(plain, true).replace(/EXIT=0[\s\S]*/, ''), /\x1b\[3\dm/);
  // JSON is never coloured, even on a terminal.
  const json = startInTerminal(['token', 'list', '-o', 'json'], {});
  await waitForScreen(json, /EXIT=0/);
  assert.doesNotMatch(screen(json, true), /\x1b\[3\dm/);
});
