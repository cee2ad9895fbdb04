#!/usr/bin/env node
// Start-up cost of the `svc` CLI beside the floor `node -e 0`: `svc --version` and `svc deployment list`
// against a real local server (started here on a temp database, stopped at the end).
// Uses hyperfine when installed (scripts/install-bench-deps.sh), else a node timing loop (spawnSync, wall time).
// Run after `npm run build`:  node bench/cli/startup.mjs [runs]
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const bin = join(root, 'packages/svc/bin/svc.js');
const runs = Number(process.argv[2] ?? 30);

const port = await new Promise((ok) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => ok(p));
  });
});
const dir = mkdtempSync(join(tmpdir(), 'svc-bench-cli-'));
writeFileSync(join(dir, 'config.toml'), `[contexts.bench]\ncurrent = true\nhost = "127.0.0.1"\n[contexts.bench.api]\nport = ${port}\n`);
const env = {
  PATH: process.env.PATH,
  HOME: dir,
  SVC_CONFIG_DIR: dir,
  SVC_DATABASE_PATH: join(dir, 'svc.db'),
  SVC_SECRET_KEY: randomBytes(32).toString('base64'),
  SVC_ADMIN_PASSWORD: 'bench-admin-password',
  SVC_LOG: 'error',
};
const server = spawn(process.execPath, [bin, 'server', 'start'], { env, stdio: ['ignore', 'ignore', 'ignore'] });
try {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const login = execFileSync(process.execPath, [bin, 'login', '-u', 'admin', '-p', env.SVC_ADMIN_PASSWORD], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  void login;
  const listProbe = spawnSync(process.execPath, [bin, 'deployment', 'list'], { env, encoding: 'utf8' });
  const listNote = listProbe.status === 0 ? 'served' : `exit ${listProbe.status}: ${listProbe.stderr.trim()}`;

  const cases = [
    ['node -e 0', [process.execPath, '-e', '0']],
    ['svc --version', [process.execPath, bin, '--version']],
    ['svc deployment list', [process.execPath, bin, 'deployment', 'list']],
  ];
  const hyperfine = spawnSync('hyperfine', ['--version']).status === 0;
  const results = [];
  if (hyperfine) {
    const out = join(dir, 'hyperfine.json');
    execFileSync('hyperfine', ['-i', '--warmup', '3', '--runs', String(runs), '--export-json', out, '-N', ...cases.map(([, argv]) => argv.join(' '))], { env, stdio: 'inherit' });
    const data = JSON.parse((await import('node:fs')).readFileSync(out, 'utf8'));
    data.results.forEach((r, i) => {
      const sorted = [...r.times].sort((a, b) => a - b);
      results.push({ name: cases[i][0], median: r.median * 1000, mean: r.mean * 1000, p95: sorted[Math.ceil(sorted.length * 0.95) - 1] * 1000, cpu: (r.user + r.system) * 1000 });
    });
  } else {
    for (const [name, argv] of cases) {
      for (let i = 0; i < 3; i++) spawnSync(argv[0], argv.slice(1), { env, stdio: 'ignore' });
      const times = [];
      for (let i = 0; i < runs; i++) {
        const t0 = process.hrtime.bigint();
        spawnSync(argv[0], argv.slice(1), { env, stdio: 'ignore' });
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      times.sort((a, b) => a - b);
      const mean = times.reduce((a, b) => a + b, 0) / times.length;
      results.push({ name, median: times[Math.floor(times.length / 2)], mean, p95: times[Math.ceil(times.length * 0.95) - 1], cpu: NaN });
    }
  }
  const floor = results[0].median;
  console.log(`tool: ${hyperfine ? 'hyperfine' : 'node spawnSync loop'}, runs: ${runs}, node ${process.version}; deployment list: ${listNote}`);
  console.log(`load average: ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')} (${(await import('node:os')).cpus().length} CPUs)`);
  console.log('command                  median ms   mean ms   p95 ms   cpu ms   ratio to node -e 0   target');
  for (const r of results) {
    const target = r.name === 'node -e 0' ? '' : r.median < 150 ? '< 150 ms: ok' : '< 150 ms: MISSED';
    console.log(`${r.name.padEnd(24)} ${r.median.toFixed(1).padStart(9)} ${r.mean.toFixed(1).padStart(9)} ${r.p95.toFixed(1).padStart(8)} ${Number.isNaN(r.cpu) ? '       -' : r.cpu.toFixed(1).padStart(8)}   ${(r.median / floor).toFixed(2).padStart(8)}x             ${target}`);
  }
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
