// apply manifests: YAML or JSON text → the namespaces to ensure and the POST /deployments bodies. Pure.
// Every problem is collected with its property path, so one run shows them all.
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { interpolate, type Lookup } from './interpolate.js';

export interface ManifestProblem {
  path: string;
  message: string;
}

export interface VolumeMount {
  type: string;
  source: string;
  destination: string;
  driver: string;
  permission: string;
  key?: string;
}

export type EnvValue = string | { secretRef: string };

export interface DeploymentBody {
  name: string;
  namespace: string;
  runtime: string;
  kind: string;
  replicas: number;
  image: string;
  labels: Record<string, string>;
  environment: Record<string, EnvValue>;
  volumes: VolumeMount[];
  ports: { published?: number; target: number }[];
  command?: string[];
  resources?: Record<string, unknown>;
  health_checks?: unknown[];
  config?: Record<string, unknown>;
  network?: Record<string, unknown>;
}

export interface Manifest {
  namespaces: string[];
  /** In manifest order; `key` is the entry's key under `deployments:` (before interpolation). */
  deployments: { key: string; body: DeploymentBody }[];
}

export interface ManifestResult {
  manifest: Manifest;
  problems: ManifestProblem[];
}

/** Defaults for keys the API requires but a manifest may leave out. */
export const MANIFEST_DEFAULTS = { namespace: 'default', runtime: 'docker', kind: 'worker', replicas: 1, driver: 'local', permission: 'rw' } as const;

const DEPLOYMENT_KEYS = [
  'name',
  'namespace',
  'runtime',
  'kind',
  'replicas',
  'image',
  'command',
  'labels',
  'environment',
  'volumes',
  'ports',
  'resources',
  'health_checks',
  'config',
  'network',
] as const;

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** Parses the text: JSON when it looks like JSON, YAML otherwise (YAML 1.2 also reads JSON). */
export function parseManifestText(text: string, source: string): { doc: unknown; problems: ManifestProblem[] } {
  try {
    return { doc: parseYaml(text, { uniqueKeys: true, prettyErrors: true }), problems: [] };
  } catch (error) {
    const detail = error instanceof YAMLParseError ? error.message.split('\n')[0]! : String(error);
    return { doc: undefined, problems: [{ path: source, message: `not valid YAML or JSON: ${detail}` }] };
  }
}

class Reader {
  readonly problems: ManifestProblem[] = [];
  constructor(private readonly lookup: Lookup) {}

  problem(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  /** Interpolates one string; undefined variables and syntax errors become problems at `path`. */
  interpolate(value: string, path: string): string {
    const result = interpolate(value, this.lookup);
    for (const name of new Set(result.missing)) this.problem(path, `variable '${name}' is not defined (set it in the environment or an --env-file; write $$ for a literal $)`);
    for (const error of result.errors) this.problem(path, error);
    return result.value;
  }

  string(entry: Rec, key: string, path: string, fallback?: string): string {
    const value = entry[key];
    if (value === undefined || value === null) {
      if (fallback === undefined) this.problem(`${path}.${key}`, 'is required');
      return fallback ?? '';
    }
    if (typeof value === 'number') return String(value);
    if (typeof value !== 'string') {
      this.problem(`${path}.${key}`, 'must be a string');
      return fallback ?? '';
    }
    return value;
  }

  object(entry: Rec, key: string, path: string): Rec | undefined {
    const value = entry[key];
    if (value === undefined || value === null) return undefined;
    if (!isRec(value)) {
      this.problem(`${path}.${key}`, 'must be a map');
      return undefined;
    }
    return value;
  }
}

function readLabels(r: Reader, raw: unknown, path: string): Record<string, string> {
  const labels: Record<string, string> = {};
  if (raw === undefined || raw === null) return labels;
  // A map, or a list of single-key maps (`- app: web`).
  const entries: [string, unknown, string][] = [];
  if (isRec(raw)) for (const [k, v] of Object.entries(raw)) entries.push([k, v, `${path}.${k}`]);
  else if (Array.isArray(raw)) {
    raw.forEach((item, i) => {
      if (!isRec(item) || Object.keys(item).length !== 1) r.problem(`${path}[${i}]`, 'must be a map with exactly one key');
      else {
        const [k, v] = Object.entries(item)[0]!;
        entries.push([k, v, `${path}[${i}]`]);
      }
    });
  } else r.problem(path, 'must be a map or a list of single-key maps');
  for (const [k, v, where] of entries) {
    if (!isScalar(v)) r.problem(where, 'label values must be strings');
    else labels[k] = String(v);
  }
  return labels;
}

function readEnvironment(r: Reader, raw: unknown, path: string): Record<string, EnvValue> {
  const env: Record<string, EnvValue> = {};
  if (raw === undefined || raw === null) return env;
  let entries: [string, unknown][] = [];
  if (isRec(raw)) entries = Object.entries(raw);
  else if (Array.isArray(raw)) {
    // Compose-style `- KEY=VALUE` list.
    raw.forEach((item, i) => {
      if (typeof item !== 'string' || !item.includes('=')) r.problem(`${path}[${i}]`, "must be 'KEY=VALUE'");
      else entries.push([item.slice(0, item.indexOf('=')), item.slice(item.indexOf('=') + 1)]);
    });
  } else {
    r.problem(path, 'must be a map');
    return env;
  }
  for (const [key, value] of entries) {
    const where = `${path}.${key}`;
    if (isRec(value)) {
      if (Object.keys(value).length === 1 && typeof value.secretRef === 'string') env[key] = { secretRef: value.secretRef };
      else r.problem(where, 'must be a string or {secretRef: <secret name>}');
    } else if (isScalar(value)) {
      env[key] = typeof value === 'string' ? r.interpolate(value, where) : String(value);
    } else r.problem(where, 'must be a string or {secretRef: <secret name>}');
  }
  return env;
}

function readVolumes(r: Reader, raw: unknown, path: string): VolumeMount[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    r.problem(path, 'must be a list');
    return [];
  }
  const mounts: VolumeMount[] = [];
  raw.forEach((item, i) => {
    const where = `${path}[${i}]`;
    if (!isRec(item)) {
      r.problem(where, 'must be a map');
      return;
    }
    for (const key of Object.keys(item)) {
      if (!['type', 'source', 'destination', 'driver', 'permission', 'key'].includes(key)) r.problem(`${where}.${key}`, 'unknown key');
    }
    const type = r.string(item, 'type', where);
    if (type && !['bind', 'volume', 'config'].includes(type)) r.problem(`${where}.type`, 'must be bind, volume or config');
    const permission = r.string(item, 'permission', where, MANIFEST_DEFAULTS.permission);
    if (!['rw', 'ro'].includes(permission)) r.problem(`${where}.permission`, 'must be rw or ro');
    const mount: VolumeMount = {
      type,
      source: r.string(item, 'source', where),
      destination: r.string(item, 'destination', where),
      driver: r.string(item, 'driver', where, MANIFEST_DEFAULTS.driver),
      // A config is rendered as a file: always mounted read-only, whatever the manifest says.
      permission: type === 'config' ? 'ro' : permission,
    };
    if (type === 'config') mount.key = r.string(item, 'key', where);
    else if (item.key !== undefined) r.problem(`${where}.key`, 'is only for type: config');
    mounts.push(mount);
  });
  return mounts;
}

function readPorts(r: Reader, raw: unknown, path: string): { published?: number; target: number }[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    r.problem(path, 'must be a list');
    return [];
  }
  const ports: { published?: number; target: number }[] = [];
  raw.forEach((item, i) => {
    const where = `${path}[${i}]`;
    // `"8080:80"` is shorthand for {published: 8080, target: 80}.
    if (typeof item === 'string' && /^\d+:\d+$/.test(item)) {
      const [published, target] = item.split(':').map(Number);
      ports.push({ published: published!, target: target! });
    } else if (isRec(item)) {
      const port: { published?: number; target: number } = { target: 0 };
      if (!Number.isInteger(item.target)) r.problem(`${where}.target`, 'must be an integer');
      else port.target = item.target as number;
      if (item.published !== undefined && item.published !== null) {
        if (!Number.isInteger(item.published)) r.problem(`${where}.published`, 'must be an integer');
        else port.published = item.published as number;
      }
      for (const key of Object.keys(item)) if (key !== 'target' && key !== 'published') r.problem(`${where}.${key}`, 'unknown key');
      ports.push(port);
    } else r.problem(where, "must be {published, target} or 'PUBLISHED:TARGET'");
  });
  return ports;
}

function readDeployment(r: Reader, key: string, raw: unknown, path: string): DeploymentBody | undefined {
  if (!isRec(raw)) {
    r.problem(path, 'must be a map');
    return undefined;
  }
  for (const k of Object.keys(raw)) {
    if (!(DEPLOYMENT_KEYS as readonly string[]).includes(k)) r.problem(`${path}.${k}`, `unknown key (known: ${DEPLOYMENT_KEYS.join(', ')})`);
  }
  const name = r.interpolate(r.string(raw, 'name', path, key), `${path}.name`);
  const body: DeploymentBody = {
    name,
    namespace: r.interpolate(r.string(raw, 'namespace', path, MANIFEST_DEFAULTS.namespace), `${path}.namespace`),
    runtime: r.string(raw, 'runtime', path, MANIFEST_DEFAULTS.runtime),
    kind: r.string(raw, 'kind', path, MANIFEST_DEFAULTS.kind),
    replicas: MANIFEST_DEFAULTS.replicas,
    image: r.interpolate(r.string(raw, 'image', path), `${path}.image`),
    labels: readLabels(r, raw.labels, `${path}.labels`),
    environment: readEnvironment(r, raw.environment, `${path}.environment`),
    volumes: readVolumes(r, raw.volumes, `${path}.volumes`),
    ports: readPorts(r, raw.ports, `${path}.ports`),
  };
  if (raw.replicas !== undefined && raw.replicas !== null) {
    if (!Number.isInteger(raw.replicas)) r.problem(`${path}.replicas`, 'must be an integer');
    else body.replicas = raw.replicas as number;
  }
  if (raw.command !== undefined && raw.command !== null) {
    if (!Array.isArray(raw.command) || !raw.command.every(isScalar)) r.problem(`${path}.command`, 'must be a list of strings');
    else body.command = raw.command.map((a, i) => (typeof a === 'string' ? r.interpolate(a, `${path}.command[${i}]`) : String(a)));
  }
  for (const k of ['resources', 'config', 'network'] as const) {
    const value = r.object(raw, k, path);
    if (value !== undefined) body[k] = value;
  }
  if (raw.health_checks !== undefined && raw.health_checks !== null) {
    if (!Array.isArray(raw.health_checks)) r.problem(`${path}.health_checks`, 'must be a list');
    else body.health_checks = raw.health_checks;
  }
  return body;
}

/** Manifest document → what to apply, with every problem found. */
export function readManifest(doc: unknown, lookup: Lookup): ManifestResult {
  const r = new Reader(lookup);
  const manifest: Manifest = { namespaces: [], deployments: [] };
  if (!isRec(doc)) {
    r.problem('(root)', 'must be a map with namespaces: and/or deployments:');
    return { manifest, problems: r.problems };
  }
  for (const key of Object.keys(doc)) {
    if (key !== 'namespaces' && key !== 'deployments') r.problem(key, 'unknown top-level key (known: namespaces, deployments)');
  }
  const namespaces = doc.namespaces;
  if (isRec(namespaces)) {
    for (const [name, value] of Object.entries(namespaces)) {
      if (value !== null && !isRec(value)) r.problem(`namespaces.${name}`, 'must be a map (or empty)');
      manifest.namespaces.push(r.interpolate(name, `namespaces.${name}`));
    }
  } else if (Array.isArray(namespaces)) {
    namespaces.forEach((name, i) => {
      if (typeof name !== 'string') r.problem(`namespaces[${i}]`, 'must be a string');
      else manifest.namespaces.push(r.interpolate(name, `namespaces[${i}]`));
    });
  } else if (namespaces !== undefined && namespaces !== null) r.problem('namespaces', 'must be a map of namespace names');

  const deployments = doc.deployments;
  if (isRec(deployments)) {
    for (const [key, value] of Object.entries(deployments)) {
      const body = readDeployment(r, key, value, `deployments.${key}`);
      if (body) manifest.deployments.push({ key, body });
    }
  } else if (deployments !== undefined && deployments !== null) r.problem('deployments', 'must be a map keyed by deployment name');

  const seen = new Map<string, string>();
  for (const { key, body } of manifest.deployments) {
    const id = `${body.namespace}/${body.name}`;
    const other = seen.get(id);
    if (other !== undefined) r.problem(`deployments.${key}`, `same namespace and name as deployments.${other} (${id})`);
    seen.set(id, key);
  }
  return { manifest, problems: r.problems };
}
