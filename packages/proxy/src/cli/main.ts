#!/usr/bin/env node
// svc-proxy command line. Commands are imported lazily so `--help`, `--version` and `explain` start fast.
import { readFileSync } from 'node:fs';

const USAGE = `Usage: svc-proxy <command> [options]

Commands:
  serve     [--config FILE]   run the proxy in the foreground (SIGTERM stops it, exit 0)
  validate  [--config FILE]   print diagnostics; exit 0 without errors, 1 otherwise
  explain   CODE              explain a diagnostic code (exit 2 for an unknown code)

Options:
  --config FILE   configuration file; wins over the CONFIG_PATH environment
                  variable; default ./config.yaml
  -h, --help      show this help
  -V, --version   print the version
`;

function version(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    if (typeof pkg === 'object' && pkg !== null && 'version' in pkg && typeof pkg.version === 'string') return pkg.version;
  } catch {
    // fall through
  }
  return 'unknown';
}

export interface ParsedArgs {
  command: string | null;
  config: string | null;
  positional: string[];
  help: boolean;
  version: boolean;
  error: string | null;
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const out: ParsedArgs = { command: null, config: null, positional: [], help: false, version: false, error: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '-h' || arg === '--help') out.help = true;
    else if (arg === '-V' || arg === '--version') out.version = true;
    else if (arg === '--config' || arg === '-c') {
      const value = argv[i + 1];
      if (value === undefined || value === '') return { ...out, error: `${arg} needs a FILE` };
      out.config = value;
      i++;
    } else if (arg.startsWith('--config=')) out.config = arg.slice('--config='.length);
    else if (arg.startsWith('-')) return { ...out, error: `unknown option ${arg}` };
    else if (out.command === null) out.command = arg;
    else out.positional.push(arg);
  }
  return out;
}

export function resolveConfigPath(flag: string | null, env: NodeJS.ProcessEnv): string {
  return flag ?? (env.CONFIG_PATH !== undefined && env.CONFIG_PATH !== '' ? env.CONFIG_PATH : './config.yaml');
}

async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args.error) {
    process.stderr.write(`svc-proxy: ${args.error}\n\n${USAGE}`);
    return 2;
  }
  if (args.version) {
    process.stdout.write(`svc-proxy ${version()}\n`);
    return 0;
  }
  if (args.help || args.command === null || args.command === 'help') {
    process.stdout.write(USAGE);
    return args.help || args.command === 'help' ? 0 : 2;
  }
  const configPath = resolveConfigPath(args.config, process.env);
  switch (args.command) {
    case 'serve': {
      const { serve } = await import('./serve.js');
      return serve(configPath);
    }
    case 'validate': {
      const { validate } = await import('./validate.js');
      return validate(configPath);
    }
    case 'explain': {
      const { explain } = await import('./explain.js');
      return explain(args.positional[0]);
    }
    default:
      process.stderr.write(`svc-proxy: unknown command "${args.command}"\n\n${USAGE}`);
      return 2;
  }
}

const isEntry = process.argv[1] !== undefined && /(?:main\.[cm]?[jt]s|svc-proxy(?:\.js)?)$/.test(process.argv[1]);
if (isEntry) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      // Servers are closed by now; a lingering handle (e.g. a keep-alive socket) must not keep us alive.
      setTimeout(() => process.exit(code), 200).unref();
    },
    (error: unknown) => {
      process.stderr.write(`svc-proxy: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
