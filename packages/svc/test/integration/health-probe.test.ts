// The probers against real sockets on 127.0.0.1: tcp connect, http GET (2xx only, redirects not followed,
// `localhost` rewritten to the instance address), timeouts reported as `timeout`, command through the runtime.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type AddressInfo } from 'node:net';
import { runProbe } from '../../src/health/probe.js';
import type { HealthCheck } from '../../src/domain/deployment.js';
import type { ObservedInstance } from '../../src/runtime/runtime.js';
import { FakeRuntime } from '../support/fake-runtime.js';

let http: Server;
let silent: TcpServer;
let httpPort = 0;
let silentPort = 0;
const runtime = new FakeRuntime();

const instance: ObservedInstance = {
  id: 'i', name: 'n', deploymentId: 'd', specHash: 'h', state: 'running', exitCode: null,
  startedAt: null, finishedAt: null, address: '127.0.0.1', imageDigest: null,
};
const common = { interval: '1s', timeout: '300ms', threshold: 3, on_failure: 'restart' as const };

before(async () => {
  http = createServer((req, res) => {
    if (req.url === '/ok') res.writeHead(204).end();
    else if (req.url === '/moved') res.writeHead(302, { location: '/ok' }).end();
    else if (req.url === '/hang') return; // never answers
    else res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  httpPort = (http.address() as AddressInfo).port;
  // Accepts nothing: a full backlog would be needed for a tcp timeout, so tcp timeouts use a non-routable case below.
  silent = createTcpServer();
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentPort = (silent.address() as AddressInfo).port;
});

after(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await new Promise((resolve) => silent.close(resolve));
});

async function probe(check: HealthCheck, target: ObservedInstance = instance) {
  return runProbe(check, target, runtime);
}

test('http: 2xx is success; 5xx and 3xx are failures; localhost is rewritten; a hang is a timeout', async () => {
  assert.equal((await probe({ ...common, type: 'http', url: `http://localhost:${httpPort}/ok` })).status, 'success');
  const error = await probe({ ...common, type: 'http', url: `http://localhost:${httpPort}/err` });
  assert.equal(error.status, 'failure');
  assert.match(error.message ?? '', /status 500/);
  assert.match(error.message ?? '', /127\.0\.0\.1/, 'the probe went to the instance address');
  assert.equal((await probe({ ...common, type: 'http', url: `http://localhost:${httpPort}/moved` })).status, 'failure');
  const hang = await probe({ ...common, type: 'http', url: `http://localhost:${httpPort}/hang` });
  assert.equal(hang.status, 'timeout');
  assert.ok(hang.finishedAt.getTime() - hang.startedAt.getTime() < 2_000);
});

test('tcp: an open port is success, a closed one a failure; no address is a failure', async () => {
  assert.equal((await probe({ ...common, type: 'tcp', port: silentPort })).status, 'success');
  const closedPort = await new Promise<number>((resolve) => {
    const s = createTcpServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
  const refused = await probe({ ...common, type: 'tcp', port: closedPort });
  assert.equal(refused.status, 'failure');
  assert.match(refused.message ?? '', /ECONNREFUSED/);
  assert.equal((await probe({ ...common, type: 'tcp', port: 80 }, { ...instance, address: null })).status, 'failure');
});

test('command: delegated to the runtime; started = success, not started = failure', async () => {
  assert.equal((await probe({ ...common, type: 'command', command: ['true'] })).status, 'success');
  const failing = new FakeRuntime();
  failing.probeCommand = async () => false;
  assert.equal((await runProbe({ ...common, type: 'command', command: ['nope'] }, instance, failing)).status, 'failure');
});
