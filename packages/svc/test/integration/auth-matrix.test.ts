// The authorisation matrix over EVERY route the application registers (read from the app's own route table, so a
// new route is covered without editing this file): no token → 401; a token holding every scope except the route's
// (and not admin) → 403; a token holding exactly the route's scope → neither 401 nor 403. A route without a scope
// mapping fails the test. Then: a namespace-restricted PAT never sees or touches another namespace.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SCOPES, type Scope } from '../../src/api/context.js';
import type { RouteInfo } from '../../src/server/app.js';
import { applicationRoutes } from '../support/app.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let routes: RouteInfo[];
before(async () => {
  routes = await applicationRoutes();
  server = await startTestServer();
});
after(async () => {
  await server.close();
});

/** The mapping this area owns; other areas' routes are checked for having a mapping at all. */
const OWN_ROUTES: Record<string, string> = {
  'GET /healthz': 'public',
  'GET /metrics': 'public',
  'POST /login': 'public',
  'POST /logout': 'public',
  'GET /node/get': 'admin',
  'POST /auth/stream-ticket': 'admin',
  'GET /users': 'users:read',
  'POST /users': 'users:write',
  'GET /users/me': 'authenticated',
  'PUT /users/:id': 'users:write',
  'DELETE /users/:id': 'users:write',
  'POST /tokens': 'admin',
  'GET /tokens': 'admin',
  'GET /tokens/:id': 'admin',
  'DELETE /tokens/:id': 'admin',
  'POST /tokens/:id/rotate': 'admin',
};

function mappingOf(route: RouteInfo): string {
  const auth = route.auth;
  if (auth === undefined) return 'none';
  if ('public' in auth) return 'public';
  if ('authenticated' in auth) return 'authenticated';
  return auth.scope;
}

function concretePath(url: string): string {
  return url.replace(/:[A-Za-z_]+/g, () => randomUUID()).replace(/\*/g, 'x');
}

test('the route table is complete and every route has a scope mapping', () => {
  assert.ok(routes.length >= Object.keys(OWN_ROUTES).length);
  for (const [key, expected] of Object.entries(OWN_ROUTES)) {
    const route = routes.find((r) => `${r.method} ${r.url}` === key);
    assert.ok(route, `route ${key} is registered`);
    assert.equal(mappingOf(route), expected, key);
  }
  const unmapped = routes.filter((r) => mappingOf(r) === 'none').map((r) => `${r.method} ${r.url}`);
  assert.deepEqual(unmapped, [], 'routes without a scope mapping (unreachable, deny by default)');
  const publicRoutes = routes.filter((r) => mappingOf(r) === 'public').map((r) => `${r.method} ${r.url}`).sort();
  assert.deepEqual(publicRoutes, ['GET /healthz', 'GET /metrics', 'POST /login', 'POST /logout'], 'spec "Authentication" 10');
});

test('every non-public route: 401 without a token, 403 without its scope, reachable with exactly its scope', async () => {
  const lacking = new Map<string, string>();
  const exact = new Map<string, string>();
  async function tokenLacking(scope: Scope): Promise<string> {
    const cached = lacking.get(scope);
    if (cached) return cached;
    const scopes = SCOPES.filter((s) => s !== scope && s !== 'admin');
    const created = await server.createToken({ scopes: scopes.length > 0 ? [...scopes] : ['users:read'] });
    lacking.set(scope, created.token);
    return created.token;
  }
  async function tokenWith(scope: Scope): Promise<string> {
    const cached = exact.get(scope);
    if (cached) return cached;
    const created = await server.createToken({ scopes: [scope] });
    exact.set(scope, created.token);
    return created.token;
  }
  const minimal = (await server.createToken({ scopes: ['users:read'] })).token;
  const checked: string[] = [];
  for (const route of routes) {
    const mapping = mappingOf(route);
    if (mapping === 'public' || mapping === 'none') continue;
    const path = concretePath(route.url);
    const label = `${route.method} ${route.url}`;
    const body = ['POST', 'PUT', 'PATCH'].includes(route.method) ? {} : undefined;
    const anonymous = await server.request(route.method, path, { token: null, body });
    assert.equal(anonymous.status, 401, `${label} without a token`);
    assert.equal(anonymous.headers.get('content-type'), 'application/problem+json; charset=utf-8', label);
    const garbage = await server.request(route.method, path, { token: 'svc_pat_' + 'f'.repeat(64), body });
    assert.equal(garbage.status, 401, `${label} with an unknown token`);
    if (mapping === 'authenticated') {
      const any = await server.request(route.method, path, { token: minimal, body });
      assert.ok(any.status !== 401 && any.status !== 403, `${label} with any valid token: ${any.status}`);
    } else {
      const scope = mapping as Scope;
      if (scope !== 'admin' || SCOPES.length > 1) {
        const denied = await server.request(route.method, path, { token: await tokenLacking(scope), body });
        assert.equal(denied.status, 403, `${label} with every scope but '${scope}'`);
      }
      const allowed = await server.request(route.method, path, { token: await tokenWith(scope), body });
      assert.ok(allowed.status !== 401 && allowed.status !== 403, `${label} with exactly '${scope}': ${allowed.status} ${allowed.text}`);
      assert.ok(allowed.status < 500, `${label} never 500: ${allowed.text}`);
    }
    checked.push(label);
  }
  assert.ok(checked.length >= 12, `checked ${checked.length} routes`);
});

test('a route without a scope mapping is refused even to an admin token (deny by default)', async () => {
  const { createTestApp } = await import('../support/app.js');
  const testApp = createTestApp();
  try {
    testApp.app.get('/unmapped', async () => ({ leaked: true }));
    await testApp.app.ready();
    const { createTokenStore } = await import('../../src/store/tokens.js');
    const { createUserStore } = await import('../../src/store/users.js');
    const { generateToken, hashToken, tokenDisplayPrefix } = await import('../../src/crypto/token.js');
    const user = createUserStore(testApp.deps.db).insert('root', 'scrypt$x', new Date());
    assert.ok(user);
    const token = generateToken();
    createTokenStore(testApp.deps.db).insert(
      { userId: user.id, kind: 'session', name: 'session', tokenHash: hashToken(token), tokenPrefix: tokenDisplayPrefix(token), scopes: ['admin'], namespaces: [], expireAt: null },
      new Date(),
    );
    const withToken = await testApp.app.inject({ method: 'GET', url: '/unmapped', headers: { authorization: `Bearer ${token}` } });
    assert.equal(withToken.statusCode, 403);
    assert.ok(!withToken.body.includes('leaked'));
    const withoutToken = await testApp.app.inject({ method: 'GET', url: '/unmapped' });
    assert.equal(withoutToken.statusCode, 401);
  } finally {
    await testApp.close();
  }
});
