// Data-plane Prometheus series. Label children are cached per entrypoint so the hot path does no label hashing.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export class DataPlaneMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'svc_proxy_requests_total',
    help: 'HTTP requests served, by entrypoint id and status code',
    labelNames: ['entrypoint', 'status'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'svc_proxy_request_duration_seconds',
    help: 'Time from request headers to the end of the response, by entrypoint id',
    labelNames: ['entrypoint'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly backendUp = new Gauge({
    name: 'svc_proxy_backend_up',
    help: '1 when the backend is healthy, 0 when marked unhealthy',
    labelNames: ['entrypoint', 'backend'] as const,
    registers: [this.registry],
  });
  readonly reloads = new Counter({
    name: 'svc_proxy_reloads_total',
    help: 'Route table swaps (update calls)',
    registers: [this.registry],
  });

  forEntrypoint(entrypoint: string): EntrypointSeries {
    return new EntrypointSeries(this, entrypoint);
  }
}

export class EntrypointSeries {
  private readonly byStatus = new Map<number, Counter.Internal>();
  private readonly histogram: Histogram.Internal<'entrypoint'>;

  constructor(
    private readonly metrics: DataPlaneMetrics,
    private readonly entrypoint: string,
  ) {
    this.histogram = metrics.latency.labels(entrypoint);
  }

  record(status: number, seconds: number): void {
    let counter = this.byStatus.get(status);
    if (counter === undefined) {
      counter = this.metrics.requests.labels(this.entrypoint, String(status));
      this.byStatus.set(status, counter);
    }
    counter.inc();
    this.histogram.observe(seconds);
  }
}
