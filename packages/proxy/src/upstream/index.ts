// Public surface of upstream selection and health, for the data plane.
export type { BackendRef, FailureReason, UpstreamPool, UpstreamRegistry, HealthCheckConfig } from './contract.js';
export { backendKey, parseListenAddress, type HostPort } from './address.js';
export {
  createUpstreamRegistry,
  DEFAULT_PASSIVE_COOLDOWN_MS,
  DEFAULT_PASSIVE_FAILURES,
  type UpstreamRegistryOptions,
} from './registry.js';
export {
  createHealthCheckHub,
  DEFAULT_HEALTH_CHECK,
  defaultProbe,
  httpProbe,
  resolveHealthCheck,
  startActiveChecks,
  tcpProbe,
  type ActiveCheckOptions,
  type ActiveChecks,
  type HealthCheckHub,
  type HealthSubscription,
  type Probe,
} from './health.js';
