// TCP forwarding benchmark: svc-proxy against HAProxy (mode tcp, one thread, like our one event loop), both in
// front of the same Node echo backend. Prints bulk throughput and connection rate for each, and the ratio.
// Run: node --import tsx bench/tcp/throughput.ts   (needs `haproxy` on PATH: scripts/install-bench-deps.sh)
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BULK_CONNECTIONS = 4;
const BULK_BYTES = 64 * 1024 * 1024;
const RATE_CONNECTIONS = 3000;
const RATE_CONCURRENCY = 32;

function waitForLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    child.stdout?.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function waitListening(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 5000;
    const attempt = (): void => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve();
      });
      s.once('error', () => (Date.now() > deadline ? reject(new Error('peer did not listen')) : setTimeout(attempt, 50)));
    };
    attempt();
  });
}

/** Sends `bytes` and reads them back on one connection. */
function bulkOne(port: number, bytes: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunk = Buffer.alloc(64 * 1024, 7);
    let sent = 0;
    let received = 0;
    const pump = (): void => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
      socket.end();
    };
    socket.on('data', (d: Buffer) => {
      received += d.length;
    });
    socket.once('end', () => (received === bytes ? resolve() : reject(new Error(`got ${received} of ${bytes}`))));
    socket.once('error', reject);
    socket.once('connect', pump);
  });
}

function pingOnce(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => socket.write('ping'));
    socket.once('data', () => {
      socket.end();
      resolve();
    });
    socket.once('error', reject);
  });
}

async function measure(port: number): Promise<{ mbps: number; connps: number }> {
  await bulkOne(port, 4 * 1024 * 1024); // warm-up
  let started = performance.now();
  await Promise.all(Array.from({ length: BULK_CONNECTIONS }, () => bulkOne(port, BULK_BYTES)));
  const seconds = (performance.now() - started) / 1000;
  const mbps = (BULK_CONNECTIONS * BULK_BYTES * 2) / (1024 * 1024) / seconds;
  let next = 0;
  started = performance.now();
  await Promise.all(
    Array.from({ length: RATE_CONCURRENCY }, async () => {
      while (next++ < RATE_CONNECTIONS) await pingOnce(port);
    }),
  );
  const connps = RATE_CONNECTIONS / ((performance.now() - started) / 1000);
  return { mbps, connps };
}

async function main(): Promise<void> {
  const backend = spawn(process.execPath, [
    '-e',
    `const s=require('node:net').createServer((c)=>{c.on('error',()=>{});c.pipe(c)});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))`,
  ]);
  const backendPort = Number(await waitForLine(backend));
  const children: ChildProcess[] = [backend];
  const dir = mkdtempSync(join(tmpdir(), 'bench-tcp-'));
  try {
    const ours = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./proxy-child.ts', import.meta.url)), String(backendPort)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(ours);
    const oursPort = Number(await waitForLine(ours));

    const haproxyPort = await freePort();
    const cfg = join(dir, 'haproxy.cfg');
    writeFileSync(
      cfg,
      [
        'global', '  maxconn 4096', '  nbthread 1',
        'defaults', '  mode tcp', '  timeout connect 5s', '  timeout client 60s', '  timeout server 60s',
        'frontend f', `  bind 127.0.0.1:${haproxyPort}`, '  default_backend b',
        'backend b', `  server s1 127.0.0.1:${backendPort}`, '',
      ].join('\n'),
    );
    const haproxy = spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(haproxy);
    await waitListening(haproxyPort);

    const direct = await measure(backendPort);
    const svc = await measure(oursPort);
    const peer = await measure(haproxyPort);
    const row = (name: string, r: { mbps: number; connps: number }): string =>
      `${name.padEnd(22)} ${r.mbps.toFixed(0).padStart(8)} MB/s ${r.connps.toFixed(0).padStart(8)} conn/s`;
    console.log(row('direct (no proxy)', direct));
    console.log(row('svc-proxy', svc));
    console.log(row('haproxy 1 thread', peer));
    console.log(`ratio svc-proxy/haproxy: throughput ${(svc.mbps / peer.mbps).toFixed(2)}, connection rate ${(svc.connps / peer.connps).toFixed(2)}`);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
