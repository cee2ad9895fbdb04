// TCP forwarding: each accepted connection is piped byte for byte to a backend of the pool that routes its
// listener. The pool is looked up per connection, so a route swap applies to new connections while the ones
// in flight keep their backend.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Entrypoint, Protocol } from '../model/entrypoint.js';
import { parseListenAddress } from '../upstream/address.js';
import { failureReason, type BackendRef, type FailureReason, type UpstreamPool } from '../upstream/contract.js';

export interface L4Listener {
  name: string;
  listen_address: string;
}

export interface BoundAddress {
  address: string;
  port: number;
}

export interface TcpListenerOptions {
  /** Per backend attempt (default 5000 ms). */
  connectTimeoutMs?: number;
  /** A connection with no traffic either way for this long is closed (default 600000 ms, nginx's; 0 = never). */
  idleTimeoutMs?: number;
  /** Distinct backends tried when connecting fails (default 3). */
  maxConnectAttempts?: number;
  /** Client connections at once; further ones are closed as soon as accepted (default 10000). */
  maxConnections?: number;
  /** Runtime errors that are not a client's or a backend's fault (e.g. accept failing with EMFILE). */
  onError?: (error: Error) => void;
}

export interface TcpListenerHandle {
  readonly name: string;
  /** The bound address (the real port when `listen_address` asked for port 0). */
  address(): BoundAddress;
  activeConnections(): number;
  /**
   * Stops accepting at once; connections in flight may finish within `drainMs` (default 5000), then are cut.
   * Resolves when every connection is gone.
   */
  close(drainMs?: number): Promise<void>;
}

/**
 * The entrypoint of `protocol` that routes the listener named `listenerName` (its `config.entrypoint`). When
 * several claim one listener (a collision the diagnostics report), the highest `priority` wins, then the
 * smallest id, so the choice is stable across reloads.
 */
export function findListenerEntrypoint(
  entrypoints: readonly Entrypoint[],
  protocol: Extract<Protocol, 'Tcp' | 'Udp'>,
  listenerName: string,
): Entrypoint | undefined {
  let best: Entrypoint | undefined;
  for (const candidate of entrypoints) {
    if (candidate.protocol !== protocol || candidate.config.entrypoint !== listenerName) continue;
    if (
      best === undefined ||
      candidate.config.priority > best.config.priority ||
      (candidate.config.priority === best.config.priority && candidate.id < best.id)
    ) {
      best = candidate;
    }
  }
  return best;
}

/** Binds and listens, or rejects (binding nothing) when the address is invalid or taken. */
export function listenServer(server: Server, listener: L4Listener): Promise<BoundAddress> {
  const parsed = parseListenAddress(listener.listen_address);
  if (parsed === null) {
    return Promise.reject(new Error(`tcp listener ${listener.name}: invalid listen_address "${listener.listen_address}"`));
  }
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => {
      reject(new Error(`tcp listener ${listener.name}: cannot listen on ${listener.listen_address}: ${error.message}`));
    };
    server.once('error', onError);
    server.listen({ host: parsed.host, port: parsed.port }, () => {
      server.off('error', onError);
      const bound = server.address();
      if (bound === null || typeof bound === 'string') resolve({ address: parsed.host, port: parsed.port });
      else resolve({ address: bound.address, port: bound.port });
    });
  });
}

function abort(socket: Socket): void {
  if (socket.destroyed) return;
  // A reset tells the peer the stream was cut, not completed; only possible once connected.
  if (socket.readyState === 'open' || socket.readyState === 'readOnly' || socket.readyState === 'writeOnly') {
    socket.resetAndDestroy();
  } else {
    socket.destroy();
  }
}

export async function startTcpListener(
  listener: L4Listener,
  resolvePool: () => UpstreamPool | undefined,
  options: TcpListenerOptions = {},
): Promise<TcpListenerHandle> {
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 600_000;
  const maxAttempts = Math.max(1, options.maxConnectAttempts ?? 3);
  const sockets = new Set<Socket>();
  let closing = false;
  let whenEmpty: (() => void) | null = null;

  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0) whenEmpty?.();
    });
  };

  const forward = (client: Socket): void => {
    track(client);
    client.on('error', () => undefined);
    const pool = resolvePool();
    if (pool === undefined || closing) {
      client.destroy();
      return;
    }
    const tried = new Set<string>();

    const attempt = (): void => {
      if (client.destroyed) return;
      const backend = tried.size < maxAttempts ? pool.pick(null, tried) : null;
      if (backend === null) {
        abort(client);
        return;
      }
      tried.add(backend.key);
      const upstream = connect({ host: backend.address, port: backend.port, allowHalfOpen: true });
      track(upstream);
      let settled = false;
      const fail = (reason: FailureReason): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        client.off('close', cancel);
        upstream.destroy();
        pool.reportFailure(backend, reason);
        attempt();
      };
      const cancel = (): void => {
        settled = true;
        clearTimeout(timer);
        upstream.destroy();
      };
      const timer = setTimeout(() => fail('timeout'), connectTimeoutMs);
      client.once('close', cancel);
      upstream.once('error', (error) => fail(failureReason(error)));
      upstream.once('connect', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        client.off('close', cancel);
        pool.reportSuccess(backend);
        splice(client, upstream, backend);
      });
    };
    attempt();
  };

  const splice = (client: Socket, upstream: Socket, _backend: BackendRef): void => {
    upstream.removeAllListeners('error');
    // An error on one side cuts the other; a clean end is passed on by pipe() as a half-close, and each socket
    // closes itself once both of its directions are done, after flushing what is buffered.
    client.on('error', () => abort(upstream));
    upstream.on('error', () => abort(client));
    client.once('close', (hadError) => {
      if (hadError || !client.readableEnded) abort(upstream);
    });
    upstream.once('close', (hadError) => {
      if (hadError || !upstream.readableEnded) abort(client);
    });
    if (idleTimeoutMs > 0) {
      const idle = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.setTimeout(idleTimeoutMs, idle);
      upstream.setTimeout(idleTimeoutMs, idle);
    }
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, forward);
  server.maxConnections = options.maxConnections ?? 10_000;
  const bound = await listenServer(server, listener);
  server.on('error', (error) => options.onError?.(error));

  return {
    name: listener.name,
    address: () => bound,
    activeConnections: () => sockets.size,
    close(drainMs = 5000) {
      closing = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      const drained = new Promise<void>((resolve) => {
        if (sockets.size === 0) return resolve();
        const deadline = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, drainMs);
        whenEmpty = () => {
          clearTimeout(deadline);
          resolve();
        };
      });
      return Promise.all([stopped, drained]).then(() => undefined);
    },
  };
}
