// The deployment resource (spec "Deployment", "States and transitions"): its validated spec with every default
// applied, the stored record, and the status vocabulary the scheduler moves it through. Pure types and constants.
import type { RuntimeName } from '../runtime/runtime.js';

export type { RuntimeName };

export const RUNTIMES = ['docker', 'cloud-hypervisor'] as const satisfies readonly RuntimeName[];
export const KINDS = ['worker', 'job'] as const;
export type Kind = (typeof KINDS)[number];

export const DEPLOYMENT_STATUSES = [
  'pending',
  'creating',
  'running',
  'completed',
  'failed',
  'deleted',
  'crash_loop_back_off',
  'image_pull_back_off',
  'create_container_error',
  'network_error',
  'config_error',
  'file_system_error',
  'insufficient_resources',
  'error',
] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** The scheduler never acts on these again (except removing still-running instances when entering them). */
export const TERMINAL_STATUSES: ReadonlySet<DeploymentStatus> = new Set<DeploymentStatus>([
  'completed',
  'failed',
  'crash_loop_back_off',
  'insufficient_resources',
]);

/**
 * Inactive: the deployment will never start an instance again, being torn down (`deleted`) or terminal. It needs
 * no resources any more, is not probed, and ends a rolling update it is the child of.
 */
export const INACTIVE_STATUSES: ReadonlySet<DeploymentStatus> = new Set<DeploymentStatus>(['deleted', ...TERMINAL_STATUSES]);

/** Failure statuses the scheduler retries with exponential backoff (see scheduler/backoff.ts). */
export const RETRIED_STATUSES: ReadonlySet<DeploymentStatus> = new Set<DeploymentStatus>([
  'image_pull_back_off',
  'create_container_error',
  'network_error',
  'config_error',
  'file_system_error',
  'error',
]);

/**
 * Statuses `namespace prune` removes without `all` — exactly the spec's list. `pending`, `creating`, `running`
 * are preserved, and so is `insufficient_resources`, which the spec's list leaves out (docs/svc/deployments.md).
 */
export const PRUNED_BY_DEFAULT_STATUSES: ReadonlySet<DeploymentStatus> = new Set<DeploymentStatus>([
  'completed',
  'failed',
  'deleted',
  'crash_loop_back_off',
  'image_pull_back_off',
  'create_container_error',
  'network_error',
  'config_error',
  'file_system_error',
  'error',
]);

export function isDeploymentStatus(value: unknown): value is DeploymentStatus {
  return typeof value === 'string' && (DEPLOYMENT_STATUSES as readonly string[]).includes(value);
}

export function isKind(value: unknown): value is Kind {
  return value === 'worker' || value === 'job';
}

/** Spec "Limits": the 5th unplanned exit of a worker gives `crash_loop_back_off`. */
export const MAX_RESTARTS = 5;
export const DEFAULT_HEALTH_CHECK_THRESHOLD = 3;
export const DEFAULT_HEALTH_CHECK_INTERVAL = '10s';
export const DEFAULT_HEALTH_CHECK_TIMEOUT = '5s';
/** `SVC_APPLY_TIMEOUT` default: how long a deployment may stay `creating` (readiness gate) before `failed`. */
export const DEFAULT_APPLY_TIMEOUT_MS = 300_000;

export const IMAGE_PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
export type ImagePullPolicy = (typeof IMAGE_PULL_POLICIES)[number];
export const DEFAULT_IMAGE_PULL_POLICY: ImagePullPolicy = 'IfNotPresent';

export const NETWORK_MODES = ['bridge', 'host'] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

export interface PortMapping {
  published: number;
  target: number;
}

export interface SecretRef {
  secretRef: string;
}
export type EnvironmentValue = string | SecretRef;

export const VOLUME_MOUNT_TYPES = ['bind', 'volume', 'config'] as const;
export type VolumeMountType = (typeof VOLUME_MOUNT_TYPES)[number];
export type Permission = 'rw' | 'ro';

export interface VolumeMount {
  type: VolumeMountType;
  /** Host path (bind), volume name (volume) or config name in the same namespace (config). */
  source: string;
  destination: string;
  driver: string;
  /** Always `ro` for `config`, whatever was asked. */
  permission: Permission;
  /** Present exactly when `type` is `config`: the entry of the config rendered into the file. */
  key?: string;
}

export interface ResourceQuantities {
  /** As written (`500m`, `0.5`, `1`); JSON numbers are kept as their decimal text. */
  cpu?: string;
  /** As written (`268435456`, `256Mi`). */
  memory?: string;
}

export interface Resources {
  limits: ResourceQuantities;
  requests: ResourceQuantities;
}

export const HEALTH_CHECK_TYPES = ['tcp', 'http', 'command'] as const;
export type HealthCheckType = (typeof HEALTH_CHECK_TYPES)[number];
export const ON_FAILURE_ACTIONS = ['restart', 'stop', 'alert'] as const;
export type OnFailureAction = (typeof ON_FAILURE_ACTIONS)[number];
/** The default is `restart`: what Nomad's check_restart and a Kubernetes liveness probe do. */
export const DEFAULT_ON_FAILURE: OnFailureAction = 'restart';

interface HealthCheckCommon {
  /** Duration text, `<int>ms` or `<int>s`. Advisory: one probe per scheduler tick. */
  interval: string;
  /** Duration text, `<int>ms` or `<int>s`. */
  timeout: string;
  threshold: number;
  on_failure: OnFailureAction;
}

export interface TcpHealthCheck extends HealthCheckCommon {
  type: 'tcp';
  port: number;
}

export interface HttpHealthCheck extends HealthCheckCommon {
  type: 'http';
  /** `localhost` as the host is rewritten to the instance's private address by the prober. */
  url: string;
}

export interface CommandHealthCheck extends HealthCheckCommon {
  type: 'command';
  command: string[];
}

export type HealthCheck = TcpHealthCheck | HttpHealthCheck | CommandHealthCheck;

export interface RegistryAuthSpec {
  username: string;
  /**
   * Plaintext, only between validation and the store: createDeployment seals it into `password_sealed` and never
   * stores it. (A row written before sealing existed still carries it and is read as is.) Never returned by the
   * API: render records through publicSpec().
   */
  password?: string;
  /** The password sealed with the SecretBox (base64, associated data `registry:<deployment id>`): the stored form. */
  password_sealed?: string;
  server_address?: string;
}

export interface DeploymentConfig {
  image_pull_policy: ImagePullPolicy;
  registry_auth?: RegistryAuthSpec;
  /** `user[:group]` the instance runs as. */
  user?: string;
}

/** A `POST /deployments` body after validation, with every default applied. Immutable once stored. */
export interface DeploymentSpec {
  name: string;
  runtime: RuntimeName;
  namespace: string;
  kind: Kind;
  image: string;
  /** Overrides the image entrypoint; absent = the image's own. */
  command?: string[];
  config: DeploymentConfig;
  replicas: number;
  ports: PortMapping[];
  labels: Record<string, string>;
  environment: Record<string, EnvironmentValue>;
  volumes: VolumeMount[];
  resources: Resources;
  health_checks: HealthCheck[];
  network: { mode: NetworkMode };
}

/** Registry credentials as the API shows them: never the password. */
export interface PublicRegistryAuth {
  username: string;
  server_address?: string;
}

export type PublicDeploymentConfig = Omit<DeploymentConfig, 'registry_auth'> & { registry_auth?: PublicRegistryAuth };

/** A spec as it may leave the service (API responses, events, logs): the registry password is dropped. */
export type PublicDeploymentSpec = Omit<DeploymentSpec, 'config'> & { config: PublicDeploymentConfig };

export function publicSpec(spec: DeploymentSpec): PublicDeploymentSpec {
  const { registry_auth: auth, ...config } = spec.config;
  if (auth === undefined) return { ...spec, config };
  const shown: PublicRegistryAuth = { username: auth.username };
  if (auth.server_address !== undefined) shown.server_address = auth.server_address;
  return { ...spec, config: { ...config, registry_auth: shown } };
}

export interface DeploymentInstance {
  id: string;
  /** Omitted when the instance has no reachable network. */
  address?: string;
}

/** The Deployment resource as the API returns it: the public spec plus what the service assigns and observes. */
export interface Deployment extends PublicDeploymentSpec {
  id: string;
  created_at: string;
  updated_at: string;
  status: DeploymentStatus;
  restart_count: number;
  instances: DeploymentInstance[];
  image_digest?: string;
  parent_id: string | null;
}
