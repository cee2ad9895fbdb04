// `svc-proxy serve`: load config.yaml, start the data plane, the providers and the API; stop cleanly on SIGTERM.
import { loadConfigFile } from '../config/load.js';
import { ControlPlane } from '../control/control-plane.js';
import { StateFile } from '../control/state-file.js';
import { diagnostic, formatScoped, scoped } from '../diagnostics/diagnostic.js';
import type { Provider } from '../providers/provider.js';

function log(line: string): void {
  process.stdout.write(`${new Date().toISOString()} ${line}\n`);
}

export async function serve(configPath: string): Promise<number> {
  // Installed first: a SIGTERM during start-up must still end in a clean stop with exit 0.
  let pendingSignal: string | null = null;
  let onSignal: ((signal: string) => void) | null = null;
  const signalHandler = (signal: string): void => {
    if (onSignal) onSignal(signal);
    else pendingSignal ??= signal;
  };
  process.on('SIGTERM', signalHandler);
  process.on('SIGINT', signalHandler);
  const loaded = loadConfigFile(configPath);
  if (!loaded.config) {
    for (const error of loaded.errors) process.stderr.write(`${error.code} ${error.message}\n`);
    process.stderr.write(`svc-proxy: refusing to start, ${loaded.file} has ${loaded.errors.length} error(s)\n`);
    return 1;
  }
  const config = loaded.config;
  const store = new StateFile(config.api.state_file);
  try {
    store.load();
  } catch (error) {
    process.stderr.write(`svc-proxy: cannot load the API state file: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }

  const [{ createDataPlane }, { createEnabledProviders, isProviderAvailable }] = await Promise.all([
    import('../dataplane/index.js'),
    import('../providers/index.js'),
  ]);
  const dataPlane = createDataPlane({
    listeners: { http: config.proxy.http, https: config.proxy.https, tcp: config.proxy.tcp, udp: config.proxy.udp },
    workers: config.proxy.workers,
    trusted_proxies: config.proxy.trusted_proxies,
  });
  const control = new ControlPlane({ config, dataPlane, store, isProviderAvailable });

  const providers: Provider[] = [];
  for (const provider of await createEnabledProviders(config)) {
    try {
      let lastSummary = '';
      await provider.start((state) => {
        control.setProviderState(provider.name, state);
        const summary = `${state.entrypoints.length} entrypoints, ${state.diagnostics.length} diagnostics`;
        if (summary !== lastSummary) log(`provider ${provider.name}: ${summary}`);
        lastSummary = summary;
      });
      providers.push(provider);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      control.setProviderState(provider.name, { entrypoints: [], diagnostics: [scoped(null, diagnostic('W008', `provider "${provider.name}" could not be started: ${reason}`))] });
    }
  }
  control.apply();

  try {
    await dataPlane.start();
  } catch (error) {
    process.stderr.write(`svc-proxy: cannot start listeners: ${error instanceof Error ? error.message : String(error)}\n`);
    await Promise.all(providers.map((provider) => provider.stop()));
    await dataPlane.stop().catch(() => undefined);
    return 1;
  }

  let api: { close(): Promise<void> } | null = null;
  if (config.api.enabled) {
    const [{ createApiServer }, { createControlMetrics }] = await Promise.all([import('../api/server.js'), import('../api/metrics.js')]);
    const registry = createControlMetrics(control);
    const server = createApiServer({
      config: config.api,
      control,
      unhealthyBackends: (id) => dataPlane.unhealthyBackends(id),
      metrics: async () => `${await dataPlane.metrics()}\n${await registry.metrics()}`,
      log,
    });
    try {
      const address = await server.listen();
      log(`management API listening on ${address.address}:${address.port}`);
    } catch (error) {
      process.stderr.write(`svc-proxy: cannot start the management API on ${config.api.listen_address}: ${error instanceof Error ? error.message : String(error)}\n`);
      await Promise.all(providers.map((provider) => provider.stop()));
      await dataPlane.stop();
      return 1;
    }
    api = server;
  }
  const { report, diagnostics, entrypoints } = control.snapshot();
  for (const item of diagnostics) log(formatScoped(item));
  log(`svc-proxy ready: ${entrypoints.length} entrypoints, ${report.total} diagnostics`);

  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      process.off('SIGTERM', signalHandler);
      process.off('SIGINT', signalHandler);
      log(`${signal} received, shutting down`);
      const hardStop = setTimeout(() => resolve(0), 10_000);
      hardStop.unref();
      void (async () => {
        await Promise.allSettled(providers.map((provider) => provider.stop()));
        await Promise.allSettled([api?.close(), dataPlane.stop()]);
        clearTimeout(hardStop);
        resolve(0);
      })();
    };
    onSignal = shutdown;
    if (pendingSignal !== null) shutdown(pendingSignal);
  });
}
