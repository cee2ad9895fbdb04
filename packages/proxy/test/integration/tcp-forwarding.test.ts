import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { startTcpListener, findListenerEntrypoint, type TcpListenerHandle } from '../../src/dataplane/tcp.js';
import { createUpstreamRegistry } from '../../src/upstream/registry.js';
import type { UpstreamPool } from '../../src/upstream/contract.js';
import {
  blackholePort,
  closed,
  deadPort,
  dial,
  echoServer,
  entrypoint,
  namedServer,
  readBytes,
  readLine,
  sha256,
  sleep,
  tcpServer,
  waitFor,
} from './upstream-net-helpers.js';

const LISTENER = { name: 'db', listen_address: '127.0.0.1:0' };

async function proxyTo(ports: number[], options: Parameters<typeof startTcpListener>[2] = {}) {
  const registry = createUpstreamRegistry({ activeChecks: false });
  const ep = entrypoint('Tcp', 'db', ports, { listener: 'db' });
  registry.sync([ep]);
  const listener = await startTcpListener(LISTENER, () => registry.get(ep.id), options);
  const pool = registry.get(ep.id);
  assert.ok(pool);
  return { registry, listener, pool, port: listener.address().port };
}

test('bytes pass exactly both ways: 8 MB random through an echo backend', async () => {
  const backend = await echoServer();
  const { registry, listener, port } = await proxyTo([backend.port]);
  try {
    const payload = randomBytes(8 * 1024 * 1024);
    const client = await dial(port);
    const echoed = readBytes(client, payload.length);
    client.end(payload);
    const received = await echoed;
    assert.equal(received.length, payload.length);
    assert.equal(sha256(received), sha256(payload));
    await closed(client);
  } finally {
    await listener.close(100);
    registry.stop();
    await backend.close();
  }
});

test('backpressure: a slow reader holds the backend back instead of the proxy buffering everything', async () => {
  const size = 64 * 1024 * 1024;
  const payload = randomBytes(size);
  let origin: Socket | undefined;
  const backend = await tcpServer((socket) => {
    origin = socket;
    socket.end(payload);
  });
  const { registry, listener, port } = await proxyTo([backend.port]);
  try {
    const client = await dial(port);
    client.pause();
    await waitFor(() => origin !== undefined, 2000, 'backend connection');
    await sleep(400);
    const pending = origin?.writableLength ?? 0;
    assert.ok(pending > size / 2, `backend still holds ${pending} bytes while the client does not read`);
    // Now read slowly, in small steps, and check every byte.
    const chunks: Buffer[] = [];
    let reads = 0;
    client.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (++reads % 64 === 0) {
        client.pause();
        setTimeout(() => client.resume(), 1);
      }
    });
    client.resume();
    await new Promise((resolve) => client.once('end', resolve));
    assert.equal(sha256(Buffer.concat(chunks)), sha256(payload));
    client.destroy();
  } finally {
    await listener.close(100);
    registry.stop();
    await backend.close();
  }
});

test('half-close: the client ends its side and still receives the backend\'s answer', async () => {
  const backend = await tcpServer((socket) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => {
      setTimeout(() => socket.end(`got:${Buffer.concat(chunks).toString()}`), 30);
    });
  });
  const { registry, listener, port } = await proxyTo([backend.port]);
  try {
    const client = await dial(port);
    client.end('hello');
    const answer = await readBytes(client, 1024);
    assert.equal(answer.toString(), 'got:hello');
    await closed(client);
    await waitFor(() => listener.activeConnections() === 0, 2000, 'proxy sockets to close');
  } finally {
    await listener.close(100);
    registry.stop();
    await backend.close();
  }
});

test('the backend closing first reaches the client after its data', async () => {
  const backend = await tcpServer((socket) => socket.end('bye'));
  const { registry, listener, port } = await proxyTo([backend.port]);
  try {
    const client = await dial(port);
    assert.equal((await readBytes(client, 100)).toString(), 'bye');
    client.end();
    await closed(client);
  } finally {
    await listener.close(100);
    registry.stop();
    await backend.close();
  }
});

test('connections are balanced round robin across two backends by weight', async () => {
  const a = await namedServer('a');
  const b = await namedServer('b');
  const registry = createUpstreamRegistry({ activeChecks: false });
  const ep = entrypoint('Tcp', 'db', [a.port, b.port], { listener: 'db', weights: [2, 1] });
  registry.sync([ep]);
  const listener = await startTcpListener(LISTENER, () => registry.get(ep.id));
  try {
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      const client = await dial(listener.address().port);
      names.push(await readLine(client));
      client.destroy();
    }
    assert.deepEqual(names, ['a', 'b', 'a', 'a', 'b', 'a']);
  } finally {
    await listener.close(100);
    registry.stop();
    await a.close();
    await b.close();
  }
});

test('a dead backend is skipped: the connection is retried on another and the dead one is marked', async () => {
  const dead = await deadPort();
  const live = await namedServer('live');
  const { registry, listener, pool, port } = await proxyTo([dead, live.port]);
  try {
    for (let i = 0; i < 4; i++) {
      const client = await dial(port);
      assert.equal(await readLine(client), 'live');
      client.destroy();
    }
    assert.deepEqual(pool.unhealthy(), [`127.0.0.1:${dead}`]);
  } finally {
    await listener.close(100);
    registry.stop();
    await live.close();
  }
});

test('a backend that never completes the handshake is abandoned after the connect timeout', async () => {
  const hole = await blackholePort();
  const live = await namedServer('live');
  const { registry, listener, pool, port } = await proxyTo([hole.port, live.port], { connectTimeoutMs: 150 });
  try {
    const started = Date.now();
    const client = await dial(port);
    assert.equal(await readLine(client), 'live');
    const waited = Date.now() - started;
    assert.ok(waited >= 140 && waited < 2000, `waited ${waited} ms`);
    client.destroy();
    assert.deepEqual(pool.unhealthy(), [], 'one timeout alone does not mark the backend');
  } finally {
    await listener.close(100);
    registry.stop();
    hole.close();
    await live.close();
  }
});

test('when every backend is dead the client is cut, and nothing leaks', async () => {
  const { registry, listener, pool, port } = await proxyTo([await deadPort(), await deadPort()]);
  try {
    const client = await dial(port);
    await closed(client);
    assert.equal(pool.unhealthy().length, 2);
    await waitFor(() => listener.activeConnections() === 0, 2000, 'no sockets left');
  } finally {
    await listener.close(100);
    registry.stop();
  }
});

test('a listener without a route closes connections at once', async () => {
  const listener = await startTcpListener(LISTENER, () => undefined);
  try {
    const client = await dial(listener.address().port);
    await closed(client);
  } finally {
    await listener.close(100);
  }
});

test('route swaps apply to new connections while open ones keep their backend', async () => {
  const a = await namedServer('a');
  const b = await namedServer('b');
  const registry = createUpstreamRegistry({ activeChecks: false });
  registry.sync([entrypoint('Tcp', 'one', [a.port], { listener: 'db' }), entrypoint('Tcp', 'two', [b.port])]);
  let route = 'tcp_one';
  const listener = await startTcpListener(LISTENER, (): UpstreamPool | undefined => registry.get(route));
  try {
    const first = await dial(listener.address().port);
    assert.equal(await readLine(first), 'a');
    route = 'tcp_two';
    const second = await dial(listener.address().port);
    assert.equal(await readLine(second), 'b');
    first.write('still-a\n');
    assert.equal(await readLine(first), 'still-a');
    first.destroy();
    second.destroy();
  } finally {
    await listener.close(100);
    registry.stop();
    await a.close();
    await b.close();
  }
});

test('idle connections are closed after the idle timeout; active ones are not', async () => {
  const backend = await echoServer();
  const { registry, listener, port } = await proxyTo([backend.port], { idleTimeoutMs: 150 });
  try {
    const busy = await dial(port);
    const idle = await dial(port);
    const started = Date.now();
    const idleClosed = closed(idle);
    for (let i = 0; i < 5; i++) {
      busy.write('x');
      assert.equal((await readBytes(busy, 1)).toString(), 'x');
      await sleep(60);
    }
    await idleClosed;
    assert.ok(Date.now() - started >= 140);
    assert.equal(busy.destroyed, false, 'the busy connection survived 300 ms of traffic');
    busy.destroy();
  } finally {
    await listener.close(100);
    registry.stop();
    await backend.close();
  }
});

test('close stops accepting, lets connections drain, and cuts them at the deadline', async () => {
  const backend = await echoServer();
  const { registry, listener, port } = await proxyTo([backend.port]);
  try {
    const client = await dial(port);
    client.write('ping');
    assert.equal((await readBytes(client, 4)).toString(), 'ping');
    const started = Date.now();
    const closing = listener.close(200);
    await sleep(20);
    await assert.rejects(dial(port), /ECONNREFUSED/);
    client.write('pong');
    assert.equal((await readBytes(client, 4)).toString(), 'pong', 'still served while draining');
    await closing;
    assert.ok(Date.now() - started >= 190, 'waited for the drain deadline');
    await closed(client);
    assert.equal(listener.activeConnections(), 0);
  } finally {
    registry.stop();
    await backend.close();
  }
});

test('binding a taken or invalid address rejects', async () => {
  const first = await startTcpListener(LISTENER, () => undefined);
  try {
    const taken = { name: 'x', listen_address: `127.0.0.1:${first.address().port}` };
    await assert.rejects(startTcpListener(taken, () => undefined), /cannot listen/);
    await assert.rejects(startTcpListener({ name: 'y', listen_address: 'nope' }, () => undefined), /invalid listen_address/);
  } finally {
    await first.close(10);
  }
});

test('the route of a listener is the Tcp entrypoint naming it; priority then id break ties', () => {
  const low = entrypoint('Tcp', 'b', [1], { listener: 'db' });
  const high = { ...entrypoint('Tcp', 'c', [1], { listener: 'db' }) };
  high.config = { ...high.config, priority: 5 };
  const other = entrypoint('Tcp', 'a', [1], { listener: 'cache' });
  const udp = entrypoint('Udp', 'a', [1], { listener: 'db' });
  assert.equal(findListenerEntrypoint([low, other, udp], 'Tcp', 'db')?.id, 'tcp_b');
  assert.equal(findListenerEntrypoint([low, high, other], 'Tcp', 'db')?.id, 'tcp_c');
  assert.equal(findListenerEntrypoint([low, entrypoint('Tcp', 'a2', [1], { listener: 'db' })], 'Tcp', 'db')?.id, 'tcp_a2');
  assert.equal(findListenerEntrypoint([other], 'Tcp', 'db'), undefined);
  assert.equal(findListenerEntrypoint([udp], 'Udp', 'db')?.id, 'udp_a');
});

export type { TcpListenerHandle };
