// Which server and which token: the selected context of config.toml, and the token from SVC_TOKEN or
// auth.json (`{"contexts": {"<name>": {"token": "..."}}}`, mode 0600, in the config directory).
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError, configDir, configFilePath, loadConfig, selectContext, type ContextConfig, type SvcConfig } from '../config/config-file.js';
import { CliError, EXIT } from './errors.js';
import { isRecord } from './output.js';
import type { GlobalOptions } from './args.js';

export interface Resolved {
  config: SvcConfig;
  configPath: string;
  context: ContextConfig;
  baseUrl: string;
}

export function baseUrlOf(context: ContextConfig): string {
  const host = context.host.includes(':') && !context.host.startsWith('[') ? `[${context.host}]` : context.host;
  return `${context.scheme}://${host}:${context.port}`;
}

export function resolve(global: GlobalOptions, env: NodeJS.ProcessEnv): Resolved {
  const configPath = configFilePath(global.config, env);
  try {
    const config = loadConfig(configPath);
    const context = selectContext(config, global.context);
    return { config, configPath, context, baseUrl: baseUrlOf(context) };
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message, EXIT.general);
    throw error;
  }
}

export function authFilePath(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), 'auth.json');
}

type AuthFile = { contexts: Record<string, { token: string }> };

/** Pure: auth.json text → tokens by context; anything malformed is ignored rather than trusted. */
export function parseAuthFile(text: string): AuthFile {
  const file: AuthFile = { contexts: {} };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return file;
  }
  if (!isRecord(raw) || !isRecord(raw.contexts)) return file;
  for (const [name, entry] of Object.entries(raw.contexts)) {
    if (isRecord(entry) && typeof entry.token === 'string' && entry.token !== '') file.contexts[name] = { token: entry.token };
  }
  return file;
}

function readAuthFile(path: string): AuthFile {
  try {
    return parseAuthFile(readFileSync(path, 'utf8'));
  } catch {
    return { contexts: {} };
  }
}

/** SVC_TOKEN when set and non-empty; otherwise the context's entry in auth.json. */
export function tokenFor(contextName: string, env: NodeJS.ProcessEnv): string | undefined {
  if (env.SVC_TOKEN) return env.SVC_TOKEN;
  return readAuthFile(authFilePath(env)).contexts[contextName]?.token;
}

function writeAuthFile(path: string, file: AuthFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}

export function saveToken(contextName: string, token: string, env: NodeJS.ProcessEnv): string {
  const path = authFilePath(env);
  const file = readAuthFile(path);
  file.contexts[contextName] = { token };
  writeAuthFile(path, file);
  return path;
}

/** Returns the token that was stored, if any. */
export function removeToken(contextName: string, env: NodeJS.ProcessEnv): string | undefined {
  const path = authFilePath(env);
  const file = readAuthFile(path);
  const previous = file.contexts[contextName]?.token;
  if (previous === undefined) return undefined;
  delete file.contexts[contextName];
  writeAuthFile(path, file);
  return previous;
}
