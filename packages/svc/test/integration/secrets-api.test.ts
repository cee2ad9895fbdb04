import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestServer, type ApiResponse, type TestServer } from '../support/server.js';
import { openDatabase } from '../../src/store/db.js';
import { createSecretBox, parseSecretKey } from '../../src/crypto/secret-box.js';
import { decryptSecretValue } from '../../src/store/secrets.js';
import { insertDeployment, type Problem } from './resources-support.js';

let server: TestServer;
const responses: string[] = [];

async function call<T = unknown>(method: string, path: string, options: Parameters<TestServer['request']>[2] = {}): Promise<ApiResponse<T>> {
  const response = await server.request<T>(method, path, options);
  responses.push(`${[...response.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n${response.text}`);
  return response;
}

before(async () => {
  // debug: the most the server would ever log about a request.
  server = await startTestServer({ env: { SVC_LOG: 'debug' } });
  for (const name of ['prod', 'staging']) assert.equal((await call('POST', '/namespaces', { body: { name } })).status, 201);
});
after(async () => {
  await server?.close();
});

const SENTINEL = `sentinel-${randomUUID()}`;

test('create answers metadata only; get, list with both filter forms; 404 namespace; 409 duplicate', async () => {
  const created = await call<Record<string, unknown>>('POST', '/secrets', { body: { namespace: 'prod', name: 'DB_Pass', value: SENTINEL } });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'id', 'name', 'namespace']);
  assert.equal(created.body.namespace, 'prod');
  assert.equal(created.body.name, 'DB_Pass');

  const got = await call<Record<string, unknown>>('GET', `/secrets/${String(created.body.id)}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.body, { ...created.body, updated_at: null });

  await call('POST', '/secrets', { body: { namespace: 'staging', name: 'other', value: SENTINEL } });
  const single = await call<Array<{ namespace: string }>>('GET', '/secrets?namespace=prod');
  assert.deepEqual(single.body.map((s) => s.namespace), ['prod']);
  const repeated = await call<Array<{ namespace: string }>>('GET', '/secrets?namespace[]=prod&namespace[]=staging');
  assert.deepEqual(repeated.body.map((s) => s.namespace).sort(), ['prod', 'staging']);
  const all = await call<Array<Record<string, unknown>>>('GET', '/secrets');
  assert.ok(all.body.length >= 2);
  for (const secret of all.body) assert.deepEqual(Object.keys(secret).sort(), ['created_at', 'id', 'name', 'namespace', 'updated_at']);

  const noNamespace = await call<Problem>('POST', '/secrets', { body: { namespace: 'nowhere', name: 'x1', value: SENTINEL } });
  assert.equal(noNamespace.status, 404);
  assert.equal((await call<unknown[]>('GET', '/namespaces')).body.length, 2, 'the namespace was not created');

  const duplicate = await call<Problem>('POST', '/secrets', { body: { namespace: 'prod', name: 'DB_Pass', value: 'another' } });
  assert.equal(duplicate.status, 409);

  assert.equal((await call('GET', `/secrets/${randomUUID()}`)).status, 404);
  assert.equal((await call('DELETE', `/secrets/${randomUUID()}`)).status, 404);
});

test('secret violation codes, all reported at once', async () => {
  const cases: Array<[Record<string, string>, string[]]> = [
    [{ namespace: 'p', name: 'ok-name', value: 'v' }, ['secret.namespace.length']],
    [{ namespace: 'Prod', name: 'ok-name', value: 'v' }, ['secret.namespace.format']],
    [{ namespace: 'prod', name: 'x', value: 'v' }, ['secret.name.length']],
    [{ namespace: 'prod', name: 'x'.repeat(254), value: 'v' }, ['secret.name.length']],
    [{ namespace: 'prod', name: '_bad', value: 'v' }, ['secret.name.format']],
    [{ namespace: 'prod', name: 'ok-name', value: '' }, ['secret.value.length']],
    [{ namespace: 'prod', name: 'ok-name', value: 'v'.repeat(1024 * 1024 + 1) }, ['secret.value.length']],
    [{ namespace: 'P', name: '-', value: '' }, ['secret.name.format', 'secret.name.length', 'secret.namespace.format', 'secret.namespace.length', 'secret.value.length']],
  ];
  for (const [body, codes] of cases) {
    const response = await call<Problem>('POST', '/secrets', { body });
    assert.equal(response.status, 422, JSON.stringify(body).slice(0, 80));
    assert.deepEqual(response.body.violations.map((v) => v.code).sort(), codes);
  }
  const max = await call('POST', '/secrets', { body: { namespace: 'prod', name: 'big', value: 'v'.repeat(1024 * 1024) } });
  assert.equal(max.status, 201, 'exactly 1 MiB is allowed');
});

test('bad secret bodies are 4xx, never 500', async () => {
  const bodies: unknown[] = [
    `{"namespace":"prod","name":"leak1","value":"${SENTINEL}`,
    `{"namespace":"prod","name":"leak1","value":"${SENTINEL}"}}`,
    { namespace: 'prod', name: 'leak2', value: SENTINEL, extra: 1 },
    { namespace: 'prod', name: 'leak3', value: 42 },
    { namespace: 'prod', name: 'leak3', value: { secret: SENTINEL } },
    { namespace: 'prod', name: 'leak3' },
    { namespace: 'prod', value: SENTINEL },
    { namespace: ['prod'], name: 'leak4', value: SENTINEL },
    '{"namespace":"prod","name":"leak5","value":"\\ud800"}',
    [SENTINEL],
    { namespace: 'prod', name: 'n'.repeat(500_000), value: SENTINEL },
  ];
  for (const body of bodies) {
    const response = await call('POST', '/secrets', { body });
    assert.ok(response.status >= 400 && response.status < 500, `${JSON.stringify(body).slice(0, 80)} -> ${response.status} ${response.text.slice(0, 200)}`);
  }
  const oversized = await call('POST', '/secrets', { body: { namespace: 'prod', name: 'huge', value: 'v'.repeat(3 * 1024 * 1024) } });
  assert.equal(oversized.status, 413);
  assert.equal((await call('DELETE', `/secrets/${randomUUID()}?force=maybe`)).status, 400);
  const names = (await call<Array<{ name: string }>>('GET', '/secrets?namespace=prod')).body.map((s) => s.name);
  assert.ok(!names.some((name) => name.startsWith('leak')), names.join(','));
});

test('delete of a referenced secret: 409 legacy body listing active referrers, then force', async () => {
  const created = await call<{ id: string }>('POST', '/secrets', { body: { namespace: 'prod', name: 'api-key', value: SENTINEL } });
  assert.equal(created.status, 201);
  insertDeployment(server.dbPath, 'prod', 'web', 'running', { environment: { KEY: { secretRef: 'api-key' } } });
  insertDeployment(server.dbPath, 'prod', 'worker', 'pending', { environment: { K: { secretRef: 'api-key' } } });
  insertDeployment(server.dbPath, 'prod', 'old', 'deleted', { environment: { K: { secretRef: 'api-key' } } });
  insertDeployment(server.dbPath, 'staging', 'web', 'running', { environment: { KEY: { secretRef: 'api-key' } } });

  const refused = await call<{ error: string; deployments: string[]; hint: string }>('DELETE', `/secrets/${created.body.id}`);
  assert.equal(refused.status, 409);
  assert.match(refused.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(refused.body).sort(), ['deployments', 'error', 'hint']);
  assert.deepEqual(refused.body.deployments, ['prod/web', 'prod/worker']);
  assert.match(refused.body.error, /secret 'api-key'/);
  assert.match(refused.body.hint, /force=true/);
  assert.equal((await call('GET', `/secrets/${created.body.id}`)).status, 200, 'still there');

  assert.equal((await call('DELETE', `/secrets/${created.body.id}?force=false`)).status, 409);
  assert.equal((await call('DELETE', `/secrets/${created.body.id}?force=true`)).status, 204);
  assert.equal((await call('GET', `/secrets/${created.body.id}`)).status, 404);

  const unreferenced = await call<{ id: string }>('POST', '/secrets', { body: { namespace: 'prod', name: 'free', value: 'x' } });
  assert.equal((await call('DELETE', `/secrets/${unreferenced.body.id}`)).status, 204);
});

test('a secret survives a restart and decrypts with the same key; the value never shows in responses or logs', async () => {
  const created = await call<{ id: string }>('POST', '/secrets', { body: { namespace: 'staging', name: 'persisted', value: `${SENTINEL}-é😀` } });
  assert.equal(created.status, 201);
  await server.restart();
  const got = await call<{ name: string }>('GET', `/secrets/${created.body.id}`);
  assert.equal(got.status, 200);
  assert.equal(got.body.name, 'persisted');

  const db = openDatabase(server.dbPath);
  try {
    const box = createSecretBox(parseSecretKey(server.env.SVC_SECRET_KEY));
    assert.equal(decryptSecretValue(db, box, 'staging', 'persisted'), `${SENTINEL}-é😀`);
    assert.equal(decryptSecretValue(db, box, 'staging', 'absent'), null);
    const raw = db.prepare('SELECT * FROM secrets').all();
    assert.ok(!JSON.stringify(raw).includes(SENTINEL), 'stored sealed');
  } finally {
    db.close();
  }

  for (const text of responses) assert.ok(!text.includes(SENTINEL), `a response carried the value:\n${text.slice(0, 300)}`);
  const logs = server.stdout() + server.stderr();
  assert.ok(logs.length > 0, 'debug logging produced output');
  assert.ok(!logs.includes(SENTINEL), 'the value appeared in the server logs');
});
