// One probe of one health check against one instance (spec "Health checks"): tcp connect, http GET expecting a
// 2xx (redirects are not followed: a 3xx is a failure), or a command exec through the runtime. Probes run from
// the host against the instance's private address; `localhost` in an http URL is rewritten to that address.
import { connect } from 'node:net';
import { parseDuration } from '../domain/deployment-validation.js';
import type { HealthCheck } from '../domain/deployment.js';
import type { ObservedInstance, Runtime } from '../runtime/runtime.js';
import type { ProbeStatus } from '../scheduler/plan.js';

export type { ProbeStatus };

export interface ProbeResult {
  status: ProbeStatus;
  /** Null on success. Never holds environment values: built from the check and the error code only. */
  message: string | null;
  startedAt: Date;
  finishedAt: Date;
}

/** Used when a stored timeout cannot be read (validation guarantees it can). */
const FALLBACK_TIMEOUT_MS = 5_000;

export function checkTimeoutMs(check: HealthCheck): number {
  return parseDuration(check.timeout) ?? FALLBACK_TIMEOUT_MS;
}

/** The URL an http check probes: `localhost` (the host only) replaced by the instance's address. */
export function probeUrl(url: string, address: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === 'localhost') parsed.hostname = address.includes(':') ? `[${address}]` : address;
  return parsed.toString();
}

function probeTcp(address: string, port: number, timeoutMs: number): Promise<{ status: ProbeStatus; message: string | null }> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port });
    const done = (status: ProbeStatus, message: string | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, message });
    };
    const timer = setTimeout(() => done('timeout', `tcp ${address}:${port}: no connection within ${timeoutMs} ms`), timeoutMs);
    socket.once('connect', () => done('success', null));
    socket.once('error', (error: NodeJS.ErrnoException) => done('failure', `tcp ${address}:${port}: ${error.code ?? 'connection failed'}`));
  });
}

async function probeHttp(url: string, timeoutMs: number): Promise<{ status: ProbeStatus; message: string | null }> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, { method: 'GET', redirect: 'manual', signal });
    // The body is not needed; cancelling frees the socket at once.
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { status: 'success', message: null };
    return { status: 'failure', message: `http GET ${url}: status ${response.status}` };
  } catch (error) {
    if (signal.aborted) return { status: 'timeout', message: `http GET ${url}: no response within ${timeoutMs} ms` };
    const cause = (error as { cause?: { code?: unknown } }).cause;
    const code = typeof cause?.code === 'string' ? cause.code : 'request failed';
    return { status: 'failure', message: `http GET ${url}: ${code}` };
  }
}

async function probeCommand(runtime: Runtime, instance: ObservedInstance, command: string[], timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs + 1_000);
  });
  try {
    const outcome = await Promise.race([runtime.probeCommand(instance, command, timeoutMs), timedOut]);
    if (outcome === 'timeout') return { status: 'timeout' as const, message: `command did not start within ${timeoutMs} ms` };
    return outcome
      ? { status: 'success' as const, message: null }
      : { status: 'failure' as const, message: `command ${JSON.stringify(command[0] ?? '')} could not be started` };
  } finally {
    clearTimeout(timer);
  }
}

export async function runProbe(check: HealthCheck, instance: ObservedInstance, runtime: Runtime): Promise<ProbeResult> {
  const startedAt = new Date();
  const timeoutMs = checkTimeoutMs(check);
  let outcome: { status: ProbeStatus; message: string | null };
  if (check.type === 'command') {
    outcome = await probeCommand(runtime, instance, check.command, timeoutMs);
  } else if (instance.address === null) {
    outcome = { status: 'failure', message: 'the instance has no network address' };
  } else if (check.type === 'tcp') {
    outcome = await probeTcp(instance.address, check.port, timeoutMs);
  } else {
    let url: string;
    try {
      url = probeUrl(check.url, instance.address);
    } catch {
      url = '';
    }
    outcome = url === '' ? { status: 'failure', message: 'invalid url' } : await probeHttp(url, timeoutMs);
  }
  return { ...outcome, startedAt, finishedAt: new Date() };
}
