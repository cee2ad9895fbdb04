// The ONE table of every `svc` command and its flags. The parser, `--help` and the completion scripts are all
// generated from it, so they cannot drift apart. Pure data: importing it costs nothing at start-up.

export interface FlagSpec {
  /** Long name without dashes, e.g. `namespace`. */
  long: string;
  /** One letter, without the dash. */
  short?: string;
  /** `string` flags take a value; `boolean` flags do not. */
  type: 'string' | 'boolean';
  /** A string flag that may be repeated; its values are collected in order. */
  multiple?: boolean;
  /** Placeholder of the value in help text. */
  value?: string;
  /** Allowed values, checked by the parser and offered by the completion scripts for documentation only. */
  choices?: readonly string[];
  description: string;
}

export interface ArgSpec {
  name: string;
  required: boolean;
  /** Takes every remaining positional (only the last argument may). */
  variadic?: boolean;
}

/** Which lazily loaded module runs the command (cli/commands/<module>.ts). */
export type CommandModule =
  | 'init'
  | 'doctor'
  | 'completions'
  | 'server'
  | 'session'
  | 'apply'
  | 'deployment'
  | 'user'
  | 'token'
  | 'webhook'
  | 'secret'
  | 'config'
  | 'namespace'
  | 'node'
  | 'context';

export interface CommandSpec {
  /** Words that name the command, e.g. ['deployment', 'list']. */
  path: readonly string[];
  summary: string;
  args: readonly ArgSpec[];
  flags: readonly FlagSpec[];
  module: CommandModule;
  /** Accepts `-- WORDS...` after its arguments (passed through untouched). */
  passthrough?: boolean;
}

export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  { long: 'context', short: 'c', type: 'string', value: 'NAME', description: 'Context of config.toml to use (default: the one with current = true)' },
  { long: 'config', type: 'string', value: 'FILE', description: 'Config file to load (wins over SVC_CONFIG_FILE)' },
  { long: 'help', short: 'h', type: 'boolean', description: 'Show help' },
  { long: 'version', short: 'V', type: 'boolean', description: 'Print the version' },
];

const output: FlagSpec = { long: 'output', short: 'o', type: 'string', value: 'FORMAT', choices: ['table', 'json'], description: 'Output format' };
const namespaceFilter: FlagSpec = { long: 'namespace', short: 'n', type: 'string', value: 'NAMESPACE', description: 'Only this namespace' };
const id: ArgSpec = { name: 'ID', required: true };

export const RUNTIME_CHOICES = ['docker', 'podman', 'cloud-hypervisor', 'firecracker', 'both'] as const;

export const COMMANDS: readonly CommandSpec[] = [
  {
    path: ['init'],
    summary: 'Write config.toml and a generated secret key file',
    args: [],
    flags: [
      { long: 'runtime', type: 'string', value: 'RUNTIME', choices: RUNTIME_CHOICES, description: 'Runtime to enable (default docker)' },
      { long: 'port', type: 'string', value: 'PORT', description: 'API port (default 3030)' },
      { long: 'force', type: 'boolean', description: 'Overwrite config.toml and regenerate the key (existing secrets become undecryptable)' },
    ],
    module: 'init',
  },
  { path: ['doctor'], summary: 'Check the secret key and the runtimes; non-zero exit if a check fails', args: [], flags: [], module: 'doctor' },
  {
    path: ['completions'],
    summary: 'Print a shell completion script',
    args: [{ name: 'SHELL', required: true }],
    flags: [],
    module: 'completions',
  },
  { path: ['server', 'start'], summary: 'Start the server in the foreground', args: [], flags: [], module: 'server' },
  {
    path: ['login'],
    summary: 'Log in and save the session token for the current context',
    args: [],
    flags: [
      { long: 'username', short: 'u', type: 'string', value: 'USERNAME', description: 'User name' },
      { long: 'password', short: 'p', type: 'string', value: 'PASSWORD', description: 'Password (prompted on a terminal when absent)' },
    ],
    module: 'session',
  },
  { path: ['logout'], summary: 'Revoke the session (best effort) and remove the local token', args: [], flags: [], module: 'session' },
  {
    path: ['apply'],
    summary: 'Create or update the namespaces and deployments of a manifest',
    args: [],
    flags: [
      { long: 'file', short: 'f', type: 'string', value: 'FILE', description: 'Manifest (YAML or JSON; - reads stdin)' },
      { long: 'env-file', short: 'e', type: 'string', multiple: true, value: 'FILE', description: 'KEY=VALUE file for $VAR interpolation (repeatable; wins over the environment)' },
      { long: 'dry-run', short: 'd', type: 'boolean', description: 'Show what would be created or updated; change nothing' },
      { long: 'verbose', type: 'boolean', description: 'Print each request body' },
      { long: 'force', type: 'boolean', description: 'Replace instances immediately (no rolling update); re-apply unchanged deployments' },
    ],
    module: 'apply',
  },
  {
    path: ['deployment', 'list'],
    summary: 'List deployments',
    args: [],
    flags: [
      namespaceFilter,
      { long: 'status', short: 's', type: 'string', multiple: true, value: 'STATUS', description: 'Only this status (repeatable)' },
      { long: 'type', type: 'string', value: 'KIND', choices: ['worker', 'job'], description: 'Only this kind' },
      { long: 'label', short: 'l', type: 'string', multiple: true, value: 'KEY[=VALUE]', description: 'Only deployments with this label (repeatable; all must match)' },
      output,
    ],
    module: 'deployment',
  },
  { path: ['deployment', 'inspect'], summary: 'Show the full state of a deployment (JSON)', args: [id], flags: [], module: 'deployment' },
  { path: ['deployment', 'delete'], summary: 'Mark a deployment deleted', args: [id], flags: [], module: 'deployment' },
  {
    path: ['deployment', 'logs'],
    summary: 'Print the logs of a deployment',
    args: [id],
    flags: [
      { long: 'follow', short: 'f', type: 'boolean', description: 'Keep printing new lines (polls every 2 s)' },
      { long: 'tail', type: 'string', value: 'N', description: 'Lines from the end (default 100)' },
      { long: 'since', type: 'string', value: 'WHEN', description: 'Relative (30s, 10m, 2h) or RFC 3339' },
      { long: 'container', short: 'c', type: 'string', value: 'INSTANCE', description: 'Only this instance' },
    ],
    module: 'deployment',
  },
  {
    path: ['deployment', 'exec'],
    summary: 'Run a command in an instance (default /bin/sh)',
    args: [id],
    flags: [
      { long: 'container', short: 'c', type: 'string', value: 'INSTANCE', description: 'Instance to run in (default: the first)' },
      { long: 'no-tty', short: 'T', type: 'boolean', description: 'Do not allocate a terminal' },
    ],
    module: 'deployment',
    passthrough: true,
  },
  {
    path: ['deployment', 'events'],
    summary: 'Print the scheduler events of a deployment',
    args: [id],
    flags: [
      { long: 'follow', short: 'f', type: 'boolean', description: 'Keep printing new events (polls every 2 s)' },
      { long: 'level', short: 'l', type: 'string', value: 'LEVEL', choices: ['info', 'warning', 'error'], description: 'Only this level' },
      { long: 'limit', type: 'string', value: 'N', description: 'At most N events (default 50)' },
      output,
    ],
    module: 'deployment',
  },
  { path: ['deployment', 'metrics'], summary: 'Per-instance resource usage', args: [id], flags: [output], module: 'deployment' },
  {
    path: ['deployment', 'health-checks'],
    summary: 'Health-check results of a deployment',
    args: [id],
    flags: [
      { long: 'latest', type: 'boolean', description: 'Only the most recent result per check' },
      { long: 'limit', type: 'string', value: 'N', description: 'At most N results' },
      output,
    ],
    module: 'deployment',
  },
  { path: ['user', 'list'], summary: 'List users', args: [], flags: [output], module: 'user' },
  {
    path: ['user', 'create'],
    summary: 'Create a user',
    args: [],
    flags: [
      { long: 'username', short: 'u', type: 'string', value: 'USERNAME', description: 'User name' },
      { long: 'password', short: 'p', type: 'string', value: 'PASSWORD', description: 'Password (8-128 characters)' },
    ],
    module: 'user',
  },
  {
    path: ['user', 'update'],
    summary: 'Change the current user name or password',
    args: [],
    flags: [
      { long: 'username', short: 'u', type: 'string', value: 'USERNAME', description: 'New user name' },
      { long: 'password', short: 'p', type: 'string', value: 'PASSWORD', description: 'New password' },
    ],
    module: 'user',
  },
  { path: ['user', 'delete'], summary: 'Delete a user', args: [id], flags: [], module: 'user' },
  {
    path: ['token', 'create'],
    summary: 'Create a scoped API token (clear token on stdout, summary on stderr)',
    args: [{ name: 'NAME', required: true }],
    flags: [
      { long: 'scope', short: 's', type: 'string', multiple: true, value: 'SCOPE', description: 'Scope, e.g. deployments:read (repeatable)' },
      { long: 'namespace', short: 'n', type: 'string', multiple: true, value: 'NAMESPACE', description: 'Restrict to this namespace (repeatable; default all)' },
      { long: 'expire', short: 'e', type: 'string', value: 'DURATION', description: 'Lifetime: 30d, 12h or 90m (default: no expiry)' },
    ],
    module: 'token',
  },
  { path: ['token', 'list'], summary: 'List your API tokens', args: [], flags: [output], module: 'token' },
  {
    path: ['token', 'revoke'],
    summary: 'Revoke an API token',
    args: [id],
    flags: [{ long: 'yes', short: 'y', type: 'boolean', description: 'Do not ask for confirmation' }],
    module: 'token',
  },
  { path: ['token', 'rotate'], summary: 'Replace a token by a new one with the same rights', args: [id], flags: [], module: 'token' },
  {
    path: ['webhook', 'create'],
    summary: 'Register a webhook (id on stdout, generated secret on stderr)',
    args: [{ name: 'URL', required: true }],
    flags: [
      { long: 'event', short: 'e', type: 'string', multiple: true, value: 'KIND', description: 'Event kind filter, e.g. deployment.* (repeatable; default all)' },
      { long: 'secret', short: 's', type: 'string', value: 'SECRET', description: 'Signature secret (default: generated)' },
    ],
    module: 'webhook',
  },
  { path: ['webhook', 'list'], summary: 'List webhooks', args: [], flags: [output], module: 'webhook' },
  { path: ['webhook', 'delete'], summary: 'Revoke a webhook', args: [id], flags: [], module: 'webhook' },
  {
    path: ['secret', 'create'],
    summary: 'Create a secret',
    args: [{ name: 'NAME', required: true }],
    flags: [
      { long: 'namespace', short: 'n', type: 'string', value: 'NAMESPACE', description: 'Namespace (must exist)' },
      { long: 'value', short: 'v', type: 'string', value: 'VALUE', description: 'Secret value (- reads stdin)' },
    ],
    module: 'secret',
  },
  { path: ['secret', 'list'], summary: 'List secrets (never their values)', args: [], flags: [namespaceFilter, output], module: 'secret' },
  {
    path: ['secret', 'delete'],
    summary: 'Delete a secret',
    args: [id],
    flags: [{ long: 'force', short: 'f', type: 'boolean', description: 'Delete even when deployments reference it' }],
    module: 'secret',
  },
  { path: ['config', 'list'], summary: 'List configs', args: [], flags: [namespaceFilter, output], module: 'config' },
  { path: ['config', 'inspect'], summary: 'Show a config (JSON)', args: [id], flags: [], module: 'config' },
  { path: ['config', 'delete'], summary: 'Delete a config', args: [id], flags: [], module: 'config' },
  { path: ['namespace', 'create'], summary: 'Create a namespace', args: [{ name: 'NAME', required: true }], flags: [], module: 'namespace' },
  { path: ['namespace', 'list'], summary: 'List namespaces', args: [], flags: [output], module: 'namespace' },
  {
    path: ['namespace', 'prune'],
    summary: 'Delete finished and failed deployments of a namespace',
    args: [{ name: 'NAMESPACE', required: true }],
    flags: [{ long: 'all', short: 'a', type: 'boolean', description: 'Delete every deployment of the namespace' }],
    module: 'namespace',
  },
  { path: ['node', 'get'], summary: 'Node information', args: [], flags: [output], module: 'node' },
  { path: ['context'], summary: 'List the contexts of config.toml', args: [], flags: [], module: 'context' },
  { path: ['context', 'configs'], summary: 'List the contexts of config.toml', args: [], flags: [], module: 'context' },
  { path: ['context', 'current-context'], summary: 'Print the current context name', args: [], flags: [], module: 'context' },
  { path: ['context', 'user-token'], summary: 'Print the token of the current context', args: [], flags: [], module: 'context' },
];

/** Top-level words (nouns and single-word commands), in table order. */
export function topLevelWords(): string[] {
  return [...new Set(COMMANDS.map((c) => c.path[0]!))];
}

export function subcommandsOf(word: string): CommandSpec[] {
  return COMMANDS.filter((c) => c.path[0] === word && c.path.length > 1);
}
