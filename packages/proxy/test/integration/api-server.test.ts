import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { apiClient, freePort, sha256, startProxy, tempDir, waitFor, type RunningProxy } from './cli-harness.js';

const ADMIN: [string, string] = ['admin', 'admin-pw'];
const VIEWER: [string, string] = ['viewer', 'viewer-pw'];

interface Setup {
  dir: string;
  configPath: string;
  apiPort: number;
  httpPort: number;
}

async function writeSetup(dir: string, extraApi = ''): Promise<Setup> {
  const apiPort = await freePort();
  const httpPort = await freePort();
  const tcpPort = await freePort();
  const configPath = join(dir, 'config.yaml');
  writeFileSync(
    configPath,
    `api:
  enabled: true
  listen_address: 127.0.0.1:${apiPort}
  users:
    - { name: admin, hash: ${sha256(ADMIN[1])} }
    - { name: viewer, hash: ${sha256(VIEWER[1])}, role: read-only }
${extraApi}proxy:
  http: { listen_address: "127.0.0.1:${httpPort}" }
  tcp: [ { name: db, listen_address: "127.0.0.1:${tcpPort}" } ]
  workers: 1
providers:
  config: { enabled: true, path: ./routes.yaml, watch: false }
  docker: { enabled: false }
`,
  );
  writeFileSync(
    join(dir, 'routes.yaml'),
    `entrypoints:
  - name: fromfile
    protocol: Http
    backends: [ { address: 127.0.0.1, port: 9 } ]
    config: { hostnames: [file.example.test] }
  - name: zbroken
    protocol: Http
    backends: [ { address: 127.0.0.1, port: 0 } ]
    config: {}
`,
  );
  return { dir, configPath, apiPort, httpPort };
}

/** fetch() cannot set Host; node:http can. */
function viaProxy(port: number, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end();
  });
}

function body(name: string, port: number, config: Record<string, unknown> = {}, protocol = 'Http'): Record<string, unknown> {
  return { name, protocol, backends: [{ address: '127.0.0.1', port }], config: { hostnames: [`${name}.example.test`], priority: 0, ...config } };
}

describe('management API over real HTTP', () => {
  const temp = tempDir('api');
  let setup: Setup;
  let proxy: RunningProxy;
  let call: ReturnType<typeof apiClient>;
  let backend: Server;
  let backendPort = 0;

  before(async () => {
    setup = await writeSetup(temp.dir);
    proxy = await startProxy(setup.configPath);
    call = apiClient(`http://127.0.0.1:${setup.apiPort}`);
    backend = createServer((req, res) => res.end(`backend saw ${req.headers.host} ${req.url}`));
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const address = backend.address();
    backendPort = typeof address === 'object' && address ? address.port : 0;
  });

  after(async () => {
    await proxy?.stop();
    await new Promise<void>((resolve) => backend.close(() => resolve()));
    temp.cleanup();
  });

  test('GET /health needs no credentials', async () => {
    const answer = await call('GET', '/health');
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { status: 'ok' });
  });

  test('missing or invalid credentials get 401 with WWW-Authenticate', async () => {
    for (const user of [undefined, ['admin', 'wrong'], ['nobody', 'admin-pw']] as const) {
      const answer = await call('GET', '/me', user ? { user: [user[0], user[1]] } : {});
      assert.equal(answer.status, 401);
      assert.equal(answer.headers.get('www-authenticate'), 'Basic realm="proxy"');
      assert.equal(typeof (answer.body as { error: unknown }).error, 'string');
    }
    const garbage = await call('GET', '/me', { headers: { authorization: 'Bearer abc' } });
    assert.equal(garbage.status, 401);
  });

  test('GET /me names the user and role', async () => {
    assert.deepEqual((await call('GET', '/me', { user: ADMIN })).body, { name: 'admin', role: 'admin' });
    assert.deepEqual((await call('GET', '/me', { user: VIEWER })).body, { name: 'viewer', role: 'read-only' });
  });

  test('the read-only role can read everything and write nothing', async () => {
    for (const path of ['/entrypoints', '/providers', '/diagnostics', '/me', '/entrypoints/http_fromfile', '/metrics']) {
      assert.equal((await call('GET', path, { user: VIEWER })).status, 200, path);
    }
    const expected = { error: 'read-only role cannot perform this operation' };
    const post = await call('POST', '/entrypoints', { user: VIEWER, json: body('ro', 80) });
    assert.equal(post.status, 403);
    assert.deepEqual(post.body, expected);
    assert.deepEqual((await call('PUT', '/entrypoints/http_fromfile', { user: VIEWER, json: body('fromfile', 80) })).body, expected);
    assert.deepEqual((await call('DELETE', '/entrypoints/http_fromfile', { user: VIEWER })).body, expected);
  });

  test('POST creates (201), GET shows it with unhealthy_backends and diagnostics, traffic flows, PUT replaces, DELETE removes', async () => {
    const created = await call('POST', '/entrypoints', { user: ADMIN, json: { ...body('app', backendPort), id: 'ignored', source: 'docker' } });
    assert.equal(created.status, 201, created.text);
    const entry = created.body as Record<string, unknown>;
    assert.equal(entry.id, 'http_app');
    assert.equal(entry.source, 'api');
    assert.equal((entry.backends as { weight: number }[])[0]?.weight, 100);
    assert.equal(created.headers.get('location'), '/entrypoints/http_app');

    const one = await call('GET', '/entrypoints/http_app', { user: ADMIN });
    assert.equal(one.status, 200);
    assert.deepEqual((one.body as Record<string, unknown>).unhealthy_backends, []);
    assert.deepEqual((one.body as Record<string, unknown>).diagnostics, []);
    const list = (await call('GET', '/entrypoints', { user: ADMIN })).body as { id: string; source: string }[];
    assert.deepEqual(list.map((e) => `${e.id}:${e.source}`), ['http_app:api', 'http_fromfile:config']);

    // The real data plane serves it.
    const through = await viaProxy(setup.httpPort, 'app.example.test', '/hello');
    assert.equal(through.status, 200);
    assert.equal(through.body, 'backend saw app.example.test /hello');

    const replaced = await call('PUT', '/entrypoints/http_app', { user: ADMIN, json: body('app', backendPort, { hostnames: ['app2.example.test'] }) });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual((replaced.body as { config: { hostnames: string[] } }).config.hostnames, ['app2.example.test']);
    assert.equal((await viaProxy(setup.httpPort, 'app2.example.test', '/x')).body, 'backend saw app2.example.test /x');

    const removed = await call('DELETE', '/entrypoints/http_app', { user: ADMIN });
    assert.equal(removed.status, 204);
    assert.equal(removed.text, '');
    assert.equal((await call('GET', '/entrypoints/http_app', { user: ADMIN })).status, 404);
  });

  test('409 on a duplicate id, whether API-created or provider-owned', async () => {
    assert.equal((await call('POST', '/entrypoints', { user: ADMIN, json: body('dup', 80) })).status, 201);
    const again = await call('POST', '/entrypoints', { user: ADMIN, json: body('dup', 81) });
    assert.equal(again.status, 409);
    assert.match((again.body as { error: string }).error, /http_dup already exists/);
    assert.equal((await call('POST', '/entrypoints', { user: ADMIN, json: body('fromfile', 80) })).status, 409);
    assert.equal((await call('DELETE', '/entrypoints/http_dup', { user: ADMIN })).status, 204);
  });

  test('403 on PUT/DELETE of a provider-owned entrypoint, 404 on unknown ids and paths', async () => {
    const put = await call('PUT', '/entrypoints/http_fromfile', { user: ADMIN, json: body('fromfile', 80) });
    assert.equal(put.status, 403);
    assert.match((put.body as { error: string }).error, /owned by provider "config"/);
    assert.equal((await call('DELETE', '/entrypoints/http_fromfile', { user: ADMIN })).status, 403);
    for (const [method, path] of [['GET', '/entrypoints/http_nope'], ['PUT', '/entrypoints/http_nope'], ['DELETE', '/entrypoints/http_nope'], ['GET', '/nowhere']] as const) {
      const answer = await call(method, path, { user: ADMIN, ...(method === 'PUT' ? { json: body('nope', 80) } : {}) });
      assert.equal(answer.status, 404, `${method} ${path}`);
      assert.equal(typeof (answer.body as { error: unknown }).error, 'string');
    }
    const wrongMethod = await call('PATCH', '/entrypoints', { user: ADMIN });
    assert.equal(wrongMethod.status, 405);
    assert.equal(typeof (wrongMethod.body as { error: unknown }).error, 'string');
  });

  test('415 without application/json, 400 on malformed JSON, 413 on an oversized body — all JSON', async () => {
    const missing = await call('POST', '/entrypoints', { user: ADMIN, body: JSON.stringify(body('x', 80)), contentType: null });
    assert.equal(missing.status, 415);
    const plain = await call('POST', '/entrypoints', { user: ADMIN, body: JSON.stringify(body('x', 80)), contentType: 'text/plain' });
    assert.equal(plain.status, 415);
    assert.equal((await call('POST', '/entrypoints', { user: ADMIN, json: body('cs', 80), contentType: 'application/json; charset=utf-8' })).status, 201);
    const bad = await call('POST', '/entrypoints', { user: ADMIN, body: '{"name": ', contentType: 'application/json' });
    assert.equal(bad.status, 400);
    assert.match((bad.body as { error: string }).error, /malformed JSON/);
    const huge = await call('POST', '/entrypoints', { user: ADMIN, body: `{"name":"${'a'.repeat(1024 * 1024 + 10)}"}` });
    assert.equal(huge.status, 413);
    assert.equal(typeof (huge.body as { error: unknown }).error, 'string');
    assert.equal((await call('GET', '/entrypoints/http_x', { user: ADMIN })).status, 404, 'nothing was created');
  });

  test('422 for missing or mistyped fields and semantic errors, naming the field', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: 'x' }, /protocol: is required/],
      [{ ...body('x', 80), backends: 'none' }, /backends: must be a list/],
      [{ ...body('x', 80), backends: [] }, /backends: needs at least one backend/],
      [body('x', 70000), /backends\[0\]\.port: port must be an integer between 1 and 65535/],
      [{ ...body('x', 80), backends: [{ address: '127.0.0.1', port: 80, weight: -5 }] }, /backends\[0\]\.weight/],
      [body('x', 80, { entrypoint: 'nope' }, 'Tcp'), /config\.entrypoint: "nope" names no proxy\.tcp listener/],
      [body('x', 80, {}, 'Tcp'), /config\.entrypoint: is required for protocol Tcp/],
      [body('x', 80, { strip_prefix: true, add_prefix: '/v1' }), /mutually exclusive/],
      [body('x', 80, { hostnames: ['/(unclosed/'] }), /config\.hostnames\[0\]: invalid regular expression/],
      [body('x', 80, { path: { rule_type: 'Regex', value: '[' } }), /config\.path\.value: invalid regular expression/],
      [{ ...body('x', 80), config: { priority: 0 } }, /config\.hostnames: is required/],
      [body('x', 80, { tls: 'true' }), /config\.tls: must be true or false/],
    ];
    for (const [json, pattern] of cases) {
      const answer = await call('POST', '/entrypoints', { user: ADMIN, json });
      assert.equal(answer.status, 422, JSON.stringify(json));
      assert.match((answer.body as { error: string }).error, pattern);
    }
    assert.equal((await call('POST', '/entrypoints', { user: ADMIN, json: body('pg', 5432, { entrypoint: 'db', hostnames: [] }, 'Tcp') })).status, 201);
    const mismatch = await call('PUT', '/entrypoints/tcp_pg', { user: ADMIN, json: body('other', 5432, { entrypoint: 'db' }, 'Tcp') });
    assert.equal(mismatch.status, 422);
    assert.equal((await call('DELETE', '/entrypoints/tcp_pg', { user: ADMIN })).status, 204);
  });

  test('malformed HTTP and oversized headers still get a JSON error', async () => {
    const raw = (payload: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(setup.apiPort, '127.0.0.1', () => socket.end(payload));
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
    const garbage = await raw('NOT HTTP AT ALL\r\n\r\n');
    assert.match(garbage, /^HTTP\/1\.1 400 /);
    assert.match(garbage, /\{"error":"malformed HTTP request"\}$/);
    const huge = await raw(`GET /me HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(huge, /^HTTP\/1\.1 431 /);
    assert.match(huge, /\{"error":"request headers too large"\}$/);
  });

  test('GET /providers always lists the seven providers with live counts', async () => {
    const answer = await call('GET', '/providers', { user: VIEWER });
    const providers = (answer.body as { providers: Record<string, unknown>[] }).providers;
    assert.deepEqual(providers.map((p) => p.name).sort(), ['config', 'docker', 'http', 'kubernetes', 'nomad', 'podman', 'swarm']);
    assert.deepEqual(providers.find((p) => p.name === 'config'), { name: 'config', enabled: true, configured: true, entrypoint_count: 1 });
    assert.deepEqual(providers.find((p) => p.name === 'docker'), { name: 'docker', enabled: false, configured: true, entrypoint_count: 0 });
    assert.deepEqual(providers.find((p) => p.name === 'nomad'), { name: 'nomad', enabled: false, configured: false, entrypoint_count: 0 });
  });

  test('GET /diagnostics: items sorted by candidate_id, total counts everything, entries carry their own', async () => {
    assert.equal((await call('POST', '/entrypoints', { user: ADMIN, json: body('aaa', 80, { hostnames: [] }) })).status, 201);
    const report = (await call('GET', '/diagnostics', { user: VIEWER })).body as { total: number; global: unknown[]; items: { candidate_id: string; diagnostics: { code: string; severity: string }[] }[] };
    const ids = report.items.map((i) => i.candidate_id);
    assert.deepEqual(ids, [...ids].sort());
    assert.ok(ids.includes('http_aaa') && ids.includes('http_zbroken'));
    assert.equal(report.total, report.global.length + report.items.reduce((n, i) => n + i.diagnostics.length, 0));
    assert.equal(report.items.find((i) => i.candidate_id === 'http_zbroken')?.diagnostics[0]?.code, 'W001');
    assert.ok(report.items.find((i) => i.candidate_id === 'http_aaa')?.diagnostics.some((d) => d.code === 'I001'));
    // A catch-all also collides with every other Http route (W018).
    const entry = (await call('GET', '/entrypoints/http_aaa', { user: ADMIN })).body as { diagnostics: { code: string }[] };
    assert.deepEqual([...new Set(entry.diagnostics.map((d) => d.code))].sort(), ['I001', 'W018']);
    assert.equal((await call('DELETE', '/entrypoints/http_aaa', { user: ADMIN })).status, 204);
    const after = (await call('GET', '/diagnostics', { user: VIEWER })).body as { items: { candidate_id: string }[] };
    assert.ok(!after.items.some((i) => i.candidate_id === 'http_aaa'), 'the diagnostic disappears with its cause');
  });

  test('CORS: * when no origins are configured, and preflight is answered', async () => {
    const answer = await call('GET', '/me', { user: ADMIN, headers: { origin: 'https://anything.example' } });
    assert.equal(answer.headers.get('access-control-allow-origin'), '*');
    const preflight = await fetch(`http://127.0.0.1:${setup.apiPort}/entrypoints`, {
      method: 'OPTIONS',
      headers: { origin: 'https://x.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.equal(preflight.headers.get('access-control-allow-methods'), 'GET, POST, PUT, DELETE, OPTIONS');
    assert.equal(preflight.headers.get('access-control-allow-headers'), 'Authorization, Content-Type, Accept');
  });

  test('GET /metrics needs credentials and exposes data-plane and control-plane series', async () => {
    assert.equal((await call('GET', '/metrics')).status, 401);
    const answer = await call('GET', '/metrics', { user: VIEWER });
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(answer.text, /svc_proxy_control_applies_total \d+/);
    assert.match(answer.text, /svc_proxy_control_entrypoints\{source="config"\} 1/);
    assert.match(answer.text, /svc_proxy_reloads_total/);
  });
});

describe('API state survives a restart; cors_origins restricts origins; SIGTERM exits 0', () => {
  const temp = tempDir('api-restart');
  after(() => temp.cleanup());

  test('an API-created entrypoint is still there after SIGTERM and a new start', async () => {
    const setup = await writeSetup(temp.dir, '  cors_origins: [https://dash.example.com]\n');
    let proxy = await startProxy(setup.configPath);
    const call = apiClient(`http://127.0.0.1:${setup.apiPort}`);
    try {
      assert.equal((await call('POST', '/entrypoints', { user: ADMIN, json: body('persisted', 8080) })).status, 201);
      const allowed = await call('GET', '/me', { user: ADMIN, headers: { origin: 'https://dash.example.com' } });
      assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://dash.example.com');
      const denied = await call('GET', '/me', { user: ADMIN, headers: { origin: 'https://evil.example.com' } });
      assert.equal(denied.headers.get('access-control-allow-origin'), null);
      assert.equal(await proxy.stop(), 0);
      proxy = await startProxy(setup.configPath);
      const again = await waitFor(async () => {
        const answer = await call('GET', '/entrypoints/http_persisted', { user: VIEWER });
        return answer.status === 200 ? answer : null;
      }, 5_000);
      assert.ok(again, 'entrypoint restored');
      assert.equal((again.body as { source: string }).source, 'api');

      // Killed without warning right after a write: the write was on disk before the 201.
      assert.equal((await call('POST', '/entrypoints', { user: ADMIN, json: body('survivor', 8081) })).status, 201);
      proxy.child.kill('SIGKILL');
      await proxy.stop();
      proxy = await startProxy(setup.configPath);
      const ids = ((await call('GET', '/entrypoints', { user: VIEWER })).body as { id: string }[]).map((e) => e.id);
      assert.ok(ids.includes('http_persisted') && ids.includes('http_survivor'), ids.join(','));
    } finally {
      assert.equal(await proxy.stop(), 0);
    }
  });
});

describe('a state file that cannot be written', () => {
  test('answers 500 in the JSON shape and changes nothing', async () => {
    const temp = tempDir('api-state');
    const setup = await writeSetup(temp.dir, '  state_file: ./no-such-dir/state.json\n');
    const proxy = await startProxy(setup.configPath);
    try {
      const call = apiClient(`http://127.0.0.1:${setup.apiPort}`);
      const answer = await call('POST', '/entrypoints', { user: ADMIN, json: body('lost', 8080) });
      assert.equal(answer.status, 500);
      assert.deepEqual(answer.body, { error: 'cannot write the API state file (ENOENT); nothing was changed' });
      assert.equal((await call('GET', '/entrypoints/http_lost', { user: ADMIN })).status, 404);
    } finally {
      assert.equal(await proxy.stop(), 0);
      temp.cleanup();
    }
  });
});
