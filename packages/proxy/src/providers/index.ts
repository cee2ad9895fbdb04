// Which providers exist in this build, and how each is created from config.yaml. The container providers
// (docker, podman, swarm, kubernetes, nomad) register here when they land; until then enabling them raises W008.
import type { ProxyConfig } from '../config/config-schema.js';
import type { ProviderName } from '../model/entrypoint.js';
import type { Provider } from './provider.js';

type Factory = (config: ProxyConfig) => Promise<Provider>;

const FACTORIES: Partial<Record<ProviderName, Factory>> = {
  config: async (config) => {
    const { ConfigProvider } = await import('./config/index.js');
    return new ConfigProvider({ path: config.providers.config.path, watch: config.providers.config.watch });
  },
  http: async (config) => {
    const { HttpProvider } = await import('./http/index.js');
    const http = config.providers.http;
    if (http.url === null) throw new Error('providers.http.url is required');
    return new HttpProvider({ url: http.url, pollInterval: http.poll_interval, timeout: http.timeout, headers: http.headers });
  },
};

export function isProviderAvailable(name: string): boolean {
  return Object.hasOwn(FACTORIES, name);
}

/** Providers enabled in config.yaml that this build ships, in source-precedence order. */
export async function createEnabledProviders(config: ProxyConfig): Promise<Provider[]> {
  const out: Provider[] = [];
  for (const name of ['config', 'http', 'docker', 'podman', 'swarm', 'kubernetes', 'nomad'] as const) {
    const factory = FACTORIES[name];
    if (config.providers[name].enabled && factory) out.push(await factory(config));
  }
  return out;
}
