// The base deployment spec of the tests: a validated spec with every default applied (as validateDeployment
// returns it), the local busybox image, namespace `prod`. Overrides replace whole fields.
import type { DeploymentSpec } from '../../src/domain/deployment.js';
import { BUSYBOX_IMAGE } from './busybox-image.js';

export function baseDeploymentSpec(overrides: Partial<DeploymentSpec> = {}): DeploymentSpec {
  return {
    name: 'web',
    runtime: 'docker',
    namespace: 'prod',
    kind: 'worker',
    image: BUSYBOX_IMAGE,
    config: { image_pull_policy: 'Never' },
    replicas: 1,
    ports: [],
    labels: {},
    environment: {},
    volumes: [],
    resources: { limits: {}, requests: {} },
    health_checks: [],
    network: { mode: 'bridge' },
    ...overrides,
  };
}
