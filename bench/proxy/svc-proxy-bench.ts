// Runs svc-proxy's data plane for the benchmark: `node --import tsx svc-proxy-bench.ts PORT BACKEND_PORT ROUTES WORKERS`.
// ROUTES exact hostnames h0.bench.test ... plus `bench.test`, the one wrk asks for.
import { createDataPlane } from '../../packages/proxy/src/dataplane/index.js';
import { LocalDataPlane } from '../../packages/proxy/src/dataplane/local.js';
import { createUpstreamRegistry } from '../../packages/proxy/src/upstream/registry.js';
import { defaultEntrypointConfig, type Entrypoint } from '../../packages/proxy/src/model/entrypoint.js';

const [port, backendPort, routes, workers] = process.argv.slice(2).map(Number);
if (port === undefined || backendPort === undefined || routes === undefined || workers === undefined) {
  process.stderr.write('usage: svc-proxy-bench.ts PORT BACKEND_PORT ROUTES WORKERS\n');
  process.exit(2);
}
const entrypoints: Entrypoint[] = [];
for (let i = 0; i < routes; i++) {
  const name = i === routes - 1 ? 'bench' : `r${i}`;
  entrypoints.push({
    id: `http_${name}`,
    name,
    protocol: 'Http',
    backends: [{ address: '127.0.0.1', port: backendPort, weight: 100 }],
    source: 'config',
    // Health checks every 60 s: all routes share one backend, and a check per route every 2 s (the default)
    // would measure the checker, not the route table.
    config: {
      ...defaultEntrypointConfig(),
      hostnames: [name === 'bench' ? 'bench.test' : `h${i}.bench.test`],
      health_check: { type: 'tcp', path: null, interval: 60_000, timeout: 1000, rise: 2, fall: 2 },
    },
  });
}
const options = {
  listeners: { http: { listen_address: `127.0.0.1:${port}` }, https: null, tcp: [], udp: [] },
  workers,
  trusted_proxies: [],
};
// NO_ACTIVE_CHECKS=1 (one process only) isolates the route table from one health checker per entrypoint.
const plane =
  process.env['NO_ACTIVE_CHECKS'] === '1' && workers <= 1
    ? new LocalDataPlane(options, createUpstreamRegistry({ activeChecks: false }), true)
    : createDataPlane(options);
plane.update(entrypoints);
await plane.start();
process.stdout.write(`svc-proxy listening on ${port} with ${routes} routes, workers=${workers}\n`);
process.on('SIGTERM', () => {
  plane.stop().then(() => process.exit(0), () => process.exit(1));
});
