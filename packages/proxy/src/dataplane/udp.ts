// UDP forwarding with flow affinity: datagrams from one client address:port form a flow bound to one backend
// (picked once through the pool) and one connected upstream socket; replies go back to the client from the
// listener's socket, so the client sees the address it sent to. Flows end after an idle timeout, and the
// number of flows is bounded (the least recently active one is evicted).
import { createSocket, type Socket as DgramSocket, type RemoteInfo } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { backendKey, parseListenAddress } from '../upstream/address.js';
import { failureReason, type BackendRef, type UpstreamPool } from '../upstream/contract.js';
import type { BoundAddress, L4Listener } from './tcp.js';

export interface UdpListenerOptions {
  /** A flow with no datagram either way for this long is closed (default 30000 ms, Linux conntrack's). */
  idleTimeoutMs?: number;
  /** Flows at once (default 4096); a new client beyond it evicts the least recently active flow. */
  maxFlows?: number;
  /** Datagrams held per flow while its upstream socket connects (default 64; more are dropped). */
  maxQueuedDatagrams?: number;
  onError?: (error: Error) => void;
}

export interface UdpListenerHandle {
  readonly name: string;
  address(): BoundAddress;
  activeFlows(): number;
  /** Closes the listener socket and every flow. */
  close(): Promise<void>;
}

interface Flow {
  client: RemoteInfo;
  backend: BackendRef;
  pool: UpstreamPool;
  upstream: DgramSocket;
  connected: boolean;
  queue: Buffer[];
  answered: boolean;
  idle: NodeJS.Timeout;
}

/** A socket closed under our feet (flow evicted, listener closing) only loses this datagram, as UDP may. */
function sendQuietly(send: () => void): void {
  try {
    send();
  } catch {
    // Dropped.
  }
}

export async function startUdpListener(
  listener: L4Listener,
  resolvePool: () => UpstreamPool | undefined,
  options: UdpListenerOptions = {},
): Promise<UdpListenerHandle> {
  const parsed = parseListenAddress(listener.listen_address);
  if (parsed === null) {
    throw new Error(`udp listener ${listener.name}: invalid listen_address "${listener.listen_address}"`);
  }
  const idleTimeoutMs = Math.max(1, options.idleTimeoutMs ?? 30_000);
  const maxFlows = Math.max(1, options.maxFlows ?? 4096);
  const maxQueued = Math.max(1, options.maxQueuedDatagrams ?? 64);
  const socket = createSocket({ type: isIPv6(parsed.host) ? 'udp6' : 'udp4' });
  // Map order doubles as recency order: a flow is moved to the end on every datagram.
  const flows = new Map<string, Flow>();

  const closeFlow = (key: string, flow: Flow): void => {
    if (flows.get(key) === flow) flows.delete(key);
    clearTimeout(flow.idle);
    flow.queue.length = 0;
    try {
      flow.upstream.close();
    } catch {
      // Already closed.
    }
  };

  const touch = (key: string, flow: Flow): void => {
    flow.idle.refresh();
    flows.delete(key);
    flows.set(key, flow);
  };

  const openFlow = (key: string, client: RemoteInfo): Flow | null => {
    const pool = resolvePool();
    const backend = pool?.pick() ?? null;
    if (pool === undefined || backend === null) return null;
    while (flows.size >= maxFlows) {
      const oldest = flows.entries().next();
      if (oldest.done) break;
      closeFlow(oldest.value[0], oldest.value[1]);
    }
    const upstream = createSocket({ type: isIPv6(backend.address) ? 'udp6' : 'udp4' });
    const idle = setTimeout(() => closeFlow(key, flow), idleTimeoutMs);
    idle.unref();
    const flow: Flow = { client, backend, pool, upstream, connected: false, queue: [], answered: false, idle };
    upstream.on('message', (reply) => {
      if (flows.get(key) !== flow) return;
      touch(key, flow);
      if (!flow.answered) {
        flow.answered = true;
        pool.reportSuccess(backend);
      }
      sendQuietly(() => socket.send(reply, client.port, client.address));
    });
    // ECONNREFUSED here is the ICMP port-unreachable of a connected UDP socket: nothing listens there.
    upstream.on('error', (error) => {
      pool.reportFailure(backend, failureReason(error));
      closeFlow(key, flow);
    });
    upstream.connect(backend.port, backend.address, () => {
      flow.connected = true;
      for (const datagram of flow.queue.splice(0)) sendQuietly(() => upstream.send(datagram));
    });
    flows.set(key, flow);
    return flow;
  };

  socket.on('message', (datagram, client) => {
    const key = backendKey(client.address, client.port);
    let flow = flows.get(key);
    if (flow) touch(key, flow);
    else flow = openFlow(key, client) ?? undefined;
    if (flow === undefined) return;
    const upstream = flow.upstream;
    if (flow.connected) sendQuietly(() => upstream.send(datagram));
    else if (flow.queue.length < maxQueued) flow.queue.push(datagram);
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      socket.close();
      reject(new Error(`udp listener ${listener.name}: cannot listen on ${listener.listen_address}: ${error.message}`));
    };
    socket.once('error', onError);
    socket.bind({ address: parsed.host, port: parsed.port }, () => {
      socket.off('error', onError);
      resolve();
    });
  });
  socket.on('error', (error) => options.onError?.(error));
  const bound = socket.address();

  return {
    name: listener.name,
    address: () => ({ address: bound.address, port: bound.port }),
    activeFlows: () => flows.size,
    close() {
      for (const [key, flow] of [...flows]) closeFlow(key, flow);
      return new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
