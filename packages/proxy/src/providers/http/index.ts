// The `http` provider: polls a URL that answers a JSON array of entrypoints (the API body shape).
// A failing endpoint keeps the last good set in service and raises W004 until it answers again.
import { diagnostic, scoped } from '../../diagnostics/diagnostic.js';
import { normalizeDefinitions, redactUrl, type Provider, type ProviderState } from '../provider.js';

export interface HttpProviderOptions {
  url: string;
  /** Seconds between polls. */
  pollInterval: number;
  /** Seconds before a poll is abandoned. */
  timeout: number;
  /** Sent with every poll (e.g. Authorization); never logged or shown. */
  headers: Record<string, string>;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;

class PollError extends Error {}

export class HttpProvider implements Provider {
  readonly name = 'http' as const;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: AbortController | null = null;
  private lastBody: string | null = null;
  private lastGood: ProviderState = { entrypoints: [], diagnostics: [] };
  private failing = false;
  private stopped = false;
  private current: Promise<void> = Promise.resolve();

  constructor(private readonly options: HttpProviderOptions) {}

  async start(emit: (state: ProviderState) => void): Promise<void> {
    const loop = async (): Promise<void> => {
      await this.pollOnce(emit);
      if (!this.stopped) this.timer = setTimeout(() => void (this.current = loop()), this.options.pollInterval * 1000);
    };
    this.current = loop();
    await this.current;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.inFlight?.abort();
    await this.current.catch(() => undefined);
  }

  private async pollOnce(emit: (state: ProviderState) => void): Promise<void> {
    let body: string;
    try {
      body = await this.fetchBody();
    } catch (error) {
      if (!this.stopped) this.fail(emit, error instanceof PollError ? error.message : describeFetchError(error, this.options.timeout));
      return;
    }
    if (this.stopped) return;
    if (body === this.lastBody && !this.failing) return; // unchanged: nothing to apply
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (error) {
      return this.fail(emit, `body is not JSON (${error instanceof Error ? error.message : 'parse error'})`);
    }
    if (!Array.isArray(parsed)) return this.fail(emit, 'body must be a JSON array of entrypoints');
    this.lastBody = body;
    this.failing = false;
    this.lastGood = normalizeDefinitions(parsed, { source: 'http', origin: redactUrl(this.options.url), listPath: [] });
    emit(this.lastGood);
  }

  /** The last good set stays in service; W004 says why the endpoint is not trusted right now. */
  private fail(emit: (state: ProviderState) => void, reason: string): void {
    this.failing = true;
    this.lastBody = null;
    const message = `http provider: ${redactUrl(this.options.url)}: ${reason}; keeping the last good set (${this.lastGood.entrypoints.length} entrypoints)`;
    emit({
      entrypoints: this.lastGood.entrypoints,
      diagnostics: [...this.lastGood.diagnostics, scoped(null, diagnostic('W004', message, { label: 'providers.http.url' }))],
    });
  }

  private async fetchBody(): Promise<string> {
    const controller = new AbortController();
    this.inFlight = controller;
    const timer = setTimeout(() => controller.abort(new PollError(`no answer within ${this.options.timeout} s`)), this.options.timeout * 1000);
    try {
      const response = await fetch(this.options.url, {
        headers: { accept: 'application/json', ...this.options.headers },
        signal: controller.signal,
        redirect: 'follow',
      });
      if (response.status < 200 || response.status > 299) {
        await response.body?.cancel().catch(() => undefined);
        throw new PollError(`answered HTTP ${response.status}`);
      }
      const declared = Number(response.headers.get('content-length') ?? '0');
      if (declared > MAX_BODY_BYTES) {
        await response.body?.cancel().catch(() => undefined);
        throw new PollError(`body larger than ${MAX_BODY_BYTES} bytes`);
      }
      return await readLimited(response, MAX_BODY_BYTES);
    } catch (error) {
      if (controller.signal.aborted && controller.signal.reason instanceof PollError) throw controller.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      this.inFlight = null;
    }
  }
}

async function readLimited(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > limit) throw new PollError(`body larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeFetchError(error: unknown, timeout: number): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return `no answer within ${timeout} s`;
    const cause = (error as Error & { cause?: unknown }).cause;
    if (cause instanceof Error && 'code' in cause) return `cannot connect (${String(cause.code)})`;
    if (cause instanceof Error) return `${error.message} (${cause.message})`;
    return error.message;
  }
  return String(error);
}
