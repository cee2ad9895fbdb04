// The reconcile step as a pure function (Kubernetes-controller style): desired deployments + observed instances +
// health + in-flight work + clock → a list of plain-data actions. The executor applies them; it decides nothing.
// Every rule here is documented in docs/svc/scheduler.md and docs/svc/deployments.md.
import {
  DEFAULT_APPLY_TIMEOUT_MS,
  INACTIVE_STATUSES,
  MAX_RESTARTS,
  RETRIED_STATUSES,
  TERMINAL_STATUSES,
  type DeploymentSpec,
  type DeploymentStatus,
} from '../domain/deployment.js';
import {
  webhookEvent,
  type EventComponent,
  type EventLevel,
  type EventReason,
  type SchedulerEventInput,
  type WebhookEvent,
} from '../domain/events.js';
import type { FailureCategory, FailureStatus, ObservedInstance } from '../runtime/runtime.js';
import { restartDelayMs, retryDelayMs } from './backoff.js';

// ---------------------------------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------------------------------

/** What the scheduler persists per deployment beside the spec. Written back whole by a `setStatus` action. */
export interface SchedulerState {
  status: DeploymentStatus;
  /** Unplanned worker exits so far (spec `restart_count`). Never reset within a deployment. */
  restartCount: number;
  /** Consecutive failed attempts while in a retried status; 0 once `running`. Drives the retry backoff. */
  retryCount: number;
  /** Unix ms of the last status change; the readiness deadline counts from entering `creating`. */
  statusSince: number;
  /** Unix ms before which no instance is created (retry or restart backoff); null = no wait. */
  backoffUntil: number | null;
}

export interface DesiredDeployment extends SchedulerState {
  id: string;
  spec: DeploymentSpec;
  /** deploymentSpecHash(spec), stored on every instance it creates. */
  specHash: string;
  parentId: string | null;
  /** `POST /deployments?force=true`: a rolling update from this deployment replaces its parent at once. */
  force: boolean;
}

export type ProbeStatus = 'success' | 'failure' | 'timeout';

/** Health of one check (by index in spec.health_checks) on one instance, as the prober keeps it. */
export interface CheckHealth {
  lastStatus: ProbeStatus | null;
  /** Consecutive non-success results; the prober resets it to 0 on a success. */
  consecutiveFailures: number;
  /** Whether this check ever passed on this instance: `on_failure` is armed only after that. */
  everSucceeded: boolean;
  /** Set by an `ackHealth` action once `on_failure: alert` fired for the current failure streak; reset on success. */
  handled: boolean;
  lastMessage: string | null;
}

export interface InstanceHealth {
  instanceId: string;
  checks: CheckHealth[];
}

/**
 * Work the executor started and that the observed list may not show yet. A creation stays here until an
 * instance list taken AFTER the runtime's create() returned is the one passed in `observed`; a removal stays
 * until the instance is gone from such a list. This is what makes running the plan twice create nothing twice.
 */
export interface InFlight {
  creations: { deploymentId: string }[];
  removals: string[];
}

export interface PlanInput {
  deployments: DesiredDeployment[];
  observed: ObservedInstance[];
  health: InstanceHealth[];
  inFlight: InFlight;
  /** Unix ms. */
  now: number;
  /** SVC_APPLY_TIMEOUT in ms; default 300 000. */
  applyTimeoutMs?: number;
}

// ---------------------------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------------------------

export type RemovalReason =
  | 'scale_down'
  | 'exited'
  | 'drift'
  | 'health_restart'
  | 'orphan'
  | 'deleted'
  | 'rolling_update'
  | 'terminal';

/**
 * Apply in list order: store writes (`setStatus`, `emit`, `record`, `ackHealth`) first — one transaction — then
 * `remove`, then `create`, then `purge`. The plan already sorts them that way.
 */
export type Action =
  | { type: 'setStatus'; deploymentId: string; state: SchedulerState }
  | { type: 'emit'; event: WebhookEvent }
  | { type: 'record'; event: SchedulerEventInput }
  | { type: 'ackHealth'; instanceId: string; checkIndex: number }
  /** Every removal the scheduler makes is planned: it never counts towards restart_count. */
  | { type: 'remove'; deploymentId: string; instanceId: string; planned: true; reason: RemovalReason }
  | { type: 'create'; deploymentId: string }
  /** Delete the deployment row (and its events/results); all its instances are gone. */
  | { type: 'purge'; deploymentId: string };

const PHASE: Record<Action['type'], number> = {
  setStatus: 0,
  emit: 0,
  record: 0,
  ackHealth: 0,
  remove: 1,
  create: 2,
  purge: 3,
};

// ---------------------------------------------------------------------------------------------------------------
// Helpers shared by plan() and the executor-facing entry points
// ---------------------------------------------------------------------------------------------------------------

/** Sorts after every RFC 3339 time: an instance that never started counts as the newest. */
const NEVER_STARTED = '\uffff';
const GONE_STATES = new Set<ObservedInstance['state']>(['removing']);
const EXITED_STATES = new Set<ObservedInstance['state']>(['exited', 'dead']);

function isExited(instance: ObservedInstance): boolean {
  return EXITED_STATES.has(instance.state);
}

function isLive(instance: ObservedInstance): boolean {
  return !EXITED_STATES.has(instance.state) && !GONE_STATES.has(instance.state);
}

/** Ready = running and, when checks are declared, every check's latest result on this instance is a success. */
export function isInstanceReady(
  instance: ObservedInstance,
  spec: DeploymentSpec,
  health: InstanceHealth | undefined,
): boolean {
  if (instance.state !== 'running') return false;
  return spec.health_checks.every((_, index) => health?.checks[index]?.lastStatus === 'success');
}

const STATUS_REASON: Record<FailureStatus, EventReason> = {
  image_pull_back_off: 'ImagePullBackOff',
  create_container_error: 'CreateContainerError',
  network_error: 'NetworkError',
  config_error: 'ConfigError',
  file_system_error: 'FileSystemError',
  insufficient_resources: 'InsufficientResources',
  failed: 'StartFailed',
  error: 'RuntimeError',
};

/** Collects the actions about one deployment and keeps its working scheduler state. */
class DeploymentChanges {
  readonly state: SchedulerState;
  private readonly initial: SchedulerState;

  constructor(
    readonly deployment: DesiredDeployment,
    private readonly actions: Action[],
    private readonly now: number,
    /** True when this deployment is the new side of a rolling update whose parent still serves. */
    readonly parentServing: boolean,
    /** Instances already removed by this plan, shared by every deployment's changes. */
    private readonly removed: Set<string> = new Set(),
  ) {
    this.initial = {
      status: deployment.status,
      restartCount: deployment.restartCount,
      retryCount: deployment.retryCount,
      statusSince: deployment.statusSince,
      backoffUntil: deployment.backoffUntil,
    };
    this.state = { ...this.initial };
  }

  get id(): string {
    return this.deployment.id;
  }

  private source() {
    const { spec } = this.deployment;
    return { id: this.deployment.id, namespace: spec.namespace, name: spec.name, kind: spec.kind };
  }

  record(level: EventLevel, reason: EventReason, message: string, component: EventComponent = 'scheduler'): void {
    this.actions.push({ type: 'record', event: { deploymentId: this.id, level, component, reason, message } });
  }

  emit(event: WebhookEvent): void {
    this.actions.push({ type: 'emit', event });
  }

  scaled(direction: 'up' | 'down', instanceCount: number): void {
    this.emit(
      webhookEvent('deployment.scaled', this.source(), {
        direction,
        instance_count: instanceCount,
        replicas: this.deployment.spec.replicas,
      }),
    );
  }

  healthCheckFailed(instanceId: string, action: 'restart' | 'stop' | 'alert', message: string): void {
    this.emit(webhookEvent('deployment.health_check_failed', this.source(), { instance_id: instanceId, action, message }));
  }

  rollingUpdate(phase: 'step' | 'complete' | 'failed', drainedInstanceId?: string): void {
    const parentId = this.deployment.parentId;
    if (parentId === null) return;
    const extra =
      drainedInstanceId === undefined
        ? { parent_id: parentId, phase }
        : { parent_id: parentId, phase, drained_instance_id: drainedInstanceId };
    this.emit(webhookEvent('deployment.rolling_update', this.source(), extra));
  }

  runtimeError(reason: string, category: FailureCategory, message: string): void {
    this.emit(webhookEvent('deployment.error', this.source(), { reason, category, message }));
  }

  create(): void {
    this.actions.push({ type: 'create', deploymentId: this.id });
  }

  /** Whether this plan already removes the instance. */
  removes(instance: ObservedInstance): boolean {
    return this.removed.has(instance.id);
  }

  remove(instance: ObservedInstance, reason: RemovalReason): void {
    if (this.removed.has(instance.id)) return;
    this.removed.add(instance.id);
    this.actions.push({ type: 'remove', deploymentId: this.id, instanceId: instance.id, planned: true, reason });
  }

  /** A status move: state, `deployment.status_changed`, a scheduler event, and the rolling-update verdict. */
  transition(to: DeploymentStatus, reason: EventReason, level: EventLevel, message: string): void {
    const from = this.state.status;
    if (from === to) return;
    this.state.status = to;
    this.state.statusSince = this.now;
    if (to === 'running') {
      this.state.retryCount = 0;
      this.state.backoffUntil = null;
    }
    this.emit(
      webhookEvent('deployment.status_changed', this.source(), {
        old_status: from,
        new_status: to,
        restart_count: this.state.restartCount,
      }),
    );
    this.record(level, reason, `${from} → ${to}: ${message}`);
    // A child that ends (terminal, or stopped by its own health check) ends its rolling update.
    if (INACTIVE_STATUSES.has(to) && this.parentServing) {
      this.rollingUpdate('failed');
      this.record('error', 'RollingUpdateFailed', `rolling update failed (${to}); the parent keeps serving`);
    }
  }

  /** Writes the state back once, only if it changed. */
  flush(): void {
    const changed = (Object.keys(this.state) as (keyof SchedulerState)[]).some(
      (key) => this.state[key] !== this.initial[key],
    );
    if (changed) this.actions.push({ type: 'setStatus', deploymentId: this.id, state: { ...this.state } });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Rolling updates: who replaces whom
// ---------------------------------------------------------------------------------------------------------------

function isActive(deployment: DesiredDeployment): boolean {
  return !INACTIVE_STATUSES.has(deployment.status);
}

interface Rollouts {
  /** Head (newest active deployment of a chain) → its not-yet-deleted predecessors, nearest first. */
  ancestors: Map<string, DesiredDeployment[]>;
  /** Head → every predecessor still in the store, deleted ones included (their instances may still run). */
  predecessors: Map<string, DesiredDeployment[]>;
  /** Predecessor id → the head that drains it. */
  drainedBy: Map<string, string>;
  /** Deleted deployments that still link a head to an older predecessor: purging them would break the chain. */
  links: Set<string>;
}

function computeRollouts(deployments: readonly DesiredDeployment[]): Rollouts {
  const byId = new Map(deployments.map((d) => [d.id, d]));
  const chainOf = (d: DesiredDeployment): DesiredDeployment[] => {
    const chain: DesiredDeployment[] = [];
    const visited = new Set([d.id]);
    for (let p = d.parentId === null ? undefined : byId.get(d.parentId); p !== undefined && !visited.has(p.id); ) {
      visited.add(p.id);
      chain.push(p);
      p = p.parentId === null ? undefined : byId.get(p.parentId);
    }
    return chain;
  };
  // Only active deployments replace anything; a failed or deleted child hands its predecessors back.
  const chains = new Map<string, DesiredDeployment[]>();
  for (const d of deployments) if (d.parentId !== null && isActive(d)) chains.set(d.id, chainOf(d));
  const superseded = new Set<string>();
  for (const chain of chains.values()) for (const p of chain) superseded.add(p.id);

  const rollouts: Rollouts = { ancestors: new Map(), predecessors: new Map(), drainedBy: new Map(), links: new Set() };
  for (const [headId, predecessors] of chains) {
    if (superseded.has(headId)) continue; // a newer deployment replaces this one too: it is not a head
    const ancestors = predecessors.filter((p) => p.status !== 'deleted' && !rollouts.drainedBy.has(p.id));
    const oldest = predecessors.findLastIndex((p) => p.status !== 'deleted');
    for (const p of predecessors.slice(0, Math.max(0, oldest))) if (p.status === 'deleted') rollouts.links.add(p.id);
    for (const a of ancestors) rollouts.drainedBy.set(a.id, headId);
    rollouts.predecessors.set(headId, predecessors);
    rollouts.ancestors.set(headId, ancestors);
  }
  return rollouts;
}

/** Whether two deployments cannot run side by side on one host (same published port, or host networking). */
function collideOnHost(a: DeploymentSpec, b: DeploymentSpec): boolean {
  if (a.network.mode === 'host' || b.network.mode === 'host') return true;
  const published = new Set(a.ports.map((p) => p.published));
  return b.ports.some((p) => published.has(p.published));
}

/** The direct predecessor chain of a deployment whose parent still serves (for planCreateFailure's caller). */
export function servingParents(deployments: readonly DesiredDeployment[], deploymentId: string): DesiredDeployment[] {
  return computeRollouts(deployments).ancestors.get(deploymentId) ?? [];
}

// ---------------------------------------------------------------------------------------------------------------
// The plan
// ---------------------------------------------------------------------------------------------------------------

interface World {
  now: number;
  applyTimeoutMs: number;
  actions: Action[];
  /** Observed instances per deployment, without those being removed. */
  instances: Map<string, ObservedInstance[]>;
  /** Observed instances per deployment including those being removed. */
  allInstances: Map<string, ObservedInstance[]>;
  pendingCreations: Map<string, number>;
  removing: Set<string>;
  /** Instances this plan removes. */
  removed: Set<string>;
  health: Map<string, InstanceHealth>;
  rollouts: Rollouts;
}

/** The items by key, each list in input order. */
export function group<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list === undefined) map.set(k, [item]);
    else list.push(item);
  }
  return map;
}

/** Reconciles every deployment once. Pure and deterministic: same input, same actions. */
export function plan(input: PlanInput): Action[] {
  const removing = new Set(input.inFlight.removals);
  const world: World = {
    now: input.now,
    applyTimeoutMs: input.applyTimeoutMs ?? DEFAULT_APPLY_TIMEOUT_MS,
    actions: [],
    allInstances: group(input.observed, (i) => i.deploymentId),
    instances: group(
      input.observed.filter((i) => !removing.has(i.id)),
      (i) => i.deploymentId,
    ),
    pendingCreations: new Map(),
    removing,
    removed: new Set(),
    health: new Map(input.health.map((h) => [h.instanceId, h])),
    rollouts: computeRollouts(input.deployments),
  };
  for (const creation of input.inFlight.creations) {
    world.pendingCreations.set(creation.deploymentId, (world.pendingCreations.get(creation.deploymentId) ?? 0) + 1);
  }

  const known = new Set(input.deployments.map((d) => d.id));
  const finalStatus = new Map<string, DeploymentStatus>();
  let todo = input.deployments;
  for (;;) {
    const deferred: DesiredDeployment[] = [];
    for (const deployment of todo) {
      // A predecessor being drained is handled entirely by its head's rolling update.
      if (world.rollouts.drainedBy.has(deployment.id)) {
        deferred.push(deployment);
        continue;
      }
      finalStatus.set(deployment.id, planOne(deployment, world));
    }
    // A head that failed in this pass hands its predecessors back: plan them now, not one tick later.
    const rollouts = computeRollouts(input.deployments.map((d) => ({ ...d, status: finalStatus.get(d.id) ?? d.status })));
    const freed = deferred.filter((d) => !rollouts.drainedBy.has(d.id));
    if (freed.length === 0) break;
    world.rollouts = rollouts;
    todo = deferred;
  }

  for (const instance of input.observed) {
    if (!known.has(instance.deploymentId) && !removing.has(instance.id)) {
      world.actions.push({
        type: 'remove',
        deploymentId: instance.deploymentId,
        instanceId: instance.id,
        planned: true,
        reason: 'orphan',
      });
    }
  }

  return world.actions
    .map((action, index) => ({ action, index }))
    .sort((a, b) => PHASE[a.action.type] - PHASE[b.action.type] || a.index - b.index)
    .map(({ action }) => action);
}

/** Plans one deployment that is not being drained; returns its status after this plan. */
function planOne(deployment: DesiredDeployment, world: World): DeploymentStatus {
  const ancestors = world.rollouts.ancestors.get(deployment.id) ?? [];
  const changes = new DeploymentChanges(deployment, world.actions, world.now, ancestors.length > 0, world.removed);
  planDeployment(changes, world);
  changes.flush();
  if (ancestors.length > 0 && isActive({ ...deployment, status: changes.state.status })) {
    planRollingUpdate(changes, ancestors, world);
  }
  return changes.state.status;
}

function planDeployment(changes: DeploymentChanges, world: World): void {
  const { deployment } = changes;
  if (deployment.status === 'deleted') return planDeleted(changes, world);
  if (TERMINAL_STATUSES.has(deployment.status)) return stopLiveInstances(changes, world, 'terminal');
  if (deployment.spec.kind === 'job') return planJob(changes, world);
  return planWorker(changes, world);
}

function planDeleted(changes: DeploymentChanges, world: World): void {
  const instances = world.instances.get(changes.id) ?? [];
  for (const instance of instances) changes.remove(instance, 'deleted');
  if (instances.length > 0) changes.record('info', 'Deleting', `removing ${instances.length} instance(s)`);
  const anyLeft = (world.allInstances.get(changes.id)?.length ?? 0) > 0;
  if (!anyLeft && (world.pendingCreations.get(changes.id) ?? 0) === 0 && !world.rollouts.links.has(changes.id)) {
    world.actions.push({ type: 'purge', deploymentId: changes.id });
  }
}

/** Terminal deployments keep their exited instances (logs stay readable) but nothing keeps running. */
function stopLiveInstances(changes: DeploymentChanges, world: World, reason: RemovalReason): void {
  const live = (world.instances.get(changes.id) ?? []).filter((i) => isLive(i) && !changes.removes(i));
  for (const instance of live) changes.remove(instance, reason);
  if (live.length > 0) {
    changes.record('info', 'Stopped', `stopped ${live.length} instance(s): deployment is ${changes.state.status}`);
  }
}

function deadlineExceeded(changes: DeploymentChanges, world: World): boolean {
  return changes.state.status === 'creating' && world.now - changes.state.statusSince > world.applyTimeoutMs;
}

function creationsAllowed(changes: DeploymentChanges, world: World): boolean {
  const { backoffUntil } = changes.state;
  if (backoffUntil !== null && world.now < backoffUntil) return false;
  // A replacement that collides on the host (same published port, host network) waits until every predecessor
  // instance is gone, instead of failing with create_container_error.
  const predecessors = world.rollouts.predecessors.get(changes.id) ?? [];
  return !predecessors.some(
    (p) => collideOnHost(p.spec, changes.deployment.spec) && (world.allInstances.get(p.id)?.length ?? 0) > 0,
  );
}

/** Leaves a retried status or `pending` for `creating` when an attempt starts. */
function startAttempt(changes: DeploymentChanges): void {
  const { status } = changes.state;
  if (RETRIED_STATUSES.has(status)) {
    changes.record('info', 'Retrying', `retry ${changes.state.retryCount} after ${status}`);
    changes.transition('creating', 'Retrying', 'info', 'retrying');
  } else if (status === 'pending') {
    changes.transition('creating', changes.parentServing ? 'RollingUpdateStarted' : 'StatusChanged', 'info', 'creating instances');
  }
}

function planJob(changes: DeploymentChanges, world: World): void {
  const instances = world.instances.get(changes.id) ?? [];
  const exited = instances.find(isExited);
  if (exited !== undefined) {
    // A job is never restarted; its exited instance is kept so its logs stay readable.
    if (exited.exitCode === 0) {
      changes.transition('completed', 'JobCompleted', 'info', `instance ${exited.name} exited with code 0`);
    } else {
      const code = exited.exitCode === null ? 'an unknown code' : `code ${exited.exitCode}`;
      changes.transition('failed', 'JobFailed', 'error', `instance ${exited.name} exited with ${code}`);
    }
    stopLiveInstances(changes, world, 'terminal');
    return;
  }
  const live = instances.filter(isLive);
  const pending = world.pendingCreations.get(changes.id) ?? 0;
  if (live.length === 0 && pending === 0) {
    if (changes.state.status === 'running') {
      changes.transition('failed', 'InstanceLost', 'error', 'the job instance disappeared before it exited');
      return;
    }
    if (creationsAllowed(changes, world)) {
      changes.create();
      changes.scaled('up', 1);
      changes.record('info', 'ScaleUp', 'creating the job instance (1/1)', changes.deployment.spec.runtime);
      startAttempt(changes);
    }
  }
  if (live.some((i) => i.state === 'running') && changes.state.status !== 'running') {
    changes.transition('running', 'Ready', 'info', 'the job instance is running');
    return;
  }
  if (deadlineExceeded(changes, world)) {
    changes.transition('failed', 'ReadinessDeadlineExceeded', 'error', `not running within ${world.applyTimeoutMs / 1000}s`);
    stopLiveInstances(changes, world, 'terminal');
  }
}

function planWorker(changes: DeploymentChanges, world: World): void {
  const { deployment } = changes;
  const { spec } = deployment;
  const runtime = spec.runtime;
  const instances = world.instances.get(changes.id) ?? [];

  // 1. Unplanned exits: each one counts; the 5th is crash_loop_back_off.
  const exited = instances.filter(isExited).sort((a, b) => (a.finishedAt ?? '').localeCompare(b.finishedAt ?? '') || a.id.localeCompare(b.id));
  for (const instance of exited) {
    changes.state.restartCount += 1;
    const code = instance.exitCode === null ? 'an unknown code' : `code ${instance.exitCode}`;
    const count = `${changes.state.restartCount}/${MAX_RESTARTS}`;
    changes.record('warning', 'Exited', `instance ${instance.name} exited with ${code} (restart ${count})`, runtime);
    if (changes.state.restartCount >= MAX_RESTARTS) {
      changes.transition('crash_loop_back_off', 'CrashLoopBackOff', 'error', `${MAX_RESTARTS} unplanned exits`);
      stopLiveInstances(changes, world, 'terminal');
      return;
    }
    changes.remove(instance, 'exited');
  }
  if (exited.length > 0) {
    const until = world.now + restartDelayMs(changes.state.restartCount);
    changes.state.backoffUntil = Math.max(changes.state.backoffUntil ?? 0, until);
  }

  // 2. Drift: an instance built from another spec is replaced.
  let live = instances.filter(isLive);
  for (const instance of live.filter((i) => i.specHash !== deployment.specHash)) {
    changes.record('info', 'SpecDrift', `instance ${instance.name} runs another spec; replacing it`, runtime);
    changes.remove(instance, 'drift');
  }
  live = live.filter((i) => i.specHash === deployment.specHash);

  // 3. Health checks: on_failure is armed once a check passed on the instance (before that, the readiness gate
  //    and its deadline govern), and fires once per failure streak.
  const restarted = new Set<string>();
  for (const instance of live) {
    const health = world.health.get(instance.id);
    if (health === undefined || instance.state !== 'running') continue;
    for (const [index, check] of spec.health_checks.entries()) {
      const result = health.checks[index];
      if (result === undefined || !result.everSucceeded || result.handled || result.consecutiveFailures < check.threshold) {
        continue;
      }
      const message =
        result.lastMessage ?? `${check.type} check failed ${result.consecutiveFailures} consecutive times`;
      changes.healthCheckFailed(instance.id, check.on_failure, message);
      const summary = `${check.type} check #${index} failed ${result.consecutiveFailures}x on ${instance.name}: ${message}`;
      if (check.on_failure === 'alert') {
        changes.record('error', 'HealthCheckFailed', summary, 'health-check');
        world.actions.push({ type: 'ackHealth', instanceId: instance.id, checkIndex: index });
        continue;
      }
      changes.record('warning', 'HealthCheckFailed', `${summary}; action ${check.on_failure}`, 'health-check');
      if (check.on_failure === 'stop') {
        changes.transition('deleted', 'HealthCheckFailed', 'warning', 'health check on_failure: stop');
        for (const i of live) changes.remove(i, 'deleted');
        return;
      }
      changes.remove(instance, 'health_restart');
      restarted.add(instance.id);
      break;
    }
  }
  live = live.filter((i) => !restarted.has(i.id));

  // 4. Scale to replicas.
  const pending = world.pendingCreations.get(changes.id) ?? 0;
  const count = live.length + pending;
  if (count < spec.replicas && creationsAllowed(changes, world)) {
    const missing = spec.replicas - count;
    for (let k = 1; k <= missing; k += 1) {
      changes.create();
      changes.scaled('up', count + k);
      changes.record('info', 'ScaleUp', `creating instance ${count + k}/${spec.replicas}`, runtime);
    }
    startAttempt(changes);
  } else if (count > spec.replicas) {
    const byPreference = [...live].sort(
      (a, b) =>
        Number(isInstanceReady(a, spec, world.health.get(a.id))) - Number(isInstanceReady(b, spec, world.health.get(b.id))) ||
        (b.startedAt ?? NEVER_STARTED).localeCompare(a.startedAt ?? NEVER_STARTED) ||
        b.id.localeCompare(a.id),
    );
    const excess = byPreference.slice(0, Math.min(count - spec.replicas, live.length));
    excess.forEach((instance, k) => {
      changes.remove(instance, 'scale_down');
      changes.scaled('down', count - k - 1);
      changes.record('info', 'ScaleDown', `removing instance ${instance.name}`, runtime);
    });
    const kept = new Set(excess.map((i) => i.id));
    live = live.filter((i) => !kept.has(i.id));
  }

  // 5. Status: the readiness gate, and its deadline.
  const ready = live.filter((i) => isInstanceReady(i, spec, world.health.get(i.id)));
  const settled = (world.pendingCreations.get(changes.id) ?? 0) === 0 && live.length === spec.replicas;
  const { status } = changes.state;
  const gate = status === 'pending' || status === 'creating' || RETRIED_STATUSES.has(status);
  if (gate && settled && ready.length >= spec.replicas) {
    const checks = spec.health_checks.length > 0 ? 'ready' : 'running';
    changes.transition('running', 'Ready', 'info', `${ready.length}/${spec.replicas} instance(s) ${checks}`);
    return;
  }
  if (deadlineExceeded(changes, world)) {
    changes.transition(
      'failed',
      'ReadinessDeadlineExceeded',
      'error',
      `${ready.length}/${spec.replicas} instance(s) ready after ${world.applyTimeoutMs / 1000}s`,
    );
    stopLiveInstances(changes, world, 'terminal');
  }
}

/**
 * Drains the predecessors of `head`. Immediate (force, no health checks, or a host collision): predecessors are
 * marked deleted at once. Gradual: one predecessor instance per plan, only while a child instance is ready and
 * the ready total stays at the target; `complete` once the head is running and nothing old is left.
 */
function planRollingUpdate(head: DeploymentChanges, ancestors: DesiredDeployment[], world: World): void {
  const { spec } = head.deployment;
  const immediate =
    head.deployment.force || spec.health_checks.length === 0 || ancestors.some((a) => collideOnHost(a.spec, spec));

  const oldChanges = ancestors.map(
    (a) => new DeploymentChanges(a, world.actions, world.now, false, world.removed),
  );
  const oldInstances = ancestors.flatMap((a) => world.instances.get(a.id) ?? []);
  const oldInFlight = ancestors.some(
    (a) =>
      (world.allInstances.get(a.id) ?? []).some((i) => world.removing.has(i.id)) ||
      (world.pendingCreations.get(a.id) ?? 0) > 0,
  );

  if (immediate) {
    for (const old of oldChanges) {
      old.transition('deleted', 'Replaced', 'info', `replaced at once by ${head.id}`);
      for (const instance of world.instances.get(old.id) ?? []) old.remove(instance, 'rolling_update');
      old.flush();
    }
    head.record('info', 'Replaced', `replaced ${ancestors.map((a) => a.id).join(', ')} at once`);
    return;
  }

  // Exited old instances serve nothing: clear them without counting or replacing them.
  const byOwner = new Map(oldChanges.map((c) => [c.id, c]));
  for (const instance of oldInstances.filter(isExited)) byOwner.get(instance.deploymentId)?.remove(instance, 'rolling_update');
  const oldLive = oldInstances.filter(isLive);

  if (oldLive.length === 0 && !oldInFlight) {
    if (head.state.status !== 'running') return;
    for (const old of oldChanges) {
      old.transition('deleted', 'RollingUpdateComplete', 'info', `replaced by ${head.id}`);
      old.flush();
    }
    head.rollingUpdate('complete');
    head.record('info', 'RollingUpdateComplete', 'rolling update complete');
    return;
  }
  if (oldInFlight) return; // one at a time: wait for the previous drain to finish

  const headInstances = (world.instances.get(head.id) ?? []).filter((i) => i.specHash === head.deployment.specHash);
  const readyNew = headInstances.filter((i) => isInstanceReady(i, spec, world.health.get(i.id))).length;
  if (readyNew < Math.min(1, spec.replicas)) return;

  const ownerSpec = (instance: ObservedInstance) => ancestors.find((a) => a.id === instance.deploymentId)?.spec ?? spec;
  const isOldReady = (i: ObservedInstance) => isInstanceReady(i, ownerSpec(i), world.health.get(i.id));
  const readyOld = oldLive.filter(isOldReady);
  const target = Math.min(spec.replicas, ancestors[0]?.spec.replicas ?? spec.replicas);
  const unready = oldLive.find((i) => !isOldReady(i));
  let victim: ObservedInstance | undefined;
  if (unready !== undefined) victim = unready;
  else if (readyNew + readyOld.length - 1 >= target) {
    victim = [...readyOld].sort((a, b) => (a.startedAt ?? '').localeCompare(b.startedAt ?? '') || a.id.localeCompare(b.id))[0];
  }
  if (victim === undefined) return;
  byOwner.get(victim.deploymentId)?.remove(victim, 'rolling_update');
  head.rollingUpdate('step', victim.id);
  head.record('info', 'RollingUpdateStep', `drained ${victim.name} (${oldLive.length - 1} old instance(s) left)`);
}

// ---------------------------------------------------------------------------------------------------------------
// Executor-facing entry points
// ---------------------------------------------------------------------------------------------------------------

export interface CreateFailure {
  status: FailureStatus;
  category: FailureCategory;
  /** Never holds secret values (RuntimeError guarantees it). */
  message: string;
  /** A more precise reason than the status gives, e.g. `SecretNotFound`, `FirmwareNotFound`. */
  reason?: EventReason;
}

/**
 * What a failed `create` action does to its deployment: `deployment.error`, an error event, and the failure
 * status — retried ones with exponential backoff, terminal ones for good. `parentServing` is
 * `servingParents(deployments, id).length > 0`, so a failed child reports the rolling update as failed.
 * Call once per deployment per batch of creations.
 */
export function planCreateFailure(
  deployment: DesiredDeployment,
  failure: CreateFailure,
  now: number,
  parentServing = false,
): Action[] {
  const actions: Action[] = [];
  const changes = new DeploymentChanges(deployment, actions, now, parentServing);
  const reason = failure.reason ?? STATUS_REASON[failure.status];
  changes.runtimeError(failure.status, failure.category, failure.message);
  changes.record('error', reason, failure.message, deployment.spec.runtime);
  if (!isActive(deployment)) return actions; // deleted or terminal meanwhile: report, change nothing
  if (RETRIED_STATUSES.has(failure.status)) {
    changes.state.retryCount += 1;
    const delay = retryDelayMs(changes.state.retryCount);
    changes.state.backoffUntil = now + delay;
    changes.transition(failure.status, reason, 'error', failure.message);
    changes.record('warning', 'BackOff', `retry ${changes.state.retryCount} in ${delay / 1000}s`);
  } else {
    changes.transition(failure.status, reason, 'error', failure.message);
  }
  changes.flush();
  return actions;
}

/** The earliest time a time-based decision of the plan changes (backoff end, readiness deadline); null = none. */
export function nextWakeAt(deployments: readonly DesiredDeployment[], now: number, applyTimeoutMs = DEFAULT_APPLY_TIMEOUT_MS): number | null {
  let wake: number | null = null;
  const consider = (at: number) => {
    if (at > now && (wake === null || at < wake)) wake = at;
  };
  for (const d of deployments) {
    if (d.backoffUntil !== null) consider(d.backoffUntil);
    if (d.status === 'creating') consider(d.statusSince + applyTimeoutMs + 1);
  }
  return wake;
}

/** The initial scheduler state of a deployment the API just stored. */
export function initialSchedulerState(now: number): SchedulerState {
  return { status: 'pending', restartCount: 0, retryCount: 0, statusSince: now, backoffUntil: null };
}
