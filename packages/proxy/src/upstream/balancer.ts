// Backend selection, pure: smooth weighted round robin (nginx's algorithm) over the eligible backends.
// The caller owns the state (`current` weights, aligned with the backend list) and stores what we return.

export interface BalancerPeer {
  weight: number;
  healthy: boolean;
  /** Already tried for this request or connection: never chosen. */
  excluded: boolean;
}

/**
 * The weight each peer competes with; 0 = not a candidate. Healthy, non-excluded peers are the candidates;
 * when none is healthy, every non-excluded peer is (fail open: a wrong health verdict must not black-hole
 * traffic). Among the candidates, weight 0 means never chosen while one with a positive weight exists; when
 * all candidates weigh 0 they share equally.
 */
export function effectiveWeights(peers: readonly BalancerPeer[]): number[] {
  const available = peers.map((p) => !p.excluded);
  const anyHealthy = peers.some((p, i) => available[i] && p.healthy);
  const candidate = peers.map((p, i) => available[i] === true && (!anyHealthy || p.healthy));
  const anyPositive = peers.some((p, i) => candidate[i] && p.weight > 0);
  return peers.map((p, i) => {
    if (!candidate[i]) return 0;
    if (anyPositive) return p.weight > 0 ? p.weight : 0;
    return 1;
  });
}

export interface Selection {
  index: number;
  /** The new current weights, to be passed to the next call. */
  current: number[];
}

/**
 * One step of nginx's smooth weighted round robin: every candidate's current weight grows by its weight, the
 * largest wins (first on ties) and loses the total. For weights 5/1/1 this yields a a b a c a a.
 * `current` may be shorter than `weights` (missing entries count as 0). Null when there is no candidate.
 */
export function smoothWeightedPick(weights: readonly number[], current: readonly number[]): Selection | null {
  const next = weights.map((_, i) => current[i] ?? 0);
  let total = 0;
  let best = -1;
  for (let i = 0; i < weights.length; i++) {
    const weight = weights[i] ?? 0;
    if (weight <= 0) continue;
    const grown = (next[i] ?? 0) + weight;
    next[i] = grown;
    total += weight;
    if (best < 0 || grown > (next[best] ?? 0)) best = i;
  }
  if (best < 0) return null;
  next[best] = (next[best] ?? 0) - total;
  return { index: best, current: next };
}

/**
 * The index the affinity key pins, when it may be honoured: the backend exists, is healthy and is a candidate
 * under the rules of effectiveWeights (not excluded, not weight 0 while weighted peers exist). Otherwise null,
 * and the caller balances normally.
 */
export function affinityIndex(
  peers: readonly BalancerPeer[],
  weights: readonly number[],
  pinned: number,
): number | null {
  const peer = peers[pinned];
  if (peer === undefined || !peer.healthy) return null;
  return (weights[pinned] ?? 0) > 0 ? pinned : null;
}
