// config.toml: the contexts the CLI connects to and the server binds to, plus server settings.
// Shared by the server and the CLI so both read the file the same way. Parsing is pure (parseConfigToml);
// locating and reading the file is the thin shell around it.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';

export type RuntimeChoice = 'docker' | 'podman' | 'cloud-hypervisor' | 'firecracker';

export interface ContextConfig {
  name: string;
  current: boolean;
  host: string;
  scheme: 'http' | 'https';
  port: number;
}

export interface SvcConfig {
  contexts: ContextConfig[];
  scheduler: { interval: number };
  cors_origins: string[];
  server: { exec: { enabled: boolean } };
  runtime: { enabled: RuntimeChoice[]; firmware_path: string | null; kernel_path: string | null };
}

export class ConfigError extends Error {}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 3030;
export const DEFAULT_SCHEDULER_INTERVAL = 10;
export const RUNTIMES: readonly RuntimeChoice[] = ['docker', 'podman', 'cloud-hypervisor', 'firecracker'];

export function defaultConfig(): SvcConfig {
  return {
    contexts: [{ name: 'local', current: true, host: DEFAULT_HOST, scheme: 'http', port: DEFAULT_PORT }],
    scheduler: { interval: DEFAULT_SCHEDULER_INTERVAL },
    cors_origins: [],
    server: { exec: { enabled: false } },
    runtime: { enabled: [], firmware_path: null, kernel_path: null },
  };
}

/** `$SVC_CONFIG_DIR`, else `$XDG_CONFIG_HOME/svc`, else `~/.config/svc`. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SVC_CONFIG_DIR) return env.SVC_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'svc');
  return join(homedir(), '.config', 'svc');
}

/** `--config` wins over `SVC_CONFIG_FILE`, which wins over `<config dir>/config.toml`. */
export function configFilePath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return flag ?? (env.SVC_CONFIG_FILE || join(configDir(env), 'config.toml'));
}

type Table = Record<string, unknown>;

function isTable(value: unknown): value is Table {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function rejectUnknown(table: Table, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(table)) {
    if (!allowed.includes(key)) throw new ConfigError(`${where}: unknown key '${key}' (allowed: ${allowed.join(', ')})`);
  }
}

function optional<T>(table: Table, key: string, where: string, check: (v: unknown) => v is T, expected: string): T | undefined {
  const value = table[key];
  if (value === undefined) return undefined;
  if (!check(value)) throw new ConfigError(`${where}.${key}: expected ${expected}`);
  return value;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);

function parsePort(value: number, where: string): number {
  if (value < 1 || value > 65535) throw new ConfigError(`${where}: port must be 1-65535`);
  return value;
}

/** Pure: TOML text → validated config with defaults. `source` names the file in error messages. */
export function parseConfigToml(text: string, source: string): SvcConfig {
  let root: Table;
  try {
    root = parseToml(text);
  } catch (error) {
    const detail = error instanceof TomlError ? `line ${error.line}, column ${error.column}: ${error.message.split('\n')[0]}` : String(error);
    throw new ConfigError(`${source}: invalid TOML: ${detail}`);
  }
  const config = defaultConfig();
  rejectUnknown(root, ['contexts', 'scheduler', 'cors_origins', 'server', 'runtime'], source);

  const contexts = root.contexts;
  if (contexts !== undefined) {
    if (!isTable(contexts)) throw new ConfigError(`${source}: [contexts] must be a table`);
    config.contexts = Object.entries(contexts).map(([name, raw]) => {
      const where = `${source}: contexts.${name}`;
      if (!isTable(raw)) throw new ConfigError(`${where}: must be a table`);
      rejectUnknown(raw, ['current', 'host', 'api'], where);
      const api = raw.api === undefined ? {} : raw.api;
      if (!isTable(api)) throw new ConfigError(`${where}.api: must be a table`);
      rejectUnknown(api, ['scheme', 'port'], `${where}.api`);
      const scheme = optional(api, 'scheme', `${where}.api`, isString, '"http" or "https"') ?? 'http';
      if (scheme !== 'http' && scheme !== 'https') throw new ConfigError(`${where}.api.scheme: expected "http" or "https"`);
      return {
        name,
        current: optional(raw, 'current', where, isBool, 'a boolean') ?? false,
        host: optional(raw, 'host', where, isString, 'a string') ?? DEFAULT_HOST,
        scheme,
        port: parsePort(optional(api, 'port', `${where}.api`, isInt, 'an integer') ?? DEFAULT_PORT, `${where}.api.port`),
      };
    });
    if (config.contexts.filter((c) => c.current).length > 1) {
      throw new ConfigError(`${source}: more than one context has current = true`);
    }
  }

  const scheduler = root.scheduler;
  if (scheduler !== undefined) {
    if (!isTable(scheduler)) throw new ConfigError(`${source}: [scheduler] must be a table`);
    rejectUnknown(scheduler, ['interval'], `${source}: scheduler`);
    const interval = optional(scheduler, 'interval', `${source}: scheduler`, isInt, 'an integer (seconds)');
    if (interval !== undefined) config.scheduler.interval = parseInterval(interval, `${source}: scheduler.interval`);
  }

  config.cors_origins = optional(root, 'cors_origins', source, isStringList, 'a list of strings') ?? [];

  const server = root.server;
  if (server !== undefined) {
    if (!isTable(server)) throw new ConfigError(`${source}: [server] must be a table`);
    rejectUnknown(server, ['exec'], `${source}: server`);
    const exec = server.exec;
    if (exec !== undefined) {
      if (!isTable(exec)) throw new ConfigError(`${source}: [server.exec] must be a table`);
      rejectUnknown(exec, ['enabled'], `${source}: server.exec`);
      config.server.exec.enabled = optional(exec, 'enabled', `${source}: server.exec`, isBool, 'a boolean') ?? false;
    }
  }

  const runtime = root.runtime;
  if (runtime !== undefined) {
    if (!isTable(runtime)) throw new ConfigError(`${source}: [runtime] must be a table`);
    rejectUnknown(runtime, ['enabled', 'firmware_path', 'kernel_path'], `${source}: runtime`);
    const enabled = optional(runtime, 'enabled', `${source}: runtime`, isStringList, 'a list of runtime names') ?? [];
    for (const name of enabled) {
      if (!RUNTIMES.includes(name as RuntimeChoice)) {
        throw new ConfigError(`${source}: runtime.enabled: unknown runtime '${name}' (known: ${RUNTIMES.join(', ')})`);
      }
    }
    config.runtime = {
      enabled: RUNTIMES.filter((r) => enabled.includes(r)),
      firmware_path: optional(runtime, 'firmware_path', `${source}: runtime`, isString, 'a path') ?? null,
      kernel_path: optional(runtime, 'kernel_path', `${source}: runtime`, isString, 'a path') ?? null,
    };
  }
  return config;
}

export function parseInterval(value: number, where: string): number {
  if (!Number.isInteger(value) || value < 1 || value > 3600) throw new ConfigError(`${where}: must be an integer from 1 to 3600 seconds`);
  return value;
}

/** Reads the config file; a missing file means the embedded defaults. */
export function loadConfig(path: string): SvcConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return defaultConfig();
    throw new ConfigError(`${path}: cannot read: ${(error as Error).message}`);
  }
  return parseConfigToml(text, path);
}

/** `--context` names one; otherwise the one with current = true; otherwise the first; otherwise the default. */
export function selectContext(config: SvcConfig, name?: string): ContextConfig {
  if (name !== undefined) {
    const found = config.contexts.find((c) => c.name === name);
    if (!found) throw new ConfigError(`context '${name}' is not defined (known: ${config.contexts.map((c) => c.name).join(', ') || 'none'})`);
    return found;
  }
  return config.contexts.find((c) => c.current) ?? config.contexts[0] ?? defaultConfig().contexts[0]!;
}

function tomlString(value: string): string {
  return JSON.stringify(value);
}

/** Pure: config → TOML text that parseConfigToml reads back to the same config (used by `svc init`). */
export function serializeConfigToml(config: SvcConfig): string {
  const lines: string[] = [];
  for (const c of config.contexts) {
    const key = /^[A-Za-z0-9_-]+$/.test(c.name) ? c.name : tomlString(c.name);
    lines.push(`[contexts.${key}]`, `current = ${c.current}`, `host = ${tomlString(c.host)}`, '');
    lines.push(`[contexts.${key}.api]`, `scheme = ${tomlString(c.scheme)}`, `port = ${c.port}`, '');
  }
  lines.push('[scheduler]', `interval = ${config.scheduler.interval}`, '');
  if (config.cors_origins.length > 0) lines.unshift(`cors_origins = [${config.cors_origins.map(tomlString).join(', ')}]`, '');
  lines.push('[server.exec]', `enabled = ${config.server.exec.enabled}`, '');
  lines.push('[runtime]', `enabled = [${config.runtime.enabled.map(tomlString).join(', ')}]`);
  if (config.runtime.firmware_path !== null) lines.push(`firmware_path = ${tomlString(config.runtime.firmware_path)}`);
  if (config.runtime.kernel_path !== null) lines.push(`kernel_path = ${tomlString(config.runtime.kernel_path)}`);
  return `${lines.join('\n')}\n`;
}
