// createDataPlane wires P3's TCP and UDP forwarders to the listeners and to the entrypoints that name them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import dgram from 'node:dgram';
import { createDataPlane } from '../../src/dataplane/index.js';
import { defaultEntrypointConfig, type Entrypoint } from '../../src/model/entrypoint.js';

function l4(protocol: 'Tcp' | 'Udp', name: string, listener: string, port: number): Entrypoint {
  return {
    id: `${protocol.toLowerCase()}_${name}`,
    name,
    protocol,
    backends: [{ address: '127.0.0.1', port, weight: 100 }],
    source: 'api',
    config: { ...defaultEntrypointConfig(), entrypoint: listener },
  };
}

for (const workers of [1, 2]) {
  test(`tcp and udp listeners forward to the entrypoint naming them (workers=${workers})`, async () => {
    const tcpEcho = net.createServer((s) => s.on('data', (d) => s.write(Buffer.concat([Buffer.from('tcp:'), d]))));
    await new Promise<void>((r) => tcpEcho.listen(0, '127.0.0.1', r));
    const udpEcho = dgram.createSocket('udp4');
    udpEcho.on('message', (msg, rinfo) => udpEcho.send(Buffer.concat([Buffer.from('udp:'), msg]), rinfo.port, rinfo.address));
    await new Promise<void>((r) => udpEcho.bind(0, '127.0.0.1', r));
    const plane = createDataPlane({
      listeners: {
        http: null,
        https: null,
        tcp: [{ name: 'db', listen_address: '127.0.0.1:0' }],
        udp: [{ name: 'dns', listen_address: '127.0.0.1:0' }],
      },
      workers,
      trusted_proxies: [],
    });
    plane.update([
      l4('Tcp', 'db', 'db', (tcpEcho.address() as AddressInfo).port),
      l4('Udp', 'dns', 'dns', (udpEcho.address() as AddressInfo).port),
    ]);
    const client = dgram.createSocket('udp4');
    try {
      await plane.start();
      const bound = plane.addresses();
      const tcpPort = bound.tcp['db']?.port as number;
      const udpPort = bound.udp['dns']?.port as number;
      const tcpReply = await new Promise<string>((resolve, reject) => {
        const s = net.connect(tcpPort, '127.0.0.1', () => s.write('hi'));
        s.on('data', (d) => {
          resolve(d.toString());
          s.destroy();
        });
        s.on('error', reject);
      });
      assert.equal(tcpReply, 'tcp:hi');
      const udpReply = await new Promise<string>((resolve) => {
        client.on('message', (m) => resolve(m.toString()));
        client.send('q', udpPort, '127.0.0.1');
      });
      assert.equal(udpReply, 'udp:q');
    } finally {
      client.close();
      await plane.stop();
      tcpEcho.close();
      udpEcho.close();
    }
  });
}
