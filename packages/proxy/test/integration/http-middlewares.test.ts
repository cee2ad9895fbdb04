import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { request, route, sha256hex, startBackend, startProxy, type Backend, type Proxy } from './http-helpers.js';

let app: Backend;
let auth: Backend;
let proxy: Proxy;

before(async () => {
  app = await startBackend('app');
  auth = await startBackend('auth', (req, res) => {
    if (req.headers['x-token'] === 'good') {
      res.writeHead(200, { 'x-auth-user': 'alice', 'x-auth-role': 'admin', 'x-other': 'not-copied' });
      res.end();
    } else {
      res.writeHead(403, { 'content-type': 'text/plain', 'x-auth-reason': 'bad token' });
      res.end('denied by auth');
    }
  });
  const hash = await sha256hex('s3cret');
  proxy = await startProxy(
    [
      route('https', [app.port], { hostnames: ['secure.test'], https_redirect: true }),
      route('https8443', [app.port], { hostnames: ['secure8443.test'], https_redirect: true, https_redirect_port: 8443 }),
      route('fwd', [app.port], { hostnames: ['fwd.test'], redirect: 'forward', redirect_template: 'https://new.test{uri}' }),
      route('perm', [app.port], { hostnames: ['perm.test'], redirect: 'permanent', redirect_scheme: 'use_https' }),
      route('tmpl', [app.port], {
        hostnames: ['tmpl.test'],
        redirect: 'forward',
        redirect_template: 'https://{host}:{port}/login?next={path}&q={query}&m={method}&s={scheme}&u={unknown}',
      }),
      route('unauth', [app.port], {
        hostnames: ['unauth.test'],
        redirect: 'unauthorized',
        www_authenticate: 'Bearer realm="{scheme}://{host}/auth"',
      }),
      route('basic', [app.port], { hostnames: ['basic.test'], auth: { basic: [{ username: 'bob', password_hash: hash }] } }),
      route('fa', [app.port], {
        hostnames: ['fa.test'],
        forward_auth: { address: `http://127.0.0.1:${auth.port}/verify`, response_headers: ['X-Auth-User', 'X-Auth-Role'], trust_forward_header: false },
      }),
      route('fatrust', [app.port], {
        hostnames: ['fatrust.test'],
        forward_auth: { address: `http://127.0.0.1:${auth.port}/verify`, response_headers: [], trust_forward_header: true },
      }),
      route('fadown', [app.port], {
        hostnames: ['fadown.test'],
        forward_auth: { address: 'http://127.0.0.1:1/verify', response_headers: [], trust_forward_header: false },
      }),
    ],
    [],
  );
});

after(async () => {
  await proxy.stop();
  await Promise.all([app.close(), auth.close()]);
});

test('https_redirect: 301 for GET, 308 for POST, custom port kept', async () => {
  const get = await request(proxy.port, { host: 'secure.test:8080', path: '/a?b=1' });
  assert.equal(get.status, 301);
  assert.equal(get.headers.location, 'https://secure.test/a?b=1');
  const post = await request(proxy.port, { host: 'secure.test', method: 'POST', path: '/p' });
  assert.equal(post.status, 308);
  const port = await request(proxy.port, { host: 'secure8443.test', path: '/x' });
  assert.equal(port.headers.location, 'https://secure8443.test:8443/x');
});

test('redirect forward is 302/307, permanent is 301/308, redirect_scheme applies', async () => {
  const fwd = await request(proxy.port, { host: 'fwd.test', path: '/a?x=1' });
  assert.equal(fwd.status, 302);
  assert.equal(fwd.headers.location, 'https://new.test/a?x=1');
  assert.equal((await request(proxy.port, { host: 'fwd.test', method: 'PUT' })).status, 307);
  const perm = await request(proxy.port, { host: 'perm.test:8080', path: '/z' });
  assert.equal(perm.status, 301);
  assert.equal(perm.headers.location, 'https://perm.test/z');
  assert.equal((await request(proxy.port, { host: 'perm.test', method: 'DELETE' })).status, 308);
  assert.equal(app.requests.length, 0, 'redirects never reach the backend');
});

test('redirect_template placeholders expand; unknown ones stay literal', async () => {
  const res = await request(proxy.port, { host: 'tmpl.test:8080', path: '/p/q?a=1', method: 'GET' });
  assert.equal(res.headers.location, 'https://tmpl.test:8080/login?next=/p/q&q=a=1&m=GET&s=http&u={unknown}');
});

test('redirect unauthorized answers 401 with the www_authenticate template', async () => {
  const res = await request(proxy.port, { host: 'unauth.test' });
  assert.equal(res.status, 401);
  assert.equal(res.headers['www-authenticate'], 'Bearer realm="http://unauth.test/auth"');
});

test('basic auth: 401 with challenge without or with wrong credentials; pass with right ones', async () => {
  const none = await request(proxy.port, { host: 'basic.test' });
  assert.equal(none.status, 401);
  assert.equal(none.headers['www-authenticate'], 'Basic realm="proxy"');
  const bad = await request(proxy.port, { host: 'basic.test', headers: { authorization: `Basic ${Buffer.from('bob:nope').toString('base64')}` } });
  assert.equal(bad.status, 401);
  const unknown = await request(proxy.port, { host: 'basic.test', headers: { authorization: `Basic ${Buffer.from('eve:s3cret').toString('base64')}` } });
  assert.equal(unknown.status, 401);
  const ok = await request(proxy.port, {
    host: 'basic.test',
    headers: { authorization: `Basic ${Buffer.from('bob:s3cret').toString('base64')}`, 'x-forwarded-user': 'root' },
  });
  assert.equal(ok.status, 200);
  const seen = app.requests.at(-1)?.headers ?? {};
  assert.equal(seen.authorization, undefined, 'credentials are not forwarded');
  assert.equal(seen['x-forwarded-user'], 'bob', 'the client cannot choose the user');
});

test('forward auth: 2xx copies only the listed headers, after removing client copies', async () => {
  const res = await request(proxy.port, {
    host: 'fa.test',
    path: '/doc?x=1',
    headers: { 'x-token': 'good', 'x-auth-role': 'superuser', 'x-forwarded-for': '6.6.6.6', 'x-forwarded-uri': '/spoof' },
  });
  assert.equal(res.status, 200);
  const seen = app.requests.at(-1)?.headers ?? {};
  assert.equal(seen['x-auth-user'], 'alice');
  assert.equal(seen['x-auth-role'], 'admin');
  assert.equal(seen['x-other'], undefined);
  const asked = auth.requests.at(-1);
  assert.equal(asked?.method, 'GET');
  assert.equal(asked?.url, '/verify');
  assert.equal(asked?.headers['x-forwarded-method'], 'GET');
  assert.equal(asked?.headers['x-forwarded-proto'], 'http');
  assert.equal(asked?.headers['x-forwarded-host'], 'fa.test');
  assert.equal(asked?.headers['x-forwarded-uri'], '/doc?x=1', 'untrusted client X-Forwarded-Uri is ignored');
  assert.equal(asked?.headers['x-forwarded-for'], '127.0.0.1');
});

test('forward auth: client copies are stripped even when auth omits the header', async () => {
  const res = await request(proxy.port, { host: 'fa.test', headers: { 'x-token': 'good', 'x-auth-user': 'mallory' } });
  assert.equal(res.status, 200);
  assert.equal(app.requests.at(-1)?.headers['x-auth-user'], 'alice');
});

test('forward auth: a refusal is relayed with status, headers and body', async () => {
  const before = app.requests.length;
  const res = await request(proxy.port, { host: 'fa.test', headers: { 'x-token': 'bad' } });
  assert.equal(res.status, 403);
  assert.equal(res.text, 'denied by auth');
  assert.equal(res.headers['x-auth-reason'], 'bad token');
  assert.equal(app.requests.length, before);
});

test('forward auth: trust_forward_header passes client X-Forwarded-* to the auth server', async () => {
  await request(proxy.port, { host: 'fatrust.test', headers: { 'x-token': 'good', 'x-forwarded-uri': '/orig', 'x-forwarded-for': '1.2.3.4' } });
  const asked = auth.requests.at(-1)?.headers ?? {};
  assert.equal(asked['x-forwarded-uri'], '/orig');
  assert.equal(asked['x-forwarded-for'], '1.2.3.4');
});

test('forward auth: an unreachable auth server denies with 502', async () => {
  const res = await request(proxy.port, { host: 'fadown.test' });
  assert.equal(res.status, 502);
});
