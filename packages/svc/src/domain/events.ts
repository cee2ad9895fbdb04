// The two event vocabularies of a deployment: scheduler events (stored, listed by GET /deployments/{id}/events)
// with ONE closed list of CamelCase reasons, and the five webhook event kinds with their payloads (spec "Events").
import type { DeploymentStatus, Kind, OnFailureAction, RuntimeName } from './deployment.js';
import type { FailureCategory } from '../runtime/runtime.js';

// ---------------------------------------------------------------------------------------------------------------
// Scheduler events
// ---------------------------------------------------------------------------------------------------------------

/** Every reason a scheduler event may carry. docs/svc/scheduler.md lists them with their meaning. */
export const EVENT_REASONS = [
  // scaling and instance lifecycle
  'ScaleUp',
  'ScaleDown',
  'Created',
  'Started',
  'Exited',
  'Stopped',
  'InstanceLost',
  'SpecDrift',
  // status moves
  'StatusChanged',
  'Ready',
  'ReadinessDeadlineExceeded',
  'CrashLoopBackOff',
  'JobCompleted',
  'JobFailed',
  // runtime failures, one per failure status, plus the causes of `failed` at start
  'ImagePullBackOff',
  'CreateContainerError',
  'NetworkError',
  'ConfigError',
  'FileSystemError',
  'InsufficientResources',
  'RuntimeError',
  'StartFailed',
  'SecretNotFound',
  'FirmwareNotFound',
  'BackOff',
  'Retrying',
  // health checks
  'HealthCheckFailed',
  // rolling update
  'RollingUpdateStarted',
  'RollingUpdateStep',
  'RollingUpdateComplete',
  'RollingUpdateFailed',
  'Replaced',
  // deletion
  'Deleting',
  'Purged',
] as const;
export type EventReason = (typeof EVENT_REASONS)[number];

export const EVENT_LEVELS = ['info', 'warning', 'error'] as const;
export type EventLevel = (typeof EVENT_LEVELS)[number];

/** `scheduler` for decisions, `health-check` for probes, or the runtime name for what happens to instances. */
export type EventComponent = RuntimeName | 'scheduler' | 'health-check';

/** A scheduler event before the store gives it an id and a timestamp. */
export interface SchedulerEventInput {
  deploymentId: string;
  level: EventLevel;
  component: EventComponent;
  reason: EventReason;
  message: string;
}

export function isEventReason(value: unknown): value is EventReason {
  return typeof value === 'string' && (EVENT_REASONS as readonly string[]).includes(value);
}

// ---------------------------------------------------------------------------------------------------------------
// Webhook events
// ---------------------------------------------------------------------------------------------------------------

export const WEBHOOK_EVENT_KINDS = [
  'deployment.status_changed',
  'deployment.health_check_failed',
  'deployment.rolling_update',
  'deployment.scaled',
  'deployment.error',
] as const;
export type WebhookEventKind = (typeof WEBHOOK_EVENT_KINDS)[number];

export function isWebhookEventKind(value: unknown): value is WebhookEventKind {
  return typeof value === 'string' && (WEBHOOK_EVENT_KINDS as readonly string[]).includes(value);
}

export const WEBHOOK_SCHEMA_VERSION = 1;

/** Carried by every payload. `kind` is the deployment's kind, not the event kind (that is `X-Svc-Event`). */
export interface WebhookEnvelope {
  schema_version: typeof WEBHOOK_SCHEMA_VERSION;
  deployment_id: string;
  namespace: string;
  name: string;
  kind: Kind;
}

export type RollingUpdatePhase = 'step' | 'complete' | 'failed';

export interface WebhookPayloads {
  'deployment.status_changed': WebhookEnvelope & {
    old_status: DeploymentStatus;
    new_status: DeploymentStatus;
    restart_count: number;
  };
  'deployment.health_check_failed': WebhookEnvelope & {
    instance_id: string;
    action: OnFailureAction;
    message: string;
  };
  'deployment.rolling_update': WebhookEnvelope & {
    parent_id: string;
    phase: RollingUpdatePhase;
    /** Set on `step` only. */
    drained_instance_id?: string;
  };
  'deployment.scaled': WebhookEnvelope & {
    direction: 'up' | 'down';
    /** Live instance count after the change. */
    instance_count: number;
    replicas: number;
  };
  'deployment.error': WebhookEnvelope & {
    /** Runtime discriminant, a failure status name. */
    reason: string;
    category: FailureCategory;
    message: string;
  };
}

/** One event for the durable outbox: `kind` goes to `X-Svc-Event`, `payload` is the JSON body. */
export type WebhookEvent = {
  [K in WebhookEventKind]: { kind: K; payload: WebhookPayloads[K] };
}[WebhookEventKind];

/** What the envelope is built from: any deployment-like record. */
export interface EnvelopeSource {
  id: string;
  namespace: string;
  name: string;
  kind: Kind;
}

export function webhookEnvelope(source: EnvelopeSource): WebhookEnvelope {
  return {
    schema_version: WEBHOOK_SCHEMA_VERSION,
    deployment_id: source.id,
    namespace: source.namespace,
    name: source.name,
    kind: source.kind,
  };
}

/** Builds a typed event: the envelope plus the kind's extra fields. */
export function webhookEvent<K extends WebhookEventKind>(
  kind: K,
  source: EnvelopeSource,
  extra: Omit<WebhookPayloads[K], keyof WebhookEnvelope>,
): WebhookEvent {
  const payload = { ...webhookEnvelope(source), ...extra } as WebhookPayloads[K];
  return { kind, payload } as WebhookEvent;
}
