// Shared set-up for the docker runtime integration tests: unique namespaces, instance specs, polling, cleanup.

import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Docker from 'dockerode';
import type { InstanceSpec } from '../../src/runtime/runtime.js';
import { BUSYBOX_IMAGE } from '../support/busybox-image.js';
import { bareInstanceSpec } from '../support/instance-spec.js';

export const docker = new Docker();

export function testNamespace(): string {
  return `s3t${randomBytes(4).toString('hex')}`;
}

export function instanceSpec(namespace: string, name: string, overrides: Partial<InstanceSpec> = {}): InstanceSpec {
  return bareInstanceSpec({
    deploymentId: randomUUID(),
    namespace,
    name,
    image: BUSYBOX_IMAGE,
    command: ['sleep', '300'],
    specHash: randomBytes(8).toString('hex'),
    ...overrides,
  });
}

/** Polls `probe` until it returns a non-undefined value or `timeoutMs` passes. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}${lastError === null ? '' : `: ${String(lastError)}`}`);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Removes every container, the network and every volume a test namespace created. */
export async function cleanupNamespace(namespace: string): Promise<void> {
  const containers = await docker.listContainers({ all: true, filters: { label: [`svc.namespace=${namespace}`] } });
  await Promise.all(containers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
  const networks = await docker.listNetworks({ filters: { name: [`svc_${namespace}`] } });
  for (const network of networks) {
    if (network.Name === `svc_${namespace}`) await docker.getNetwork(network.Id).remove().catch(() => undefined);
  }
  const volumes = await docker.listVolumes({ filters: { label: [`svc.namespace=${namespace}`] } });
  for (const volume of volumes.Volumes ?? []) await docker.getVolume(volume.Name).remove({ force: true }).catch(() => undefined);
}

/** Runs a command in a container through the Docker API directly (independent of the runtime under test). */
export async function dockerExec(containerId: string, command: string[]): Promise<{ exitCode: number | null; output: string }> {
  const exec = await docker.getContainer(containerId).exec({ Cmd: command, AttachStdout: true, AttachStderr: true, Tty: true });
  const stream = await exec.start({ hijack: true, stdin: false, Tty: true });
  let output = '';
  for await (const chunk of stream as AsyncIterable<Buffer>) output += chunk.toString();
  for (let attempt = 0; attempt < 40; attempt += 1) {
    const info = await exec.inspect();
    if (!info.Running) return { exitCode: info.ExitCode, output };
    await sleep(50);
  }
  return { exitCode: null, output };
}
