// Users (spec "Users"). Scopes: users:read for GET /users, users:write for changes; GET /users/me needs only a
// valid token. A user cannot delete themselves (which also keeps at least one user), so an installation can
// never lock itself out.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf, type ApiDeps } from './context.js';
import { parseBody } from './body.js';
import { ApiProblem, conflict, forbidden, notFound, validationFailed } from './problem.js';
import { SMALL_BODY_LIMIT_BYTES } from './session.js';
import { idParamsSchema, type IdParams } from './resource-common.js';
import { createUserStore, type UserRow } from '../store/users.js';
import { createTokenStore } from '../store/tokens.js';
import { validateUserChanges } from '../domain/user.js';
import { hashPassword } from '../crypto/password.js';

/**
 * Users are not namespaced, and every user's login session has `admin`: a token confined to namespaces must not
 * create, change or delete users, or it could mint itself an unrestricted session.
 */
function assertUnrestricted(request: FastifyRequest): void {
  if (principalOf(request).namespaces.length > 0) {
    throw forbidden('managing users needs a token that is not restricted to namespaces');
  }
}

const listEntry = (user: UserRow) => ({ id: user.id, username: user.username, created_at: user.created_at });
const fullRecord = (user: UserRow) => ({
  id: user.id,
  username: user.username,
  created_at: user.created_at,
  updated_at: user.updated_at,
  status: user.status,
  login_at: user.login_at,
});

export function registerUserRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const users = createUserStore(deps.db);
  const tokens = createTokenStore(deps.db);

  app.get('/users', { config: { auth: { scope: 'users:read' } } }, async () => users.list().map(listEntry));

  app.post('/users', { config: { auth: { scope: 'users:write' } }, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request, reply) => {
    assertUnrestricted(request);
    const body = parseBody(request.body, { username: { type: 'string', required: true }, password: { type: 'string', required: true } });
    const violations = validateUserChanges(body);
    if (violations.length > 0) throw validationFailed(violations);
    if (users.byUsername(body.username)) throw conflict('user', body.username);
    const created = users.insert(body.username, await hashPassword(body.password), deps.now());
    if (!created) throw conflict('user', body.username);
    return reply.code(201).send(listEntry(created));
  });

  app.get('/users/me', { config: { auth: { authenticated: true } } }, async (request) => {
    const user = users.get(principalOf(request).userId);
    if (!user) throw notFound('user', principalOf(request).username);
    return fullRecord(user);
  });

  app.put<IdParams>(
    '/users/:id',
    { config: { auth: { scope: 'users:write' } }, bodyLimit: SMALL_BODY_LIMIT_BYTES, schema: { params: idParamsSchema } },
    async (request) => {
      assertUnrestricted(request);
      const body = parseBody(request.body, { username: { type: 'string' }, password: { type: 'string' } }, { allowEmpty: true });
      const violations = validateUserChanges(body);
      if (violations.length > 0) throw validationFailed(violations);
      if (!users.get(request.params.id)) throw notFound('user', request.params.id);
      const passwordHash = body.password === undefined ? undefined : await hashPassword(body.password);
      const caller = principalOf(request);
      const updated = deps.db.transaction(() => {
        const record = users.update(
          request.params.id,
          { ...(body.username === undefined ? {} : { username: body.username }), ...(passwordHash === undefined ? {} : { passwordHash }) },
          deps.now(),
        );
        if (record !== undefined && record !== 'conflict' && passwordHash !== undefined) {
          // A new password signs the user out everywhere else; the caller's own token and PATs keep working.
          tokens.revokeSessionsOf(record.id, caller.userId === record.id ? caller.tokenId : null, deps.now());
        }
        return record;
      })();
      if (updated === undefined) throw notFound('user', request.params.id);
      if (updated === 'conflict') throw conflict('user', body.username ?? '');
      return fullRecord(updated);
    },
  );

  app.delete<IdParams>(
    '/users/:id',
    { config: { auth: { scope: 'users:write' } }, schema: { params: idParamsSchema } },
    async (request, reply) => {
      assertUnrestricted(request);
      const target = users.get(request.params.id);
      if (!target) throw notFound('user', request.params.id);
      if (target.id === principalOf(request).userId) throw new ApiProblem(409, 'you cannot delete your own user');
      if (users.count() <= 1) throw new ApiProblem(409, 'the last user cannot be deleted');
      users.remove(target.id);
      return reply.code(204).send();
    },
  );
}
