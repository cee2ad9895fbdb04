// The doctor's checks as a list over an injected probe, so the decisions are tested without the machine.
import { join } from 'node:path';
import { RUNTIMES, type RuntimeChoice, type SvcConfig } from '../config/config-file.js';
import { parseSecretKey, SecretKeyError } from '../crypto/secret-box.js';

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

/** The machine, as the doctor sees it. */
export interface Probe {
  env: NodeJS.ProcessEnv;
  exists(path: string): boolean;
  /** Readable and writable by this user. */
  readWrite(path: string): boolean;
  /** Absolute path of an executable found in PATH, or null. */
  which(binary: string): string | null;
  executable(path: string): boolean;
  /** GET /_ping on a unix socket: null when it answered OK, else the reason. */
  pingSocket(path: string): Promise<string | null>;
}

/** Enabled runtimes, or all of them when none is enabled. */
export function runtimesToCheck(enabled: readonly RuntimeChoice[]): RuntimeChoice[] {
  return enabled.length > 0 ? [...enabled] : [...RUNTIMES];
}

export function secretKeyCheck(raw: string | undefined): CheckResult {
  try {
    parseSecretKey(raw);
    return { name: 'secret key', ok: true, detail: 'SVC_SECRET_KEY is set, base64, 32 bytes' };
  } catch (error) {
    return { name: 'secret key', ok: false, detail: error instanceof SecretKeyError ? error.message : String(error) };
  }
}

export function dockerSocketPath(env: NodeJS.ProcessEnv): string {
  const host = env.DOCKER_HOST;
  if (host?.startsWith('unix://')) return host.slice('unix://'.length);
  return '/var/run/docker.sock';
}

function binaryCheck(probe: Probe, name: string, binary: string): CheckResult {
  const found = probe.which(binary);
  return found ? { name, ok: true, detail: `found ${found}` } : { name, ok: false, detail: `'${binary}' not found in PATH` };
}

function kvmCheck(probe: Probe): CheckResult {
  if (!probe.exists('/dev/kvm')) return { name: '/dev/kvm', ok: false, detail: '/dev/kvm does not exist (no KVM: enable virtualization or load kvm modules)' };
  return probe.readWrite('/dev/kvm')
    ? { name: '/dev/kvm', ok: true, detail: 'readable and writable' }
    : { name: '/dev/kvm', ok: false, detail: 'no read/write access (add this user to the kvm group)' };
}

function pathCheck(probe: Probe, name: string, key: string, path: string | null): CheckResult {
  if (path === null) return { name, ok: false, detail: `${key} is not set in [runtime] of config.toml` };
  return probe.exists(path) ? { name, ok: true, detail: path } : { name, ok: false, detail: `${path} does not exist` };
}

function virtiofsdCheck(probe: Probe): CheckResult {
  const name = 'virtiofsd';
  const configured = probe.env.SVC_VIRTIOFSD;
  if (configured) {
    return probe.executable(configured)
      ? { name, ok: true, detail: `${configured} (SVC_VIRTIOFSD)` }
      : { name, ok: false, detail: `SVC_VIRTIOFSD=${configured} is not an executable file` };
  }
  const found = probe.which('virtiofsd') ?? ['/usr/libexec/virtiofsd', '/usr/lib/qemu/virtiofsd'].find((p) => probe.executable(p)) ?? null;
  return found ? { name, ok: true, detail: found } : { name, ok: false, detail: 'not found in PATH, /usr/libexec or /usr/lib/qemu (set SVC_VIRTIOFSD)' };
}

async function socketCheck(probe: Probe, name: string, path: string): Promise<CheckResult> {
  const problem = await probe.pingSocket(path);
  return problem === null ? { name, ok: true, detail: `${path} answers` } : { name, ok: false, detail: `${path}: ${problem}` };
}

export function podmanSocketPath(env: NodeJS.ProcessEnv): string {
  return env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, 'podman', 'podman.sock') : '/run/podman/podman.sock';
}

/** Runtime checks; a check shared by two runtimes (/dev/kvm, kernel) appears once. */
export async function runtimeChecks(config: SvcConfig, runtimes: readonly RuntimeChoice[], probe: Probe): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const add = (result: CheckResult) => {
    if (!results.some((r) => r.name === result.name)) results.push(result);
  };
  for (const runtime of runtimes) {
    if (runtime === 'docker') add(await socketCheck(probe, 'docker socket', dockerSocketPath(probe.env)));
    if (runtime === 'podman') {
      add(binaryCheck(probe, 'podman binary', 'podman'));
      add(await socketCheck(probe, 'podman socket', podmanSocketPath(probe.env)));
    }
    if (runtime === 'cloud-hypervisor') {
      add(binaryCheck(probe, 'cloud-hypervisor binary', 'cloud-hypervisor'));
      add(kvmCheck(probe));
      add(pathCheck(probe, 'firmware', 'firmware_path', config.runtime.firmware_path));
      add(pathCheck(probe, 'kernel', 'kernel_path', config.runtime.kernel_path));
      add(virtiofsdCheck(probe));
    }
    if (runtime === 'firecracker') {
      add(binaryCheck(probe, 'firecracker binary', 'firecracker'));
      add(kvmCheck(probe));
      add(pathCheck(probe, 'kernel', 'kernel_path', config.runtime.kernel_path));
    }
  }
  return results;
}

export function formatCheck(result: CheckResult, paintFn: (text: string, ok: boolean) => string): string {
  return `${paintFn(result.ok ? 'ok  ' : 'FAIL', result.ok)}  ${result.name}: ${result.detail}`;
}
