import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';

const FILE = '/etc/proxy/config.yaml';
const HASH = 'a'.repeat(64);

function errorsOf(text: string): string[] {
  return parseConfigText(text, FILE, 4).errors.map((d) => `${d.code} ${d.message}`);
}

test('an empty file gives every default', () => {
  const { config, errors } = parseConfigText('', FILE, 4);
  assert.deepEqual(errors, []);
  assert.ok(config);
  assert.equal(config.api.enabled, false);
  assert.equal(config.api.listen_address, '127.0.0.1:3035');
  assert.deepEqual(config.api.users, []);
  assert.deepEqual(config.api.cors_origins, []);
  assert.equal(config.api.state_file, '/etc/proxy/config.state.json');
  assert.equal(config.proxy.http, null);
  assert.equal(config.proxy.https, null);
  assert.deepEqual(config.proxy.tcp, []);
  assert.deepEqual(config.proxy.trusted_proxies, []);
  assert.equal(config.proxy.workers, 4);
  assert.deepEqual(config.providers.config, { enabled: false, path: '/etc/proxy/routes.yaml', watch: true });
  assert.deepEqual(config.providers.http, { enabled: false, url: null, poll_interval: 30, timeout: 5, headers: {} });
  assert.equal(config.providers.docker.endpoint, '/var/run/docker.sock');
  assert.equal(config.acme.enabled, false);
  assert.equal(config.acme.certs_dir, '/etc/proxy/certs');
  assert.deepEqual(config.configured_providers, []);
});

test('the DESIGN.md example is accepted, roles default to admin, paths resolve against the file', () => {
  const text = `api:
  enabled: true
  listen_address: 127.0.0.1:3035
  users:
    - { name: admin,  hash: ${HASH} }
    - { name: viewer, hash: ${'b'.repeat(64)}, role: read-only }
  cors_origins: [https://dash.example.com]
proxy:
  http:  { listen_address: 0.0.0.0:80 }
  https: { listen_address: "[::]:443" }
  tcp:   [ { name: db,  listen_address: 0.0.0.0:5432 } ]
  udp:   [ { name: dns, listen_address: 0.0.0.0:53 } ]
  trusted_proxies: [10.0.0.0/8, 192.168.1.1, "fd00::/8"]
  workers: 1
providers:
  config: { enabled: true, path: ./routes.yaml, watch: true }
  http:   { enabled: false, url: http://10.0.0.5:9000/routes, poll_interval: 30, headers: { Authorization: Bearer x } }
  docker: { enabled: false, endpoint: /var/run/docker.sock, expose_by_default: false }
  podman: { enabled: false }
  swarm:  { enabled: false }
  kubernetes: { enabled: false }
  nomad:  { enabled: false }
acme: { enabled: false, email: ops@example.com, ca_server: https://acme.example/dir, certs_dir: /var/certs }
`;
  const { config, errors } = parseConfigText(text, FILE, 4);
  assert.deepEqual(errors, []);
  assert.ok(config);
  assert.deepEqual(config.api.users.map((u) => u.role), ['admin', 'read-only']);
  assert.equal(config.proxy.https?.listen_address, '[::]:443');
  assert.deepEqual(config.proxy.udp, [{ name: 'dns', listen_address: '0.0.0.0:53' }]);
  assert.equal(config.proxy.workers, 1);
  assert.equal(config.providers.config.path, '/etc/proxy/routes.yaml');
  assert.deepEqual(config.providers.http.headers, { Authorization: 'Bearer x' });
  assert.equal(config.acme.certs_dir, '/var/certs');
  assert.deepEqual(config.configured_providers, ['docker', 'podman', 'swarm', 'kubernetes', 'nomad', 'http', 'config']);
});

test('an unknown key is reported at the key with file:line:column', () => {
  assert.deepEqual(errorsOf('api:\n  enabled: false\n  listen_adress: 1.2.3.4:5\n'), [
    `E001 ${FILE}:3:3: api.listen_adress: unknown key "listen_adress" (allowed: enabled, listen_address, users, cors_origins, state_file)`,
  ]);
  assert.match(errorsOf('proxy:\n  tcp:\n    - { name: db, listen_address: "1.2.3.4:5", extra: 1 }\n')[0] ?? '', /config\.yaml:3:48: proxy\.tcp\[0\]\.extra: unknown key/);
  assert.match(errorsOf('providers:\n  traefik: {}\n')[0] ?? '', /:2:3: providers\.traefik: unknown key/);
  assert.match(errorsOf('logging: true\n')[0] ?? '', /:1:1: logging: unknown key/);
});

test('a wrong type is reported at the value with file:line:column', () => {
  assert.deepEqual(errorsOf('api:\n  enabled: "yes"\n'), [`E001 ${FILE}:2:12: api.enabled: must be true or false, got the string "yes"`]);
  assert.match(errorsOf('proxy:\n  workers: two\n')[0] ?? '', /:2:12: proxy\.workers: must be an integer, got the string "two"/);
  assert.match(errorsOf('proxy:\n  workers: 0\n')[0] ?? '', /:2:12: proxy\.workers: must be an integer between 1 and 256/);
  assert.match(errorsOf('api: [1]\n')[0] ?? '', /:1:6: api: must be a map/);
  assert.match(errorsOf('providers:\n  http: { enabled: true, url: ftp://x, poll_interval: 5 }\n')[0] ?? '', /:2:31: providers\.http\.url: .* is not an http/);
});

test('listen addresses, CIDRs, origins and user hashes are checked', () => {
  assert.match(errorsOf('api:\n  listen_address: localhost\n')[0] ?? '', /:2:19: api\.listen_address: .* is not "host:port"/);
  assert.match(errorsOf('proxy:\n  http: { listen_address: "0.0.0.0:70000" }\n')[0] ?? '', /proxy\.http\.listen_address/);
  assert.match(errorsOf('proxy:\n  trusted_proxies: [10.0.0.0/33]\n')[0] ?? '', /:2:21: proxy\.trusted_proxies\[0\]: .* not an IP address or CIDR/);
  assert.match(errorsOf('api:\n  cors_origins: ["https://x.example/path"]\n')[0] ?? '', /api\.cors_origins\[0\]/);
  assert.match(errorsOf(`api:\n  users:\n    - { name: a, hash: ${'A'.repeat(64)} }\n`)[0] ?? '', /:3:24: api\.users\[0\]\.hash: .* 64 lowercase hex/);
  assert.match(errorsOf(`api:\n  users:\n    - { name: a, hash: ${HASH}, role: root }\n`)[0] ?? '', /api\.users\[0\]\.role: must be one of admin, read-only/);
  assert.match(errorsOf(`api:\n  users:\n    - { hash: ${HASH} }\n`)[0] ?? '', /api\.users\[0\]\.name: is required/);
  assert.match(errorsOf(`proxy:\n  tcp: [ { name: a, listen_address: ":1" }, { name: a, listen_address: ":2" } ]\n`)[0] ?? '', /duplicate tcp listener name "a"/);
});

test('an enabled http provider needs a url', () => {
  assert.match(errorsOf('providers:\n  http: { enabled: true }\n')[0] ?? '', /providers\.http\.url: is required when the http provider is enabled/);
});

test('API enabled with no users refuses to start (E002)', () => {
  const errors = parseConfigText('api:\n  enabled: true\n', FILE, 1).errors;
  assert.equal(errors.length, 1);
  assert.equal(errors[0]?.code, 'E002');
  assert.match(errors[0]?.message ?? '', /api\.users is empty/);
  assert.equal(parseConfigText('api:\n  enabled: true\n', FILE, 1).config, null);
});

test('YAML syntax errors and duplicate keys give positions', () => {
  const syntax = errorsOf('api:\n  enabled: [true\n');
  assert.ok(syntax.length >= 1);
  assert.match(syntax[0] ?? '', new RegExp(`^E001 ${FILE}:\\d+:\\d+: `));
  assert.match(errorsOf('api:\n  enabled: true\n  enabled: false\n')[0] ?? '', /:3:3: .*unique/i);
});

test('every problem is reported, not only the first', () => {
  assert.equal(errorsOf('api:\n  enabled: 1\n  bogus: 2\nproxy:\n  workers: x\n').length, 3);
});
