// List filters accept `x=a` and the repeated `x[]=a&x[]=b` form (spec "Endpoints"). Fastify's default query
// parser yields a string or an array for both keys; this folds them into one list.
import { badRequest } from './problem.js';

const MAX_FILTER_VALUES = 100;
const MAX_FILTER_LENGTH = 253;

export function listFilter(query: unknown, name: string): string[] {
  if (typeof query !== 'object' || query === null) return [];
  const record = query as Record<string, unknown>;
  const values: string[] = [];
  for (const key of [name, `${name}[]`]) {
    const raw = record[key];
    if (raw === undefined) continue;
    for (const value of Array.isArray(raw) ? raw : [raw]) {
      if (typeof value !== 'string' || value.length === 0 || value.length > MAX_FILTER_LENGTH) {
        throw badRequest(`query parameter '${name}' must be a non-empty string of at most ${MAX_FILTER_LENGTH} characters`);
      }
      values.push(value);
    }
  }
  if (values.length > MAX_FILTER_VALUES) throw badRequest(`query parameter '${name}' accepts at most ${MAX_FILTER_VALUES} values`);
  return values;
}

/** listFilter restricted to a known set: any other value is a 400 naming the allowed ones. */
export function enumFilter<T extends string>(query: unknown, name: string, allowed: readonly T[]): T[] {
  return listFilter(query, name).map((value) => {
    const known = allowed.find((candidate) => candidate === value);
    if (known === undefined) throw badRequest(`query parameter '${name}' must be one of: ${allowed.join(', ')}`);
    return known;
  });
}
