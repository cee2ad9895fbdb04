// THE validation of an entrypoint definition, shared by the management API (POST/PUT bodies) and every
// provider (routes file, http poll, container labels). Pure: plain data in, a normalized Entrypoint with every
// default applied (or the list of issues) out.
import { isIP } from 'node:net';
import {
  defaultEntrypointConfig,
  entrypointId,
  PROTOCOLS,
  type Backend,
  type Entrypoint,
  type EntrypointConfig,
  type HealthCheckConfig,
  type Protocol,
  type Source,
} from '../model/entrypoint.js';
import type { ListenerConfig } from '../model/dataplane-contract.js';
import {
  asBool,
  asEnum,
  asInt,
  asString,
  describe,
  field,
  Issues,
  isRecord,
  listOf,
  nullable,
  objectWith,
  regexError,
  REQUIRED,
  type Issue,
  type Parser,
  type Path,
} from './checks.js';

export const ENTRYPOINT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
const HOSTNAME_LABEL = /^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Fields shown in GET responses (or generated) that a client may send back; they are ignored. */
const READ_ONLY_FIELDS = ['id', 'source', 'unhealthy_backends', 'diagnostics'] as const;
const BODY_FIELDS = ['name', 'protocol', 'backends', 'config'] as const;
const CONFIG_FIELDS = Object.keys(defaultEntrypointConfig());

export interface EntrypointParseOptions {
  source: Source;
  /**
   * The API requires `config.hostnames` and `config.priority` (spec: "every field except hostnames and
   * priority is optional"). Files, polls and labels may omit them (defaults [] and 0).
   */
  requireCoreConfigFields: boolean;
}

export interface EntrypointParseResult {
  /** The normalized entrypoint, or null when any issue was found. */
  entrypoint: Entrypoint | null;
  /** `http_<name>` etc. when protocol and name could be read; what diagnostics attach to. */
  candidateId: string | null;
  issues: Issue[];
}

export function isValidHostAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIP(bare) !== 0) return true;
  if (address.length > 253) return false;
  const labels = address.endsWith('.') ? address.slice(0, -1).split('.') : address.split('.');
  return labels.every((label) => HOSTNAME_LABEL.test(label));
}

const parseBackend: Parser<Backend> = (value, path, issues) => {
  const obj = objectWith(value, path, issues, ['address', 'port', 'weight']);
  if (!obj) return undefined;
  const address = field(obj, 'address', path, issues, asString({ nonEmpty: true, max: 255 }), REQUIRED);
  const port = field(obj, 'port', path, issues, asInt({ min: 1, max: 65535, code: 'W001', what: 'port must be an integer' }), REQUIRED);
  const weight = field(obj, 'weight', path, issues, asInt({ min: 0, max: 1_000_000, code: 'E008', what: 'weight must be an integer' }), 100);
  if (address !== undefined && !isValidHostAddress(address)) {
    issues.add([...path, 'address'], `${describe(address)} is not an IPv4/IPv6 address or hostname`, 'E008');
    return undefined;
  }
  if (address === undefined || port === undefined || weight === undefined) return undefined;
  return { address, port, weight };
};

const parseHostname: Parser<string> = (value, path, issues) => {
  if (typeof value !== 'string') return issues.add(path, `must be a string, got ${describe(value)}`);
  if (value.length === 0 || value.length > 512) return issues.add(path, 'must be 1 to 512 characters');
  if (value.length >= 2 && value.startsWith('/') && value.endsWith('/')) {
    const error = regexError(value.slice(1, -1));
    return error === null ? value : issues.add(path, `invalid regular expression ${value}: ${error}`, 'E005');
  }
  const lower = value.toLowerCase();
  const plain = lower.startsWith('*.') ? lower.slice(2) : lower;
  if (!isValidHostAddress(plain) || plain.includes('*')) {
    return issues.add(path, `${describe(value)} is not a hostname, a wildcard "*.<domain>" or a regex between slashes`);
  }
  return lower;
};

const parsePath: Parser<{ rule_type: 'Prefix' | 'Exact' | 'Regex'; value: string }> = (value, path, issues) => {
  const obj = objectWith(value, path, issues, ['rule_type', 'value']);
  if (!obj) return undefined;
  const ruleType = field(obj, 'rule_type', path, issues, asEnum(['Prefix', 'Exact', 'Regex'] as const), REQUIRED);
  const text = field(obj, 'value', path, issues, asString({ nonEmpty: true, max: 2048 }), REQUIRED);
  if (ruleType === undefined || text === undefined) return undefined;
  if (ruleType === 'Regex') {
    const error = regexError(text);
    if (error !== null) return issues.add([...path, 'value'], `invalid regular expression: ${error}`, 'E005');
  } else if (!text.startsWith('/')) {
    return issues.add([...path, 'value'], `a ${ruleType} path must start with "/"`);
  }
  return { rule_type: ruleType, value: text };
};

const parseBasicUser: Parser<{ username: string; password_hash: string }> = (value, path, issues) => {
  const obj = objectWith(value, path, issues, ['username', 'password_hash']);
  if (!obj) return undefined;
  const username = field(obj, 'username', path, issues, asString({ nonEmpty: true, max: 256, pattern: /^[^:\s]+$/, patternHint: 'no colon or whitespace' }), REQUIRED);
  const hash = field(obj, 'password_hash', path, issues, asString({ pattern: SHA256_HEX, patternHint: 'must be 64 lowercase hex characters (SHA-256)' }), REQUIRED);
  if (username === undefined || hash === undefined) return undefined;
  return { username, password_hash: hash };
};

const parseAuth: Parser<{ basic: { username: string; password_hash: string }[] }> = (value, path, issues) => {
  const obj = objectWith(value, path, issues, ['basic']);
  if (!obj) return undefined;
  const basic = field(obj, 'basic', path, issues, listOf(parseBasicUser, { max: 1000 }), REQUIRED);
  return basic === undefined ? undefined : { basic };
};

const parseUrl: Parser<string> = (value, path, issues) => {
  const text = asString({ nonEmpty: true, max: 2048 })(value, path, issues);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return issues.add(path, `${describe(text)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return issues.add(path, 'must be an http:// or https:// URL');
  return text;
};

const parseForwardAuth: Parser<EntrypointConfig['forward_auth'] & object> = (value, path, issues) => {
  const obj = objectWith(value, path, issues, ['address', 'response_headers', 'trust_forward_header']);
  if (!obj) return undefined;
  const address = field(obj, 'address', path, issues, parseUrl, REQUIRED);
  const responseHeaders = field(obj, 'response_headers', path, issues, listOf(asString({ pattern: HTTP_TOKEN, patternHint: 'must be a header name' }), { max: 100 }), []);
  const trust = field(obj, 'trust_forward_header', path, issues, asBool, false);
  if (address === undefined || responseHeaders === undefined || trust === undefined) return undefined;
  return { address, response_headers: responseHeaders, trust_forward_header: trust };
};

const parseHeaderRule: Parser<EntrypointConfig['headers'][number]> = (value, path, issues) => {
  const obj = objectWith(value, path, issues, ['name', 'value', 'direction']);
  if (!obj) return undefined;
  const name = field(obj, 'name', path, issues, asString({ pattern: HTTP_TOKEN, max: 256, patternHint: 'must be a header name' }), REQUIRED);
  const text = field(obj, 'value', path, issues, asString({ pattern: /^[^\r\n\0]*$/, max: 8192, patternHint: 'no CR, LF or NUL' }), REQUIRED);
  const direction = field(obj, 'direction', path, issues, asEnum(['request', 'response', 'both'] as const), 'request');
  if (name === undefined || text === undefined || direction === undefined) return undefined;
  return { name, value: text, direction };
};

const parseRateLimit: Parser<{ average: number; burst: number }> = (value, path, issues) => {
  const obj = objectWith(value, path, issues, ['average', 'burst']);
  if (!obj) return undefined;
  const average = field(obj, 'average', path, issues, asInt({ min: 1, max: 10_000_000 }), REQUIRED);
  const burst = field(obj, 'burst', path, issues, asInt({ min: 0, max: 10_000_000 }), 0);
  if (average === undefined || burst === undefined) return undefined;
  return { average, burst };
};

export const HEALTH_CHECK_DEFAULTS: Omit<HealthCheckConfig, 'type' | 'path'> = { interval: 10_000, timeout: 2_000, rise: 2, fall: 3 };

const parseHealthCheck: Parser<HealthCheckConfig> = (value, path, issues) => {
  const obj = objectWith(value, path, issues, ['type', 'path', 'interval', 'timeout', 'rise', 'fall']);
  if (!obj) return undefined;
  const type = field(obj, 'type', path, issues, asEnum(['tcp', 'http'] as const), 'tcp');
  const checkPath = field(obj, 'path', path, issues, nullable(asString({ pattern: /^\/[^\s]*$/, max: 2048, patternHint: 'must start with "/"' })), null);
  const interval = field(obj, 'interval', path, issues, asInt({ min: 100, max: 3_600_000 }), HEALTH_CHECK_DEFAULTS.interval);
  const timeout = field(obj, 'timeout', path, issues, asInt({ min: 10, max: 600_000 }), HEALTH_CHECK_DEFAULTS.timeout);
  const rise = field(obj, 'rise', path, issues, asInt({ min: 1, max: 100 }), HEALTH_CHECK_DEFAULTS.rise);
  const fall = field(obj, 'fall', path, issues, asInt({ min: 1, max: 100 }), HEALTH_CHECK_DEFAULTS.fall);
  if (type === undefined || checkPath === undefined || interval === undefined || timeout === undefined || rise === undefined || fall === undefined) {
    return undefined;
  }
  return { type, path: type === 'http' ? (checkPath ?? '/') : checkPath, interval, timeout, rise, fall };
};

const parseMethod: Parser<string> = (value, path, issues) => {
  const text = asString({ pattern: /^[A-Za-z]{1,20}$/, patternHint: 'must be an HTTP method such as GET' })(value, path, issues);
  return text === undefined ? undefined : text.toUpperCase();
};

function parseConfig(value: unknown, path: Path, issues: Issues, options: EntrypointParseOptions): EntrypointConfig | undefined {
  const obj = objectWith(value, path, issues, CONFIG_FIELDS);
  if (!obj) return undefined;
  const d = defaultEntrypointConfig();
  const core = options.requireCoreConfigFields;
  const before = issues.list.length;
  const config: Partial<EntrypointConfig> = {
    hostnames: field(obj, 'hostnames', path, issues, listOf(parseHostname, { max: 1000 }), core ? REQUIRED : d.hostnames),
    path: field(obj, 'path', path, issues, nullable(parsePath), d.path),
    tls: field(obj, 'tls', path, issues, asBool, d.tls),
    strip_prefix: field(obj, 'strip_prefix', path, issues, asBool, d.strip_prefix),
    add_prefix: field(obj, 'add_prefix', path, issues, nullable(asString({ pattern: /^\/[^\s]*$/, max: 2048, patternHint: 'must start with "/"' })), d.add_prefix),
    https_redirect: field(obj, 'https_redirect', path, issues, asBool, d.https_redirect),
    https_redirect_port: field(obj, 'https_redirect_port', path, issues, nullable(asInt({ min: 1, max: 65535, code: 'W001', what: 'port must be an integer' })), d.https_redirect_port),
    redirect: field(obj, 'redirect', path, issues, nullable(asEnum(['forward', 'permanent', 'unauthorized'] as const)), d.redirect),
    redirect_scheme: field(obj, 'redirect_scheme', path, issues, nullable(asEnum(['use_same', 'use_http', 'use_https'] as const)), d.redirect_scheme),
    redirect_template: field(obj, 'redirect_template', path, issues, nullable(asString({ max: 4096 })), d.redirect_template),
    www_authenticate: field(obj, 'www_authenticate', path, issues, nullable(asString({ max: 1024, pattern: /^[^\r\n\0]*$/, patternHint: 'no CR, LF or NUL' })), d.www_authenticate),
    priority: field(obj, 'priority', path, issues, asInt({ min: -1_000_000, max: 1_000_000 }), core ? REQUIRED : d.priority),
    auth: field(obj, 'auth', path, issues, nullable(parseAuth), d.auth),
    forward_auth: field(obj, 'forward_auth', path, issues, nullable(parseForwardAuth), d.forward_auth),
    headers: field(obj, 'headers', path, issues, listOf(parseHeaderRule, { max: 100 }), d.headers),
    backend_timeout: field(obj, 'backend_timeout', path, issues, nullable(asInt({ min: 1, max: 3_600_000 })), d.backend_timeout),
    rate_limit: field(obj, 'rate_limit', path, issues, nullable(parseRateLimit), d.rate_limit),
    sticky_session: field(obj, 'sticky_session', path, issues, asBool, d.sticky_session),
    compress: field(obj, 'compress', path, issues, asBool, d.compress),
    entrypoint: field(obj, 'entrypoint', path, issues, nullable(asString({ nonEmpty: true, max: 128 })), d.entrypoint),
    methods: field(obj, 'methods', path, issues, listOf(parseMethod, { max: 20 }), d.methods),
    health_check: field(obj, 'health_check', path, issues, nullable(parseHealthCheck), d.health_check),
  };
  if (issues.list.length > before) return undefined;
  const complete = config as EntrypointConfig;
  if (complete.strip_prefix && complete.add_prefix !== null) {
    return issues.add([...path, 'add_prefix'], 'strip_prefix and add_prefix are mutually exclusive', 'E006');
  }
  return complete;
}

/**
 * Validates one entrypoint definition as written in an API body, a routes file, an http poll or labels.
 * `id` and `source` in the input are ignored: the id is derived from protocol and name, the source is the caller's.
 */
export function parseEntrypoint(input: unknown, options: EntrypointParseOptions): EntrypointParseResult {
  const issues = new Issues();
  const obj = objectWith(input, [], issues, BODY_FIELDS, READ_ONLY_FIELDS);
  if (!obj) return { entrypoint: null, candidateId: null, issues: issues.list };
  const name = field(obj, 'name', [], issues, asString({ pattern: ENTRYPOINT_NAME_PATTERN, patternHint: 'use 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit' }), REQUIRED);
  const protocol = field(obj, 'protocol', [], issues, asEnum<Protocol>(PROTOCOLS), REQUIRED);
  const candidateId = name !== undefined && protocol !== undefined ? entrypointId(protocol, name) : null;
  let backends: Backend[] | undefined;
  if (!Object.hasOwn(obj, 'backends')) issues.add(['backends'], 'is required');
  else if (Array.isArray(obj.backends) && obj.backends.length === 0) issues.add(['backends'], 'needs at least one backend', 'E007');
  else backends = listOf(parseBackend, { max: 1000 })(obj.backends, ['backends'], issues);
  const config = field(obj, 'config', [], issues, (v, p, i) => parseConfig(v, p, i, options), REQUIRED);
  if (protocol !== undefined && protocol !== 'Http' && config && config.entrypoint === null) {
    issues.add(['config', 'entrypoint'], `is required for protocol ${protocol} (name of a proxy.${protocol.toLowerCase()} listener)`, 'E009');
  }
  if (!issues.empty || name === undefined || protocol === undefined || backends === undefined || config === undefined) {
    return { entrypoint: null, candidateId, issues: issues.list };
  }
  return {
    entrypoint: { id: entrypointId(protocol, name), name, protocol, backends, source: options.source, config },
    candidateId,
    issues: [],
  };
}

/** A Tcp/Udp entrypoint must name a listener declared in config.yaml. Null when fine. */
export function listenerReferenceIssue(entrypoint: Entrypoint, listeners: ListenerConfig): Issue | null {
  if (entrypoint.protocol === 'Http') return null;
  const declared = entrypoint.protocol === 'Tcp' ? listeners.tcp : listeners.udp;
  const kind = entrypoint.protocol === 'Tcp' ? 'proxy.tcp' : 'proxy.udp';
  const wanted = entrypoint.config.entrypoint;
  if (wanted !== null && declared.some((listener) => listener.name === wanted)) return null;
  const known = declared.map((listener) => listener.name);
  return {
    path: ['config', 'entrypoint'],
    message: `${wanted === null ? 'null' : JSON.stringify(wanted)} names no ${kind} listener in config.yaml (declared: ${known.length > 0 ? known.join(', ') : 'none'})`,
    code: 'E009',
    at: 'value',
  };
}
