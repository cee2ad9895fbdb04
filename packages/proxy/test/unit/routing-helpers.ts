import { defaultEntrypointConfig, type Entrypoint, type EntrypointConfig } from '../../src/model/entrypoint.js';

export function httpRoute(name: string, config: Partial<EntrypointConfig> = {}): Entrypoint {
  return {
    id: `http_${name}`,
    name,
    protocol: 'Http',
    backends: [{ address: '127.0.0.1', port: 9, weight: 100 }],
    source: 'api',
    config: { ...defaultEntrypointConfig(), ...config },
  };
}
