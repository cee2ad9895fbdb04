// Real sockets on 127.0.0.1 for the upstream, TCP and UDP tests. Every server returned here must be closed.
import { createServer, connect, type Server, type Socket, type AddressInfo } from 'node:net';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createHash } from 'node:crypto';
import { defaultEntrypointConfig, type Entrypoint, type HealthCheckConfig } from '../../src/model/entrypoint.js';

export interface TestServer {
  port: number;
  /** Sockets accepted so far. */
  accepted: Socket[];
  close(): Promise<void>;
}

export async function tcpServer(onConnection: (socket: Socket) => void, port = 0): Promise<TestServer> {
  const accepted: Socket[] = [];
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    accepted.push(socket);
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of accepted) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export const echoServer = (port = 0): Promise<TestServer> => tcpServer((socket) => socket.pipe(socket), port);

/** Says its name on connect, then echoes. */
export const namedServer = (name: string, port = 0): Promise<TestServer> =>
  tcpServer((socket) => {
    socket.write(`${name}\n`);
    socket.pipe(socket);
  }, port);

export async function httpServer(status: () => number, port = 0): Promise<{ port: number; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server: HttpServer = createHttpServer((req, res) => {
    hits++;
    res.statusCode = status();
    res.end(req.url ?? '');
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (bound then released). */
export async function deadPort(): Promise<number> {
  const server = await tcpServer(() => undefined);
  await server.close();
  return server.port;
}

export function dial(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Reads exactly `bytes` bytes (fewer only when the stream ends first), leaving the rest in the socket. */
export function readBytes(socket: Socket, bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const done = (): void => {
      socket.off('readable', onReadable);
      socket.off('end', done);
      socket.off('error', reject);
      resolve(Buffer.concat(chunks));
    };
    const onReadable = (): void => {
      while (length < bytes) {
        const want = Math.min(bytes - length, socket.readableLength);
        if (want === 0) break;
        const chunk: Buffer | null = socket.read(want);
        if (chunk === null) break;
        chunks.push(chunk);
        length += chunk.length;
      }
      if (length >= bytes) done();
    };
    socket.on('readable', onReadable);
    socket.once('end', done);
    socket.once('error', reject);
    onReadable();
  });
}

export async function readLine(socket: Socket): Promise<string> {
  let line = '';
  for (;;) {
    const byte = await readBytes(socket, 1);
    if (byte.length === 0 || byte.toString() === '\n') return line;
    line += byte.toString();
  }
}

/** Resolves once the peer ended or reset the connection and the socket closed (our side ends in answer). */
export function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve();
    socket.once('close', () => resolve());
    socket.once('end', () => socket.end());
    socket.on('error', () => undefined);
    if (socket.readableEnded) socket.end();
    socket.resume();
  });
}

export const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(condition: () => boolean, timeoutMs = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

export function entrypoint(
  protocol: Entrypoint['protocol'],
  name: string,
  ports: number[],
  extra: { listener?: string; health_check?: HealthCheckConfig | null; weights?: number[] } = {},
): Entrypoint {
  return {
    id: `${protocol.toLowerCase()}_${name}`,
    name,
    protocol,
    source: 'api',
    backends: ports.map((port, i) => ({ address: '127.0.0.1', port, weight: extra.weights?.[i] ?? 100 })),
    config: { ...defaultEntrypointConfig(), entrypoint: extra.listener ?? null, health_check: extra.health_check ?? null },
  };
}

/**
 * A port whose TCP handshakes never complete: a child process listens with a backlog of 1 and blocks its event
 * loop; two connections fill its accept queue, so the kernel drops further SYNs.
 */
export async function blackholePort(): Promise<{ port: number; close(): void }> {
  const { spawn } = await import('node:child_process');
  const script = `
    const server = require('node:net').createServer();
    server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
      process.stdout.write(server.address().port + '\\n', () => {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20000);
        process.exit(0);
      });
    });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (data: Buffer) => resolve(Number(data.toString().trim())));
    child.once('error', reject);
  });
  await sleep(50);
  const fillers: Socket[] = [];
  for (let i = 0; i < 2; i++) {
    const filler = connect({ host: '127.0.0.1', port });
    filler.on('error', () => undefined);
    fillers.push(filler);
    await new Promise((resolve) => filler.once('connect', resolve));
  }
  return {
    port,
    close: () => {
      for (const filler of fillers) filler.destroy();
      child.kill('SIGKILL');
    },
  };
}
