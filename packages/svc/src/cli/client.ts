// A small HTTP client for the API over node:http (no fetch: it keeps start-up fast). One place maps network
// failures to exit code 3 and non-2xx answers to the spec's error lines.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CliError, EXIT, httpError, type Target } from './errors.js';
import { records, type ApiRecord } from './output.js';

export interface ApiResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Parsed JSON when the content type says JSON; the text otherwise; undefined when empty. */
  body: unknown;
}

export type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  timeoutMs?: number;
  /** Wording of the error line on failure. */
  target: Target;
  /** Prefix of violation property paths in the error output (e.g. `deployments.web`). */
  violationPrefix?: string;
}

export function buildQuery(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      // The API accepts `key[]=a&key[]=b` or a single value.
      if (value.length === 1) params.append(key, value[0]!);
      else for (const item of value) params.append(`${key}[]`, item);
    } else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string | undefined,
    private readonly trace?: (line: string) => void,
  ) {}

  get hasToken(): boolean {
    return this.token !== undefined;
  }

  /** Sends one request; rejects only when the server cannot be reached (exit 3). */
  raw(method: string, path: string, options: { query?: Query; body?: unknown; timeoutMs?: number } = {}): Promise<ApiResponse> {
    const url = new URL(`${this.baseUrl}${path}${buildQuery(options.query)}`);
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    if (this.trace) this.trace(`> ${method} ${url.pathname}${url.search}${payload ? ` ${payload.toString()}` : ''}`);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const timeoutMs = options.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const req = send(url, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error) => reject(this.unreachable(error)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const type = res.headers['content-type'] ?? '';
          let body: unknown = text === '' ? undefined : text;
          if (text !== '' && type.includes('json')) {
            try {
              body = JSON.parse(text);
            } catch {
              body = text;
            }
          }
          this.trace?.(`< ${res.statusCode ?? 0}`);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      });
      req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: 'ETIMEDOUT' })));
      req.on('error', (error) => reject(this.unreachable(error)));
      req.end(payload);
    });
  }

  unreachable(error: Error): CliError {
    const code = (error as NodeJS.ErrnoException).code;
    return new CliError(`cannot reach the API at ${this.baseUrl}: ${code ?? error.message}`, EXIT.unreachable);
  }

  /** Sends a request and returns the body of a 2xx answer; any other status becomes the spec's CliError. */
  async call(method: string, path: string, options: RequestOptions): Promise<unknown> {
    const response = await this.raw(method, path, options);
    if (response.status >= 200 && response.status < 300) return response.body;
    const error = httpError(options.target, response.status, response.body, options.violationPrefix);
    if (response.status === 401 && !this.token) {
      throw new CliError(error.message, error.exitCode, [...error.details, "hint: no token for this context: run 'svc login' or set SVC_TOKEN"]);
    }
    throw error;
  }

  get(path: string, options: RequestOptions): Promise<unknown> {
    return this.call('GET', path, options);
  }
}

export const enc = encodeURIComponent;

/** The deployments of one namespace as the API lists them; an unknown namespace lists nothing. */
export async function listDeploymentsIn(client: ApiClient, namespace: string): Promise<ApiRecord[]> {
  return records(await client.get('/deployments', { query: { namespace }, target: { kind: 'deployments', name: namespace, list: true, namespace } }));
}
