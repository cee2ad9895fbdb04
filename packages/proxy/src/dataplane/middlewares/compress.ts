// Response compression negotiated from Accept-Encoding q-values. zstd comes from node:zlib where it exists
// (Node >= 22.15) and otherwise from @mongodb-js/zstd as a stream of frames; when neither can be used the choice
// falls back to br or gzip. See docs/proxy/dataplane.md.
import zlib from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';
import type { Transform } from 'node:stream';
import { frameCompressor, ZstdFrameCompressor } from './zstd-frames.js';

export type Encoding = 'zstd' | 'br' | 'gzip';

type ZstdFactory = (options?: object) => Transform;
const zstdFactory: ZstdFactory | null =
  typeof (zlib as unknown as { createZstdCompress?: unknown }).createZstdCompress === 'function'
    ? ((zlib as unknown as { createZstdCompress: ZstdFactory }).createZstdCompress)
    : null;

/** Server preference on equal q. */
export const SUPPORTED: readonly Encoding[] = ['zstd', 'br', 'gzip'];

const WITHOUT_ZSTD: readonly Encoding[] = ['br', 'gzip'];

export const MIN_COMPRESS_BYTES = 1024;

const COMPRESSIBLE = /^(text\/|application\/(json|javascript|ecmascript|xml|wasm|x-javascript|manifest\+json|[a-z.+-]*\+(json|xml))|image\/svg\+xml)/;

/** The best of `offered` the client accepts with q > 0, or null. `*` covers encodings not listed. */
export function negotiate(acceptEncoding: string | undefined, offered: readonly Encoding[] = SUPPORTED): Encoding | null {
  if (acceptEncoding === undefined || acceptEncoding === '') return null;
  const q = new Map<string, number>();
  for (const item of acceptEncoding.slice(0, 1024).split(',')) {
    const [rawName, ...params] = item.split(';');
    const name = (rawName ?? '').trim().toLowerCase();
    if (name === '') continue;
    let weight = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if ((k ?? '').trim().toLowerCase() === 'q') {
        const n = Number((v ?? '').trim());
        weight = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0;
      }
    }
    q.set(name, weight);
  }
  let best: Encoding | null = null;
  let bestQ = 0;
  for (const enc of offered) {
    const weight = q.get(enc) ?? q.get('*') ?? 0;
    if (weight > bestQ) {
      best = enc;
      bestQ = weight;
    }
  }
  return best;
}

/** Whether zstd can be produced here: node:zlib's, else the package's, loaded on first call. */
export function zstdUsable(): boolean {
  return zstdFactory !== null || frameCompressor() !== null;
}

/**
 * The encoding to answer with. zstd's availability is only asked about when the client's preferences pick it,
 * so the zstd package is never loaded for clients that would not get zstd anyway.
 */
export function chooseEncoding(acceptEncoding: string | undefined, zstdAvailable: () => boolean = zstdUsable): Encoding | null {
  const best = negotiate(acceptEncoding);
  return best === 'zstd' && !zstdAvailable() ? negotiate(acceptEncoding, WITHOUT_ZSTD) : best;
}

/** Whether a backend response may be compressed at all (independent of the client). */
export function compressible(status: number, headers: IncomingHttpHeaders, method: string | undefined): boolean {
  if (method === 'HEAD' || status < 200 || status === 204 || status === 206 || status === 304) return false;
  if (headers['content-encoding'] !== undefined && headers['content-encoding'] !== 'identity') return false;
  const type = (headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('text/event-stream') || !COMPRESSIBLE.test(type)) return false;
  const cacheControl = headers['cache-control'];
  if (cacheControl !== undefined && /no-transform/i.test(cacheControl)) return false;
  const length = headers['content-length'];
  if (length !== undefined && Number(length) < MIN_COMPRESS_BYTES) return false;
  return true;
}

export function createCompressor(encoding: Encoding): Transform {
  switch (encoding) {
    case 'zstd': {
      if (zstdFactory !== null) return zstdFactory();
      const compressFrame = frameCompressor();
      // chooseEncoding picks zstd only when it is usable; this is a safeguard, not a path.
      if (compressFrame === null) throw new Error('zstd is not available');
      return new ZstdFrameCompressor(compressFrame);
    }
    case 'br':
      // Quality 4: streaming speed over ratio (11, the default, costs ~50x the CPU).
      return zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } });
    case 'gzip':
      return zlib.createGzip({ level: 5 });
  }
}

export function addVary(existing: string | string[] | number | undefined): string {
  if (existing === undefined) return 'Accept-Encoding';
  const text = Array.isArray(existing) ? existing.join(', ') : String(existing);
  return /(^|,)\s*(accept-encoding|\*)\s*(,|$)/i.test(text) ? text : `${text}, Accept-Encoding`;
}
