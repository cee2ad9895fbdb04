// The hash stored on every instance (InstanceSpec.specHash) so the plan can tell a drifted instance from a
// current one. Canonical JSON (sorted keys) of the spec, so key order in the stored JSON never matters.
import { createHash } from 'node:crypto';
import type { DeploymentSpec } from '../domain/deployment.js';

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/**
 * Registry credentials are left out: they change nothing inside the instance, and a hash of a password in a
 * container label would be one more place for it to leak from.
 */
export function deploymentSpecHash(spec: DeploymentSpec): string {
  const { registry_auth: _credentials, ...config } = spec.config;
  const text = JSON.stringify(canonical({ ...spec, config }));
  return createHash('sha256').update(text).digest('hex');
}
