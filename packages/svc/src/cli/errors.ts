// Exit codes and the one `error:` line of the spec ("Errors": CLI exit codes). Pure.
import { isRecord } from './output.js';

export const EXIT = {
  ok: 0,
  general: 1,
  unauthorized: 2,
  unreachable: 3,
  notFound: 4,
  conflict: 5,
} as const;

/** A failure the CLI reports with one `error:` line (message), optional extra lines, and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.general,
    /** Lines printed after the error line (violations, referrers, hints); never prefixed `error:`. */
    readonly details: readonly string[] = [],
  ) {
    super(message);
  }
}

/** The spec's `error:` line followed by the detail lines, as written to stderr. */
export function errorText(message: string, details: readonly string[] = []): string {
  return `error: ${message}\n${details.map((d) => `${d}\n`).join('')}`;
}

export function exitCodeForStatus(status: number): number {
  if (status >= 200 && status < 300) return EXIT.ok;
  if (status === 401 || status === 403) return EXIT.unauthorized;
  if (status === 404) return EXIT.notFound;
  if (status === 409) return EXIT.conflict;
  return EXIT.general;
}

/** What a request acted on, to word the error line: `secret 'db-password'`, or a listing in a namespace. */
export interface Target {
  kind: string;
  name: string;
  /** A listing: 401/403 becomes `cannot list <kind> in namespace '<ns>': not authorized`. */
  list?: boolean;
  namespace?: string;
}

export interface ViolationLike {
  property_path: string;
  message: string;
  code: string;
}

/** The parts of an error body the CLI uses: problem+json, or the legacy `{error, deployments, hint}`. */
export interface ErrorBody {
  detail?: string;
  violations: ViolationLike[];
  error?: string;
  deployments: string[];
  hint?: string;
}

export function parseErrorBody(body: unknown): ErrorBody {
  const parsed: ErrorBody = { violations: [], deployments: [] };
  if (typeof body === 'string') {
    if (body.trim() !== '') parsed.detail = body.trim();
    return parsed;
  }
  if (!isRecord(body)) return parsed;
  if (typeof body.detail === 'string') parsed.detail = body.detail;
  if (typeof body.error === 'string') parsed.error = body.error;
  if (typeof body.hint === 'string') parsed.hint = body.hint;
  if (Array.isArray(body.deployments)) parsed.deployments = body.deployments.filter((d): d is string => typeof d === 'string');
  if (Array.isArray(body.violations)) {
    for (const v of body.violations) {
      if (isRecord(v) && typeof v.property_path === 'string' && typeof v.message === 'string') {
        parsed.violations.push({ property_path: v.property_path, message: v.message, code: typeof v.code === 'string' ? v.code : '' });
      }
    }
  }
  return parsed;
}

export function violationLines(violations: readonly ViolationLike[], pathPrefix = ''): string[] {
  return violations.map((v) => {
    const path = pathPrefix && v.property_path ? `${pathPrefix}.${v.property_path}` : pathPrefix || v.property_path;
    return `  ${path}: ${v.message}${v.code ? ` (${v.code})` : ''}`;
  });
}

/** The spec's error line for a non-2xx answer, plus detail lines and the exit code. */
export function httpError(target: Target, status: number, rawBody: unknown, violationPrefix = ''): CliError {
  const body = parseErrorBody(rawBody);
  const exitCode = exitCodeForStatus(status);
  const subject = `${target.kind} '${target.name}'`;
  if (status === 404) return new CliError(`${subject} not found`, exitCode);
  if (status === 409) {
    const details: string[] = [];
    if (body.deployments.length > 0) {
      details.push('referenced by:', ...body.deployments.map((d) => `  ${d}`));
    }
    if (body.hint) details.push(`hint: ${body.hint}`);
    return new CliError(`${subject} already exists or still has dependents`, exitCode, details);
  }
  if (status === 401 || status === 403) {
    if (target.list) {
      const where = target.namespace ? ` in namespace '${target.namespace}'` : '';
      return new CliError(`cannot list ${target.kind}${where}: not authorized`, exitCode);
    }
    return new CliError(`not authorized to act on ${subject}`, exitCode);
  }
  const details = body.violations.length > 0 ? violationLines(body.violations, violationPrefix) : [];
  // The first line of a plain reason (400) or problem detail helps; violations are listed below instead.
  const reason = body.violations.length === 0 ? (body.detail ?? body.error)?.split('\n')[0] : undefined;
  return new CliError(`${subject}: request failed (${status})${reason ? `: ${reason}` : ''}`, exitCode, details);
}
