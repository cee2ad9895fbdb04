// svc-proxy's TCP forwarding in a process of its own, as it runs in production: prints its port, serves until killed.
import { createUpstreamRegistry } from '../../packages/proxy/src/upstream/registry.js';
import { startTcpListener } from '../../packages/proxy/src/dataplane/tcp.js';
import { defaultEntrypointConfig } from '../../packages/proxy/src/model/entrypoint.js';

const backendPort = Number(process.argv[2]);
const registry = createUpstreamRegistry({ activeChecks: false });
registry.sync([
  {
    id: 'tcp_bench',
    name: 'bench',
    protocol: 'Tcp',
    source: 'api',
    backends: [{ address: '127.0.0.1', port: backendPort, weight: 100 }],
    config: { ...defaultEntrypointConfig(), entrypoint: 'bench' },
  },
]);
const listener = await startTcpListener({ name: 'bench', listen_address: '127.0.0.1:0' }, () => registry.get('tcp_bench'));
process.stdout.write(`${listener.address().port}\n`);
