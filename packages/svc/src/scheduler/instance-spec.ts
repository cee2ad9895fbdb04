// Turns a stored DeploymentSpec into the fully resolved InstanceSpec a runtime creates: secrets decrypted (only
// here, only at creation), config entries rendered to read-only files, named volumes registered, quantities
// parsed. Every failure is a RuntimeError with the spec's status, so the executor handles it like a runtime one.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DeploymentSpec, RegistryAuthSpec } from '../domain/deployment.js';
import type { EventReason } from '../domain/events.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { RuntimeError, type InstanceSpec, type MountSpec } from '../runtime/runtime.js';
import { parseCpuQuantity, parseMemoryQuantity } from '../runtime/quantities.js';
import { readConfigKey } from '../store/configs.js';
import type { Db } from '../store/db.js';
import { registryPasswordAssociatedData } from '../store/deployments.js';
import { decryptSecretValue } from '../store/secrets.js';
import { registerVolume } from '../store/volumes.js';

/** A RuntimeError with a more precise event reason than its status (a missing secret is `failed` + SecretNotFound). */
export class ResolveError extends RuntimeError {
  constructor(
    status: RuntimeError['status'],
    category: RuntimeError['category'],
    message: string,
    readonly reason?: EventReason,
  ) {
    super(status, category, message);
    this.name = 'ResolveError';
  }
}

export interface ResolveContext {
  db: Db;
  secretBox: SecretBox;
  /** Where config files are rendered: `<dataDir>/configs/<deployment id>/<mount index>`. */
  dataDir: string;
}

/** The directory holding the rendered config files of one deployment (removed when it is purged). */
export function configDirOf(dataDir: string, deploymentId: string): string {
  return join(dataDir, 'configs', deploymentId);
}

function resolveEnvironment(ctx: ResolveContext, spec: DeploymentSpec): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(spec.environment)) {
    if (typeof value === 'string') {
      env[key] = value;
      continue;
    }
    let clear: string | null;
    try {
      clear = decryptSecretValue(ctx.db, ctx.secretBox, spec.namespace, value.secretRef);
    } catch {
      // Wrong SVC_SECRET_KEY or a tampered row: the host's fault, and worth retrying once an operator fixes it.
      throw new ResolveError('error', 'host', `secret '${value.secretRef}' (environment ${key}) cannot be decrypted`);
    }
    if (clear === null) {
      throw new ResolveError(
        'failed',
        'user',
        `secret '${value.secretRef}' referenced by environment ${key} does not exist in namespace '${spec.namespace}'`,
        'SecretNotFound',
      );
    }
    env[key] = clear;
  }
  return env;
}

/** Writes `content` to `path` atomically: instances already running keep the old file (their bind holds its inode). */
function writeAtomically(path: string, content: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, content, { mode: 0o644 });
  renameSync(temporary, path);
}

function resolveMounts(ctx: ResolveContext, deploymentId: string, spec: DeploymentSpec): MountSpec[] {
  const mounts: MountSpec[] = [];
  for (const [index, mount] of spec.volumes.entries()) {
    const readOnly = mount.permission === 'ro';
    if (mount.type === 'bind') {
      mounts.push({ type: 'bind', source: mount.source, destination: mount.destination, readOnly });
    } else if (mount.type === 'volume') {
      registerVolume(ctx.db, spec.namespace, mount.source);
      mounts.push({ type: 'volume', source: mount.source, destination: mount.destination, readOnly, driver: mount.driver });
    } else {
      const key = mount.key ?? '';
      const found = readConfigKey(ctx.db, spec.namespace, mount.source, key);
      if (found.kind !== 'found') {
        const why =
          found.kind === 'missing_config'
            ? `config '${mount.source}' does not exist in namespace '${spec.namespace}'`
            : found.kind === 'missing_key'
              ? `config '${mount.source}' has no key '${key}'`
              : `config '${mount.source}' is not a JSON object, so it has no key '${key}'`;
        throw new ResolveError('config_error', 'user', `volumes[${index}]: ${why}`);
      }
      const dir = configDirOf(ctx.dataDir, deploymentId);
      const hostPath = join(dir, String(index));
      try {
        mkdirSync(dir, { recursive: true, mode: 0o755 });
        writeAtomically(hostPath, found.value);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
        throw new ResolveError('file_system_error', 'host', `volumes[${index}]: rendering config '${mount.source}' failed (${code})`);
      }
      mounts.push({ type: 'file', hostPath, destination: mount.destination });
    }
  }
  return mounts;
}

/** Opens the sealed registry password (store/deployments.ts); a row from before sealing carries it in clear. */
function registryPassword(ctx: ResolveContext, deploymentId: string, auth: RegistryAuthSpec): string {
  if (auth.password_sealed === undefined) return auth.password ?? '';
  try {
    return ctx.secretBox.open(Buffer.from(auth.password_sealed, 'base64'), registryPasswordAssociatedData(deploymentId)).toString('utf8');
  } catch {
    // Wrong SVC_SECRET_KEY or a tampered row, as for secrets: the host's fault, retried once fixed.
    throw new ResolveError('error', 'host', 'the registry password cannot be decrypted');
  }
}

export function resolveInstanceSpec(ctx: ResolveContext, deploymentId: string, spec: DeploymentSpec, specHash: string): InstanceSpec {
  const env = resolveEnvironment(ctx, spec);
  const mounts = resolveMounts(ctx, deploymentId, spec);
  const auth = spec.config.registry_auth;
  const password = auth === undefined ? undefined : registryPassword(ctx, deploymentId, auth);
  return {
    deploymentId,
    namespace: spec.namespace,
    name: spec.name,
    kind: spec.kind,
    image: spec.image,
    imagePullPolicy: spec.config.image_pull_policy,
    registryAuth:
      auth === undefined
        ? null
        : { username: auth.username, password: password ?? '', ...(auth.server_address !== undefined ? { serveraddress: auth.server_address } : {}) },
    user: spec.config.user ?? null,
    command: spec.command ?? null,
    env,
    labels: { ...spec.labels },
    ports: spec.ports.map((p) => ({ published: p.published, target: p.target })),
    mounts,
    resources: {
      nanoCpus: spec.resources.limits.cpu === undefined ? null : parseCpuQuantity(spec.resources.limits.cpu),
      memoryBytes: spec.resources.limits.memory === undefined ? null : parseMemoryQuantity(spec.resources.limits.memory),
      memoryReservationBytes: spec.resources.requests.memory === undefined ? null : parseMemoryQuantity(spec.resources.requests.memory),
    },
    networkMode: spec.network.mode,
    specHash,
  };
}

/** Removes the rendered config files of a purged deployment. */
export function removeConfigFiles(dataDir: string, deploymentId: string): void {
  rmSync(configDirOf(dataDir, deploymentId), { recursive: true, force: true });
}
