// Validation of a `POST /deployments` body (spec "Validation rules" 1-9, plus the field rules documented in
// docs/svc/deployments.md). Two outcomes of failure: a body of the wrong shape (wrong JSON types, missing required
// field, unknown field) is `malformed` (HTTP 400); a well-shaped body that breaks rules is `invalid` (HTTP 422) and
// lists EVERY violation at once. Pure.
import { parseCpuQuantity, parseMemoryQuantity } from '../runtime/quantities.js';
import {
  DEFAULT_HEALTH_CHECK_INTERVAL,
  DEFAULT_HEALTH_CHECK_THRESHOLD,
  DEFAULT_HEALTH_CHECK_TIMEOUT,
  DEFAULT_IMAGE_PULL_POLICY,
  DEFAULT_ON_FAILURE,
  HEALTH_CHECK_TYPES,
  IMAGE_PULL_POLICIES,
  KINDS,
  NETWORK_MODES,
  ON_FAILURE_ACTIONS,
  RUNTIMES,
  VOLUME_MOUNT_TYPES,
  type DeploymentConfig,
  type DeploymentSpec,
  type EnvironmentValue,
  type HealthCheck,
  type ImagePullPolicy,
  type Kind,
  type NetworkMode,
  type OnFailureAction,
  type PortMapping,
  type RegistryAuthSpec,
  type ResourceQuantities,
  type Resources,
  type RuntimeName,
  type VolumeMount,
  type VolumeMountType,
} from './deployment.js';
import { checkDnsLabel, checkLength, checkNamespace, type Violation } from './violations.js';
import { isSecretName } from './secret.js';
import { isVolumeName } from './volume.js';

export type DeploymentValidation =
  | { ok: true; spec: DeploymentSpec }
  | { ok: false; kind: 'malformed'; message: string }
  | { ok: false; kind: 'invalid'; violations: Violation[] };

/** Input limits; each is documented in docs/svc/deployments.md. */
export const DEPLOYMENT_LIMITS = {
  nameLength: 63,
  imageLength: 1024,
  commandArguments: 256,
  commandArgumentLength: 8192,
  replicas: 100,
  ports: 64,
  labels: 64,
  labelKeyLength: 128,
  labelValueLength: 1024,
  environment: 256,
  environmentKeyLength: 256,
  environmentValueLength: 32_768,
  volumes: 32,
  pathLength: 4096,
  driverLength: 64,
  configKeyLength: 253,
  healthChecks: 8,
  urlLength: 2048,
  healthCheckThreshold: 100,
  /** Longest accepted health-check `interval` or `timeout`. */
  durationMs: 3_600_000,
  userLength: 256,
  registryFieldLength: 4096,
  /** Docker refuses a memory limit below 6 MiB; saying so at apply time beats a create_container_error later. */
  minDockerMemoryLimitBytes: 6 * 1024 * 1024,
} as const;

/** Fields of the Deployment record a client may echo back from a GET; they are ignored, never trusted. */
const READ_ONLY_FIELDS = new Set([
  'id',
  'created_at',
  'updated_at',
  'status',
  'restart_count',
  'instances',
  'image_digest',
  'parent_id',
]);
const TOP_LEVEL_FIELDS = new Set([
  'name',
  'runtime',
  'namespace',
  'kind',
  'image',
  'command',
  'config',
  'replicas',
  'ports',
  'labels',
  'environment',
  'volumes',
  'resources',
  'health_checks',
  'network',
]);

const DNS_SUBDOMAIN = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LABEL_KEY = /^[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?$/;
const DRIVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/;
const USER_SPEC = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?$/;
const DURATION = /^(\d{1,10})(ms|s)$/;
const CONTROL_OR_SPACE = /[\s\u0000-\u001f\u007f]/;

/** `250ms` / `10s` → milliseconds; null for anything else (no minutes: the spec allows `ms` and `s` only). */
export function parseDuration(text: string): number | null {
  const match = DURATION.exec(text);
  if (match === null) return null;
  const value = Number(match[1]);
  return match[2] === 's' ? value * 1000 : value;
}

class Malformed extends Error {}

function malformed(message: string): never {
  throw new Malformed(message);
}

type Json = Record<string, unknown>;

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectAt(value: unknown, path: string): Json {
  if (!isPlainObject(value)) malformed(`${path} must be an object`);
  return value;
}

function onlyKnownKeys(object: Json, allowed: ReadonlySet<string>, path: string, ignored?: ReadonlySet<string>): void {
  for (const key of Object.keys(object)) {
    if (!allowed.has(key) && !ignored?.has(key)) malformed(`${path === '' ? '' : `${path}.`}${key} is not a known field`);
  }
}

/** A present-and-not-null field; null counts as absent so clients may send explicit nulls for optional fields. */
function field(object: Json, key: string): unknown {
  return Object.hasOwn(object, key) && object[key] !== null ? object[key] : undefined;
}

function requiredString(object: Json, key: string, path: string): string {
  const value = field(object, key);
  if (value === undefined) malformed(`${path} is required`);
  if (typeof value !== 'string') malformed(`${path} must be a string`);
  return value;
}

function optionalString(object: Json, key: string, path: string): string | undefined {
  const value = field(object, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') malformed(`${path} must be a string`);
  return value;
}

function integerAt(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) malformed(`${path} must be an integer`);
  return value;
}

function stringArrayAt(value: unknown, path: string): string[] {
  if (!Array.isArray(value)) malformed(`${path} must be an array of strings`);
  return value.map((item, index) => {
    if (typeof item !== 'string') malformed(`${path}[${index}] must be a string`);
    return item;
  });
}

function arrayAt(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) malformed(`${path} must be an array`);
  return value;
}

function oneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

function isAbsolutePath(value: string): boolean {
  return value.startsWith('/') && !value.includes('\0');
}

/** Validates a `POST /deployments` body and applies every default. Never throws. */
export function validateDeployment(body: unknown): DeploymentValidation {
  try {
    const violations: Violation[] = [];
    const spec = readDeployment(body, violations);
    return violations.length === 0 ? { ok: true, spec } : { ok: false, kind: 'invalid', violations };
  } catch (error) {
    if (error instanceof Malformed) return { ok: false, kind: 'malformed', message: error.message };
    throw error;
  }
}

function readDeployment(body: unknown, out: Violation[]): DeploymentSpec {
  const root = objectAt(body, 'body');
  onlyKnownKeys(root, TOP_LEVEL_FIELDS, '', READ_ONLY_FIELDS);

  const name = requiredString(root, 'name', 'name');
  const runtimeText = requiredString(root, 'runtime', 'runtime');
  const namespace = requiredString(root, 'namespace', 'namespace');
  const image = requiredString(root, 'image', 'image');
  const kindText = optionalString(root, 'kind', 'kind') ?? 'worker';
  const replicasValue = field(root, 'replicas');
  const replicas = replicasValue === undefined ? 1 : integerAt(replicasValue, 'replicas');
  const commandValue = field(root, 'command');
  const command = commandValue === undefined ? undefined : stringArrayAt(commandValue, 'command');

  // Rule 1. An unsupported runtime skips the runtime-specific rules instead of guessing which were meant.
  let runtime: RuntimeName | null = null;
  if (oneOf(RUNTIMES, runtimeText)) runtime = runtimeText;
  else out.push({ property_path: 'runtime', message: 'must be docker or cloud-hypervisor', code: 'deployment.runtime.unsupported' });
  const cloudHypervisor = runtime === 'cloud-hypervisor';

  checkLength(name, 1, DEPLOYMENT_LIMITS.nameLength, 'name', 'deployment.name.length', out);
  checkDnsLabel(name, 'name', 'deployment.name.format', out);
  checkNamespace(namespace, 'namespace', 'deployment.namespace', out);

  let kind: Kind = 'worker';
  if (oneOf(KINDS, kindText)) kind = kindText;
  else out.push({ property_path: 'kind', message: 'must be worker or job', code: 'deployment.kind.unsupported' });

  // Rule 2 and the image's own shape.
  checkLength(image, 1, DEPLOYMENT_LIMITS.imageLength, 'image', 'deployment.image.length', out);
  if (CONTROL_OR_SPACE.test(image)) {
    out.push({ property_path: 'image', message: 'must not contain spaces or control characters', code: 'deployment.image.format' });
  }
  if (cloudHypervisor && !isAbsolutePath(image)) {
    out.push({
      property_path: 'image',
      message: 'must be an absolute path on cloud-hypervisor',
      code: 'deployment.image.cloud_hypervisor_requires_absolute_path',
    });
  }
  if (command !== undefined) {
    if (cloudHypervisor) {
      out.push({
        property_path: 'command',
        message: 'is not supported on cloud-hypervisor',
        code: 'deployment.command.cloud_hypervisor_unsupported',
      });
    }
    if (command.length < 1 || command.length > DEPLOYMENT_LIMITS.commandArguments) {
      out.push({
        property_path: 'command',
        message: `must have 1-${DEPLOYMENT_LIMITS.commandArguments} arguments (omit it to use the image entrypoint)`,
        code: 'deployment.command.length',
      });
    }
    command.forEach((argument, index) => {
      if (argument.length > DEPLOYMENT_LIMITS.commandArgumentLength || argument.includes('\0')) {
        out.push({
          property_path: `command[${index}]`,
          message: `must be at most ${DEPLOYMENT_LIMITS.commandArgumentLength} characters without NUL`,
          code: 'deployment.command.argument.invalid',
        });
      }
    });
  }

  if (replicas < 0 || replicas > DEPLOYMENT_LIMITS.replicas) {
    out.push({
      property_path: 'replicas',
      message: `must be 0-${DEPLOYMENT_LIMITS.replicas}`,
      code: 'deployment.replicas.out_of_range',
    });
  }

  const network = readNetwork(field(root, 'network'), runtime, out);
  const ports = readPorts(field(root, 'ports'), out);
  const labels = readLabels(field(root, 'labels'), out);
  const environment = readEnvironment(field(root, 'environment'), out);
  const volumes = readVolumes(field(root, 'volumes'), out);
  const resources = readResources(field(root, 'resources'), runtime, out);
  const healthChecks = readHealthChecks(field(root, 'health_checks'), cloudHypervisor, out);
  const config = readConfig(field(root, 'config'), out);

  // Rule 3: host networking.
  if (network.mode === 'host') {
    if (ports.length > 0) {
      out.push({
        property_path: 'ports',
        message: 'must be empty with network.mode host',
        code: 'deployment.ports.host_network_conflict',
      });
    }
    if (replicas > 1) {
      out.push({
        property_path: 'replicas',
        message: 'must be at most 1 with network.mode host',
        code: 'deployment.replicas.host_network_conflict',
      });
    }
  }
  // Rule 5: reported on both fields.
  if (ports.length > 0 && replicas > 1) {
    out.push({
      property_path: 'ports',
      message: 'published ports require replicas of at most 1',
      code: 'deployment.ports.replicas_conflict',
    });
    out.push({
      property_path: 'replicas',
      message: 'must be at most 1 when ports are published',
      code: 'deployment.replicas.ports_conflict',
    });
  }
  // Rule 6.
  if (kind === 'job') {
    if (replicas !== 1) {
      out.push({ property_path: 'replicas', message: 'must be 1 for a job', code: 'deployment.replicas.job_must_be_one' });
    }
    if (healthChecks.length > 0) {
      out.push({
        property_path: 'health_checks',
        message: 'a job accepts no readiness checks',
        code: 'deployment.health_checks.job_readiness_unsupported',
      });
    }
  }

  const spec: DeploymentSpec = {
    name,
    runtime: runtime ?? 'docker',
    namespace,
    kind,
    image,
    config,
    replicas,
    ports,
    labels,
    environment,
    volumes,
    resources,
    health_checks: healthChecks,
    network: { mode: network.mode },
  };
  if (command !== undefined) spec.command = command;
  return spec;
}

function readNetwork(value: unknown, runtime: RuntimeName | null, out: Violation[]): { mode: NetworkMode } {
  if (value === undefined) return { mode: 'bridge' };
  const object = objectAt(value, 'network');
  onlyKnownKeys(object, new Set(['mode']), 'network');
  const modeText = optionalString(object, 'mode', 'network.mode') ?? 'bridge';
  if (!oneOf(NETWORK_MODES, modeText)) {
    out.push({ property_path: 'network.mode', message: 'must be bridge or host', code: 'deployment.network.mode.unsupported' });
    return { mode: 'bridge' };
  }
  if (modeText === 'host' && runtime === 'cloud-hypervisor') {
    out.push({
      property_path: 'network.mode',
      message: 'host networking is docker only',
      code: 'deployment.network.host_runtime_unsupported',
    });
  }
  return { mode: modeText };
}

// Rule 4.
function readPorts(value: unknown, out: Violation[]): PortMapping[] {
  if (value === undefined) return [];
  const items = arrayAt(value, 'ports');
  if (items.length > DEPLOYMENT_LIMITS.ports) {
    out.push({ property_path: 'ports', message: `must have at most ${DEPLOYMENT_LIMITS.ports} entries`, code: 'deployment.ports.too_many' });
  }
  const seen = new Set<number>();
  return items.map((item, index) => {
    const path = `ports[${index}]`;
    const object = objectAt(item, path);
    onlyKnownKeys(object, new Set(['published', 'target']), path);
    const publishedValue = field(object, 'published');
    const targetValue = field(object, 'target');
    if (publishedValue === undefined) malformed(`${path}.published is required`);
    if (targetValue === undefined) malformed(`${path}.target is required`);
    const published = integerAt(publishedValue, `${path}.published`);
    const target = integerAt(targetValue, `${path}.target`);
    if (published < 1 || published > 65535) {
      out.push({ property_path: `${path}.published`, message: 'must be 1-65535', code: 'deployment.ports.published.out_of_range' });
    }
    if (target < 1 || target > 65535) {
      out.push({ property_path: `${path}.target`, message: 'must be 1-65535', code: 'deployment.ports.target.out_of_range' });
    }
    if (seen.has(published)) {
      out.push({
        property_path: `${path}.published`,
        message: `port ${published} is already published`,
        code: 'deployment.ports.published.duplicate',
      });
    }
    seen.add(published);
    return { published, target };
  });
}

function readLabels(value: unknown, out: Violation[]): Record<string, string> {
  if (value === undefined) return {};
  // The manifest's list-of-single-key-objects form is turned into this map by the CLI, not here.
  if (!isPlainObject(value)) malformed('labels must be an object mapping strings to strings');
  const entries = Object.entries(value);
  if (entries.length > DEPLOYMENT_LIMITS.labels) {
    out.push({ property_path: 'labels', message: `must have at most ${DEPLOYMENT_LIMITS.labels} entries`, code: 'deployment.labels.too_many' });
  }
  return Object.fromEntries(
    entries.map(([key, labelValue]) => {
      const path = `labels.${key}`;
      if (typeof labelValue !== 'string') malformed(`${path} must be a string`);
      if (key.length > DEPLOYMENT_LIMITS.labelKeyLength || !LABEL_KEY.test(key)) {
        out.push({
          property_path: path,
          message: `key must be 1-${DEPLOYMENT_LIMITS.labelKeyLength} characters of letters, digits, '.', '_', '/', '-', starting and ending alphanumeric`,
          code: 'deployment.labels.key.invalid',
        });
      }
      if (labelValue.length > DEPLOYMENT_LIMITS.labelValueLength) {
        out.push({
          property_path: path,
          message: `must be at most ${DEPLOYMENT_LIMITS.labelValueLength} characters`,
          code: 'deployment.labels.value.length',
        });
      }
      return [key, labelValue];
    }),
  );
}

// Rule 7, plus the shape of a secret reference.
function readEnvironment(value: unknown, out: Violation[]): Record<string, EnvironmentValue> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) malformed('environment must be an object');
  const entries = Object.entries(value);
  if (entries.length > DEPLOYMENT_LIMITS.environment) {
    out.push({
      property_path: 'environment',
      message: `must have at most ${DEPLOYMENT_LIMITS.environment} entries`,
      code: 'deployment.environment.too_many',
    });
  }
  return Object.fromEntries(
    entries.map(([key, envValue]): [string, EnvironmentValue] => {
      const path = `environment.${key}`;
      if (key.length > DEPLOYMENT_LIMITS.environmentKeyLength || !ENV_KEY.test(key)) {
        out.push({
          property_path: path,
          message: `key must match [A-Za-z_][A-Za-z0-9_]* (at most ${DEPLOYMENT_LIMITS.environmentKeyLength} characters)`,
          code: 'deployment.environment.key.invalid',
        });
      }
      if (typeof envValue === 'string') {
        if (envValue.length > DEPLOYMENT_LIMITS.environmentValueLength || envValue.includes('\0')) {
          out.push({
            property_path: path,
            message: `must be at most ${DEPLOYMENT_LIMITS.environmentValueLength} characters without NUL`,
            code: 'deployment.environment.value.length',
          });
        }
        return [key, envValue];
      }
      if (!isPlainObject(envValue)) malformed(`${path} must be a string or {"secretRef": "<secret name>"}`);
      onlyKnownKeys(envValue, new Set(['secretRef']), path);
      const secretName = requiredString(envValue, 'secretRef', `${path}.secretRef`);
      if (secretName.length < 2 || secretName.length > 253 || !isSecretName(secretName)) {
        out.push({
          property_path: `${path}.secretRef`,
          message: 'must be a secret name: 2-253 letters, digits, _, ., -, starting and ending alphanumeric',
          code: 'deployment.environment.secret_ref.invalid',
        });
      }
      return [key, { secretRef: secretName }];
    }),
  );
}

function readVolumes(value: unknown, out: Violation[]): VolumeMount[] {
  if (value === undefined) return [];
  const items = arrayAt(value, 'volumes');
  if (items.length > DEPLOYMENT_LIMITS.volumes) {
    out.push({ property_path: 'volumes', message: `must have at most ${DEPLOYMENT_LIMITS.volumes} entries`, code: 'deployment.volumes.too_many' });
  }
  const destinations = new Set<string>();
  return items.map((item, index) => {
    const path = `volumes[${index}]`;
    const object = objectAt(item, path);
    onlyKnownKeys(object, new Set(['type', 'source', 'destination', 'driver', 'permission', 'key']), path);
    const typeText = requiredString(object, 'type', `${path}.type`);
    const source = requiredString(object, 'source', `${path}.source`);
    const destination = requiredString(object, 'destination', `${path}.destination`);
    // The spec makes driver and permission required at API level; the manifest defaults are the CLI's.
    const driver = requiredString(object, 'driver', `${path}.driver`);
    const permissionText = requiredString(object, 'permission', `${path}.permission`);
    const key = optionalString(object, 'key', `${path}.key`);

    let type: VolumeMountType | null = null;
    if (oneOf(VOLUME_MOUNT_TYPES, typeText)) type = typeText;
    else out.push({ property_path: `${path}.type`, message: 'must be bind, volume or config', code: 'deployment.volumes.type.unsupported' });

    if (type === 'bind' && (!isAbsolutePath(source) || source.length > DEPLOYMENT_LIMITS.pathLength)) {
      out.push({ property_path: `${path}.source`, message: 'must be an absolute host path', code: 'deployment.volumes.source.invalid' });
    }
    if (type === 'volume' && (source.length < 2 || source.length > 253 || !isVolumeName(source))) {
      out.push({
        property_path: `${path}.source`,
        message: 'must be a volume name: 2-253 lowercase letters, digits, _, ., -, starting and ending alphanumeric',
        code: 'deployment.volumes.source.invalid',
      });
    }
    if (type === 'config' && (source.length < 1 || source.length > 253 || !DNS_SUBDOMAIN.test(source))) {
      out.push({
        property_path: `${path}.source`,
        message: 'must be a config name: 1-253 lowercase DNS-subdomain characters',
        code: 'deployment.volumes.source.invalid',
      });
    }
    if (!isAbsolutePath(destination) || destination === '/' || destination.length > DEPLOYMENT_LIMITS.pathLength) {
      out.push({
        property_path: `${path}.destination`,
        message: 'must be an absolute path other than /',
        code: 'deployment.volumes.destination.invalid',
      });
    } else if (destinations.has(destination)) {
      out.push({
        property_path: `${path}.destination`,
        message: `${destination} is already mounted`,
        code: 'deployment.volumes.destination.duplicate',
      });
    }
    destinations.add(destination);
    if (driver.length < 1 || driver.length > DEPLOYMENT_LIMITS.driverLength || !DRIVER_NAME.test(driver)) {
      out.push({
        property_path: `${path}.driver`,
        message: `must be 1-${DEPLOYMENT_LIMITS.driverLength} characters of letters, digits, _ . : / -`,
        code: 'deployment.volumes.driver.invalid',
      });
    }
    const permissionValid = permissionText === 'rw' || permissionText === 'ro';
    if (!permissionValid) {
      out.push({ property_path: `${path}.permission`, message: 'must be rw or ro', code: 'deployment.volumes.permission.unsupported' });
    }
    if (type === 'config') {
      if (key === undefined) {
        out.push({ property_path: `${path}.key`, message: 'is required for a config mount', code: 'deployment.volumes.key.required' });
      } else if (key.length < 1 || key.length > DEPLOYMENT_LIMITS.configKeyLength) {
        out.push({
          property_path: `${path}.key`,
          message: `must be 1-${DEPLOYMENT_LIMITS.configKeyLength} characters`,
          code: 'deployment.volumes.key.invalid',
        });
      }
    } else if (key !== undefined && type !== null) {
      out.push({ property_path: `${path}.key`, message: 'applies only to config mounts', code: 'deployment.volumes.key.unexpected' });
    }

    const mount: VolumeMount = {
      type: type ?? 'bind',
      source,
      destination,
      driver,
      permission: type === 'config' ? 'ro' : permissionText === 'ro' ? 'ro' : 'rw',
    };
    if (type === 'config' && key !== undefined) mount.key = key;
    return mount;
  });
}

// Rule 8.
function readResources(value: unknown, runtime: RuntimeName | null, out: Violation[]): Resources {
  if (value === undefined) return { limits: {}, requests: {} };
  const object = objectAt(value, 'resources');
  onlyKnownKeys(object, new Set(['limits', 'requests']), 'resources');
  const limits = readQuantities(field(object, 'limits'), 'limits', out);
  const requests = readQuantities(field(object, 'requests'), 'requests', out);
  const limitBytes = limits.memory === undefined ? null : parseMemoryQuantity(limits.memory);
  const requestBytes = requests.memory === undefined ? null : parseMemoryQuantity(requests.memory);
  if (runtime === 'docker' && limitBytes !== null && limitBytes < DEPLOYMENT_LIMITS.minDockerMemoryLimitBytes) {
    out.push({
      property_path: 'resources.limits.memory',
      message: 'must be at least 6Mi on docker',
      code: 'deployment.resources.limits.memory.invalid',
    });
  }
  if (limitBytes !== null && requestBytes !== null && requestBytes > limitBytes) {
    out.push({
      property_path: 'resources.requests.memory',
      message: 'must not exceed resources.limits.memory',
      code: 'deployment.resources.requests.memory.exceeds_limit',
    });
  }
  return { limits, requests };
}

function readQuantities(value: unknown, group: 'limits' | 'requests', out: Violation[]): ResourceQuantities {
  if (value === undefined) return {};
  const path = `resources.${group}`;
  const object = objectAt(value, path);
  onlyKnownKeys(object, new Set(['cpu', 'memory']), path);
  const quantities: ResourceQuantities = {};
  const cpu = quantityText(field(object, 'cpu'), `${path}.cpu`);
  if (cpu !== undefined) {
    if (parseCpuQuantity(cpu) === null) {
      out.push({
        property_path: `${path}.cpu`,
        message: "must be millicores ('500m') or cores ('1', '0.5'), above zero",
        code: `deployment.resources.${group}.cpu.invalid`,
      });
    }
    quantities.cpu = cpu;
  }
  const memory = quantityText(field(object, 'memory'), `${path}.memory`);
  if (memory !== undefined) {
    if (parseMemoryQuantity(memory) === null) {
      out.push({
        property_path: `${path}.memory`,
        message: "must be bytes or a number with suffix Ki, Mi or Gi ('256Mi'), above zero",
        code: `deployment.resources.${group}.memory.invalid`,
      });
    }
    quantities.memory = memory;
  }
  return quantities;
}

function quantityText(value: unknown, path: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') malformed(`${path} must be a string or a number`);
  return value;
}

const HEALTH_CHECK_FIELDS = new Set(['type', 'port', 'url', 'command', 'interval', 'timeout', 'threshold', 'on_failure']);

function readHealthChecks(value: unknown, cloudHypervisor: boolean, out: Violation[]): HealthCheck[] {
  if (value === undefined) return [];
  const items = arrayAt(value, 'health_checks');
  if (items.length > DEPLOYMENT_LIMITS.healthChecks) {
    out.push({
      property_path: 'health_checks',
      message: `must have at most ${DEPLOYMENT_LIMITS.healthChecks} entries`,
      code: 'deployment.health_checks.too_many',
    });
  }
  return items.flatMap((item, index): HealthCheck[] => {
    const path = `health_checks[${index}]`;
    const object = objectAt(item, path);
    onlyKnownKeys(object, HEALTH_CHECK_FIELDS, path);
    const typeText = requiredString(object, 'type', `${path}.type`);
    const interval = optionalString(object, 'interval', `${path}.interval`) ?? DEFAULT_HEALTH_CHECK_INTERVAL;
    const timeout = optionalString(object, 'timeout', `${path}.timeout`) ?? DEFAULT_HEALTH_CHECK_TIMEOUT;
    const thresholdValue = field(object, 'threshold');
    const threshold =
      thresholdValue === undefined ? DEFAULT_HEALTH_CHECK_THRESHOLD : integerAt(thresholdValue, `${path}.threshold`);
    const onFailureText = optionalString(object, 'on_failure', `${path}.on_failure`) ?? DEFAULT_ON_FAILURE;
    const portValue = field(object, 'port');
    const port = portValue === undefined ? undefined : integerAt(portValue, `${path}.port`);
    const url = optionalString(object, 'url', `${path}.url`);
    const commandValue = field(object, 'command');
    const command = commandValue === undefined ? undefined : stringArrayAt(commandValue, `${path}.command`);

    for (const [name, text] of [
      ['interval', interval],
      ['timeout', timeout],
    ] as const) {
      const ms = parseDuration(text);
      if (ms === null || ms < 1 || ms > DEPLOYMENT_LIMITS.durationMs) {
        out.push({
          property_path: `${path}.${name}`,
          message: "must be a duration with suffix 'ms' or 's' ('500ms', '10s'), at most 3600s",
          code: `deployment.health_checks.${name}.invalid`,
        });
      }
    }
    if (threshold < 1 || threshold > DEPLOYMENT_LIMITS.healthCheckThreshold) {
      out.push({
        property_path: `${path}.threshold`,
        message: `must be 1-${DEPLOYMENT_LIMITS.healthCheckThreshold}`,
        code: 'deployment.health_checks.threshold.out_of_range',
      });
    }
    let onFailure: OnFailureAction = DEFAULT_ON_FAILURE;
    if (oneOf(ON_FAILURE_ACTIONS, onFailureText)) onFailure = onFailureText;
    else {
      out.push({
        property_path: `${path}.on_failure`,
        message: 'must be restart, stop or alert',
        code: 'deployment.health_checks.on_failure.unsupported',
      });
    }
    const common = { interval, timeout, threshold, on_failure: onFailure };

    if (!oneOf(HEALTH_CHECK_TYPES, typeText)) {
      out.push({ property_path: `${path}.type`, message: 'must be tcp, http or command', code: 'deployment.health_checks.type.unsupported' });
      return [];
    }
    const unexpected = (name: string) =>
      out.push({
        property_path: `${path}.${name}`,
        message: `does not apply to a ${typeText} check`,
        code: `deployment.health_checks.${name}.unexpected`,
      });
    if (typeText !== 'tcp' && port !== undefined) unexpected('port');
    if (typeText !== 'http' && url !== undefined) unexpected('url');
    if (typeText !== 'command' && command !== undefined) unexpected('command');

    switch (typeText) {
      case 'tcp': {
        if (port === undefined) {
          out.push({ property_path: `${path}.port`, message: 'is required for a tcp check', code: 'deployment.health_checks.port.required' });
          return [];
        }
        if (port < 1 || port > 65535) {
          out.push({ property_path: `${path}.port`, message: 'must be 1-65535', code: 'deployment.health_checks.port.out_of_range' });
        }
        return [{ type: 'tcp', port, ...common }];
      }
      case 'http': {
        if (url === undefined) {
          out.push({ property_path: `${path}.url`, message: 'is required for an http check', code: 'deployment.health_checks.url.required' });
          return [];
        }
        if (!isHttpUrl(url)) {
          out.push({
            property_path: `${path}.url`,
            message: `must be an http or https URL of at most ${DEPLOYMENT_LIMITS.urlLength} characters`,
            code: 'deployment.health_checks.url.invalid',
          });
        }
        return [{ type: 'http', url, ...common }];
      }
      case 'command': {
        if (cloudHypervisor) {
          out.push({
            property_path: `${path}.type`,
            message: 'command checks are not supported on cloud-hypervisor',
            code: 'deployment.health_checks.command.cloud_hypervisor_unsupported',
          });
        }
        if (command === undefined || command.length === 0) {
          out.push({
            property_path: `${path}.command`,
            message: 'is required for a command check (a non-empty array)',
            code: 'deployment.health_checks.command.required',
          });
          return [];
        }
        if (
          command.length > DEPLOYMENT_LIMITS.commandArguments ||
          command.some((argument) => argument.length > DEPLOYMENT_LIMITS.commandArgumentLength || argument.includes('\0'))
        ) {
          out.push({
            property_path: `${path}.command`,
            message: `must have at most ${DEPLOYMENT_LIMITS.commandArguments} arguments of at most ${DEPLOYMENT_LIMITS.commandArgumentLength} characters`,
            code: 'deployment.health_checks.command.invalid',
          });
        }
        return [{ type: 'command', command, ...common }];
      }
    }
  });
}

function isHttpUrl(text: string): boolean {
  if (text.length > DEPLOYMENT_LIMITS.urlLength) return false;
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

// Rule 9, plus the `user` and registry-auth sub-fields (named here; the spec leaves their names open).
function readConfig(value: unknown, out: Violation[]): DeploymentConfig {
  if (value === undefined) return { image_pull_policy: DEFAULT_IMAGE_PULL_POLICY };
  const object = objectAt(value, 'config');
  onlyKnownKeys(object, new Set(['image_pull_policy', 'registry_auth', 'user']), 'config');
  const policyText = optionalString(object, 'image_pull_policy', 'config.image_pull_policy') ?? DEFAULT_IMAGE_PULL_POLICY;
  let imagePullPolicy: ImagePullPolicy = DEFAULT_IMAGE_PULL_POLICY;
  if (oneOf(IMAGE_PULL_POLICIES, policyText)) imagePullPolicy = policyText;
  else {
    out.push({
      property_path: 'config.image_pull_policy',
      message: 'must be Always, IfNotPresent or Never',
      code: 'deployment.config.image_pull_policy.unsupported',
    });
  }
  const config: DeploymentConfig = { image_pull_policy: imagePullPolicy };
  const user = optionalString(object, 'user', 'config.user');
  if (user !== undefined) {
    if (user.length > DEPLOYMENT_LIMITS.userLength || !USER_SPEC.test(user)) {
      out.push({
        property_path: 'config.user',
        message: 'must be a user name or uid, optionally followed by :group',
        code: 'deployment.config.user.invalid',
      });
    }
    config.user = user;
  }
  const authValue = field(object, 'registry_auth');
  if (authValue !== undefined) config.registry_auth = readRegistryAuth(authValue, out);
  return config;
}

function readRegistryAuth(value: unknown, out: Violation[]): RegistryAuthSpec {
  const path = 'config.registry_auth';
  const object = objectAt(value, path);
  onlyKnownKeys(object, new Set(['username', 'password', 'server_address']), path);
  const username = requiredString(object, 'username', `${path}.username`);
  const password = requiredString(object, 'password', `${path}.password`);
  const serverAddress = optionalString(object, 'server_address', `${path}.server_address`);
  const fields: [string, string | undefined][] = [
    ['username', username],
    ['password', password],
    ['server_address', serverAddress],
  ];
  for (const [name, text] of fields) {
    if (text !== undefined && (text.length < 1 || text.length > DEPLOYMENT_LIMITS.registryFieldLength || text.includes('\0'))) {
      out.push({
        property_path: `${path}.${name}`,
        message: `must be 1-${DEPLOYMENT_LIMITS.registryFieldLength} characters`,
        code: 'deployment.config.registry_auth.invalid',
      });
    }
  }
  const auth: RegistryAuthSpec = { username, password };
  if (serverAddress !== undefined) auth.server_address = serverAddress;
  return auth;
}
