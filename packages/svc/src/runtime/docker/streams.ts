// Docker's attach/log stream framing. Pure over async iterables of chunks, so it is tested with hand-made frames.
// Non-TTY streams are multiplexed: 8-byte header [stream, 0, 0, 0, size (uint32 BE)] then `size` bytes.
// TTY streams are raw bytes, all of it stdout.

import { StringDecoder } from 'node:string_decoder';

export type StreamName = 'stdout' | 'stderr';

export interface StreamChunk {
  stream: StreamName;
  data: Buffer;
}

const HEADER_SIZE = 8;

export async function* demultiplex(source: AsyncIterable<Buffer | string>): AsyncGenerator<StreamChunk> {
  let pending = Buffer.alloc(0);
  for await (const chunk of source) {
    pending = pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([pending, Buffer.from(chunk)]);
    while (pending.length >= HEADER_SIZE) {
      const size = pending.readUInt32BE(4);
      if (pending.length < HEADER_SIZE + size) break;
      const kind = pending[0];
      const data = pending.subarray(HEADER_SIZE, HEADER_SIZE + size);
      pending = pending.subarray(HEADER_SIZE + size);
      // 0 is stdin (never sent by Docker here), 3 is systemerr; both are reported as stderr.
      if (data.length > 0) yield { stream: kind === 1 ? 'stdout' : 'stderr', data: Buffer.from(data) };
    }
  }
}

export async function* rawAsStdout(source: AsyncIterable<Buffer | string>): AsyncGenerator<StreamChunk> {
  for await (const chunk of source) {
    const data = Buffer.from(chunk);
    if (data.length > 0) yield { stream: 'stdout', data };
  }
}

/** Whole lines per stream (a frame may end mid-line); the unterminated rest is flushed at the end. */
export async function* splitLines(chunks: AsyncIterable<StreamChunk>): AsyncGenerator<{ stream: StreamName; line: string }> {
  const rest: Record<StreamName, string> = { stdout: '', stderr: '' };
  // One decoder per stream: a multi-byte character may be split across two frames.
  const decoders: Record<StreamName, StringDecoder> = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  for await (const { stream, data } of chunks) {
    const text = rest[stream] + decoders[stream].write(data);
    const lines = text.split('\n');
    rest[stream] = lines.pop() ?? '';
    for (const line of lines) yield { stream, line: line.endsWith('\r') ? line.slice(0, -1) : line };
  }
  for (const stream of ['stdout', 'stderr'] as const) {
    const last = rest[stream] + decoders[stream].end();
    if (last !== '') yield { stream, line: last };
  }
}

/** `2024-05-01T10:00:00.123456789Z message` (logs with timestamps=true) → its two halves. */
export function splitTimestamp(line: string): { timestamp: string; message: string } {
  const space = line.indexOf(' ');
  const head = space === -1 ? line : line.slice(0, space);
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/.test(head)) {
    return { timestamp: head, message: space === -1 ? '' : line.slice(space + 1) };
  }
  return { timestamp: new Date().toISOString(), message: line };
}
