// Starts the REAL orchestrator as a child process for integration tests: a random free port on 127.0.0.1, a temp
// config dir with config.toml, a temp SQLite file, a random SVC_SECRET_KEY and a known admin password. Waits for
// GET /healthz, logs in as admin, and offers helpers for requests and scoped PATs.
//
// Lifecycle: `stop()` (SIGTERM) and `kill()` (SIGKILL) end the process but keep its files, so `restart()` can start
// it again on the same database; `close()` stops it and deletes the temp directory: call it in `after()`.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
export const STANDALONE_ENTRY = join(REPO_ROOT, 'packages/svc/src/server/standalone.ts');
export const TEST_ADMIN_PASSWORD = 'admin-test-password-1';

export interface TestServerOptions {
  /** Extra environment (overrides the defaults below; set a key to undefined to remove it). */
  env?: Record<string, string | undefined>;
  /** Extra config.toml text placed BEFORE the generated `[contexts.test]` block, so top-level keys such as
   *  `cors_origins = [...]` and tables such as `[scheduler]` both work. */
  configToml?: string;
  /** Command line to start instead of standalone.ts, e.g. the CLI: `['packages/svc/src/cli/main.ts', 'server', 'start']`. */
  entry?: string[];
  /** How long to wait for /healthz (ms). */
  startTimeoutMs?: number;
  /** Do not wait for readiness nor log in (start-up failure tests, or no known admin password); use `exited`
   *  to observe an exit, or `waitReady()`. */
  expectFailure?: boolean;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON (incl. problem+json), otherwise the text. */
  body: T;
  text: string;
}

export interface RequestOptions {
  /** Bearer token; defaults to the admin session. `null` sends no Authorization header. */
  token?: string | null;
  /** JSON-encoded unless it is a string (sent raw). */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface CreatedToken {
  id: string;
  token: string;
  name: string;
  scopes: string[];
  namespaces: string[];
  expire_at: string | null;
}

export interface TestServer {
  baseUrl: string;
  port: number;
  /** Session token of `admin` (scope admin, all namespaces). Stays valid across restart(). */
  adminToken: string;
  adminPassword: string;
  dir: string;
  dbPath: string;
  configDir: string;
  /** The full environment the server process was started with. */
  env: NodeJS.ProcessEnv;
  /** Process output so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal name) when the current process ends. */
  exited(): Promise<number | string>;
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** POST /tokens as admin (or `as`); throws unless 201. Name defaults to a unique one. */
  createToken(options: { scopes: string[]; namespaces?: string[]; name?: string; expire_at?: string | null; as?: string }): Promise<CreatedToken>;
  /** POST /login; returns the session token; throws unless 200. */
  login(username: string, password: string): Promise<string>;
  /** SIGTERM and wait; returns the exit code (or signal name) and the time it took. */
  stop(): Promise<{ code: number | string; ms: number }>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
  /** Polls GET /healthz until 200 (throws if the process exits first). */
  waitReady(): Promise<void>;
  /** Starts the process again with the same env, files and port; waits for /healthz. */
  restart(): Promise<void>;
  /** Stops the process if running and deletes the temp directory. */
  close(): Promise<void>;
}

/**
 * A free port OUTSIDE the kernel's ephemeral range (32768-60999 on Linux), so it cannot be handed to an outgoing
 * connection or to another test's `listen(0)` between this check and the server binding it.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const free = await new Promise<boolean>((resolveFree) => {
      const probe = createServer();
      probe.once('error', () => resolveFree(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolveFree(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port found in 20000-29999');
}

export function randomSecretKey(): string {
  return randomBytes(32).toString('base64');
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

let tokenCounter = 0;

// Servers still running when the test process exits (a failed before(), a forgotten close()) die with it,
// so no orphan keeps a port, a database or Docker objects alive after the run.
const liveChildren = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of liveChildren) child.kill('SIGKILL');
});

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const port = await freePort();
  const configDir = join(dir, 'config');
  const dbPath = join(dir, 'svc.db');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(configDir, { recursive: true });
  writeFileSync(
    join(configDir, 'config.toml'),
    `${options.configToml ?? ''}\n[contexts.test]\ncurrent = true\nhost = "127.0.0.1"\n[contexts.test.api]\nscheme = "http"\nport = ${port}\n`,
  );
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SVC_CONFIG_DIR: configDir,
    SVC_DATABASE_PATH: dbPath,
    SVC_SECRET_KEY: randomSecretKey(),
    SVC_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD,
    SVC_LOG: 'warn',
  };
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  const baseUrl = `http://127.0.0.1:${port}`;
  const args = ['--import', 'tsx', ...(options.entry ?? [STANDALONE_ENTRY])];

  let child: ChildProcess | null = null;
  let exit: Promise<number | string> = Promise.resolve(0);
  let out = '';
  let err = '';

  function launch(): void {
    const proc = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.length > 1_000_000) out = out.slice(-500_000);
    });
    proc.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.length > 1_000_000) err = err.slice(-500_000);
    });
    exit = new Promise((resolveExit) => proc.once('exit', (code, signal) => resolveExit(code ?? signal ?? 'unknown')));
    child = proc;
    liveChildren.add(proc);
    void exit.then(() => liveChildren.delete(proc));
    void exit.then(() => {
      if (child === proc) child = null;
    });
  }

  async function waitReady(): Promise<void> {
    const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
    let exited = false;
    void exit.then(() => (exited = true));
    while (Date.now() < deadline) {
      if (exited) throw new Error(`server exited before becoming ready (${await exit}):\n${err}`);
      try {
        const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
        if (response.status === 200) return;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    throw new Error(`server did not become ready within the timeout:\n${err}`);
  }

  async function request<T>(method: string, path: string, requestOptions: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...(requestOptions.headers ?? {}) };
    const token = requestOptions.token === undefined ? server.adminToken : requestOptions.token;
    if (token !== null && token !== '') headers.authorization ??= `Bearer ${token}`;
    let body: string | undefined;
    if (requestOptions.body !== undefined) {
      body = typeof requestOptions.body === 'string' ? requestOptions.body : JSON.stringify(requestOptions.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body, signal: AbortSignal.timeout(30_000) });
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    let parsed: unknown = text;
    if (type.includes('json') && text !== '') parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  async function login(username: string, password: string): Promise<string> {
    const response = await request<{ token: string }>('POST', '/login', { token: null, body: { username, password } });
    if (response.status !== 200) throw new Error(`login as ${username} failed: ${response.status} ${response.text}`);
    return response.body.token;
  }

  /** The session just minted must be in OUR database file: proves the port is served by our process. */
  function assertOwnServer(token: string): void {
    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      const found = db.prepare('SELECT 1 FROM tokens WHERE token_hash = ?').get(createHash('sha256').update(token).digest('hex'));
      if (!found) throw new Error(`port ${port} is served by another process, not this test's server:\n${err}`);
    } finally {
      db.close();
    }
  }

  async function stopWith(signal: NodeJS.Signals): Promise<number | string> {
    const proc = child;
    if (!proc) return exit;
    proc.kill(signal);
    return exit;
  }

  const server: TestServer = {
    baseUrl,
    port,
    adminToken: '',
    adminPassword: env.SVC_ADMIN_PASSWORD ?? '',
    dir,
    dbPath,
    configDir,
    env,
    stdout: () => out,
    stderr: () => err,
    exited: () => exit,
    request,
    login,
    waitReady,
    async createToken(tokenOptions) {
      const response = await request<CreatedToken>('POST', '/tokens', {
        token: tokenOptions.as ?? server.adminToken,
        body: {
          name: tokenOptions.name ?? `test-token-${++tokenCounter}`,
          scopes: tokenOptions.scopes,
          ...(tokenOptions.namespaces === undefined ? {} : { namespaces: tokenOptions.namespaces }),
          ...(tokenOptions.expire_at === undefined ? {} : { expire_at: tokenOptions.expire_at }),
        },
      });
      if (response.status !== 201) throw new Error(`token creation failed: ${response.status} ${response.text}`);
      return response.body;
    },
    async stop() {
      const started = Date.now();
      const code = await stopWith('SIGTERM');
      return { code, ms: Date.now() - started };
    },
    async kill() {
      await stopWith('SIGKILL');
    },
    async restart() {
      if (child) await stopWith('SIGTERM');
      launch();
      await waitReady();
      if (server.adminToken !== '') assertOwnServer(await login('admin', server.adminPassword));
    },
    async close() {
      if (child) {
        const timer = setTimeout(() => child?.kill('SIGKILL'), 12_000);
        await stopWith('SIGTERM');
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };

  launch();
  if (options.expectFailure) return server;
  try {
    await waitReady();
    server.adminToken = await login('admin', server.adminPassword);
    assertOwnServer(server.adminToken);
  } catch (error) {
    await server.close();
    throw error;
  }
  return server;
}
