import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { apiClient, freePort, sha256, startProxy, tempDir, waitFor, type RunningProxy } from './cli-harness.js';

const USER: [string, string] = ['admin', 'pw'];

function routes(entries: { name: string; port: number; host: string }[]): string {
  return `entrypoints:\n${entries
    .map((e) => `  - name: ${e.name}\n    protocol: Http\n    backends: [ { address: 127.0.0.1, port: ${e.port} } ]\n    config: { hostnames: [${e.host}] }\n`)
    .join('')}`;
}

function viaProxy(port: number, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', headers: { host }, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Write-then-rename, as editors and config management tools save. */
function atomicWrite(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

describe('config provider: the routes file is watched', () => {
  const temp = tempDir('watch');
  const routesPath = join(temp.dir, 'routes.yaml');
  let proxy: RunningProxy;
  let call: ReturnType<typeof apiClient>;
  let httpPort = 0;

  before(async () => {
    const apiPort = await freePort();
    httpPort = await freePort();
    writeFileSync(
      join(temp.dir, 'config.yaml'),
      `api: { enabled: true, listen_address: "127.0.0.1:${apiPort}", users: [ { name: admin, hash: ${sha256('pw')} } ] }
proxy: { http: { listen_address: "127.0.0.1:${httpPort}" }, workers: 1 }
providers: { config: { enabled: true, path: ./routes.yaml } }
`,
    );
    writeFileSync(routesPath, routes([{ name: 'one', port: 8001, host: 'one.test' }]));
    proxy = await startProxy(join(temp.dir, 'config.yaml'));
    call = apiClient(`http://127.0.0.1:${apiPort}`);
  });

  after(async () => {
    assert.equal(await proxy.stop(), 0);
    temp.cleanup();
  });

  async function ids(): Promise<string[]> {
    const answer = await call('GET', '/entrypoints', { user: USER });
    return (answer.body as { id: string }[]).map((e) => e.id);
  }

  test('the initial file is loaded', async () => {
    assert.deepEqual(await ids(), ['http_one']);
  });

  test('an in-place edit applies within 1 s without a restart', async () => {
    const started = Date.now();
    writeFileSync(routesPath, routes([{ name: 'one', port: 8001, host: 'one.test' }, { name: 'two', port: 8002, host: 'two.test' }]));
    const seen = await waitFor(async () => ((await ids()).includes('http_two') ? true : null), 1_000);
    assert.ok(seen, `not applied within 1 s (${Date.now() - started} ms)`);
  });

  test('an atomic rename save applies within 1 s', async () => {
    atomicWrite(routesPath, routes([{ name: 'three', port: 8003, host: 'three.test' }]));
    const seen = await waitFor(async () => {
      const now = await ids();
      return now.length === 1 && now[0] === 'http_three' ? true : null;
    }, 1_000);
    assert.ok(seen);
  });

  test('a broken file keeps the previous routes and raises E003 with file:line:column; fixing it clears the diagnostic', async () => {
    atomicWrite(routesPath, 'entrypoints:\n  - name: [broken\n');
    const report = await waitFor(async () => {
      const answer = await call('GET', '/diagnostics', { user: USER });
      const body = answer.body as { global: { code: string; message: string }[] };
      return body.global.find((d) => d.code === 'E003') ?? null;
    }, 1_000);
    assert.ok(report, 'E003 raised');
    assert.match(report.message, new RegExp(`${routesPath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\d+:\\d+: `));
    assert.deepEqual(await ids(), ['http_three'], 'previous routes kept');

    atomicWrite(routesPath, routes([{ name: 'four', port: 8004, host: 'four.test' }]));
    const cleared = await waitFor(async () => {
      const answer = await call('GET', '/diagnostics', { user: USER });
      const body = answer.body as { global: { code: string }[] };
      return body.global.some((d) => d.code === 'E003') ? null : true;
    }, 1_000);
    assert.ok(cleared);
    assert.deepEqual(await ids(), ['http_four']);
  });

  test('a reload does not drop a request in flight', async () => {
    const slow = createServer((_req, res) => setTimeout(() => res.end('slow answer'), 700));
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const address = slow.address();
    const slowPort = typeof address === 'object' && address ? address.port : 0;
    try {
      atomicWrite(routesPath, routes([{ name: 'four', port: 8004, host: 'four.test' }, { name: 'slow', port: slowPort, host: 'slow.test' }]));
      assert.ok(await waitFor(async () => ((await ids()).includes('http_slow') ? true : null), 1_000));
      const inFlight = viaProxy(httpPort, 'slow.test');
      await new Promise((r) => setTimeout(r, 150));
      atomicWrite(routesPath, routes([{ name: 'four', port: 8004, host: 'four.test' }]));
      assert.ok(await waitFor(async () => ((await ids()).includes('http_slow') ? null : true), 1_000));
      assert.deepEqual(await inFlight, { status: 200, body: 'slow answer' });
      assert.equal((await viaProxy(httpPort, 'slow.test')).status, 404, 'the removed route no longer matches');
    } finally {
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });

  test('a deleted file keeps the routes and raises E003; recreating it recovers', async () => {
    renameSync(routesPath, `${routesPath}.moved`);
    const raised = await waitFor(async () => {
      const body = (await call('GET', '/diagnostics', { user: USER })).body as { global: { code: string; message: string }[] };
      return body.global.find((d) => d.code === 'E003' && d.message.includes('ENOENT')) ?? null;
    }, 1_000);
    assert.ok(raised);
    assert.deepEqual(await ids(), ['http_four']);
    renameSync(`${routesPath}.moved`, routesPath);
    assert.ok(await waitFor(async () => ((await call('GET', '/diagnostics', { user: USER })).body as { total: number }).total === 0 ? true : null, 1_000));
  });
});
