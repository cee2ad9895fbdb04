// createDataPlane: the one entry the control plane uses (model/dataplane-contract.ts).
import type { DataPlane, DataPlaneOptions } from '../model/dataplane-contract.js';
import { createUpstreamRegistry } from '../upstream/registry.js';
import { ClusterDataPlane } from './cluster.js';
import { LocalDataPlane, type BoundAddresses } from './local.js';

export type { BoundAddresses };

/** The contract plus what tests and the control plane may use to find listeners bound to port 0. */
export interface DataPlaneHandle extends DataPlane {
  /** Addresses actually bound (after start()); in cluster mode those reported by the first worker. */
  addresses(): BoundAddresses;
}

export function createDataPlane(options: DataPlaneOptions): DataPlaneHandle {
  if (options.workers > 1) return new ClusterDataPlane(options);
  return new LocalDataPlane(options, createUpstreamRegistry({ activeChecks: true }), true);
}
