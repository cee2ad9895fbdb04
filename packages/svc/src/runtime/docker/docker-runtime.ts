// The Docker driver: the imperative shell around the pure modules of this folder. Every Docker failure leaves
// here as a classified RuntimeError whose message carries no environment value or registry password.

import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import Docker from 'dockerode';
import {
  RuntimeError,
  type ExecOptions,
  type ExecSession,
  type InstanceSpec,
  type InstanceStats,
  type LogLine,
  type LogQuery,
  type ObservedInstance,
  type Runtime,
  type RuntimeEvent,
} from '../runtime.js';
import { classifyDockerFailure, dockerFailureFacts, redactSecrets, type DockerPhase } from './classify.js';
import {
  LABEL_DEPLOYMENT,
  LABEL_NAMESPACE,
  containerCreateOptions,
  containerName,
  dockerVolumeName,
  hostCapacityProblem,
  namespaceNetworkName,
  networkLabels,
  normalizeImageReference,
  volumeLabels,
} from './container-config.js';
import { EventCursor, WATCHED_ACTIONS, eventKey, toRuntimeEvent } from './events.js';
import { compareByCreation, dockerTime, toObservedInstance, type InspectedTimes, type ListedContainer } from './observe.js';
import { toInstanceStats } from './stats.js';
import { demultiplex, rawAsStdout, splitLines, splitTimestamp, type StreamChunk } from './streams.js';

export interface DockerRuntimeOptions {
  /** Unix socket of the Docker daemon. Default: DOCKER_HOST when set, else /var/run/docker.sock. */
  socketPath?: string;
  /** Reconnect delays of events(): starts here, doubles up to `eventsMaxBackoffMs`. */
  eventsInitialBackoffMs?: number;
  eventsMaxBackoffMs?: number;
  /** A pull that takes longer is abandoned as a transient image_pull_back_off. Default 300 s (the apply timeout). */
  pullTimeoutMs?: number;
}

interface HostCapacity {
  memoryBytes: number;
  cpus: number;
}

function isStatus(error: unknown, ...codes: number[]): boolean {
  const status = dockerFailureFacts(error).statusCode;
  return status !== null && codes.includes(status);
}

function fail(phase: DockerPhase, what: string, error: unknown, secrets: Iterable<string>): RuntimeError {
  const facts = dockerFailureFacts(error);
  const { status, category } = classifyDockerFailure(phase, facts);
  const detail = facts.statusCode === null ? facts.message : `${facts.message} (HTTP ${facts.statusCode})`;
  // The raw error is not attached as `cause`: it may echo request data, and causes end up in logs.
  return new RuntimeError(status, category, redactSecrets(`${what}: ${detail}`, secrets));
}

function secretsOf(spec: InstanceSpec): string[] {
  const values = Object.values(spec.env);
  if (spec.registryAuth !== null) values.push(spec.registryAuth.password);
  return values;
}

function stringRecord(value: unknown): Record<string, string> {
  const result: Record<string, string> = {};
  if (typeof value !== 'object' || value === null) return result;
  for (const [key, entry] of Object.entries(value)) if (typeof entry === 'string') result[key] = entry;
  return result;
}

function networkAddresses(value: unknown): ListedContainer['NetworkSettings']['Networks'] {
  const result: ListedContainer['NetworkSettings']['Networks'] = {};
  if (typeof value !== 'object' || value === null) return result;
  for (const [name, entry] of Object.entries(value)) {
    const ip = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>)['IPAddress'] : undefined;
    result[name] = typeof ip === 'string' ? { IPAddress: ip } : {};
  }
  return result;
}

/** A `GET /containers/json` entry checked field by field (the Engine's JSON is not trusted blindly). */
function asListedContainer(value: unknown): ListedContainer | null {
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const id = record['Id'];
  const state = record['State'];
  if (typeof id !== 'string' || typeof state !== 'string') return null;
  const names = record['Names'];
  const hostConfig = record['HostConfig'];
  const networkMode = typeof hostConfig === 'object' && hostConfig !== null ? (hostConfig as Record<string, unknown>)['NetworkMode'] : undefined;
  const networkSettings = record['NetworkSettings'];
  const networks = typeof networkSettings === 'object' && networkSettings !== null ? (networkSettings as Record<string, unknown>)['Networks'] : undefined;
  return {
    Id: id,
    Names: Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : [],
    ImageID: typeof record['ImageID'] === 'string' ? record['ImageID'] : '',
    Labels: stringRecord(record['Labels']),
    State: state,
    Status: typeof record['Status'] === 'string' ? record['Status'] : '',
    HostConfig: { NetworkMode: typeof networkMode === 'string' ? networkMode : '' },
    NetworkSettings: { Networks: networkAddresses(networks) },
  };
}

function inspectToListed(info: Docker.ContainerInspectInfo): ListedContainer {
  return {
    Id: info.Id,
    Names: [info.Name],
    ImageID: info.Image,
    Labels: stringRecord(info.Config.Labels),
    State: info.State.Status,
    Status: '',
    HostConfig: { NetworkMode: info.HostConfig.NetworkMode ?? '' },
    NetworkSettings: { Networks: networkAddresses(info.NetworkSettings.Networks) },
  };
}

function inspectTimes(info: Docker.ContainerInspectInfo): InspectedTimes {
  return { startedAt: dockerTime(info.State.StartedAt), finishedAt: dockerTime(info.State.FinishedAt), exitCode: info.State.ExitCode };
}

async function* chunksOf(source: NodeJS.ReadableStream | Buffer): AsyncGenerator<Buffer> {
  if (Buffer.isBuffer(source)) {
    yield source;
    return;
  }
  for await (const chunk of source as AsyncIterable<Buffer | string>) yield Buffer.from(chunk);
}

/** Newline-delimited JSON messages (event and pull-progress streams). */
async function* jsonMessages(source: NodeJS.ReadableStream): AsyncGenerator<unknown> {
  let rest = '';
  for await (const chunk of source as AsyncIterable<Buffer | string>) {
    rest += chunk.toString();
    const lines = rest.split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      try {
        yield JSON.parse(line) as unknown;
      } catch {
        // A torn or foreign line is skipped rather than ending the stream.
      }
    }
  }
}

/** Inspects of newly seen containers run at most this many at a time (the first list after a restart sees all). */
const INSPECT_CONCURRENCY = 8;

async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index] as T);
    }
  });
  await Promise.all(workers);
  return results;
}

const EXEC_RESIZE_ATTEMPTS = 5;

/** Whether a daemon of this API version takes an exec's `ConsoleSize` at create (Docker API 1.42, Engine 23). */
export function supportsExecConsoleSize(apiVersion: string | null): boolean {
  const match = apiVersion === null ? null : /^(\d+)\.(\d+)$/.exec(apiVersion);
  if (match === null) return false;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return major > 1 || (major === 1 && minor >= 42);
}

/** Creations that find their namespace network removed under them (releaseNamespace elsewhere) try again this often. */
const MISSING_NETWORK_ATTEMPTS = 3;

/** dockerd's answer to a container create or start whose network no longer exists. */
function isMissingNetwork(error: unknown): boolean {
  return isStatus(error, 404, 500) && /network [^ ]+ not found/i.test(dockerFailureFacts(error).message);
}

export function createDockerRuntime(options: DockerRuntimeOptions = {}): Runtime {
  const docker = options.socketPath !== undefined ? new Docker({ socketPath: options.socketPath }) : new Docker();
  const initialBackoff = options.eventsInitialBackoffMs ?? 500;
  const maxBackoff = options.eventsMaxBackoffMs ?? 10_000;
  const pullTimeoutMs = options.pullTimeoutMs ?? 300_000;
  const networkInFlight = new Map<string, Promise<string>>();
  /** Creations running in this process per namespace: releaseNamespace leaves their network alone. */
  const creatingIn = new Map<string, number>();
  const timesCache = new Map<string, { state: string; times: InspectedTimes }>();
  let hostCapacity: Promise<HostCapacity> | null = null;

  function capacity(): Promise<HostCapacity> {
    hostCapacity ??= (docker.info() as Promise<unknown>).then(
      (info) => {
        const record = (typeof info === 'object' && info !== null ? info : {}) as Record<string, unknown>;
        return {
          memoryBytes: typeof record['MemTotal'] === 'number' ? record['MemTotal'] : Number.MAX_SAFE_INTEGER,
          cpus: typeof record['NCPU'] === 'number' ? record['NCPU'] : Number.MAX_SAFE_INTEGER,
        };
      },
      (error: unknown) => {
        hostCapacity = null;
        throw fail('other', 'reading docker host capacity failed', error, []);
      },
    );
    return hostCapacity;
  }

  async function imagePresent(reference: string, secrets: string[]): Promise<boolean> {
    try {
      await docker.getImage(reference).inspect();
      return true;
    } catch (error) {
      if (isStatus(error, 404)) return false;
      throw fail('image', `inspecting image ${reference} failed`, error, secrets);
    }
  }

  async function pull(reference: string, spec: InstanceSpec, secrets: string[]): Promise<void> {
    const auth = spec.registryAuth === null ? undefined : { ...spec.registryAuth };
    const deadline = new AbortController();
    let progress: NodeJS.ReadableStream | null = null;
    const timer = setTimeout(() => {
      deadline.abort();
      (progress as (NodeJS.ReadableStream & { destroy?: () => void }) | null)?.destroy?.();
    }, pullTimeoutMs);
    try {
      const pullOptions = { fromImage: reference, abortSignal: deadline.signal };
      progress = auth === undefined ? await docker.createImage(pullOptions) : await docker.createImage(auth, pullOptions);
      // Pull failures after the 200 arrive as `{"error": ...}` messages inside the progress stream.
      for await (const message of jsonMessages(progress)) {
        if (typeof message === 'object' && message !== null && typeof (message as Record<string, unknown>)['error'] === 'string') {
          throw new Error((message as Record<string, string>)['error']);
        }
      }
      if (deadline.signal.aborted) throw new Error('aborted');
    } catch (error) {
      const reason = deadline.signal.aborted ? new Error(`timed out after ${pullTimeoutMs} ms`) : error;
      throw fail('pull', `pulling image ${reference} failed`, reason, secrets);
    } finally {
      clearTimeout(timer);
    }
    if (!(await imagePresent(reference, secrets))) {
      throw new RuntimeError('image_pull_back_off', 'transient', `pulling image ${reference} finished but the image is not present`);
    }
  }

  async function ensureImage(spec: InstanceSpec, secrets: string[]): Promise<void> {
    const reference = normalizeImageReference(spec.image);
    if (spec.imagePullPolicy === 'Always') return pull(reference, spec, secrets);
    if (await imagePresent(reference, secrets)) return;
    if (spec.imagePullPolicy === 'Never') {
      throw new RuntimeError('image_pull_back_off', 'user', `image ${reference} is not present and image_pull_policy is Never`);
    }
    return pull(reference, spec, secrets);
  }

  /** Networks named exactly `name` (Docker's name filter also matches substrings), oldest first. */
  async function networksNamed(name: string): Promise<Docker.NetworkInspectInfo[]> {
    const found = await docker.listNetworks({ filters: { name: [name] } });
    return found.filter((n) => n.Name === name).sort(compareByCreation);
  }

  /**
   * The id of the namespace network, created on first use. Containers are attached by id, never by name: dockerd
   * 20.10 can create two networks of one name when creates race, and a name then no longer resolves.
   * Racing creators converge: in-process callers share one promise; across processes everyone keeps the oldest
   * network of that name and removes younger duplicates.
   */
  async function createOrFindNetwork(namespace: string): Promise<string> {
    const name = namespaceNetworkName(namespace);
    try {
      let found = await networksNamed(name);
      if (found.length === 0) {
        try {
          await docker.createNetwork({ Name: name, Driver: 'bridge', CheckDuplicate: true, Labels: networkLabels(namespace) });
        } catch (error) {
          if (!isStatus(error, 409)) throw error;
        }
        found = await networksNamed(name);
      }
      const [keep, ...younger] = found;
      if (keep === undefined) throw new Error(`network ${name} vanished right after creation`);
      // Nobody attaches to a younger duplicate, so removing it is always safe (and fails harmlessly if it is not).
      await Promise.all(younger.map((n) => docker.getNetwork(n.Id).remove().catch(() => undefined)));
      return keep.Id;
    } catch (error) {
      throw fail('network', `creating network ${name} failed`, error, []);
    }
  }

  function ensureNetwork(namespace: string): Promise<string> {
    const inFlight = networkInFlight.get(namespace);
    if (inFlight !== undefined) return inFlight;
    const attempt = createOrFindNetwork(namespace).finally(() => networkInFlight.delete(namespace));
    networkInFlight.set(namespace, attempt);
    return attempt;
  }

  async function ensureVolumes(spec: InstanceSpec, secrets: string[]): Promise<void> {
    for (const mount of spec.mounts) {
      if (mount.type !== 'volume') continue;
      const name = dockerVolumeName(spec.namespace, mount.source);
      try {
        // Idempotent in dockerd: an existing volume of the same driver is returned unchanged.
        await docker.createVolume({ Name: name, Driver: mount.driver, Labels: volumeLabels(spec.namespace, spec.deploymentId) });
      } catch (error) {
        throw fail('volume', `creating volume ${name} failed`, error, secrets);
      }
    }
  }

  async function observe(id: string): Promise<ObservedInstance> {
    const info = await docker.getContainer(id).inspect();
    const times = inspectTimes(info);
    timesCache.set(info.Id, { state: info.State.Status, times });
    return toObservedInstance(inspectToListed(info), times);
  }

  async function removeQuietly(id: string): Promise<void> {
    await docker
      .getContainer(id)
      .remove({ force: true, v: true })
      .catch(() => undefined);
  }

  /**
   * Creates and starts one instance. The namespace network may be removed under it (releaseNamespace of another
   * process, or of this one between its check and our create): a create or start that finds its network gone
   * finds or recreates the network and tries again with a new container.
   */
  async function createInstance(spec: InstanceSpec): Promise<ObservedInstance> {
    const secrets = secretsOf(spec);
    const what = `${spec.namespace}/${spec.name}`;
    await ensureImage(spec, secrets);
    const problem = hostCapacityProblem(spec.resources, await capacity());
    if (problem !== null) throw new RuntimeError('insufficient_resources', 'user', `${what}: ${problem}`);
    await ensureVolumes(spec, secrets);
    for (let networkAttempt = 1; ; networkAttempt += 1) {
      const networkRef = spec.networkMode === 'bridge' ? await ensureNetwork(spec.namespace) : 'host';
      const retryOnMissingNetwork = spec.networkMode === 'bridge' && networkAttempt < MISSING_NETWORK_ATTEMPTS;
      let container: Docker.Container | null = null;
      for (let attempt = 0; container === null; attempt += 1) {
        const name = containerName(spec.namespace, spec.name, randomBytes(4).toString('hex'));
        try {
          container = await docker.createContainer(containerCreateOptions(spec, name, networkRef));
        } catch (error) {
          // A random-suffix collision is retried once; any other rejection is the spec's fault or the host's.
          if (attempt === 0 && isStatus(error, 409) && /already in use/i.test(dockerFailureFacts(error).message)) continue;
          if (retryOnMissingNetwork && isMissingNetwork(error)) break;
          throw fail('create', `creating container for ${what} failed`, error, secrets);
        }
      }
      if (container === null) continue;
      let started = false;
      for (let attempt = 1; ; attempt += 1) {
        try {
          await container.start();
          started = true;
          break;
        } catch (error) {
          // dockerd resolves the network by name at start; while a racing duplicate is being removed the name is
          // ambiguous for a moment.
          if (attempt < 20 && /is ambiguous/i.test(dockerFailureFacts(error).message)) {
            if (spec.networkMode === 'bridge') await createOrFindNetwork(spec.namespace).catch(() => undefined);
            await sleep(100);
            continue;
          }
          await removeQuietly(container.id);
          if (retryOnMissingNetwork && isMissingNetwork(error)) break;
          throw fail('start', `starting container for ${what} failed`, error, secrets);
        }
      }
      if (!started) continue;
      try {
        return await observe(container.id);
      } catch (error) {
        // An instance the caller never learns about would run unmanaged next to its replacement.
        await removeQuietly(container.id);
        throw fail('other', `inspecting new container for ${what} failed`, error, secrets);
      }
    }
  }

  /**
   * Removes the namespace network when nothing of the namespace is left on the daemon. Containers are counted by
   * label in every state: one created but not yet started holds no endpoint, so dockerd alone would let its
   * network go. Any failure (in use after all, already gone, daemon down) leaves things as they are.
   */
  async function releaseNamespace(namespace: string): Promise<void> {
    if (creatingIn.has(namespace) || networkInFlight.has(namespace)) return;
    try {
      const members = await docker.listContainers({ all: true, filters: { label: [`${LABEL_NAMESPACE}=${namespace}`] } });
      if (members.length > 0) return;
      for (const network of await networksNamed(namespaceNetworkName(namespace))) {
        if (creatingIn.has(namespace) || networkInFlight.has(namespace)) return;
        if (network.Labels?.[LABEL_NAMESPACE] !== namespace) continue;
        await docker
          .getNetwork(network.Id)
          .remove()
          .catch(() => undefined);
      }
    } catch {
      // Best effort: the next purge in this namespace tries again.
    }
  }

  let apiVersion: Promise<string | null> | null = null;

  /** The daemon's API version (`docker version` ApiVersion), asked once; null (and asked again later) when unknown. */
  function daemonApiVersion(): Promise<string | null> {
    apiVersion ??= docker.version().then(
      (info) => (typeof info.ApiVersion === 'string' ? info.ApiVersion : null),
      () => {
        apiVersion = null;
        return null;
      },
    );
    return apiVersion;
  }

  /**
   * The pre-1.42 way: dockerd applies a resize once the exec process exists (it waits for the start), so this is
   * awaited before the session is handed out. A failed resize is retried briefly, as the docker CLI does; the
   * session still opens if it never succeeds (the client can resize).
   */
  async function resizeStartedExec(exec: Docker.Exec, size: { cols: number; rows: number }): Promise<void> {
    for (let attempt = 1; attempt <= EXEC_RESIZE_ATTEMPTS; attempt += 1) {
      try {
        await exec.resize({ w: size.cols, h: size.rows });
        return;
      } catch {
        if (attempt < EXEC_RESIZE_ATTEMPTS) await sleep(10 * attempt);
      }
    }
  }

  const runtime: Runtime = {
    name: 'docker',

    async list(): Promise<ObservedInstance[]> {
      let raw: unknown[];
      try {
        raw = await docker.listContainers({ all: true, filters: { label: [LABEL_DEPLOYMENT] } });
      } catch (error) {
        throw fail('other', 'listing containers failed', error, []);
      }
      const containers = raw.map(asListedContainer).filter((c): c is ListedContainer => c !== null);
      const present = new Set(containers.map((c) => c.Id));
      for (const id of timesCache.keys()) if (!present.has(id)) timesCache.delete(id);
      return mapBounded(containers, INSPECT_CONCURRENCY, async (container) => {
        const cached = timesCache.get(container.Id);
        if (cached !== undefined && cached.state === container.State) return toObservedInstance(container, cached.times);
        try {
          const info = await docker.getContainer(container.Id).inspect();
          const times = inspectTimes(info);
          timesCache.set(container.Id, { state: info.State.Status, times });
          return toObservedInstance(container, times);
        } catch {
          // Removed between the list and the inspect: report what the list saw.
          return toObservedInstance(container, null);
        }
      });
    },

    async create(spec: InstanceSpec): Promise<ObservedInstance> {
      creatingIn.set(spec.namespace, (creatingIn.get(spec.namespace) ?? 0) + 1);
      try {
        return await createInstance(spec);
      } finally {
        const left = (creatingIn.get(spec.namespace) ?? 1) - 1;
        if (left > 0) creatingIn.set(spec.namespace, left);
        else creatingIn.delete(spec.namespace);
      }
    },

    async remove(instanceId: string, graceSeconds: number): Promise<void> {
      const container = docker.getContainer(instanceId);
      try {
        await container.stop({ t: Math.max(0, Math.floor(graceSeconds)) });
      } catch (error) {
        // 304: already stopped; 404: already gone. Anything else still ends in the forced remove below.
        if (!isStatus(error, 304, 404, 409, 500)) throw fail('other', `stopping container ${instanceId} failed`, error, []);
      }
      try {
        await container.remove({ force: true, v: true });
      } catch (error) {
        if (isStatus(error, 404)) return;
        if (isStatus(error, 409) && /already in progress/i.test(dockerFailureFacts(error).message)) return;
        throw fail('other', `removing container ${instanceId} failed`, error, []);
      } finally {
        timesCache.delete(instanceId);
      }
    },

    logs(instance: ObservedInstance, query: LogQuery, signal: AbortSignal): AsyncIterable<LogLine> {
      return (async function* (): AsyncGenerator<LogLine> {
        if (signal.aborted) return;
        const container = docker.getContainer(instance.id);
        let source: NodeJS.ReadableStream | Buffer;
        let tty: boolean;
        try {
          tty = (await container.inspect()).Config.Tty;
          // A negative tail means every line (Docker's `tail=all`, its default when the parameter is absent).
          const common: Docker.ContainerLogsOptions = { stdout: true, stderr: true, timestamps: true, since: query.since ?? 0 };
          if (query.tail >= 0) common.tail = Math.floor(query.tail);
          source = query.follow ? await container.logs({ ...common, follow: true }) : await container.logs({ ...common, follow: false });
        } catch (error) {
          throw fail('other', `reading logs of ${instance.name} failed`, error, []);
        }
        const stream = Buffer.isBuffer(source) ? null : source;
        const stop = (): void => {
          if (stream !== null && 'destroy' in stream && typeof stream.destroy === 'function') stream.destroy();
        };
        signal.addEventListener('abort', stop, { once: true });
        try {
          const chunks: AsyncIterable<StreamChunk> = tty ? rawAsStdout(chunksOf(source)) : demultiplex(chunksOf(source));
          for await (const { stream: name, line } of splitLines(chunks)) {
            if (signal.aborted) return;
            const { timestamp, message } = splitTimestamp(line);
            yield { instance: instance.name, stream: name, timestamp, message };
          }
        } catch (error) {
          if (signal.aborted) return;
          throw fail('other', `reading logs of ${instance.name} failed`, error, []);
        } finally {
          signal.removeEventListener('abort', stop);
          stop();
        }
      })();
    },

    async stats(instance: ObservedInstance): Promise<InstanceStats> {
      try {
        const body: unknown = await docker.getContainer(instance.id).stats({ stream: false });
        return toInstanceStats(body);
      } catch (error) {
        throw fail('other', `reading stats of ${instance.name} failed`, error, []);
      }
    },

    async exec(instance: ObservedInstance, execOptions: ExecOptions): Promise<ExecSession> {
      let exec: Docker.Exec;
      let socket: Duplex;
      const size =
        execOptions.tty && execOptions.cols !== undefined && execOptions.rows !== undefined
          ? { cols: execOptions.cols, rows: execOptions.rows }
          : null;
      // API >= 1.42 takes the size at create, so the command sees it from its first instruction; older daemons
      // only after start (resized below before the session is returned, so before any stdin is forwarded).
      const sizeAtCreate = size !== null && supportsExecConsoleSize(await daemonApiVersion());
      try {
        exec = await docker.getContainer(instance.id).exec({
          Cmd: execOptions.command,
          AttachStdin: true,
          AttachStdout: true,
          AttachStderr: true,
          Tty: execOptions.tty,
          ...(sizeAtCreate && size !== null ? { ConsoleSize: [size.rows, size.cols] as [number, number] } : {}),
        });
        socket = await exec.start({ hijack: true, stdin: true, Tty: execOptions.tty });
      } catch (error) {
        throw fail('other', `exec in ${instance.name} failed`, error, []);
      }
      const started = exec;
      if (size !== null && !sizeAtCreate) await resizeStartedExec(started, size);
      let outputDone!: () => void;
      const ended = new Promise<void>((resolve) => {
        outputDone = resolve;
      });
      let closedAt: number | null = null;
      socket.once('close', () => outputDone());
      socket.once('end', () => outputDone());
      // `on`, not `once`: writing stdin after the command exited can raise EPIPE more than once.
      socket.on('error', () => outputDone());
      const raw = execOptions.tty ? rawAsStdout(socket) : demultiplex(socket);
      const output = (async function* (): AsyncGenerator<{ stream: 'stdout' | 'stderr'; data: Buffer }> {
        try {
          yield* raw;
        } catch {
          // The connection was closed under us (close() or a daemon restart): the output simply ends.
        } finally {
          outputDone();
        }
      })();
      return {
        stdin: socket,
        output,
        async resize(cols: number, rows: number): Promise<void> {
          try {
            await started.resize({ w: cols, h: rows });
          } catch (error) {
            throw fail('other', `resizing exec in ${instance.name} failed`, error, []);
          }
        },
        async exitCode(): Promise<number | null> {
          // Polled, so it works whether or not the caller drains `output`: slowly while the output is open,
          // quickly once it ended (dockerd records the code a moment after the stream closes).
          let outputEnded = false;
          let endedAt: number | null = null;
          void ended.then(() => {
            outputEnded = true;
            endedAt = Date.now();
          });
          for (;;) {
            let info: Docker.ExecInspectInfo;
            try {
              info = await started.inspect();
            } catch {
              return null;
            }
            if (!info.Running && typeof info.ExitCode === 'number') return info.ExitCode;
            // Not running without a code is also how dockerd shows an exec whose process has not been registered
            // yet, right after start: keep asking, unless the output ended long ago and still no code came.
            if (!info.Running && outputEnded && endedAt !== null && Date.now() - endedAt > 2000) return null;
            // A closed session leaves the process running inside the container; its code is not ours to wait for.
            if (closedAt !== null && Date.now() - closedAt > 1000) return null;
            await Promise.race([ended.then(() => sleep(50)), sleep(outputEnded ? 50 : 1000)]);
          }
        },
        close(): void {
          closedAt ??= Date.now();
          socket.destroy();
        },
      };
    },

    async probeCommand(instance: ObservedInstance, command: string[], timeoutMs: number): Promise<boolean> {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), timeoutMs);
      try {
        const exec = await docker.getContainer(instance.id).exec({ Cmd: command, AttachStdout: false, AttachStderr: false, abortSignal: abort.signal });
        // Detached start returns once the process is running; the spec's command check stops there.
        const response: unknown = await exec.start({ Detach: true, abortSignal: abort.signal });
        // dockerode hands back the (empty) response stream even when detached; left unread it pins the socket.
        if (typeof response === 'object' && response !== null && 'destroy' in response && typeof response.destroy === 'function') {
          response.destroy();
        }
        return true;
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
      }
    },

    events(signal: AbortSignal): AsyncIterable<RuntimeEvent> {
      return (async function* (): AsyncGenerator<RuntimeEvent> {
        const cursor = new EventCursor(BigInt(Date.now()) * 1_000_000n);
        let backoff = initialBackoff;
        while (!signal.aborted) {
          let stream: NodeJS.ReadableStream | null = null;
          const stop = (): void => {
            const s = stream as (NodeJS.ReadableStream & { destroy?: () => void }) | null;
            s?.destroy?.();
          };
          signal.addEventListener('abort', stop, { once: true });
          try {
            stream = await docker.getEvents({
              since: cursor.sinceSeconds(),
              filters: { type: ['container'], label: [LABEL_DEPLOYMENT], event: [...WATCHED_ACTIONS] },
            });
            if (signal.aborted) return;
            backoff = initialBackoff;
            for await (const message of jsonMessages(stream)) {
              const key = eventKey(message);
              if (key !== null && !cursor.accept(key)) continue;
              const event = toRuntimeEvent(message);
              if (event !== null) yield event;
            }
          } catch {
            // The daemon went away or restarted: reconnect below.
          } finally {
            signal.removeEventListener('abort', stop);
            stop();
          }
          if (signal.aborted) return;
          try {
            await sleep(backoff, undefined, { signal });
          } catch {
            return;
          }
          backoff = Math.min(backoff * 2, maxBackoff);
        }
      })();
    },

    releaseNamespace,

    async ping(): Promise<boolean> {
      try {
        await docker.ping();
        return true;
      } catch {
        return false;
      }
    },
  };
  return runtime;
}
