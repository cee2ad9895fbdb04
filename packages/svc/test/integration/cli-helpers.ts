// Runs the REAL built `svc` binary (packages/svc/bin/svc.js → dist/) as a child process. The build is
// refreshed once per test process when any source file is newer than its compiled output.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../support/server.js';

export const SVC_BIN = join(REPO_ROOT, 'packages/svc/bin/svc.js');
const SRC = join(REPO_ROOT, 'packages/svc/src');
const DIST = join(REPO_ROOT, 'packages/svc/dist');

function staleSources(dir: string): boolean {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (staleSources(path)) return true;
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      const out = join(DIST, relative(SRC, path)).replace(/\.ts$/, '.js');
      try {
        if (statSync(out).mtimeMs < statSync(path).mtimeMs) return true;
      } catch {
        return true;
      }
    }
  }
  return false;
}

let built = false;
/** Compiles packages/svc when dist/ is older than src/ (serialized with other test processes). */
export function ensureBuilt(): void {
  if (built) return;
  if (staleSources(SRC)) {
    // tsc emits even when files owned by others have type errors; only the exit status is non-zero then.
    try {
      execFileSync('flock', ['/tmp/svc-build.lock', 'node', join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(REPO_ROOT, 'packages/svc')], {
        cwd: REPO_ROOT,
        stdio: 'ignore',
        timeout: 180_000,
      });
    } catch {
      // type errors elsewhere; the emitted JS is what we run
    }
  }
  built = true;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliEnv {
  /** The config directory the CLI uses (config.toml, auth.json). */
  configDir: string;
  env: NodeJS.ProcessEnv;
  run(args: string[], options?: { env?: Record<string, string | undefined>; input?: string; timeoutMs?: number }): Promise<CliResult>;
  close(): void;
}

/** A private config dir whose current context points at `port`; `token` goes to SVC_TOKEN when given. */
export function cliEnv(port: number, token?: string): CliEnv {
  ensureBuilt();
  const configDir = mkdtempSync(join(tmpdir(), 'svc-cli-test-'));
  mkdirSync(configDir, { recursive: true });
  writeFileSync(
    join(configDir, 'config.toml'),
    `[contexts.test]\ncurrent = true\nhost = "127.0.0.1"\n[contexts.test.api]\nscheme = "http"\nport = ${port}\n\n[contexts.down]\nhost = "127.0.0.1"\n[contexts.down.api]\nport = 1\n`,
  );
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: configDir, SVC_CONFIG_DIR: configDir, ...(token ? { SVC_TOKEN: token } : {}) };
  return {
    configDir,
    env,
    run: (args, options = {}) => runCli(args, { ...env, ...options.env }, options.input, options.timeoutMs),
    close: () => rmSync(configDir, { recursive: true, force: true }),
  };
}

export function runCli(args: string[], env: Record<string, string | undefined>, input?: string, timeoutMs = 60_000): Promise<CliResult> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, ...args], { env: clean, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(input ?? '');
  });
}

/** Exactly one `error:` line on stderr, matching `pattern`. */
export function errorLine(result: CliResult): string {
  const lines = result.stderr.split('\n').filter((l) => l.startsWith('error:'));
  if (lines.length !== 1) throw new Error(`expected exactly one error line, got ${lines.length}:\n${result.stderr}`);
  return lines[0]!;
}

export const ANSI = /\x1b\[/;

/**
 * A tmux server of our own (its own socket) to run `svc` on a real pseudo-terminal. Each `start` opens a
 * session whose shell prints `EXIT=<code>` when svc ends, then waits, so the screen can still be read.
 */
export class Terminals {
  private readonly socket = `svc-cli-tty-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private count = 0;

  constructor(private readonly baseEnv: NodeJS.ProcessEnv) {}

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  start(args: string[], env: Record<string, string> = {}): string {
    const name = `t${++this.count}`;
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const vars = Object.entries({ ...this.baseEnv, ...env })
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([k, v]) => `${k}=${quote(v)}`)
      .join(' ');
    const command = `env -i ${vars} TERM=xterm-256color ${quote(process.execPath)} ${quote(SVC_BIN)} ${args.map(quote).join(' ')}; echo EXIT=$?; sleep 120`;
    this.tmux('new-session', '-d', '-s', name, '-x', '200', '-y', '50', command);
    return name;
  }

  screen(name: string, escapes = false): string {
    return this.tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', name);
  }

  async waitFor(name: string, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = this.screen(name);
      if (pattern.test(text)) return text;
      if (Date.now() > deadline) throw new Error(`screen never matched ${pattern}:\n${text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  type(name: string, text: string): void {
    this.tmux('send-keys', '-t', name, '-l', text);
    this.tmux('send-keys', '-t', name, 'Enter');
  }

  close(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // no session was started
    }
  }
}

/**
 * Removes what the server created in Docker for these namespaces: containers `<ns>_*` and the bridge network
 * `svc_<ns>`. Networks are never removed by the server, and Docker's address pools run out after ~30 of them,
 * which would break every other test on the machine.
 */
export async function removeDockerLeftovers(namespaces: readonly string[]): Promise<void> {
  const docker = (...args: string[]) => execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  for (let attempt = 0; attempt < 5; attempt += 1) {
    let left = 0;
    for (const ns of namespaces) {
      for (const id of docker('ps', '-aq', '--filter', `name=${ns}_`).split('\n').filter(Boolean)) {
        try {
          docker('rm', '-f', id);
        } catch {
          left += 1; // already being removed by the scheduler
        }
      }
      if (docker('network', 'ls', '-q', '--filter', `name=^svc_${ns}$`).trim() !== '') {
        try {
          docker('network', 'rm', `svc_${ns}`);
        } catch {
          left += 1; // a container is still attached
        }
      }
    }
    if (left === 0) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
