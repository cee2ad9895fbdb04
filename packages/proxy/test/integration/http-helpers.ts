// Real sockets on 127.0.0.1: backends, a data plane, and a raw client for what http.request refuses to send.
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createDataPlane, type DataPlaneHandle } from '../../src/dataplane/index.js';
import { defaultEntrypointConfig, type Entrypoint, type EntrypointConfig } from '../../src/model/entrypoint.js';

export interface Backend {
  server: http.Server;
  port: number;
  requests: { method: string; url: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** A backend that records requests; `handler` answers them (default: 200 with its own name). */
export async function startBackend(
  name: string,
  handler?: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Backend> {
  const requests: Backend['requests'] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    if (handler !== undefined) return handler(req, res);
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain', 'x-backend': name });
    res.end(name);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (bound, then closed). */
export async function deadPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

export function route(name: string, ports: number[], config: Partial<EntrypointConfig> = {}): Entrypoint {
  return {
    id: `http_${name}`,
    name,
    protocol: 'Http',
    backends: ports.map((port) => ({ address: '127.0.0.1', port, weight: 100 })),
    source: 'api',
    config: { ...defaultEntrypointConfig(), ...config },
  };
}

export interface Proxy {
  plane: DataPlaneHandle;
  port: number;
  stop(): Promise<void>;
}

export async function startProxy(entrypoints: Entrypoint[], trusted: string[] = []): Promise<Proxy> {
  const plane = createDataPlane({
    listeners: { http: { listen_address: '127.0.0.1:0' }, https: null, tcp: [], udp: [] },
    workers: 1,
    trusted_proxies: trusted,
  });
  plane.update(entrypoints);
  await plane.start();
  const port = plane.addresses().http?.port;
  if (port === undefined) throw new Error('no http listener');
  return { plane, port, stop: () => plane.stop() };
}

export interface Result {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export function request(
  port: number,
  options: { host?: string; path?: string; method?: string; headers?: Record<string, string | string[]>; body?: string | Buffer; localAddress?: string } = {},
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: { host: options.host ?? 'app.test', ...options.headers },
        agent: false,
        localAddress: options.localAddress,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Sends raw bytes and returns everything the server writes until it closes (or `ms` pass). */
export function raw(port: number, payload: string, ms = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      if (chunks.length > 0) resolve(Buffer.concat(chunks).toString('latin1'));
      else reject(err);
    });
    socket.write(payload);
  });
}

export function sha256hex(text: string): Promise<string> {
  return import('node:crypto').then((c) => c.createHash('sha256').update(text).digest('hex'));
}
