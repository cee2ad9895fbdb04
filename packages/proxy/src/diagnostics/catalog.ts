// The one catalog of diagnostic codes. `svc-proxy explain`, docs/proxy/diagnostics.md and every diagnostic the
// control plane emits take their code, severity and title from here. E### = error, W### = warning, I### = info.

export type Severity = 'error' | 'warn' | 'info';

export interface CatalogEntry {
  code: string;
  severity: Severity;
  title: string;
  cause: string;
  effect: string;
  fix: string;
}

export const CATALOG = [
  {
    code: 'E001',
    severity: 'error',
    title: 'config.yaml is invalid',
    cause: 'config.yaml is not valid YAML, has an unknown key, or a value of the wrong type or out of range.',
    effect: 'The proxy refuses to start (and `validate` exits 1). The message gives file:line:column.',
    fix: 'Correct the key or value at the reported position; docs/proxy/configuration.md lists every key.',
  },
  {
    code: 'E002',
    severity: 'error',
    title: 'Management API enabled without users',
    cause: '`api.enabled` is true and `api.users` is empty. The API has no anonymous mode.',
    effect: 'The proxy refuses to start.',
    fix: 'Add at least one user `{name, hash, role}` (hash = lowercase hex SHA-256 of the password) or set `api.enabled: false`.',
  },
  {
    code: 'E003',
    severity: 'error',
    title: 'Routes file cannot be loaded',
    cause: 'The routes file of the `config` provider is missing, unreadable, not valid YAML/JSON, or not of the shape `entrypoints: [...]`.',
    effect: 'The previous routes of the file stay in service; nothing from the broken version is applied.',
    fix: 'Fix the file at the reported file:line:column and save it again; the change applies without a restart.',
  },
  {
    code: 'E004',
    severity: 'error',
    title: 'Entrypoint definition is invalid',
    cause: 'A required field is missing, a field has the wrong type or an unknown value, or an unknown field is present.',
    effect: 'This entrypoint is skipped; the other entrypoints of the same source are applied. Through the API the request is rejected with 422.',
    fix: 'Correct the field named in the message (field names are those of the management API).',
  },
  {
    code: 'E005',
    severity: 'error',
    title: 'Invalid regular expression in hostnames or path',
    cause: 'A hostname between slashes (`/.../`) or a path with `rule_type: Regex` is not a valid regular expression.',
    effect: 'This entrypoint is skipped (API: 422).',
    fix: 'Fix the expression; it uses JavaScript RegExp syntax and is matched against the whole host or path.',
  },
  {
    code: 'E006',
    severity: 'error',
    title: 'strip_prefix and add_prefix together',
    cause: '`strip_prefix: true` and a non-null `add_prefix` are set on the same entrypoint; they are mutually exclusive.',
    effect: 'This entrypoint is skipped (API: 422).',
    fix: 'Keep only one of them; to replace a prefix use two entrypoints or rewrite in the backend.',
  },
  {
    code: 'E007',
    severity: 'error',
    title: 'Entrypoint has no backends',
    cause: '`backends` is empty.',
    effect: 'This entrypoint is skipped (API: 422).',
    fix: 'Add at least one backend `{address, port, weight?}`.',
  },
  {
    code: 'E008',
    severity: 'error',
    title: 'Invalid backend address or weight',
    cause: 'A backend address is not an IPv4/IPv6 address or hostname, or its weight is negative or not an integer.',
    effect: 'This entrypoint is skipped (API: 422).',
    fix: 'Use a valid address and a weight >= 0 (default 100).',
  },
  {
    code: 'E009',
    severity: 'error',
    title: 'Tcp/Udp entrypoint names no configured listener',
    cause: 'A Tcp (or Udp) entrypoint has no `config.entrypoint`, or it names a listener that is not declared under `proxy.tcp` (or `proxy.udp`) in config.yaml.',
    effect: 'The entrypoint is listed but receives no traffic (API: 422).',
    fix: 'Set `config.entrypoint` to the `name` of a listener declared in config.yaml, or declare that listener.',
  },
  {
    code: 'W001',
    severity: 'warn',
    title: 'Invalid port value',
    cause: 'A backend port (or a port in a label) is not an integer between 1 and 65535.',
    effect: 'This entrypoint is skipped (API: 422).',
    fix: 'Use a port between 1 and 65535.',
  },
  {
    code: 'W002',
    severity: 'warn',
    title: 'Same entrypoint id defined by two sources',
    cause: 'Two sources (for example the API and the routes file) define an entrypoint with the same protocol and name, hence the same id.',
    effect: 'One definition serves traffic, chosen by source precedence: api, config, http, docker, podman, swarm, kubernetes, nomad. The other is ignored while the conflict lasts.',
    fix: 'Rename one of the entrypoints, or remove it from one source.',
  },
  {
    code: 'W003',
    severity: 'warn',
    title: 'Same entrypoint id twice in one source',
    cause: 'A source lists two entrypoints with the same protocol and name.',
    effect: 'The first one is used; the later duplicate is ignored.',
    fix: 'Give each entrypoint a unique name within its protocol.',
  },
  {
    code: 'W004',
    severity: 'warn',
    title: 'HTTP provider endpoint failed',
    cause: 'The `http` provider could not fetch its URL (connection error, timeout, non-2xx status) or the body is not a JSON array of entrypoints.',
    effect: 'The last good set of entrypoints from this provider stays in service; the endpoint is polled again at the next interval.',
    fix: 'Check that `providers.http.url` answers 200 with a JSON array of entrypoints within `providers.http.timeout` seconds.',
  },
  {
    code: 'W005',
    severity: 'warn',
    title: 'Every backend has weight 0',
    cause: 'All backends of the entrypoint have `weight: 0`.',
    effect: 'Weight 0 means "only when nothing else exists"; with all backends at 0 they share traffic equally, which is rarely intended.',
    fix: 'Give at least one backend a positive weight (default 100).',
  },
  {
    code: 'W006',
    severity: 'warn',
    title: 'tls=true without an https listener',
    cause: 'An Http entrypoint sets `tls: true` (or `https_redirect: true`) but config.yaml declares no `proxy.https` listener.',
    effect: 'No TLS traffic can reach the entrypoint; an https redirect points at a port nobody serves.',
    fix: 'Declare `proxy.https.listen_address` in config.yaml, or set `tls: false`.',
  },
  {
    code: 'W007',
    severity: 'warn',
    title: 'Http entrypoint without an http listener',
    cause: 'An Http entrypoint exists but config.yaml declares neither `proxy.http` nor `proxy.https`.',
    effect: 'The entrypoint receives no traffic.',
    fix: 'Declare `proxy.http.listen_address` (and/or `proxy.https`) in config.yaml.',
  },
  {
    code: 'W008',
    severity: 'warn',
    title: 'Provider enabled but not available',
    cause: 'A provider is enabled in config.yaml but is not available in this build, or could not be started.',
    effect: 'The provider contributes no entrypoints.',
    fix: 'Disable the provider, or use a build that ships it; see docs/proxy/providers.md.',
  },
  {
    code: 'W015',
    severity: 'warn',
    title: 'ACME enabled but no entrypoint declares tls=true',
    cause: '`acme.enabled` is true but no entrypoint sets `config.tls: true`.',
    effect: 'No certificate is requested; the ACME account is unused.',
    fix: 'Set `tls: true` on the entrypoints that must be served over HTTPS, or disable ACME.',
  },
  {
    code: 'W018',
    severity: 'warn',
    title: 'Routes collide at runtime',
    cause: 'Two or more Http entrypoints match the same request (same host, path and method); only the one with the highest priority (then the most specific rule) receives it.',
    effect: 'The shadowed entrypoints never receive the example request given in the message.',
    fix: 'Make the hostnames/path rules disjoint, or set `priority` explicitly so the intended route wins.',
  },
  {
    code: 'I001',
    severity: 'info',
    title: 'Catch-all Http entrypoint',
    cause: 'An Http entrypoint has no hostnames, no path and no methods, so it matches every request.',
    effect: 'It receives every request that no more specific entrypoint matches.',
    fix: 'Nothing, if a default route is intended; otherwise add hostnames or a path.',
  },
] as const satisfies readonly CatalogEntry[];

export type DiagnosticCode = (typeof CATALOG)[number]['code'];

const BY_CODE: ReadonlyMap<string, CatalogEntry> = new Map(CATALOG.map((entry) => [entry.code, entry]));

export function catalogEntry(code: string): CatalogEntry | undefined {
  return BY_CODE.get(code.toUpperCase());
}

export function knownCodes(): string[] {
  return CATALOG.map((entry) => entry.code);
}
