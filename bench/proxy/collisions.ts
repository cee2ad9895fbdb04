// Cost of the W018 collision scan (findCollisions) as the route table grows: the bucketed scan against its peer,
// the pairwise scan it replaced, in the same run. node --import tsx bench/proxy/collisions.ts [SIZES...]
// Routes: distinct exact hosts over 100 domains, each with a path, plus 10 wildcards, a regex-host route and a
// host-less catch-all (which every other route must still be compared with). Best of 3 runs per size; the
// pairwise peer only up to 3,000 routes unless PAIRWISE_MAX says otherwise (it is quadratic: about 7 s at 10,000).
import { scanCollisions, scanCollisionsPairwise, type CollisionScan } from '../../packages/proxy/src/routing/collisions.js';
import { defaultEntrypointConfig, type Entrypoint, type EntrypointConfig } from '../../packages/proxy/src/model/entrypoint.js';

function route(name: string, config: Partial<EntrypointConfig>): Entrypoint {
  return {
    id: `http_${name}`,
    name,
    protocol: 'Http',
    backends: [{ address: '127.0.0.1', port: 1, weight: 100 }],
    source: 'config',
    config: { ...defaultEntrypointConfig(), ...config },
  };
}

function routes(count: number): Entrypoint[] {
  const eps: Entrypoint[] = [];
  for (let i = 0; i < count; i++) {
    eps.push(route(`r${i}`, { hostnames: [`h${i}.d${i % 100}.test`], path: { rule_type: 'Prefix', value: `/app${i % 7}` } }));
  }
  for (let d = 0; d < 10; d++) eps.push(route(`wild${d}`, { hostnames: [`*.d${d}.test`] }));
  eps.push(route('regex', { hostnames: ['/h1[0-9]*\\.d1\\.test/'], path: { rule_type: 'Prefix', value: '/admin' } }));
  eps.push(route('fallback', { path: { rule_type: 'Prefix', value: '/' } }));
  return eps;
}

function best(run: () => CollisionScan): { ms: number; scan: CollisionScan } {
  let ms = Infinity;
  let scan: CollisionScan | null = null;
  for (let round = 0; round < 3; round++) {
    const start = process.hrtime.bigint();
    scan = run();
    ms = Math.min(ms, Number(process.hrtime.bigint() - start) / 1e6);
  }
  return { ms, scan: scan as CollisionScan };
}

const sizes = process.argv.slice(2).map(Number).filter((n) => Number.isInteger(n) && n > 0);
const pairwiseMax = Number(process.env['PAIRWISE_MAX'] ?? 3000);
console.log('routes   bucketed ms  comparisons  pairwise ms  comparisons  speed-up  same result');
for (const size of sizes.length > 0 ? sizes : [1000, 3000, 10_000]) {
  const eps = routes(size);
  const bucketed = best(() => scanCollisions(eps));
  const pairwise = size <= pairwiseMax ? best(() => scanCollisionsPairwise(eps)) : null;
  const same = pairwise === null ? '-' : JSON.stringify(pairwise.scan.collisions) === JSON.stringify(bucketed.scan.collisions) ? 'yes' : 'NO';
  console.log(
    [
      String(eps.length).padStart(6),
      bucketed.ms.toFixed(1).padStart(12),
      String(bucketed.scan.comparisons).padStart(12),
      (pairwise?.ms.toFixed(1) ?? '-').padStart(12),
      String(pairwise?.scan.comparisons ?? '-').padStart(12),
      (pairwise === null ? '-' : `${(pairwise.ms / bucketed.ms).toFixed(1)}x`).padStart(9),
      same.padStart(12),
    ].join(' '),
  );
}
