// An InstanceSpec with nothing optional set: a worker, pull IfNotPresent, no registry auth, user, env, labels,
// ports, mounts or limits, bridge network. Tests name the instance and override only what they exercise.
import type { InstanceSpec } from '../../src/runtime/runtime.js';

export type InstanceIdentity = Pick<InstanceSpec, 'deploymentId' | 'namespace' | 'name' | 'image' | 'command' | 'specHash'>;

export function bareInstanceSpec(fields: InstanceIdentity & Partial<InstanceSpec>): InstanceSpec {
  return {
    kind: 'worker',
    imagePullPolicy: 'IfNotPresent',
    registryAuth: null,
    user: null,
    env: {},
    labels: {},
    ports: [],
    mounts: [],
    resources: { nanoCpus: null, memoryBytes: null, memoryReservationBytes: null },
    networkMode: 'bridge',
    ...fields,
  };
}
