// Diagnostics of the merged entrypoint set against config.yaml. Pure: recomputed from scratch on every change,
// so a diagnostic disappears as soon as its cause does.
import { listenerReferenceIssue } from '../config/entrypoint-schema.js';
import { formatIssue } from '../config/checks.js';
import type { ProxyConfig } from '../config/config-schema.js';
import type { Entrypoint } from '../model/entrypoint.js';
import { findCollisions, type Collision } from '../routing/collisions.js';
import { diagnostic, scoped, type ScopedDiagnostic } from './diagnostic.js';

/** Providers that can be enabled in config.yaml but ship with a later release. */
export type ProviderAvailability = (name: string) => boolean;

export interface DiagnosticsInput {
  config: ProxyConfig;
  /** Merged set (one per id). */
  entrypoints: readonly Entrypoint[];
  /** Diagnostics raised by sources (parse errors, rejected definitions, poll failures) and by the merge. */
  reported: readonly ScopedDiagnostic[];
  isProviderAvailable: ProviderAvailability;
  /** Injected for tests; defaults to the routing module's collision finder. */
  collisions?: (entrypoints: readonly Entrypoint[]) => Collision[];
}

/** Entrypoints that can actually receive traffic (Tcp/Udp ones need a declared listener). */
export function servableEntrypoints(config: ProxyConfig, entrypoints: readonly Entrypoint[]): Entrypoint[] {
  return entrypoints.filter((entrypoint) => listenerReferenceIssue(entrypoint, config.proxy) === null);
}

export function collisionDiagnostics(collisions: readonly Collision[]): ScopedDiagnostic[] {
  const out: ScopedDiagnostic[] = [];
  for (const collision of collisions) {
    const { host, path, method } = collision.example;
    const message = `${collision.winner} shadows ${collision.shadowed.join(', ')}: e.g. ${method} http://${host}${path} is served by ${collision.winner}`;
    const extra = { value: `${method} ${host}${path}`, hint: 'make the rules disjoint or set priority explicitly' };
    out.push(scoped(collision.winner, diagnostic('W018', message, { label: 'winner', ...extra })));
    for (const id of collision.shadowed) out.push(scoped(id, diagnostic('W018', message, { label: 'shadowed', ...extra })));
  }
  return out;
}

export function computeDiagnostics(input: DiagnosticsInput): ScopedDiagnostic[] {
  const { config, entrypoints } = input;
  const out: ScopedDiagnostic[] = [...input.reported];
  const hasHttpListener = config.proxy.http !== null || config.proxy.https !== null;

  for (const name of ['docker', 'podman', 'swarm', 'kubernetes', 'nomad', 'http', 'config'] as const) {
    if (config.providers[name].enabled && !input.isProviderAvailable(name)) {
      out.push(scoped(null, diagnostic('W008', `provider "${name}" is enabled but not available in this build`, { label: `providers.${name}.enabled` })));
    }
  }

  for (const entrypoint of entrypoints) {
    const id = entrypoint.id;
    const listenerIssue = listenerReferenceIssue(entrypoint, config.proxy);
    if (listenerIssue) out.push(scoped(id, diagnostic('E009', formatIssue(listenerIssue), { label: 'config.entrypoint', value: entrypoint.config.entrypoint ?? 'null' })));
    if (entrypoint.backends.length > 0 && entrypoint.backends.every((backend) => backend.weight === 0)) {
      out.push(scoped(id, diagnostic('W005', `every backend of ${id} has weight 0`, { label: 'backends[].weight', value: '0' })));
    }
    if (entrypoint.protocol !== 'Http') continue;
    if (!hasHttpListener) {
      out.push(scoped(id, diagnostic('W007', `${id} is an Http entrypoint but config.yaml declares no proxy.http or proxy.https listener`)));
    } else if (config.proxy.https === null && (entrypoint.config.tls || entrypoint.config.https_redirect)) {
      const label = entrypoint.config.tls ? 'config.tls' : 'config.https_redirect';
      out.push(scoped(id, diagnostic('W006', `${id} sets ${label}=true but config.yaml declares no proxy.https listener`, { label, value: 'true' })));
    }
    const c = entrypoint.config;
    if (c.hostnames.length === 0 && c.path === null && c.methods.length === 0) {
      out.push(scoped(id, diagnostic('I001', `${id} has no hostnames, path or methods and matches every request`)));
    }
  }

  if (config.acme.enabled && !entrypoints.some((entrypoint) => entrypoint.config.tls)) {
    out.push(scoped(null, diagnostic('W015', 'acme.enabled is true but no entrypoint sets tls=true', { label: 'acme.enabled', value: 'true' })));
  }

  const collide = input.collisions ?? findCollisions;
  const httpServable = servableEntrypoints(config, entrypoints).filter((entrypoint) => entrypoint.protocol === 'Http');
  out.push(...collisionDiagnostics(collide(httpServable)));
  return out;
}
