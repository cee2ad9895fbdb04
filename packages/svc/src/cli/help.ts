// `--help` text, generated from the command table.
import { COMMANDS, GLOBAL_FLAGS, subcommandsOf, topLevelWords, type CommandSpec, type FlagSpec } from './command-table.js';

function flagLine(flag: FlagSpec): [string, string] {
  const names = `${flag.short ? `-${flag.short}, ` : '    '}--${flag.long}${flag.type === 'string' ? ` ${flag.value ?? 'VALUE'}` : ''}`;
  const choices = flag.choices ? ` [${flag.choices.join('|')}]` : '';
  return [names, `${flag.description}${choices}`];
}

function columns(rows: [string, string][], indent = '  '): string {
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `${indent}${left.padEnd(width)}  ${right}`).join('\n');
}

export function usageOf(command: CommandSpec): string {
  const args = command.args.map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ');
  const flags = command.flags.length > 0 ? ' [OPTIONS]' : '';
  const rest = command.passthrough ? ' [-- COMMAND...]' : '';
  return `svc ${command.path.join(' ')}${args ? ` ${args}` : ''}${flags}${rest}`;
}

export function helpText(topic: readonly string[]): string {
  const exact = COMMANDS.find((c) => c.path.join(' ') === topic.join(' '));
  const subs = topic.length === 1 ? subcommandsOf(topic[0]!) : [];
  if (exact && subs.length === 0) {
    const parts = [`${exact.summary}\n`, `Usage: ${usageOf(exact)}`];
    if (exact.flags.length > 0) parts.push('\nOptions:', columns(exact.flags.map(flagLine)));
    // A global short letter the command uses itself (-c = --container) is shown only in its long form here.
    const globals = GLOBAL_FLAGS.map((g) => (exact.flags.some((f) => f.short === g.short) ? { ...g, short: undefined } : g));
    parts.push('\nGlobal options:', columns(globals.map(flagLine)));
    if (globals.some((g, i) => g.short !== GLOBAL_FLAGS[i]!.short)) parts.push("  (-c before the command also selects the context: svc -c NAME " + exact.path.join(' ') + ' ...)');
    return `${parts.join('\n')}\n`;
  }
  if (subs.length > 0) {
    const rows: [string, string][] = subs.map((c) => [c.path.slice(1).join(' '), c.summary]);
    if (exact) rows.unshift(['', exact.summary]);
    return `Usage: svc ${topic[0]} <COMMAND>\n\nCommands:\n${columns(rows)}\n\nRun 'svc ${topic[0]} <COMMAND> --help' for its options.\n`;
  }
  const rows: [string, string][] = topLevelWords().map((word) => {
    const own = COMMANDS.find((c) => c.path.length === 1 && c.path[0] === word);
    const children = subcommandsOf(word).map((c) => c.path[1]).join(', ');
    return [word, own && !children ? own.summary : children ? `${children}` : ''];
  });
  return [
    'svc: single-host orchestrator client',
    '',
    'Usage: svc [GLOBAL OPTIONS] <COMMAND> [ARGS] [OPTIONS]',
    '',
    'Commands:',
    columns(rows),
    '',
    'Global options:',
    columns(GLOBAL_FLAGS.map(flagLine)),
    '',
    "Run 'svc <COMMAND> --help' for details. Environment: SVC_TOKEN, SVC_CONFIG_FILE, SVC_CONFIG_DIR, NO_COLOR.",
    '',
  ].join('\n');
}
