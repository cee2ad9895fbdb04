import { test } from 'node:test';
import assert from 'node:assert/strict';
import { demultiplex, rawAsStdout, splitLines, splitTimestamp, type StreamChunk } from '../../src/runtime/docker/streams.js';

function frame(kind: number, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = kind;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

async function* chunks(...parts: Buffer[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield part;
}

async function all<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

test('demultiplex splits frames by stream even when headers and payloads straddle chunks', async () => {
  const bytes = Buffer.concat([frame(1, 'out-1\n'), frame(2, 'err-1\n'), frame(1, 'out-2\n'), frame(3, 'sys\n')]);
  const pieces = [bytes.subarray(0, 3), bytes.subarray(3, 11), bytes.subarray(11, 30), bytes.subarray(30)];
  const result = await all(demultiplex(chunks(...pieces)));
  assert.deepEqual(
    result.map((c) => [c.stream, c.data.toString()]),
    [['stdout', 'out-1\n'], ['stderr', 'err-1\n'], ['stdout', 'out-2\n'], ['stderr', 'sys\n']],
  );
});

test('demultiplex drops an incomplete trailing frame and empty frames', async () => {
  const result = await all(demultiplex(chunks(frame(1, ''), frame(1, 'ok'), frame(2, 'cut').subarray(0, 9))));
  assert.deepEqual(result.map((c) => c.data.toString()), ['ok']);
});

test('raw (TTY) streams are all stdout', async () => {
  const result = await all(rawAsStdout(chunks(Buffer.from('a'), Buffer.alloc(0), Buffer.from('b'))));
  assert.deepEqual(result.map((c) => [c.stream, c.data.toString()]), [['stdout', 'a'], ['stdout', 'b']]);
});

test('splitLines joins lines split across chunks per stream, strips CR and flushes the rest', async () => {
  async function* input(): AsyncGenerator<StreamChunk> {
    yield { stream: 'stdout', data: Buffer.from('hel') };
    yield { stream: 'stderr', data: Buffer.from('warn\r\nerr-par') };
    yield { stream: 'stdout', data: Buffer.from('lo\nworld\n\nlast') };
    yield { stream: 'stderr', data: Buffer.from('tial') };
  }
  assert.deepEqual(await all(splitLines(input())), [
    { stream: 'stderr', line: 'warn' },
    { stream: 'stdout', line: 'hello' },
    { stream: 'stdout', line: 'world' },
    { stream: 'stdout', line: '' },
    { stream: 'stdout', line: 'last' },
    { stream: 'stderr', line: 'err-partial' },
  ]);
});

test('splitLines keeps multi-byte characters split across chunks intact', async () => {
  const text = Buffer.from('größe\n');
  async function* input(): AsyncGenerator<StreamChunk> {
    yield { stream: 'stdout', data: text.subarray(0, 3) };
    yield { stream: 'stdout', data: text.subarray(3) };
  }
  assert.deepEqual(await all(splitLines(input())), [{ stream: 'stdout', line: 'größe' }]);
});

test('splitTimestamp separates the RFC 3339 prefix Docker adds', () => {
  assert.deepEqual(splitTimestamp('2024-05-01T10:00:00.123456789Z hello world'), { timestamp: '2024-05-01T10:00:00.123456789Z', message: 'hello world' });
  assert.deepEqual(splitTimestamp('2024-05-01T10:00:00Z'), { timestamp: '2024-05-01T10:00:00Z', message: '' });
  const plain = splitTimestamp('no timestamp here');
  assert.equal(plain.message, 'no timestamp here');
  assert.ok(!Number.isNaN(Date.parse(plain.timestamp)));
});
