// One structural check for every JSON body (shared by all API modules): the body must be an object, required
// fields present, each field of its declared JSON type, and no unknown fields. All of those are 400 (spec
// "Errors": malformed body); rule violations on well-typed values are 422 and belong to domain/ validators.
// Unknown fields are rejected rather than ignored so a typo (`expires_at`) never silently does nothing.
import { badRequest } from './problem.js';

export type FieldType = 'string' | 'strings' | 'integer' | 'number' | 'boolean' | 'string-map' | 'object' | 'array';

export interface FieldSpec {
  type: FieldType;
  required?: boolean;
  /** `null` is accepted (and returned) for an optional field. */
  nullable?: boolean;
}

export type BodySpec = Record<string, FieldSpec>;

type TypeOf<T extends FieldType> = T extends 'string'
  ? string
  : T extends 'strings'
    ? string[]
    : T extends 'integer' | 'number'
      ? number
      : T extends 'boolean'
        ? boolean
        : T extends 'string-map'
          ? Record<string, string>
          : T extends 'object'
            ? Record<string, unknown>
            : unknown[];

type ValueOf<F extends FieldSpec> = TypeOf<F['type']> | (F['nullable'] extends true ? null : never);
type RequiredKeys<S extends BodySpec> = { [K in keyof S]: S[K]['required'] extends true ? K : never }[keyof S];
type OptionalKeys<S extends BodySpec> = Exclude<keyof S, RequiredKeys<S>>;

export type ParsedBody<S extends BodySpec> = { [K in RequiredKeys<S>]: ValueOf<S[K]> } & {
  [K in OptionalKeys<S>]?: ValueOf<S[K]>;
};

const TYPE_NAMES: Record<FieldType, string> = {
  string: 'a string',
  strings: 'an array of strings',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  'string-map': 'an object of string values',
  object: 'an object',
  array: 'an array',
};

/** Longest array a body field may hold; longer is a malformed body, not a rule to explain. */
export const MAX_ARRAY_ITEMS = 1000;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasType(value: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'strings':
      return Array.isArray(value) && value.length <= MAX_ARRAY_ITEMS && value.every((v) => typeof v === 'string');
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'string-map':
      return isPlainObject(value) && Object.keys(value).length <= MAX_ARRAY_ITEMS && Object.values(value).every((v) => typeof v === 'string');
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value) && value.length <= MAX_ARRAY_ITEMS;
  }
}

export interface ParseBodyOptions {
  /** A missing body (no Content-Type, or an empty one) counts as `{}`: for bodies whose fields are all optional. */
  allowEmpty?: boolean;
}

/** Throws 400 naming the first structural problem; returns the body typed by `spec`. */
export function parseBody<S extends BodySpec>(body: unknown, spec: S, options: ParseBodyOptions = {}): ParsedBody<S> {
  if (body === undefined || body === null) {
    if (options.allowEmpty) body = {};
    else throw badRequest('request body must be a JSON object');
  }
  if (!isPlainObject(body)) throw badRequest('request body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (!Object.hasOwn(spec, key)) {
      const allowed = Object.keys(spec);
      throw badRequest(`unknown field '${key.slice(0, 64)}' (allowed: ${allowed.join(', ') || 'none'})`);
    }
  }
  for (const [key, field] of Object.entries(spec)) {
    const value = body[key];
    if (value === undefined) {
      if (field.required) throw badRequest(`missing required field '${key}'`);
      continue;
    }
    if (value === null && field.nullable && !field.required) continue;
    if (!hasType(value, field.type)) throw badRequest(`field '${key}' must be ${TYPE_NAMES[field.type]}`);
  }
  return body as ParsedBody<S>;
}

/** For routes that take no body: anything but an absent or empty-object body is a 400. */
export function assertNoBody(body: unknown): void {
  if (body === undefined || body === null) return;
  if (isPlainObject(body) && Object.keys(body).length === 0) return;
  throw badRequest('this endpoint takes no request body');
}
