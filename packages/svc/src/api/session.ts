// POST /login, POST /logout, POST /auth/stream-ticket (spec "System and session", DESIGN.md "Stream ticket").
import type { FastifyInstance } from 'fastify';
import { assertNamespaceAccess, principalOf, type ApiDeps } from './context.js';
import { parseBody } from './body.js';
import { ApiProblem, badRequest, notFound } from './problem.js';
import { bearerToken } from './auth-hook.js';
import { STREAM_KINDS, type StreamKind } from './stream-tickets.js';
import { createUserStore } from '../store/users.js';
import { createTokenStore } from '../store/tokens.js';
import { decoyPasswordHash, verifyPassword } from '../crypto/password.js';
import { generateToken, hashToken, isWellFormedToken, tokenDisplayPrefix } from '../crypto/token.js';

/** Small bodies only: credentials and ids, never megabytes. */
export const SMALL_BODY_LIMIT_BYTES = 16 * 1024;
const MAX_CREDENTIAL_LENGTH = 1024;

export function registerSessionRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const users = createUserStore(deps.db);
  const tokens = createTokenStore(deps.db);
  // Computed now, not on the first unknown-user login, so that login is not measurably slower than the others.
  void decoyPasswordHash();
  const findDeployment = deps.db.prepare<[string], { namespace: string }>('SELECT namespace FROM deployments WHERE id = ?');

  app.post('/login', { config: { auth: { public: true } }, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request) => {
    const body = parseBody(request.body, { username: { type: 'string', required: true }, password: { type: 'string', required: true } });
    const invalid = new ApiProblem(401, 'invalid credentials');
    if (body.username.length > MAX_CREDENTIAL_LENGTH || body.password.length > MAX_CREDENTIAL_LENGTH) {
      // Still pay the KDF, so length cannot be used to tell anything apart.
      await verifyPassword(body.password.slice(0, MAX_CREDENTIAL_LENGTH), await decoyPasswordHash());
      throw invalid;
    }
    const user = users.byUsername(body.username);
    // An unknown user costs the same KDF run as a known one (spec "Authentication" 4: identical answers).
    const matches = await verifyPassword(body.password, user?.password_hash ?? (await decoyPasswordHash()));
    if (!user || !matches || user.status !== 'active') throw invalid;
    const token = generateToken();
    const now = deps.now();
    deps.db.transaction(() => {
      tokens.insert(
        {
          userId: user.id,
          kind: 'session',
          name: 'session',
          tokenHash: hashToken(token),
          tokenPrefix: tokenDisplayPrefix(token),
          scopes: ['admin'],
          namespaces: [],
          expireAt: null,
        },
        now,
      );
      users.recordLogin(user.id, now);
    })();
    return { token };
  });

  // 204 always: revokes exactly the presented token (session or PAT), whether or not it exists.
  app.post('/logout', { config: { auth: { public: true } }, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request, reply) => {
    const token = bearerToken(request);
    if (token !== null && isWellFormedToken(token)) tokens.revokeByHash(hashToken(token), deps.now());
    return reply.code(204).send();
  });

  app.post(
    '/auth/stream-ticket',
    { config: { auth: { scope: 'admin' } }, bodyLimit: SMALL_BODY_LIMIT_BYTES },
    async (request) => {
      const body = parseBody(request.body, {
        deployment_id: { type: 'string', required: true },
        stream: { type: 'string', required: true },
      });
      if (!(STREAM_KINDS as readonly string[]).includes(body.stream)) {
        throw badRequest(`field 'stream' must be one of: ${STREAM_KINDS.join(', ')}`);
      }
      if (body.deployment_id.length === 0 || body.deployment_id.length > 64) throw notFound('deployment', body.deployment_id.slice(0, 64));
      const deployment = findDeployment.get(body.deployment_id);
      if (!deployment) throw notFound('deployment', body.deployment_id);
      assertNamespaceAccess(request, deployment.namespace);
      // 200 like /login: a credential is handed out, no addressable resource is created.
      return deps.streamTickets.issue(principalOf(request), body.deployment_id, body.stream as StreamKind);
    },
  );
}
