// Pure pieces of the data plane's middlewares: negotiation, templates, credentials, buckets, trusted peers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import fc from 'fast-check';
import { negotiate, compressible, addVary, SUPPORTED } from '../../src/dataplane/middlewares/compress.js';
import { compileTemplate, expandTemplate } from '../../src/dataplane/middlewares/template.js';
import { parseBasic } from '../../src/dataplane/middlewares/basic-auth.js';
import { RateLimitState } from '../../src/dataplane/middlewares/rate-limit.js';
import { compileHeaderRules } from '../../src/dataplane/middlewares/headers.js';
import { TrustedProxies, clientAddress, connectionListed, endToEnd, type RequestContext } from '../../src/dataplane/context.js';
import { rewritePath, type CompiledRoute } from '../../src/dataplane/routes.js';

function ctx(headers: Record<string, string>, peer: string, trusted: TrustedProxies): RequestContext {
  return {
    req: { headers, url: '/p/q?x=1', method: 'POST' } as unknown as IncomingMessage,
    scheme: 'http',
    host: 'ex.test',
    authority: 'ex.test:8080',
    uri: '/p/q?x=1',
    port: 8080,
    path: '/p/q',
    query: 'x=1',
    peer,
    peerTrusted: trusted.has(peer),
    upstreamExtra: null,
    upstreamStrip: null,
  };
}

test('negotiate honours q-values, q=0, wildcard and server preference', () => {
  assert.equal(negotiate('gzip'), 'gzip');
  assert.equal(negotiate('gzip, br'), 'br', 'server preference on equal q');
  assert.equal(negotiate('br;q=0.2, gzip;q=0.8'), 'gzip');
  assert.equal(negotiate('br;q=0, gzip;q=0'), null);
  assert.equal(negotiate('*;q=0.5, br;q=0'), SUPPORTED[0] === 'zstd' ? 'zstd' : 'gzip');
  assert.equal(negotiate('identity'), null);
  assert.equal(negotiate(undefined), null);
  assert.equal(negotiate('GZIP;Q=1'), 'gzip');
  assert.equal(negotiate('gzip;q=abc'), null, 'an unreadable q counts as 0');
});

test('property: negotiate never returns an encoding the client excluded', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('gzip', 'br', 'zstd', '*', 'deflate'), fc.integer({ min: 0, max: 10 }))), (items) => {
      const header = items.map(([n, q]) => `${n};q=${q / 10}`).join(', ');
      const chosen = negotiate(header);
      if (chosen !== null) {
        const last = new Map(items.map(([n, q]) => [n, q]));
        const q = last.get(chosen) ?? last.get('*');
        assert.ok(q !== undefined && q > 0);
      }
    }),
  );
});

test('compressible: only plain, known-compressible, large enough bodies', () => {
  assert.equal(compressible(200, { 'content-type': 'text/html' }, 'GET'), true);
  assert.equal(compressible(200, { 'content-type': 'application/json', 'content-length': '2000' }, 'GET'), true);
  assert.equal(compressible(200, { 'content-type': 'application/json', 'content-length': '20' }, 'GET'), false);
  assert.equal(compressible(200, { 'content-type': 'text/event-stream' }, 'GET'), false);
  assert.equal(compressible(200, { 'content-type': 'text/html', 'content-encoding': 'br' }, 'GET'), false);
  assert.equal(compressible(200, { 'content-type': 'image/png' }, 'GET'), false);
  assert.equal(compressible(200, { 'content-type': 'text/html', 'cache-control': 'no-transform' }, 'GET'), false);
  assert.equal(compressible(200, { 'content-type': 'text/html' }, 'HEAD'), false);
  assert.equal(compressible(304, { 'content-type': 'text/html' }, 'GET'), false);
  assert.equal(addVary(undefined), 'Accept-Encoding');
  assert.equal(addVary('Origin'), 'Origin, Accept-Encoding');
  assert.equal(addVary('accept-encoding'), 'accept-encoding');
});

test('templates expand every placeholder and keep unknown ones', () => {
  const t = compileTemplate('{scheme}://{host}:{port}{path}?{query}|{uri}|{method}|{nope}|{{host}}');
  assert.equal(expandTemplate(t, ctx({}, '1.1.1.1', new TrustedProxies([]))), 'http://ex.test:8080/p/q?x=1|/p/q?x=1|POST|{nope}|{ex.test}');
  assert.deepEqual(compileTemplate('plain').parts, ['plain']);
});

test('parseBasic accepts well-formed Basic headers only', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  assert.deepEqual(parseBasic(`Basic ${b64('u:p:w')}`), { user: 'u', password: 'p:w' });
  assert.deepEqual(parseBasic(`basic ${b64('u:')}`), { user: 'u', password: '' });
  assert.equal(parseBasic(`Bearer ${b64('u:p')}`), null);
  assert.equal(parseBasic(`Basic ${b64('nocolon')}`), null);
  assert.equal(parseBasic(undefined), null);
  assert.equal(parseBasic(`Basic ${'A'.repeat(5000)}`), null);
});

test('token bucket: burst, refill at the average rate, burst below average means no burst window', () => {
  const s = new RateLimitState({ average: 2, burst: 4 });
  const t0 = 1_000_000;
  assert.deepEqual([0, 1, 2, 3, 4].map(() => s.take('c', t0) === 0), [true, true, true, true, false]);
  assert.equal(s.take('other', t0), 0, 'buckets are per client');
  assert.ok(s.take('c', t0 + 499) > 0, 'no whole token yet after 499 ms');
  assert.equal(s.take('c', t0 + 1500), 0, 'refilled after 1/average s');
  const narrow = new RateLimitState({ average: 5, burst: 1 });
  assert.equal(narrow.capacity, 5);
  const wait = narrow.take('x', t0) + narrow.take('x', t0) + narrow.take('x', t0) + narrow.take('x', t0) + narrow.take('x', t0);
  assert.equal(wait, 0);
  assert.ok(Math.abs(narrow.take('x', t0) - 0.2) < 1e-9, 'seconds until the next token');
});

test('trusted proxies: IPs and CIDRs, v4 and v6, invalid entries ignored', () => {
  const t = new TrustedProxies(['10.0.0.0/8', '192.168.1.5', 'fd00::/8', 'garbage', '1.2.3.4/99']);
  assert.equal(t.has('10.1.2.3'), true);
  assert.equal(t.has('192.168.1.5'), true);
  assert.equal(t.has('192.168.1.6'), false);
  assert.equal(t.has('fd12::1'), true);
  assert.equal(t.has('1.2.3.4'), false);
  assert.equal(t.has('not-an-ip'), false);
  assert.equal(new TrustedProxies([]).has('127.0.0.1'), false);
});

test('client address: peer unless trusted; then the right-most untrusted X-Forwarded-For hop', () => {
  const t = new TrustedProxies(['10.0.0.0/8']);
  assert.equal(clientAddress(ctx({ 'x-forwarded-for': '9.9.9.9' }, '8.8.8.8', t), t), '8.8.8.8');
  assert.equal(clientAddress(ctx({ 'x-forwarded-for': '1.1.1.1, 9.9.9.9, 10.0.0.2' }, '10.0.0.1', t), t), '9.9.9.9');
  assert.equal(clientAddress(ctx({ 'x-forwarded-for': 'junk' }, '10.0.0.1', t), t), '10.0.0.1');
  assert.equal(clientAddress(ctx({}, '10.0.0.1', t), t), '10.0.0.1');
});

test('hop-by-hop: Connection-listed names and the fixed list are removed', () => {
  assert.deepEqual([...(connectionListed('close, X-A , keep-alive,x-b') ?? [])], ['x-a', 'x-b']);
  assert.deepEqual(endToEnd({ connection: 'x-a', 'x-a': '1', 'x-c': '2', upgrade: 'h2c', 'proxy-foo': '3', te: 'trailers' }), { 'x-c': '2' });
});

test('header rules: direction split, invalid names or values dropped', () => {
  const rules = compileHeaderRules([
    { name: 'X-A', value: '1', direction: 'request' },
    { name: 'X-B', value: '2', direction: 'response' },
    { name: 'X-C', value: '3', direction: 'both' },
    { name: 'bad name', value: '4', direction: 'both' },
    { name: 'X-D', value: 'line\r\nbreak', direction: 'both' },
  ]);
  assert.deepEqual(rules, { request: [['x-a', '1'], ['x-c', '3']], response: [['x-b', '2'], ['x-c', '3']] });
  assert.equal(compileHeaderRules([]), null);
});

test('rewritePath: strip then add prefixes, always a leading slash', () => {
  const r = (strip: string | null, add: string | null) => ({ stripPrefix: strip, addPrefix: add }) as CompiledRoute;
  assert.equal(rewritePath(r('/api', null), '/api'), '/');
  assert.equal(rewritePath(r('/api', null), '/api/x'), '/x');
  assert.equal(rewritePath(r(null, '/v1'), '/x'), '/v1/x');
  assert.equal(rewritePath(r('/api', '/v2'), '/api/y'), '/v2/y');
});

test('compileRoutes: each route gets only the steps it uses, in a fixed order, decided at compile time', async () => {
  const http = await import('node:http');
  const https = await import('node:https');
  const { compileRoutes } = await import('../../src/dataplane/routes.js');
  const { DataPlaneMetrics } = await import('../../src/dataplane/metrics.js');
  const { httpRoute } = await import('./routing-helpers.js');
  const deps = {
    pools: new Map(),
    trusted: new TrustedProxies([]),
    agents: { http: new http.Agent(), https: new https.Agent() },
    metrics: new DataPlaneMetrics(),
    previousLimits: new Map(),
  };
  const everything = httpRoute('all', {
    hostnames: ['all.test'],
    https_redirect: true,
    redirect: 'permanent',
    rate_limit: { average: 5, burst: 5 },
    auth: { basic: [{ username: 'u', password_hash: 'a'.repeat(64) }] },
    forward_auth: { address: 'http://127.0.0.1:1/', response_headers: [], trust_forward_header: false },
    path: { rule_type: 'Prefix', value: '/api/' },
    strip_prefix: true,
    sticky_session: true,
    backend_timeout: 1500,
  });
  const bare = httpRoute('bare', { hostnames: ['bare.test'], rate_limit: { average: 0, burst: 10 }, add_prefix: 'v1/' });
  const first = compileRoutes([everything, bare], deps);
  const all = first.table.match('all.test', '/api/x', 'GET')?.payload;
  assert.deepEqual(all?.chain.map((m) => m.name), ['https_redirect', 'redirect', 'rate_limit', 'basic_auth', 'forward_auth']);
  assert.equal(all?.stripPrefix, '/api');
  assert.equal(all?.timeoutMs, 1500);
  assert.equal(all?.stickyCookie, 'svc_sticky_http_all');
  const b = first.table.match('bare.test', '/', 'GET')?.payload;
  assert.deepEqual(b?.chain, [], 'average 0 means no rate limit');
  assert.equal(b?.addPrefix, '/v1');
  assert.equal(b?.timeoutMs, 60_000);
  // Limiter state is handed over when the limits are unchanged, and replaced when they change.
  const second = compileRoutes([everything, bare], { ...deps, previousLimits: first.limits });
  assert.equal(second.limits.get('http_all')?.state, first.limits.get('http_all')?.state);
  const changed = compileRoutes([{ ...everything, config: { ...everything.config, rate_limit: { average: 6, burst: 5 } } }], {
    ...deps,
    previousLimits: second.limits,
  });
  assert.notEqual(changed.limits.get('http_all')?.state, first.limits.get('http_all')?.state);
  deps.agents.http.destroy();
  deps.agents.https.destroy();
});
