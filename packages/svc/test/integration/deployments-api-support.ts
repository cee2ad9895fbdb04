// Shared by the deployments-api-* tests: a unique `d1t` namespace prefix per run, and a cleanup that deletes every
// deployment through the API, waits for the scheduler to purge them, then removes whatever Docker objects of this
// run are left (containers, namespace networks, volumes), so an interrupted test never leaks into the next one.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { TestServer } from '../support/server.js';

const run = promisify(execFile);

export function runPrefix(area: string): string {
  return `d1t${area}${process.pid % 100000}`;
}

async function docker(args: string[]): Promise<string> {
  try {
    return (await run('docker', args, { timeout: 60_000 })).stdout;
  } catch {
    return '';
  }
}

export async function removeDockerObjects(prefix: string): Promise<void> {
  const containers = (await docker(['ps', '-aq', '--filter', `name=^/${prefix}`])).split('\n').filter(Boolean);
  if (containers.length > 0) await docker(['rm', '-f', ...containers]);
  const networks = (await docker(['network', 'ls', '--format', '{{.Name}}'])).split('\n').filter((n) => n.startsWith(`svc_${prefix}`));
  if (networks.length > 0) await docker(['network', 'rm', ...networks]);
  const volumes = (await docker(['volume', 'ls', '-q', '--filter', `label=svc.namespace`])).split('\n').filter(Boolean);
  for (const volume of volumes) {
    const namespace = (await docker(['volume', 'inspect', '-f', '{{index .Labels "svc.namespace"}}', volume])).trim();
    if (namespace.startsWith(prefix)) await docker(['volume', 'rm', '-f', volume]);
  }
}

/** DELETE every deployment, wait (bounded) until the scheduler has purged them, then sweep Docker. */
export async function cleanUp(server: TestServer, prefix: string, waitMs = 30_000): Promise<void> {
  try {
    const all = await server.request<{ id: string; status: string }[]>('GET', '/deployments');
    if (all.status === 200) {
      for (const d of all.body) if (d.status !== 'deleted') await server.request('DELETE', `/deployments/${d.id}`);
      const deadline = Date.now() + waitMs;
      while (Date.now() < deadline) {
        const left = await server.request<unknown[]>('GET', '/deployments');
        if (left.status !== 200 || left.body.length === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  } finally {
    await server.close();
    await removeDockerObjects(prefix);
  }
}
