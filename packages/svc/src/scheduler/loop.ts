// The reconcile loop: the imperative shell around scheduler/plan.ts.
//
// A pass = ONE list() per runtime → the stored deployments → plan() → the executor. Passes never overlap; a
// wake-up during a pass runs one more pass right after it. Wake-ups: the tick (the safety net), nudge() from the
// API, every runtime event (die/destroy/start/oom), a finished creation/removal, a probe whose verdict changed,
// and nextWakeAt (a backoff ending, a readiness deadline). Wake-ups are debounced, so a burst costs one pass.
//
// Restart safety: nothing in memory is needed to resume. Instances are found by their svc_deployment label
// (adopted, never duplicated), the scheduler state is in the deployments row, health streaks are rebuilt from
// health_check_results, and a container left in `created` by a process killed between create and start is
// removed as a leftover.
import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../crypto/secret-box.js';
import { INACTIVE_STATUSES } from '../domain/deployment.js';
import { HealthTracker } from '../health/tracker.js';
import { runProbe } from '../health/probe.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import { RuntimeError, type InstanceStats, type ObservedInstance, type Runtime, type RuntimeName } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import {
  appendEvent,
  appendHealthResult,
  deploymentExists,
  getDeployment,
  listDeployments,
  purgeDeployment,
  recentHealthResults,
  rolloutFamily,
  schedulerStateOf,
  setImageDigest,
  trimHealthResults,
  type DeploymentRecord,
} from '../store/deployments.js';
import { deploymentFamilies } from './deployment-metrics.js';
import { Bound, applyStoreActions } from './executor.js';
import type { SchedulerHandle } from './handle.js';
import { ResolveError, removeConfigFiles, resolveInstanceSpec } from './instance-spec.js';
import { group, nextWakeAt, plan, planCreateFailure, servingParents, type Action, type DesiredDeployment, type SchedulerState } from './plan.js';
import { deploymentSpecHash } from './spec-hash.js';

export interface SchedulerLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface SchedulerOptions {
  db: Db;
  secretBox: SecretBox;
  runtimes: readonly Runtime[];
  /** The tick (`[scheduler] interval` / SVC_SCHEDULER_INTERVAL) in ms. */
  intervalMs: number;
  /** Rendered config files go under `<dataDir>/configs/`. */
  dataDir: string;
  /** SVC_APPLY_TIMEOUT in ms (readiness deadline); default 300 000. */
  applyTimeoutMs?: number;
  /** Creations (and, separately, removals and probes) running at once. Default 16. */
  concurrency?: number;
  /** Stop grace before a removed instance is killed. Default 5 s. */
  stopGraceSeconds?: number;
  /** Per-deployment series are added to it (refreshed in the background every interval). */
  metrics?: MetricsRegistry;
  log?: SchedulerLog;
  now?: () => number;
}

export interface Scheduler {
  readonly handle: SchedulerHandle;
  /** Starts the loop: a first pass at once, then the tick, runtime events, nudges. */
  start(): void;
  /** Stops waking up, waits for the current pass and (up to `budgetMs`) for runtime work in flight. */
  stop(budgetMs?: number): Promise<void>;
  /** Runs one pass now (or waits for the running one and runs another); resolves when it is done. */
  reconcileNow(): Promise<void>;
  /** Resolves once no creation, removal or probe is in flight (tests, benchmarks). */
  settled(): Promise<void>;
  /** The latest stats the background refresher read for an instance, and when. */
  cachedStats(instanceId: string): { stats: InstanceStats; at: number } | undefined;
}

interface Creation {
  deploymentId: string;
  /** The list epoch current when create() returned; null while it runs. */
  completedEpoch: number | null;
  /** Instances of the deployment observed when this creation was planned. */
  before: ReadonlySet<string>;
  /** What create() returned; stands in for the list until a list taken after it confirms it. */
  instance: ObservedInstance | null;
}

interface Removal {
  completedEpoch: number | null;
}

const DEBOUNCE_MS = 100;
const DEFAULT_CONCURRENCY = 16;
const HEALTH_ROWS_REBUILT = 20;
const HEALTH_ROWS_KEPT_PER_DEPLOYMENT = 500;
const TRIM_EVERY_PASSES = 200;
const STATS_CONCURRENCY = 4;

const silent: SchedulerLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function createScheduler(options: SchedulerOptions): Scheduler {
  const { db, secretBox, intervalMs, dataDir } = options;
  const now = options.now ?? Date.now;
  const log = options.log ?? silent;
  const applyTimeoutMs = options.applyTimeoutMs;
  const graceSeconds = options.stopGraceSeconds ?? 5;
  const runtimes = new Map<RuntimeName, Runtime>(options.runtimes.map((r) => [r.name, r]));
  const createBound = new Bound(options.concurrency ?? DEFAULT_CONCURRENCY);
  const removeBound = new Bound(options.concurrency ?? DEFAULT_CONCURRENCY);
  const probeBound = new Bound(options.concurrency ?? DEFAULT_CONCURRENCY);
  const statsBound = new Bound(STATS_CONCURRENCY);

  let tracker = new HealthTracker();
  let epoch = 0;
  let passes = 0;
  let stopped = true;
  let passRunning: Promise<void> | null = null;
  let passAgain = false;
  let timer: NodeJS.Timeout | null = null;
  let timerAt = Infinity;
  let metricsTimer: NodeJS.Timeout | null = null;
  let eventsAbort: AbortController | null = null;

  const creations = new Map<string, Creation>();
  const removals = new Map<string, Removal>();
  const tasks = new Set<Promise<unknown>>();
  /** The runtime event followers: they end only when stopped, so settled() does not wait for them. */
  const followers = new Set<Promise<unknown>>();
  const probing = new Set<string>();
  const orphansReported = new Set<string>();
  /** Runtimes whose last list failed (the warning is logged once per outage). */
  const unreachable = new Set<string>();
  const lastProbe = new Map<string, number>();
  const specHashes = new Map<string, { spec: DeploymentRecord['spec']; hash: string }>();
  /** Rows skipped as unreadable (logged once each, by id: the spec text may hold a password). */
  const unreadableReported = new Set<string>();

  /** Latest observation, for the API (instancesOf) and the metrics. */
  let observed: ObservedInstance[] = [];
  let observedByDeployment = new Map<string, ObservedInstance[]>();
  const runtimeOf = new Map<string, Runtime>();
  const stats = new Map<string, { stats: InstanceStats; at: number }>();
  const lastRefresh = new Map<string, number>();
  let metricsDeployments: { id: string; name: string; namespace: string; runtime: string; restartCount: number }[] = [];

  function track<T>(promise: Promise<T>): void {
    const tracked = promise.then(
      () => undefined,
      (error: unknown) => {
        if (!stopped) log.error(`scheduler task failed: ${errorMessage(error)}`);
      },
    );
    tasks.add(tracked);
    void tracked.finally(() => tasks.delete(tracked));
  }

  // -------------------------------------------------------------------------------------------------------------
  // Waking up
  // -------------------------------------------------------------------------------------------------------------

  function wakeAt(at: number): void {
    if (stopped) return;
    const target = Math.max(at, now());
    if (timer !== null && timerAt <= target) return;
    if (timer !== null) clearTimeout(timer);
    timerAt = target;
    timer = setTimeout(() => {
      timer = null;
      timerAt = Infinity;
      void runPass();
    }, target - now());
  }

  function nudge(): void {
    wakeAt(now() + DEBOUNCE_MS);
  }

  function runPass(): Promise<void> {
    if (passRunning !== null) {
      passAgain = true;
      return passRunning;
    }
    passRunning = (async () => {
      try {
        do {
          passAgain = false;
          try {
            await pass();
          } catch (error) {
            // A pass must never take the process down (e.g. SQLite busy, a runtime answer we could not read):
            // log it and let the tick try again.
            if (!stopped) log.error(`scheduler: pass failed: ${errorMessage(error)}`);
            wakeAt(now() + intervalMs);
          }
        } while (passAgain && !stopped);
      } finally {
        passRunning = null;
      }
    })();
    return passRunning;
  }

  // -------------------------------------------------------------------------------------------------------------
  // One pass
  // -------------------------------------------------------------------------------------------------------------

  function desiredOf(record: DeploymentRecord): DesiredDeployment {
    let cached = specHashes.get(record.id);
    if (cached === undefined || cached.spec !== record.spec) {
      cached = { spec: record.spec, hash: deploymentSpecHash(record.spec) };
      specHashes.set(record.id, cached);
    }
    return {
      ...schedulerStateOf(record),
      id: record.id,
      spec: record.spec,
      specHash: cached.hash,
      parentId: record.parent_id,
      force: record.force,
    };
  }

  async function observe(): Promise<{ instances: ObservedInstance[]; owners: Map<string, Runtime> } | null> {
    const instances: ObservedInstance[] = [];
    const owners = new Map<string, Runtime>();
    for (const runtime of runtimes.values()) {
      try {
        for (const instance of await runtime.list()) {
          instances.push(instance);
          owners.set(instance.id, runtime);
        }
        if (unreachable.delete(runtime.name)) log.info(`scheduler: ${runtime.name} reachable again, reconciling`);
      } catch (error) {
        // Planning on a partial observation would create duplicates: skip the pass, the tick retries. Logged
        // once per outage, not at every tick.
        if (!unreachable.has(runtime.name)) log.warn(`scheduler: ${runtime.name} list failed, pass skipped until it answers: ${errorMessage(error)}`);
        unreachable.add(runtime.name);
        return null;
      }
    }
    return { instances, owners };
  }

  async function pass(): Promise<void> {
    if (stopped) return;
    epoch += 1;
    const startEpoch = epoch;
    const seen = await observe();
    if (seen === null || stopped) {
      wakeAt(now() + intervalMs);
      return;
    }
    passes += 1;
    for (const [token, creation] of creations) {
      if (creation.completedEpoch !== null && creation.completedEpoch < startEpoch) creations.delete(token);
    }
    for (const [id, removal] of removals) {
      if (removal.completedEpoch !== null && removal.completedEpoch < startEpoch) removals.delete(id);
    }

    // What the plan, the probes, the metrics and the API (instancesOf) see: the list, corrected for creations
    // in flight.
    const view = planView(seen.instances);
    observed = view;
    observedByDeployment = group(view, (i) => i.deploymentId);
    runtimeOf.clear();
    for (const [id, runtime] of seen.owners) runtimeOf.set(id, runtime);
    const present = new Set(view.map((i) => i.id));
    tracker.retain(present);
    for (const key of lastProbe.keys()) if (!present.has(key.slice(0, key.lastIndexOf(':')))) lastProbe.delete(key);
    for (const id of stats.keys()) if (!present.has(id)) stats.delete(id);

    const unreadable = new Set<string>();
    const records = listDeployments(db, {}, (error) => {
      unreadable.add(error.deploymentId);
      if (unreadableReported.has(error.deploymentId)) return;
      unreadableReported.add(error.deploymentId);
      log.error(`scheduler: ${error.message}; skipped until the row is fixed`);
    });
    for (const id of unreadableReported) if (!unreadable.has(id)) unreadableReported.delete(id);
    const known = new Set(records.map((r) => r.id));
    removeLeftovers(known);
    for (const id of orphansReported) if (!present.has(id)) orphansReported.delete(id);
    for (const id of specHashes.keys()) if (!known.has(id)) specHashes.delete(id);
    metricsDeployments = records.map((r) => ({
      id: r.id,
      name: r.spec.name,
      namespace: r.spec.namespace,
      runtime: r.spec.runtime,
      restartCount: r.restart_count,
    }));
    const deployments = records.map(desiredOf);
    const at = now();
    const actions = plan({
      deployments,
      observed: view,
      health: tracker.snapshot(),
      inFlight: {
        creations: [...creations.values()].filter((c) => c.completedEpoch === null).map((c) => ({ deploymentId: c.deploymentId })),
        removals: [...removals.keys()],
      },
      now: at,
      ...(applyTimeoutMs !== undefined ? { applyTimeoutMs } : {}),
    });
    execute(actions, at);
    releaseEmptiedNamespaces(actions, records, view);

    if (passes % TRIM_EVERY_PASSES === 0) trimHealthResults(db, HEALTH_ROWS_KEPT_PER_DEPLOYMENT);
    probeDue(records);

    // The states as this pass left them (the plan's setStatus actions are whole states), without a second read.
    const written = new Map<string, SchedulerState>();
    for (const action of actions) if (action.type === 'setStatus') written.set(action.deploymentId, action.state);
    const after = deployments.map((d) => {
      const state = written.get(d.id);
      return state === undefined ? d : { ...d, ...state };
    });
    const wake = nextWakeAt(after, now(), applyTimeoutMs);
    wakeAt(Math.min(wake ?? Infinity, now() + intervalMs));
  }

  /**
   * What the plan sees. A creation still running counts as one instance (the plan's in-flight count), so a
   * list taken meanwhile that already shows its container (created, or started but not yet returned) must not
   * show it too: while a deployment has creations running, its instances that none of them saw before are left
   * out. A creation that returned counts as the instance it returned — fresher than a list taken before it
   * finished — until a list taken after it confirms or refutes it. So the status can move at once (no waiting
   * for another list) and nothing is ever counted twice or not at all.
   */
  function planView(instances: readonly ObservedInstance[]): ObservedInstance[] {
    const known = new Map<string, Set<string>>();
    const returned = new Map<string, ObservedInstance>();
    for (const creation of creations.values()) {
      if (creation.completedEpoch !== null) {
        if (creation.instance !== null) returned.set(creation.instance.id, creation.instance);
        continue;
      }
      const current = known.get(creation.deploymentId);
      if (current === undefined) known.set(creation.deploymentId, new Set(creation.before));
      else for (const id of current) if (!creation.before.has(id)) current.delete(id);
    }
    const view = instances
      .filter((i) => returned.has(i.id) || (known.get(i.deploymentId)?.has(i.id) ?? true))
      .map((i) => returned.get(i.id) ?? i);
    const listed = new Set(instances.map((i) => i.id));
    for (const instance of returned.values()) if (!listed.has(instance.id)) view.push(instance);
    return view;
  }

  /**
   * A container in `created` that no creation of ours is working on was left by a process killed between
   * create and start (create() starts what it creates). It would count as an instance that never runs.
   */
  function removeLeftovers(known: ReadonlySet<string>): void {
    // Any creation still in flight (even one that returned after this list was taken) may be the one showing
    // as `created` in a list taken before its start: only deployments with none are checked.
    const creating = new Set([...creations.values()].map((c) => c.deploymentId));
    for (const instance of observed) {
      if (instance.state !== 'created' || !known.has(instance.deploymentId)) continue;
      if (creating.has(instance.deploymentId) || removals.has(instance.id)) continue;
      log.warn(`scheduler: removing ${instance.name}, created but never started (left by an interrupted creation)`);
      startRemoval(instance.deploymentId, instance.id);
    }
  }

  function execute(actions: readonly Action[], at: number): void {
    applyStoreActions(db, tracker, actions, new Date(at));
    const batches = new Map<string, number>();
    for (const action of actions) {
      if (action.type === 'remove' && action.reason === 'orphan') reportOrphan(action.deploymentId, action.instanceId);
      else if (action.type === 'remove') startRemoval(action.deploymentId, action.instanceId);
      else if (action.type === 'create') batches.set(action.deploymentId, (batches.get(action.deploymentId) ?? 0) + 1);
      else if (action.type === 'purge') purge(action.deploymentId);
    }
    for (const [deploymentId, count] of batches) startCreations(deploymentId, count);
  }

  /**
   * A namespace whose last instance went with a purge of this pass gives back what it holds on the runtime (the
   * docker namespace network: dockerd's default pools have room for about 30). Best effort and race-tolerant on
   * the runtime side (a creation that finds the network gone recreates it), so it never fails the pass.
   */
  function releaseEmptiedNamespaces(actions: readonly Action[], records: readonly DeploymentRecord[], view: readonly ObservedInstance[]): void {
    const purged = new Set<string>();
    for (const action of actions) if (action.type === 'purge') purged.add(action.deploymentId);
    if (purged.size === 0) return;
    const byId = new Map(records.map((r) => [r.id, r]));
    const inUse = new Set<string>();
    for (const instance of view) {
      const owner = byId.get(instance.deploymentId);
      if (owner !== undefined && !purged.has(owner.id)) inUse.add(`${owner.spec.runtime}/${owner.spec.namespace}`);
    }
    for (const creation of creations.values()) {
      const owner = byId.get(creation.deploymentId);
      if (owner !== undefined && creation.completedEpoch === null) inUse.add(`${owner.spec.runtime}/${owner.spec.namespace}`);
    }
    const released = new Set<string>();
    for (const id of purged) {
      const record = byId.get(id);
      if (record === undefined) continue;
      const key = `${record.spec.runtime}/${record.spec.namespace}`;
      if (inUse.has(key) || released.has(key)) continue;
      released.add(key);
      const runtime = runtimes.get(record.spec.runtime);
      if (runtime?.releaseNamespace === undefined) continue;
      track(runtime.releaseNamespace(record.spec.namespace));
    }
  }

  /**
   * An instance labelled with a deployment this database does not know is left alone: it belongs to another svc
   * server sharing the Docker daemon (or to a database that was replaced). Our own deployments are purged only
   * once their instances are gone, so this server never leaves orphans of its own behind.
   */
  function reportOrphan(deploymentId: string, instanceId: string): void {
    if (orphansReported.has(instanceId)) return;
    orphansReported.add(instanceId);
    log.info(`scheduler: instance ${instanceId} belongs to unknown deployment ${deploymentId}; left alone`);
  }

  function purge(deploymentId: string): void {
    purgeDeployment(db, deploymentId);
    specHashes.delete(deploymentId);
    try {
      removeConfigFiles(dataDir, deploymentId);
    } catch (error) {
      log.warn(`scheduler: removing config files of ${deploymentId} failed: ${errorMessage(error)}`);
    }
    log.info(`scheduler: deployment ${deploymentId} purged`);
  }

  function startRemoval(deploymentId: string, instanceId: string): void {
    if (removals.has(instanceId)) return;
    const removal: Removal = { completedEpoch: null };
    removals.set(instanceId, removal);
    // An instance create() just returned may not be in the latest list yet: with one runtime, it is that one.
    const runtime = runtimeOf.get(instanceId) ?? (runtimes.size === 1 ? [...runtimes.values()][0] : undefined);
    track(
      removeBound
        .run(async () => {
          if (runtime === undefined) return;
          try {
            await runtime.remove(instanceId, graceSeconds);
          } catch (error) {
            log.warn(`scheduler: removing instance ${instanceId} of ${deploymentId} failed: ${errorMessage(error)}`);
          }
        })
        .finally(() => {
          removal.completedEpoch = epoch;
          nudge();
        }),
    );
  }

  function startCreations(deploymentId: string, count: number): void {
    const batch: Creation[] = [];
    const before = new Set((observedByDeployment.get(deploymentId) ?? []).map((i) => i.id));
    for (let k = 0; k < count; k += 1) {
      const creation: Creation = { deploymentId, completedEpoch: null, before, instance: null };
      creations.set(randomUUID(), creation);
      batch.push(creation);
    }
    track(
      createBatch(deploymentId, batch).finally(() => {
        for (const creation of batch) creation.completedEpoch = epoch;
        nudge();
      }),
    );
  }

  async function createBatch(deploymentId: string, batch: readonly Creation[]): Promise<void> {
    const record = getDeployment(db, deploymentId);
    if (record === null || INACTIVE_STATUSES.has(record.status)) return;
    const desired = desiredOf(record);
    const runtime = runtimes.get(record.spec.runtime);
    let failure: RuntimeError | null = null;
    if (runtime === undefined) {
      failure = new RuntimeError('error', 'host', `runtime ${record.spec.runtime} is not enabled on this server`);
    } else {
      let spec: ReturnType<typeof resolveInstanceSpec> | null = null;
      try {
        spec = resolveInstanceSpec({ db, secretBox, dataDir }, record.id, record.spec, desired.specHash);
      } catch (error) {
        failure = error instanceof RuntimeError ? error : new RuntimeError('error', 'host', `resolving the instance failed`);
      }
      if (spec !== null) {
        const resolved = spec;
        const outcomes = await Promise.all(
          batch.map((creation) =>
            createBound.run(() => runtime.create(resolved)).then(
              (instance) => {
                creation.instance = instance;
                return { ok: true as const, instance };
              },
              (error: unknown) => ({ ok: false as const, error }),
            ),
          ),
        );
        if (stopped) return;
        for (const outcome of outcomes) {
          if (outcome.ok) {
            const { instance } = outcome;
            runtimeOf.set(instance.id, runtime);
            appendEvent(db, {
              deploymentId,
              level: 'info',
              component: runtime.name,
              reason: 'Created',
              message: `created instance ${instance.name}`,
            });
            if (instance.imageDigest !== null) setImageDigest(db, deploymentId, instance.imageDigest);
          } else if (failure === null) {
            failure =
              outcome.error instanceof RuntimeError
                ? outcome.error
                : new RuntimeError('error', 'host', `creating an instance failed: ${errorMessage(outcome.error)}`);
          }
        }
      }
    }
    if (failure === null || stopped) return;
    reportCreateFailure(deploymentId, failure);
  }

  function reportCreateFailure(deploymentId: string, failure: RuntimeError): void {
    const all = rolloutFamily(db, deploymentId).map(desiredOf);
    const desired = all.find((d) => d.id === deploymentId);
    if (desired === undefined) return;
    const at = now();
    const actions = planCreateFailure(
      desired,
      {
        status: failure.status,
        category: failure.category,
        message: failure.message,
        ...(failure instanceof ResolveError && failure.reason !== undefined ? { reason: failure.reason } : {}),
      },
      at,
      servingParents(all, deploymentId).length > 0,
    );
    applyStoreActions(db, tracker, actions, new Date(at));
    log.warn(`scheduler: ${desired.spec.namespace}/${desired.spec.name}: ${failure.status}: ${failure.message}`);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Health checks: one probe per check per instance per tick
  // -------------------------------------------------------------------------------------------------------------

  function probeDue(records: readonly DeploymentRecord[]): void {
    const at = now();
    for (const record of records) {
      const checks = record.spec.health_checks;
      if (checks.length === 0 || INACTIVE_STATUSES.has(record.status)) continue;
      const runtime = runtimes.get(record.spec.runtime);
      if (runtime === undefined) continue;
      for (const instance of observedByDeployment.get(record.id) ?? []) {
        if (instance.state !== 'running' || removals.has(instance.id)) continue;
        for (const [index, check] of checks.entries()) {
          const key = `${instance.id}:${index}`;
          const last = lastProbe.get(key);
          if (probing.has(key) || (last !== undefined && at - last < intervalMs * 0.8)) continue;
          probing.add(key);
          lastProbe.set(key, at);
          track(
            probeBound
              .run(() => runProbe(check, instance, runtime))
              .then((result) => {
                if (stopped || !deploymentExists(db, record.id)) return;
                appendHealthResult(
                  db,
                  {
                    deployment_id: record.id,
                    instance_id: instance.id,
                    check_index: index,
                    check_type: check.type,
                    status: result.status,
                    message: result.message,
                    started_at: result.startedAt.toISOString(),
                    finished_at: result.finishedAt.toISOString(),
                  },
                  result.finishedAt,
                );
                if (tracker.record(instance.id, index, result.status, result.message)) nudge();
              })
              .finally(() => probing.delete(key)),
          );
        }
      }
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Metrics: refreshed in the background, never at scrape time
  // -------------------------------------------------------------------------------------------------------------

  async function refreshStats(): Promise<void> {
    const byRuntime = new Map<string, ObservedInstance[]>();
    for (const instance of observed) {
      if (instance.state !== 'running') continue;
      const runtime = runtimeOf.get(instance.id);
      if (runtime === undefined) continue;
      const list = byRuntime.get(runtime.name);
      if (list === undefined) byRuntime.set(runtime.name, [instance]);
      else list.push(instance);
    }
    for (const runtime of runtimes.values()) {
      const instances = byRuntime.get(runtime.name) ?? [];
      await Promise.all(
        instances.map((instance) =>
          statsBound.run(async () => {
            try {
              stats.set(instance.id, { stats: await runtime.stats(instance), at: now() });
            } catch {
              // Gone between the list and the stats call, or a daemon hiccup: the previous value stays.
            }
          }),
        ),
      );
      if (!stopped) lastRefresh.set(runtime.name, now());
    }
  }

  function scheduleMetrics(): void {
    if (stopped) return;
    metricsTimer = setTimeout(() => {
      metricsTimer = null;
      track(refreshStats().finally(scheduleMetrics));
    }, intervalMs);
  }

  if (options.metrics !== undefined) {
    options.metrics.addSource(() =>
      deploymentFamilies(
        metricsDeployments,
        observed,
        new Map([...stats].map(([id, entry]) => [id, entry.stats])),
        lastRefresh,
      ),
    );
  }

  // -------------------------------------------------------------------------------------------------------------
  // Runtime events
  // -------------------------------------------------------------------------------------------------------------

  async function followEvents(runtime: Runtime, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        for await (const event of runtime.events(signal)) {
          if (event.action === 'start' && !stopped && deploymentExists(db, event.deploymentId)) {
            appendEvent(db, {
              deploymentId: event.deploymentId,
              level: 'info',
              component: runtime.name,
              reason: 'Started',
              message: `instance ${event.instanceId.slice(0, 12)} started`,
            });
          }
          nudge();
        }
      } catch (error) {
        if (signal.aborted) return;
        log.warn(`scheduler: ${runtime.name} events stream failed: ${errorMessage(error)}`);
      }
      if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Lifecycle
  // -------------------------------------------------------------------------------------------------------------

  const handle: SchedulerHandle = {
    nudge,
    instancesOf: (deploymentId) => observedByDeployment.get(deploymentId) ?? [],
    runtime: (name) => runtimes.get(name),
  };

  return {
    handle,
    start() {
      if (!stopped) return;
      stopped = false;
      tracker = HealthTracker.fromStored(recentHealthResults(db, HEALTH_ROWS_REBUILT));
      eventsAbort = new AbortController();
      for (const runtime of runtimes.values()) {
        const follower = followEvents(runtime, eventsAbort.signal).catch(() => undefined);
        followers.add(follower);
        void follower.finally(() => followers.delete(follower));
      }
      scheduleMetrics();
      void runPass();
    },
    async stop(budgetMs = 3_000) {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      if (metricsTimer !== null) clearTimeout(metricsTimer);
      timer = null;
      metricsTimer = null;
      eventsAbort?.abort();
      const pending = [passRunning, ...tasks, ...followers].filter((p): p is Promise<unknown> => p !== null);
      let cut: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled(pending),
        new Promise((resolve) => {
          cut = setTimeout(resolve, budgetMs);
        }),
      ]);
      clearTimeout(cut);
    },
    reconcileNow: () => runPass(),
    async settled() {
      while (tasks.size > 0 || passRunning !== null) {
        await Promise.allSettled([passRunning, ...tasks]);
      }
    },
    cachedStats: (instanceId) => stats.get(instanceId),
  };
}
