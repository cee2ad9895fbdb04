// How an InstanceSpec becomes Docker objects: names, labels, the create body, volume and network names.
// Pure, so every rule (naming, label precedence, entrypoint override, port and mount mapping) is unit-tested.

import type Docker from 'dockerode';
import type { InstanceSpec, MountSpec } from '../runtime.js';

/** Label keys svc owns on containers, volumes and networks. `svc_deployment` is the spec's name for the key. */
export const LABEL_DEPLOYMENT = 'svc_deployment';
export const LABEL_SPEC_HASH = 'svc.spec_hash';
export const LABEL_NAMESPACE = 'svc.namespace';
export const LABEL_NAME = 'svc.name';
export const LABEL_KIND = 'svc.kind';
export const LABEL_MANAGED = 'svc.managed';
export const LABEL_VOLUME_DEPLOYMENT = 'svc.deployment';

/** The namespace bridge network (spec: one bridge network per namespace). */
export function namespaceNetworkName(namespace: string): string {
  return `svc_${namespace}`;
}

/**
 * The Docker volume behind the svc volume `name` of `namespace`. Namespaced like Compose names project volumes
 * (`<project>_<volume>`), so two namespaces never share data just because they chose the same volume name.
 */
export function dockerVolumeName(namespace: string, name: string): string {
  return `${namespace}_${name}`;
}

/** `<namespace>_<name>_<8 hex>`; `suffix` comes from the caller so this stays pure. */
export function containerName(namespace: string, name: string, suffix: string): string {
  if (!/^[0-9a-f]{8}$/.test(suffix)) throw new Error('container name suffix must be 8 lowercase hex digits');
  return `${namespace}_${name}_${suffix}`;
}

/** User labels first, then ours: a user label can never override an svc label. */
export function containerLabels(spec: InstanceSpec): Record<string, string> {
  return {
    ...spec.labels,
    [LABEL_DEPLOYMENT]: spec.deploymentId,
    [LABEL_SPEC_HASH]: spec.specHash,
    [LABEL_NAMESPACE]: spec.namespace,
    [LABEL_NAME]: spec.name,
    [LABEL_KIND]: spec.kind,
    [LABEL_MANAGED]: 'true',
  };
}

export function volumeLabels(namespace: string, deploymentId: string): Record<string, string> {
  return { [LABEL_MANAGED]: 'true', [LABEL_NAMESPACE]: namespace, [LABEL_VOLUME_DEPLOYMENT]: deploymentId };
}

export function networkLabels(namespace: string): Record<string, string> {
  return { [LABEL_MANAGED]: 'true', [LABEL_NAMESPACE]: namespace };
}

/**
 * A reference Docker pulls exactly one image for: without a tag or digest the Engine API would pull EVERY tag,
 * so `redis` becomes `redis:latest` the way the docker CLI does it.
 */
export function normalizeImageReference(image: string): string {
  if (image.includes('@')) return image;
  const lastSlash = image.lastIndexOf('/');
  const lastPart = image.slice(lastSlash + 1);
  return lastPart.includes(':') ? image : `${image}:latest`;
}

function toDockerMount(mount: MountSpec, namespace: string): Docker.MountSettings {
  switch (mount.type) {
    case 'bind':
      return { Type: 'bind', Source: mount.source, Target: mount.destination, ReadOnly: mount.readOnly };
    case 'volume':
      return { Type: 'volume', Source: dockerVolumeName(namespace, mount.source), Target: mount.destination, ReadOnly: mount.readOnly };
    case 'file':
      return { Type: 'bind', Source: mount.hostPath, Target: mount.destination, ReadOnly: true };
  }
}

/**
 * The body of `POST /containers/create`.
 * - `command` replaces the image's ENTRYPOINT and CMD together (spec: "Overrides the image entrypoint"):
 *   Entrypoint = [command[0]], Cmd = command[1..], like Kubernetes `command`. Without `command` the image's own
 *   ENTRYPOINT and CMD run.
 * - `networkRef` is the namespace network's id (a name can be ambiguous while racing creates settle); ignored in host mode.
 * - bridge mode: attached to the namespace network ONLY (never the default bridge), with the deployment name as
 *   its DNS alias there. host mode: the host's network stack, no ports, no alias.
 * - No Docker restart policy: the scheduler owns restarts and counts them.
 */
export function containerCreateOptions(spec: InstanceSpec, name: string, networkRef: string): Docker.ContainerCreateOptions {
  const exposed: Record<string, Record<string, never>> = {};
  const bindings: Record<string, Array<{ HostPort: string }>> = {};
  if (spec.networkMode === 'bridge') {
    for (const port of spec.ports) {
      const key = `${port.target}/tcp`;
      exposed[key] = {};
      (bindings[key] ??= []).push({ HostPort: String(port.published) });
    }
  }
  const hostConfig: Docker.HostConfig = {
    NetworkMode: spec.networkMode === 'host' ? 'host' : networkRef,
    PortBindings: bindings,
    Mounts: spec.mounts.map((m) => toDockerMount(m, spec.namespace)),
    RestartPolicy: { Name: 'no', MaximumRetryCount: 0 },
  };
  if (spec.resources.nanoCpus !== null) hostConfig.NanoCpus = spec.resources.nanoCpus;
  if (spec.resources.memoryBytes !== null) {
    hostConfig.Memory = spec.resources.memoryBytes;
    // Equal to Memory = no swap on top: going over the limit kills the instance (spec), instead of Docker's
    // default of as much swap again.
    hostConfig.MemorySwap = spec.resources.memoryBytes;
  }
  if (spec.resources.memoryReservationBytes !== null) hostConfig.MemoryReservation = spec.resources.memoryReservationBytes;

  const options: Docker.ContainerCreateOptions = {
    name,
    Image: normalizeImageReference(spec.image),
    Env: Object.entries(spec.env).map(([key, value]) => `${key}=${value}`),
    Labels: containerLabels(spec),
    ExposedPorts: exposed,
    HostConfig: hostConfig,
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    Tty: false,
    OpenStdin: false,
  };
  if (spec.user !== null && spec.user !== '') options.User = spec.user;
  if (spec.command !== null && spec.command.length > 0) {
    const [entrypoint, ...args] = spec.command;
    options.Entrypoint = [entrypoint ?? ''];
    options.Cmd = args;
  }
  if (spec.networkMode === 'bridge') {
    options.NetworkingConfig = { EndpointsConfig: { [networkRef]: { Aliases: [spec.name] } } };
  }
  return options;
}

/**
 * Why the host can never satisfy `resources`, or null. Docker itself accepts a memory cap above the host's RAM,
 * which would only fail later; the spec makes this a terminal `insufficient_resources` instead.
 */
export function hostCapacityProblem(
  resources: InstanceSpec['resources'],
  host: { memoryBytes: number; cpus: number },
): string | null {
  const memory = Math.max(resources.memoryBytes ?? 0, resources.memoryReservationBytes ?? 0);
  if (memory > host.memoryBytes) return `requested memory ${memory} bytes exceeds the host's ${host.memoryBytes} bytes`;
  if (resources.nanoCpus !== null && resources.nanoCpus > host.cpus * 1e9) {
    return `requested CPU ${resources.nanoCpus / 1e9} cores exceeds the host's ${host.cpus} CPUs`;
  }
  return null;
}
