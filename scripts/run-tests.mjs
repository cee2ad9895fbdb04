#!/usr/bin/env node
// Runs every test file of every package in ONE node:test invocation, so CI sees a single closing summary.
// Usage: node scripts/run-tests.mjs [--unit] [--filter SUBSTRING]
//   --unit    only files under test/unit/ (no Docker, no network peers)
//   --filter  only files whose path contains SUBSTRING
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const filterAt = args.indexOf('--filter');
const filter = filterAt >= 0 ? args[filterAt + 1] : undefined;

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (name === 'node_modules' || name === 'dist') continue;
    if (statSync(full).isDirectory()) out.push(...walk(full));
    else if (name.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

let files = [];
for (const pkg of readdirSync(join(root, 'packages'))) {
  const testDir = join(root, 'packages', pkg, 'test');
  try { statSync(testDir); } catch { continue; }
  files.push(...walk(testDir));
}
files = files.map((f) => relative(root, f)).sort();
if (unitOnly) files = files.filter((f) => f.includes('/test/unit/'));
if (filter) files = files.filter((f) => f.includes(filter));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

// Type-check tests as strictly as the sources before running them.
for (const pkg of readdirSync(join(root, 'packages'))) {
  const cfg = join('packages', pkg, 'tsconfig.test.json');
  try { statSync(join(root, cfg)); } catch { continue; }
  const tc = spawnSync(join(root, 'node_modules/.bin/tsc'), ['-p', cfg], { cwd: root, stdio: 'inherit' });
  if (tc.status !== 0) {
    console.error(`type-check failed: ${cfg}`);
    process.exit(tc.status ?? 1);
  }
}

// The real dockerd restart test stops the shared daemon, so it cannot run beside other Docker tests: in CI (or with
// SVC_TEST_DOCKERD_RESTART=1) it runs alone first, and the main run below still ends with the closing summary.
const DOCKERD_RESTART_FILE = 'packages/svc/test/integration/scheduler-dockerd-outage.test.ts';
const restartOptIn = process.env.SVC_TEST_DOCKERD_RESTART === '1' || process.env.CI === 'true';
if (restartOptIn && !unitOnly && files.includes(DOCKERD_RESTART_FILE)) {
  const alone = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-timeout=300000', '--test-name-pattern=real dockerd restart', DOCKERD_RESTART_FILE],
    { cwd: root, stdio: 'inherit', env: { ...process.env, SVC_TEST_DOCKERD_RESTART: '1' } },
  );
  if (alone.status !== 0) {
    console.error('the real dockerd restart test failed');
    process.exit(alone.status ?? 1);
  }
}

const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const res = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=300000', ...files],
  { cwd: root, stdio: 'inherit', env: { ...process.env, SVC_TEST_DOCKERD_RESTART: '0' } },
);
process.exit(res.status ?? 1);
