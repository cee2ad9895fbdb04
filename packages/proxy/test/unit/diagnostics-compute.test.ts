import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { computeDiagnostics } from '../../src/diagnostics/compute.js';
import { diagnostic, groupDiagnostics, scoped } from '../../src/diagnostics/diagnostic.js';
import { defaultEntrypointConfig, type Entrypoint, type EntrypointConfig } from '../../src/model/entrypoint.js';

function config(yaml: string) {
  const loaded = parseConfigText(yaml, '/c/config.yaml', 1);
  assert.ok(loaded.config, JSON.stringify(loaded.errors));
  return loaded.config;
}

function ep(name: string, overrides: Partial<EntrypointConfig> = {}, extra: Partial<Entrypoint> = {}): Entrypoint {
  return {
    id: `${(extra.protocol ?? 'Http').toLowerCase()}_${name}`,
    name,
    protocol: 'Http',
    source: 'config',
    backends: [{ address: '10.0.0.1', port: 80, weight: 100 }],
    config: { ...defaultEntrypointConfig(), hostnames: [`${name}.example.com`], ...overrides },
    ...extra,
  };
}

const HTTP_ONLY = 'proxy:\n  http: { listen_address: "127.0.0.1:8080" }\n  tcp: [ { name: db, listen_address: "127.0.0.1:5432" } ]\n';
const noProviders = () => true;

function codes(cfg: ReturnType<typeof config>, entrypoints: Entrypoint[]): string[] {
  return computeDiagnostics({ config: cfg, entrypoints, reported: [], isProviderAvailable: noProviders })
    .map((d) => `${d.diagnostic.code}@${d.candidate_id ?? 'global'}`)
    .sort();
}

test('a clean set has no diagnostics', () => {
  assert.deepEqual(codes(config(HTTP_ONLY), [ep('a'), ep('b')]), []);
});

test('W015 is global and disappears once an entrypoint sets tls=true', () => {
  const cfg = config(`${HTTP_ONLY}  https: { listen_address: "127.0.0.1:8443" }\nacme: { enabled: true }\n`);
  assert.deepEqual(codes(cfg, [ep('a')]), ['W015@global']);
  assert.deepEqual(codes(cfg, [ep('a', { tls: true })]), []);
});

test('tls or https_redirect without an https listener is W006; no http listener at all is W007', () => {
  assert.deepEqual(codes(config(HTTP_ONLY), [ep('a', { tls: true }), ep('b', { https_redirect: true })]), ['W006@http_a', 'W006@http_b']);
  assert.deepEqual(codes(config(''), [ep('a')]), ['W007@http_a']);
});

test('all-zero weights raise W005; a catch-all raises I001', () => {
  assert.deepEqual(codes(config(HTTP_ONLY), [ep('a', {}, { backends: [{ address: 'x', port: 1, weight: 0 }, { address: 'y', port: 1, weight: 0 }] })]), ['W005@http_a']);
  assert.deepEqual(codes(config(HTTP_ONLY), [ep('a', { hostnames: [] })]), ['I001@http_a']);
});

test('a Tcp entrypoint naming an unknown listener raises E009 on its id', () => {
  const tcp = ep('pg', { hostnames: [], entrypoint: 'cache' }, { protocol: 'Tcp' });
  assert.deepEqual(codes(config(HTTP_ONLY), [tcp]), ['E009@tcp_pg']);
  assert.deepEqual(codes(config(HTTP_ONLY), [{ ...tcp, config: { ...tcp.config, entrypoint: 'db' } }]), []);
});

test('W018 names the winner and the shadowed routes on both ids', () => {
  const winner = ep('a', { hostnames: ['x.example.com'], priority: 10 });
  const loser = ep('b', { hostnames: ['x.example.com'] });
  const all = computeDiagnostics({ config: config(HTTP_ONLY), entrypoints: [winner, loser], reported: [], isProviderAvailable: noProviders });
  assert.deepEqual(all.map((d) => `${d.diagnostic.code}@${d.candidate_id}`).sort(), ['W018@http_a', 'W018@http_b']);
  assert.match(all[0]?.diagnostic.message ?? '', /http_a shadows http_b: e\.g\. GET http:\/\/x\.example\.com\/ is served by http_a/);
  assert.deepEqual(all.map((d) => d.diagnostic.label).sort(), ['shadowed', 'winner']);
  // The cause goes away → the diagnostic goes away.
  assert.deepEqual(codes(config(HTTP_ONLY), [winner, { ...loser, config: { ...loser.config, hostnames: ['y.example.com'] } }]), []);
});

test('an enabled provider this build does not ship raises W008', () => {
  const cfg = config(`${HTTP_ONLY}providers:\n  docker: { enabled: true }\n`);
  const all = computeDiagnostics({ config: cfg, entrypoints: [], reported: [], isProviderAvailable: (name) => name !== 'docker' });
  assert.deepEqual(all.map((d) => d.diagnostic.code), ['W008']);
});

test('reported diagnostics are kept; grouping sorts items by candidate_id and totals everything', () => {
  const reported = [scoped('http_z', diagnostic('E004', 'z')), scoped(null, diagnostic('E003', 'file')), scoped('http_a', diagnostic('W001', 'a'))];
  const all = computeDiagnostics({ config: config(HTTP_ONLY), entrypoints: [ep('b', { hostnames: [] })], reported, isProviderAvailable: noProviders });
  const report = groupDiagnostics(all);
  assert.equal(report.total, 4);
  assert.deepEqual(report.global.map((d) => d.code), ['E003']);
  assert.deepEqual(report.items.map((i) => i.candidate_id), ['http_a', 'http_b', 'http_z']);
  assert.equal(report.items[1]?.diagnostics[0]?.severity, 'info');
});
