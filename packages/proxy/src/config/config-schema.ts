// The strict schema of config.yaml: unknown keys and wrong types are errors, absent keys take their default.
// Pure: plain data in (already parsed), a ProxyConfig or issues out. See docs/proxy/configuration.md.
import { isIP } from 'node:net';
import { isAbsolute, join } from 'node:path';
import type { ListenerConfig } from '../model/dataplane-contract.js';
import { PROVIDER_NAMES, type ProviderName } from '../model/entrypoint.js';
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
  REQUIRED,
  type Issue,
  type Parser,
  type Path,
} from './checks.js';
import { isValidHostAddress } from './entrypoint-schema.js';
import { parseListenAddress, type HostPort } from '../upstream/address.js';

export type Role = 'admin' | 'read-only';

export interface ApiUser {
  name: string;
  /** Lowercase hex SHA-256 of the password. */
  hash: string;
  role: Role;
}

export interface ApiConfig {
  enabled: boolean;
  listen_address: string;
  users: ApiUser[];
  cors_origins: string[];
  /** Where API-created entrypoints are persisted (absolute after loading). */
  state_file: string;
}

export interface ProxySection extends ListenerConfig {
  trusted_proxies: string[];
  workers: number;
}

export interface ContainerProviderConfig {
  enabled: boolean;
  endpoint: string;
  expose_by_default: boolean;
  network: string | null;
}

export interface ProvidersConfig {
  config: { enabled: boolean; path: string; watch: boolean };
  http: { enabled: boolean; url: string | null; poll_interval: number; timeout: number; headers: Record<string, string> };
  docker: ContainerProviderConfig;
  podman: ContainerProviderConfig;
  swarm: ContainerProviderConfig;
  kubernetes: { enabled: boolean; kubeconfig: string | null; namespaces: string[] };
  nomad: { enabled: boolean; address: string; namespace: string };
}

export interface AcmeConfig {
  enabled: boolean;
  email: string | null;
  ca_server: string;
  certs_dir: string;
}

export interface ProxyConfig {
  api: ApiConfig;
  proxy: ProxySection;
  providers: ProvidersConfig;
  acme: AcmeConfig;
  /** Providers whose block exists in the file, whether enabled or not (GET /providers `configured`). */
  configured_providers: ProviderName[];
}

export const DEFAULT_API_LISTEN = '127.0.0.1:3035';
export const LETS_ENCRYPT_DIRECTORY = 'https://acme-v02.api.letsencrypt.org/directory';

export interface SchemaContext {
  /** Directory of config.yaml; relative paths in the file are relative to it. */
  baseDir: string;
  /** Basename of config.yaml without extension; names the default state file. */
  configStem: string;
  /** Default for proxy.workers (number of CPUs). */
  defaultWorkers: number;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** `host:port`, `[v6]:port` or `:port` (all IPv4 interfaces); the host may be an IP or a hostname. */
export function splitListenAddress(text: string): HostPort | null {
  const parsed = parseListenAddress(text);
  if (!parsed) return null;
  if (isIP(parsed.host) === 0 && !isValidHostAddress(parsed.host)) return null;
  return parsed;
}

const asListenAddress: Parser<string> = (value, path, issues) => {
  const text = asString({ nonEmpty: true, max: 300 })(value, path, issues);
  if (text === undefined) return undefined;
  if (!splitListenAddress(text)) {
    return issues.add(path, `${describe(text)} is not "host:port" (port 0-65535; IPv6 in brackets)`, 'E001');
  }
  return text;
};

const asIpOrCidr: Parser<string> = (value, path, issues) => {
  const text = asString({ nonEmpty: true, max: 64 })(value, path, issues);
  if (text === undefined) return undefined;
  const [ip, bits, extra] = text.split('/');
  const family = isIP(ip ?? '');
  const maxBits = family === 6 ? 128 : 32;
  const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
  if (family === 0 || !bitsOk || extra !== undefined) return issues.add(path, `${describe(text)} is not an IP address or CIDR`);
  return text;
};

const asOrigin: Parser<string> = (value, path, issues) => {
  const text = asString({ nonEmpty: true, max: 300 })(value, path, issues);
  if (text === undefined) return undefined;
  try {
    const url = new URL(text);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text.replace(/\/$/, '')) return url.origin;
  } catch {
    // fall through to the issue
  }
  return issues.add(path, `${describe(text)} is not an origin such as https://dashboard.example.com`);
};

function asPath(ctx: SchemaContext): Parser<string> {
  return (value, path, issues) => {
    const text = asString({ nonEmpty: true, max: 4096 })(value, path, issues);
    if (text === undefined) return undefined;
    return isAbsolute(text) ? text : join(ctx.baseDir, text);
  };
}

const parseUser: Parser<ApiUser> = (value, path, issues) => {
  const obj = objectWith(value, path, issues, ['name', 'hash', 'role']);
  if (!obj) return undefined;
  const name = field(obj, 'name', path, issues, asString({ nonEmpty: true, max: 256, pattern: /^[^:\s]+$/, patternHint: 'no colon or whitespace' }), REQUIRED);
  const hash = field(obj, 'hash', path, issues, asString({ pattern: SHA256_HEX, patternHint: 'must be 64 lowercase hex characters (SHA-256 of the password)' }), REQUIRED);
  const role = field(obj, 'role', path, issues, asEnum<Role>(['admin', 'read-only']), 'admin');
  if (name === undefined || hash === undefined || role === undefined) return undefined;
  return { name, hash, role };
};

const asHeaderMap: Parser<Record<string, string>> = (value, path, issues) => {
  if (!isRecord(value)) return issues.add(path, `must be a map of header name to value, got ${describe(value)}`);
  const out: Record<string, string> = {};
  for (const [name, headerValue] of Object.entries(value)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) issues.add([...path, name], `"${name}" is not a header name`, 'E004', 'key');
    else if (typeof headerValue !== 'string' || /[\r\n\0]/.test(headerValue)) issues.add([...path, name], 'must be a string without CR, LF or NUL');
    else out[name] = headerValue;
  }
  return out;
};

/** `field` for a section that may be absent or written as an empty key (`api:` → null). */
function section<T>(obj: Record<string, unknown>, key: string, path: Path, issues: Issues, parse: (o: Record<string, unknown>, p: Path) => T): T | undefined {
  const raw = obj[key];
  const here = [...path, key];
  if (raw === undefined || raw === null) return parse({}, here);
  if (!isRecord(raw)) return issues.add(here, `must be a map, got ${describe(raw)}`);
  return parse(raw, here);
}

function listener(withName: boolean): Parser<{ name: string; listen_address: string }> {
  return (value, path, issues) => {
    const obj = objectWith(value, path, issues, withName ? ['name', 'listen_address'] : ['listen_address']);
    if (!obj) return undefined;
    const name = withName ? field(obj, 'name', path, issues, asString({ pattern: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, patternHint: 'letters, digits, ".", "_", "-"' }), REQUIRED) : '';
    const address = field(obj, 'listen_address', path, issues, asListenAddress, REQUIRED);
    if (name === undefined || address === undefined) return undefined;
    return { name, listen_address: address };
  };
}

function containerProvider(defaultEndpoint: string): (o: Record<string, unknown>, p: Path, issues: Issues) => ContainerProviderConfig | undefined {
  return (o, p, issues) => {
    objectWith(o, p, issues, ['enabled', 'endpoint', 'expose_by_default', 'network']);
    const enabled = field(o, 'enabled', p, issues, asBool, false);
    const endpoint = field(o, 'endpoint', p, issues, asString({ nonEmpty: true, max: 4096 }), defaultEndpoint);
    const expose = field(o, 'expose_by_default', p, issues, asBool, false);
    const network = field(o, 'network', p, issues, nullable(asString({ nonEmpty: true, max: 256 })), null);
    if (enabled === undefined || endpoint === undefined || expose === undefined || network === undefined) return undefined;
    return { enabled, endpoint, expose_by_default: expose, network };
  };
}

/** Validates the plain value of config.yaml. Issues carry the path of the offending key or value. */
export function parseProxyConfig(input: unknown, ctx: SchemaContext): { config: ProxyConfig | null; issues: Issue[] } {
  const issues = new Issues();
  const root = input === null || input === undefined ? {} : input;
  const obj = objectWith(root, [], issues, ['api', 'proxy', 'providers', 'acme']);
  if (!obj) return { config: null, issues: retag(issues.list) };

  const api = section(obj, 'api', [], issues, (o, p): ApiConfig | undefined => {
    objectWith(o, p, issues, ['enabled', 'listen_address', 'users', 'cors_origins', 'state_file']);
    const enabled = field(o, 'enabled', p, issues, asBool, false);
    const listen = field(o, 'listen_address', p, issues, asListenAddress, DEFAULT_API_LISTEN);
    const users = field(o, 'users', p, issues, listOf(parseUser, { max: 1000 }), []);
    const cors = field(o, 'cors_origins', p, issues, listOf(asOrigin, { max: 100 }), []);
    const stateFile = field(o, 'state_file', p, issues, asPath(ctx), join(ctx.baseDir, `${ctx.configStem}.state.json`));
    if (users) {
      const seen = new Set<string>();
      users.forEach((user, index) => {
        if (seen.has(user.name)) issues.add([...p, 'users', index, 'name'], `duplicate user name "${user.name}"`);
        seen.add(user.name);
      });
    }
    if (enabled === undefined || listen === undefined || users === undefined || cors === undefined || stateFile === undefined) return undefined;
    return { enabled, listen_address: listen, users, cors_origins: cors, state_file: stateFile };
  });

  const proxy = section(obj, 'proxy', [], issues, (o, p): ProxySection | undefined => {
    objectWith(o, p, issues, ['http', 'https', 'tcp', 'udp', 'trusted_proxies', 'workers']);
    const http = field(o, 'http', p, issues, nullable(listener(false)), null);
    const https = field(o, 'https', p, issues, nullable(listener(false)), null);
    const tcp = field(o, 'tcp', p, issues, nullable(listOf(listener(true), { max: 1000 })), []);
    const udp = field(o, 'udp', p, issues, nullable(listOf(listener(true), { max: 1000 })), []);
    const trusted = field(o, 'trusted_proxies', p, issues, listOf(asIpOrCidr, { max: 1000 }), []);
    const workers = field(o, 'workers', p, issues, asInt({ min: 1, max: 256 }), ctx.defaultWorkers);
    for (const [kind, list] of [['tcp', tcp], ['udp', udp]] as const) {
      const seen = new Set<string>();
      (list ?? []).forEach((item, index) => {
        if (seen.has(item.name)) issues.add([...p, kind, index, 'name'], `duplicate ${kind} listener name "${item.name}"`);
        seen.add(item.name);
      });
    }
    if (http === undefined || https === undefined || tcp === undefined || udp === undefined || trusted === undefined || workers === undefined) return undefined;
    return {
      http: http === null ? null : { listen_address: http.listen_address },
      https: https === null ? null : { listen_address: https.listen_address },
      tcp: tcp ?? [],
      udp: udp ?? [],
      trusted_proxies: trusted,
      workers,
    };
  });

  const providers = section(obj, 'providers', [], issues, (o, p): ProvidersConfig | undefined => {
    objectWith(o, p, issues, ['config', 'http', 'docker', 'podman', 'swarm', 'kubernetes', 'nomad']);
    const config = section(o, 'config', p, issues, (c, cp) => {
      objectWith(c, cp, issues, ['enabled', 'path', 'watch']);
      const enabled = field(c, 'enabled', cp, issues, asBool, false);
      const path = field(c, 'path', cp, issues, asPath(ctx), join(ctx.baseDir, 'routes.yaml'));
      const watch = field(c, 'watch', cp, issues, asBool, true);
      if (enabled === undefined || path === undefined || watch === undefined) return undefined;
      return { enabled, path, watch };
    });
    const http = section(o, 'http', p, issues, (c, cp) => {
      objectWith(c, cp, issues, ['enabled', 'url', 'poll_interval', 'timeout', 'headers']);
      const enabled = field(c, 'enabled', cp, issues, asBool, false);
      const url = field(c, 'url', cp, issues, nullable(asHttpUrl), null);
      const interval = field(c, 'poll_interval', cp, issues, asInt({ min: 1, max: 86_400 }), 30);
      const timeout = field(c, 'timeout', cp, issues, asInt({ min: 1, max: 300 }), 5);
      const headers = field(c, 'headers', cp, issues, asHeaderMap, {});
      if (enabled && url === null) issues.add([...cp, 'url'], 'is required when the http provider is enabled');
      if (enabled === undefined || url === undefined || interval === undefined || timeout === undefined || headers === undefined) return undefined;
      return { enabled, url, poll_interval: interval, timeout, headers };
    });
    const docker = section(o, 'docker', p, issues, (c, cp) => containerProvider('/var/run/docker.sock')(c, cp, issues));
    const podman = section(o, 'podman', p, issues, (c, cp) => containerProvider('/run/podman/podman.sock')(c, cp, issues));
    const swarm = section(o, 'swarm', p, issues, (c, cp) => containerProvider('/var/run/docker.sock')(c, cp, issues));
    const kubernetes = section(o, 'kubernetes', p, issues, (c, cp) => {
      objectWith(c, cp, issues, ['enabled', 'kubeconfig', 'namespaces']);
      const enabled = field(c, 'enabled', cp, issues, asBool, false);
      const kubeconfig = field(c, 'kubeconfig', cp, issues, nullable(asPath(ctx)), null);
      const namespaces = field(c, 'namespaces', cp, issues, listOf(asString({ nonEmpty: true, max: 253 })), []);
      if (enabled === undefined || kubeconfig === undefined || namespaces === undefined) return undefined;
      return { enabled, kubeconfig, namespaces };
    });
    const nomad = section(o, 'nomad', p, issues, (c, cp) => {
      objectWith(c, cp, issues, ['enabled', 'address', 'namespace']);
      const enabled = field(c, 'enabled', cp, issues, asBool, false);
      const address = field(c, 'address', cp, issues, asHttpUrl, 'http://127.0.0.1:4646');
      const namespace = field(c, 'namespace', cp, issues, asString({ nonEmpty: true, max: 253 }), 'default');
      if (enabled === undefined || address === undefined || namespace === undefined) return undefined;
      return { enabled, address, namespace };
    });
    if (!config || !http || !docker || !podman || !swarm || !kubernetes || !nomad) return undefined;
    return { config, http, docker, podman, swarm, kubernetes, nomad };
  });

  const acme = section(obj, 'acme', [], issues, (o, p): AcmeConfig | undefined => {
    objectWith(o, p, issues, ['enabled', 'email', 'ca_server', 'certs_dir']);
    const enabled = field(o, 'enabled', p, issues, asBool, false);
    const email = field(o, 'email', p, issues, nullable(asString({ pattern: /^[^@\s]+@[^@\s]+$/, max: 320, patternHint: 'must be an e-mail address' })), null);
    const ca = field(o, 'ca_server', p, issues, asHttpUrl, LETS_ENCRYPT_DIRECTORY);
    const certs = field(o, 'certs_dir', p, issues, asPath(ctx), join(ctx.baseDir, 'certs'));
    if (enabled === undefined || email === undefined || ca === undefined || certs === undefined) return undefined;
    return { enabled, email, ca_server: ca, certs_dir: certs };
  });

  if (!issues.empty || !api || !proxy || !providers || !acme) return { config: null, issues: retag(issues.list) };
  const providerBlock = obj.providers;
  const configured = isRecord(providerBlock) ? PROVIDER_NAMES.filter((name) => name in providerBlock) : [];
  return { config: { api, proxy, providers, acme, configured_providers: configured }, issues: [] };
}

const asHttpUrl: Parser<string> = (value, path, issues) => {
  const text = asString({ nonEmpty: true, max: 2048 })(value, path, issues);
  if (text === undefined) return undefined;
  try {
    const url = new URL(text);
    if (url.protocol === 'http:' || url.protocol === 'https:') return text;
  } catch {
    // fall through
  }
  return issues.add(path, `${describe(text)} is not an http:// or https:// URL`);
};

/** Every schema problem of config.yaml is reported under E001. */
function retag(list: Issue[]): Issue[] {
  return list.map((issue) => ({ ...issue, code: 'E001' }));
}
