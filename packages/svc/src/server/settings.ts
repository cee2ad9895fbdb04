// Everything the server reads from its environment and config file, validated before anything binds.
// Pure except for reading the config file, so each rule is unit-tested with a plain env object.
import { resolve } from 'node:path';
import { ConfigError, configFilePath, loadConfig, parseInterval, selectContext, type SvcConfig } from '../config/config-file.js';
import { parseSecretKey, SecretKeyError } from '../crypto/secret-box.js';
import { LogLevelError, resolveLogLevel, type LogLevel } from './log-level.js';

export class StartupError extends Error {}

export const DEFAULT_DATABASE_PATH = './svc.db';
export const DEFAULT_POOL_SIZE = 5;
export const MAX_POOL_SIZE = 64;

export interface ServerSettings {
  secretKey: Buffer;
  configPath: string;
  /** With SVC_SCHEDULER_INTERVAL already applied. */
  config: SvcConfig;
  host: string;
  port: number;
  databasePath: string;
  poolSize: number;
  logLevel: LogLevel;
  /** SVC_ADMIN_PASSWORD, used only when the database has no user yet. */
  adminPassword: string | null;
}

export interface SettingsOptions {
  configPath?: string;
  context?: string;
}

function integerFrom(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^\s*\d{1,9}\s*$/.test(raw)) throw new StartupError(`${name}: expected a positive integer, got '${raw.slice(0, 40)}'`);
  return Number(raw);
}

export function resolveSettings(env: NodeJS.ProcessEnv, options: SettingsOptions = {}): ServerSettings {
  try {
    // First, so a missing key is reported before anything else is even looked at.
    const secretKey = parseSecretKey(env.SVC_SECRET_KEY);
    const configPath = configFilePath(options.configPath, env);
    const config = loadConfig(configPath);
    const context = selectContext(config, options.context);

    const interval = integerFrom(env, 'SVC_SCHEDULER_INTERVAL');
    if (interval !== undefined) config.scheduler.interval = parseInterval(interval, 'SVC_SCHEDULER_INTERVAL');

    const poolSize = integerFrom(env, 'SVC_DB_POOL_SIZE') ?? DEFAULT_POOL_SIZE;
    if (poolSize < 1 || poolSize > MAX_POOL_SIZE) throw new StartupError(`SVC_DB_POOL_SIZE: must be 1-${MAX_POOL_SIZE}, got ${poolSize}`);

    const databasePath = env.SVC_DATABASE_PATH && env.SVC_DATABASE_PATH.trim() !== '' ? env.SVC_DATABASE_PATH : DEFAULT_DATABASE_PATH;

    const adminPassword = env.SVC_ADMIN_PASSWORD !== undefined && env.SVC_ADMIN_PASSWORD !== '' ? env.SVC_ADMIN_PASSWORD : null;
    if (adminPassword !== null && ([...adminPassword].length < 8 || [...adminPassword].length > 128)) {
      throw new StartupError('SVC_ADMIN_PASSWORD: must be 8-128 characters');
    }

    return {
      secretKey,
      configPath,
      config,
      host: context.host,
      port: context.port,
      databasePath: resolve(databasePath),
      poolSize,
      logLevel: resolveLogLevel(env),
      adminPassword,
    };
  } catch (error) {
    if (error instanceof SecretKeyError || error instanceof ConfigError || error instanceof LogLevelError) {
      throw new StartupError(error.message);
    }
    throw error;
  }
}
