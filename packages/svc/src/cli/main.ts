#!/usr/bin/env node
// The `svc` entry point. Kept light: `--version` answers before anything else loads; everything else loads
// the client core (run.ts, one module graph) and then only the module of the command that runs.
import { readFileSync } from 'node:fs';

export function version(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    if (typeof pkg === 'object' && pkg !== null && 'version' in pkg && typeof pkg.version === 'string') return pkg.version;
  } catch {
    // fall through
  }
  return 'unknown';
}

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`svc ${version()}\n`);
} else {
  const { main } = await import('./run.js');
  // Exit explicitly: a keep-alive socket or a finished follow loop must not hold the process open.
  process.exit(await main(argv, version));
}
