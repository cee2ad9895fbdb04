// The one entrypoint model every source (API, config file, HTTP poll, container providers) produces.
// Field names are the management API's (spec/proxy.md); providers and labels use the same vocabulary.

export type Protocol = 'Http' | 'Tcp' | 'Udp';
export const PROTOCOLS: readonly Protocol[] = ['Http', 'Tcp', 'Udp'];

export type Source = 'api' | 'docker' | 'podman' | 'swarm' | 'kubernetes' | 'nomad' | 'http' | 'config';
export const PROVIDER_NAMES = ['docker', 'podman', 'swarm', 'kubernetes', 'nomad', 'http', 'config'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export interface Backend {
  address: string;
  port: number;
  /** Relative share of traffic; default 100. 0 means "never chosen while others exist". */
  weight: number;
}

export type PathRuleType = 'Prefix' | 'Exact' | 'Regex';
export interface PathRule {
  rule_type: PathRuleType;
  value: string;
}

export type RedirectKind = 'forward' | 'permanent' | 'unauthorized';
export type RedirectScheme = 'use_same' | 'use_http' | 'use_https';
export type HeaderDirection = 'request' | 'response' | 'both';

export interface BasicAuthUser {
  username: string;
  /** Lowercase hex SHA-256 of the password. */
  password_hash: string;
}

export interface ForwardAuth {
  address: string;
  response_headers: string[];
  trust_forward_header: boolean;
}

export interface HeaderRule {
  name: string;
  value: string;
  direction: HeaderDirection;
}

export interface RateLimit {
  average: number;
  burst: number;
}

/** Active health check of the backends of one entrypoint (an extension; documented in docs/). */
export interface HealthCheckConfig {
  /** `tcp` (connect) by default; `http` issues GET `path` and expects 2xx/3xx. */
  type: 'tcp' | 'http';
  path: string | null;
  /** Milliseconds. */
  interval: number;
  timeout: number;
  /** Consecutive successes to become healthy / failures to become unhealthy. */
  rise: number;
  fall: number;
}

export interface EntrypointConfig {
  hostnames: string[];
  path: PathRule | null;
  tls: boolean;
  strip_prefix: boolean;
  add_prefix: string | null;
  https_redirect: boolean;
  https_redirect_port: number | null;
  redirect: RedirectKind | null;
  redirect_scheme: RedirectScheme | null;
  redirect_template: string | null;
  www_authenticate: string | null;
  priority: number;
  auth: { basic: BasicAuthUser[] } | null;
  forward_auth: ForwardAuth | null;
  headers: HeaderRule[];
  /** Milliseconds. */
  backend_timeout: number | null;
  rate_limit: RateLimit | null;
  sticky_session: boolean;
  compress: boolean;
  /** Name of the TCP (or UDP) listener; required for protocol Tcp. */
  entrypoint: string | null;
  methods: string[];
  health_check: HealthCheckConfig | null;
}

export interface Entrypoint {
  /** `http_<name>`, `tcp_<name>` or `udp_<name>`; see entrypointId(). */
  id: string;
  name: string;
  protocol: Protocol;
  backends: Backend[];
  source: Source;
  config: EntrypointConfig;
}

const ID_PREFIX: Record<Protocol, string> = { Http: 'http', Tcp: 'tcp', Udp: 'udp' };

/** Stable id, identical across reloads and sources (DESIGN.md "Entrypoint ids"). */
export function entrypointId(protocol: Protocol, name: string): string {
  return `${ID_PREFIX[protocol]}_${name}`;
}

export function defaultEntrypointConfig(): EntrypointConfig {
  return {
    hostnames: [],
    path: null,
    tls: false,
    strip_prefix: false,
    add_prefix: null,
    https_redirect: false,
    https_redirect_port: null,
    redirect: null,
    redirect_scheme: null,
    redirect_template: null,
    www_authenticate: null,
    priority: 0,
    auth: null,
    forward_auth: null,
    headers: [],
    backend_timeout: null,
    rate_limit: null,
    sticky_session: false,
    compress: false,
    entrypoint: null,
    methods: [],
    health_check: null,
  };
}
