// Entry of a data-plane worker process (node:cluster). Serves traffic on the listening sockets shared by the
// cluster; active health checks run in the primary, which pushes its verdicts here.
import { createUpstreamRegistry } from '../upstream/registry.js';
import { asToWorker, type FromWorker, type HealthEntry } from './cluster-protocol.js';
import { LocalDataPlane } from './local.js';

let plane: LocalDataPlane | null = null;
let stopping: Promise<void> | null = null;

/** Drains once, whichever of the stop message or the primary's disconnect comes first. */
function stopOnce(): Promise<void> {
  stopping ??= (plane?.stop() ?? Promise.resolve()).catch(() => undefined);
  return stopping;
}

function send(message: FromWorker): void {
  process.send?.(message);
}

let verdicts: HealthEntry[] = [];
/** Passive verdicts live in this process only; the primary hears every change, batched per tick. */
function reportVerdict(entry: HealthEntry): void {
  verdicts.push(entry);
  if (verdicts.length > 1) return;
  process.nextTick(() => {
    const health = verdicts;
    verdicts = [];
    send({ t: 'svc-proxy:verdicts', health });
  });
}

process.on('message', (raw: unknown) => {
  const msg = asToWorker(raw);
  if (msg === null) return;
  switch (msg.t) {
    case 'svc-proxy:init': {
      if (plane !== null) return;
      const registry = createUpstreamRegistry({ activeChecks: false });
      registry.onHealthChange((id, key, healthy) => reportVerdict([id, key, healthy]));
      const local = new LocalDataPlane(msg.options, registry, false);
      plane = local;
      local.update(msg.entrypoints);
      for (const [id, key, healthy] of msg.health) local.setHealthy(id, key, healthy);
      local.start().then(
        () => send({ t: 'svc-proxy:ready', addresses: local.addresses() }),
        (err: Error) => send({ t: 'svc-proxy:failed', message: err.message }),
      );
      return;
    }
    case 'svc-proxy:update':
      plane?.update(msg.entrypoints);
      return;
    case 'svc-proxy:health':
      for (const [id, key, healthy] of msg.health) plane?.setHealthy(id, key, healthy);
      return;
    case 'svc-proxy:metrics': {
      const seq = msg.seq;
      (plane?.metricsSet.registry.getMetricsAsJSON() ?? Promise.resolve([])).then(
        (data) => send({ t: 'svc-proxy:metrics', seq, data }),
        () => send({ t: 'svc-proxy:metrics', seq, data: [] }),
      );
      return;
    }
    case 'svc-proxy:stop': {
      const done = (): void => {
        send({ t: 'svc-proxy:stopped' });
        process.disconnect?.();
        setTimeout(() => process.exit(0), 100).unref();
      };
      void stopOnce().then(done);
      return;
    }
  }
});
// Messages that arrive before a listener exists are lost, so the primary waits for this before sending init.
send({ t: 'svc-proxy:hello' });
// The primary orchestrates a graceful stop; a signal sent to the whole process group must not cut requests here.
process.on('SIGTERM', () => undefined);
process.on('SIGINT', () => undefined);
// The primary going away means this worker has no one to take orders from: drain, then leave.
process.on('disconnect', () => {
  void stopOnce().then(() => process.exit(0));
});
