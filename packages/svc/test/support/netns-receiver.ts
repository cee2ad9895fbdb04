// A real webhook receiver on a test host of our own: a network namespace joined to the host by a veth pair
// with a /30 in 10.213.0.0/16 (host side .1, namespace side .2), and an HTTP server (netns-receiver-child.ts)
// listening on the namespace address. Webhook URLs may not target loopback (and tests never relax that rule),
// so this is how delivery tests get a receiver. Needs root (`ip netns`). Always `close()` it: it deletes the
// namespace and the veth pair; a process exit also cleans up what is left.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { REPO_ROOT } from './server.js';

const CHILD_ENTRY = join(REPO_ROOT, 'packages/svc/test/support/netns-receiver-child.ts');
export const RECEIVER_PORT = 8080;

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Receiver clock, ms. */
  at: number;
}

export interface ReceiverReply {
  status: number;
  /** Answer after this long (longer than the sender's timeout = a time-out). */
  delayMs?: number;
  location?: string;
}

export interface NetnsReceiver {
  /** The namespace's address, e.g. 10.213.7.2. */
  address: string;
  /** The host side of the veth pair. */
  hostAddress: string;
  namespace: string;
  /** `http://<address>:8080<path>` */
  url(path: string): string;
  /** Replies for `path`, in order; the last one repeats. Default: 200 at once. */
  behave(path: string, responses: readonly ReceiverReply[]): Promise<void>;
  /** Stop reporting each request (benchmarks); `count()` still counts them. */
  quiet(on: boolean): Promise<void>;
  /** Requests received since start or `reset()` (quiet ones included). */
  count(): Promise<number>;
  /** Clears behaviours, the count and the recorded requests. */
  reset(): Promise<void>;
  /** Every request reported so far. */
  requests(path?: string): ReceivedRequest[];
  /** Resolves once `predicate(requests)` holds; rejects after `timeoutMs`. */
  waitFor(predicate: (requests: ReceivedRequest[]) => boolean, timeoutMs: number, what: string): Promise<void>;
  close(): Promise<void>;
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A /30 whose host address is not configured on this machine yet. */
function freeSubnet(): { host: string; peer: string } {
  const used = execFileSync('ip', ['-4', '-o', 'addr', 'show'], { encoding: 'utf8' });
  for (let tries = 0; tries < 100; tries++) {
    const third = randomInt(0, 256);
    const base = randomInt(0, 64) * 4;
    const host = `10.213.${third}.${base + 1}`;
    if (!used.includes(` ${host}/`)) return { host, peer: `10.213.${third}.${base + 2}` };
  }
  throw new Error('no free 10.213.x.x/30 subnet');
}

const liveNamespaces = new Map<string, string>();
let exitHookInstalled = false;

function teardown(namespace: string, hostLink: string): void {
  try {
    ip('link', 'del', hostLink);
  } catch {
    // already gone with the namespace
  }
  try {
    ip('netns', 'del', namespace);
  } catch {
    // already gone
  }
  liveNamespaces.delete(namespace);
}

export async function startNetnsReceiver(): Promise<NetnsReceiver> {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const [namespace, hostLink] of liveNamespaces) teardown(namespace, hostLink);
    });
  }
  const tag = randomBytes(3).toString('hex');
  const namespace = `svcw-${tag}`;
  const hostLink = `svcw${tag}h`;
  const peerLink = `svcw${tag}n`;
  const { host, peer } = freeSubnet();
  ip('netns', 'add', namespace);
  liveNamespaces.set(namespace, hostLink);
  let child: ChildProcess | null = null;
  try {
    ip('link', 'add', hostLink, 'type', 'veth', 'peer', 'name', peerLink);
    ip('link', 'set', peerLink, 'netns', namespace);
    ip('addr', 'add', `${host}/30`, 'dev', hostLink);
    ip('link', 'set', hostLink, 'up');
    ip('netns', 'exec', namespace, 'ip', 'addr', 'add', `${peer}/30`, 'dev', peerLink);
    ip('netns', 'exec', namespace, 'ip', 'link', 'set', peerLink, 'up');
    ip('netns', 'exec', namespace, 'ip', 'link', 'set', 'lo', 'up');
    child = spawn('ip', ['netns', 'exec', namespace, process.execPath, '--import', 'tsx', CHILD_ENTRY, peer, String(RECEIVER_PORT)], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  } catch (error) {
    teardown(namespace, hostLink);
    throw error;
  }
  const proc = child;
  const received: ReceivedRequest[] = [];
  const acks = new Map<number, (count: number) => void>();
  const waiters = new Set<() => void>();
  let seq = 0;
  let stderr = '';
  let exited = false;
  const exit = new Promise<void>((resolve) => proc.once('exit', () => ((exited = true), resolve())));
  proc.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-10_000)));
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      const message = JSON.parse(line) as { type: string; seq?: number; count?: number } & ReceivedRequest;
      if (message.type === 'ready') resolve();
      else if (message.type === 'ack') acks.get(message.seq ?? -1)?.(message.count ?? 0);
      else if (message.type === 'request') {
        received.push({ method: message.method, path: message.path, headers: message.headers, body: message.body, at: message.at });
        for (const wake of waiters) wake();
      }
    });
    void exit.then(() => reject(new Error(`receiver exited before listening: ${stderr}`)));
  });
  const timeout = setTimeout(() => proc.kill('SIGKILL'), 20_000);
  try {
    await ready;
  } catch (error) {
    teardown(namespace, hostLink);
    throw error;
  } finally {
    clearTimeout(timeout);
  }

  function command(message: object): Promise<number> {
    const id = ++seq;
    return new Promise<number>((resolve, reject) => {
      if (exited) return reject(new Error('receiver has exited'));
      acks.set(id, (count) => {
        acks.delete(id);
        resolve(count);
      });
      proc.stdin?.write(`${JSON.stringify({ ...message, seq: id })}\n`);
    });
  }

  return {
    address: peer,
    hostAddress: host,
    namespace,
    url: (path) => `http://${peer}:${RECEIVER_PORT}${path}`,
    behave: async (path, responses) => void (await command({ cmd: 'behave', path, responses })),
    quiet: async (on) => void (await command({ cmd: 'quiet', on })),
    count: () => command({ cmd: 'count' }),
    reset: async () => {
      await command({ cmd: 'reset' });
      received.length = 0;
    },
    requests: (path) => (path === undefined ? [...received] : received.filter((r) => r.path === path)),
    waitFor(predicate, timeoutMs, what) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!predicate(received)) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${received.length} requests received)`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      if (!exited) {
        proc.stdin?.end();
        const kill = setTimeout(() => proc.kill('SIGKILL'), 2_000);
        await exit;
        clearTimeout(kill);
      }
      teardown(namespace, hostLink);
    },
  };
}
