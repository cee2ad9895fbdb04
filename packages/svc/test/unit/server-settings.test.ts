// Start-up settings and log levels: pure over a plain env object (config file read from a temp dir).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSettings, StartupError } from '../../src/server/settings.js';
import { parseLogDirectives, resolveLogLevel } from '../../src/server/log-level.js';
import { redactUrl } from '../../src/server/app.js';

const KEY = Buffer.alloc(32, 7).toString('base64');

function withConfigDir(toml: string | null, body: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'svc-settings-'));
  try {
    if (toml !== null) writeFileSync(join(dir, 'config.toml'), toml);
    body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function startupMessage(env: NodeJS.ProcessEnv, options = {}): string {
  try {
    resolveSettings(env, options);
  } catch (error) {
    assert.ok(error instanceof StartupError, String(error));
    return error.message;
  }
  assert.fail('expected a StartupError');
}

test('SVC_SECRET_KEY is required and must be 32 bytes of base64; the message names the variable', () => {
  withConfigDir(null, (dir) => {
    assert.match(startupMessage({ SVC_CONFIG_DIR: dir }), /SVC_SECRET_KEY/);
    assert.match(startupMessage({ SVC_CONFIG_DIR: dir, SVC_SECRET_KEY: '' }), /SVC_SECRET_KEY/);
    assert.match(startupMessage({ SVC_CONFIG_DIR: dir, SVC_SECRET_KEY: Buffer.alloc(16).toString('base64') }), /SVC_SECRET_KEY.*32 bytes/);
    assert.match(startupMessage({ SVC_CONFIG_DIR: dir, SVC_SECRET_KEY: 'not base64 !!' }), /SVC_SECRET_KEY/);
    // Checked first: a bad key is reported even when the config file is also broken.
    writeFileSync(join(dir, 'config.toml'), 'this is = = not toml');
    assert.match(startupMessage({ SVC_CONFIG_DIR: dir }), /SVC_SECRET_KEY/);
  });
});

test('defaults: 127.0.0.1:3030, ./svc.db, pool 5, interval 10, info', () => {
  withConfigDir(null, (dir) => {
    const settings = resolveSettings({ SVC_CONFIG_DIR: dir, SVC_SECRET_KEY: KEY });
    assert.equal(settings.host, '127.0.0.1');
    assert.equal(settings.port, 3030);
    assert.equal(settings.databasePath, join(process.cwd(), 'svc.db'));
    assert.equal(settings.poolSize, 5);
    assert.equal(settings.config.scheduler.interval, 10);
    assert.equal(settings.logLevel, 'info');
    assert.equal(settings.adminPassword, null);
    assert.equal(settings.secretKey.length, 32);
  });
});

test('the current context gives host and port; --context and --config choose others', () => {
  const toml = `
[contexts.a]
host = "127.0.0.2"
[contexts.a.api]
port = 4000
[contexts.b]
current = true
host = "0.0.0.0"
[contexts.b.api]
port = 4001
[scheduler]
interval = 3
`;
  withConfigDir(toml, (dir) => {
    const current = resolveSettings({ SVC_CONFIG_DIR: dir, SVC_SECRET_KEY: KEY });
    assert.deepEqual([current.host, current.port, current.config.scheduler.interval], ['0.0.0.0', 4001, 3]);
    const chosen = resolveSettings({ SVC_CONFIG_DIR: dir, SVC_SECRET_KEY: KEY }, { context: 'a' });
    assert.deepEqual([chosen.host, chosen.port], ['127.0.0.2', 4000]);
    assert.match(startupMessage({ SVC_CONFIG_DIR: dir, SVC_SECRET_KEY: KEY }, { context: 'zzz' }), /context 'zzz'/);
    const viaFile = resolveSettings({ SVC_CONFIG_FILE: join(dir, 'config.toml'), SVC_SECRET_KEY: KEY });
    assert.equal(viaFile.port, 4001);
    const flagWins = resolveSettings({ SVC_CONFIG_FILE: '/nonexistent/x.toml', SVC_SECRET_KEY: KEY }, { configPath: join(dir, 'config.toml') });
    assert.equal(flagWins.port, 4001);
  });
});

test('environment overrides and their validation name the variable', () => {
  withConfigDir('[scheduler]\ninterval = 30\n', (dir) => {
    const base = { SVC_CONFIG_DIR: dir, SVC_SECRET_KEY: KEY };
    const settings = resolveSettings({ ...base, SVC_SCHEDULER_INTERVAL: '2', SVC_DB_POOL_SIZE: '12', SVC_DATABASE_PATH: '/tmp/x/y.db', SVC_ADMIN_PASSWORD: 'long-enough' });
    assert.deepEqual(
      [settings.config.scheduler.interval, settings.poolSize, settings.databasePath, settings.adminPassword],
      [2, 12, '/tmp/x/y.db', 'long-enough'],
    );
    assert.match(startupMessage({ ...base, SVC_SCHEDULER_INTERVAL: '0' }), /SVC_SCHEDULER_INTERVAL/);
    assert.match(startupMessage({ ...base, SVC_SCHEDULER_INTERVAL: 'ten' }), /SVC_SCHEDULER_INTERVAL/);
    assert.match(startupMessage({ ...base, SVC_DB_POOL_SIZE: '0' }), /SVC_DB_POOL_SIZE/);
    assert.match(startupMessage({ ...base, SVC_DB_POOL_SIZE: '65' }), /SVC_DB_POOL_SIZE/);
    assert.match(startupMessage({ ...base, SVC_DB_POOL_SIZE: '-1' }), /SVC_DB_POOL_SIZE/);
    assert.match(startupMessage({ ...base, SVC_ADMIN_PASSWORD: 'short' }), /SVC_ADMIN_PASSWORD/);
    assert.match(startupMessage({ ...base, SVC_LOG: 'loud' }), /SVC_LOG/);
    assert.match(startupMessage({ ...base, RUST_LOG: 'svc=loud' }), /RUST_LOG/);
  });
  withConfigDir('[contexts.x]\ncurrent = true\n[contexts.x.api]\nport = 70000\n', (dir) => {
    assert.match(startupMessage({ SVC_CONFIG_DIR: dir, SVC_SECRET_KEY: KEY }), /port/);
  });
});

test('log level: SVC_LOG wins over RUST_LOG; RUST_LOG directives map sensibly', () => {
  assert.equal(resolveLogLevel({}), 'info');
  assert.equal(resolveLogLevel({ RUST_LOG: 'debug' }), 'debug');
  assert.equal(resolveLogLevel({ RUST_LOG: 'svc=debug,warn' }), 'debug');
  assert.equal(resolveLogLevel({ RUST_LOG: 'warn,svc=trace' }), 'trace');
  assert.equal(resolveLogLevel({ RUST_LOG: 'hyper=debug' }), 'info');
  assert.equal(resolveLogLevel({ RUST_LOG: 'off' }), 'silent');
  assert.equal(resolveLogLevel({ RUST_LOG: 'WARN' }), 'warn');
  assert.equal(resolveLogLevel({ SVC_LOG: 'error', RUST_LOG: 'trace' }), 'error');
  assert.equal(resolveLogLevel({ SVC_LOG: '', RUST_LOG: 'trace' }), 'trace');
  assert.equal(parseLogDirectives('svc::api=debug', 'X'), 'debug');
  assert.equal(parseLogDirectives(' , ', 'X'), undefined);
  assert.throws(() => parseLogDirectives('chatty', 'RUST_LOG'), /RUST_LOG/);
});

test('credential query values are masked in logged URLs', () => {
  assert.equal(redactUrl('/deployments/1/logs?follow=true&ticket=svc_st_abc'), '/deployments/1/logs?follow=true&ticket=[REDACTED]');
  assert.equal(redactUrl('/x?token=svc_pat_1&a=b'), '/x?token=[REDACTED]&a=b');
  assert.equal(redactUrl('/healthz'), '/healthz');
});
