// Log level from SVC_LOG, else RUST_LOG (the spec's name). Both accept RUST_LOG's directive syntax:
// `info`, `svc=debug`, `svc=debug,warn`. A directive for the `svc` target wins over a bare level; directives for
// other targets are ignored (RUST_LOG is often shared with other tools); the default is `info`.
export const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class LogLevelError extends Error {}

const ALIASES: Record<string, LogLevel> = {
  off: 'silent',
  silent: 'silent',
  none: 'silent',
  error: 'error',
  warn: 'warn',
  warning: 'warn',
  info: 'info',
  debug: 'debug',
  trace: 'trace',
};

function levelOf(word: string, variable: string): LogLevel {
  const level = ALIASES[word.trim().toLowerCase()];
  if (!level) {
    throw new LogLevelError(`${variable}: unknown log level '${word.slice(0, 40)}' (use off, error, warn, info, debug or trace)`);
  }
  return level;
}

/** Pure: directive text → level, or undefined when no directive concerns svc. */
export function parseLogDirectives(text: string, variable: string): LogLevel | undefined {
  let bare: LogLevel | undefined;
  let forSvc: LogLevel | undefined;
  for (const raw of text.split(',')) {
    const directive = raw.trim();
    if (directive === '') continue;
    const eq = directive.indexOf('=');
    if (eq === -1) {
      bare = levelOf(directive, variable);
      continue;
    }
    const target = directive.slice(0, eq).trim();
    if (target === 'svc' || target.startsWith('svc::') || target.startsWith('svc_')) forSvc = levelOf(directive.slice(eq + 1), variable);
  }
  return forSvc ?? bare;
}

export function resolveLogLevel(env: NodeJS.ProcessEnv): LogLevel {
  if (env.SVC_LOG !== undefined && env.SVC_LOG.trim() !== '') return parseLogDirectives(env.SVC_LOG, 'SVC_LOG') ?? 'info';
  if (env.RUST_LOG !== undefined && env.RUST_LOG.trim() !== '') return parseLogDirectives(env.RUST_LOG, 'RUST_LOG') ?? 'info';
  return 'info';
}
