// Scoped API tokens (spec "Tokens"). Every route needs `admin` (spec "Authentication" 9). A caller sees and
// manages only their own PATs; sessions never appear here and are 404 by id. A namespace-restricted caller can
// mint tokens only within its own namespaces.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf, type ApiDeps } from './context.js';
import { assertNoBody, parseBody } from './body.js';
import { ApiProblem, forbidden, notFound, validationFailed } from './problem.js';
import { SMALL_BODY_LIMIT_BYTES } from './session.js';
import { idParamsSchema, type IdParams } from './resource-common.js';
import { createTokenStore, decodeNamespaces, decodeScopes, type TokenRow } from '../store/tokens.js';
import { namespacesBeyondCaller, validateTokenRequest } from '../domain/token.js';
import { generateToken, hashToken, tokenDisplayPrefix } from '../crypto/token.js';

export const TOKEN_SHOWN_ONCE_MESSAGE = 'Store this token now: it is shown only once and cannot be retrieved again.';

function tokenRecord(row: TokenRow) {
  return {
    id: row.id,
    name: row.name,
    token_prefix: row.token_prefix,
    scopes: decodeScopes(row.scopes),
    namespaces: decodeNamespaces(row.namespaces),
    created_at: row.created_at,
    expire_at: row.expire_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
  };
}

function withClearToken(row: TokenRow, token: string) {
  const { last_used_at: _unused, ...record } = tokenRecord(row);
  return { ...record, token, message: TOKEN_SHOWN_ONCE_MESSAGE };
}

export function registerTokenRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const tokens = createTokenStore(deps.db);
  const admin = { auth: { scope: 'admin' } } as const;

  /** `:id` as one of the caller's own PATs: another user's token or a session is a 404, like an unknown id. */
  function loadOwnPat(request: FastifyRequest<IdParams>): TokenRow {
    const row = tokens.patOf(principalOf(request).userId, request.params.id);
    if (!row) throw notFound('token', request.params.id);
    return row;
  }

  app.post('/tokens', { config: admin, bodyLimit: SMALL_BODY_LIMIT_BYTES }, async (request, reply) => {
    const body = parseBody(request.body, {
      name: { type: 'string', required: true },
      scopes: { type: 'strings', required: true },
      namespaces: { type: 'strings', nullable: true },
      expire_at: { type: 'string', nullable: true },
    });
    const now = deps.now();
    const { token: valid, violations } = validateTokenRequest(
      { name: body.name, scopes: body.scopes, namespaces: body.namespaces ?? [], expire_at: body.expire_at ?? null },
      now,
    );
    if (violations.length > 0) throw validationFailed(violations);
    const caller = principalOf(request);
    const beyond = namespacesBeyondCaller(valid.namespaces, caller.namespaces);
    if (beyond === 'all') throw forbidden('a namespace-restricted token can only create tokens restricted to its own namespaces');
    if (beyond.length > 0) throw forbidden(`not authorized for namespace '${beyond[0]}'`);
    const clear = generateToken();
    const row = tokens.insert(
      {
        userId: caller.userId,
        kind: 'pat',
        name: valid.name,
        tokenHash: hashToken(clear),
        tokenPrefix: tokenDisplayPrefix(clear),
        scopes: valid.scopes,
        namespaces: valid.namespaces,
        expireAt: valid.expireAt,
      },
      now,
    );
    return reply.code(201).send(withClearToken(row, clear));
  });

  app.get('/tokens', { config: admin }, async (request) => tokens.patsOf(principalOf(request).userId).map(tokenRecord));

  app.get<IdParams>('/tokens/:id', { config: admin, schema: { params: idParamsSchema } }, async (request) => {
    const row = loadOwnPat(request);
    return tokenRecord(row);
  });

  app.delete<IdParams>('/tokens/:id', { config: admin, schema: { params: idParamsSchema } }, async (request, reply) => {
    const row = loadOwnPat(request);
    tokens.revoke(row.id, deps.now());
    return reply.code(204).send();
  });

  app.post<IdParams>(
    '/tokens/:id/rotate',
    { config: admin, bodyLimit: SMALL_BODY_LIMIT_BYTES, schema: { params: idParamsSchema } },
    async (request, reply) => {
      assertNoBody(request.body);
      const row = loadOwnPat(request);
      // A revoked token stays revoked: rotating it would resurrect a credential someone chose to kill.
      if (row.revoked_at !== null) throw new ApiProblem(409, `token '${row.id}' is revoked and cannot be rotated`);
      const clear = generateToken();
      const rotated = tokens.rotate(row, hashToken(clear), tokenDisplayPrefix(clear), deps.now());
      return reply.code(201).send(withClearToken(rotated, clear));
    },
  );
}
