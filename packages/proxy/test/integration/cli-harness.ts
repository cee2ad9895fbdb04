// Shared by the control-plane integration tests: runs the real `svc-proxy` process on 127.0.0.1.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `p1-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a short CLI command to completion (bounded by `timeoutMs`). */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 30_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface RunningProxy {
  child: ChildProcess;
  output(): string;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `svc-proxy serve` and resolves once it prints its ready line. */
export function startProxy(configPath: string, timeoutMs = 20_000): Promise<RunningProxy> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--config', configPath], { cwd: REPO_ROOT });
    let output = '';
    let done = false;
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    const proxy: RunningProxy = {
      child,
      output: () => output,
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        const code = await exited;
        clearTimeout(timer);
        return code;
      },
    };
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      child.kill('SIGKILL');
      reject(new Error(`svc-proxy did not become ready:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (!done && output.includes('svc-proxy ready')) {
        done = true;
        clearTimeout(timer);
        resolve(proxy);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(new Error(`svc-proxy exited with ${code} before ready:\n${output}`));
    });
  });
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export function apiClient(base: string) {
  return async function call(
    method: string,
    path: string,
    options: { user?: [string, string]; json?: unknown; body?: string; contentType?: string | null; headers?: Record<string, string> } = {},
  ): Promise<ApiAnswer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.user) headers.authorization = `Basic ${Buffer.from(`${options.user[0]}:${options.user[1]}`).toString('base64')}`;
    let body: string | undefined = options.body;
    if (options.json !== undefined) body = JSON.stringify(options.json);
    const contentType = options.contentType === undefined ? (body !== undefined ? 'application/json' : null) : options.contentType;
    if (contentType !== null) headers['content-type'] = contentType;
    const response = await fetch(`${base}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = null;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };
}

export async function waitFor<T>(probe: () => Promise<T | null>, timeoutMs: number, intervalMs = 25): Promise<T | null> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== null) return value;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return null;
}
