// `svc-proxy validate`: every diagnostic serve would raise at start-up, without binding anything.
import { loadConfigFile } from '../config/load.js';
import { ControlPlane } from '../control/control-plane.js';
import { StateFile } from '../control/state-file.js';
import { diagnostic, formatScoped, hasErrors, scoped } from '../diagnostics/diagnostic.js';
import { createEnabledProviders, isProviderAvailable } from '../providers/index.js';

export async function validate(configPath: string): Promise<number> {
  const loaded = loadConfigFile(configPath);
  if (!loaded.config) {
    for (const error of loaded.errors) process.stdout.write(`${formatScoped(scoped(null, error))}\n`);
    process.stdout.write(`${loaded.file}: ${loaded.errors.length} error(s)\n`);
    return 1;
  }
  const config = loaded.config;
  const store = new StateFile(config.api.state_file);
  let control: ControlPlane;
  try {
    control = new ControlPlane({ config, dataPlane: { update: () => undefined }, store, isProviderAvailable });
  } catch (error) {
    const message = `cannot load the API state file: ${error instanceof Error ? error.message : String(error)}`;
    process.stdout.write(`${formatScoped(scoped(null, diagnostic('E001', message)))}\n`);
    return 1;
  }
  // One load of each provider, no watching: polls and file reads happen exactly once.
  config.providers.config.watch = false;
  for (const provider of await createEnabledProviders(config)) {
    await provider.start((state) => control.setProviderState(provider.name, state)).catch((error: unknown) => {
      control.setProviderState(provider.name, { entrypoints: [], diagnostics: [scoped(null, diagnostic('W008', `provider "${provider.name}" could not be started: ${error instanceof Error ? error.message : String(error)}`))] });
    });
    await provider.stop();
  }
  control.apply();
  const { diagnostics, entrypoints } = control.snapshot();
  const sorted = [...diagnostics].sort((a, b) => (a.candidate_id ?? '').localeCompare(b.candidate_id ?? '') || a.diagnostic.code.localeCompare(b.diagnostic.code));
  for (const item of sorted) process.stdout.write(`${formatScoped(item)}\n`);
  const errors = diagnostics.filter((item) => item.diagnostic.severity === 'error').length;
  process.stdout.write(`${loaded.file}: ${entrypoints.length} entrypoints, ${errors} error(s), ${diagnostics.length - errors} other diagnostic(s)\n`);
  return hasErrors(diagnostics) ? 1 : 0;
}
