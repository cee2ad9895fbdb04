import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { ControlPlane } from '../../src/control/control-plane.js';
import { MemoryStore } from '../../src/control/state-file.js';
import { diagnostic, scoped } from '../../src/diagnostics/diagnostic.js';
import { defaultEntrypointConfig, type Entrypoint } from '../../src/model/entrypoint.js';

const YAML = 'proxy:\n  http: { listen_address: "127.0.0.1:8080" }\n  tcp: [ { name: db, listen_address: "127.0.0.1:5432" } ]\nproviders:\n  config: { enabled: true }\n';

function setup(store = new MemoryStore()) {
  const loaded = parseConfigText(YAML, '/c/config.yaml', 1);
  assert.ok(loaded.config);
  const updates: string[][] = [];
  const control = new ControlPlane({
    config: loaded.config,
    dataPlane: { update: (set) => updates.push(set.map((e) => e.id)) },
    store,
    isProviderAvailable: () => true,
  });
  return { control, updates, store };
}

function ep(name: string, source: Entrypoint['source'] = 'api', port = 80): Entrypoint {
  return { id: `http_${name}`, name, protocol: 'Http', source, backends: [{ address: '10.0.0.1', port, weight: 100 }], config: { ...defaultEntrypointConfig(), hostnames: [`${name}.example.com`] } };
}

test('API writes are persisted before they are applied, and pushed to the data plane', () => {
  const { control, updates, store } = setup();
  control.apply();
  assert.deepEqual(updates, [[]]);
  assert.equal(control.create(ep('a')).ok, true);
  assert.deepEqual(store.saved.map((e) => e.id), ['http_a']);
  assert.deepEqual(updates.at(-1), ['http_a']);
  assert.equal(control.replace('http_a', ep('a', 'api', 81)).ok, true);
  assert.equal(store.saved[0]?.backends[0]?.port, 81);
  assert.equal(control.remove('http_a').ok, true);
  assert.deepEqual(store.saved, []);
  assert.deepEqual(updates.at(-1), []);
  assert.equal(control.reloads, 4);
});

test('an unchanged set is not pushed again', () => {
  const { control, updates } = setup();
  control.setProviderState('config', { entrypoints: [ep('p', 'config')], diagnostics: [] });
  control.setProviderState('config', { entrypoints: [ep('p', 'config')], diagnostics: [scoped(null, diagnostic('E003', 'broken'))] });
  assert.equal(updates.length, 1);
  assert.equal(control.snapshot().report.total, 1);
});

test('write conflicts: 409 duplicate, 403 provider-owned, 404 unknown, 422 id mismatch and unknown listener', () => {
  const { control } = setup();
  control.setProviderState('config', { entrypoints: [ep('p', 'config')], diagnostics: [] });
  assert.equal(control.create(ep('a')).ok, true);
  assert.deepEqual(pick(control.create(ep('a'))), { status: 409 });
  assert.deepEqual(pick(control.create(ep('p'))), { status: 409 });
  assert.deepEqual(pick(control.replace('http_p', ep('p'))), { status: 403 });
  assert.deepEqual(pick(control.remove('http_p')), { status: 403 });
  assert.deepEqual(pick(control.remove('http_nope')), { status: 404 });
  assert.deepEqual(pick(control.replace('http_nope', ep('nope'))), { status: 404 });
  assert.deepEqual(pick(control.replace('http_a', ep('b'))), { status: 422 });
  const tcp: Entrypoint = { ...ep('t'), id: 'tcp_t', protocol: 'Tcp', config: { ...defaultEntrypointConfig(), entrypoint: 'nope' } };
  assert.deepEqual(pick(control.create(tcp)), { status: 422 });
  assert.equal(control.create({ ...tcp, config: { ...tcp.config, entrypoint: 'db' } }).ok, true);
});

test('a provider later defining an API id loses, with W002; the API entry stays writable', () => {
  const { control } = setup();
  control.create(ep('a'));
  control.setProviderState('config', { entrypoints: [ep('a', 'config', 99)], diagnostics: [] });
  assert.equal(control.get('http_a')?.source, 'api');
  assert.equal(control.snapshot().byCandidate.get('http_a')?.[0]?.code, 'W002');
  assert.equal(control.remove('http_a').ok, true);
  assert.equal(control.get('http_a')?.source, 'config');
  assert.equal(control.snapshot().byCandidate.get('http_a'), undefined);
});

test('the providers list always holds all seven names with live counts', () => {
  const { control } = setup();
  control.setProviderState('config', { entrypoints: [ep('p', 'config'), ep('q', 'config')], diagnostics: [] });
  const list = control.providers();
  assert.deepEqual(list.map((p) => p.name), ['docker', 'podman', 'swarm', 'kubernetes', 'nomad', 'http', 'config']);
  assert.deepEqual(list.find((p) => p.name === 'config'), { name: 'config', enabled: true, configured: true, entrypoint_count: 2 });
  assert.deepEqual(list.find((p) => p.name === 'http'), { name: 'http', enabled: false, configured: false, entrypoint_count: 0 });
});

test('a store that fails to save changes nothing', () => {
  const store = new MemoryStore();
  store.save = () => {
    throw new Error('disk full');
  };
  const { control, updates } = setup(store);
  assert.throws(() => control.create(ep('a')), /disk full/);
  assert.equal(control.get('http_a'), undefined);
  assert.equal(updates.length, 0);
});

test('API entries are loaded from the store at start', () => {
  const store = new MemoryStore();
  store.saved = [ep('kept')];
  const { control } = setup(store);
  assert.equal(control.get('http_kept')?.source, 'api');
});

function pick(result: ReturnType<ControlPlane['create']>): { status: number } | { ok: true } {
  return result.ok ? { ok: true } : { status: result.status };
}
