// The one driver interface every runtime implements (Nomad-style: one interface, one folder per driver).
// The scheduler's executor is the only caller. Everything here is fully resolved by the caller: secrets are
// already decrypted, config files already rendered to host paths, quantities already parsed to numbers.

export type RuntimeName = 'docker' | 'cloud-hypervisor';

/** Statuses a runtime failure is classified into (spec "States and transitions"). */
export type FailureStatus =
  | 'image_pull_back_off'
  | 'create_container_error'
  | 'network_error'
  | 'config_error'
  | 'file_system_error'
  | 'insufficient_resources'
  | 'failed'
  | 'error';

/** Who is to blame, as carried by the `deployment.error` webhook event. */
export type FailureCategory = 'user' | 'host' | 'transient';

/** A runtime failure the executor turns into a deployment status. `message` never contains secret values. */
export class RuntimeError extends Error {
  constructor(
    readonly status: FailureStatus,
    readonly category: FailureCategory,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RuntimeError';
  }
}

export interface PortBinding {
  published: number;
  target: number;
}

export type MountSpec =
  | { type: 'bind'; source: string; destination: string; readOnly: boolean }
  /** Named volume; created on demand with the svc.* labels. */
  | { type: 'volume'; source: string; destination: string; readOnly: boolean; driver: string }
  /** A file on the host rendered from a config entry; always mounted read-only. */
  | { type: 'file'; hostPath: string; destination: string };

export interface ResourceLimits {
  /** CPU cap in nano-CPUs (1 core = 1e9); null = no cap. */
  nanoCpus: number | null;
  /** Hard memory cap in bytes; null = no cap. */
  memoryBytes: number | null;
  /** Soft memory minimum in bytes (docker MemoryReservation); null = none. */
  memoryReservationBytes: number | null;
}

export interface RegistryAuth {
  username: string;
  password: string;
  serveraddress?: string;
}

/** Everything needed to create and start one instance of a deployment. */
export interface InstanceSpec {
  deploymentId: string;
  namespace: string;
  name: string;
  kind: 'worker' | 'job';
  image: string;
  imagePullPolicy: 'Always' | 'IfNotPresent' | 'Never';
  registryAuth: RegistryAuth | null;
  user: string | null;
  command: string[] | null;
  env: Record<string, string>;
  /** User labels; the runtime adds its own and never lets these override them. */
  labels: Record<string, string>;
  ports: PortBinding[];
  mounts: MountSpec[];
  resources: ResourceLimits;
  networkMode: 'bridge' | 'host';
  /** Opaque hash of the deployment's desired spec, stored on the instance so drift can be detected. */
  specHash: string;
}

export type InstanceState = 'created' | 'running' | 'restarting' | 'paused' | 'exited' | 'dead' | 'removing';

/** One instance as the runtime sees it right now. */
export interface ObservedInstance {
  /** Runtime id (docker container id, micro-VM id). */
  id: string;
  /** `<namespace>_<name>_<8 hex>` on docker, `ch-<8 hex>-<8 hex>` on cloud-hypervisor. */
  name: string;
  deploymentId: string;
  specHash: string;
  state: InstanceState;
  exitCode: number | null;
  /** RFC 3339, or null when never started. */
  startedAt: string | null;
  finishedAt: string | null;
  /** Routable private address (container IP on its namespace network); null when none. */
  address: string | null;
  imageDigest: string | null;
}

export interface LogLine {
  instance: string;
  stream: 'stdout' | 'stderr';
  /** RFC 3339 with the runtime's precision. */
  timestamp: string;
  message: string;
}

export interface LogQuery {
  tail: number;
  /** Unix seconds; null = from the start. */
  since: number | null;
  follow: boolean;
}

export interface InstanceStats {
  cpuUsagePercent: number;
  memory: { usageBytes: number; limitBytes: number };
  network: { rxBytes: number; txBytes: number; rxPackets: number; txPackets: number };
  diskIo: { readBytes: number; writeBytes: number };
  pids: { current: number; limit: number };
}

/** A change the runtime noticed by itself (container died, was removed behind our back, ...). */
export interface RuntimeEvent {
  deploymentId: string;
  instanceId: string;
  action: 'start' | 'die' | 'destroy' | 'oom' | 'other';
  exitCode: number | null;
}

export interface ExecOptions {
  command: string[];
  tty: boolean;
  cols?: number;
  rows?: number;
}

/** A running exec: write stdin, read output, learn the exit code. */
export interface ExecSession {
  stdin: NodeJS.WritableStream;
  output: AsyncIterable<{ stream: 'stdout' | 'stderr'; data: Buffer }>;
  resize(cols: number, rows: number): Promise<void>;
  /** Resolves with the exit code once the command ends; null when it cannot be determined. */
  exitCode(): Promise<number | null>;
  close(): void;
}

export interface Runtime {
  readonly name: RuntimeName;
  /** All instances this runtime manages, in ONE call (filtered by the svc_deployment label on docker). */
  list(): Promise<ObservedInstance[]>;
  /** Create and start one instance. Throws RuntimeError, classified. */
  create(spec: InstanceSpec): Promise<ObservedInstance>;
  /** Stop (with a grace period) and remove one instance; removing a missing instance is not an error. */
  remove(instanceId: string, graceSeconds: number): Promise<void>;
  logs(instance: ObservedInstance, query: LogQuery, signal: AbortSignal): AsyncIterable<LogLine>;
  stats(instance: ObservedInstance): Promise<InstanceStats>;
  exec(instance: ObservedInstance, options: ExecOptions): Promise<ExecSession>;
  /** Runs `command` inside the instance for a `command` health check; resolves true when exec started. */
  probeCommand(instance: ObservedInstance, command: string[], timeoutMs: number): Promise<boolean>;
  /** Events for instances this runtime manages, until the signal aborts. Reconnects by itself. */
  events(signal: AbortSignal): AsyncIterable<RuntimeEvent>;
  /** Answers whether the runtime is reachable (docker daemon ping). */
  ping(): Promise<boolean>;
  /**
   * Frees what a namespace holds on the host while it has no instance (docker: the `svc_<namespace>` network, a
   * subnet out of dockerd's small default pools). Best effort: never throws, keeps anything still in use, and a
   * creation racing it must still succeed (it recreates what it finds gone). Optional to implement.
   */
  releaseNamespace?(namespace: string): Promise<void>;
}
