import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HttpProvider } from '../../src/providers/http/index.js';
import type { ProviderState } from '../../src/providers/provider.js';
import { apiClient, freePort, sha256, startProxy, tempDir } from './cli-harness.js';

function definition(name: string, port: number): Record<string, unknown> {
  return { name, protocol: 'Http', backends: [{ address: '127.0.0.1', port }], config: { hostnames: [`${name}.test`] } };
}

describe('http provider against a real local HTTP server', () => {
  let server: Server;
  let url = '';
  let answer: { status: number; body: string; hang?: boolean } = { status: 200, body: '[]' };
  const seenHeaders: IncomingHttpHeaders[] = [];
  const states: ProviderState[] = [];
  let provider: HttpProvider;

  before(async () => {
    server = createServer((req, res) => {
      seenHeaders.push(req.headers);
      if (answer.hang) return; // never answers; the provider's timeout must fire
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/routes?token=secret-token`;
  });

  after(async () => {
    await provider?.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function nextState(timeoutMs = 3_000): Promise<ProviderState> {
    const count = states.length;
    const deadline = Date.now() + timeoutMs;
    while (states.length === count) {
      if (Date.now() > deadline) throw new Error('no new state emitted');
      await new Promise((r) => setTimeout(r, 20));
    }
    const last = states.at(-1);
    assert.ok(last);
    return last;
  }

  test('the first poll happens at start, with the configured headers', async () => {
    answer = { status: 200, body: JSON.stringify([definition('a', 81)]) };
    provider = new HttpProvider({ url, pollInterval: 1, timeout: 1, headers: { Authorization: 'Bearer s3cret' } });
    await provider.start((state) => states.push(state));
    assert.equal(states.length, 1);
    assert.deepEqual(states[0]?.entrypoints.map((e) => `${e.id}:${e.source}`), ['http_a:http']);
    assert.equal(seenHeaders[0]?.authorization, 'Bearer s3cret');
  });

  test('an unchanged body emits nothing; a changed body emits the new set', async () => {
    const polls = seenHeaders.length;
    await new Promise((r) => setTimeout(r, 1_300));
    assert.ok(seenHeaders.length > polls, 'polled again');
    assert.equal(states.length, 1, 'same content, no emit');
    answer = { status: 200, body: JSON.stringify([definition('a', 81), definition('b', 82)]) };
    const state = await nextState();
    assert.deepEqual(state.entrypoints.map((e) => e.id), ['http_a', 'http_b']);
    assert.deepEqual(state.diagnostics, []);
  });

  test('a failing endpoint keeps the last good set and raises W004 without leaking secrets', async () => {
    answer = { status: 500, body: 'oops' };
    const state = await nextState();
    assert.deepEqual(state.entrypoints.map((e) => e.id), ['http_a', 'http_b']);
    assert.equal(state.diagnostics[0]?.diagnostic.code, 'W004');
    assert.match(state.diagnostics[0]?.diagnostic.message ?? '', /answered HTTP 500; keeping the last good set \(2 entrypoints\)/);
    assert.doesNotMatch(state.diagnostics[0]?.diagnostic.message ?? '', /secret-token|s3cret/);
  });

  test('a body that is not a JSON array is a failure too', async () => {
    answer = { status: 200, body: '{"entrypoints": []}' };
    const state = await nextState();
    assert.equal(state.entrypoints.length, 2);
    assert.match(state.diagnostics[0]?.diagnostic.message ?? '', /must be a JSON array/);
  });

  test('a hanging endpoint times out and keeps the last good set', async () => {
    answer = { status: 200, body: '', hang: true };
    const state = await nextState(4_000);
    assert.equal(state.entrypoints.length, 2);
    assert.match(state.diagnostics[0]?.diagnostic.message ?? '', /no answer within 1 s/);
  });

  test('recovery clears the diagnostic; invalid definitions become diagnostics on their ids', async () => {
    answer = { status: 200, body: JSON.stringify([definition('c', 83), { ...definition('bad', 0) }]) };
    const state = await nextState(4_000);
    assert.deepEqual(state.entrypoints.map((e) => e.id), ['http_c']);
    assert.deepEqual(state.diagnostics.map((d) => `${d.diagnostic.code}@${d.candidate_id}`), ['W001@http_bad']);
  });

  test('an unreachable endpoint is reported as a connection failure', async () => {
    const closed = await freePort();
    const dead = new HttpProvider({ url: `http://127.0.0.1:${closed}/routes`, pollInterval: 60, timeout: 1, headers: {} });
    const got: ProviderState[] = [];
    await dead.start((state) => got.push(state));
    await dead.stop();
    assert.equal(got.length, 1);
    assert.deepEqual(got[0]?.entrypoints, []);
    assert.match(got[0]?.diagnostics[0]?.diagnostic.message ?? '', /cannot connect \(ECONNREFUSED\)/);
  });
});

describe('serve with the http provider enabled', () => {
  test('polled entrypoints appear in the API with source http and a live provider count', async () => {
    const temp = tempDir('http-serve');
    const routes = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify([definition('polled', 8080)]));
    });
    await new Promise<void>((resolve) => routes.listen(0, '127.0.0.1', resolve));
    const address = routes.address();
    const routesPort = typeof address === 'object' && address ? address.port : 0;
    const apiPort = await freePort();
    const httpPort = await freePort();
    writeFileSync(
      join(temp.dir, 'config.yaml'),
      `api: { enabled: true, listen_address: "127.0.0.1:${apiPort}", users: [ { name: a, hash: ${sha256('pw')} } ] }
proxy: { http: { listen_address: "127.0.0.1:${httpPort}" }, workers: 1 }
providers: { http: { enabled: true, url: "http://127.0.0.1:${routesPort}/routes", poll_interval: 60, timeout: 2 } }
`,
    );
    const proxy = await startProxy(join(temp.dir, 'config.yaml'));
    try {
      const call = apiClient(`http://127.0.0.1:${apiPort}`);
      const list = (await call('GET', '/entrypoints', { user: ['a', 'pw'] })).body as { id: string; source: string }[];
      assert.deepEqual(list.map((e) => `${e.id}:${e.source}`), ['http_polled:http']);
      const providers = (await call('GET', '/providers', { user: ['a', 'pw'] })).body as { providers: { name: string; enabled: boolean; entrypoint_count: number }[] };
      assert.deepEqual(providers.providers.find((p) => p.name === 'http'), { name: 'http', enabled: true, configured: true, entrypoint_count: 1 });
      const put = await call('PUT', '/entrypoints/http_polled', { user: ['a', 'pw'], json: { ...definition('polled', 8081), config: { hostnames: [], priority: 0 } } });
      assert.equal(put.status, 403);
    } finally {
      assert.equal(await proxy.stop(), 0);
      routes.closeAllConnections();
      await new Promise<void>((resolve) => routes.close(() => resolve()));
      temp.cleanup();
    }
  });
});
