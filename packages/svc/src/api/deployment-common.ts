// What the deployment routes (deployments.ts, deployment-logs.ts, exec.ts) share: loading a deployment by id with
// the 404 and namespace checks, and strict parsing of single-valued query parameters (a repeated or malformed
// value is a 400, never silently ignored).
import type { FastifyRequest } from 'fastify';
import { assertNamespaceAccess, type ApiDeps } from './context.js';
import { badRequest, notFound } from './problem.js';
import { getDeployment, type DeploymentRecord } from '../store/deployments.js';

/** Loads `:id`: 404 when unknown, 403 when its stored namespace is outside the caller's. */
export function loadDeployment(deps: ApiDeps, request: FastifyRequest<{ Params: { id: string } }>): DeploymentRecord {
  const record = getDeployment(deps.db, request.params.id);
  if (!record) throw notFound('deployment', request.params.id);
  assertNamespaceAccess(request, record.spec.namespace);
  return record;
}

function queryRecord(query: unknown): Record<string, unknown> {
  return typeof query === 'object' && query !== null ? (query as Record<string, unknown>) : {};
}

/** One value of `name`, or undefined when absent; a repeated or non-string value is a 400. */
export function singleQuery(query: unknown, name: string, maxLength = 256): string | undefined {
  const raw = queryRecord(query)[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw badRequest(`query parameter '${name}' must be given once`);
  if (raw.length > maxLength) throw badRequest(`query parameter '${name}' is longer than ${maxLength} characters`);
  return raw;
}

/** Every value of a repeatable parameter (`command=a&command=b`), in order. */
export function repeatedQuery(query: unknown, name: string, maxValues: number, maxLength: number): string[] {
  const raw = queryRecord(query)[name];
  if (raw === undefined) return [];
  const values: unknown[] = Array.isArray(raw) ? raw : [raw];
  if (values.length > maxValues) throw badRequest(`query parameter '${name}' accepts at most ${maxValues} values`);
  return values.map((value) => {
    if (typeof value !== 'string' || value.length > maxLength) {
      throw badRequest(`each '${name}' value must be a string of at most ${maxLength} characters`);
    }
    return value;
  });
}

/** A decimal integer in [min, max]; `fallback` when absent. */
export function integerQuery(query: unknown, name: string, bounds: { min: number; max: number }, fallback: number): number;
export function integerQuery(query: unknown, name: string, bounds: { min: number; max: number }): number | undefined;
export function integerQuery(query: unknown, name: string, bounds: { min: number; max: number }, fallback?: number): number | undefined {
  const text = singleQuery(query, name, 16);
  if (text === undefined) return fallback;
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < bounds.min || value > bounds.max) {
    throw badRequest(`query parameter '${name}' must be an integer from ${bounds.min} to ${bounds.max}`);
  }
  return value;
}

/** `true` / `false` (also `1` / `0`); `fallback` when absent; anything else 400. */
export function booleanQuery(query: unknown, name: string, fallback: boolean): boolean {
  const text = singleQuery(query, name, 8);
  if (text === undefined) return fallback;
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw badRequest(`query parameter '${name}' must be 'true' or 'false'`);
}
