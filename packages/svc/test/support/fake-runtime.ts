// An in-memory Runtime double for loop tests and the scheduler benchmark: instances live in a Map, create()
// can be slowed or failed per image, and every call is counted. Not a stub of behaviour under test: the loop
// and the plan are real; only dockerd is replaced.
import { randomBytes } from 'node:crypto';
import {
  RuntimeError,
  type ExecSession,
  type InstanceSpec,
  type InstanceStats,
  type LogLine,
  type ObservedInstance,
  type Runtime,
  type RuntimeEvent,
} from '../../src/runtime/runtime.js';

export interface FakeRuntimeOptions {
  /** Delay of create() per image (default 0). */
  createDelayMs?: (image: string) => number;
  /** Throw this from create() for an image. */
  failure?: (image: string) => RuntimeError | null;
  /** Like dockerd: the container is listed (state `created`) while create() is still running. */
  visibleWhileCreating?: boolean;
  /** list() takes a snapshot at the call and answers this much later (a busy daemon). */
  listDelayMs?: number;
}

export class FakeRuntime implements Runtime {
  readonly name = 'docker' as const;
  readonly instances = new Map<string, ObservedInstance>();
  calls = { list: 0, create: 0, remove: 0, stats: 0 };
  maxConcurrentCreates = 0;
  private concurrentCreates = 0;
  listFailure: Error | null = null;

  constructor(private readonly options: FakeRuntimeOptions = {}) {}

  /** Adds an instance as if another process had created it (adoption, benchmarks). */
  seed(deploymentId: string, specHash: string, overrides: Partial<ObservedInstance> = {}): ObservedInstance {
    const id = randomBytes(16).toString('hex');
    const instance: ObservedInstance = {
      id,
      name: `ns_name_${id.slice(0, 8)}`,
      deploymentId,
      specHash,
      state: 'running',
      exitCode: null,
      startedAt: new Date().toISOString(),
      finishedAt: null,
      address: '10.0.0.1',
      imageDigest: null,
      ...overrides,
    };
    this.instances.set(id, instance);
    return instance;
  }

  async list(): Promise<ObservedInstance[]> {
    this.calls.list += 1;
    if (this.listFailure !== null) throw this.listFailure;
    const snapshot = [...this.instances.values()].map((i) => ({ ...i }));
    const delay = this.options.listDelayMs ?? 0;
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    return snapshot;
  }

  async create(spec: InstanceSpec): Promise<ObservedInstance> {
    this.calls.create += 1;
    this.concurrentCreates += 1;
    this.maxConcurrentCreates = Math.max(this.maxConcurrentCreates, this.concurrentCreates);
    const name = `${spec.namespace}_${spec.name}_${randomBytes(4).toString('hex')}`;
    const early = this.options.visibleWhileCreating
      ? this.seed(spec.deploymentId, spec.specHash, { name, state: 'created', startedAt: null })
      : null;
    try {
      const delay = this.options.createDelayMs?.(spec.image) ?? 0;
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      const failure = this.options.failure?.(spec.image) ?? null;
      if (failure !== null) {
        if (early !== null) this.instances.delete(early.id);
        throw failure;
      }
      if (early !== null) {
        if (!this.instances.has(early.id)) throw new RuntimeError('create_container_error', 'transient', 'removed while being created');
        const started: ObservedInstance = { ...early, state: 'running', startedAt: new Date().toISOString() };
        this.instances.set(early.id, started);
        return { ...started };
      }
      return this.seed(spec.deploymentId, spec.specHash, { name });
    } finally {
      this.concurrentCreates -= 1;
    }
  }

  async remove(instanceId: string): Promise<void> {
    this.calls.remove += 1;
    this.instances.delete(instanceId);
  }

  async *logs(): AsyncIterable<LogLine> {
    // no logs
  }

  async stats(): Promise<InstanceStats> {
    this.calls.stats += 1;
    return {
      cpuUsagePercent: 1.5,
      memory: { usageBytes: 1_000, limitBytes: 2_000 },
      network: { rxBytes: 10, txBytes: 20, rxPackets: 1, txPackets: 2 },
      diskIo: { readBytes: 30, writeBytes: 40 },
      pids: { current: 3, limit: 100 },
    };
  }

  exec(): Promise<ExecSession> {
    return Promise.reject(new RuntimeError('error', 'host', 'exec is not supported by the fake runtime'));
  }

  async probeCommand(): Promise<boolean> {
    return true;
  }

  async *events(signal: AbortSignal): AsyncIterable<RuntimeEvent> {
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }

  async ping(): Promise<boolean> {
    return true;
  }
}
