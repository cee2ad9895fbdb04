import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { createHash } from 'node:crypto';
import { request, route, startBackend, startProxy, type Backend, type Proxy } from './http-helpers.js';

const BIG = 'hello compressible world '.repeat(400);
let a: Backend;
let b: Backend;
let content: Backend;
let ws: Backend;
let proxy: Proxy;
const wsSockets = new Set<net.Socket>();

before(async () => {
  a = await startBackend('a');
  b = await startBackend('b');
  content = await startBackend('content', (req, res) => {
    const kind = req.url ?? '/';
    if (kind === '/big') {
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(BIG), etag: '"v1"' });
      res.end(BIG);
    } else if (kind === '/small') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 5 });
      res.end('small');
    } else if (kind === '/encoded') {
      const gz = zlib.gzipSync(BIG);
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': gz.length });
      res.end(gz);
    } else if (kind === '/sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${'x'.repeat(2000)}\n\n`);
      setTimeout(() => res.end('data: end\n\n'), 20);
    } else if (kind === '/png') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 4096 });
      res.end(Buffer.alloc(4096));
    } else {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('?');
    }
  });
  ws = await startBackend('ws');
  ws.server.on('upgrade', (req, socket: net.Socket, head) => {
    wsSockets.add(socket);
    const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nX-Saw-For: ${req.headers['x-forwarded-for']}\r\n\r\n`);
    if (head.length > 0) socket.write(head);
    socket.on('data', (d: Buffer) => socket.write(Buffer.concat([Buffer.from('echo:'), d])));
  });
  proxy = await startProxy(
    [
      route('limited', [a.port], { hostnames: ['rl.test'], rate_limit: { average: 2, burst: 3 } }),
      route('sticky', [a.port, b.port], { hostnames: ['sticky.test'], sticky_session: true }),
      route('gz', [content.port], { hostnames: ['gz.test'], compress: true }),
      route('plain', [content.port], { hostnames: ['plain.test'] }),
      route('ws', [ws.port], { hostnames: ['ws.test'] }),
      route('wsauth', [ws.port], { hostnames: ['wsauth.test'], auth: { basic: [{ username: 'u', password_hash: '0'.repeat(64) }] } }),
    ],
    ['127.0.0.2'],
  );
});

after(async () => {
  for (const s of wsSockets) s.destroy();
  await proxy.stop();
  await Promise.all([a.close(), b.close(), content.close(), ws.close()]);
});

test('rate limit: burst then 429 with Retry-After, per client address', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await request(proxy.port, { host: 'rl.test' })).status);
  assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
  const limited = await request(proxy.port, { host: 'rl.test' });
  assert.equal(limited.headers['retry-after'], '1');
  // A spoofed X-Forwarded-For from an untrusted peer does not buy a fresh bucket.
  assert.equal((await request(proxy.port, { host: 'rl.test', headers: { 'x-forwarded-for': '9.9.9.9' } })).status, 429);
  // A trusted proxy (127.0.0.2) is believed: its clients get their own buckets.
  const viaTrusted = await request(proxy.port, { host: 'rl.test', localAddress: '127.0.0.2', headers: { 'x-forwarded-for': '9.9.9.9' } });
  assert.equal(viaTrusted.status, 200);
  const seen = a.requests.at(-1)?.headers['x-forwarded-for'];
  assert.equal(seen, '9.9.9.9, 127.0.0.2', 'a trusted peer appends to the chain');
  // Another client address behind no proxy is independent.
  assert.equal((await request(proxy.port, { host: 'rl.test', localAddress: '127.0.0.3' })).status, 200);
});

test('rate limit state survives a reload of the unchanged route and resets when the limit changes', async () => {
  const routes = (average: number) => [
    route('limited', [a.port], { hostnames: ['rl.test'], rate_limit: { average, burst: 3 } }),
    route('sticky', [a.port, b.port], { hostnames: ['sticky.test'], sticky_session: true }),
    route('gz', [content.port], { hostnames: ['gz.test'], compress: true }),
    route('plain', [content.port], { hostnames: ['plain.test'] }),
    route('ws', [ws.port], { hostnames: ['ws.test'] }),
    route('wsauth', [ws.port], { hostnames: ['wsauth.test'], auth: { basic: [{ username: 'u', password_hash: '0'.repeat(64) }] } }),
  ];
  const drained = await request(proxy.port, { host: 'rl.test', localAddress: '127.0.0.4' });
  assert.equal(drained.status, 200);
  for (let i = 0; i < 3; i++) await request(proxy.port, { host: 'rl.test', localAddress: '127.0.0.4' });
  proxy.plane.update(routes(2));
  assert.equal((await request(proxy.port, { host: 'rl.test', localAddress: '127.0.0.4' })).status, 429, 'same limits: bucket kept');
  proxy.plane.update(routes(50));
  assert.equal((await request(proxy.port, { host: 'rl.test', localAddress: '127.0.0.4' })).status, 200, 'new limits: new bucket');
});

test('sticky sessions: a cookie names the backend and keeps the client on it', async () => {
  const first = await request(proxy.port, { host: 'sticky.test' });
  const setCookie = first.headers['set-cookie']?.[0] ?? '';
  assert.match(setCookie, /^svc_sticky_http_sticky=127\.0\.0\.1%3A\d+; Path=\/; HttpOnly; SameSite=Lax$/);
  const cookie = setCookie.split(';')[0] as string;
  for (let i = 0; i < 4; i++) {
    const r = await request(proxy.port, { host: 'sticky.test', headers: { cookie: `other=1; ${cookie}` } });
    assert.equal(r.text, first.text);
    assert.equal(r.headers['set-cookie'], undefined, 'no new cookie while the backend is kept');
  }
  const unknown = await request(proxy.port, { host: 'sticky.test', headers: { cookie: 'svc_sticky_http_sticky=10.0.0.1%3A1' } });
  assert.equal(unknown.status, 200, 'a cookie naming a foreign backend is ignored');
  assert.ok(unknown.headers['set-cookie'] !== undefined);
});

function decode(enc: string | undefined, body: Buffer): string {
  if (enc === 'gzip') return zlib.gunzipSync(body).toString();
  if (enc === 'br') return zlib.brotliDecompressSync(body).toString();
  return body.toString();
}

test('compression: q-values negotiate br or gzip, Vary is set, ETag weakened', async () => {
  const br = await request(proxy.port, { host: 'gz.test', path: '/big', headers: { 'accept-encoding': 'gzip, br' } });
  assert.equal(br.headers['content-encoding'], 'br');
  assert.equal(br.headers.vary, 'Accept-Encoding');
  assert.equal(br.headers.etag, 'W/"v1"');
  assert.equal(br.headers['content-length'], undefined);
  assert.equal(decode('br', br.body), BIG);
  assert.ok(br.body.length < BIG.length / 5);
  const gz = await request(proxy.port, { host: 'gz.test', path: '/big', headers: { 'accept-encoding': 'br;q=0.5, gzip;q=0.9' } });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(decode('gzip', gz.body), BIG);
  const refused = await request(proxy.port, { host: 'gz.test', path: '/big', headers: { 'accept-encoding': 'br;q=0, gzip;q=0' } });
  assert.equal(refused.headers['content-encoding'], undefined);
  assert.equal(refused.headers.vary, 'Accept-Encoding');
  assert.equal(refused.text, BIG);
  const star = await request(proxy.port, { host: 'gz.test', path: '/big', headers: { 'accept-encoding': '*' } });
  assert.ok(star.headers['content-encoding'] === 'br' || star.headers['content-encoding'] === 'zstd');
  const none = await request(proxy.port, { host: 'gz.test', path: '/big' });
  assert.equal(none.headers['content-encoding'], undefined);
});

test('compression never touches small, encoded, binary or event-stream bodies, nor routes without compress', async () => {
  const ae = { 'accept-encoding': 'gzip, br' };
  const small = await request(proxy.port, { host: 'gz.test', path: '/small', headers: ae });
  assert.equal(small.headers['content-encoding'], undefined);
  assert.equal(small.text, 'small');
  const encoded = await request(proxy.port, { host: 'gz.test', path: '/encoded', headers: ae });
  assert.equal(encoded.headers['content-encoding'], 'gzip');
  assert.equal(zlib.gunzipSync(encoded.body).toString(), BIG, 'encoded once, by the backend');
  const png = await request(proxy.port, { host: 'gz.test', path: '/png', headers: ae });
  assert.equal(png.headers['content-encoding'], undefined);
  const sse = await request(proxy.port, { host: 'gz.test', path: '/sse', headers: ae });
  assert.equal(sse.headers['content-encoding'], undefined);
  assert.match(sse.text, /data: end/);
  const plain = await request(proxy.port, { host: 'plain.test', path: '/big', headers: ae });
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.headers.vary, undefined);
});

function upgrade(port: number, host: string, extra = ''): Promise<{ head: string; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let buf = '';
    socket.on('error', reject);
    socket.on('data', function onData(d: Buffer) {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        socket.off('data', onData);
        resolve({ head: buf.slice(0, end), socket });
      }
    });
    socket.write(
      `GET /chat HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nX-Forwarded-For: 6.6.6.6\r\n${extra}\r\n`,
    );
  });
}

test('websocket upgrades pass through both ways', async () => {
  const { head, socket } = await upgrade(proxy.port, 'ws.test');
  assert.match(head, /^HTTP\/1\.1 101 /);
  assert.match(head, /Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=/);
  assert.match(head, /X-Saw-For: 127\.0\.0\.1/, 'spoofed X-Forwarded-For replaced on upgrades too');
  const echoed = await new Promise<string>((resolve) => {
    socket.once('data', (d: Buffer) => resolve(d.toString()));
    socket.write('ping');
  });
  assert.equal(echoed, 'echo:ping');
  socket.destroy();
});

test('upgrades go through the route chain (auth) and 404 without a route', async () => {
  const denied = await upgrade(proxy.port, 'wsauth.test');
  assert.match(denied.head, /^HTTP\/1\.1 401 /);
  denied.socket.destroy();
  const missing = await upgrade(proxy.port, 'nowhere.test');
  assert.match(missing.head, /^HTTP\/1\.1 404 /);
  missing.socket.destroy();
});

test('a backend that dies mid-response cuts the client connection instead of finishing it', async () => {
  const dying = await startBackend('dying', (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 1000 });
    res.write('partial');
    setTimeout(() => res.socket?.destroy(), 20);
  });
  const p = await startProxy([route('dying', [dying.port], { hostnames: ['die.test'] })]);
  try {
    await assert.rejects(
      new Promise((resolve, reject) => {
        http.get({ port: p.port, host: '127.0.0.1', headers: { host: 'die.test' }, agent: false }, (res) => {
          res.resume();
          res.on('end', resolve);
          res.on('error', reject);
          res.on('aborted', () => reject(new Error('aborted')));
        }).on('error', reject);
      }),
    );
  } finally {
    await p.stop();
    await dying.close();
  }
});
