// Control-plane series for GET /metrics, appended to the data plane's own exposition.
import { Counter, Gauge, Registry } from 'prom-client';
import type { ControlPlane } from '../control/control-plane.js';
import { PROVIDER_NAMES } from '../model/entrypoint.js';

export function createControlMetrics(control: ControlPlane): Registry {
  const registry = new Registry();
  let reported = 0;
  new Counter({
    name: 'svc_proxy_control_applies_total',
    help: 'Times a changed entrypoint set was applied to the data plane (API writes, provider changes).',
    registers: [registry],
    collect() {
      if (control.reloads > reported) this.inc(control.reloads - reported);
      reported = control.reloads;
    },
  });
  new Gauge({
    name: 'svc_proxy_control_entrypoints',
    help: 'Entrypoints in the merged set, per source.',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      for (const source of ['api', ...PROVIDER_NAMES] as const) this.set({ source }, control.entrypointCount(source));
    },
  });
  new Gauge({
    name: 'svc_proxy_control_diagnostics',
    help: 'Current diagnostics, per severity.',
    labelNames: ['severity'],
    registers: [registry],
    collect() {
      const counts = { error: 0, warn: 0, info: 0 };
      for (const { diagnostic } of control.snapshot().diagnostics) counts[diagnostic.severity] += 1;
      for (const [severity, count] of Object.entries(counts)) this.set({ severity }, count);
    },
  });
  return registry;
}
