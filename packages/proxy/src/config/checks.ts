// Small composable checks over plain data (parsed JSON or YAML). Every problem is collected as an Issue with
// the path of the offending value, so the caller can turn it into a 422 message (API), a file:line:column
// (YAML files) or a diagnostic attached to an entrypoint id (providers).
import type { DiagnosticCode } from '../diagnostics/catalog.js';

export type PathSegment = string | number;
export type Path = readonly PathSegment[];

export interface Issue {
  path: Path;
  message: string;
  code: DiagnosticCode;
  /** Whether the problem is the key itself (unknown key) or its value. */
  at: 'key' | 'value';
}

export class Issues {
  readonly list: Issue[] = [];
  add(path: Path, message: string, code: DiagnosticCode = 'E004', at: 'key' | 'value' = 'value'): undefined {
    this.list.push({ path, message, code, at });
    return undefined;
  }
  get empty(): boolean {
    return this.list.length === 0;
  }
}

/** `config.path.rule_type`, `backends[0].port`. */
export function formatPath(path: Path): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out === '' ? '(root)' : out;
}

export function formatIssue(issue: Issue): string {
  return `${formatPath(issue.path)}: ${issue.message}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

/** Parses one value; returns undefined when invalid (after recording an issue). */
export type Parser<T> = (value: unknown, path: Path, issues: Issues) => T | undefined;

export const REQUIRED: unique symbol = Symbol('required');

/**
 * Checks that `value` is an object whose keys are all in `allowed` (keys in `ignored` are accepted and
 * dropped). Returns the object, or undefined after recording an issue.
 */
export function objectWith(
  value: unknown,
  path: Path,
  issues: Issues,
  allowed: readonly string[],
  ignored: readonly string[] = [],
): Record<string, unknown> | undefined {
  if (!isRecord(value)) return issues.add(path, `must be an object, got ${describe(value)}`);
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key) && !ignored.includes(key)) {
      issues.add([...path, key], `unknown key "${key}" (allowed: ${allowed.join(', ')})`, 'E004', 'key');
    }
  }
  return value;
}

/** Reads `obj[key]`: absent (or undefined) → default, or a "required" issue when the default is REQUIRED. */
export function field<T>(
  obj: Record<string, unknown>,
  key: string,
  path: Path,
  issues: Issues,
  parse: Parser<T>,
  fallback: T | typeof REQUIRED,
): T | undefined {
  const here = [...path, key];
  if (!Object.hasOwn(obj, key) || obj[key] === undefined) {
    if (fallback === REQUIRED) return issues.add(here, 'is required');
    return fallback;
  }
  return parse(obj[key], here, issues);
}

export function asString(opts: { nonEmpty?: boolean; max?: number; pattern?: RegExp; patternHint?: string } = {}): Parser<string> {
  const max = opts.max ?? 4096;
  return (value, path, issues) => {
    if (typeof value !== 'string') return issues.add(path, `must be a string, got ${describe(value)}`);
    if (opts.nonEmpty && value.length === 0) return issues.add(path, 'must not be empty');
    if (value.length > max) return issues.add(path, `must be at most ${max} characters`);
    if (opts.pattern && !opts.pattern.test(value)) {
      return issues.add(path, `${describe(value)} is invalid${opts.patternHint ? `: ${opts.patternHint}` : ''}`);
    }
    return value;
  };
}

export const asBool: Parser<boolean> = (value, path, issues) =>
  typeof value === 'boolean' ? value : issues.add(path, `must be true or false, got ${describe(value)}`);

export function asInt(opts: { min?: number; max?: number; code?: DiagnosticCode; what?: string } = {}): Parser<number> {
  const min = opts.min ?? Number.MIN_SAFE_INTEGER;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  const code = opts.code ?? 'E004';
  return (value, path, issues) => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
      return issues.add(path, `${opts.what ?? 'must be an integer'}, got ${describe(value)}`, code);
    }
    if (value < min || value > max) {
      return issues.add(path, `${opts.what ?? 'must be an integer'} between ${min} and ${max}, got ${value}`, code);
    }
    return value;
  };
}

export function asEnum<T extends string>(values: readonly T[]): Parser<T> {
  return (value, path, issues) => {
    if (typeof value === 'string' && (values as readonly string[]).includes(value)) return value as T;
    return issues.add(path, `must be one of ${values.join(', ')}, got ${describe(value)}`);
  };
}

export function nullable<T>(parse: Parser<T>): Parser<T | null> {
  return (value, path, issues) => (value === null ? null : parse(value, path, issues));
}

export function listOf<T>(parse: Parser<T>, opts: { max?: number } = {}): Parser<T[]> {
  const max = opts.max ?? 1000;
  return (value, path, issues) => {
    if (!Array.isArray(value)) return issues.add(path, `must be a list, got ${describe(value)}`);
    if (value.length > max) return issues.add(path, `must have at most ${max} entries`);
    const out: T[] = [];
    let ok = true;
    value.forEach((item, index) => {
      const parsed = parse(item, [...path, index], issues);
      if (parsed === undefined) ok = false;
      else out.push(parsed);
    });
    return ok ? out : undefined;
  };
}

/** A JavaScript RegExp source that compiles; the error message of the engine is kept for the user. */
export function regexError(source: string): string | null {
  try {
    new RegExp(source);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
