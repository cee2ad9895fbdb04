import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { configDir, configFilePath, defaultConfig, serializeConfigToml, type RuntimeChoice } from '../../config/config-file.js';
import { RUNTIME_CHOICES } from '../command-table.js';
import { formatCheck, runtimeChecks, secretKeyCheck } from '../doctor-checks.js';
import { CliError } from '../errors.js';
import { paint } from '../output.js';
import { machineProbe } from '../probe.js';
import { createPrompter, isInteractive, type Prompter } from '../prompt.js';
import { flagBool, flagString, type CommandContext } from '../run-context.js';

type InitRuntime = (typeof RUNTIME_CHOICES)[number];

/** `both` = docker plus cloud-hypervisor (never firecracker). */
export function enabledRuntimes(choice: InitRuntime): RuntimeChoice[] {
  return choice === 'both' ? ['docker', 'cloud-hypervisor'] : [choice];
}

function parsePort(raw: string): number | null {
  return /^\d{1,5}$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 65535 ? Number(raw) : null;
}

const isRuntime = (value: string): value is InitRuntime => (RUNTIME_CHOICES as readonly string[]).includes(value);

async function promptUntil<T>(ctx: CommandContext, prompter: Prompter, question: string, parse: (answer: string) => T | null): Promise<T> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const value = parse(await prompter.ask(question));
    if (value !== null) return value;
    ctx.out.stderr.write('invalid answer, try again\n');
  }
  throw new CliError('init: no valid answer after 3 attempts');
}

export async function run(ctx: CommandContext): Promise<number> {
  const configPath = configFilePath(ctx.global.config, ctx.env);
  const dir = ctx.global.config ? dirname(configPath) : configDir(ctx.env);
  const keyPath = join(dir, 'secret.key');
  const force = flagBool(ctx, 'force');
  const existing = [configPath, keyPath].filter((p) => existsSync(p));
  if (existing.length > 0 && !force) {
    throw new CliError(`${existing.join(' and ')} already exist${existing.length === 1 ? 's' : ''}: pass --force to overwrite (this regenerates the secret key)`);
  }

  let runtime: InitRuntime | undefined;
  const runtimeFlag = flagString(ctx, 'runtime');
  if (runtimeFlag !== undefined) runtime = isRuntime(runtimeFlag) ? runtimeFlag : undefined;
  let port: number | undefined;
  const portFlag = flagString(ctx, 'port');
  if (portFlag !== undefined) {
    const parsed = parsePort(portFlag);
    if (parsed === null) throw new CliError(`--port must be an integer from 1 to 65535 (got '${portFlag}')`);
    port = parsed;
  }
  // On a terminal, ask for what the flags did not give; otherwise the defaults (docker, 3030).
  if (isInteractive(ctx.stdin) && (runtime === undefined || port === undefined)) {
    const prompter = createPrompter(ctx.stdin, process.stderr);
    try {
      runtime ??= await promptUntil(ctx, prompter, `Runtime (${RUNTIME_CHOICES.join(', ')}) [docker]: `, (a) => (a === '' ? 'docker' : isRuntime(a) ? a : null));
      port ??= await promptUntil(ctx, prompter, 'API port [3030]: ', (a) => (a === '' ? 3030 : parsePort(a)));
    } finally {
      prompter.close();
    }
  }
  runtime ??= 'docker';
  port ??= 3030;

  if (force && existsSync(keyPath)) {
    ctx.out.stderr.write(`warning: --force regenerates ${keyPath}: secrets stored with the previous key can no longer be decrypted\n`);
  }
  const config = defaultConfig();
  config.contexts[0]!.port = port;
  config.runtime.enabled = enabledRuntimes(runtime);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  mkdirSync(dirname(configPath), { recursive: true, mode: 0o700 });
  writeFileSync(configPath, serializeConfigToml(config), { mode: 0o600 });
  const key = randomBytes(32).toString('base64');
  writeFileSync(keyPath, `${key}\n`, { mode: 0o600 });
  chmodSync(keyPath, 0o600);

  const out = ctx.out.stdout;
  out.write(`wrote ${configPath} (runtime ${runtime}, port ${port})\n`);
  out.write(`wrote ${keyPath} (mode 0600)\n\n`);
  out.write(`Export the key before starting the server (keep the file safe: without it, stored secrets are lost):\n`);
  out.write(`  export SVC_SECRET_KEY=$(cat ${keyPath})\n`);
  out.write(`  svc server start\n`);
  out.write(`The first start creates the database and the 'admin' user (password printed once, or SVC_ADMIN_PASSWORD).\n\n`);

  // Doctor checks for the chosen runtime, as warnings only: init succeeds on a machine still being set up.
  const results = [secretKeyCheck(key), ...(await runtimeChecks(config, config.runtime.enabled, machineProbe(ctx.env)))];
  for (const result of results) {
    out.write(`${formatCheck(result, (t, ok) => paint(ok ? t : 'warn', ok ? 'green' : 'yellow', ctx.out.color))}\n`);
  }
  return 0;
}
