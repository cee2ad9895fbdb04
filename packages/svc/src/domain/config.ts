// Config rules (spec "Configs"): namespace as every namespace; name 1-253 characters, lowercase DNS subdomain;
// data 1 byte to 1 MiB (UTF-8 bytes); labels a string of at most 1000 characters. PUT additionally requires
// `data` to parse as JSON: the spec states that rule for PUT only, so POST keeps accepting any text.
import { checkLength, checkNamespace, type Violation } from './violations.js';

export const CONFIG_DATA_MAX_BYTES = 1024 * 1024;
export const CONFIG_LABELS_MAX = 1000;

const DNS_SUBDOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

export interface ConfigCreateInput {
  namespace: string;
  name: string;
  data: string;
  labels: string;
}

export interface ConfigReplaceInput {
  name: string;
  data: string;
  labels: string;
}

function checkConfigFields(input: ConfigReplaceInput, out: Violation[]): void {
  checkLength(input.name, 1, 253, 'name', 'config.name.length', out);
  if (!DNS_SUBDOMAIN.test(input.name)) {
    out.push({
      property_path: 'name',
      message: 'must be a lowercase DNS subdomain (labels of a-z, 0-9 and -, separated by dots)',
      code: 'config.name.format',
    });
  }
  const bytes = Buffer.byteLength(input.data, 'utf8');
  if (bytes < 1 || bytes > CONFIG_DATA_MAX_BYTES) {
    out.push({ property_path: 'data', message: 'must be 1 byte to 1 MiB (UTF-8)', code: 'config.data.length' });
  }
  if ([...input.labels].length > CONFIG_LABELS_MAX) {
    out.push({ property_path: 'labels', message: `must be at most ${CONFIG_LABELS_MAX} characters`, code: 'config.labels.length' });
  }
}

export function validateConfigCreate(input: ConfigCreateInput): Violation[] {
  const violations: Violation[] = [];
  checkNamespace(input.namespace, 'namespace', 'config.namespace', violations);
  checkConfigFields(input, violations);
  return violations;
}

export function validateConfigReplace(input: ConfigReplaceInput): Violation[] {
  const violations: Violation[] = [];
  checkConfigFields(input, violations);
  if (input.data.length > 0 && !isJson(input.data)) {
    violations.push({ property_path: 'data', message: 'must be a valid JSON document', code: 'config.data.invalid_json' });
  }
  return violations;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export type ConfigKeyLookup =
  | { kind: 'found'; value: string }
  | { kind: 'missing_key' }
  /** `data` is not a JSON object, so no key can be selected from it. */
  | { kind: 'not_an_object' };

/**
 * Selects `key` from a config's data (a JSON object) for a `type: config` mount. A string entry is the file
 * content as is; any other JSON value is written as its JSON text.
 */
export function selectConfigKey(data: string, key: string): ConfigKeyLookup {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return { kind: 'not_an_object' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { kind: 'not_an_object' };
  if (!Object.prototype.hasOwnProperty.call(parsed, key)) return { kind: 'missing_key' };
  const value: unknown = (parsed as Record<string, unknown>)[key];
  return { kind: 'found', value: typeof value === 'string' ? value : JSON.stringify(value) };
}
