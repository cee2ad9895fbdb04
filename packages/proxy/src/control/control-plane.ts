// The control plane: owns every source's entrypoint set, merges them, computes diagnostics and pushes the
// servable set to the data plane on every change. The API and the providers only talk to this object.
import { listenerReferenceIssue } from '../config/entrypoint-schema.js';
import type { ProxyConfig } from '../config/config-schema.js';
import { computeDiagnostics, servableEntrypoints } from '../diagnostics/compute.js';
import { groupDiagnostics, type Diagnostic, type DiagnosticsReport, type ScopedDiagnostic } from '../diagnostics/diagnostic.js';
import type { DataPlane } from '../model/dataplane-contract.js';
import { PROVIDER_NAMES, type Entrypoint, type ProviderName, type Source } from '../model/entrypoint.js';
import type { ProviderState } from '../providers/provider.js';
import { findCollisions, type Collision } from '../routing/collisions.js';
import { mergeSources } from './merge.js';
import type { ApiEntrypointStore } from './state-file.js';

export type WriteResult =
  | { ok: true; entrypoint: Entrypoint }
  | { ok: false; status: 403 | 404 | 409 | 422; error: string };

export interface Snapshot {
  entrypoints: readonly Entrypoint[];
  diagnostics: readonly ScopedDiagnostic[];
  report: DiagnosticsReport;
  byCandidate: ReadonlyMap<string, Diagnostic[]>;
}

export interface ControlPlaneOptions {
  config: ProxyConfig;
  dataPlane: Pick<DataPlane, 'update'>;
  store: ApiEntrypointStore;
  isProviderAvailable: (name: string) => boolean;
}

export class ControlPlane {
  private readonly config: ProxyConfig;
  private readonly dataPlane: Pick<DataPlane, 'update'>;
  private readonly store: ApiEntrypointStore;
  private readonly isProviderAvailable: (name: string) => boolean;
  private apiEntries: Entrypoint[];
  private readonly providerStates = new Map<ProviderName, ProviderState>();
  private snapshotValue: Snapshot;
  private appliedKey = '';
  private collisionCache: { key: string; collisions: Collision[] } | null = null;
  /** Number of times a changed entrypoint set was pushed to the data plane. */
  reloads = 0;

  constructor(options: ControlPlaneOptions) {
    this.config = options.config;
    this.dataPlane = options.dataPlane;
    this.store = options.store;
    this.isProviderAvailable = options.isProviderAvailable;
    this.apiEntries = this.store.load();
    this.snapshotValue = this.compute();
  }

  snapshot(): Snapshot {
    return this.snapshotValue;
  }

  get(id: string): Entrypoint | undefined {
    return this.snapshotValue.entrypoints.find((entrypoint) => entrypoint.id === id);
  }

  /** Applies the current state to the data plane (call once after the providers' initial load). */
  apply(): void {
    this.recompute();
  }

  setProviderState(name: ProviderName, state: ProviderState): void {
    this.providerStates.set(name, state);
    this.recompute();
  }

  entrypointCount(source: Source): number {
    return this.snapshotValue.entrypoints.filter((entrypoint) => entrypoint.source === source).length;
  }

  providers(): { name: ProviderName; enabled: boolean; configured: boolean; entrypoint_count: number }[] {
    return PROVIDER_NAMES.map((name) => ({
      name,
      enabled: this.config.providers[name].enabled,
      configured: this.config.configured_providers.includes(name),
      entrypoint_count: this.entrypointCount(name),
    }));
  }

  create(entrypoint: Entrypoint): WriteResult {
    const listenerIssue = listenerReferenceIssue(entrypoint, this.config.proxy);
    if (listenerIssue) return { ok: false, status: 422, error: `config.entrypoint: ${listenerIssue.message}` };
    const owner = this.ownerOf(entrypoint.id);
    if (owner !== null) return { ok: false, status: 409, error: `entrypoint ${entrypoint.id} already exists (source "${owner}")` };
    this.persist([...this.apiEntries, entrypoint]);
    return { ok: true, entrypoint };
  }

  replace(id: string, entrypoint: Entrypoint): WriteResult {
    const check = this.writableCheck(id);
    if (check) return check;
    if (entrypoint.id !== id) {
      return { ok: false, status: 422, error: `name and protocol give id ${entrypoint.id}, which differs from ${id}; ids are derived from protocol and name` };
    }
    const listenerIssue = listenerReferenceIssue(entrypoint, this.config.proxy);
    if (listenerIssue) return { ok: false, status: 422, error: `config.entrypoint: ${listenerIssue.message}` };
    this.persist(this.apiEntries.map((existing) => (existing.id === id ? entrypoint : existing)));
    return { ok: true, entrypoint };
  }

  remove(id: string): WriteResult {
    const check = this.writableCheck(id);
    if (check) return check;
    const removed = this.apiEntries.find((existing) => existing.id === id);
    this.persist(this.apiEntries.filter((existing) => existing.id !== id));
    return removed ? { ok: true, entrypoint: removed } : { ok: false, status: 404, error: `unknown entrypoint ${id}` };
  }

  /** Null when `id` is an API-created entry; otherwise the 404 (unknown) or 403 (provider-owned) answer. */
  writableCheck(id: string): (WriteResult & { ok: false }) | null {
    if (this.apiEntries.some((existing) => existing.id === id)) return null;
    const owner = this.ownerOf(id);
    if (owner === null) return { ok: false, status: 404, error: `unknown entrypoint ${id}` };
    return { ok: false, status: 403, error: `entrypoint ${id} is owned by provider "${owner}"; change it in that provider's source` };
  }

  /** The source that currently defines `id` (API entries first), or null. */
  private ownerOf(id: string): Source | null {
    if (this.apiEntries.some((existing) => existing.id === id)) return 'api';
    for (const [name, state] of this.providerStates) {
      if (state.entrypoints.some((entrypoint) => entrypoint.id === id)) return name;
    }
    return null;
  }

  /** Store first: a write the store refused (disk full) throws and changes nothing in memory. */
  private persist(next: Entrypoint[]): void {
    this.store.save(next);
    this.apiEntries = next;
    this.recompute();
  }

  private compute(): Snapshot {
    const sets = new Map<Source, readonly Entrypoint[]>([['api', this.apiEntries]]);
    const reported: ScopedDiagnostic[] = [];
    for (const [name, state] of this.providerStates) {
      sets.set(name, state.entrypoints);
      reported.push(...state.diagnostics);
    }
    const merged = mergeSources(sets);
    reported.push(...merged.diagnostics);
    const diagnostics = computeDiagnostics({
      config: this.config,
      entrypoints: merged.entrypoints,
      reported,
      isProviderAvailable: this.isProviderAvailable,
      collisions: (entrypoints) => this.collisionsOf(entrypoints),
    });
    const report = groupDiagnostics(diagnostics);
    const byCandidate = new Map(report.items.map((item) => [item.candidate_id, item.diagnostics]));
    return { entrypoints: merged.entrypoints, diagnostics, report, byCandidate };
  }

  /** The collision search is quadratic: reuse the last answer while the Http route set is unchanged. */
  private collisionsOf(entrypoints: readonly Entrypoint[]): Collision[] {
    const key = JSON.stringify(entrypoints);
    if (this.collisionCache?.key !== key) this.collisionCache = { key, collisions: findCollisions(entrypoints) };
    return this.collisionCache.collisions;
  }

  private recompute(): void {
    this.snapshotValue = this.compute();
    const servable = servableEntrypoints(this.config, this.snapshotValue.entrypoints);
    const key = JSON.stringify(servable);
    if (key === this.appliedKey) return;
    this.appliedKey = key;
    this.dataPlane.update(servable);
    this.reloads += 1;
  }
}
