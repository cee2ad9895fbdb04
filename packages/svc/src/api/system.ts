// GET /healthz, GET /metrics (both unauthenticated, spec "Authentication" 10) and GET /node/get.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from './context.js';
import { PROMETHEUS_CONTENT_TYPE, renderJson, renderPrometheus } from '../metrics/exposition.js';

const GIB = 1024 ** 3;

export interface NodeInfo {
  hostname: string;
  os: string;
  arch: string;
  uptime: string;
  cpu_count: number;
  memory_total: number;
  memory_available: number;
  load_average: [number, number, number];
}

/** MemAvailable (what can be allocated without swapping) is the honest figure; freemem() ignores reclaimable cache. */
function availableMemoryBytes(): number {
  try {
    const match = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: fall through.
  }
  return os.freemem();
}

const gib = (bytes: number) => Math.round((bytes / GIB) * 100) / 100;
const round2 = (n: number) => Math.round(n * 100) / 100;

export function readNodeInfo(): NodeInfo {
  const [one, five, fifteen] = os.loadavg();
  return {
    hostname: os.hostname(),
    os: os.platform(),
    arch: os.arch(),
    uptime: `${Math.floor(os.uptime())}s`,
    cpu_count: os.availableParallelism(),
    memory_total: gib(os.totalmem()),
    memory_available: gib(availableMemoryBytes()),
    load_average: [round2(one ?? 0), round2(five ?? 0), round2(fifteen ?? 0)],
  };
}

/** True when the client asked for JSON and did not prefer text (a plain `Accept: application/json`). */
export function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((part) => part.split(';')[0]?.trim().toLowerCase());
  const json = types.indexOf('application/json');
  if (json === -1) return false;
  const text = types.findIndex((t) => t === 'text/plain' || t === 'application/openmetrics-text');
  return text === -1 || json < text;
}

export function registerSystemRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/healthz', { config: { auth: { public: true } } }, async () => ({ state: 'UP' }));

  app.get('/metrics', { config: { auth: { public: true } } }, async (request, reply) => {
    const families = deps.metrics.collect();
    if (wantsJson(request.headers.accept)) return reply.type('application/json').send(renderJson(families));
    return reply.type(PROMETHEUS_CONTENT_TYPE).send(renderPrometheus(families));
  });

  // Host facts are not a namespaced resource: only `admin` may read them (deny by default).
  app.get('/node/get', { config: { auth: { scope: 'admin' } } }, async () => readNodeInfo());
}
