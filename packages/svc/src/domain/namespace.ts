// Namespace rules (spec "Namespaces"): name 2-63 characters, lowercase DNS label.
import { checkNamespace, type Violation } from './violations.js';

export interface NamespaceInput {
  name: string;
}

export function validateNamespaceInput(input: NamespaceInput): Violation[] {
  const violations: Violation[] = [];
  checkNamespace(input.name, 'name', 'namespace.name', violations);
  return violations;
}
