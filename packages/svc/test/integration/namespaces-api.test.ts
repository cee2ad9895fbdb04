import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import type { Problem } from './resources-support.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});


const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

test('POST /namespaces creates, GET lists and reads by id, duplicates are 409', async () => {
  const created = await server.request<Record<string, unknown>>('POST', '/namespaces', { body: { name: 'team-a' } });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'id', 'name', 'updated_at']);
  assert.equal(created.body.name, 'team-a');
  assert.equal(created.body.updated_at, null);
  assert.match(String(created.body.created_at), RFC3339);
  assert.match(String(created.body.id), /^[0-9a-f-]{36}$/);

  const byId = await server.request('GET', `/namespaces/${String(created.body.id)}`);
  assert.equal(byId.status, 200);
  assert.deepEqual(byId.body, created.body);

  const list = await server.request<Array<{ name: string }>>('GET', '/namespaces');
  assert.equal(list.status, 200);
  assert.ok(list.body.some((ns) => ns.name === 'team-a'));

  const duplicate = await server.request<Problem>('POST', '/namespaces', { body: { name: 'team-a' } });
  assert.equal(duplicate.status, 409);
  assert.match(duplicate.headers.get('content-type') ?? '', /application\/problem\+json/);
  assert.deepEqual(duplicate.body.violations, []);

  const missing = await server.request<Problem>('GET', '/namespaces/00000000-0000-0000-0000-000000000000');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.status, 404);
});

test('namespace violation codes', async () => {
  const cases: Array<[string, string[]]> = [
    ['a', ['namespace.name.length']],
    ['a'.repeat(64), ['namespace.name.length']],
    ['Team', ['namespace.name.format']],
    ['-ab', ['namespace.name.format']],
    ['ab-', ['namespace.name.format']],
    ['a_b', ['namespace.name.format']],
    ['', ['namespace.name.format', 'namespace.name.length']],
  ];
  for (const [name, codes] of cases) {
    const response = await server.request<Problem>('POST', '/namespaces', { body: { name } });
    assert.equal(response.status, 422, name);
    assert.equal(response.body.title, 'Validation failed');
    assert.deepEqual(response.body.violations.map((v) => v.code).sort(), codes, name);
    assert.equal(response.body.detail, response.body.violations.map((v) => `${v.property_path}: ${v.message}`).join('\n'));
    assert.ok(response.body.violations.every((v) => v.property_path === 'name'));
  }
});

test('bad namespace bodies are 4xx and create nothing', async () => {
  const before = (await server.request<unknown[]>('GET', '/namespaces')).body.length;
  const bodies: unknown[] = [
    '{"name":',
    '[]',
    '"team"',
    'null',
    {},
    { name: 42 },
    { name: null },
    { name: ['x'] },
    { name: 'ok-name', extra: true },
    { name: 'x'.repeat(100_000) },
  ];
  for (const body of bodies) {
    const response = await server.request('POST', '/namespaces', { body });
    assert.ok(response.status >= 400 && response.status < 500, `${JSON.stringify(body).slice(0, 60)} -> ${response.status}`);
  }
  const huge = await server.request('POST', '/namespaces', { body: { name: 'x'.repeat(200_000) } });
  assert.equal(huge.status, 413);
  const noBody = await server.request('POST', '/namespaces');
  assert.equal(noBody.status, 400);
  const textBody = await server.request('POST', '/namespaces', { body: 'name=x', headers: { 'content-type': 'text/plain' } });
  assert.ok(textBody.status >= 400 && textBody.status < 500);
  const longId = await server.request('GET', `/namespaces/${'a'.repeat(150)}`);
  assert.ok(longId.status === 400 || longId.status === 404, String(longId.status));
  assert.equal((await server.request<unknown[]>('GET', '/namespaces')).body.length, before);
});
