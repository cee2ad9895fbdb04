import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatIssue } from '../../src/config/checks.js';
import { listenerReferenceIssue, parseEntrypoint } from '../../src/config/entrypoint-schema.js';
import { defaultEntrypointConfig } from '../../src/model/entrypoint.js';

const API = { source: 'api', requireCoreConfigFields: true } as const;
const FILE = { source: 'config', requireCoreConfigFields: false } as const;

function body(overrides: Record<string, unknown> = {}, config: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'web',
    protocol: 'Http',
    backends: [{ address: '10.0.0.1', port: 8080 }],
    config: { hostnames: ['app.example.com'], priority: 0, ...config },
    ...overrides,
  };
}

function issuesOf(input: unknown, options: Parameters<typeof parseEntrypoint>[1] = API): string[] {
  const result = parseEntrypoint(input, options);
  assert.equal(result.entrypoint, null, 'expected a rejection');
  return result.issues.map((issue) => `${issue.code} ${formatIssue(issue)}`);
}

test('a minimal body is normalized with every default applied', () => {
  const result = parseEntrypoint(body({ id: 'ignored', source: 'docker', unhealthy_backends: [], diagnostics: [] }), API);
  assert.deepEqual(result.issues, []);
  assert.deepEqual(result.entrypoint, {
    id: 'http_web',
    name: 'web',
    protocol: 'Http',
    backends: [{ address: '10.0.0.1', port: 8080, weight: 100 }],
    source: 'api',
    config: { ...defaultEntrypointConfig(), hostnames: ['app.example.com'] },
  });
});

test('ids derive from protocol and name', () => {
  assert.equal(parseEntrypoint(body({ protocol: 'Tcp', name: 'db' }, { entrypoint: 'pg' }), API).entrypoint?.id, 'tcp_db');
  assert.equal(parseEntrypoint(body({ protocol: 'Udp', name: 'dns' }, { entrypoint: 'dns' }), API).entrypoint?.id, 'udp_dns');
});

test('a full config round-trips with normalization (methods upper-cased, hostnames lower-cased)', () => {
  const config = {
    hostnames: ['App.Example.com', '*.example.org', '/^api-[0-9]+\\.example\\.net$/'],
    path: { rule_type: 'Prefix', value: '/api' },
    tls: true,
    strip_prefix: true,
    add_prefix: null,
    https_redirect: true,
    https_redirect_port: 8443,
    redirect: 'permanent',
    redirect_scheme: 'use_https',
    redirect_template: 'https://{host}{path}',
    www_authenticate: 'Basic realm="x"',
    priority: 10,
    auth: { basic: [{ username: 'u', password_hash: 'f'.repeat(64) }] },
    forward_auth: { address: 'http://auth:9000/check', response_headers: ['X-User'], trust_forward_header: true },
    headers: [{ name: 'X-A', value: 'b' }, { name: 'X-C', value: 'd', direction: 'both' }],
    backend_timeout: 5000,
    rate_limit: { average: 10, burst: 20 },
    sticky_session: true,
    compress: true,
    entrypoint: null,
    methods: ['get', 'POST'],
    health_check: { type: 'http' },
  };
  const result = parseEntrypoint(body({}, config), API);
  assert.deepEqual(result.issues, []);
  const c = result.entrypoint?.config;
  assert.deepEqual(c?.hostnames, ['app.example.com', '*.example.org', '/^api-[0-9]+\\.example\\.net$/']);
  assert.deepEqual(c?.methods, ['GET', 'POST']);
  assert.deepEqual(c?.headers[0], { name: 'X-A', value: 'b', direction: 'request' });
  assert.deepEqual(c?.health_check, { type: 'http', path: '/', interval: 10000, timeout: 2000, rise: 2, fall: 3 });
  assert.equal(c?.redirect, 'permanent');
});

test('missing required fields are named (API requires hostnames and priority)', () => {
  assert.deepEqual(issuesOf({}), ['E004 name: is required', 'E004 protocol: is required', 'E004 backends: is required', 'E004 config: is required']);
  assert.deepEqual(issuesOf(body({}, { hostnames: undefined, priority: undefined })), ['E004 config.hostnames: is required', 'E004 config.priority: is required']);
  assert.ok(parseEntrypoint({ name: 'web', protocol: 'Http', backends: [{ address: 'a', port: 1 }], config: {} }, FILE).entrypoint);
  assert.deepEqual(issuesOf(body({ backends: [{ port: 80 }] })), ['E004 backends[0].address: is required']);
});

test('wrong types and unknown values are rejected', () => {
  assert.deepEqual(issuesOf('x'), ['E004 (root): must be an object, got the string "x"']);
  assert.deepEqual(issuesOf(body({ name: 5 })), ['E004 name: must be a string, got number 5']);
  assert.deepEqual(issuesOf(body({ protocol: 'http' })), ['E004 protocol: must be one of Http, Tcp, Udp, got the string "http"']);
  assert.deepEqual(issuesOf(body({ backends: {} })), ['E004 backends: must be a list, got an object']);
  assert.deepEqual(issuesOf(body({}, { tls: 'yes' })), ['E004 config.tls: must be true or false, got the string "yes"']);
  assert.deepEqual(issuesOf(body({}, { path: { rule_type: 'Glob', value: '/' } })), ['E004 config.path.rule_type: must be one of Prefix, Exact, Regex, got the string "Glob"']);
  assert.deepEqual(issuesOf(body({}, { redirect: 'temporary' })), ['E004 config.redirect: must be one of forward, permanent, unauthorized, got the string "temporary"']);
  assert.deepEqual(issuesOf(body({}, { priority: 1.5 })), ['E004 config.priority: must be an integer, got number 1.5']);
  assert.deepEqual(issuesOf(body({ extra: 1 })), ['E004 extra: unknown key "extra" (allowed: name, protocol, backends, config)']);
  assert.match(issuesOf(body({}, { hostname: ['x'] }))[0] ?? '', /^E004 config\.hostname: unknown key/);
  assert.match(issuesOf(body({ name: 'has space' }))[0] ?? '', /^E004 name: .* is invalid/);
  assert.match(issuesOf(body({}, { headers: [{ name: 'X-A', value: 'a\r\nInjected: 1' }] }))[0] ?? '', /config\.headers\[0\]\.value/);
  assert.match(issuesOf(body({}, { auth: { basic: [{ username: 'u', password_hash: 'secret' }] } }))[0] ?? '', /config\.auth\.basic\[0\]\.password_hash: .*64 lowercase hex/);
  assert.match(issuesOf(body({}, { forward_auth: { address: 'auth:9000' } }))[0] ?? '', /config\.forward_auth\.address/);
  assert.match(issuesOf(body({}, { rate_limit: { burst: 5 } }))[0] ?? '', /config\.rate_limit\.average: is required/);
});

test('semantic errors carry their diagnostic code', () => {
  assert.deepEqual(issuesOf(body({ backends: [] })), ['E007 backends: needs at least one backend']);
  assert.deepEqual(issuesOf(body({ backends: [{ address: '10.0.0.1', port: 0 }] })), ['W001 backends[0].port: port must be an integer between 1 and 65535, got 0']);
  assert.deepEqual(issuesOf(body({ backends: [{ address: '10.0.0.1', port: 65536 }] })), ['W001 backends[0].port: port must be an integer between 1 and 65535, got 65536']);
  assert.deepEqual(issuesOf(body({ backends: [{ address: '10.0.0.1', port: '80' }] })), ['W001 backends[0].port: port must be an integer, got the string "80"']);
  assert.deepEqual(issuesOf(body({ backends: [{ address: '10.0.0.1', port: 80, weight: -1 }] })), ['E008 backends[0].weight: weight must be an integer between 0 and 1000000, got -1']);
  assert.deepEqual(issuesOf(body({ backends: [{ address: 'bad host!', port: 80 }] })), ['E008 backends[0].address: the string "bad host!" is not an IPv4/IPv6 address or hostname']);
  assert.deepEqual(issuesOf(body({}, { strip_prefix: true, add_prefix: '/v2' })), ['E006 config.add_prefix: strip_prefix and add_prefix are mutually exclusive']);
  assert.match(issuesOf(body({}, { hostnames: ['/([a-z/'] }))[0] ?? '', /^E005 config\.hostnames\[0\]: invalid regular expression/);
  assert.match(issuesOf(body({}, { path: { rule_type: 'Regex', value: '^/(a' } }))[0] ?? '', /^E005 config\.path\.value: invalid regular expression/);
  assert.deepEqual(issuesOf(body({}, { path: { rule_type: 'Prefix', value: 'api' } })), ['E004 config.path.value: a Prefix path must start with "/"']);
  assert.deepEqual(issuesOf(body({ protocol: 'Tcp' })), ['E009 config.entrypoint: is required for protocol Tcp (name of a proxy.tcp listener)']);
  assert.match(issuesOf(body({}, { https_redirect_port: 0 }))[0] ?? '', /^W001 config\.https_redirect_port/);
});

test('IPv6 and hostnames are valid backend addresses', () => {
  for (const address of ['::1', '[::1]', 'fd00::5', 'api.internal', 'my_service', 'localhost']) {
    assert.ok(parseEntrypoint(body({ backends: [{ address, port: 80 }] }), API).entrypoint, address);
  }
});

test('the candidate id is known even when the definition is rejected', () => {
  const result = parseEntrypoint(body({ backends: [] }), FILE);
  assert.equal(result.candidateId, 'http_web');
  assert.equal(parseEntrypoint({ protocol: 'Http' }, FILE).candidateId, null);
});

test('a Tcp entrypoint must name a declared tcp listener', () => {
  const listeners = { http: null, https: null, tcp: [{ name: 'db', listen_address: ':5432' }], udp: [] };
  const ok = parseEntrypoint(body({ protocol: 'Tcp' }, { entrypoint: 'db' }), API).entrypoint;
  const bad = parseEntrypoint(body({ protocol: 'Tcp' }, { entrypoint: 'cache' }), API).entrypoint;
  assert.ok(ok && bad);
  assert.equal(listenerReferenceIssue(ok, listeners), null);
  assert.equal(listenerReferenceIssue(bad, listeners)?.code, 'E009');
  assert.match(listenerReferenceIssue(bad, listeners)?.message ?? '', /"cache" names no proxy\.tcp listener .*declared: db/);
  const http = parseEntrypoint(body(), API).entrypoint;
  assert.ok(http);
  assert.equal(listenerReferenceIssue(http, listeners), null);
});
