// What every command module receives: parsed flags, the output streams, and lazily the context + client.
import type { CommandSpec } from './command-table.js';
import type { FlagValue, GlobalOptions } from './args.js';
import { ApiClient } from './client.js';
import { CliError } from './errors.js';
import type { Output } from './output.js';
import { resolve, tokenFor, type Resolved } from './session.js';

export interface CommandContext {
  command: CommandSpec;
  global: GlobalOptions;
  args: Record<string, string>;
  flags: Record<string, FlagValue>;
  rest: string[];
  env: NodeJS.ProcessEnv;
  out: Output;
  stdin: NodeJS.ReadStream;
  resolved(): Resolved;
  client(trace?: (line: string) => void): ApiClient;
}

/** Every command module exports `run`, returning the exit code. */
export type Handler = (ctx: CommandContext) => Promise<number>;

export function createContext(parts: Omit<CommandContext, 'resolved' | 'client' | 'stdin'>, stdin: () => NodeJS.ReadStream): CommandContext {
  let cached: Resolved | undefined;
  const resolved = () => (cached ??= resolve(parts.global, parts.env));
  return {
    ...parts,
    // process.stdin is created on first access; commands that never read it should not pay for it.
    get stdin() {
      return stdin();
    },
    resolved,
    client(trace) {
      const r = resolved();
      return new ApiClient(r.baseUrl, tokenFor(r.context.name, parts.env), trace);
    },
  };
}

export function flagString(ctx: CommandContext, name: string): string | undefined {
  const value = ctx.flags[name];
  return typeof value === 'string' ? value : undefined;
}

export function flagList(ctx: CommandContext, name: string): string[] {
  const value = ctx.flags[name];
  return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
}

export function flagBool(ctx: CommandContext, name: string): boolean {
  return ctx.flags[name] === true;
}

export function arg(ctx: CommandContext, name: string): string {
  const value = ctx.args[name];
  if (value === undefined) throw new CliError(`missing ${name}`);
  return value;
}

/** A positive integer flag (e.g. --tail, --limit); undefined when absent. */
export function flagInt(ctx: CommandContext, name: string, min = 0): number | undefined {
  const raw = flagString(ctx, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new CliError(`--${name} must be an integer >= ${min} (got '${raw}')`);
  return Number(raw);
}

export function wantsJson(ctx: CommandContext): boolean {
  return flagString(ctx, 'output') === 'json';
}
