// `headers` rules: add or replace one header on the upstream request and/or the response to the client.
import type { OutgoingHttpHeaders } from 'node:http';
import type { HeaderRule } from '../../model/entrypoint.js';

export interface HeaderRules {
  request: readonly (readonly [string, string])[];
  response: readonly (readonly [string, string])[];
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Invalid names or values (which Node would refuse to send) are dropped at compile time. */
export function compileHeaderRules(rules: readonly HeaderRule[]): HeaderRules | null {
  const request: [string, string][] = [];
  const response: [string, string][] = [];
  for (const rule of rules) {
    if (!TOKEN.test(rule.name) || !VALUE.test(rule.value)) continue;
    const pair: [string, string] = [rule.name.toLowerCase(), rule.value];
    if (rule.direction !== 'response') request.push(pair);
    if (rule.direction !== 'request') response.push(pair);
  }
  if (request.length === 0 && response.length === 0) return null;
  return { request, response };
}

export function applyHeaders(headers: OutgoingHttpHeaders, pairs: readonly (readonly [string, string])[]): void {
  for (const [name, value] of pairs) headers[name] = value;
}
