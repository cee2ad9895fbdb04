import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { deadPort, raw, request, route, startBackend, startProxy, type Backend, type Proxy } from './http-helpers.js';

let a: Backend;
let b: Backend;
let slow: Backend;
let proxy: Proxy;
let dead: number;

before(async () => {
  a = await startBackend('a');
  b = await startBackend('b');
  slow = await startBackend('slow', (req, res) => {
    req.resume();
    const delay = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? '0');
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('slow done');
    }, delay);
  });
  dead = await deadPort();
  proxy = await startProxy(
    [
      route('a', [a.port], { hostnames: ['app.test'] }),
      route('api', [b.port], { hostnames: ['app.test'], path: { rule_type: 'Prefix', value: '/api' }, strip_prefix: true }),
      route('add', [b.port], { hostnames: ['add.test'], add_prefix: '/v1' }),
      route('dead', [dead], { hostnames: ['dead.test'] }),
      route('slow', [slow.port], { hostnames: ['slow.test'], backend_timeout: 300 }),
      route('hdr', [a.port], {
        hostnames: ['hdr.test'],
        headers: [
          { name: 'X-Req', value: 'r1', direction: 'request' },
          { name: 'X-Resp', value: 's1', direction: 'response' },
          { name: 'X-Both', value: 'b1', direction: 'both' },
        ],
      }),
      route('weighted', [a.port, b.port], { hostnames: ['w.test'] }),
    ],
    ['10.9.0.0/16'],
  );
});

after(async () => {
  await proxy.stop();
  await Promise.all([a.close(), b.close(), slow.close()]);
});

test('routes by host and path, 404 with a short plain body when nothing matches', async () => {
  assert.equal((await request(proxy.port, { host: 'app.test' })).text, 'a');
  assert.equal((await request(proxy.port, { host: 'APP.test:80', path: '/api/x?q=1' })).text, 'b');
  assert.equal(b.requests.at(-1)?.url, '/x?q=1', 'strip_prefix removes /api and keeps the query');
  const miss = await request(proxy.port, { host: 'nope.test' });
  assert.equal(miss.status, 404);
  assert.equal(miss.text, 'no route\n');
  assert.match(String(miss.headers['content-type']), /^text\/plain/);
});

test('add_prefix prepends to the upstream path', async () => {
  await request(proxy.port, { host: 'add.test', path: '/users/1' });
  assert.equal(b.requests.at(-1)?.url, '/v1/users/1');
});

test('X-Forwarded-* are set from the connection; a spoofed X-Forwarded-For is replaced', async () => {
  await request(proxy.port, { host: 'app.test', headers: { 'x-forwarded-for': '6.6.6.6', 'x-forwarded-proto': 'https' } });
  const h = a.requests.at(-1)?.headers;
  assert.equal(h?.['x-forwarded-for'], '127.0.0.1');
  assert.equal(h?.['x-forwarded-proto'], 'http');
  assert.equal(h?.['x-forwarded-host'], 'app.test');
  assert.equal(h?.host, 'app.test', 'the Host header passes through');
});

test('hop-by-hop headers, and those named by Connection, are not forwarded', async () => {
  await request(proxy.port, {
    host: 'app.test',
    headers: { connection: 'keep-alive, x-secret-hop', 'x-secret-hop': '1', 'keep-alive': 'timeout=5', te: 'trailers', 'proxy-authorization': 'Basic eA==', 'x-kept': 'yes' },
  });
  const h = a.requests.at(-1)?.headers ?? {};
  assert.equal(h['x-secret-hop'], undefined);
  assert.equal(h['te'], undefined);
  assert.equal(h['proxy-authorization'], undefined);
  assert.equal(h['keep-alive'], undefined);
  assert.equal(h['x-kept'], 'yes');
});

test('header rules add on the request, the response, or both', async () => {
  const res = await request(proxy.port, { host: 'hdr.test', headers: { 'x-req': 'client' } });
  const h = a.requests.at(-1)?.headers ?? {};
  assert.equal(h['x-req'], 'r1', 'request rule replaces the client value');
  assert.equal(h['x-both'], 'b1');
  assert.equal(h['x-resp'], undefined);
  assert.equal(res.headers['x-resp'], 's1');
  assert.equal(res.headers['x-both'], 'b1');
  assert.equal(res.headers['x-req'], undefined);
});

test('a dead backend gives 502 and is reported to the pool', async () => {
  const res = await request(proxy.port, { host: 'dead.test' });
  assert.equal(res.status, 502);
  assert.equal(res.text, 'bad gateway\n');
  assert.deepEqual(proxy.plane.unhealthyBackends('http_dead'), [`127.0.0.1:${dead}`]);
});

test('a backend slower than backend_timeout gives 504; a fast one passes', async () => {
  const t0 = Date.now();
  const res = await request(proxy.port, { host: 'slow.test', path: '/?ms=2000' });
  assert.equal(res.status, 504);
  assert.ok(Date.now() - t0 < 1500);
  assert.equal((await request(proxy.port, { host: 'slow.test', path: '/?ms=10' })).text, 'slow done');
});

test('request bodies stream to the backend and responses stream back', async () => {
  const echo = await startBackend('echo', (req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    req.pipe(res);
  });
  const p = await startProxy([route('echo', [echo.port], { hostnames: ['echo.test'] })]);
  try {
    const body = Buffer.alloc(3 * 1024 * 1024, 7);
    const res = await request(p.port, { host: 'echo.test', method: 'POST', body });
    assert.equal(res.status, 200);
    assert.equal(res.body.length, body.length);
    assert.ok(res.body.equals(body));
  } finally {
    await p.stop();
    await echo.close();
  }
});

test('weights balance across backends', async () => {
  const seen = new Map<string, number>();
  for (let i = 0; i < 10; i++) {
    const r = await request(proxy.port, { host: 'w.test' });
    seen.set(r.text, (seen.get(r.text) ?? 0) + 1);
  }
  assert.equal(seen.get('a'), 5);
  assert.equal(seen.get('b'), 5);
});

test('oversized headers get 431', async () => {
  const res = await request(proxy.port, { host: 'app.test', headers: { 'x-big': 'x'.repeat(20_000) } });
  assert.equal(res.status, 431);
});

test('request smuggling shapes are refused with 400', async () => {
  const both = await raw(
    proxy.port,
    'POST / HTTP/1.1\r\nHost: app.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  );
  assert.match(both, /^HTTP\/1\.1 400 /);
  const dupCl = await raw(proxy.port, 'POST / HTTP/1.1\r\nHost: app.test\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde');
  assert.match(dupCl, /^HTTP\/1\.1 400 /);
  const badTe = await raw(proxy.port, 'POST / HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n');
  assert.match(badTe, /^HTTP\/1\.1 400 /);
  const noHost = await raw(proxy.port, 'GET / HTTP/1.1\r\n\r\n');
  assert.match(noHost, /^HTTP\/1\.1 400 /);
  // The backend never saw any of them.
  assert.ok(!a.requests.some((r) => r.method === 'POST'));
});

test('a reload during a long request lets it complete; new requests use the new table', async () => {
  const pending = request(proxy.port, { host: 'slow.test', path: '/?ms=150' });
  await new Promise((r) => setTimeout(r, 50));
  proxy.plane.update([route('slow', [slow.port], { hostnames: ['slow.test'], backend_timeout: 1000 })]);
  const res = await pending;
  assert.equal(res.status, 200);
  assert.equal(res.text, 'slow done');
  assert.equal((await request(proxy.port, { host: 'app.test' })).status, 404);
  const metrics = await proxy.plane.metrics();
  assert.match(metrics, /svc_proxy_reloads_total 2/);
  assert.match(metrics, /svc_proxy_requests_total\{entrypoint="http_slow",status="200"\} \d+/);
  assert.match(metrics, /svc_proxy_request_duration_seconds_bucket\{le="0.25",entrypoint="http_slow"\} \d+/);
  assert.match(metrics, /svc_proxy_backend_up\{entrypoint="http_slow",backend="127.0.0.1:\d+"\} 1/);
});

test('odd but legal or misconfigured input never takes the proxy down', async () => {
  const be = await startBackend('odd');
  const p = await startProxy([
    route('any', [be.port], { add_prefix: '/with space' }),
    route('crlf', [be.port], { hostnames: ['crlf.test'], redirect: 'forward', redirect_template: 'https://x.test/\r\nSet-Cookie: evil=1' }),
  ]);
  try {
    // HTTP/1.0 may omit Host: it routes as host "" (only host-less routes match).
    const http10 = await raw(p.port, 'GET /a HTTP/1.0\r\n\r\n');
    assert.match(http10, /^HTTP\/1\.1 200 /);
    assert.equal(be.requests.at(-1)?.url, '/with%20space/a');
    const crlf = await request(p.port, { host: 'crlf.test' });
    assert.equal(crlf.status, 302);
    assert.equal(crlf.headers.location, 'https://x.test/Set-Cookie: evil=1');
    assert.equal(crlf.headers['set-cookie'], undefined);
    assert.equal((await request(p.port, { host: 'bad host!' })).status, 400);
    // Absolute-form target: its authority routes and becomes the upstream Host; the backend gets origin-form.
    const absolute = await raw(p.port, 'GET http://Crlf.test:8080?x=1 HTTP/1.1\r\nHost: ignored.test\r\nConnection: close\r\n\r\n');
    assert.match(absolute, /^HTTP\/1\.1 302 /);
    assert.match(absolute, /\r\nlocation: https:\/\/x\.test\/Set-Cookie: evil=1\r\n/i);
    const viaAny = await raw(p.port, 'GET http://other.test/a/b?y=2 HTTP/1.1\r\nHost: crlf.test\r\nConnection: close\r\n\r\n');
    assert.match(viaAny, /^HTTP\/1\.1 200 /);
    assert.equal(be.requests.at(-1)?.url, '/with%20space/a/b?y=2');
    assert.equal(be.requests.at(-1)?.headers.host, 'other.test');
    assert.match(await raw(p.port, 'OPTIONS * HTTP/1.1\r\nHost: a.test\r\n\r\n'), /^HTTP\/1\.1 400 /);
  } finally {
    await p.stop();
    await be.close();
  }
});

test('a client that goes away cancels its backend request', async () => {
  let backendSawClose: (() => void) | null = null;
  const closed = new Promise<void>((resolve) => (backendSawClose = resolve));
  const hang = await startBackend('hang', (req, res) => {
    res.on('close', () => backendSawClose?.());
  });
  const p = await startProxy([route('hang', [hang.port], { hostnames: ['hang.test'], backend_timeout: 10_000 })]);
  try {
    const req = http.get({ port: p.port, host: '127.0.0.1', headers: { host: 'hang.test' }, agent: false });
    req.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 100));
    req.destroy();
    const t0 = Date.now();
    await closed;
    assert.ok(Date.now() - t0 < 2000);
  } finally {
    await p.stop();
    await hang.close();
  }
});

test('keep-alive connections to the backend are reused', async () => {
  const sockets = new Set<unknown>();
  const ka = await startBackend('ka');
  ka.server.on('connection', (s) => sockets.add(s));
  const p = await startProxy([route('ka', [ka.port], { hostnames: ['ka.test'] })]);
  try {
    const agent = new http.Agent({ keepAlive: true });
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve, reject) => {
        http.get({ port: p.port, host: '127.0.0.1', headers: { host: 'ka.test' }, agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        }).on('error', reject);
      });
    }
    agent.destroy();
    // Health checks open TCP connections of their own; requests themselves reuse one.
    const requestSockets = ka.requests.length;
    assert.equal(requestSockets, 5);
    assert.ok(sockets.size <= 3, `backend saw ${sockets.size} connections`);
  } finally {
    await p.stop();
    await ka.close();
  }
});
