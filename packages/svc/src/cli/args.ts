// Pure argv parser driven by the command table. Global options may come before the command; after it, a
// short flag the command itself defines wins (so `deployment logs -c NAME` means --container, while
// `svc -c prod deployment logs ...` or `--context prod` anywhere selects the context).
import { COMMANDS, GLOBAL_FLAGS, subcommandsOf, type CommandSpec, type FlagSpec } from './command-table.js';

export class UsageError extends Error {
  constructor(
    message: string,
    /** Command path whose help the user should read. */
    readonly helpTopic: readonly string[] = [],
  ) {
    super(message);
  }
}

export type FlagValue = string | boolean | string[];

export interface GlobalOptions {
  context?: string;
  config?: string;
}

export type ParseResult =
  | { kind: 'version' }
  | { kind: 'help'; topic: readonly string[] }
  | {
      kind: 'command';
      command: CommandSpec;
      global: GlobalOptions;
      /** Positional arguments by their table name. */
      args: Record<string, string>;
      /** Flags by long name; repeatable flags are arrays, absent flags are missing. */
      flags: Record<string, FlagValue>;
      /** Words after `--` for passthrough commands. */
      rest: string[];
    };

function findFlag(flags: readonly FlagSpec[], token: string): { flag: FlagSpec; inline?: string } | undefined {
  if (token.startsWith('--')) {
    const eq = token.indexOf('=');
    const name = eq === -1 ? token.slice(2) : token.slice(2, eq);
    const flag = flags.find((f) => f.long === name);
    if (!flag) return undefined;
    return eq === -1 ? { flag } : { flag, inline: token.slice(eq + 1) };
  }
  const letter = token.slice(1, 2);
  const flag = flags.find((f) => f.short === letter);
  if (!flag) return undefined;
  // `-n prod`, `-nprod` and `-n=prod` are all accepted for string flags.
  const tail = token.slice(2);
  if (tail === '') return { flag };
  return { flag, inline: tail.startsWith('=') ? tail.slice(1) : tail };
}

const isOption = (token: string) => token.startsWith('-') && token !== '-' && token.length > 1;

/** Splits off global options that precede the command words. */
function leadingGlobals(argv: readonly string[], global: GlobalOptions, flags: Record<string, FlagValue>): number {
  let i = 0;
  while (i < argv.length && isOption(argv[i]!) && argv[i] !== '--') {
    const found = findFlag(GLOBAL_FLAGS, argv[i]!);
    if (!found) throw new UsageError(`unknown option '${argv[i]}'`);
    i = applyFlag(found, argv, i, flags);
  }
  if (typeof flags.context === 'string') global.context = flags.context;
  if (typeof flags.config === 'string') global.config = flags.config;
  return i;
}

/** Stores one flag occurrence; returns the index of the next token. */
function applyFlag(found: { flag: FlagSpec; inline?: string }, argv: readonly string[], i: number, flags: Record<string, FlagValue>): number {
  const { flag, inline } = found;
  const label = `--${flag.long}`;
  if (flag.type === 'boolean') {
    if (inline !== undefined) throw new UsageError(`option '${label}' takes no value`);
    flags[flag.long] = true;
    return i + 1;
  }
  let value = inline;
  let next = i + 1;
  if (value === undefined) {
    if (i + 1 >= argv.length) throw new UsageError(`option '${label}' needs a value${flag.value ? ` (${flag.value})` : ''}`);
    value = argv[i + 1]!;
    next = i + 2;
  }
  if (flag.choices && !flag.choices.includes(value)) {
    throw new UsageError(`option '${label}' must be one of ${flag.choices.join(', ')} (got '${value}')`);
  }
  if (flag.multiple) {
    const list = flags[flag.long];
    flags[flag.long] = Array.isArray(list) ? [...list, value] : [value];
  } else {
    if (flags[flag.long] !== undefined) throw new UsageError(`option '${label}' given more than once`);
    flags[flag.long] = value;
  }
  return next;
}

export function parseArgv(argv: readonly string[]): ParseResult {
  const global: GlobalOptions = {};
  const globalFlags: Record<string, FlagValue> = {};
  let i = leadingGlobals(argv, global, globalFlags);
  if (globalFlags.version === true) return { kind: 'version' };
  const word = argv[i];
  if (word === undefined || word === '--') return { kind: 'help', topic: [] };
  if (word === 'help') return { kind: 'help', topic: argv.slice(i + 1).filter((w) => !isOption(w)) };

  const candidates = COMMANDS.filter((c) => c.path[0] === word);
  if (candidates.length === 0) throw new UsageError(`unknown command '${word}'`);
  i += 1;
  let command: CommandSpec | undefined;
  const subs = subcommandsOf(word);
  const next = argv[i];
  if (subs.length > 0 && next !== undefined && !isOption(next)) {
    command = subs.find((c) => c.path[1] === next);
    if (command) i += 1;
    else if (!candidates.some((c) => c.path.length === 1)) {
      throw new UsageError(`unknown command '${word} ${next}' (known: ${subs.map((c) => c.path[1]).join(', ')})`, [word]);
    }
  }
  command ??= candidates.find((c) => c.path.length === 1);
  if (!command) {
    if (globalFlags.help === true || argv.slice(i).some((t) => t === '--help' || t === '-h')) return { kind: 'help', topic: [word] };
    throw new UsageError(`'${word}' needs a subcommand (${subs.map((c) => c.path[1]).join(', ')})`, [word]);
  }
  if (globalFlags.help === true) return { kind: 'help', topic: command.path };

  // Command flags shadow the global ones with the same short letter (e.g. -c = --container for logs).
  const usable = [...command.flags, ...GLOBAL_FLAGS.filter((g) => !command.flags.some((f) => f.long === g.long || (f.short && f.short === g.short)))];
  const flags: Record<string, FlagValue> = {};
  const positionals: string[] = [];
  const rest: string[] = [];
  while (i < argv.length) {
    const token = argv[i]!;
    if (token === '--') {
      if (command.passthrough) rest.push(...argv.slice(i + 1));
      else positionals.push(...argv.slice(i + 1));
      break;
    }
    if (isOption(token)) {
      const found = findFlag(usable, token) ?? (token.startsWith('--') ? findFlag(GLOBAL_FLAGS, token) : undefined);
      if (!found) throw new UsageError(`unknown option '${token}' for '${command.path.join(' ')}'`, command.path);
      i = applyFlag(found, argv, i, flags);
      continue;
    }
    positionals.push(token);
    i += 1;
  }
  if (flags.help === true) return { kind: 'help', topic: command.path };
  if (flags.version === true) return { kind: 'version' };
  if (typeof flags.context === 'string') global.context = flags.context;
  if (typeof flags.config === 'string') global.config = flags.config;
  delete flags.help;
  delete flags.version;
  delete flags.context;
  delete flags.config;

  const args: Record<string, string> = {};
  let p = 0;
  for (const spec of command.args) {
    if (spec.variadic) {
      args[spec.name] = positionals.slice(p).join(' ');
      p = positionals.length;
      break;
    }
    const value = positionals[p];
    if (value === undefined) {
      if (spec.required) throw new UsageError(`'${command.path.join(' ')}' needs ${spec.name}`, command.path);
      break;
    }
    args[spec.name] = value;
    p += 1;
  }
  if (p < positionals.length) {
    throw new UsageError(`unexpected argument '${positionals[p]}' for '${command.path.join(' ')}'`, command.path);
  }
  return { kind: 'command', command, global, args, flags, rest };
}
