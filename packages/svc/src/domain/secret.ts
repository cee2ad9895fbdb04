// Secret rules (spec "Secrets"): namespace as every namespace; name 2-253 characters of letters (any case),
// digits, `_`, `.`, `-`, alphanumeric at both ends; value 1 byte to 1 MiB counted in UTF-8 bytes, because the
// bytes are what is encrypted and stored.
import { checkLength, checkNamespace, type Violation } from './violations.js';

export const SECRET_VALUE_MAX_BYTES = 1024 * 1024;
const SECRET_NAME = /^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$/;

export interface SecretInput {
  namespace: string;
  name: string;
  value: string;
}

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

export function validateSecretInput(input: SecretInput): Violation[] {
  const violations: Violation[] = [];
  checkNamespace(input.namespace, 'namespace', 'secret.namespace', violations);
  checkLength(input.name, 2, 253, 'name', 'secret.name.length', violations);
  if (!isSecretName(input.name)) {
    violations.push({
      property_path: 'name',
      message: 'must contain only letters, digits, _, . and -, and start and end with a letter or digit',
      code: 'secret.name.format',
    });
  }
  const bytes = Buffer.byteLength(input.value, 'utf8');
  if (bytes < 1 || bytes > SECRET_VALUE_MAX_BYTES) {
    violations.push({ property_path: 'value', message: 'must be 1 byte to 1 MiB (UTF-8)', code: 'secret.value.length' });
  }
  return violations;
}
