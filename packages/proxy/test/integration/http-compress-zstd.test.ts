// zstd through the real data plane on Node 20 (no node:zlib zstd): streamed frames, q-values, Vary, minimum size.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { decompress } from '@mongodb-js/zstd';
import { request, route, startBackend, type Backend, startProxy, type Proxy } from './http-helpers.js';

/** ~1.2 MB of varied text, so frames are cut at the 64 KB bound many times. */
const STREAMED = Buffer.from(
  Array.from({ length: 20_000 }, (_, i) => `line ${i}: ${'abcdefghij'.slice(i % 10)}${(i * 7919) % 104729}\n`)
    .join('')
    .repeat(3),
);
const FIRST_PART = Buffer.from(`first part ${'x'.repeat(1500)}\n`);
const REST = Buffer.from(`rest ${'y'.repeat(5000)}\n`);

let content: Backend;
let proxy: Proxy;
let releaseRest: (() => void) | null = null;
let endlessClosed: (() => void) | null = null;

before(async () => {
  content = await startBackend('content', (req, res) => {
    req.resume();
    const url = req.url ?? '/';
    if (url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', etag: '"s1"' });
      // Uneven chunks, some written across event-loop turns, like a real streaming backend.
      let offset = 0;
      let turn = 0;
      const pump = (): void => {
        while (offset < STREAMED.length) {
          const size = 1000 + ((turn * 7717) % 40_000);
          res.write(STREAMED.subarray(offset, offset + size));
          offset += size;
          turn += 1;
          if (turn % 5 === 0) return void setImmediate(pump);
        }
        res.end();
      };
      pump();
    } else if (url === '/slow') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(FIRST_PART);
      releaseRest = () => res.end(REST);
    } else if (url === '/endless') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write(`tick ${Date.now()} ${'t'.repeat(2000)}\n`), 5);
      res.on('close', () => {
        clearInterval(timer);
        endlessClosed?.();
      });
    } else if (url === '/small') {
      const body = 'tiny '.repeat(100);
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    } else {
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': 4000 });
      res.end('<p>'.padEnd(4000, 'z'));
    }
  });
  proxy = await startProxy([
    route('zstd', [content.port], { hostnames: ['zstd.test'], compress: true }),
    route('off', [content.port], { hostnames: ['off.test'] }),
  ]);
});

after(async () => {
  await proxy.stop();
  await content.close();
});

test('a large streamed response asked for with zstd comes back as zstd frames that decode to the exact bytes', async () => {
  const res = await request(proxy.port, { host: 'zstd.test', path: '/stream', headers: { 'accept-encoding': 'zstd' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-encoding'], 'zstd');
  assert.equal(res.headers.vary, 'Accept-Encoding');
  assert.equal(res.headers['content-length'], undefined);
  assert.equal(res.headers.etag, 'W/"s1"');
  assert.ok(res.body.length < STREAMED.length / 3, `compressed ${res.body.length} of ${STREAMED.length}`);
  const decoded = await decompress(res.body);
  assert.equal(decoded.length, STREAMED.length);
  assert.ok(decoded.equals(STREAMED), 'decoded bytes equal the backend bytes');
  // Many frames: a frame is cut once 64 KB are buffered (plus at most the chunk that crossed the line).
  const magic = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
  let frames = 0;
  for (let at = res.body.indexOf(magic); at !== -1; at = res.body.indexOf(magic, at + 1)) frames += 1;
  assert.ok(frames >= STREAMED.length / (128 * 1024), `${frames} frames`);
});

test('a slow stream is not held back: the first part arrives decodable before the backend sends the rest', { timeout: 10_000 }, async () => {
  const body = await new Promise<Buffer>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: proxy.port, path: '/slow', headers: { host: 'zstd.test', 'accept-encoding': 'zstd' }, agent: false },
      (res) => {
        assert.equal(res.headers['content-encoding'], 'zstd');
        const chunks: Buffer[] = [];
        let released = false;
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (released) return;
          decompress(Buffer.concat(chunks)).then(
            (sofar) => {
              if (released || !sofar.equals(FIRST_PART)) return;
              released = true;
              assert.ok(releaseRest !== null);
              releaseRest();
            },
            () => undefined, // an incomplete frame so far: wait for more bytes
          );
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
  assert.ok((await decompress(body)).equals(Buffer.concat([FIRST_PART, REST])));
});

test('q-values: zstd wins when preferred or equal, loses to a higher q, never chosen with q=0', async () => {
  const cases: [string, string | undefined][] = [
    ['zstd', 'zstd'],
    ['gzip, br, zstd', 'zstd'],
    ['br;q=0.8, zstd', 'zstd'],
    ['zstd;q=0.5, br', 'br'],
    ['zstd;q=0.5, gzip;q=0.6', 'gzip'],
    ['zstd;q=0, br;q=0.5', 'br'],
    ['zstd;q=0, *', 'br'],
    ['*', 'zstd'],
    ['zstd;q=0', undefined],
    ['identity', undefined],
  ];
  for (const [acceptEncoding, expected] of cases) {
    const res = await request(proxy.port, { host: 'zstd.test', path: '/page', headers: { 'accept-encoding': acceptEncoding } });
    assert.equal(res.headers['content-encoding'], expected, `Accept-Encoding: ${acceptEncoding}`);
    assert.equal(res.headers.vary, 'Accept-Encoding', `Vary for ${acceptEncoding}`);
    if (expected === 'zstd') assert.equal((await decompress(res.body)).toString(), '<p>'.padEnd(4000, 'z'));
    if (expected === undefined) assert.equal(res.body.length, 4000);
  }
});

test('zstd respects the minimum size and routes without compress', async () => {
  const small = await request(proxy.port, { host: 'zstd.test', path: '/small', headers: { 'accept-encoding': 'zstd' } });
  assert.equal(small.headers['content-encoding'], undefined);
  assert.equal(small.text, 'tiny '.repeat(100));
  const off = await request(proxy.port, { host: 'off.test', path: '/page', headers: { 'accept-encoding': 'zstd' } });
  assert.equal(off.headers['content-encoding'], undefined);
  assert.equal(off.headers.vary, undefined);
  assert.equal(off.body.length, 4000);
});

test('a client that hangs up mid-stream closes the backend request', { timeout: 10_000 }, async () => {
  const backendClosed = new Promise<void>((resolve) => (endlessClosed = resolve));
  await new Promise<void>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: proxy.port, path: '/endless', headers: { host: 'zstd.test', 'accept-encoding': 'zstd' }, agent: false },
      (res) => {
        assert.equal(res.headers['content-encoding'], 'zstd');
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > 1000) {
            req.destroy();
            resolve();
          }
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
  await backendClosed;
  const after = await request(proxy.port, { host: 'zstd.test', path: '/page', headers: { 'accept-encoding': 'zstd' } });
  assert.equal((await decompress(after.body)).length, 4000, 'the proxy still serves zstd afterwards');
});
