// The registry password of a deployment is sealed at rest (SecretBox, associated data `registry:<id>`): the raw
// SQLite file never holds it in clear, the API resource never shows it (nor its sealed form), and the runtime still
// receives it in clear when the scheduler resolves the instance. A sealed value moved to another row does not open;
// a row from before sealing (password in clear) is still read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import type { InstanceSpec, ObservedInstance } from '../../src/runtime/runtime.js';
import { ResolveError, resolveInstanceSpec } from '../../src/scheduler/instance-spec.js';
import { createScheduler } from '../../src/scheduler/loop.js';
import { migrate, openDatabase } from '../../src/store/db.js';
import { applyDeployment, getDeployment, toDeploymentResource } from '../../src/store/deployments.js';
import { FakeRuntime } from '../support/fake-runtime.js';
import { testSpec } from './scheduler-support.js';

const PASSWORD = `s5t-registry-pw-${randomBytes(6).toString('hex')}`;

class RecordingRuntime extends FakeRuntime {
  readonly specs: InstanceSpec[] = [];
  override create(spec: InstanceSpec): Promise<ObservedInstance> {
    this.specs.push(spec);
    return super.create(spec);
  }
}

function withDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-s5t-regpw-'));
  return run(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

const authSpec = (name: string) =>
  testSpec('s5t-regpw', { name, config: { image_pull_policy: 'IfNotPresent', registry_auth: { username: 'robot', password: PASSWORD, server_address: 'registry.s5t.test' } } });

test('sealed at rest (raw file after a WAL checkpoint), never in the resource, in clear for the runtime', () =>
  withDir(async (dir) => {
    const dbPath = join(dir, 'svc.db');
    const db = openDatabase(dbPath);
    migrate(db);
    const box = createSecretBox(randomBytes(32));
    const runtime = new RecordingRuntime();
    const scheduler = createScheduler({ db, secretBox: box, runtimes: [runtime], intervalMs: 60_000, dataDir: join(dir, 'data') });
    try {
      const record = applyDeployment(db, authSpec('private'), false, new Date(), box);
      assert.equal(record.spec.config.registry_auth?.password, undefined, 'the record read back holds no clear password');
      assert.ok(record.spec.config.registry_auth?.password_sealed);

      const shown = JSON.stringify(toDeploymentResource(record, []));
      assert.ok(!shown.includes(PASSWORD) && !shown.includes('password'), shown);
      assert.match(shown, /"username":"robot"/);

      scheduler.start();
      await scheduler.reconcileNow();
      await scheduler.settled();
      assert.equal(runtime.specs.length, 1);
      assert.deepEqual(runtime.specs[0]?.registryAuth, { username: 'robot', password: PASSWORD, serveraddress: 'registry.s5t.test' });
      await scheduler.reconcileNow();
      assert.equal(getDeployment(db, record.id)?.status, 'running');

      db.pragma('wal_checkpoint(TRUNCATE)');
      const files = [dbPath, `${dbPath}-wal`].filter((file) => existsSync(file));
      const bytes = Buffer.concat(files.map((file) => readFileSync(file)));
      assert.ok(bytes.includes(Buffer.from('registry.s5t.test')), 'the spec is in the file read');
      assert.equal(bytes.includes(Buffer.from(PASSWORD)), false, 'the password is not stored in clear');
    } finally {
      await scheduler.stop();
      db.close();
    }
  }));

test('a password cannot be stored without a box; a sealed value opens only on its own row; a clear legacy row is read', () =>
  withDir(async (dir) => {
    const db = openDatabase(join(dir, 'svc.db'));
    migrate(db);
    const box = createSecretBox(randomBytes(32));
    const ctx = { db, secretBox: box, dataDir: join(dir, 'data') };
    try {
      assert.throws(() => applyDeployment(db, authSpec('no-box'), false), /sealed/);
      assert.equal(db.prepare<[], { n: number }>('SELECT count(*) AS n FROM deployments').get()?.n, 0, 'nothing stored');

      const first = applyDeployment(db, authSpec('first'), false, new Date(), box);
      const second = applyDeployment(db, authSpec('second'), false, new Date(), box);
      assert.notEqual(first.spec.config.registry_auth?.password_sealed, second.spec.config.registry_auth?.password_sealed);
      assert.equal(resolveInstanceSpec(ctx, first.id, first.spec, 'h').registryAuth?.password, PASSWORD);
      // first's ciphertext on second's row (a copied column): refused, as a host error that is retried.
      assert.throws(
        () => resolveInstanceSpec(ctx, second.id, first.spec, 'h'),
        (error: unknown) => error instanceof ResolveError && error.status === 'error' && !error.message.includes(PASSWORD),
      );
      // Another key (SVC_SECRET_KEY changed): refused the same way.
      const otherKey = { ...ctx, secretBox: createSecretBox(randomBytes(32)) };
      assert.throws(() => resolveInstanceSpec(otherKey, first.id, first.spec, 'h'), ResolveError);

      // A row stored before sealing existed (clear password in the JSON) still resolves.
      const legacy = authSpec('legacy');
      db.prepare('UPDATE deployments SET spec = ? WHERE id = ?').run(JSON.stringify(legacy), second.id);
      const reread = getDeployment(db, second.id);
      assert.ok(reread !== null);
      assert.equal(resolveInstanceSpec(ctx, second.id, reread.spec, 'h').registryAuth?.password, PASSWORD);
      assert.ok(!JSON.stringify(toDeploymentResource(reread, [])).includes(PASSWORD));
    } finally {
      db.close();
    }
  }));
