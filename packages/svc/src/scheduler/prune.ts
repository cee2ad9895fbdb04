// `namespace prune` selection (spec "Namespace pruning"). Pure: the API marks the selected deployments deleted.
import { PRUNED_BY_DEFAULT_STATUSES, type DeploymentStatus } from '../domain/deployment.js';

export interface PruneCandidate {
  id: string;
  namespace: string;
  status: DeploymentStatus;
}

/**
 * The deployments of `namespace` that prune removes: every one with `all`, otherwise those in the spec's
 * default list (PRUNED_BY_DEFAULT_STATUSES). Input order is kept.
 */
export function selectPrunable<T extends PruneCandidate>(deployments: readonly T[], namespace: string, all: boolean): T[] {
  return deployments.filter(
    (deployment) => deployment.namespace === namespace && (all || PRUNED_BY_DEFAULT_STATUSES.has(deployment.status)),
  );
}
