// application/problem+json (spec "Errors"). Handlers throw ApiProblem; the app's error handler renders it.
import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { Violation } from '../domain/violations.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly violations: readonly Violation[] = [],
    readonly title: string = STATUS_CODES[status] ?? 'Error',
  ) {
    super(detail);
    this.name = 'ApiProblem';
  }
}

export function problemBody(problem: ApiProblem) {
  return {
    type: 'about:blank',
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    violations: problem.violations,
  };
}

export function sendProblem(reply: FastifyReply, problem: ApiProblem): FastifyReply {
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problemBody(problem));
}

/** 422 listing every violation; `detail` holds one `<property_path>: <message>` line per violation. */
export function validationFailed(violations: readonly Violation[]): ApiProblem {
  const detail = violations.map((v) => `${v.property_path}: ${v.message}`).join('\n');
  return new ApiProblem(422, detail, violations, 'Validation failed');
}

export const badRequest = (detail: string) => new ApiProblem(400, detail);
export const notFound = (kind: string, name: string) => new ApiProblem(404, `${kind} '${name}' not found`);
export const conflict = (kind: string, name: string) => new ApiProblem(409, `${kind} '${name}' already exists`);
export const forbidden = (detail = 'not authorized') => new ApiProblem(403, detail);
export const unauthorized = (detail = 'missing or invalid bearer token') => new ApiProblem(401, detail);
