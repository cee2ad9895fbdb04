// zstd on Node versions whose node:zlib lacks it (before 22.15): @mongodb-js/zstd, loaded lazily. That package
// only compresses whole buffers, so the stream is sent as a series of independent zstd frames, which RFC 8878
// (section 3.1) lets a stream be; every decoder decodes them all. See docs/proxy/dataplane.md.
import { createRequire } from 'node:module';
import { Transform, type TransformCallback } from 'node:stream';

/** Compresses one whole buffer into one complete zstd frame. */
export type CompressFrame = (data: Buffer) => Promise<Buffer>;

/** Input bytes gathered before a frame is cut: bounds memory and keeps most of zstd's ratio. */
export const FRAME_INPUT_BYTES = 64 * 1024;

export const ZSTD_PACKAGE = '@mongodb-js/zstd';

function hasCompress(value: unknown): value is { compress: CompressFrame } {
  return typeof value === 'object' && value !== null && typeof (value as { compress?: unknown }).compress === 'function';
}

/** The package's one-shot compressor, or null when it (or its platform binary) cannot be loaded. */
export function loadCompressFrame(specifier: string = ZSTD_PACKAGE): CompressFrame | null {
  try {
    const loaded: unknown = createRequire(import.meta.url)(specifier);
    if (!hasCompress(loaded)) return null;
    const { compress } = loaded;
    // The package's compress uses zstd's default level 3 and runs on the libuv thread pool.
    return (data) => compress(data);
  } catch {
    return null;
  }
}

let cached: CompressFrame | null | undefined;

/** Loads the package on first use only (a route with compress on, a client preferring zstd); remembers failure. */
export function frameCompressor(): CompressFrame | null {
  if (cached === undefined) cached = loadCompressFrame();
  return cached;
}

/**
 * A Transform that emits independent zstd frames. Input is gathered until `frameInputBytes` are buffered, or
 * until the upstream goes quiet (nothing more arrived in this turn of the event loop), so a slowly streamed
 * response is not held back waiting for 64 KB. Frames are compressed one at a time, in order.
 */
export class ZstdFrameCompressor extends Transform {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private queue: Promise<void> = Promise.resolve();
  private idle: NodeJS.Immediate | null = null;
  private heldWrite: TransformCallback | null = null;

  constructor(
    private readonly compressFrame: CompressFrame,
    private readonly frameInputBytes: number = FRAME_INPUT_BYTES,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (chunk.length === 0) return callback();
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= this.frameInputBytes) {
      this.cancelIdle();
      this.cutFrame().then(() => callback(), (err: unknown) => callback(asError(err)));
      return;
    }
    if (this.idle === null) {
      this.idle = setImmediate(() => {
        this.idle = null;
        this.cutFrame().catch((err: unknown) => this.destroy(asError(err)));
      });
    }
    // Frames cut while idle are pushed outside _transform, so hold the writer while the reader is behind.
    if (this.readableLength >= this.readableHighWaterMark) this.heldWrite = callback;
    else callback();
  }

  override _read(size: number): void {
    const held = this.heldWrite;
    this.heldWrite = null;
    if (held !== null) held();
    super._read(size);
  }

  override _flush(callback: TransformCallback): void {
    this.cancelIdle();
    this.cutFrame().then(() => callback(), (err: unknown) => callback(asError(err)));
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.cancelIdle();
    this.pending = [];
    this.pendingBytes = 0;
    this.heldWrite = null;
    callback(error);
  }

  private cancelIdle(): void {
    if (this.idle !== null) clearImmediate(this.idle);
    this.idle = null;
  }

  /** Queues the buffered input as one frame; resolves once that frame (and all before it) is pushed. */
  private cutFrame(): Promise<void> {
    if (this.pendingBytes === 0) return this.queue;
    const input = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.queue = this.queue.then(async () => {
      const frame = await this.compressFrame(input);
      if (!this.destroyed) this.push(frame);
    });
    return this.queue;
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
