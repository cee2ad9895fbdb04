import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { REPO_ROOT, runCli, sha256, tempDir } from './cli-harness.js';

describe('svc-proxy CLI', () => {
  const temp = tempDir('cli');
  after(() => temp.cleanup());

  test('validate exits 0 on the shipped example', async () => {
    const result = await runCli(['validate', '--config', join(REPO_ROOT, 'examples/proxy/config.yaml')]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /3 entrypoints, 0 error\(s\)/);
  });

  test('validate exits 1 and prints file:line:column for schema errors', async () => {
    const file = join(temp.dir, 'bad.yaml');
    writeFileSync(file, 'api:\n  enabled: true\n  users: []\n  listen: x\n');
    const result = await runCli(['validate', '--config', file]);
    assert.equal(result.code, 1);
    assert.ok(result.stdout.includes(`E001 (global): ${file}:4:3: api.listen: unknown key "listen"`), result.stdout);
  });

  test('validate exits 1 when a routes entry is an error, 0 when only warnings; CONFIG_PATH is honoured, --config wins', async () => {
    const config = join(temp.dir, 'config.yaml');
    writeFileSync(config, 'proxy: { http: { listen_address: "127.0.0.1:18080" } }\nproviders: { config: { enabled: true, path: ./routes.yaml } }\n');
    writeFileSync(join(temp.dir, 'routes.yaml'), 'entrypoints:\n  - { name: a, protocol: Http, backends: [], config: {} }\n');
    const failing = await runCli(['validate'], { CONFIG_PATH: config });
    assert.equal(failing.code, 1);
    assert.match(failing.stdout, /error E007 http_a: .*routes\.yaml:2:42: entrypoints\[0\]\.backends: needs at least one backend/);
    writeFileSync(join(temp.dir, 'routes.yaml'), 'entrypoints:\n  - { name: a, protocol: Http, backends: [ { address: h, port: 1 } ], config: { tls: true } }\n');
    const warning = await runCli(['validate'], { CONFIG_PATH: config });
    assert.equal(warning.code, 0, warning.stdout);
    assert.match(warning.stdout, /warn {2}W006 http_a/);
    const flagWins = await runCli(['validate', '--config', join(temp.dir, 'missing.yaml')], { CONFIG_PATH: config });
    assert.equal(flagWins.code, 1);
    assert.match(flagWins.stdout, /missing\.yaml: cannot read the configuration file \(ENOENT\)/);
  });

  test('explain prints a known code and exits 0; an unknown code exits 2 listing the known codes on stderr', async () => {
    const known = await runCli(['explain', 'W015']);
    assert.equal(known.code, 0);
    assert.match(known.stdout, /^W015 \(warn\): ACME enabled but no entrypoint declares tls=true/);
    for (const part of ['Cause:', 'Effect:', 'Fix:']) assert.ok(known.stdout.includes(part));
    const unknown = await runCli(['explain', 'Z999']);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stdout, '');
    assert.match(unknown.stderr, /unknown diagnostic code "Z999"/);
    assert.match(unknown.stderr, /W001[\s\S]*W018/);
  });

  test('serve refuses to start with the API enabled and no users', async () => {
    const file = join(temp.dir, 'nousers.yaml');
    writeFileSync(file, 'api: { enabled: true, users: [] }\n');
    const result = await runCli(['serve', '--config', file]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /E002 .*api\.users is empty/);
  });

  test('serve refuses a config with a wrong type', async () => {
    const file = join(temp.dir, 'wrongtype.yaml');
    writeFileSync(file, `api: { enabled: true, users: [ { name: a, hash: ${sha256('x')}, role: superuser } ] }\n`);
    const result = await runCli(['serve', '--config', file]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /wrongtype\.yaml:1:\d+: api\.users\[0\]\.role: must be one of admin, read-only/);
  });

  test('--help, --version and unknown commands', async () => {
    const help = await runCli(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /serve[\s\S]*validate[\s\S]*explain/);
    const version = await runCli(['--version']);
    assert.match(version.stdout, /^svc-proxy \d+\.\d+\.\d+\n$/);
    const unknown = await runCli(['frobnicate']);
    assert.equal(unknown.code, 2);
  });
});
