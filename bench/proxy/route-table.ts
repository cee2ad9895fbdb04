// Route lookup cost, 10 vs 10,000 exact hostnames (plus wildcard and host-less routes in both tables), in
// process: node --import tsx bench/proxy/route-table.ts. Interleaved rounds, best of each, so machine noise
// (other work on the box) hits both sides alike.
import { compileRouteTable } from '../../packages/proxy/src/routing/table.js';
import { defaultEntrypointConfig, type Entrypoint } from '../../packages/proxy/src/model/entrypoint.js';

function table(hosts: number) {
  const eps: Entrypoint[] = [];
  for (let i = 0; i < hosts; i++) {
    eps.push({
      id: `http_r${i}`,
      name: `r${i}`,
      protocol: 'Http',
      backends: [{ address: '127.0.0.1', port: 1, weight: 100 }],
      source: 'config',
      config: { ...defaultEntrypointConfig(), hostnames: [`h${i}.bench.test`], path: { rule_type: 'Prefix', value: '/api' } },
    });
  }
  eps.push({
    id: 'http_wild',
    name: 'wild',
    protocol: 'Http',
    backends: [{ address: '127.0.0.1', port: 1, weight: 100 }],
    source: 'config',
    config: { ...defaultEntrypointConfig(), hostnames: ['*.bench.test'] },
  });
  return compileRouteTable(eps, (e) => e.id);
}

const N = 1_000_000;
const small = table(10);
const large = table(10_000);
const hostsSmall = Array.from({ length: 10 }, (_, i) => `h${i}.bench.test`);
const hostsLarge = Array.from({ length: 10_000 }, (_, i) => `h${i}.bench.test`);
let sink = 0;
function run(t: ReturnType<typeof table>, hosts: string[]): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) {
    const m = t.match(hosts[i % hosts.length] as string, i & 1 ? '/api/x' : '/other', 'GET');
    if (m !== null) sink++;
  }
  return Number(process.hrtime.bigint() - start) / N;
}
const a: number[] = [];
const b: number[] = [];
const c: number[] = [];
for (let round = 0; round < 7; round++) {
  a.push(run(small, hostsSmall));
  // The same 10 request hosts against the big table: the cost of the table's size alone.
  b.push(run(large, hostsSmall));
  // Requests spread over all 10,000 hosts: adds the CPU-cache cost of a working set that no longer fits.
  c.push(run(large, hostsLarge));
}
const best = (xs: number[]) => Math.min(...xs);
const compileStart = process.hrtime.bigint();
table(10_000);
const compileMs = Number(process.hrtime.bigint() - compileStart) / 1e6;
process.stdout.write(
  `lookup ns: table of 10 ${best(a).toFixed(1)}; table of 10,000, same 10 hosts ${best(b).toFixed(1)} ` +
    `(ratio ${(best(b) / best(a)).toFixed(3)}); table of 10,000, requests over all hosts ${best(c).toFixed(1)} ` +
    `(ratio ${(best(c) / best(a)).toFixed(3)}); ` +
    `compile 10,000 routes ${compileMs.toFixed(0)} ms (sink ${sink > 0 ? 'ok' : 'empty'})\n`,
);
