// zstd as a stream of frames (Node 20) and the fallback when zstd cannot be loaded. No sockets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { decompress } from '@mongodb-js/zstd';
import { chooseEncoding } from '../../src/dataplane/middlewares/compress.js';
import { FRAME_INPUT_BYTES, ZstdFrameCompressor, loadCompressFrame, type CompressFrame } from '../../src/dataplane/middlewares/zstd-frames.js';

function realCompress(): CompressFrame {
  const compress = loadCompressFrame();
  assert.ok(compress !== null, '@mongodb-js/zstd and its linux-x64-gnu binary are installed');
  return compress;
}

/** Records the input size of every frame it compresses. */
function recording(inner: CompressFrame): { compress: CompressFrame; inputs: number[] } {
  const inputs: number[] = [];
  return { inputs, compress: (data) => (inputs.push(data.length), inner(data)) };
}

async function collect(stream: ZstdFrameCompressor): Promise<Buffer> {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  await once(stream, 'end');
  return Buffer.concat(chunks);
}

test('chooseEncoding falls back to br or gzip when zstd cannot be loaded, and asks only when zstd would win', () => {
  let asked = 0;
  const unavailable = (): boolean => (asked++, false);
  assert.equal(chooseEncoding('zstd, br, gzip', unavailable), 'br');
  assert.equal(chooseEncoding('zstd, gzip;q=0.5', unavailable), 'gzip');
  assert.equal(chooseEncoding('zstd', unavailable), null);
  assert.equal(chooseEncoding('*', unavailable), 'br');
  assert.equal(asked, 4);
  assert.equal(chooseEncoding('br, gzip', unavailable), 'br');
  assert.equal(chooseEncoding('zstd;q=0.1, gzip', unavailable), 'gzip');
  assert.equal(chooseEncoding(undefined, unavailable), null);
  assert.equal(asked, 4, 'not asked when the client prefers something else');
  assert.equal(chooseEncoding('gzip, zstd', () => true), 'zstd');
});

test('loadCompressFrame gives null for a package that is not there instead of throwing', () => {
  assert.equal(loadCompressFrame('@svc-test/no-such-zstd-package'), null);
  assert.equal(loadCompressFrame('node:path'), null, 'a module without compress()');
  assert.equal(typeof loadCompressFrame(), 'function');
});

test('frames are cut every 64 KB of input and concatenated frames decode to the exact input', async () => {
  const { compress, inputs } = recording(realCompress());
  const stream = new ZstdFrameCompressor(compress);
  const input = Buffer.from(Array.from({ length: 12_000 }, (_, i) => `row ${i} ${i % 97}\n`).join(''));
  const done = collect(stream);
  // Written in one go, so the idle flush never fires between chunks.
  for (let at = 0; at < input.length; at += 16 * 1024) stream.write(input.subarray(at, at + 16 * 1024));
  stream.end();
  const output = await done;
  const expected = [...Array(Math.floor(input.length / FRAME_INPUT_BYTES)).fill(FRAME_INPUT_BYTES), input.length % FRAME_INPUT_BYTES];
  assert.deepEqual(inputs, expected);
  assert.ok((await decompress(output)).equals(input));
});

test('a quiet upstream gets its bytes flushed as a frame without waiting for 64 KB or the end', async () => {
  const stream = new ZstdFrameCompressor(realCompress());
  stream.write(Buffer.from('hello, '));
  stream.write(Buffer.from('streaming world'));
  const [first] = (await once(stream, 'data')) as [Buffer];
  assert.equal((await decompress(first)).toString(), 'hello, streaming world');
  const done = collect(stream);
  stream.end(Buffer.from('!'));
  assert.equal((await decompress(Buffer.concat([first, await done]))).toString(), 'hello, streaming world!');
});

test('frames keep their order even when a later one compresses faster', async () => {
  const inner = realCompress();
  let call = 0;
  const slowFirst: CompressFrame = async (data) => {
    const delay = call++ === 0 ? 30 : 0;
    await new Promise((resolve) => setTimeout(resolve, delay));
    return inner(data);
  };
  const stream = new ZstdFrameCompressor(slowFirst, 10);
  const done = collect(stream);
  for (const word of ['alpha ', 'beta ', 'gamma ', 'delta']) stream.write(Buffer.from(word.padEnd(12, '.')));
  stream.end();
  assert.equal((await decompress(await done)).toString(), ['alpha ', 'beta ', 'gamma ', 'delta'].map((w) => w.padEnd(12, '.')).join(''));
  assert.equal(call, 4);
});

test('a compression failure errors the stream instead of hanging it', async () => {
  const stream = new ZstdFrameCompressor(() => Promise.reject(new Error('zstd: boom')));
  stream.resume();
  stream.end(Buffer.from('x'.repeat(100)));
  const [err] = (await once(stream, 'error')) as [Error];
  assert.match(err.message, /boom/);
});

test('a reader that does not read stops the writer (backpressure), and nothing is lost once it reads', async () => {
  const stream = new ZstdFrameCompressor(realCompress());
  const written: Buffer[] = [];
  let refused = false;
  // Random bytes barely compress, so every idle frame is about as large as its input.
  for (let i = 0; i < 200 && !refused; i++) {
    const chunk = Buffer.from(Array.from({ length: 1024 }, () => Math.floor(Math.random() * 256)));
    written.push(chunk);
    refused = !stream.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.ok(refused, 'write() reported backpressure before 200 KB were accepted');
  assert.ok(stream.readableLength < 64 * 1024, `readable side holds ${stream.readableLength} bytes`);
  const done = collect(stream);
  stream.end();
  assert.ok((await decompress(await done)).equals(Buffer.concat(written)));
});
