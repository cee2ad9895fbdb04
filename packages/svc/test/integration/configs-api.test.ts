import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../support/server.js';
import type { Problem } from './resources-support.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
  assert.equal((await server.request('POST', '/namespaces', { body: { name: 'prod' } })).status, 201);
});
after(async () => {
  await server?.close();
});

interface Config {
  id: string;
  name: string;
  namespace: string;
  data: string;
  labels?: string;
}

test('POST answers the full record; list entries omit labels; GET by id includes them; PUT replaces; DELETE', async () => {
  const created = await server.request<Config>('POST', '/configs', { body: { name: 'nginx.conf', namespace: 'prod', data: 'server {}', labels: 'tier=web' } });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.body).sort(), ['data', 'id', 'labels', 'name', 'namespace']);
  assert.deepEqual({ ...created.body, id: '' }, { id: '', name: 'nginx.conf', namespace: 'prod', data: 'server {}', labels: 'tier=web' });

  const noLabels = await server.request<Config>('POST', '/configs', { body: { name: 'app', namespace: 'prod', data: '{"a":1}' } });
  assert.equal(noLabels.status, 201);
  assert.equal(noLabels.body.labels, '');

  const list = await server.request<Config[]>('GET', '/configs');
  assert.equal(list.status, 200);
  for (const entry of list.body) assert.deepEqual(Object.keys(entry).sort(), ['data', 'id', 'name', 'namespace']);
  assert.deepEqual(list.body.map((c) => c.name), ['app', 'nginx.conf']);
  assert.equal((await server.request<Config[]>('GET', '/configs?namespace=prod')).body.length, 2);
  assert.equal((await server.request<Config[]>('GET', '/configs?namespace[]=other')).body.length, 0);

  const got = await server.request<Config>('GET', `/configs/${created.body.id}`);
  assert.deepEqual(got.body, created.body);

  const replaced = await server.request<Config>('PUT', `/configs/${created.body.id}`, { body: { name: 'nginx.json', data: '{"listen":80}', labels: '' } });
  assert.equal(replaced.status, 200);
  assert.deepEqual(replaced.body, { id: created.body.id, name: 'nginx.json', namespace: 'prod', data: '{"listen":80}', labels: '' });
  assert.deepEqual((await server.request<Config>('GET', `/configs/${created.body.id}`)).body, replaced.body);

  const clash = await server.request('PUT', `/configs/${created.body.id}`, { body: { name: 'app', data: '{}', labels: '' } });
  assert.equal(clash.status, 409);
  const unknown = await server.request('PUT', `/configs/${randomUUID()}`, { body: { name: 'x', data: '{}', labels: '' } });
  assert.equal(unknown.status, 404);
  const partial = await server.request('PUT', `/configs/${created.body.id}`, { body: { name: 'x', data: '{}' } });
  assert.equal(partial.status, 400, 'all of name, data, labels are required');
  const namespaceChange = await server.request('PUT', `/configs/${created.body.id}`, { body: { name: 'x', data: '{}', labels: '', namespace: 'other' } });
  assert.equal(namespaceChange.status, 400);

  assert.equal((await server.request('DELETE', `/configs/${created.body.id}`)).status, 204);
  assert.equal((await server.request('GET', `/configs/${created.body.id}`)).status, 404);
  assert.equal((await server.request('DELETE', `/configs/${created.body.id}`)).status, 404);
});

test('POST: 404 when the namespace does not exist, 409 on duplicate name', async () => {
  assert.equal((await server.request('POST', '/configs', { body: { name: 'c', namespace: 'nowhere', data: 'x' } })).status, 404);
  assert.equal((await server.request('POST', '/configs', { body: { name: 'dup', namespace: 'prod', data: 'x' } })).status, 201);
  assert.equal((await server.request('POST', '/configs', { body: { name: 'dup', namespace: 'prod', data: 'y' } })).status, 409);
});

test('config violation codes on POST and PUT', async () => {
  const post: Array<[Record<string, unknown>, string[]]> = [
    [{ name: 'c', namespace: 'p', data: 'x' }, ['config.namespace.length']],
    [{ name: 'c', namespace: 'Prod', data: 'x' }, ['config.namespace.format']],
    [{ name: '', namespace: 'prod', data: 'x' }, ['config.name.format', 'config.name.length']],
    [{ name: `${'a'.repeat(250)}.abc`, namespace: 'prod', data: 'x' }, ['config.name.length']],
    [{ name: 'Bad_Name', namespace: 'prod', data: 'x' }, ['config.name.format']],
    [{ name: 'c', namespace: 'prod', data: '' }, ['config.data.length']],
    [{ name: 'c', namespace: 'prod', data: 'd'.repeat(1024 * 1024 + 1) }, ['config.data.length']],
    [{ name: 'c', namespace: 'prod', data: 'x', labels: 'l'.repeat(1001) }, ['config.labels.length']],
  ];
  for (const [body, codes] of post) {
    const response = await server.request<Problem>('POST', '/configs', { body });
    assert.equal(response.status, 422, JSON.stringify(body).slice(0, 80));
    assert.deepEqual(response.body.violations.map((v) => v.code).sort(), codes);
  }
  const target = await server.request<Config>('POST', '/configs', { body: { name: 'target', namespace: 'prod', data: '{}' } });
  const put: Array<[Record<string, unknown>, string[]]> = [
    [{ name: 'target', data: '{"a":', labels: '' }, ['config.data.invalid_json']],
    [{ name: 'target', data: 'plain text', labels: '' }, ['config.data.invalid_json']],
    [{ name: 'target', data: '', labels: '' }, ['config.data.length']],
    [{ name: 'A', data: '{}', labels: 'l'.repeat(1001) }, ['config.labels.length', 'config.name.format']],
  ];
  for (const [body, codes] of put) {
    const response = await server.request<Problem>('PUT', `/configs/${target.body.id}`, { body });
    assert.equal(response.status, 422, JSON.stringify(body).slice(0, 80));
    assert.deepEqual(response.body.violations.map((v) => v.code).sort(), codes);
  }
  assert.equal((await server.request<Config>('GET', `/configs/${target.body.id}`)).body.data, '{}', 'rejected PUTs changed nothing');
});

test('bad config bodies are 4xx', async () => {
  const bodies: unknown[] = [
    { name: 'c', namespace: 'prod', data: { a: 1 } },
    { name: 'c', namespace: 'prod', data: 'x', labels: { a: 'b' } },
    { name: 'c', namespace: 'prod', data: 'x', labels: null },
    { name: 'c', namespace: 'prod' },
    { name: 'c', namespace: 'prod', data: 'x', extra: 1 },
    '{"name":"c","namespace":"prod","data":"\\ud800"}',
    'not json',
  ];
  for (const body of bodies) {
    const response = await server.request('POST', '/configs', { body });
    assert.ok(response.status >= 400 && response.status < 500, `${JSON.stringify(body).slice(0, 80)} -> ${response.status}`);
  }
  const oversized = await server.request('POST', '/configs', { body: { name: 'c', namespace: 'prod', data: 'd'.repeat(3 * 1024 * 1024) } });
  assert.equal(oversized.status, 413);
});
