// Pieces shared by the resource routes (namespaces, secrets, volumes, configs, webhooks): id parameters,
// the namespace filter of list endpoints combined with the caller's namespace restriction, `force`, the
// legacy 409 body of referenced deletes, and the text check that keeps stored strings byte-exact.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { assertNamespaceAccess, visibleNamespaces } from './context.js';
import { badRequest, notFound } from './problem.js';
import { listFilter } from './query.js';
import type { DeleteOutcome } from '../store/outcomes.js';

/** Bodies of resources without a large value (namespaces, volumes, webhooks). */
export const RESOURCE_BODY_LIMIT_BYTES = 64 * 1024;

/** Ids are UUIDs; anything longer cannot exist and is refused before a lookup. */
export const idParamsSchema = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 64 } },
  required: ['id'],
} as const;

export type IdParams = { Params: { id: string } };

/**
 * The namespaces a list may return. Without a `namespace` filter: every namespace the caller may see (null =
 * all). With one: exactly those, and 403 if the caller may not see one of them, so the CLI can say
 * "cannot list ... in namespace '<ns>': not authorized" instead of showing an empty list.
 */
export function listedNamespaces(request: FastifyRequest): readonly string[] | null {
  const requested = listFilter(request.query, 'namespace');
  if (requested.length === 0) return visibleNamespaces(request);
  for (const namespace of requested) assertNamespaceAccess(request, namespace);
  return requested;
}

/** `force` query parameter: absent or `false` = false, `true` = true, anything else 400. */
export function forceFlag(query: unknown): boolean {
  const raw = typeof query === 'object' && query !== null ? (query as Record<string, unknown>).force : undefined;
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw badRequest("query parameter 'force' must be 'true' or 'false'");
}

/**
 * The spec's legacy conflict body for deleting a referenced secret or volume: plain JSON
 * `{error, deployments, hint}` (not problem+json), so clients pick the parser from Content-Type.
 */
export function sendReferencedConflict(reply: FastifyReply, kind: 'secret' | 'volume', name: string, deployments: readonly string[]): FastifyReply {
  return reply
    .code(409)
    .type('application/json')
    .send({
      error: `${kind} '${name}' is referenced by ${deployments.length} active deployment(s)`,
      deployments,
      hint: `remove the reference from these deployments or delete them first, or retry with force=true to delete the ${kind} anyway`,
    });
}

/**
 * DELETE of a secret or volume: 404 unknown, 403 outside the caller's namespaces (checked on the loaded
 * resource), 409 with the legacy body while referenced unless `force=true`, else 204.
 */
export function deleteReferencedResource(
  request: FastifyRequest<IdParams>,
  reply: FastifyReply,
  kind: 'secret' | 'volume',
  load: (id: string) => { id: string; namespace: string; name: string } | null,
  remove: (id: string, force: boolean) => DeleteOutcome,
): FastifyReply {
  const force = forceFlag(request.query);
  const resource = load(request.params.id);
  if (!resource) throw notFound(kind, request.params.id);
  assertNamespaceAccess(request, resource.namespace);
  const outcome = remove(resource.id, force);
  if (outcome.kind === 'not_found') throw notFound(kind, request.params.id);
  if (outcome.kind === 'referenced') return sendReferencedConflict(reply, kind, resource.name, outcome.deployments);
  return reply.code(204).send();
}

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * 400 when a string holds a lone UTF-16 surrogate (JSON allows "\ud800"): it cannot be stored as UTF-8, and
 * silently replacing it would change a secret's value or a config's data.
 */
export function assertWellFormedText(fields: Readonly<Record<string, unknown>>): void {
  for (const [key, value] of Object.entries(fields)) {
    const texts = typeof value === 'string' ? [value] : Array.isArray(value) ? value : isRecord(value) ? [...Object.keys(value), ...Object.values(value)] : [];
    for (const text of texts) {
      if (typeof text === 'string' && LONE_SURROGATE.test(text)) throw badRequest(`field '${key}' is not valid Unicode text`);
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
