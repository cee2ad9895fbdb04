// What the resource stores answer for writes that can fail for a reason the API maps to a status code.
export type CreateOutcome<T> = { kind: 'created'; record: T } | { kind: 'namespace_missing' } | { kind: 'duplicate' };

export type DeleteOutcome = { kind: 'deleted' } | { kind: 'not_found' } | { kind: 'referenced'; deployments: string[] };
