// Volume rules (spec "Volumes"): namespace as every namespace; name 2-253 characters of lowercase letters,
// digits, `_`, `.`, `-`, alphanumeric at both ends; backend_type `local` (default) or `directory`.
// Labels are not constrained by the spec; we cap them so a body cannot grow a row without bound.
import { checkLength, checkNamespace, type Violation } from './violations.js';

export const BACKEND_TYPES = ['local', 'directory'] as const;
export type BackendType = (typeof BACKEND_TYPES)[number];
export const DEFAULT_BACKEND_TYPE: BackendType = 'local';

export const VOLUME_LABELS_MAX_ENTRIES = 64;
export const VOLUME_LABEL_KEY_MAX = 253;
export const VOLUME_LABEL_VALUE_MAX = 1000;

const VOLUME_NAME = /^[a-z0-9]([a-z0-9_.-]*[a-z0-9])?$/;

export interface VolumeInput {
  namespace: string;
  name: string;
  labels: Readonly<Record<string, string>>;
}

export function isBackendType(value: string): value is BackendType {
  return (BACKEND_TYPES as readonly string[]).includes(value);
}

export function isVolumeName(name: string): boolean {
  return VOLUME_NAME.test(name);
}

export function validateVolumeInput(input: VolumeInput): Violation[] {
  const violations: Violation[] = [];
  checkNamespace(input.namespace, 'namespace', 'volume.namespace', violations);
  checkLength(input.name, 2, 253, 'name', 'volume.name.length', violations);
  if (!isVolumeName(input.name)) {
    violations.push({
      property_path: 'name',
      message: 'must contain only lowercase letters, digits, _, . and -, and start and end with a letter or digit',
      code: 'volume.name.format',
    });
  }
  const entries = Object.entries(input.labels);
  if (entries.length > VOLUME_LABELS_MAX_ENTRIES) {
    violations.push({ property_path: 'labels', message: `must have at most ${VOLUME_LABELS_MAX_ENTRIES} entries`, code: 'volume.labels.length' });
  }
  for (const [key, value] of entries) {
    const keyLength = [...key].length;
    if (keyLength < 1 || keyLength > VOLUME_LABEL_KEY_MAX || [...value].length > VOLUME_LABEL_VALUE_MAX) {
      violations.push({
        property_path: `labels.${key.slice(0, 64)}`,
        message: `key must be 1-${VOLUME_LABEL_KEY_MAX} characters and value at most ${VOLUME_LABEL_VALUE_MAX} characters`,
        code: 'volume.labels.length',
      });
    }
  }
  return violations;
}
