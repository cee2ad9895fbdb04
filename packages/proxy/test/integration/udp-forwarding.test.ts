import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { startUdpListener, type UdpListenerOptions } from '../../src/dataplane/udp.js';
import { createUpstreamRegistry } from '../../src/upstream/registry.js';
import { entrypoint, sleep, waitFor } from './upstream-net-helpers.js';

interface UdpPeer {
  socket: DgramSocket;
  port: number;
  close(): Promise<void>;
}

async function bindUdp(onMessage?: (socket: DgramSocket, msg: Buffer, port: number, address: string) => void): Promise<UdpPeer> {
  const socket = createSocket('udp4');
  if (onMessage) socket.on('message', (msg, rinfo) => onMessage(socket, msg, rinfo.port, rinfo.address));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return { socket, port: socket.address().port, close: () => new Promise((resolve) => socket.close(() => resolve())) };
}

/** Replies `<name>:<datagram>` to the sender. */
const udpEcho = (name: string): Promise<UdpPeer> =>
  bindUdp((socket, msg, port, address) => socket.send(Buffer.concat([Buffer.from(`${name}:`), msg]), port, address));

/** Sends and waits for one reply, checking it comes from the listener's address. */
async function ask(client: UdpPeer, port: number, message: string | Buffer, timeoutMs = 1000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.socket.off('message', onMessage);
      reject(new Error('no reply'));
    }, timeoutMs);
    const onMessage = (reply: Buffer, rinfo: { port: number; address: string }): void => {
      clearTimeout(timer);
      client.socket.off('message', onMessage);
      try {
        assert.equal(rinfo.port, port, 'reply comes from the listener port');
        assert.equal(rinfo.address, '127.0.0.1');
        resolve(reply);
      } catch (error) {
        reject(error);
      }
    };
    client.socket.on('message', onMessage);
    client.socket.send(message, port, '127.0.0.1');
  });
}

async function setup(backendPorts: number[], options: UdpListenerOptions = {}) {
  const registry = createUpstreamRegistry({ activeChecks: false });
  const ep = entrypoint('Udp', 'dns', backendPorts, { listener: 'dns' });
  registry.sync([ep]);
  const listener = await startUdpListener({ name: 'dns', listen_address: '127.0.0.1:0' }, () => registry.get(ep.id), options);
  const pool = registry.get(ep.id);
  assert.ok(pool);
  return { registry, listener, pool, port: listener.address().port };
}

test('a datagram round trip goes through the proxy byte for byte, up to 60 kB', async () => {
  const backend = await udpEcho('a');
  const client = await bindUdp();
  const { registry, listener, port } = await setup([backend.port]);
  try {
    assert.equal((await ask(client, port, 'hello')).toString(), 'a:hello');
    const big = randomBytes(60_000);
    const reply = await ask(client, port, big);
    assert.ok(reply.subarray(2).equals(big));
    assert.equal(listener.activeFlows(), 1);
  } finally {
    await listener.close();
    registry.stop();
    await client.close();
    await backend.close();
  }
});

test('flow affinity: one client sticks to one backend; the next client gets the next backend', async () => {
  const a = await udpEcho('a');
  const b = await udpEcho('b');
  const first = await bindUdp();
  const second = await bindUdp();
  const { registry, listener, port } = await setup([a.port, b.port]);
  try {
    const firstReplies = new Set<string>();
    const secondReplies = new Set<string>();
    for (let i = 0; i < 5; i++) {
      firstReplies.add((await ask(first, port, `x${i}`)).toString().split(':')[0] ?? '');
      secondReplies.add((await ask(second, port, `y${i}`)).toString().split(':')[0] ?? '');
    }
    assert.deepEqual([...firstReplies], ['a']);
    assert.deepEqual([...secondReplies], ['b']);
    assert.equal(listener.activeFlows(), 2);
  } finally {
    await listener.close();
    registry.stop();
    await Promise.all([first.close(), second.close(), a.close(), b.close()]);
  }
});

test('idle flows expire; the client\'s next datagram opens a new flow', async () => {
  const a = await udpEcho('a');
  const b = await udpEcho('b');
  const client = await bindUdp();
  const { registry, listener, port } = await setup([a.port, b.port], { idleTimeoutMs: 80 });
  try {
    assert.equal((await ask(client, port, '1')).toString(), 'a:1');
    await sleep(40);
    assert.equal((await ask(client, port, '2')).toString(), 'a:2', 'activity keeps the flow');
    await waitFor(() => listener.activeFlows() === 0, 2000, 'flow expiry');
    assert.equal((await ask(client, port, '3')).toString(), 'b:3', 'a new flow is balanced afresh');
  } finally {
    await listener.close();
    registry.stop();
    await Promise.all([client.close(), a.close(), b.close()]);
  }
});

test('the number of flows is bounded: the least recently active flow is evicted', async () => {
  const backend = await udpEcho('a');
  const clients = [await bindUdp(), await bindUdp(), await bindUdp()];
  const { registry, listener, port } = await setup([backend.port], { maxFlows: 2 });
  try {
    for (const client of clients) await ask(client, port, 'hi');
    assert.equal(listener.activeFlows(), 2);
    assert.equal((await ask(clients[0] as UdpPeer, port, 'back')).toString(), 'a:back', 'an evicted client is served by a new flow');
    assert.equal(listener.activeFlows(), 2);
  } finally {
    await listener.close();
    registry.stop();
    await Promise.all([...clients.map((c) => c.close()), backend.close()]);
  }
});

test('a backend answering with port unreachable is reported; later flows avoid it', async () => {
  const gone = await bindUdp();
  await gone.close();
  const live = await udpEcho('live');
  const { registry, listener, pool, port } = await setup([gone.port, live.port]);
  const client = await bindUdp();
  const other = await bindUdp();
  try {
    await assert.rejects(ask(client, port, 'lost', 300), /no reply/);
    await waitFor(() => pool.unhealthy().length === 1, 2000, 'refusal to be reported');
    assert.deepEqual(pool.unhealthy(), [`127.0.0.1:${gone.port}`]);
    assert.equal((await ask(client, port, 'again')).toString(), 'live:again');
    assert.equal((await ask(other, port, 'new')).toString(), 'live:new');
  } finally {
    await listener.close();
    registry.stop();
    await Promise.all([client.close(), other.close(), live.close()]);
  }
});

test('without a route datagrams are dropped; close ends every flow and the socket', async () => {
  const backend = await udpEcho('a');
  const client = await bindUdp();
  const noRoute = await startUdpListener({ name: 'none', listen_address: '127.0.0.1:0' }, () => undefined);
  const { registry, listener, port } = await setup([backend.port]);
  try {
    await assert.rejects(ask(client, noRoute.address().port, 'x', 200), /no reply/);
    assert.equal(noRoute.activeFlows(), 0);
    await ask(client, port, 'x');
    await listener.close();
    assert.equal(listener.activeFlows(), 0);
    await assert.rejects(ask(client, port, 'y', 200), /no reply/);
    await assert.rejects(
      startUdpListener({ name: 'bad', listen_address: `127.0.0.1:${noRoute.address().port}` }, () => undefined),
      /cannot listen/,
    );
  } finally {
    await noRoute.close();
    registry.stop();
    await Promise.all([client.close(), backend.close()]);
  }
});
